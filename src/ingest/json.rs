//! Records as JSON, in the field names of the JSON Lines input, with links as full rids.
//! An exported line can be ingested again and gives the same rid.

use super::LineResult;
use crate::record::{score_to_unit, Record, Rid, Score};
use serde_json::{json, Map, Value};

fn rids(v: &[Rid]) -> Value {
    Value::Array(v.iter().map(|r| Value::String(r.to_hex())).collect())
}

fn opt_score(s: Option<Score>) -> Value {
    s.map(|s| json!(score_to_unit(s))).unwrap_or(Value::Null)
}

/// A record's fields as a JSON object, `kind` first.
pub fn record(r: &Record) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("kind".into(), json!(r.kind().name()));
    let fields = match r {
        Record::Span(s) => json!({
            "stream": s.stream, "turn": s.turn, "role": s.role.name(), "name": s.tool,
            "text": s.text,
        }),
        Record::Claim(c) => json!({
            "stream": c.stream, "text": c.text, "origin": c.origin.tag(),
            "witnesses": rids(&c.witnesses), "actionable": c.actionable,
        }),
        Record::Summary(s) => json!({
            "stream": s.stream, "parent": s.parent.map(|p| p.to_hex()),
            "author": s.author.name(), "repairs": s.author.repairs().map(|p| p.to_hex()),
            "budget": s.budget, "covers": rids(&s.covers),
            "evicts": rids(&s.evicts), "claims": rids(&s.claims),
            "self_score": opt_score(s.self_score), "reground": s.reground,
        }),
        Record::Pin(p) => json!({
            "stream": p.stream, "name": p.name,
            "items": p.items.iter().map(|i| json!({
                "class": i.class.name(), "text": i.text, "witness": i.witness.map(|w| w.to_hex()),
            })).collect::<Vec<_>>(),
        }),
        Record::Judgement(j) => json!({
            "claim": j.claim.to_hex(), "span": j.span.to_hex(), "relation": j.relation.name(),
            "score": score_to_unit(j.score), "scorer": j.scorer,
        }),
        Record::Verdict(v) => json!({
            "subject": v.subject.to_hex(), "admitted": v.admitted,
            "findings": v.findings.iter().map(|f| json!({
                "gate": f.gate, "subject": f.subject.to_hex(), "detail": f.detail,
            })).collect::<Vec<_>>(),
            "claims": v.claims.iter().map(|c| json!({
                "claim": c.claim.to_hex(), "status": c.status.name(),
            })).collect::<Vec<_>>(),
            "self_score": opt_score(v.self_score), "anchored_score": opt_score(v.anchored_score),
            "policy": Rid(v.policy).to_hex(),
        }),
        Record::Action(a) => json!({
            "stream": a.stream, "text": a.text, "irreversible": a.irreversible,
            "relies_on": rids(&a.relies_on),
        }),
        Record::Reground(g) => json!({
            "claim": g.claim.to_hex(), "spans": rids(&g.spans), "score": score_to_unit(g.score),
        }),
        Record::Check(c) => json!({"action": c.action.to_hex(), "at": c.at}),
        Record::Receipt(r) => json!({
            "stream": r.stream, "key": r.key, "payload": Rid(r.payload).to_hex(),
            "spans": rids(&r.spans),
        }),
        Record::Retirement(r) => json!({
            "stream": r.stream, "pin": r.pin.to_hex(), "item": r.item,
            "witness": r.witness.to_hex(),
        }),
        Record::Classification(c) => json!({
            "span": c.span.to_hex(), "classifier": c.classifier,
            "items": c.items.iter().map(|i| json!({
                "class": i.class.name(), "text": i.text,
            })).collect::<Vec<_>>(),
        }),
        Record::Entry(e) => json!({
            "namespace": e.namespace, "key": e.key, "value": e.value, "text": e.text,
            "previous": e.previous.map(|p| p.to_hex()), "created": e.created, "at": e.at,
        }),
        Record::Place(p) => json!({
            "span": p.span.to_hex(), "log": p.log, "message": p.message, "line": p.line,
            "timestamp": p.timestamp,
        }),
        Record::Ruling(r) => json!({
            "claim": r.claim.to_hex(), "spans": rids(&r.spans), "judge": r.judge,
            "prompt": r.prompt, "answer": r.answer.name(), "quote": r.quote,
        }),
    };
    if let Value::Object(f) = fields {
        m.extend(f.into_iter().filter(|(_, v)| !v.is_null()));
    }
    m
}

