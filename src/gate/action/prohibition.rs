//! What a prohibition forbids, and whether a parsed line does it: the prohibition sentence
//! read into operations and targets ([`forbidden`]), matched against a line's effects
//! ([`violation`]). SPEC.md section 8.4.

use super::line::*;

/// What a prohibition sentence forbids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forbidden {
    /// The forbidden operations; empty when no verb was recognised (then the caller falls back
    /// to word matching).
    pub ops: Vec<Op>,
    /// The paths it names, normalised; a path covers everything under it.
    pub paths: Vec<String>,
    /// The branches it names.
    pub branches: Vec<String>,
    /// The tables it names (lower case).
    pub tables: Vec<String>,
    /// Commands it says not to run that are not verbs it knows, e.g. "makemigrations" or
    /// "terraform apply".
    pub commands: Vec<String>,
    /// Only a forced push is forbidden ("never force-push"; "never delete the main branch").
    pub force_only: bool,
}

impl Forbidden {
    /// Whether nothing was recognised: no operation and no command.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.commands.is_empty()
    }
}

/// Reads a prohibition sentence: the operations it forbids, and the paths, branches, tables
/// and commands it names.
///
/// Verbs: delete, remove, rm, erase, wipe, purge, unlink, destroy, shred forbid Delete, Discard
/// and Move of paths (SqlDelete, SqlDrop, SqlTruncate of tables); touch, modify, change, edit,
/// write, overwrite, alter, update, create, replace forbid Write, Delete, Move and Discard
/// (every SQL operation); move, rename, mv forbid Move (SqlAlter); drop and "drop table"
/// forbid SqlDrop and SqlTruncate (emptying a table loses what dropping it would; drop also
/// Delete of a named path); truncate forbids SqlTruncate (Write of a named path); "alter
/// table", "delete from" forbid only their SQL operation; reset, discard, revert forbid
/// Discard; push forbids Push ("force-push", "force push", "push --force": only a forced one).
/// SQL operations are left out when the sentence names paths and no table word, path
/// operations when it names tables or SQL words and no path. A path and no known verb ("hands
/// off shop/migrations/") forbids every writing operation on it. Branches: the name after
/// "to", "on", "into" following a push verb, or beside "branch". Tables: beside "table", or
/// after "delete from". Commands: up to three words after run, execute, call, use (a quoted
/// command whole), unless they are a known verb, a SQL keyword or a command of the table.
pub fn forbidden(prohibition: &str) -> Forbidden {
    let toks: Vec<PTok> = prohibition.split_whitespace().map(ptok).collect();
    let n = toks.len();
    let lw = |k: usize| toks.get(k).map_or("", |t| t.lower.as_str());
    let is_path: Vec<bool> = toks.iter().map(|t| looks_like_path(&t.clean)).collect();
    let path_at = |k: usize| is_path.get(k).copied().unwrap_or(false);
    let mut used = vec![false; n];

    // Verbs.
    let mut classes: Vec<Class> = Vec::new();
    let (mut plain_push, mut forced_push) = (false, false);
    let mut first_push: Option<usize> = None;
    for k in 0..n {
        if path_at(k) {
            continue;
        }
        let w = lw(k);
        let prev = k.checked_sub(1).map_or("", lw);
        if w.starts_with("force-push") || w.starts_with("force_push") {
            forced_push = true;
            first_push.get_or_insert(k);
            classes.push(Class::Push);
        } else if is_form(w, &["push"]) {
            let forced = prev == "force"
                || matches!(
                    lw(k + 1),
                    "--force" | "-f" | "--force-with-lease" | "forcefully"
                )
                || (lw(k + 1) == "with" && lw(k + 2) == "force");
            if forced {
                forced_push = true;
            } else {
                plain_push = true;
            }
            first_push.get_or_insert(k);
            classes.push(Class::Push);
        } else if let Some(c) = verb_class(w, lw(k + 1), path_at(k + 2)) {
            classes.push(c);
        }
    }
    let has_sql = toks.iter().any(|t| SQL_NOUNS.contains(&t.lower.as_str()))
        || classes
            .iter()
            .any(|c| matches!(c, Class::DropTable | Class::AlterTable | Class::DeleteFrom));

    // Branches.
    let mut branches: Vec<String> = Vec::new();
    let branchy = first_push.is_some() || toks.iter().any(|t| t.lower.starts_with("branch"));
    if branchy {
        for k in 0..n {
            let after_push = first_push.is_some_and(|p| k > p);
            if after_push && matches!(lw(k), "to" | "on" | "into" | "onto") {
                let mut j = k + 1;
                while ARTICLES.contains(&lw(j)) || REMOTES.contains(&lw(j)) {
                    j += 1;
                }
                while let Some(t) = toks.get(j) {
                    if !branch_like(t) || used.get(j).copied().unwrap_or(true) {
                        break;
                    }
                    branches.push(norm_branch(&t.clean));
                    if let Some(u) = used.get_mut(j) {
                        *u = true;
                    }
                    if t.stop_after || !matches!(lw(j + 1), "or" | "and" | "nor") {
                        break;
                    }
                    j += 2;
                }
            }
            if matches!(lw(k), "branch" | "branches") {
                for j in [k.checked_sub(1), Some(k + 1)].into_iter().flatten() {
                    let Some(t) = toks.get(j) else { continue };
                    if used.get(j).copied().unwrap_or(true) || !branch_like(t) {
                        continue;
                    }
                    if j < k && t.stop_after {
                        continue;
                    }
                    branches.push(norm_branch(&t.clean));
                    if let Some(u) = used.get_mut(j) {
                        *u = true;
                    }
                }
            }
        }
    }

    // Tables.
    let mut tables: Vec<String> = Vec::new();
    if has_sql {
        for k in 0..n {
            let mut cands: Vec<usize> = Vec::new();
            if matches!(lw(k), "table" | "tables") {
                // A name before the keyword only as "the NAME table" or "drop NAME table", and
                // never a word that qualifies tables ("old tables", "any table").
                if let Some(p) = k.checked_sub(1) {
                    let before = p.checked_sub(1).map_or("", lw);
                    if TABLE_LEADS.contains(&before) && !TABLE_QUALIFIERS.contains(&lw(p)) {
                        cands.push(p);
                    }
                }
                // A name after it only right after an SQL verb: "DROP TABLE users", "truncate
                // table sessions"; not "old tables instead".
                let verb = k.checked_sub(1).map_or("", lw);
                if SQL_VERBS.contains(&verb) {
                    let mut j = k + 1;
                    if lw(j) == "if" && lw(j + 1) == "exists" {
                        j += 2;
                    }
                    cands.push(j);
                }
            }
            let rows_from = matches!(
                k.checked_sub(1).map(lw),
                Some("rows" | "records" | "entries")
            );
            if lw(k) == "from" && (classes.contains(&Class::DeleteFrom) || rows_from) {
                cands.push(k + 1);
            }
            for j in cands {
                let Some(t) = toks.get(j) else { continue };
                if used.get(j).copied().unwrap_or(true) || !table_like(t) {
                    continue;
                }
                if j < k && t.stop_after {
                    continue;
                }
                tables.push(t.lower.clone());
                if let Some(u) = used.get_mut(j) {
                    *u = true;
                }
            }
        }
    }

    // Commands.
    let mut commands: Vec<String> = Vec::new();
    for k in 0..n {
        if !RUN_WORDS.contains(&lw(k)) {
            continue;
        }
        let mut j = k + 1;
        while ARTICLES.contains(&lw(j)) {
            j += 1;
        }
        let Some(t) = toks.get(j) else { continue };
        let used_as_path = lw(k).starts_with("us") && path_at(j);
        if t.clean.is_empty()
            || used_as_path
            || is_verb(&t.lower)
            || is_stop(&t.lower)
            || t.lower.starts_with('-')
        {
            continue;
        }
        let mut words = vec![t.clean.clone()];
        let mut taken = vec![j];
        if t.open && !t.close {
            let mut m = j + 1;
            while let Some(u) = toks.get(m) {
                words.push(u.clean.clone());
                taken.push(m);
                if u.close || words.len() >= 8 {
                    break;
                }
                m += 1;
            }
        } else if !t.open && !t.stop_after {
            let mut m = j + 1;
            while let Some(u) = toks.get(m) {
                if words.len() >= 3
                    || u.open
                    || is_stop(&u.lower)
                    || is_verb(&u.lower)
                    || !name_like(&u.clean)
                {
                    break;
                }
                words.push(u.clean.clone());
                taken.push(m);
                if u.stop_after {
                    break;
                }
                m += 1;
            }
        }
        let single_known = words.len() == 1 && words.first().is_some_and(|w| is_known_command(w));
        let words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
        if single_known || words.is_empty() {
            continue;
        }
        for m in taken {
            if let Some(u) = used.get_mut(m) {
                *u = true;
            }
        }
        commands.push(words.join(" "));
    }

    // Paths: path-like words, and the name before "directory", "folder", "dir", "file".
    let mut paths: Vec<String> = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let named_dir = matches!(lw(k + 1), "directory" | "folder" | "dir" | "file")
            && !t.stop_after
            && name_like(&t.clean)
            && !is_stop(&t.lower)
            && !is_verb(&t.lower)
            && !ARTICLES.contains(&t.lower.as_str());
        if (path_at(k) || named_dir) && !used.get(k).copied().unwrap_or(true) {
            let p = normalise("", &t.clean);
            if !paths.contains(&p) {
                paths.push(p);
            }
        }
    }

    // Operations.
    let has_paths = !paths.is_empty();
    let file_ok = has_paths || !has_sql;
    let sql_ok = has_sql || !has_paths;
    let mut ops: Vec<Op> = Vec::new();
    let mut add = |more: &[Op]| {
        for o in more {
            if !ops.contains(o) {
                ops.push(*o);
            }
        }
    };
    const FILE_LOSS: &[Op] = &[Op::Delete, Op::Discard, Op::Move];
    const FILE_ALL: &[Op] = &[Op::Write, Op::Add, Op::Delete, Op::Move, Op::Discard];
    for c in &classes {
        match c {
            Class::DeleteLike => {
                if file_ok {
                    add(FILE_LOSS);
                }
                if sql_ok {
                    add(&[Op::SqlDelete, Op::SqlDrop, Op::SqlTruncate]);
                }
            }
            Class::TouchLike => {
                if file_ok {
                    add(FILE_ALL);
                }
                if sql_ok {
                    add(&[Op::SqlAlter, Op::SqlDelete, Op::SqlDrop, Op::SqlTruncate]);
                }
            }
            Class::MoveLike => {
                if file_ok {
                    add(&[Op::Move]);
                }
                if sql_ok {
                    add(&[Op::SqlAlter]);
                }
            }
            Class::Drop => {
                if has_paths {
                    add(FILE_LOSS);
                }
                if sql_ok {
                    // Emptying a table loses what dropping it would (`TRUNCATE users`, a
                    // `DELETE FROM users` with no condition).
                    add(&[Op::SqlDrop, Op::SqlTruncate]);
                }
            }
            Class::Truncate => {
                if file_ok {
                    add(&[Op::Write]);
                }
                if sql_ok {
                    add(&[Op::SqlTruncate]);
                }
            }
            Class::Reset => {
                if file_ok {
                    add(&[Op::Discard]);
                }
            }
            Class::DropTable => add(&[Op::SqlDrop, Op::SqlTruncate]),
            Class::AlterTable => add(&[Op::SqlAlter]),
            Class::DeleteFrom => add(&[Op::SqlDelete]),
            Class::Push => add(&[Op::Push]),
        }
    }
    let mut force_only = forced_push && !plain_push;
    if !branches.is_empty() && classes.contains(&Class::DeleteLike) && !plain_push {
        // Deleting a branch on the remote is a forced push to it.
        add(&[Op::Push]);
        force_only = true;
    }
    if classes.is_empty() && has_paths {
        // A path and no verb ("hands off shop/migrations/"): every writing operation.
        add(FILE_ALL);
    }
    Forbidden {
        ops,
        paths,
        branches,
        tables,
        commands,
        force_only,
    }
}

