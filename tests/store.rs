//! The store: append-only, idempotent, link checks, write-once pins, derived facts, verify.

use crate::util::{claim, pin, span, summary, tables, tamper, verdict, Tmp};
use cairn::gate::Gatekeeper;
use cairn::record::*;
use cairn::{ErrorKind, Ledger, Read};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[test]
fn appending_the_same_record_twice_is_idempotent() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let a = b.append(span("s1", 1, "hello")).unwrap();
    b.commit().unwrap();
    let mut b = ledger.batch().unwrap();
    let again = b.append(span("s1", 1, "hello")).unwrap();
    b.commit().unwrap();
    assert_eq!((again.rid, again.index, again.new), (a.rid, a.index, false));
    assert_eq!(ledger.len().unwrap(), 1);
}

#[test]
fn links_must_name_existing_records_of_the_right_kind_and_stream() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let s1 = b.append(span("s1", 1, "a")).unwrap().rid;
    let s2 = b.append(span("s2", 1, "b")).unwrap().rid;
    let p = b.append(pin("s1", "c", "never x")).unwrap().rid;
    let c = b.append(claim("s1", "a", vec![s1])).unwrap().rid;
    let before = b.len().unwrap();

    let missing = b.append(claim("s1", "x", vec![Rid([7; 32])])).unwrap_err();
    assert!(
        missing.to_string().contains("not in the ledger"),
        "{missing}"
    );
    let pin_witness = b.append(claim("s1", "x", vec![p])).unwrap_err();
    assert!(
        pin_witness
            .to_string()
            .contains("is a pin, but `witnesses` must name a span or claim"),
        "{pin_witness}"
    );
    let gate = Gatekeeper::default();
    let claim_cover = gate
        .propose_summary(
            &mut b,
            Summary {
                covers: vec![c],
                ..summary("s1", None, Author::SelfAuthored, vec![], vec![])
            },
        )
        .unwrap_err();
    assert!(
        claim_cover
            .to_string()
            .contains("`covers` must name a span"),
        "{claim_cover}"
    );
    let other_stream = gate
        .propose_summary(
            &mut b,
            summary("s1", None, Author::SelfAuthored, vec![s2], vec![]),
        )
        .unwrap_err();
    assert!(
        other_stream.to_string().contains("belongs to stream s2"),
        "{other_stream}"
    );
    assert_eq!(b.len().unwrap(), before, "a refused record writes nothing");

    // Near miss: the same claim with a span witness, and a cross-stream claim witness, pass.
    b.append(claim("s1", "x", vec![s1, s2])).unwrap();
}

#[test]
fn pins_are_write_once() {
    let t = Tmp::new();
    let ledger = Ledger::open(t.db()).unwrap();
    let mut b = ledger.batch().unwrap();
    let first = b
        .append(pin("s1", "constraints", "never run DROP TABLE"))
        .unwrap();
    b.commit().unwrap();
    let before = ledger.snapshot().unwrap().bytes_at(first.index).unwrap();

    let mut b = ledger.batch().unwrap();
    assert!(
        !b.append(pin("s1", "constraints", "never run DROP TABLE"))
            .unwrap()
            .new
    );
    let err = b
        .append(pin("s1", "constraints", "DROP TABLE is fine"))
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::PinConflict { existing, .. } if *existing == first.rid)
    );
    assert!(
        err.to_string()
            .starts_with("pin-conflict: stream s1 already holds pin \"constraints\""),
        "{err}"
    );
    // Near miss: another name or another stream is a new pin.
    b.append(pin("s1", "constraints-2", "DROP TABLE is fine"))
        .unwrap();
    b.append(pin("s2", "constraints", "DROP TABLE is fine"))
        .unwrap();
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();
    assert_eq!(snap.pin("s1", "constraints").unwrap(), Some(first.rid));
    assert_eq!(snap.bytes_at(first.index).unwrap(), before);
}

#[test]
fn a_turn_holds_one_span() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    b.append(span("s1", 5, "first")).unwrap();
    let err = b.append(span("s1", 5, "second")).unwrap_err();
    assert!(
        err.to_string()
            .contains("already holds a different span for turn 5"),
        "{err}"
    );
    b.append(span("s1", 6, "second")).unwrap();
}

