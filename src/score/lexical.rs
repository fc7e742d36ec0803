//! The built-in lexical scorer. For each sentence of the claim it finds the best-matching
//! window of the source (one to three consecutive sentences) and measures:
//!
//! - coverage: the share of the claim sentence's content words found in that window;
//! - precision: the share found anywhere in the source (an edited word is usually new);
//! - identifier precision: the share of its identifiers found verbatim in the source, and
//!   same-kind conflicts (2.3.1 against 2.4.0 after the same word; port 5432 against 5433);
//! - negation, antonym and failure mismatch against the window;
//! - hedges: a hedged window supports an unhedged claim only weakly.
//!
//! The claim's entailment is the weakest sentence's; its contradiction the strongest.

use super::text::Ident;
use super::text::WordSet;
use super::text::{
    antonym_clash, content, has_any, identifiers, is_hedged, is_negated, negated_scope, sentences,
    stem_set, words, IdKind, FAILURES,
};
use super::{ScoreError, Scorer, Scores};
use std::cell::RefCell;
use std::collections::HashMap;

type TextMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<super::text::Fnv>>;
use std::rc::Rc;

/// Words after which a number names a slot holding one value, so that two different numbers
/// there conflict (port 5432 against port 5433).
const SLOTS: &[&str] = &[
    "port", "version", "v", "release", "budget", "limit", "timeout", "deadline", "max", "maximum",
    "min", "minimum", "size", "cap", "quota", "retries", "workers", "threads", "pid", "code",
    "status", "exit", "python", "node", "rust", "go", "java",
];

const NAME_POW: f64 = 2.0;

/// The least coverage at which a window is about the claim's topic: below it, no negation,
/// antonym, failure or version difference counts as a contradiction.
pub const TOPIC: f64 = 0.3;

/// The built-in scorer, id `cairn-lexical-1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lexical;

#[derive(Clone)]
struct Window {
    stems: WordSet,
    content: WordSet,
    ids: Vec<Ident>,
    hedged: bool,
    negated: bool,
    scope: Vec<String>,
    failure: bool,
}

impl Window {
    fn new(text: &str) -> Window {
        let words = words(text);
        Window {
            content: content(text).into_iter().collect(),
            ids: identifiers(text),
            hedged: is_hedged(text),
            negated: is_negated(&words),
            scope: negated_scope(&words),
            failure: has_any(&words, FAILURES),
            stems: stem_set(&words),
        }
    }
}

/// A source analysed once: each sentence analysed once, the windows (one to three consecutive
/// sentences) as ranges over them, and for each word the sentences that hold it, so finding a
/// claim's best window costs the claim's postings, not every window.
struct Source {
    text: String,
    sents: Vec<Window>,
    /// (first sentence, sentence count) of each window, in the order windows are ranked.
    wins: Vec<(u32, u32)>,
    /// For each sentence and length 1 to 3, the window starting there.
    win_at: Vec<[u32; 3]>,
    all: WordSet,
    all_words: WordSet,
    postings: TextMap<Vec<u32>>,
}

impl Source {
    fn new(text: &str) -> Source {
        let mut sents: Vec<Window> = sentences(text).into_iter().map(Window::new).collect();
        if sents.is_empty() {
            sents.push(Window::new(""));
        }
        let n = sents.len();
        let mut wins = Vec::new();
        let mut win_at = vec![[u32::MAX; 3]; n];
        for (i, at) in win_at.iter_mut().enumerate() {
            for len in 1..=3usize {
                if i + len > n {
                    break;
                }
                at[len - 1] = wins.len() as u32;
                wins.push((i as u32, len as u32));
            }
        }
        let mut postings: TextMap<Vec<u32>> = TextMap::default();
        for (i, w) in sents.iter().enumerate() {
            for t in &w.content {
                postings.entry(t.clone()).or_default().push(i as u32);
            }
        }
        Source {
            text: text.to_string(),
            sents,
            wins,
            win_at,
            all: content(text).into_iter().collect(),
            all_words: words(text).into_iter().collect(),
            postings,
        }
    }

    /// The window of sentences `start .. start + len`, merged from its sentences.
    fn window(&self, (start, len): (u32, u32)) -> Window {
        let parts = &self.sents[start as usize..(start + len) as usize];
        if let [one] = parts {
            return one.clone();
        }
        let mut w = Window {
            stems: WordSet::default(),
            content: WordSet::default(),
            ids: Vec::new(),
            hedged: false,
            negated: false,
            scope: Vec::new(),
            failure: false,
        };
        for p in parts {
            w.stems.extend(p.stems.iter().cloned());
            w.content.extend(p.content.iter().cloned());
            w.ids.extend(p.ids.iter().cloned());
            w.hedged |= p.hedged;
            w.negated |= p.negated;
            w.scope.extend(p.scope.iter().cloned());
            w.failure |= p.failure;
        }
        w
    }
}

