//! The decision-relevant classifier: prohibitions, numeric commitments and failed attempts in a
//! stream's raw spans. It reads the ledger's spans, never a summary being judged.
//!
//! - Prohibitions and commitments are what the user or the system states.
//! - Failed attempts are what tools print and what the assistant reports.
//! - A number inside a path, a URL or a log line is not a commitment.

use super::{
    for_each_word, identifiers, sentences, words, IdKind, WordList, FAILURES, NUMBERING,
    NUMBER_WORDS,
};

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
    /// A preference or choice the user states.
    Preference,
    /// A rule a system prompt or policy states.
    Policy,
    /// An identifier to keep verbatim: a booking or order code, a hash, a phone number, an
    /// amount, a path, a version, a name.
    Identifier,
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
    "shouldnt ",
    "mustnt ",
    " avoid ",
];

static COMMITMENT_CUES: WordList = WordList::new(&[
    "stay", "stays", "still", "pin", "pinned", "keep", "must", "budget", "deadline", "limit",
    "most", "max", "maximum", "minimum", "least", "until", "by", "within", "target", "cap",
    "capped", "require", "required", "requires", "only", "exactly", "due", "locked",
]);

/// What an assistant says when an attempt failed, or is still failing. "error", "broke" and
/// "crashed" are not among them: in narration ("error handling", "linter errors") they report
/// no failure.
const ASSISTANT_FAILURES: &[&str] = &[
    "failed",
    "did not work",
    "didn't work",
    "was refused",
    "timed out",
    "could not",
    "couldn't",
    "unable to",
    "wasn't able to",
    "was not able to",
    "unfortunately",
    "we cannot",
    "still getting",
    "there are no ",
    "don't have any",
    "are failing",
    "is failing",
    "still fails",
    "doesn't work",
    "does not work",
];

/// What a shell or tool prints for a failure beside its failure words.
const TOOL_FAILURES: &[&str] = &[
    "timed out",
    "not found",
    "no such file",
    "did not match",
    "conflict marker",
    "permission denied",
    "connection refused",
    "<tool_use_error>",
];

/// How a speaker says a failure was meant: a demonstration, a test that fails on purpose.
const EXPECTED: &[&str] = &["as expected", "as we expected", "expected error"];

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
    "feel",
    "forget",
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

/// A restriction a system prompt states ("An order can only be cancelled if ..."): what it
/// does not allow is forbidden.
const RESTRICTION_CUES: &[&str] = &[" can only be ", " may only be "];

fn is_prohibition(s: &str) -> bool {
    // A typographic apostrophe is an apostrophe, and "I don't have ..." states a fact.
    let mut l = lower(s).replace('\u{2019}', "'");
    for n in NEGATED {
        for v in NOT_A_RULE {
            l = l.replace(&format!("{n}{v} "), " ");
        }
    }
    // "Why don't you show me both?" suggests, even without its question mark; it forbids
    // nothing.
    for why in ["why don't ", "why do not ", "why dont ", "why not "] {
        l = l.replace(why, "why ");
    }
    // "recovery never derives keys" and "it was never called" describe; "never run it" forbids.
    let l = without_descriptive_never(&l);
    // "Plugin skills do not use it" describes; "do not use it" and "we do not use it" forbid.
    let l = without_descriptive_do_not(&l);
    let cue = PROHIBITION_CUES.iter().any(|c| l.contains(c));
    !s.trim_end().ends_with('?') && cue
}

/// `l` without each "never" followed by a verb in the third person, the past or the gerund
/// ("never derives", "never called", "never deriving"): such a "never" states a fact, it
/// forbids nothing; one that forbids is followed by the verb's bare form ("never derive").
fn without_descriptive_never(l: &str) -> String {
    let words: Vec<&str> = l.split(' ').collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut skip = false;
    for (i, w) in words.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        let next = words
            .get(i + 1)
            .map(|n| n.trim_matches(|c: char| !c.is_alphanumeric()));
        let describes = next.is_some_and(|n| {
            (n.len() > 3 && n.ends_with('s') && !n.ends_with("ss"))
                || n.ends_with("ed")
                || (n.len() > 4 && n.ends_with("ing"))
        });
        if w.trim_start_matches(|c: char| !c.is_alphanumeric()) == "never" && describes {
            skip = true;
            continue;
        }
        out.push(w);
    }
    out.join(" ")
}