#[test]
fn anchored_bits_and_depths_are_derived_at_append() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let s = b.append(span("s1", 1, "raw")).unwrap().rid;
    let c0 = b.append(claim("s1", "c0", vec![s])).unwrap().rid;
    let c1 = b.append(claim("s1", "c1", vec![c0])).unwrap().rid;
    let c2 = b.append(claim("s1", "c2", vec![c1])).unwrap().rid;
    let c3 = b.append(claim("s1", "c3", vec![c2])).unwrap().rid;
    let shortcut = b.append(claim("s1", "c3b", vec![c2, s])).unwrap().rid;
    let floating = b.append(claim("s1", "nothing", vec![])).unwrap().rid;
    let on_floating = b
        .append(claim("s1", "built on nothing", vec![floating]))
        .unwrap()
        .rid;
    b.commit().unwrap();

    let snap = ledger.snapshot().unwrap();
    let depth = |r: Rid| snap.facts(&r).unwrap().unwrap().depth;
    assert_eq!(
        [depth(c0), depth(c1), depth(c2), depth(c3), depth(shortcut)],
        [Some(0), Some(1), Some(2), Some(3), Some(0)]
    );
    let mut unanchored = vec![floating, on_floating];
    unanchored.sort();
    assert_eq!(snap.unanchored_claims().unwrap(), unanchored);
    assert_eq!(snap.deeper_than(Kind::Claim, 2).unwrap(), vec![(c3, 3)]);
}

#[test]
fn summary_chains_count_self_authored_depth_and_windows_shrink() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    // A summary becomes the head, and its evictions apply, only through an admitted verdict.
    let gate = Gatekeeper::default();
    let admit = |b: &mut cairn::Batch, s: Summary| -> Rid {
        let o = gate.propose_summary(b, s).unwrap();
        assert!(o.admitted, "{:?}", o.findings);
        o.subject.rid
    };
    let text = [
        "the deploy script lives in tools/ship.sh",
        "lunch is booked for noon on Friday",
        "the printer on floor two is out of toner",
        "Maria reviews the release notes",
        "the wiki moved to a new host",
        "backups run nightly at 02:00",
    ];
    let spans: Vec<Rid> = (0..6)
        .map(|i| b.append(span("s1", i, text[i as usize])).unwrap().rid)
        .collect();
    // Not actionable, so carrying it across summaries is no laundering-rate matter.
    let c = Claim {
        actionable: false,
        ..claim("s1", text[0], vec![spans[0]])
    };
    let c = b.append(c).unwrap().rid;
    let s1 = admit(
        &mut b,
        summary(
            "s1",
            None,
            Author::SelfAuthored,
            vec![spans[0], spans[1]],
            vec![c],
        ),
    );
    let s2 = admit(
        &mut b,
        summary(
            "s1",
            Some(s1),
            Author::SelfAuthored,
            vec![spans[1], spans[2]],
            vec![c],
        ),
    );
    let s3 = admit(
        &mut b,
        summary("s1", Some(s2), Author::SelfAuthored, vec![], vec![c]),
    );
    let sep = admit(
        &mut b,
        summary("s1", Some(s3), Author::Separate, vec![], vec![c]),
    );
    let s5 = admit(
        &mut b,
        summary(
            "s1",
            Some(sep),
            Author::SelfAuthored,
            vec![spans[5]],
            vec![c],
        ),
    );
    let snap = &b;
    let depth = |r: Rid| snap.facts(&r).unwrap().unwrap().depth.unwrap();
    // Depth counts re-summarisations since the last grounding (seed 001's cycle_depth): the
    // first compaction is 0, a separate pass resets to 0.
    assert_eq!(
        [depth(s1), depth(s2), depth(s3), depth(sep), depth(s5)],
        [0, 1, 2, 0, 1]
    );
    assert_eq!(snap.deeper_than(Kind::Summary, 1).unwrap(), vec![(s3, 2)]);
    assert!(snap.deeper_than(Kind::Summary, 2).unwrap().is_empty());
    let st = snap.stream("s1").unwrap();
    assert_eq!(
        (st.spans, st.evicted, st.window(), st.summaries, st.head),
        (6, 4, 2, 5, Some(s5))
    );
    assert_eq!(snap.evicted_by(&spans[1]).unwrap(), Some(s1));
    // Five summaries carry it, and each of their verdicts names it.
    assert_eq!(snap.dependents(&c).unwrap().len(), 10);
    b.commit().unwrap();

    // A refused summary changes neither the head nor the window, and is judged once; its
    // repair, cairn's own summary without the refused claim, is what moves them.
    let mut b = ledger.batch().unwrap();
    let denied = b
        .append(claim(
            "s1",
            "the wiki never moved to a new host",
            vec![spans[4]],
        ))
        .unwrap()
        .rid;
    let proposal = summary(
        "s1",
        Some(s5),
        Author::SelfAuthored,
        vec![spans[4]],
        vec![denied],
    );
    let first = gate.propose_summary(&mut b, proposal.clone()).unwrap();
    assert!(
        !first.admitted,
        "a claim its own witness contradicts refuses it"
    );
    let refused = first.subject.rid;
    let repair = first
        .repair
        .as_ref()
        .expect("a refusal comes with its repair");
    assert!(repair.outcome.admitted, "{:?}", repair.outcome.findings);
    let again = gate.propose_summary(&mut b, proposal).unwrap();
    assert_eq!((again.verdict, again.admitted), (first.verdict, false));
    let recorded = again.repair.as_ref().expect("the recorded repair");
    assert_eq!(recorded.outcome.subject.rid, repair.outcome.subject.rid);
    // Nothing but the gates writes a verdict, so no second verdict can be forged.
    let forged = b.append(verdict(refused, true)).unwrap_err();
    assert!(
        forged
            .to_string()
            .contains("verdicts are written only by the gates"),
        "{forged}"
    );
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();
    let st = snap.stream("s1").unwrap();
    assert_eq!(
        (st.head, st.window(), st.refused),
        (Some(repair.outcome.subject.rid), 1, 1)
    );
    assert_eq!(
        snap.evicted_by(&spans[4]).unwrap(),
        Some(repair.outcome.subject.rid)
    );
}

