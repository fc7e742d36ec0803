//! Scorers: (claim, source text) -> entailment, contradiction and similarity in [0, 1].
//!
//! The default, [`Lexical`], is pure Rust, offline and deterministic: a strong tripwire, not an
//! NLI model. [`External`] runs a command that speaks JSON Lines, so a team can plug in an NLI
//! model or an LLM judge.

mod external;
mod lexical;

pub use crate::error::{ScoreError, ScoreProblem};
pub use external::External;
pub(crate) use lexical::{prefix_keys, Prefixes};
pub use lexical::{Lexical, TOPIC};

/// What a scorer found for one claim against one source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scores {
    /// How strongly the source supports the claim.
    pub entailment: f64,
    /// How strongly the source contradicts the claim.
    pub contradiction: f64,
    /// How close the claim is to the source's topic and wording, whatever the direction.
    pub similarity: f64,
}

/// A scorer. Implementations must be deterministic for a given id: gate verdicts and
/// judgements record the id, and replay trusts that the same id gives the same scores.
pub trait Scorer {
    /// The id recorded in judgements and hashed into verdicts' policy.
    fn id(&self) -> &str;
    /// Scores a claim against a source text.
    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError>;
}

impl<S: Scorer + ?Sized> Scorer for Box<S> {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
        (**self).score(claim, source)
    }
}
