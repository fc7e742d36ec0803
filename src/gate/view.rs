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
