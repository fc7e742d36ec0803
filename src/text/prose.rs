//! A prose compaction's claims: its sentences and list items, as an agent's summary writes
//! them (SPEC.md section 8.8). Markup hides nothing (issue 36, point 9):
//!
//! - A heading (`#`), a label line ("Key decisions:") or a bold line is a claim, unless it is a
//!   bare label: five words or fewer, with no digit and no identifier ("Pending Tasks").
//! - A list item is a claim of its own, without its marker, nested or not; a line indented
//!   under it, or following it without a blank line, continues it. Each sentence of a
//!   paragraph is a claim.
//! - A code block (fenced by three backticks or `~~~`, or indented four spaces outside a list)
//!   is one claim, its lines as written: a quote of what it claims to show, which the gates
//!   verify when each of its lines stands in a span (`text::verbatim`).
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
///      "staging DB port is 5433", "psql -p 5433"]
/// );
/// ```
pub fn claims(text: &str) -> Vec<String> {
    let mut r = Reader::default();
    for raw in text.lines() {
        r.line(raw);
    }
    if let Some(lines) = r.fence.take() {
        // An unclosed fence runs to the text's end.
        r.out.extend(quote(&lines));
    }
    r.flush();
    r.out.retain(|c| !of_itself(c));
    r.out
}

/// Whether a sentence is the summary speaking of its own writing, which asserts nothing about
/// the work: it opens as a writer's aside or names the text itself as its subject ("Let me
/// analyze the conversation", "This is a continuation of a previous conversation", "The
/// summary below ...") and names the conversation, the summary, the session or the transcript.
fn of_itself(sentence: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "let me ",
        "i'll ",
        "i will ",
        "this is a continuation",
        "the summary ",
        "this summary ",
        "the conversation ",
        "this conversation ",
    ];
    const ITSELF: &[&str] = &["conversation", "summary", "session", "transcript"];
    let lower = sentence.trim_start_matches(['*', '#', ' ']).to_lowercase();
    OPENINGS.iter().any(|o| lower.starts_with(o))
        && super::words(&lower)
            .iter()
            .any(|w| ITSELF.contains(&w.as_str()))
}

/// Whether a sentence states what is still to be done, not what happened: it opens with a
/// label of at most four words (markup aside) that names work ahead ("Next step:", "Pending
/// tasks:", "TODO:", "Remaining:", "Outstanding:"). A plan asserts no history, so it needs no
/// raw span under it; every other rule still reads it.
pub fn states_intent(sentence: &str) -> bool {
    const AHEAD: &[&str] = &["next", "pending", "todo", "remaining", "outstanding"];
    let t = sentence.trim_start_matches(['*', '#', '-', ' ']);
    let Some((label, _)) = t.split_once(':') else {
        return false;
    };
    let words = super::words(label);
    words.len() <= 4 && words.iter().any(|w| AHEAD.contains(&w.as_str()))
}

/// Whether a sentence quotes a passage (three words or more between quotation marks).
pub fn quotes(sentence: &str) -> bool {
    !crate::text::verbatim::quotations(sentence).is_empty()
}

/// Whether each passage a sentence quotes stands in one of the texts `held` (the raw spans of
/// its stream): a quotation claims someone's very words, so one that no span holds is no
/// abstraction of the log ("Their last word was \"ship it on friday\"").
pub fn quotes_only_what_is_held(sentence: &str, held: &[&str]) -> bool {
    let quoted = crate::text::verbatim::quotations(sentence);
    (quoted.iter()).all(|(_, q)| held.iter().any(|h| crate::text::verbatim::stands_in(q, h)))
}

/// Whether a sentence leads into the items after it: it ends with a colon ("The user's
/// requests were:", "Constraints in effect (from CLAUDE.md):"). It states nothing of its own;
/// the items it leads into do.
pub fn leads_in(sentence: &str) -> bool {
    sentence.trim_end_matches(['*', ' ']).ends_with(':')
}

/// The state of [`claims`] between lines.
#[derive(Default)]
struct Reader {
    out: Vec<String>,
    /// The lines of the fenced block being read, when inside one.
    fence: Option<Vec<String>>,
    paragraph: String,
    /// The list item being read, with its continuation lines.
    item: Option<String>,
    /// The lines of an indented code block being read.
    code: Vec<String>,
}

