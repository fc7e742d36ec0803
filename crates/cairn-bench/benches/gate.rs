//! Gate time per compaction: a summary of 50 claims over a 200-span window of the workload
//! (spans of 100 B to 4 KB), with the default scorer. Prints p50 and p99. Then the gate's cost
//! as it grows: one summary of 50, 500, 1,000 and 5,000 claims over 30,000 covered spans.
//! Run with `cargo bench -p cairn-bench --bench gate [-- COMPACTIONS] [--quick]` (quick: 20 compactions and
//! the growth up to 1,000 claims).

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
use cairn::record::{Author, Claim, Origin, Rid, Span, Summary};
use cairn::Ledger;
use cairn_bench::{first_window, Shape};
use std::time::Instant;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    let gate = Gatekeeper::default();
    let mut times = Vec::new();
    let mut admitted = 0;
    for run in 0..runs as u64 {
        // A stream of one 200-span window, its pinned reference, and a 50-claim compaction.
        let (records, s) = first_window(100 + run, Shape::gate_window()).expect("a compaction");
        let ledger = Ledger::in_memory().expect("ledger");
        let mut b = ledger.batch().expect("batch");
        for r in records {
            b.append(r).expect("append");
        }
        let items = unpinned_items(&b, &s.stream).expect("classify");
        if !items.is_empty() {
            b.append(pin_of(&s.stream, "auto", &items)).expect("pin");
        }
        b.commit().expect("commit");
        let mut b = ledger.batch().expect("batch");
        let t = Instant::now();
        let o = gate.propose_summary(&mut b, s).expect("gate");
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        admitted += usize::from(o.admitted);
        if run == 0 && std::env::var_os("CAIRN_BENCH_VERBOSE").is_some() {
            let mut gates: Vec<&str> = o.findings.iter().map(|f| f.gate.name()).collect();
            gates.dedup();
            eprintln!("first compaction's findings: {gates:?}");
            for f in o.findings.iter().filter(|f| f.gate.refuses()).take(3) {
                eprintln!("  {}: {}", f.gate, f.detail);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "gate per compaction (50 claims, a 200-span window of 100 B to 4 KB spans, {} runs, {admitted} admitted): p50 {:.2} ms, p99 {:.2} ms",
        times.len(),
        pct(0.5),
        pct(0.99)
    );
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[50, 500, 1_000]
    } else {
        &[50, 500, 1_000, 5_000]
    };
    for &claims in sizes {
        growth(
            claims,
            std::env::var("GROWTH_SPANS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(30_000),
        );
    }
}

/// One summary of `claims` claims over `spans` covered spans of the workload's turns, evicting
/// the older half: each claim is the first words of the span it cites, and the stream's
/// classifier items are pinned first. Prints the time the gate takes.
fn growth(claims: usize, spans: usize) {
    let ledger = Ledger::in_memory().expect("ledger");
    let mut b = ledger.batch().expect("batch");
    let mut covered: Vec<(Rid, String)> = Vec::with_capacity(spans);
    for turn in 0..spans as u64 {
        let (role, text) = cairn_bench::turn_text(9, turn);
        let tool = (role == cairn::record::Role::Tool).then(|| "shell".to_string());
        let span = Span {
            stream: "g".into(),
            turn,
            role,
            tool,
            text: text.clone(),
        };
        covered.push((b.append(span).expect("span").rid, text));
    }
    let items = unpinned_items(&b, "g").expect("classify");
    if !items.is_empty() {
        b.append(pin_of("g", "auto", &items)).expect("pin");
    }
    let mut cited = Vec::with_capacity(claims);
    for i in 0..claims {
        let (span, text) = &covered[i * spans / claims];
        let words: Vec<&str> = text.split_whitespace().take(12).collect();
        let claim = Claim {
            stream: "g".into(),
            text: words.join(" "),
            origin: Origin::Inferred,
            witnesses: vec![*span],
            actionable: i % 3 == 0,
        };
        cited.push(b.append(claim).expect("claim").rid);
    }
    cited.sort();
    cited.dedup();
    b.commit().expect("commit");
    let summary = Summary {
        stream: "g".into(),
        parent: None,
        author: Author::SelfAuthored,
        budget: 100_000,
        covers: covered.iter().map(|c| c.0).collect(),
        evicts: covered[..spans / 2].iter().map(|c| c.0).collect(),
        claims: cited.clone(),
        self_score: None,
        reground: false,
    };
    let mut b = ledger.batch().expect("batch");
    let t = Instant::now();
    let o = Gatekeeper::default()
        .propose_summary(&mut b, summary)
        .expect("gate");
    println!(
        "gate growth: {} claims over {spans} covered spans ({} evicted): {:.2} s, {} findings, admitted {}",
        cited.len(),
        spans / 2,
        t.elapsed().as_secs_f64(),
        o.findings.len(),
        o.admitted
    );
}
