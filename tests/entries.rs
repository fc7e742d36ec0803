//! An application's store in the ledger (SPEC.md section 10d): versions appended over the
//! current one, tombstones, history, search by recall's ranking, and nothing in an agent's
//! context or recall.

use crate::util::ledger;
use cairn::gate::Gatekeeper;
use cairn::ingest::{apply_line, export_line};
use cairn::memory::{entries, recall};
use cairn::record::Entry;
use cairn::{ErrorKind, Ledger};

fn ns(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|l| l.to_string()).collect()
}

fn put(ledger: &Ledger, labels: &[&str], key: &str, value: Option<&str>, at: u64) -> Option<Entry> {
    let mut b = ledger.batch().unwrap();
    let text = value.map(|v| v.trim_matches(|c| c == '"').to_string());
    let put = entries::put(
        &mut b,
        &ns(labels),
        key,
        value.map(str::to_string),
        text,
        at,
    )
    .unwrap();
    b.commit().unwrap();
    put.map(|(_, e)| e)
}

#[test]
fn a_put_appends_a_version_over_the_current_one_and_the_history_stays() {
    let ledger = ledger();
    let first = put(
        &ledger,
        &["users", "u1"],
        "prefs",
        Some(r#""dark mode""#),
        1_000,
    )
    .unwrap();
    assert_eq!(
        (first.previous, first.created, first.at),
        (None, 1_000, 1_000)
    );
    let second = put(
        &ledger,
        &["users", "u1"],
        "prefs",
        Some(r#""light mode""#),
        2_000,
    )
    .unwrap();
    assert!(second.previous.is_some());
    assert_eq!(
        second.created, 1_000,
        "a key keeps the time it was first put"
    );
    // The same value again is a new version, not the first one met again.
    let third = put(
        &ledger,
        &["users", "u1"],
        "prefs",
        Some(r#""dark mode""#),
        3_000,
    )
    .unwrap();
    assert_ne!(third.previous, first.previous);
    let snap = ledger.snapshot().unwrap();
    let history = entries::history(&snap, &ns(&["users", "u1"]), "prefs").unwrap();
    let values: Vec<_> = history
        .iter()
        .map(|(_, e)| e.value.clone().unwrap())
        .collect();
    assert_eq!(
        values,
        [r#""dark mode""#, r#""light mode""#, r#""dark mode""#]
    );
    assert!(ledger.verify().unwrap().ok());
}

#[test]
fn a_put_over_a_stale_version_is_refused_and_over_the_current_one_admitted() {
    let ledger = ledger();
    put(&ledger, &["docs"], "a", Some("1"), 1).unwrap();
    let stale = entries::current(&ledger.snapshot().unwrap(), &ns(&["docs"]), "a")
        .unwrap()
        .unwrap();
    put(&ledger, &["docs"], "a", Some("2"), 2).unwrap();
    // A writer that read the first version and puts over it forks nothing: refused.
    let mut b = ledger.batch().unwrap();
    let fork = Entry {
        namespace: ns(&["docs"]),
        key: "a".into(),
        value: Some("3".into()),
        text: None,
        previous: Some(stale.0),
        created: 1,
        at: 3,
    };
    let e = b.append(fork.clone()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Invalid { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("must name the key's current version"),
        "{e}"
    );
    drop(b);
    // The near miss: the same put over the current version.
    let current = entries::current(&ledger.snapshot().unwrap(), &ns(&["docs"]), "a")
        .unwrap()
        .unwrap();
    let mut b = ledger.batch().unwrap();
    b.append(Entry {
        previous: Some(current.0),
        ..fork
    })
    .unwrap();
    b.commit().unwrap();
}

#[test]
fn a_delete_is_a_tombstone_and_a_delete_of_nothing_appends_nothing() {
    let ledger = ledger();
    assert!(put(&ledger, &["docs"], "a", None, 1).is_none());
    assert_eq!(ledger.len().unwrap(), 0);
    put(&ledger, &["docs"], "a", Some(r#""draft""#), 2).unwrap();
    let gone = put(&ledger, &["docs"], "a", None, 3).unwrap();
    assert_eq!((gone.value, gone.text), (None, None));
    assert_eq!(ledger.len().unwrap(), 2);
    let snap = ledger.snapshot().unwrap();
    assert!(entries::list(&snap, &ns(&["docs"])).unwrap().is_empty());
    assert!(entries::namespaces(&snap).unwrap().is_empty());
    assert_eq!(
        entries::history(&snap, &ns(&["docs"]), "a").unwrap().len(),
        2
    );
    drop(snap);
    // Put again after a deletion: the key starts anew.
    let again = put(&ledger, &["docs"], "a", Some(r#""second""#), 4).unwrap();
    assert_eq!(again.created, 4);
}

#[test]
fn search_ranks_current_versions_under_a_prefix_and_an_agents_recall_never_sees_them() {
    let ledger = ledger();
    let mut b = ledger.batch().unwrap();
    let line = r#"{"kind":"span","stream":"agent","turn":0,"role":"user","text":"we prefer dark mode in the editor"}"#;
    apply_line(&mut b, &Gatekeeper::default(), 1, line.as_bytes()).unwrap();
    b.commit().unwrap();
    put(
        &ledger,
        &["mem", "u1"],
        "a",
        Some(r#""dark mode preferred""#),
        1,
    );
    put(&ledger, &["mem", "u2"], "b", Some(r#""dark chocolate""#), 2);
    let snap = ledger.snapshot().unwrap();
    let found = entries::search(&snap, "dark mode", &ns(&["mem"]), 10).unwrap();
    let keys: Vec<&str> = found.iter().map(|(_, e, _)| e.key.as_str()).collect();
    assert_eq!(keys, ["a", "b"]);
    let under_u2 = entries::search(&snap, "dark", &ns(&["mem", "u2"]), 10).unwrap();
    assert_eq!(under_u2.len(), 1);
    let kinds: Vec<_> = (recall(&snap, "dark mode", None, 10).unwrap().hits)
        .iter()
        .map(|h| h.kind)
        .collect();
    assert_eq!(
        kinds,
        [cairn::record::Kind::Span],
        "entries stay out of an agent's recall"
    );
    drop(snap);
    // A replaced text is no longer an answer.
    put(&ledger, &["mem", "u1"], "a", Some(r#""light themes""#), 3);
    let snap = ledger.snapshot().unwrap();
    let found = entries::search(&snap, "mode", &ns(&["mem"]), 10).unwrap();
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn search_finds_every_match_however_many_versions_and_entries_there_are() {
    let ledger = ledger();
    put(&ledger, &["p"], "target", Some(r#""needle""#), 1);
    for i in 0..1_200 {
        put(
            &ledger,
            &["p"],
            "noise",
            Some(&format!(r#""needle in a haystack {i}""#)),
            2 + i,
        );
    }
    for i in 0..1_100 {
        put(
            &ledger,
            &["f"],
            &format!("k{i}"),
            Some(r#""sky""#),
            5_000 + i,
        );
    }
    let snap = ledger.snapshot().unwrap();
    let found = entries::search(&snap, "needle", &ns(&["p"]), 10).unwrap();
    let keys: Vec<&str> = found.iter().map(|(_, e, _)| e.key.as_str()).collect();
    assert_eq!(
        keys,
        ["target", "noise"],
        "the short text ranks first, each key once"
    );
    assert_eq!(
        entries::search(&snap, "sky", &ns(&["f"]), usize::MAX)
            .unwrap()
            .len(),
        1_100
    );
}

#[test]
fn an_exported_entry_ingests_back_with_the_same_rid() {
    let ledger = ledger();
    put(&ledger, &["a"], "k", Some("1"), 1).unwrap();
    put(&ledger, &["a"], "k", Some("2"), 2).unwrap();
    let mut lines = Vec::new();
    ledger
        .snapshot()
        .unwrap()
        .for_each(|i, rid, r| {
            lines.push(export_line(i, rid, &r).to_string());
            Ok(())
        })
        .unwrap();
    let copy = crate::util::ledger();
    let mut b = copy.batch().unwrap();
    for (i, line) in lines.iter().enumerate() {
        let r = apply_line(
            &mut b,
            &Gatekeeper::default(),
            i as u64 + 1,
            line.as_bytes(),
        )
        .unwrap()
        .unwrap();
        assert!(line.contains(&r.rid.to_hex()));
    }
    b.commit().unwrap();
    assert!(copy.verify().unwrap().ok());
}
