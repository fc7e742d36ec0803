//! Gate thresholds. Defaults come from the seeds; a TOML file can change them, and the hash of
//! the policy in force (with the scorer's id) is recorded in every verdict.

use crate::error::{PolicyError, PolicyProblem};
use crate::score::{Bounds, Cascade, Endpoint, Judge, Scorer, Style};
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
    /// The judge the built-in scorer hands what it is not sure of (section 9.6), if any.
    pub judge: Option<JudgeConfig>,
    /// Whether a claim that only a judge verified may carry an irreversible action (key
    /// `judge_carries_irreversible`, off by default).
    pub judge_carries_irreversible: bool,
    /// Whether a refused summary gets its repair, the nearest compaction the gates admit
    /// (key `repair`, on by default; SPEC.md section 8.9). Off, a refusal leaves the stream as
    /// it was, as before 2026-12-03: a benchmark that compares the same records elsewhere
    /// turns it off.
    pub repair: bool,
}

/// Which judge the policy configures (keys `judge`, `judge_url`, `judge_model`,
/// `judge_key_env`, `judge_budget`, `judge_timeout_ms`). The endpoint's key is read from the
/// environment variable it names, never from the policy or the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeConfig {
    /// `chat`, `minicheck` or `nli`.
    pub kind: JudgeKind,
    /// The OpenAI-compatible API's base URL (`chat` and `minicheck`).
    pub url: Option<String>,
    /// The model the endpoint serves (`chat` and `minicheck`).
    pub model: Option<String>,
    /// The environment variable holding the endpoint's bearer key [CAIRN_JUDGE_KEY].
    pub key_env: String,
    /// The most judge calls per compaction [16].
    pub budget: u32,
    /// The most one call may take, in milliseconds [30000].
    pub timeout_ms: u64,
}

/// The kinds of judge (section 9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeKind {
    /// A general chat model behind an OpenAI-compatible endpoint.
    Chat,
    /// A grounded fact-checker (MiniCheck) behind an OpenAI-compatible endpoint.
    MiniCheck,
    /// The in-process NLI model of `model`.
    Nli,
    /// Over MCP, the connected client's own model, through sampling (`sampling/createMessage`),
    /// where the client offers it; the server builds that judge for each call.
    Sampling,
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
            judge: None,
            judge_carries_irreversible: false,
            repair: true,
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
    "judge",
    "judge_url",
    "judge_model",
    "judge_key_env",
    "judge_budget",
    "judge_timeout_ms",
    "judge_carries_irreversible",
    "repair",
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
        let mut p = Policy {
            judge: judge_config(&table).map_err(err)?,
            ..Policy::default()
        };
        for (key, value) in &table {
            if key.starts_with("judge") && KEYS.contains(&key.as_str()) {
                if key == "judge_carries_irreversible" {
                    p.judge_carries_irreversible = value.as_bool().ok_or_else(|| {
                        err(PolicyProblem::Judge(format!(
                            "`{key}` must be true or false"
                        )))
                    })?;
                }
                continue;
            }
            if key == "repair" {
                p.repair = value.as_bool().ok_or_else(|| {
                    err(PolicyProblem::Toml("`repair` must be true or false".into()))
                })?;
                continue;
            }
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

    /// The scorer the gates use under this policy: `base`, or, when the policy configures a
    /// judge, a cascade of `base` then the judge (section 9.6). A chat or minicheck judge reads
    /// its key from the environment variable `judge_key_env` names; an `nli` judge is the model
    /// `nli` the caller loaded (without one, `base` alone).
    pub fn scorer(&self, base: Box<dyn Scorer>, nli: Option<Box<dyn Judge>>) -> Box<dyn Scorer> {
        let Some(j) = &self.judge else {
            return base;
        };
        let judge: Box<dyn Judge> = match (j.kind, &j.url, &j.model) {
            (JudgeKind::Chat | JudgeKind::MiniCheck, Some(url), Some(model)) => {
                let style = if j.kind == JudgeKind::Chat {
                    Style::Chat
                } else {
                    Style::MiniCheck
                };
                let key = std::env::var(&j.key_env).ok().filter(|k| !k.is_empty());
                let timeout = std::time::Duration::from_millis(j.timeout_ms);
                Box::new(Endpoint::new(url, model, key, style, timeout))
            }
            (JudgeKind::Nli, _, _) => match nli {
                Some(n) => n,
                None => return base,
            },
            // A sampling judge exists only per MCP call (`Policy::cascade`).
            _ => return base,
        };
        self.cascade(base, judge)
    }

    /// `base` then `judge`, within this policy's bounds.
    pub fn cascade(&self, base: Box<dyn Scorer>, judge: Box<dyn Judge>) -> Box<dyn Scorer> {
        let budget = self.judge.as_ref().map_or(16, |j| j.budget as usize);
        let bounds = Bounds {
            verify: self.verify_entailment,
            contradiction: self.contradiction,
            budget,
        };
        Box::new(Cascade::new(base, judge, bounds))
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
        // The judge is named by the scorer id (a cascade's id names it); whether its word may
        // carry an irreversible action changes what the gates admit.
        h.update(&[u8::from(self.judge_carries_irreversible)]);
        // Added with repairs (2026-12-03), only when off, so the default's hash is unchanged.
        if !self.repair {
            h.update(b"no repair");
        }
        h.update(scorer_id.as_bytes());
        *h.finalize().as_bytes()
    }
}

