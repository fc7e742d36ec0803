//! Walking a lexed line: simple commands, their prefixes, bodies parsed again, and the
//! working directory.

use super::*;

/// The working directory: relative to the project root ("" is the root), absolute, or unknown.
pub(in crate::gate::action) type Cwd = Option<String>;

/// A command's standard input, as far as the line tells.
#[derive(Debug, Clone)]
pub(in crate::gate::action) enum Stdin {
    Tty,
    Unknown,
    Text(String),
}

/// What one `parse` accumulates.
pub(in crate::gate::action) struct Acc {
    pub(in crate::gate::action) p: Parsed,
    pub(in crate::gate::action) budget: usize,
    pub(in crate::gate::action) seen: HashSet<Effect>,
    /// Git aliases the line defines, with what each stands for.
    pub(in crate::gate::action) git_aliases: Vec<(String, String)>,
    /// Symbolic links the line makes: (the link, normalised; what it points to, normalised).
    pub(in crate::gate::action) links: Vec<(String, String)>,
    /// Shell variables the line sets to plain values ([`vars`]).
    pub(in crate::gate::action) vars: vars::Vars,
    /// The standard input of the next line [`parse_in`] reads, when a command hands its own
    /// on (`ssh HOST CMD` runs CMD on what ssh reads).
    pub(in crate::gate::action) handed: Option<Stdin>,
}

