//! SQL on a line or fed to a client: statements and what they do to which table.

use super::*;

/// The first words that make a line SQL (when it reads as SQL).
pub(in crate::gate::action) const SQL_FIRST: &[&str] = &[
    "drop", "delete", "truncate", "alter", "update", "insert", "create",
];

#[derive(Default)]
pub(in crate::gate::action) struct SqlRead {
    /// (operation, table, statement text).
    pub(in crate::gate::action) effects: Vec<(Op, Option<String>, String)>,
    /// Statements whose effect is not in the table.
    pub(in crate::gate::action) unknown: Vec<String>,
    /// The first statement reads as SQL.
    pub(in crate::gate::action) sql: bool,
    /// A statement runs SQL built at run time: a `DO` block, `EXECUTE` (PL/pgSQL's dynamic
    /// SQL, or a prepared statement), `EXEC` and `sp_executesql`, psql's `\gexec`.
    pub(in crate::gate::action) runtime: bool,
}

/// The words that run SQL built at run time (`SqlRead::runtime`).
const RUNS_BUILT_SQL: &[&str] = &["execute", "exec", "sp_executesql", "\\gexec"];

pub(in crate::gate::action) enum Stmt {
    Effects(Vec<(Op, Option<String>)>),
    Quiet,
    Other,
    NotSql,
}

/// Reads SQL statements. `top`: the text is a whole action line (it must read as SQL from its
/// first statement); else it is known to be SQL (a client's `-c`), and what does not read as
/// SQL is unknown.
pub(in crate::gate::action) fn read_sql(text: &str, top: bool) -> SqlRead {
    let mut r = SqlRead::default();
    // Tables renamed by an earlier statement: (new name, old name). A statement on the new
    // name is one on the table the old name named (`ALTER TABLE users RENAME TO u; DROP TABLE
    // u` drops users).
    let mut renamed: Vec<(String, String)> = Vec::new();
    for (k, st) in split_sql(text).into_iter().enumerate() {
        let toks = sql_tokens(&st);
        let lower: Vec<String> = toks.iter().map(|t| t.to_ascii_lowercase()).collect();
        let pos = |w: &str| lower.iter().position(|t| t == w);
        r.runtime |= lower.first().is_some_and(|t| t == "do")
            || lower
                .iter()
                .any(|t| RUNS_BUILT_SQL.contains(&t.trim_end_matches(';')));
        if let (Some(r0), Some(to)) = (pos("rename"), pos("to")) {
            let old = match (pos("table"), lower.first().map(String::as_str)) {
                (Some(t), Some("alter")) => lower.get(t + 1),
                (Some(t), Some("rename")) if t == r0 + 1 => lower.get(t + 1),
                _ => None,
            };
            if let (Some(old), Some(new)) = (old, lower.get(to + 1)) {
                let old = renamed
                    .iter()
                    .find(|(n, _)| n == old)
                    .map_or(old.clone(), |(_, o)| o.clone());
                renamed.push((new.trim_end_matches(';').to_string(), old));
            }
        }
        let stores = (lower.first()).is_some_and(|t| STORES_VALUES.contains(&t.as_str()));
        match statement(&toks) {
            Stmt::Effects(v) => {
                for (o, t) in v {
                    // A table named by a psql variable (`:t`, `:"t"`) is decided at run time.
                    let t = t.filter(|t| !t.starts_with(':'));
                    let was = t.as_ref().and_then(|t| {
                        let t = t.to_ascii_lowercase();
                        renamed
                            .iter()
                            .find(|(n, _)| *n == t)
                            .map(|(_, o)| o.clone())
                    });
                    if let Some(old) = was {
                        r.effects.push((o, Some(old), st.clone()));
                    }
                    r.effects.push((o, t, st.clone()));
                }
            }
            Stmt::Quiet => {}
            Stmt::Other if stores => {}
            Stmt::Other => r.unknown.push(st.clone()),
            Stmt::NotSql => {
                if k == 0 && top {
                    return r;
                }
                if !stores {
                    r.unknown.push(st.clone());
                }
            }
        }
        r.sql = true;
    }
    r
}