/// Why `parsed` does what `forbidden` forbids, as a short phrase naming the command and the
/// target (e.g. "`rm -rf shop/migrations/` deletes shop/migrations, under shop/migrations"),
/// or `None`.
///
/// An effect matches when its operation is forbidden and its target is one the prohibition
/// covers: a path equal to or under a prohibited path (or above it, for a deletion, move or
/// discard, which lose what is below), a glob that may name such a path, [`Target::Anything`];
/// a named branch (an unnamed one fails closed; a force-only prohibition needs a forced push); a
/// named table (an unnamed one fails closed). A prohibition that names paths does not match
/// branches or tables, and so on; one that names no target matches every target of its
/// operations. A prohibition's command matches an unknown command holding its words, or a known
/// command it names. An unparseable risky line matches every prohibition with an operation.
pub fn violation(forbidden: &Forbidden, parsed: &Parsed) -> Option<String> {
    let f = forbidden;
    let (np, nb, nt) = (
        !f.paths.is_empty(),
        !f.branches.is_empty(),
        !f.tables.is_empty(),
    );
    for e in &parsed.effects {
        // Overwriting a file a prohibition says never to delete destroys it just the same
        // (`> f`, `mv x f`, `truncate -s 0 f`): a write of exactly that file counts.
        let overwrite = e.op == Op::Write && f.ops.contains(&Op::Delete);
        if !f.ops.contains(&e.op) && !overwrite {
            continue;
        }
        let by_op = f.ops.contains(&e.op);
        let path = matches!(e.target, Target::Path(_) | Target::Glob(_));
        if !(by_op || np && path) {
            continue;
        }
        let why: Option<String> = match &e.target {
            Target::Path(x) | Target::Glob(x) => {
                if np {
                    f.paths.iter().find_map(|fp| {
                        let rel = relation(x, fp);
                        let file = fp.rsplit('/').next().is_some_and(|l| l.contains('.'));
                        let counts = match rel {
                            Rel::Equal => by_op || file,
                            // Destroying a file's content under a directory never to be
                            // deleted deletes it (`truncate -s0`, `> f`, `dd of=`).
                            Rel::Under => by_op || overwrite,
                            Rel::Above => {
                                by_op && matches!(e.op, Op::Delete | Op::Move | Op::Discard)
                            }
                            Rel::Disjoint => false,
                        };
                        counts.then(|| match rel {
                            Rel::Above => format!(", which holds {fp}"),
                            _ => format!(", under {fp}"),
                        })
                    })
                } else if !nb && !nt {
                    Some(String::new())
                } else {
                    None
                }
            }
            Target::Anything => (np || (!nb && !nt)).then(|| " (fail closed)".into()),
            Target::Branch { name, force } => {
                if e.op == Op::Push && f.force_only && !force {
                    None
                } else if nb {
                    match name {
                        None => Some(", which the line does not name (fail closed)".into()),
                        Some(b) => f
                            .branches
                            .iter()
                            .any(|x| branch_eq(x, b))
                            .then(|| ", which the prohibition names".into()),
                    }
                } else if !np && !nt {
                    Some(String::new())
                } else {
                    None
                }
            }
            Target::Table(t) => {
                if nt {
                    match t {
                        None => Some(", which holds every table (fail closed)".into()),
                        Some(x) => f
                            .tables
                            .iter()
                            .any(|y| table_eq(y, x))
                            .then(|| ", which the prohibition names".into()),
                    }
                } else if !np && !nb {
                    Some(String::new())
                } else {
                    None
                }
            }
        };
        if let Some(w) = why {
            return Some(format!("{}{w}", describe(e)));
        }
    }
    for c in &f.commands {
        let want: Vec<String> = cmd_words(c);
        let Some(first) = want.first() else { continue };
        for u in &parsed.unknown {
            let have = cmd_words(u);
            if want.iter().all(|w| have.contains(w)) {
                return Some(format!(
                    "`{}` runs {c}, which the prohibition names",
                    short(u)
                ));
            }
        }
        for k in &parsed.known {
            let have = cmd_words(k);
            let Some(pos) = have.iter().position(|w| w == first) else {
                continue;
            };
            let lead_ok = have
                .iter()
                .take(pos)
                .all(|w| PREFIXES.contains(&w.as_str()) || w.starts_with('-') || is_assignment(w));
            if lead_ok && want.iter().all(|w| have.contains(w)) {
                return Some(format!(
                    "`{}` runs {c}, which the prohibition names",
                    short(k)
                ));
            }
        }
    }
    // A command the table does not know that names a path under a path never to be deleted
    // or written (`gzip f`, `curl -o f`, `tar -cf f`) may write or remove it: fail closed.
    let writes_paths = f
        .ops
        .iter()
        .any(|o| matches!(o, Op::Delete | Op::Write | Op::Add));
    if np && writes_paths {
        for u in &parsed.unknown {
            let named = u.split_whitespace().find_map(|tok| {
                let tok = tok.trim_matches(['\'', '"']);
                let tok = tok.split_once('=').map_or(tok, |(_, v)| v);
                if !tok.starts_with('/') {
                    return None;
                }
                let p = normalise("", tok);
                f.paths
                    .iter()
                    .find(|fp| matches!(relation(&p, fp), Rel::Equal | Rel::Under))
                    .map(|fp| (p.clone(), fp.clone()))
            });
            if let Some((p, fp)) = named {
                return Some(format!(
                    "`{}` is a command the gate does not know, and it names {p}, under {fp}: it may write or remove it (fail closed); use a command the gate reads, or state its effect plainly",
                    short(u)
                ));
            }
        }
    }
    if parsed.unparseable && parsed.risky && !f.ops.is_empty() {
        return Some(
            "the line cannot be parsed and holds a deleting or writing word (fail closed)".into(),
        );
    }
    None
}

