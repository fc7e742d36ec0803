//! What an action line does, and what a prohibition forbids: the action gate's reading of
//! shell command lines (and SQL) against pinned prohibitions (SPEC.md section 8.4). Pure
//! functions of strings; only `std`.
//!
//! [`parse`] reads a line as a POSIX `sh` would, for a subset, and lists its [`Effect`]s: which
//! operation ([`Op`]) it does to which path, branch or table ([`Target`]). [`forbidden`] reads a
//! prohibition sentence into the operations and targets it forbids ([`Forbidden`]), and
//! [`violation`] says why a parsed line does a forbidden thing, or `None`.
//!
//! # The shell subset
//!
//! - Words: `'...'`, `"..."`, `$'...'` and backslash quoting. An unquoted `*`, `?`, `[` or
//!   `{a,b}` makes the word a glob. `$VAR`, `${...}`, `$((...))`, `$(...)`, backticks and a
//!   leading `~` make a word whose value the line does not tell.
//! - Separators: `;`, `&&`, `||`, `|`, `|&`, `&`, `;;`, newlines. `( ... )` subshells keep
//!   their own working directory; `{ ...; }` and the keywords `if then else elif fi while until
//!   do done esac !` are skipped; a `for`, `case`, `select` or `function` header has no effect.
//! - Redirections: `>`, `>>`, `>|`, `<>`, `&>`, `&>>`, `N>FILE` and `>&FILE` write FILE
//!   (nothing for `/dev/null`, `/dev/stdout`, `/dev/stderr`, `/dev/tty`, `/dev/zero`,
//!   `/dev/fd/N`); `<`, `N>&M`, `>&-` have no effect; `<<< WORD` feeds WORD to the command's
//!   standard input; a here-document (`<<EOF` ... `EOF`) is read as the here-string of its
//!   body (quoted delimiter: literal; unquoted: its substitutions run); one whose delimiter
//!   line never comes makes the line unparseable.
//! - Prefixes that run the next word as the command: leading `NAME=value` assignments, `sudo`
//!   and `doas` (with their options), `env` (options, `NAME=value`; `-C DIR` moves the working
//!   directory, `-S STRING` is parsed as a line), `nohup`, `time`, `nice`, `ionice`, `stdbuf`,
//!   `timeout [opts] DURATION`, `command`, `builtin`, `exec`, `chronic`, `unbuffer`, and
//!   `xargs [opts]`, whose command gets its paths from standard input: one operand whose value
//!   is unknown is added (with `-I R`, the words holding R become unknown under their literal
//!   directory), so a deleting or writing command run by `xargs` hits [`Target::Anything`].
//! - Run elsewhere: `docker|podman exec [opts] CONTAINER CMD`, `docker compose exec [opts]
//!   SERVICE CMD`, `kubectl exec ... -- CMD` and `ssh [opts] HOST CMD` are listed as unknown,
//!   and CMD is also read, from an unknown working directory (its relative paths are
//!   [`Target::Anything`]; its SQL counts as any SQL).
//! - Parsed again as lines, at most 16 deep (deeper: unparseable): `$( ... )`, backtick and
//!   `<( ... )`/`>( ... )` bodies; `sh|bash|zsh|dash|ksh|ash|mksh -c BODY`; such a shell with
//!   no `-c` and no script when an `echo`/`printf`/`<<<` text is its standard input;
//!   `su ... -c BODY`; `eval ARGS`; `watch ARGS`; `find ... -exec CMD ;` (with `{}` standing for
//!   anything under each start path).
//! - `cd DIR` / `pushd DIR` (and `git -C DIR`, `env -C DIR`): later relative paths resolve
//!   against DIR, itself relative to the previous directory; the line starts at the project
//!   root. `cd` with no operand, `cd -`, `cd ~`, `cd $X` or `popd` leave the directory unknown,
//!   and then every relative path is [`Target::Anything`].
//! - Paths are normalised ([`normalise`]): `./` and `//` collapse, `..` resolves, a trailing
//!   `/` goes; the project root is `.`. A `..` above the root stays. A glob keeps its pattern
//!   under its normalised literal directory ([`Target::Glob`]). A path with `~` or an
//!   expansion is [`Target::Anything`]. An absolute path, or one that climbs above the root, is
//!   still compared with a relative prohibited path: it matches when the prohibited path's
//!   components appear in it (the project may live anywhere), and `/`, `..`, `../..` hold
//!   everything.
//! - The command table (see the match in `run`): rm, unlink, rmdir, shred; mv; cp, install,
//!   rsync; ln; touch, mkdir, truncate; chmod, chown, chgrp; tee; dd; sed -i; perl -i;
//!   awk/gawk -i inplace; sort -o; uniq IN OUT; editors (vi, vim, nvim, nano, emacs, ed, ex,
//!   code, subl, hx) write their file operands; find -delete/-exec/-fprint; git (rm, mv, clean,
//!   checkout, restore, reset --hard/--merge, switch -f, push, branch -d/-D, and the other
//!   subcommands that change no file); psql, mysql, mariadb, sqlite3 with SQL on the line or
//!   on an `echo`'d standard input; read-only commands (cat, ls, grep, echo, ...). Any other
//!   command (python, make, npm, cargo, curl, tar, ...) is listed in [`Parsed::unknown`]: its
//!   effect cannot be known from the line, and the caller falls back to word matching.
//! - A line whose first word is DROP, DELETE, TRUNCATE, ALTER, UPDATE, INSERT or CREATE (any
//!   case) and reads as SQL is split into statements and read as SQL.
//! - A line that cannot be lexed (an unbalanced quote, an unclosed substitution, a
//!   here-document, nesting too deep) is unparseable; [`violation`] then refuses it under any
//!   prohibition with an operation when the line holds a deleting or writing word
//!   ([`Parsed::risky`]): it fails closed. A line that cannot be lexed, holds no shell operator
//!   and does not start with a known command (prose such as "don't bump libfoo") is read as one
//!   unknown command instead.

mod opaque;

use std::collections::HashSet;

/// How deep bodies (`$(...)`, `sh -c`, `eval`, `find -exec`, ...) are parsed; deeper is
/// unparseable.
const MAX_DEPTH: usize = 16;

/// How many simple commands and nested lines one [`parse`] reads before it gives up (the line
/// is then unparseable): a bound on hostile input.
const BUDGET: usize = 4096;

// ------------------------------------------------------------------------------------------
// Public types
// ------------------------------------------------------------------------------------------

/// What a command does to something, as far as its line tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Removes a file or directory (`rm`, `unlink`, `shred`, `git rm`, `git clean`,
    /// `find -delete`, the sources of `mv`).
    Delete,
    /// Creates, overwrites or modifies a file (`>`, `touch`, `mkdir`, `tee`, `cp`/`mv`/`ln`
    /// onto it, `truncate`, `sed -i`, `chmod`, `dd of=`).
    Write,
    /// Moves a file away (the sources of `mv` and `git mv`, which are also deleted).
    Move,
    /// Pushes to a branch of a remote (`git push`).
    Push,
    /// Throws away work: `git checkout -- PATHS`, `git restore`, `git reset --hard`,
    /// `git switch -f` (on paths), and `git branch -d/-D` (on a branch).
    Discard,
    /// `DROP TABLE|VIEW|INDEX|SEQUENCE|DATABASE|SCHEMA`.
    SqlDrop,
    /// `DELETE FROM`.
    SqlDelete,
    /// `TRUNCATE`.
    SqlTruncate,
    /// `ALTER TABLE` (and `ALTER DATABASE|SCHEMA`, `RENAME TABLE`).
    SqlAlter,
}

impl Op {
    /// The verb for a message.
    fn verb(self) -> &'static str {
        match self {
            Op::Delete => "deletes",
            Op::Write => "writes",
            Op::Move => "moves",
            Op::Push => "pushes to",
            Op::Discard => "discards",
            Op::SqlDrop => "drops",
            Op::SqlDelete => "deletes rows of",
            Op::SqlTruncate => "truncates",
            Op::SqlAlter => "alters",
        }
    }
}

/// What an effect is done to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A path, normalised ([`normalise`]): relative to the project root (`.` is the root
    /// itself), or absolute.
    Path(String),
    /// The paths a glob may name, as the pattern under its normalised literal directory, e.g.
    /// `shop/migrations/*.py`; `**` stands for anything below (`find DIR -exec`, `cp -r`).
    Glob(String),
    /// A branch of a git remote.
    Branch {
        /// The branch, or `None` when the line does not name it (a push of the current branch).
        name: Option<String>,
        /// Whether history may be lost: `--force`, `-f`, `--force-with-lease`, `+ref`, a deletion.
        force: bool,
    },
    /// A table, or `None` when not named (a whole database or schema).
    Table(Option<String>),
    /// Something the line cannot name (`$VAR`, `~`, command output, the paths `xargs` reads,
    /// a path under an unknown directory): it matches every prohibited path (fail closed).
    Anything,
}

/// One thing a line does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Effect {
    /// The operation.
    pub op: Op,
    /// What it is done to.
    pub target: Target,
    /// The simple command (or SQL statement) that does it, as written on the line.
    pub command: String,
}

/// What [`parse`] read in a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// What the line does, in order, without repeats.
    pub effects: Vec<Effect>,
    /// Simple commands not in the table (their effect cannot be known from the line), as their
    /// own text, e.g. "python manage.py makemigrations shop"; prose comes out here too.
    pub unknown: Vec<String>,
    /// Simple commands of the table (read-only ones included), as their own text: what a
    /// prohibition's [`Forbidden::commands`] are matched against besides `unknown`.
    pub known: Vec<String>,
    /// Commands the line cannot tell the effect of because what they run is decided at run
    /// time or written in another language: a command named by an expansion or a glob, code
    /// built at run time and run by a shell, `eval`, `source` or `at`, a shell reading code
    /// from a pipe, inline interpreter code that is not plainly read-only, an awk `system` or
    /// pipe, a sed `e` command. Each is "`COMMAND`: why". They fail closed (issue 37).
    pub opaque: Vec<String>,
    /// The line could not be parsed (unbalanced quote, unclosed substitution, a here-document,
    /// nesting too deep, too many commands).
    pub unparseable: bool,
    /// The line holds a deleting or writing word somewhere (rm, unlink, mv, dd, truncate, `>`,
    /// DROP, DELETE, ...), by a plain word scan: used to fail closed when it is unparseable.
    pub risky: bool,
}

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

// ------------------------------------------------------------------------------------------
// Entry points
// ------------------------------------------------------------------------------------------

/// Reads an action line: its effects, its unknown and known commands, whether it could be
/// parsed, and whether it holds a deleting or writing word.
pub fn parse(line: &str) -> Parsed {
    let mut acc = Acc {
        p: Parsed {
            risky: risky(line),
            ..Parsed::default()
        },
        budget: BUDGET,
        seen: HashSet::new(),
        git_aliases: Vec::new(),
        links: Vec::new(),
    };
    parse_in(line, Some(String::new()), 0, &mut acc);
    if acc.p.unparseable && prose(line) {
        acc.p = Parsed {
            unknown: vec![line.trim().to_string()],
            risky: acc.p.risky,
            ..Parsed::default()
        };
    }
    acc.p
}

/// Words that lead a table's name written before the keyword ("the users table").
const TABLE_LEADS: &[&str] = &[
    "the", "drop", "truncate", "alter", "delete", "empty", "wipe",
];

/// Words that qualify tables rather than name one.
const TABLE_QUALIFIERS: &[&str] = &[
    "any",
    "all",
    "old",
    "other",
    "these",
    "those",
    "some",
    "production",
    "prod",
    "live",
    "sql",
    "database",
    "db",
    "temp",
    "temporary",
    "new",
    "every",
    "each",
    "user",
    "a",
    "an",
];

/// SQL verbs a table's name follows ("DROP TABLE users").
const SQL_VERBS: &[&str] = &["drop", "truncate", "alter", "delete", "rename", "lock"];

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
    const FILE_ALL: &[Op] = &[Op::Write, Op::Delete, Op::Move, Op::Discard];
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
    let writes_paths = f.ops.iter().any(|o| matches!(o, Op::Delete | Op::Write));
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

/// Normalises `path` against the directory `cwd` ("" or "." is the project root): joins them
/// (an absolute path ignores `cwd`), drops `.` and empty components, resolves `..` (one above
/// the root of a relative path stays, one above `/` is dropped), and drops a trailing `/`. The
/// root comes out as `.`.
pub fn normalise(cwd: &str, path: &str) -> String {
    // `/proc/self/root/srv` and `/proc/PID/root/srv` are `/srv` (the process's own root).
    let path = match path.strip_prefix("/proc/") {
        Some(rest) => match rest.split_once('/') {
            Some((_, tail)) if tail == "root" || tail.starts_with("root/") => {
                let after = &tail["root".len()..];
                if after.is_empty() {
                    "/"
                } else {
                    after
                }
            }
            _ => path,
        },
        None => path,
    };
    let joined = if path.starts_with('/') || cwd.is_empty() || cwd == "." {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    let abs = joined.starts_with('/');
    let mut stack: Vec<&str> = Vec::new();
    for c in joined.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if stack.last().is_some_and(|l| *l != "..") {
                    stack.pop();
                } else if !abs {
                    stack.push("..");
                }
            }
            _ => stack.push(c),
        }
    }
    if abs {
        format!("/{}", stack.join("/"))
    } else if stack.is_empty() {
        ".".to_string()
    } else {
        stack.join("/")
    }
}

// ------------------------------------------------------------------------------------------
// The lexer
// ------------------------------------------------------------------------------------------

/// A shell word after quote removal. Expansions are kept as written (so a `-c` body parsed
/// again sees them), and make the word dynamic.
#[derive(Debug, Clone, Default)]
struct Word {
    /// The text, quotes removed, expansions verbatim.
    text: String,
    /// Chars in `text`.
    len: usize,
    /// The char index in `text` of the first unquoted glob character.
    glob_at: Option<usize>,
    /// The value depends on an expansion or `~`: unknown.
    dynamic: bool,
    /// Some quoting was used.
    quoted: bool,
    /// Bodies of command substitutions, to parse as lines.
    subs: Vec<String>,
    /// Char offsets of the word in its line.
    start: usize,
    end: usize,
}

impl Word {
    fn push(&mut self, c: char) {
        self.text.push(c);
        self.len += 1;
    }

    fn glob(&mut self) {
        if self.glob_at.is_none() {
            self.glob_at = Some(self.len);
        }
    }

    /// A word not from the line: `text` with its first glob character (if `globby`) marked.
    fn synthetic(text: &str, dynamic: bool, globby: bool) -> Word {
        let mut w = Word {
            dynamic,
            ..Word::default()
        };
        for c in text.chars() {
            if globby && matches!(c, '*' | '?' | '[') {
                w.glob();
            }
            w.push(c);
        }
        w
    }

    /// The word from char `from` on (an option's attached value).
    fn tail(&self, from: usize) -> Word {
        let text: String = self.text.chars().skip(from).collect();
        Word::synthetic(&text, self.dynamic, self.glob_at.is_some())
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RedirKind {
    Write,
    Read,
    Dup,
    DupOrWrite,
    HereString,
}

/// A separator between simple commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    List,
    Pipe,
    Open,
    Close,
}

#[derive(Debug, Clone)]
enum Tok {
    Word(Word),
    Redir {
        kind: RedirKind,
        target: Word,
        start: usize,
    },
    Sep(Sep),
}

impl Tok {
    fn start(&self) -> usize {
        match self {
            Tok::Word(w) => w.start,
            Tok::Redir { start, .. } => *start,
            Tok::Sep(_) => 0,
        }
    }

    fn end(&self) -> usize {
        match self {
            Tok::Word(w) => w.end,
            Tok::Redir { target, .. } => target.end,
            Tok::Sep(_) => 0,
        }
    }
}

/// The line cannot be lexed.
#[derive(Debug)]
struct Bad;

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer<'_> {
    fn at(&self, k: usize) -> Option<char> {
        self.s.get(self.i.saturating_add(k)).copied()
    }

    fn span(&self, from: usize, to: usize) -> String {
        self.s
            .get(from..to)
            .map(|c| c.iter().collect())
            .unwrap_or_default()
    }

