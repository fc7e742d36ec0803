//! One status per claim, from one function, the same in every view; a claim only a refused
//! summary carried says so. Regression test of issue 22, row 13.

use crate::util::ledger;
use cairn::gate::{claim_status_plain, Gatekeeper};
use cairn::ingest::apply_line;
use cairn::record::Status;
use cairn::Read;

const LINES: &str = r#"{"kind":"span","stream":"f","turn":1,"role":"user","text":"We are still on libfoo 2.3.1, do not bump."}
{"kind":"summary","stream":"f","author":"self","budget":1000,"covers":["turn:1"],"evicts":[],"claims":[{"text":"libfoo was upgraded to 2.4.0","origin":"user-said","witnesses":["turn:1"],"actionable":true},{"text":"we are still on libfoo 2.3.1","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}
"#;

#[test]
fn a_refused_claim_reads_the_same_in_every_view_and_says_it_was_refused() {
    let ledger = ledger();
    let mut b = ledger.batch().unwrap();
    let mut results = Vec::new();
    for (i, l) in LINES.lines().enumerate() {
        results.push(
            apply_line(&mut b, &Gatekeeper::default(), i as u64 + 1, l.as_bytes())
                .unwrap()
                .unwrap(),
        );
    }
    b.commit().unwrap();
    let gated = results[1].gate.as_ref().unwrap();
    assert!(!gated.admitted);
    let fabricated = gated.claims[0];
    assert_eq!(fabricated.status, Status::Fabricated);
    let snap = ledger.snapshot().unwrap();

    // The library's status, recall and why agree with the verdict.
    assert_eq!(
        claim_status_plain(&snap, fabricated.claim).unwrap(),
        Status::Fabricated
    );
    let standing = snap.standing(&fabricated.claim).unwrap();
    assert_eq!(standing.refused_by, Some(results[1].rid));
    let recall = cairn::memory::recall(&snap, "libfoo upgraded 2.4.0", Some("f"), 5).unwrap();
    let hit = recall
        .hits
        .iter()
        .find(|h| h.rid == fabricated.claim)
        .unwrap();
    assert_eq!(
        (hit.status, hit.admitted),
        (Some(Status::Fabricated), false)
    );
    let why = cairn::replay::why(&snap, fabricated.claim).unwrap();
    let root = &why.nodes[0];
    assert_eq!(root.status, "fabricated");
    assert!(root.detail.contains("refused summary 1"), "{}", root.detail);

    // Near miss: the faithful claim of the same refused summary reads as that verdict said,
    // in every view too.
    let faithful = gated.claims[1];
    let st = claim_status_plain(&snap, faithful.claim).unwrap();
    assert_eq!(st, faithful.status);
    let why = cairn::replay::why(&snap, faithful.claim).unwrap();
    assert_eq!(why.nodes[0].status, faithful.status.name());
}
