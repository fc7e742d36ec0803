//! What one gate run reads: records through a cache, each claim's raw-span ancestry, and the
//! candidate spans the scorer is asked about (SPEC.md section 8.6).

use super::rules::Grounding;
use crate::error::Result;
use crate::record::{Claim, Record, Rid, Span};
use crate::score::{prefix_keys, Prefixes};
use crate::store::{Read, Trusted};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A claim's raw-span ancestors and the claims on the way (the claim itself first).
pub(crate) type Ancestry = (Vec<(Rid, Span)>, Vec<Rid>);

/// Record lookups with a cache, for one gate run.
pub(crate) struct View<'a, R: Read> {
    pub read: &'a R,
    spans: HashMap<Rid, Option<Span>>,
    claims: HashMap<Rid, Option<Claim>>,
    vocab: HashMap<Rid, Vocab>,
    /// Every raw span of a stream, read once per gate run when a rule needs the whole stream.
    stream: HashMap<String, Rc<Vec<(Rid, Span)>>>,
}

/// How many of the most overlapping spans the scorer judges a claim against, beside the
/// claim's own raw ancestors.
pub(crate) const CANDIDATES: usize = 4;

/// The word prefixes of a text, for the candidate prefilter.
#[derive(Clone)]
pub(crate) struct Vocab {
    /// The first five characters of each content stem, packed; shared with the scorer's
    /// cached analysis of the text.
    prefixes: Rc<Prefixes>,
}

