//! What makes two texts clash (SPEC.md section 8.1, "a clash"): another value of the same
//! attribute, a negation of the same predicate, or an antonym of the same predicate. A span
//! on the same subject that shares words with a claim does not clash with it: topical overlap
//! is never a contradiction, so the gates count a scorer's contradiction only with a clash.

use super::{for_each_word, stem, IdKind, DENYING, NEGATIONS, NUMBERING, NUMBER_WORDS, STOP};

/// Outcomes that clash beyond the scorer's antonyms: a test run passes or fails.
const OUTCOMES: &[(&str, &str)] = &[
    ("pass", "fail"),
    ("passing", "failing"),
    ("work", "fail"),
    ("before", "after"),
];

/// Words that deny what stands before them in their clause: "connection to port 5433 failed".
const AFTER: &[&str] = &[
    "failed",
    "fails",
    "refused",
    "denied",
    "rejected",
    "unreachable",
];

/// How far after a negation its reach goes, in content words.
const SCOPE: usize = 4;

/// Frequent function words of other languages written in Latin letters (Portuguese, Spanish,
/// French, German, Italian) that are not English words. The negation and antonym rules read
/// English: "no" is Portuguese for "in the" ("o trainer no CMS"), and a sentence whose words are
/// more often these than English function words is not read for a denial.
const FOREIGN: &[&str] = &[
    "de", "que", "os", "um", "uma", "para", "com", "da", "em", "não", "nao", "na", "ao", "das",
    "dos", "pelo", "pela", "seu", "sua", "seus", "isso", "esta", "este", "mais", "mas", "como",
    "el", "los", "las", "del", "por", "una", "es", "und", "der", "ist", "nicht", "ein", "eine",
    "mit", "zu", "von", "les", "des", "et", "est", "une", "du", "pas", "il", "che", "di", "per",
];

/// Words that open a noun phrase: a clause that opens with one names its subject before its
/// verb ("The generate command does not read the journal").
const DETERMINERS: &[&str] = &[
    "the", "this", "that", "these", "those", "a", "an", "our", "its", "their", "your", "my",
];

/// Words between a subject and its verb that name no part of the subject.
const MODALS: &[&str] = &[
    "must",
    "need",
    "needs",
    "should",
    "would",
    "could",
    "might",
    "will",
    "shall",
    "can",
    "may",
    "ever",
    "still",
    "yet",
    "currently",
    "actually",
    "really",
];

/// Why two texts clash, for a finding's sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clash {
    /// The same attribute with another value: `libfoo 2.4.0` against `libfoo 2.3.1`.
    Value {
        /// The value in the first text.
        ours: String,
        /// The value in the second.
        theirs: String,
    },
    /// One side denies the predicate the other asserts ("do not bump libfoo" against
    /// "bumped libfoo").
    Negation {
        /// The denied predicate, as written.
        predicate: String,
    },
    /// One side says with an antonym what the other says ("upgraded" against "downgraded").
    Antonym {
        /// The word in the first text.
        ours: String,
        /// Its antonym in the second.
        theirs: String,
    },
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Clash::Value { ours, theirs } => write!(f, "{ours} against {theirs}"),
            Clash::Negation { predicate } => write!(f, "'{predicate}' denied on one side only"),
            Clash::Antonym { ours, theirs } => write!(f, "'{ours}' against '{theirs}'"),
        }
    }
}

/// Whether a text denies or forbids anything: a negation ("never", "do not", "isn't") or a
/// denying word stands in it.
pub fn denies(text: &str) -> bool {
    let mut any = false;
    for_each_word(text, |w| any |= negates(w));
    any
}

fn negates(w: &str) -> bool {
    NEGATIONS.contains(w) || w.ends_with("n't") || DENYING.contains(&w)
}

/// Whether a text is written in another language than English: more of its words are
/// [`FOREIGN`] function words than English ones.
fn foreign(text: &str) -> bool {
    let (mut theirs, mut english) = (0, 0);
    for_each_word(text, |w| {
        if FOREIGN.contains(&w) {
            theirs += 1;
        } else if STOP.contains(w) {
            english += 1;
        }
    });
    theirs > english
}

/// One word of a text as the clash rules read it.
struct Word {
    raw: String,
    stem: String,
    content: bool,
    negation: bool,
    /// The clause it stands in, counted from 0: a clause ends at `,`, `;`, `:`, `.`, `!`, `?`,
    /// a line break or a dash (`—`, `–`, or `-` with white space on both sides).
    clause: usize,
}

