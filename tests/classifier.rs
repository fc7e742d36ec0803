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
