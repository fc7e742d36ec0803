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

mod endpoint;
mod external;
mod judge;
mod lexical;
#[cfg(feature = "model")]
mod model;
mod order;

pub use crate::error::{ScoreError, ScoreProblem};
pub use endpoint::{chat_answer, chat_prompt, CHAT_PROMPT, MINICHECK_PROMPT};
pub use endpoint::{Endpoint, Style};
pub use external::External;
pub use judge::{Answer, Bounds, Cascade, Judge};
#[cfg(feature = "model")]
pub use judge::{Nli, NLI_PROMPT};
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
    /// The (claim, source) pairs this scorer would have asked a judge since the last call, and
    /// scored without one: the gates ask them outside the write transaction ([`consult`]) and
    /// judge again. None for a scorer without a judge.
    ///
    /// [`consult`]: Scorer::consult
    fn missed(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Scores a claim against the spans it cites, in order: the one place a judge may decide
    /// (SPEC.md section 9.6). Every other pair a gate scores (covered spans it does not cite,
    /// evicted spans, pinned items, re-grounding) goes to [`score_many`](Scorer::score_many),
    /// which a cascade answers with its base scorer alone. The default is `score_many`.
    fn score_cited(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>, ScoreError> {
        self.score_many(pairs)
    }
    /// A gated write begins ([`Gatekeeper::judged`](crate::gate::Gatekeeper::judged)): the
    /// judge's budget, its missed pairs and its failures start again. Nothing for a scorer
    /// without a judge.
    fn begin(&self) {}
    /// The gated write is over: pairs scored from now on are not remembered as missed.
    fn end(&self) {}
    /// The sentences of the judge calls that failed since the write began: the claims they
    /// were for stayed as the built-in scorer left them.
    fn failures(&self) -> Vec<String> {
        Vec::new()
    }
    /// Asks the judge about these pairs, within its budget; returns how many it asked. Called
    /// with no transaction open.
    fn consult(&self, _pairs: &[(String, String)]) -> usize {
        0
    }
    /// The judge's answer that decided this pair's scores, if a judge decided them: the gate
    /// records it as a ruling.
    fn ruling(&self, _claim: &str, _source: &str) -> Option<Answer> {
        None
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
    fn missed(&self) -> Vec<(String, String)> {
        (**self).missed()
    }
    fn score_cited(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>, ScoreError> {
        (**self).score_cited(pairs)
    }
    fn begin(&self) {
        (**self).begin()
    }
    fn end(&self) {
        (**self).end()
    }
    fn failures(&self) -> Vec<String> {
        (**self).failures()
    }
    fn consult(&self, pairs: &[(String, String)]) -> usize {
        (**self).consult(pairs)
    }
    fn ruling(&self, claim: &str, source: &str) -> Option<Answer> {
        (**self).ruling(claim, source)
    }
}
