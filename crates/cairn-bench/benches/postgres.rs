//! The ledger on PostgreSQL against the ledger in a redb file, in one run (SPEC.md section 17):
//! ingest, `why`, `recall` and the summary gate on the same workload, then the throughput of
//! 1, 2 and 4 writers on one PostgreSQL ledger, each with its own replica and connections as a
//! `cairn serve` process has, writing to streams of their own.
//!
//!     cargo bench -p cairn-bench --features postgres --bench postgres -- [--quick]
//!
//! The server is $CAIRN_TEST_PG (a superuser's URL), or else the throwaway cluster of
//! `tests/pg-cluster.sh` (Debian's PostgreSQL) on port 55432. The workload is
//! cairn-bench's deterministic agent sessions. No target: the figures are reported.

use cairn::gate::Gatekeeper;
use cairn::record::{Kind, Record, Role, Span};
use cairn::{Ledger, Read};
use cairn_bench::{Shape, Step, Workload};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Records per commit while ingesting, as a writer that commits each turn's records would not
/// (that is the gate's timing): a batch of a few turns.
const BATCH: usize = 50;

/// What `tests/pg-cluster.sh` prints: $CAIRN_TEST_PG, or the throwaway cluster it starts.
fn server() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/pg-cluster.sh");
    let out = Command::new("bash").args([script, "55432"]).output();
    let out = out.expect("bash runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "no PostgreSQL server: {said}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn database(server: &str, name: &str) -> String {
    let mut admin = postgres::Client::connect(server, postgres::NoTls).expect("connect");
    admin
        .execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"), &[])
        .expect("drop");
    admin
        .execute(&format!("CREATE DATABASE {name}"), &[])
        .expect("create");
    let (base, _) = server.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{name}")
}

/// What one backend measured.
#[derive(Default)]
struct Figures {
    ingest_per_s: f64,
    gate_ms: Vec<f64>,
    why_us: f64,
    recall_us: f64,
    open_ms: f64,
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Ingests the workload into `db`, gating each compaction in a batch of its own, then times
/// `why` and `recall`, each from a fresh snapshot as a command or a tool call takes one.
fn measure(db: &Path, steps: &[Step]) -> Figures {
    let mut f = Figures::default();
    let ledger = Ledger::open(db).expect("open");
    let gate = Gatekeeper::default();
    let started = Instant::now();
    let mut records = 0usize;
    let mut batch = ledger.batch().expect("batch");
    let mut in_batch = 0;
    for step in steps {
        match step {
            Step::Append(r) => {
                batch.append(r.clone()).expect("append");
                records += 1;
                in_batch += 1;
                if in_batch == BATCH {
                    batch.commit().expect("commit");
                    batch = ledger.batch().expect("batch");
                    in_batch = 0;
                }
            }
            Step::Compaction(s) => {
                batch.commit().expect("commit");
                in_batch = 0;
                let t = Instant::now();
                let mut b = ledger.batch_for(&[&s.stream]).expect("batch");
                let mut s = s.clone();
                s.parent = b.head(&s.stream).expect("head");
                gate.propose_summary(&mut b, s).expect("gate");
                b.commit().expect("commit");
                f.gate_ms.push(t.elapsed().as_secs_f64() * 1e3);
                records += 1;
                batch = ledger.batch().expect("batch");
            }
        }
    }
    batch.commit().expect("commit");
    f.ingest_per_s = records as f64 / started.elapsed().as_secs_f64();

    let snap = ledger.snapshot().expect("snapshot");
    let claims: Vec<_> = snap
        .of_kind(Kind::Claim)
        .expect("claims")
        .into_iter()
        .take(200)
        .collect();
    drop(snap);
    let t = Instant::now();
    for c in &claims {
        let snap = ledger.snapshot().expect("snapshot");
        cairn::replay::why(&snap, *c).expect("why");
    }
    f.why_us = t.elapsed().as_secs_f64() * 1e6 / claims.len().max(1) as f64;
    let queries = [
        "libfoo version bump",
        "staging port",
        "DROP TABLE production",
        "error stack trace",
        "config path",
    ];
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..40 {
        for q in queries {
            let snap = ledger.snapshot().expect("snapshot");
            cairn::memory::recall(&snap, q, None, 10).expect("recall");
            n += 1;
        }
    }
    f.recall_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    drop(ledger);
    let t = Instant::now();
    let again = Ledger::open_read_only(db).expect("open");
    again.len().expect("len");
    f.open_ms = t.elapsed().as_secs_f64() * 1e3;
    f
}

/// `writers` threads, each with a ledger of its own on `url` (its own replica and connections,
/// as separate `cairn serve` processes have), append batches of 10 spans to a stream of their
/// own for `secs`; returns records appended per second in all.
fn throughput(url: &str, writers: usize, secs: f64) -> (f64, u64) {
    // Every writer opens its ledger first; the clock starts for all at once.
    let ready = std::sync::Arc::new(std::sync::Barrier::new(writers));
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let url = url.to_string();
            let ready = ready.clone();
            std::thread::spawn(move || {
                let ledger = Ledger::open(&url).expect("open");
                let stream = format!("writer-{writers}-{w}");
                let mut turn = 0u64;
                let mut appended = 0u64;
                ready.wait();
                let started = Instant::now();
                let deadline = started + Duration::from_secs_f64(secs);
                while Instant::now() < deadline {
                    let mut b = ledger.batch_for(&[&stream]).expect("batch");
                    for _ in 0..10 {
                        let (role, text) = cairn_bench::turn_text(w as u64 * 1_000_003, turn);
                        let span = Span {
                            stream: stream.clone(),
                            turn,
                            role: if role == Role::ToolCall {
                                Role::Tool
                            } else {
                                role
                            },
                            tool: None,
                            text,
                        };
                        if b.append(span).expect("append").new {
                            appended += 1;
                        }
                        turn += 1;
                    }
                    b.commit().expect("commit");
                }
                (appended, started.elapsed().as_secs_f64())
            })
        })
        .collect();
    let mut total = 0u64;
    let mut longest = 0f64;
    for h in handles {
        let (n, s) = h.join().expect("writer");
        total += n;
        longest = longest.max(s);
    }
    (total as f64 / longest, total)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let server = server();
    let shape = Shape {
        streams: 4,
        compaction_every: 40,
        claims: (20, 40),
    };
    let n = if quick { 1_500 } else { 10_000 };
    let mut steps = Vec::new();
    let mut records = 0;
    for step in Workload::new(17, shape) {
        records += match &step {
            Step::Append(Record::Action(_)) => continue,
            _ => 1,
        };
        steps.push(step);
        if records >= n {
            break;
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("bench.redb");
    let url = database(&server, "cairn_bench");
    println!("cairn on PostgreSQL against a redb file: {records} workload records, batches of {BATCH}, one run");
    let r = measure(&file, &steps);
    let p = measure(Path::new(&url), &steps);
    let (mut rg, mut pg) = (r.gate_ms.clone(), p.gate_ms.clone());
    let rows = [
        ("ingest, records/s", r.ingest_per_s, p.ingest_per_s),
        (
            "gate per compaction, p50 ms",
            pct(&mut rg, 0.5),
            pct(&mut pg, 0.5),
        ),
        (
            "gate per compaction, p99 ms",
            pct(&mut rg, 0.99),
            pct(&mut pg, 0.99),
        ),
        ("why (snapshot + lineage), us", r.why_us, p.why_us),
        (
            "recall, all streams (snapshot + query), us",
            r.recall_us,
            p.recall_us,
        ),
        ("open read-only and read the size, ms", r.open_ms, p.open_ms),
    ];
    println!(
        "{:<44} {:>12} {:>12} {:>9}",
        "", "redb", "PostgreSQL", "pg/redb"
    );
    for (name, a, b) in rows {
        println!("{name:<44} {a:>12.1} {b:>12.1} {:>9.2}", b / a);
    }
    let secs = if quick { 2.0 } else { 8.0 };
    println!(
        "writers on one PostgreSQL ledger, each its own stream, batches of 10 spans, {secs} s:"
    );
    for writers in [1, 2, 4] {
        let url = database(&server, &format!("cairn_bench_w{writers}"));
        let (rate, total) = throughput(&url, writers, secs);
        let ledger = Ledger::open_read_only(&url).expect("open");
        assert!(ledger.len().expect("len") >= total);
        assert!(
            ledger.verify().expect("verify").ok(),
            "verify after {writers} writers"
        );
        println!(
            "  {writers} writer(s): {rate:>8.0} spans/s in all ({total} spans; verify passes)"
        );
    }
}
