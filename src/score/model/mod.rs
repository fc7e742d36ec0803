//! The in-process NLI model scorer (feature `model`): a Hugging Face sequence classifier with
//! entailment, neutral and contradiction labels, run with candle on the CPU (SPEC.md section
//! 9.3).
//!
//! A model is a directory holding `config.json`, `tokenizer.json` and `model.safetensors`, the
//! layout Hugging Face uses. Two architectures run: BERT (`model_type` `bert`, with the pooler
//! and classifier that candle lacks, in `bert.rs`) and DeBERTa-v2/v3 (`deberta-v2`, candle's
//! model; a config with the v2 convolution layer, which candle does not implement, is refused
//! in `deberta.rs`). The premise is the source, the hypothesis the claim. A source too long
//! for the model is split into overlapping windows; a claim's entailment is the best window's,
//! its contradiction the strongest window's. Similarity is the built-in scorer's word overlap,
//! which no NLI head gives.

mod bert;
mod deberta;

use crate::score::{Lexical, ScoreError, ScoreProblem, Scorer, Scores};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use tokenizers::Tokenizer;

/// The pairs one forward pass takes.
const BATCH: usize = 8;
/// The longest sequence cairn gives a model, whatever its config allows.
const MAX_TOKENS: usize = 512;
/// How many scores the memo keeps before it starts again.
const MEMO: usize = 1 << 16;

/// A loaded architecture.
enum Net {
    Bert(Box<bert::Classifier>),
    Deberta(Box<deberta::Classifier>),
}

/// An NLI cross-encoder run in-process. Its [`id`](Scorer::id) names the architecture and a
/// BLAKE3 hash of the config, the tokenizer and the weights, so a verdict's policy hash says
/// which model judged it.
pub struct Model {
    id: String,
    net: Net,
    tokenizer: Tokenizer,
    /// The logit index of entailment, neutral and contradiction.
    labels: [usize; 3],
    /// The longest sequence, special tokens included.
    max_len: usize,
    pad_id: u32,
    /// Scores already computed, by the hash of the pair: the gates ask some pairs twice, and
    /// [`Scorer::score_many`] fills it ahead of the checks that read it.
    memo: Mutex<HashMap<[u8; 32], Scores>>,
}

/// One (source window, claim) pair as token ids.
struct Encoded {
    ids: Vec<u32>,
    types: Vec<u32>,
}

fn load_err(dir: &Path, reason: impl Into<String>) -> ScoreError {
    let problem = ScoreProblem::ModelLoad {
        dir: dir.display().to_string(),
        reason: reason.into(),
    };
    ScoreError::new("model", problem)
}

/// config.json read as an architecture's config (`what` names it in the error).
fn config_as<T: serde::de::DeserializeOwned>(
    dir: &Path,
    config: &Value,
    what: &str,
) -> Result<T, ScoreError> {
    serde_json::from_value(config.clone())
        .map_err(|e| load_err(dir, format!("config.json is not a {what} config: {e}")))
}

/// Weights that the config does not describe.
fn mismatch(dir: &Path) -> impl Fn(candle_core::Error) -> ScoreError + '_ {
    move |e| {
        load_err(
            dir,
            format!("model.safetensors does not match config.json: {e}"),
        )
    }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, ScoreError> {
    std::fs::read(dir.join(name)).map_err(|e| {
        load_err(
            dir,
            format!("cannot read {name} ({e}); a model directory holds config.json, tokenizer.json and model.safetensors"),
        )
    })
}

/// The logit index of each of entailment, neutral and contradiction, from `id2label`.
fn label_order(dir: &Path, config: &Value) -> Result<[usize; 3], ScoreError> {
    let id2label = config
        .get("id2label")
        .and_then(Value::as_object)
        .ok_or_else(|| load_err(dir, "config.json has no id2label; an NLI classifier names its labels entailment, neutral and contradiction"))?;
    let mut found = [None; 3];
    for (index, label) in id2label {
        let index: usize = index
            .parse()
            .map_err(|_| load_err(dir, format!("id2label key {index:?} is not a number")))?;
        let name = label.as_str().unwrap_or_default().to_ascii_lowercase();
        let slot = ["entail", "neutral", "contradict"]
            .iter()
            .position(|p| name.starts_with(p));
        if let Some(slot) = slot {
            found[slot] = Some(index);
        }
    }
    match found {
        [Some(e), Some(n), Some(c)] if id2label.len() == 3 => Ok([e, n, c]),
        _ => Err(load_err(
            dir,
            format!(
                "its labels are {}, but cairn needs exactly entailment, neutral and contradiction (a three-way NLI classifier)",
                Value::Object(id2label.clone())
            ),
        )),
    }
}

