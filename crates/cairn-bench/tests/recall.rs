//! `recall`'s ranking against SQLite FTS5's bm25 on the labelled recall set of real transcripts
//! (`tests/data/recall`, 902 spans of 19 dialogues, 83 queries with graded judgements): nDCG@10
//! of cairn must be no lower than FTS5's (SPEC.md section 10b).

use cairn::record::{Role, Span};
use cairn::Ledger;
use rusqlite::{params, Connection};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

fn data(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/recall")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("the recall set");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// nDCG@10 with gains 2^grade - 1.
fn ndcg(ranked: &[(String, u64)], judged: &HashMap<(String, u64), u64>) -> f64 {
    let gain = |g: u64| (2f64.powi(g as i32)) - 1.0;
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, k)| gain(*judged.get(k).unwrap_or(&0)) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u64> = judged.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, g)| gain(*g) / ((i + 2) as f64).log2())
        .sum();
    dcg / idcg
}

/// The query as FTS5 reads it: its words joined by OR (FTS5's default is AND, which drops
/// every span that lacks one word of a natural-language question).
fn fts_query(q: &str) -> String {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    words.join(" OR ")
}

#[test]
fn recall_ranks_real_transcripts_at_least_as_well_as_fts5_bm25() {
    let corpus = data("corpus.jsonl");
    let queries = data("queries.jsonl");
    assert!(queries.len() >= 50, "the set holds at least 50 queries");

    let ledger = Ledger::in_memory().expect("ledger");
    let sql = Connection::open_in_memory().expect("sqlite");
    sql.execute_batch(
        "CREATE VIRTUAL TABLE spans USING fts5(text, stream UNINDEXED, turn UNINDEXED);",
    )
    .expect("fts5 table");
    let mut batch = ledger.batch().expect("batch");
    for s in &corpus {
        let span = Span {
            stream: s["stream"].as_str().expect("stream").to_string(),
            turn: s["turn"].as_u64().expect("turn"),
            role: Role::from_name(s["role"].as_str().expect("role")).expect("a role"),
            tool: None,
            text: s["text"].as_str().expect("text").to_string(),
        };
        sql.execute(
            "INSERT INTO spans (text, stream, turn) VALUES (?1, ?2, ?3)",
            params![span.text, span.stream, span.turn as i64],
        )
        .expect("insert");
        batch.append(span).expect("append");
    }
    batch.commit().expect("commit");
    let snap = ledger.snapshot().expect("snapshot");

    let (mut ours, mut theirs) = (0.0, 0.0);
    let (mut wins, mut losses) = (0, 0);
    for q in &queries {
        let text = q["query"].as_str().expect("query");
        let stream = q["stream"].as_str();
        let judged: HashMap<(String, u64), u64> = q["relevant"]
            .as_array()
            .expect("relevant")
            .iter()
            .map(|r| {
                let key = (
                    r["stream"].as_str().unwrap().to_string(),
                    r["turn"].as_u64().unwrap(),
                );
                (key, r["grade"].as_u64().unwrap())
            })
            .collect();
        let hits = cairn::memory::recall(&snap, text, stream, 10)
            .expect("recall")
            .hits;
        let ranked: Vec<(String, u64)> = hits
            .iter()
            .map(|h| (h.stream.clone(), h.turn.expect("a span hit")))
            .collect();
        let sql_query = match stream {
            Some(_) => "SELECT stream, turn FROM spans WHERE spans MATCH ?1 AND stream = ?2 ORDER BY bm25(spans) LIMIT 10",
            None => "SELECT stream, turn FROM spans WHERE spans MATCH ?1 AND ?2 IS NULL ORDER BY bm25(spans) LIMIT 10",
        };
        let mut stmt = sql.prepare(sql_query).expect("prepare");
        let fts: Vec<(String, u64)> = stmt
            .query_map(params![fts_query(text), stream], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .expect("query")
            .map(|r| r.expect("row"))
            .collect();
        let (a, b) = (ndcg(&ranked, &judged), ndcg(&fts, &judged));
        if std::env::var_os("RECALL_SHOW").is_some() && (a - b).abs() > 0.2 {
            println!(
                "{:+.2} {text:?} ours {:?} fts {:?}",
                a - b,
                &ranked[..ranked.len().min(3)],
                &fts[..fts.len().min(3)]
            );
        }
        ours += a;
        theirs += b;
        if a > b + 1e-9 {
            wins += 1;
        } else if b > a + 1e-9 {
            losses += 1;
        }
    }
    let n = queries.len() as f64;
    let (ours, theirs) = (ours / n, theirs / n);
    println!(
        "recall set: {} spans, {} queries; nDCG@10 cairn {ours:.4}, SQLite FTS5 bm25 {theirs:.4}; cairn better on {wins}, worse on {losses}",
        corpus.len(),
        queries.len()
    );
    assert!(
        ours >= theirs,
        "cairn's nDCG@10 {ours:.4} is below FTS5's {theirs:.4}"
    );
}
