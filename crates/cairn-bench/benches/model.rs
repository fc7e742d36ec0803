//! The model scorer's cost: time per (claim, source) pair and per compaction, for the tiny
//! DeBERTa-v3 fixture and for a randomly initialised model with the config of a small
//! DeBERTa-v3 NLI cross-encoder (6 layers, hidden size 768, 128,100-word vocabulary: the size of
//! `cross-encoder/nli-deberta-v3-small`). Speed does not depend on the weights, so random ones
//! time it honestly; the tiny fixture's tokenizer stands in for the real one, which splits words
//! into fewer pieces, so the token counts here are on the high side.
//!
//! Run with `cargo bench -p cairn-bench --features model --bench model` (`-- --quick`: 2
//! layers instead of 6).

use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Role, Span, Summary};
use cairn::score::{Model, Scorer};
use cairn::Ledger;
use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use candle_transformers::models::debertav2::{Config, DebertaV2SeqClassificationModel};
use serde_json::Value;
use std::path::Path;
use std::time::Instant;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/nli/tiny-deberta-v3"
);

/// Writes a model directory with the small DeBERTa-v3 config and random weights.
fn realistic(dir: &Path, layers: u64) {
    let text = std::fs::read_to_string(Path::new(FIXTURE).join("config.json")).expect("config");
    let mut config: Value = serde_json::from_str(&text).expect("config");
    for (k, v) in [
        ("hidden_size", 768),
        ("num_hidden_layers", layers),
        ("num_attention_heads", 12),
        ("intermediate_size", 3072),
        ("max_position_embeddings", 512),
        ("position_buckets", 256),
        ("pooler_hidden_size", 768),
        ("vocab_size", 128_100),
    ] {
        config[k] = v.into();
    }
    let c: Config = serde_json::from_value(config.clone()).expect("config");
    let vars = VarMap::new();
    let vb = VarBuilder::from_varmap(&vars, DType::F32, &Device::Cpu);
    DebertaV2SeqClassificationModel::load(vb.pp("deberta"), &c, None).expect("random model");
    vars.save(dir.join("model.safetensors")).expect("save");
    std::fs::write(dir.join("config.json"), config.to_string()).expect("write");
    std::fs::copy(
        Path::new(FIXTURE).join("tokenizer.json"),
        dir.join("tokenizer.json"),
    )
    .expect("copy");
}

const TURNS: [&str; 6] = [
    "We are still on libfoo 2.3.1; do not bump it until the release freeze ends next week.",
    "I think the staging database is on port 5433, but check the tool output before you use it.",
    "Never run DROP TABLE on the production users table, whatever the migration script says.",
    "The refund of 120 dollars goes back to the original credit card within five business days.",
    "Flight HAT170 from Boston to Seattle was cancelled, so the user asked for the next one.",
    "The migration 0042 applied: 12 tables migrated, 0 failed, and the schema version is now 42.",
];

fn per_pair(model: &Model) {
    let pairs: Vec<(&str, &str)> = TURNS
        .iter()
        .map(|t| ("the user asked to keep it as it was", *t))
        .collect();
    let tokens: usize = pairs
        .iter()
        .map(|(c, s)| model.tokens(s, c).map_or(0, |t| t.len()))
        .sum();
    let rounds = 3;
    let t = Instant::now();
    for _ in 0..rounds {
        model.logits(&pairs).expect("logits");
    }
    let each = t.elapsed().as_secs_f64() * 1e3 / (rounds * pairs.len()) as f64;
    println!(
        "  per pair: {each:.1} ms (batches of up to 8, {:.0} tokens a pair on average)",
        tokens as f64 / pairs.len() as f64
    );
}

/// One compaction: 30 turns, a summary of 6 claims each citing its turn, evicting 24 turns.
fn per_compaction(dir: &Path) {
    let ledger = Ledger::in_memory().expect("ledger");
    let mut b = ledger.batch().expect("batch");
    let mut spans = Vec::new();
    for i in 0..30u64 {
        let text = format!("{} (turn {i})", TURNS[i as usize % TURNS.len()]);
        let span = Span {
            stream: "s".into(),
            turn: i,
            role: Role::User,
            tool: None,
            text,
        };
        spans.push(b.append(span).expect("span").rid);
    }
    let mut claims = Vec::new();
    for (i, text) in [
        "libfoo stays on 2.3.1",
        "staging is on port 5433",
        "never drop the users table",
        "the refund is 120 dollars",
        "flight HAT170 was cancelled",
        "migration 0042 applied",
    ]
    .iter()
    .enumerate()
    {
        let claim = Claim {
            stream: "s".into(),
            text: (*text).into(),
            origin: Origin::UserSaid,
            witnesses: vec![spans[i]],
            actionable: true,
        };
        claims.push(b.append(claim).expect("claim").rid);
    }
    b.commit().expect("commit");
    let summary = Summary {
        stream: "s".into(),
        parent: None,
        author: Author::SelfAuthored,
        budget: 1000,
        covers: spans.clone(),
        evicts: spans[6..].to_vec(),
        claims,
        self_score: None,
        reground: false,
    };
    let gate = Gatekeeper {
        scorer: Box::new(Model::load(dir).expect("model")),
        ..Gatekeeper::default()
    };
    let t = Instant::now();
    let ahead = gate
        .prepare(&ledger.snapshot().expect("snapshot"), &summary)
        .expect("prepare");
    let outside = t.elapsed().as_secs_f64();
    let mut b = ledger.batch().expect("batch");
    let t = Instant::now();
    let o = gate.propose_summary(&mut b, summary).expect("propose");
    let inside = t.elapsed().as_secs_f64();
    b.commit().expect("commit");
    println!(
        "  per compaction (6 claims, 30 turns, 24 evicted): {:.2} s scoring {ahead} pairs before the write transaction, then {:.3} s inside it; admitted {}",
        outside, inside, o.admitted
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!("model scorer, tiny DeBERTa-v3 fixture:");
    per_pair(&Model::load(Path::new(FIXTURE)).expect("fixture"));
    per_compaction(Path::new(FIXTURE));
    let layers = if quick { 2 } else { 6 };
    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    realistic(dir.path(), layers);
    println!(
        "random DeBERTa-v3-small-sized model ({layers} layers, made in {:.1} s):",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let model = Model::load(dir.path()).expect("model");
    println!(
        "  load (read and hash {:.0} MB): {:.2} s, id {}",
        std::fs::metadata(dir.path().join("model.safetensors"))
            .map_or(0.0, |m| m.len() as f64 / 1e6),
        t.elapsed().as_secs_f64(),
        model.id()
    );
    per_pair(&model);
    drop(model);
    per_compaction(dir.path());
}
