//! Durable ingest through the library: spans appended in one transaction, and in
//! transactions of 1,000 records. Prints records per second and record sizes.
//! Run with `cargo bench --bench ingest [-- N]`.

use cairn::record::{encode, Claim, Origin, Record, Role, Span};
use cairn::{Ledger, Read};
use std::time::Instant;

fn span(i: u64, seed: &mut u64) -> Span {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let len = 100 + (*seed >> 33) as usize % 3_900;
    let mut text = format!(
        "turn {i}: tool output from src/net/client.rs line {} ",
        i % 977
    );
    while text.len() < len {
        text.push_str("retrying connection to staging-db port 5432 ");
    }
    text.truncate(len);
    Span {
        stream: format!("s{}", i % 4),
        turn: i,
        role: [Role::User, Role::Assistant, Role::Tool][(i % 3) as usize],
        tool: (i % 3 == 2).then(|| "shell".to_string()),
        text,
    }
}

fn ingest(n: u64, per_commit: u64) -> (f64, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = Ledger::open(dir.path().join("bench.redb")).expect("open");
    let mut seed = 7;
    let t = Instant::now();
    let mut i = 0;
    while i < n {
        let mut batch = ledger.batch().expect("batch");
        for _ in 0..per_commit.min(n - i) {
            batch.append(span(i, &mut seed)).expect("append");
            i += 1;
        }
        batch.commit().expect("commit");
    }
    let secs = t.elapsed().as_secs_f64();
    // At least one record a span; a span the classifier finds items in brings its
    // classification record (SPEC.md 4.3).
    assert!(ledger.snapshot().expect("snap").len().expect("len") >= n);
    let size = std::fs::metadata(ledger.path()).expect("size").len();
    (secs, size)
}

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let mut seed = 7;
    let small = Record::Span(Span {
        text: "we are still on libfoo 2.3.1, do not bump.".into(),
        ..span(212, &mut seed)
    });
    let claim = Record::Claim(Claim {
        stream: "s0".into(),
        text: "libfoo stays pinned at 2.3.1".into(),
        origin: Origin::UserSaid,
        witnesses: vec![cairn::record::Rid([1; 32])],
        actionable: true,
    });
    println!(
        "record sizes: span with 42-byte text {} B; claim with 28-byte text and one witness {} B",
        encode(&small).len(),
        encode(&claim).len()
    );
    println!("durable ingest of {n} spans (100 B to 4 KB of text, mean about 2 KB)");
    for per_commit in [n, 1_000] {
        let (secs, size) = ingest(n, per_commit);
        println!(
            "  {:>7} per commit: {:>8.0} spans/s ({:.2} s), {:.0} file bytes per span",
            per_commit,
            n as f64 / secs,
            secs,
            size as f64 / n as f64
        );
    }
}