fn read(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut clause = 0;
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    let mut push = |piece: &str, clause: usize| {
        for_each_word(piece, |w| {
            out.push(Word {
                raw: w.to_string(),
                stem: stem(w),
                content: !STOP.contains(w) && !negates(w),
                negation: negates(w),
                clause,
            });
        });
    };
    let mut before = ' ';
    while let Some((i, c)) = chars.next() {
        // A dot inside a number, a version or a path does not end a clause, nor does a hyphen
        // inside a word ("re-write") or opening a list item.
        let next = chars.peek().map(|(_, n)| *n);
        let ends = match c {
            ',' | ';' | ':' | '!' | '?' | '\n' | '\u{2014}' | '\u{2013}' => true,
            '.' => next.is_none_or(char::is_whitespace),
            '-' => {
                before.is_whitespace()
                    && next.is_some_and(char::is_whitespace)
                    && !text[start..i].trim().is_empty()
            }
            _ => false,
        };
        before = c;
        if ends {
            push(&text[start..i], clause);
            clause += 1;
            start = i + c.len_utf8();
        }
    }
    push(&text[start..], clause);
    out
}

/// Whether `a` and `b` clash, and how. Symmetric in what it finds, up to naming sides.
///
/// `b` is read sentence by sentence (a line of a tool's output is a sentence), and only a
/// sentence about what `a` is about can clash with it: one holding at least half of `a`'s
/// content words, values aside. A long file that mentions a port elsewhere never clashes with a
/// claim about another port.
pub fn clash(a: &str, b: &str) -> Option<Clash> {
    if asks(a) {
        return None;
    }
    let quoted = super::words(a);
    let (a, b) = (plain(a), plain(b));
    let ours = subject(&a);
    let english = !foreign(&a);
    super::sentences(&b)
        .into_iter()
        .filter(|sb| about(&ours, sb) && !quotes(&quoted, sb))
        .find_map(|sb| clash_one(&a, sb, &b, english && !foreign(sb)))
}

/// A text as the clash rules read it: what it asserts in words. A passage it quotes (three
/// words or more between quotation marks) is what someone said, not what the text asserts; a
/// line of code or of a numbered file listing (`57→ ...`, or three or more of `{}[]();<>`)
/// states nothing; and a token of code (a path, a dotted or qualified name, a call, a constant
/// such as `ERR_PNPM_RUN_FIRST_FAIL`) names a thing, so its pieces are not words ("fail",
/// "share"). Each is left out.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in without_code_passages(&unquoted(text)).lines() {
        if super::is_code_line(line) {
            out.push('\n');
            continue;
        }
        for (i, token) in line.split(char::is_whitespace).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            if !is_code(token) {
                out.push_str(token);
            } else {
                // The token goes; the clause or sentence it ended still ends.
                let end = token.trim_end_matches(['.', ',', ';', ':', '!', '?']);
                out.push_str(&token[end.len()..]);
            }
        }
        out.push('\n');
    }
    out
}

/// Whether a token (between spaces) is code: it holds a path or qualifier separator, a call,
/// brackets or an assignment, letters joined by a dot (`share.service.ts`, `JSON.parse`), or
/// it is a constant in capitals with underscores.
fn is_code(token: &str) -> bool {
    let t = token.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | '.' | ':' | '*'));
    let dotted = t
        .as_bytes()
        .windows(3)
        .any(|w| w[1] == b'.' && w[0].is_ascii_alphabetic() && w[2].is_ascii_alphabetic());
    let constant = t.contains('_')
        && t.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    dotted
        || constant
        || [
            "/", "\\", "→", "::", "=", "(", ")", "{", "}", "[", "]", "<", ">",
        ]
        .iter()
        .any(|p| t.contains(p))
}

/// `text` without its code passages: a span between backticks that holds white space
/// (`` `from app.cli import create_app` ``) is a line of code, which states nothing; a span of
/// one token (`` `cmd_clipboard` ``) names a thing and stays, a value like any other.
fn without_code_passages(text: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    let closed = pieces.len() - usize::from(pieces.len().is_multiple_of(2));
    let mut out = String::with_capacity(text.len());
    for (k, piece) in pieces.iter().enumerate() {
        let code = k % 2 == 1 && k < closed;
        if code && piece.trim().contains(char::is_whitespace) {
            out.push(' ');
        } else {
            if code {
                out.push('`');
            }
            out.push_str(piece);
            if code {
                out.push('`');
            }
        }
    }
    out
}

/// `text` without the passages it quotes ([`super::verbatim::quotations`]).
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (range, _) in super::verbatim::quotations(text) {
        out.push_str(&text[from..range.start]);
        out.push(' ');
        from = range.end;
    }
    out.push_str(&text[from..]);
    out
}