    fn tokens(mut self) -> Result<Vec<Tok>, Bad> {
        let mut out = Vec::new();
        loop {
            while let Some(c) = self.at(0) {
                if c == ' ' || c == '\t' || c == '\r' {
                    self.i += 1;
                } else if c == '\\' && self.at(1) == Some('\n') {
                    self.i += 2;
                } else {
                    break;
                }
            }
            let Some(c) = self.at(0) else { break };
            let start = self.i;
            match c {
                '\n' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::List));
                }
                ';' => {
                    self.i += if matches!(self.at(1), Some(';' | '&')) {
                        2
                    } else {
                        1
                    };
                    out.push(Tok::Sep(Sep::List));
                }
                '&' => match self.at(1) {
                    Some('&') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::List));
                    }
                    Some('>') => {
                        self.i += 2;
                        if self.at(0) == Some('>') {
                            self.i += 1;
                        }
                        let target = self.target()?;
                        out.push(Tok::Redir {
                            kind: RedirKind::Write,
                            target,
                            start,
                        });
                    }
                    _ => {
                        self.i += 1;
                        out.push(Tok::Sep(Sep::List));
                    }
                },
                '|' => match self.at(1) {
                    Some('|') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::List));
                    }
                    Some('&') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::Pipe));
                    }
                    _ => {
                        self.i += 1;
                        out.push(Tok::Sep(Sep::Pipe));
                    }
                },
                '(' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::Open));
                }
                ')' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::Close));
                }
                '<' | '>' => out.push(self.redirect(start)?),
                '#' => {
                    while let Some(d) = self.at(0) {
                        if d == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => {
                    let w = self.word()?;
                    let fd = !w.text.is_empty()
                        && !w.quoted
                        && w.text.chars().all(|d| d.is_ascii_digit())
                        && matches!(self.at(0), Some('<' | '>'));
                    if fd {
                        out.push(self.redirect(start)?);
                    } else {
                        out.push(Tok::Word(w));
                    }
                    if self.i == start {
                        self.i += 1;
                    }
                }
            }
        }
        Ok(out)
    }

    fn redirect(&mut self, start: usize) -> Result<Tok, Bad> {
        let kind = match (self.at(0), self.at(1)) {
            (Some('<' | '>'), Some('(')) => {
                // Process substitution: an argument whose body runs.
                let open = self.i;
                let close = find_close(self.s, self.i + 2).ok_or(Bad)?;
                let body = self.span(self.i + 2, close);
                self.i = close + 1;
                let mut w = Word::synthetic(&self.span(open, self.i), true, false);
                w.subs.push(body);
                w.start = open;
                w.end = self.i;
                return Ok(Tok::Word(w));
            }
            (Some('<'), Some('<')) if self.at(2) == Some('<') => {
                self.i += 3;
                RedirKind::HereString
            }
            // A here-document: its body is on the following lines.
            (Some('<'), Some('<')) => return Err(Bad),
            (Some('<'), Some('&')) => {
                self.i += 2;
                RedirKind::Dup
            }
            (Some('<'), Some('>')) => {
                self.i += 2;
                RedirKind::Write
            }
            (Some('<'), _) => {
                self.i += 1;
                RedirKind::Read
            }
            (Some('>'), Some('>' | '|')) => {
                self.i += 2;
                RedirKind::Write
            }
            (Some('>'), Some('&')) => {
                self.i += 2;
                RedirKind::DupOrWrite
            }
            (Some('>'), _) => {
                self.i += 1;
                RedirKind::Write
            }
            _ => return Err(Bad),
        };
        let target = self.target()?;
        let kind = if kind == RedirKind::DupOrWrite {
            if target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()) {
                RedirKind::Dup
            } else {
                RedirKind::Write
            }
        } else {
            kind
        };
        Ok(Tok::Redir {
            kind,
            target,
            start,
        })
    }

    fn target(&mut self) -> Result<Word, Bad> {
        while matches!(self.at(0), Some(' ' | '\t')) {
            self.i += 1;
        }
        match self.at(0) {
            None => Err(Bad),
            Some(c) if is_meta(c) => Err(Bad),
            _ => self.word(),
        }
    }

    fn word(&mut self) -> Result<Word, Bad> {
        let mut w = Word {
            start: self.i,
            ..Word::default()
        };
        while let Some(c) = self.at(0) {
            match c {
                c if is_meta(c) => break,
                '\\' => {
                    w.quoted = true;
                    match self.at(1) {
                        Some('\n') => self.i += 2,
                        Some(n) => {
                            w.push(n);
                            self.i += 2;
                        }
                        None => {
                            w.push('\\');
                            self.i += 1;
                        }
                    }
                }
                '\'' => {
                    w.quoted = true;
                    self.i += 1;
                    loop {
                        match self.at(0) {
                            None => return Err(Bad),
                            Some('\'') => {
                                self.i += 1;
                                break;
                            }
                            Some(x) => {
                                w.push(x);
                                self.i += 1;
                            }
                        }
                    }
                }
                '"' => {
                    w.quoted = true;
                    self.dquote(&mut w)?;
                }
                '$' => self.dollar(&mut w)?,
                '`' => self.backtick(&mut w)?,
                '*' | '?' | '[' => {
                    w.glob();
                    w.push(c);
                    self.i += 1;
                }
                '{' => {
                    if !matches!(self.at(1), None | Some('}' | ' ' | '\t' | '\n')) {
                        w.glob();
                    }
                    w.push(c);
                    self.i += 1;
                }
                '~' if w.len == 0 && !w.quoted => {
                    w.dynamic = true;
                    w.push(c);
                    self.i += 1;
                }
                _ => {
                    w.push(c);
                    self.i += 1;
                }
            }
        }
        w.end = self.i;
        Ok(w)
    }

    fn dquote(&mut self, w: &mut Word) -> Result<(), Bad> {
        self.i += 1;
        loop {
            match self.at(0) {
                None => return Err(Bad),
                Some('"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some('\\') => match self.at(1) {
                    Some(n @ ('$' | '`' | '"' | '\\')) => {
                        w.push(n);
                        self.i += 2;
                    }
                    Some('\n') => self.i += 2,
                    _ => {
                        w.push('\\');
                        self.i += 1;
                    }
                },
                Some('$') => self.dollar(w)?,
                Some('`') => self.backtick(w)?,
                Some(c) => {
                    w.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn dollar(&mut self, w: &mut Word) -> Result<(), Bad> {
        let start = self.i;
        match self.at(1) {
            Some('(') => {
                let close = find_close(self.s, self.i + 2).ok_or(Bad)?;
                if self.at(2) != Some('(') {
                    let body = self.span(self.i + 2, close);
                    w.subs.push(body);
                } else {
                    // Arithmetic: a substitution inside it runs all the same.
                    w.subs
                        .extend(opaque::inner_subs(&self.s[self.i + 3..close]));
                }
                self.i = close + 1;
            }
            Some('{') => {
                let mut depth = 0usize;
                let mut k = self.i + 1;
                loop {
                    match self.s.get(k) {
                        None => return Err(Bad),
                        Some('\\') => {
                            k += 2;
                            continue;
                        }
                        Some('{') => depth += 1,
                        Some('}') => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                // A substitution inside a parameter expansion (`${X:-$(...)}`) runs too.
                w.subs.extend(opaque::inner_subs(&self.s[self.i + 2..k]));
                self.i = k + 1;
            }
            Some('\'') => {
                // ANSI-C quoting: a literal, its escapes decoded.
                w.quoted = true;
                self.i += 2;
                loop {
                    match self.at(0) {
                        None => return Err(Bad),
                        Some('\'') => {
                            self.i += 1;
                            return Ok(());
                        }
                        Some('\\') => {
                            if self.at(1).is_none() {
                                return Err(Bad);
                            }
                            let (decoded, taken) = opaque::ansi_c(self.s, self.i + 1);
                            for c in decoded.chars() {
                                w.push(c);
                            }
                            self.i += 1 + taken.max(1);
                        }
                        Some(x) => {
                            w.push(x);
                            self.i += 1;
                        }
                    }
                }
            }
            Some('"') => {
                self.i += 1;
                return self.dquote(w);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut k = self.i + 1;
                while self
                    .s
                    .get(k)
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_')
                {
                    k += 1;
                }
                self.i = k;
            }
            Some(c) if c.is_ascii_digit() || "?#@*!$-".contains(c) => self.i += 2,
            _ => {
                w.push('$');
                self.i += 1;
                return Ok(());
            }
        }
        w.dynamic = true;
        for c in self.span(start, self.i).chars() {
            w.push(c);
        }
        Ok(())
    }

    fn backtick(&mut self, w: &mut Word) -> Result<(), Bad> {
        let start = self.i;
        self.i += 1;
        let mut body = String::new();
        loop {
            match self.at(0) {
                None => return Err(Bad),
                Some('`') => {
                    self.i += 1;
                    break;
                }
                Some('\\') => match self.at(1) {
                    Some(n @ ('`' | '\\' | '$')) => {
                        body.push(n);
                        self.i += 2;
                    }
                    _ => {
                        body.push('\\');
                        self.i += 1;
                    }
                },
                Some(c) => {
                    body.push(c);
                    self.i += 1;
                }
            }
        }
        w.subs.push(body);
        w.dynamic = true;
        for c in self.span(start, self.i).chars() {
            w.push(c);
        }
        Ok(())
    }
}

/// The index of the `)` closing a `$(` or `(` whose body starts at `pos`, skipping quotes,
/// nested parentheses, backticks and comments; without recursion.
fn find_close(s: &[char], pos: usize) -> Option<usize> {
    #[derive(Clone, Copy)]
    enum Ctx {
        Paren,
        Dq,
        Back,
    }
    let mut stack = vec![Ctx::Paren];
    let mut i = pos;
    let mut word_start = true;
    while let Some(&c) = s.get(i) {
        let top = *stack.last()?;
        let mut next_start = false;
        match top {
            Ctx::Paren => match c {
                '\\' => {
                    i += 2;
                    word_start = false;
                    continue;
                }
                '\'' => {
                    let mut k = i + 1;
                    while s.get(k)? != &'\'' {
                        k += 1;
                    }
                    i = k + 1;
                    word_start = false;
                    continue;
                }
                '"' => stack.push(Ctx::Dq),
                '`' => stack.push(Ctx::Back),
                '(' => {
                    stack.push(Ctx::Paren);
                    next_start = true;
                }
                ')' => {
                    stack.pop();
                    if stack.is_empty() {
                        return Some(i);
                    }
                }
                '#' if word_start => {
                    while s.get(i).is_some_and(|d| *d != '\n') {
                        i += 1;
                    }
                    continue;
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' => next_start = true,
                _ => {}
            },
            Ctx::Dq => match c {
                '\\' => {
                    i += 2;
                    continue;
                }
                '"' => {
                    stack.pop();
                }
                '`' => stack.push(Ctx::Back),
                '$' if s.get(i + 1) == Some(&'(') => {
                    stack.push(Ctx::Paren);
                    i += 2;
                    word_start = true;
                    continue;
                }
                _ => {}
            },
            Ctx::Back => match c {
                '\\' => {
                    i += 2;
                    continue;
                }
                '`' => {
                    stack.pop();
                }
                _ => {}
            },
        }
        word_start = next_start;
        i += 1;
    }
    None
}

// ------------------------------------------------------------------------------------------
// Walking a line
// ------------------------------------------------------------------------------------------

/// The working directory: relative to the project root ("" is the root), absolute, or unknown.
type Cwd = Option<String>;

/// A command's standard input, as far as the line tells.
#[derive(Debug, Clone)]
enum Stdin {
    Tty,
    Unknown,
    Text(String),
}

/// What one `parse` accumulates.
struct Acc {
    p: Parsed,
    budget: usize,
    seen: HashSet<Effect>,
    /// Git aliases the line defines, with what each stands for.
    git_aliases: Vec<(String, String)>,
    /// Symbolic links the line makes: (the link, normalised; what it points to, normalised).
    links: Vec<(String, String)>,
}

impl Acc {
    /// Spends `n` of the budget; false (and the line is unparseable) when it is spent.
    fn spend(&mut self, n: usize) -> bool {
        match self.budget.checked_sub(n) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => {
                self.budget = 0;
                self.p.unparseable = true;
                false
            }
        }
    }

    /// Notes a command whose effect the line cannot tell ([`Parsed::opaque`]).
    fn opaque(&mut self, command: &str, why: &str) {
        let note = format!("`{}`: {why}", short(command));
        if !self.p.opaque.contains(&note) {
            self.p.opaque.push(note);
        }
    }

    fn put(&mut self, op: Op, target: Target, command: &str) {
        let e = Effect {
            op,
            target,
            command: command.to_string(),
        };
        if self.seen.insert(e.clone()) {
            self.p.effects.push(e);
        }
    }
}

/// The simple command being read: its text, its depth, its standard input.
struct Cx<'a> {
    text: &'a str,
    depth: usize,
    stdin: &'a Stdin,
}

impl Cx<'_> {
    fn eff(&self, out: &mut Acc, op: Op, cwd: &Cwd, w: &Word) {
        if let Some(t) = resolve(cwd, w) {
            // A path through a link the line made is a path under what the link points to.
            let t = match t {
                Target::Path(p) | Target::Glob(p) if !out.links.is_empty() => {
                    let glob = has_glob(&p);
                    // The link itself (`rm /tmp/p`) is the link; through it (`/tmp/p/`,
                    // `/tmp/p/x`) is what it points to.
                    let slash = w.text.ends_with('/');
                    let through = out.links.iter().find_map(|(link, to)| {
                        let rest = p.strip_prefix(link.as_str())?;
                        (rest.is_empty() && slash || rest.starts_with('/'))
                            .then(|| format!("{to}{rest}"))
                    });
                    let p = through.unwrap_or(p);
                    if glob {
                        Target::Glob(p)
                    } else {
                        Target::Path(p)
                    }
                }
                t => t,
            };
            out.put(op, t, self.text);
        }
    }
}

fn parse_in(line: &str, cwd: Cwd, depth: usize, out: &mut Acc) {
    if depth > MAX_DEPTH || !out.spend(1 + line.len() / 1024) {
        out.p.unparseable = true;
        return;
    }
    // A here-document is read as the here-string of its body (`opaque::heredocs_as_strings`).
    let rewritten = opaque::heredocs_as_strings(line);
    let line = rewritten.as_deref().unwrap_or(line);
    let first = line
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    if SQL_FIRST.contains(&first.as_str()) {
        let r = read_sql(line, true);
        if r.sql {
            for (op, t, stmt) in r.effects {
                out.put(op, Target::Table(t), &stmt);
            }
            // A SQL line that also holds shell operators (`DELETE ... || rm -rf x`) is read as
            // shell too; a statement that is not SQL (`UPDATE t SET a=1; rm -rf x`) is read as
            // a command line of its own. Nothing after a SQL verb escapes the gate.
            let shellish = ["&&", "||", "|", "\n", "`", "$("]
                .iter()
                .any(|op| line.contains(op));
            for u in r.unknown {
                let lead = u
                    .split(|c: char| c.is_whitespace() || c == '(')
                    .find(|w| !w.is_empty())
                    .unwrap_or("")
                    .to_ascii_lowercase();
                if shellish || SQL_FIRST.contains(&lead.as_str()) {
                    out.p.unknown.push(u);
                } else {
                    parse_in(&u, cwd.clone(), depth + 1, out);
                }
            }
            if !shellish {
                return;
            }
        }
    }
    let chars: Vec<char> = line.chars().collect();
    let from = out.p.unknown.len();
    match (Lexer { s: &chars, i: 0 }).tokens() {
        Ok(toks) => walk(&chars, &toks, cwd, depth, out),
        Err(Bad) => out.p.unparseable = true,
    }
    // A simple command of the shell line that is a SQL statement (`DROP TABLE x && ls`).
    let sql: Vec<String> = (out.p.unknown.get(from..).unwrap_or_default().iter())
        .filter(|u| {
            let lead = u
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            SQL_FIRST.contains(&lead.as_str())
        })
        .cloned()
        .collect();
    for u in sql {
        let r = read_sql(&u, true);
        for (op, t, stmt) in r.effects {
            out.put(op, Target::Table(t), &stmt);
        }
    }
}

fn walk(src: &[char], toks: &[Tok], cwd: Cwd, depth: usize, out: &mut Acc) {
    let mut cwd = cwd;
    let mut saved: Vec<Cwd> = Vec::new();
    let mut cur: Vec<&Tok> = Vec::new();
    let mut stdin = Stdin::Tty;
    for t in toks {
        let Tok::Sep(sep) = t else {
            cur.push(t);
            continue;
        };
        let produced = simple(src, &cur, &mut cwd, &stdin, depth, out);
        cur.clear();
        stdin = Stdin::Tty;
        match sep {
            Sep::Pipe => stdin = produced.map_or(Stdin::Unknown, Stdin::Text),
            Sep::Open => saved.push(cwd.clone()),
            Sep::Close => {
                if let Some(c) = saved.pop() {
                    cwd = c;
                }
            }
            Sep::List => {}
        }
    }
    simple(src, &cur, &mut cwd, &stdin, depth, out);
}

fn run_subs(w: &Word, cwd: &Cwd, depth: usize, out: &mut Acc) {
    for body in &w.subs {
        parse_in(body, cwd.clone(), depth + 1, out);
    }
}

/// Reserved words skipped before a command.
const KEYWORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac",
];

/// Reads one simple command; returns the text it prints when the line tells (echo, printf).
fn simple(
    src: &[char],
    toks: &[&Tok],
    cwd: &mut Cwd,
    stdin: &Stdin,
    depth: usize,
    out: &mut Acc,
) -> Option<String> {
    let last = toks.last()?;
    // The command's own text, without the keywords (if, then, do, {, ...) before it.
    let lead = toks
        .iter()
        .take_while(|t| matches!(t, Tok::Word(w) if KEYWORDS.contains(&w.text.as_str())))
        .count();
    let from = toks.get(lead).or(toks.first()).map_or(0, |t| t.start());
    let text: String = src
        .get(from..last.end().max(from))
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let text = text.trim().to_string();
    let mut stdin = stdin.clone();
    let mut words: Vec<Word> = Vec::new();
    let mut writes: Vec<&Word> = Vec::new();
    for t in toks {
        match t {
            Tok::Word(w) => {
                run_subs(w, cwd, depth, out);
                words.push(w.clone());
            }
            Tok::Redir { kind, target, .. } => {
                run_subs(target, cwd, depth, out);
                match kind {
                    RedirKind::Write => writes.push(target),
                    RedirKind::HereString => stdin = Stdin::Text(target.text.clone()),
                    _ => {}
                }
            }
            Tok::Sep(_) => {}
        }
    }
    for w in writes {
        if let Some(t) = resolve(cwd, w) {
            out.put(Op::Write, t, &text);
        }
    }
    let mut i = 0;
    loop {
        let w = words.get(i)?;
        if is_assignment(&w.text) && !w.text.starts_with('=') {
            i += 1;
            continue;
        }
        match w.text.as_str() {
            k if KEYWORDS.contains(&k) => i += 1,
            "for" | "case" | "select" | "in" => return None,
            // `function f { ...; }`: the name is skipped, the body read as commands.
            "function" => i += 2,
            _ => break,
        }
    }
    let rest = words.get(i..).unwrap_or_default();
    command(rest, cwd, &stdin, &text, depth, out)
}

/// Reads a command after its assignments: its prefixes (sudo, env, xargs, ...), then the
/// command itself.
fn command(
    words: &[Word],
    cwd: &mut Cwd,
    stdin: &Stdin,
    text: &str,
    depth: usize,
    out: &mut Acc,
) -> Option<String> {
    if depth > MAX_DEPTH || !out.spend(1 + words.len() / 8) {
        out.p.unparseable = true;
        return None;
    }
    let mut i = 0usize;
    let mut xargs: Option<Option<String>> = None;
    let mut here: Option<Cwd> = None;
    let cx = Cx { text, depth, stdin };
    loop {
        let w = words.get(i)?;
        if w.dynamic || w.text.contains('$') || w.text.contains('`') {
            // A command named by an expansion (`$RM`, `$(echo rm)`, `rm${IFS}-rf`) cannot be
            // known from the line: it is opaque, and unparseable.
            out.p.unknown.push(text.to_string());
            out.p.unparseable = true;
            out.opaque(
                text,
                "its command is named by an expansion, decided at run time",
            );
            return None;
        }
        if w.glob_at.is_some() && !matches!(w.text.as_str(), "[" | "[[") {
            // `/bin/r[m]`: the shell picks the command from the files that match.
            out.p.unknown.push(text.to_string());
            out.opaque(
                text,
                "its command is named by a glob, which the shell matches against files",
            );
            return None;
        }
        let rest = words.get(i + 1..).unwrap_or_default();
        let name = base(&w.text);
        let skip = match name {
            "sudo" | "doas" => {
                let s = options(
                    rest,
                    "ugCDhprtUTc",
                    &[
                        "user",
                        "group",
                        "close-from",
                        "chdir",
                        "host",
                        "prompt",
                        "role",
                        "type",
                        "other-user",
                        "command-timeout",
                    ],
                    true,
                );
                let mut k = s.first_operand(rest.len());
                while rest.get(k).is_some_and(|x| is_assignment(&x.text)) {
                    k += 1;
                }
                k
            }
            "env" => {
                let s = options(rest, "uCS", &["unset", "chdir", "split-string"], true);
                for o in &s.opts {
                    match o.name.as_str() {
                        "C" | "chdir" => {
                            let base_dir = here.clone().unwrap_or_else(|| cwd.clone());
                            here = Some(cd_to(&base_dir, o.value.as_ref()));
                        }
                        "S" | "split-string" => {
                            let mut body =
                                o.value.as_ref().map_or(String::new(), |v| v.text.clone());
                            for x in rest.get(s.first_operand(rest.len())..).unwrap_or_default() {
                                body.push(' ');
                                body.push_str(&x.text);
                            }
                            let at = here.clone().unwrap_or_else(|| cwd.clone());
                            out.p.known.push(text.to_string());
                            parse_in(&body, at, depth + 1, out);
                            return None;
                        }
                        _ => {}
                    }
                }
                let mut k = s.first_operand(rest.len());
                while rest.get(k).is_some_and(|x| is_assignment(&x.text)) {
                    k += 1;
                }
                k
            }
            "nohup" | "builtin" | "chronic" | "unbuffer" | "noglob" | "nocorrect" | "busybox"
            | "coproc" => 0,
            "command" => {
                let s = options(rest, "", &[], true);
                if s.has("v") || s.has("V") {
                    out.p.known.push(text.to_string());
                    return None;
                }
                s.first_operand(rest.len())
            }
            "exec" => options(rest, "a", &[], true).first_operand(rest.len()),
            "time" => {
                let s = options(rest, "fo", &["format", "output"], true);
                for o in &s.opts {
                    if o.name == "o" || o.name == "output" {
                        if let Some(v) = &o.value {
                            let at = here.clone().unwrap_or_else(|| cwd.clone());
                            cx.eff(out, Op::Write, &at, v);
                        }
                    }
                }
                s.first_operand(rest.len())
            }
            "nice" => options(rest, "n", &["adjustment"], true).first_operand(rest.len()),
            "ionice" => options(
                rest,
                "cnpPu",
                &["class", "classdata", "pid", "pgid", "uid"],
                true,
            )
            .first_operand(rest.len()),
            "stdbuf" => {
                options(rest, "ioe", &["input", "output", "error"], true).first_operand(rest.len())
            }
            "timeout" => {
                options(rest, "sk", &["signal", "kill-after"], true).first_operand(rest.len()) + 1
            }
            "watch" => {
                let s = options(rest, "nq", &["interval", "chgexit"], true);
                let body: Vec<&str> = rest
                    .get(s.first_operand(rest.len())..)
                    .unwrap_or_default()
                    .iter()
                    .map(|x| x.text.as_str())
                    .collect();
                out.p.known.push(text.to_string());
                let at = here.clone().unwrap_or_else(|| cwd.clone());
                parse_in(&body.join(" "), at, depth + 1, out);
                return None;
            }
            "xargs" => {
                let s = options(
                    rest,
                    "ILnPsdaE",
                    &[
                        "max-args",
                        "max-procs",
                        "delimiter",
                        "arg-file",
                        "max-chars",
                        "process-slot-var",
                    ],
                    true,
                );
                let mut replace = None;
                for o in &s.opts {
                    match o.name.as_str() {
                        "I" => replace = o.value.as_ref().map(|v| v.text.clone()),
                        "i" | "replace" => replace = Some("{}".to_string()),
                        _ => {}
                    }
                }
                xargs = Some(replace);
                s.first_operand(rest.len())
            }
            _ => break,
        };
        i += 1 + skip;
    }
    let w = words.get(i)?;
    let mut args: Vec<Word> = words.get(i + 1..).unwrap_or_default().to_vec();
    if let Some(replace) = xargs {
        let stdin_word = Word::synthetic("<stdin>", true, false);
        match replace.filter(|r| !r.is_empty()) {
            Some(r) => {
                for a in &mut args {
                    *a = fill(a, &r, &stdin_word);
                }
            }
            None => args.push(stdin_word),
        }
    }
    let here = here.unwrap_or_else(|| cwd.clone());
    let name = base(&w.text).to_string();
    run(&name, &args, cwd, &here, &cx, out)
}

/// `w` with the placeholder `r` (xargs' `-I R`, find's `{}`) standing for `stand_in`: the
/// stand-in itself when the word starts with it, else anything under the word's literal
/// directory before it.
fn fill(w: &Word, r: &str, stand_in: &Word) -> Word {
    match w.text.find(r) {
        None => w.clone(),
        Some(0) => stand_in.clone(),
        Some(pos) => {
            let literal = w.text.get(..pos).unwrap_or("");
            let dir = literal
                .get(..literal.rfind('/').map_or(0, |k| k + 1))
                .unwrap_or("");
            Word::synthetic(&format!("{dir}**"), w.dynamic, true)
        }
    }
}

/// Runs the command table on one command.
fn run(
    name: &str,
    args: &[Word],
    cwd: &mut Cwd,
    here: &Cwd,
    cx: &Cx,
    out: &mut Acc,
) -> Option<String> {
    let known = match name {
        "cd" | "pushd" | "chdir" => {
            let ops: Vec<&Word> = args
                .iter()
                .filter(|a| !(a.text.starts_with('-') && a.text.len() > 1))
                .collect();
            *cwd = match ops.first() {
                None => None,
                Some(w) if w.text == "-" => None,
                Some(w) => cd_to(here, Some(w)),
            };
            true
        }
        "popd" => {
            *cwd = None;
            true
        }
        "rm" | "unlink" | "rmdir" | "shred" => {
            let s = if name == "shred" {
                options(args, "ns", &["iterations", "size", "random-source"], false)
            } else {
                options(args, "", &[], false)
            };
            for w in s.words(args) {
                cx.eff(out, Op::Delete, here, w);
            }
            true
        }
        "mv" => {
            let s = options(args, "tS", &["target-directory", "suffix"], false);
            let dir = s.value(&["t", "target-directory"]);
            let whole = s.has("T") || s.has("no-target-directory");
            let (srcs, dest) = split_dest(s.words(args), dir);
            for w in &srcs {
                cx.eff(out, Op::Delete, here, w);
                cx.eff(out, Op::Move, here, w);
            }
            if let Some(d) = dest {
                landing(cx, out, here, d, &srcs, whole, false, false);
            }
            true
        }
        "cp" | "install" => {
            let s = if name == "cp" {
                options(args, "tS", &["target-directory", "suffix"], false)
            } else {
                options(
                    args,
                    "mogtS",
                    &["mode", "owner", "group", "target-directory", "suffix"],
                    false,
                )
            };
            if name == "install" && (s.has("d") || s.has("directory")) {
                for w in s.words(args) {
                    cx.eff(out, Op::Write, here, w);
                }
                return done(true, cx, out);
            }
            let recursive = ["r", "R", "a", "recursive", "archive"]
                .iter()
                .any(|n| s.has(n));
            let whole = s.has("T") || s.has("no-target-directory");
            let (srcs, dest) = split_dest(s.words(args), s.value(&["t", "target-directory"]));
            if let Some(d) = dest {
                landing(cx, out, here, d, &srcs, whole, recursive, false);
            }
            true
        }
        "rsync" => {
            rsync(args, here, cx, out);
            true
        }
        "ln" => {
            let s = options(args, "tS", &["target-directory", "suffix"], false);
            let ops = s.words(args);
            let whole = s.has("T") || s.has("no-target-directory");
            if let Some(d) = s.value(&["t", "target-directory"]) {
                landing(cx, out, here, d, &ops, false, false, false);
            } else if let [only] = ops.as_slice() {
                let dot = Word::synthetic(".", false, false);
                if let Some(t) = resolve(here, &dot).and_then(|d| into(&d, only)) {
                    out.put(Op::Write, t, cx.text);
                }
            } else {
                let (srcs, dest) = split_dest(ops, None);
                if let Some(d) = dest {
                    // `ln -s TARGET LINK`: later paths through LINK are paths under TARGET.
                    if let ([target], Some(Target::Path(link))) =
                        (srcs.as_slice(), resolve(here, d))
                    {
                        if let Some(Target::Path(to)) = resolve(here, target) {
                            out.links.push((link, to));
                        }
                    }
                    landing(cx, out, here, d, &srcs, whole, false, false);
                }
            }
            true
        }
        "touch" | "mkdir" | "truncate" | "tee" => {
            let s = match name {
                "touch" => options(args, "drt", &["date", "reference", "time"], false),
                "mkdir" => options(args, "m", &["mode", "context"], false),
                "truncate" => options(args, "sr", &["size", "reference"], false),
                _ => options(args, "", &[], false),
            };
            for w in s.words(args) {
                cx.eff(out, Op::Write, here, w);
            }
            true
        }
        "chmod" | "chown" | "chgrp" => {
            modes(args, here, cx, out);
            true
        }
        "dd" => {
            for a in args {
                if a.text.starts_with("of=") {
                    cx.eff(out, Op::Write, here, &a.tail(3));
                }
            }
            true
        }
        "sed" | "gsed" => {
            sed(args, here, cx, out);
            true
        }
        "perl" => {
            let texts = texts(args);
            match opaque::inline_code(name, &texts) {
                Some((lang, code)) if !opaque::plainly_read_only(code) && !in_place(&texts) => {
                    out.opaque(
                        cx.text,
                        &format!("it runs inline {lang} code, which the gate does not read"),
                    );
                    true
                }
                _ => perl(args, here, cx, out),
            }
        }
        "awk" | "gawk" => {
            awk(args, here, cx, out);
            true
        }
        "sort" => {
            let s = options(
                args,
                "kotTS",
                &[
                    "key",
                    "output",
                    "field-separator",
                    "temporary-directory",
                    "buffer-size",
                    "files0-from",
                    "compress-program",
                    "parallel",
                    "random-source",
                    "batch-size",
                ],
                false,
            );
            if let Some(o) = s.value(&["o", "output"]) {
                cx.eff(out, Op::Write, here, o);
            }
            true
        }
        "uniq" => {
            let s = options(
                args,
                "fsw",
                &["skip-fields", "skip-chars", "check-chars"],
                false,
            );
            if let Some(o) = s.words(args).get(1) {
                cx.eff(out, Op::Write, here, o);
            }
            true
        }
        "find" => {
            find(args, here, cx, out);
            true
        }
        "git" => git(args, here, cx, out),
        "psql" | "mysql" | "mariadb" | "sqlite3" => sql_client(name, args, here, cx, out),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" => shell(args, here, cx, out),
        "su" => {
            let mut body = None;
            let mut k = 0;
            while let Some(a) = args.get(k) {
                if a.text == "-c" || a.text == "--command" {
                    body = args.get(k + 1).map(|b| b.text.clone());
                    break;
                }
                if let Some(v) = a.text.strip_prefix("--command=") {
                    body = Some(v.to_string());
                    break;
                }
                k += 1;
            }
            match body {
                Some(b) => {
                    out.p.known.push(cx.text.to_string());
                    parse_in(&b, here.clone(), cx.depth + 1, out);
                    return None;
                }
                None => false,
            }
        }
        "docker" | "podman" | "docker-compose" | "kubectl" | "ssh" => {
            // A command run elsewhere (a container, a pod, a host): parsed with an unknown
            // working directory (its relative paths are Anything), and listed as unknown too.
            let inner = elsewhere(name, args);
            if inner.is_empty() {
                false
            } else {
                out.p.unknown.push(cx.text.to_string());
                if named_by_expansion(cx.text) {
                    out.p.unparseable = true;
                }
                if name == "ssh" {
                    let body: Vec<&str> = inner.iter().map(|a| a.text.as_str()).collect();
                    parse_in(&body.join(" "), None, cx.depth + 1, out);
                } else {
                    let mut nowhere: Cwd = None;
                    command(&inner, &mut nowhere, cx.stdin, cx.text, cx.depth + 1, out);
                }
                return None;
            }
        }
        "vi" | "vim" | "nvim" | "nano" | "emacs" | "ed" | "ex" | "code" | "subl" | "hx" => {
            // An editor command given on the line that filters through or runs the shell
            // (`-c '!rm ...'`, `+'!...'`, `-c 'r !...'`) runs that command.
            for (k, a) in args.iter().enumerate() {
                let given = match a.text.as_str() {
                    "-c" | "--cmd" => args.get(k + 1).map(|x| x.text.as_str()),
                    t => t.strip_prefix('+'),
                };
                if let Some((_, body)) = given.and_then(|g| g.split_once('!')) {
                    parse_in(body, here.clone(), cx.depth + 1, out);
                }
            }
            let s = options(args, "", &[], false);
            for w in s
                .words(args)
                .into_iter()
                .filter(|w| !w.text.starts_with('+'))
            {
                cx.eff(out, Op::Write, here, w);
            }
            true
        }
        "source" | "." => {
            let from = args.first();
            if from.is_some_and(|a| a.dynamic || a.text.starts_with("/dev/")) {
                out.opaque(cx.text, "it runs a script built at run time");
            }
            false
        }
        // `crontab FILE` or `crontab -` installs jobs that run later; `-l` lists them.
        "crontab" => {
            if !args.iter().any(|a| a.text == "-l") {
                out.opaque(
                    cx.text,
                    "it installs jobs that run later, which the gate does not read",
                );
            }
            true
        }
        // `rails runner CODE` runs Ruby code in the application.
        "rails"
            if args
                .first()
                .is_some_and(|a| a.text == "runner" || a.text == "r") =>
        {
            let code = args.get(1).map(|a| a.text.as_str()).unwrap_or_default();
            if !opaque::plainly_read_only(code) {
                out.opaque(
                    cx.text,
                    "it runs inline Ruby code, which the gate does not read",
                );
            }
            true
        }
        "at" | "batch" => match cx.stdin {
            Stdin::Text(t) => {
                out.p.known.push(cx.text.to_string());
                parse_in(t, here.clone(), cx.depth + 1, out);
                return None;
            }
            _ => {
                out.opaque(cx.text, "it runs later a job it reads from elsewhere");
                false
            }
        },
        n if opaque::language(n).is_some() => {
            let texts = texts(args);
            let lang = opaque::language(n).unwrap_or("interpreter");
            // Inline code, or code on standard input (no script named: `python3 -`).
            let from_stdin = texts.iter().all(|a| a.starts_with('-'));
            let code = match opaque::inline_code(n, &texts) {
                Some((_, c)) => Some(Some(c.to_string())),
                None if from_stdin => match cx.stdin {
                    Stdin::Text(t) => Some(Some(t.clone())),
                    Stdin::Unknown => Some(None),
                    Stdin::Tty => None,
                },
                None => None,
            };
            match code {
                Some(Some(c)) if opaque::plainly_read_only(&c) => true,
                Some(Some(_)) => {
                    out.opaque(
                        cx.text,
                        &format!("it runs inline {lang} code, which the gate does not read"),
                    );
                    true
                }
                Some(None) => {
                    out.opaque(
                        cx.text,
                        &format!("it runs {lang} code it reads from a pipe, built at run time"),
                    );
                    true
                }
                None => false,
            }
        }
        "eval" => {
            let body: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
            out.p.known.push(cx.text.to_string());
            parse_in(&body.join(" "), here.clone(), cx.depth + 1, out);
            return None;
        }
        // What a trap or an alias will run is a command line too.
        "trap" => {
            out.p.known.push(cx.text.to_string());
            if let Some(body) = args.first().filter(|a| !a.text.starts_with('-')) {
                parse_in(&body.text, here.clone(), cx.depth + 1, out);
            }
            return None;
        }
        "alias" => {
            out.p.known.push(cx.text.to_string());
            for a in args {
                if let Some((_, body)) = a.text.split_once('=') {
                    parse_in(body, here.clone(), cx.depth + 1, out);
                }
            }
            return None;
        }
        // printf's format fills its `%` places from the words after it: what it prints is not
        // its words as written, so its output is unknown.
        "printf" if args.first().is_some_and(|f| f.text.contains('%')) => {
            out.p.known.push(cx.text.to_string());
            return None;
        }
        "echo" | "printf" => {
            out.p.known.push(cx.text.to_string());
            let said: Vec<&str> = args
                .iter()
                .filter(|a| !(name == "echo" && matches!(a.text.as_str(), "-n" | "-e" | "-E")))
                .map(|a| a.text.as_str())
                .collect();
            let said = said.join(" ");
            // printf (and `echo -e`) turn `\n` and `\t` into line breaks and tabs.
            let escapes = name == "printf" || args.first().is_some_and(|a| a.text == "-e");
            return Some(if escapes {
                said.replace("\\n", "\n").replace("\\t", "\t")
            } else {
                said
            });
        }
        n => READ_ONLY.contains(&n),
    };
    done(known, cx, out)
}

/// Whether perl's options edit files in place (`-i`, `-pi`, `-i.bak`): what [`perl`] reads.
fn in_place(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| a.starts_with('-') && !a.starts_with("--"))
        .any(|a| {
            // `-i`, `-pi`, `-i.bak`: switches without arguments, then `i`.
            let flags = &a[1..];
            flags.find('i').is_some_and(|at| {
                flags[..at]
                    .chars()
                    .all(|c| matches!(c, 'p' | 'n' | 'l' | 'a' | 's' | 'w' | 'W' | 'X' | 'T'))
            })
        })
}

/// The texts of a command's words.
fn texts(args: &[Word]) -> Vec<String> {
    args.iter().map(|a| a.text.clone()).collect()
}

/// The command `docker|podman exec`, `docker compose exec`, `kubectl exec ... --` or
/// `ssh HOST` runs elsewhere; empty when there is none.
fn elsewhere(name: &str, args: &[Word]) -> Vec<Word> {
    let text = |k: usize| args.get(k).map_or("", |w| w.text.as_str());
    let after = |from: usize, short: &str, long: &[&str]| -> Vec<Word> {
        let rest = args.get(from..).unwrap_or_default();
        let s = options(rest, short, long, true);
        rest.get(s.first_operand(rest.len()) + 1..)
            .unwrap_or_default()
            .to_vec()
    };
    const EXEC_LONG: &[&str] = &["env", "user", "workdir", "env-file", "detach-keys", "index"];
    match name {
        "ssh" => after(0, "bcDEeFIiJLlmOopQRSWw", &[]),
        "kubectl" => match args.iter().position(|w| w.text == "--") {
            Some(k) if text(0) == "exec" => args.get(k + 1..).unwrap_or_default().to_vec(),
            _ => Vec::new(),
        },
        _ if text(0) == "exec" => after(1, "euw", EXEC_LONG),
        _ if text(0) == "compose" && text(1) == "exec" => after(2, "euw", EXEC_LONG),
        _ => Vec::new(),
    }
}

fn done(known: bool, cx: &Cx, out: &mut Acc) -> Option<String> {
    if known {
        out.p.known.push(cx.text.to_string());
    } else {
        out.p.unknown.push(cx.text.to_string());
        if named_by_expansion(cx.text) {
            out.p.unparseable = true;
        }
    }
    None
}

// ------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------

struct Opt {
    name: String,
    value: Option<Word>,
}

struct Split {
    opts: Vec<Opt>,
    operands: Vec<usize>,
}

impl Split {
    fn has(&self, name: &str) -> bool {
        self.opts.iter().any(|o| o.name == name)
    }

    fn value(&self, names: &[&str]) -> Option<&Word> {
        self.opts
            .iter()
            .rev()
            .find(|o| names.contains(&o.name.as_str()))
            .and_then(|o| o.value.as_ref())
    }

    fn first_operand(&self, len: usize) -> usize {
        self.operands.first().copied().unwrap_or(len)
    }

    fn words<'w>(&self, args: &'w [Word]) -> Vec<&'w Word> {
        self.operands.iter().filter_map(|&k| args.get(k)).collect()
    }
}