/// Words after which a plural-looking word is a verb, not a subject ("if it fails").
const BEFORE_A_VERB: &[&str] = &[
    "it", "he", "she", "this", "that", "which", "who", "if", "when",
];

/// `l` without each "do not" or "don't" that follows its subject, a thing named in the third
/// person: a code name or a parenthesis ("plugin skills (`/recall`) do not use it"), "they",
/// "these" or "those", or a plural noun ("the tests don't hit the network"). Such a "do not"
/// states a fact, it forbids nothing. One that opens its clause, or follows anyone else ("you
/// do not", "we do not", "absolutely do not", "if it fails don't retry"), forbids.
fn without_descriptive_do_not(l: &str) -> String {
    let words: Vec<&str> = l.split(' ').collect();
    let bare = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
    let subject = |i: usize| {
        let p = words[i - 1];
        let w = bare(p);
        let before = if i >= 2 {
            bare(words[i - 2])
        } else {
            String::new()
        };
        let plural = w.len() > 3
            && w.ends_with('s')
            && !w.ends_with("ss")
            && !BEFORE_A_VERB.contains(&before.as_str());
        let ended = p.ends_with([',', ';', ':', '.', '!', '?']);
        !ended
            && (p.ends_with([')', '`'])
                || ["they", "these", "those"].contains(&w.as_str())
                || plural)
    };
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let cue = match *w {
            "don't" | "dont" => true,
            "do" => words.get(i + 1) == Some(&"not"),
            _ => false,
        };
        out.push(if cue && i > 0 && subject(i) {
            "does"
        } else {
            w
        });
    }
    out.join(" ")
}

fn is_commitment(s: &str) -> bool {
    if is_log_line(s) || s.trim_end().ends_with('?') {
        return false;
    }
    let mut cue = false;
    for_each_word(s, |w| cue |= COMMITMENT_CUES.contains(w));
    cue && identifiers(s).iter().any(|i| {
        matches!(i.kind, IdKind::Version | IdKind::Number | IdKind::Code)
            && !names_items(i)
            && !super::estimated(s, &i.text, i.before.as_deref())
    })
}

/// Whether a value names items rather than states a quantity: right after a word that numbers
/// items it names the item ("Steps 1-2.5", "task 3"), and after a definite word it counts things
/// already named ("for the 3 steps", "all three").
fn names_items(i: &super::Ident) -> bool {
    i.before
        .as_deref()
        .is_some_and(|b| NUMBERING.contains(&b) || DEFINITE.contains(&b))
}

/// Words after which a number counts things already named ("the 3 steps", "all three").
const DEFINITE: &[&str] = &["the", "these", "those", "both", "each", "all"];

