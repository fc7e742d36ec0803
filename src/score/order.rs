//! Order: a claim that puts two things one way round ("first X, then Y"; "X before Y"; "Y
//! after X") against the order its source gives them, by a marker of its own or, without one,
//! by where each is told.
//!
//! A claim side is the content stems on its side of the marker. The source's order comes
//! first from its own marked sentences: one that puts the claim's sides the same way round
//! settles it, one that puts them the other way round is a reversal. Without either, each side
//! goes to the source sentence holding most of its stems (one sentence, at least two stems,
//! one of them the side's own); a later sentence for the earlier side is a reversal.

use crate::text::{for_each_word, is_content, sentences, stem};

/// The two sides of an order, as sorted content stems without repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sides {
    earlier: Vec<String>,
    later: Vec<String>,
}

/// Words after which `after` or `before` names a time, not an event ("after 21:15", "the day
/// after tomorrow").
const TIME_WORDS: &[&str] = &[
    "tomorrow",
    "today",
    "tonight",
    "yesterday",
    "noon",
    "midnight",
    "lunch",
    "dinner",
];

fn content(words: &[String]) -> Vec<String> {
    let mut v: Vec<String> = words
        .iter()
        .filter(|w| is_content(w) && !ORDER_WORDS.contains(&w.as_str()))
        .map(|w| {
            // "applied" and "applying" are one word here.
            let mut s = stem(w);
            if s.ends_with('i') {
                s.pop();
                s.push('y');
            }
            s
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The lists this module reads, by name, for the scorer's id.
pub(super) fn lists() -> [(&'static str, Vec<&'static str>); 2] {
    [
        ("order-time-words", TIME_WORDS.to_vec()),
        ("order-words", ORDER_WORDS.to_vec()),
    ]
}

/// The marker words themselves, never content of a side.
const ORDER_WORDS: &[&str] = &[
    "first",
    "then",
    "before",
    "after",
    "afterwards",
    "afterward",
    "later",
    "prior",
    "ahead",
    "only",
];

/// The order a sentence states, if it has a marker: the stems before and after it.
pub(super) fn sides(sentence: &str) -> Option<Sides> {
    sides_of(sentence, &words_of(sentence))
}

fn words_of(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for_each_word(text, |w| words.push(w.to_string()));
    words
}

/// [`sides`] of a sentence already split into words.
fn sides_of(sentence: &str, words: &[String]) -> Option<Sides> {
    let at = |w: &str| words.iter().position(|x| x == w);
    let is_time = |i: usize| {
        words.get(i).is_none_or(|w| {
            w.bytes().any(|b| b.is_ascii_digit()) || TIME_WORDS.contains(&w.as_str())
        })
    };
    let split = |earlier: &[String], later: &[String]| {
        let (earlier, later) = (content(earlier), content(later));
        (!earlier.is_empty() && !later.is_empty()).then_some(Sides { earlier, later })
    };
    // "After X, Y" and "Before Y, X": the clause before the first comma is the marked side.
    if let (Some(first), Some((head, _))) = (words.first(), sentence.split_once(',')) {
        let mut n = 0;
        for_each_word(head, |_| n += 1);
        let n = n.min(words.len());
        if n > 1 && !is_time(1) {
            match first.as_str() {
                "after" => return split(&words[1..n], &words[n..]),
                "before" => return split(&words[n..], &words[1..n]),
                _ => {}
            }
        }
    }
    // "first X, then Y", "X, then Y"; not "if X then Y".
    if let Some(t) = at("then") {
        // "If X, Y first and then Z" orders Y and Z: a "first" after the condition word
        // opens the ordered part.
        let cond = words[..t].iter().rposition(|w| w == "if" || w == "when");
        let conditional = cond.is_some_and(|c| !words[c..t].iter().any(|w| w == "first"));
        if !conditional {
            // "first X, then Y", or "X first and only then Y".
            let from = cond.map_or(0, |c| {
                // After the condition's clause: the word after its comma, if any.
                let f = at("first").unwrap_or(t);
                let head = sentence.split(',').next().unwrap_or("");
                let mut n = 0;
                for_each_word(head, |_| n += 1);
                if n > c && n < f {
                    n
                } else {
                    c + 1
                }
            });
            let earlier = match at("first").filter(|&f| f < t && f >= from) {
                Some(f) if !content(&words[f + 1..t]).is_empty() => &words[f + 1..t],
                Some(f) => &words[from..f],
                None => &words[..t],
            };
            return split(earlier, &words[t + 1..]);
        }
    }
    // Before and after reach to the ends of their clause.
    let mut clause = Vec::with_capacity(words.len());
    for (i, part) in sentence.split([',', ';', ':']).enumerate() {
        for_each_word(part, |_| clause.push(i));
    }
    let clause_of = |i: usize| {
        let c = clause.get(i).copied();
        let start = (0..i)
            .rev()
            .take_while(|&j| clause.get(j).copied() == c)
            .last();
        let end = (i..words.len())
            .take_while(|&j| clause.get(j).copied() == c)
            .last();
        (start.unwrap_or(i), end.map_or(i + 1, |e| e + 1))
    };
    // A marker of a thing already named ("after all of them", "before that") orders nothing
    // the claim names.
    let pronoun = |i: usize| {
        words.get(i).is_some_and(|w| {
            matches!(
                w.as_str(),
                "all" | "that" | "this" | "it" | "them" | "these" | "those" | "everything" | "each"
            )
        })
    };
    // "X before Y", "X prior to Y", "X ahead of Y".
    for (w, skip) in [("before", 1), ("prior", 2), ("ahead", 2)] {
        if let Some(b) = at(w) {
            if skip == 2 && !matches!(words.get(b + 1).map(String::as_str), Some("to" | "of")) {
                continue;
            }
            if is_time(b + skip) || pronoun(b + skip) || b == 0 {
                continue;
            }
            let (start, end) = clause_of(b);
            return split(&words[start..b], &words[(b + skip).min(end)..end]);
        }
    }
    // "Y after X"; "X, after which Y".
    if let Some(a) = at("after") {
        if matches!(words.get(a + 1).map(String::as_str), Some("which")) {
            return split(&words[..a], &words[a + 2..]);
        }
        if a > 0 && !is_time(a + 1) && !pronoun(a + 1) {
            let (start, end) = clause_of(a);
            return split(&words[a + 1..end], &words[start..a]);
        }
    }
    // "X first and Y afterwards".
    let first = at("first")?;
    let last = ["afterwards", "afterward", "later"]
        .iter()
        .filter_map(|w| at(w))
        .find(|&l| l > first)?;
    split(&words[..first], &words[first + 1..last])
}

/// A source read for order: each sentence's stated order and its content stems.
pub(super) struct SourceOrder {
    sents: Vec<(Option<Sides>, Vec<String>)>,
}

/// Reads a source for [`reversed`].
pub(super) fn source_order(text: &str) -> SourceOrder {
    SourceOrder {
        sents: sentences(text)
            .into_iter()
            .map(|s| {
                let words = words_of(s);
                (sides_of(s, &words), content(&words))
            })
            .collect(),
    }
}

fn shared(a: &[String], b: &[String]) -> usize {
    a.iter().filter(|w| b.binary_search(w).is_ok()).count()
}

/// Whether the source puts the claim's two sides the other way round.
pub(super) fn reversed(claim: &Sides, src: &SourceOrder) -> bool {
    let own = |side: &[String], other: &[String]| -> Vec<String> {
        side.iter()
            .filter(|w| other.binary_search(w).is_err())
            .cloned()
            .collect()
    };
    let (x, y) = (
        own(&claim.earlier, &claim.later),
        own(&claim.later, &claim.earlier),
    );
    if x.is_empty() || y.is_empty() {
        return false;
    }
    // The source's own markers first.
    let mut against = false;
    for s in src.sents.iter().filter_map(|(s, _)| s.as_ref()) {
        let (xe, xl) = (shared(&x, &s.earlier), shared(&x, &s.later));
        let (ye, yl) = (shared(&y, &s.earlier), shared(&y, &s.later));
        if xe >= 1 && yl >= 1 && xe + yl >= xl + ye {
            return false;
        }
        against |= xl >= 1 && ye >= 1 && xl + ye > xe + yl;
    }
    if against {
        return true;
    }
    // Else where each side is told.
    let place = |side: &[String], mine: &[String]| -> Option<usize> {
        let counts: Vec<usize> = src.sents.iter().map(|(_, c)| shared(side, c)).collect();
        let best = *counts.iter().max()?;
        let mut at = counts.iter().enumerate().filter(|(_, c)| **c == best);
        let (i, _) = at.next()?;
        let unique = at.next().is_none();
        (best >= 2 && unique && shared(mine, &src.sents[i].1) >= 1).then_some(i)
    };
    match (place(&claim.earlier, &x), place(&claim.later, &y)) {
        (Some(e), Some(l)) => e > l,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reverses(claim: &str, source: &str) -> bool {
        let c = sides(claim).expect("the claim states an order");
        reversed(&c, &source_order(source))
    }

    #[test]
    fn an_order_the_source_reverses_is_seen_and_one_it_keeps_is_not() {
        let marked = "Committing app.py before applying edits. Commit 56975d0 fix paths.";
        assert!(reverses(
            "Aider applied the edit to app.py before committing 56975d0.",
            marked
        ));
        assert!(reverses(
            "Aider applied the edit first and only then committed.",
            marked
        ));
        assert!(!reverses(
            "Aider committed app.py before applying the edit.",
            marked
        ));
        assert!(!reverses(
            "After committing app.py, aider applied the edit.",
            marked
        ));
        let told = "You want to first cancel your flight on May 22 from JFK to MCO. \
                    You also want to book a new flight from JFK to SFO on May 24.";
        assert!(reverses(
            "The customer first wants to book the JFK to SFO flight and only then cancel the May 22 flight to MCO.",
            told
        ));
        assert!(!reverses(
            "The customer wants to cancel the May 22 flight to MCO, then book the JFK to SFO flight.",
            told
        ));
        // Times are not events, and a condition is not an order.
        assert_eq!(sides("I need a train leaving after 21:15."), None);
        assert_eq!(sides("If it fails then retry the upload."), None);
    }
}
