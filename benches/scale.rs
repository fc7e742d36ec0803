//! Per-record ingest cost as the ledger grows: durable batches of 10,000 small spans up to N
//! records (default 10,000,000), printing the cost of the first 100,000 and of the last
//! 100,000. Run with `cargo bench --bench scale [-- N]`; it writes a multi-gigabyte file.

use cairn::record::{Role, Span};
use cairn::Ledger;
use std::time::Instant;

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = Ledger::open(dir.path().join("scale.redb")).expect("open");
    let window = 100_000u64.min(n / 2);
    let (mut first, mut last) = (0.0, 0.0);
    let mut i = 0u64;
    let started = Instant::now();
    while i < n {
        let t = Instant::now();
        let mut b = ledger.batch().expect("batch");
        for _ in 0..10_000.min(n - i) {
            let text = format!(
                "tool output {i}: worker {} finished step {} of job {} in {} ms",
                i % 97,
                i % 13,
                i / 1000,
                i % 1000
            );
            b.append(Span {
                stream: format!("s{}", i % 32),
                turn: i,
                role: Role::Tool,
                tool: None,
                text,
            })
            .expect("append");
            i += 1;
        }
        b.commit().expect("commit");
        let secs = t.elapsed().as_secs_f64();
        if i <= window {
            first += secs;
        }
        if i > n - window {
            last += secs;
        }
        if i.is_multiple_of(1_000_000) {
            eprintln!("{i} records, {:.0} s", started.elapsed().as_secs_f64());
        }
    }
    let size = std::fs::metadata(ledger.path())
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "{n} records in {:.0} s, {} bytes on disk; per-record cost: first {window}: {:.1} us, last {window}: {:.1} us, ratio {:.2}",
        started.elapsed().as_secs_f64(),
        size,
        first * 1e6 / window as f64,
        last * 1e6 / window as f64,
        last / first
    );
}