/// Splits arguments into options and operands, as getopt does: `short_arg` are the short
/// options that take a value (attached or the next word), `long_arg` the long options that
/// take the next word when not written `--name=value`; `--` ends the options. `posix`: the
/// first operand ends the options (a prefix such as sudo, whose command follows).
fn options(args: &[Word], short_arg: &str, long_arg: &[&str], posix: bool) -> Split {
    let mut s = Split {
        opts: Vec::new(),
        operands: Vec::new(),
    };
    let mut k = 0;
    let mut ended = false;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if ended || w.dynamic || !t.starts_with('-') || t == "-" {
            if posix {
                s.operands.extend(k..args.len());
                break;
            }
            s.operands.push(k);
            k += 1;
            continue;
        }
        if t == "--" {
            ended = true;
            k += 1;
            if posix {
                s.operands.extend(k..args.len());
                break;
            }
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(w.tail(t.chars().count() - v.chars().count()))),
                None => (long, None),
            };
            let value = if value.is_none() && long_arg.contains(&name) {
                k += 1;
                args.get(k).cloned()
            } else {
                value
            };
            s.opts.push(Opt {
                name: name.to_string(),
                value,
            });
            k += 1;
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (ci, &c) in chars.iter().enumerate() {
            if short_arg.contains(c) {
                let value = if ci + 1 < chars.len() {
                    Some(w.tail(ci + 2))
                } else {
                    k += 1;
                    args.get(k).cloned()
                };
                s.opts.push(Opt {
                    name: c.to_string(),
                    value,
                });
                break;
            }
            s.opts.push(Opt {
                name: c.to_string(),
                value: None,
            });
        }
        k += 1;
    }
    s
}