/// Whether a text asks rather than states: it ends in `?`, opens with a question word, or
/// leaves a choice open with "whether" ("Decide whether to ship the marker"). A question
/// asserts nothing a span could contradict.
fn asks(text: &str) -> bool {
    const ASKING: &[&str] = &["what", "why", "how", "which", "who", "when", "where"];
    let first = text.split_whitespace().next().unwrap_or("").to_lowercase();
    text.trim_end().ends_with('?')
        || ASKING.contains(&first.as_str())
        || super::words(text).iter().any(|w| w == "whether")
}

/// Whether `ours` holds the words of `sentence` (three or more) as a run: the text quotes it,
/// and a quote does not clash with what it quotes.
fn quotes(ours: &[String], sentence: &str) -> bool {
    let theirs = super::words(sentence);
    theirs.len() >= 3 && ours.windows(theirs.len()).any(|w| w == theirs.as_slice())
}

/// The content stems of a text that are not values: what it is about.
fn subject(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_word(text, |w| {
        let value = super::id_kind(w).is_some() || NUMBER_WORDS.contains(&w);
        if !value && !STOP.contains(w) && !negates(w) {
            let s = stem(w);
            if !out.contains(&s) {
                out.push(s);
            }
        }
    });
    out
}

/// Whether `sentence` holds at least half of the words of `subject`.
fn about(subject: &[String], sentence: &str) -> bool {
    if subject.is_empty() {
        return false;
    }
    let theirs = self::subject(sentence);
    let shared = subject.iter().filter(|w| theirs.contains(w)).count();
    2 * shared >= subject.len()
}

/// How sentence `b` of the text `whole` clashes with `a`.
/// Values clash in any language; a negation or an antonym only when both sides are `english`
/// ([`foreign`]).
fn clash_one(a: &str, b: &str, whole: &str, english: bool) -> Option<Clash> {
    value(a, b, whole)
        .or_else(|| name(a, b))
        .or_else(|| swapped(a, b))
        .or_else(|| english.then(|| negation(a, b)).flatten())
        .or_else(|| english.then(|| negation(b, a).map(swap)).flatten())
        .or_else(|| english.then(|| antonym(a, b)).flatten())
}

fn swap(c: Clash) -> Clash {
    match c {
        Clash::Value { ours, theirs } => Clash::Value {
            ours: theirs,
            theirs: ours,
        },
        Clash::Antonym { ours, theirs } => Clash::Antonym {
            ours: theirs,
            theirs: ours,
        },
        n => n,
    }
}

/// How near a value a content word must stand to name what it is the value of, counted in
/// content words: `libfoo` in "libfoo was upgraded to 2.4.0", `port` in "port 5433".
const NEAR: usize = 2;

/// One value of a sentence: the value, its kind, the content stems near it (what it is a value
/// of) and whether the sentence gives it as an estimate.
type Value = (String, Option<IdKind>, Vec<String>, bool);

/// The values of one sentence (numbers and versions; not paths or codes), each with the
/// content stems within [`NEAR`] content words of it (what it is a value of), and whether it is
/// an estimate (`text::estimated`: "~392 step files").
fn values(sentence: &str) -> Vec<Value> {
    let mut words = Vec::new();
    for_each_word(sentence, |w| words.push(w.to_string()));
    let kind_of = |w: &str| {
        if NUMBER_WORDS.contains(&w) {
            Some(IdKind::Number)
        } else {
            super::id_kind(w)
        }
    };
    // The sentence's values and content words, in order, stop words left out.
    let kept: Vec<(usize, &String)> = (words.iter().enumerate())
        .filter(|(_, w)| kind_of(w).is_some() || (!STOP.contains(w.as_str()) && !negates(w)))
        .collect();
    // A number or version that opens a sentence or list item and is followed by a capitalised
    // word numbers the item ("3.5 Add the flag", "2. Run the tests"), as "step 3" does.
    let opening = {
        let t = sentence.trim_start_matches(|c: char| "-*#>[]`x ".contains(c));
        let mut it = t.split_whitespace();
        let first = it.next().unwrap_or("").trim_end_matches(['.', ')', ':']);
        let next_capital = it
            .next()
            .and_then(|n| n.chars().next())
            .is_some_and(char::is_uppercase);
        (next_capital && !first.is_empty() && first.chars().all(|c| c.is_ascii_digit() || c == '.'))
            .then(|| first.to_string())
    };
    let mut out = Vec::new();
    for (k, (i, w)) in kept.iter().enumerate() {
        let kind = kind_of(w);
        if *i == 0 && opening.as_deref() == Some(w.as_str()) {
            continue;
        }
        // Only numbers and versions are values here: codes and hashes name things, and a
        // number after a word that numbers items ("test 6.1", "step 3") names the item.
        // So does each number of a run after one ("tests 1-13", "steps 2 3").
        let before = words[..*i]
            .iter()
            .rev()
            .find(|x| kind_of(x) != Some(IdKind::Number));
        let named = before.is_some_and(|x| NUMBERING.contains(&x.as_str()));
        if !matches!(kind, Some(IdKind::Number | IdKind::Version)) || named {
            continue;
        }
        let lo = k.saturating_sub(NEAR);
        let hi = (k + NEAR + 1).min(kept.len());
        let near: Vec<String> = (kept[lo..hi].iter())
            .filter(|(_, x)| kind_of(x).is_none())
            .map(|(_, x)| stem(x))
            .collect();
        let estimate = super::estimated(sentence, w, i.checked_sub(1).map(|p| words[p].as_str()));
        out.push(((*w).clone(), kind, near, estimate));
    }
    out
}