impl Model {
    /// Loads the model in `dir`: `config.json`, `tokenizer.json` and `model.safetensors`.
    pub fn load(dir: &Path) -> Result<Model, ScoreError> {
        let config_bytes = read(dir, "config.json")?;
        let tokenizer_bytes = read(dir, "tokenizer.json")?;
        let weights_bytes = read(dir, "model.safetensors")?;
        let config: Value = serde_json::from_slice(&config_bytes)
            .map_err(|e| load_err(dir, format!("config.json is not JSON: {e}")))?;
        let labels = label_order(dir, &config)?;
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| load_err(dir, format!("tokenizer.json cannot be read: {e}")))?;
        // cairn windows long sources itself and pads its own batches.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| load_err(dir, format!("tokenizer.json: {e}")))?;
        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load_buffer(&weights_bytes, &device)
            .map_err(|e| load_err(dir, format!("model.safetensors cannot be read: {e}")))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model_type = config.get("model_type").and_then(Value::as_str);
        let (arch, net) = match model_type {
            Some("bert") => ("bert", Net::Bert(Box::new(bert::Classifier::load(dir, &config, vb)?))),
            Some("deberta-v2") => (
                "deberta-v2",
                Net::Deberta(Box::new(deberta::Classifier::load(dir, &config, vb)?)),
            ),
            other => {
                return Err(load_err(
                    dir,
                    format!(
                        "model_type {} is not supported; cairn runs BERT (`bert`) and DeBERTa-v2/v3 (`deberta-v2`) sequence classifiers",
                        other.map_or("(none)".to_string(), |t| format!("{t:?}"))
                    ),
                ))
            }
        };
        let positions = config
            .get("max_position_embeddings")
            .and_then(Value::as_u64)
            .unwrap_or(MAX_TOKENS as u64) as usize;
        let pad_id = config
            .get("pad_token_id")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32;
        let mut h = blake3::Hasher::new();
        for part in [&config_bytes, &tokenizer_bytes, &weights_bytes] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let hash = h.finalize().to_hex();
        Ok(Model {
            id: format!("nli-{arch}:{}", &hash.as_str()[..16]),
            net,
            tokenizer,
            labels,
            max_len: positions.clamp(16, MAX_TOKENS),
            pad_id,
            memo: Mutex::new(HashMap::new()),
        })
    }

    fn fail(&self, reason: impl std::fmt::Display) -> ScoreError {
        let problem = ScoreProblem::Inference {
            reason: reason.to_string(),
        };
        ScoreError::new(self.id.clone(), problem)
    }

    /// The token ids of a (premise, hypothesis) pair as the model sees it, special tokens
    /// included and nothing cut.
    pub fn tokens(&self, premise: &str, hypothesis: &str) -> Result<Vec<u32>, ScoreError> {
        Ok(self.encode(premise, hypothesis)?.ids)
    }

    /// The raw logits of each (premise, hypothesis) pair, in the config's label order, run in
    /// batches; no pair is windowed, so each must fit the model.
    pub fn logits(&self, pairs: &[(&str, &str)]) -> Result<Vec<Vec<f32>>, ScoreError> {
        let encoded: Vec<Encoded> = (pairs.iter())
            .map(|(p, h)| self.encode(p, h))
            .collect::<Result<_, _>>()?;
        if let Some(long) = encoded.iter().find(|e| e.ids.len() > self.max_len) {
            return Err(self.fail(format!(
                "a pair of {} tokens is longer than the model's {}",
                long.ids.len(),
                self.max_len
            )));
        }
        let mut out = Vec::with_capacity(encoded.len());
        for chunk in encoded.chunks(BATCH) {
            out.extend(self.forward(chunk)?);
        }
        Ok(out)
    }

    fn encode(&self, premise: &str, hypothesis: &str) -> Result<Encoded, ScoreError> {
        let e = self
            .tokenizer
            .encode((premise, hypothesis), true)
            .map_err(|e| self.fail(format!("tokenizing failed: {e}")))?;
        Ok(Encoded {
            ids: e.get_ids().to_vec(),
            types: e.get_type_ids().to_vec(),
        })
    }

    /// The (source window, claim) pairs to run: the whole pair when it fits the model,
    /// otherwise overlapping runs of the source's tokens, cut at token boundaries.
    fn encodings(&self, claim: &str, source: &str) -> Result<Vec<Encoded>, ScoreError> {
        let whole = self.encode(source, claim)?;
        if whole.ids.len() <= self.max_len {
            return Ok(vec![whole]);
        }
        let alone = |text: &str| {
            self.tokenizer
                .encode(text, false)
                .map_err(|e| self.fail(format!("tokenizing failed: {e}")))
        };
        let src = alone(source)?;
        let claim_len = alone(claim)?.len();
        let special = whole.ids.len() - src.len() - claim_len;
        // A claim longer than half the model keeps half the model for the source.
        let room = self
            .max_len
            .saturating_sub(special + claim_len)
            .max(self.max_len / 2);
        let stride = (room * 3 / 4).max(1);
        let offsets = src.get_offsets();
        let mut windows = Vec::new();
        let mut start = 0;
        while start < offsets.len() {
            let end = (start + room).min(offsets.len());
            let (a, b) = (offsets[start].0, offsets[end - 1].1);
            windows.push(self.encode(source.get(a..b).unwrap_or(source), claim)?);
            if end == offsets.len() {
                break;
            }
            start += stride;
        }
        Ok(windows)
    }

    /// One forward pass over a batch, padded to its longest pair.
    fn forward(&self, batch: &[Encoded]) -> Result<Vec<Vec<f32>>, ScoreError> {
        let len = batch.iter().map(|e| e.ids.len()).max().unwrap_or(0);
        let (mut ids, mut types, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        for e in batch {
            let pad = len - e.ids.len();
            ids.extend(
                e.ids
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.pad_id, pad)),
            );
            types.extend(e.types.iter().copied().chain(std::iter::repeat_n(0, pad)));
            mask.extend(std::iter::repeat_n(1u32, e.ids.len()).chain(std::iter::repeat_n(0, pad)));
        }
        let shape = (batch.len(), len);
        let tensor = |v: Vec<u32>| Tensor::from_vec(v, shape, &Device::Cpu);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let (ids, types, mask) = (tensor(ids)?, tensor(types)?, tensor(mask)?);
            let logits = match &self.net {
                Net::Bert(m) => m.forward(&ids, &types, &mask)?,
                Net::Deberta(m) => m.forward(&ids, &types, &mask)?,
            };
            logits.to_dtype(DType::F32)?.to_vec2::<f32>()
        };
        run().map_err(|e| self.fail(e))
    }

    /// Entailment and contradiction probabilities from one row of logits.
    fn probabilities(&self, logits: &[f32]) -> (f64, f64) {
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exp: Vec<f64> = logits.iter().map(|l| f64::from(l - top).exp()).collect();
        let sum: f64 = exp.iter().sum();
        let [e, _, c] = self.labels;
        (exp[e] / sum, exp[c] / sum)
    }

    fn key(claim: &str, source: &str) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(&(claim.len() as u64).to_le_bytes());
        h.update(claim.as_bytes());
        h.update(source.as_bytes());
        *h.finalize().as_bytes()
    }

    fn remembered(&self, key: &[u8; 32]) -> Option<Scores> {
        self.memo.lock().ok().and_then(|m| m.get(key).copied())
    }

    fn remember(&self, key: [u8; 32], scores: Scores) {
        if let Ok(mut m) = self.memo.lock() {
            if m.len() >= MEMO {
                m.clear();
            }
            m.insert(key, scores);
        }
    }
}

