//! What a command line cannot tell about itself (issue 37): code built at run time, inline
//! interpreter code, and the escapes and nested substitutions a reader must decode before it
//! can see the command at all. A line the gate cannot read fails closed under a prohibition.

/// Decodes one ANSI-C escape of `$'...'` at `s[i]` (the char after the backslash): the chars
/// it stands for and how many chars it takes. `\xHH`, `\NNN` (octal), `\uHHHH`, `\UHHHHHHHH`,
/// `\cX` and the letter escapes; an unknown escape stands for itself with its backslash.
pub(super) fn ansi_c(s: &[char], i: usize) -> (String, usize) {
    let Some(&c) = s.get(i) else {
        return ("\\".into(), 0);
    };
    let digits = |from: usize, max: usize, radix: u32| -> (Option<char>, usize) {
        let mut n = 0usize;
        let mut v: u32 = 0;
        while n < max {
            match s.get(from + n).and_then(|d| d.to_digit(radix)) {
                Some(d) => {
                    v = v.saturating_mul(radix).saturating_add(d);
                    n += 1;
                }
                None => break,
            }
        }
        (if n == 0 { None } else { char::from_u32(v) }, n)
    };
    let simple = match c {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'e' | 'E' => Some('\u{1b}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' | '\'' | '"' | '?' => Some(c),
        _ => None,
    };
    if let Some(x) = simple {
        return (x.to_string(), 1);
    }
    let (decoded, taken) = match c {
        'x' => {
            let (ch, n) = digits(i + 1, 2, 16);
            (ch, n + 1)
        }
        'u' => {
            let (ch, n) = digits(i + 1, 4, 16);
            (ch, n + 1)
        }
        'U' => {
            let (ch, n) = digits(i + 1, 8, 16);
            (ch, n + 1)
        }
        '0'..='7' => digits(i, 3, 8),
        'c' => match s.get(i + 1) {
            Some(x) => (char::from_u32(u32::from(*x) & 0x1f), 2),
            None => (None, 1),
        },
        _ => (None, 1),
    };
    match decoded {
        Some(ch) => (ch.to_string(), taken),
        None => (format!("\\{c}"), 1),
    }
}

/// The bodies of the command substitutions (`$(...)`, backticks) inside the text of a
/// parameter expansion or an arithmetic expansion: `${X:-$(rm -rf d)}`, `$((1+$(...)))`.
pub(super) fn inner_subs(text: &[char]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            '\\' => i += 2,
            '$' if text.get(i + 1) == Some(&'(') && text.get(i + 2) != Some(&'(') => {
                match super::find_close(text, i + 2) {
                    Some(close) => {
                        out.push(text[i + 2..close].iter().collect());
                        i = close + 1;
                    }
                    None => {
                        out.push(text[i + 2..].iter().collect());
                        break;
                    }
                }
            }
            '`' => {
                let end = (i + 1..text.len()).find(|k| text[*k] == '`' && text[*k - 1] != '\\');
                let stop = end.unwrap_or(text.len());
                out.push(text[i + 1..stop].iter().collect());
                i = stop + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// The inline code an interpreter runs from its arguments (`python -c CODE`, `perl -e`,
/// `ruby -e`, `node -e|-p|--eval|--print`, `php -r`, `deno eval`, `bun -e`), with the
/// language's name; `None` when it runs none.
pub(super) fn inline_code<'a>(name: &str, args: &'a [String]) -> Option<(&'static str, &'a str)> {
    let (lang, flags): (&'static str, &[&str]) = match name {
        n if n.starts_with("python") || n == "pypy" || n == "pypy3" => ("Python", &["-c"]),
        "perl" => ("Perl", &["-e", "-E"]),
        "ruby" => ("Ruby", &["-e"]),
        "node" | "nodejs" | "bun" => ("JavaScript", &["-e", "-p", "--eval", "--print"]),
        "php" => ("PHP", &["-r"]),
        "deno" => {
            let k = args.iter().position(|a| a == "eval")?;
            return args.get(k + 1).map(|c| ("JavaScript", c.as_str()));
        }
        "osascript" => ("AppleScript", &["-e"]),
        _ => return None,
    };
    for (k, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        if let Some(f) = flags.iter().find(|f| a == *f) {
            let _ = f;
            return args.get(k + 1).map(|c| (lang, c.as_str()));
        }
        // A short flag with the code attached (`-cprint(1)`) or among other flags (`-Sc`).
        if a.len() > 2 && a.starts_with('-') && !a.starts_with("--") {
            for f in flags.iter().filter(|f| f.len() == 2) {
                let letter = &f[1..];
                if let Some(rest) = a.strip_prefix(*f) {
                    return Some((lang, rest));
                }
                if a[1..].ends_with(letter) && a[1..].chars().all(|c| c.is_ascii_alphabetic()) {
                    return args.get(k + 1).map(|c| (lang, c.as_str()));
                }
            }
        }
    }
    None
}

/// Names that only compute and print: what plainly read-only inline code may call or name.
/// Anything else (a module's function, a file, a subprocess) makes the code opaque. An allow
/// list, not a deny list: a new way to delete a file is unknown here, and so it fails closed.
const READ_ONLY_NAMES: &[&str] = &[
    "print",
    "len",
    "str",
    "int",
    "float",
    "sum",
    "min",
    "max",
    "abs",
    "round",
    "sorted",
    "range",
    "list",
    "dict",
    "tuple",
    "set",
    "repr",
    "bool",
    "format",
    "import",
    "sys",
    "version",
    "version_info",
    "platform",
    "python_version",
    "json",
    "dumps",
    "loads",
    "math",
    "sqrt",
    "pi",
    "True",
    "False",
    "None",
    "true",
    "false",
    "null",
    "console",
    "log",
    "process",
    "versions",
    "puts",
    "p",
    "say",
    "echo",
    "RUBY_VERSION",
    "PHP_VERSION",
    "phpversion",
    "for",
    "in",
    "if",
    "else",
    "and",
    "or",
    "not",
    "x",
    "i",
    "n",
    "JSON",
    "stringify",
    "parse",
    "Math",
    "upper",
    "lower",
    "join",
    "split",
    "strip",
    "hex",
    "ord",
    "chr",
    "time",
    "datetime",
    "now",
    "date",
    "today",
    "isoformat",
    "executable",
    "path",
    "maxsize",
    "byteorder",
    "uname",
    "node",
    "machine",
    "system_alias",
];

/// Whether inline code plainly only computes and prints: it names nothing outside
/// [`READ_ONLY_NAMES`] (string literals aside), and holds no shell-out (backticks, `%x`).
pub(super) fn plainly_read_only(code: &str) -> bool {
    if code.contains('`') || code.contains("%x") || code.contains("__") {
        return false;
    }
    let mut names = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in code.chars() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                if !word.is_empty() {
                    names.push(std::mem::take(&mut word));
                }
                quote = Some(c);
            }
            None if c.is_alphanumeric() || c == '_' => word.push(c),
            None => {
                if !word.is_empty() {
                    names.push(std::mem::take(&mut word));
                }
            }
        }
        prev = c;
    }
    if !word.is_empty() {
        names.push(word);
    }
    quote.is_none()
        && names
            .iter()
            .filter(|n| !n.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .all(|n| READ_ONLY_NAMES.contains(&n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_escapes_decode() {
        let s: Vec<char> = r"x2fA".chars().collect();
        assert_eq!(ansi_c(&s, 0), ("/".to_string(), 3));
        let s: Vec<char> = r"057".chars().collect();
        assert_eq!(ansi_c(&s, 0), ("/".to_string(), 3));
        let s: Vec<char> = r"u0075".chars().collect();
        assert_eq!(ansi_c(&s, 0), ("u".to_string(), 5));
        let s: Vec<char> = r"q".chars().collect();
        assert_eq!(ansi_c(&s, 0), (r"\q".to_string(), 1));
    }

    #[test]
    fn read_only_code_is_told_from_code_that_acts() {
        assert!(plainly_read_only("print(1 + 1)"));
        assert!(plainly_read_only("import sys; print(sys.version)"));
        assert!(plainly_read_only("console.log(process.versions.node)"));
        assert!(!plainly_read_only(
            "import shutil; shutil.rmtree('/srv/prod')"
        ));
        assert!(!plainly_read_only("__import__('os').system('x')"));
        assert!(!plainly_read_only("print(open('/etc/passwd').read())"));
        assert!(!plainly_read_only("puts `rm -rf /`"));
    }
}