fn failure_line(voice: Voice, text: &str) -> Option<String> {
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut found = None;
    let mut fenced = false;
    for line in lines {
        // An assistant's code blocks, lists and headings are narration or demo code, not a
        // report of its own attempt.
        if voice == Voice::Assistant {
            if line.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            let listed = line.starts_with(['-', '*', '#', '|', '>'])
                || line
                    .split_once('.')
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if fenced || listed {
                continue;
            }
        }
        // A test runner's passing line is not a failure, and an assistant's "error handling"
        // or "linter errors" is narration.
        if line.contains('\u{2713}') {
            continue;
        }
        // A failure the speaker expected is not a failed attempt: "failed exactly as we expected".
        if EXPECTED.iter().any(|c| line.to_lowercase().contains(c)) {
            continue;
        }
        let hit = match voice {
            Voice::Tool => reports_failure(line),
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

/// Whether a line of a tool's output reports a failure the way tools report one (SPEC.md 8.4):
/// it opens with an error's name (`error:`, `fatal:`, `TypeError: ...`, `error[E0308]`,
/// `ERR_PNPM_...`, `FAIL`, `✘`), gives a non-zero exit code, counts failures ("3 failed"), carries
/// an error field (`"error":"Bad Request"`), or holds a shell's failure message ("command not
/// found", "No such file", "timed out"). A line that merely holds the word ("error handling",
/// `{:error, _} ->`, "0 failed") and a numbered file listing (`57→ ...`) report none.
fn reports_failure(line: &str) -> bool {
    // A line of code ("throw new Error(...);", "89 | if (x) {") reports nothing.
    if super::is_code_line(line) {
        return false;
    }
    let t = line.trim_start();
    let l = t.to_lowercase();
    let first = t.split_whitespace().next().unwrap_or("");
    let name = first.trim_end_matches(':');
    let opens = [
        "error",
        "fatal",
        "panic",
        "failed",
        "failure",
        "fail",
        "traceback",
    ]
    .iter()
    .any(|e| name.eq_ignore_ascii_case(e) || name.to_lowercase().starts_with(&format!("{e}[")))
        || (first.ends_with(':') && (name.ends_with("Error") || name.ends_with("Exception")))
        || first.starts_with("ERR_")
        || first.starts_with("npm ERR!")
        || ["\u{2718}", "\u{2717}", "\u{00d7}"]
            .iter()
            .any(|m| first.starts_with(m));
    let code = |key: &str| {
        l.match_indices(key).any(|(at, k)| {
            let rest = l[at + k.len()..].trim_start();
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            !n.is_empty() && n.bytes().any(|b| b != b'0')
        })
    };
    let w = words(t);
    let counted = w.iter().enumerate().any(|(i, x)| {
        // "3 failed" counts failures; "Task 2 failed" names the task that did.
        let numbered = i > 1
            && [
                "task", "test", "step", "phase", "job", "worker", "attempt", "run", "item",
            ]
            .contains(&w[i - 2].as_str());
        i > 0
            && FAILURES.contains(x)
            && w[i - 1].bytes().all(|b| b.is_ascii_digit())
            && w[i - 1].bytes().any(|b| b != b'0')
            && !numbered
    });
    opens
        || code("exit code")
        || code("exit status")
        || code("exited with code")
        || counted
        || l.contains("\"error\":\"")
        || TOOL_FAILURES.iter().any(|c| l.contains(c))
}

/// Whether a user's text holds pasted terminal output: a shell prompt line.
fn pasted_terminal(text: &str) -> bool {
    text.contains('\u{276f}')
        || text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("$ ") || l.starts_with("% ") || l.contains("$ ") && l.contains('@')
        })
}

/// Typographic punctuation as ASCII: apostrophes, quotes and dashes.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\u{2013}' | '\u{2014}' => '-',
            '\u{00a0}' => ' ',
            c => c,
        })
        .collect()
}

/// What a user says they want: "I'd like", "I prefer", "instead of", "make sure".
const PREFERENCE_CUES: &[&str] = &[
    " i would like",
    " i'd like",
    " i'd prefer",
    " i prefer",
    " i would prefer",
    " prefer ",
    " i want",
    " i wanna",
    " looking for",
    " looking to ",
    " i'm looking ",
    " i am looking ",
    " we're looking ",
    " i need",
    " we need",
    " instead of",
    " rather ",
    " always ",
    " make sure",
    " ensure ",
    " please use",
    " use the ",
    " departing from",
    " leave on",
    " leaving from",
    " going to ",
    " i'd rather",
    " i would rather",
    " should be ",
    " should use",
    " you prefer",
    " you want",
    " you would like",
    " you'd like",
    " i like ",
    " i love ",
    " also love ",
    " in the mood for",
    " should have ",
    " just need ",
];