use redb::{ReadableTable, ReadableTableMetadata};

fn small_ledger(t: &Tmp) -> (Rid, u64, Rid) {
    let ledger = Ledger::open(t.db()).unwrap();
    let mut b = ledger.batch().unwrap();
    let s = b
        .append(span("s1", 1, "we are still on libfoo 2.3.1"))
        .unwrap();
    let c = b
        .append(claim("s1", "libfoo is 2.3.1", vec![s.rid]))
        .unwrap();
    b.commit().unwrap();
    assert!(ledger.verify().unwrap().ok());
    (s.rid, s.index, c.rid)
}

#[test]
fn verify_finds_a_flipped_byte_in_a_records_text() {
    let t = Tmp::new();
    let (rid, index, _) = small_ledger(&t);
    tamper(&t.db(), |txn| {
        let mut records = txn.open_table(tables::RECORDS).unwrap();
        let mut bytes = records.get(index).unwrap().unwrap().value().to_vec();
        *bytes.last_mut().unwrap() ^= 0x01;
        records.insert(index, bytes.as_slice()).unwrap();
    });
    let report = Ledger::open(t.db()).unwrap().verify().unwrap();
    assert!(!report.ok());
    assert_eq!(report.discrepancies[0].rid, Some(rid));
    assert!(
        report.discrepancies[0].detail.contains("hash to"),
        "{}",
        report.discrepancies[0]
    );
}

#[test]
fn verify_finds_a_tampered_derived_table() {
    let t = Tmp::new();
    let (_, _, claim) = small_ledger(&t);
    tamper(&t.db(), |txn| {
        txn.open_table(tables::UNANCHORED)
            .unwrap()
            .insert(claim.0, ())
            .unwrap();
    });
    let report = Ledger::open(t.db()).unwrap().verify().unwrap();
    assert_eq!(report.discrepancies.len(), 1, "{:?}", report.discrepancies);
    assert_eq!(
        (report.discrepancies[0].rid, report.discrepancies[0].table),
        (Some(claim), "unanchored")
    );
}

