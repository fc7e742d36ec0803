//! The gates: every compaction and every action is judged, in the write transaction that
//! appends it, on the state after the append. The outcome is a Verdict record, appended
//! whether the proposal is admitted or refused. SPEC.md section 8 gives every rule; `rules`
//! holds one function per rule, which the gatekeeper, the sweep and `why` share.
//!
//! ```
//! use cairn::gate::{Gate, Gatekeeper};
//! use cairn::record::{Author, Claim, Origin, Role, Span, Summary};
//! # fn main() -> Result<(), cairn::Error> {
//! let ledger = cairn::Ledger::in_memory()?;
//! let mut batch = ledger.batch()?;
//! let said = batch.append(Span { stream: "s1".into(), turn: 1, role: Role::User, tool: None,
//!                                text: "we are still on libfoo 2.3.1".into() })?;
//! let claim = batch.append(Claim { stream: "s1".into(), text: "libfoo was upgraded to 2.4.0".into(),
//!                                  origin: Origin::UserSaid, witnesses: vec![said.rid],
//!                                  actionable: true })?;
//! let summary = Summary { stream: "s1".into(), parent: None, author: Author::SelfAuthored,
//!                         budget: 4000, covers: vec![said.rid], evicts: vec![],
//!                         claims: vec![claim.rid], self_score: None, reground: false };
//! let outcome = Gatekeeper::default().propose_summary(&mut batch, summary)?;
//! assert!(!outcome.admitted);
//! assert!(outcome.findings.iter().any(|f| f.gate == Gate::IdentifierDrift));
//! # Ok(()) }
//! ```

mod action;
mod pins;
mod policy;
pub mod prose;
mod reground;
mod repair;
pub(crate) mod rules;
mod status;
mod summary;
mod sweep;
pub(crate) mod view;

pub use crate::record::{Effect, Gate};
pub use crate::store::classify;
/// The id of the classifier that classifies every span appended now: the `classifier` of the
/// classification records it writes (SPEC.md section 8.3).
pub use crate::text::classify::id as classifier_id;
pub use pins::{pin_of, pinned_items, unpinned_items};
pub use policy::{JudgeConfig, JudgeKind, Policy, VERIFY_ENTAILMENT};
pub use status::claim_status_plain;
pub use sweep::{sweep, SweepFinding};

use crate::error::{not_a, ErrorKind, Result};
use crate::record::{
    score_to_unit, Action, Check, ClaimStatus, Finding, Kind, Record, Rid, Ruling, Summary,
    Verdict, SCORE_ONE,
};
use crate::score::{Scorer, Scores};
use crate::store::{Appended, Batch, Ledger, Read};
use std::collections::HashSet;

/// How the clash a judge's ruling gives opens ("judge NAME quotes '...'"): what tells it from
/// a clash the word scorer reads (`text::clash`).
pub(crate) const JUDGE: &str = "judge ";

/// The outcome of gating one proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The summary or action proposed.
    pub subject: Appended,
    /// Its verdict record.
    pub verdict: Rid,
    /// Whether it was admitted.
    pub admitted: bool,
    /// What the gates found.
    pub findings: Vec<Finding>,
    /// The status of each claim.
    pub claims: Vec<ClaimStatus>,
    /// Claims re-grounded at the gate (a summary with `reground: true`).
    pub regrounded: Vec<Rid>,
    /// The reference-anchored fidelity, when the stream has pins.
    pub anchored_score: Option<f64>,
    /// For an action checked again (the ledger had changed since its last check), the check
    /// record that this verdict judges; `None` for a summary and for an action's first check.
    pub check: Option<Appended>,
    /// The claims struck: kept in the record and marked, not admitted (SPEC.md section 8.1).
    /// An admitted summary may strike some of its claims; the rest of it stands.
    pub struck: Vec<Rid>,
    /// For a refused summary: the nearest admissible compaction, which cairn built from it and
    /// gated as any proposal (SPEC.md section 8.9). `None` for an admitted summary, an action,
    /// and a refused repair.
    pub repair: Option<Box<Repair>>,
}

/// The nearest admissible compaction to a refused proposal: its own summary record, authored
/// by cairn ([`Author::Repair`](crate::record::Author::Repair)), linked to the proposal.
#[derive(Debug, Clone, PartialEq)]
pub struct Repair {
    /// The repair's own outcome at the gates.
    pub outcome: Outcome,
    /// What changed from the proposal, one sentence each.
    pub changes: Vec<String>,
    /// Its text: the claims it keeps, one a line, then the items it carries verbatim.
    pub text: String,
}

