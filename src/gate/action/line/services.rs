//! Tools that act on a service rather than on files: database tools that drop or empty a whole
//! database (`dropdb`, `pg_restore --clean`, `rails db:drop`, `prisma migrate reset`, Django's
//! `flush`), forges and version-control tools that push (`gh pr merge`, `jj git push`), image
//! registries (`docker push`), and `scp`. Each reads its options as the tool does; what it
//! does to a branch or a table is an [`Effect`] like any other (SPEC.md 8.4).

use super::*;

/// A database tool's effect on tables, or `None` when `name` is not one. `Some(true)`: known.
pub(in crate::gate::action) fn database(
    name: &str,
    args: &[Word],
    cx: &Cx,
    out: &mut Acc,
) -> Option<bool> {
    let every = || Target::Table(None);
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match name {
        // `dropdb NAME` drops a whole database, every table in it.
        "dropdb"
            if !texts
                .iter()
                .any(|t| matches!(*t, "--help" | "-?" | "--version")) =>
        {
            out.put(Op::SqlDrop, every(), cx.text);
            Some(true)
        }
        "mysqladmin" if texts.iter().any(|t| t.eq_ignore_ascii_case("drop")) => {
            out.put(Op::SqlDrop, every(), cx.text);
            Some(true)
        }
        // `pg_restore --clean` drops each object before it restores it: the tables `-t` names,
        // or every table of the archive.
        "pg_restore" => {
            let s = options(
                args,
                "dfFjnNtTIPLUhpSe",
                &[
                    "dbname",
                    "file",
                    "format",
                    "jobs",
                    "schema",
                    "exclude-schema",
                    "table",
                    "trigger",
                    "index",
                    "function",
                    "use-list",
                    "username",
                    "host",
                    "port",
                    "superuser",
                    "role",
                ],
                false,
            );
            if s.has("c") || s.has("clean") {
                let tables: Vec<&Opt> = (s.opts.iter())
                    .filter(|o| o.name == "t" || o.name == "table")
                    .collect();
                for t in &tables {
                    let name = t.value.as_ref().filter(|v| !v.dynamic);
                    let target = Target::Table(name.map(|v| v.text.to_ascii_lowercase()));
                    out.put(Op::SqlDrop, target, cx.text);
                }
                if tables.is_empty() {
                    out.put(Op::SqlDrop, every(), cx.text);
                }
            }
            Some(true)
        }
        _ => None,
    }
}

/// Tasks of an application's own tool that drop, reset or empty its whole database: Rails and
/// Rake (`db:drop`, `db:reset`, `db:purge`, `db:migrate:reset`), Prisma (`migrate reset`,
/// `db push --force-reset`), `dbmate drop`, `sqlx database drop|reset`, tools that undo every
/// migration (`alembic downgrade base`, `knex migrate:rollback --all`, `flyway clean`, ...) and
/// Django's `manage.py` (`flush` empties every table; `reset_db` and `migrate APP zero` drop). `words` are the command's
/// name and arguments; `None` when they name no such task.
pub(in crate::gate::action) fn database_task(words: &[&str]) -> Option<Op> {
    let has = |w: &str| words.contains(&w);
    let rails = ["db:drop", "db:reset", "db:purge", "db:migrate:reset"];
    if words.iter().any(|w| {
        rails
            .iter()
            .any(|t| *w == *t || w.strip_prefix(t).is_some_and(|r| r.starts_with(':')))
    }) {
        return Some(Op::SqlDrop);
    }
    let next_to = |first: &str| {
        let at = words.iter().position(|w| *w == first)?;
        words.get(at + 1).copied()
    };
    if next_to("migrate") == Some("reset") {
        return Some(Op::SqlDrop);
    }
    if has("push") && has("--force-reset") {
        return Some(Op::SqlDrop);
    }
    // Undoing every migration drops what the migrations made: `alembic downgrade base`,
    // `knex migrate:rollback --all`, `sequelize db:migrate:undo:all`, `flyway clean`,
    // `liquibase drop-all`.
    if next_to("downgrade") == Some("base")
        || has("migrate:rollback") && has("--all")
        || has("db:migrate:undo:all")
        || next_to("flyway") == Some("clean")
        || words.iter().any(|w| matches!(*w, "dropAll" | "drop-all"))
    {
        return Some(Op::SqlDrop);
    }
    // Laravel's `artisan db:wipe`, `migrate:fresh` and `migrate:reset` drop every table.
    if has("artisan")
        && words
            .iter()
            .any(|w| matches!(*w, "db:wipe" | "migrate:fresh" | "migrate:reset"))
    {
        return Some(Op::SqlDrop);
    }
    // `dbmate drop`, `sqlx database drop|reset`.
    if next_to("dbmate") == Some("drop") || matches!(next_to("database"), Some("drop" | "reset")) {
        return Some(Op::SqlDrop);
    }
    if words.iter().any(|w| w.ends_with("manage.py")) {
        let task = words
            .iter()
            .skip_while(|w| !w.ends_with("manage.py"))
            .nth(1)
            .copied();
        return match task {
            Some("flush") => Some(Op::SqlTruncate),
            Some("reset_db") => Some(Op::SqlDrop),
            // `migrate APP zero` undoes every migration of APP.
            Some("migrate") if words.last() == Some(&"zero") => Some(Op::SqlDrop),
            _ => None,
        };
    }
    None
}

