//! `recall`: the spans and claims that match a query, ranked by BM25, each with how far it can
//! be trusted (SPEC.md section 10b).
//!
//! The store keeps, for every term, its postings in weight order (the `recall` and
//! `recall_streams` tables, written in the append's transaction). A query reads at most
//! [`POSTINGS_READ`] postings of each of its terms, heaviest first, adds up each text's
//! partial score, and rescores the best [`RESCORED`] (or four times the limit) exactly from
//! their own text. A term held by fewer texts than [`POSTINGS_READ`] is read whole, so a
//! text holding a rare query term is always among the candidates; what the bound can miss is
//! a text that matches only common terms, weakly. Terms are read rarest first, and the
//! common ones ("the", "what") not at all once no text could enter the candidates through
//! them.

use crate::error::{ErrorKind, Result};
use crate::record::{Kind, Origin, Record, Rid, Role, Status};
use crate::store::Read;
use crate::text::terms::{dequantize, idf, occurrences, terms, weight, K1};
use crate::text::Fnv;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Postings read of each query term, at most.
pub const POSTINGS_READ: usize = 1_000;
/// Candidates rescored from their text, at least.
pub const RESCORED: usize = 50;
/// The most hits one query returns.
pub const MAX_LIMIT: usize = 1_000;

/// One span or claim that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The record.
    pub rid: Rid,
    /// A span or a claim.
    pub kind: Kind,
    /// Its stream.
    pub stream: String,
    /// Its text.
    pub text: String,
    /// Its BM25 score against the query.
    pub score: f64,
    /// For a span: its turn.
    pub turn: Option<u64>,
    /// For a span: who spoke.
    pub role: Option<Role>,
    /// For a span: an admitted summary evicted it (it is out of the agent's window, and still
    /// in the ledger).
    pub evicted: bool,
    /// For a claim: its standing, from the store's `status` table, or from the verdict of the
    /// summary that carried it when no admitted summary did.
    pub status: Option<Status>,
    /// For a claim: whether an admitted summary carries it.
    pub admitted: bool,
    /// For a claim: its provenance tag.
    pub origin: Option<Origin>,
    /// For a claim: what it cites, with the turn of each span among them.
    pub witnesses: Vec<(Rid, Option<u64>)>,
}

/// The answer to a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall {
    /// The query.
    pub query: String,
    /// The stream searched, or `None` for all.
    pub stream: Option<String>,
    /// The best matches, best first.
    pub hits: Vec<Hit>,
}