/// The result of re-grounding a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum RegroundOutcome {
    /// Its raw-span ancestors entail it: a Reground record was appended.
    Regrounded(Appended),
    /// They do not: nothing was appended.
    NotEntailed {
        /// The best entailment found.
        best: f64,
        /// Why, as a sentence.
        reason: String,
    },
}

/// Runs the gates with a policy and a scorer.
pub struct Gatekeeper {
    /// The thresholds.
    pub policy: Policy,
    /// The scorer.
    pub scorer: Box<dyn Scorer>,
}

impl Default for Gatekeeper {
    fn default() -> Gatekeeper {
        Gatekeeper {
            policy: Policy::default(),
            scorer: Box::new(crate::score::Lexical),
        }
    }
}

/// What judging a proposal found, before its verdict is written.
#[derive(Default)]
struct Judged {
    /// The findings, in gate order.
    findings: Vec<Finding>,
    /// The status of each claim of the subject.
    claims: Vec<ClaimStatus>,
    /// The reference-anchored fidelity, when the stream has pins.
    anchored: Option<f64>,
    /// The judges' answers that decided claims, recorded before the verdict.
    rulings: Vec<Ruling>,
    /// For a repair: the evicted spans found disconfirming a kept claim, to stay in the window.
    keep: Vec<Rid>,
    /// For a repair: the decision-relevant items the summary lost, pinned or not, to carry
    /// verbatim.
    carry: Vec<Carry>,
}

/// Refuses a record whose stream name holds a control character, as `Batch::append` does.
fn plainly_named(record: &Record) -> Result<()> {
    match record.stream_name_violation() {
        Some(reason) => Err(ErrorKind::Invalid {
            kind: record.kind(),
            reason,
        }
        .into()),
        None => Ok(()),
    }
}

/// A decision-relevant item a refused summary lost, which its repair carries verbatim.
#[derive(Debug, Clone)]
struct Carry {
    /// The item's sentence.
    text: String,
    /// The span it was found in or pinned from, when known.
    witness: Option<Rid>,
}

/// A number in [0, 1] as parts per ten thousand.
fn unit(x: f64) -> u16 {
    (x.clamp(0.0, 1.0) * f64::from(SCORE_ONE)).round() as u16
}

/// A claim repeated word for word in its source is entailed by it, whatever else the source
/// holds (SPEC.md section 8.1, "verbatim"): the scorer's numbers for it are overruled here,
/// for every pair the gates score.
fn verbatim(pairs: &[(&str, &str)], mut scores: Vec<Scores>) -> Vec<Scores> {
    for ((claim, source), sc) in pairs.iter().zip(scores.iter_mut()) {
        if crate::text::verbatim::repeats(claim, source) {
            sc.entailment = 1.0;
            sc.contradiction = 0.0;
            sc.similarity = sc.similarity.max(1.0);
        }
    }
    scores
}

impl Gatekeeper {
    fn score(&self, claim: &str, source: &str) -> Result<Scores> {
        let sc = self
            .scorer
            .score(claim, source)
            .map_err(|e| crate::error::Error::from(ErrorKind::Score(e)))?;
        Ok(verbatim(&[(claim, source)], vec![sc]).remove(0))
    }

    fn score_many(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let scores = self
            .scorer
            .score_many(pairs)
            .map_err(|e| crate::error::Error::from(ErrorKind::Score(e)))?;
        Ok(verbatim(pairs, scores))
    }

