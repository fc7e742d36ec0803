//! Gate thresholds. Defaults come from the seeds; a TOML file can change them, and the hash of
//! the policy in force (with the scorer's id) is recorded in every verdict.

use crate::error::{PolicyError, PolicyProblem};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The entailment from the claim's cited spans at which the built-in scorer is sure enough to
/// verify a claim, chosen from the curve on the dev split (SPEC.md 9.4).
pub const VERIFY_ENTAILMENT: f64 = 0.95;

/// The thresholds the gates use.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `fabricated-claim`: similarity to the best raw span at or above this...
    pub fabrication_similarity: f64,
    /// ...while raw entailment is below this: a claim whose cited spans entail it less is
    /// refused as fabricated. Also the entailment that preserves a pinned item.
    pub raw_entailment: f64,
    /// The entailment at which a claim's cited spans support it surely enough to verify it
    /// (key `verify_entailment`). Between `raw_entailment` and this, a claim is admitted
    /// unverified, or goes to the judge when one is configured. Never below `raw_entailment`.
    pub verify_entailment: f64,
    /// A scorer contradiction at or above this makes a span a disconfirmer.
    pub contradiction: f64,
    /// `laundering-rate`: laundered actionable claims over actionable claims above this
    /// refuses, scaled down in proportion when the budget shrinks against the parent's.
    pub laundering_rate: f64,
    /// `depth-exceeded`: self-authored re-summarisations allowed since the last grounding.
    pub max_depth: u32,
    /// `pin-loss`: the least share of pinned items a compaction must preserve.
    pub fidelity: f64,
    /// `prohibited-action`: the share of a prohibition's content words an action must contain
    /// to match it.
    pub prohibition_match: f64,
    /// The NLI model directory to score with (key `model`), instead of the built-in scorer.
    /// The path is not hashed into verdicts: the model scorer's id, a hash of the model's
    /// files, is.
    pub model: Option<PathBuf>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            fabrication_similarity: 0.75,
            raw_entailment: 0.30,
            verify_entailment: VERIFY_ENTAILMENT,
            contradiction: 0.60,
            laundering_rate: 0.15,
            max_depth: 2,
            fidelity: 0.80,
            prohibition_match: 0.50,
            model: None,
        }
    }
}

const KEYS: &[&str] = &[
    "fabrication_similarity",
    "raw_entailment",
    "verify_entailment",
    "contradiction",
    "laundering_rate",
    "max_depth",
    "fidelity",
    "prohibition_match",
    "model",
];

impl Policy {
    /// Reads a TOML policy: any of the keys above, each a number (`max_depth` an integer,
    /// `model` a path); missing keys keep their defaults, unknown keys are refused.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Policy, PolicyError> {
        let err = |problem: PolicyProblem| PolicyError {
            source_name: source_name.to_string(),
            problem,
        };
        let table: BTreeMap<String, toml::Value> =
            toml::from_str(text).map_err(|e| err(PolicyProblem::Toml(e.to_string())))?;
        let mut p = Policy::default();
        for (key, value) in &table {
            if key == "max_depth" {
                p.max_depth = value
                    .as_integer()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| err(PolicyProblem::MaxDepth))?;
                continue;
            }
            if key == "model" {
                let path = value.as_str().filter(|p| !p.is_empty());
                p.model = Some(PathBuf::from(
                    path.ok_or_else(|| err(PolicyProblem::Model))?,
                ));
                continue;
            }
            let slot = match key.as_str() {
                "fabrication_similarity" => &mut p.fabrication_similarity,
                "raw_entailment" => &mut p.raw_entailment,
                "verify_entailment" => &mut p.verify_entailment,
                "contradiction" => &mut p.contradiction,
                "laundering_rate" => &mut p.laundering_rate,
                "fidelity" => &mut p.fidelity,
                "prohibition_match" => &mut p.prohibition_match,
                other => {
                    return Err(err(PolicyProblem::UnknownKey {
                        key: other.to_string(),
                        known: KEYS.join(", "),
                    }))
                }
            };
            *slot = value
                .as_float()
                .or_else(|| value.as_integer().map(|i| i as f64))
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| err(PolicyProblem::Threshold(key.clone())))?;
        }
        if p.verify_entailment < p.raw_entailment {
            return Err(err(PolicyProblem::VerifyBelowRefuse {
                verify: p.verify_entailment.to_string(),
                raw: p.raw_entailment.to_string(),
            }));
        }
        Ok(p)
    }

    /// BLAKE3 over the thresholds (in parts per ten thousand) and the scorer's id.
    pub fn hash(&self, scorer_id: &str) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(b"cairn-policy-1\0");
        for v in [
            self.fabrication_similarity,
            self.raw_entailment,
            self.contradiction,
            self.laundering_rate,
            self.fidelity,
            self.prohibition_match,
        ] {
            h.update(&((v * 10_000.0).round() as u32).to_le_bytes());
        }
        h.update(&self.max_depth.to_le_bytes());
        // Added with `verify_entailment` (2026-12-01): a policy hash names the point at which
        // claims were verified.
        h.update(&((self.verify_entailment * 10_000.0).round() as u32).to_le_bytes());
        h.update(scorer_id.as_bytes());
        *h.finalize().as_bytes()
    }
}