/// A verb class of a prohibition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::gate::action) enum Class {
    /// delete, remove, rm, erase, wipe, purge, unlink, destroy, shred.
    DeleteLike,
    /// touch, modify, change, edit, write, overwrite, alter, update, create, replace, ...
    TouchLike,
    /// move, rename, mv.
    MoveLike,
    /// drop (a table, unless a path is named).
    Drop,
    /// drop table|database|schema|index|view.
    DropTable,
    /// truncate.
    Truncate,
    /// alter table, drop column.
    AlterTable,
    /// delete from.
    DeleteFrom,
    /// reset, discard, revert.
    Reset,
    /// push.
    Push,
}

/// Suffixes that make a stem a verb form.
pub(in crate::gate::action) const SUFFIXES: &[&str] = &[
    "", "s", "e", "es", "d", "ed", "ing", "ion", "al", "y", "ies", "ied", "ying", "ication", "ten",
    "ting", "ped", "ping", "ding",
];

/// Whether `w` is a form of one of `stems` (four letters or more).
pub(in crate::gate::action) fn is_form(w: &str, stems: &[&str]) -> bool {
    w.len() >= 4
        && stems.iter().any(|s| {
            w.strip_prefix(s)
                .is_some_and(|rest| SUFFIXES.contains(&rest))
        })
}

