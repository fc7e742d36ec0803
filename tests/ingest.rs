//! JSON Lines references and the library ingest path.

use cairn::gate::Gatekeeper;
use cairn::ingest::{apply_line, parse_ref, Ref};
use cairn::record::Record;
use cairn::{Ledger, Read};

#[test]
fn references_parse_or_explain() {
    assert_eq!(parse_ref("turn:12"), Ok(Ref::Turn(12)));
    assert_eq!(parse_ref("turn:160..turn:240"), Ok(Ref::Range(160, 240)));
    assert_eq!(parse_ref("prior:0"), Ok(Ref::Prior(0)));
    assert_eq!(parse_ref("ABCDEF01"), Ok(Ref::Hex("abcdef01".into())));
    for bad in [
        "turn:",
        "turn:-1",
        "turn:5..6",
        "turn:9..turn:3",
        "prior:x",
        "abc",
        "zzzzzzzzzz",
        "turn:99999999999999999999999",
    ] {
        let e = parse_ref(bad).unwrap_err().to_string();
        assert!(e.contains(bad), "{e}");
    }
}

fn ingest(ledger: &Ledger, lines: &[&str]) -> Vec<cairn::ingest::LineResult> {
    let mut b = ledger.batch().unwrap();
    let out = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            apply_line(&mut b, &Gatekeeper::default(), i as u64 + 1, l.as_bytes()).unwrap()
        })
        .collect();
    b.commit().unwrap();
    out
}

#[test]
fn prior_names_claims_of_the_head_summary_and_prefixes_resolve() {
    let ledger = Ledger::in_memory().unwrap();
    let out = ingest(
        &ledger,
        &[
            r#"{"kind":"span","stream":"s1","turn":1,"role":"user","text":"I think the staging DB is on port 5433."}"#,
            r#"{"kind":"summary","stream":"s1","author":"self","budget":100,"covers":["turn:1"],"evicts":["turn:1"],"claims":[{"text":"staging DB port is 5433","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}"#,
            r#"{"kind":"summary","stream":"s1","author":"self","budget":50,"claims":["prior:0",{"text":"connect to 5433","origin":"inferred","witnesses":["prior:0"]}]}"#,
        ],
    );
    let first_claim = out[1].claims[0].rid;
    assert_eq!(
        out[2].claims[0].rid, first_claim,
        "prior:0 carries the claim itself"
    );
    assert!(!out[2].claims[0].new);
    let Some(Record::Summary(s)) = ledger.get(&out[2].rid).unwrap() else {
        panic!()
    };
    assert_eq!(
        s.parent,
        Some(out[1].rid),
        "the parent defaults to the head"
    );
    let snap = ledger.snapshot().unwrap();
    assert_eq!(
        snap.facts(&out[2].claims[1].rid).unwrap().unwrap().depth,
        Some(1)
    );
    assert_eq!(
        snap.resolve(&first_claim.to_hex()[..10]).unwrap(),
        first_claim
    );
    let err = snap.resolve("00000000").unwrap_err();
    assert!(err.to_string().contains("no record"), "{err}");
    assert!(snap
        .resolve("0123")
        .unwrap_err()
        .to_string()
        .contains("8 or more"));
}

#[test]
fn a_line_with_a_rid_must_hash_to_it() {
    let ledger = Ledger::in_memory().unwrap();
    let line = r#"{"kind":"span","stream":"s1","turn":1,"role":"user","text":"hi"}"#;
    let rid = ingest(&ledger, &[line])[0].rid.to_hex();
    let other = Ledger::in_memory().unwrap();
    let mut b = other.batch().unwrap();
    let good = line.replace("\"text\"", &format!("\"rid\":\"{rid}\",\"text\""));
    assert!(apply_line(&mut b, &Gatekeeper::default(), 1, good.as_bytes()).is_ok());
    let forged = good
        .replace("\"hi\"", "\"hello\"")
        .replace("\"turn\":1", "\"turn\":2");
    let e = apply_line(&mut b, &Gatekeeper::default(), 2, forged.as_bytes()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("rid"));
}

#[test]
fn a_key_given_twice_is_refused_and_the_same_key_in_two_objects_is_not() {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    let twice =
        r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"benign","text":"evil"}"#;
    let e = apply_line(&mut b, &Gatekeeper::default(), 1, twice.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("the key \"text\" appears twice"), "{e}");
    // Near miss: `text` in the line and in a nested item are different objects' keys.
    let span = r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"never bump libfoo"}"#;
    let claim = r#"{"kind":"claim","stream":"s","text":"libfoo stays","witnesses":["turn:1"]}"#;
    let pin = r#"{"kind":"pin","stream":"s","name":"p","items":[{"class":"prohibition","text":"never bump libfoo","witness":"turn:1"},{"class":"commitment","text":"stay on 2.3.1"}]}"#;
    for (i, line) in [span, claim, pin].iter().enumerate() {
        let r = apply_line(
            &mut b,
            &Gatekeeper::default(),
            i as u64 + 2,
            line.as_bytes(),
        );
        assert!(
            r.is_ok(),
            "{line}: {}",
            r.err().map(|e| e.to_string()).unwrap_or_default()
        );
    }
}
