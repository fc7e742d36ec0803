//! The gates: every compaction and every action is judged, in the write transaction that
//! appends it, on the state after the append. The outcome is a Verdict record, appended
//! whether the proposal is admitted or refused. SPEC.md section 8 gives every rule.

mod policy;
mod sweep;

pub use policy::Policy;
pub use crate::store::classify;
pub use sweep::{sweep, SweepFinding};

use crate::error::{not_a, ErrorKind, Result};
use crate::record::{
    Action, Claim, ClaimStatus, Finding, Kind, Origin, PinClass, Record, Reground, Rid, Role, Span,
    Status, Summary, Verdict, SCORE_ONE,
};
use crate::text::{content, identifiers, is_hedged};
use crate::score::{Scorer, Scores};
use crate::store::{Appended, Batch, Item, Read};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Stable gate names, as used in findings, JSON output and tests.
pub mod names {
    /// No raw-span ancestor through any chain of witnesses.
    pub const UNANCHORED_CLAIM: &str = "unanchored-claim";
    /// Rests on earlier claims, not on a raw span of the summary's source window.
    pub const LAUNDERED_CLAIM: &str = "laundered-claim";
    /// Similar to its best raw span, but not entailed by any.
    pub const FABRICATED_CLAIM: &str = "fabricated-claim";
    /// Too many actionable claims are laundered.
    pub const LAUNDERING_RATE: &str = "laundering-rate";
    /// An identifier not found verbatim in any raw-span ancestor.
    pub const IDENTIFIER_DRIFT: &str = "identifier-drift";
    /// A user-said or tool-output claim supported only by hedged evidence.
    pub const HEDGE_STRIPPED: &str = "hedge-stripped";
    /// An origin tag without an ancestor of that role.
    pub const ORIGIN_MISMATCH: &str = "origin-mismatch";
    /// No origin tag, or an unknown one.
    pub const MISSING_ORIGIN: &str = "missing-origin";
    /// The summary evicts a span that contradicts a claim it keeps.
    pub const EVICTED_DISCONFIRMER: &str = "evicted-disconfirmer";
    /// More than the allowed self-authored re-summarisations since the last grounding.
    pub const DEPTH_EXCEEDED: &str = "depth-exceeded";
    /// Decision-relevant items in the raw spans that no pin covers.
    pub const UNPINNED_REFERENCE: &str = "unpinned-reference";
    /// Pinned items lost by the compaction.
    pub const PIN_LOSS: &str = "pin-loss";
    /// A different pin under an existing (stream, name).
    pub const PIN_CONFLICT: &str = "pin-conflict";
    /// An irreversible action relying on a claim that is not verified.
    pub const IRREVERSIBLE_UNVERIFIED: &str = "irreversible-unverified";
    /// An action matching a pinned prohibition.
    pub const PROHIBITED_ACTION: &str = "prohibited-action";

    /// Every gate name.
    pub const ALL: [&str; 15] = [
        UNANCHORED_CLAIM,
        LAUNDERED_CLAIM,
        FABRICATED_CLAIM,
        LAUNDERING_RATE,
        IDENTIFIER_DRIFT,
        HEDGE_STRIPPED,
        ORIGIN_MISMATCH,
        MISSING_ORIGIN,
        EVICTED_DISCONFIRMER,
        DEPTH_EXCEEDED,
        UNPINNED_REFERENCE,
        PIN_LOSS,
        PIN_CONFLICT,
        IRREVERSIBLE_UNVERIFIED,
        PROHIBITED_ACTION,
    ];

    /// Whether a finding of this gate refuses the proposal (the others only flag it).
    pub fn refuses(gate: &str) -> bool {
        !matches!(
            gate,
            LAUNDERED_CLAIM | HEDGE_STRIPPED | ORIGIN_MISMATCH | DEPTH_EXCEEDED
        )
    }
}

use names::*;

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

fn quote(s: &str) -> String {
    let mut q: String = s.chars().take(60).collect();
    if q.len() < s.len() {
        q.push_str(" ...");
    }
    format!("'{q}'")
}

fn unit(x: f64) -> u16 {
    (x.clamp(0.0, 1.0) * f64::from(SCORE_ONE)).round() as u16
}

/// A claim's raw-span ancestors and the claims on the way (the claim itself first).
pub(crate) type Ancestry = (Vec<(Rid, Span)>, Vec<Rid>);

/// Record lookups with a cache, for one gate run.
pub(crate) struct View<'a, R: Read> {
    pub read: &'a R,
    spans: HashMap<Rid, Option<Span>>,
    claims: HashMap<Rid, Option<Claim>>,
    vocab: HashMap<Rid, Vocab>,
}

/// How many of the most overlapping spans the scorer judges a claim against, beside the
/// claim's own raw ancestors.
pub const CANDIDATES: usize = 4;

/// The word prefixes of a text, for the candidate prefilter.
#[derive(Clone)]
pub(crate) struct Vocab {
    /// The first five characters of each content stem, packed; shared with the scorer's
    /// cached analysis of the text.
    prefixes: std::rc::Rc<crate::score::Prefixes>,
}

impl Vocab {
    pub fn of(text: &str) -> Vocab {
        Vocab {
            prefixes: crate::score::prefix_keys(text),
        }
    }

