//! Judging a compaction: every claim of a summary against the rules, then the summary's own
//! rules (laundering rate, depth) and its pinned reference (unpinned items, pin loss). The
//! findings come out in that order, claim by claim, as a verdict stores them.

use super::pins::{in_force, pin_items, unpinned};
use super::rules::{self, FoundBy, Grounding, Witness, WitnessCheck};
use super::view::{rank_many, View, Vocab};
use super::{Carry, Gatekeeper, Judged, JUDGE};
use crate::error::Result;
use crate::record::{
    Claim, ClaimStatus, Finding, Gate, Origin, PinClass, PinItem, Record, Rid, Role, Ruling, Span,
    Status, Summary,
};
use crate::store::{Batch, Item, Read, Trusted};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The summary's source window as the claims are judged against it: the spans it covers, in
/// rid order, and the spans it evicts.
struct Window {
    covers: Vec<(Rid, Span)>,
    evicts: HashSet<Rid>,
    /// The evicted spans in the ledger, in rid order, read once per gate run.
    evicted: Vec<(Rid, Span)>,
}

/// One claim of the summary, the covered spans most like it, and the evicted spans most like
/// it (positions in `Window::evicted`), both ranked for all claims at once.
struct ClaimAt<'a> {
    rid: Rid,
    /// Whether cairn's repair carries it word for word from a raw span (SPEC.md 8.9): it asserts
    /// nothing of the model's, and the scorer seeks no disconfirmer of it.
    carried: bool,
    claim: &'a Claim,
    vocab: &'a Vocab,
    near: &'a [usize],
    far: &'a [usize],
}

/// What [`Gatekeeper::window`] works out once for a summary: the window, the claims found in
/// the ledger, their words, and for each claim the covered and the evicted spans most like it.
struct Prepared {
    window: Window,
    claims: Vec<(Rid, Claim)>,
    vocabs: Vec<Vocab>,
    near: Vec<Vec<usize>>,
    far: Vec<Vec<usize>>,
}

/// The decision-relevant items a summary loses (see [`Gatekeeper::losses`]).
pub(super) struct Losses {
    /// The classifier's items no pin covers that leave the window and no claim repeats.
    pub unpinned: Vec<Item>,
    /// The pinned items neither the window nor a claim keeps, with their pins' names.
    pub pinned: Vec<(String, PinItem)>,
    /// The reference-anchored fidelity, when the stream has pins.
    pub fidelity: Option<f64>,
}

impl Losses {
    /// What a repair carries verbatim: the lost items that refuse a compaction (unpinned items
    /// of the blocking classes; pinned items when `pin-loss` refuses).
    pub fn carry(&self, policy: &crate::gate::Policy) -> Vec<Carry> {
        let mut out: Vec<Carry> = (self.unpinned.iter())
            .filter(|i| rules::blocks_compaction(i.class))
            .map(|i| Carry {
                text: i.text.clone(),
                witness: Some(i.span),
            })
            .collect();
        let refuses = self
            .fidelity
            .is_some_and(|f| rules::pin_loss(Rid([0; 32]), "", f, &self.pinned, policy).is_some());
        if refuses {
            out.extend(self.pinned.iter().map(|(_, item)| Carry {
                text: item.text.clone(),
                witness: item.witness,
            }));
        }
        out
    }
}

/// What judging one claim found beyond its findings.
struct ClaimCheck {
    status: Status,
    laundered: bool,
}

/// Whether a claim's provenance flags make it unverified: a drifted identifier, an origin
/// mismatch or a stripped hedge.
#[derive(Default)]
struct Flags {
    drift: bool,
    weak: bool,
}

