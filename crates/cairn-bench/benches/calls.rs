//! The Rust side of the Python package's overhead figure (`crates/cairn-python/bench/overhead.py`):
//! applies each line of a JSON Lines file in its own write transaction, as the package's
//! `Ledger.append` does (`Run::apply_line` inside `Gatekeeper::judged`), and prints the mean
//! time of an append (a line without a gate) and of a gate (a summary or an action) in
//! microseconds, as one JSON line.
//!
//! `cargo bench -p cairn-bench --bench calls -- LINES.jsonl [--memory]`: with `--memory`, on an
//! in-memory ledger, so that the figure is the work of the call without the disk's sync.

use cairn::gate::Gatekeeper;
use cairn::ingest::Run;
use cairn::Ledger;
use std::time::Instant;

/// What applying a line can fail with: the ledger, or the line.
#[derive(Debug)]
enum Failed {
    Ledger(#[allow(dead_code)] cairn::Error),
    Line(#[allow(dead_code)] cairn::ingest::LineError),
}

impl From<cairn::Error> for Failed {
    fn from(e: cairn::Error) -> Failed {
        Failed::Ledger(e)
    }
}

fn main() {
    let Some(path) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        eprintln!(
            "give the JSON Lines file to apply (crates/cairn-python/bench/overhead.py writes one)"
        );
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ledger = if std::env::args().any(|a| a == "--memory") {
        Ledger::in_memory()
    } else {
        Ledger::open(dir.path().join("calls.redb"))
    }
    .expect("a new ledger");
    let gate = Gatekeeper::default();
    let (mut appends, mut gates) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        let started = Instant::now();
        let r = gate
            .judged(&ledger, |batch| {
                Run::new()
                    .apply_line(batch, &gate, i as u64 + 1, line.as_bytes())
                    .map_err(Failed::Line)
            })
            .expect("the line applies");
        let took = started.elapsed().as_secs_f64() * 1e6;
        match r.and_then(|r| r.gate) {
            Some(_) => gates.push(took),
            None => appends.push(took),
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "{}",
        serde_json::json!({"appends": appends.len(), "append_us": mean(&appends), "gates": gates.len(), "gate_us": mean(&gates)})
    );
}