    /// The share of this text's prefixes found in the other (1 for a text with no words),
    /// when it is at least `share`. Stops as soon as `share` is out of reach.
    pub fn overlap_at_least(&self, other: &Vocab, share: f64) -> Option<f64> {
        let n = self.prefixes.keys().len();
        if n == 0 {
            return (1.0 >= share).then_some(1.0);
        }
        let mut hits = 0usize;
        for (k, p) in self.prefixes.keys().iter().enumerate() {
            if other.prefixes.contains(*p) {
                hits += 1;
            } else if ((hits + n - k - 1) as f64 / n as f64) < share {
                return None;
            }
        }
        let o = hits as f64 / n as f64;
        (o >= share).then_some(o)
    }
}

impl<'a, R: Read> View<'a, R> {
    pub fn new(read: &'a R) -> Self {
        View {
            read,
            spans: HashMap::new(),
            claims: HashMap::new(),
            vocab: HashMap::new(),
        }
    }

    /// The spans the scorer is asked about for a claim: those holding at least `share` of its
    /// words, the [`CANDIDATES`] with the most, the earlier in `spans` among equals (SPEC.md
    /// 8.6).
    pub fn candidates<'s>(
        &mut self,
        claim: &Vocab,
        spans: &'s [(Rid, Span)],
        share: f64,
    ) -> Vec<&'s (Rid, Span)> {
        let vocabs: Vec<Vocab> = spans.iter().map(|(r, sp)| self.vocab(*r, sp)).collect();
        rank_one(claim, &vocabs, share)
            .into_iter()
            .map(|i| &spans[i])
            .collect()
    }

    /// A span's prefixes, worked out once per gate run.
    pub fn vocab(&mut self, rid: Rid, span: &Span) -> Vocab {
        self.vocab
            .entry(rid)
            .or_insert_with(|| Vocab::of(&span.text))
            .clone()
    }

    pub fn span(&mut self, rid: Rid) -> Result<Option<Span>> {
        if let Some(s) = self.spans.get(&rid) {
            return Ok(s.clone());
        }
        let s = match self.read.get_trusted(&rid)? {
            Some(Record::Span(s)) => Some(s),
            _ => None,
        };
        self.spans.insert(rid, s.clone());
        Ok(s)
    }

    pub fn claim(&mut self, rid: Rid) -> Result<Option<Claim>> {
        if let Some(c) = self.claims.get(&rid) {
            return Ok(c.clone());
        }
        let c = match self.read.get_trusted(&rid)? {
            Some(Record::Claim(c)) => Some(c),
            _ => None,
        };
        self.claims.insert(rid, c.clone());
        Ok(c)
    }

    /// The raw spans reachable from a claim through witnesses, and the claims passed through.
    pub fn ancestry(&mut self, claim: Rid) -> Result<Ancestry> {
        let mut spans = Vec::new();
        let mut claims = Vec::new();
        let mut seen = HashSet::new();
        let mut todo = vec![claim];
        while let Some(c) = todo.pop() {
            if !seen.insert(c) {
                continue;
            }
            let Some(rec) = self.claim(c)? else { continue };
            claims.push(c);
            for w in rec.witnesses {
                if let Some(s) = self.span(w)? {
                    if seen.insert(w) {
                        spans.push((w, s));
                    }
                } else {
                    todo.push(w);
                }
            }
        }
        Ok((spans, claims))
    }
}

/// The indices of the spans holding at least `share` of a query's prefixes, the
/// [`CANDIDATES`] with the most, the earlier among equals.
fn rank_one(q: &Vocab, spans: &[Vocab], share: f64) -> Vec<usize> {
    let mut scored: Vec<(f64, usize)> = spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| q.overlap_at_least(s, share).map(|o| (o, i)))
        .collect();
    rank(&mut scored)
}

/// The [`CANDIDATES`] best of (overlap, index) pairs: the most overlap, then the lower index.
fn rank(scored: &mut [(f64, usize)]) -> Vec<usize> {
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.iter().take(CANDIDATES).map(|(_, i)| *i).collect()
}

/// The most distinct prefixes [`rank_many`] puts in its bit table (512 bytes a span).
const RANK_UNION_LIMIT: usize = 4096;

/// [`View::candidates`] for many queries over the same spans at once: for each query, the
/// indices of the spans holding at least `share` of its prefixes, the [`CANDIDATES`] with the
/// most, in order among equals. Each span's prefixes are merged once with the union of the
/// queries', instead of being searched once per query.
pub(crate) fn rank_many(queries: &[&Vocab], spans: &[Vocab], share: f64) -> Vec<Vec<usize>> {
    let mut union: Vec<u128> = queries
        .iter()
        .flat_map(|q| q.prefixes.keys().iter().copied())
        .collect();
    union.sort_unstable();
    union.dedup();
    if union.len() > RANK_UNION_LIMIT {
        // Queries with that many words would make the bit table large: rank one at a time.
        return queries.iter().map(|q| rank_one(q, spans, share)).collect();
    }
    let words = union.len().div_ceil(64).max(1);
    // Which of the union's prefixes each span holds, as bits.
    let mut held = vec![0u64; words * spans.len()];
    for (s, v) in spans.iter().enumerate() {
        let bits = &mut held[s * words..(s + 1) * words];
        let (keys, mut j) = (v.prefixes.keys(), 0usize);
        for (u, k) in union.iter().enumerate() {
            while j < keys.len() && keys[j] < *k {
                j += 1;
            }
            if j == keys.len() {
                break;
            }
            if keys[j] == *k {
                bits[u / 64] |= 1 << (u % 64);
            }
        }
    }
    queries
        .iter()
        .map(|q| {
            let keys = q.prefixes.keys();
            let n = keys.len();
            let mut mask = vec![0u64; words];
            for k in keys {
                if let Ok(u) = union.binary_search(k) {
                    mask[u / 64] |= 1 << (u % 64);
                }
            }
            let mut scored: Vec<(f64, usize)> = Vec::new();
            for s in 0..spans.len() {
                let o = if n == 0 {
                    1.0
                } else {
                    let bits = &held[s * words..(s + 1) * words];
                    let hits: u32 = bits
                        .iter()
                        .zip(&mask)
                        .map(|(b, m)| (b & m).count_ones())
                        .sum();
                    f64::from(hits) / n as f64
                };
                if o >= share {
                    scored.push((o, s));
                }
            }
            rank(&mut scored)
        })
        .collect()
}

