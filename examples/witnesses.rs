//! The witness finder of prose compactions (SPEC.md section 8.8) on the labelled set of
//! `tests/data/real/witnesses_*.jsonl` (`WITNESSES.md` there): each item a sentence of a
//! summary, the spans of the real dialogue it summarises, and the span that supports it.
//!
//!     cargo run --release --example witnesses [-- dev|test]
//!
//! Each item's dialogue becomes a stream in a ledger in memory; the finder ranks its spans for
//! the sentence. Printed: precision at 1 (the first witness is the labelled span) and how often
//! the labelled span is among the first three, for the finder and for the recall index's
//! ranking alone (BM25 with the index's term weights), its baseline. `dev` is for tuning; the
//! test half was frozen before the finder was tuned and is read once, at the end.

use cairn::gate::prose::{by_recall, candidates};
use cairn::gate::Gatekeeper;
use cairn::record::{Role, Span};
use cairn::Ledger;
use serde_json::Value;

fn main() {
    let split = std::env::args().nth(1).unwrap_or_else(|| "dev".to_string());
    if split != "dev" && split != "test" {
        eprintln!("witnesses: the split is dev or test, not {split:?}");
        std::process::exit(2);
    }
    let path = format!("tests/data/real/witnesses_{split}.jsonl");
    let text = std::fs::read_to_string(&path).expect("the witness set");
    let gate = Gatekeeper::default();
    let (mut n, mut finder, mut recall) = (0usize, [0usize; 2], [0usize; 2]);
    for line in text.lines() {
        let item: Value = serde_json::from_str(line).expect("a JSON line");
        let answers: Vec<u64> = match item["answers"].as_array() {
            Some(a) => a.iter().filter_map(Value::as_u64).collect(),
            None => item["answer"].as_u64().into_iter().collect(),
        };
        let ledger = Ledger::in_memory().expect("a ledger in memory");
        let mut b = ledger.batch().expect("a batch");
        for s in item["spans"].as_array().into_iter().flatten() {
            let span = Span {
                stream: "d".into(),
                turn: s["turn"].as_u64().unwrap_or(0),
                role: Role::from_name(s["role"].as_str().unwrap_or("user")).unwrap_or(Role::User),
                tool: None,
                text: s["text"].as_str().unwrap_or("").to_string(),
            };
            b.append(span).expect("a span");
        }
        b.commit().expect("commit");
        let snap = ledger.snapshot().expect("a snapshot");
        let sentence = item["sentence"].as_str().unwrap_or("");
        let found = candidates(&snap, "d", &[]).expect("the candidates");
        let turn_of = |i: usize| found[i].turn.map(|(t, _)| t);
        let hit = |order: &[usize], k: usize| {
            order
                .iter()
                .take(k)
                .any(|i| turn_of(*i).is_some_and(|t| answers.contains(&t)))
        };
        let ranked: Vec<usize> = (gate.rank(sentence, &found).expect("ranked").iter())
            .map(|r| r.candidate)
            .collect();
        let baseline: Vec<usize> = by_recall(sentence, &found)
            .iter()
            .map(|(i, _)| *i)
            .collect();
        n += 1;
        for (k, top) in [1, 3].into_iter().enumerate() {
            finder[k] += usize::from(hit(&ranked, top));
            recall[k] += usize::from(hit(&baseline, top));
        }
    }
    let pct = |x: usize| 100.0 * x as f64 / n.max(1) as f64;
    println!("witness finder ({split}): {n} sentences");
    println!(
        "recall index alone   precision@1 {:5.1}%   in top 3 {:5.1}%",
        pct(recall[0]),
        pct(recall[1])
    );
    println!(
        "finder (+ scorer)    precision@1 {:5.1}%   in top 3 {:5.1}%",
        pct(finder[0]),
        pct(finder[1])
    );
}
