//! Criterion micro-benchmarks: encode, hash, append, gate and score.
//! Run with `cargo bench -p cairn-bench --bench micro`; CI runs each once with `-- --test`.

use cairn::gate::Gatekeeper;
use cairn::record::{encode, Kind, Record, Rid};
use cairn::score::{Lexical, Scorer};
use cairn::Ledger;
use cairn_bench::{first_window, Shape, Step, Workload};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn sample(n: usize) -> Vec<Record> {
    Workload::new(3, Shape::default())
        .map(|s| match s {
            Step::Append(r) => r,
            Step::Compaction(s) => Record::Summary(s),
        })
        .take(n)
        .collect()
}

fn benches(c: &mut Criterion) {
    let records = sample(2_000);
    let span = records
        .iter()
        .find(|r| r.kind() == Kind::Span)
        .cloned()
        .expect("a span");
    let bytes = encode(&span);
    c.bench_function("encode a span", |b| b.iter(|| encode(black_box(&span))));
    c.bench_function("decode a span", |b| {
        b.iter(|| cairn::record::decode(black_box(&bytes)))
    });
    c.bench_function("hash a span (rid)", |b| {
        b.iter(|| Rid::of_bytes(black_box(&bytes)))
    });
    c.bench_function(
        "append 1,000 workload records in one batch (in memory)",
        |b| {
            b.iter(|| {
                let ledger = Ledger::in_memory().expect("ledger");
                let mut batch = ledger.batch().expect("batch");
                let gate = Gatekeeper::default();
                for r in records.iter().take(1_000) {
                    cairn_bench::append(&mut batch, &gate, r).expect("append");
                }
                batch.commit().expect("commit");
            })
        },
    );
    let scorer = Lexical;
    let claim = "libfoo was upgraded to 2.4.0 during the refactor";
    let source = "we are still on libfoo 2.3.1, do not bump. The refactor moved the client into src/net/client.rs.";
    c.bench_function("score a claim against a span", |b| {
        b.iter(|| scorer.score(black_box(claim), black_box(source)))
    });

    // One compaction of 50 claims over a 200-span window, gated in a batch that is dropped.
    let (records, proposal) = first_window(5, Shape::gate_window()).expect("a compaction");
    let ledger = Ledger::in_memory().expect("ledger");
    let mut b = ledger.batch().expect("batch");
    for r in records {
        b.append(r).expect("append");
    }
    b.commit().expect("commit");
    let gate = Gatekeeper::default();
    let mut group = c.benchmark_group("gate");
    group.sample_size(10);
    group.bench_function("50 claims over a 200-span window", |bench| {
        bench.iter(|| {
            let mut batch = ledger.batch().expect("batch");
            gate.propose_summary(&mut batch, proposal.clone())
                .expect("gate")
        })
    });
    group.finish();
}

criterion_group!(micro, benches);
criterion_main!(micro);