const CUES: &[&str] = &[
    "run", "ever", "please", "use", "again", "any", "must", "avoid",
];

/// Verbs that do the same thing to a system, for matching actions against prohibitions.
const SAME_DEED: &[&[&str]] = &[
    &["bump", "upgrade", "update", "install", "raise"],
    &[
        "drop", "delete", "remove", "truncate", "rm", "purge", "wipe",
    ],
    &["push", "deploy", "publish", "release", "ship"],
    &["restart", "reboot", "kill", "stop"],
];

fn key_words(item: &str) -> Vec<String> {
    content(item)
        .into_iter()
        .filter(|w| !CUES.contains(&w.as_str()))
        .collect()
}

fn meets(want: &str, have: &[String]) -> bool {
    let same = |h: &str| {
        h == want || (want.len() >= 4 && h.len() >= 4 && h.chars().take(4).eq(want.chars().take(4)))
    };
    have.iter().any(|h| {
        same(h)
            || SAME_DEED
                .iter()
                .any(|g| g.contains(&want) && g.contains(&h.as_str()))
    })
}

/// The share of `want` met in `have` (0 when `want` is empty).
fn share_met(want: &[String], have: &[String]) -> f64 {
    if want.is_empty() {
        return 0.0;
    }
    want.iter().filter(|w| meets(w, have)).count() as f64 / want.len() as f64
}

/// Whether a pin item's words are mostly present in a text.
pub(crate) fn mostly_contains(item: &str, text: &str, share: f64) -> bool {
    let want = key_words(item);
    !want.is_empty() && share_met(&want, &content(text)) >= share
}

/// Whether an action does what a prohibition forbids: the forbidden deed (its first key word,
/// or a verb that does the same) is in the action, and most of the prohibition's words are.
pub(crate) fn prohibits(prohibition: &str, action: &str, share: f64) -> bool {
    let want = key_words(prohibition);
    let have: Vec<String> = content(action);
    want.first().is_some_and(|deed| meets(deed, &have))
        && mostly_contains(prohibition, action, share)
}

/// A summary's covered spans, and the indices of those most like the claim being judged.
#[derive(Clone, Copy)]
struct Cover<'a> {
    spans: &'a [(Rid, Span)],
    near: &'a [usize],
}

struct ClaimCheck {
    status: Status,
    laundered: bool,
}

impl Gatekeeper {
    fn score(&self, claim: &str, source: &str) -> Result<Scores> {
        self.scorer
            .score(claim, source)
            .map_err(|e| ErrorKind::Score(e).into())
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

    fn best(&self, claim: &str, spans: &[(Rid, Span)]) -> Result<(f64, f64, Option<usize>)> {
        let (mut ent, mut sim, mut at) = (0.0f64, 0.0f64, None);
        for (i, (_, s)) in spans.iter().enumerate() {
            let sc = self.score(claim, &s.text)?;
            if sc.entailment > ent {
                ent = sc.entailment;
            }
            if sc.similarity > sim {
                sim = sc.similarity;
                at = Some(i);
            }
        }
        Ok((ent, sim, at))
    }

    /// Re-checks a claim against its raw-span ancestors (kept after eviction). When they entail
    /// it, appends a Reground record, which makes the claim verified and resets its depth.
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
        let drift: Vec<String> = identifiers(&c.text)
            .into_iter()
            .filter(|i| !joined.contains(&i.text))
            .map(|i| i.text)
            .collect();
        let mut entailing = Vec::new();
        let mut best = 0.0f64;
        for (rid, s) in &spans {
            let e = self.score(&c.text, &s.text)?.entailment;
            best = best.max(e);
            if e >= self.policy.raw_entailment {
                entailing.push(*rid);
            }
        }
        let whole = self.score(&c.text, &joined)?.entailment;
        best = best.max(whole);
        if entailing.is_empty() && whole >= self.policy.raw_entailment {
            entailing = spans.iter().map(|(r, _)| *r).collect();
        }
        if !drift.is_empty() || entailing.is_empty() {
            let reason = if drift.is_empty() {
                format!(
                    "its raw-span ancestors do not entail claim {} (best entailment {best:.2}, below {:.2})",
                    quote(&c.text),
                    self.policy.raw_entailment
                )
            } else {
                format!(
                    "claim {} states {}, which none of its raw-span ancestors contains",
                    quote(&c.text),
                    drift.join(", ")
                )
            };
            return Ok(RegroundOutcome::NotEntailed { best, reason });
        }
        let appended = batch.append(Reground {
            claim,
            spans: entailing,
            score: unit(best),
        })?;
        Ok(RegroundOutcome::Regrounded(appended))
    }