/// Statements split on `;` outside quotes, comments dropped, trimmed, empty ones dropped.
pub(in crate::gate::action) fn split_sql(text: &str) -> Vec<String> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q: Option<char> = None;
    let mut i = 0;
    while let Some(&c) = cs.get(i) {
        i += 1;
        if let Some(close) = q {
            cur.push(c);
            if c == close {
                q = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                q = Some(c);
                cur.push(c);
            }
            '-' if cs.get(i) == Some(&'-') => {
                while cs.get(i).is_some_and(|d| *d != '\n') {
                    i += 1;
                }
            }
            '/' if cs.get(i) == Some(&'*') => {
                i += 1;
                while let Some(&d) = cs.get(i) {
                    i += 1;
                    if d == '*' && cs.get(i) == Some(&'/') {
                        i += 1;
                        break;
                    }
                }
                cur.push(' ');
            }
            ';' => {
                let t = cur.trim().to_string();
                if !t.is_empty() {
                    out.push(t);
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    let t = cur.trim().to_string();
    if !t.is_empty() {
        out.push(t);
    }
    out
}

/// SQL tokens: names lower-cased unless quoted (quotes removed), `,` `(` `)` alone, a string
/// literal as `'`.
pub(in crate::gate::action) fn sql_tokens(st: &str) -> Vec<String> {
    let cs: Vec<char> = st.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while let Some(&c) = cs.get(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if matches!(c, ',' | '(' | ')') {
            toks.push(c.to_string());
            i += 1;
            continue;
        }
        if c == '\'' {
            i += 1;
            while let Some(&d) = cs.get(i) {
                i += 1;
                if d == '\'' {
                    if cs.get(i) == Some(&'\'') {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            toks.push("'".into());
            continue;
        }
        let mut t = String::new();
        let mut q: Option<char> = None;
        while let Some(&d) = cs.get(i) {
            match q {
                Some(close) => {
                    if d == close {
                        q = None;
                    } else {
                        t.push(d);
                    }
                    i += 1;
                }
                None => {
                    if d.is_whitespace() || matches!(d, ',' | '(' | ')' | '\'') {
                        break;
                    }
                    match d {
                        '"' | '`' => q = Some(d),
                        '[' => q = Some(']'),
                        _ => t.extend(d.to_lowercase()),
                    }
                    i += 1;
                }
            }
        }
        toks.push(t);
    }
    toks
}

pub(in crate::gate::action) fn is_sql_name(t: &str) -> bool {
    !t.is_empty() && !matches!(t, "," | "(" | ")" | "'")
}

/// Names separated by commas from `i`; and the index after them.
pub(in crate::gate::action) fn names_at(toks: &[String], mut i: usize) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    while let Some(t) = toks.get(i) {
        if !is_sql_name(t) {
            break;
        }
        names.push(t.clone());
        i += 1;
        if toks.get(i).map(String::as_str) == Some(",") {
            i += 1;
        } else {
            break;
        }
    }
    (names, i)
}

pub(in crate::gate::action) fn statement(toks: &[String]) -> Stmt {
    let kw = |i: usize| toks.get(i).map_or("", String::as_str);
    match kw(0) {
        // A common table expression does what its first data-changing statement does
        // (`WITH gone AS (DELETE FROM users RETURNING id) SELECT count(*) FROM gone`).
        "with" => {
            let changes = |t: &String| {
                matches!(
                    t.to_ascii_lowercase().as_str(),
                    "delete" | "update" | "insert" | "drop" | "truncate" | "alter"
                )
            };
            match toks.iter().skip(1).position(changes) {
                Some(k) => statement(&toks[k + 1..]),
                None => Stmt::Other,
            }
        }
        "drop" => {
            let mut i = 1;
            if matches!(kw(i), "temporary" | "temp") {
                i += 1;
            }
            if kw(i) == "materialized" && kw(i + 1) == "view" {
                i += 1;
            }
            let whole = matches!(kw(i), "database" | "schema");
            let tabular = matches!(kw(i), "table" | "view" | "index" | "sequence");
            if !whole && !tabular {
                return if matches!(
                    kw(i),
                    "function"
                        | "procedure"
                        | "trigger"
                        | "type"
                        | "extension"
                        | "role"
                        | "user"
                        | "domain"
                        | "policy"
                        | "rule"
                        | "server"
                        | "owned"
                        | "aggregate"
                        | "collation"
                        | "event"
                        | "publication"
                        | "subscription"
                        | "tablespace"
                        | "statistics"
                        | "operator"
                        | "language"
                        | "cast"
                ) {
                    Stmt::Other
                } else {
                    Stmt::NotSql
                };
            }
            i += 1;
            if kw(i) == "concurrently" {
                i += 1;
            }
            if kw(i) == "if" && kw(i + 1) == "exists" {
                i += 2;
            }
            let (names, next) = names_at(toks, i);
            if names.is_empty()
                || !matches!(
                    kw(next),
                    "" | "cascade" | "restrict" | "purge" | "on" | "force"
                )
            {
                return Stmt::NotSql;
            }
            Stmt::Effects(
                names
                    .into_iter()
                    .map(|n| (Op::SqlDrop, (!whole).then_some(n)))
                    .collect(),
            )
        }
        "delete" => {
            let name = if kw(1) == "from" {
                toks.get(if kw(2) == "only" { 3 } else { 2 })
            } else if kw(2) == "from" {
                toks.get(1)
            } else {
                None
            };
            // With no condition, or one always true (`WHERE 1=1`, `WHERE true`), it empties
            // the table: a truncation too.
            let lower: Vec<String> = toks.iter().map(|t| t.to_ascii_lowercase()).collect();
            let cond: Vec<&str> = match lower.iter().position(|t| t == "where") {
                Some(w) => lower[w + 1..]
                    .iter()
                    .map(|t| t.trim_end_matches(';'))
                    .collect(),
                None => Vec::new(),
            };
            // A term always true joined by OR makes the whole condition true
            // (`WHERE id > 0 OR 1`); read without regard to parentheses, which can only make
            // it call an emptying what is not one (fail closed).
            let all = cond.is_empty()
                || cond.split(|t| *t == "or").any(|term| {
                    always_true(term.split(|t| *t == "and").next().unwrap_or_default())
                });
            match name {
                Some(n) if is_sql_name(n) => {
                    let mut v = vec![(Op::SqlDelete, Some(n.clone()))];
                    if all {
                        v.push((Op::SqlTruncate, Some(n.clone())));
                    }
                    Stmt::Effects(v)
                }
                _ => Stmt::NotSql,
            }
        }
        "truncate" => {
            let mut i = 1;
            if kw(i) == "table" {
                i += 1;
            }
            if kw(i) == "only" {
                i += 1;
            }
            let (names, next) = names_at(toks, i);
            if names.is_empty()
                || !matches!(
                    kw(next),
                    "" | "restart" | "continue" | "cascade" | "restrict"
                )
            {
                return Stmt::NotSql;
            }
            Stmt::Effects(
                names
                    .into_iter()
                    .map(|n| (Op::SqlTruncate, Some(n)))
                    .collect(),
            )
        }
        "alter" => match kw(1) {
            "table" => {
                let mut i = 2;
                if kw(i) == "if" && kw(i + 1) == "exists" {
                    i += 2;
                }
                if kw(i) == "only" {
                    i += 1;
                }
                match toks.get(i) {
                    Some(n) if is_sql_name(n) => {
                        Stmt::Effects(vec![(Op::SqlAlter, Some(n.clone()))])
                    }
                    _ => Stmt::NotSql,
                }
            }
            "database" | "schema" => Stmt::Effects(vec![(Op::SqlAlter, None)]),
            "view" | "index" | "sequence" | "materialized" | "type" | "user" | "role"
            | "function" | "system" | "domain" | "extension" | "default" => Stmt::Other,
            _ => Stmt::NotSql,
        },
        "rename" if kw(1) == "table" && is_sql_name(kw(2)) => {
            Stmt::Effects(vec![(Op::SqlAlter, Some(kw(2).to_string()))])
        }
        "update" => {
            if kw(2) == "set" || kw(3) == "set" {
                Stmt::Other
            } else {
                Stmt::NotSql
            }
        }
        "create" => {
            let mut i = 1;
            if kw(i) == "or" && kw(i + 1) == "replace" {
                i += 2;
            }
            while matches!(kw(i), "temp" | "temporary" | "unique" | "materialized") {
                i += 1;
            }
            if matches!(
                kw(i),
                "table"
                    | "index"
                    | "view"
                    | "database"
                    | "schema"
                    | "sequence"
                    | "function"
                    | "procedure"
                    | "trigger"
                    | "type"
                    | "extension"
                    | "role"
                    | "user"
            ) {
                Stmt::Other
            } else {
                Stmt::NotSql
            }
        }
        "insert" | "replace" => {
            if matches!(kw(1), "into" | "ignore" | "or") {
                Stmt::Other
            } else {
                Stmt::NotSql
            }
        }
        "select" | "show" | "explain" | "describe" | "desc" | "begin" | "commit" | "rollback"
        | "start" | "set" | "use" | "values" | "pragma" | "analyze" | "end" | "savepoint"
        | "release" | "listen" | "notify" | "" => Stmt::Quiet,
        _ => Stmt::NotSql,
    }
}

/// Statements that store values and change no table's shape or rows' existence: the table of
/// operations holds nothing they do, and their string literals are data, never run
/// (`INSERT INTO users (name) VALUES ('drop table')`, `COMMENT ON TABLE users IS 'do not
/// drop'`). They are read, not unknown, so their words are not matched against a prohibition's.
const STORES_VALUES: &[&str] = &["insert", "update", "comment", "upsert", "replace"];

/// Whether a condition's term is true whatever the row: `1`, `true`, or a number equal to
/// itself (`1=1`, `(2 = 2)`), parentheses aside.
fn always_true(term: &[&str]) -> bool {
    let text: String = term
        .concat()
        .chars()
        .filter(|c| !matches!(c, '(' | ')'))
        .collect();
    match text.split_once('=') {
        Some((a, b)) => !a.is_empty() && a == b && a.chars().all(|c| c.is_ascii_digit()),
        None => matches!(text.as_str(), "1" | "true"),
    }
}