// ------------------------------------------------------------------------------------------
// Paths
// ------------------------------------------------------------------------------------------

/// Devices a write to changes nothing.
fn is_device(p: &str) -> bool {
    matches!(
        p,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "/dev/zero"
    ) || p.starts_with("/dev/fd/")
}

/// What a path word names, from directory `cwd`; `None` for nothing (an empty word, a device).
fn resolve(cwd: &Cwd, w: &Word) -> Option<Target> {
    if w.dynamic {
        return Some(Target::Anything);
    }
    if w.text.is_empty() {
        return None;
    }
    let abs = w.text.starts_with('/');
    let norm = |p: &str| -> Option<String> {
        if p.starts_with('/') {
            Some(normalise("", p))
        } else {
            cwd.as_ref().map(|c| normalise(c, p))
        }
    };
    match w.glob_at {
        Some(g) => {
            let lit: String = w.text.chars().take(g).collect();
            let cut = lit.rfind('/').map_or(0, |k| k + 1);
            let dir = lit.get(..cut).unwrap_or("");
            let rest: String = w.text.chars().skip(dir.chars().count()).collect();
            let dir = if dir.is_empty() { "." } else { dir };
            let Some(d) = norm(dir) else {
                return Some(Target::Anything);
            };
            let mut comps: Vec<&str> = rest
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            if comps.contains(&"..") {
                comps = vec!["**"];
            }
            if comps.is_empty() {
                return Some(Target::Path(d));
            }
            Some(Target::Glob(join(&d, &comps.join("/"))))
        }
        None => {
            let p = if abs {
                normalise("", &w.text)
            } else {
                match cwd {
                    Some(c) => normalise(c, &w.text),
                    None => return Some(Target::Anything),
                }
            };
            if is_device(&p) {
                None
            } else {
                Some(Target::Path(p))
            }
        }
    }
}

/// `rest` under the normalised directory `dir`.
fn join(dir: &str, rest: &str) -> String {
    match dir {
        "." | "" => rest.to_string(),
        "/" => format!("/{rest}"),
        _ => format!("{dir}/{rest}"),
    }
}

/// Everything under a target.
fn under(t: &Target) -> Target {
    match t {
        Target::Path(p) => Target::Glob(join(p, "**")),
        Target::Glob(g) if g.ends_with("**") => Target::Glob(g.clone()),
        Target::Glob(g) => Target::Glob(join(g, "**")),
        other => other.clone(),
    }
}

/// Where `src` lands when copied, moved or linked into directory `dest`.
fn into(dest: &Target, src: &Word) -> Option<Target> {
    match dest {
        Target::Anything => Some(Target::Anything),
        Target::Glob(g) => Some(Target::Glob(join(g, "**"))),
        Target::Path(d) => {
            let t = src.text.as_str();
            if t == "." || t.ends_with("/.") {
                return Some(Target::Path(d.clone()));
            }
            if src.dynamic || src.glob_at.is_some() {
                return Some(Target::Glob(join(d, "*")));
            }
            let n = normalise("", t);
            let b = n.rsplit('/').next().unwrap_or("");
            if b.is_empty() || b == "." || b == ".." {
                return None;
            }
            Some(Target::Path(join(d, b)))
        }
        _ => None,
    }
}

/// The sources and the destination of a copy or move: `-t DIR`, else the last operand.
fn split_dest<'w>(ops: Vec<&'w Word>, dir: Option<&'w Word>) -> (Vec<&'w Word>, Option<&'w Word>) {
    if dir.is_some() {
        return (ops, dir);
    }
    match ops.split_last() {
        Some((last, rest)) if !rest.is_empty() => (rest.to_vec(), Some(*last)),
        _ => (ops, None),
    }
}

/// The writes of a copy, move or link to `dest`: the destination itself, and where each source
/// lands in it (with everything below, for a recursive copy). `whole`: `-T`, the destination
/// is the target itself; `contents`: a source ending in `/` copies its contents (rsync).
#[allow(clippy::too_many_arguments)]
fn landing(
    cx: &Cx,
    out: &mut Acc,
    cwd: &Cwd,
    dest: &Word,
    srcs: &[&Word],
    whole: bool,
    recursive: bool,
    contents: bool,
) {
    let Some(d) = resolve(cwd, dest) else { return };
    out.put(Op::Write, d.clone(), cx.text);
    if whole {
        if recursive {
            out.put(Op::Write, under(&d), cx.text);
        }
        return;
    }
    for s in srcs {
        let t = if contents && s.text.ends_with('/') {
            Some(d.clone())
        } else {
            into(&d, s)
        };
        if let Some(t) = t {
            if recursive {
                out.put(Op::Write, under(&t), cx.text);
            }
            out.put(Op::Write, t, cx.text);
        }
    }
}

/// The directory `cd WORD` moves to from `cwd`.
fn cd_to(cwd: &Cwd, w: Option<&Word>) -> Cwd {
    let w = w?;
    if w.dynamic || w.glob_at.is_some() || w.text.is_empty() {
        return None;
    }
    if w.text.starts_with('/') {
        Some(normalise("", &w.text))
    } else {
        cwd.as_ref().map(|c| normalise(c, &w.text))
    }
}

/// The repository a git command works on: the project when the directory is inside it.
fn repo_root(cwd: &Cwd) -> Target {
    match cwd {
        Some(c) if c.starts_with('/') => Target::Path(normalise("", c)),
        Some(_) => Target::Path(".".into()),
        None => Target::Anything,
    }
}

/// How an effect's path stands to a prohibited path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rel {
    Disjoint,
    Equal,
    Under,
    Above,
}

fn split_path(p: &str) -> (bool, Vec<&str>) {
    (
        p.starts_with('/'),
        p.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect(),
    )
}

fn has_glob(c: &str) -> bool {
    c.contains(['*', '?', '[', '{'])
}

fn comp_match(a: &str, b: &str) -> bool {
    match (has_glob(a), has_glob(b)) {
        (false, false) => a == b,
        (true, false) => fnmatch(a, b),
        (false, true) => fnmatch(b, a),
        (true, true) => true,
    }
}

fn rel_lists(e: &[&str], p: &[&str]) -> Rel {
    for (a, b) in e.iter().zip(p.iter()) {
        if *a == "**" || *b == "**" {
            return Rel::Equal;
        }
        if !comp_match(a, b) {
            return Rel::Disjoint;
        }
    }
    match e.len().cmp(&p.len()) {
        std::cmp::Ordering::Equal => Rel::Equal,
        std::cmp::Ordering::Greater => Rel::Under,
        std::cmp::Ordering::Less => Rel::Above,
    }
}

/// How the (normalised, maybe glob) path `e` stands to the prohibited path `p`.
fn relation(e: &str, p: &str) -> Rel {
    let (ea, ec) = split_path(e);
    let (pa, pc) = split_path(p);
    if ea && ec.is_empty() {
        return if pa && pc.is_empty() {
            Rel::Equal
        } else {
            Rel::Above
        };
    }
    let e_up = ec.iter().take_while(|c| **c == "..").count();
    let p_up = pc.iter().take_while(|c| **c == "..").count();
    if !ea && e_up > 0 && e_up == ec.len() {
        return Rel::Above;
    }
    if let (false, [only]) = (pa, pc.as_slice()) {
        if has_glob(only) {
            // "never delete *.sql": a file name pattern, wherever the file is; a path whose
            // last part has no extension may be a directory holding such files.
            return match ec.last() {
                Some(last) if comp_match(last, only) => Rel::Equal,
                Some(last) if !last.contains('.') || *last == "**" => Rel::Above,
                None => Rel::Above,
                _ => Rel::Disjoint,
            };
        }
        if *only != ".." && !only.contains('.') {
            // "the migrations folder": a bare directory name, wherever it is.
            if let Some(at) = ec.iter().position(|c| c == only) {
                return if at + 1 == ec.len() {
                    Rel::Equal
                } else {
                    Rel::Under
                };
            }
        }
    }
    if ea == pa && e_up == p_up {
        return rel_lists(&ec, &pc);
    }
    if !pa && p_up == 0 {
        // A path outside the project's frame: the project may be anywhere in it.
        let tail = ec.get(e_up..).unwrap_or_default();
        for s in 0..tail.len() {
            let from = tail.get(s..).unwrap_or_default();
            if from.first() == Some(&"**") {
                // Anything below an outside directory is not taken for the project.
                break;
            }
            let r = rel_lists(from, &pc);
            if r != Rel::Disjoint {
                return r;
            }
        }
    }
    Rel::Disjoint
}

/// Whether `s` matches the glob `pat` (`*`, `?`, `[...]`; `{...}` matches like `*`).
fn fnmatch(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if let Some(&c) = p.get(pi) {
            match c {
                '*' => {
                    star = Some((pi + 1, ti));
                    pi += 1;
                    continue;
                }
                '{' => {
                    // Skip the braces, then behave as a star.
                    let close = p.iter().skip(pi).position(|&d| d == '}').map(|k| pi + k);
                    if let Some(cl) = close {
                        star = Some((cl + 1, ti));
                        pi = cl + 1;
                        continue;
                    }
                }
                _ => {}
            }
            if let Some(&x) = t.get(ti) {
                let (ok, width) = match c {
                    '?' => (true, 1),
                    '[' => class_match(&p, pi, x),
                    '{' => (c == x, 1),
                    _ => (c == x, 1),
                };
                if ok {
                    pi += width;
                    ti += 1;
                    continue;
                }
            }
        } else if ti >= t.len() {
            return true;
        }
        match star {
            Some((sp, st)) if st < t.len() => {
                star = Some((sp, st + 1));
                pi = sp;
                ti = st + 1;
            }
            _ => return false,
        }
    }
}

/// Whether `x` is in the class starting at `p[at] == '['`, and the class's width (an
/// unterminated `[` is a literal).
fn class_match(p: &[char], at: usize, x: char) -> (bool, usize) {
    let mut k = at + 1;
    let negate = matches!(p.get(k), Some('!' | '^'));
    if negate {
        k += 1;
    }
    let first = k;
    let mut hit = false;
    loop {
        let Some(&c) = p.get(k) else {
            return (x == '[', 1);
        };
        if c == ']' && k > first {
            break;
        }
        if p.get(k + 1) == Some(&'-') && p.get(k + 2).is_some_and(|d| *d != ']') {
            let hi = p.get(k + 2).copied().unwrap_or(c);
            if c <= x && x <= hi {
                hit = true;
            }
            k += 3;
        } else {
            if c == x {
                hit = true;
            }
            k += 1;
        }
    }
    (hit != negate, k + 1 - at)
}

// ------------------------------------------------------------------------------------------
// Commands
// ------------------------------------------------------------------------------------------

