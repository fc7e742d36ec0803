//! Prose compactions (SPEC.md section 8.8): a summary written as text becomes claims, one per
//! sentence or list item, each with the witnesses found for it among what the summary covers,
//! and an origin inferred from those witnesses and its own hedges. The claims are ordinary
//! records: every gate then judges them as it judges claims a runtime wrote itself.

use super::{Gatekeeper, Outcome};
use crate::error::Result;
use crate::record::{Claim, Judgement, Origin, Record, Relation, Rid, Role, Summary};
use crate::store::{Appended, Batch, Read};
use crate::text::{self, terms};

pub use crate::text::prose::claims;

/// How many candidates, best by recall's ranking, the scorer reads for each sentence.
pub const RERANKED: usize = 8;

/// The most witnesses a derived claim cites.
pub const MAX_WITNESSES: usize = 3;

/// A candidate witness of a sentence: a covered span or an earlier claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The record.
    pub rid: Rid,
    /// For a span: its turn and role; `None` for a claim.
    pub turn: Option<(u64, Role)>,
    /// Its text.
    pub text: String,
}

/// One witness found for a sentence, with how it ranked.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The candidate's position in the list handed to [`rank`].
    pub candidate: usize,
    /// Its BM25 score against the sentence, with the recall index's term weights.
    pub bm25: f64,
    /// The scorer's entailment of the sentence by it; `None` when the scorer did not read it
    /// (ranked past [`RERANKED`] by BM25).
    pub entailment: Option<f64>,
    /// Whether it contradicts the sentence: a scorer contradiction at or above the policy's,
    /// with a clash of the two texts (SPEC.md section 8.1).
    pub contradicts: bool,
}

/// A witness found for a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    /// The span or earlier claim.
    pub rid: Rid,
    /// For a span: its turn.
    pub turn: Option<u64>,
    /// The scorer's entailment of the sentence by it.
    pub entailment: f64,
    /// Whether it is cited as the span the sentence speaks of and contradicts (when nothing
    /// supports the sentence): its judgement is then `contradicts`.
    pub contradicts: bool,
    /// Whether it is cited only as the span the sentence is about (when nothing supports or
    /// contradicts it): its judgement is then `neutral`, and the claim stays unverified.
    pub about: bool,
}

/// A sentence of a prose compaction, made a claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// The sentence, as the claim's text.
    pub sentence: String,
    /// The origin inferred: hedged when the sentence hedges; else from the best witness's
    /// role (user or system: user-said; tool: tool-output; the assistant or an earlier claim:
    /// inferred); inferred when nothing supports it.
    pub origin: Origin,
    /// The witnesses cited, best first: the candidates whose entailment reaches the policy's
    /// `raw_entailment`, at most [`MAX_WITNESSES`]. Empty: the claim is unanchored.
    pub witnesses: Vec<Witness>,
    /// The best candidates, ranked, whether cited or not: what the verdict shows.
    pub ranked: Vec<Ranked>,
    /// Why, in a sentence.
    pub why: String,
    /// For a sentence no candidate places: the span nearest it by BM25, judged `neutral` and
    /// not cited. The claim stays unanchored; the recorded judgement shows the finder looked,
    /// and `unanchored-claim` does not strike it (SPEC.md 8.1, 8.8).
    pub nearest: Option<Witness>,
}