impl Gatekeeper {
    /// The findings, claim statuses and reference-anchored fidelity of a summary just
    /// appended as `rid`.
    pub(super) fn judge_summary(&self, batch: &Batch, s: &Summary, rid: Rid) -> Result<Judged> {
        let mut view = View::new(batch);
        let Prepared {
            window,
            claims,
            vocabs,
            near,
            far,
        } = self.window(&mut view, s)?;
        let mut judged = Judged::default();
        let (mut actionable, mut laundered) = (0usize, 0usize);
        // A summary of a stream with no raw span at all: its source is elsewhere.
        let orphan = window.covers.is_empty() && view.stream_spans(&s.stream)?.is_empty();
        if orphan {
            (judged.findings).push(rules::source_missing(rid, &s.stream, claims.len()));
        }
        // A repair's claims that its proposal did not hold are items it carries verbatim.
        let proposed: Option<Vec<Rid>> = match s.author.repairs() {
            Some(p) => match batch.get(&p)? {
                Some(Record::Summary(p)) => Some(p.claims),
                _ => None,
            },
            None => None,
        };
        for (i, (rid, claim)) in claims.iter().enumerate() {
            if orphan {
                judged.claims.push(ClaimStatus {
                    claim: *rid,
                    status: Status::Unanchored,
                });
                continue;
            }
            let at = ClaimAt {
                rid: *rid,
                carried: proposed.as_ref().is_some_and(|p| !p.contains(rid)),
                claim,
                vocab: &vocabs[i],
                near: &near[i],
                far: &far[i],
            };
            let check = self.judge_claim(&mut view, at, &window, &mut judged)?;
            if claim.actionable {
                actionable += 1;
                laundered += usize::from(check.laundered);
            }
            let status = check.status;
            judged.claims.push(ClaimStatus {
                claim: *rid,
                status,
            });
        }
        let parent = match s.parent {
            Some(p) => match batch.get(&p)? {
                Some(Record::Summary(p)) => Some(p.budget),
                _ => None,
            },
            None => None,
        };
        let threshold = rules::laundering_threshold(&self.policy, s.budget, parent);
        (judged.findings).extend(rules::laundering_rate(
            rid, laundered, actionable, threshold,
        ));
        if let Some(f) = batch.facts(&rid)? {
            let depth = f.depth.unwrap_or(0);
            (judged.findings).extend(rules::depth_exceeded(rid, depth, &self.policy));
        }
        // A struck claim is not admitted: it keeps no item of the reference.
        let struck: HashSet<Rid> = (judged.findings.iter())
            .filter(|f| f.gate.strikes())
            .map(|f| f.subject)
            .collect();
        let claims = (claims.iter()).zip(&vocabs).map(|((r, c), v)| (*r, c, v));
        let claims: Vec<(Rid, &Claim, &Vocab)> =
            claims.filter(|(r, _, _)| !struck.contains(r)).collect();
        judged.anchored = self.reference(&mut view, s, rid, &window, &claims, &mut judged)?;
        Ok(judged)
    }

    /// A summary's window, its claims found in the ledger with their words, and the covered
    /// and evicted spans most like each claim, found for all claims at once.
    fn window<R: Read>(&self, view: &mut View<'_, R>, s: &Summary) -> Result<Prepared> {
        let mut window = Window {
            covers: Vec::new(),
            evicts: s.evicts.iter().copied().collect(),
            evicted: Vec::new(),
        };
        for c in &s.covers {
            if let Some(sp) = view.span(*c)? {
                window.covers.push((*c, sp));
            }
        }
        for c in &window.evicts {
            if let Some(sp) = view.span(*c)? {
                window.evicted.push((*c, sp));
            }
        }
        window.evicted.sort_by_key(|(r, _)| *r);
        let mut claims = Vec::new();
        for c in &s.claims {
            if let Some(claim) = view.claim(*c)? {
                claims.push((*c, claim));
            }
        }
        let cover_vocabs: Vec<Vocab> = (window.covers.iter())
            .map(|(r, sp)| view.vocab(*r, sp))
            .collect();
        let vocabs: Vec<Vocab> = claims.iter().map(|(_, c)| Vocab::of(&c.text)).collect();
        let evicted_vocabs: Vec<Vocab> = (window.evicted.iter())
            .map(|(r, sp)| view.vocab(*r, sp))
            .collect();
        let queries: Vec<&Vocab> = vocabs.iter().collect();
        let near = rank_many(&queries, &cover_vocabs, self.prefilter_share());
        let far = rank_many(&queries, &evicted_vocabs, crate::score::TOPIC);
        Ok(Prepared {
            window,
            claims,
            vocabs,
            near,
            far,
        })
    }