    /// A claim against the spans it cites: where a judge may decide (SPEC.md 9.6).
    fn score_cited(&self, pairs: &[(&str, &str)]) -> Result<Vec<Scores>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let scores = self
            .scorer
            .score_cited(pairs)
            .map_err(|e| crate::error::Error::from(ErrorKind::Score(e)))?;
        Ok(verbatim(pairs, scores))
    }

    /// Whether `span` disconfirms `claim`, and why: the scorer finds a contradiction at or
    /// above the policy's (a span that repeats the claim word for word has none), and either
    /// the two texts clash
    /// (another value of one attribute, a negation or an antonym of one predicate: topical
    /// overlap is never a contradiction) or a judge ruled the pair a contradiction, quoting the
    /// span (SPEC.md section 8.1, "contradiction needs a clash").
    pub(crate) fn clashes(&self, claim: &str, span: &str, sc: &Scores) -> Option<String> {
        if sc.contradiction < self.policy.contradiction {
            return None;
        }
        if let Some(a) = self.scorer.ruling(claim, span) {
            if a.answer == crate::record::Relation::Contradicts {
                return Some(format!("{JUDGE}{} quotes '{}'", a.judge, a.quote));
            }
        }
        crate::text::clash::clash(claim, span).map(|c| c.to_string())
    }

    /// The share of a claim's words a span must hold to be scored against it: low enough
    /// that no span the built-in scorer would let entail, resemble or contradict the claim is
    /// skipped.
    fn prefilter_share(&self) -> f64 {
        let similar = (self.policy.fabrication_similarity - 0.2) / 0.8;
        self.policy
            .raw_entailment
            .min(similar)
            .clamp(0.0, crate::score::TOPIC)
    }

    /// Runs `write` in a write batch and commits it, asking the scorer's judge, when it has one,
    /// with no transaction open (SPEC.md section 9.6). A judge call can take seconds, so the
    /// gates never call it: a pair the judge has not answered is scored without it and
    /// remembered. When a run leaves such pairs, its batch is dropped unwritten, the judge is
    /// asked them ([`Scorer::consult`], within its budget, which counts the calls of one `judged`
    /// call), and `write` runs again on the
    /// ledger as it then stands, whose gates find the answers (and, if the stream moved
    /// meanwhile, may miss others: up to three rounds, after which what is still unanswered
    /// stays as the built-in scorer left it). A judge's answer depends only on the claim and
    /// the span it was asked about, both write-once, so an answer cannot go stale. With no
    /// judge, `write` runs once.
    pub fn judged<T, E: From<crate::error::Error>>(
        &self,
        ledger: &Ledger,
        write: impl FnMut(&mut Batch) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.judged_in(ledger, None, write)
    }

    /// [`Gatekeeper::judged`] in a batch for the named streams only ([`Ledger::batch_for`]):
    /// on a shared ledger, writers of other streams are judged in parallel.
    pub fn judged_for<T, E: From<crate::error::Error>>(
        &self,
        ledger: &Ledger,
        streams: &[&str],
        write: impl FnMut(&mut Batch) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.judged_in(ledger, Some(streams), write)
    }

    fn judged_in<T, E: From<crate::error::Error>>(
        &self,
        ledger: &Ledger,
        streams: Option<&[&str]>,
        mut write: impl FnMut(&mut Batch) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        const ROUNDS: usize = 3;
        self.scorer.begin();
        let mut round = 1;
        loop {
            let begun = match streams {
                Some(names) => ledger.batch_for(names),
                None => ledger.batch(),
            };
            let run = begun
                .map_err(E::from)
                .and_then(|mut batch| write(&mut batch).map(|out| (batch, out)));
            let (batch, out) = match run {
                Ok(done) => done,
                Err(e) => {
                    self.scorer.end();
                    return Err(e);
                }
            };
            let missed = self.scorer.missed();
            if missed.is_empty() || round >= ROUNDS {
                self.scorer.end();
                batch.commit()?;
                return Ok(out);
            }
            drop(batch);
            // Nothing more can be asked (the budget is spent): the next run's writes stand.
            round = if self.scorer.consult(&missed) == 0 {
                ROUNDS
            } else {
                round + 1
            };
        }
    }

    /// Appends a summary, gates it on the state after the append, and appends its verdict. A
    /// summary that already has a verdict is returned as it was judged.
    pub fn propose_summary(&self, batch: &mut Batch, summary: Summary) -> Result<Outcome> {
        plainly_named(&summary.clone().into())?;
        if let crate::record::Author::Repair(of) = summary.author {
            // A repair already in the ledger (a ledger's own export ingested again) is met
            // again with its recorded verdict; no caller can write a new one.
            let mut record: Record = summary.clone().into();
            record.canonicalize();
            let rid = Rid::of_bytes(&crate::record::encode(&record));
            if batch.index_of(&rid)?.is_some() {
                return Ok(self.gate_summary(batch, summary)?.0);
            }
            return Err(ErrorKind::Invalid {
                kind: Kind::Summary,
                reason: format!(
                    "its author is cairn (a repair of {of}), which the gates alone write when they refuse a proposal; propose it as self or separate"
                ),
            }
            .into());
        }
        let (mut outcome, hints) = self.gate_summary(batch, summary.clone())?;
        if !outcome.admitted && self.policy.repair {
            outcome.repair = match hints {
                Some(hints) => Some(self.repair(batch, &summary, &outcome, hints)?),
                None => self.recorded_repair(batch, &summary, &outcome)?,
            }
            .map(Box::new);
        }
        Ok(outcome)
    }

    /// Appends a summary (a proposal or a repair), gates it, and appends its verdict. Returns
    /// what a repair needs of the judging too, when it judged (not when the verdict was
    /// recorded before).
    fn gate_summary(
        &self,
        batch: &mut Batch,
        summary: Summary,
    ) -> Result<(Outcome, Option<repair::Hints>)> {
        check_parent(batch, &summary)?;
        let regrounded = if summary.reground {
            self.reground_carried(batch, &summary)?
        } else {
            Vec::new()
        };
        let subject = batch.append_any(summary.clone().into())?;
        if let Some(v) = batch.verdict_of(&subject.rid)? {
            return Ok((recorded(batch, subject, v, regrounded)?, None));
        }
        let mut judged = self.judge_summary(batch, &summary, subject.rid)?;
        let hints = repair::Hints {
            keep: std::mem::take(&mut judged.keep),
            carry: std::mem::take(&mut judged.carry),
        };
        let mut outcome = self.settle(batch, subject, judged, summary.self_score)?;
        outcome.regrounded = regrounded;
        Ok((outcome, Some(hints)))
    }

    /// Re-grounds each claim of a summary that has no witness among its covered spans and was
    /// not re-grounded before; returns those the raw spans entailed.
    fn reground_carried(&self, batch: &mut Batch, summary: &Summary) -> Result<Vec<Rid>> {
        let covers: HashSet<Rid> = summary.covers.iter().copied().collect();
        let mut regrounded = Vec::new();
        for c in &summary.claims {
            let Some(Record::Claim(claim)) = batch.get(c)? else {
                continue;
            };
            let direct = claim.witnesses.iter().any(|w| covers.contains(w));
            if !direct && batch.regrounded(c)?.is_none() {
                if let RegroundOutcome::Regrounded(_) = self.reground(batch, *c)? {
                    regrounded.push(*c);
                }
            }
        }
        Ok(regrounded)
    }

    /// Appends an action, gates it with `irreversible-unverified` and `prohibited-action`, and
    /// appends its verdict. An action already in the ledger is judged again, as a check record
    /// of its own with its own verdict, when its stream's pins or head, the claims it relies on
    /// or the policy changed since its last check; otherwise its last verdict stands and
    /// nothing is appended (SPEC.md section 8.4a).
    ///
    /// An action on a stream the ledger does not hold (no span, summary or pin: a misspelt
    /// name) is refused with [`ErrorKind::NoStream`] before anything is written: with no pins
    /// to break it would otherwise pass, whatever it does (issue 37).
    pub fn propose_action(&self, batch: &mut Batch, action: Action) -> Result<Outcome> {
        plainly_named(&action.clone().into())?;
        let known = batch.stream(&action.stream)? != crate::store::StreamState::default()
            || !batch.pins(&action.stream)?.is_empty();
        if !known {
            return Err(ErrorKind::NoStream(action.stream).into());
        }
        let subject = batch.append_any(action.clone().into())?;
        if subject.new {
            let judged = self.judge_action(&*batch, &action, subject.rid)?;
            return self.settle(batch, subject, judged, None);
        }
        let (last, index) = last_check(&*batch, subject.rid)?;
        if let Some(v) = batch.verdict_of(&last)? {
            let policy = self.policy.hash(self.scorer.id());
            if !changed_since(&*batch, &action, index, &v, policy)? {
                let mut outcome = recorded(batch, subject, v, Vec::new())?;
                outcome.check = (last != subject.rid).then_some(Appended {
                    rid: last,
                    index,
                    new: false,
                });
                return Ok(outcome);
            }
        }
        let at = batch.len()?;
        let check = batch.append_any(Record::Check(Check {
            action: subject.rid,
            at,
        }))?;
        let judged = self.judge_action(&*batch, &action, subject.rid)?;
        let mut outcome = self.settle(batch, check, judged, None)?;
        outcome.subject = subject;
        outcome.check = Some(check);
        Ok(outcome)
    }

    /// Appends the verdict on a subject just judged.
    fn settle(
        &self,
        batch: &mut Batch,
        subject: Appended,
        judged: Judged,
        self_score: Option<u16>,
    ) -> Result<Outcome> {
        let admitted = !judged.findings.iter().any(|f| f.gate.refuses());
        let struck = struck(&judged.findings, &judged.claims);
        for r in judged.rulings {
            batch.append_any(Record::Ruling(r))?;
        }
        let verdict = batch.append_any(Record::Verdict(Verdict {
            subject: subject.rid,
            admitted,
            findings: judged.findings.clone(),
            claims: judged.claims.clone(),
            self_score,
            anchored_score: judged.anchored.map(unit),
            policy: self.policy.hash(self.scorer.id()),
        }))?;
        Ok(Outcome {
            subject,
            verdict: verdict.rid,
            admitted,
            findings: judged.findings,
            claims: judged.claims,
            regrounded: Vec::new(),
            anchored_score: judged.anchored,
            check: None,
            struck,
            repair: None,
        })
    }
}

