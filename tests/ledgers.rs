//! Old ledgers stay readable: a ledger written by cairn as it stood on 2026-11-30 (commit
//! 23496dc, `cairn demo`), before derived rules were versioned, opens, verifies, keeps every
//! record and verdict as written, and goes on deriving its tables by the rules it was written
//! with (SPEC.md section 4.3).

use crate::util::{span, summary, Tmp};
use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Record};
use cairn::{Ledger, Read, DERIVATION};
use redb::ReadableTable;

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
    let (now, then) = (
        exported(&snap),
        lines(include_str!("data/ledgers/demo-v1.export.jsonl")),
    );
    assert_eq!(then.len(), 51);
    assert_eq!(now[..51], then[..]);
    // After them, opened for writing, the items it derived, as classification records.
    assert_records_of_derived_items(&snap, 51, 1);
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
    // A span new to it is classified by today's classifier, and the classification is a
    // record carrying the classifier's id.
    let mut b = ledger.batch().unwrap();
    let prefers = b.append(span("fresh", 2, PREFERS)).unwrap();
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();
    let classes: Vec<&str> = (snap.items("fresh").unwrap().iter())
        .map(|i| i.class.name())
        .collect();
    assert_eq!(
        classes,
        ["commitment", "preference", "identifier"],
        "{classes:?}"
    );
    match snap.record_at(prefers.index + 1).unwrap() {
        Some((_, Record::Classification(c))) => {
            assert_eq!(c.span, prefers.rid);
            assert_eq!(c.classifier, cairn::gate::classifier_id());
        }
        other => panic!("no classification after the span: {other:?}"),
    }
    assert!(ledger.verify().unwrap().ok());
}

#[test]
fn an_old_ledger_keeps_the_items_it_derived() {
    let t = Tmp::new();
    let ledger = fixture(&t);
    // The classifier of 2026-11-30 found no identifiers; today's finds the path the user
    // named in libfoo's turn 160. The old ledger keeps what it derived.
    let snap = ledger.snapshot().unwrap();
    let kept: Vec<(u64, &str)> = (snap.items("libfoo").unwrap().iter())
        .map(|i| (i.turn, i.class.name()))
        .collect();
    assert_eq!(
        kept,
        [(212, "prohibition"), (212, "commitment")],
        "{kept:?}"
    );
    let turn_160 = ledger.spans("libfoo").unwrap()[0].clone();
    let today: Vec<&str> = (cairn::gate::classify(turn_160.0, &turn_160.1).iter())
        .map(|i| i.class.name())
        .collect();
    assert!(today.contains(&"identifier"), "{today:?}");
    // verify and the past agree with what it derived, and a change to a kept item is found.
    assert!(ledger.verify().unwrap().ok());
    let past = ledger.as_of(snap.len().unwrap()).unwrap();
    assert_eq!(
        past.snapshot().unwrap().items("libfoo").unwrap(),
        snap.items("libfoo").unwrap()
    );
    drop((snap, past, ledger));
    crate::util::tamper(&t.db(), |txn| {
        let mut items = txn.open_table(crate::util::tables::ITEMS).unwrap();
        let key = ("libfoo", 212u64, 0u8);
        let mut v = items.get(key).unwrap().unwrap().value().to_vec();
        v.push(b'!');
        items.insert(key, v.as_slice()).unwrap();
    });
    let report = Ledger::open(t.db()).unwrap().verify().unwrap();
    assert!(
        report.discrepancies.iter().any(|d| d.table == "items"),
        "{:?}",
        report.discrepancies
    );
}

/// A user turn with a preference and a booking code, which the classifier of derived rules 3
/// finds and earlier ones do not.
const PREFERS: &str = "I'd prefer a window seat; my reference is A9NHSO9Y.";

#[test]
fn a_new_ledger_derives_by_the_current_rules() {
    // Near miss of the above: the same first compaction in a new ledger has depth 0.
    let ledger = Ledger::in_memory().unwrap();
    assert_eq!(ledger.rules(), DERIVATION);
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
    assert_eq!(report.tables_compared, 26);
}

