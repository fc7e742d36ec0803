//! The decision-relevant classifier on a labelled set: misses lose constraints, false alarms
//! block every compaction, so both are counted and bounded.

use cairn::gate::classify;
use cairn::record::{Rid, Role, Span};
use serde_json::Value;

#[test]
fn classifier_misses_and_false_alarms_on_the_labelled_set() {
    let data = include_str!("data/classifier.jsonl");
    let (mut expected, mut misses, mut alarms, mut spans) = (0, Vec::new(), Vec::new(), 0);
    for line in data.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let span = Span {
            stream: "c".into(),
            turn: 1,
            role: Role::from_name(v["role"].as_str().unwrap()).unwrap(),
            tool: None,
            text: v["text"].as_str().unwrap().into(),
        };
        spans += 1;
        let found: Vec<&str> = classify(Rid([0; 32]), &span)
            .iter()
            .map(|i| i.class.name())
            .collect();
        let want: Vec<&str> = v["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        expected += want.len();
        for w in &want {
            if !found.contains(w) {
                misses.push(format!("{w}: {}", span.text));
            }
        }
        for f in &found {
            if !want.contains(f) {
                alarms.push(format!("{f}: {}", span.text));
            }
        }
    }
    println!(
        "classifier: {spans} spans, {expected} labelled items, {} misses, {} false alarms",
        misses.len(),
        alarms.len()
    );
    for m in &misses {
        println!("  miss  {m}");
    }
    for a in &alarms {
        println!("  alarm {a}");
    }
    assert!(misses.len() <= 2, "misses: {misses:#?}");
    assert!(alarms.len() <= 2, "false alarms: {alarms:#?}");
}

/// Classifier version 2 (derived rules 2): "I don't have / know / remember ..." states a fact,
/// not a rule, and a typographic apostrophe negates as a plain one does.
#[test]
fn facts_with_dont_are_not_prohibitions_and_typographic_apostrophes_count() {
    let user = |text: &str| Span {
        stream: "c".into(),
        turn: 1,
        role: Role::User,
        tool: None,
        text: text.into(),
    };
    let classes = |text: &str| -> Vec<&'static str> {
        classify(Rid([0; 32]), &user(text))
            .iter()
            .map(|i| i.class.name())
            .collect()
    };
    for fact in [
        "I don't have the order ID.",
        "I don\u{2019}t remember the reservation number.",
        "I do not know my reservation id.",
        "If you need anything else, don't hesitate to contact us.",
    ] {
        assert!(!classes(fact).contains(&"prohibition"), "{fact}");
    }
    // Near misses: rules, with either apostrophe.
    for rule in [
        "Don\u{2019}t refund the order without a manager's approval.",
        "Don't run DROP TABLE on production.",
        "I don't want the 5:10 p.m. showing.",
    ] {
        assert!(classes(rule).contains(&"prohibition"), "{rule}");
    }
}