/// The claims a verdict strikes: those a striking finding names, in the verdict's order.
fn struck(findings: &[Finding], claims: &[ClaimStatus]) -> Vec<Rid> {
    (claims.iter())
        .map(|c| c.claim)
        .filter(|c| findings.iter().any(|f| f.gate.strikes() && f.subject == *c))
        .collect()
}

/// Refuses a new summary whose parent is not its stream's head: depth counts along the real
/// chain, and a refused summary is never a parent. A summary already in the ledger passes,
/// to be answered with its recorded verdict.
fn check_parent(batch: &Batch, summary: &Summary) -> Result<()> {
    let head = batch.head(&summary.stream)?;
    if summary.parent == head {
        return Ok(());
    }
    let mut record: Record = summary.clone().into();
    record.canonicalize();
    let rid = Rid::of_bytes(&crate::record::encode(&record));
    if batch.index_of(&rid)?.is_some() {
        return Ok(());
    }
    Err(ErrorKind::ParentNotHead {
        stream: summary.stream.clone(),
        parent: summary.parent,
        head,
    }
    .into())
}

/// An action's latest check: the action itself, or its newest check record, with its log index.
fn last_check<R: Read>(read: &R, action: Rid) -> Result<(Rid, u64)> {
    let mut last = (action, read.index_of(&action)?.unwrap_or(0));
    for d in read.dependents(&action)? {
        if read.kind_of(&d)? == Some(Kind::Check) {
            if let Some(i) = read.index_of(&d)? {
                if i > last.1 {
                    last = (d, i);
                }
            }
        }
    }
    Ok(last)
}