/// A ledger whose recall index has the first layout (one B-tree entry per posting, recall
/// version 1, as every build before the blocks wrote it): read-only, its index is not read and
/// recall says what to do; opened for writing, the index is rebuilt as blocks from the records,
/// recall finds what it found, and verify compares every posting (issue 25).
#[test]
fn a_recall_index_of_the_first_layout_is_rebuilt_as_blocks_when_first_opened_for_writing() {
    let t = Tmp::new();
    let path = fixture_7da6f49(&t);
    let reader = Ledger::open_read_only(&path).unwrap();
    let err = cairn::memory::recall(&reader.snapshot().unwrap(), "staging port", None, 5)
        .expect_err("an index of the first layout is not read");
    assert!(
        err.to_string().contains("open it for writing once"),
        "{err}"
    );
    let report = reader.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    assert_eq!(report.tables_compared, 22);
    drop(reader);
    let ledger = Ledger::open(&path).unwrap();
    let snap = ledger.snapshot().unwrap();
    let hits = cairn::memory::recall(&snap, "staging port", None, 5)
        .unwrap()
        .hits;
    assert!(hits.iter().any(|h| h.text.contains("5433")), "{hits:?}");
    let mine = cairn::memory::recall(&snap, "staging port", Some("staging"), 5)
        .unwrap()
        .hits;
    assert!(mine.iter().all(|h| h.stream == "staging") && !mine.is_empty());
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    assert_eq!(report.tables_compared, 26);
    // Appends in later commits add blocks of their own; verify still agrees posting by posting.
    for turn in 50..53 {
        let mut b = ledger.batch().unwrap();
        b.append(span(
            "staging",
            turn,
            "the staging port moved to 6543 today",
        ))
        .unwrap();
        b.commit().unwrap();
    }
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    let hits = cairn::memory::recall(&ledger.snapshot().unwrap(), "staging port", None, 3)
        .unwrap()
        .hits;
    assert!(hits.iter().any(|h| h.text.contains("6543")), "{hits:?}");
}

/// A ledger made by commit 7da6f49 (main on 2026-12-01, derivation 5): `cairn demo`, then a
/// booking stream whose items that day's classifier found (tests/data/ledgers/README.md).
fn fixture_7da6f49(t: &Tmp) -> std::path::PathBuf {
    std::fs::copy("tests/data/ledgers/demo-7da6f49.redb", t.db()).expect("copy the fixture");
    t.db()
}

#[test]
fn a_ledger_made_on_2026_12_01_opens_verifies_and_shows_its_judgements() {
    let t = Tmp::new();
    let path = fixture_7da6f49(&t);
    // Read-only first: nothing in the file changes, and it verifies.
    let reader = Ledger::open_read_only(&path).unwrap();
    assert_eq!(reader.rules(), 5);
    let report = reader.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    drop(reader);
    let ledger = Ledger::open(&path).unwrap();
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    // Every record as that build exported it: its verdicts, the person's judgement and the
    // pin `pin --auto` wrote from that day's items.
    let snap = ledger.snapshot().unwrap();
    let now = exported(&snap);
    let then = lines(include_str!("data/ledgers/demo-7da6f49.export.jsonl"));
    assert_eq!(now[..then.len()], then[..]);
    assert_records_of_derived_items(&snap, then.len() as u64, 5);
    let judged: Vec<String> = (snap.of_kind(cairn::record::Kind::Judgement).unwrap().iter())
        .filter_map(|r| match snap.get(r).unwrap() {
            Some(Record::Judgement(j)) => Some(j.scorer),
            _ => None,
        })
        .collect();
    assert!(
        judged.contains(&"person:reviewer".to_string()),
        "{judged:?}"
    );
    // The items it derived are the pin's, in order, and the past keeps them too.
    let Some(Record::Pin(pin)) = snap
        .get(&snap.pin("booking", "auto").unwrap().unwrap())
        .unwrap()
    else {
        panic!("the auto pin is missing")
    };
    let items: Vec<(String, String)> = (snap.items("booking").unwrap().into_iter())
        .map(|i| (i.class.name().to_string(), i.text))
        .collect();
    let pinned: Vec<(String, String)> = (pin.items.into_iter())
        .map(|i| (i.class.name().to_string(), i.text))
        .collect();
    assert_eq!(items, pinned);
    let past = ledger.as_of(snap.len().unwrap() - 1).unwrap();
    assert_eq!(
        past.snapshot().unwrap().items("booking").unwrap(),
        snap.items("booking").unwrap()
    );
    // A span appended now is classified with a record; the ledger still verifies, read-only too.
    let mut b = ledger.batch().unwrap();
    b.append(span("booking", 5, PREFERS)).unwrap();
    b.commit().unwrap();
    assert_eq!(ledger.len().unwrap(), snap.len().unwrap() + 2);
    drop((snap, past, ledger));
    let reader = Ledger::open_read_only(&path).unwrap();
    let report = reader.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
}

