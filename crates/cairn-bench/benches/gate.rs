//! Gate time per compaction: a summary of 50 claims over a 200-span window of the workload
//! (spans of 100 B to 4 KB), with the default scorer. Prints p50 and p99.
//! Run with `cargo bench --bench gate [-- COMPACTIONS]`.

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
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
}
