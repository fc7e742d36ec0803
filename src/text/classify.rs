//! The decision-relevant classifier: prohibitions, numeric commitments and failed attempts in a
//! stream's raw spans. It reads the ledger's spans, never a summary being judged.
//!
//! - Prohibitions and commitments are what the user or the system states.
//! - Failed attempts are what tools print and what the assistant reports.
//! - A number inside a path, a URL or a log line is not a commitment.

use super::{for_each_word, identifiers, sentences, words, IdKind, WordList, FAILURES};

/// Who speaks a text, as the classifier reads it: the store maps a span's role to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// The person directing the agent.
    User,
    /// The agent itself.
    Assistant,
    /// A tool's output.
    Tool,
    /// The system prompt or runtime.
    System,
}

/// The kind of a decision-relevant item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Something that must never be done.
    Prohibition,
    /// A numeric commitment: a version, budget, deadline or limit.
    Commitment,
    /// A failed attempt whose reason prevents a retry.
    FailedAttempt,
}

/// One decision-relevant item found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What kind of item.
    pub class: Class,
    /// The sentence or line that states it.
    pub text: String,
}

const PROHIBITION_CUES: &[&str] = &[
    "never ",
    "do not ",
    "don't ",
    "dont ",
    "must not ",
    "mustn't ",
    "shall not ",
    "should not ",
    "shouldn't ",
    "not allowed",
    "forbidden",
    "prohibited",
    "under no circumstances",
    "not permitted",
    "no one may",
    "stop doing",
];

static COMMITMENT_CUES: WordList = WordList::new(&[
    "stay", "stays", "still", "pin", "pinned", "keep", "must", "budget", "deadline", "limit",
    "most", "max", "maximum", "minimum", "least", "until", "by", "within", "version", "target",
    "cap", "capped", "require", "required", "requires", "only", "exactly", "due", "locked",
]);

const ASSISTANT_FAILURES: &[&str] = &[
    "failed",
    "did not work",
    "didn't work",
    "could not",
    "couldn't",
    "unable to",
    "error",
    "broke",
    "crashed",
    "was refused",
    "timed out",
];

/// A line that looks like output of a logger or a stack trace, not a statement.
fn is_log_line(s: &str) -> bool {
    let t = s.trim_start();
    let first = t.split_whitespace().next().unwrap_or("");
    let level = [
        "INFO", "WARN", "WARNING", "ERROR", "DEBUG", "TRACE", "FATAL",
    ];
    t.starts_with('[')
        || t.starts_with("at ")
        || t.starts_with("File \"")
        || level
            .iter()
            .any(|l| first.trim_matches(|c: char| !c.is_alphanumeric()) == *l)
        || (first.len() >= 8
            && first.chars().take(4).all(|c| c.is_ascii_digit())
            && first.chars().nth(4) == Some('-'))
}

fn lower(s: &str) -> String {
    format!(" {} ", s.to_lowercase())
}

/// Verbs that a negation leaves a statement of fact, not a rule: "I don't have the order ID",
/// "I don't remember the reservation", "don't hesitate to contact us".
const NOT_A_RULE: &[&str] = &[
    "have",
    "know",
    "remember",
    "recall",
    "need",
    "think",
    "see",
    "hesitate",
    "mind",
    "understand",
    "care",
];

/// Negations before the verbs of [`NOT_A_RULE`].
const NEGATED: &[&str] = &[
    "don't ",
    "do not ",
    "doesn't ",
    "does not ",
    "didn't ",
    "did not ",
    "dont ",
];

fn is_prohibition(s: &str, rules: u8) -> bool {
    let mut l = lower(s);
    if rules >= 2 {
        // A typographic apostrophe is an apostrophe, and "I don't have ..." states a fact.
        l = l.replace('\u{2019}', "'");
        for n in NEGATED {
            for v in NOT_A_RULE {
                l = l.replace(&format!("{n}{v} "), " ");
            }
        }
    }
    !s.trim_end().ends_with('?') && PROHIBITION_CUES.iter().any(|c| l.contains(c))
}

fn is_commitment(s: &str) -> bool {
    if is_log_line(s) || s.trim_end().ends_with('?') {
        return false;
    }
    let mut cue = false;
    for_each_word(s, |w| cue |= COMMITMENT_CUES.contains(w));
    cue && identifiers(s)
        .iter()
        .any(|i| matches!(i.kind, IdKind::Version | IdKind::Number | IdKind::Code))
}

/// The line without path and file-name tokens, so `src/error.rs` reports no error.
fn without_paths(line: &str) -> String {
    line.split_whitespace()
        .filter(|t| {
            let t = t.trim_end_matches([':', ',', ';']);
            let file = t.rsplit_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && (1..=4).contains(&b.len())
                    && b.chars().all(|c| c.is_ascii_alphanumeric())
                    && b.chars().any(|c| c.is_ascii_alphabetic())
            });
            !t.contains('/') && !file
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn failure_line(voice: Voice, text: &str) -> Option<String> {
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut found = None;
    for line in lines {
        let hit = match voice {
            Voice::Tool => {
                // The words of the line without paths are among the line's words: a line
                // with no failure word at all needs no closer look.
                let mut any = false;
                for_each_word(line, |x| any |= FAILURES.contains(x));
                let failure_word = any && {
                    let w = words(&without_paths(line));
                    // "0 failed", "errors: 0" and "no errors" report success.
                    let zero = |i: usize| {
                        (i > 0 && (w[i - 1] == "0" || w[i - 1] == "no"))
                            || w.get(i + 1).is_some_and(|n| n == "0")
                    };
                    w.iter()
                        .enumerate()
                        .any(|(i, x)| FAILURES.contains(x) && !zero(i))
                };
                failure_word || {
                    let l = line.to_lowercase();
                    l.contains("timed out")
                        || l.contains("not found")
                        || l.contains("exit code") && !l.contains("exit code 0")
                }
            }
            _ => {
                let l = line.to_lowercase();
                ASSISTANT_FAILURES.iter().any(|c| l.contains(c))
            }
        };
        if hit {
            found = Some(line.to_string());
            break;
        }
    }
    found
}

/// The decision-relevant items of one text spoken by `voice`, by the classifier of derived
/// rules version `rules` (version 2 reads typographic apostrophes and leaves "I don't have /
/// know / remember ..." out of the prohibitions).
pub fn classify(voice: Voice, text: &str, rules: u8) -> Vec<Found> {
    let item = |class, text: &str| Found {
        class,
        text: text.trim().to_string(),
    };
    let mut out = Vec::new();
    match voice {
        Voice::User | Voice::System => {
            for s in sentences(text) {
                if is_prohibition(s, rules) {
                    out.push(item(Class::Prohibition, s));
                }
                if is_commitment(s) {
                    out.push(item(Class::Commitment, s));
                }
            }
        }
        Voice::Tool | Voice::Assistant => {
            if let Some(line) = failure_line(voice, text) {
                out.push(item(Class::FailedAttempt, &line));
            }
        }
    }
    out
}