/// One claim sentence analysed once.
struct ClaimPart {
    content: Vec<String>,
    stems: WordSet,
    ids: Vec<Ident>,
    names: Vec<String>,
    hedged: bool,
    negated: bool,
    scope: Vec<String>,
    failure: bool,
}

impl ClaimPart {
    fn new(claim: &str) -> ClaimPart {
        let words = words(claim);
        // Names: capitalised words after the first, which edits swap for other names.
        let names = claim
            .split_whitespace()
            .skip(1)
            .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
            .flat_map(super::text::words)
            .collect();
        ClaimPart {
            content: content(claim),
            ids: identifiers(claim),
            names,
            hedged: is_hedged(claim),
            negated: is_negated(&words),
            scope: negated_scope(&words),
            failure: has_any(&words, FAILURES),
            stems: stem_set(&words),
        }
    }
}

const CACHE_LIMIT: usize = 4096;

thread_local! {
    static SOURCES: RefCell<TextMap<Rc<Source>>> = RefCell::new(TextMap::default());
    static CLAIMS: RefCell<TextMap<Rc<Vec<ClaimPart>>>> = RefCell::new(TextMap::default());
}

/// Analyses are pure functions of the text, so a cache cannot change a score; it only saves
/// re-reading the same span for each of a summary's claims.
fn cached<T>(
    cache: &'static std::thread::LocalKey<RefCell<TextMap<Rc<T>>>>,
    key: &str,
    make: impl FnOnce() -> T,
) -> Rc<T> {
    cache.with(|c| {
        if let Some(hit) = c.borrow().get(key) {
            return hit.clone();
        }
        let value = Rc::new(make());
        let mut map = c.borrow_mut();
        if map.len() >= CACHE_LIMIT {
            map.clear();
        }
        map.insert(key.to_string(), value.clone());
        value
    })
}

fn analysed(text: &str) -> Rc<Source> {
    cached(&SOURCES, text, || Source::new(text))
}

fn claim_parts(text: &str) -> Rc<Vec<ClaimPart>> {
    cached(&CLAIMS, text, || {
        let mut parts = sentences(text);
        if parts.is_empty() {
            parts.push(text);
        }
        parts.into_iter().map(ClaimPart::new).collect()
    })
}

fn fuzzy(a: &str, set: &WordSet) -> bool {
    set.contains(a)
        || (a.len() >= 5
            && set
                .iter()
                .any(|b| b.len() >= 5 && b.as_bytes()[..5] == a.as_bytes()[..5]))
}