/// Rule words of a system prompt or policy.
const POLICY_CUES: &[&str] = &[
    " can only ",
    " only if ",
    " must ",
    " should ",
    " cannot ",
    " can not ",
    " can't ",
    " need to ",
    " needs to ",
    " has to ",
    " have to ",
    " at most ",
    " at least ",
    " not allowed",
    " not acceptable",
    " if and only if ",
    " no more than ",
    " up to ",
    " is required",
    " are required",
    " never ",
    " will not ",
    " only ",
    " are free",
    " is free",
    " dollars",
    " fee ",
];

/// How a simulated user's instructions open, in a system prompt that plays the user: these are
/// the user's wishes (preferences), not the agent's rules.
const PERSONA_OPENINGS: &[&str] = &[
    " you want",
    " you do not",
    " you don't",
    " you prefer",
    " you are ",
    " your ",
    " if the service agent",
    " if the agent",
    " tell the agent",
    " you will ",
    " you would ",
    " you're ",
    " you need",
    " you have ",
    " you also ",
];

/// Words that make a number a quantity someone asks for: "for 5 people", "after 21:15".
static REQUEST_WORDS: WordList = WordList::new(&[
    "book",
    "booking",
    "reserve",
    "reservation",
    "need",
    "want",
    "like",
    "looking",
    "arrive",
    "arriving",
    "arrives",
    "leave",
    "leaving",
    "leaves",
    "depart",
    "departing",
    "after",
    "before",
    "by",
    "people",
    "persons",
    "nights",
    "night",
    "tickets",
    "ticket",
    "passengers",
    "stars",
    "star",
    "seats",
    "rooms",
    "days",
]);

static WEEKDAYS: WordList = WordList::new(&[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "today",
    "tomorrow",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
]);

static CURRENCY: WordList = WordList::new(&[
    "pounds", "pound", "gbp", "dollars", "dollar", "usd", "euros", "euro", "eur",
]);

/// Asking for information or closing the conversation, which no cue makes a preference:
/// "I need the address and phone number", "that's all I need".
const NOT_PREFERENCE: &[&str] = &[
    "address",
    "phone",
    "postcode",
    "postal code",
    "that's all",
    "thanks",
    "thank you",
    "that is all",
];

fn is_preference(l: &str) -> bool {
    // A question asks; it states no choice.
    if l.trim_end().ends_with('?') {
        return false;
    }
    let cue = PREFERENCE_CUES.iter().any(|c| l.contains(c));
    cue && !NOT_PREFERENCE.iter().any(|c| l.contains(c))
}

fn is_policy(l: &str) -> bool {
    POLICY_CUES.iter().any(|c| l.contains(c))
}

/// A quantity, time or day a user asks for: "book it for 5 people", "monday please". A version
/// is no quantity: "we need to fix what we have in v2.0.0" asks for work, not for a value; nor
/// is a number that names or counts items ([`names_items`]: "issue 42", "all three") or an
/// estimate ("about 8").
fn is_request(s: &str) -> bool {
    let (mut request, mut day) = (false, false);
    let mut before = String::new();
    for_each_word(s, |w| {
        request |= REQUEST_WORDS.contains(w);
        // A number word after a definite word counts things already named ("all three").
        let counted = DEFINITE.contains(&before.as_str())
            && NUMBER_WORDS.contains(&w.to_lowercase().as_str());
        day |= WEEKDAYS.contains(w) && !counted;
        before = w.to_lowercase();
    });
    // "v3" is a version too, though a code to `identifiers`.
    let version = |t: &str| {
        t.strip_prefix(['v', 'V'])
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let quantity = identifiers(s).iter().any(|i| {
        !names_items(i)
            && !super::estimated(s, &i.text, i.before.as_deref())
            && (i.kind == IdKind::Number || (i.kind == IdKind::Code && !version(&i.text)))
    });
    (request && (quantity || day)) || (day && s.split_whitespace().count() <= 6)
}

/// Whether a sentence states a number, a version or a code.
fn has_number(s: &str) -> bool {
    identifiers(s)
        .iter()
        .any(|i| matches!(i.kind, IdKind::Number | IdKind::Code | IdKind::Version))
}

/// Whether a tool's output reports `hash` as a commit it made or pushed: on a line that is the
/// hash alone, that opens with git's `[branch hash]`, or after the `..` of a pushed range.
fn reports_commit(text: &str, hash: &str) -> bool {
    text.lines().map(str::trim).any(|line| {
        line == hash
            || (line.starts_with('[') && line.split(']').next().is_some_and(|h| h.contains(hash)))
            || line.contains(&format!("..{hash}"))
    })
}

/// Two plain words joined by one slash: "origin/main", "silver/gold".
fn is_alternative(t: &str) -> bool {
    t.split_once('/').is_some_and(|(a, b)| {
        let word = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphabetic() || c == '-');
        word(a) && word(b)
    })
}