impl Scorer for Model {
    fn id(&self) -> &str {
        &self.id
    }

    fn warms(&self) -> bool {
        true
    }

    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
        Ok(self.score_many(&[(claim, source)])?[0])
    }

    fn score_many(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>, ScoreError> {
        let keys: Vec<[u8; 32]> = pairs.iter().map(|(c, s)| Model::key(c, s)).collect();
        let mut out: Vec<Option<Scores>> = Vec::with_capacity(pairs.len());
        // The windows of every pair not already scored, each with the pair it belongs to.
        let mut todo: Vec<(usize, Encoded)> = Vec::new();
        for (i, (claim, source)) in pairs.iter().enumerate() {
            let known = self.remembered(&keys[i]);
            if known.is_none() {
                todo.extend(self.encodings(claim, source)?.into_iter().map(|e| (i, e)));
            }
            out.push(known);
        }
        // Batches of like lengths pad least.
        todo.sort_by_key(|(_, e)| e.ids.len());
        let (owners, encoded): (Vec<usize>, Vec<Encoded>) = todo.into_iter().unzip();
        let mut best: HashMap<usize, (f64, f64)> = HashMap::new();
        for (owners, chunk) in owners.chunks(BATCH).zip(encoded.chunks(BATCH)) {
            for (i, row) in owners.iter().zip(self.forward(chunk)?) {
                let (e, c) = self.probabilities(&row);
                let b = best.entry(*i).or_insert((0.0, 0.0));
                *b = (b.0.max(e), b.1.max(c));
            }
        }
        let mut scores = Vec::with_capacity(pairs.len());
        for (i, known) in out.into_iter().enumerate() {
            let s = match known {
                Some(s) => s,
                None => {
                    let (claim, source) = pairs[i];
                    let (entailment, contradiction) = best.get(&i).copied().unwrap_or_default();
                    let similarity = Lexical.score(claim, source)?.similarity;
                    let s = Scores {
                        entailment,
                        contradiction,
                        similarity,
                    };
                    self.remember(keys[i], s);
                    s
                }
            };
            scores.push(s);
        }
        Ok(scores)
    }
}