    /// Appends a summary, gates it on the state after the append, and appends its verdict. A
    /// summary that already has a verdict is returned as it was judged.
    pub fn propose_summary(&self, batch: &mut Batch, summary: Summary) -> Result<Outcome> {
        let mut regrounded = Vec::new();
        if summary.reground {
            let covers: HashSet<Rid> = summary.covers.iter().copied().collect();
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
        }
        let subject = batch.append(summary.clone())?;
        if let Some(v) = batch.verdict_of(&subject.rid)? {
            return recorded(batch, subject, v, regrounded);
        }
        let (findings, claims, anchored) = self.judge_summary(batch, &summary, subject.rid)?;
        self.settle(
            batch,
            subject,
            findings,
            claims,
            summary.self_score,
            anchored,
            regrounded,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        batch: &mut Batch,
        subject: Appended,
        findings: Vec<Finding>,
        claims: Vec<ClaimStatus>,
        self_score: Option<u16>,
        anchored: Option<f64>,
        regrounded: Vec<Rid>,
    ) -> Result<Outcome> {
        let admitted = !findings.iter().any(|f| names::refuses(&f.gate));
        let verdict = batch.append(Verdict {
            subject: subject.rid,
            admitted,
            findings: findings.clone(),
            claims: claims.clone(),
            self_score,
            anchored_score: anchored.map(unit),
            policy: self.policy.hash(self.scorer.id()),
        })?;
        Ok(Outcome {
            subject,
            verdict: verdict.rid,
            admitted,
            findings,
            claims,
            regrounded,
            anchored_score: anchored,
        })
    }

    fn judge_summary(
        &self,
        batch: &Batch,
        s: &Summary,
        rid: Rid,
    ) -> Result<(Vec<Finding>, Vec<ClaimStatus>, Option<f64>)> {
        let mut view = View::new(batch);
        let mut findings = Vec::new();
        let mut statuses = Vec::new();
        let evicts: HashSet<Rid> = s.evicts.iter().copied().collect();
        let mut cover_spans = Vec::new();
        for c in &s.covers {
            if let Some(sp) = view.span(*c)? {
                cover_spans.push((*c, sp));
            }
        }
        let (mut actionable, mut laundered_actionable) = (0usize, 0usize);
        let mut claim_texts = Vec::new();
        for c in &s.claims {
            if let Some(claim) = view.claim(*c)? {
                claim_texts.push((*c, claim));
            }
        }
        // The covered spans most like each claim, found for all claims at once.
        let cover_vocabs: Vec<Vocab> = cover_spans
            .iter()
            .map(|(r, sp)| view.vocab(*r, sp))
            .collect();
        let claim_vocabs: Vec<Vocab> = claim_texts
            .iter()
            .map(|(_, c)| Vocab::of(&c.text))
            .collect();
        let queries: Vec<&Vocab> = claim_vocabs.iter().collect();
        let ranked = rank_many(&queries, &cover_vocabs, self.prefilter_share());
        for (((c, claim), vocab), near) in claim_texts.iter().zip(&claim_vocabs).zip(&ranked) {
            let cover = Cover {
                spans: &cover_spans,
                near,
            };
            let check =
                self.judge_claim(&mut view, *c, claim, vocab, cover, &evicts, &mut findings)?;
            if claim.actionable {
                actionable += 1;
                laundered_actionable += usize::from(check.laundered);
            }
            statuses.push(ClaimStatus {
                claim: *c,
                status: check.status,
            });
        }
        // laundering-rate, scaled down when the budget shrinks against the parent's.
        let mut threshold = self.policy.laundering_rate;
        let mut scaled = String::new();
        if let Some(Record::Summary(p)) = match s.parent {
            Some(p) => batch.get(&p)?,
            None => None,
        } {
            if p.budget > 0 && s.budget < p.budget {
                threshold *= s.budget as f64 / p.budget as f64;
                scaled = format!(" (scaled by budget {}/{})", s.budget, p.budget);
            }
        }
        if actionable > 0 {
            let rate = laundered_actionable as f64 / actionable as f64;
            if rate > threshold {
                findings.push(finding(LAUNDERING_RATE, rid, format!(
                    "{laundered_actionable} of {actionable} actionable claims are laundered ({rate:.2}), above the threshold {threshold:.3}{scaled}; re-derive them from raw spans or re-ground them"
                )));
            }
        }
        if let Some(f) = batch.facts(&rid)? {
            let depth = f.depth.unwrap_or(0);
            if depth > self.policy.max_depth {
                findings.push(finding(DEPTH_EXCEEDED, rid, format!(
                    "this is self-authored summary {depth} in a row since the last grounding, more than {}; re-ground against the raw spans or use a separate pass",
                    self.policy.max_depth
                )));
            }
        }
        let anchored = self.reference(&mut view, s, rid, &evicts, &claim_texts, &mut findings)?;
        Ok((findings, statuses, anchored))
    }

    #[allow(clippy::too_many_arguments)]
    fn judge_claim<R: Read>(
        &self,
        view: &mut View<'_, R>,
        rid: Rid,
        claim: &Claim,
        vocab: &Vocab,
        cover: Cover<'_>,
        evicts: &HashSet<Rid>,
        findings: &mut Vec<Finding>,
    ) -> Result<ClaimCheck> {
        let cover_spans = cover.spans;
        let q = quote(&claim.text);
        let anchored = view.read.facts(&rid)?.is_some_and(|f| f.anchored);
        let regrounded = view.read.regrounded(&rid)?.is_some();
        match &claim.origin {
            Origin::Missing => findings.push(finding(MISSING_ORIGIN, rid, format!(
                "claim {q} has no origin tag; tag it user-said, tool-output, hedged or inferred"
            ))),
            Origin::Other(t) => findings.push(finding(MISSING_ORIGIN, rid, format!(
                "claim {q} has the unknown origin tag '{t}'; use user-said, tool-output, hedged or inferred"
            ))),
            _ => {}
        }
        if !anchored {
            findings.push(finding(UNANCHORED_CLAIM, rid, format!(
                "claim {q} has no raw-span ancestor through any chain of witnesses; cite the spans it comes from"
            )));
        }
        let (ancestors, carried) = view.ancestry(rid)?;
        let ancestor_text: Vec<&str> = ancestors.iter().map(|(_, s)| s.text.as_str()).collect();
        let drift: Vec<String> = identifiers(&claim.text)
            .into_iter()
            .filter(|i| !ancestor_text.iter().any(|t| t.contains(&i.text)))
            .map(|i| i.text)
            .collect();
        if !drift.is_empty() {
            findings.push(finding(IDENTIFIER_DRIFT, rid, format!(
                "claim {q} states {}, which no raw-span ancestor contains verbatim; copy identifiers, never paraphrase them",
                drift.join(", ")
            )));
        }
        let mut weak = false;
        let wanted = match claim.origin {
            Origin::UserSaid => Some((Role::User, "user-said", "user")),
            Origin::ToolOutput => Some((Role::Tool, "tool-output", "tool")),
            _ => None,
        };
        if let Some((role, tag, who)) = wanted {
            if anchored && !ancestors.iter().any(|(_, s)| s.role == role) {
                weak = true;
                findings.push(finding(
                    ORIGIN_MISMATCH,
                    rid,
                    format!(
                    "claim {q} is tagged {tag}, but no {who} span is among its raw-span ancestors"
                ),
                ));
            }
            let mut support = Vec::new();
            for w in &claim.witnesses {
                if let Some(sp) = view.span(*w)? {
                    support.push((
                        is_hedged(&sp.text),
                        format!("turn {}: {}", sp.turn, quote(&sp.text)),
                    ));
                } else if let Some(c) = view.claim(*w)? {
                    let hedged = matches!(c.origin, Origin::Hedged | Origin::Inferred);
                    support.push((hedged, format!("claim {}", quote(&c.text))));
                }
            }
            if !support.is_empty() && support.iter().all(|(h, _)| *h) {
                weak = true;
                findings.push(finding(HEDGE_STRIPPED, rid, format!(
                    "claim {q} is tagged {tag}, but its only support is hedged ({}); keep the hedge",
                    support.iter().map(|(_, d)| d.as_str()).collect::<Vec<_>>().join("; ")
                )));
            }
        }
        // Fabrication: similar to the best raw span, but not entailed by any. The raw spans
        // judged are the claim's own ancestors and the covered spans most like it.
        let mut raw: Vec<(Rid, Span)> = ancestors.clone();
        for c in cover.near.iter().map(|i| &cover_spans[*i]) {
            if !raw.iter().any(|(r, _)| *r == c.0) {
                raw.push(c.clone());
            }
        }
        let (ent, sim, at) = self.best(&claim.text, &raw)?;
        let fabricated = anchored
            && !regrounded
            && sim >= self.policy.fabrication_similarity
            && ent < self.policy.raw_entailment;
        if fabricated {
            let near = at
                .map(|i| format!("turn {}", raw[i].1.turn))
                .unwrap_or_default();
            findings.push(finding(FABRICATED_CLAIM, rid, format!(
                "claim {q} resembles {near} (similarity {sim:.2}) but no raw span entails it (best entailment {ent:.2}, below {:.2})",
                self.policy.raw_entailment
            )));
        }
        let direct: Vec<&(Rid, Span)> = cover_spans
            .iter()
            .filter(|(r, _)| claim.witnesses.contains(r))
            .collect();
        let laundered = anchored && !regrounded && direct.is_empty();
        if laundered {
            findings.push(finding(LAUNDERED_CLAIM, rid, format!(
                "claim {q} rests on earlier claims, not on a raw span of this summary's source window; it stays unverified until re-grounded"
            )));
        }
        let mut entailed = false;
        for (_, sp) in &direct {
            entailed |= self.score(&claim.text, &sp.text)?.entailment >= self.policy.raw_entailment;
        }
        // Disconfirmers this summary evicts: recorded judgements on the claim or on any claim
        // it carries forward, and spans the scorer finds contradicting it.
        let mut disconfirmers = BTreeSet::new();
        for c in &carried {
            for sp in view.read.contradicting_spans(c)? {
                if evicts.contains(&sp) {
                    disconfirmers.insert((sp, "a recorded judgement"));
                }
            }
        }
        let mut evicted = Vec::new();
        for sp in evicts {
            if !disconfirmers.iter().any(|(r, _)| r == sp) {
                if let Some(span) = view.span(*sp)? {
                    evicted.push((*sp, span));
                }
            }
        }
        evicted.sort_by_key(|(r, _)| *r);
        for (sp, span) in view.candidates(vocab, &evicted, crate::score::TOPIC) {
            if self.score(&claim.text, &span.text)?.contradiction >= self.policy.contradiction {
                disconfirmers.insert((*sp, "the scorer"));
            }
        }
        for (sp, by) in disconfirmers {
            let what = match view.span(sp)? {
                Some(s) => format!("turn {} ({})", s.turn, quote(&s.text)),
                None => sp.to_string(),
            };
            findings.push(finding(EVICTED_DISCONFIRMER, rid, format!(
                "the summary evicts {what}, which contradicts claim {q} that it keeps (found by {by}); a summary may not evict its own disconfirmers"
            )));
        }
        let status = if !anchored {
            Status::Unanchored
        } else if fabricated {
            Status::Fabricated
        } else if regrounded || (entailed && !weak && drift.is_empty()) {
            Status::Verified
        } else {
            Status::Unverified
        };
        Ok(ClaimCheck { status, laundered })
    }

    /// `unpinned-reference` and `pin-loss`; returns the reference-anchored fidelity.
    fn reference<R: Read>(
        &self,
        view: &mut View<'_, R>,
        s: &Summary,
        rid: Rid,
        evicts: &HashSet<Rid>,
        claims: &[(Rid, Claim)],
        findings: &mut Vec<Finding>,
    ) -> Result<Option<f64>> {
        let pins = pinned_items(view.read, &s.stream)?;
        let items = unpinned(view.read, &s.stream, &pins)?;
        if !items.is_empty() {
            findings.push(finding(
                UNPINNED_REFERENCE,
                rid,
                unpinned_message(&s.stream, &items),
            ));
        }
        if pins.is_empty() {
            return Ok(None);
        }
        // The window after this summary: spans not evicted before, and not evicted now.
        let window: Vec<Rid> = view
            .read
            .unevicted_spans(&s.stream)?
            .into_iter()
            .filter(|r| !evicts.contains(r))
            .collect();
        // Claims as texts to rank by overlap, in the shape `candidates` takes.
        let claim_spans: Vec<(Rid, Span)> = claims
            .iter()
            .map(|(r, c)| {
                let text = c.text.clone();
                (
                    *r,
                    Span {
                        stream: c.stream.clone(),
                        turn: 0,
                        role: Role::Assistant,
                        tool: None,
                        text,
                    },
                )
            })
            .collect();
        let mut ancestors: Vec<(Rid, HashSet<Rid>)> = Vec::new();
        for (c, _) in claims {
            let (spans, _) = view.ancestry(*c)?;
            ancestors.push((*c, spans.into_iter().map(|(r, _)| r).collect()));
        }
        let window_set: HashSet<Rid> = window.iter().copied().collect();
        let share = self.prefilter_share();
        // Items no claim keeps, to look for in the window's spans all at once.
        let mut pending = Vec::new();
        for (pin_name, item) in &pins {
            if item.witness.is_some_and(|w| window_set.contains(&w)) {
                continue;
            }
            // A claim derived from the span the item was pinned from keeps the item unless it
            // contradicts it.
            let mut kept = false;
            for ((_, claim), (_, anc)) in claims.iter().zip(&ancestors) {
                if item.witness.is_some_and(|w| anc.contains(&w)) {
                    kept = self.score(&claim.text, &item.text)?.contradiction
                        < self.policy.contradiction;
                    if kept {
                        break;
                    }
                }
            }
            // Otherwise a claim or a span left in the window must entail it.
            let item_vocab = Vocab::of(&item.text);
            if !kept {
                for (_, sp) in view.candidates(&item_vocab, &claim_spans, share) {
                    if self.score(&item.text, &sp.text)?.entailment >= self.policy.raw_entailment {
                        kept = true;
                        break;
                    }
                }
            }
            if !kept {
                pending.push((pin_name, item, item_vocab));
            }
        }
        let mut lost = Vec::new();
        if !pending.is_empty() {
            let mut spans = Vec::new();
            for w in &window {
                if let Some(Record::Span(sp)) = view.read.get_trusted(w)? {
                    spans.push((*w, sp));
                }
            }
            let vocabs: Vec<Vocab> = spans.iter().map(|(r, sp)| view.vocab(*r, sp)).collect();
            let queries: Vec<&Vocab> = pending.iter().map(|(_, _, v)| v).collect();
            let ranked = rank_many(&queries, &vocabs, share);
            for ((pin_name, item, _), found) in pending.iter().zip(ranked) {
                let mut kept = false;
                for i in found {
                    if self.score(&item.text, &spans[i].1.text)?.entailment
                        >= self.policy.raw_entailment
                    {
                        kept = true;
                        break;
                    }
                }
                if !kept {
                    lost.push(((*pin_name).clone(), (*item).clone()));
                }
            }
        }
        let fidelity = 1.0 - lost.len() as f64 / pins.len() as f64;
        let prohibition_lost = lost.iter().any(|(_, i)| i.class == PinClass::Prohibition);
        if fidelity < self.policy.fidelity || prohibition_lost {
            let names: Vec<String> = lost
                .iter()
                .map(|(n, i)| format!("{} {} (pin {n})", i.class.name(), quote(&i.text)))
                .collect();
            findings.push(finding(PIN_LOSS, rid, format!(
                "cannot compact stream {}: pin-loss, reference-anchored fidelity {fidelity:.2} (threshold {:.2}){}; lost: {}",
                s.stream,
                self.policy.fidelity,
                if prohibition_lost { ", and a pinned prohibition is lost" } else { "" },
                names.join(", ")
            )));
        }
        Ok(Some(fidelity))
    }

    /// Appends an action, gates it with `irreversible-unverified` and `prohibited-action`, and
    /// appends its verdict.
    pub fn propose_action(&self, batch: &mut Batch, action: Action) -> Result<Outcome> {
        let subject = batch.append(action.clone())?;
        if let Some(v) = batch.verdict_of(&subject.rid)? {
            return recorded(batch, subject, v, Vec::new());
        }
        let mut findings = Vec::new();
        let mut statuses = Vec::new();
        let mut view = View::new(&*batch);
        let head_depth = match batch.head(&action.stream)? {
            Some(h) => batch.facts(&h)?.and_then(|f| f.depth).unwrap_or(0),
            None => 0,
        };
        let head_claims: HashSet<Rid> = match batch.head(&action.stream)? {
            Some(h) => match batch.get(&h)? {
                Some(Record::Summary(s)) => s.claims.into_iter().collect(),
                _ => HashSet::new(),
            },
            None => HashSet::new(),
        };
        for c in &action.relies_on {
            let Some(claim) = view.claim(*c)? else {
                continue;
            };
            let status = claim_status(self, &mut view, *c, &claim)?;
            statuses.push(ClaimStatus { claim: *c, status });
            if !action.irreversible {
                continue;
            }
            let depth = view.read.facts(c)?.and_then(|f| f.depth);
            let chain = if head_claims.contains(c) {
                head_depth
            } else {
                0
            };
            let mut why = Vec::new();
            if status != Status::Verified {
                why.push(format!("it is {}", status.name()));
            }
            if claim.origin == Origin::Hedged {
                why.push("it is hedged".to_string());
            }
            if depth.is_some_and(|d| d > self.policy.max_depth) {
                why.push(format!("it is {} claims deep", depth.unwrap_or(0)));
            }
            if chain > self.policy.max_depth {
                why.push(format!(
                    "it is carried by a chain of {chain} self-authored summaries"
                ));
            }
            if !why.is_empty() {
                findings.push(finding(
                    IRREVERSIBLE_UNVERIFIED,
                    *c,
                    format!(
                    "irreversible action {} relies on claim {}, and {}; re-ground the claim first",
                    quote(&action.text),
                    quote(&claim.text),
                    why.join(" and ")
                ),
                ));
            }
        }
        for (pin_name, item) in pinned_items(view.read, &action.stream)? {
            if item.class == PinClass::Prohibition
                && prohibits(&item.text, &action.text, self.policy.prohibition_match)
            {
                findings.push(finding(
                    PROHIBITED_ACTION,
                    subject.rid,
                    format!(
                        "action {} matches pinned prohibition {} (pin {pin_name}); refused",
                        quote(&action.text),
                        quote(&item.text)
                    ),
                ));
            }
        }
        drop(view);
        self.settle(batch, subject, findings, statuses, None, None, Vec::new())
    }
}

fn finding(gate: &str, subject: Rid, detail: String) -> Finding {
    Finding {
        gate: gate.to_string(),
        subject,
        detail,
    }
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
            findings: v.findings,
            claims: v.claims,
            regrounded,
            anchored_score: v.anchored_score.map(crate::record::score_to_unit),
        }),
        _ => Err(not_a(verdict, Kind::Verdict, batch.kind_of(&verdict)?)),
    }
}

