//! JSON Lines references and the library ingest path.

use crate::util::ledger;
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
    let ledger = ledger();
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
    let ledger = ledger();
    let line = r#"{"kind":"span","stream":"s1","turn":1,"role":"user","text":"hi"}"#;
    let rid = ingest(&ledger, &[line])[0].rid.to_hex();
    let other = crate::util::ledger();
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
    let ledger = ledger();
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

/// Each field at fault is named by its full path, with a sentence saying what it must hold
/// (issue 24, point 4: serde derive with `serde_path_to_error`), and a near miss of each is
/// admitted.
#[test]
fn a_bad_field_is_named_by_its_path_and_told_what_it_must_hold() {
    let ledger = ledger();
    let mut b = ledger.batch().unwrap();
    let gate = Gatekeeper::default();
    let span =
        r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"we stay on libfoo 2.3.1"}"#;
    apply_line(&mut b, &gate, 1, span.as_bytes()).unwrap();
    let summary = |claims: &str| {
        format!(
            r#"{{"kind":"summary","stream":"s","author":"self","budget":10,"covers":["turn:1"],"claims":{claims}}}"#
        )
    };
    let cases: Vec<(String, &str, &str)> = vec![
        (
            summary(r#"[{"text":"a","origin":"user-said","witnesses":["turn:1"]},{"text":"b","witnesses":["turn:7"]}]"#),
            "claims[1].witnesses[0]",
            "turn:7 names no span in stream s; append that span first",
        ),
        (
            summary(r#"[{"text":"a","colour":"red"}]"#),
            "claims[0].colour",
            "unknown field; the fields allowed here are text, origin, witnesses, actionable",
        ),
        (
            summary(r#"[{"text":"a","actionable":"yes"}]"#),
            "claims[0].actionable",
            "expected true or false, found a string",
        ),
        (summary("[7]"), "claims[0]", "expected a claim object or a reference, found a number"),
        (
            summary(r#"[{"origin":"user-said"}]"#),
            "claims[0].text",
            "missing; give a string",
        ),
        (
            r#"{"kind":"span","stream":"s","turn":2,"role":"wizard","text":"x"}"#.into(),
            "role",
            "unknown value \"wizard\"; use one of: user assistant tool system tool-call",
        ),
        (
            r#"{"kind":"span","stream":"s","turn":-2,"role":"user","text":"x"}"#.into(),
            "turn",
            "expected a non-negative integer, found a number",
        ),
        (
            r#"{"kind":"span","stream":"s","turn":2,"role":"user","text":"x","source":"log.jsonl"}"#.into(),
            "source",
            "expected an object {log, message?, line?, timestamp?}, found a string",
        ),
        (
            r#"{"kind":"span","stream":"s","turn":2,"role":"user","text":"x","source":{"log":"a","line":"9"}}"#.into(),
            "source.line",
            "expected a non-negative integer, found a string",
        ),
        (
            r#"{"kind":"summary","stream":"s","author":"self","budget":1,"claims":[],"self_score":1.5}"#.into(),
            "self_score",
            "expected a number from 0 to 1, found a number",
        ),
        (
            r#"{"kind":"pin","stream":"s","name":"p","items":[{"class":"prohibition","text":"x","witness":5}]}"#.into(),
            "items[0].witness",
            "expected a reference string, found a number",
        ),
        (
            r#"{"kind":"span","stream":"s","turn":2,"role":"user","text":"x","colour":"red"}"#.into(),
            "colour",
            "unknown field; the fields allowed here are kind, stream, turn, role, name, text, source, rid, index",
        ),
    ];
    for (line, field, message) in &cases {
        let e = apply_line(&mut b, &gate, 2, line.as_bytes()).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(*field), "{line}: {e}");
        assert_eq!(e.message, *message, "{line}");
    }
    // Near misses: the same lines, each with the field as it must be.
    let good = [
        summary(r#"[{"text":"libfoo stays at 2.3.1","origin":"user-said","witnesses":["turn:1"],"actionable":true}]"#),
        r#"{"kind":"span","stream":"s","turn":2,"role":"tool-call","name":"sh","text":"x","source":{"log":"a","line":9}}"#.into(),
        r#"{"kind":"pin","stream":"s","name":"p","items":[{"class":"prohibition","text":"never bump libfoo","witness":"turn:1"}]}"#.into(),
    ];
    for (i, line) in good.iter().enumerate() {
        let r = apply_line(&mut b, &gate, 3 + i as u64, line.as_bytes());
        assert!(r.is_ok(), "{line}: {r:?}");
    }
}