    /// Scores ahead, on a read snapshot and in batches, the pairs that judging `summary` will
    /// ask its scorer first: each claim already in the ledger against the raw spans it cites,
    /// the covered spans most like it and the evicted spans that could disconfirm it. A scorer
    /// that remembers its scores ([`Scorer::warms`](crate::score::Scorer::warms), the model
    /// scorer) then answers them at once inside the write transaction of
    /// [`propose_summary`](Gatekeeper::propose_summary), so a slow model does not hold other
    /// writers back. Returns how many pairs were scored; with any other scorer, none.
    pub fn prepare<R: Read>(&self, read: &R, summary: &Summary) -> Result<usize> {
        if !self.scorer.warms() {
            return Ok(0);
        }
        let mut view = View::new(read);
        let p = self.window(&mut view, summary)?;
        let mut pairs: Vec<(&str, String)> = Vec::new();
        for (((rid, claim), near), far) in p.claims.iter().zip(&p.near).zip(&p.far) {
            let (ancestors, _) = view.ancestry(*rid)?;
            let cited = cited(claim, &ancestors);
            let near = near.iter().map(|i| &p.window.covers[*i]);
            let far = far.iter().map(|i| &p.window.evicted[*i]);
            for (_, sp) in cited.into_iter().chain(near).chain(far) {
                pairs.push((&claim.text, sp.text.clone()));
            }
        }
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(c, s)| (*c, s.as_str())).collect();
        self.score_many(&pairs)?;
        Ok(pairs.len())
    }

    /// Every rule about one claim, in the order a verdict lists them, and its status.
    fn judge_claim<R: Read>(
        &self,
        view: &mut View<'_, R>,
        at: ClaimAt<'_>,
        window: &Window,
        judged: &mut Judged,
    ) -> Result<ClaimCheck> {
        let (rid, claim) = (at.rid, at.claim);
        let Judged {
            findings,
            rulings,
            keep,
            ..
        } = judged;
        let grounding = view.grounding(&rid)?;
        findings.extend(rules::missing_origin(rid, claim));
        findings.extend(unanchored(view, rid, claim, grounding.anchored)?);
        let (ancestors, carried) = view.ancestry(rid)?;
        let flags = provenance(view, rid, claim, grounding, &ancestors, findings)?;
        // Witness first: the claim against the raw spans it cites (its raw ancestors, when it
        // cites only claims); the window is searched only to name support it does not cite.
        let direct: Vec<&(Rid, Span)> = (window.covers.iter())
            .filter(|(r, _)| claim.witnesses.contains(r))
            .collect();
        let cited = cited(claim, &ancestors);
        let mut check = self.witness_check(view, claim, &cited, &at, window)?;
        // A speaker the finder's witnesses are not is the finder's choice of span, not the
        // sentence's: the claim stays unverified, and is not struck for it.
        let speaker_unsure = check.speaker.is_some() && view.placed_by_finder(rid, claim)?;
        if speaker_unsure {
            check.speaker = None;
        }
        // A judge's answer that decided a cited span's scores is recorded with the verdict.
        for (span, sp) in &cited {
            if let Some(a) = self.scorer.ruling(&claim.text, &sp.text) {
                rulings.push(Ruling {
                    claim: rid,
                    spans: vec![*span],
                    judge: a.judge,
                    prompt: a.prompt,
                    answer: a.answer,
                    quote: a.quote,
                });
            }
        }
        // A prose sentence the finder could only place (a span about it, none entailing it)
        // stays unverified: a contradiction still counts, a weak entailment does not.
        let about = check.contradiction.2.is_none() && view.only_about(rid, claim)?;
        let mut fabricated = (!about)
            .then(|| rules::fabricated_claim(rid, claim, grounding, &check, &self.policy))
            .flatten();
        // A clash with the span the prose finder picked because nothing supported the
        // sentence is cairn's reading, not the claim's own witness: the finder chose that span
        // by its words, so it is about the same thing, and a word scorer's clash with it is no
        // evidence the sentence is false. The claim stays unverified, and is not struck.
        if fabricated
            .as_ref()
            .is_some_and(|f| f.gate == Gate::ContradictedClaim)
            && view.found_contradicting(rid, claim)?
        {
            fabricated = None;
        }
        let fabricated = fabricated.map(|f| findings.push(f)).is_some();
        let window_name = Some("this summary's source window");
        let mut outside = Vec::new();
        if direct.is_empty() {
            for w in &claim.witnesses {
                if let Some(sp) = view.span(*w)? {
                    outside.push(sp.turn);
                }
            }
            outside.sort_unstable();
        }
        let laundered = rules::laundered_claim(
            rid,
            claim,
            grounding,
            !direct.is_empty(),
            window_name,
            &outside,
        );
        let laundered = laundered.map(|f| findings.push(f)).is_some();
        let entailed = check.entailment.0 >= self.policy.verify_entailment;
        // A struck claim is not kept: a summary may evict what contradicts it.
        let struck = (findings.iter()).any(|f| f.subject == rid && f.gate.strikes());
        if !struck {
            let own: HashSet<Rid> = ancestors.iter().map(|(r, _)| *r).collect();
            let kept = self.disconfirmers(view, &at, &carried, &own, window, &check, findings)?;
            keep.extend(kept);
        }
        let clashed = (findings.iter()).any(|f| f.subject == rid && f.gate == Gate::EvictedClash);
        let status = if !grounding.anchored {
            Status::Unanchored
        } else if fabricated || flags.drift {
            // Struck: a claim whose identifier no raw span holds asserts what none says.
            Status::Fabricated
        } else if grounding.regrounded
            || (entailed
                && !laundered
                && !flags.weak
                && !flags.drift
                && !speaker_unsure
                && !clashed)
        {
            Status::Verified
        } else {
            Status::Unverified
        };
        Ok(ClaimCheck { status, laundered })
    }

    /// A claim against the raw spans it cites: the best entailment, the strongest
    /// contradiction, and, when none of them entails it, the first covered span most like it
    /// that does.
    fn witness_check<R: Read>(
        &self,
        view: &mut View<'_, R>,
        claim: &Claim,
        cited: &[&(Rid, Span)],
        at: &ClaimAt<'_>,
        window: &Window,
    ) -> Result<WitnessCheck> {
        let mut check = WitnessCheck::default();
        // Who did what: the speaker the claim names must be one the cited spans can be, or
        // the best witness of that speaker anywhere in the stream must support it.
        if let Some((who, roles)) = rules::named_speaker(&claim.text) {
            if !cited.is_empty()
                && !cited.iter().any(|(_, s)| roles.contains(&s.role))
                && !self.speaker_supports(view, claim, at.vocab, roles)?
            {
                check.speaker = cited.first().map(|(_, s)| (who, s.turn, s.role));
            }
        }
        let pairs: Vec<(&str, &str)> = cited
            .iter()
            .map(|(_, s)| (&*claim.text, &*s.text))
            .collect();
        let scores = self.score_cited(&pairs)?;
        for ((_, s), sc) in cited.iter().zip(&scores) {
            if check.entailment.1.is_none() || sc.entailment > check.entailment.0 {
                check.entailment = (sc.entailment, Some(s.turn));
            }
            if sc.entailment >= self.policy.verify_entailment && s.stream == claim.stream {
                let latest = &mut check.latest_support[s.role as usize];
                *latest = (*latest).max(Some(s.turn));
            }
            if sc.entailment >= self.policy.raw_entailment
                && rules::is_evidence(s.role)
                && s.stream == claim.stream
            {
                check.latest_evidence = check.latest_evidence.max(Some(s.turn));
            }
        }
        // Time: a later cited span that supports the claim supersedes an earlier one of its
        // stream that contradicts it ("42 passed" after "6 passed").
        // Two sentences of the cited spans joined, word for word, are entailed by them.
        let texts: Vec<&str> = cited.iter().map(|(_, s)| s.text.as_str()).collect();
        if check.entailment.0 < self.policy.verify_entailment
            && crate::text::verbatim::repeats_joined(&claim.text, &texts)
        {
            check.entailment = (1.0, cited.first().map(|(_, s)| s.turn));
        }
        // A contradiction counts only with a clash, from a span of evidence that does not
        // support it.
        for ((_, s), sc) in cited.iter().zip(&scores) {
            if !rules::is_evidence(s.role)
                || superseded(s, &claim.stream, check.latest_support)
                || sc.contradiction <= check.contradiction.0
            {
                continue;
            }
            if let Some(clash) = self.clashes(&claim.text, &s.text, sc) {
                check.contradiction = (sc.contradiction, Some(s.turn), Some(clash));
            }
        }
        if check.entailment.0 >= self.policy.raw_entailment {
            return Ok(check);
        }
        for (r, s) in at.near.iter().map(|i| &window.covers[*i]) {
            if cited.iter().any(|(c, _)| c == r) {
                continue;
            }
            if self.score(&claim.text, &s.text)?.entailment >= self.policy.raw_entailment {
                check.elsewhere = Some(s.turn);
                break;
            }
        }
        Ok(check)
    }

    /// Whether a span of the stream spoken by one of `roles` can be the claim's source: it
    /// supports the claim (entailment at or above `raw_entailment`, or the claim repeats it), it
    /// is plainly about it (SPEC.md 8.8), or it holds words the claim quotes. The claim then
    /// names its speaker rightly, whatever it cites: a summary words what a speaker asked its
    /// own way.
    fn speaker_supports<R: Read>(
        &self,
        view: &mut View<'_, R>,
        claim: &Claim,
        vocab: &Vocab,
        roles: &[Role],
    ) -> Result<bool> {
        let all = view.stream_spans(&claim.stream)?;
        let theirs: Vec<(Rid, Span)> = (all.iter())
            .filter(|(_, s)| roles.contains(&s.role))
            .cloned()
            .collect();
        let quoted = crate::text::verbatim::quotations(&claim.text);
        let holds = |s: &Span| crate::text::verbatim::holds_quoted(&quoted, &s.text);
        let about = |s: &Span| super::prose::is_about(&claim.text, &s.text);
        if theirs.iter().any(|(_, s)| holds(s) || about(s)) {
            return Ok(true);
        }
        let near = view.candidates(vocab, &theirs, self.prefilter_share());
        let pairs: Vec<(&str, &str)> = (near.iter())
            .map(|(_, s)| (claim.text.as_str(), s.text.as_str()))
            .collect();
        let scores = self.score_many(&pairs)?;
        Ok(scores
            .iter()
            .any(|sc| sc.entailment >= self.policy.raw_entailment))
    }

    /// `evicted-disconfirmer` for one claim: recorded judgements on the claim or on any claim
    /// it carries forward, and evicted spans the scorer finds contradicting it.
    #[expect(
        clippy::too_many_arguments,
        reason = "one claim's context, read once by the caller"
    )]
    fn disconfirmers<R: Read>(
        &self,
        view: &mut View<'_, R>,
        at: &ClaimAt<'_>,
        carried: &[Rid],
        own: &HashSet<Rid>,
        window: &Window,
        check: &WitnessCheck,
        findings: &mut Vec<Finding>,
    ) -> Result<Vec<Rid>> {
        let mut found = BTreeSet::new();
        for sp in view.judged_contradicting(carried, &window.evicts)? {
            // The span the claim cites is its source: a clash with it is the claim's own
            // (contradicted-claim), not a disconfirmer the summary hides.
            if !own.contains(&sp) {
                found.insert((sp, FoundBy::Judgement));
            }
        }
        let candidates: Vec<&(Rid, Span)> = if at.carried {
            Vec::new()
        } else if found.is_empty() {
            at.far.iter().map(|i| &window.evicted[*i]).collect()
        } else {
            // Rare: a recorded judgement found some; rank the rest of the evicted spans anew.
            let rest: Vec<(Rid, Span)> = (window.evicted.iter())
                .filter(|(r, _)| !found.iter().any(|(f, _)| f == r))
                .cloned()
                .collect();
            let ranked = view.candidates(at.vocab, &rest, crate::score::TOPIC);
            let ranked: HashSet<Rid> = ranked.iter().map(|(r, _)| *r).collect();
            (window.evicted.iter())
                .filter(|(r, _)| ranked.contains(r))
                .collect()
        };
        // A disconfirmer the scorer finds is evidence; a span the claim rests on is its source,
        // never its disconfirmer.
        let candidates: Vec<&(Rid, Span)> = (candidates.into_iter())
            .filter(|(r, span)| rules::is_evidence(span.role) && !own.contains(r))
            .collect();
        let pairs: Vec<(&str, &str)> = (candidates.iter())
            .map(|(_, span)| (&*at.claim.text, &*span.text))
            .collect();
        for ((sp, span), sc) in candidates.iter().zip(self.score_many(&pairs)?) {
            // An evicted span that a later span the claim cites supersedes is history, not a
            // disconfirmer; for the word scorer, so is one told before the latest evidence the
            // claim rests on (seed 001's disconfirmer is "a later tool output"), while a judge's
            // ruling reads the two texts whole.
            if superseded(span, &at.claim.stream, check.latest_support) {
                continue;
            }
            let earlier = span.stream == at.claim.stream
                && check.latest_evidence.is_some_and(|t| span.turn < t);
            match self.clashes(&at.claim.text, &span.text, &sc) {
                Some(clash) if clash.starts_with(JUDGE) => {
                    found.insert((*sp, FoundBy::Judge(clash)));
                }
                Some(clash) if !earlier => {
                    found.insert((*sp, FoundBy::Scorer(clash)));
                }
                _ => {}
            }
        }
        // A recorded contradiction, or a judge's ruling, is a disconfirmer the summary may not
        // evict; a clash the word scorer alone reads is a suspicion it shows (SPEC.md 8.1).
        let mut kept = Vec::new();
        for (sp, by) in found {
            let span = view.span(sp)?;
            let span = (sp, span.as_ref());
            match by {
                FoundBy::Scorer(clash) => {
                    findings.push(rules::evicted_clash(at.rid, at.claim, span, &clash));
                }
                by => {
                    findings.push(rules::evicted_disconfirmer(at.rid, at.claim, span, by));
                    kept.push(sp);
                }
            }
        }
        Ok(kept)
    }

    /// `unpinned-reference` and `pin-loss`; returns the reference-anchored fidelity.
    fn reference<R: Read>(
        &self,
        view: &mut View<'_, R>,
        s: &Summary,
        rid: Rid,
        window: &Window,
        claims: &[(Rid, &Claim, &Vocab)],
        judged: &mut Judged,
    ) -> Result<Option<f64>> {
        let losses = self.losses(view, &s.stream, &window.evicts, claims)?;
        judged.carry.extend(losses.carry(&self.policy));
        let finding = rules::unpinned_reference(rid, &s.stream, &losses.unpinned);
        judged.findings.extend(finding);
        let Some(fidelity) = losses.fidelity else {
            return Ok(None);
        };
        let loss = rules::pin_loss(rid, &s.stream, fidelity, &losses.pinned, &self.policy);
        judged.findings.extend(loss);
        Ok(Some(fidelity))
    }

    /// What a summary of `stream` that evicts `evicts` and holds `claims` loses of the
    /// decision-relevant items: the classifier's items no pin covers whose span leaves the
    /// window and that no claim repeats word for word, and the pinned items neither the window
    /// nor a claim keeps (SPEC.md 8.1, 8.4).
    pub(super) fn losses<R: Read>(
        &self,
        view: &mut View<'_, R>,
        stream: &str,
        evicts: &HashSet<Rid>,
        claims: &[(Rid, &Claim, &Vocab)],
    ) -> Result<Losses> {
        // One reading of the pins: every item covers the classifier's, those in force are held.
        let all = pin_items(view.read, stream)?;
        let items = unpinned(view.read, stream, &all)?;
        let pins = in_force(all);
        // The window after this summary: spans not evicted before, and not evicted now.
        let left: Vec<Rid> = (view.read.unevicted_spans(stream)?.into_iter())
            .filter(|r| !evicts.contains(r))
            .collect();
        let staying: HashSet<Rid> = left.iter().copied().collect();
        let resting = resting_on(view, claims)?;
        // A claim keeps an item when it repeats it, or says it in its own words (it holds the
        // item's identifiers or half of its content words), or rests on the item's span; and
        // it keeps its denial (an item that forbids is kept only by a claim that forbids too)
        // and does not clash with it.
        let carries = |item: &Item| {
            use crate::text::clash::{clash, denies};
            let text = &item.text;
            let derived = resting.get(&item.span).map(Vec::as_slice);
            let keeps =
                |c: &Claim| (!denies(text) || denies(&c.text)) && clash(&c.text, text).is_none();
            let failure = item.class == PinClass::FailedAttempt;
            (claims.iter()).any(|(_, c, _)| {
                c.text.trim() == text.trim()
                    || crate::text::verbatim::repeats(text, &c.text)
                    || (super::prose::is_about(text, &c.text) && keeps(c))
                    || (failure && super::pins::keeps_failure(text, &c.text))
            }) || (derived.unwrap_or_default().iter()).any(|k| keeps(claims[*k].1))
        };
        let unpinned: Vec<Item> = (items.into_iter())
            .filter(|i| !staying.contains(&i.span) && !carries(i))
            .collect();
        if pins.is_empty() {
            return Ok(Losses {
                unpinned,
                pinned: Vec::new(),
                fidelity: None,
            });
        }
        let pending = self.kept_by_claims(&pins, &left, claims, &resting)?;
        let pinned = self.lost_in_window(view, &pending, &left)?;
        let fidelity = 1.0 - pinned.len() as f64 / pins.len() as f64;
        Ok(Losses {
            unpinned,
            pinned,
            fidelity: Some(fidelity),
        })
    }

    /// The pinned items a summary does not obviously keep: those whose witness span leaves the
    /// window, that no claim derived from that span keeps without contradicting, and that no
    /// claim entails. Each comes with its pin's name and its prefixes.
    fn kept_by_claims<'p>(
        &self,
        pins: &'p [(String, PinItem)],
        left: &[Rid],
        claims: &[(Rid, &Claim, &Vocab)],
        resting: &HashMap<Rid, Vec<usize>>,
    ) -> Result<Vec<(&'p String, &'p PinItem, Vocab)>> {
        let left: HashSet<Rid> = left.iter().copied().collect();
        // The items whose witness leaves the window, with the claims most like each, ranked
        // for all of them at once.
        let leaving: Vec<&'p (String, PinItem)> = (pins.iter())
            .filter(|(_, item)| !item.witness.is_some_and(|w| left.contains(&w)))
            .collect();
        let item_vocabs: Vec<Vocab> = leaving.iter().map(|(_, i)| Vocab::of(&i.text)).collect();
        let queries: Vec<&Vocab> = item_vocabs.iter().collect();
        let claim_vocabs: Vec<Vocab> = claims.iter().map(|(_, _, v)| (*v).clone()).collect();
        let ranked = rank_many(&queries, &claim_vocabs, self.prefilter_share());
        let mut pending = Vec::new();
        for (((pin_name, item), item_vocab), like) in
            leaving.into_iter().zip(item_vocabs).zip(ranked)
        {
            // A claim derived from the span the item was pinned from keeps the item unless it
            // contradicts it.
            let mut kept = false;
            let derived = item.witness.and_then(|w| resting.get(&w));
            for i in derived.map(Vec::as_slice).unwrap_or_default() {
                let text = &claims[*i].1.text;
                let sc = self.score(text, &item.text)?;
                kept = self.clashes(text, &item.text, &sc).is_none();
                if kept {
                    break;
                }
            }
            // Otherwise a claim must entail it.
            if !kept {
                for i in like {
                    if self.score(&item.text, &claims[i].1.text)?.entailment
                        >= self.policy.raw_entailment
                    {
                        kept = true;
                        break;
                    }
                }
            }
            if !kept {
                pending.push((pin_name, item, item_vocab));
            }
        }
        Ok(pending)
    }

    /// The pending pinned items that no span left in the window entails, looked for all at
    /// once among the window spans most like them.
    fn lost_in_window<R: Read>(
        &self,
        view: &mut View<'_, R>,
        pending: &[(&String, &PinItem, Vocab)],
        left: &[Rid],
    ) -> Result<Vec<(String, PinItem)>> {
        let mut lost = Vec::new();
        if pending.is_empty() {
            return Ok(lost);
        }
        let mut spans = Vec::new();
        for w in left {
            if let Some(Record::Span(sp)) = view.read.get_trusted(w)? {
                spans.push((*w, sp));
            }
        }
        let vocabs: Vec<Vocab> = spans.iter().map(|(r, sp)| view.vocab(*r, sp)).collect();
        // Items of the same text are one query: the same candidates, the same scores.
        let mut of_text: HashMap<&str, usize> = HashMap::new();
        let mut queries: Vec<&Vocab> = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        let which: Vec<usize> = (pending.iter())
            .map(|(_, item, v)| {
                *of_text.entry(&item.text).or_insert_with(|| {
                    queries.push(v);
                    texts.push(&item.text);
                    queries.len() - 1
                })
            })
            .collect();
        let ranked = rank_many(&queries, &vocabs, self.prefilter_share());
        // Every (text, candidate span) pair is scored, span by span: the scorer's cache then
        // reads each span once, however many texts it is a candidate for and however far the
        // window outgrows the cache. An item is kept when any of its candidates entails it.
        let mut pairs: Vec<(usize, usize)> = (ranked.iter().enumerate())
            .flat_map(|(q, found)| found.iter().map(move |i| (*i, q)))
            .collect();
        pairs.sort_unstable();
        let scored: Vec<(&str, &str)> = (pairs.iter())
            .map(|(i, q)| (texts[*q], &*spans[*i].1.text))
            .collect();
        let mut kept = vec![false; queries.len()];
        for ((_, q), sc) in pairs.iter().zip(self.score_many(&scored)?) {
            kept[*q] |= sc.entailment >= self.policy.raw_entailment;
        }
        for ((pin_name, item, _), q) in pending.iter().zip(which) {
            if !kept[q] {
                lost.push(((*pin_name).clone(), (*item).clone()));
            }
        }
        Ok(lost)
    }
}