pub(in crate::gate::action) const DELETE_STEMS: &[&str] = &[
    "delet", "remov", "eras", "purg", "wip", "unlink", "destroy", "shred", "nuk",
];
pub(in crate::gate::action) const TOUCH_STEMS: &[&str] = &[
    "touch", "modif", "chang", "edit", "writ", "overwrit", "alter", "updat", "creat", "tamper",
    "replac", "rewrit", "clobber", "mutat", "chmod", "chown",
];
pub(in crate::gate::action) const MOVE_STEMS: &[&str] = &["mov", "renam"];
pub(in crate::gate::action) const TABLE_WORDS: &[&str] = &[
    "table",
    "tables",
    "database",
    "databases",
    "schema",
    "schemas",
    "index",
    "view",
    "views",
];

/// The verb class of prohibition word `w`, given the next word and whether the one after is a
/// path.
pub(in crate::gate::action) fn verb_class(w: &str, next: &str, next2_path: bool) -> Option<Class> {
    if matches!(w, "rm" | "rmdir") {
        return Some(Class::DeleteLike);
    }
    if w == "mv" {
        return Some(Class::MoveLike);
    }
    if matches!(w, "mkdir" | "chmod" | "chown" | "chgrp") {
        return Some(Class::TouchLike);
    }
    if is_form(w, &["drop", "dropp"]) {
        return Some(if TABLE_WORDS.contains(&next) {
            Class::DropTable
        } else if matches!(next, "column" | "columns") {
            Class::AlterTable
        } else {
            Class::Drop
        });
    }
    if is_form(w, &["truncat"]) {
        return Some(Class::Truncate);
    }
    if is_form(w, &["alter"]) && matches!(next, "table" | "tables") {
        return Some(Class::AlterTable);
    }
    if is_form(w, &["delet"]) && next == "from" && !next2_path {
        return Some(Class::DeleteFrom);
    }
    if is_form(w, DELETE_STEMS) {
        return Some(Class::DeleteLike);
    }
    if is_form(w, TOUCH_STEMS) {
        return Some(Class::TouchLike);
    }
    if is_form(w, MOVE_STEMS) {
        return Some(Class::MoveLike);
    }
    if is_form(w, &["reset", "discard", "revert"]) {
        return Some(Class::Reset);
    }
    None
}

