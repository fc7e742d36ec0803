//! Gate time per compaction: a summary of 50 claims over a 200-span window, with the default
//! scorer. Prints p50 and p99. Run with `cargo bench --bench gate [-- ITERATIONS]`.

use cairn::gate::{unpinned_items, Gatekeeper};
use cairn::record::{Author, Claim, Origin, Pin, PinItem, Role, Span, Summary};
use cairn::{Ledger, Read};
use common::text;
use std::time::Instant;

#[path = "common/mod.rs"]
mod common;

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(40);
    let ledger = Ledger::in_memory().expect("ledger");
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().expect("batch");
    let mut spans = Vec::new();
    for i in 0..200u64 {
        let (role, text) = text(i);
        let tool = (role == Role::Tool).then(|| "shell".to_string());
        spans.push((
            b.append(Span {
                stream: "s".into(),
                turn: i,
                role,
                tool,
                text: text.clone(),
            })
            .expect("span")
            .rid,
            text,
        ));
    }
    let items = unpinned_items(&b, "s").expect("classify");
    if !items.is_empty() {
        let items = items
            .iter()
            .map(|i| PinItem {
                class: i.class,
                text: i.text.clone(),
                witness: Some(i.span),
            })
            .collect();
        b.append(Pin {
            stream: "s".into(),
            name: "auto".into(),
            items,
        })
        .expect("pin");
    }
    b.commit().expect("commit");

    let mut times = Vec::new();
    let mut admitted = 0;
    for it in 0..iterations {
        let mut b = ledger.batch().expect("batch");
        let mut claims = Vec::new();
        for k in 0..50usize {
            let (rid, text) = &spans[(k * 4 + it) % 200];
            let words: Vec<&str> = text.split_whitespace().take(9).collect();
            let claim = Claim {
                stream: "s".into(),
                text: words.join(" "),
                origin: Origin::Inferred,
                witnesses: vec![*rid],
                actionable: k % 3 == 0,
            };
            claims.push(b.append(claim).expect("claim").rid);
        }
        claims.sort();
        claims.dedup();
        let summary = Summary {
            stream: "s".into(),
            parent: b.head("s").expect("head"),
            author: Author::SelfAuthored,
            budget: 4000,
            covers: spans.iter().map(|s| s.0).collect(),
            evicts: spans.iter().take(150).map(|s| s.0).collect(),
            claims,
            self_score: Some(9000),
            reground: false,
        };
        let t = Instant::now();
        let outcome = gate.propose_summary(&mut b, summary).expect("gate");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        admitted += usize::from(outcome.admitted);
        if it == 0 && !outcome.admitted {
            for f in outcome.findings.iter().take(3) {
                eprintln!("  first compaction: {}: {}", f.gate, f.detail);
            }
        }
        drop(b);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "gate per compaction (50 claims, 200-span window, {} runs, {admitted} admitted): p50 {:.2} ms, p99 {:.2} ms",
        times.len(),
        pct(0.5),
        pct(0.99)
    );
}
