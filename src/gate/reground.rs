//! Re-grounding (SPEC.md section 8.2): a claim re-checked against its raw-span ancestors,
//! which the ledger keeps after eviction.

use super::rules::{self, quote};
use super::view::View;
use super::{unit, Gatekeeper, RegroundOutcome};
use crate::error::{not_a, Result};
use crate::record::{Kind, Record, Reground, Rid};
use crate::store::{Batch, Read};

impl Gatekeeper {
    /// Re-checks a claim against its raw-span ancestors (kept after eviction). When they entail
    /// it surely (`verify_entailment`), appends a Reground record, which makes the claim verified and resets its depth.
    pub fn reground(&self, batch: &mut Batch, claim: Rid) -> Result<RegroundOutcome> {
        let mut view = View::new(&*batch);
        let Some(c) = view.claim(claim)? else {
            let found = view.read.kind_of(&claim)?;
            return Err(not_a(claim, Kind::Claim, found));
        };
        let (spans, _) = view.ancestry(claim)?;
        drop(view);
        if spans.is_empty() {
            return Ok(RegroundOutcome::NotEntailed {
                best: 0.0,
                reason: format!(
                    "claim {} has no raw-span ancestor to re-check against",
                    quote(&c.text)
                ),
            });
        }
        let joined: String = spans
            .iter()
            .map(|(_, s)| s.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let texts: Vec<&str> = spans.iter().map(|(_, s)| s.text.as_str()).collect();
        let drift = rules::identifier_drift(claim, &c, &texts);
        let mut entailing = Vec::new();
        let mut best = 0.0f64;
        let mut contradicted = None;
        for (rid, s) in &spans {
            let sc = self.score(&c.text, &s.text)?;
            best = best.max(sc.entailment);
            if sc.entailment >= self.policy.verify_entailment {
                entailing.push(*rid);
            }
            if contradicted.is_none() {
                if let Some(clash) = self.clashes(&c.text, &s.text, &sc) {
                    contradicted = Some((s.turn, sc.contradiction, clash));
                }
            }
        }
        // Two sentences of its ancestors joined, word for word, are entailed by them together.
        let whole = if crate::text::verbatim::repeats_joined(&c.text, &texts) {
            1.0
        } else {
            self.score(&c.text, &joined)?.entailment
        };
        best = best.max(whole);
        if entailing.is_empty() && whole >= self.policy.verify_entailment {
            entailing = spans.iter().map(|(r, _)| *r).collect();
        }
        if drift.is_some() || entailing.is_empty() || contradicted.is_some() {
            let reason = match (drift, contradicted) {
                // The gate's own sentence about the identifier no raw span holds.
                (Some(f), _) => f.detail,
                // As at the gate, a raw span that contradicts the claim outweighs any support.
                (None, Some((turn, x, clash))) => format!(
                    "turn {turn}, a raw-span ancestor of claim {}, contradicts it (contradiction {x:.2}; {clash})",
                    quote(&c.text)
                ),
                (None, None) => format!(
                    "its raw-span ancestors do not entail claim {} surely enough to verify it (best entailment {best:.2}, below {:.2})",
                    quote(&c.text),
                    self.policy.verify_entailment
                ),
            };
            return Ok(RegroundOutcome::NotEntailed { best, reason });
        }
        let appended = batch.append_any(Record::Reground(Reground {
            claim,
            spans: entailing,
            score: unit(best),
        }))?;
        Ok(RegroundOutcome::Regrounded(appended))
    }
}
