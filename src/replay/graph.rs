//! The record graph for export: every record (or one stream's), with stable ids, as JSON Lines
//! or as Graphviz dot.

use crate::error::Result;
use crate::record::{Record, Rid};
use crate::store::Read;
use std::collections::HashSet;

/// The records of the ledger in log order, or of one stream: records that name the stream,
/// and judgements, verdicts and regrounds about them.
pub fn records<R: Read>(read: &R, stream: Option<&str>) -> Result<Vec<(u64, Rid, Record)>> {
    let mut out = Vec::new();
    let mut kept: HashSet<Rid> = HashSet::new();
    let len = read.len()?;
    // The log is dense: an index past its length that holds a record, or one below it that
    // holds none, is a damaged log, not a shorter one.
    if read.rid_at(len)?.is_some() {
        return Err(gap(len, "holds a record past the log's length"));
    }
    for i in 0..len {
        let Some((rid, record)) = read.record_at(i)? else {
            return Err(gap(i, "holds no record, though the log is longer"));
        };
        let keep = match (stream, record.stream()) {
            (None, _) => true,
            (Some(s), Some(own)) => s == own,
            (Some(_), None) => record.links().iter().any(|(_, t)| kept.contains(t)),
        };
        if keep {
            kept.insert(rid);
            out.push((i, rid, record));
        }
    }
    Ok(out)
}

fn gap(index: u64, what: &str) -> crate::error::Error {
    crate::error::ErrorKind::CorruptFile {
        path: "log table".into(),
        detail: format!("log index {index} {what}"),
    }
    .into()
}

/// The stable node id of a record in dot output: `r` and the first 16 hex digits of its rid.
pub fn node_id(rid: &Rid) -> String {
    format!("r{}", &rid.to_hex()[..16])
}

fn escape(s: &str) -> String {
    let short: String = s.chars().take(48).collect();
    let mut out = String::new();
    for c in short.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    if s.chars().count() > 48 {
        out.push_str("...");
    }
    out
}

/// The record graph as Graphviz dot: one node per record, one edge per link, labelled with
/// the link's field. Refused proposals are drawn red, admitted ones green.
pub fn dot<R: Read>(read: &R, stream: Option<&str>) -> Result<String> {
    let records = records(read, stream)?;
    let included: HashSet<Rid> = records.iter().map(|(_, r, _)| *r).collect();
    let mut out = String::from("digraph cairn {\n  rankdir=BT;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n");
    for (i, rid, record) in &records {
        let (shape, label) = match record {
            Record::Span(s) => (
                "box",
                format!("span t{} {}\\n{}", s.turn, s.role.name(), escape(&s.text)),
            ),
            Record::Claim(c) => (
                "ellipse",
                format!(
                    "claim [{}]\\n{}",
                    c.origin.tag().unwrap_or("no origin"),
                    escape(&c.text)
                ),
            ),
            Record::Summary(s) => (
                "hexagon",
                format!("summary ({}, budget {})", s.author.name(), s.budget),
            ),
            Record::Pin(p) => (
                "note",
                format!("pin {}\\n{} items", escape(&p.name), p.items.len()),
            ),
            Record::Judgement(j) => ("diamond", format!("judgement\\n{}", j.relation.name())),
            Record::Verdict(v) => (
                "octagon",
                format!(
                    "verdict\\n{}",
                    if v.admitted { "admitted" } else { "refused" }
                ),
            ),
            Record::Action(a) => (
                "cds",
                format!(
                    "action{}\\n{}",
                    if a.irreversible {
                        " (irreversible)"
                    } else {
                        ""
                    },
                    escape(&a.text)
                ),
            ),
            Record::Reground(_) => ("parallelogram", "reground".to_string()),
            Record::Check(_) => ("cds", "check again".to_string()),
            Record::Receipt(r) => ("note", format!("receipt\\n{}", escape(&r.key))),
            Record::Ruling(r) => ("hexagon", format!("ruling\\n{}", escape(&r.judge))),
            Record::Retirement(r) => ("octagon", format!("retirement\\n{}", escape(&r.item))),
            Record::Place(p) => ("note", format!("place\\n{}", escape(&p.log))),
            Record::Entry(e) => ("note", format!("entry\\n{}", escape(&e.key))),
            Record::Classification(c) => {
                ("note", format!("classification\\n{} items", c.items.len()))
            }
        };
        let colour = match record {
            Record::Verdict(v) if !v.admitted => ", color=red, fontcolor=red",
            Record::Verdict(_) => ", color=darkgreen",
            _ => "",
        };
        out.push_str(&format!(
            "  {} [shape={shape}, label=\"{label}\\n#{i} {}\"{colour}];\n",
            node_id(rid),
            rid.short()
        ));
    }
    for (_, rid, record) in &records {
        for (role, target) in record.links() {
            if included.contains(&target) {
                out.push_str(&format!(
                    "  {} -> {} [label=\"{}\"];\n",
                    node_id(rid),
                    node_id(&target),
                    role.field()
                ));
            }
        }
    }
    out.push_str("}\n");
    Ok(out)
}