impl Reader {
    fn line(&mut self, raw: &str) {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            match self.fence.take() {
                Some(lines) => self.out.extend(quote(&lines)),
                None => {
                    self.flush();
                    self.fence = Some(Vec::new());
                }
            }
            return;
        }
        if let Some(lines) = self.fence.as_mut() {
            lines.push(raw.to_string());
            return;
        }
        if line.is_empty() {
            self.flush();
            return;
        }
        if let Some(item) = list_item(line) {
            self.flush();
            self.item = Some(item.to_string());
            return;
        }
        let indented = raw.starts_with("    ") || raw.starts_with('\t');
        if let Some(item) = self.item.as_mut().filter(|_| indented || !is_heading(line)) {
            // A line under an item, indented or not, continues it.
            item.push(' ');
            item.push_str(line);
            return;
        }
        if indented && self.paragraph.is_empty() {
            self.code.push(raw.to_string());
            return;
        }
        // A line back at the margin ends an indented block.
        let code = std::mem::take(&mut self.code);
        self.out.extend(quote(&code));
        if is_heading(line) {
            self.flush();
            self.out.extend(heading(line));
            return;
        }
        if !self.paragraph.is_empty() {
            self.paragraph.push(' ');
        }
        self.paragraph.push_str(line);
    }

    fn flush(&mut self) {
        self.out.extend(sentences(&self.paragraph));
        self.paragraph.clear();
        if let Some(item) = self.item.take() {
            // An item that is only a label ("2. Key Technical Concepts:") is read as a heading.
            if is_heading(&item) {
                self.out.extend(heading(&item));
            } else {
                self.out.extend(sentences(&item));
            }
        }
        let code = std::mem::take(&mut self.code);
        self.out.extend(quote(&code));
    }
}

/// A code block as one claim: its lines as written, without their common indent, blank lines
/// at either end dropped. None when it holds no word.
fn quote(lines: &[String]) -> Option<String> {
    let indent = (lines.iter())
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = (lines.iter())
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()).trim_end())
        .collect();
    let text = body.join("\n").trim_matches('\n').to_string();
    text.chars().any(char::is_alphanumeric).then_some(text)
}

/// A markdown heading, a horizontal rule, a label line ("Key decisions:") or a bold line.
fn is_heading(line: &str) -> bool {
    line.starts_with('#')
        || line
            .chars()
            .all(|c| matches!(c, '-' | '*' | '_' | '=' | ' '))
        || (line.ends_with(':') && line.split_whitespace().count() <= 6)
        || (line.starts_with("**") && line.ends_with("**") && line.split_whitespace().count() <= 8)
}

/// A heading's claim: its words without the markup, unless it is a rule or a bare label (five
/// words or fewer, with no digit and no identifier: "Pending Tasks", "Key decisions").
fn heading(line: &str) -> Option<String> {
    let text = line
        .trim_start_matches('#')
        .trim()
        .trim_matches('*')
        .trim()
        .trim_end_matches(':')
        .trim_matches('*')
        .trim();
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    let bare = text.split_whitespace().count() <= 5
        && !text.chars().any(|c| c.is_ascii_digit())
        && super::code::identifiers(text).is_empty();
    (!bare).then(|| text.to_string())
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

    /// `unanchored-claim` spares a sentence the finder could not place unless it quotes a
    /// passage no span of its stream holds.
    #[test]
    fn a_quotation_must_stand_in_the_stream() {
        let stream = ["We are still on libfoo 2.3.1, do not bump."];
        assert!(quotes_only_what_is_held(
            "Moved to Kubernetes in a day.",
            &stream
        ));
        assert!(quotes_only_what_is_held(
            "Their word was \"do not bump\" on libfoo.",
            &stream
        ));
        // Near miss: the quoted words stand in no span.
        assert!(!quotes_only_what_is_held(
            "Their word was \"ship it on friday\" on libfoo.",
            &stream
        ));
        // Each passage it quotes must stand: one held beside one made up is not enough.
        assert!(!quotes_only_what_is_held(
            "They said \"do not bump\" and then \"ship it on friday\" too.",
            &stream
        ));
        assert!(quotes("Their word was \"ship it on friday\"."));
        assert!(!quotes("Moved to Kubernetes in a day."));
    }

    /// A sentence ending with a colon leads into the items after it.
    #[test]
    fn a_sentence_ending_with_a_colon_leads_in() {
        assert!(leads_in("The user's explicit requests were:"));
        assert!(leads_in("**Constraints in effect:**"));
        assert!(!leads_in("Label: the user asked for 5433"));
    }

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
    fn markup_hides_nothing_but_bare_labels() {
        let text = "# Session summary\n\nKey decisions:\n1. Keep libfoo at 2.3.1.\n2) Never drop orders_old\n- [x] archive done\n   - nested: the retry test passes\n     and the timeout test too\n\n## libfoo was upgraded to 2.4.0\n**The user approved the migration**\n\n```\nDROP TABLE x;\n```\n\n    indented code\nLast line, no stop";
        assert_eq!(
            claims(text),
            [
                "Keep libfoo at 2.3.1.",
                "Never drop orders_old",
                "archive done",
                "nested: the retry test passes and the timeout test too",
                "libfoo was upgraded to 2.4.0",
                "DROP TABLE x;",
                "indented code",
                "Last line, no stop"
            ]
        );
        // The summary speaking of its own writing asserts nothing.
        assert_eq!(
            claims("Analysis:\nLet me chronologically analyze the conversation:\n1. Key Technical Concepts:\n2. The user asked for timeouts."),
            ["The user asked for timeouts."]
        );
        // A bold line of six words or more asserts: it is a claim.
        assert_eq!(
            claims("**The user approved the whole migration plan**"),
            ["The user approved the whole migration plan"]
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
