//! Hostile input: every limit refuses with an error that names it, and memory stays bounded.

use crate::util::*;
use cairn::record::{Action, Rid};
use cairn::Ledger;

#[test]
fn a_line_over_max_line_bytes_is_refused_without_holding_it() {
    let t = Tmp::new();
    let mut input = br#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"ok"}"#.to_vec();
    input.push(b'\n');
    input.extend_from_slice(br#"{"kind":"span","stream":"s","turn":2,"role":"user","text":""#);
    input.extend(std::iter::repeat_n(
        b'a',
        cairn::ingest::MAX_LINE_BYTES + 10,
    ));
    input.extend_from_slice(b"\"}\n");
    let o = t.cairn(&["ingest", "-"], Some(&input));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 2: the line is") && stderr(&o).contains("max-line-bytes limit"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("line 1: appended span"),
        "the line before it was acknowledged: {}",
        stdout(&o)
    );
    let f = t.file("huge.jsonl", &input);
    let fresh = Tmp::new();
    let o = fresh.cairn(&["ingest", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("max-line-bytes"), "{}", stderr(&o));
    assert!(
        !fresh.db().exists() || fingerprint(&fresh).0 == "0",
        "a file applies whole or not at all"
    );
}

#[test]
fn deep_nesting_and_huge_records_name_their_limits() {
    let t = Tmp::new();
    let deep = format!(
        r#"{{"kind":"span","stream":"s","turn":1,"role":"user","text":"x","name":{}1{}}}"#,
        "[".repeat(40),
        "]".repeat(40)
    );
    let o = t.cairn(&["ingest", "-"], Some(format!("{deep}\n").as_bytes()));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("max-nesting-depth limit of 32"),
        "{}",
        stderr(&o)
    );
    // Near miss: the nesting a record needs is accepted.
    let ok = r#"{"kind":"pin","stream":"s","name":"c","items":[{"class":"prohibition","text":"[[not json]] {braces in text}"}]}"#;
    assert_eq!(
        code(&t.cairn(&["ingest", "-"], Some(format!("{ok}\n").as_bytes()))),
        0
    );

    let big = format!(
        r#"{{"kind":"span","stream":"s","turn":2,"role":"user","text":"{}"}}"#,
        "b".repeat(17 * 1024 * 1024)
    );
    let o = t.cairn(&["ingest", "-"], Some(format!("{big}\n").as_bytes()));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("max-record-bytes"), "{}", stderr(&o));
}

#[test]
fn a_record_with_too_many_links_names_max_links() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    // An action is judged only on a stream the ledger holds.
    b.append(cairn::record::Span {
        stream: "s".into(),
        turn: 0,
        role: cairn::record::Role::User,
        tool: None,
        text: "hello".into(),
    })
    .unwrap();
    let relies_on: Vec<Rid> = (0..=cairn::MAX_LINKS as u32)
        .map(|i| Rid(blake3::hash(&i.to_le_bytes()).into()))
        .collect();
    let e = cairn::gate::Gatekeeper::default()
        .propose_action(
            &mut b,
            Action {
                stream: "s".into(),
                text: "x".into(),
                irreversible: false,
                relies_on,
            },
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("beyond the max-links limit of 65536"),
        "{e}"
    );
}