impl Acc {
    /// Spends `n` of the budget; false (and the line is unparseable) when it is spent.
    pub(in crate::gate::action) fn spend(&mut self, n: usize) -> bool {
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
    pub(in crate::gate::action) fn opaque(&mut self, command: &str, why: &str) {
        let note = format!("`{}`: {why}", short(command));
        if !self.p.opaque.contains(&note) {
            self.p.opaque.push(note);
        }
    }

    pub(in crate::gate::action) fn put(&mut self, op: Op, target: Target, command: &str) {
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
pub(in crate::gate::action) struct Cx<'a> {
    pub(in crate::gate::action) text: &'a str,
    pub(in crate::gate::action) depth: usize,
    pub(in crate::gate::action) stdin: &'a Stdin,
}

impl Cx<'_> {
    pub(in crate::gate::action) fn eff(&self, out: &mut Acc, op: Op, cwd: &Cwd, w: &Word) {
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

pub(in crate::gate::action) fn parse_in(line: &str, cwd: Cwd, depth: usize, out: &mut Acc) {
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
    let stdin = out.handed.take().unwrap_or(Stdin::Tty);
    match (Lexer { s: &chars, i: 0 }).tokens() {
        Ok(toks) => walk(&chars, &toks, cwd, stdin, depth, out),
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

pub(in crate::gate::action) fn walk(
    src: &[char],
    toks: &[Tok],
    cwd: Cwd,
    first: Stdin,
    depth: usize,
    out: &mut Acc,
) {
    let mut cwd = cwd;
    let mut saved: Vec<Cwd> = Vec::new();
    let mut cur: Vec<&Tok> = Vec::new();
    let mut stdin = first;
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

pub(in crate::gate::action) fn run_subs(w: &Word, cwd: &Cwd, depth: usize, out: &mut Acc) {
    for body in &w.subs {
        parse_in(body, cwd.clone(), depth + 1, out);
    }
}

/// Reserved words skipped before a command.
pub(in crate::gate::action) const KEYWORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac",
];

/// Reads one simple command; returns the text it prints when the line tells (echo, printf).
pub(in crate::gate::action) fn simple(
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
    let mut writes: Vec<(Op, &Word)> = Vec::new();
    let mut targets: Vec<(RedirKind, Word)> = Vec::new();
    for t in toks {
        match t {
            Tok::Word(w) => {
                run_subs(w, cwd, depth, out);
                words.push(vars::resolved(w, &out.vars));
            }
            Tok::Redir { kind, target, .. } => {
                run_subs(target, cwd, depth, out);
                targets.push((*kind, vars::resolved(target, &out.vars)));
            }
            Tok::Sep(_) => {}
        }
    }
    vars::record(&words, &mut out.vars);
    for (kind, target) in &targets {
        match kind {
            RedirKind::Write => writes.push((Op::Write, target)),
            RedirKind::Append => writes.push((Op::Add, target)),
            RedirKind::HereString => stdin = Stdin::Text(target.text.clone()),
            // A file on standard input (`bash < f`, `psql < "$F"`): what it holds is not on
            // the line, so a program that runs it runs code the line does not show.
            RedirKind::Read if target.text == "/dev/null" => stdin = Stdin::Text(String::new()),
            RedirKind::Read => stdin = Stdin::Unknown,
            _ => {}
        }
    }
    for (op, w) in writes {
        if let Some(t) = resolve(cwd, w) {
            out.put(op, t, &text);
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
pub(in crate::gate::action) fn command(
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
    // GNU parallel: the inputs go after the command when it holds no `{}`.
    let mut inputs_appended = false;
    let mut here: Option<Cwd> = None;
    let cx = Cx { text, depth, stdin };
    loop {
        let Some(w) = words.get(i) else {
            if inputs_appended {
                out.opaque(
                    text,
                    "it runs the commands it reads from standard input, which the line does not show",
                );
            }
            return None;
        };
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
        let skip = if let Some(k) = runner(name, rest) {
            k
        } else {
            match name {
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
                                for x in rest.get(s.first_operand(rest.len())..).unwrap_or_default()
                                {
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
                "nohup" | "builtin" | "chronic" | "unbuffer" | "noglob" | "nocorrect"
                | "busybox" | "coproc" => 0,
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
                "stdbuf" => options(rest, "ioe", &["input", "output", "error"], true)
                    .first_operand(rest.len()),
                "timeout" => {
                    options(rest, "sk", &["signal", "kill-after"], true).first_operand(rest.len())
                        + 1
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
                // GNU parallel runs its command once per input (`::: a b`, or standard input),
                // put in place of `{}` or after the command: an input the command gets is read as
                // a value decided at run time, as under xargs. On other hosts (`-S`) it is opaque.
                "parallel" => {
                    let s = options(
                        rest,
                        "jSaIdE",
                        &[
                            "jobs", "sshlogin", "arg-file", "delay", "timeout", "joblog", "results",
                        ],
                        true,
                    );
                    if s.has("S") || s.has("sshlogin") {
                        out.opaque(
                            text,
                            "it runs its commands on other hosts, which the line cannot see",
                        );
                    }
                    xargs = Some(Some("{}".to_string()));
                    inputs_appended = true;
                    s.first_operand(rest.len())
                }
                _ => break,
            }
        };
        i += 1 + skip;
    }
    let w = words.get(i)?;
    let mut args: Vec<Word> = words.get(i + 1..).unwrap_or_default().to_vec();
    if inputs_appended {
        // Its inputs (after `:::`) are what it runs the command on, not the command's words.
        if let Some(k) = args.iter().position(|a| a.text.starts_with(":::")) {
            args.truncate(k);
        }
    }
    if let Some(replace) = xargs {
        let stdin_word = Word::synthetic("<stdin>", true, false);
        match replace.filter(|r| !r.is_empty()) {
            Some(r) => {
                let placed = args.iter().any(|a| a.text.contains(&r));
                for a in &mut args {
                    *a = fill(a, &r, &stdin_word);
                }
                if inputs_appended && !placed {
                    args.push(stdin_word);
                }
            }
            None => args.push(stdin_word),
        }
    }
    let here = here.unwrap_or_else(|| cwd.clone());
    let name = base(&w.text).to_string();
    run(&name, &args, cwd, &here, &cx, out)
}

/// Runners run their next word as a command of the project's environment (`bundle exec`,
/// `uv|poetry|pipenv|pdm|hatch run`, `pnpm|yarn exec|dlx`, `npx`, `bunx`): how many words
/// after a runner's name come before the command it runs (`bundle exec CMD`: 1;
/// `uv run --with x CMD`: 3; `npx -y CMD`: 1), or `None` when `name` with `rest` runs no
/// command of its own (`npx` alone, `poetry install`).
pub(in crate::gate::action) fn runner(name: &str, rest: &[Word]) -> Option<usize> {
    let first = rest.first().map(|w| w.text.as_str());
    let (skip, long): (usize, &[&str]) = match (name, first) {
        ("bundle", Some("exec")) | ("pnpm" | "yarn", Some("exec" | "dlx")) => (1, &[]),
        ("uv" | "poetry" | "pipenv" | "pdm" | "hatch", Some("run")) => (
            1,
            &[
                "with",
                "python",
                "project",
                "directory",
                "env-file",
                "package",
                "group",
                "extra",
                "env",
            ],
        ),
        ("npx" | "bunx" | "pnpx", _) => (0, &["package", "call"]),
        _ => return None,
    };
    let after = rest.get(skip..).unwrap_or_default();
    let s = options(after, "pec", long, true);
    let k = skip + s.first_operand(after.len());
    (k < rest.len()).then_some(k)
}

/// `w` with the placeholder `r` (xargs' `-I R`, find's `{}`) standing for `stand_in`: the
/// stand-in itself when the word starts with it, else anything under the word's literal
/// directory before it.
pub(in crate::gate::action) fn fill(w: &Word, r: &str, stand_in: &Word) -> Word {
    match w.text.find(r) {
        None => w.clone(),
        Some(0) => stand_in.clone(),
        // A text, not a path (`psql -c 'DROP TABLE {}'`, `sh -c 'rm -rf {}'`): read with the
        // stand-in as a value decided at run time.
        Some(_) if w.text.contains(char::is_whitespace) => {
            Word::synthetic(&w.text.replace(r, "\"${STAND_IN}\""), true, false)
        }
        Some(pos) => {
            let literal = w.text.get(..pos).unwrap_or("");
            let dir = literal
                .get(..literal.rfind('/').map_or(0, |k| k + 1))
                .unwrap_or("");
            Word::synthetic(&format!("{dir}**"), w.dynamic, true)
        }
    }
}

/// Commands whose arguments may name a task that drops or empties a whole database
/// ([`services::database_task`]).
const APP_TOOLS: &[&str] = &[
    "rails",
    "rake",
    "bundle",
    "prisma",
    "npx",
    "pnpm",
    "yarn",
    "bunx",
    "bun",
    "python",
    "python3",
    "manage.py",
    "django-admin",
    "uv",
    "poetry",
    "sequelize",
    "sqlx",
    "dbmate",
    "knex",
    "alembic",
    "flyway",
    "liquibase",
    "goose",
    "migrate",
    "diesel",
    "php",
    "sequelize-cli",
];

/// Runs the command table on one command.
pub(in crate::gate::action) fn run(
    name: &str,
    args: &[Word],
    cwd: &mut Cwd,
    here: &Cwd,
    cx: &Cx,
    out: &mut Acc,
) -> Option<String> {
    // An application's task that drops, resets or empties its whole database
    // (`rails db:drop`, `npx prisma migrate reset`, `python manage.py flush`).
    if APP_TOOLS.contains(&name) {
        let words: Vec<&str> = std::iter::once(name)
            .chain(args.iter().map(|a| a.text.as_str()))
            .collect();
        if let Some(op) = services::database_task(&words) {
            out.put(op, Target::Table(None), cx.text);
        }
        if services::makes_migration(&words) {
            return done(true, cx, out);
        }
        // Migrations applied on the line that wrote them run what the line wrote, which the
        // gate does not read as migrations.
        if services::applies_migrations(&words)
            && out.p.effects.iter().any(services::writes_migration)
        {
            out.opaque(
                cx.text,
                "it applies migrations the line itself wrote, which the gate does not read",
            );
        }
        match services::console(name, args) {
            Ok(Some(client_args)) => {
                let known = sql_client("psql", &client_args, here, cx, out);
                return done(known, cx, out);
            }
            Err(()) => {
                out.opaque(
                    cx.text,
                    "it runs SQL from a file, which the line does not show",
                );
                return done(false, cx, out);
            }
            Ok(None) => {}
        }
    }
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
                landing(cx, out, here, d, &srcs, whole, false, false, kept(&s));
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
                landing(cx, out, here, d, &srcs, whole, recursive, false, kept(&s));
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
                landing(cx, out, here, d, &ops, false, false, false, linked(&s));
            } else if let [only] = ops.as_slice() {
                let dot = Word::synthetic(".", false, false);
                if let Some(t) = resolve(here, &dot).and_then(|d| into(&d, only)) {
                    out.put(linked(&s), t, cx.text);
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
                    landing(cx, out, here, d, &srcs, whole, false, false, linked(&s));
                }
            }
            true
        }
        "touch" | "mkdir" => {
            let s = match name {
                "touch" => options(args, "drt", &["date", "reference", "time"], false),
                _ => options(args, "m", &["mode", "context"], false),
            };
            // Creating a file or directory, or setting its times, destroys nothing it holds.
            for w in s.words(args) {
                cx.eff(out, Op::Add, here, w);
            }
            true
        }
        "truncate" | "tee" => {
            let s = match name {
                "truncate" => options(args, "sr", &["size", "reference"], false),
                _ => options(args, "", &[], false),
            };
            // `tee -a` adds to its files; `tee` and `truncate` replace what they hold.
            let op = if name == "tee" && (s.has("a") || s.has("append")) {
                Op::Add
            } else {
                Op::Write
            };
            for w in s.words(args) {
                cx.eff(out, op, here, w);
            }
            true
        }
        "chmod" | "chown" | "chgrp" => {
            modes(args, here, cx, out);
            true
        }
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "zstd" | "unzstd" => {
            compressor(name, args, here, cx, out)
        }
        "tar" | "gtar" | "bsdtar" => tar(args, here, cx, out),
        "openssl" => openssl(args, here, cx, out),
        "curl" => curl(args, here, cx, out),
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
        n if SQL_CLIENTS.iter().any(|(c, _, _)| *c == n) => sql_client(n, args, here, cx, out),
        // `clickhouse client ...` is `clickhouse-client ...`.
        "clickhouse" if args.first().is_some_and(|a| a.text == "client") => {
            sql_client("clickhouse-client", &args[1..], here, cx, out)
        }
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
        "docker" | "podman"
            if matches!(args.first().map(|w| w.text.as_str()), Some("run"))
                || args
                    .iter()
                    .take(2)
                    .map(|w| w.text.as_str())
                    .eq(["container", "run"]) =>
        {
            // A container run with host directories mounted: what it runs inside reaches the
            // host through each mount, as through a link the line makes.
            let skip = if args[0].text == "run" { 1 } else { 2 };
            match container_run(&args[skip..], here) {
                Err(()) => {
                    out.opaque(
                        cx.text,
                        "it runs a container whose image or mounts the line does not tell plainly",
                    );
                    false
                }
                Ok((mounts, inner)) => {
                    let mounted = !mounts.is_empty();
                    out.links.extend(mounts);
                    match inner {
                        Some(inner) => {
                            out.p.unknown.push(cx.text.to_string());
                            let mut nowhere: Cwd = None;
                            command(&inner, &mut nowhere, cx.stdin, cx.text, cx.depth + 1, out);
                            return None;
                        }
                        None if mounted => {
                            out.opaque(cx.text, "it runs its image's own command, which the line does not show, with a host directory mounted");
                            false
                        }
                        None => false,
                    }
                }
            }
        }
        "docker" | "podman" | "buildah" | "helm" if services::registry_push(name, args) => true,
        "dropdb" | "mysqladmin" | "pg_restore" => {
            services::database(name, args, cx, out).unwrap_or(false)
        }
        "gh" => services::gh(args, cx, out),
        "sl" | "hg" => services::sapling(args, cx, out),
        // `php artisan tinker --execute=CODE` runs inline PHP in the application.
        "php"
            if args.first().is_some_and(|a| a.text == "artisan")
                && args.iter().any(|a| a.text == "tinker") =>
        {
            let code =
                args.iter()
                    .enumerate()
                    .find_map(|(k, a)| match a.text.strip_prefix("--execute") {
                        Some("") => args.get(k + 1).map(|v| v.text.clone()),
                        Some(v) => v.strip_prefix('=').map(str::to_string),
                        None => None,
                    });
            match code {
                Some(c) if opaque::plainly_read_only(&c) => true,
                Some(_) => {
                    out.opaque(
                        cx.text,
                        "it runs inline PHP code, which the gate does not read",
                    );
                    true
                }
                None => false,
            }
        }
        "jj" => services::jj(args, cx, out),
        "scp" => {
            services::scp(args, here, cx, out);
            true
        }
        "docker" | "podman" | "docker-compose" | "kubectl" | "ssh" => {
            // A command run elsewhere (a container, a pod, a host): parsed with an unknown
            // working directory (its relative paths are Anything), and listed as unknown too.
            let inner = elsewhere(name, args);
            // What runs on another host, or in a container, is built at run time when a word
            // of it is an expansion (`ssh web1 "$CMD"`): opaque, as `bash -c "$CMD"` is.
            if name == "ssh" && args.iter().any(|w| w.dynamic) {
                out.opaque(
                    cx.text,
                    "it runs on another host a command built at run time",
                );
            }
            // `ssh HOST` with no command runs a login shell on what ssh reads.
            if name == "ssh" && inner.is_empty() {
                match cx.stdin {
                    Stdin::Unknown => out.opaque(
                        cx.text,
                        "it runs on another host the commands it reads from standard input, which the line does not show",
                    ),
                    Stdin::Text(t) => {
                        out.p.unknown.push(cx.text.to_string());
                        parse_in(t, None, cx.depth + 1, out);
                        return None;
                    }
                    Stdin::Tty => {}
                }
            }
            if inner.is_empty() {
                false
            } else {
                out.p.unknown.push(cx.text.to_string());
                if named_by_unset(cx.text, &out.vars) {
                    out.p.unparseable = true;
                }
                if name == "ssh" {
                    let body: Vec<&str> = inner.iter().map(|a| a.text.as_str()).collect();
                    // The remote command reads what ssh reads (`ssh h 'bash -s' < script`).
                    out.handed = Some(cx.stdin.clone());
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
            // A script named at run time (`python3 <(curl ...)`, `node "$F"`).
            let script = args.iter().find(|a| !a.text.starts_with('-'));
            if code.is_none() && script.is_some_and(script_built) {
                out.opaque(
                    cx.text,
                    &format!(
                        "it runs a {lang} script named at run time, which the line does not show"
                    ),
                );
                return done(true, cx, out);
            }
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
            // Code built at run time and run by `eval` is opaque (issue 37, row 1): a word
            // with an expansion is only known when it runs.
            if args.iter().any(|w| w.dynamic) {
                out.opaque(cx.text, "it evaluates code built at run time");
            }
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
            // What it prints holds a value decided at run time: whatever reads it reads an
            // unknown text (`echo "$QUERY" | psql` runs SQL built at run time).
            if args.iter().any(|w| w.dynamic) {
                return None;
            }
            let said: Vec<&str> = args
                .iter()
                .filter(|a| !(name == "echo" && matches!(a.text.as_str(), "-n" | "-e" | "-E")))
                .map(|a| a.text.as_str())
                .collect();
            let said = said.join(" ");
            // printf (and `echo -e`) decode their backslash escapes (`\n`, `\x67`, `\162`).
            let escapes = name == "printf" || args.first().is_some_and(|a| a.text == "-e");
            return Some(if escapes {
                opaque::printed(&said)
            } else {
                said
            });
        }
        n => READ_ONLY.contains(&n),
    };
    done(known, cx, out)
}

/// Whether perl's options edit files in place (`-i`, `-pi`, `-i.bak`): what [`perl`] reads.
pub(in crate::gate::action) fn in_place(args: &[String]) -> bool {
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
pub(in crate::gate::action) fn texts(args: &[Word]) -> Vec<String> {
    args.iter().map(|a| a.text.clone()).collect()
}

/// The command `docker|podman exec`, `docker compose exec`, `kubectl exec ... --` or
/// `ssh HOST` runs elsewhere; empty when there is none.
pub(in crate::gate::action) fn elsewhere(name: &str, args: &[Word]) -> Vec<Word> {
    let text = |k: usize| args.get(k).map_or("", |w| w.text.as_str());
    let after = |from: usize, short: &str, long: &[&str]| -> Vec<Word> {
        let rest = args.get(from..).unwrap_or_default();
        let s = options(rest, short, long, true);
        rest.get(s.first_operand(rest.len()) + 1..)
            .unwrap_or_default()
            .to_vec()
    };
    const EXEC_LONG: &[&str] = &["env", "user", "workdir", "env-file", "detach-keys", "index"];
    const RUN_LONG: &[&str] = &[
        "env",
        "user",
        "workdir",
        "env-file",
        "volume",
        "publish",
        "entrypoint",
        "name",
        "label",
    ];
    match name {
        "ssh" => after(0, "bcDEeFIiJLlmOopQRSWw", &[]),
        // `kubectl [-n NS] exec POD [opts] -- CMD`.
        "kubectl" => match args.iter().position(|w| w.text == "--") {
            Some(k) if args[..k].iter().any(|w| w.text == "exec") => {
                args.get(k + 1..).unwrap_or_default().to_vec()
            }
            _ => Vec::new(),
        },
        _ if text(0) == "exec" => after(1, "euw", EXEC_LONG),
        // `docker compose [-f FILE] [-p NAME] exec|run [opts] SERVICE CMD`, and `docker-compose`.
        _ if text(0) == "compose" || name == "docker-compose" => {
            let from = usize::from(name != "docker-compose");
            let rest = args.get(from..).unwrap_or_default();
            let global = options(
                rest,
                "fp",
                &[
                    "file",
                    "project-name",
                    "env-file",
                    "profile",
                    "project-directory",
                    "ansi",
                    "progress",
                ],
                true,
            );
            let sub = from + global.first_operand(rest.len());
            match text(sub) {
                "exec" => after(sub + 1, "euw", EXEC_LONG),
                "run" => after(sub + 1, "eluvwp", RUN_LONG),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

pub(in crate::gate::action) fn done(known: bool, cx: &Cx, out: &mut Acc) -> Option<String> {
    if known {
        out.p.known.push(cx.text.to_string());
    } else {
        out.p.unknown.push(cx.text.to_string());
        if named_by_unset(cx.text, &out.vars) {
            out.p.unparseable = true;
        }
    }
    None
}

/// How a copy or move lands on its destination: [`Op::Add`] when it never replaces a file
/// there (`-n`, `--no-clobber`), else [`Op::Write`].
fn kept(s: &Split) -> Op {
    if s.has("n") || s.has("no-clobber") {
        Op::Add
    } else {
        Op::Write
    }
}

/// How `ln` lands on its link: [`Op::Add`] unless `-f` (`--force`) replaces what is there.
fn linked(s: &Split) -> Op {
    if s.has("f") || s.has("force") {
        Op::Write
    } else {
        Op::Add
    }
}
