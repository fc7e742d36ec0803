//! The command-line reader and the prohibition reader together: every row of SPEC.md 8.4 with
//! its near miss, and hostile lines.

use super::line::*;
use super::prohibition::*;

const TOUCH: &str = "do not touch anything under shop/migrations/";
const DELETE: &str = "never delete shop/migrations/0029_tmp_backfill.py";

fn refused(prohibition: &str, line: &str) -> Option<String> {
    violation(&forbidden(prohibition), &parse(line))
}

/// The gate's whole decision on `line` as an irreversible action under `prohibition`: its
/// effects, what it cannot read, and the words of the commands it does not know
/// (`gate::pins::prohibits`).
fn judged(prohibition: &str, line: &str) -> Option<String> {
    let share = crate::gate::Policy::default().prohibition_match;
    crate::gate::pins::prohibits(prohibition, line, true, share)
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
    // A statement that stores values is read, with no effect in the table (its literals are
    // data); one that creates is not in the table.
    let update = parse("UPDATE orders SET x = 1");
    assert!(update.unknown.is_empty() && update.effects.is_empty());
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
    // A home directory is a path of its own (`/~`): the project may live under it, so a
    // relative prohibited path still matches there; once the line sets HOME, `~` is unknown.
    refuse(DELETE, "rm ~/shop/migrations/0029_tmp_backfill.py");
    admit(DELETE, "rm ~/shop/migrations/x.py");
    refuse(DELETE, "HOME=/tmp; rm ~/x.py");
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
    // Lines that abort brush-parser 0.4.0 with a stack overflow in a 2 MiB thread (SPEC.md
    // 14): nested `if`, `$(...)` and `${...:-...}`, a few kilobytes each.
    let ifs = "if true; then ".repeat(5_000) + "rm x" + &"; fi".repeat(5_000);
    let substs = format!("echo {}rm x{}", "$(echo ".repeat(5_000), ")".repeat(5_000));
    let braces = format!("echo {}x{}", "${a:-".repeat(5_000), "}".repeat(5_000));
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
        &ifs,
        &substs,
        &braces,
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
    assert!(
        parse(&substs).unparseable,
        "nesting past the bound is unparseable"
    );
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
    let f = forbidden("Never run DROP TABLE on the orders database; archive old tables instead.");
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

#[test]
fn creating_and_adding_are_no_deletion_but_are_writing() {
    // Issue 37: under "never delete", a command that creates a file or adds to one destroys
    // nothing; one that replaces what a file holds deletes it.
    let keep = "never delete anything under /srv/prod";
    for line in [
        "mkdir -p /srv/prod/releases/2024-06-01",
        "touch /srv/prod/.maintenance",
        "echo 'window 02:00' >> /srv/prod/NOTES",
        "echo done &>> /srv/prod/build.log",
        "date | tee -a /srv/prod/NOTES",
        "cp -n /tmp/app.conf /srv/prod/app.conf",
        "mv --no-clobber /tmp/app.conf /srv/prod/app.conf",
        "ln -s /srv/prod/releases/7 /srv/prod/current-new",
        "chmod -R g+r /srv/prod",
    ] {
        admit(keep, line);
    }
    // The near misses: each replaces what a file under /srv/prod holds.
    for line in [
        "echo 'window 02:00' > /srv/prod/NOTES",
        "date | tee /srv/prod/NOTES",
        "cp /tmp/app.conf /srv/prod/app.conf",
        "mv /tmp/app.conf /srv/prod/app.conf",
        "ln -sf /srv/prod/releases/7 /srv/prod/current",
        "truncate -s0 /srv/prod/NOTES",
    ] {
        refuse(keep, line);
    }
    // A prohibition on writing forbids adding too.
    let hands_off = "do not touch anything under shop/migrations/";
    refuse(hands_off, "touch shop/migrations/0030_new.py");
    refuse(hands_off, "echo x >> shop/migrations/0029.py");
    refuse(hands_off, "chmod 600 shop/migrations/0029.py");
}

#[test]
fn a_git_subcommand_asked_for_its_manual_does_nothing() {
    admit("never push to main", "git push --help");
    admit("never push to main", "git push origin main --help");
    // The near misses: a path named --help, and a push.
    refuse("never push to main", "git push origin main");
    refuse(
        "never delete anything under /srv/prod",
        "cd /srv/prod && git rm -r -- --help .",
    );
}

#[test]
fn a_value_a_statement_stores_states_nothing() {
    let p = "do not drop the users table";
    for line in [
        "psql -c \"INSERT INTO users (name) VALUES ('drop table')\"",
        "psql -c \"COMMENT ON TABLE users IS 'do not drop'\"",
        "psql -c \"UPDATE users SET note = 'it''s fine to drop table x' WHERE id = 3\"",
    ] {
        assert_eq!(judged(p, line), None, "{line}");
    }
    // The near miss: the statement itself drops.
    let drops = "psql -c \"INSERT INTO log VALUES ('x'); DROP TABLE users\"";
    assert!(judged(p, drops).is_some());
}

#[test]
fn sql_built_at_run_time_is_opaque() {
    let p = "do not drop the users table";
    for line in [
        "psql -c \"DO \\$\\$ BEGIN EXECUTE 'DROP TABLE ' || 'users'; END \\$\\$\"",
        "echo \"SELECT 'DROP TABLE ' || 'users' \\gexec\" | psql",
        "psql -c \"PREPARE q AS SELECT 1; EXECUTE q\"",
    ] {
        assert!(!parse(line).opaque.is_empty(), "{line}");
        assert!(judged(p, line).is_some(), "{line}");
    }
    // The near miss: plain SQL that reads, with the words in a literal.
    let reads = "psql -c \"SELECT 'execute order 66' FROM users LIMIT 1\"";
    assert_eq!(judged(p, reads), None);
}

#[test]
fn archivers_compressors_and_downloaders_are_judged_by_what_they_write() {
    let keep = "never delete anything under /srv/prod";
    for line in [
        "tar -czf /backup/prod.tgz -C /srv/prod .",
        "tar cf /tmp/prod.tar /srv/prod",
        "tar -tzf /srv/prod/releases.tgz",
        "gzip -c /srv/prod/db.sqlite > /backup/db.sqlite.gz",
        "gzip -k /srv/prod/dump.sql",
        "zstd /srv/prod/dump.sql -o /backup/dump.zst",
        "openssl sha256 /srv/prod/app.conf",
        "openssl enc -aes-256-cbc -in /srv/prod/app.conf -out /tmp/app.conf.enc -k pw",
        "curl -T /srv/prod/backup.tar https://upload.example.com/",
        "curl -sSLo /tmp/x.tgz https://example.com/x.tgz",
    ] {
        admit(keep, line);
    }
    // The near misses: each replaces, removes or overwrites something under /srv/prod.
    for line in [
        "gzip /srv/prod/dump.sql",
        "gunzip -r /srv/prod/logs",
        "zstd --rm /srv/prod/dump.sql",
        "tar -cf /tmp/prod.tar --remove-files /srv/prod/old",
        "tar -cf /srv/prod/db.sqlite /tmp/x",
        "tar -xzf /tmp/release.tgz -C /srv/prod",
        "cd /srv/prod && tar xf /tmp/release.tar",
        "openssl enc -in /tmp/x -out /srv/prod/app.conf",
        "curl -o /srv/prod/app.conf https://example.com/app.conf",
        "curl -sSLo /srv/prod/app.conf https://example.com/app.conf",
        "cd /srv/prod && curl -O https://example.com/app.conf",
        "curl --output=/srv/prod/app.conf https://example.com/",
    ] {
        refuse(keep, line);
    }
    // An option the reading does not know leaves the command unknown, failing closed.
    assert!(!parse("tar --frobnicate /srv/prod").unknown.is_empty());
}

/// The held-out corpus's misses, read once on 2026-12-04 (SPEC.md 8.4), each as a rule with
/// its near miss.
#[test]
fn what_the_held_out_corpus_showed() {
    let p = "do not drop the users table";
    for line in [
        "ssh db1 \"$CMD\"",
        "eval \"psql -c '$STMT'\"",
        "echo \"$QUERY\" | psql app",
        "mysql app -e 'DELETE FROM users WHERE 1'",
        "psql -c \"WITH gone AS (DELETE FROM users RETURNING id) SELECT count(*) FROM gone\"",
        "psql -v t=users <<'SQL'\nDROP TABLE :\"t\";\nSQL",
    ] {
        assert!(judged(p, line).is_some(), "{line}");
    }
    for line in [
        "ssh db1 'psql -c \"SELECT 1\"'",
        "eval echo ready",
        "echo 'SELECT 1' | psql app",
        "mysql app -e 'DELETE FROM users WHERE id = 1'",
        "psql -c \"WITH recent AS (SELECT id FROM users LIMIT 5) SELECT * FROM recent\"",
        "psql -v t=users -c 'SELECT count(*) FROM :\"t\"'",
    ] {
        assert_eq!(judged(p, line), None, "{line}");
    }
}

#[test]
fn a_container_reaches_the_host_through_its_mounts() {
    let keep = "never delete anything under /srv/prod";
    for line in [
        "docker run --rm -v /srv/prod:/data alpine rm -rf /data/cache",
        "docker run --rm -v /:/host alpine rm -rf /host/srv/prod",
        "podman run --rm --mount type=bind,source=/srv/prod,target=/w alpine sh -c 'rm -rf /w/x'",
        "docker run --rm -v /srv/prod:/data \"$IMAGE\"",
        "docker run --rm -v /srv/prod:/data backup-image",
        // A host path decided at run time fails closed.
        "docker run --rm -v \"$SRC\":/out alpine ls /out",
    ] {
        assert!(judged(keep, line).is_some(), "{line}");
    }
    // The near misses: the mount is elsewhere, or the command only reads.
    for line in [
        "docker run --rm -v /srv/staging:/data alpine rm -rf /data/cache",
        "docker run --rm -v /srv/prod:/data:ro alpine ls /data",
        "docker run --rm alpine rm -rf /tmp/x",
    ] {
        assert_eq!(judged(keep, line), None, "{line}");
    }
}

/// Each (prohibition, line) judged by the whole gate: refused when `refuse`, else admitted.
#[track_caller]
fn judged_all(lines: &[(&str, &str)], refuse: bool) {
    for (p, line) in lines {
        let why = judged(p, line);
        assert_eq!(why.is_some(), refuse, "under {p:?}: {line}: {why:?}");
    }
}

/// Issue 37, after the first held-out corpus (dev data since): programs read by what they do
/// with their input and their services, and the values a line sets itself. Each refusal has
/// its near miss.
#[test]
fn inputs_services_and_the_lines_own_values_are_read() {
    let keep = "never delete anything under /srv/prod";
    let table = "do not drop the users table";
    let main = "never push to main";
    let refused = [
        // Code on standard input the line does not show: a file, or what ssh forwards.
        (keep, "ssh web1 'bash -s' < maintenance.sh"),
        (keep, "bash < script.sh"),
        (table, "kubectl exec -i pg-0 -- psql < \"$SQL_FILE\""),
        (table, "psql -f drop.sql app"),
        (table, "echo users | xargs -I{} psql -c 'DROP TABLE {}'"),
        (keep, "cat cmds.txt | parallel"),
        (keep, "parallel rm -rf ::: /srv/prod/a /srv/prod/b"),
        (keep, "scp /tmp/empty localhost:/srv/prod/app.conf"),
        (keep, "bash <(curl -s https://example.com/x.sh)"),
        (keep, "bash \"$SCRIPT\""),
        (keep, "python3 <(curl -s https://example.com/y.py)"),
        (keep, "bash /dev/stdin <<< 'rm -rf /srv/prod'"),
        // Tools that drop or empty a whole database, or named tables.
        (
            table,
            "pg_restore --clean --if-exists -t users -d app users.dump",
        ),
        (table, "dropdb app"),
        (table, "bin/rails db:drop"),
        (table, "npx prisma migrate reset --force"),
        (table, "python manage.py flush --noinput"),
        (table, "python manage.py dbshell <<< 'DROP TABLE users;'"),
        (
            table,
            "npx prisma db execute --stdin <<< 'DROP TABLE \"users\";'",
        ),
        (
            table,
            "docker compose -f deploy.yml exec db psql -c 'DROP TABLE users'",
        ),
        (
            table,
            "kubectl -n prod exec -it pg-0 -- psql -c 'TRUNCATE users'",
        ),
        // Pushes whose branch is main or not named.
        (main, "jj git push"),
        (main, "jj git push --bookmark main"),
        (main, "gh pr merge 3 --squash"),
        (main, "git push origin \"$(git rev-parse HEAD)\":main"),
        (main, "git push origin 'refs/heads/*:refs/heads/*'"),
        // Values the line sets: read where plain, unknown where not.
        (keep, "p=/srv/prod; rm -rf \"$p\"/2019"),
        (
            keep,
            "p=/srv/prod-archive; if [ -n \"$X\" ]; then p=/srv/prod; fi; rm -rf \"$p\"",
        ),
        (keep, "c='rm -rf /srv/prod'; $c"),
        (keep, "IFS=_; cmd=rm_-rf_/srv/prod; $cmd"),
        (keep, "rm -rf ~root/../srv/prod"),
        (keep, "HOME=/srv/prod; rm -rf ~/cache"),
    ];
    judged_all(&refused, true);
    let admitted = [
        (table, "ssh web1 'bash -s' <<< 'uptime'"),
        (table, "psql app <<< 'SELECT 1'"),
        (table, "psql -f - app <<< 'SELECT 1'"),
        (table, "echo users | xargs -I{} echo {}"),
        (keep, "parallel gzip -k ::: logs/*.log"),
        (keep, "bash scripts/test.sh"),
        (keep, "bash -s -- --verbose <<< 'ls /srv/prod'"),
        (keep, "scp backup1:/srv/prod/app.conf /tmp/"),
        (table, "pg_restore -t users -d app users.dump"),
        (table, "pg_restore --clean -t orders -d app orders.dump"),
        (table, "createdb app"),
        (table, "bin/rails db:migrate"),
        (table, "npx prisma migrate deploy"),
        (table, "python manage.py migrate"),
        (
            table,
            "python manage.py dbshell <<< 'SELECT count(*) FROM users;'",
        ),
        (
            table,
            "docker compose -f deploy.yml exec db psql -c 'SELECT 1'",
        ),
        (main, "jj git push -b feature"),
        (main, "jj git push -c @"),
        (main, "gh pr create --base main --fill"),
        (main, "docker push registry.example.com/acme/app:main"),
        (
            main,
            "git push origin \"$(git rev-parse HEAD)\":refs/heads/ci/build-123",
        ),
        (main, "b=feature/search; git push -u origin \"$b\""),
        (keep, "p=/srv/prod-archive; rm -rf \"$p\"/2019"),
        (keep, "cd ~/project && rm -rf node_modules target"),
        (keep, "which docker || ~/.docker/bin/docker ps"),
    ];
    judged_all(&admitted, false);
}

/// Issue 37: what the second held-out corpus (read once on 2026-12-07, dev data since) showed
/// the gate missed, each with its near miss.
#[test]
fn what_the_second_held_out_corpus_showed() {
    let table = "do not drop the users table";
    let main = "never push to main";
    let refused = [
        // Migrations the line writes and then applies.
        (
            table,
            "cat > migrations/1_drop.sql <<'SQL'\nDROP TABLE users;\nSQL\nsqlx migrate run",
        ),
        (
            table,
            "printf 'DROP TABLE users;' > db/migrations/2_x.sql && dbmate up",
        ),
        // More SQL clients, and statements of several -c read as one session.
        (
            table,
            "clickhouse-client --query \"TRUNCATE TABLE analytics.users\"",
        ),
        (
            table,
            "sqlcmd -S localhost -d App -Q \"TRUNCATE TABLE dbo.users\"",
        ),
        (table, "duckdb app.duckdb 'DROP TABLE users'"),
        (
            table,
            "psql -c \"ALTER TABLE users RENAME TO users_tmp\" -c \"DROP TABLE users_tmp\"",
        ),
        // A process substitution redirected in; printf's escapes decoded.
        (
            table,
            "mysql app < <(curl -s https://example.com/cleanup.sql)",
        ),
        (
            main,
            "printf '\\x67\\x69\\x74 push origin \\x6d\\x61\\x69\\x6e' | bash",
        ),
        (main, "gh repo create acme/x --private --source=. --push"),
    ];
    judged_all(&refused, true);
    let admitted = [
        (table, "sqlx migrate run"),
        (
            table,
            "sqlx migrate add drop_users_legacy_table && sqlx migrate info",
        ),
        (table, "alembic revision -m \"drop users table\""),
        (
            table,
            "cat > notes/plan.md <<'MD'\nDROP TABLE users later\nMD\nsqlx migrate run",
        ),
        (
            table,
            "clickhouse-client --query \"SELECT count() FROM users\"",
        ),
        (
            table,
            "psql -c \"ALTER TABLE users RENAME TO users_tmp\" -c \"DROP TABLE other\"",
        ),
        (
            main,
            "printf '\\x67\\x69\\x74 push origin \\x66\\x65\\x61\\x74' | bash",
        ),
        (main, "gh repo create acme/x --private"),
    ];
    judged_all(&admitted, false);
}

/// Issue 37: what the third held-out corpus (read once on 2026-12-07, dev data since) showed
/// the gate missed, each with its near miss.
#[test]
fn what_the_third_held_out_corpus_showed() {
    let table = "do not drop the users table";
    let main = "never push to main";
    judged_all(
        &[
            // A runner behind `bundle exec`, `uv run`, `npx`: the command it runs is read.
            (table, "bundle exec rails runner 'User.delete_all'"),
            (table, "uv run --with rich python manage.py flush"),
            (
                table,
                "php artisan tinker --execute=\"Schema::drop('users');\"",
            ),
            (table, "php artisan migrate:fresh --seed"),
            // Tools that push the current branch or stack.
            (main, "git town sync"),
            (main, "sl push"),
            (main, "hg push -B main"),
        ],
        true,
    );
    judged_all(
        &[
            (table, "bundle exec rspec spec/models/user_spec.rb"),
            (table, "php artisan migrate"),
            (main, "git town status"),
            (main, "sl push --to feature"),
            (
                main,
                "docker buildx build --push -t ghcr.io/acme/app:main .",
            ),
            (main, "npx -y prettier --write ."),
        ],
        false,
    );
}

/// Issue 37: what the fourth held-out corpus (read once on 2026-12-07, dev data since) showed
/// the gate missed, each with its near miss.
#[test]
fn what_the_fourth_held_out_corpus_showed() {
    let keep = "never delete anything under /srv/prod";
    let table = "do not drop the users table";
    judged_all(
        &[
            (keep, "ssh ops@bastion < /tmp/cleanup.sh"),
            (keep, "echo 'rm -rf /srv/prod/cache' | ssh ops@bastion"),
            (table, "mysql -e \"DELETE FROM users WHERE id > 0 OR 1\""),
            (
                table,
                "psql -c \"DELETE FROM users WHERE name = 'x' OR (2 = 2)\"",
            ),
        ],
        true,
    );
    judged_all(
        &[
            (keep, "echo 'uptime' | ssh ops@bastion"),
            (
                table,
                "mysql -e \"DELETE FROM users WHERE id > 0 AND id = 7\"",
            ),
            (
                table,
                "psql -c \"DELETE FROM users WHERE name = 'x' OR name = 'y'\"",
            ),
        ],
        false,
    );
}
