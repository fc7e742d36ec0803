//! Scorers: (claim, source text) -> entailment, contradiction and similarity in [0, 1].
//!
//! The default, [`Lexical`], is pure Rust, offline and deterministic: a strong tripwire, not an
//! NLI model. [`External`] runs a command that speaks JSON Lines, so a team can plug in an NLI
//! model or an LLM judge. A scorer of your own implements [`Scorer`]:
//!
//! ```
//! use cairn::gate::{Gatekeeper, Policy};
//! use cairn::score::{ScoreError, ScoreProblem, Scorer, Scores};
//!
//! /// Entails exactly the sources that contain the claim word for word.
//! struct Verbatim;
//!
//! impl Scorer for Verbatim {
//!     fn id(&self) -> &str {
//!         "verbatim-1"
//!     }
//!     fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
//!         if source.is_empty() {
//!             let why = ScoreProblem::Other("the source is empty".into());
//!             return Err(ScoreError::new(self.id(), why));
//!         }
//!         let hit = if source.contains(claim) { 1.0 } else { 0.0 };
//!         Ok(Scores { entailment: hit, contradiction: 0.0, similarity: hit })
//!     }
//! }
//!
//! let gate = Gatekeeper { policy: Policy::default(), scorer: Box::new(Verbatim) };
//! assert_eq!(gate.scorer.score("2.3.1", "still on 2.3.1")?.entailment, 1.0);
//! assert!(gate.scorer.score("2.3.1", "").is_err());
//! # Ok::<(), ScoreError>(())
//! ```

mod external;
mod lexical;
#[cfg(feature = "model")]
mod model;
mod order;

pub use crate::error::{ScoreError, ScoreProblem};
pub use external::External;
pub(crate) use lexical::{prefix_keys, Prefixes};
pub use lexical::{Lexical, TOPIC};
#[cfg(feature = "model")]
pub use model::Model;

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
pub trait Scorer: Send {
    /// The id recorded in judgements and hashed into verdicts' policy.
    fn id(&self) -> &str;
    /// Scores a claim against a source text.
    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError>;
    /// Scores many (claim, source) pairs, in order. The gates hand a model scorer all the
    /// pairs of a stage at once so it can batch them; the default scores them one by one.
    fn score_many(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>, ScoreError> {
        pairs.iter().map(|(c, s)| self.score(c, s)).collect()
    }
    /// Whether scoring pairs ahead saves work later: true for a scorer that remembers its
    /// scores, so [`Gatekeeper::prepare`](crate::gate::Gatekeeper::prepare) can score outside
    /// the ledger's write transaction. The default is false.
    fn warms(&self) -> bool {
        false
    }
}

impl<S: Scorer + ?Sized> Scorer for Box<S> {
    fn id(&self) -> &str {
        (**self).id()
    }
    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
        (**self).score(claim, source)
    }
    fn score_many(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>, ScoreError> {
        (**self).score_many(pairs)
    }
    fn warms(&self) -> bool {
        (**self).warms()
    }
}
