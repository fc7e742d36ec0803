//! A summary's parent is its stream's head: depth counts along the real chain, an old parent
//! cannot reset it, and a refused summary is never a parent. Regression tests of issue 22,
//! row 3.

use crate::util::ledger;
use cairn::gate::Gatekeeper;
use cairn::ingest::apply_line;
use cairn::{Ledger, Read};

const TURNS: &str = r#"{"kind":"span","stream":"c","turn":1,"role":"user","text":"We deploy on Fridays only."}
{"kind":"span","stream":"c","turn":2,"role":"user","text":"The build runs on the ci-7 runner."}
"#;

fn summary(parent: Option<&str>, claim: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!(r#","parent":"{p}""#));
    format!(
        r#"{{"kind":"summary","stream":"c","author":"self","budget":1000,"covers":["turn:1..turn:2"],"evicts":[]{parent},"claims":[{{"text":"{claim}","origin":"user-said","witnesses":["turn:1"],"actionable":true}}]}}"#
    )
}

/// Applies one line; the error's sentence when it is refused as bad input.
fn apply(ledger: &Ledger, line: &str) -> Result<cairn::ingest::LineResult, String> {
    let mut b = ledger.batch().unwrap();
    let r = apply_line(&mut b, &Gatekeeper::default(), 1, line.as_bytes());
    match r {
        Ok(r) => {
            b.commit().unwrap();
            Ok(r.unwrap())
        }
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn an_old_parent_does_not_reset_the_depth() {
    let ledger = ledger();
    for l in TURNS.lines() {
        apply(&ledger, l).unwrap();
    }
    let first = apply(&ledger, &summary(None, "we deploy on Fridays only")).unwrap();
    for text in [
        "deploys happen on Fridays only",
        "we deploy only on Fridays",
    ] {
        apply(&ledger, &summary(None, text)).unwrap();
    }
    let head = ledger.snapshot().unwrap().head("c").unwrap().unwrap();
    // A fourth summary naming the first as parent is refused, naming the head.
    let e = apply(
        &ledger,
        &summary(Some(&first.rid.to_hex()), "deploys are on Fridays only"),
    )
    .unwrap_err();
    assert!(
        e.contains(&head.to_hex()) && e.contains("head"),
        "names the head: {e}"
    );
    // Near miss: the same summary with the head as parent (or none) goes on the real chain,
    // at depth 3, and is flagged.
    let fourth = apply(
        &ledger,
        &summary(Some(&head.to_hex()), "deploys are on Fridays only"),
    )
    .unwrap();
    let o = fourth.gate.unwrap();
    assert!(o
        .findings
        .iter()
        .any(|f| f.gate == cairn::record::Gate::DepthExceeded));
    let snap = ledger.snapshot().unwrap();
    assert_eq!(snap.facts(&fourth.rid).unwrap().unwrap().depth, Some(3));
}

#[test]
fn a_refused_summary_is_never_a_parent() {
    let ledger = ledger();
    for l in TURNS.lines() {
        apply(&ledger, l).unwrap();
    }
    // Refused: the span the claim cites says the opposite.
    let refused = apply(&ledger, &summary(None, "we never deploy on Fridays")).unwrap();
    let o = refused.gate.as_ref().unwrap();
    assert!(!o.admitted);
    // Its repair, cairn's own summary without the contradicted claim, is the head now.
    let repair = o.repair.as_ref().expect("a refusal comes with its repair");
    assert!(repair.outcome.admitted, "{:?}", repair.outcome.findings);
    let head = ledger.snapshot().unwrap().head("c").unwrap();
    assert_eq!(head, Some(repair.outcome.subject.rid));
    let e = apply(
        &ledger,
        &summary(Some(&refused.rid.to_hex()), "we deploy on Fridays only"),
    )
    .unwrap_err();
    assert!(
        e.contains("the stream's head (its last admitted summary) is"),
        "{e}"
    );
    // Near miss: with the head as its parent (the default), it is admitted.
    let ok = apply(&ledger, &summary(None, "we deploy on Fridays only")).unwrap();
    assert!(ok.gate.unwrap().admitted);
}