/// Whether two numbers are near enough for an estimate of one to allow the other: within a
/// tenth of the larger ("~392" allows 396, "about 400" does not allow 200).
fn within_estimate(x: &str, y: &str) -> bool {
    match (x.parse::<f64>(), y.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= 0.1 * x.abs().max(y.abs()),
        _ => false,
    }
}

/// A number as digits: a number word ("eight") read as its value, any other word as it is.
fn as_digits(w: &str) -> String {
    match NUMBER_WORDS.iter().position(|n| *n == w) {
        Some(i) => (i + 1).to_string(),
        None => w.to_string(),
    }
}

/// The words of a text, numbers as digits: what it states, to compare values with.
fn stated(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for_each_word(text, |w| v.push(as_digits(w)));
    v
}

/// Another value of the same attribute: an identifier of one kind on each side, different,
/// with a content word near both (`libfoo` near `2.4.0` and near `2.3.1`), where the other
/// side's whole text (`whole`, of which `b` is a sentence) nowhere states the first side's
/// value, nor `a` the other's ("8 of 9 seams" states the "eight" of its witness). A number
/// word and its digits are one value.
fn value(a: &str, b: &str, whole: &str) -> Option<Clash> {
    let mut theirs_all = Vec::new();
    for sb in super::sentences(b) {
        theirs_all.extend(values(sb));
    }
    let (stated, ours_stated) = (stated(whole), stated(a));
    for sa in super::sentences(a) {
        for (x, kind, near, ours_estimate) in values(sa) {
            if stated.contains(&as_digits(&x)) {
                continue;
            }
            for (y, k, theirs, their_estimate) in &theirs_all {
                let other = as_digits(y) != as_digits(&x) && !ours_stated.contains(&as_digits(y));
                // An estimate allows a value near it.
                let allowed = (ours_estimate || *their_estimate)
                    && kind == Some(IdKind::Number)
                    && within_estimate(&as_digits(&x), &as_digits(y));
                if *k == kind && other && !allowed && near.iter().any(|n| theirs.contains(n)) {
                    return Some(Clash::Value {
                        ours: x,
                        theirs: y.clone(),
                    });
                }
            }
        }
    }
    None
}

/// The words of a text as written, with whether each opens a sentence.
fn written(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for s in super::sentences(text) {
        for (i, w) in s
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_'))
            .filter(|w| !w.is_empty())
            .enumerate()
        {
            out.push((w.to_string(), i == 0));
        }
    }
    out
}

/// A name: a capitalised word of letters, some of them lower case, not opening a sentence
/// ("Paris", "LaGuardia"); not a word in capitals (`DROP`, `TABLE`).
fn is_name(w: &str, opens: bool) -> bool {
    !opens
        && w.chars().next().is_some_and(char::is_uppercase)
        && w.chars().any(char::is_lowercase)
        && w.chars()
            .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
}