/// An export line: the record's fields plus its `rid` and log `index`.
pub fn export_line(index: u64, rid: Rid, r: &Record) -> Value {
    let mut m = record(r);
    m.insert("rid".into(), json!(rid.to_hex()));
    m.insert("index".into(), json!(index));
    Value::Object(m)
}

/// A finding as JSON: `gate`, `subject`, `detail`.
pub fn finding(f: &crate::record::Finding) -> Value {
    json!({"gate": f.gate, "subject": f.subject.to_hex(), "detail": f.detail})
}

/// A refused summary's repair as JSON (SPEC.md section 8.9): its rid, verdict, findings, the
/// status of each claim, what changed from the proposal, and its text.
pub fn repair_json(repair: &crate::gate::Repair) -> Value {
    let o = &repair.outcome;
    json!({
        "rid": o.subject.rid.to_hex(),
        "verdict": if o.admitted { "admitted" } else { "refused" },
        "verdict_rid": o.verdict.to_hex(),
        "findings": o.findings.iter().map(finding).collect::<Vec<_>>(),
        "claims": (o.claims.iter())
            .map(|c| json!({"rid": c.claim.to_hex(), "status": c.status.name()}))
            .collect::<Vec<_>>(),
        "anchored_score": o.anchored_score,
        "changes": repair.changes,
        "text": repair.text,
    })
}

/// The `ingest --json` result for one line.
pub fn line_result(r: &LineResult) -> Value {
    let mut v = json!({
        "line": r.line, "kind": r.kind.name(), "rid": r.rid.to_hex(), "index": r.index,
        "new": r.new,
    });
    if let Some(o) = &r.gate {
        v["verdict"] = json!(if o.admitted { "admitted" } else { "refused" });
        v["verdict_rid"] = json!(o.verdict.to_hex());
        v["findings"] = o.findings.iter().map(finding).collect();
        v["anchored_score"] = json!(o.anchored_score);
        if let Some(c) = &o.check {
            v["check"] = json!(c.rid.to_hex());
        }
        if r.kind == crate::record::Kind::Action {
            v["claims"] = o
                .claims
                .iter()
                .map(|c| json!({"rid": c.claim.to_hex(), "status": c.status.name()}))
                .collect();
        }
        if !o.regrounded.is_empty() {
            v["regrounded"] = o.regrounded.iter().map(|r| json!(r.to_hex())).collect();
        }
        if r.kind == crate::record::Kind::Summary {
            v["struck"] = o.struck.iter().map(|r| json!(r.to_hex())).collect();
        }
        if let Some(repair) = &o.repair {
            v["repair"] = repair_json(repair);
        }
    }
    if r.kind == crate::record::Kind::Reground {
        v["verdict"] = json!(if r.refused.is_some() {
            "refused"
        } else {
            "admitted"
        });
    }
    if let Some(why) = &r.refused {
        v["detail"] = json!(why);
    }
    if r.kind == crate::record::Kind::Summary {
        v["claims"] = r
            .claims
            .iter()
            .map(|c| {
                let mut v = json!({"rid": c.rid.to_hex(), "text": c.text, "new": c.new,
                       "status": c.status.map(|s| s.name())});
                if let Some(d) = &c.derived {
                    v["origin"] = json!(d.origin.tag());
                    v["witnesses"] = (d.witnesses.iter())
                        .map(|w| {
                            json!({"rid": w.rid.to_hex(), "turn": w.turn,
                                        "entailment": (w.entailment * 1e4).round() / 1e4})
                        })
                        .collect();
                    v["why"] = json!(d.why);
                }
                v
            })
            .collect();
    }
    v
}
