//! Text made safe to show on a terminal: the ledger's texts and stream names are anyone's
//! input, and a control or bidirectional-formatting character in one would move the cursor,
//! rewrite a line already printed, or reorder what a reader sees (SPEC.md section 6).

use std::borrow::Cow;

/// `text` with every character a terminal would act on written as a visible escape
/// (`\u{1b}`): C0 and C1 controls and DEL (a new line and a tab excepted), the bidirectional
/// marks, embeddings, overrides and isolates, and the line and paragraph separators. Text
/// without such a character is returned as it is.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// As [`visible`], with new lines and tabs escaped too: for a value that must stay on its
/// line (a stream name, a field of a one-line report).
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

fn escape(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    let acts = |c: char| !kept(c) && (c.is_control() || formats_direction(c));
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The characters of Unicode's bidirectional algorithm that reorder text without being seen
/// (UAX #9: ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI), and the line and
/// paragraph separators.
fn formats_direction(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_marks_are_escaped_and_plain_text_is_kept() {
        assert_eq!(
            visible("ops\u{1b}[2K\rclaims: 0"),
            "ops\\u{1b}[2K\\u{d}claims: 0"
        );
        assert_eq!(visible("a\u{202e}txt.exe\0"), "a\\u{202e}txt.exe\\u{0}");
        assert_eq!(visible("\u{9b}31m\u{7f}"), "\\u{9b}31m\\u{7f}");
        // The near miss: new lines, tabs, accents and right-to-left letters are text.
        let plain = "line one\n\tcafé שלום";
        assert!(matches!(visible(plain), Cow::Borrowed(_)));
        assert_eq!(visible_line("a\nb\tc"), "a\\u{a}b\\u{9}c");
    }
}