/// Another value in the same place: a name of `a` that `b` lacks, where `b` has another name
/// between the same two words before it or the same two words after it ("fly to Paris on" and
/// "fly to London on").
fn name(a: &str, b: &str) -> Option<Clash> {
    let ours = written(a);
    let theirs = written(b);
    let lower = |w: &str| w.to_lowercase();
    let has = |side: &[(String, bool)], w: &str| side.iter().any(|(x, _)| lower(x) == lower(w));
    let context = |side: &[(String, bool)], i: usize| {
        let before = (i >= 2).then(|| (lower(&side[i - 2].0), lower(&side[i - 1].0)));
        let after = (i + 2 < side.len()).then(|| (lower(&side[i + 1].0), lower(&side[i + 2].0)));
        (before, after)
    };
    for (i, (x, opens)) in ours.iter().enumerate() {
        if !is_name(x, *opens) || has(&theirs, x) {
            continue;
        }
        let (xb, xa) = context(&ours, i);
        for (j, (y, opens)) in theirs.iter().enumerate() {
            if !is_name(y, *opens) || has(&ours, y) {
                continue;
            }
            let (yb, ya) = context(&theirs, j);
            if (xb.is_some() && xb == yb) || (xa.is_some() && xa == ya) {
                return Some(Clash::Value {
                    ours: x.clone(),
                    theirs: y.clone(),
                });
            }
        }
    }
    None
}

/// A value: a name (see [`is_name`]), a short word in capitals (`SFO`), a number, or a code
/// with a digit or an underscore.
fn is_value(w: &str, opens: bool) -> bool {
    let caps = (2..=5).contains(&w.len()) && w.chars().all(|c| c.is_ascii_uppercase());
    is_name(w, opens) || caps || w.chars().any(|c| c.is_ascii_digit() || c == '_')
}

/// The nearest lower-case word before position `i`, past the words of a name: the word that
/// says what role the value plays ("from", "to", "rename").
fn role_word(side: &[(String, bool)], i: usize) -> Option<String> {
    (side[..i].iter().rev())
        .find(|(w, _)| w.chars().next().is_some_and(char::is_lowercase) && !is_value(w, false))
        .map(|(w, _)| w.clone())
}

/// Two values in swapped roles: both texts hold `x` and `y`, and the word that gives `x` its
/// role in `a` gives `y` its role in `b`, and the other way round ("to London from New York"
/// against "to New York from London").
fn swapped(a: &str, b: &str) -> Option<Clash> {
    let ours = written(a);
    let theirs = written(b);
    let roles = |side: &[(String, bool)]| -> Vec<(String, Option<String>)> {
        (side.iter().enumerate())
            .filter(|(_, (w, o))| is_value(w, *o))
            .map(|(i, (w, _))| (w.clone(), role_word(side, i)))
            .collect()
    };
    let (ra, rb) = (roles(&ours), roles(&theirs));
    let role_in = |side: &[(String, Option<String>)], w: &str| {
        side.iter()
            .find(|(x, _)| x == w)
            .and_then(|(_, r)| r.clone())
    };
    for (x, xr) in &ra {
        for (y, yr) in &ra {
            let (Some(xr), Some(yr)) = (xr, yr) else {
                continue;
            };
            if x == y || xr == yr {
                continue;
            }
            if role_in(&rb, y).as_ref() == Some(xr) && role_in(&rb, x).as_ref() == Some(yr) {
                return Some(Clash::Value {
                    ours: format!("{xr} {x}"),
                    theirs: format!("{xr} {y}"),
                });
            }
        }
    }
    None
}

/// `a` denies a predicate that `b` asserts: a negation in `a` whose first content word after
/// it (the predicate) and at least one more content word of its clause stand in one clause of
/// `b` that has no negation of its own; or a denial after what it denies ("the connection to
/// port 5433 failed") whose words before it stand so in `b`. A denial whose clause opens with
/// its subject ([`subject_before`]: "The generate command does not read the journal") denies
/// it of that subject only: `b` must name a word of it.
fn negation(a: &str, b: &str) -> Option<Clash> {
    let ours = read(a);
    let theirs = read(b);
    let names = |subject: &[&Word]| {
        subject.is_empty()
            || subject
                .iter()
                .any(|s| theirs.iter().any(|x| x.content && x.stem == s.stem))
    };
    let last = theirs.last().map_or(0, |x| x.clause);
    // Whether one clause of `b` without a negation holds `first` and another word of `rest`.
    let asserted = |first: &str, rest: &[&Word]| {
        (0..=last).any(|c| {
            let clause: Vec<&Word> = theirs.iter().filter(|x| x.clause == c).collect();
            let has = |s: &str| clause.iter().any(|x| x.content && x.stem == s);
            !clause
                .iter()
                .any(|x| x.negation || AFTER.contains(&x.raw.as_str()))
                && has(first)
                && rest.iter().any(|x| has(&x.stem))
        })
    };
    for (i, w) in ours.iter().enumerate() {
        if w.negation {
            // "do not bump libfoo": the predicate follows.
            let reach: Vec<&Word> = (ours[i + 1..].iter())
                .take_while(|x| x.clause == w.clause)
                .filter(|x| x.content)
                .take(SCOPE)
                .collect();
            if let Some(predicate) = reach.first() {
                // The rest of the clause says what the predicate is about.
                let rest: Vec<&Word> = (ours.iter())
                    .filter(|x| x.clause == w.clause && x.content && x.stem != predicate.stem)
                    .collect();
                if asserted(&predicate.stem, &rest) && names(&subject_before(&ours, i)) {
                    return Some(Clash::Negation {
                        predicate: predicate.raw.clone(),
                    });
                }
            }
        }
        if AFTER.contains(&w.raw.as_str()) {
            // "the connection to port 5433 failed": what failed stands before.
            let reach: Vec<&Word> = (ours[..i].iter().rev())
                .take_while(|x| x.clause == w.clause)
                .filter(|x| x.content)
                .take(SCOPE)
                .collect();
            for (k, first) in reach.iter().enumerate() {
                let rest: Vec<&Word> = (reach.iter().enumerate())
                    .filter(|(j, _)| *j != k)
                    .map(|(_, x)| *x)
                    .collect();
                if asserted(&first.stem, &rest) {
                    return Some(Clash::Negation {
                        predicate: w.raw.clone(),
                    });
                }
            }
        }
    }
    None
}

