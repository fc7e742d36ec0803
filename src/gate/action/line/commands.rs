//! The command table: what each known command does to its operands.

use super::*;

/// The last component of a command word (`/bin/rm` is `rm`).
pub(in crate::gate::action) fn base(t: &str) -> &str {
    t.rsplit('/').next().unwrap_or(t)
}

pub(in crate::gate::action) fn is_assignment(t: &str) -> bool {
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

pub(in crate::gate::action) fn rsync(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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
    if remote_destination(d, cx, out) {
        return;
    }
    landing(cx, out, cwd, d, &srcs, false, recursive, true, Op::Write);
    if delete {
        if let Some(t) = resolve(cwd, d) {
            out.put(Op::Delete, under(&t), cx.text);
        }
    }
}

/// Whether a copy's destination is remote, which makes the copy opaque: what a remote
/// destination holds, and what `--delete` removes there, the line cannot tell, as for
/// `ssh host CMD` (the host may be this machine).
pub(in crate::gate::action) fn remote_destination(d: &Word, cx: &Cx, out: &mut Acc) -> bool {
    let remote = is_remote(&d.text);
    if remote {
        out.opaque(
            cx.text,
            "it writes to a remote destination, which the line cannot see",
        );
    }
    remote
}

/// `host:path`, `user@host:path`, `rsync://...`.
pub(in crate::gate::action) fn is_remote(t: &str) -> bool {
    t.starts_with("rsync://")
        || t.split_once(':')
            .is_some_and(|(h, _)| !h.is_empty() && !h.contains('/'))
}

pub(in crate::gate::action) fn modes(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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
                out.put(Op::Add, under(&t), cx.text);
            }
            out.put(Op::Add, t, cx.text);
        }
    }
}