/// The last component of a command word (`/bin/rm` is `rm`).
fn base(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

fn is_assignment(t: &str) -> bool {
    match t.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn rsync(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let s = options(
        args,
        "eTfBM",
        &[
            "exclude",
            "include",
            "filter",
            "exclude-from",
            "include-from",
            "files-from",
            "rsync-path",
            "temp-dir",
            "backup-dir",
            "compare-dest",
            "copy-dest",
            "link-dest",
            "chmod",
            "chown",
            "usermap",
            "groupmap",
            "port",
            "timeout",
            "contimeout",
            "log-file",
            "password-file",
            "max-size",
            "min-size",
            "bwlimit",
            "partial-dir",
            "suffix",
            "rsh",
            "out-format",
            "sockopts",
            "iconv",
            "info",
            "debug",
            "max-delete",
            "block-size",
            "address",
            "modify-window",
            "checksum-choice",
            "compress-choice",
            "skip-compress",
        ],
        false,
    );
    // A dry run (`-n`, `--dry-run`) changes nothing.
    if s.has("n") || s.has("dry-run") {
        return;
    }
    let recursive = ["r", "a", "recursive", "archive"].iter().any(|n| s.has(n));
    let delete = s
        .opts
        .iter()
        .any(|o| o.name.starts_with("delete") || o.name == "del");
    let remove_src = s.has("remove-source-files");
    let (srcs, dest) = split_dest(s.words(args), None);
    if remove_src {
        for w in srcs.iter().filter(|w| !is_remote(&w.text)) {
            cx.eff(out, Op::Delete, cwd, w);
            cx.eff(out, Op::Move, cwd, w);
        }
    }
    let Some(d) = dest else { return };
    if is_remote(&d.text) {
        // What a remote destination holds, and what `--delete` removes there, the line cannot
        // tell, as for `ssh host CMD`: opaque (the host may be this machine).
        out.opaque(
            cx.text,
            "it writes to a remote destination, which the line cannot see",
        );
        return;
    }
    landing(cx, out, cwd, d, &srcs, false, recursive, true);
    if delete {
        if let Some(t) = resolve(cwd, d) {
            out.put(Op::Delete, under(&t), cx.text);
        }
    }
}

/// `host:path`, `user@host:path`, `rsync://...`.
fn is_remote(t: &str) -> bool {
    t.starts_with("rsync://")
        || t.split_once(':')
            .is_some_and(|(h, _)| !h.is_empty() && !h.contains('/'))
}

fn modes(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let mut ops: Vec<&Word> = Vec::new();
    let (mut reference, mut recursive, mut ended) = (false, false, false);
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        let t = w.text.as_str();
        if !ended && !w.dynamic {
            if t == "--" {
                ended = true;
                continue;
            }
            if let Some(long) = t.strip_prefix("--") {
                if long.starts_with("reference") {
                    reference = true;
                    if !long.contains('=') {
                        k += 1;
                    }
                }
                if long == "recursive" {
                    recursive = true;
                }
                continue;
            }
            let flags = t.strip_prefix('-').unwrap_or("");
            if !flags.is_empty() && flags.chars().all(|c| "cfvRhHLP".contains(c)) {
                recursive |= flags.contains('R');
                continue;
            }
        }
        ops.push(w);
    }
    let skip = usize::from(!reference);
    for w in ops.into_iter().skip(skip) {
        if let Some(t) = resolve(cwd, w) {
            if recursive {
                out.put(Op::Write, under(&t), cx.text);
            }
            out.put(Op::Write, t, cx.text);
        }
    }
}

fn sed(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let (mut in_place, mut script_given, mut ended) = (false, false, false);
    let mut ops: Vec<&Word> = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        let t = w.text.as_str();
        if ended || w.dynamic || !t.starts_with('-') || t == "-" {
            ops.push(w);
            continue;
        }
        if t == "--" {
            ended = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    script_given = true;
                    if !has_value {
                        k += 1;
                    }
                }
                "line-length" if !has_value => k += 1,
                _ => {}
            }
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (ci, c) in chars.iter().enumerate() {
            let last = ci + 1 == chars.len();
            match c {
                'i' => {
                    in_place = true;
                    if last && args.get(k).is_some_and(|x| x.text.is_empty()) {
                        k += 1;
                    }
                    break;
                }
                'e' | 'f' => {
                    script_given = true;
                    if last {
                        k += 1;
                    }
                    break;
                }
                'l' => {
                    if last {
                        k += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    let mut scripts: Vec<&str> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        if a.text == "-e" || a.text == "--expression" {
            scripts.extend(args.get(k + 1).map(|x| x.text.as_str()));
        } else if let Some(v) = a.text.strip_prefix("--expression=") {
            scripts.push(v);
        }
    }
    if !script_given {
        scripts.extend(ops.first().map(|w| w.text.as_str()));
    }
    if scripts.iter().any(|s| sed_runs(s)) {
        out.opaque(
            cx.text,
            "sed runs a shell command from its script (the `e` command or flag)",
        );
    }
    if in_place {
        for w in ops.into_iter().skip(usize::from(!script_given)) {
            cx.eff(out, Op::Write, cwd, w);
        }
    }
}

/// Whether a sed script runs a shell command: an `e` command (after an optional address) or
/// an `s` command with the `e` flag.
fn sed_runs(script: &str) -> bool {
    script.split([';', '\n']).any(|cmd| {
        let c = cmd.trim_start_matches(|c: char| {
            c.is_ascii_digit() || c.is_whitespace() || matches!(c, '$' | ',' | '!' | '~')
        });
        // An address by a pattern: `/re/e ...`.
        let c = match c.strip_prefix('/') {
            Some(rest) => rest.split_once('/').map_or("", |(_, t)| t.trim_start()),
            None => c,
        };
        if c.starts_with('e') {
            return true;
        }
        let Some(body) = c.strip_prefix('s') else {
            return false;
        };
        let Some(delim) = body.chars().next() else {
            return false;
        };
        let mut parts = Vec::new();
        let mut cur = String::new();
        let mut escaped = false;
        for ch in body.chars().skip(1) {
            if escaped {
                escaped = false;
                cur.push(ch);
            } else if ch == '\\' {
                escaped = true;
            } else if ch == delim {
                parts.push(std::mem::take(&mut cur));
            } else {
                cur.push(ch);
            }
        }
        parts.len() >= 2 && cur.contains('e')
    })
}

/// `perl -i`: writes its file operands. Perl without `-i` is an unknown program.
fn perl(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let (mut in_place, mut code_given) = (false, false);
    let mut ops: Vec<&Word> = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        let t = w.text.as_str();
        if !ops.is_empty() || w.dynamic || !t.starts_with('-') || t == "-" {
            ops.push(w);
            continue;
        }
        if t == "--" {
            ops.extend(args.get(k..).unwrap_or_default());
            break;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (ci, c) in chars.iter().enumerate() {
            let last = ci + 1 == chars.len();
            match c {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    code_given = true;
                    if last {
                        k += 1;
                    }
                    break;
                }
                'I' | 'M' | 'm' => {
                    if last {
                        k += 1;
                    }
                    break;
                }
                'l' | '0' | 'x' | 'C' | 'd' | 'D' | 'F' | 'V' => break,
                _ => {}
            }
        }
    }
    if !in_place {
        return false;
    }
    for w in ops.into_iter().skip(usize::from(!code_given)) {
        cx.eff(out, Op::Write, cwd, w);
    }
    true
}

fn awk(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let (mut in_place, mut prog_given) = (false, false);
    let mut ops: Vec<&Word> = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        let t = w.text.as_str();
        if !ops.is_empty() || w.dynamic || !t.starts_with('-') || t == "-" {
            ops.push(w);
            continue;
        }
        if t == "--" {
            ops.extend(args.get(k..).unwrap_or_default());
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let takes = matches!(
                name,
                "include" | "file" | "source" | "assign" | "field-separator" | "exec" | "load"
            );
            let value = match value {
                Some(v) => Some(v),
                None if takes => {
                    k += 1;
                    args.get(k - 1).map(|x| x.text.clone())
                }
                None => None,
            };
            match name {
                "include" => in_place |= value.is_some_and(|v| v.starts_with("inplace")),
                "file" | "source" | "exec" => prog_given = true,
                _ => {}
            }
            continue;
        }
        let mut chars = t.chars().skip(1);
        let Some(c) = chars.next() else { continue };
        let attached: String = chars.collect();
        let takes = matches!(c, 'f' | 'e' | 'E' | 'i' | 'v' | 'F' | 'l');
        let value = if !takes {
            None
        } else if attached.is_empty() {
            k += 1;
            args.get(k - 1).map(|x| x.text.clone())
        } else {
            Some(attached)
        };
        match c {
            'f' | 'e' | 'E' => prog_given = true,
            'i' => in_place |= value.is_some_and(|v| v.starts_with("inplace")),
            _ => {}
        }
    }
    if !prog_given {
        if let Some(prog) = ops.first() {
            awk_runs(&prog.text, cwd, cx, out);
        }
    } else {
        out.opaque(
            cx.text,
            "awk runs a program from a file or an option the line does not show",
        );
    }
    if in_place {
        for w in ops
            .into_iter()
            .skip(usize::from(!prog_given))
            .filter(|w| !is_assignment(&w.text))
        {
            cx.eff(out, Op::Write, cwd, w);
        }
    }
}

/// What an awk program runs in a shell: each `system("...")` of a literal command is read as a
/// line; a `system` of anything else, a pipe to or from a command (`print | "cmd"`,
/// `"cmd" | getline`) or output to a file (`print > "f"`) makes it opaque.
fn awk_runs(prog: &str, cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let mut rest = prog;
    while let Some(at) = rest.find("system") {
        let after = rest[at + "system".len()..].trim_start();
        let literal = after
            .strip_prefix('(')
            .map(str::trim_start)
            .and_then(|a| a.strip_prefix('"'))
            .and_then(|a| a.split_once('"'))
            .filter(|(_, tail)| tail.trim_start().starts_with(')'));
        match literal {
            Some((body, _)) if !body.contains('\\') => {
                parse_in(body, cwd.clone(), cx.depth + 1, out)
            }
            _ => out.opaque(
                cx.text,
                "awk's system() runs a command the line does not spell out",
            ),
        }
        rest = &rest[at + "system".len()..];
    }
    let piped = prog.replace("||", "").contains('|');
    let written = prog.contains("> \"") || prog.contains(">\"") || prog.contains(">>");
    if piped || written {
        out.opaque(
            cx.text,
            "awk pipes to or from a command, or writes a file, inside its program",
        );
    }
}

fn find(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let mut k = 0;
    while let Some(w) = args.get(k) {
        match w.text.as_str() {
            "-H" | "-L" | "-P" => k += 1,
            "-D" => k += 2,
            t if t.starts_with("-O") => k += 1,
            _ => break,
        }
    }
    let mut paths: Vec<Word> = Vec::new();
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if (t.starts_with('-') && !w.dynamic) || matches!(t, "(" | "!" | ")") {
            break;
        }
        paths.push(w.clone());
        k += 1;
    }
    if paths.is_empty() {
        paths.push(Word::synthetic(".", false, false));
    }
    let mut delete = false;
    let mut execs: Vec<Vec<Word>> = Vec::new();
    while let Some(w) = args.get(k) {
        match w.text.as_str() {
            "-delete" => {
                delete = true;
                k += 1;
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let mut e = Vec::new();
                k += 1;
                while let Some(x) = args.get(k) {
                    k += 1;
                    if x.text == ";" || x.text == "+" {
                        break;
                    }
                    e.push(x.clone());
                }
                execs.push(e);
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(x) = args.get(k + 1) {
                    cx.eff(out, Op::Write, cwd, x);
                }
                k += if w.text == "-fprintf" { 3 } else { 2 };
            }
            _ => k += 1,
        }
    }
    if delete {
        for p in &paths {
            cx.eff(out, Op::Delete, cwd, p);
        }
    }
    for e in &execs {
        for p in &paths {
            let below = Word::synthetic(&format!("{}/**", p.text), p.dynamic, true);
            let words: Vec<Word> = e.iter().map(|x| fill(x, "{}", &below)).collect();
            let mut c = cwd.clone();
            command(&words, &mut c, &Stdin::Tty, cx.text, cx.depth + 1, out);
        }
    }
}

/// git's subcommands that change no file the table tracks.
const GIT_QUIET: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "add",
    "commit",
    "fetch",
    "pull",
    "merge",
    "rebase",
    "stash",
    "tag",
    "remote",
    "config",
    "blame",
    "annotate",
    "grep",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "rev-parse",
    "rev-list",
    "describe",
    "shortlog",
    "reflog",
    "bisect",
    "cherry-pick",
    "revert",
    "init",
    "clone",
    "worktree",
    "submodule",
    "apply",
    "am",
    "format-patch",
    "help",
    "version",
    "archive",
    "gc",
    "fsck",
    "notes",
    "cherry",
    "show-ref",
    "for-each-ref",
    "cat-file",
    "whatchanged",
    "range-diff",
    "sparse-checkout",
    "maintenance",
    "lfs",
    "blame",
    "difftool",
    "mergetool",
    "request-pull",
    "send-email",
    "bundle",
    "count-objects",
    "verify-commit",
    "verify-tag",
    "name-rev",
    "var",
    "check-ignore",
    "check-attr",
    "update-index",
    "write-tree",
    "commit-tree",
    "hash-object",
    "symbolic-ref",
    "update-ref",
    "merge-base",
    "citool",
    "gui",
    "instaweb",
    "prune",
    "repack",
    "shell",
    "credential",
];

/// git: the subcommands that delete, move or discard files, push, or delete branches.
fn git(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let mut k = 0;
    let mut here = cwd.clone();
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if !t.starts_with('-') || w.dynamic {
            break;
        }
        match t {
            "-C" => {
                here = cd_to(&here, args.get(k + 1));
                k += 2;
            }
            // The work tree is where a command's paths are: read as `-C` is.
            "--work-tree" | "--git-dir" => {
                here = cd_to(&here, args.get(k + 1));
                k += 2;
            }
            t if t.starts_with("--work-tree=") || t.starts_with("--git-dir=") => {
                let dir = Word::synthetic(t.split_once('=').map_or("", |x| x.1), w.dynamic, false);
                here = cd_to(&here, Some(&dir));
                k += 1;
            }
            "-c" | "--namespace" | "--super-prefix" | "--config-env" => k += 2,
            _ => k += 1,
        }
    }
    let Some(sub) = args.get(k) else { return true };
    let rest = args.get(k + 1..).unwrap_or_default();
    // An alias the line itself defined (`git config alias.p push`) runs what it stands for.
    if let Some(body) = out
        .git_aliases
        .iter()
        .find(|(n, _)| *n == sub.text)
        .map(|x| x.1.clone())
    {
        if out.spend(1) && cx.depth < MAX_DEPTH {
            let mut words: Vec<Word> = body
                .split_whitespace()
                .map(|t| Word::synthetic(t, false, false))
                .collect();
            words.extend(rest.iter().cloned());
            let inner = Cx {
                text: cx.text,
                depth: cx.depth + 1,
                stdin: cx.stdin,
            };
            return git(&words, &here, &inner, out);
        }
        out.p.unparseable = true;
        return false;
    }
    match sub.text.as_str() {
        "config" => {
            let ops: Vec<&Word> = rest.iter().filter(|w| !w.text.starts_with('-')).collect();
            if let [key, value, ..] = ops.as_slice() {
                if let Some(name) = key.text.strip_prefix("alias.") {
                    if value.text.starts_with('!') || value.dynamic {
                        out.opaque(cx.text, "it defines a git alias that runs a shell command");
                    } else {
                        out.git_aliases.push((name.to_string(), value.text.clone()));
                    }
                }
            }
        }
        "rm" => {
            let s = options(rest, "", &["pathspec-from-file"], false);
            if !(s.has("cached") || s.has("n") || s.has("dry-run")) {
                if s.value(&["pathspec-from-file"]).is_some() {
                    out.put(Op::Delete, Target::Anything, cx.text);
                }
                for w in s.words(rest) {
                    cx.eff(out, Op::Delete, &here, w);
                }
            }
        }
        "mv" => {
            let s = options(rest, "", &[], false);
            if !(s.has("n") || s.has("dry-run")) {
                let (srcs, dest) = split_dest(s.words(rest), None);
                for w in &srcs {
                    cx.eff(out, Op::Delete, &here, w);
                    cx.eff(out, Op::Move, &here, w);
                }
                if let Some(d) = dest {
                    landing(cx, out, &here, d, &srcs, false, false, false);
                }
            }
        }
        "clean" => {
            let s = options(rest, "e", &["exclude"], false);
            if !(s.has("n") || s.has("dry-run")) {
                let ops = s.words(rest);
                if ops.is_empty() {
                    cx.eff(out, Op::Delete, &here, &Word::synthetic(".", false, false));
                }
                for w in ops {
                    cx.eff(out, Op::Delete, &here, w);
                }
            }
        }
        "checkout" => {
            let dd = rest.iter().position(|w| w.text == "--");
            let before = dd.map_or(rest, |d| rest.get(..d).unwrap_or_default());
            let s = options(before, "bB", &["orphan", "conflict"], false);
            let branching = s.has("b") || s.has("B") || s.has("orphan");
            if s.has("f") || s.has("force") {
                out.put(Op::Discard, repo_root(&here), cx.text);
            }
            match dd {
                Some(d) => {
                    for w in rest.get(d + 1..).unwrap_or_default() {
                        cx.eff(out, Op::Discard, &here, w);
                    }
                }
                None if !branching => {
                    let ops = s.words(before);
                    let skip = usize::from(ops.len() > 1);
                    for w in ops.into_iter().skip(skip) {
                        cx.eff(out, Op::Discard, &here, w);
                    }
                }
                None => {}
            }
        }
        "restore" => {
            let s = options(rest, "s", &["source", "pathspec-from-file"], false);
            let staged = s.has("S") || s.has("staged");
            let worktree = s.has("W") || s.has("worktree");
            if !staged || worktree {
                if s.value(&["pathspec-from-file"]).is_some() {
                    out.put(Op::Discard, Target::Anything, cx.text);
                }
                for w in s.words(rest) {
                    cx.eff(out, Op::Discard, &here, w);
                }
            }
        }
        "reset" => {
            let s = options(rest, "", &[], false);
            if s.has("hard") || s.has("merge") {
                out.put(Op::Discard, repo_root(&here), cx.text);
            }
        }
        "switch" => {
            let s = options(rest, "cC", &[], false);
            if s.has("f") || s.has("force") || s.has("discard-changes") {
                out.put(Op::Discard, repo_root(&here), cx.text);
            }
        }
        "push" | "send-pack" => push(rest, cx, out),
        "branch" => {
            let s = options(rest, "", &[], false);
            if s.has("d") || s.has("D") || s.has("delete") {
                let force = s.has("D") || s.has("f") || s.has("force");
                for w in s.words(rest) {
                    let name = (!w.dynamic).then(|| norm_branch(&w.text));
                    out.put(Op::Discard, Target::Branch { name, force }, cx.text);
                }
            }
        }
        s if GIT_QUIET.contains(&s) => {}
        _ => return false,
    }
    true
}

fn push(rest: &[Word], cx: &Cx, out: &mut Acc) {
    let s = options(
        rest,
        "o",
        &["push-option", "repo", "receive-pack", "exec"],
        false,
    );
    if s.has("n") || s.has("dry-run") {
        return;
    }
    let force = s.has("f")
        || s.opts.iter().any(|o| {
            o.name == "force"
                || o.name.starts_with("force-with-lease")
                || o.name == "force-if-includes"
                || o.name == "mirror"
        });
    let delete = s.has("d") || s.has("delete");
    let ops = s.words(rest);
    let refspecs = ops.get(1..).unwrap_or_default();
    if refspecs.is_empty() {
        if s.has("tags") && !s.has("all") && !s.has("mirror") {
            return;
        }
        let t = Target::Branch {
            name: None,
            force: force || delete,
        };
        out.put(Op::Push, t, cx.text);
        return;
    }
    for r in refspecs {
        let mut f = force || delete;
        let name = if r.dynamic {
            None
        } else {
            let mut t = r.text.as_str();
            if let Some(x) = t.strip_prefix('+') {
                f = true;
                t = x;
            }
            let dst = match t.split_once(':') {
                Some((src, dst)) => {
                    if src.is_empty() {
                        f = true;
                    }
                    dst
                }
                None => t,
            };
            let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
            (!matches!(dst, "" | "HEAD" | "@")).then(|| dst.to_string())
        };
        out.put(Op::Push, Target::Branch { name, force: f }, cx.text);
    }
}