/// The judge keys of a policy table, checked together.
fn judge_config(
    table: &BTreeMap<String, toml::Value>,
) -> Result<Option<JudgeConfig>, PolicyProblem> {
    let bad = |m: String| PolicyProblem::Judge(m);
    let text = |k: &str| -> Result<Option<String>, PolicyProblem> {
        match table.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| bad(format!("`{k}` must be a non-empty string"))),
        }
    };
    let number = |k: &str, default: u64| -> Result<u64, PolicyProblem> {
        match table.get(k) {
            None => Ok(default),
            Some(v) => v
                .as_integer()
                .and_then(|i| u64::try_from(i).ok())
                .filter(|i| *i > 0)
                .ok_or_else(|| bad(format!("`{k}` must be a positive integer"))),
        }
    };
    let Some(kind) = text("judge")? else {
        let stray = [
            "judge_url",
            "judge_model",
            "judge_key_env",
            "judge_budget",
            "judge_timeout_ms",
        ]
        .into_iter()
        .find(|k| table.contains_key(*k));
        return match stray {
            Some(k) => Err(bad(format!(
                "`{k}` is set but `judge` is not; set `judge` to chat, minicheck or nli"
            ))),
            None => Ok(None),
        };
    };
    let kind = match kind.as_str() {
        "chat" => JudgeKind::Chat,
        "minicheck" => JudgeKind::MiniCheck,
        "nli" => JudgeKind::Nli,
        "sampling" => JudgeKind::Sampling,
        other => {
            return Err(bad(format!(
                "`judge` is {other:?}; use chat, minicheck, nli or sampling"
            )))
        }
    };
    let (url, model) = (text("judge_url")?, text("judge_model")?);
    let endpoint = matches!(kind, JudgeKind::Chat | JudgeKind::MiniCheck);
    if endpoint && (url.is_none() || model.is_none()) {
        return Err(bad(
            "a chat or minicheck judge needs `judge_url` (the API's base, such as http://localhost:11434/v1) and `judge_model`".into(),
        ));
    }
    if let Some(u) = &url {
        if !(u.starts_with("http://") || u.starts_with("https://")) {
            return Err(bad(format!(
                "`judge_url` {u:?} must start with http:// or https://"
            )));
        }
    }
    Ok(Some(JudgeConfig {
        kind,
        url,
        model,
        key_env: text("judge_key_env")?.unwrap_or_else(|| "CAIRN_JUDGE_KEY".into()),
        budget: u32::try_from(number("judge_budget", 16)?)
            .map_err(|_| bad("`judge_budget` is too large".into()))?,
        timeout_ms: number("judge_timeout_ms", 30_000)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> String {
        Policy::from_toml(text, "p.toml").unwrap_err().to_string()
    }

    /// The judge keys, each with a near miss.
    #[test]
    fn judge_keys_are_read_together_and_refused_with_a_sentence() {
        let p = Policy::from_toml(
            "judge = \"chat\"\njudge_url = \"http://localhost:11434/v1\"\njudge_model = \"llama3.1\"\njudge_budget = 4",
            "p.toml",
        )
        .unwrap();
        let j = p.judge.unwrap();
        assert_eq!(
            (j.kind, j.budget, j.timeout_ms),
            (JudgeKind::Chat, 4, 30_000)
        );
        assert_eq!(j.key_env, "CAIRN_JUDGE_KEY");
        assert!(problem("judge = \"chat\"").contains("needs `judge_url`"));
        assert!(problem("judge = \"oracle\"").contains("use chat, minicheck, nli or sampling"));
        assert!(problem("judge_url = \"http://x\"").contains("`judge` is not"));
        assert!(
            problem("judge = \"minicheck\"\njudge_url = \"ftp://x\"\njudge_model = \"m\"")
                .contains("must start with http://")
        );
        assert!(problem("judge = \"nli\"\njudge_budget = 0").contains("positive integer"));
        assert!(problem("judge_carries_irreversible = 1").contains("true or false"));
        assert!(problem("judge_carries_irreversable = true").contains("unknown key"));
        assert!(problem("verify_entailment = 0.2").contains("below `raw_entailment`"));
        let nli = Policy::from_toml(
            "judge = \"nli\"\njudge_carries_irreversible = true",
            "p.toml",
        );
        let nli = nli.unwrap();
        assert!(nli.judge_carries_irreversible);
        assert_ne!(nli.hash("s"), Policy::default().hash("s"));
    }
}
