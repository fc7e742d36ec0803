//! Which key for the records table: the log index or the rid? Both layouts keep the log
//! (index -> rid) and its inverse (rid -> index), as the ledger must; they differ only in the
//! key of the table that holds the bytes. Run with `cargo bench --bench key_layout [-- N]`.

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use std::time::Instant;

const BY_INDEX: TableDefinition<u64, &[u8]> = TableDefinition::new("records_by_index");
const BY_RID: TableDefinition<[u8; 32], &[u8]> = TableDefinition::new("records_by_rid");
const LOG: TableDefinition<u64, [u8; 32]> = TableDefinition::new("log");
const RIDS: TableDefinition<[u8; 32], u64> = TableDefinition::new("rids");

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    Index,
    Rid,
}

fn record(i: u64, seed: &mut u64) -> Vec<u8> {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let len = 100 + (*seed >> 33) as usize % 900;
    let mut v = format!("span {i} ").into_bytes();
    v.resize(len, b'x');
    v
}

fn run(layout: Layout, n: u64, per_commit: u64) -> (f64, f64, f64, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.redb");
    let db = Database::create(&path).expect("create");
    let mut seed = 42;
    let mut rids = Vec::with_capacity(n as usize);
    let t = Instant::now();
    let mut i = 0;
    while i < n {
        let txn = db.begin_write().expect("write");
        {
            let mut by_index = txn.open_table(BY_INDEX).expect("t");
            let mut by_rid = txn.open_table(BY_RID).expect("t");
            let mut log = txn.open_table(LOG).expect("t");
            let mut inv = txn.open_table(RIDS).expect("t");
            for _ in 0..per_commit.min(n - i) {
                let bytes = record(i, &mut seed);
                let rid = *blake3::hash(&bytes).as_bytes();
                match layout {
                    Layout::Index => by_index.insert(i, bytes.as_slice()).map(|_| ()),
                    Layout::Rid => by_rid.insert(rid, bytes.as_slice()).map(|_| ()),
                }
                .expect("insert");
                log.insert(i, rid).expect("log");
                inv.insert(rid, i).expect("rids");
                rids.push(rid);
                i += 1;
            }
        }
        txn.commit().expect("commit");
    }
    let ingest = t.elapsed().as_secs_f64();

    let read = db.begin_read().expect("read");
    let by_index = read.open_table(BY_INDEX).expect("t");
    let by_rid = read.open_table(BY_RID).expect("t");
    let log = read.open_table(LOG).expect("t");
    let inv = read.open_table(RIDS).expect("t");
    let t = Instant::now();
    let mut total = 0usize;
    for k in 0..100_000u64 {
        let rid = rids[(k.wrapping_mul(2654435761) % n) as usize];
        total += match layout {
            Layout::Index => {
                let idx = inv.get(rid).expect("g").expect("present").value();
                by_index
                    .get(idx)
                    .expect("g")
                    .expect("present")
                    .value()
                    .len()
            }
            Layout::Rid => by_rid.get(rid).expect("g").expect("present").value().len(),
        };
    }
    let get_us = t.elapsed().as_secs_f64() * 1e6 / 100_000.0;
    let t = Instant::now();
    for e in log.iter().expect("iter") {
        let (k, rid) = e.expect("e");
        total += match layout {
            Layout::Index => by_index
                .get(k.value())
                .expect("g")
                .expect("present")
                .value()
                .len(),
            Layout::Rid => by_rid
                .get(rid.value())
                .expect("g")
                .expect("present")
                .value()
                .len(),
        };
    }
    let scan = t.elapsed().as_secs_f64();
    assert!(total > 0 && log.len().expect("len") == n);
    drop((by_index, by_rid, log, inv, read, db));
    let size = std::fs::metadata(&path).expect("size").len();
    (ingest, get_us, scan, size)
}

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    println!("records table key layout, {n} records of 100 to 1000 bytes");
    println!("layout      per-commit  ingest rec/s  get-by-rid us  log scan rec/s  file bytes/rec");
    for per_commit in [1_000, n] {
        for layout in [Layout::Index, Layout::Rid] {
            let (ingest, get_us, scan, size) = run(layout, n, per_commit);
            println!(
                "{:<11} {:>10}  {:>12.0}  {:>13.2}  {:>14.0}  {:>14.0}",
                if layout == Layout::Index {
                    "log index"
                } else {
                    "rid"
                },
                per_commit,
                n as f64 / ingest,
                get_us,
                n as f64 / scan,
                size as f64 / n as f64
            );
        }
    }
}