/// The spans and claims that best match `query`, in `stream` or in all streams, at most
/// `limit` (capped at [`MAX_LIMIT`]), best first; among equal scores the newer first. A query
/// with no word matches nothing. Evicted spans are found too, marked evicted.
pub fn recall<R: Read>(
    read: &R,
    query: &str,
    stream: Option<&str>,
    limit: usize,
) -> Result<Recall> {
    if !read.has_recall_index()? {
        return Err(ErrorKind::NoRecallIndex.into());
    }
    let limit = limit.min(MAX_LIMIT);
    let scope = match stream {
        Some(s) => match read.recall_stream(s)? {
            Some(id) => Some(id),
            // A stream with no text indexed matches nothing.
            None => {
                return Ok(Recall {
                    query: query.to_string(),
                    stream: Some(s.to_string()),
                    hits: Vec::new(),
                })
            }
        },
        None => None,
    };
    let texts = read.recall_term("")?.map_or(0, |(_, n)| n);
    let mut weights: Vec<(String, u32, f64)> = Vec::new();
    let mut dfs: HashMap<u32, u64, BuildHasherDefault<Fnv>> = HashMap::default();
    let mut unknown: Vec<String> = Vec::new();
    for (term, _) in terms(query).0 {
        if let Some((id, df)) = read.recall_term(&term)? {
            weights.push((term, id, idf(texts, df)));
            dfs.insert(id, df);
        } else {
            unknown.push(term);
        }
    }
    let unknown: Vec<&str> = unknown.iter().map(String::as_str).collect();
    // Rarest first, so that the common terms' postings can be skipped once they cannot change
    // which texts are candidates (MaxScore: Turtle and Flood, 1995).
    weights.sort_by(|a, b| b.2.total_cmp(&a.2));
    let wanted = RESCORED.max(limit.saturating_mul(4));
    let most = |from: usize| -> f64 { weights[from..].iter().map(|w| w.2 * (K1 + 1.0)).sum() };
    let mut partial: HashMap<u64, f64, BuildHasherDefault<Fnv>> = HashMap::default();
    for (i, (_, term, idf)) in weights.iter().enumerate() {
        if partial.len() >= wanted {
            let mut scores: Vec<f64> = partial.values().copied().collect();
            let (_, kth, _) = scores.select_nth_unstable_by(wanted - 1, |a, b| b.total_cmp(a));
            // A text not yet seen scores at most what the remaining terms can give; when that
            // is below the candidates' floor, reading their postings cannot add a candidate.
            if most(i) < *kth {
                break;
            }
        }
        let mut read_so_far = 0;
        read.postings(scope, *term, |w, index| {
            *partial.entry(index).or_default() += idf * dequantize(w);
            read_so_far += 1;
            read_so_far < POSTINGS_READ
        })?;
        // A term's whole list, read over all streams, holds as many postings as texts hold
        // the term: one more or one less is a damaged index, not a different answer.
        let df = dfs.get(term).copied().unwrap_or(0);
        if scope.is_none() && read_so_far < POSTINGS_READ && read_so_far as u64 != df {
            return Err(ErrorKind::CorruptFile {
                path: "recall table".into(),
                detail: format!("a term held by {df} texts has {read_so_far} postings"),
            }
            .into());
        }
    }
    let mut candidates: Vec<(u64, f64)> = partial.into_iter().collect();
    let best_first = |a: &(u64, f64), b: &(u64, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
    if candidates.len() > wanted {
        candidates.select_nth_unstable_by(wanted, best_first);
        candidates.truncate(wanted);
    }
    candidates.sort_by(best_first);
    let asked: Vec<&str> = weights.iter().map(|(t, _, _)| t.as_str()).collect();
    let mut scored = Vec::with_capacity(candidates.len());
    for (index, _) in candidates {
        let Some((rid, record)) = read.record_at(index)? else {
            return Err(ErrorKind::CorruptFile {
                path: "recall table".into(),
                detail: format!("a posting names log index {index}, which the log does not hold"),
            }
            .into());
        };
        let text = match &record {
            Record::Span(s) => &s.text,
            Record::Claim(c) => &c.text,
            _ => continue,
        };
        // A query term the terms table does not know cannot be in an indexed text: one that is
        // means the terms table lost it.
        if !unknown.is_empty() && occurrences(text, &unknown).0.iter().any(|n| *n > 0) {
            return Err(ErrorKind::CorruptFile {
                path: "terms table".into(),
                detail: format!("a query term is missing from it but held by record {rid}"),
            }
            .into());
        }
        let (tf, len) = occurrences(text, &asked);
        let score: f64 = (weights.iter().zip(tf))
            .filter(|(_, tf)| *tf > 0)
            .map(|((_, _, idf), tf)| idf * weight(tf, len))
            .sum();
        scored.push((index, score, rid, record));
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scored.truncate(limit);
    let mut hits = Vec::with_capacity(scored.len());
    for (_, score, rid, record) in scored {
        hits.push(hit(read, rid, record, score)?);
    }
    Ok(Recall {
        query: query.to_string(),
        stream: stream.map(str::to_string),
        hits,
    })
}

/// A matching record with its standing.
fn hit<R: Read>(read: &R, rid: Rid, record: Record, score: f64) -> Result<Hit> {
    let mut hit = Hit {
        rid,
        kind: record.kind(),
        stream: String::new(),
        text: String::new(),
        score,
        turn: None,
        role: None,
        evicted: false,
        status: None,
        admitted: false,
        origin: None,
        witnesses: Vec::new(),
    };
    match record {
        Record::Span(s) => {
            hit.evicted = read.evicted_by(&rid)?.is_some();
            hit.stream = s.stream;
            hit.text = s.text;
            hit.turn = Some(s.turn);
            hit.role = Some(s.role);
        }
        Record::Claim(c) => {
            (hit.status, hit.admitted) = standing(read, &rid)?;
            for w in &c.witnesses {
                let turn = match read.named(w, "rids")? {
                    Record::Span(s) => Some(s.turn),
                    _ => None,
                };
                hit.witnesses.push((*w, turn));
            }
            hit.stream = c.stream;
            hit.text = c.text;
            hit.origin = Some(c.origin);
        }
        _ => {}
    }
    Ok(hit)
}

/// A claim's status, the one every view shows ([`Read::standing`]), and whether an admitted
/// verdict or a reground set it.
fn standing<R: Read>(read: &R, claim: &Rid) -> Result<(Option<Status>, bool)> {
    let s = read.standing(claim)?;
    Ok((Some(s.status), s.admitted))
}

impl Recall {
    /// The answer as a JSON object: `query`, `stream` (null for all), and `hits`, best first.
    /// A span hit has `kind` "span", `rid`, `stream`, `turn`, `role`, `text`, `score` and
    /// `evicted`; a claim hit has `kind` "claim", `rid`, `stream`, `text`, `score`, `status`
    /// (null when no verdict has judged it), `admitted`, `origin` and `witnesses` (`rid`, and
    /// `turn` for a span).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let hits: Vec<_> = self
            .hits
            .iter()
            .map(|h| {
                let score = (h.score * 1e4).round() / 1e4;
                match h.kind {
                    Kind::Span => json!({
                        "kind": "span", "rid": h.rid.to_hex(), "stream": h.stream,
                        "turn": h.turn, "role": h.role.map(Role::name), "text": h.text,
                        "score": score, "evicted": h.evicted,
                    }),
                    _ => json!({
                        "kind": "claim", "rid": h.rid.to_hex(), "stream": h.stream,
                        "text": h.text, "score": score,
                        "status": h.status.map(Status::name), "admitted": h.admitted,
                        "origin": h.origin.as_ref().and_then(Origin::tag),
                        "witnesses": h.witnesses.iter().map(|(w, turn)| json!({
                            "rid": w.to_hex(), "turn": turn,
                        })).collect::<Vec<_>>(),
                    }),
                }
            })
            .collect();
        json!({ "query": self.query, "stream": self.stream, "hits": hits })
    }

    /// The answer as text: one line a hit, its standing in brackets first.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let scope = match &self.stream {
            Some(s) => format!("stream {s}"),
            None => "all streams".to_string(),
        };
        let _ = writeln!(
            out,
            "recall {:?} in {scope}: {} hits",
            self.query,
            self.hits.len()
        );
        for (i, h) in self.hits.iter().enumerate() {
            let tags = match h.kind {
                Kind::Span => {
                    let mut t = format!(
                        "{} turn {} {}",
                        h.stream,
                        h.turn.unwrap_or(0),
                        h.role.map_or("", Role::name)
                    );
                    if h.evicted {
                        t.push_str(", evicted");
                    }
                    t
                }
                _ => {
                    let mut t = vec![format!("{} claim", h.stream)];
                    t.push(h.status.map_or("not judged", Status::name).to_string());
                    if !h.admitted {
                        t.push("not admitted".to_string());
                    }
                    t.push(
                        h.origin
                            .as_ref()
                            .and_then(Origin::tag)
                            .unwrap_or("no origin")
                            .to_string(),
                    );
                    let turns: Vec<String> = (h.witnesses.iter())
                        .map(|(w, turn)| match turn {
                            Some(t) => format!("turn {t}"),
                            None => w.short(),
                        })
                        .collect();
                    if !turns.is_empty() {
                        t.push(format!("cites {}", turns.join(" ")));
                    }
                    t.join(", ")
                }
            };
            let text = h.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let _ = writeln!(out, "{:>3}. [{tags}] {text}", i + 1);
        }
        out
    }
}