/// Whether a later span the claim cites, surely supporting it, supersedes `span`: both of the
/// claim's stream and of one speaker, `span` told at an earlier turn (SPEC.md 8.1, time).
fn superseded(span: &Span, stream: &str, latest_support: [Option<u64>; Role::COUNT]) -> bool {
    span.stream == stream && latest_support[span.role as usize].is_some_and(|t| span.turn < t)
}

/// The raw spans a claim is judged against first: those of its raw ancestors it cites, or all
/// of them when it cites only claims.
fn cited<'a>(claim: &Claim, ancestors: &'a [(Rid, Span)]) -> Vec<&'a (Rid, Span)> {
    let direct: Vec<&(Rid, Span)> = (ancestors.iter())
        .filter(|(r, _)| claim.witnesses.contains(r))
        .collect();
    if direct.is_empty() {
        ancestors.iter().collect()
    } else {
        direct
    }
}

/// `unanchored-claim` for one claim: the prose finder's recorded nearest span, and for such a
/// sentence that quotes, the raw spans of its stream, which must hold a passage it quotes
/// (`rules::unanchored_claim`).
pub(super) fn unanchored<R: Read>(
    view: &mut View<'_, R>,
    rid: Rid,
    claim: &Claim,
    anchored: bool,
) -> Result<Option<Finding>> {
    let nearest = !anchored && view.nearest_judged(rid, claim)?;
    let stream = if nearest && crate::text::prose::quotes(&claim.text) {
        view.stream_spans(&claim.stream)?
    } else {
        Default::default()
    };
    let raw: Vec<&str> = stream.iter().map(|(_, s)| s.text.as_str()).collect();
    Ok(rules::unanchored_claim(rid, claim, anchored, nearest, &raw))
}

