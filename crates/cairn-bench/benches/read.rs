//! The read path at scale (SPEC.md sections 10a and 10b): `context` and `recall` latency on a
//! ledger of N records (default 1,000,000; `--quick`: 20,000), p50 and p99 over many calls.
//!
//! The records are the real turns of the recall set (`tests/data/recall/corpus.jsonl`, 902
//! spans of 19 dialogues), each dialogue copied into as many streams as it takes to reach N,
//! with one claim for every tenth span; every 500th stream gets a compaction through the
//! gates, so `context` reads a head summary, its claims and its flags there. The queries are
//! the set's 83 questions, asked of their dialogue's copy (scoped) or of every stream.
//!
//!     cargo bench -p cairn-bench --bench read -- [--quick] [N] [--ledger PATH]
//!
//! With `--ledger PATH` the ledger is kept there, and a ledger already there is measured as
//! it is (its build takes about 20 minutes at 1,000,000 records).

use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Rid, Role, Span, Summary};
use cairn::{Ledger, Read};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Instant;

fn lines(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/recall")
        .join(name);
    std::fs::read_to_string(&path)
        .expect("the recall set")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn percentiles(mut us: Vec<f64>) -> (f64, f64) {
    us.sort_by(f64::total_cmp);
    let at = |p: f64| us[((us.len() as f64 * p) as usize).min(us.len() - 1)];
    (at(0.50) / 1000.0, at(0.99) / 1000.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n: u64 = args
        .iter()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if quick { 20_000 } else { 1_000_000 });
    let corpus = lines("corpus.jsonl");
    let queries = lines("queries.jsonl");
    let dialogues: Vec<(String, Vec<(Role, String)>)> = {
        let mut out: Vec<(String, Vec<(Role, String)>)> = Vec::new();
        for s in &corpus {
            let stream = s["stream"].as_str().expect("stream").to_string();
            let role = Role::from_name(s["role"].as_str().expect("role")).expect("role");
            let text = s["text"].as_str().expect("text").to_string();
            match out.last_mut() {
                Some((name, turns)) if *name == stream => turns.push((role, text)),
                _ => out.push((stream, vec![(role, text)])),
            }
        }
        out
    };

    let kept = (args.iter().position(|a| a == "--ledger"))
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = kept.unwrap_or_else(|| dir.path().join("read.redb"));
    let reuse = path.exists();
    let ledger = Ledger::open(&path).expect("open");
    let streams = if reuse {
        let streams = ledger
            .snapshot()
            .expect("snapshot")
            .streams()
            .expect("streams");
        println!(
            "ledger: {} as it is, {} records in {} streams",
            path.display(),
            ledger.len().expect("len"),
            streams.len()
        );
        (streams.into_iter())
            .filter_map(|s| {
                let (name, _) = s.rsplit_once('-')?;
                Some((dialogues.iter().position(|(n, _)| n == name)?, s))
            })
            .collect()
    } else {
        build(&ledger, &dialogues, n)
    };

    let snap = ledger.snapshot().expect("snapshot");
    let rounds = if quick { 300 } else { 3000 };
    let mut rng = cairn_bench::Rng::new(7);
    let mut ctx = Vec::with_capacity(rounds);
    let mut items = 0usize;
    for i in 0..rounds {
        // Every fourth call asks a stream with a head summary.
        let k = if i % 4 == 0 {
            (rng.range(0, streams.len() as u64 / 500 + 1) * 500) as usize
        } else {
            rng.range(0, streams.len() as u64 - 1) as usize
        };
        let stream = &streams[k.min(streams.len() - 1)].1;
        let t = Instant::now();
        let c = cairn::memory::context(&snap, stream, 4000).expect("context");
        ctx.push(t.elapsed().as_secs_f64() * 1e6);
        items += c.claims.len() + c.spans.len();
    }
    let (p50, p99) = percentiles(ctx);
    println!(
        "context, budget 4000 tokens: p50 {p50:.3} ms, p99 {p99:.3} ms over {rounds} calls ({:.1} entries a call)",
        items as f64 / rounds as f64
    );

    let mut by_dialogue: Vec<Vec<&String>> = vec![Vec::new(); dialogues.len()];
    for (d, s) in &streams {
        by_dialogue[*d].push(s);
    }
    for scoped in [true, false] {
        let mut times = Vec::with_capacity(rounds);
        let mut hits = 0usize;
        for i in 0..rounds {
            let q = &queries[i % queries.len()];
            let text = q["query"].as_str().expect("query");
            let stream = if scoped {
                let home = q["stream"]
                    .as_str()
                    .or_else(|| q["relevant"][0]["stream"].as_str())
                    .expect("a stream");
                let d = dialogues
                    .iter()
                    .position(|(n, _)| n == home)
                    .expect("dialogue");
                let copies = &by_dialogue[d];
                Some(copies[rng.range(0, copies.len() as u64 - 1) as usize].clone())
            } else {
                None
            };
            let t = Instant::now();
            let r = cairn::memory::recall(&snap, text, stream.as_deref(), 10).expect("recall");
            times.push(t.elapsed().as_secs_f64() * 1e6);
            hits += r.hits.len();
        }
        let (p50, p99) = percentiles(times);
        println!(
            "recall, limit 10, {}: p50 {p50:.3} ms, p99 {p99:.3} ms over {rounds} queries ({:.1} hits a query)",
            if scoped { "one stream" } else { "all streams" },
            hits as f64 / rounds as f64
        );
    }
}

/// Fills `ledger` with copies of the dialogues up to `n` records; returns each stream with the
/// number of its dialogue.
fn build(
    ledger: &Ledger,
    dialogues: &[(String, Vec<(Role, String)>)],
    n: u64,
) -> Vec<(usize, String)> {
    let gate = Gatekeeper::default();
    let started = Instant::now();
    let mut records = 0u64;
    let mut copies = 0u64;
    let mut streams: Vec<(usize, String)> = Vec::new();
    'fill: loop {
        let mut batch = ledger.batch().expect("batch");
        for (d, (name, turns)) in dialogues.iter().enumerate() {
            let stream = format!("{name}-{copies}");
            let mut spans: Vec<Rid> = Vec::new();
            let mut claims: Vec<Rid> = Vec::new();
            for (turn, (role, text)) in turns.iter().enumerate() {
                let rid = batch
                    .append(Span {
                        stream: stream.clone(),
                        turn: turn as u64,
                        role: *role,
                        tool: None,
                        text: text.clone(),
                    })
                    .expect("span")
                    .rid;
                spans.push(rid);
                records += 1;
                if turn % 10 == 9 {
                    let words: Vec<&str> = text.split_whitespace().take(12).collect();
                    let claim = Claim {
                        stream: stream.clone(),
                        text: words.join(" "),
                        origin: if *role == Role::User {
                            Origin::UserSaid
                        } else {
                            Origin::Inferred
                        },
                        witnesses: vec![rid],
                        actionable: false,
                    };
                    claims.push(batch.append(claim).expect("claim").rid);
                    records += 1;
                }
            }
            if streams.len().is_multiple_of(500) && !claims.is_empty() {
                let half = spans.len() / 2;
                let summary = Summary {
                    stream: stream.clone(),
                    parent: None,
                    author: Author::SelfAuthored,
                    budget: 4000,
                    covers: spans.clone(),
                    evicts: spans[..half].to_vec(),
                    claims: claims.clone(),
                    self_score: Some(9000),
                    reground: false,
                };
                gate.propose_summary(&mut batch, summary).expect("gate");
                records += 2;
            }
            streams.push((d, stream));
            if records >= n {
                batch.commit().expect("commit");
                break 'fill;
            }
        }
        batch.commit().expect("commit");
        copies += 1;
    }
    let built = started.elapsed().as_secs_f64();
    let size = std::fs::metadata(ledger.path()).map_or(0, |m| m.len());
    println!(
        "ledger: {records} records in {} streams, built in {built:.1} s ({:.1} us a record, recall index included), {} bytes on disk",
        streams.len(),
        built * 1e6 / records as f64,
        size
    );

    streams
}