impl Vocab {
    pub fn of(text: &str) -> Vocab {
        Vocab {
            prefixes: prefix_keys(text),
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
            stream: HashMap::new(),
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

    /// Every raw span of `stream` in the ledger, in turn order: the whole stream before the
    /// proposal being judged, read once per gate run (identifiers and speakers are checked
    /// against it, SPEC.md section 8.1).
    pub fn stream_spans(&mut self, stream: &str) -> Result<Rc<Vec<(Rid, Span)>>> {
        if let Some(s) = self.stream.get(stream) {
            return Ok(Rc::clone(s));
        }
        let mut out = Vec::new();
        for (_, rid) in self.read.turns(stream, 0, u64::MAX)? {
            if let Some(sp) = self.span(rid)? {
                out.push((rid, sp));
            }
        }
        let out = Rc::new(out);
        self.stream.insert(stream.to_string(), Rc::clone(&out));
        Ok(out)
    }

    /// The texts of the claims of `stream`'s head summary, `claim` aside: what the summary
    /// being judged replaces.
    pub fn head_claims(&mut self, stream: &str, claim: Rid) -> Result<Vec<String>> {
        let mut out = Vec::new();
        if let Some(head) = self.read.head(stream)? {
            if let Some(crate::record::Record::Summary(h)) = self.read.get(&head)? {
                for c in h.claims.iter().filter(|c| **c != claim) {
                    if let Some(c) = self.claim(*c)? {
                        out.push(c.text);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether every span `claim` cites was cited by the prose finder as only about it, not as
    /// entailing it: a recorded `neutral` judgement names the pair (SPEC.md 8.8). Such a claim
    /// is anchored and stays unverified; no finding says it was made up.
    pub fn only_about(&mut self, rid: Rid, claim: &Claim) -> Result<bool> {
        let neutral = self.judged(rid, Some(crate::record::Relation::Neutral))?;
        Ok(!claim.witnesses.is_empty() && claim.witnesses.iter().all(|w| neutral.contains(w)))
    }

    /// Whether the prose finder recorded a span nearest an unplaced claim: a `neutral`
    /// judgement of a span the claim does not cite (SPEC.md 8.8).
    pub fn nearest_judged(&mut self, rid: Rid, claim: &Claim) -> Result<bool> {
        let neutral = self.judged(rid, Some(crate::record::Relation::Neutral))?;
        Ok(neutral.iter().any(|s| !claim.witnesses.contains(s)))
    }

    /// Whether the prose finder cited every span `claim` cites as one that contradicts it
    /// (nothing supported the sentence, and the span it speaks of clashes with it): a recorded
    /// `contradicts` judgement names each pair.
    pub fn found_contradicting(&mut self, rid: Rid, claim: &Claim) -> Result<bool> {
        let contra = self.judged(rid, Some(crate::record::Relation::Contradicts))?;
        Ok(!claim.witnesses.is_empty() && claim.witnesses.iter().all(|w| contra.contains(w)))
    }

    /// Whether the prose finder chose the spans `claim` cites: a recorded judgement of the
    /// claim names one of them (SPEC.md 8.8). Such witnesses are cairn's reading of a
    /// sentence, not the summary's own citation.
    pub fn placed_by_finder(&mut self, rid: Rid, claim: &Claim) -> Result<bool> {
        let judged = self.judged(rid, None)?;
        Ok(claim.witnesses.iter().any(|w| judged.contains(w)))
    }

    /// The spans a recorded judgement of `relation` (of any, with `None`) names for the claim
    /// `rid`.
    fn judged(
        &mut self,
        rid: Rid,
        relation: Option<crate::record::Relation>,
    ) -> Result<HashSet<Rid>> {
        let mut out = HashSet::new();
        for d in self.read.dependents(&rid)? {
            if let Some(Record::Judgement(j)) = self.read.get_trusted(&d)? {
                if j.claim == rid && relation.is_none_or(|r| j.relation == r) {
                    out.insert(j.span);
                }
            }
        }
        Ok(out)
    }

    /// A claim's direct witnesses, in order: each a span or an earlier claim.
    pub fn witnesses(&mut self, claim: &Claim) -> Result<Vec<Record>> {
        let mut out = Vec::new();
        for w in &claim.witnesses {
            if let Some(sp) = self.span(*w)? {
                out.push(Record::Span(sp));
            } else if let Some(c) = self.claim(*w)? {
                out.push(Record::Claim(c));
            }
        }
        Ok(out)
    }

    /// Whether a claim has a raw-span ancestor, and whether it was re-grounded since.
    pub fn grounding(&self, rid: &Rid) -> Result<Grounding> {
        Ok(Grounding {
            anchored: self.read.facts(rid)?.is_some_and(|f| f.anchored),
            regrounded: self.read.regrounded(rid)?.is_some(),
        })
    }

    /// The spans among `evicts` that a recorded `contradicts` judgement names against any of
    /// `claims`, in the order the judgements were recorded per claim.
    pub fn judged_contradicting(&self, claims: &[Rid], evicts: &HashSet<Rid>) -> Result<Vec<Rid>> {
        let mut out = Vec::new();
        for c in claims {
            for sp in self.read.contradicting_spans(c)? {
                if evicts.contains(&sp) {
                    out.push(sp);
                }
            }
        }
        Ok(out)
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
    let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    // Only the best few are wanted: select them in linear time, then order just those.
    let best = if scored.len() > CANDIDATES {
        scored.select_nth_unstable_by(CANDIDATES - 1, order).0.len() + 1
    } else {
        scored.len()
    };
    let best = &mut scored[..best];
    best.sort_by(order);
    best.iter().map(|(_, i)| *i).collect()
}

/// [`View::candidates`] for many queries over the same spans at once: for each query, the
/// indices of the spans holding at least `share` of its prefixes, the [`CANDIDATES`] with the
/// most, in order among equals. An inverted index from each of the queries' prefixes to the
/// spans holding it is built once; a query then costs the lengths of its prefixes' lists,
/// not a pass over every span (SPEC.md 8.6, the gate's cost).
pub(crate) fn rank_many(queries: &[&Vocab], spans: &[Vocab], share: f64) -> Vec<Vec<usize>> {
    let mut postings: HashMap<u128, Vec<u32>> = queries
        .iter()
        .flat_map(|q| q.prefixes.keys().iter().map(|k| (*k, Vec::new())))
        .collect();
    for (s, v) in spans.iter().enumerate() {
        for k in v.prefixes.keys() {
            if let Some(list) = postings.get_mut(k) {
                list.push(s as u32);
            }
        }
    }
    let mut hits = vec![0u32; spans.len()];
    let mut touched: Vec<u32> = Vec::new();
    queries
        .iter()
        .map(|q| {
            let keys = q.prefixes.keys();
            let n = keys.len();
            let mut scored: Vec<(f64, usize)> = Vec::new();
            if n == 0 {
                // No words: every span holds all of none.
                if 1.0 >= share {
                    scored.extend((0..spans.len()).take(CANDIDATES).map(|s| (1.0, s)));
                }
                return rank(&mut scored);
            }
            for k in keys {
                for s in postings.get(k).map(Vec::as_slice).unwrap_or_default() {
                    if hits[*s as usize] == 0 {
                        touched.push(*s);
                    }
                    hits[*s as usize] += 1;
                }
            }
            for s in touched.drain(..) {
                let o = f64::from(hits[s as usize]) / n as f64;
                hits[s as usize] = 0;
                if o >= share {
                    scored.push((o, s as usize));
                }
            }
            if share <= 0.0 && scored.len() < CANDIDATES {
                // Spans sharing no prefix also qualify; the earliest of them rank next.
                let have: HashSet<usize> = scored.iter().map(|(_, s)| *s).collect();
                let more = (0..spans.len()).filter(|s| !have.contains(s));
                let more: Vec<usize> = more.take(CANDIDATES).collect();
                scored.extend(more.into_iter().map(|s| (0.0, s)));
            }
            rank(&mut scored)
        })
        .collect()
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

    /// A query of thousands of distinct prefixes beside a small one: the same answer as one
    /// query at a time, spans sharing nothing ranked last by position when the share is 0.
    #[test]
    fn rank_many_of_a_large_query_matches_one_query_at_a_time() {
        let big: String = (0..4_200).map(|i| format!("w{i:04} ")).collect();
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