/// A claim's status outside a summary gate: the latest recorded one, else computed from its
/// direct span witnesses.
pub(crate) fn claim_status<R: Read>(
    gate: &Gatekeeper,
    view: &mut View<'_, R>,
    rid: Rid,
    claim: &Claim,
) -> Result<Status> {
    if view.read.regrounded(&rid)?.is_some() {
        return Ok(Status::Verified);
    }
    if let Some(s) = view.read.status(&rid)? {
        return Ok(s);
    }
    if !view.read.facts(&rid)?.is_some_and(|f| f.anchored) {
        return Ok(Status::Unanchored);
    }
    for w in &claim.witnesses {
        if let Some(sp) = view.span(*w)? {
            if !is_hedged(&sp.text)
                && gate.score(&claim.text, &sp.text)?.entailment >= gate.policy.raw_entailment
            {
                return Ok(Status::Verified);
            }
        }
    }
    Ok(Status::Unverified)
}

/// A claim's status from the records alone, without scoring: re-grounded claims are
/// verified, gated claims keep their latest recorded status, claims with no raw-span ancestor
/// are unanchored, and any other claim no gate judged is unverified.
pub fn claim_status_plain<R: Read>(read: &R, rid: Rid) -> Result<Status> {
    status_given(read, &rid, read.regrounded(&rid)?.is_some())
}