/// Whether `words` (a command's name and arguments) apply pending migrations: `sqlx migrate
/// run`, `dbmate up|migrate`, `alembic upgrade`, `rails|rake db:migrate`, `prisma migrate
/// dev|deploy`, `knex migrate:latest|up`, `manage.py migrate`, `flyway migrate`,
/// `sequelize db:migrate`, `goose up`, `migrate ... up`, `diesel migration run`.
pub(in crate::gate::action) fn applies_migrations(words: &[&str]) -> bool {
    let pair = |a: &str, b: &[&str]| followed(words, a, b);
    pair("migrate", &["run", "dev", "deploy"])
        || pair("dbmate", &["up", "migrate"])
        || pair("alembic", &["upgrade"])
        || pair("migration", &["run"])
        || pair("goose", &["up"])
        || pair("flyway", &["migrate"])
        || words
            .iter()
            .any(|w| w.starts_with("db:migrate") || matches!(*w, "migrate:latest" | "migrate:up"))
        || words.iter().any(|w| w.ends_with("manage.py")) && words.contains(&"migrate")
        || words.first() == Some(&"migrate") && words.contains(&"up")
}

/// Whether `words` only make a new, empty migration whose name or message they give
/// (`sqlx migrate add NAME`, `alembic revision -m MSG`, `rails generate migration NAME`,
/// `dbmate new NAME`, `knex migrate:make NAME`, `goose create NAME`): the name is a label, not
/// a statement, and the file holds nothing to run yet.
pub(in crate::gate::action) fn makes_migration(words: &[&str]) -> bool {
    let pair = |a: &str, b: &[&str]| followed(words, a, b);
    let autogenerate = words.contains(&"--autogenerate");
    pair("migrate", &["add"])
        || pair("alembic", &["revision"]) && !autogenerate
        || pair("generate", &["migration"])
        || pair("g", &["migration"])
        || pair("dbmate", &["new"])
        || pair("goose", &["create"])
        || words.contains(&"migrate:make")
}

/// Whether `words` hold `first` right before one of `then` (`migrate run`).
fn followed(words: &[&str], first: &str, then: &[&str]) -> bool {
    words
        .windows(2)
        .any(|w| w[0] == first && then.contains(&w[1]))
}

/// Whether an effect writes a migration: a file under a folder named `migrations`, `migrate`
/// or `versions`, or a `.sql` file.
pub(in crate::gate::action) fn writes_migration(e: &Effect) -> bool {
    let (Op::Write | Op::Add) = e.op else {
        return false;
    };
    match &e.target {
        Target::Path(p) | Target::Glob(p) => {
            p.ends_with(".sql")
                || p.split('/')
                    .any(|c| matches!(c, "migrations" | "migrate" | "versions"))
        }
        Target::Anything => true,
        _ => false,
    }
}

/// An application tool's database console, as the SQL client whose standard input or
/// arguments it passes on: Django's `manage.py dbshell [-- ARGS]`, `rails dbconsole` (and
/// `rails db`), and `prisma db execute --stdin`. `Err` for SQL the line does not show
/// (`prisma db execute --file F`); `Ok(None)` when the command runs no console.
pub(in crate::gate::action) fn console(name: &str, args: &[Word]) -> Result<Option<Vec<Word>>, ()> {
    // The name, then the arguments: `texts[k]` is `args[k - 1]`.
    let texts: Vec<&str> = std::iter::once(name)
        .chain(args.iter().map(|w| w.text.as_str()))
        .collect();
    let at = |t: &str| texts.iter().position(|w| *w == t);
    if let Some(k) = texts.iter().position(|w| w.ends_with("manage.py")) {
        if texts.get(k + 1) == Some(&"dbshell") {
            let rest = at("--").map_or(Vec::new(), |d| args[d..].to_vec());
            return Ok(Some(rest));
        }
        return Ok(None);
    }
    if texts.iter().any(|t| matches!(*t, "dbconsole"))
        || texts.windows(2).any(|w| w == ["rails", "db"])
    {
        return Ok(Some(Vec::new()));
    }
    if texts.windows(2).any(|w| w == ["db", "execute"]) {
        if at("--file").is_some() || texts.iter().any(|t| t.starts_with("--file=")) {
            return Err(());
        }
        if at("--stdin").is_some() {
            return Ok(Some(Vec::new()));
        }
    }
    Ok(None)
}