/// The identifiers of a text worth pinning verbatim, by who speaks it: from tools only hashes
/// (commits), since their paths and numbers are mostly noise; from people booking and order
/// codes, long numbers (phones), postcodes, amounts, hashes, paths and versions, and names (two
/// or more capitalised words inside a sentence).
fn pinned_identifiers(voice: Voice, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let ids = identifiers(text);
    // A short answer that is an identifier: "aphoenix939", "Alessandro Phoenix".
    let short = text.split_whitespace().count() <= 3;
    // Pasted shell output in a user's turn, whose paths are the shell's, not the user's.
    let pasted = text.contains('\u{276f}') || text.contains("$ ") || text.contains("% ");
    for id in &ids {
        let t = id.text.as_str();
        let digits = t.chars().filter(char::is_ascii_digit).count();
        let letters = t.chars().filter(char::is_ascii_alphabetic).count();
        // An amount: a currency sign before it, or a currency word after it.
        let amount = |t: &str| {
            let after = text.split(t).nth(1).unwrap_or("");
            // Only the first word after it is read: no currency word is 40 characters long.
            let after = &after[..after.char_indices().nth(40).map_or(after.len(), |(i, _)| i)];
            let mut next = None;
            for_each_word(after, |w| {
                next.get_or_insert(CURRENCY.contains(w));
            });
            t.starts_with(['$', '\u{a3}', '\u{20ac}'])
                || id
                    .before
                    .as_deref()
                    .is_some_and(|b| b.ends_with(['$', '\u{a3}', '\u{20ac}']))
                || next == Some(true)
        };
        let keep = match (voice, id.kind) {
            // A system prompt's amounts are its rules' terms (a fee, a limit): its policy
            // items hold them.
            (Voice::System, IdKind::Number | IdKind::Version) if amount(t) => false,
            (Voice::User | Voice::Assistant, IdKind::Number | IdKind::Version) if amount(t) => true,
            // From a tool, a commit it made or pushed ("[main 92b2b7b] ...", "d3bcc4a..92b2b7b"),
            // not the hashes of a log or a rebase it lists.
            (Voice::Tool, IdKind::Hash) => reports_commit(text, t),
            // A commit, not a version banner's build hash: "bun test v1.2.10 (db2e7d7f)".
            (_, IdKind::Hash) => !text.contains(&format!("({t})")),
            (Voice::Tool, _) => false,
            // Two plain words joined by one slash name alternatives, not a file: "origin/main",
            // "silver/gold", "committed/pushed".
            (_, IdKind::Path) if is_alternative(t) => false,
            (_, _) if short && digits > 0 => true,
            (Voice::User, IdKind::Path | IdKind::Version) => !pasted,
            (Voice::Assistant, IdKind::Path | IdKind::Version | IdKind::Url) => false,
            (_, IdKind::Path | IdKind::Version | IdKind::Url) => true,
            (_, IdKind::Code) => {
                // A booking reference or postcode: letters and digits, mostly upper case.
                let upper = t.chars().filter(char::is_ascii_uppercase).count();
                // An account id ("noah_muller_9847") or a date ("2001-04-12").
                let account = t.contains('_') && letters >= 2 && digits >= 1;
                let date = is_date(t);
                // A phone number written with dashes ("408-971-8523"), or a task or issue
                // number a user names ("task#002"), not one in shell output they pasted.
                let phone = letters == 0 && digits >= 7;
                let numbered = t.contains('#') && voice == Voice::User && !pasted;
                (t.len() >= 5 && letters >= 2 && digits >= 1 && upper * 2 >= letters)
                    || account
                    || date
                    || phone
                    || numbered
            }
            (_, IdKind::Number) => digits >= 7 || amount(t),
        };
        if keep && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    for t in text.split_whitespace() {
        let t = t.trim_matches(|c: char| !c.is_alphanumeric());
        if voice != Voice::Tool && t.contains('@') && t.contains('.') && !out.iter().any(|o| o == t)
        {
            out.push(t.to_string());
        }
    }
    if short && voice == Voice::User && text.split_whitespace().count() >= 2 {
        // A name is Title Case words, not a shout ("HEY HO") or a sentence ("Perfect. Thanks").
        let capitalised = (text.split_whitespace()).all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().skip(1).all(|c| !c.is_uppercase())
        });
        if capitalised && !text.trim().contains(['.', '!', '?']) {
            out.push(text.trim().to_string());
        }
    }
    // Names: two or more capitalised words inside a sentence, from the assistant; also from a
    // tool's one short line ("Account has been pulled up for Alessandro Phoenix."), not a
    // listing, and from a system prompt's persona sentence ("You are ...").
    let short_line = text.len() <= 200 && !text.trim().contains('\n');
    let names =
        voice == Voice::Assistant || (voice == Voice::Tool && short_line) || voice == Voice::System;
    if names {
        for s in sentences(text) {
            let l = lower(s);
            if voice == Voice::System && !PERSONA_NAMES.iter().any(|p| l.starts_with(p)) {
                continue;
            }
            // A markdown heading or bold title is Title Case, not a name.
            if s.trim_start().starts_with('#') || s.contains("**") {
                continue;
            }
            let words: Vec<&str> = s.split_whitespace().collect();
            let mut run: Vec<&str> = Vec::new();
            let mut flush = |run: &mut Vec<&str>| {
                // A run does not open with a function word ("No Time", "The Bun").
                let skip = run
                    .iter()
                    .take_while(|w| NOT_A_NAME.contains(&w.to_lowercase().as_str()))
                    .count();
                run.drain(..skip);
                if run.len() >= 2 {
                    out.push(run.join(" "));
                }
                run.clear();
            };
            for (i, raw) in words.iter().enumerate() {
                let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
                let cap = i > 0
                    && w.chars().next().is_some_and(char::is_uppercase)
                    && w.chars().skip(1).all(char::is_lowercase)
                    && w.len() > 1;
                if cap {
                    run.push(w);
                    // A name does not run on past punctuation ("Parkside, Cambridge", "Error:
                    // Unable").
                    if raw.ends_with([',', ':', ';', '.', ')']) {
                        flush(&mut run);
                    }
                } else {
                    flush(&mut run);
                }
            }
            flush(&mut run);
        }
    }
    out
}