/// One claim sentence against the source.
fn sentence_scores(part: &ClaimPart, src: &Source) -> Scores {
    let (all, all_words, source) = (&src.all, &src.all_words, src.text.as_str());
    let c = &part.content;
    if c.is_empty() {
        return Scores {
            entailment: 1.0,
            contradiction: 0.0,
            similarity: 1.0,
        };
    }
    let n = c.len() as f64;
    // Hits per window from the sentence postings: a claim word counts once for each window
    // holding a sentence that has it. The best window is the first with the most hits.
    let mut hits = vec![0u32; src.wins.len()];
    let mut stamp = vec![u32::MAX; src.wins.len()];
    let sentences = src.sents.len() as u32;
    for (k, t) in c.iter().enumerate() {
        for &j in src.postings.get(t).map(Vec::as_slice).unwrap_or(&[]) {
            for len in 1..=3u32 {
                for start in j.saturating_sub(len - 1)..=j {
                    if start + len > sentences {
                        continue;
                    }
                    let w = src.win_at[start as usize][(len - 1) as usize] as usize;
                    if stamp[w] != k as u32 {
                        stamp[w] = k as u32;
                        hits[w] += 1;
                    }
                }
            }
        }
    }
    let mut at = 0;
    for (i, h) in hits.iter().enumerate() {
        if *h > hits[at] {
            at = i;
        }
    }
    let best = &src.window(src.wins[at]);
    let cov = f64::from(hits[at]) / n;
    let precision = c.iter().filter(|t| all.contains(*t)).count() as f64 / n;
    let fuzzy_cov = c.iter().filter(|t| fuzzy(t, &best.content)).count() as f64 / n;

    let ids = &part.ids;
    let win_ids = &best.ids;
    let mut id_found = 0.0;
    let mut conflict = false;
    let mut soft_conflict = false;
    let mut same_kind = 0.0;
    for id in ids {
        if source.contains(&id.text) {
            id_found += 1.0;
            same_kind += 1.0;
            continue;
        }
        let rivals: Vec<_> = win_ids
            .iter()
            .filter(|w| w.kind == id.kind && w.text != id.text)
            .collect();
        if !rivals.is_empty() {
            same_kind += 1.0;
        }
        // Versions of the same thing conflict; other numbers only in a slot that holds one
        // value (a port, a limit), after the same word.
        conflict |= rivals.iter().any(|w| {
            (id.kind == IdKind::Version && cov >= TOPIC)
                || (w.before.is_some()
                    && w.before == id.before
                    && w.before.as_deref().is_some_and(|b| SLOTS.contains(&b)))
        });
        // Another number after the same word, in a window about the same thing, weakens the
        // support without counting as a contradiction ("service 3" against "service 47").
        soft_conflict |= cov >= 0.6
            && rivals
                .iter()
                .any(|w| w.before.is_some() && w.before == id.before);
    }
    let id_precision = if ids.is_empty() {
        1.0
    } else {
        id_found / ids.len() as f64
    };

    let names = &part.names;
    let name_precision = if names.is_empty() {
        1.0
    } else {
        names.iter().filter(|w| all_words.contains(*w)).count() as f64 / names.len() as f64
    };

    // A negation counts only where it denies something the other side asserts.
    let claim_set: WordSet = c.iter().cloned().collect();
    let denies = |scope: Vec<String>, other: &dyn Fn(&String) -> bool| scope.iter().any(other);
    let neg_mismatch = cov >= 0.4
        && ((best.negated
            && !part.negated
            && denies(best.scope.clone(), &|w| claim_set.contains(w)))
            || (part.negated
                && !best.negated
                && denies(part.scope.clone(), &|w| best.content.contains(w))));
    let antonym = cov >= TOPIC && antonym_clash(&part.stems, &best.stems);
    // A failure report contradicts a claim only when it is about the same thing: it names one
    // of the claim's identifiers, or, for a claim without any, it covers most of its words.
    let shares_id = ids
        .iter()
        .any(|i| best.ids.iter().any(|w| w.text == i.text));
    let failure = best.failure
        && !part.failure
        && cov >= 0.4
        && (shares_id || (ids.is_empty() && cov >= 0.8));
    let hedge_gap = best.hedged && !part.hedged;

    let mut entailment =
        (0.6 * cov + 0.4 * precision) * id_precision.powf(1.5) * name_precision.powf(NAME_POW);
    if neg_mismatch {
        entailment *= 0.25;
    } else if cov >= 0.4 && part.negated != best.negated {
        entailment *= 0.7;
    }
    if antonym {
        entailment *= 0.3;
    }
    if hedge_gap {
        entailment *= 0.6;
    }
    if failure {
        entailment *= 0.5;
    }
    if soft_conflict && !conflict {
        entailment *= 0.5;
    }
    let mut contradiction: f64 = 0.0;
    if conflict {
        contradiction = contradiction.max(0.8);
    }
    if neg_mismatch {
        contradiction = contradiction.max(0.4 + 0.4 * cov);
    }
    if antonym {
        contradiction = contradiction.max(0.7);
    }
    if failure {
        contradiction = contradiction.max(0.6);
    }
    let id_similarity = if ids.is_empty() {
        1.0
    } else {
        same_kind / ids.len() as f64
    };
    let similarity = 0.8 * fuzzy_cov + 0.2 * id_similarity;
    Scores {
        entailment: entailment.clamp(0.0, 1.0),
        contradiction: contradiction.clamp(0.0, 1.0),
        similarity: similarity.clamp(0.0, 1.0),
    }
}

impl Scorer for Lexical {
    fn id(&self) -> &str {
        "cairn-lexical-1"
    }

    fn score(&self, claim: &str, source: &str) -> Result<Scores, ScoreError> {
        let src = analysed(source);
        let per: Vec<Scores> = claim_parts(claim)
            .iter()
            .map(|p| sentence_scores(p, &src))
            .collect();
        let min_e = per.iter().map(|s| s.entailment).fold(1.0, f64::min);
        let mean_e = per.iter().map(|s| s.entailment).sum::<f64>() / per.len() as f64;
        Ok(Scores {
            entailment: 0.7 * min_e + 0.3 * mean_e,
            contradiction: per.iter().map(|s| s.contradiction).fold(0.0, f64::max),
            similarity: per.iter().map(|s| s.similarity).sum::<f64>() / per.len() as f64,
        })
    }
}