#[test]
fn verify_finds_a_dangling_link() {
    let t = Tmp::new();
    let (span_rid, _, _) = small_ledger(&t);
    // Rewrite the log so the span disappears but the claim that cites it stays.
    tamper(&t.db(), |txn| {
        let mut log = txn.open_table(tables::LOG).unwrap();
        let mut records = txn.open_table(tables::RECORDS).unwrap();
        // The claim is logged last, after the span and the span's classification.
        let last = log.len().unwrap() - 1;
        let claim_rid = log.get(last).unwrap().unwrap().value();
        let claim_bytes = records.get(last).unwrap().unwrap().value().to_vec();
        log.insert(0, claim_rid).unwrap();
        records.insert(0, claim_bytes.as_slice()).unwrap();
        for i in 1..=last {
            log.remove(i).unwrap();
            records.remove(i).unwrap();
        }
    });
    let report = Ledger::open(t.db()).unwrap().verify().unwrap();
    assert!(
        report.discrepancies.iter().any(
            |d| d.detail.contains("links do not hold") && d.detail.contains(&span_rid.to_hex())
        ),
        "{:?}",
        report.discrepancies
    );
}

#[derive(Debug, Clone)]
enum Op {
    Span(u8, u8, String),
    Claim(u8, Vec<usize>),
    Pin(u8, u8, String),
    Summary(u8, Vec<usize>, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2u8, 0..20u8, "[a-z ]{0,12}").prop_map(|(s, t, x)| Op::Span(s, t, x)),
        (0..2u8, prop::collection::vec(any::<usize>(), 0..3)).prop_map(|(s, w)| Op::Claim(s, w)),
        (0..2u8, 0..3u8, "[a-z ]{0,6}").prop_map(|(s, n, x)| Op::Pin(s, n, x)),
        (
            0..2u8,
            prop::collection::vec(any::<usize>(), 0..4),
            any::<bool>()
        )
            .prop_map(|(s, w, sep)| Op::Summary(s, w, sep)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Random appends, some refused, never change an existing record's bytes, and pins never
    /// change; the derived tables always rebuild to what is stored.
    #[test]
    fn appends_never_change_existing_records_or_pins(batches in prop::collection::vec(prop::collection::vec(op(), 1..8), 1..5)) {
        let ledger = Ledger::in_memory().unwrap();
        let mut seen: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut pins: BTreeMap<(String, String), Rid> = BTreeMap::new();
        let mut all: Vec<(Kind, Rid, String)> = Vec::new();
        for ops in batches {
            let mut b = ledger.batch().unwrap();
            for op in ops {
                let pick = |i: usize, k: &[Kind]| -> Option<Rid> {
                    let c: Vec<_> = all.iter().filter(|x| k.contains(&x.0)).collect();
                    (!c.is_empty()).then(|| c[i % c.len()].1)
                };
                let stream = |s: u8| format!("s{s}");
                let rec: Record = match &op {
                    Op::Span(s, t, x) => span(&stream(*s), u64::from(*t), x).into(),
                    Op::Claim(s, w) => claim(&stream(*s), "c", w.iter().filter_map(|i| pick(*i, &[Kind::Span, Kind::Claim])).collect()).into(),
                    Op::Pin(s, n, x) => pin(&stream(*s), &format!("p{n}"), x).into(),
                    Op::Summary(s, w, sep) => {
                        let author = if *sep { Author::Separate } else { Author::SelfAuthored };
                        let claims: Vec<Rid> = w.iter().filter_map(|i| pick(*i, &[Kind::Claim])).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
                        let evicts = w.iter().filter_map(|i| pick(*i, &[Kind::Span])).collect();
                        summary(&stream(*s), b.head(&stream(*s)).unwrap(), author, evicts, claims).into()
                    }
                };
                let kind = rec.kind();
                let st = rec.stream().unwrap().to_string();
                if let Ok(a) = b.append(rec.clone()) {
                    if a.new {
                        seen.insert(a.index, b.bytes_at(a.index).unwrap().unwrap());
                        all.push((kind, a.rid, st));
                        if let Record::Pin(p) = &rec {
                            prop_assert!(pins.insert((p.stream.clone(), p.name.clone()), a.rid).is_none());
                        }
                    }
                }
            }
            b.commit().unwrap();
            let snap = ledger.snapshot().unwrap();
            for (i, bytes) in &seen {
                prop_assert_eq!(&snap.bytes_at(*i).unwrap().unwrap(), bytes);
            }
            for ((s, n), rid) in &pins {
                prop_assert_eq!(snap.pin(s, n).unwrap(), Some(*rid));
            }
        }
        let report = ledger.verify().unwrap();
        prop_assert!(report.ok(), "{:?}", report.discrepancies);
    }
}

#[test]
fn a_streams_spans_iterate_in_turn_order() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    for t in [30, 10, 20] {
        b.append(span("s1", t, &format!("turn {t}"))).unwrap();
    }
    b.append(span("s2", 15, "other stream")).unwrap();
    b.commit().unwrap();
    let turns: Vec<u64> = ledger
        .spans("s1")
        .unwrap()
        .into_iter()
        .map(|(_, s)| s.turn)
        .collect();
    assert_eq!(turns, [10, 20, 30]);
}