/// [`claim_status_plain`] for a caller that already knows whether the claim was re-grounded.
pub(crate) fn status_given<R: Read>(read: &R, rid: &Rid, regrounded: bool) -> Result<Status> {
    if regrounded {
        return Ok(Status::Verified);
    }
    if let Some(s) = read.status(rid)? {
        return Ok(s);
    }
    Ok(if read.facts(rid)?.is_some_and(|f| f.anchored) {
        Status::Unverified
    } else {
        Status::Unanchored
    })
}

/// Every pinned item of a stream, with its pin's name.
pub fn pinned_items<R: Read>(
    read: &R,
    stream: &str,
) -> Result<Vec<(String, crate::record::PinItem)>> {
    let mut out = Vec::new();
    for (name, rid) in read.pins(stream)? {
        if let Some(Record::Pin(p)) = read.get(&rid)? {
            out.extend(p.items.into_iter().map(|i| (name.clone(), i)));
        }
    }
    Ok(out)
}

/// The classifier's items in a stream's raw spans that no pin covers: a pin item covers an
/// item when it cites the same span, or when most of its words are in the item's text.
pub(crate) fn unpinned<R: Read>(
    read: &R,
    stream: &str,
    pins: &[(String, crate::record::PinItem)],
) -> Result<Vec<Item>> {
    let witnessed: HashSet<Rid> = pins.iter().filter_map(|(_, p)| p.witness).collect();
    let pin_words: Vec<Vec<String>> = pins.iter().map(|(_, p)| key_words(&p.text)).collect();
    let mut out = Vec::new();
    for item in read.items(stream)? {
        if witnessed.contains(&item.span) {
            continue;
        }
        let have = content(&item.text);
        if !pin_words.iter().any(|want| share_met(want, &have) >= 0.5) {
            out.push(item);
        }
    }
    Ok(out)
}