/// A shell: `-c BODY` is parsed; with no script, an echoed standard input is.
fn shell(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let mut k = 0;
    let mut has_c = false;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            k += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                k += 1;
            }
            k += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 && !w.dynamic {
            let flags = t.get(1..).unwrap_or("");
            has_c |= flags.contains('c');
            if flags.contains(['o', 'O']) {
                k += 1;
            }
            k += 1;
            continue;
        }
        break;
    }
    if has_c {
        if let Some(b) = args.get(k) {
            parse_in(&b.text, cwd.clone(), cx.depth + 1, out);
        }
        return true;
    }
    if args.get(k).is_some() {
        return false;
    }
    match cx.stdin {
        Stdin::Text(t) => {
            parse_in(t, cwd.clone(), cx.depth + 1, out);
            true
        }
        Stdin::Unknown => {
            out.opaque(
                cx.text,
                "a shell runs the code it reads from a pipe, built at run time",
            );
            true
        }
        Stdin::Tty => false,
    }
}

/// psql, mysql, mariadb, sqlite3: the SQL on their line or their echoed standard input.
fn sql_client(name: &str, args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let mut built = false;
    let mut sql: Vec<String> = Vec::new();
    match name {
        "psql" => {
            let s = options(
                args,
                "cdfhpUvoLTFRP",
                &[
                    "command",
                    "dbname",
                    "file",
                    "host",
                    "port",
                    "username",
                    "variable",
                    "set",
                    "output",
                    "log-file",
                    "table-attr",
                    "field-separator",
                    "record-separator",
                    "pset",
                ],
                false,
            );
            for o in &s.opts {
                match (o.name.as_str(), &o.value) {
                    ("c" | "command", Some(v)) => {
                        built |= v.dynamic;
                        sql.push(v.text.clone());
                    }
                    ("o" | "output" | "L" | "log-file", Some(v)) => {
                        cx.eff(out, Op::Write, cwd, v);
                    }
                    _ => {}
                }
            }
        }
        "mysql" | "mariadb" => {
            let mut k = 0;
            while let Some(w) = args.get(k) {
                k += 1;
                let t = w.text.as_str();
                if t == "-e" || t == "--execute" {
                    if let Some(v) = args.get(k) {
                        built |= v.dynamic;
                        sql.push(v.text.clone());
                    }
                    k += 1;
                } else if let Some(v) = t.strip_prefix("--execute=") {
                    built |= w.dynamic;
                    sql.push(v.to_string());
                } else if let Some(v) = t.strip_prefix("-e") {
                    built |= w.dynamic;
                    sql.push(v.to_string());
                } else if matches!(t, "-u" | "-h" | "-P" | "-D" | "-S") {
                    k += 1;
                }
            }
        }
        _ => {
            let mut ops: Vec<&Word> = Vec::new();
            let mut k = 0;
            while let Some(w) = args.get(k) {
                k += 1;
                let t = w.text.as_str();
                if t == "-cmd" {
                    if let Some(v) = args.get(k) {
                        built |= v.dynamic;
                        sql.push(v.text.clone());
                    }
                    k += 1;
                } else if matches!(
                    t,
                    "-init"
                        | "-separator"
                        | "-newline"
                        | "-nullvalue"
                        | "-vfs"
                        | "-maxsize"
                        | "-mmap"
                        | "-lookaside"
                        | "-pagecache"
                        | "-heap"
                ) {
                    k += 1;
                } else if !t.starts_with('-') || w.dynamic {
                    ops.push(w);
                }
            }
            built |= ops.iter().skip(1).any(|w| w.dynamic);
            sql.extend(ops.iter().skip(1).map(|w| w.text.clone()));
        }
    }
    if built {
        out.opaque(cx.text, "it runs SQL built at run time");
    }
    if sql.is_empty() {
        match cx.stdin {
            Stdin::Text(t) => sql.push(t.clone()),
            Stdin::Unknown => {
                out.opaque(
                    cx.text,
                    "it runs SQL it reads from a pipe, which the line does not show",
                );
                return true;
            }
            Stdin::Tty => return false,
        }
    }
    let mut understood = true;
    for q in &sql {
        let r = read_sql(q, false);
        for (op, t, _) in r.effects {
            out.put(op, Target::Table(t), cx.text);
        }
        understood &= r.unknown.is_empty();
    }
    understood
}

// ------------------------------------------------------------------------------------------
// SQL
// ------------------------------------------------------------------------------------------

/// The first words that make a line SQL (when it reads as SQL).
const SQL_FIRST: &[&str] = &[
    "drop", "delete", "truncate", "alter", "update", "insert", "create",
];

#[derive(Default)]
struct SqlRead {
    /// (operation, table, statement text).
    effects: Vec<(Op, Option<String>, String)>,
    /// Statements whose effect is not in the table.
    unknown: Vec<String>,
    /// The first statement reads as SQL.
    sql: bool,
}

enum Stmt {
    Effects(Vec<(Op, Option<String>)>),
    Quiet,
    Other,
    NotSql,
}

