//! The identifiers `identifier-drift` holds a claim to: what code and systems name, which a
//! summary must copy, never paraphrase (SPEC.md section 8.1, "identifiers").
//!
//! An identifier is a path, a URL, a dotted or qualified name, a version, a hash, a flag, an
//! error code, a snake-case name, or a quoted code span. A bare number ("Task 1", "3 files"),
//! two plain words joined by a slash ("Update/add"), an abbreviation ("e.g.") and prose are not.

/// The identifiers of a text, as written, in order, without repeats.
/// ("Moved `retry_limit` into src/net/client.rs; run cargo build --release on v1.2.10" holds
/// `retry_limit`, `src/net/client.rs`, `--release` and `v1.2.10`.)
pub fn identifiers(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    // Quoted code spans count whole; the text between them is read token by token.
    for (k, piece) in text.split('`').enumerate() {
        let quoted = k % 2 == 1 && text.matches('`').count() > k;
        if quoted {
            let code = piece.trim();
            if !code.is_empty() && code.len() <= 80 && !code.contains('\n') {
                push(code);
            }
            continue;
        }
        let mut prev = "";
        for tok in tokens(piece) {
            if is_identifier(tok) || numbered(prev, tok) {
                push(tok);
            }
            prev = tok;
        }
    }
    out
}

/// Words that make the number after them a name a system gives: `line 21`, `port 5433`.
const NUMBERED: &[&str] = &[
    "line", "lines", "port", "pid", "code", "status", "issue", "pr", "exit", "version", "build",
    "row", "column", "commit", "ticket",
];

/// Whether `tok` is a number that `prev` names (`port 5433`, `line 21`), or `#` and digits.
fn numbered(prev: &str, tok: &str) -> bool {
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    tok.strip_prefix('#').is_some_and(digits)
        || (digits(tok) && NUMBERED.contains(&prev.to_lowercase().as_str()))
}

/// Tokens split at white space and at punctuation no identifier holds, with sentence
/// punctuation and brackets trimmed from their ends.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\'' | '|' | '<' | '>' | '=')
    })
    .map(|t| {
        t.trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | '*' | '!' | '?'))
            .trim_end_matches(['.', ':'])
            .trim_start_matches(['(', '['])
    })
    .filter(|t| !t.is_empty())
}

/// Whether one token is an identifier (see the module's rules).
pub fn is_identifier(tok: &str) -> bool {
    let letters = tok.chars().filter(|c| c.is_alphabetic()).count();
    let digits = tok.chars().filter(|c| c.is_ascii_digit()).count();
    if tok.contains("://") {
        return true;
    }
    if tok.contains('/') {
        return is_path(tok);
    }
    if let Some(flag) = tok.strip_prefix("--").or_else(|| tok.strip_prefix('-')) {
        return flag.len() >= 2
            && flag.starts_with(|c: char| c.is_ascii_alphabetic())
            && flag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    }
    if tok.contains("::") || is_dotted(tok) {
        return true;
    }
    if is_version(tok) {
        return true;
    }
    // A hash: hex digits with both letters and digits, seven or more.
    if tok.len() >= 7 && tok.chars().all(|c| c.is_ascii_hexdigit()) && letters > 0 && digits > 0 {
        return true;
    }
    // An error code: capitals then three or more digits (`E0599`, `TS2345`).
    let caps = tok.chars().take_while(char::is_ascii_uppercase).count();
    if (1..=4).contains(&caps) && digits >= 3 && caps + digits == tok.len() {
        return true;
    }
    // A snake-case name: `last_login`, `noah_muller_9847`.
    tok.contains('_')
        && letters >= 2
        && tok.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !tok.starts_with('_')
}

/// A path: a slash and two or more letters or digits, but not two plain words joined by one
/// slash ("Update/add", "and/or"), nor a fraction (`3/4`).
fn is_path(tok: &str) -> bool {
    let alnum = tok.chars().filter(|c| c.is_alphanumeric()).count();
    if alnum < 2 || !tok.chars().any(char::is_alphabetic) {
        return false;
    }
    let parts: Vec<&str> = tok.split('/').collect();
    let plain = |p: &str| !p.is_empty() && p.chars().all(char::is_alphabetic);
    !(parts.len() == 2 && parts.iter().all(|p| plain(p)))
}

/// A version: digits in two or more dotted parts, with an optional `v`.
fn is_version(tok: &str) -> bool {
    let v = tok.trim_start_matches(['v', 'V']);
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        // A decimal number is a number: "0.91", "2.5".
        && (parts.len() >= 3 || tok.starts_with(['v', 'V']))
}

/// A dotted name: parts of two or more characters joined by dots, one of them with a letter,
/// none all digits but a version's (`config.toml`, `Foo.bar`, `node.js`; not "e.g").
fn is_dotted(tok: &str) -> bool {
    let parts: Vec<&str> = tok.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.len() >= 2
                && p.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        })
        && parts
            .iter()
            .any(|p| p.chars().any(char::is_alphabetic) && !p.chars().all(|c| c.is_ascii_digit()))
        && parts[0].chars().any(char::is_alphabetic)
        || (parts.len() >= 2 && tok.ends_with("()"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_and_system_names_are_identifiers() {
        for id in [
            "src/lib.rs",
            "/srv/prod",
            "crates/cairn-cli",
            "https://example.com/x",
            "2.3.1",
            "v2.4",
            "deadbeef12",
            "--release",
            "-rf",
            "E0599",
            "last_login",
            "std::fs::remove_dir_all",
            "config.toml",
            "Foo.bar",
        ] {
            assert!(is_identifier(id), "{id}");
        }
    }

    #[test]
    fn prose_and_bare_numbers_are_not() {
        for word in [
            "1",
            "397",
            "0.91",
            "Update/add",
            "and/or",
            "3/4",
            "e.g",
            "i.e",
            "Task",
            "-",
            "--",
            "1234567",
            "-5",
        ] {
            assert!(!is_identifier(word), "{word}");
        }
    }

    #[test]
    fn a_sentence_gives_its_identifiers_in_order() {
        assert_eq!(
            identifiers(
                "Moved `retry_limit` into src/net/client.rs; run cargo build --release on v1.2.10."
            ),
            ["retry_limit", "src/net/client.rs", "--release", "v1.2.10"]
        );
        assert!(identifiers("Task 1: Update/add the tests, e.g. 3 of them").is_empty());
        assert_eq!(
            identifiers("port 5433 at line 21 of #42"),
            ["5433", "21", "#42"]
        );
    }

    #[test]
    fn a_quoted_code_span_is_one_identifier() {
        assert_eq!(
            identifiers("It matches `{:error, _} ->` now"),
            ["{:error, _} ->"]
        );
    }
}