/// A pin of classifier items, each witnessed by the span it was found in: what
/// `cairn pin --auto` writes.
pub fn pin_of(stream: &str, name: &str, items: &[Item]) -> crate::record::Pin {
    crate::record::Pin {
        stream: stream.to_string(),
        name: name.to_string(),
        items: items
            .iter()
            .map(|i| crate::record::PinItem {
                class: i.class,
                text: i.text.clone(),
                witness: Some(i.span),
            })
            .collect(),
    }
}

/// The decision-relevant items of a stream that no pin covers, from a committed snapshot or a
/// batch: what `cairn pin --auto` pins.
pub fn unpinned_items<R: Read>(read: &R, stream: &str) -> Result<Vec<Item>> {
    let pins = pinned_items(read, stream)?;
    unpinned(read, stream, &pins)
}

pub(crate) fn unpinned_message(stream: &str, items: &[Item]) -> String {
    let shown: Vec<String> = items
        .iter()
        .take(5)
        .map(|i| format!("turn {}: {} {}", i.turn, i.class.name(), quote(&i.text)))
        .collect();
    format!(
        "cannot compact stream {stream}: unpinned reference, {} decision-relevant item{} ({}{}); pin them (cairn pin --auto {stream} NAME) or extend the budget",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
        shown.join("; "),
        if items.len() > 5 { "; ..." } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "staging",
        "database",
        "port",
        "upgrade",
        "libfoo",
        "version",
        "never",
        "drop",
        "table",
        "deploy",
        "release",
        "config",
        "timeout",
        "retry",
        "cache",
        "index",
        "schema",
        "backup",
        "restore",
        "stream",
        "ledger",
        "summary",
        "claim",
        "witness",
        "Überprüfung",
        "naïve",
    ];

    fn text(picks: &[usize]) -> String {
        picks
            .iter()
            .map(|i| WORDS[i % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }

    proptest! {
        /// Ranking many queries at once picks the same spans, in the same order, as ranking
        /// each query alone.
        #[test]
        fn rank_many_matches_one_query_at_a_time(
            queries in prop::collection::vec(prop::collection::vec(0usize..40, 0..8), 1..6),
            spans in prop::collection::vec(prop::collection::vec(0usize..40, 0..30), 0..12),
            share in prop::sample::select(vec![0.0, 0.2, 0.3, 0.5, 1.0]),
        ) {
            let queries: Vec<Vocab> = queries.iter().map(|q| Vocab::of(&text(q))).collect();
            let spans: Vec<Vocab> = spans.iter().map(|s| Vocab::of(&text(s))).collect();
            let refs: Vec<&Vocab> = queries.iter().collect();
            let many = rank_many(&refs, &spans, share);
            for (q, got) in queries.iter().zip(&many) {
                prop_assert_eq!(got, &rank_one(q, &spans, share));
            }
        }
    }

    /// Queries with more distinct prefixes than the bit table takes are ranked one at a time,
    /// with the same answer.
    #[test]
    fn rank_many_beyond_its_bit_table_matches_one_query_at_a_time() {
        let big: String = (0..RANK_UNION_LIMIT + 100)
            .map(|i| format!("w{i:04} "))
            .collect();
        let queries = [Vocab::of(&big), Vocab::of("staging database port")];
        let spans: Vec<Vocab> = ["w0001 w0002 staging", "database port w0003", "", "nothing"]
            .iter()
            .map(|t| Vocab::of(t))
            .collect();
        let refs: Vec<&Vocab> = queries.iter().collect();
        let many = rank_many(&refs, &spans, 0.0);
        assert_eq!(many[0], rank_one(&queries[0], &spans, 0.0));
        assert_eq!(many[1], rank_one(&queries[1], &spans, 0.0));
        assert_eq!(many[1], vec![1, 0, 2, 3]);
    }

    /// The early exit of `overlap_at_least` never drops a span whose full overlap reaches the
    /// share, and the overlap it returns is the full one.
    #[test]
    fn overlap_at_least_is_the_full_overlap_above_the_share() {
        let q = Vocab::of("staging database port upgrade libfoo");
        let s = Vocab::of("the staging database listens on another port");
        assert_eq!(q.overlap_at_least(&s, 0.6), Some(0.6));
        assert_eq!(q.overlap_at_least(&s, 0.61), None);
        let empty = Vocab::of("");
        assert_eq!(empty.overlap_at_least(&s, 1.0), Some(1.0));
    }
}