/// Capitalised words that open a sentence or a title, not a name.
const NOT_A_NAME: &[&str] = &[
    "the", "a", "an", "no", "yes", "in", "on", "if", "is", "this", "that", "my", "your", "our",
    "please", "thanks", "thank", "great", "sure", "okay", "hello", "hi", "and", "or", "but",
];

/// How a system prompt that plays the user says what that user wants.
const PERSONA_WISHES: &[&str] = &[
    " you want",
    " you prefer",
    " you are willing",
    " you would like",
    " you'd like",
    " insist ",
];

/// How a system prompt that plays the user names them.
const PERSONA_NAMES: &[&str] = &[" you are ", " your name is ", " your name's "];

/// Whether a token is a calendar date written year first: `2001-04-12`.
fn is_date(t: &str) -> bool {
    let parts: Vec<&str> = t.split('-').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && parts[0].len() == 4
}

/// Preferences and requested quantities from the user, rules from the system, identifiers from
/// anyone.
fn classify_people(voice: Voice, text: &str, out: &mut Vec<Found>) {
    let item = |class, text: &str| Found {
        class,
        text: text.trim().to_string(),
    };
    for s in sentences(text) {
        let l = lower(s);
        match voice {
            Voice::User => {
                if is_preference(&l) {
                    out.push(item(Class::Preference, s));
                }
                let pasted = text.contains('\u{276f}');
                if !pasted && !out.iter().any(|f| f.class == Class::Commitment) && is_request(s) {
                    out.push(item(Class::Commitment, s));
                }
            }
            Voice::System => {
                // What the persona wants is its wish, not a rule: "If ..., you want to ...".
                let persona = PERSONA_OPENINGS.iter().any(|o| l.starts_with(o))
                    || PERSONA_WISHES.iter().any(|w| l.contains(w));
                if !persona && is_policy(&l) {
                    out.push(item(Class::Policy, s));
                    // A rule with a number is also a commitment: a fee, a limit, a deadline.
                    if has_number(s) {
                        out.push(item(Class::Commitment, s));
                    }
                }
                if is_preference(&l) {
                    out.push(item(Class::Preference, s));
                }
            }
            Voice::Tool | Voice::Assistant => {}
        }
    }
    for id in pinned_identifiers(voice, text) {
        out.push(item(Class::Identifier, &id));
    }
}