pub(in crate::gate::action) fn is_verb(w: &str) -> bool {
    verb_class(w, "", false).is_some()
        || is_form(w, &["push"])
        || w.starts_with("force-push")
        || SQL_KEYWORDS.contains(&w)
}

pub(in crate::gate::action) const SQL_NOUNS: &[&str] = &[
    "table",
    "tables",
    "database",
    "databases",
    "db",
    "schema",
    "schemas",
    "sql",
    "row",
    "rows",
    "record",
    "records",
    "column",
    "columns",
];
pub(in crate::gate::action) const SQL_KEYWORDS: &[&str] = &[
    "drop", "delete", "truncate", "alter", "update", "insert", "select", "from", "where", "if",
    "exists", "table", "tables", "database", "schema", "cascade", "into", "set",
];
pub(in crate::gate::action) const ARTICLES: &[&str] = &[
    "the", "a", "an", "any", "all", "this", "that", "these", "those", "my", "our", "your", "their",
];
pub(in crate::gate::action) const REMOTES: &[&str] =
    &["origin", "upstream", "remote", "remotes", "the"];
pub(in crate::gate::action) const STOP: &[&str] = &[
    "the",
    "a",
    "an",
    "any",
    "all",
    "this",
    "that",
    "these",
    "those",
    "it",
    "them",
    "anything",
    "everything",
    "nothing",
    "something",
    "without",
    "with",
    "before",
    "after",
    "until",
    "unless",
    "again",
    "ever",
    "directly",
    "on",
    "in",
    "to",
    "from",
    "into",
    "onto",
    "of",
    "for",
    "or",
    "and",
    "nor",
    "by",
    "at",
    "remote",
    "origin",
    "upstream",
    "branch",
    "branches",
    "please",
    "yet",
    "now",
    "today",
    "anymore",
    "here",
    "there",
    "files",
    "file",
    "directory",
    "directories",
    "folder",
    "folders",
    "changes",
    "code",
    "commits",
    "protected",
    "other",
    "another",
    "current",
    "every",
    "default",
    "shared",
    "my",
    "our",
    "your",
    "their",
    "its",
    "is",
    "are",
    "be",
    "under",
    "inside",
    "within",
    "against",
    "via",
    "using",
    "when",
    "while",
    "if",
    "exists",
    "not",
    "never",
    "no",
    "do",
    "don't",
    "dont",
    "must",
    "should",
];
pub(in crate::gate::action) const RUN_WORDS: &[&str] = &[
    "run",
    "runs",
    "running",
    "execute",
    "executing",
    "call",
    "calling",
    "use",
    "using",
    "invoke",
    "invoking",
    "launch",
];
/// Words with a `/` that are not paths.
pub(in crate::gate::action) const NOT_PATHS: &[&str] = &[
    "and/or",
    "either/or",
    "read/write",
    "i/o",
    "n/a",
    "on/off",
    "yes/no",
    "w/",
    "w/o",
    "r/w",
    "true/false",
    "client/server",
];
pub(in crate::gate::action) const EXTENSIONS: &[&str] = &[
    "py",
    "sql",
    "yaml",
    "yml",
    "json",
    "toml",
    "rs",
    "env",
    "lock",
    "md",
    "txt",
    "cfg",
    "ini",
    "conf",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "go",
    "rb",
    "java",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "sh",
    "bash",
    "zsh",
    "csv",
    "xml",
    "html",
    "css",
    "scss",
    "log",
    "db",
    "sqlite",
    "sqlite3",
    "pem",
    "key",
    "crt",
    "tf",
    "tfvars",
    "tfstate",
    "gradle",
    "kt",
    "swift",
    "php",
    "pl",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "sbt",
    "mk",
    "properties",
    "plist",
    "gz",
    "tgz",
    "zip",
    "tar",
    "bak",
    "pyc",
    "ipynb",
    "vue",
    "svelte",
    "proto",
    "graphql",
    "dockerfile",
    "example",
    "sample",
    "secret",
    "secrets",
    "pub",
    "cert",
    "jar",
    "war",
    "so",
    "dll",
    "exe",
    "bin",
];
pub(in crate::gate::action) const BARE_FILES: &[&str] = &[
    "Makefile",
    "Dockerfile",
    "Gemfile",
    "Procfile",
    "Jenkinsfile",
    "Vagrantfile",
    "Rakefile",
    "Justfile",
    "LICENSE",
    "CODEOWNERS",
];

