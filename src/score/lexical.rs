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

use super::text::{
    antonym_clash, content, has_any, identifiers, is_hedged, is_negated, negated_scope, sentences,
    words, IdKind, FAILURES,
};
use super::{ScoreError, Scorer, Scores};
use std::collections::HashSet;

const NAME_POW: f64 = 2.0;

/// The built-in scorer, id `cairn-lexical-1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lexical;

struct Window {
    text: String,
    words: Vec<String>,
    content: HashSet<String>,
}

fn windows(source: &str) -> Vec<Window> {
    let sents = sentences(source);
    let mut out = Vec::new();
    for i in 0..sents.len() {
        for n in 1..=3usize {
            if i + n > sents.len() {
                break;
            }
            let text = sents[i..i + n].join(" ");
            out.push(Window {
                words: words(&text),
                content: content(&text).into_iter().collect(),
                text,
            });
        }
    }
    if out.is_empty() {
        out.push(Window {
            text: String::new(),
            words: Vec::new(),
            content: HashSet::new(),
        });
    }
    out
}

fn fuzzy(a: &str, set: &HashSet<String>) -> bool {
    set.contains(a)
        || (a.len() >= 5
            && set
                .iter()
                .any(|b| b.len() >= 5 && b.as_bytes()[..5] == a.as_bytes()[..5]))
}

/// One claim sentence against the source.
fn sentence_scores(
    claim: &str,
    wins: &[Window],
    all: &HashSet<String>,
    all_words: &HashSet<String>,
    source: &str,
) -> Scores {
    let c: Vec<String> = content(claim);
    let cw = words(claim);
    if c.is_empty() {
        return Scores {
            entailment: 1.0,
            contradiction: 0.0,
            similarity: 1.0,
        };
    }
    let n = c.len() as f64;
    let (best, cov) = wins
        .iter()
        .map(|w| {
            let hit = c.iter().filter(|t| w.content.contains(*t)).count() as f64;
            (w, hit / n)
        })
        .fold((&wins[0], -1.0), |acc, x| if x.1 > acc.1 { x } else { acc });
    let precision = c.iter().filter(|t| all.contains(*t)).count() as f64 / n;
    let fuzzy_cov = c.iter().filter(|t| fuzzy(t, &best.content)).count() as f64 / n;

    let ids = identifiers(claim);
    let win_ids = identifiers(&best.text);
    let mut id_found = 0.0;
    let mut conflict = false;
    let mut same_kind = 0.0;
    for id in &ids {
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
        conflict |= rivals
            .iter()
            .any(|w| id.kind == IdKind::Version || (w.before.is_some() && w.before == id.before));
    }
    let id_precision = if ids.is_empty() {
        1.0
    } else {
        id_found / ids.len() as f64
    };

    // Names: capitalised words after the first, which edits swap for other names.
    let names: Vec<String> = claim
        .split_whitespace()
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .flat_map(words)
        .collect();
    let name_precision = if names.is_empty() {
        1.0
    } else {
        names.iter().filter(|w| all_words.contains(*w)).count() as f64 / names.len() as f64
    };

    // A negation counts only where it denies something the other side asserts.
    let claim_set: HashSet<&String> = c.iter().collect();
    let denies = |scope: Vec<String>, other: &dyn Fn(&String) -> bool| scope.iter().any(other);
    let neg_mismatch = cov >= 0.4
        && ((is_negated(&best.words)
            && !is_negated(&cw)
            && denies(negated_scope(&best.words), &|w| claim_set.contains(w)))
            || (is_negated(&cw)
                && !is_negated(&best.words)
                && denies(negated_scope(&cw), &|w| best.content.contains(w))));
    let antonym = antonym_clash(&cw, &best.words);
    let failure = has_any(&best.words, FAILURES) && !has_any(&cw, FAILURES) && cov >= 0.4;
    let hedge_gap = is_hedged(&best.text) && !is_hedged(claim);

    let mut entailment =
        (0.6 * cov + 0.4 * precision) * id_precision.powf(1.5) * name_precision.powf(NAME_POW);
    if neg_mismatch {
        entailment *= 0.25;
    } else if cov >= 0.4 && is_negated(&cw) != is_negated(&best.words) {
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
        let wins = windows(source);
        let all: HashSet<String> = content(source).into_iter().collect();
        let all_words: HashSet<String> = words(source).into_iter().collect();
        let mut parts = sentences(claim);
        if parts.is_empty() {
            parts.push(claim);
        }
        let per: Vec<Scores> = parts
            .iter()
            .map(|s| sentence_scores(s, &wins, &all, &all_words, source))
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