/// The decision-relevant items of one text spoken by `voice`. The store runs this once, when a
/// span is appended, and keeps what it found as a classification record carrying [`id`].
pub fn classify(voice: Voice, text: &str) -> Vec<Found> {
    let item = |class, text: &str| Found {
        class,
        text: text.trim().to_string(),
    };
    let normalised = plain(text);
    let text = normalised.as_str();
    let mut out = Vec::new();
    match voice {
        Voice::User | Voice::System => {
            for s in sentences(text) {
                let restriction = voice == Voice::System && {
                    let l = lower(s);
                    RESTRICTION_CUES.iter().any(|c| l.contains(c))
                };
                if is_prohibition(s) || restriction {
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
    // Terminal output a user pasted ("❯ bun run ... error: missing required argument") reports
    // a failure as a tool's would.
    if voice == Voice::User && pasted_terminal(text) {
        if let Some(line) = failure_line(Voice::Tool, text) {
            out.push(item(Class::FailedAttempt, &line));
        }
    }
    classify_people(voice, text, &mut out);
    out
}

/// The classifier's rules version: raise it with any change to its code that moves what it
/// finds. The id also carries a hash of every word list it reads, so a changed list is a new id
/// without a new version (`classify::tests::items_are_pinned_to_the_id`).
pub const RULES: u32 = 12;

/// The classifier's id, carried by every classification record it writes: `cairn-classifier-RULES-`
/// and the first 8 hex digits of BLAKE3 over its word lists (each named, its words joined by
/// NUL).
pub fn id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let lists: [(&str, &[&str]); 19] = [
            ("prohibition-cues", PROHIBITION_CUES),
            ("commitment-cues", COMMITMENT_CUES.words()),
            ("assistant-failures", ASSISTANT_FAILURES),
            ("not-a-rule", NOT_A_RULE),
            ("negated", NEGATED),
            ("restriction-cues", RESTRICTION_CUES),
            ("preference-cues", PREFERENCE_CUES),
            ("not-preference", NOT_PREFERENCE),
            ("policy-cues", POLICY_CUES),
            ("persona-openings", PERSONA_OPENINGS),
            ("persona-names", PERSONA_NAMES),
            ("persona-wishes", PERSONA_WISHES),
            ("request-words", REQUEST_WORDS.words()),
            ("weekdays", WEEKDAYS.words()),
            ("currency", CURRENCY.words()),
            ("not-a-name", NOT_A_NAME),
            ("failures", FAILURES.words()),
            ("tool-failures", TOOL_FAILURES),
            ("expected", EXPECTED),
        ];
        super::lists_id("classifier", RULES, lists, &[])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts that exercise every class and voice.
    const FIXED: &[(Voice, &str)] = &[
        (Voice::User, "Never run DROP TABLE on production."),
        (Voice::User, "We are still on libfoo 2.3.1, do not bump."),
        (
            Voice::User,
            "I'd like a table for 4 people on Friday at 7pm, booking ref ABC12X.",
        ),
        (
            Voice::User,
            "shouldnt touch the migrations, avoid the orders table",
        ),
        (
            Voice::User,
            "I'm looking to book a cheap hotel in the centre.",
        ),
        (
            Voice::User,
            "\u{276f} bun run build\nerror: missing required argument",
        ),
        (
            Voice::User,
            "Recovery never derives file keys. Keep unchanged: Steps 1-2.5.",
        ),
        (Voice::User, "Noah Muller"),
        (
            Voice::System,
            "You are Noah Muller, your user id is noah_muller_9847.",
        ),
        (
            Voice::System,
            "An order can only be cancelled if it is pending. Always confirm first.",
        ),
        (
            Voice::Tool,
            "FAILED tests/test_io.py::test_read - ValueError: bad header\n1 failed",
        ),
        (
            Voice::Tool,
            "Account has been pulled up for Alessandro Phoenix.",
        ),
        (Voice::Tool, "commit 3f9a2c1d7e merged; 0 errors"),
        // Version 7: a failure in a tool's output is one the tool reports, not a line that
        // holds the word (added with it, so the digests above it were taken without this).
        (
            Voice::Tool,
            "    {:error, _} -> nil\nTask 2 failed: 84 |\nExit code 127\n(eval):1: command not found: psql",
        ),
        (
            Voice::Assistant,
            "The migration still fails on the orders table.",
        ),
        (
            Voice::Assistant,
            "## The Bun Runtime\n- error handling is in place",
        ),
        (
            Voice::Assistant,
            "I emailed Sarah Connor at sarah@example.com about $120 USD.",
        ),
    ];

    /// Each id the classifier has carried since ids were derived, with the BLAKE3 of what it
    /// finds in [`FIXED`]. A change that moves a finding under an id listed here fails: raise
    /// [`RULES`] and add the new id's line.
    const PINNED: &[(&str, &str)] = &[
        ("cairn-classifier-5-edc3993d", "e8dfd56769415a06"),
        ("cairn-classifier-6-e78ecbe2", "0c084b0db96f45c0"),
        ("cairn-classifier-7-8cd76710", "a04c8b735a5f7ec5"),
        ("cairn-classifier-8-92bf757e", "a04c8b735a5f7ec5"),
        ("cairn-classifier-9-92bf757e", "a04c8b735a5f7ec5"),
        ("cairn-classifier-10-92bf757e", "a04c8b735a5f7ec5"),
        ("cairn-classifier-11-92bf757e", "a04c8b735a5f7ec5"),
        ("cairn-classifier-12-92bf757e", "a04c8b735a5f7ec5"),
    ];

    fn digest() -> String {
        let mut h = blake3::Hasher::new();
        for (voice, text) in FIXED {
            for found in classify(*voice, text) {
                h.update(&[found.class as u8]);
                h.update(found.text.as_bytes());
                h.update(b"\0");
            }
            h.update(b"\n");
        }
        h.finalize().to_hex()[..16].to_string()
    }

    #[test]
    fn items_are_pinned_to_the_id() {
        let (id, now) = (id(), digest());
        match PINNED.iter().find(|(i, _)| *i == id) {
            Some((_, pinned)) => assert_eq!(
                *pinned, now,
                "what the classifier finds moved under the id {id}: raise classify::RULES and pin the new id"
            ),
            None => panic!("the classifier's id {id} is not pinned: add (\"{id}\", \"{now}\") to PINNED"),
        }
        assert!(id.starts_with(&format!("cairn-classifier-{RULES}-")));
    }
}