/// A prohibition word, cleaned of quotes and trailing punctuation.
pub(in crate::gate::action) struct PTok {
    pub(in crate::gate::action) clean: String,
    pub(in crate::gate::action) lower: String,
    /// It opened a quote or backtick.
    pub(in crate::gate::action) open: bool,
    /// It closed one.
    pub(in crate::gate::action) close: bool,
    /// A comma, period, colon, ... followed it.
    pub(in crate::gate::action) stop_after: bool,
}

pub(in crate::gate::action) fn ptok(raw: &str) -> PTok {
    const OPENERS: &[char] = &['`', '"', '\'', '(', '[', '\u{201c}', '\u{2018}'];
    const CLOSERS: &[char] = &['`', '"', '\'', ')', ']', '\u{201d}', '\u{2019}'];
    const PUNCT: &[char] = &['.', ',', ';', ':', '!', '?'];
    let open = raw.starts_with(['`', '"', '\u{201c}']) || raw.starts_with('\'');
    let inner = raw.trim_start_matches(OPENERS);
    let mut end = inner.len();
    let mut close = false;
    let mut stop_after = false;
    for (k, c) in inner.char_indices().rev() {
        if CLOSERS.contains(&c) {
            close |= matches!(c, '`' | '"' | '\'' | '\u{201d}' | '\u{2019}');
            end = k;
        } else if PUNCT.contains(&c) {
            stop_after = true;
            end = k;
        } else {
            break;
        }
    }
    let clean = inner.get(..end).unwrap_or(inner).to_string();
    let lower = clean.to_lowercase();
    PTok {
        clean,
        lower,
        open,
        close,
        stop_after,
    }
}