/// `identifier-drift`, `origin-mismatch` and `hedge-stripped` for one claim, from its raw-span
/// ancestors and its direct witnesses.
fn provenance<R: Read>(
    view: &mut View<'_, R>,
    rid: Rid,
    claim: &Claim,
    grounding: Grounding,
    ancestors: &[(Rid, Span)],
    findings: &mut Vec<Finding>,
) -> Result<Flags> {
    let mut flags = Flags::default();
    // An identifier is looked for in the claim's raw ancestors first, then in every raw span
    // of its stream before the compaction, tool calls with their names and arguments included
    // (a tool's name, `Bash`, is what the agent called).
    let raw: Vec<&str> = ancestors.iter().map(|(_, s)| s.text.as_str()).collect();
    if !rules::drifted(&claim.text, &raw).is_empty() {
        let stream = view.stream_spans(&claim.stream)?;
        let names = stream.iter().filter_map(|(_, s)| s.tool.as_deref());
        let mut raw: Vec<&str> = stream.iter().map(|(_, s)| s.text.as_str()).collect();
        raw.extend(names);
        // An identifier a claim of the summary this one replaces states was judged with that
        // claim: carried forward, it has not drifted here.
        let carried = if rules::drifted(&claim.text, &raw).is_empty() {
            Vec::new()
        } else {
            view.head_claims(&claim.stream, rid)?
        };
        raw.extend(carried.iter().map(String::as_str));
        if let Some(f) = rules::identifier_drift(rid, claim, &raw) {
            flags.drift = true;
            findings.push(f);
        }
    }
    let roles: Vec<Role> = ancestors.iter().map(|(_, s)| s.role).collect();
    if let Some(f) = rules::origin_mismatch(rid, claim, grounding.anchored, &roles) {
        flags.weak = true;
        findings.push(f);
    }
    // Only a user-said or tool-output claim can have its hedge stripped: read the witnesses
    // of those alone.
    let direct = match claim.origin {
        Origin::UserSaid | Origin::ToolOutput => view.witnesses(claim)?,
        _ => Vec::new(),
    };
    let witnesses: Vec<Witness<'_>> = direct.iter().filter_map(Witness::of).collect();
    if let Some(f) = rules::hedge_stripped(rid, claim, &witnesses) {
        flags.weak = true;
        findings.push(f);
    }
    Ok(flags)
}

/// For each raw span, the claims (by index) that rest on it through their chains of witnesses:
/// looked up per item, not searched.
fn resting_on<R: Read>(
    view: &mut View<'_, R>,
    claims: &[(Rid, &Claim, &Vocab)],
) -> Result<HashMap<Rid, Vec<usize>>> {
    let mut resting: HashMap<Rid, Vec<usize>> = HashMap::new();
    for (i, (c, _, _)) in claims.iter().enumerate() {
        let (spans, _) = view.ancestry(*c)?;
        for (r, _) in spans {
            resting.entry(r).or_default().push(i);
        }
    }
    Ok(resting)
}
