//! The terms of the recall index (SPEC.md section 10b) and their BM25 weights: the one place
//! where a text becomes what `recall` matches on, at append and at query time alike.

use super::{for_each_word, has_digit};
use rust_stemmers::{Algorithm, Stemmer};

/// BM25's term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25's length normalisation.
pub const B: f64 = 0.75;
/// The document length, in terms, that BM25's length normalisation is relative to. BM25 uses
/// the corpus average; a ledger's average changes with every append, and a weight stored at
/// append must not, so the average is fixed: the mean over the real transcripts of
/// `tests/data/recall` (57.0 words a span; a corpus statistic, no relevance label involved).
pub const AVGDL: f64 = 57.0;
/// Words longer than this many bytes (encoded blobs, hashes pasted whole) are not indexed.
pub const MAX_TERM_BYTES: usize = 64;

/// The term a word stands for: the word as it is when it holds a digit (so "2.3.1" stays
/// whole), else its stem by the Snowball English stemmer (so "tables" meets "table"). Words
/// longer than [`MAX_TERM_BYTES`] are no term. No word is left out as a stop word: BM25's idf
/// already weighs "the" next to nothing, and on the recall set a stop list lost more matches
/// than it saved (SPEC.md section 10b). `f` is given the term, read from the thread's stems
/// without a copy; it must not ask for another term.
fn with_term<R>(w: &str, f: impl FnOnce(&str) -> R) -> R {
    if has_digit(w) {
        return f(w);
    }
    STEMS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(w) {
            let t = STEMMER.with(|s| s.stem(w).into_owned());
            if cache.len() >= STEMS_KEPT {
                cache.clear();
            }
            cache.insert(w.to_string(), t);
        }
        f(&cache[w])
    })
}

/// Words stemmed on this thread, most of a text's words being words seen before: the
/// Snowball stemmer costs more than a lookup. Cleared when it holds [`STEMS_KEPT`] words, so
/// its memory is bounded (a few megabytes).
const STEMS_KEPT: usize = 50_000;

thread_local! {
    static STEMMER: Stemmer = Stemmer::create(Algorithm::English);
    static STEMS: std::cell::RefCell<std::collections::HashMap<String, String>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// How often each of the terms `query` (terms as [`terms`] gives them) occurs in `text`, and
/// the text's length in terms: [`terms`] without stemming the words that cannot stem to a
/// query term. The Snowball stemmer rewrites only endings, so a word stems to a term only if
/// it starts with that term's first two bytes; the other words are only counted.
pub fn occurrences(text: &str, query: &[&str]) -> (Vec<u32>, u32) {
    let heads: Vec<&[u8]> = query
        .iter()
        .map(|t| &t.as_bytes()[..t.len().min(2)])
        .collect();
    let mut tf = vec![0u32; query.len()];
    let mut len = 0u32;
    for_each_word(text, |w| {
        if w.len() > MAX_TERM_BYTES {
            return;
        }
        len += 1;
        if !heads.iter().any(|h| w.as_bytes().starts_with(h)) {
            return;
        }
        if let Some(i) = with_term(w, |t| query.iter().position(|q| *q == t)) {
            tf[i] += 1;
        }
    });
    (tf, len)
}

/// The distinct terms of a text with their counts, in first-seen order, and the text's length
/// in terms (see [`with_term`]).
pub fn terms(text: &str) -> (Vec<(String, u32)>, u32) {
    let mut out: Vec<(String, u32)> = Vec::new();
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut len = 0u32;
    for_each_word(text, |w| {
        if w.len() > MAX_TERM_BYTES {
            return;
        }
        len += 1;
        with_term(w, |t| match seen.get(t) {
            Some(&i) => out[i].1 += 1,
            None => {
                seen.insert(t.to_string(), out.len());
                out.push((t.to_string(), 1));
            }
        });
    });
    (out, len)
}

/// BM25's weight of a term that occurs `tf` times in a text of `len` terms, before its inverse
/// document frequency: between 0 and `K1 + 1`.
pub fn weight(tf: u32, len: u32) -> f64 {
    let tf = f64::from(tf);
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * f64::from(len) / AVGDL))
}

/// A weight as the index stores it: 0 to 65,535 over 0 to `K1 + 1`, so that postings sort by
/// weight.
pub fn quantize(weight: f64) -> u16 {
    (weight / (K1 + 1.0) * 65_535.0)
        .round()
        .clamp(0.0, 65_535.0) as u16
}

/// The weight a stored one stands for.
pub fn dequantize(q: u16) -> f64 {
    f64::from(q) / 65_535.0 * (K1 + 1.0)
}

/// BM25's inverse document frequency of a term found in `df` of `n` texts (the form that is
/// never negative, as Lucene and SQLite's FTS5 use).
pub fn idf(n: u64, df: u64) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_stemmed_words_with_counts() {
        let (t, len) = terms("The staging DB runs on port 5433; the tables of staging are 2.3.1.");
        assert_eq!(len, 13);
        assert_eq!(t[0], ("the".to_string(), 2));
        assert!(t.contains(&("stage".to_string(), 2)));
        assert!(t.contains(&("5433".to_string(), 1)));
        assert!(t.contains(&("2.3.1".to_string(), 1)));
        assert!(t.contains(&("tabl".to_string(), 1)));
        let text = "The staging DB runs on port 5433; the tables of staging are 2.3.1.";
        assert_eq!(
            occurrences(text, &["stage", "tabl", "5433", "ports"]),
            (vec![2, 1, 1, 0], 13)
        );
    }

    #[test]
    fn weights_saturate_and_favour_short_texts() {
        assert!(weight(2, 20) > weight(1, 20));
        assert!(weight(1, 5) > weight(1, 100));
        assert!(weight(1000, 20) < K1 + 1.0);
        let w = weight(1, 20);
        assert!((dequantize(quantize(w)) - w).abs() < 1e-4);
        assert!(idf(1000, 1) > idf(1000, 500));
        assert!(idf(10, 10) > 0.0);
    }
}
