//! A prose compaction's claims: its sentences and list items, as an agent's summary writes
//! them (SPEC.md section 8.8).
//!
//! - Headings (`#`, a short line ending in `:`) and code blocks (fenced by three backticks or
//!   indented four spaces) are not claims.
//! - A list item is a claim of its own, without its marker; so is each sentence of a paragraph.
//! - A sentence ends at `.`, `!` or `?` followed by a space and a capital, a digit, a quote or
//!   the end: a version (`2.3.1`), a path (`src/net/client.rs`), a number (`0.91`) or an
//!   abbreviation before a lower-case word ("e.g. the staging DB") stays whole.

/// The claims of a prose compaction, in order, each trimmed, none empty.
///
/// ```
/// let text = "## Summary\n\nWe are still on libfoo 2.3.1. The user said never run DROP TABLE.\n\
///             - staging DB port is 5433\n```sh\npsql -p 5433\n```";
/// assert_eq!(
///     cairn::gate::prose::claims(text),
///     ["We are still on libfoo 2.3.1.", "The user said never run DROP TABLE.",
///      "staging DB port is 5433"]
/// );
/// ```
pub fn claims(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut paragraph = String::new();
    let flush = |paragraph: &mut String, out: &mut Vec<String>| {
        out.extend(sentences(paragraph));
        paragraph.clear();
    };
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            flush(&mut paragraph, &mut out);
            fenced = !fenced;
            continue;
        }
        if fenced || raw.starts_with("    ") || raw.starts_with('\t') {
            continue;
        }
        if line.is_empty() || is_heading(line) {
            flush(&mut paragraph, &mut out);
            continue;
        }
        if let Some(item) = list_item(line) {
            flush(&mut paragraph, &mut out);
            out.extend(sentences(item));
            continue;
        }
        if !paragraph.is_empty() {
            paragraph.push(' ');
        }
        paragraph.push_str(line);
    }
    flush(&mut paragraph, &mut out);
    out
}

/// A markdown heading, a horizontal rule, or a label line ("Key decisions:"): no claim.
fn is_heading(line: &str) -> bool {
    line.starts_with('#')
        || line
            .chars()
            .all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '))
        || (line.ends_with(':') && line.split_whitespace().count() <= 6)
        || (line.starts_with("**") && line.ends_with("**") && line.split_whitespace().count() <= 8)
}

/// The text of a list item without its marker (`-`, `*`, `+`, `1.`, `1)`), if the line is one.
fn list_item(line: &str) -> Option<&str> {
    for marker in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return Some(strip_checkbox(rest.trim()));
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(rest.trim());
        }
    }
    None
}

fn strip_checkbox(item: &str) -> &str {
    for b in ["[ ] ", "[x] ", "[X] "] {
        if let Some(rest) = item.strip_prefix(b) {
            return rest.trim();
        }
    }
    item
}

/// Words that end in a full stop without ending a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "mr.", "mrs.", "ms.", "dr.", "no.", "approx.",
];

/// The sentences of one paragraph or list item.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let end = i + c.len_utf8();
        // Closing quotes and brackets stay with their sentence.
        let mut j = k + 1;
        while j < chars.len() && matches!(chars[j].1, '"' | '\'' | ')' | '\u{201d}' | '\u{2019}') {
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |&(at, _)| at).max(end);
        // A boundary is followed by white space, then a capital, a digit, a quote or a bracket.
        let Some(&(_, space)) = chars.get(j) else {
            continue;
        };
        if !space.is_whitespace() {
            continue;
        }
        let next = chars[j..]
            .iter()
            .map(|&(_, c)| c)
            .find(|c| !c.is_whitespace());
        let opens = next.is_some_and(|n| {
            n.is_uppercase() || n.is_ascii_digit() || matches!(n, '"' | '\'' | '(' | '`' | '*')
        });
        let word = text[start..end]
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or("")
            .to_lowercase();
        if !opens || (c == '.' && ABBREVIATIONS.contains(&word.as_str())) {
            continue;
        }
        let s = text[start..end].trim();
        if !s.is_empty() {
            out.push(s.to_string());
        }
        start = end;
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_paths_numbers_and_abbreviations_stay_whole() {
        assert_eq!(
            claims("Moved retries into src/net/client.rs. Tests pass on v1.2.10, e.g. the retry test. Score 0.91 held."),
            [
                "Moved retries into src/net/client.rs.",
                "Tests pass on v1.2.10, e.g. the retry test.",
                "Score 0.91 held."
            ]
        );
    }

    #[test]
    fn list_items_are_claims_and_headings_and_code_are_not() {
        let text = "# Session summary\n\nKey decisions:\n1. Keep libfoo at 2.3.1.\n2) Never drop orders_old\n- [x] archive done\n\n```\nDROP TABLE x;\n```\n    indented code\nLast line, no stop";
        assert_eq!(
            claims(text),
            [
                "Keep libfoo at 2.3.1.",
                "Never drop orders_old",
                "archive done",
                "Last line, no stop"
            ]
        );
    }

    #[test]
    fn a_paragraph_over_lines_is_joined_before_it_is_split() {
        assert_eq!(
            claims("The user asked for\ntimeouts. They said \"not yet.\" Then left."),
            [
                "The user asked for timeouts.",
                "They said \"not yet.\"",
                "Then left."
            ]
        );
    }
}
