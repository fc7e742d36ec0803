//! The in-process NLI model scorer against the reference implementation: tiny randomly
//! initialised BERT and DeBERTa-v3 classifiers, and their logits from Python `transformers`
//! (tests/data/nli, made by make_fixtures.py).

use cairn::score::{Model, ScoreProblem, Scorer};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The largest logit difference allowed. A wrong LayerNorm epsilon in the BERT fixture moves
/// a logit by 1.1e-4 and the tanh GELU by 9e-4, so 1e-4 would not see them.
const TOLERANCE: f32 = 5e-5;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/nli")
        .join(name)
}

fn reference() -> Value {
    let text = std::fs::read_to_string(dir("logits.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn pairs(reference: &Value) -> Vec<(String, String)> {
    (reference["pairs"].as_array().unwrap().iter())
        .map(|p| {
            let s = |k: &str| p[k].as_str().unwrap().to_string();
            (s("premise"), s("hypothesis"))
        })
        .collect()
}

fn check(name: &str) {
    let reference = reference();
    let expected = &reference["models"][name];
    let model = Model::load(&dir(name)).unwrap();
    let pairs = pairs(&reference);
    let borrowed: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(p, h)| (p.as_str(), h.as_str()))
        .collect();
    for (i, (p, h)) in borrowed.iter().enumerate() {
        let ids: Vec<u32> = (expected["input_ids"][i].as_array().unwrap().iter())
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(
            model.tokens(p, h).unwrap(),
            ids,
            "{name}: tokens of pair {i}"
        );
    }
    // All pairs in one call: batched and padded, so the attention mask is exercised too.
    let got = model.logits(&borrowed).unwrap();
    let mut worst = 0.0f32;
    for (i, row) in got.iter().enumerate() {
        let want: Vec<f32> = (expected["logits"][i].as_array().unwrap().iter())
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(row.len(), want.len(), "{name}: labels of pair {i}");
        for (g, w) in row.iter().zip(&want) {
            worst = worst.max((g - w).abs());
        }
    }
    println!("{name}: largest logit difference {worst:e}");
    assert!(worst <= TOLERANCE, "{name}: logits differ by {worst:e}");
}

#[test]
fn bert_logits_match_transformers() {
    check("tiny-bert");
}

#[test]
fn deberta_v3_logits_match_transformers() {
    check("tiny-deberta-v3");
}

#[test]
fn labels_are_read_from_the_config() {
    // The DeBERTa fixture orders its labels contradiction, entailment, neutral; the scores
    // must be the softmax of the right logits whatever the order.
    let reference = reference();
    for name in ["tiny-bert", "tiny-deberta-v3"] {
        let model = Model::load(&dir(name)).unwrap();
        let order: Vec<String> = {
            let text = std::fs::read_to_string(dir(name).join("config.json")).unwrap();
            let config: Value = serde_json::from_str(&text).unwrap();
            (0..3)
                .map(|i| {
                    config["id2label"][i.to_string()]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let (p, h) = &pairs(&reference)[0];
        let logits: Vec<f64> = (reference["models"][name]["logits"][0]
            .as_array()
            .unwrap()
            .iter())
        .map(|v| v.as_f64().unwrap())
        .collect();
        let sum: f64 = logits.iter().map(|l| l.exp()).sum();
        let prob = |label: &str| logits[order.iter().position(|o| o == label).unwrap()].exp() / sum;
        let s = model.score(h, p).unwrap();
        assert!(
            (s.entailment - prob("entailment")).abs() < 1e-4,
            "{name}: entailment"
        );
        assert!(
            (s.contradiction - prob("contradiction")).abs() < 1e-4,
            "{name}: contradiction"
        );
    }
}

#[test]
fn the_id_names_the_model_by_its_hash() {
    let a = Model::load(&dir("tiny-bert")).unwrap();
    let b = Model::load(&dir("tiny-deberta-v3")).unwrap();
    assert!(a.id().starts_with("nli-bert:"), "{}", a.id());
    assert!(b.id().starts_with("nli-deberta-v2:"), "{}", b.id());
    assert_eq!(a.id(), Model::load(&dir("tiny-bert")).unwrap().id());
    // A changed weight file is another model.
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(dir("tiny-bert").join(f), tmp.path().join(f)).unwrap();
    }
    let mut w = std::fs::read(tmp.path().join("model.safetensors")).unwrap();
    let last = w.len() - 1;
    w[last] ^= 1;
    std::fs::write(tmp.path().join("model.safetensors"), w).unwrap();
    let c = Model::load(tmp.path()).unwrap();
    assert_ne!(a.id(), c.id());
}

#[test]
fn a_source_longer_than_the_model_is_scored_in_windows() {
    let model = Model::load(&dir("tiny-bert")).unwrap();
    let long = "the agent booked a table for two and the user paid the refund. ".repeat(40);
    assert!(model.tokens(&long, "a table was booked").unwrap().len() > 128);
    // A single pass refuses it, the scorer windows it.
    assert!(model.logits(&[(&long, "a table was booked")]).is_err());
    let s = model.score("a table was booked", &long).unwrap();
    assert!((0.0..=1.0).contains(&s.entailment) && (0.0..=1.0).contains(&s.contradiction));
    // Scoring many pairs at once gives what scoring each gives.
    let many = model
        .score_many(&[
            ("a table was booked", &long),
            ("the user paid", "the user paid the refund"),
        ])
        .unwrap();
    assert_eq!(many[0], s);
    assert_eq!(
        many[1],
        model
            .score("the user paid", "the user paid the refund")
            .unwrap()
    );
}

fn load_error(dir: &Path) -> String {
    match Model::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => {
            assert!(matches!(e.problem, ScoreProblem::ModelLoad { .. }), "{e:?}");
            e.to_string()
        }
    }
}

#[test]
fn unsupported_and_broken_models_are_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = |from: &str| {
        for f in ["config.json", "tokenizer.json", "model.safetensors"] {
            std::fs::copy(dir(from).join(f), tmp.path().join(f)).unwrap();
        }
    };
    let edit = |f: &dyn Fn(&mut Value)| {
        let path = tmp.path().join("config.json");
        let mut config: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        f(&mut config);
        std::fs::write(&path, config.to_string()).unwrap();
    };
    copy("tiny-deberta-v3");
    edit(&|c| c["conv_kernel_size"] = 3.into());
    assert!(load_error(tmp.path()).contains("convolution layer"));
    copy("tiny-deberta-v3");
    edit(&|c| c["model_type"] = "gpt2".into());
    assert!(load_error(tmp.path()).contains("model_type \"gpt2\" is not supported"));
    copy("tiny-bert");
    edit(&|c| c["id2label"] = serde_json::json!({"0": "positive", "1": "negative"}));
    assert!(load_error(tmp.path()).contains("entailment, neutral and contradiction"));
    copy("tiny-bert");
    edit(&|c| c["hidden_size"] = 64.into());
    assert!(load_error(tmp.path()).contains("does not match config.json"));
    std::fs::remove_file(tmp.path().join("tokenizer.json")).unwrap();
    assert!(load_error(tmp.path()).contains("cannot read tokenizer.json"));
    // The near miss: the unchanged copy loads.
    copy("tiny-bert");
    assert!(Model::load(tmp.path()).is_ok());
}

#[test]
fn prepare_scores_ahead_and_the_verdict_is_the_same() {
    use crate::util::{claim, span, summary};
    use cairn::gate::Gatekeeper;
    use cairn::record::Author;
    use cairn::Ledger;
    let judge = |prepared: bool| {
        let ledger = Ledger::in_memory().unwrap();
        let mut b = ledger.batch().unwrap();
        let s1 = b
            .append(span(
                "s",
                1,
                "We are still on libfoo 2.3.1, do not bump it.",
            ))
            .unwrap()
            .rid;
        let s2 = b
            .append(span("s", 2, "The staging database listens on port 5433."))
            .unwrap()
            .rid;
        let c1 = b
            .append(claim("s", "libfoo stays on 2.3.1", vec![s1]))
            .unwrap()
            .rid;
        let c2 = b
            .append(claim("s", "staging listens on port 5432", vec![s2]))
            .unwrap()
            .rid;
        b.commit().unwrap();
        let mut sum = summary("s", None, Author::SelfAuthored, vec![s1, s2], vec![c1, c2]);
        sum.covers = vec![s1, s2];
        let gate = Gatekeeper {
            scorer: Box::new(Model::load(&dir("tiny-deberta-v3")).unwrap()),
            ..Gatekeeper::default()
        };
        let ahead = gate.prepare(&ledger.snapshot().unwrap(), &sum).unwrap();
        let ahead = if prepared { ahead } else { 0 };
        let mut b = ledger.batch().unwrap();
        let o = gate.propose_summary(&mut b, sum).unwrap();
        b.commit().unwrap();
        (ahead, o.admitted, o.claims, format!("{:?}", o.findings))
    };
    let (ahead, admitted, claims, findings) = judge(true);
    // Each claim against its cited span, its covered neighbour and two evicted candidates.
    assert!(ahead >= 4, "{ahead} pairs scored ahead");
    assert_eq!((admitted, claims, findings), {
        let (_, a, c, f) = judge(false);
        (a, c, f)
    });
    // The built-in scorer scores nothing ahead: it keeps no scores.
    let ledger = Ledger::in_memory().unwrap();
    let sum = summary("s", None, Author::SelfAuthored, vec![], vec![]);
    assert_eq!(
        Gatekeeper::default()
            .prepare(&ledger.snapshot().unwrap(), &sum)
            .unwrap(),
        0
    );
}
