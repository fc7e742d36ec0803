//! What an action line does: the action gate's reading of
//! shell command lines (and SQL) against pinned prohibitions (SPEC.md section 8.4). Pure
//! functions of strings; only `std`.
//!
//! [`parse`] reads a line as a POSIX `sh` would, for a subset, and lists its [`Effect`]s: which
//! operation ([`Op`]) it does to which path, branch or table ([`Target`]). The prohibition's side
//! (what a sentence forbids, and whether a parsed line does it) is `super::prohibition`. Each
//! part of the reading has its room: `lex` (words and operators), `walk` (simple commands, their
//! prefixes, bodies read again, the working directory), `options`, `paths`, `commands` (the
//! command table), `tools` (compressors, tar, openssl, curl), `sql`, `opaque` (what the line cannot show: decoded escapes, here-documents,
//! inline interpreter code) and `words` (word lists and messages).
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
//!   here-document, nesting too deep) is unparseable; `prohibition::violation` then refuses it under any
//!   prohibition with an operation when the line holds a deleting or writing word
//!   ([`Parsed::risky`]): it fails closed. A line that cannot be lexed, holds no shell operator
//!   and does not start with a known command (prose such as "don't bump libfoo") is read as one
//!   unknown command instead.

mod commands;
mod lex;
mod opaque;
mod options;
mod paths;
mod services;
mod sql;
mod tools;
mod vars;
mod walk;
mod words;

pub(in crate::gate::action) use commands::*;
pub(in crate::gate::action) use lex::*;
pub(in crate::gate::action) use options::*;
pub(in crate::gate::action) use paths::*;
pub(in crate::gate::action) use sql::*;
pub(in crate::gate::action) use tools::*;
pub(in crate::gate::action) use walk::*;
pub(in crate::gate::action) use words::*;

use std::collections::HashSet;

/// How deep bodies (`$(...)`, `sh -c`, `eval`, `find -exec`, ...) are parsed; deeper is
/// unparseable.
pub(in crate::gate::action) const MAX_DEPTH: usize = 16;

/// How many simple commands and nested lines one [`parse`] reads before it gives up (the line
/// is then unparseable): a bound on hostile input.
pub(in crate::gate::action) const BUDGET: usize = 4096;

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
    /// Creates a file or directory, adds to one, or changes its times, mode or owner, without
    /// destroying what it holds (`touch`, `mkdir`, `>>`, `tee -a`, `cp -n`, `ln` without `-f`,
    /// `chmod`, `chown`): a prohibition on writing forbids it, one on deleting does not.
    Add,
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
    pub(in crate::gate::action) fn verb(self) -> &'static str {
        match self {
            Op::Delete => "deletes",
            Op::Write => "writes",
            Op::Add => "adds to",
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
    /// prohibition's `Forbidden::commands` are matched against besides `unknown`.
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
        handed: None,
        vars: Default::default(),
    };
    parse_in(line, Some(String::new()), 0, &mut acc);
    // A line read as prose keeps nothing of its reading, unless the reading found what it
    // cannot show (an opaque command fails closed, prose or not).
    if acc.p.unparseable && acc.p.opaque.is_empty() && prose(line) {
        acc.p = Parsed {
            unknown: vec![line.trim().to_string()],
            risky: acc.p.risky,
            ..Parsed::default()
        };
    }
    acc.p
}

/// Words that lead a table's name written before the keyword ("the users table").
pub(in crate::gate::action) const TABLE_LEADS: &[&str] = &[
    "the", "drop", "truncate", "alter", "delete", "empty", "wipe",
];

/// Words that qualify tables rather than name one.
pub(in crate::gate::action) const TABLE_QUALIFIERS: &[&str] = &[
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
pub(in crate::gate::action) const SQL_VERBS: &[&str] =
    &["drop", "truncate", "alter", "delete", "rename", "lock"];