pub(in crate::gate::action) fn looks_like_path(t: &str) -> bool {
    let lower = t.to_lowercase();
    if t.is_empty()
        || t.starts_with('-')
        || t.contains("://")
        || NOT_PATHS.contains(&lower.as_str())
    {
        return false;
    }
    if t.contains('/') || t.starts_with('~') {
        return true;
    }
    if BARE_FILES.contains(&t) {
        return true;
    }
    let mut chars = t.chars();
    if chars.next() == Some('.') && chars.next().is_some_and(|c| c.is_alphanumeric()) {
        return true;
    }
    match lower.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && EXTENSIONS.contains(&ext),
        None => false,
    }
}

pub(in crate::gate::action) fn name_like(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with('-')
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.' | '*' | ':' | '@'))
}

pub(in crate::gate::action) fn is_stop(w: &str) -> bool {
    STOP.contains(&w)
}

pub(in crate::gate::action) fn branch_like(t: &PTok) -> bool {
    name_like(&t.clean)
        && !is_stop(&t.lower)
        && !is_verb(&t.lower)
        && !ARTICLES.contains(&t.lower.as_str())
}

pub(in crate::gate::action) fn table_like(t: &PTok) -> bool {
    name_like(&t.clean)
        && !is_stop(&t.lower)
        && !is_verb(&t.lower)
        && !SQL_NOUNS.contains(&t.lower.as_str())
        && !SQL_KEYWORDS.contains(&t.lower.as_str())
        && !matches!(
            t.lower.as_str(),
            "production" | "prod" | "live" | "old" | "new"
        )
}

pub(in crate::gate::action) fn branch_eq(forbidden: &str, name: &str) -> bool {
    let (f, n) = (norm_branch(forbidden), norm_branch(name));
    f == n || (has_glob(&f) && fnmatch(&f, &n)) || (has_glob(&n) && fnmatch(&n, &f))
}

pub(in crate::gate::action) fn table_eq(forbidden: &str, name: &str) -> bool {
    let (f, n) = (forbidden.to_lowercase(), name.to_lowercase());
    let last = |s: &str| s.rsplit('.').next().unwrap_or("").to_string();
    f == n || last(&f) == last(&n)
}

/// Lower-cased command words of a text, quotes trimmed, paths reduced to their last component.
pub(in crate::gate::action) fn cmd_words(t: &str) -> Vec<String> {
    t.split_whitespace()
        .map(|w| {
            let w = w.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ';' | '(' | ')'));
            base(w).to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}