pub(in crate::gate::action) fn sed(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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
pub(in crate::gate::action) fn sed_runs(script: &str) -> bool {
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
pub(in crate::gate::action) fn perl(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
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

pub(in crate::gate::action) fn awk(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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
pub(in crate::gate::action) fn awk_runs(prog: &str, cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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

pub(in crate::gate::action) fn find(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
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
pub(in crate::gate::action) const GIT_QUIET: &[&str] = &[
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
pub(in crate::gate::action) fn git(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
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
    // `git SUB --help` shows the manual and does nothing else (before a `--`, past which it
    // would be a path).
    let help = (rest.iter())
        .take_while(|w| w.text != "--")
        .any(|w| !w.dynamic && w.text == "--help");
    if help {
        return true;
    }
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
        // git-town's commands that sync, ship or make branches push the branches they touch,
        // which the line does not name (the main branch among them for `sync` and `ship`).
        "town" => {
            let verb = rest.iter().find(|w| !w.text.starts_with('-'));
            let pushes = [
                "sync", "ship", "hack", "append", "prepend", "propose", "kill", "delete",
            ];
            if verb.is_some_and(|v| pushes.contains(&v.text.as_str()))
                && !rest.iter().any(|w| w.text == "--dry-run")
            {
                pushes_to(out, cx, None, false);
            }
        }
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
                    landing(cx, out, &here, d, &srcs, false, false, false, Op::Write);
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

pub(in crate::gate::action) fn push(rest: &[Word], cx: &Cx, out: &mut Acc) {
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
        pushes_to(out, cx, None, force || delete);
        return;
    }
    for r in refspecs {
        let mut f = force || delete;
        // A source decided at run time pushes to the destination the refspec names
        // (`"$(git rev-parse HEAD)":refs/heads/ci/x`).
        let named_dst =
            r.dynamic
                .then(|| r.text.rsplit_once(':'))
                .flatten()
                .filter(|(src, dst)| {
                    !src.is_empty()
                        && !dst.is_empty()
                        && dst
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
                });
        let name = if let Some((_, dst)) = named_dst {
            let dst = dst.strip_prefix("refs/heads/").unwrap_or(dst);
            (!matches!(dst, "HEAD" | "@")).then(|| dst.to_string())
        } else if r.dynamic {
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
            // A wildcard refspec (`refs/heads/*:refs/heads/*`) pushes every branch it matches.
            (!matches!(dst, "" | "HEAD" | "@") && !dst.contains(['*', '?', '[']))
                .then(|| dst.to_string())
        };
        pushes_to(out, cx, name, f);
    }
}

/// A push by the command `cx` to branch `name` (`None`: a branch the line does not name, which
/// matches every branch prohibition).
pub(in crate::gate::action) fn pushes_to(
    out: &mut Acc,
    cx: &Cx,
    name: Option<String>,
    force: bool,
) {
    out.put(Op::Push, Target::Branch { name, force }, cx.text);
}

/// A shell: `-c BODY` is parsed; with no script, an echoed standard input is.
pub(in crate::gate::action) fn shell(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let mut k = 0;
    let mut has_c = false;
    let mut has_s = false;
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
            // `-s`: the code comes from standard input; the operands are its arguments.
            has_s |= flags.contains('s');
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
    if let Some(script) = args.get(k).filter(|_| !has_s) {
        // `bash /dev/stdin` reads its standard input, as `bash -s` does.
        if !matches!(script.text.as_str(), "/dev/stdin" | "/dev/fd/0") {
            // A script named at run time (`bash "$SCRIPT"`, `bash <(curl ...)`) is code the
            // line does not show; a script file it names is a project's script, as `make` is.
            if script_built(script) {
                out.opaque(
                    cx.text,
                    "a shell runs a script named at run time, which the line does not show",
                );
                return true;
            }
            return false;
        }
    }
    match cx.stdin {
        Stdin::Text(t) => {
            parse_in(t, cwd.clone(), cx.depth + 1, out);
            true
        }
        Stdin::Unknown => {
            out.opaque(
                cx.text,
                "a shell runs the code it reads from standard input (a pipe or a file), which the line does not show",
            );
            true
        }
        Stdin::Tty => false,
    }
}

/// Whether a script operand is named at run time: an expansion, a command or process
/// substitution (`<(curl ...)`), or a file descriptor of one.
pub(in crate::gate::action) fn script_built(script: &Word) -> bool {
    script.dynamic
        || !script.subs.is_empty()
        || script.text.starts_with("<(")
        || script.text.starts_with("/dev/fd/")
        || script.text.starts_with("/proc/self/fd/")
}

/// SQL clients read by a table: the client (the command's name, or `cockroach` with `sql`,
/// `clickhouse` with `client`), its options that take SQL, and those that take a file of SQL
/// (opaque: the file is not on the line). Their standard input is read as psql's is.
pub(in crate::gate::action) const SQL_CLIENTS: &[(&str, &[&str], &[&str])] = &[
    ("clickhouse-client", &["--query", "-q"], &["--queries-file"]),
    ("sqlcmd", &["-Q", "-q"], &["-i"]),
    ("mssql-cli", &["-Q", "--query"], &["-i", "--input-file"]),
    ("usql", &["-c", "--command"], &["-f", "--file"]),
    ("cockroach", &["-e", "--execute"], &["-f", "--file"]),
    ("snowsql", &["-q", "--query"], &["-f", "--filename"]),
    ("trino", &["--execute"], &["-f", "--file"]),
    ("presto", &["--execute"], &["-f", "--file"]),
    ("duckdb", &["-c", "-cmd"], &["-init"]),
    ("bq", &[], &[]),
];

/// psql, mysql, mariadb, sqlite3: the SQL on their line or their echoed standard input.
pub(in crate::gate::action) fn sql_client(
    name: &str,
    args: &[Word],
    cwd: &Cwd,
    cx: &Cx,
    out: &mut Acc,
) -> bool {
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
                    // SQL from a file (`-f -` is standard input, read below).
                    ("f" | "file", Some(v)) if v.text != "-" => {
                        out.opaque(
                            cx.text,
                            "it runs SQL from a file, which the line does not show",
                        );
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
        n if SQL_CLIENTS.iter().any(|(c, _, _)| *c == n) => {
            let (_, takes_sql, takes_file) = SQL_CLIENTS
                .iter()
                .find(|(c, _, _)| *c == n)
                .copied()
                .unwrap_or_default();
            let mut k = 0;
            while let Some(w) = args.get(k) {
                k += 1;
                let t = w.text.as_str();
                let (opt, attached) = match t.split_once('=') {
                    Some((o, v)) if o.starts_with("--") => (o, Some(v)),
                    _ => (t, None),
                };
                if takes_sql.contains(&opt) {
                    let v = attached
                        .map(str::to_string)
                        .or_else(|| args.get(k).map(|v| v.text.clone()));
                    built |=
                        w.dynamic || attached.is_none() && args.get(k).is_some_and(|v| v.dynamic);
                    sql.extend(v);
                    k += usize::from(attached.is_none());
                } else if takes_file.contains(&opt) {
                    out.opaque(
                        cx.text,
                        "it runs SQL from a file, which the line does not show",
                    );
                    return true;
                }
            }
            // `bq query 'SQL'` and `duckdb DB 'SQL'`: the SQL is an operand.
            if matches!(n, "bq" | "duckdb") && sql.is_empty() {
                let ops: Vec<&Word> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
                let skip = if n == "bq" {
                    usize::from(ops.first().is_some_and(|w| w.text == "query"))
                } else {
                    1
                };
                built |= ops.iter().skip(skip).any(|w| w.dynamic);
                sql.extend(ops.iter().skip(skip).map(|w| w.text.clone()));
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
                    "it runs SQL it reads from standard input (a pipe or a file), which the line does not show",
                );
                return true;
            }
            Stdin::Tty => return false,
        }
    }
    // The statements of several `-c` (or `--query`) run in order in one session: a table
    // renamed by one is the table a later one drops.
    let sql = [sql.join(";\n")];
    let mut understood = true;
    for q in &sql {
        let r = read_sql(q, false);
        if r.runtime {
            out.opaque(
                cx.text,
                "it runs SQL built at run time (a DO block, EXECUTE or \\gexec)",
            );
        }
        for (op, t, _) in r.effects {
            out.put(op, Target::Table(t), cx.text);
        }
        understood &= r.unknown.is_empty();
    }
    understood
}