/// The candidates of a prose compaction of `stream`: the spans it covers; or, when it names
/// none, the stream's spans still in the window, then the claims of the stream's head summary,
/// which it may carry forward. (A compaction that names what it covers is judged on that alone,
/// so the same line derives the same claims however the head moved since.)
pub fn candidates<R: Read>(read: &R, stream: &str, covers: &[Rid]) -> Result<Vec<Candidate>> {
    let mut spans = covers.to_vec();
    let carried = spans.is_empty();
    if carried {
        read.window_newest_first(stream, |_, rid| {
            spans.push(rid);
            Ok(true)
        })?;
        spans.reverse();
    }
    let mut out = Vec::with_capacity(spans.len());
    for rid in spans {
        if let Some(Record::Span(s)) = read.get(&rid)? {
            out.push(Candidate {
                rid,
                turn: Some((s.turn, s.role)),
                text: s.text,
            });
        }
    }
    if let Some(head) = read.head(stream)?.filter(|_| carried) {
        if let Some(Record::Summary(h)) = read.get(&head)? {
            for c in h.claims {
                if let Some(Record::Claim(claim)) = read.get(&c)? {
                    out.push(Candidate {
                        rid: c,
                        turn: None,
                        text: claim.text,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Every raw span of `stream` that `covers` does not hold, in turn order: where the finder
/// looks when nothing the summary covers places a sentence. None when the summary covers
/// nothing (its candidates are then the whole window already).
fn earlier<R: Read>(read: &R, stream: &str, covers: &[Rid]) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    if covers.is_empty() {
        return Ok(out);
    }
    for (_, rid) in read.turns(stream, 0, u64::MAX)? {
        if covers.contains(&rid) {
            continue;
        }
        if let Some(Record::Span(s)) = read.get(&rid)? {
            out.push(Candidate {
                rid,
                turn: Some((s.turn, s.role)),
                text: s.text,
            });
        }
    }
    Ok(out)
}

/// The candidates ranked by BM25 alone, as the recall index scores texts (its terms, its
/// weights), with document frequencies taken among the candidates themselves: so the same
/// sentence over the same spans ranks them the same way whatever else the ledger holds (claims
/// appended since, other streams), and importing a log again derives the same claims. Best
/// first, ties to the later candidate (the newer turn). The finder's baseline.
pub fn by_recall(sentence: &str, candidates: &[Candidate]) -> Vec<(usize, f64)> {
    let (asked, _) = terms::terms(sentence);
    let asked: Vec<&str> = asked.iter().map(|(t, _)| t.as_str()).collect();
    let counts: Vec<(Vec<u32>, u32)> = (candidates.iter())
        .map(|c| terms::occurrences(&c.text, &asked))
        .collect();
    let texts = candidates.len() as u64;
    let idf: Vec<f64> = (0..asked.len())
        .map(|k| {
            let df = counts.iter().filter(|(tf, _)| tf[k] > 0).count() as u64;
            terms::idf(texts, df)
        })
        .collect();
    let mut scored: Vec<(usize, f64)> = (counts.iter().enumerate())
        .map(|(i, (tf, len))| {
            let s = (tf.iter().zip(&idf))
                .filter(|(tf, _)| **tf > 0)
                .map(|(tf, idf)| idf * terms::weight(*tf, *len))
                .sum();
            (i, s)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
    scored
}

impl Gatekeeper {
    /// The candidates ranked for `sentence`: the best [`RERANKED`] by recall's ranking, read
    /// by the scorer and ordered by its entailment plus half their BM25 score relative to the
    /// best one's (the scorer decides; recall breaks near ties), then the rest by BM25.
    pub fn rank(&self, sentence: &str, candidates: &[Candidate]) -> Result<Vec<Ranked>> {
        let by_recall = by_recall(sentence, candidates);
        let head = by_recall.len().min(RERANKED);
        let pairs: Vec<(&str, &str)> = (by_recall[..head].iter())
            .map(|(i, _)| (sentence, candidates[*i].text.as_str()))
            .collect();
        let scores = self.score_many(&pairs)?;
        let mut ranked: Vec<Ranked> = (by_recall.iter().enumerate())
            .map(|(k, (i, bm25))| Ranked {
                candidate: *i,
                bm25: *bm25,
                entailment: scores.get(k).map(|s| s.entailment),
                contradicts: (candidates[*i].turn)
                    .is_none_or(|(_, r)| super::rules::is_evidence(r))
                    && scores.get(k).is_some_and(|sc| {
                        self.clashes(sentence, &candidates[*i].text, sc).is_some()
                    }),
            })
            .collect();
        let top = by_recall.first().map_or(1.0, |(_, s)| s.max(1e-9));
        ranked[..head].sort_by(|a, b| {
            let e = |r: &Ranked| r.entailment.unwrap_or(0.0) + 0.5 * r.bm25 / top;
            e(b).total_cmp(&e(a))
        });
        Ok(ranked)
    }

    /// A sentence's witnesses among `candidates` (SPEC.md 8.8): those that entail it; else the
    /// one it clashes with; else the one plainly about it. With the candidates as ranked.
    fn place(
        &self,
        sentence: &str,
        candidates: &[Candidate],
    ) -> Result<(Vec<Witness>, Vec<Ranked>)> {
        let floor = self.policy.raw_entailment;
        let ranked = self.rank(sentence, candidates)?;
        let witness = |r: &Ranked, entailment: f64, contradicts: bool| {
            let c = &candidates[r.candidate];
            Witness {
                rid: c.rid,
                turn: c.turn.map(|(t, _)| t),
                entailment,
                contradicts,
                about: false,
            }
        };
        let mut witnesses: Vec<Witness> = (ranked.iter())
            .filter_map(|r| r.entailment.filter(|e| *e >= floor).map(|e| (r, e)))
            .take(MAX_WITNESSES)
            .map(|(r, entailment)| witness(r, entailment, false))
            .collect();
        // Nothing supports it, but a span it speaks of contradicts it: that span is its
        // witness, judged `contradicts`; the claim stays unverified (SPEC.md 8.1).
        if witnesses.is_empty() {
            let clashing = ranked
                .iter()
                .find(|r| r.contradicts && r.entailment.is_some());
            witnesses.extend(clashing.map(|r| witness(r, r.entailment.unwrap_or(0.0), true)));
        }
        // Nor that, but a span is plainly about it, or holds the words it quotes: that span
        // anchors it, unverified.
        if witnesses.is_empty() {
            let quoted = crate::text::verbatim::quotations(sentence);
            let holds = |text: &str| crate::text::verbatim::holds_quoted(&quoted, text);
            let ids = text::code::identifiers(sentence);
            let names_half = |text: &str| {
                let held = ids.iter().filter(|i| text.contains(i.as_str())).count();
                ids.len() >= 2 && 2 * held >= ids.len()
            };
            let near = (ranked.iter().take(RERANKED))
                .find(|r| is_about(sentence, &candidates[r.candidate].text))
                .or_else(|| ranked.iter().find(|r| holds(&candidates[r.candidate].text)))
                .or_else(|| {
                    ranked
                        .iter()
                        .find(|r| names_half(&candidates[r.candidate].text))
                });
            witnesses.extend(near.map(|r| Witness {
                about: true,
                ..witness(r, r.entailment.unwrap_or(0.0), false)
            }));
        }
        Ok((witnesses, ranked))
    }

    /// The claims of a prose compaction of `stream` covering `covers` (SPEC.md section 8.8):
    /// one per sentence or list item of `text`, each with its witnesses, origin and reason.
    /// Nothing is written; [`Gatekeeper::propose_prose`] appends them.
    pub fn derive<R: Read>(
        &self,
        read: &R,
        stream: &str,
        covers: &[Rid],
        text: &str,
    ) -> Result<Vec<Derived>> {
        let candidates = candidates(read, stream, covers)?;
        // Read only when a sentence needs it: the whole stream is the exception, not the rule.
        let later_read: std::cell::OnceCell<Vec<Candidate>> = std::cell::OnceCell::new();
        let floor = self.policy.raw_entailment;
        let mut out = Vec::new();
        for sentence in claims(text) {
            let (mut witnesses, mut ranked) = self.place(&sentence, &candidates)?;
            let mut from = &candidates;
            // Nothing the summary covers places it: every earlier raw span of the stream is
            // searched (issue 36: a summary restates what earlier turns said).
            if witnesses.is_empty() {
                if later_read.get().is_none() {
                    let _ = later_read.set(earlier(read, stream, covers)?);
                }
                if let Some(earlier) = later_read.get().filter(|e| !e.is_empty()) {
                    let (w, r) = self.place(&sentence, earlier)?;
                    if !w.is_empty() {
                        (witnesses, ranked, from) = (w, r, earlier);
                    }
                }
            }
            let best = (witnesses.first()).and_then(|w| from.iter().find(|c| c.rid == w.rid));
            let origin = if text::is_hedged(&sentence) || reports_belief(&sentence) {
                Origin::Hedged
            } else {
                match best.and_then(|c| c.turn) {
                    Some((_, Role::User | Role::System)) => Origin::UserSaid,
                    Some((_, Role::Tool)) => Origin::ToolOutput,
                    // A tool call is what the agent did: inferred, as its own words are.
                    _ => Origin::Inferred,
                }
            };
            let why = match (best, ranked.first()) {
                (Some(c), _) if witnesses[0].contradicts => format!(
                    "no candidate supports it, and {} clashes with it as the word scorer reads it; it stays unverified",
                    describe(c)
                ),
                (Some(c), _) if witnesses[0].about => format!(
                    "no candidate entails it surely enough to cite; {} is about it (entailment {:.2}), so it stays unverified",
                    describe(c),
                    witnesses[0].entailment
                ),
                (Some(c), _) => format!(
                    "{} of {} candidates support it; the best is {} (entailment {:.2})",
                    witnesses.len(),
                    from.len(),
                    describe(c),
                    witnesses[0].entailment
                ),
                (None, Some(r)) if r.entailment.is_some() => format!(
                    "no covered span or earlier claim supports it: the closest, {}, entails it at {:.2}, below {floor:.2}; it is unanchored",
                    describe(&from[r.candidate]),
                    r.entailment.unwrap_or(0.0)
                ),
                _ => "the summary covers nothing to support it; it is unanchored".to_string(),
            };
            let nearest = witnesses
                .is_empty()
                .then(|| ranked.first().filter(|r| r.bm25 > 0.0))
                .flatten()
                .and_then(|r| {
                    let c = &from[r.candidate];
                    c.turn.map(|(turn, _)| Witness {
                        rid: c.rid,
                        turn: Some(turn),
                        entailment: r.entailment.unwrap_or(0.0),
                        contradicts: false,
                        about: true,
                    })
                });
            out.push(Derived {
                sentence,
                origin,
                witnesses,
                ranked: ranked.into_iter().take(MAX_WITNESSES).collect(),
                why,
                nearest,
            });
        }
        Ok(out)
    }
}

/// Adds to a summary's `covers` the spans its derived claims cite outside them: a sentence
/// the finder placed on an earlier turn of the stream carries that turn forward, and the
/// summary covers it again, as a runtime cites a carried fact by its original turn (SPEC.md
/// 8.8, 15), so the claim rests on a raw span of its window. A summary that names no covers
/// (its window is the stream's) is left as it is.
pub fn cover_witnesses(covers: &mut Vec<Rid>, derived: &[Derived]) {
    if covers.is_empty() {
        return;
    }
    for w in derived.iter().flat_map(|d| &d.witnesses) {
        if w.turn.is_some() && !covers.contains(&w.rid) {
            covers.push(w.rid);
        }
    }
}

/// A prose compaction judged: the gates' outcome, and each derived claim as appended.
pub struct Prose {
    /// The summary's verdict and findings, as for any summary.
    pub outcome: Outcome,
    /// Each sentence's claim, in order, with how it was derived.
    pub claims: Vec<(Appended, Derived)>,
}

impl Gatekeeper {
    /// Proposes a summary written as prose (SPEC.md section 8.8): derives its claims from
    /// `text` ([`Gatekeeper::derive`]), appends them ([`Gatekeeper::append_derived`]) after
    /// any claims `summary` already lists, and proposes it through every gate.
    pub fn propose_prose(&self, batch: &mut Batch, summary: Summary, text: &str) -> Result<Prose> {
        let mut summary = summary;
        let derived = self.derive(batch, &summary.stream, &summary.covers, text)?;
        cover_witnesses(&mut summary.covers, &derived);
        let claims = self.append_derived(batch, &summary.stream, derived)?;
        for (a, _) in &claims {
            if !summary.claims.contains(&a.rid) {
                summary.claims.push(a.rid);
            }
        }
        let outcome = self.propose_summary(batch, summary)?;
        Ok(Prose { outcome, claims })
    }

    /// Appends derived claims to `stream`, each with a judgement that holds each span
    /// witness's score under the scorer's id. A sentence that repeats an earlier one is one
    /// claim: it is returned once.
    pub fn append_derived(
        &self,
        batch: &mut Batch,
        stream: &str,
        derived: Vec<Derived>,
    ) -> Result<Vec<(Appended, Derived)>> {
        let mut out: Vec<(Appended, Derived)> = Vec::with_capacity(derived.len());
        for d in derived {
            let claim = Claim {
                stream: stream.to_string(),
                text: d.sentence.clone(),
                origin: d.origin.clone(),
                witnesses: d.witnesses.iter().map(|w| w.rid).collect(),
                actionable: false,
            };
            let appended = batch.append(claim)?;
            if out.iter().any(|(a, _)| a.rid == appended.rid) {
                continue;
            }
            let judged = d.witnesses.iter().chain(&d.nearest);
            for w in judged.filter(|w| w.turn.is_some()) {
                {
                    batch.append(Judgement {
                        claim: appended.rid,
                        span: w.rid,
                        relation: if w.contradicts {
                            Relation::Contradicts
                        } else if w.about {
                            Relation::Neutral
                        } else {
                            Relation::Entails
                        },
                        score: crate::record::score_from_unit(w.entailment).unwrap_or(0),
                        scorer: self.scorer.id().to_string(),
                    })?;
                }
            }
            out.push((appended, d));
        }
        Ok(out)
    }
}

/// Whether `text` is plainly about `sentence`: it holds every code identifier of the sentence
/// (one at least), or at least half of its content words.
pub(super) fn is_about(sentence: &str, text: &str) -> bool {
    let ids = text::code::identifiers(sentence);
    if !ids.is_empty() && ids.iter().all(|i| text.contains(i.as_str())) {
        return true;
    }
    let ours = text::content(sentence);
    if ours.is_empty() {
        return false;
    }
    let theirs: std::collections::HashSet<String> = text::content(text).into_iter().collect();
    let shared = ours.iter().filter(|w| theirs.contains(*w)).count();
    2 * shared >= ours.len()
}

/// Verbs that report a belief, not a fact: "the user thinks the port is 5433" keeps the
/// user's hedge.
const BELIEF: &[&str] = &[
    "think", "thinks", "believe", "believes", "suspect", "suspects", "guess", "guesses", "assume",
    "assumes", "suppose", "supposes", "reckon", "reckons",
];

/// Whether a sentence reports a belief ([`BELIEF`]).
fn reports_belief(sentence: &str) -> bool {
    text::words(sentence)
        .iter()
        .any(|w| BELIEF.contains(&w.as_str()))
}

/// "turn 212 (user)" or "an earlier claim".
fn describe(c: &Candidate) -> String {
    match c.turn {
        Some((turn, role)) => format!("turn {turn} ({})", role.name()),
        None => format!("the earlier claim {:?}", c.text),
    }
}