/// Whether what an action is judged against changed after log index `since`, where its last
/// check stands with verdict `verdict`: a pin of its stream, the stream's head, a summary,
/// judgement or reground naming a claim it relies on, or the policy and scorer.
fn changed_since<R: Read>(
    read: &R,
    action: &Action,
    since: u64,
    verdict: &Rid,
    policy: [u8; 32],
) -> Result<bool> {
    let after = |rid: Option<Rid>| -> Result<bool> {
        Ok(match rid {
            Some(r) => read.index_of(&r)?.is_some_and(|i| i > since),
            None => false,
        })
    };
    if !matches!(read.get(verdict)?, Some(Record::Verdict(v)) if v.policy == policy) {
        return Ok(true);
    }
    for (_, pin) in read.pins(&action.stream)? {
        if after(Some(pin))? {
            return Ok(true);
        }
        // A retirement lifts an item of the pin: the action may be allowed now.
        for (_, (retirement, _)) in read.retirements(&pin)? {
            if after(Some(retirement))? {
                return Ok(true);
            }
        }
    }
    if after(read.head(&action.stream)?)? {
        return Ok(true);
    }
    // A claim relied on changes standing when a summary carries it (admitted or refused), a
    // judgement names it, or it is re-grounded: each links to it.
    for c in &action.relies_on {
        for d in read.dependents(c)? {
            let kind = read.kind_of(&d)?;
            if matches!(kind, Some(Kind::Summary | Kind::Judgement | Kind::Reground))
                && after(Some(d))?
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The outcome recorded for a proposal gated before.
fn recorded(
    batch: &Batch,
    subject: Appended,
    verdict: Rid,
    regrounded: Vec<Rid>,
) -> Result<Outcome> {
    match batch.get(&verdict)? {
        Some(Record::Verdict(v)) => Ok(Outcome {
            subject,
            verdict,
            admitted: v.admitted,
            struck: struck(&v.findings, &v.claims),
            findings: v.findings,
            claims: v.claims,
            regrounded,
            anchored_score: v.anchored_score.map(score_to_unit),
            check: None,
            repair: None,
        }),
        _ => Err(not_a(verdict, Kind::Verdict, batch.kind_of(&verdict)?)),
    }
}