/// Reads SQL statements. `top`: the text is a whole action line (it must read as SQL from its
/// first statement); else it is known to be SQL (a client's `-c`), and what does not read as
/// SQL is unknown.
fn read_sql(text: &str, top: bool) -> SqlRead {
    let mut r = SqlRead::default();
    // Tables renamed by an earlier statement: (new name, old name). A statement on the new
    // name is one on the table the old name named (`ALTER TABLE users RENAME TO u; DROP TABLE
    // u` drops users).
    let mut renamed: Vec<(String, String)> = Vec::new();
    for (k, st) in split_sql(text).into_iter().enumerate() {
        let toks = sql_tokens(&st);
        let lower: Vec<String> = toks.iter().map(|t| t.to_ascii_lowercase()).collect();
        let pos = |w: &str| lower.iter().position(|t| t == w);
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
        match statement(&toks) {
            Stmt::Effects(v) => {
                for (o, t) in v {
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
            Stmt::Other => r.unknown.push(st.clone()),
            Stmt::NotSql => {
                if k == 0 && top {
                    return r;
                }
                r.unknown.push(st.clone());
            }
        }
        r.sql = true;
    }
    r
}

/// Statements split on `;` outside quotes, comments dropped, trimmed, empty ones dropped.
fn split_sql(text: &str) -> Vec<String> {
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
fn sql_tokens(st: &str) -> Vec<String> {
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

fn is_sql_name(t: &str) -> bool {
    !t.is_empty() && !matches!(t, "," | "(" | ")" | "'")
}

/// Names separated by commas from `i`; and the index after them.
fn names_at(toks: &[String], mut i: usize) -> (Vec<String>, usize) {
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

fn statement(toks: &[String]) -> Stmt {
    let kw = |i: usize| toks.get(i).map_or("", String::as_str);
    match kw(0) {
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
            let all =
                cond.is_empty() || matches!(cond.as_slice(), ["1=1"] | ["1", "=", "1"] | ["true"]);
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

// ------------------------------------------------------------------------------------------
// Prohibitions
// ------------------------------------------------------------------------------------------

/// A verb class of a prohibition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
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
const SUFFIXES: &[&str] = &[
    "", "s", "e", "es", "d", "ed", "ing", "ion", "al", "y", "ies", "ied", "ying", "ication", "ten",
    "ting", "ped", "ping", "ding",
];

/// Whether `w` is a form of one of `stems` (four letters or more).
fn is_form(w: &str, stems: &[&str]) -> bool {
    w.len() >= 4
        && stems.iter().any(|s| {
            w.strip_prefix(s)
                .is_some_and(|rest| SUFFIXES.contains(&rest))
        })
}

const DELETE_STEMS: &[&str] = &[
    "delet", "remov", "eras", "purg", "wip", "unlink", "destroy", "shred", "nuk",
];
const TOUCH_STEMS: &[&str] = &[
    "touch", "modif", "chang", "edit", "writ", "overwrit", "alter", "updat", "creat", "tamper",
    "replac", "rewrit", "clobber", "mutat", "chmod", "chown",
];
const MOVE_STEMS: &[&str] = &["mov", "renam"];
const TABLE_WORDS: &[&str] = &[
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
fn verb_class(w: &str, next: &str, next2_path: bool) -> Option<Class> {
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

fn is_verb(w: &str) -> bool {
    verb_class(w, "", false).is_some()
        || is_form(w, &["push"])
        || w.starts_with("force-push")
        || SQL_KEYWORDS.contains(&w)
}

const SQL_NOUNS: &[&str] = &[
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
const SQL_KEYWORDS: &[&str] = &[
    "drop", "delete", "truncate", "alter", "update", "insert", "select", "from", "where", "if",
    "exists", "table", "tables", "database", "schema", "cascade", "into", "set",
];
const ARTICLES: &[&str] = &[
    "the", "a", "an", "any", "all", "this", "that", "these", "those", "my", "our", "your", "their",
];
const REMOTES: &[&str] = &["origin", "upstream", "remote", "remotes", "the"];
const STOP: &[&str] = &[
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
const RUN_WORDS: &[&str] = &[
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
const NOT_PATHS: &[&str] = &[
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
const EXTENSIONS: &[&str] = &[
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
const BARE_FILES: &[&str] = &[
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
struct PTok {
    clean: String,
    lower: String,
    /// It opened a quote or backtick.
    open: bool,
    /// It closed one.
    close: bool,
    /// A comma, period, colon, ... followed it.
    stop_after: bool,
}

fn ptok(raw: &str) -> PTok {
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

fn looks_like_path(t: &str) -> bool {
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

fn name_like(t: &str) -> bool {
    !t.is_empty()
        && !t.starts_with('-')
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '/' | '.' | '*' | ':' | '@'))
}

fn is_stop(w: &str) -> bool {
    STOP.contains(&w)
}

fn branch_like(t: &PTok) -> bool {
    name_like(&t.clean)
        && !is_stop(&t.lower)
        && !is_verb(&t.lower)
        && !ARTICLES.contains(&t.lower.as_str())
}

fn table_like(t: &PTok) -> bool {
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

fn norm_branch(b: &str) -> String {
    let b = b.strip_prefix("refs/heads/").unwrap_or(b);
    let b = b
        .strip_prefix("origin/")
        .or_else(|| b.strip_prefix("upstream/"))
        .unwrap_or(b);
    b.to_string()
}

fn branch_eq(forbidden: &str, name: &str) -> bool {
    let (f, n) = (norm_branch(forbidden), norm_branch(name));
    f == n || (has_glob(&f) && fnmatch(&f, &n)) || (has_glob(&n) && fnmatch(&n, &f))
}

fn table_eq(forbidden: &str, name: &str) -> bool {
    let (f, n) = (forbidden.to_lowercase(), name.to_lowercase());
    let last = |s: &str| s.rsplit('.').next().unwrap_or("").to_string();
    f == n || last(&f) == last(&n)
}

/// Commands a prohibition's "run X" does not name (the table handles them).
fn is_known_command(w: &str) -> bool {
    let w = w.to_lowercase();
    let w = w.as_str();
    READ_ONLY.contains(&w)
        || PREFIXES.contains(&w)
        || matches!(
            w,
            "rm" | "unlink"
                | "rmdir"
                | "shred"
                | "mv"
                | "cp"
                | "install"
                | "rsync"
                | "ln"
                | "touch"
                | "mkdir"
                | "truncate"
                | "tee"
                | "chmod"
                | "chown"
                | "chgrp"
                | "dd"
                | "sed"
                | "perl"
                | "awk"
                | "gawk"
                | "git"
                | "sh"
                | "bash"
                | "zsh"
                | "eval"
                | "su"
                | "echo"
                | "printf"
        )
}

/// Lower-cased command words of a text, quotes trimmed, paths reduced to their last component.
fn cmd_words(t: &str) -> Vec<String> {
    t.split_whitespace()
        .map(|w| {
            let w = w.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ';' | '(' | ')'));
            base(w).to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

// ------------------------------------------------------------------------------------------
// Word lists, prose, messages
// ------------------------------------------------------------------------------------------

/// Whether a command's first word holds an expansion (`rm${IFS}-rf`): its name cannot be known
/// from the line.
fn named_by_expansion(text: &str) -> bool {
    text.split_whitespace()
        .next()
        .is_some_and(|w| w.contains('$') || w.contains('`'))
}

/// Prefixes that run the next word as the command.
const PREFIXES: &[&str] = &[
    "sudo",
    "doas",
    "busybox",
    "coproc",
    "env",
    "nohup",
    "time",
    "nice",
    "ionice",
    "stdbuf",
    "timeout",
    "command",
    "builtin",
    "exec",
    "chronic",
    "unbuffer",
    "xargs",
    "watch",
    "noglob",
    "nocorrect",
];

/// Known commands with no effect on the things the gate tracks (their redirections still
/// count).
const READ_ONLY: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "ls",
    "ll",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "echo",
    "printf",
    "wc",
    "stat",
    "diff",
    "cmp",
    "pwd",
    "cd",
    "test",
    "[",
    "[[",
    "true",
    "false",
    ":",
    "which",
    "type",
    "file",
    "du",
    "df",
    "cut",
    "tr",
    "jq",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "whoami",
    "id",
    "uname",
    "hostname",
    "printenv",
    "export",
    "unset",
    "set",
    "alias",
    "unalias",
    "sleep",
    "wait",
    "exit",
    "return",
    "ps",
    "top",
    "tree",
    "xxd",
    "hexdump",
    "od",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "nl",
    "column",
    "paste",
    "join",
    "comm",
    "tac",
    "rev",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "seq",
    "history",
    "man",
    "help",
    "whereis",
    "locate",
    "tput",
    "clear",
    "read",
    "local",
    "declare",
    "typeset",
    "shift",
    "trap",
    "sort",
    "uniq",
    "find",
    "sed",
    "awk",
    "gawk",
    "fd",
    "bat",
    "env",
    "sudo",
    "nproc",
    "free",
    "uptime",
    "lsof",
    "pgrep",
    "jobs",
    "fg",
    "bg",
];

/// Words that make an unparseable line fail closed.
const RISKY: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "mv",
    "cp",
    "dd",
    "truncate",
    "tee",
    "touch",
    "mkdir",
    "chmod",
    "chown",
    "chgrp",
    "ln",
    "install",
    "rsync",
    "sed",
    "perl",
    "delete",
    "drop",
    "alter",
    "update",
    "insert",
    "remove",
    "clean",
    "reset",
    "restore",
    "checkout",
    "push",
    "force",
    "wipe",
    "purge",
    "erase",
    "destroy",
    "overwrite",
    "write",
    "mkfs",
    "fdisk",
];

fn risky(line: &str) -> bool {
    line.contains('>')
        || line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| RISKY.contains(&w.to_lowercase().as_str()))
}

/// Whether an unlexable line reads as prose: no shell operator, and a first word that is not a
/// command of the table.
fn prose(line: &str) -> bool {
    if line.contains([';', '|', '&', '>', '<', '`', '\n']) || line.contains("$(") {
        return false;
    }
    if named_by_expansion(line) {
        return false;
    }
    let first = line
        .split_whitespace()
        .find(|w| !is_assignment(w))
        .unwrap_or("")
        .trim_matches(|c: char| matches!(c, '(' | ')' | '{' | '}' | '!' | '"' | '\'' | '\\'));
    if first.is_empty() {
        return false;
    }
    let name = base(first);
    !(is_known_command(name)
        || matches!(
            name,
            "psql" | "mysql" | "mariadb" | "sqlite3" | "dash" | "ksh" | "ash" | "mksh" | "find"
        )
        || SQL_FIRST.contains(&name.to_lowercase().as_str()))
}

/// A command's text for a message: at most 80 characters.
fn short(t: &str) -> String {
    let t = t.trim();
    if t.chars().count() <= 80 {
        t.to_string()
    } else {
        let head: String = t.chars().take(77).collect();
        format!("{head}...")
    }
}

fn describe(e: &Effect) -> String {
    let what = match &e.target {
        Target::Path(p) if p == "." => "the whole project tree".to_string(),
        Target::Path(p) => p.clone(),
        Target::Glob(g) => format!("paths matching {g}"),
        Target::Anything => "paths it cannot name".to_string(),
        Target::Branch { name, force } => {
            let b = name
                .as_ref()
                .map_or("the current branch".to_string(), |n| format!("branch {n}"));
            if *force {
                format!("{b} with force")
            } else {
                b
            }
        }
        Target::Table(Some(t)) => format!("table {t}"),
        Target::Table(None) => "a whole database or schema".to_string(),
    };
    format!("`{}` {} {what}", short(&e.command), e.op.verb())
}

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    const TOUCH: &str = "do not touch anything under shop/migrations/";
    const DELETE: &str = "never delete shop/migrations/0029_tmp_backfill.py";

    fn refused(prohibition: &str, line: &str) -> Option<String> {
        violation(&forbidden(prohibition), &parse(line))
    }

    #[track_caller]
    fn refuse(prohibition: &str, line: &str) {
        assert!(
            refused(prohibition, line).is_some(),
            "`{line}` should be refused under \"{prohibition}\": {:?} / {:?}",
            parse(line),
            forbidden(prohibition)
        );
    }

    #[track_caller]
    fn admit(prohibition: &str, line: &str) {
        let why = refused(prohibition, line);
        assert!(
            why.is_none(),
            "`{line}` should be admitted under \"{prohibition}\": {why:?} / {:?} / {:?}",
            parse(line),
            forbidden(prohibition)
        );
    }

    fn path(p: &str) -> Target {
        Target::Path(p.into())
    }

    fn has(line: &str, op: Op, target: Target) -> bool {
        parse(line)
            .effects
            .iter()
            .any(|e| e.op == op && e.target == target)
    }

    #[test]
    fn the_reported_bypasses_are_refused() {
        for line in [
            "rm shop/migrations/0029_tmp_backfill.py",
            "rm -rf shop/migrations/",
            "touch shop/migrations/0031_fix.py",
            "unlink shop/migrations/0029_tmp_backfill.py",
        ] {
            refuse(TOUCH, line);
        }
        for line in [
            "unlink shop/migrations/0029_tmp_backfill.py",
            "rm -rf shop/migrations/",
            "rm shop/migrations/0029_tmp_backfill.py",
        ] {
            refuse(DELETE, line);
        }
        assert_eq!(
            refused(TOUCH, "rm -rf shop/migrations/").as_deref(),
            Some("`rm -rf shop/migrations/` deletes shop/migrations, under shop/migrations")
        );
    }

    #[test]
    fn delete_family() {
        for line in [
            "rm shop/migrations/0029_tmp_backfill.py",
            "rmdir shop/migrations",
            "shred -u -n 3 shop/migrations/0029_tmp_backfill.py",
            "unlink shop/migrations/0029_tmp_backfill.py",
            "/bin/rm -f -- shop/migrations/0029_tmp_backfill.py",
            "\\rm shop/migrations/0029_tmp_backfill.py",
        ] {
            refuse(DELETE, line);
        }
        admit(TOUCH, "rm shop/migrationsX/a.py");
        admit(TOUCH, "rm shop/other/a.py");
        admit(DELETE, "rm shop/migrations/0030_other.py");
        admit(DELETE, "cat shop/migrations/0029_tmp_backfill.py");
    }

    #[test]
    fn mv_moves_and_writes() {
        refuse(DELETE, "mv shop/migrations/0029_tmp_backfill.py /tmp/");
        refuse(TOUCH, "mv /tmp/x.py shop/migrations/");
        refuse(TOUCH, "mv -t shop/migrations a.py b.py");
        // Moving a file onto the forbidden one overwrites it.
        refuse(
            "do not edit shop/migrations/0029_tmp_backfill.py",
            "mv /tmp/0029_tmp_backfill.py shop/migrations/",
        );
        assert!(has("mv a b", Op::Move, path("a")));
        assert!(has("mv a b", Op::Delete, path("a")));
        assert!(has("mv a b", Op::Write, path("b")));
        admit(TOUCH, "mv shop/other/a.py shop/other/b.py");
        // Writing into the parent directory is not a write to the file.
        admit(
            "do not edit shop/migrations/0029_tmp_backfill.py",
            "mv /tmp/x.py shop/migrations/",
        );
    }

    #[test]
    fn cp_install_rsync_write_their_destination() {
        refuse(TOUCH, "cp /tmp/x.py shop/migrations/0031.py");
        refuse(TOUCH, "install -m 644 x.py shop/migrations/");
        refuse(TOUCH, "install -d shop/migrations/sub");
        refuse(TOUCH, "rsync -av backup/ shop/migrations/");
        refuse(
            "do not edit shop/migrations/0029_tmp_backfill.py",
            "rsync -a backup/ shop/migrations/",
        );
        refuse(DELETE, "rsync -a --delete backup/ shop/");
        // The sources are reads.
        admit(TOUCH, "cp shop/migrations/0029_tmp_backfill.py /tmp/");
        admit(TOUCH, "rsync -a shop/migrations/ backup/");
        admit(TOUCH, "rsync -a shop/ user@host:/srv/shop/");
    }

    #[test]
    fn ln_writes_the_link() {
        refuse(TOUCH, "ln -s ../x.py shop/migrations/0031.py");
        refuse(TOUCH, "ln -sf /tmp/a shop/migrations");
        admit(
            TOUCH,
            "ln -s shop/migrations/0029_tmp_backfill.py /tmp/link",
        );
    }

    #[test]
    fn touch_mkdir_truncate_modes_write() {
        refuse(TOUCH, "touch shop/migrations/0031_fix.py");
        refuse(TOUCH, "mkdir -p shop/migrations/extra");
        refuse(TOUCH, "truncate -s 0 shop/migrations/0029_tmp_backfill.py");
        refuse(TOUCH, "chmod -x shop/migrations/0029_tmp_backfill.py");
        refuse(TOUCH, "chmod 644 shop/migrations/0029_tmp_backfill.py");
        refuse(TOUCH, "chown -R www:www shop/");
        refuse(TOUCH, "chgrp staff shop/migrations/a.py");
        // The mode and owner operands are not paths.
        assert!(!has("chmod 644 other.py", Op::Write, path("644")));
        assert!(!has("chown -R www:www shop", Op::Write, path("www:www")));
        admit(TOUCH, "touch shop/other/x.py");
        admit(TOUCH, "chown www shop/other.py");
        admit(TOUCH, "mkdir shop/migrations2");
    }

    #[test]
    fn tee_and_dd_write() {
        refuse(TOUCH, "echo x | tee -a shop/migrations/0031.py");
        refuse(
            TOUCH,
            "dd if=/dev/zero of=shop/migrations/0029_tmp_backfill.py bs=1 count=1",
        );
        admit(TOUCH, "cat shop/migrations/a.py | tee /tmp/copy.py");
        admit(TOUCH, "dd if=shop/migrations/a.py of=/tmp/a.py");
    }

    #[test]
    fn sed_perl_awk_in_place_write() {
        refuse(
            TOUCH,
            "sed -i 's/a/b/' shop/migrations/0029_tmp_backfill.py",
        );
        refuse(
            TOUCH,
            "sed -i.bak -e 's/a/b/' shop/migrations/0029_tmp_backfill.py",
        );
        refuse(
            TOUCH,
            "sed --in-place 's/a/b/' shop/migrations/0029_tmp_backfill.py",
        );
        refuse(
            TOUCH,
            "sed -i '' 's/a/b/' shop/migrations/0029_tmp_backfill.py",
        );
        refuse(
            TOUCH,
            "perl -pi -e 's/a/b/' shop/migrations/0029_tmp_backfill.py",
        );
        refuse(TOUCH, "gawk -i inplace '{print}' shop/migrations/a.py");
        // Without -i, they only read; and the script is not a path.
        admit(TOUCH, "sed 's/a/b/' shop/migrations/0029_tmp_backfill.py");
        admit(TOUCH, "sed -n '/shop\\/migrations/p' x.py");
        admit(TOUCH, "awk '{print}' shop/migrations/a.py");
        assert!(parse("perl script.pl shop/migrations/a.py").unknown.len() == 1);
    }

    #[test]
    fn sed_in_place_on_a_glob_writes_the_file() {
        refuse(
            "do not edit shop/migrations/0029_tmp_backfill.py",
            "sed -i 's/a/b/' shop/migrations/*.py",
        );
        admit(
            "do not edit shop/migrations/0029_tmp_backfill.py",
            "sed -i 's/a/b/' shop/migrations/*.sql",
        );
    }

    #[test]
    fn find_delete_and_exec() {
        refuse(TOUCH, "find shop -name '*.py' -delete");
        refuse(DELETE, "find shop/migrations -name '*.py' -exec rm {} \\;");
        refuse(DELETE, "find . -type f -exec rm -f {} +");
        refuse(
            TOUCH,
            "find shop/migrations -fprint shop/migrations/list.txt",
        );
        admit(TOUCH, "find shop -name '*.py'");
        admit(TOUCH, "find shop/other -delete");
        admit(DELETE, "find shop/other -exec rm {} \\;");
        admit(TOUCH, "find shop/migrations -exec cat {} \\;");
    }

    #[test]
    fn git_rm_mv_clean() {
        refuse(DELETE, "git rm shop/migrations/0029_tmp_backfill.py");
        refuse(DELETE, "git rm -r shop/migrations");
        refuse(DELETE, "git mv shop/migrations/0029_tmp_backfill.py old.py");
        refuse(DELETE, "git clean -fdx");
        refuse(DELETE, "git clean -f shop/migrations");
        admit(
            DELETE,
            "git rm --cached shop/migrations/0029_tmp_backfill.py",
        );
        admit(DELETE, "git rm shop/other.py");
        admit(DELETE, "git clean -n");
        admit(DELETE, "git clean -f shop/other");
    }

    #[test]
    fn git_discards() {
        refuse(
            DELETE,
            "git checkout -- shop/migrations/0029_tmp_backfill.py",
        );
        refuse(DELETE, "git checkout .");
        refuse(DELETE, "git restore shop/migrations/");
        refuse(DELETE, "git reset --hard");
        refuse(DELETE, "git reset --hard HEAD~1");
        refuse(TOUCH, "cd shop && git checkout -- migrations");
        admit(DELETE, "git checkout -b feature");
        admit(DELETE, "git checkout main -- shop/other.py");
        admit(
            DELETE,
            "git restore --staged shop/migrations/0029_tmp_backfill.py",
        );
        admit(DELETE, "git reset HEAD~1");
        admit(DELETE, "git status && git diff shop/migrations");
    }

    #[test]
    fn git_push_to_a_branch() {
        let p = "do not push to main";
        refuse(p, "git push origin main");
        refuse(p, "git push origin HEAD:main");
        refuse(p, "git push -f origin +main");
        refuse(p, "git push");
        refuse(p, "git push --delete origin main");
        refuse(p, "git push origin :main");
        refuse(p, "git push origin refs/heads/main");
        admit(p, "git push origin feature");
        admit(p, "git push -u origin feature/login");
        admit(p, "git push --dry-run origin main");
        admit(p, "git pull origin main");
        admit(p, "git push origin main:feature");
    }

    #[test]
    fn force_push() {
        let p = "never force-push";
        refuse(p, "git push -f origin main");
        refuse(p, "git push --force-with-lease");
        refuse(p, "git push origin +feature");
        admit(p, "git push origin main");
        admit(p, "git push");
        let q = "never force push to main";
        refuse(q, "git push --force origin main");
        admit(q, "git push --force origin feature");
        admit(q, "git push origin main");
    }

    #[test]
    fn branch_deletion() {
        let p = "never delete the main branch";
        let f = forbidden(p);
        assert_eq!(f.branches, vec!["main".to_string()]);
        refuse(p, "git branch -D main");
        refuse(p, "git push origin --delete main");
        admit(p, "git branch -D feature");
        admit(p, "git push origin main");
        admit(p, "rm -rf shop");
    }

    #[test]
    fn sql_statements() {
        let p = "never run DROP TABLE on the orders database";
        refuse(p, "DROP TABLE orders_old");
        refuse(p, "drop table if exists orders_old cascade;");
        refuse(p, "psql -c \"DROP TABLE orders_old\"");
        refuse(p, "psql --command='DROP TABLE orders_old' orders");
        refuse(p, "mysql -u root -e 'DROP TABLE orders_old' orders");
        refuse(p, "sqlite3 orders.db 'DROP TABLE orders_old'");
        refuse(p, "echo 'DROP TABLE orders_old;' | psql orders");
        refuse(p, "psql orders <<< 'DROP TABLE orders_old'");
        admit(p, "ALTER TABLE orders_old SET TABLESPACE archive");
        admit(p, "psql -c 'SELECT count(*) FROM orders_old'");
        admit(p, "DELETE FROM orders_old WHERE id = 1");
        admit(p, "rm orders.sql");
        let q = "never drop tables";
        refuse(q, "DROP TABLE x");
        // Emptying a table loses what dropping it would (issue 37); a row-filtered delete
        // does not.
        refuse(q, "TRUNCATE TABLE x");
        refuse(q, "DELETE FROM x");
        refuse(q, "DELETE FROM x WHERE 1=1");
        admit(q, "DELETE FROM x WHERE id = 1");
        let d = "never run DELETE FROM orders";
        refuse(d, "DELETE FROM orders WHERE 1=1");
        admit(d, "DELETE FROM customers");
        let t = "never truncate the audit table";
        refuse(t, "TRUNCATE audit");
        admit(t, "TRUNCATE logs");
        let a = "don't alter table payments";
        refuse(a, "ALTER TABLE payments ADD COLUMN x int");
        admit(a, "ALTER TABLE invoices ADD COLUMN x int");
    }

    #[test]
    fn sql_read_as_the_line_says() {
        let parsed = parse("DROP TABLE orders_old");
        assert_eq!(parsed.effects.len(), 1);
        assert_eq!(
            parsed.effects.first().map(|e| e.target.clone()),
            Some(Target::Table(Some("orders_old".into())))
        );
        assert!(parse("psql orders").unknown.len() == 1);
        assert!(parse("UPDATE orders SET x = 1").unknown.len() == 1);
        assert_eq!(
            parse("CREATE TABLE x (id int)").unknown,
            vec!["CREATE TABLE x (id int)".to_string()]
        );
        // Prose starting with a SQL word is not SQL.
        let prose = parse("update libfoo to 2.4.0");
        assert!(prose.effects.is_empty());
        assert_eq!(prose.unknown, vec!["update libfoo to 2.4.0".to_string()]);
    }

    #[test]
    fn quoting_and_prefixes() {
        let p = "do not touch anything under shop/migrations/";
        refuse(p, "rm \"shop/migrations/a b.py\"");
        refuse(p, "rm 'shop/migrations/a b.py'");
        refuse(p, "rm shop/migrations/a\\ b.py");
        refuse(p, "sudo rm -rf shop/migrations");
        refuse(p, "sudo -u www rm -rf shop/migrations");
        refuse(p, "env X=1 rm shop/migrations/0029_tmp_backfill.py");
        refuse(p, "X=1 Y=2 rm shop/migrations/0029_tmp_backfill.py");
        refuse(p, "nohup nice -n 10 timeout 5 rm shop/migrations/a.py");
        refuse(p, "time command rm shop/migrations/a.py");
        refuse(p, "exec rm shop/migrations/a.py");
        admit(p, "echo rm shop/migrations/a.py");
        admit(p, "sudo cat shop/migrations/a.py");
        assert!(has(
            "rm \"shop/migrations/a b.py\"",
            Op::Delete,
            path("shop/migrations/a b.py")
        ));
    }

    #[test]
    fn cd_moves_the_working_directory() {
        refuse(DELETE, "cd shop && rm migrations/0029_tmp_backfill.py");
        refuse(DELETE, "cd shop/migrations && rm ./0029_tmp_backfill.py");
        refuse(DELETE, "cd shop; cd migrations; rm 0029_tmp_backfill.py");
        refuse(DELETE, "cd /tmp && cd - && rm 0029_tmp_backfill.py");
        refuse(DELETE, "git -C shop rm migrations/0029_tmp_backfill.py");
        admit(DELETE, "cd shop/other && rm ./0029_tmp_backfill.py");
        admit(
            DELETE,
            "(cd shop/migrations && ls) && rm 0029_tmp_backfill.py",
        );
        admit(DELETE, "cd /tmp && rm -rf build");
    }

    #[test]
    fn redirections() {
        refuse(TOUCH, "echo x > shop/migrations/0031.py");
        refuse(TOUCH, "echo x >> shop/migrations/0031.py");
        refuse(TOUCH, "python gen.py 2> shop/migrations/err.log");
        refuse(TOUCH, "python gen.py &> shop/migrations/out.log");
        refuse(TOUCH, "cd shop && echo x >migrations/0031.py");
        admit(TOUCH, "cat x > /dev/null");
        admit(TOUCH, "cat shop/migrations/a.py 2>&1 >/dev/null");
        admit(TOUCH, "cat < shop/migrations/a.py");
        assert!(parse("cat x > /dev/null").effects.is_empty());
    }

    #[test]
    fn xargs_reads_its_paths() {
        refuse(DELETE, "ls | xargs rm");
        refuse(DELETE, "find . -name '*.pyc' | xargs rm -f");
        refuse(TOUCH, "ls | xargs -I{} cp {} shop/migrations/");
        admit(DELETE, "ls | xargs cat");
        admit(DELETE, "ls | xargs -I{} cp {} /tmp/backup/");
        assert!(has("ls | xargs rm", Op::Delete, Target::Anything));
    }

    #[test]
    fn bodies_are_parsed() {
        refuse(DELETE, "sh -c 'rm shop/migrations/0029_tmp_backfill.py'");
        refuse(
            DELETE,
            "bash -lc \"cd shop && rm migrations/0029_tmp_backfill.py\"",
        );
        refuse(DELETE, "echo $(rm shop/migrations/0029_tmp_backfill.py)");
        refuse(DELETE, "echo \"`rm shop/migrations/0029_tmp_backfill.py`\"");
        refuse(DELETE, "eval rm shop/migrations/0029_tmp_backfill.py");
        refuse(
            DELETE,
            "echo 'rm shop/migrations/0029_tmp_backfill.py' | sh",
        );
        refuse(DELETE, "diff <(rm shop/migrations/0029_tmp_backfill.py) b");
        refuse(
            DELETE,
            "su -c 'rm shop/migrations/0029_tmp_backfill.py' root",
        );
        refuse(
            DELETE,
            "sudo sh -c 'sh -c \"rm shop/migrations/0029_tmp_backfill.py\"'",
        );
        admit(DELETE, "sh -c 'ls shop/migrations'");
        admit(DELETE, "echo $(ls shop/migrations)");
    }

    #[test]
    fn normalisation_and_globs() {
        refuse(
            DELETE,
            "rm shop//migrations/../migrations/./0029_tmp_backfill.py",
        );
        refuse(DELETE, "rm shop/migrations/*.py");
        refuse(DELETE, "rm -rf shop/*");
        refuse(DELETE, "rm shop/migrations/0029_*");
        refuse(DELETE, "rm shop/migrations/{0029_tmp_backfill,0030_x}.py");
        refuse(
            DELETE,
            "rm /work/project/shop/migrations/0029_tmp_backfill.py",
        );
        refuse(DELETE, "rm -rf ..");
        refuse(DELETE, "rm -rf /");
        admit(DELETE, "rm shop/migrations/*.sql");
        admit(DELETE, "rm shop/migrations/sub/*.py");
        admit(DELETE, "rm shop/../other/migrations/0029_tmp_backfill.py");
        assert_eq!(
            normalise("", "shop//migrations/../migrations/./a.py"),
            "shop/migrations/a.py"
        );
        assert_eq!(normalise("shop", "../.."), "..");
        assert_eq!(normalise("", "/a/../../b/"), "/b");
        assert_eq!(normalise("", "./"), ".");
        assert!(has(
            "rm shop/migrations/*.py",
            Op::Delete,
            Target::Glob("shop/migrations/*.py".into())
        ));
    }

    #[test]
    fn unknown_paths_fail_closed() {
        refuse(DELETE, "rm -rf $BUILD_DIR");
        refuse(DELETE, "rm ~/shop/migrations/x.py");
        refuse(DELETE, "cd $DIR && rm 0029_tmp_backfill.py");
        refuse(DELETE, "rm \"$(cat list.txt)\"");
        admit("do not push to main", "rm -rf $BUILD_DIR");
    }

    #[test]
    fn unknown_commands() {
        let parsed = parse("python manage.py makemigrations shop");
        assert_eq!(
            parsed.unknown,
            vec!["python manage.py makemigrations shop".to_string()]
        );
        assert!(parsed.effects.is_empty());
        admit(TOUCH, "python manage.py makemigrations shop");
        let f = forbidden("don't run makemigrations");
        assert_eq!(f.commands, vec!["makemigrations".to_string()]);
        assert!(f.ops.is_empty());
        refuse(
            "don't run makemigrations",
            "python manage.py makemigrations shop",
        );
        admit("don't run makemigrations", "python manage.py migrate");
        admit("don't run makemigrations", "echo makemigrations");
        refuse(
            "never run `terraform apply`",
            "cd infra && terraform apply -auto-approve",
        );
        admit("never run `terraform apply`", "terraform plan");
        refuse("never run git rebase", "git rebase -i HEAD~3");
        admit("never run git rebase", "git status");
    }

    #[test]
    fn prose_is_unknown() {
        let parsed = parse("upgrade libfoo to 2.4.0");
        assert_eq!(parsed.unknown, vec!["upgrade libfoo to 2.4.0".to_string()]);
        let parsed = parse("I'll delete the old migration now");
        assert!(!parsed.unparseable);
        assert_eq!(parsed.unknown.len(), 1);
    }

    #[test]
    fn here_documents_are_their_commands_standard_input() {
        // Code for a shell, or substitutions an unquoted delimiter lets run: read.
        refuse(TOUCH, "sh <<'EOF'\nrm shop/migrations/a.py\nEOF");
        refuse(TOUCH, "bash -s <<-EOF\n\trm shop/migrations/a.py\n\tEOF");
        refuse(TOUCH, "cat <<EOF\n$(rm shop/migrations/a.py)\nEOF");
        refuse(TOUCH, "cat <<EOF > shop/migrations/0031.py\nx = 1\nEOF");
        // Data for cat or a commit message: no effect, however it reads.
        admit(TOUCH, "cat <<'EOF'\n$(rm shop/migrations/a.py)\nEOF");
        admit(
            TOUCH,
            "git commit -m \"$(cat <<'EOF'\nstop the rm of shop/migrations/a.py\n\nCo-Authored-By: x\nEOF\n)\"",
        );
        admit(TOUCH, "python3 - <<'PYEOF'\nprint(1)\nPYEOF\nls shop");
        let parsed = parse("python3 - <<'PYEOF'\nimport shutil; shutil.rmtree('x')\nPYEOF");
        assert_eq!(parsed.opaque.len(), 1, "{parsed:?}");
        assert_eq!(
            parse("curl -s https://x.example/i.py | python3")
                .opaque
                .len(),
            1
        );
        assert!(!parse("cat <<'EOF'\nrm x\nEOF").unparseable);
    }

    #[test]
    fn unparseable_risky_lines_fail_closed() {
        let parsed = parse("rm 'unclosed");
        assert!(parsed.unparseable && parsed.risky);
        refuse(TOUCH, "rm 'unclosed");
        refuse("do not push to main", "rm 'unclosed");
        // A here-document whose delimiter never comes.
        refuse(TOUCH, "cat x <<EOF\nrm shop/migrations/a.py");
        let quiet = parse("ls 'unclosed");
        assert!(quiet.unparseable && !quiet.risky);
        admit(TOUCH, "ls 'unclosed");
        assert!(violation(&forbidden("don't run makemigrations"), &parse("rm 'x")).is_none());
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let deep_open = "$(".repeat(10_000);
        let deep_closed = format!("echo {}rm x{}", "$(".repeat(10_000), ")".repeat(10_000));
        let ticks = "`".repeat(9_999);
        let many = "rm a; ".repeat(20_000);
        let execs = format!("find a b c d {}", "-exec find a b c d ".repeat(200));
        let evals = "eval ".repeat(5_000) + "rm x";
        let lines = [
            "",
            " ",
            "'",
            "\"",
            "\\",
            "$",
            "${",
            "$(",
            "`",
            "rm \"unclosed",
            "rm 'a' \"b",
            "\0",
            "rm \0shop/migrations\0",
            "<<<",
            ">",
            "2>",
            "&>",
            "|||;;;&&&",
            "(((((",
            ")))))",
            "{ } { }",
            "[",
            "rm [",
            "rm [a-",
            "rm a[!",
            "x=",
            "=",
            "sudo",
            "xargs",
            "env -S",
            "find -exec",
            "git",
            "git push +",
            "git push origin :",
            "sed -i",
            "sh -c",
            "psql -c",
            "DROP",
            "DROP TABLE",
            "DELETE FROM",
            "ALTER TABLE",
            "TRUNCATE ,",
            "\u{feff}rm é/ü/🚀.py",
            "rm 🚀*",
            &deep_open,
            &deep_closed,
            &ticks,
            &many,
            &execs,
            &evals,
        ];
        let fs = [
            forbidden(TOUCH),
            forbidden("do not push to main"),
            forbidden(""),
            forbidden("'\"`"),
            forbidden("never run"),
            forbidden("🚀 ` delete"),
            forbidden("never drop table"),
        ];
        for line in lines {
            let parsed = parse(line);
            for f in &fs {
                let _ = violation(f, &parsed);
            }
        }
        let parsed = parse(&deep_closed);
        assert!(parsed.unparseable);
        assert!(parse(&deep_open).unparseable);
        assert!(parse(&execs).unparseable);
        assert!(parse(&many).unparseable);
    }

    #[test]
    fn read_only_commands_have_no_effect() {
        for line in [
            "cat shop/migrations/0029_tmp_backfill.py",
            "less shop/migrations/0029_tmp_backfill.py",
            "head -n 5 shop/migrations/*.py | wc -l",
            "ls -la shop/migrations/ && pwd",
            "grep -rn backfill shop/migrations/",
            "rg -l DROP shop/migrations",
            "stat shop/migrations/0029_tmp_backfill.py",
            "diff shop/migrations/a.py shop/migrations/b.py",
            "git log -- shop/migrations && git diff && git show HEAD:shop/migrations/a.py",
            "awk '{print $1}' shop/migrations/a.py | sort | uniq -c",
            "test -f shop/migrations/a.py && echo yes",
            "du -sh shop/migrations; df -h",
        ] {
            let parsed = parse(line);
            assert!(parsed.effects.is_empty(), "{line}: {:?}", parsed.effects);
            assert!(parsed.unknown.is_empty(), "{line}: {:?}", parsed.unknown);
            admit(TOUCH, line);
        }
        // Inline code that plainly only computes and prints is read-only (issue 37); code
        // that does more is opaque.
        let parsed = parse("python -c 'print(1)'");
        assert_eq!(parsed.known, ["python -c 'print(1)'"]);
        assert!(parsed.opaque.is_empty() && parsed.unknown.is_empty());
        assert_eq!(parse("python -c 'import os; os.remove(1)'").opaque.len(), 1);
        // Scripts and build tools are unknown, not read-only.
        for line in [
            "python train.py",
            "make clean",
            "npm run build",
            "cargo test",
        ] {
            assert_eq!(parse(line).unknown, vec![line.to_string()]);
        }
    }

    #[test]
    fn nesting_is_depth_limited() {
        let nested = |n: usize| {
            format!(
                "echo {}rm shop/migrations/0029_tmp_backfill.py{}",
                "$(echo ".repeat(n - 1) + "$(",
                ")".repeat(n)
            )
        };
        refuse(DELETE, &nested(10));
        assert!(!parse(&nested(10)).unparseable);
        assert!(parse(&nested(MAX_DEPTH + 1)).unparseable);
        // Too deep and risky: refused all the same.
        refuse(DELETE, &nested(40));
    }

    #[test]
    fn random_lines_do_not_panic() {
        let alphabet: Vec<char> = "rm -f$(){}[]*?'\"`\\;|&<>~=/.\n\t#ab0 é🚀\0"
            .chars()
            .collect();
        let words = [
            "rm",
            "sudo",
            "xargs",
            "find",
            "-exec",
            "{}",
            ";",
            "sh",
            "-c",
            "git",
            "push",
            "cd",
            "..",
            "/",
            "*",
            "$(",
            ")",
            "`",
            "'",
            "eval",
            "env",
            "-S",
            "psql",
            "DROP TABLE",
            "mv",
            "-t",
            "sed",
            "-i",
            "|",
            "&&",
            ">",
            "<<<",
            "2>&1",
            "--",
            "shop/migrations",
        ];
        let fs = [
            forbidden(TOUCH),
            forbidden("do not push to main"),
            forbidden("never drop tables"),
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % 1_000_003).unwrap_or(0)
        };
        for _ in 0..3000 {
            let mut line = String::new();
            for _ in 0..next() % 30 {
                if next() % 2 == 0 {
                    line.push(
                        alphabet
                            .get(next() % alphabet.len())
                            .copied()
                            .unwrap_or('x'),
                    );
                } else {
                    line.push_str(words.get(next() % words.len()).copied().unwrap_or("x"));
                    line.push(' ');
                }
            }
            let parsed = parse(&line);
            for f in &fs {
                let _ = violation(f, &parsed);
            }
            let _ = forbidden(&line);
        }
    }

    #[test]
    fn prohibitions_are_read() {
        let f = forbidden(DELETE);
        assert_eq!(
            f.paths,
            vec!["shop/migrations/0029_tmp_backfill.py".to_string()]
        );
        assert!(f.ops.contains(&Op::Delete) && !f.ops.contains(&Op::Write));
        assert!(!f.ops.contains(&Op::SqlDelete));
        let f = forbidden(TOUCH);
        assert_eq!(f.paths, vec!["shop/migrations".to_string()]);
        assert!(f.ops.contains(&Op::Write) && f.ops.contains(&Op::Delete));
        let f = forbidden("don't modify the migrations in shop/migrations");
        assert_eq!(f.paths, vec!["shop/migrations".to_string()]);
        assert!(f.ops.contains(&Op::Write));
        let f = forbidden("never run DROP TABLE on the orders database");
        assert_eq!(f.ops, vec![Op::SqlDrop, Op::SqlTruncate]);
        assert!(f.tables.is_empty() && f.paths.is_empty() && f.commands.is_empty());
        let f = forbidden("never drop tables");
        assert_eq!(f.ops, vec![Op::SqlDrop, Op::SqlTruncate]);
        let f = forbidden("do not push to main");
        assert_eq!(
            (f.ops.clone(), f.branches.clone(), f.force_only),
            (vec![Op::Push], vec!["main".to_string()], false)
        );
        let f = forbidden("never force-push");
        assert_eq!((f.ops.clone(), f.force_only), (vec![Op::Push], true));
        let f = forbidden("do not edit config/prod.yaml.");
        assert_eq!(f.paths, vec!["config/prod.yaml".to_string()]);
        let f = forbidden("never remove files from /etc");
        assert_eq!(f.paths, vec!["/etc".to_string()]);
        assert!(f.ops.contains(&Op::Delete));
        let f = forbidden("hands off shop/migrations/");
        assert!(f.ops.contains(&Op::Write) && f.ops.contains(&Op::Delete));
        let f = forbidden("always be polite");
        assert!(f.is_empty());
        let f = forbidden("do not push to the release/2.0 branch");
        assert_eq!(f.branches, vec!["release/2.0".to_string()]);
        assert!(f.paths.is_empty());
        let f = forbidden("never run ./deploy.sh");
        assert_eq!(f.commands, vec!["./deploy.sh".to_string()]);
        refuse("never run ./deploy.sh", "bash -c './deploy.sh --prod'");
        let f = forbidden("don't use config/prod.yaml in tests");
        assert!(f.commands.is_empty());
        assert_eq!(f.paths, vec!["config/prod.yaml".to_string()]);
        let f = forbidden("never rename `.env`");
        assert_eq!(f.paths, vec![".env".to_string()]);
        assert_eq!(f.ops, vec![Op::Move]);
    }

    #[test]
    fn commands_run_elsewhere_and_editors() {
        let p = "never run DROP TABLE on the orders database";
        refuse(
            p,
            "docker exec -it db psql -U app -c 'DROP TABLE orders_old'",
        );
        refuse(
            p,
            "docker compose exec -T db sh -c 'psql -c \"DROP TABLE orders_old\"'",
        );
        refuse(
            p,
            "kubectl exec -it pod-1 -- psql -c 'DROP TABLE orders_old'",
        );
        admit(p, "docker exec db psql -c 'SELECT 1'");
        admit(p, "docker ps");
        let e = "never remove files from /etc";
        refuse(e, "ssh prod 'rm -rf /etc/nginx'");
        admit(e, "ssh prod uptime");
        assert_eq!(parse("docker ps").unknown, vec!["docker ps".to_string()]);
        let c = "do not edit config/prod.yaml";
        refuse(c, "vim config/prod.yaml");
        refuse(c, "nano +10 config/prod.yaml");
        admit(c, "vim config/dev.yaml");
    }

    #[test]
    fn placeholders_and_name_patterns() {
        refuse(DELETE, "find shop/migrations -exec mv {} /tmp/{} \\;");
        admit(DELETE, "find shop/other -exec mv {} /tmp/{} \\;");
        admit(TOUCH, "find shop/migrations -exec cp {} /tmp/backup/{} \\;");
        refuse(TOUCH, "ls | xargs -I{} cp {} shop/migrations/{}");
        let p = "never delete *.sql files";
        refuse(p, "rm db/dump.sql");
        admit(p, "rm db/dump.py");
        assert_eq!(
            parse("if true; then rm x; fi").known,
            vec!["true".to_string(), "rm x".to_string()]
        );
    }

    #[test]
    fn a_named_directory_is_a_path() {
        let p = "don't delete the logs directory";
        assert_eq!(forbidden(p).paths, vec!["logs".to_string()]);
        refuse(p, "rm -rf logs");
        refuse(p, "rm logs/app.log");
        admit(p, "rm -rf tmp");
        admit(p, "DROP TABLE logs");
    }

    #[test]
    fn path_and_sql_prohibitions_do_not_cross() {
        admit(TOUCH, "DROP TABLE orders");
        admit("never drop tables", "rm -rf shop");
        refuse("never delete anything", "DROP TABLE orders");
        refuse("never delete anything", "rm x");
        refuse("never remove files from /etc", "sudo rm /etc/passwd");
        refuse("never remove files from /etc", "cd /etc && rm hosts");
        admit("never remove files from /etc", "rm etc/hosts");
    }

    #[test]
    fn words_around_tables_that_qualify_them_are_not_table_names() {
        let f =
            forbidden("Never run DROP TABLE on the orders database; archive old tables instead.");
        assert!(f.tables.is_empty(), "{:?}", f.tables);
        assert!(violation(&f, &parse("DROP TABLE orders_old")).is_some());
        let f = forbidden("never drop the users table");
        assert_eq!(f.tables, vec!["users".to_string()]);
        assert!(violation(&f, &parse("DROP TABLE orders_old")).is_none());
        assert!(violation(&f, &parse("DROP TABLE users")).is_some());
    }

    #[test]
    fn outside_findings_of_2026_12_01() {
        let migrations = "do not touch anything under shop/migrations/";
        for line in [
            "rm${IFS}-rf${IFS}shop/migrations",
            "$(echo rm) -rf shop/migrations",
            "`which rm` -rf shop/migrations",
            "RM=rm; $RM -rf shop/migrations",
            "busybox rm -rf shop/migrations",
        ] {
            refuse(migrations, line);
        }
        admit(migrations, "$PAGER notes.txt");
        let file = "never delete shop/migrations/0029_tmp_backfill.py";
        for line in [
            "echo > shop/migrations/0029_tmp_backfill.py",
            "mv /tmp/x.py shop/migrations/0029_tmp_backfill.py",
            "truncate -s 0 shop/migrations/0029_tmp_backfill.py",
        ] {
            refuse(file, line);
        }
        admit(file, "echo > shop/migrations/0030_other.py");
        refuse("never delete *.sql files", "rm -rf db");
        admit("never delete *.sql files", "rm notes.txt");
        refuse(
            "don't delete the migrations folder",
            "rm -rf shop/migrations",
        );
        admit("don't delete the migrations folder", "rm -rf shop/models");
        refuse(
            "do not delete rows from orders",
            "psql -c 'DELETE FROM orders'",
        );
        admit(
            "do not delete rows from orders",
            "psql -c 'DELETE FROM customers'",
        );
    }

    #[test]
    fn a_sql_line_cannot_carry_a_shell_command_past_the_gate() {
        let t = "do not touch anything under shop/migrations/";
        for line in [
            "DELETE FROM tmp WHERE 1=0 || rm -rf shop/migrations",
            "ALTER TABLE x ADD c int && rm -rf shop/migrations",
            "DELETE FROM tmp\nrm -rf shop/migrations",
            "UPDATE t SET a=1; rm -rf shop/migrations/",
            "coproc rm -rf shop/migrations",
        ] {
            refuse(t, line);
        }
        refuse(
            "do not push to main",
            "DELETE FROM tmp; git push -f origin main",
        );
        admit(t, "UPDATE t SET a=1; ls shop/migrations/");
        refuse("never drop tables", "DROP TABLE x && ls");
    }

    #[test]
    fn traps_aliases_and_functions_are_read_for_what_they_run() {
        let t = "do not touch anything under shop/migrations/";
        refuse(t, "trap 'rm -rf shop/migrations' EXIT");
        refuse(t, "alias x='rm -rf shop/migrations'");
        refuse(t, "function f { rm -rf shop/migrations; }; f");
        admit(t, "trap 'ls shop/migrations' EXIT");
    }
}
