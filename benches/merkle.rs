//! Merkle log figures at scale: proof sizes, and the time to build and to verify inclusion
//! and consistency proofs on a ledger file of N records (default 1,000,000).
//! Run with `cargo bench --bench merkle [-- N]`.

use cairn::checkpoint::Log;
use cairn::checkpoint::{self as merkle, Scheme};
use cairn::record::{Role, Span};
use cairn::{Ledger, Read};
use std::time::Instant;

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = Ledger::open(dir.path().join("m.redb")).expect("open");
    let t = Instant::now();
    let mut i = 0;
    while i < n {
        let mut b = ledger.batch().expect("batch");
        for _ in 0..100_000.min(n - i) {
            b.append(Span {
                stream: format!("s{}", i % 16),
                turn: i,
                role: Role::Tool,
                tool: None,
                text: format!("output line {i}"),
            })
            .expect("append");
            i += 1;
        }
        b.commit().expect("commit");
    }
    println!("{n} records appended in {:.1} s", t.elapsed().as_secs_f64());
    let log = Log::new(&ledger);
    let t = Instant::now();
    let cp = log.checkpoint().expect("checkpoint");
    println!(
        "root at size {n}: {:.1} us",
        t.elapsed().as_secs_f64() * 1e6
    );

    let snap = ledger.snapshot().expect("snapshot");
    let runs = 1000u64;
    let (mut build, mut check, mut hashes) = (0.0, 0.0, 0usize);
    for k in 0..runs {
        let index = (k * 7919 * 131) % n;
        let rid = snap.rid_at(index).expect("rid").expect("present");
        let t = Instant::now();
        let p = log.prove_inclusion(rid, None).expect("prove");
        build += t.elapsed().as_secs_f64();
        hashes = hashes.max(p.hashes.len());
        let t = Instant::now();
        merkle::verify_inclusion(
            Scheme::Blake3,
            &p.leaf,
            p.index,
            p.size,
            &p.hashes,
            &cp.root,
        )
        .expect("verify");
        check += t.elapsed().as_secs_f64();
    }
    println!(
        "inclusion proof: up to {hashes} hashes ({} bytes); build {:.1} us, verify {:.2} us (mean of {runs})",
        hashes * 32,
        build * 1e6 / runs as f64,
        check * 1e6 / runs as f64
    );
    let (mut build, mut check, mut size) = (0.0, 0.0, 0usize);
    for k in 1..=100u64 {
        let old = (k * 9973) % n + 1;
        let t = Instant::now();
        let p = log.prove_consistency(old, n).expect("prove");
        build += t.elapsed().as_secs_f64();
        size = size.max(p.hashes.len());
        let old_root = log.root_at(old).expect("root");
        let t = Instant::now();
        merkle::verify_consistency(Scheme::Blake3, old, n, &p.hashes, &old_root, &cp.root)
            .expect("verify");
        check += t.elapsed().as_secs_f64();
    }
    println!(
        "consistency proof to size {n}: up to {size} hashes ({} bytes); build {:.1} us, verify {:.2} us (mean of 100)",
        size * 32,
        build * 1e6 / 100.0,
        check * 1e6 / 100.0
    );
    let t = Instant::now();
    log.verify_against(&cp.body(), None).expect("against");
    println!(
        "verify --against (every leaf recomputed from its bytes): {:.2} s",
        t.elapsed().as_secs_f64()
    );
}
