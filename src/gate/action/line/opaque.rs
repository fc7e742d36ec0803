//! What a command line cannot tell about itself (issue 37): code built at run time, inline
//! interpreter code, and the escapes and nested substitutions a reader must decode before it
//! can see the command at all. A line the gate cannot read fails closed under a prohibition.

/// The text printf (and `echo -e`) prints for `text`: its backslash escapes decoded as
/// [`ansi_c`] decodes them (`\x67it` is `git`).
pub(super) fn printed(text: &str) -> String {
    let s: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if c == '\\' {
            let (decoded, used) = ansi_c(&s, i + 1);
            out.push_str(&decoded);
            i += 1 + used;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

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

/// A line with each here-document written as a here-string: `CMD <<'EOF'` + body + `EOF`
/// becomes `CMD <<< 'BODY'` (a quoted delimiter: the body is literal), and `CMD <<EOF` becomes
/// `CMD <<< "BODY"` (its substitutions run, as in double quotes); `<<-` strips the body's
/// leading tabs. So the body is the command's standard input, read as an `echo`'s text is:
/// data for `cat` or `git commit -m "$(cat <<'EOF' ...)"`, code for `bash` or `psql`.
/// `None` when the line holds no here-document, or one whose delimiter line never comes.
pub(super) fn heredocs_as_strings(line: &str) -> Option<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Cx {
        Code,
        Dq,
        Sq,
        Back,
    }
    let mut text: Vec<char> = line.chars().collect();
    let mut stack = vec![Cx::Code];
    let mut changed = false;
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        let top = *stack.last().unwrap_or(&Cx::Code);
        match (top, c) {
            (Cx::Sq, '\'') => {
                stack.pop();
            }
            (Cx::Sq, _) => {}
            (_, '\\') => i += 1,
            (Cx::Dq, '"') | (Cx::Back, '`') => {
                stack.pop();
            }
            (Cx::Code, '"') => stack.push(Cx::Dq),
            (Cx::Code, '\'') => stack.push(Cx::Sq),
            (Cx::Code | Cx::Dq, '`') => stack.push(Cx::Back),
            (_, '$') if text.get(i + 1) == Some(&'(') => {
                stack.push(Cx::Code);
                i += 1;
            }
            (Cx::Code, '(') if stack.len() > 1 => stack.push(Cx::Code),
            (Cx::Code, ')') if stack.len() > 1 => {
                stack.pop();
            }
            (Cx::Code | Cx::Back, '<')
                if text.get(i + 1) == Some(&'<') && text.get(i + 2) != Some(&'<') =>
            {
                let (string, end) = heredoc(&text, i)?;
                text.splice(i..end, string.chars());
                i += string.chars().count();
                changed = true;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    changed.then(|| text.into_iter().collect())
}

/// The here-document whose `<<` is at `at`: the here-string that stands for it, and the end of
/// what it replaces, the body and its delimiter line included (the rest of the operator's own
/// line stays, after the here-string).
fn heredoc(text: &[char], at: usize) -> Option<(String, usize)> {
    let mut j = at + 2;
    let strip = text.get(j) == Some(&'-');
    if strip {
        j += 1;
    }
    while matches!(text.get(j), Some(' ' | '\t')) {
        j += 1;
    }
    let word_start = j;
    while let Some(c) = text.get(j) {
        if c.is_whitespace() || ";|&<>()".contains(*c) {
            break;
        }
        j += 1;
    }
    let word: String = text[word_start..j].iter().collect();
    let quoted = word.contains(['\'', '"', '\\']);
    let delim: String = word
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    if delim.is_empty() {
        return None;
    }
    // The body starts on the line after the operator's.
    let nl = (j..text.len()).find(|k| text[*k] == '\n')?;
    let mut body: Vec<String> = Vec::new();
    let mut k = nl + 1;
    loop {
        if k > text.len() {
            return None;
        }
        let end = (k..text.len())
            .find(|x| text[*x] == '\n')
            .unwrap_or(text.len());
        let raw: String = text[k..end].iter().collect();
        let line = if strip {
            raw.trim_start_matches('\t').to_string()
        } else {
            raw
        };
        if line == delim {
            // The operator's line, less the operator, then the lines after the delimiter.
            let rest: String = text[j..=nl].iter().collect();
            let body = body.join("\n");
            let string = if quoted {
                format!("<<< '{}'", body.replace('\'', "'\\''"))
            } else {
                format!("<<< \"{}\"", body.replace('"', "\\\""))
            };
            return Some((format!("{string}{rest}"), end));
        }
        body.push(line);
        k = end + 1;
    }
}

/// The language an interpreter command runs, for the interpreters whose inline code is read.
pub(super) fn language(name: &str) -> Option<&'static str> {
    match name {
        n if n.starts_with("python") && n[6..].chars().all(|c| c.is_ascii_digit() || c == '.') => {
            Some("Python")
        }
        "pypy" | "pypy3" => Some("Python"),
        "ruby" => Some("Ruby"),
        "node" | "nodejs" | "bun" | "deno" => Some("JavaScript"),
        "php" => Some("PHP"),
        "osascript" => Some("AppleScript"),
        "lua" | "luajit" => Some("Lua"),
        "tclsh" | "wish" => Some("Tcl"),
        "mongosh" | "mongo" => Some("MongoDB shell"),
        "Rscript" => Some("R"),
        "julia" => Some("Julia"),
        _ => None,
    }
}

/// The inline code an interpreter runs from its arguments (`python -c CODE`, `perl -e`,
/// `ruby -e`, `node -e|-p|--eval|--print`, `php -r`, `deno eval`, `bun -e`), with the
/// language's name; `None` when it runs none.
pub(super) fn inline_code<'a>(name: &str, args: &'a [String]) -> Option<(&'static str, &'a str)> {
    let (lang, flags): (&'static str, &[&str]) = match name {
        n if language(n) == Some("Python") => ("Python", &["-c"]),
        "perl" => ("Perl", &["-e", "-E"]),
        "ruby" => ("Ruby", &["-e"]),
        "node" | "nodejs" | "bun" => ("JavaScript", &["-e", "-p", "--eval", "--print"]),
        "php" => ("PHP", &["-r"]),
        "deno" => {
            let k = args.iter().position(|a| a == "eval")?;
            return args.get(k + 1).map(|c| ("JavaScript", c.as_str()));
        }
        "osascript" => ("AppleScript", &["-e"]),
        "lua" | "luajit" => ("Lua", &["-e"]),
        "mongosh" | "mongo" => ("MongoDB shell", &["--eval"]),
        "tclsh" | "wish" => return None,
        "Rscript" | "julia" => ("R or Julia", &["-e"]),
        _ => return None,
    };
    for (k, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        if flags.contains(&a.as_str()) {
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

/// Names that only compute, read and print: what plainly read-only inline code may call or
/// name, besides the names it binds itself (`d = ...`, `for x in ...`). Anything else (a
/// module's function that writes, a subprocess) makes the code opaque. An allow list, not a
/// deny list: a new way to delete a file is unknown here, and so it fails closed.
const READ_ONLY_NAMES: &[&str] = &[
    // Python.
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
    "reversed",
    "range",
    "list",
    "dict",
    "tuple",
    "set",
    "frozenset",
    "repr",
    "bool",
    "format",
    "enumerate",
    "zip",
    "isinstance",
    "type",
    "any",
    "all",
    "map",
    "filter",
    "next",
    "iter",
    "hex",
    "ord",
    "chr",
    "import",
    "from",
    "as",
    "sys",
    "stdin",
    "argv",
    "version",
    "version_info",
    "platform",
    "python_version",
    "json",
    "load",
    "loads",
    "dumps",
    "indent",
    "math",
    "sqrt",
    "pi",
    "re",
    "search",
    "match",
    "fullmatch",
    "findall",
    "finditer",
    "group",
    "groups",
    "sub",
    "compile",
    "IGNORECASE",
    "MULTILINE",
    "collections",
    "Counter",
    "defaultdict",
    "most_common",
    "yaml",
    "safe_load",
    "tomllib",
    "csv",
    "reader",
    "DictReader",
    "pathlib",
    "Path",
    "read_text",
    "exists",
    "is_file",
    "is_dir",
    "glob",
    "rglob",
    "name",
    "stem",
    "suffix",
    "parent",
    "parts",
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
    "machine",
    "True",
    "False",
    "None",
    "for",
    "in",
    "if",
    "else",
    "elif",
    "and",
    "or",
    "not",
    "is",
    "while",
    "break",
    "continue",
    "pass",
    "try",
    "except",
    "finally",
    "with",
    "lambda",
    "def",
    "return",
    "yield",
    "Exception",
    "KeyError",
    "ValueError",
    "get",
    "items",
    "keys",
    "values",
    "append",
    "extend",
    "update",
    "setdefault",
    "pop",
    "sort",
    "copy",
    "count",
    "index",
    "upper",
    "lower",
    "title",
    "join",
    "split",
    "rsplit",
    "splitlines",
    "strip",
    "lstrip",
    "rstrip",
    "replace",
    "startswith",
    "endswith",
    "find",
    "rfind",
    "encode",
    "decode",
    "read",
    "readlines",
    "readline",
    "open",
    "e",
    "f",
    "x",
    "i",
    "n",
    "k",
    "v",
    "os",
    "listdir",
    "getcwd",
    "environ",
    "walk",
    "stat",
    "getsize",
    "isfile",
    "isdir",
    "basename",
    "dirname",
    "abspath",
    "realpath",
    "splitext",
    "sep",
    "fromtimestamp",
    "strftime",
    "strptime",
    "timedelta",
    "timezone",
    "utc",
    "utcnow",
    "ast",
    "literal_eval",
    "base64",
    "b64decode",
    "b64encode",
    "urllib",
    "urlparse",
    "quote",
    "unquote",
    "hashlib",
    "sha256",
    "sha1",
    "md5",
    "hexdigest",
    "textwrap",
    "dedent",
    "shlex",
    "struct",
    "unpack",
    "pprint",
    "sum",
    "floor",
    "ceil",
    "log10",
    "statistics",
    "mean",
    "median",
    // JavaScript, Ruby, Perl, PHP.
    "console",
    "log",
    "error",
    "process",
    "versions",
    "node",
    "env",
    "JSON",
    "parse",
    "stringify",
    "Math",
    "Object",
    "entries",
    "forEach",
    "length",
    "slice",
    "includes",
    "filter",
    "reduce",
    "const",
    "let",
    "var",
    "of",
    "function",
    "Array",
    "isArray",
    "Number",
    "String",
    "readFileSync",
    "readdirSync",
    "existsSync",
    "statSync",
    "toString",
    "resolve",
    "join",
    "extname",
    "size",
    "isFile",
    "isDirectory",
    "Buffer",
    "subarray",
    "readUInt32BE",
    "readUInt16BE",
    "utf8",
    "split",
    "trim",
    "match",
    "test",
    "RegExp",
    "Set",
    "Map",
    "has",
    "push",
    "sort",
    "find",
    "some",
    "every",
    "padStart",
    "padEnd",
    "toUpperCase",
    "toFixed",
    "puts",
    "p",
    "say",
    "echo",
    "print_r",
    "var_dump",
    "RUBY_VERSION",
    "File",
    "Dir",
    "exist",
    "file_get_contents",
    "json_decode",
    "PHP_VERSION",
    "phpversion",
    "true",
    "false",
    "null",
    "undefined",
];

/// Whether inline code plainly only computes, reads and prints: it names nothing outside
/// [`READ_ONLY_NAMES`] and the names it binds itself (string literals aside); it opens files
/// with one argument only (no mode that writes); it requires only a JSON file; and it holds no
/// shell-out (backticks, `%x`) and no dunder (`__import__`).
pub(super) fn plainly_read_only(code: &str) -> bool {
    if code.contains('`') || code.contains("%x") || code.contains("__") {
        return false;
    }
    let names = names_of(code);
    let Some(names) = names else {
        return false;
    };
    // `open(f)` reads; a second argument may write.
    if !opens_to_read(code) {
        return false;
    }
    // `require('./data.json')` reads a file; any other module may do anything.
    if !requires_json_only(code) {
        return false;
    }
    let bound = bound_names(&names);
    names
        .iter()
        .filter(|n| !is_mark(n) && !n.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .all(|n| READ_ONLY_NAMES.contains(&n.as_str()) || bound.contains(n) || n == "require")
}

/// Whether every `require(` of the code takes a string literal naming a JSON file.
fn requires_json_only(code: &str) -> bool {
    let mut rest = code;
    while let Some(at) = rest.find("require(") {
        let after = rest[at + "require(".len()..].trim_start();
        let Some(q) = after.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
            return false;
        };
        let inner = &after[1..];
        // A JSON file, or a module of reads whose names the allow list then checks.
        match inner.find(q) {
            Some(end)
                if inner[..end].ends_with(".json")
                    || matches!(
                        &inner[..end],
                        "fs" | "path" | "os" | "node:fs" | "node:path"
                    ) =>
            {
                rest = &inner[end..]
            }
            _ => return false,
        }
    }
    true
}

/// The names of code outside its string literals, in order; `None` for a literal that never
/// closes.
fn names_of(code: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut prev = ' ';
    // Whether only white space stands before `c` on its line.
    let mut line_start = true;
    for c in code.chars() {
        let at_start = line_start;
        line_start = c == '\n' || (line_start && c.is_whitespace());
        let line_start = at_start;
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
            // A comment line (`#` first on its line) names nothing. A `#` inside a line is not
            // taken for one: it is code in Perl (`$#a`) and JavaScript (`x.#p`), and what
            // follows it would go unread.
            None if comment => {
                if c == '\n' {
                    comment = false;
                }
            }
            None if c == '#' && line_start => comment = true,
            None if c.is_alphanumeric() || c == '_' => word.push(c),
            None => {
                if !word.is_empty() {
                    // A name followed by `=` (not `==`) or after `for`/`as` is bound here.
                    names.push(std::mem::take(&mut word));
                }
                if c == '=' || c == ',' || c == '(' || c == ')' {
                    names.push(c.to_string());
                }
            }
        }
        prev = c;
    }
    if !word.is_empty() {
        names.push(word);
    }
    quote.is_none().then(|| {
        names
            .into_iter()
            .filter(|n| n.chars().any(|c| c.is_alphanumeric() || c == '_') || is_mark(n))
            .collect()
    })
}

fn is_mark(n: &str) -> bool {
    matches!(n, "=" | "," | "(" | ")")
}

/// The names the code binds: a name right before `=` (`d = ...`, `a, b = ...`), after `for`,
/// `as`, `def`, `lambda`, `const`, `let` or `var`, or a parameter of a `def` or `lambda`.
fn bound_names(names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    // The targets of a `for` loop, up to its `in` (`for i, child in ...`).
    let mut for_target = false;
    for (k, n) in names.iter().enumerate() {
        match n.as_str() {
            "for" => for_target = true,
            "in" | "of" => for_target = false,
            _ if for_target && !is_mark(n) => out.push(n.clone()),
            _ => {}
        }
        let next = names.get(k + 1).map(String::as_str);
        let before = k
            .checked_sub(1)
            .and_then(|b| names.get(b))
            .map(String::as_str);
        let binds = next == Some("=") && names.get(k + 2).map(String::as_str) != Some("=")
            || next == Some(",")
                && names[k + 1..]
                    .iter()
                    .take_while(|x| *x != "(")
                    .any(|x| x == "=")
            || matches!(
                before,
                Some("for" | "as" | "def" | "lambda" | "const" | "let" | "var" | "function")
            );
        if binds && !is_mark(n) {
            out.push(n.clone());
        }
    }
    out
}

/// Whether every `open(` call of the code has one argument: a read.
fn opens_to_read(code: &str) -> bool {
    let mut rest = code;
    while let Some(at) = rest.find("open(") {
        let after = &rest[at + "open(".len()..];
        let mut depth = 0usize;
        for c in after.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth == 0 => break,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    // A second argument is a read mode, or an encoding.
                    let more = after[after.find(',').unwrap_or(0) + 1..].trim_start();
                    let read_mode = [
                        "'r'",
                        "\"r\"",
                        "'rb'",
                        "\"rb\"",
                        "'rt'",
                        "\"rt\"",
                        "encoding=",
                    ]
                    .iter()
                    .any(|m| more.starts_with(m));
                    if !read_mode {
                        return false;
                    }
                    break;
                }
                _ => {}
            }
        }
        rest = after;
    }
    true
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
        assert_eq!(printed(r"\x67it push\tx\n"), "git push\tx\n");
        assert_eq!(printed(r"\162m a\q"), "rm a\\q");
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
        // A comment line names nothing; a `#` inside a line hides nothing after it.
        assert!(plainly_read_only("import json\n# Show the keys\nprint(1)"));
        assert!(!plainly_read_only("print($#a); unlink('/srv/prod/x')"));
        assert!(!plainly_read_only(
            "print(1//1); import shutil; shutil.rmtree('/srv/prod')"
        ));
        // Reading a file is a read.
        assert!(plainly_read_only("print(open('/etc/hostname').read())"));
        assert!(!plainly_read_only("puts `rm -rf /`"));
        // Reading stdin or a file and printing, with names of its own, is read-only.
        assert!(plainly_read_only(
            "import sys,json; d=json.load(sys.stdin); print(d['tunnels'][0]['public_url'])"
        ));
        assert!(plainly_read_only(
            "import json; data = json.load(open('package.json')); print(data.get('version'))"
        ));
        assert!(plainly_read_only(
            "const d=require('./segment_data.json'); console.log(Object.keys(d).length)"
        ));
        assert!(plainly_read_only(
            "import json\nwith open('d.pen', 'r') as f:\n    data = json.load(f)\nprint(len(data))"
        ));
        assert!(plainly_read_only(
            "d = json.loads('[]')\nfor i, child in enumerate(d):\n    name = child.get('name')\n    print(i, name)"
        ));
        // Near misses: opening to write, a module that may do anything.
        assert!(!plainly_read_only("with open('x', 'w') as f: f.write('')"));
        assert!(!plainly_read_only(
            "require('fs').rmSync('/srv/prod', {recursive: true})"
        ));
        assert!(!plainly_read_only("open('/srv/prod/x', 'w')"));
        assert!(!plainly_read_only(
            "require('child_process').execSync('rm -rf /srv/prod')"
        ));
        assert!(!plainly_read_only("import os; os.remove('/srv/prod/x')"));
    }
}