/// A ledger opened read-only reads what was committed and refuses to append, naming the way
/// to write.
#[test]
fn a_read_only_ledger_reads_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.redb");
    {
        let ledger = cairn::Ledger::open(&path).unwrap();
        let mut b = ledger.batch().unwrap();
        b.append(crate::util::span("s", 1, "kept")).unwrap();
        b.commit().unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let ro = cairn::Ledger::open_read_only(&path).unwrap();
    assert_eq!(cairn::Read::len(&ro.snapshot().unwrap()).unwrap(), 1);
    assert!(ro.verify().unwrap().ok());
    let e = ro.batch().err().expect("a read-only ledger gives no batch");
    assert!(
        e.to_string().contains("open read-only") && e.to_string().contains("Ledger::open"),
        "{e}"
    );
    drop(ro);
    assert!(std::fs::read(&path).unwrap() == before);
    // A path with no ledger is not created.
    let none = dir.path().join("none.redb");
    assert!(cairn::Ledger::open_read_only(&none).is_err());
    assert!(!none.exists());
}

#[test]
fn summaries_actions_verdicts_and_regrounds_enter_only_through_the_gates() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let said = b
        .append(span("s1", 1, "we are still on libfoo 2.3.1"))
        .unwrap();
    let invented = b
        .append(claim("s1", "libfoo was upgraded to 2.4.0", vec![said.rid]))
        .unwrap()
        .rid;
    let before = b.len().unwrap();
    let ungated = summary("s1", None, Author::SelfAuthored, vec![], vec![invented]);
    let action = Action {
        stream: "s1".into(),
        text: "rm -rf build".into(),
        irreversible: true,
        relies_on: vec![],
    };
    let attempts: Vec<(Record, &str)> = vec![
        (ungated.clone().into(), "Gatekeeper::propose_summary"),
        (action.into(), "Gatekeeper::propose_action"),
        (
            verdict(Rid([1; 32]), true).into(),
            "verdicts are written only by the gates",
        ),
        (
            Reground {
                claim: invented,
                spans: vec![],
                score: 10_000,
            }
            .into(),
            "Gatekeeper::reground",
        ),
    ];
    for (record, way) in attempts {
        let e = b.append(record.clone()).unwrap_err();
        assert!(e.to_string().contains(way), "{e}");
        let e = b.append_bytes(&encode(&record)).unwrap_err();
        assert!(e.to_string().contains("gated by construction"), "{e}");
    }
    assert_eq!(b.len().unwrap(), before, "a refused record writes nothing");
    assert_eq!(b.head("s1").unwrap(), None);
    assert_eq!(b.status(&invented).unwrap(), None, "no verdict, no status");

    // Near miss: the same summary through the gate is appended, with its verdict, and refused;
    // its repair (without the contradicted claim) follows with its own verdict.
    let o = Gatekeeper::default()
        .propose_summary(&mut b, ungated)
        .unwrap();
    assert!(!o.admitted, "{:?}", o.findings);
    assert!(o.repair.is_some());
    assert_eq!(b.len().unwrap(), before + 4);
}

/// Issue 37, row 14: one rule for both stores, checked at append: a stream name holds no
/// control character (PostgreSQL refuses NUL; a terminal obeys ESC and CR).
#[test]
fn a_stream_name_with_a_control_character_is_refused_at_append() {
    let ledger = cairn::Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let span = |stream: &str| cairn::record::Span {
        stream: stream.into(),
        turn: 1,
        role: cairn::record::Role::User,
        tool: None,
        text: "hello".into(),
    };
    for bad in [
        "a\u{0}b",
        "victim\u{1b}[2J",
        "s\rclaims without a raw-span ancestor: 0",
    ] {
        let e = b.append(span(bad)).unwrap_err();
        assert!(e.to_string().contains("control character"), "{e}");
    }
    // Near miss: spaces, punctuation and other scripts are names like any other.
    b.append(span("ops agent: München/1")).unwrap();
    b.commit().unwrap();
}