/// The subject of the clause a negation at `i` stands in, when the clause opens with a
/// determiner ("The `generate` command does not ..."): its content words before the negation,
/// less a party to the conversation, a verb of saying and a modal ("The user said not to ..."
/// names no subject of the denial). Empty when the clause opens otherwise.
fn subject_before(words: &[Word], i: usize) -> Vec<&Word> {
    let clause = words[i].clause;
    let Some(first) = words.iter().position(|x| x.clause == clause) else {
        return Vec::new();
    };
    if !DETERMINERS.contains(&words[first].raw.to_lowercase().as_str()) {
        return Vec::new();
    }
    (words[first..i].iter())
        .filter(|x| {
            let l = x.raw.to_lowercase();
            x.content && !super::frame_word(&l) && !MODALS.contains(&l.as_str())
        })
        .collect()
}

/// An antonym of a word of `a` in `b`, where `b` lacks the word itself and `a` the antonym,
/// and the two sides share another content word (the same subject). The two must stand under
/// the same polarity: "did not keep the table" clashes with "did not drop the table", and "kept
/// the table" agrees with it.
fn antonym(a: &str, b: &str) -> Option<Clash> {
    let ours = read(a);
    let theirs = read(b);
    let has = |side: &[Word], s: &str| side.iter().any(|x| x.stem == s);
    let shared = ours
        .iter()
        .filter(|x| x.content && has(&theirs, &x.stem))
        .count();
    // Whether each use of `s` in `side` is denied (`None` when they differ or there is none).
    let polarity = |side: &[Word], s: &str| {
        let mut uses = (0..side.len()).filter(|i| side[*i].stem == s);
        let first = denied(side, uses.next()?);
        uses.all(|i| denied(side, i) == first).then_some(first)
    };
    for (x, y) in super::opposed().chain(OUTCOMES.iter().copied()) {
        for (p, q) in [(x, y), (y, x)] {
            let (p, q) = (stem(p), stem(q));
            // One side holds one word only, the other side the other only: a text that holds
            // both ("the new key, not the old one") takes no side.
            if has(&ours, &p)
                && has(&theirs, &q)
                && !has(&theirs, &p)
                && !has(&ours, &q)
                && shared >= 1
                && polarity(&ours, &p).is_some_and(|d| polarity(&theirs, &q) == Some(d))
            {
                return Some(Clash::Antonym {
                    ours: p.clone(),
                    theirs: q.clone(),
                });
            }
        }
    }
    None
}

