//! cairn against SQLite on the same workload, in one run, on one machine.
//!
//!     cargo bench -p cairn-bench --bench compare -- [--quick] [--json]
//!
//! SQLite is set up as a careful user would: rusqlite with the bundled library, WAL,
//! `synchronous=FULL` (redb commits durably too), foreign keys on, prepared statements,
//! indexes on every lookup, and a recursive CTE for ancestry, with its query plan checked.
//! With `--json` the last line is one JSON object of the figures.

use cairn::gate::Gatekeeper;
use cairn::record::{encode, Author, Kind, Record, Rid, Summary};
use cairn::{Ledger, Read};
use cairn_bench::{peak_rss, reset_peak, Shape, Step, Workload};
use rusqlite::{params, Connection};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

struct Args {
    quick: bool,
    json: bool,
}

/// The workload's distinct records but its summaries: a repeated record would be stored once
/// by both, and a summary enters cairn only through the gates, whose cost the gate rows below
/// measure on their own, so the ingest rows compare storage with storage.
fn records(seed: u64, shape: Shape, n: usize) -> Vec<Record> {
    let mut out = Vec::with_capacity(n);
    let mut seen = std::collections::HashSet::new();
    for step in Workload::new(seed, shape) {
        let Step::Append(r) = step else {
            continue;
        };
        if seen.insert(Rid::of_bytes(&encode(&r))) {
            out.push(r);
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

// ---------------------------------------------------------------- SQLite, the careful way

const SCHEMA: &str = "
CREATE TABLE records(idx INTEGER PRIMARY KEY, rid BLOB NOT NULL UNIQUE, kind INTEGER NOT NULL, stream TEXT, bytes BLOB NOT NULL);
CREATE TABLE links(src BLOB NOT NULL REFERENCES records(rid), dst BLOB NOT NULL REFERENCES records(rid), role INTEGER NOT NULL);
CREATE INDEX links_src ON links(src, role, dst);
CREATE INDEX links_dst ON links(dst);
CREATE TABLE turns(stream TEXT NOT NULL, turn INTEGER NOT NULL, rid BLOB NOT NULL REFERENCES records(rid), PRIMARY KEY(stream, turn)) WITHOUT ROWID;
CREATE TABLE pins(stream TEXT NOT NULL, name TEXT NOT NULL, rid BLOB NOT NULL REFERENCES records(rid), PRIMARY KEY(stream, name)) WITHOUT ROWID;
CREATE TABLE summaries(rid BLOB PRIMARY KEY REFERENCES records(rid), stream TEXT NOT NULL, parent BLOB REFERENCES records(rid), author INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX summaries_parent ON summaries(parent);
CREATE INDEX records_kind ON records(kind);
";

/// Link roles as stored in SQLite: 0 is a claim's witness.
fn role_code(r: cairn::record::LinkRole) -> i64 {
    use cairn::record::LinkRole::*;
    match r {
        Witness => 0,
        Parent => 1,
        Covers => 2,
        Evicts => 3,
        SummaryClaim => 4,
        PinWitness => 5,
        Claim => 6,
        JudgedSpan => 7,
        Subject => 8,
        ReliesOn => 9,
        RegroundSpan => 10,
        Checked => 11,
        ReceiptSpan => 12,
        RulingSpan => 13,
        RetiredPin => 14,
        RetirementWitness => 15,
        Classified => 16,
        Placed => 17,
        Previous => 18,
        Repairs => 19,
    }
}

/// SQLite's side of the recall index: FTS5 over the same texts (spans and claims), stemmed
/// as cairn stems (Porter over unicode61), contentless as cairn's index is (the text stays in
/// the record), with the stream as a column so that a query can keep to one stream.
const FTS5: &str =
    "CREATE VIRTUAL TABLE texts USING fts5(stream, text, content='', tokenize='porter unicode61');";

struct Sqlite {
    conn: Connection,
    next: std::cell::Cell<i64>,
    fts: bool,
}

impl Sqlite {
    /// With `fts`, SQLite also keeps an FTS5 index of the texts, written in the same
    /// transactions as the rows.
    fn open_with(path: &Path, fts: bool) -> Sqlite {
        let conn = Connection::open(path).expect("sqlite open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .expect("wal");
        conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .expect("pragmas");
        let sync: i64 = conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .expect("sync");
        let fk: i64 = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .expect("fk");
        assert_eq!(
            (mode.as_str(), sync, fk),
            ("wal", 2, 1),
            "SQLite must run in WAL with synchronous=FULL"
        );
        conn.execute_batch(SCHEMA).expect("schema");
        if fts {
            conn.execute_batch(FTS5).expect("fts5");
        }
        Sqlite {
            conn,
            next: std::cell::Cell::new(0),
            fts,
        }
    }

    fn append(&self, tx: &rusqlite::Transaction, r: &Record) {
        let bytes = encode(r);
        let rid = Rid::of_bytes(&bytes).0;
        let mut ins = tx.prepare_cached("INSERT OR IGNORE INTO records(idx, rid, kind, stream, bytes) VALUES (?1, ?2, ?3, ?4, ?5)").expect("prepare");
        if ins
            .execute(params![
                self.next.get(),
                &rid[..],
                r.kind() as i64,
                r.stream(),
                bytes
            ])
            .expect("insert")
            == 0
        {
            return;
        }
        let idx = self.next.get();
        self.next.set(idx + 1);
        if self.fts {
            let text = match r {
                Record::Span(s) => Some((&s.stream, &s.text)),
                Record::Claim(c) => Some((&c.stream, &c.text)),
                _ => None,
            };
            if let Some((stream, text)) = text {
                tx.prepare_cached("INSERT INTO texts(rowid, stream, text) VALUES (?1, ?2, ?3)")
                    .expect("prepare")
                    .execute(params![idx, stream, text])
                    .expect("fts5 row");
            }
        }
        let mut link = tx
            .prepare_cached("INSERT INTO links(src, dst, role) VALUES (?1, ?2, ?3)")
            .expect("prepare");
        for (role, target) in r.links() {
            link.execute(params![&rid[..], &target.0[..], role_code(role)])
                .expect("link");
        }
        match r {
            Record::Span(s) => {
                tx.prepare_cached("INSERT INTO turns(stream, turn, rid) VALUES (?1, ?2, ?3)")
                    .expect("prepare")
                    .execute(params![s.stream, s.turn as i64, &rid[..]])
                    .expect("turn");
            }
            Record::Pin(p) => {
                tx.prepare_cached("INSERT INTO pins(stream, name, rid) VALUES (?1, ?2, ?3)")
                    .expect("prepare")
                    .execute(params![p.stream, p.name, &rid[..]])
                    .expect("pin");
            }
            Record::Summary(s) => {
                tx.prepare_cached(
                    "INSERT INTO summaries(rid, stream, parent, author) VALUES (?1, ?2, ?3, ?4)",
                )
                .expect("prepare")
                .execute(params![
                    &rid[..],
                    s.stream,
                    s.parent.map(|p| p.0.to_vec()),
                    i64::from(s.author == Author::Separate)
                ])
                .expect("summary");
            }
            _ => {}
        }
    }

    fn count(&self) -> i64 {
        self.conn
            .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
            .expect("count")
    }
}

const UNANCHORED_SQL: &str = "
WITH RECURSIVE reach(claim, node) AS (
  SELECT r.rid, l.dst FROM records r JOIN links l ON l.src = r.rid AND l.role = 0 WHERE r.kind = 2
  UNION
  SELECT reach.claim, l.dst FROM reach JOIN links l ON l.src = reach.node AND l.role = 0
)
SELECT count(*) FROM records c WHERE c.kind = 2 AND NOT EXISTS (
  SELECT 1 FROM reach JOIN records s ON s.rid = reach.node AND s.kind = 1 WHERE reach.claim = c.rid)";

// Depth counts re-summarisations since the last grounding (SPEC.md 4.3, rules version 2): a
// first compaction has depth 0, as a separate pass does.
const DEEP_SQL: &str = "
WITH RECURSIVE chain(rid, depth) AS (
  SELECT rid, 0 FROM summaries WHERE parent IS NULL
  UNION ALL
  SELECT s.rid, CASE WHEN s.author = 1 THEN 0 ELSE chain.depth + 1 END FROM summaries s JOIN chain ON s.parent = chain.rid
)
SELECT count(*) FROM chain WHERE depth > 2";

const WHY_SQL: &str = "
WITH RECURSIVE tree(node, depth) AS (
  SELECT ?1, 0
  UNION
  SELECT l.dst, tree.depth + 1 FROM tree JOIN links l ON l.src = tree.node AND l.role = 0
)
SELECT r.kind, r.bytes, tree.depth FROM tree JOIN records r ON r.rid = tree.node";

fn check_plan(conn: &Connection, sql: &str, must: &[&str]) -> Vec<String> {
    let mut stmt = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("plan");
    let zero = [0u8; 32];
    let detail = |r: &rusqlite::Row| r.get::<_, String>(3);
    let lines: Vec<String> = if sql.contains("?1") {
        stmt.query_map(params![&zero[..]], detail)
            .expect("plan rows")
            .filter_map(|r| r.ok())
            .collect()
    } else {
        stmt.query_map([], detail)
            .expect("plan rows")
            .filter_map(|r| r.ok())
            .collect()
    };
    for m in must {
        assert!(
            lines.iter().any(|l| l.contains(m)),
            "query plan lacks {m:?}: {lines:?}"
        );
    }
    lines
}

// ---------------------------------------------------------------- helpers

fn per_sec(n: usize, secs: f64) -> f64 {
    n as f64 / secs.max(1e-9)
}

fn file_bytes(paths: &[&Path]) -> u64 {
    paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

struct Row {
    name: String,
    cairn: String,
    sqlite: String,
    ratio: String,
}

fn row(name: &str, cairn: String, sqlite: String, ratio: Option<f64>) -> Row {
    Row {
        name: name.to_string(),
        cairn,
        sqlite,
        ratio: ratio
            .map(|r| format!("{r:.2}x"))
            .unwrap_or_else(|| "-".into()),
    }
}

fn ingest_cairn(path: &Path, recs: &[Record], per_commit: usize) -> f64 {
    let ledger = Ledger::open(path).expect("open");
    let gate = cairn_bench::compared_gate();
    let t = Instant::now();
    for chunk in recs.chunks(per_commit) {
        let mut b = ledger.batch().expect("batch");
        for r in chunk {
            cairn_bench::append(&mut b, &gate, r).expect("append");
        }
        b.commit().expect("commit");
    }
    let secs = t.elapsed().as_secs_f64();
    let verdicts = recs.iter().filter(|r| r.kind() == Kind::Summary).count();
    // A span the classifier finds items in brings its classification record (SPEC.md 4.3).
    let classified = (recs.iter())
        .filter(
            |r| matches!(r, Record::Span(s) if !cairn::gate::classify(Rid([0; 32]), s).is_empty()),
        )
        .count();
    assert_eq!(
        ledger.len().expect("len"),
        (recs.len() + verdicts + classified) as u64,
        "cairn holds every record, a verdict for each summary and each span's classification"
    );
    secs
}

fn ingest_sqlite(path: &Path, recs: &[Record], per_commit: usize) -> (f64, Sqlite) {
    ingest_sqlite_with(path, recs, per_commit, false)
}

fn ingest_sqlite_with(path: &Path, recs: &[Record], per_commit: usize, fts: bool) -> (f64, Sqlite) {
    let db = Sqlite::open_with(path, fts);
    let t = Instant::now();
    for chunk in recs.chunks(per_commit) {
        let tx = db.conn.unchecked_transaction().expect("tx");
        for r in chunk {
            db.append(&tx, r);
        }
        tx.commit().expect("commit");
    }
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(db.count(), recs.len() as i64, "SQLite holds every record");
    (secs, db)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let args = Args {
        quick: argv.iter().any(|a| a == "--quick"),
        json: argv.iter().any(|a| a == "--json"),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (n_single, n_batch, n_claims) = if args.quick {
        (200, 20_000, 20_000)
    } else {
        (2_000, 200_000, 1_000_000)
    };
    let mut rows = Vec::new();
    let mut out = serde_json::Map::new();
    out.insert(
        "mode".into(),
        json!(if args.quick { "quick" } else { "full" }),
    );

    // ------------------------------------------------------------ durable ingest
    let recs = records(1, Shape::default(), n_batch);
    let mean_bytes = recs.iter().map(|r| encode(r).len()).sum::<usize>() / recs.len();
    for (label, per_commit, n) in [
        ("1 record per commit", 1usize, n_single),
        ("1,000 per commit", 1_000, n_batch),
        ("all in one transaction", usize::MAX, n_batch),
    ] {
        let slice = &recs[..n];
        reset_peak();
        let c = ingest_cairn(
            &dir.path().join(format!("c{per_commit}.redb")),
            slice,
            per_commit.min(n),
        );
        let c_rss = peak_rss();
        reset_peak();
        let (s, _) = ingest_sqlite(
            &dir.path().join(format!("s{per_commit}.sqlite")),
            slice,
            per_commit.min(n),
        );
        let s_rss = peak_rss();
        let (cr, sr) = (per_sec(n, c), per_sec(n, s));
        rows.push(row(
            &format!("durable ingest, {label} ({n} records), rec/s"),
            format!("{cr:.0}"),
            format!("{sr:.0}"),
            Some(cr / sr),
        ));
        if per_commit == 1_000 {
            out.insert("ingest_vs_sqlite".into(), json!(cr / sr));
            out.insert(
                "ingest_rss".into(),
                json!({"cairn": c_rss, "sqlite": s_rss}),
            );
            // The same work on SQLite's side: rows, links and an FTS5 index of the texts.
            let (f, _) = ingest_sqlite_with(
                &dir.path().join("f1000.sqlite"),
                slice,
                per_commit.min(n),
                true,
            );
            let fr = per_sec(n, f);
            rows.push(row(
                &format!("durable ingest with a text index (FTS5), {label} ({n} records), rec/s"),
                format!("{cr:.0}"),
                format!("{fr:.0}"),
                Some(cr / fr),
            ));
            out.insert("ingest_vs_sqlite_fts5".into(), json!(cr / fr));
        }
        if per_commit == usize::MAX {
            out.insert("ingest_one_txn_vs_sqlite".into(), json!(cr / sr));
        }
    }

    // ------------------------------------------------------------ bytes on disk, verify
    let cpath = dir.path().join("c1000.redb");
    let spath = dir.path().join("s1000.sqlite");
    let fpath = dir.path().join("f1000.sqlite");
    for p in [&spath, &fpath] {
        let db = Connection::open(p).expect("open");
        db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("checkpoint");
    }
    let c_disk = file_bytes(&[&cpath]) as f64 / n_batch as f64;
    let s_disk = file_bytes(&[&spath, &spath.with_extension("sqlite-wal")]) as f64 / n_batch as f64;
    let f_disk = file_bytes(&[&fpath, &fpath.with_extension("sqlite-wal")]) as f64 / n_batch as f64;
    rows.push(row(
        &format!("bytes on disk per record (mean record {mean_bytes} B)"),
        format!("{c_disk:.0}"),
        format!("{s_disk:.0}"),
        Some(s_disk / c_disk),
    ));
    rows.push(row(
        "bytes on disk per record, text index included (SQLite: FTS5)",
        format!("{c_disk:.0}"),
        format!("{f_disk:.0}"),
        Some(f_disk / c_disk),
    ));
    out.insert("bytes_per_record_vs_sqlite".into(), json!(c_disk / f_disk));
    let ledger = Ledger::open(&cpath).expect("open");
    let t = Instant::now();
    let report = ledger.verify().expect("verify");
    let cv = per_sec(n_batch, t.elapsed().as_secs_f64());
    assert!(report.ok(), "{:?}", report.discrepancies.first());
    // SQLite's check of the same rows, text index included: its integrity check (FTS5's own
    // among them), the foreign keys, and every record re-read, hashed and decoded.
    let sconn = Connection::open(&fpath).expect("open");
    let t = Instant::now();
    let ok: String = sconn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity");
    sconn
        .execute("INSERT INTO texts(texts) VALUES('integrity-check')", [])
        .expect("fts5 integrity");
    let fk: i64 = sconn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .expect("fk check");
    let mut checked = 0usize;
    {
        let mut stmt = sconn
            .prepare("SELECT rid, bytes FROM records ORDER BY idx")
            .expect("prepare");
        let mut rows_ = stmt.query([]).expect("query");
        while let Some(r) = rows_.next().expect("row") {
            let rid: Vec<u8> = r.get(0).expect("rid");
            let bytes: Vec<u8> = r.get(1).expect("bytes");
            assert_eq!(Rid::of_bytes(&bytes).0.as_slice(), rid.as_slice());
            cairn::record::decode(&bytes).expect("decode");
            checked += 1;
        }
    }
    let sv = per_sec(checked, t.elapsed().as_secs_f64());
    assert_eq!((ok.as_str(), fk, checked), ("ok", 0, n_batch));
    rows.push(row(
        "verify (rids, decoding, links; SQLite with FTS5), rec/s",
        format!("{cv:.0}"),
        format!("{sv:.0}"),
        Some(cv / sv),
    ));
    out.insert("verify_vs_sqlite".into(), json!(cv / sv));
    drop(ledger);

    // ------------------------------------------------------------ sweeps over many claims
    let sweep_shape = Shape {
        streams: 8,
        compaction_every: 10,
        claims: (40, 60),
    };
    let mut sweep_recs = Vec::new();
    let mut claims = 0usize;
    let mut seen = std::collections::HashSet::new();
    for step in Workload::new(7, sweep_shape) {
        let r = match step {
            Step::Append(r) => r,
            Step::Compaction(s) => Record::Summary(s),
        };
        if !seen.insert(Rid::of_bytes(&encode(&r))) {
            continue;
        }
        claims += usize::from(r.kind() == Kind::Claim);
        sweep_recs.push(r);
        if claims >= n_claims {
            break;
        }
    }
    let mut sweep_recs = cairn_bench::as_gated(&sweep_recs).expect("the sweep workload, gated");
    // A chain of claims six deep on one span, for `why`.
    let base = sweep_recs.iter().find_map(|r| match r {
        Record::Span(s) => Some((Rid::of_bytes(&encode(r)), s.stream.clone())),
        _ => None,
    });
    let (base, stream) = base.expect("a span");
    let mut top = base;
    for d in 0..=6 {
        let c = Record::Claim(cairn::record::Claim {
            stream: stream.clone(),
            text: format!("chain link {d}"),
            origin: cairn::record::Origin::Inferred,
            witnesses: vec![top],
            actionable: false,
        });
        top = Rid::of_bytes(&encode(&c));
        sweep_recs.push(c);
    }
    let sw_c = dir.path().join("sweep.redb");
    let sw_s = dir.path().join("sweep.sqlite");
    ingest_cairn(&sw_c, &sweep_recs, 50_000);
    let (_, sdb) = ingest_sqlite(&sw_s, &sweep_recs, 50_000);
    let plans = [
        check_plan(&sdb.conn, UNANCHORED_SQL, &["links_src", "records_kind"]),
        check_plan(&sdb.conn, DEEP_SQL, &["summaries_parent"]),
        check_plan(&sdb.conn, WHY_SQL, &["links_src"]),
    ];
    let ledger = Ledger::open(&sw_c).expect("open");
    let snap = ledger.snapshot().expect("snapshot");
    let runs = if args.quick { 3 } else { 5 };
    let t = Instant::now();
    let mut c_counts = (0, 0);
    for _ in 0..runs {
        c_counts = (
            snap.unanchored_claims().expect("sweep").len() as i64,
            snap.deeper_than(Kind::Summary, 2).expect("deep").len() as i64,
        );
    }
    let c_sweep = t.elapsed().as_secs_f64() / runs as f64;
    let t = Instant::now();
    let s_counts: (i64, i64) = (
        sdb.conn
            .query_row(UNANCHORED_SQL, [], |r| r.get(0))
            .expect("cte"),
        sdb.conn.query_row(DEEP_SQL, [], |r| r.get(0)).expect("cte"),
    );
    let s_sweep = t.elapsed().as_secs_f64();
    assert_eq!(
        c_counts, s_counts,
        "both stores find the same unanchored claims and deep chains"
    );
    rows.push(row(
        &format!(
            "sweep over {claims} claims: unanchored ({}) + chains deeper than two ({}), ms",
            c_counts.0, c_counts.1
        ),
        format!("{:.2}", c_sweep * 1e3),
        format!("{:.1}", s_sweep * 1e3),
        Some(s_sweep / c_sweep),
    ));
    out.insert("sweep_vs_sqlite".into(), json!(s_sweep / c_sweep));

    // ------------------------------------------------------------ why at depth 6
    let runs = 2_000;
    let t = Instant::now();
    for _ in 0..runs {
        let w = cairn::replay::why(&snap, top).expect("why");
        assert_eq!(w.children()[0].len(), 1);
    }
    let c_why = t.elapsed().as_secs_f64() / runs as f64;
    let mut stmt = sdb.conn.prepare(WHY_SQL).expect("prepare");
    let t = Instant::now();
    for _ in 0..runs {
        let nodes: Vec<(i64, Record, i64)> = stmt
            .query_map(params![&top.0[..]], |r| {
                let bytes: Vec<u8> = r.get(1)?;
                Ok((
                    r.get(0)?,
                    cairn::record::decode(&bytes).expect("decode"),
                    r.get(2)?,
                ))
            })
            .expect("why")
            .map(|x| x.expect("row"))
            .collect();
        assert_eq!(nodes.len(), 8);
    }
    let s_why = t.elapsed().as_secs_f64() / runs as f64;
    rows.push(row(
        "why at claim depth 6, us",
        format!("{:.1}", c_why * 1e6),
        format!("{:.1}", s_why * 1e6),
        Some(s_why / c_why),
    ));
    out.insert("why_vs_sqlite".into(), json!(s_why / c_why));
    drop(stmt);

    // ------------------------------------------------------------ gate per compaction
    let gate = Gatekeeper::default();
    let gate_shape = Shape::gate_window();
    let mut setup = Vec::new();
    let mut proposals: Vec<(Vec<Record>, Summary)> = Vec::new();
    let mut pending = Vec::new();
    for step in Workload::new(11, gate_shape) {
        match step {
            Step::Append(r) if r.kind() == Kind::Claim => {
                pending.push(r.clone());
                setup.push(r);
            }
            Step::Append(r) if matches!(r.kind(), Kind::Span | Kind::Pin) => setup.push(r),
            Step::Append(_) => {}
            Step::Compaction(s) => {
                proposals.push((std::mem::take(&mut pending), s));
                if proposals.len() == if args.quick { 10 } else { 30 } {
                    break;
                }
            }
        }
    }
    let gl = Ledger::in_memory().expect("ledger");
    let mut b = gl.batch().expect("batch");
    for r in &setup {
        b.append(r.clone()).expect("append");
    }
    let pins = cairn::gate::unpinned_items(&b, &proposals[0].1.stream).expect("classify");
    if !pins.is_empty() {
        b.append(cairn::gate::pin_of(&proposals[0].1.stream, "auto", &pins))
            .expect("pin");
    }
    b.commit().expect("commit");
    let mut times = Vec::new();
    for (_, s) in &proposals {
        let mut b = gl.batch().expect("batch");
        let mut s = s.clone();
        s.parent = None;
        let t = Instant::now();
        gate.propose_summary(&mut b, s).expect("gate");
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let pct = |v: &[f64], p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    let (c50, c99) = (pct(&times, 0.5), pct(&times, 0.99));
    // SQLite: the structural part of the same gate (ancestry, depth, disconfirmers) per claim.
    let mut stimes = Vec::new();
    for (claims, _) in proposals.iter().take(times.len()) {
        let t = Instant::now();
        for c in claims {
            let rid = Rid::of_bytes(&encode(c)).0;
            let _: i64 = sdb
                .conn
                .query_row(
                    WHY_SQL
                        .replace("SELECT r.kind, r.bytes, tree.depth", "SELECT count(*)")
                        .as_str(),
                    params![&rid[..]],
                    |r| r.get(0),
                )
                .expect("ancestry");
        }
        stimes.push(t.elapsed().as_secs_f64() * 1e3);
    }
    stimes.sort_by(f64::total_cmp);
    rows.push(row("gate per compaction, 50 claims over a 200-span window, p50 ms (SQLite: ancestry queries only, no scoring)", format!("{c50:.2}"), format!("{:.2}", pct(&stimes, 0.5)), None));
    rows.push(row(
        "gate per compaction, p99 ms",
        format!("{c99:.2}"),
        format!("{:.2}", pct(&stimes, 0.99)),
        None,
    ));
    out.insert("gate_p50_ms".into(), json!(c50));
    out.insert("gate_p99_ms".into(), json!(c99));

    // ------------------------------------------------------------ report
    reset_peak();
    let rss = peak_rss();
    rows.push(row(
        "peak RSS of this process after the run, MB",
        format!("{:.0}", rss as f64 / 1e6),
        "(same process)".into(),
        None,
    ));
    out.insert("peak_rss_bytes".into(), json!(rss));
    let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(10);
    println!(
        "cairn against SQLite ({}), one run",
        if args.quick { "quick" } else { "full" }
    );
    println!(
        "{:<w$}  {:>12}  {:>12}  {:>8}",
        "measure", "cairn", "SQLite", "cairn/SQLite"
    );
    for r in &rows {
        println!(
            "{:<w$}  {:>12}  {:>12}  {:>8}",
            r.name, r.cairn, r.sqlite, r.ratio
        );
    }
    println!("SQLite query plans checked:");
    for p in plans.iter().flatten() {
        println!("  {p}");
    }
    if args.json {
        println!("{}", serde_json::Value::Object(out));
    }
}
