//! Word-for-word support: a claim that repeats a witness sentence, or two witness sentences
//! joined, as written (SPEC.md section 8.1, "verbatim"). Such a claim is entailed by its
//! witness whatever a scorer makes of the rest of the witness's text.

use super::for_each_word;

/// The fewest words a repeated run must have to count: "Done." or "Yes" repeat half a log.
pub const MIN_WORDS: usize = 3;

/// Words that may join two repeated runs ("X, and Y"): the joint adds nothing of its own.
const JOINERS: &[&str] = &["and", "but", "while", "then", "so", "also", "as"];

/// The lower-case words of a text, as the verbatim check compares them: markup, quotes and
/// punctuation fall away, so `**Budget**: $400` repeats "budget 400".
use super::words as tokens;

/// A source's words, and where its sentences start and end among them.
struct Whole {
    words: Vec<String>,
    starts: Vec<usize>,
    ends: Vec<usize>,
}

impl Whole {
    fn of(source: &str) -> Whole {
        let mut w = Whole {
            words: Vec::new(),
            starts: Vec::new(),
            ends: Vec::new(),
        };
        for s in super::sentences(source) {
            let start = w.words.len();
            for_each_word(s, |t| w.words.push(t.to_string()));
            if w.words.len() > start {
                w.starts.push(start);
                w.ends.push(w.words.len());
            }
        }
        w
    }

    /// Whether `part` is the words of one sentence, or of consecutive sentences, of it.
    fn states(&self, part: &[String]) -> bool {
        self.starts.iter().any(|&s| {
            let e = s + part.len();
            e <= self.words.len()
                && self.ends.binary_search(&e).is_ok()
                && self.words[s..e] == *part
        })
    }
}

/// Whether `claim` repeats `source` word for word: its words are the words of one sentence of
/// the source, or of consecutive sentences (markup, quotes and punctuation aside). A part of a
/// sentence is no repeat: "codes expire after 7 days" drops the "unless ..." that followed.
///
/// A claim of several lines is a quote (a code block of a prose summary): it repeats the source
/// when the words of each of its lines stand in the source as a run, wherever they stand (a
/// line of code or output is no sentence), so the quoted code of a tool call's arguments or
/// the quoted lines of a tool's output are found in it.
pub fn repeats(claim: &str, source: &str) -> bool {
    if claim.trim().contains('\n') {
        return quotes(claim, source);
    }
    let c = tokens(claim);
    c.len() >= MIN_WORDS && Whole::of(source).states(&c)
}

/// Whether the words of `text` stand in `source` as a run, however the two lay out their
/// white space and punctuation: a code span quoted on one line is found in the indented lines
/// of a file or a tool call's escaped arguments.
pub fn stands_in(text: &str, source: &str) -> bool {
    let ours = tokens(text);
    let theirs = tokens(source);
    !ours.is_empty() && theirs.windows(ours.len()).any(|w| w == ours.as_slice())
}

/// The passages `text` quotes: three words or more between `"` and `"`, or `“` and `”` (an
/// unclosed quotation runs to the text's end). Each is the byte range of the whole quotation,
/// its marks included, and the words inside.
pub(crate) fn quotations(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(['"', '\u{201c}']).map(|i| from + i) {
        let mark = if text[at..].starts_with('"') {
            '"'
        } else {
            '\u{201c}'
        };
        let close_mark = if mark == '"' { '"' } else { '\u{201d}' };
        let inside = at + mark.len_utf8();
        let close = text[inside..]
            .find(close_mark)
            .map_or(text.len(), |i| inside + i);
        let end = (close + close_mark.len_utf8()).min(text.len());
        let inner = &text[inside..close];
        if inner.split_whitespace().count() >= MIN_WORDS {
            out.push((at..end, inner));
        }
        from = end;
    }
    out
}

/// Whether `text` holds one of the passages `quoted` ([`quotations`]) word for word.
pub(crate) fn holds_quoted(quoted: &[(std::ops::Range<usize>, &str)], text: &str) -> bool {
    quoted.iter().any(|(_, q)| stands_in(q, text))
}

/// Whether each line of `quote` with words stands in `source` as a run of its words.
fn quotes(quote: &str, source: &str) -> bool {
    let theirs = tokens(source);
    let lines: Vec<Vec<String>> = (quote.lines())
        .map(tokens)
        .filter(|l| !l.is_empty())
        .collect();
    lines.iter().map(Vec::len).sum::<usize>() >= MIN_WORDS
        && (lines.iter()).all(|l| theirs.windows(l.len()).any(|w| w == l.as_slice()))
}

/// Whether `claim` is two parts, each the words of a whole sentence (or run of sentences) of
/// one of `sources`, joined by nothing or by one joining word; or one such part.
pub fn repeats_joined(claim: &str, sources: &[&str]) -> bool {
    let c = tokens(claim);
    if c.len() < MIN_WORDS {
        return false;
    }
    let wholes: Vec<Whole> = sources.iter().map(|s| Whole::of(s)).collect();
    let stated = |part: &[String]| part.len() >= 2 && wholes.iter().any(|w| w.states(part));
    if stated(&c) {
        return true;
    }
    for cut in 2..c.len().saturating_sub(1) {
        if !stated(&c[..cut]) {
            continue;
        }
        let rest = &c[cut..];
        let skip = usize::from(JOINERS.contains(&rest[0].as_str()));
        if stated(&rest[skip..]) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_sentence_repeats_its_turn_whatever_else_the_turn_holds() {
        let turn = "The budget is $400 for the whole migration. Never touch the billing tables.";
        assert!(repeats("The budget is $400 for the whole migration.", turn));
        assert!(repeats(
            "**The budget** is $400 for the whole migration",
            turn
        ));
        // A part of a sentence drops what followed it: no repeat.
        assert!(!repeats("The budget is $400", turn));
        assert!(!repeats(
            "The budget is $500 for the whole migration.",
            turn
        ));
        assert!(!repeats("Never.", turn));
    }

    #[test]
    fn a_quoted_block_repeats_the_span_that_holds_its_lines() {
        let call = r#"{"old_string":"x","new_string":"  if (response.status === 204) {\n    return undefined as T;\n  }"}"#;
        assert!(repeats(
            "if (response.status === 204) {\n  return undefined as T;\n}",
            call
        ));
        assert!(!repeats(
            "if (response.status === 200) {\n  return undefined as T;\n}",
            call
        ));
    }

    #[test]
    fn two_sentences_of_two_turns_joined_repeat_them() {
        let a = "Root disk is 96% full.";
        let b = "Checked with du. /var/log/old-builds holds 31G.";
        assert!(repeats_joined(
            "Root disk is 96% full. /var/log/old-builds holds 31G.",
            &[a, b]
        ));
        assert!(repeats_joined(
            "Root disk is 96% full, and /var/log/old-builds holds 31G",
            &[a, b]
        ));
        assert!(!repeats_joined(
            "Root disk is 96% full, and /var/log/old-builds holds 40G",
            &[a, b]
        ));
    }
}