/// Whether the word at `i` is denied: a negation stands before it in its clause, with at
/// most [`SCOPE`] content words between ("did not keep", "never really kept").
fn denied(side: &[Word], i: usize) -> bool {
    let clause = side[i].clause;
    let mut content = 0;
    for x in side[..i].iter().rev().take_while(|x| x.clause == clause) {
        if x.negation {
            return true;
        }
        content += usize::from(x.content);
        if content >= SCOPE {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_value_of_the_same_attribute_clashes() {
        let c = clash(
            "libfoo was upgraded to 2.4.0",
            "we are still on libfoo 2.3.1, do not bump",
        );
        assert!(c.is_some(), "{c:?}");
        assert!(clash(
            "staging DB port is 5433",
            "the staging DB runs on port 5432"
        )
        .is_some());
        assert_eq!(
            clash("staging DB port is 5433", "connection refused on port 5432"),
            None
        );
        assert_eq!(
            clash("staging DB port is 5433", "staging DB is on port 5433"),
            None
        );
    }

    #[test]
    fn another_name_in_the_same_place_clashes() {
        assert!(clash(
            "The user wants to fly to London on Friday.",
            "I want to fly to Paris on Friday."
        )
        .is_some());
        assert_eq!(
            clash(
                "The user wants to fly to Paris on Friday.",
                "I want to fly to Paris on Friday."
            ),
            None
        );
    }

    #[test]
    fn two_values_in_swapped_roles_clash() {
        assert!(clash(
            "The user is flying to London from New York.",
            "I'm flying to New York from London"
        )
        .is_some());
        assert!(clash(
            "The user asked to rename cmd_clipboard to cmd_add_clipboard_image.",
            "rename `cmd_add_clipboard_image` to cmd_clipboard"
        )
        .is_some());
        assert_eq!(
            clash(
                "The user is flying to New York from London.",
                "I'm flying to New York from London"
            ),
            None
        );
    }

    #[test]
    fn a_number_that_labels_an_item_or_is_stated_on_both_sides_is_no_other_value() {
        // "3.5" numbers the task, as "step 3" would; stated as a value, it clashes.
        assert_eq!(
            clash(
                "[ ] 3.5 Add the java version input to the workflow",
                "3.4 Add the java version input to the workflow"
            ),
            None
        );
        assert!(clash(
            "the workflow pins java version 3.5",
            "the workflow pins java version 3.4"
        )
        .is_some());
        // "eight" is the claim's own 8: no other value of the seams.
        assert_eq!(
            clash(
                "F3: 8 of 9 seams unverified.",
                "Eight seams are still unverified."
            ),
            None
        );
        assert!(clash(
            "F3: 7 seams unverified.",
            "Eight seams are still unverified."
        )
        .is_some());
    }

    #[test]
    fn an_estimate_allows_a_value_near_it() {
        let done = "The script generated 396 step files.";
        assert_eq!(clash(done, "The script makes ~392 step files."), None);
        assert_eq!(clash(done, "About 392 step files were generated."), None);
        // Near misses: an exact other value, and an estimate far from the value.
        assert!(clash(done, "The script generated 392 step files.").is_some());
        assert!(clash(done, "About 200 step files were generated.").is_some());
    }

    #[test]
    fn an_open_choice_and_a_code_passage_assert_nothing() {
        // "whether" leaves the choice open: no side of it is asserted.
        assert_eq!(
            clash(
                "P4: Decide whether to ship the typing marker",
                "We will not ship the typing marker yet"
            ),
            None
        );
        // Near miss: stated, the same words clash.
        assert!(clash(
            "P4: ship the typing marker",
            "We will not ship the typing marker yet"
        )
        .is_some());
        // A passage of code in backticks states nothing; the sentence around it still does.
        assert_eq!(
            clash(
                "`from app.cli import create_app` raised ImportError in the CLI tests",
                "the CLI tests cannot import create_app from app.cli"
            ),
            None
        );
        assert!(clash(
            "the CLI tests import create_app from app.cli",
            "the CLI tests cannot import create_app from app.cli"
        )
        .is_some());
    }

    #[test]
    fn a_negated_predicate_clashes_with_its_assertion() {
        assert!(clash(
            "the user said not to bump libfoo",
            "I bumped libfoo to 2.4.0"
        )
        .is_some());
        assert!(clash("the tests passed", "the tests failed").is_some());
        assert!(clash(
            "a train leaving before 21:15",
            "a train leaving after 21:15"
        )
        .is_some());
        assert!(clash("they want three rooms", "I am looking to book two rooms").is_some());
        assert!(clash(
            "the staging DB listens on port 5433",
            "psql: connection to staging-db port 5433 failed: Connection refused"
        )
        .is_some());
    }

    /// Issue 37, row 15: opposite predicates under a shared negation clash, as they do
    /// unnegated; under one negation they say the same.
    #[test]
    fn opposites_clash_under_the_same_polarity_only() {
        let source = "We did not drop the users table";
        for claim in [
            "We did not keep the users table",
            "We did not retain the users table",
        ] {
            assert!(
                matches!(clash(claim, source), Some(Clash::Antonym { .. })),
                "{claim}"
            );
        }
        assert!(clash("We kept the users table", "We dropped the users table").is_some());
        // Near misses: one side negated agrees, and the same predicate is no clash.
        assert_eq!(clash("We kept the users table", source), None);
        assert_eq!(
            clash("The tests did not fail", "The tests passed on main"),
            None
        );
        assert_eq!(clash("We did not drop the users table", source), None);
    }

    #[test]
    fn quotes_code_listings_and_two_sided_antonyms_are_no_clash() {
        // A quoted passage is what someone said, not what the claim asserts.
        assert_eq!(
            clash(
                "The user said: \"you're in a vm so do not have access to docker\"",
                "you can access all the docker services on the host"
            ),
            None
        );
        assert!(clash(
            "The user has no access to docker",
            "you can access all the docker services on the host"
        )
        .is_some());
        // A constant's pieces are not words, and a listing's line number is no value.
        assert_eq!(
            clash(
                "The first test run passed",
                "ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL test run"
            ),
            None
        );
        assert_eq!(
            clash(
                "Mock IPNS (port 3001) was up",
                "57\u{2192} // mock IPNS port 57"
            ),
            None
        );
        // A text that holds both words of a pair takes no side.
        assert_eq!(
            clash(
                "Encrypting the private key with the public key",
                "the public key wraps it"
            ),
            None
        );
        assert!(clash("the private key is stored", "the public key is stored").is_some());
        // A count the other text states elsewhere is no other value.
        assert_eq!(
            clash(
                "All 229 tests passed",
                "Test Files  12 passed (12)\n      Tests  229 passed (229)"
            ),
            None
        );
    }

    /// Issue 36, the seventh held-out half: a token of code left out keeps the end of the
    /// sentence it closed ("retry-failure()." ends it), so a denial before it governs nothing
    /// after it; and a file listing as `cat -n` prints it states nothing.
    #[test]
    fn a_sentence_ends_where_a_code_token_ended_it_and_listings_state_nothing() {
        let span = "populated only on success, not on a retry-failure(). Phase 2 checks the key.";
        assert_eq!(clash("Phase 2 checks the key the map bridges", span), None);
        // Near miss: with no full stop after the code, the denial reaches "Phase 2".
        let unended = "populated only on success, not on a retry-failure() Phase 2 checks the key.";
        assert!(clash("Phase 2 checks the key the map bridges", unended).is_some());
        let listing = "    19\tScope: 19 checks in the file";
        assert_eq!(clash("The file is 1715 lines", listing), None);
        assert!(clash("The file holds 1715 checks", "Scope: 19 checks in the file").is_some());
    }

    /// Issue 36, the fourth held-out half: a denial clashes only with what it denies, of what
    /// it denies it, in a language the rules read.
    #[test]
    fn a_denial_of_another_subject_clause_or_language_is_no_clash() {
        // The subject a denial's clause opens with must be the claim's.
        let span = "- The `generate` command does NOT read the journal.";
        assert_eq!(clash("Uses the store for journal reads", span), None);
        assert!(clash("The generate command reads the journal", span).is_some());
        // A dash ends a clause: the denial governs what stands after it only.
        let span = "- The share button is a **stub** - it has no action body yet.";
        assert_eq!(
            clash("Wire the share button action to show the sheet", span),
            None
        );
        assert!(clash("The share button has an action body", span).is_some());
        assert_eq!(
            clash(
                "resolve the tag to a version ID \u{2014} **never** a filter, which breaks parent tags",
                "resolve the tag to a version ID \u{2014} a filter would match children and break parent tags."
            ),
            None
        );
        // "no" is Portuguese for "in the": a sentence in another language denies nothing here.
        assert_eq!(
            clash(
                "needs to call CMS enrollment after the Firebase connection",
                "Isso permite que o trainer no CMS veja seus alunos e a enrollment do app."
            ),
            None
        );
        assert!(clash(
            "needs to call CMS enrollment after the Firebase connection",
            "There is no CMS enrollment after the Firebase connection."
        )
        .is_some());
    }

    #[test]
    fn the_same_subject_is_no_clash() {
        // The seeds' own story: a prohibition and a migration on the same table.
        assert_eq!(
            clash(
                "the user forbade running DROP TABLE on the production users table",
                "ALTER TABLE users ADD COLUMN last_login"
            ),
            None
        );
        assert_eq!(
            clash(
                "never delete anything under /var/lib/postgresql",
                "Understood. I'll leave /var/lib/postgresql alone"
            ),
            None
        );
        assert_eq!(
            clash(
                "All 397 tests passed, credo clean",
                "test \"returns error\" do\n  assert {:error, _} = Foo.bar(1)\nend"
            ),
            None
        );
    }
}