/// `gh pr merge` merges a pull request into its base branch, which the line does not name, and
/// `gh repo create --push` pushes the current branch: a push to an unnamed branch. Other `gh`
/// commands push nothing. Always known.
pub(in crate::gate::action) fn gh(args: &[Word], cx: &Cx, out: &mut Acc) -> bool {
    let s = options(
        args,
        "RtbmF",
        &[
            "repo",
            "subject",
            "body",
            "body-file",
            "match-head-commit",
            "author-email",
        ],
        false,
    );
    let ops: Vec<&str> = s.words(args).iter().map(|w| w.text.as_str()).collect();
    // `gh repo create --push` pushes the current branch to the new repository.
    let created = ops.starts_with(&["repo", "create"]) && s.has("push");
    if created || ops.starts_with(&["pr", "merge"]) && !s.has("disable-auto") {
        pushes_to(out, cx, None, false);
    }
    true
}

/// `jj git push`: the bookmarks `-b`/`--bookmark` name; a bookmark jj makes for `-c`/`--change`
/// (`push-...`, never an existing branch); otherwise (no bookmark named, `--all`, `--tracked`,
/// `-r`) every bookmark that moved, which the line does not name. `--dry-run` pushes nothing.
/// Other `jj` commands change no remote. Always known.
pub(in crate::gate::action) fn jj(args: &[Word], cx: &Cx, out: &mut Acc) -> bool {
    let s = options(
        args,
        "bcrR",
        &[
            "bookmark",
            "branch",
            "change",
            "revisions",
            "remote",
            "repository",
            "config",
            "at-operation",
        ],
        false,
    );
    let ops: Vec<&str> = s.words(args).iter().map(|w| w.text.as_str()).collect();
    if ops != ["git", "push"] || s.has("dry-run") {
        return true;
    }
    let mut named = false;
    for o in &s.opts {
        let name = match (o.name.as_str(), &o.value) {
            // `glob:ma*` and `regex:` patterns may match main: not a name.
            ("b" | "bookmark" | "branch", Some(v))
                if !v.dynamic && !v.text.contains([':', '*', '?', '[']) =>
            {
                Some(v.text.clone())
            }
            ("c" | "change", Some(v)) if !v.dynamic => Some(format!("push-{}", v.text)),
            ("b" | "bookmark" | "branch" | "c" | "change", _) => None,
            _ => continue,
        };
        named = true;
        pushes_to(out, cx, name, false);
    }
    let every = ["all", "tracked", "deleted", "r", "revisions"];
    if !named || every.iter().any(|o| s.has(o)) {
        pushes_to(out, cx, None, s.has("deleted"));
    }
    true
}

/// `sl push` (Sapling) and `hg push` (Mercurial): to the bookmark or branch `--to`, `-B`,
/// `--bookmark`, `-b` or `--branch` names; with none named, what they push (the current stack,
/// every head) is a branch the line does not name. Other subcommands push nothing. Always
/// known.
pub(in crate::gate::action) fn sapling(args: &[Word], cx: &Cx, out: &mut Acc) -> bool {
    let s = options(
        args,
        "BbrRe",
        &[
            "to",
            "bookmark",
            "branch",
            "rev",
            "repository",
            "ssh",
            "remotecmd",
        ],
        false,
    );
    let ops: Vec<&str> = s.words(args).iter().map(|w| w.text.as_str()).collect();
    if ops.first() != Some(&"push") || s.has("dry-run") {
        return true;
    }
    let force = s.has("f") || s.has("force");
    let named: Vec<Option<String>> = (s.opts.iter())
        .filter(|o| matches!(o.name.as_str(), "to" | "B" | "bookmark" | "b" | "branch"))
        .map(|o| {
            o.value
                .as_ref()
                .filter(|v| !v.dynamic)
                .map(|v| v.text.clone())
        })
        .collect();
    let names = if named.is_empty() { vec![None] } else { named };
    for name in names {
        pushes_to(out, cx, name, force);
    }
    true
}

/// `docker push`, `podman push`, `buildah push` and `helm push` send an image or a chart to a
/// registry: they change no branch, file or table, whatever the tag is called.
pub(in crate::gate::action) fn registry_push(name: &str, args: &[Word]) -> bool {
    let first = args.iter().find(|a| !a.text.starts_with('-'));
    let sub = first.map(|a| a.text.as_str());
    match name {
        "docker" | "podman" => {
            sub == Some("push")
                // `docker buildx build --push`, `docker build --push`: the image built goes to
                // its registry.
                || matches!(sub, Some("buildx" | "build")) && args.iter().any(|a| a.text == "--push")
                || args
                    .iter()
                    .filter(|a| !a.text.starts_with('-'))
                    .take(2)
                    .map(|a| a.text.as_str())
                    .eq(["image", "push"])
        }
        "buildah" | "helm" => sub == Some("push"),
        _ => false,
    }
}

/// `scp SRC... DEST`: a copy, as `cp` is, onto a local destination; onto a remote one
/// (`host:path`) it writes what the line cannot see (the host may be this machine), so it is
/// opaque, as `rsync` to a host is.
pub(in crate::gate::action) fn scp(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) {
    let s = options(args, "cFiJloPS", &[], false);
    let (srcs, dest) = split_dest(s.words(args), None);
    let Some(d) = dest else { return };
    if remote_destination(d, cx, out) {
        return;
    }
    let recursive = s.has("r");
    landing(cx, out, cwd, d, &srcs, false, recursive, false, Op::Write);
}