/// The records logged from `from` on are the classification records of an old ledger's derived
/// items: one per span with items, each with the classifier id of derivation `rules`, holding
/// what the items table holds for that span.
fn assert_records_of_derived_items(snap: &cairn::Snapshot, from: u64, rules: u8) {
    let size = snap.len().unwrap();
    assert!(size > from, "no classification records were written");
    for i in from..size {
        let Some((_, Record::Classification(c))) = snap.record_at(i).unwrap() else {
            panic!("record {i} is not a classification")
        };
        assert_eq!(c.classifier, format!("cairn-derived-{rules}"));
        let Some(Record::Span(span)) = snap.get(&c.span).unwrap() else {
            panic!("record {i} names no span")
        };
        let items: Vec<String> = (snap.items(&span.stream).unwrap().into_iter())
            .filter(|x| x.turn == span.turn)
            .map(|x| x.text)
            .collect();
        let recorded: Vec<String> = c.items.into_iter().map(|x| x.text).collect();
        assert_eq!(items, recorded);
    }
}

/// Every record of the ledger as an `export` line.
fn exported(snap: &cairn::Snapshot) -> Vec<String> {
    (cairn::replay::records(snap, None).unwrap().iter())
        .map(|(i, rid, r)| cairn::ingest::export_line(*i, *rid, r).to_string())
        .collect()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

/// A ledger made by commit 2fd7899 (main before classification and place records, 2026-12-01):
/// the demo, a booking stream, a `pin --auto` pin and a retirement of one of its items
/// (tests/data/ledgers/README.md).
#[test]
fn a_ledger_made_before_classification_records_opens_verifies_and_replays() {
    let t = Tmp::new();
    std::fs::copy("tests/data/ledgers/demo-2fd7899.redb", t.db()).expect("copy the fixture");
    let reader = Ledger::open_read_only(t.db()).unwrap();
    assert_eq!(reader.rules(), 5);
    let report = reader.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    drop(reader);
    let ledger = Ledger::open(t.db()).unwrap();
    let report = ledger.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    let snap = ledger.snapshot().unwrap();
    let then = lines(include_str!("data/ledgers/demo-2fd7899.export.jsonl"));
    assert_eq!(exported(&snap)[..then.len()], then[..]);
    assert_records_of_derived_items(&snap, then.len() as u64, 5);
    // Its retirement still lifts the item, and every stream replays.
    let pin = snap.pin("booking", "auto").unwrap().unwrap();
    let lifted: Vec<String> = (snap.retirements(&pin).unwrap().into_iter())
        .map(|(item, _)| item)
        .collect();
    assert_eq!(lifted, ["Never change the return flight."]);
    for stream in ["libfoo", "staging", "migration", "booking"] {
        cairn::replay::replay(&snap, stream).unwrap();
    }
}
