//! Old ledgers stay readable: a ledger written by cairn as it stood on 2026-11-30 (commit
//! 23496dc, `cairn demo`), before derived rules were versioned, opens, verifies, keeps every
//! record and verdict as written, and goes on deriving its tables by the rules it was written
//! with (SPEC.md section 4.3).

use crate::util::{span, summary, Tmp};
use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Record};
use cairn::{Ledger, Read, DERIVED_RULES};

/// The fixture, copied: opening a ledger may write to it.
fn fixture(t: &Tmp) -> Ledger {
    std::fs::copy("tests/data/ledgers/demo-v1.redb", t.db()).expect("copy the fixture");
    Ledger::open(t.db()).expect("the old ledger opens")
}

#[test]
fn a_ledger_from_before_versioned_rules_opens_verifies_and_keeps_its_records() {
    let t = Tmp::new();
    let ledger = fixture(&t);
    assert_eq!(ledger.rules(), 1);
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    // Every record, verdicts included, exactly as the old build exported it.
    let snap = ledger.snapshot().unwrap();
    let now: Vec<String> = cairn::replay::records(&snap, None)
        .unwrap()
        .iter()
        .map(|(i, rid, r)| cairn::ingest::export_line(*i, *rid, r).to_string())
        .collect();
    let then: Vec<String> = include_str!("data/ledgers/demo-v1.export.jsonl")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(now.len(), 51);
    assert_eq!(now, then);
    // Its summaries kept the depths version 1 gave them: the first compaction of a stream is 1.
    let first = snap
        .of_kind(cairn::record::Kind::Summary)
        .unwrap()
        .into_iter()
        .find(|s| matches!(snap.get(s).unwrap(), Some(Record::Summary(x)) if x.parent.is_none() && x.author == Author::SelfAuthored))
        .expect("a first self-authored compaction");
    assert_eq!(snap.facts(&first).unwrap().unwrap().depth, Some(1));
}

#[test]
fn an_old_ledger_derives_new_records_by_its_own_rules_and_still_verifies() {
    let t = Tmp::new();
    let ledger = fixture(&t);
    let mut b = ledger.batch().unwrap();
    let said = b
        .append(span("fresh", 1, "keep the cache at 512 MB"))
        .unwrap();
    let c = b
        .append(Claim {
            stream: "fresh".into(),
            text: "the cache stays at 512 MB".into(),
            origin: Origin::UserSaid,
            witnesses: vec![said.rid],
            actionable: false,
        })
        .unwrap();
    let mut s = summary("fresh", None, Author::SelfAuthored, vec![], vec![c.rid]);
    s.covers = vec![said.rid];
    let o = Gatekeeper::default().propose_summary(&mut b, s).unwrap();
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();
    assert_eq!(snap.facts(&o.subject.rid).unwrap().unwrap().depth, Some(1));
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    // The past, too, is rebuilt by the ledger's rules.
    let past = ledger.as_of(snap.len().unwrap()).unwrap();
    assert_eq!(past.rules(), 1);
    let p = past.snapshot().unwrap();
    assert_eq!(p.facts(&o.subject.rid).unwrap().unwrap().depth, Some(1));
    // Its classifier is the first one too: no preferences or identifiers (rules 3).
    let mut b = ledger.batch().unwrap();
    b.append(span("fresh", 2, PREFERS)).unwrap();
    b.commit().unwrap();
    let classes: Vec<&str> = (ledger.snapshot().unwrap().items("fresh").unwrap().iter())
        .map(|i| i.class.name())
        .collect();
    assert_eq!(classes, ["commitment"], "{classes:?}");
}

/// A user turn with a preference and a booking code, which the classifier of derived rules 3
/// finds and earlier ones do not.
const PREFERS: &str = "I'd prefer a window seat; my reference is A9NHSO9Y.";

#[test]
fn a_new_ledger_derives_by_the_current_rules() {
    // Near miss of the above: the same first compaction in a new ledger has depth 0.
    let ledger = Ledger::in_memory().unwrap();
    assert_eq!(ledger.rules(), DERIVED_RULES);
    let mut b = ledger.batch().unwrap();
    let said = b
        .append(span("fresh", 1, "keep the cache at 512 MB"))
        .unwrap();
    let s = Gatekeeper::default()
        .propose_summary(
            &mut b,
            summary("fresh", None, Author::SelfAuthored, vec![], vec![]),
        )
        .unwrap()
        .subject;
    assert_eq!(b.facts(&s.rid).unwrap().unwrap().depth, Some(0));
    assert!(said.new);
    b.append(span("fresh", 2, PREFERS)).unwrap();
    let classes: Vec<&str> = (b.items("fresh").unwrap().iter())
        .map(|i| i.class.name())
        .collect();
    assert_eq!(
        classes,
        ["commitment", "preference", "identifier"],
        "{classes:?}"
    );
}

#[test]
fn an_old_ledger_gets_its_recall_index_when_first_opened_for_writing() {
    let t = Tmp::new();
    std::fs::copy("tests/data/ledgers/demo-v1.redb", t.db()).expect("copy the fixture");
    // Read-only, the old ledger has no index and cannot build one: recall says what to do.
    let reader = Ledger::open_read_only(t.db()).unwrap();
    let err = cairn::memory::recall(&reader.snapshot().unwrap(), "staging port", None, 5)
        .expect_err("no index yet");
    assert!(
        err.to_string().contains("open it for writing once"),
        "{err}"
    );
    assert!(
        reader.verify().unwrap().ok(),
        "verify passes without the index"
    );
    drop(reader);
    // Opened for writing, it is indexed from its records, and verify compares the index.
    let ledger = Ledger::open(t.db()).unwrap();
    let hits = cairn::memory::recall(&ledger.snapshot().unwrap(), "staging port", None, 5)
        .unwrap()
        .hits;
    assert!(hits.iter().any(|h| h.text.contains("5433")), "{hits:?}");
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    assert_eq!(report.tables_compared, 24);
}
