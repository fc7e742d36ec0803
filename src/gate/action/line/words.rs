//! Word lists, prose and the messages a finding gives.

use super::*;

/// Whether a command's first word holds an expansion (`rm${IFS}-rf`): its name cannot be known
/// from the line.
pub(in crate::gate::action) fn named_by_expansion(text: &str) -> bool {
    named_by_unset(text, &vars::Vars::new())
}

/// Whether a command's text names its command (its first word after the assignments) by an
/// expansion that is not a variable the line set plainly ([`vars`]).
pub(in crate::gate::action) fn named_by_unset(text: &str, set: &vars::Vars) -> bool {
    text.split_whitespace()
        .find(|w| !is_assignment(w))
        .is_some_and(|w| {
            let bare: String = w.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
            w.contains('`') || bare.contains('$') && vars::expand(&bare, set).is_none()
        })
}

/// Prefixes that run the next word as the command.
pub(in crate::gate::action) const PREFIXES: &[&str] = &[
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
    "parallel",
    "watch",
    "noglob",
    "nocorrect",
];

/// Known commands with no effect on the things the gate tracks (their redirections still
/// count).
pub(in crate::gate::action) const READ_ONLY: &[&str] = &[
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
pub(in crate::gate::action) const RISKY: &[&str] = &[
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

pub(in crate::gate::action) fn risky(line: &str) -> bool {
    line.contains('>')
        || line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| RISKY.contains(&w.to_lowercase().as_str()))
}

/// Whether an unlexable line reads as prose: no shell operator, and a first word that is not a
/// command of the table.
pub(in crate::gate::action) fn prose(line: &str) -> bool {
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
pub(in crate::gate::action) fn short(t: &str) -> String {
    let t = t.trim();
    if t.chars().count() <= 80 {
        t.to_string()
    } else {
        let head: String = t.chars().take(77).collect();
        format!("{head}...")
    }
}

pub(in crate::gate::action) fn describe(e: &Effect) -> String {
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

pub(in crate::gate::action) fn norm_branch(b: &str) -> String {
    let b = b.strip_prefix("refs/heads/").unwrap_or(b);
    let b = b
        .strip_prefix("origin/")
        .or_else(|| b.strip_prefix("upstream/"))
        .unwrap_or(b);
    b.to_string()
}

/// Commands a prohibition's "run X" does not name (the table handles them).
pub(in crate::gate::action) fn is_known_command(w: &str) -> bool {
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
