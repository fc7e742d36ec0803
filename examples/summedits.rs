//! Calibrates a scorer on SummEdits: ROC AUC per domain and the mean, and balanced accuracy
//! at the entailment threshold the gates use (0.30 by default).
//!
//!     cargo run --release --example summedits [-- DIR]
//!
//! DIR defaults to `../shared/eval/summedits`. The label is "1" for a consistent summary; the
//! score is the scorer's entailment minus half its contradiction.

use cairn::score::{Lexical, Scorer};
use serde_json::Value;
use std::path::PathBuf;

/// The area under the ROC curve: the chance that a random consistent summary scores above a
/// random inconsistent one, ties counting half.
fn auc(scored: &[(f64, bool)]) -> f64 {
    let mut v = scored.to_vec();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < v.len() {
        let mut j = i;
        while j < v.len() && v[j].0 == v[i].0 {
            j += 1;
        }
        let avg_rank = (i + j + 1) as f64 / 2.0;
        rank_sum += avg_rank * v[i..j].iter().filter(|x| x.1).count() as f64;
        i = j;
    }
    let pos = v.iter().filter(|x| x.1).count() as f64;
    let neg = v.len() as f64 - pos;
    (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg)
}

fn balanced_accuracy(scored: &[(f64, bool)], threshold: f64) -> f64 {
    let rate = |label: bool| {
        let group: Vec<_> = scored.iter().filter(|x| x.1 == label).collect();
        group.iter().filter(|x| (x.0 >= threshold) == label).count() as f64 / group.len() as f64
    };
    (rate(true) + rate(false)) / 2.0
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/eval/summedits"));
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(d) => d.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            eprintln!(
                "cannot read {}: {e}; pass the SummEdits directory",
                dir.display()
            );
            std::process::exit(2);
        }
    };
    files.sort();
    let scorer = Lexical;
    let (mut aucs, mut bals) = (Vec::new(), Vec::new());
    println!(
        "{:<14} {:>5} {:>7} {:>9}",
        "domain", "n", "ROC AUC", "bal.acc"
    );
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let items: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
        let scored: Vec<(f64, bool)> = items
            .iter()
            .filter_map(|it| {
                let s = scorer
                    .score(it["summary"].as_str()?, it["doc"].as_str()?)
                    .ok()?;
                let label = it["label"]
                    .as_str()
                    .map(|l| l == "1")
                    .or(it["label"].as_i64().map(|l| l == 1))?;
                Some((s.entailment - s.contradiction, label))
            })
            .collect();
        let name = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .replace("summedits_", "");
        let (a, b) = (auc(&scored), balanced_accuracy(&scored, 0.30));
        println!("{name:<14} {:>5} {a:>7.3} {b:>9.3}", scored.len());
        aucs.push(a);
        bals.push(b);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "{:<14} {:>5} {:>7.3} {:>9.3}",
        "mean",
        "",
        mean(&aucs),
        mean(&bals)
    );
}
