//! The ledger on PostgreSQL (SPEC.md section 17), against a real server: Debian's PostgreSQL in
//! a throwaway cluster (`tests/pg-cluster.sh`), or the server $CAIRN_TEST_PG names. The seed
//! stories and the kill -9 test run on it too (`stories.rs`, `crash.rs`).

use crate::util::*;
use cairn::gate::Gatekeeper;
use cairn::record::{Kind, Record};
use cairn::{Ledger, Read};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn export(db: &Path) -> String {
    let o = run_cairn(db, &["export"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    stdout(&o)
}

fn checkpoint(db: &Path) -> String {
    let o = run_cairn(db, &["checkpoint"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    stdout(&o)
}

/// `cairn copy FROM TO`.
fn copy(from: &Path, to: &Path) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("copy").arg(from).arg(to).env_remove("CAIRN_DB");
    cmd.output().expect("run cairn copy")
}

fn verifies(db: &Path) {
    let o = run_cairn(db, &["verify"], None);
    assert_eq!(
        code(&o),
        0,
        "verify of {}: {}{}",
        db.display(),
        stdout(&o),
        stderr(&o)
    );
}

/// redb to PostgreSQL and back: the same records, log order, Merkle root and export; verify
/// passes on all three; a non-empty target is refused and left as it was.
#[test]
fn copy_from_redb_to_postgres_and_back_keeps_every_record_in_order() {
    let t = Tmp::new();
    let first = t.dir.path().join("first.redb");
    let back = t.dir.path().join("back.redb");
    let url = std::path::PathBuf::from(pg_database("copy_round_trip"));
    let o = run_cairn(&first, &["demo"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run_cairn(&first, &["checkpoint", "--key", &keygen(&t)], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let o = copy(&first, &url);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("copied 68 records"), "{}", stdout(&o));
    let o = copy(&url, &back);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let (a, b, c) = (export(&first), export(&url), export(&back));
    assert!(a.lines().count() == 68 && a == b && b == c);
    let exported = a;
    let (a, b, c) = (checkpoint(&first), checkpoint(&url), checkpoint(&back));
    assert!(a == b && b == c, "{a}\n{b}\n{c}");
    for db in [&first, &url, &back] {
        verifies(db);
    }
    // Every read answers the same on both: recall by cairn's own index and scoring, lineage,
    // context, replay and the gates' sweep.
    for args in [
        &["recall", "staging port", "--json"][..],
        &["recall", "DROP TABLE production", "--stream", "migration"],
        &["why", "prior:0", "--stream", "libfoo", "--json"],
        &["context", "staging", "--json"],
        &["replay", "staging", "--json"],
        &["gates", "--json"],
    ] {
        let on = |db: &Path| {
            let o = run_cairn(db, args, None);
            (code(&o), stdout(&o))
        };
        let (a, b) = (on(&first), on(&url));
        assert!(!a.1.is_empty(), "{args:?} printed nothing");
        assert_eq!(a, b, "{args:?} answers differently on PostgreSQL");
    }
    // Stats name the same ledger id everywhere.
    let id = |db: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&run_cairn(db, &["stats", "--json"], None))).unwrap();
        v["ledger_id"].clone()
    };
    assert!(id(&first) == id(&url) && id(&url) == id(&back));

    // A non-empty target is refused, and nothing is written to it.
    let o = copy(&first, &url);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("already holds 68 records") && stderr(&o).contains("empty database"),
        "{}",
        stderr(&o)
    );
    assert_eq!(export(&url), exported);
}

fn keygen(t: &Tmp) -> String {
    let key = t.dir.path().join("ci.key");
    let o = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["keygen", "--name", "ci", "-o"])
        .arg(&key)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    key.display().to_string()
}

/// The password comes from $PGPASSWORD or from the file $CAIRN_DB_PASSWORD_FILE, never from the
/// URL or the ledger: a database that asks for one (SCRAM) is refused without it and opened with
/// either; the server's tables hold no trace of it.
#[test]
fn the_password_comes_from_the_environment_or_a_file() {
    let mut admin = pg_admin();
    for sql in [
        "DROP DATABASE IF EXISTS pwtest WITH (FORCE)",
        "DROP ROLE IF EXISTS cairn_pw",
        "SET password_encryption = 'scram-sha-256'",
        "CREATE ROLE cairn_pw LOGIN PASSWORD 'pw-from-a-file'",
    ] {
        admin.execute(sql, &[]).unwrap();
    }
    admin
        .execute("CREATE DATABASE pwtest OWNER cairn_pw", &[])
        .unwrap();
    // This database asks for a password; the rest of the test server trusts loopback.
    let hba: String = admin.query_one("SHOW hba_file", &[]).unwrap().get(0);
    let rules = std::fs::read_to_string(&hba).unwrap();
    let line = "host pwtest cairn_pw 127.0.0.1/32 scram-sha-256\n";
    if !rules.contains(line) {
        std::fs::write(&hba, format!("{line}{rules}")).unwrap();
        admin.execute("SELECT pg_reload_conf()", &[]).unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }
    let t = Tmp::new();
    let url = pg_url("pwtest").replace("cairn@", "cairn_pw@");
    let stats = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.arg("--db")
            .arg(&url)
            .arg("demo")
            .env_remove("PGPASSWORD")
            .env_remove("CAIRN_DB_PASSWORD_FILE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let o = stats(&[]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
    let file = t.file("pw", b"pw-from-a-file\n");
    let o = stats(&[("CAIRN_DB_PASSWORD_FILE", file.to_str().unwrap())]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = stats(&[("PGPASSWORD", "pw-from-a-file")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = stats(&[("PGPASSWORD", "wrong")]);
    assert_eq!(code(&o), 2);
    let mut c = postgres::Client::connect(&pg_url("pwtest"), postgres::NoTls).unwrap();
    let traces: i64 = c
        .query_one(
            "SELECT count(*) FROM cairn_meta WHERE position('pw-from-a-file'::bytea IN value) > 0",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(traces, 0);
}

/// A database whose cairn tables are of another schema version is refused with the versions
/// named; the same database at this build's version opens.
#[test]
fn a_schema_of_another_version_is_refused_on_open() {
    let url = pg_database("schema_version");
    let o = run_cairn(Path::new(&url), &["demo"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run_cairn(Path::new(&url), &["stats"], None);
    assert_eq!(code(&o), 0, "the near miss opens: {}", stderr(&o));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.execute(
        "UPDATE cairn_meta SET value = '\\x09' WHERE name = 'schema'",
        &[],
    )
    .unwrap();
    let o = run_cairn(Path::new(&url), &["stats"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("schema version 9") && stderr(&o).contains("reads version 2"),
        "{}",
        stderr(&o)
    );
    // A password in the URL is refused before anything connects, and never printed, wherever
    // it stands.
    for with_password in [
        url.replace("cairn@", "cairn:secret@"),
        url.replace("cairn@", "cairn:sec/ret?x@"),
        format!("{url}?password=secret"),
        format!("{url}?sslmode=disable&PassWord=secret"),
        // Issue 37, row 13: a key the driver percent-decodes is the same key.
        format!("{url}?%70assword=secret"),
        format!("{url}?sslmode=disable&pass%77ord=secret"),
    ] {
        let o = run_cairn(Path::new(&with_password), &["stats"], None);
        assert_eq!(code(&o), 2);
        assert!(
            stderr(&o).contains("PGPASSWORD") && !stderr(&o).contains("secret"),
            "{}",
            stderr(&o)
        );
    }
    // A head moved outside cairn (here lowered by one, so the last record looks unlogged) is
    // refused on open; the head put back opens again.
    c.execute(
        "UPDATE cairn_meta SET value = '\\x02' WHERE name = 'schema'",
        &[],
    )
    .unwrap();
    c.execute("UPDATE cairn_head SET size = size - 1", &[])
        .unwrap();
    let o = run_cairn(Path::new(&url), &["stats"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("changed outside cairn"),
        "{}",
        stderr(&o)
    );
    c.execute("UPDATE cairn_head SET size = size + 1", &[])
        .unwrap();
    let o = run_cairn(Path::new(&url), &["verify"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// Reads on one thread while other threads and another process append: every snapshot brings
/// the replica up to the server's head without tripping over what a batch of the same process
/// derived meanwhile; connections the server ends are replaced, and the next read and the next
/// write succeed.
#[test]
fn reads_beside_writers_and_after_lost_connections_succeed() {
    let url = pg_database("reads_beside_writers");
    let ours = std::sync::Arc::new(Ledger::open(&url).unwrap());
    let theirs = Ledger::open(&url).unwrap();
    let span = |stream: &str, turn: u64| cairn::record::Span {
        stream: stream.into(),
        turn,
        role: cairn::record::Role::User,
        tool: None,
        text: format!(
            "turn {turn} of {stream}: the staging port is {}",
            5000 + turn
        ),
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (ours, stop) = (ours.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let snap = ours.snapshot().expect("a snapshot beside writers");
                    cairn::memory::recall(&snap, "staging port", None, 5).expect("recall");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for turn in 0..40 {
        let mut b = theirs.batch_for(&["theirs"]).unwrap();
        b.append(span("theirs", turn)).unwrap();
        b.commit().unwrap();
        let mut b = ours.batch_for(&["ours"]).unwrap();
        b.append(span("ours", turn)).unwrap();
        b.commit().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads > 0);
    assert_eq!(
        ours.snapshot()
            .unwrap()
            .turns("theirs", 0, u64::MAX)
            .unwrap()
            .len(),
        40
    );

    // The server ends every cairn connection to the database, as a restart would.
    let mut admin = pg_admin();
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cairn' AND datname = 'reads_beside_writers'",
            &[],
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(ours.len().unwrap(), theirs.len().unwrap());
    let mut b = ours.batch_for(&["ours"]).unwrap();
    b.append(span("ours", 40)).unwrap();
    b.commit().unwrap();
    assert!(ours.verify().unwrap().ok());
}

/// A streaming ingest waiting for its next line holds no lock on the server: other servers'
/// writes go on.
#[test]
fn an_idle_streaming_ingest_holds_no_lock() {
    let url = pg_database("idle_ingest");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--db")
        .arg(&url)
        .args(["ingest", "--json", "-"])
        .env_remove("CAIRN_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use std::io::{BufRead, Write};
    writeln!(
        stdin,
        r#"{{"kind":"span","stream":"a","turn":0,"role":"user","text":"first line"}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut ack = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ack)
        .unwrap();
    assert!(ack.contains("\"rid\""), "{ack}");
    // Acknowledged, and now waiting on its input: no advisory lock of cairn's is held.
    let held: i64 = pg_admin()
        .query_one(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND a.application_name = 'cairn' AND a.datname = 'idle_ingest'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(held, 0, "an idle ingest holds locks");
    let line = r#"{"kind":"span","stream":"b","turn":0,"role":"user","text":"another writer"}"#;
    let o = run_cairn(Path::new(&url), &["ingest", "-"], Some(line.as_bytes()));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The connection of a writer is killed (`pg_terminate_backend`) after its records went to the
/// server and before its commit: nothing of the batch is in the ledger, the writer gets an
/// error that says so, and the same batch again succeeds with the same rids.
#[test]
fn a_connection_killed_mid_append_leaves_nothing_and_the_retry_succeeds() {
    let url = pg_database("terminated");
    let ledger = Ledger::open(&url).unwrap();
    let spans: Vec<cairn::record::Span> = (0..300)
        .map(|i| cairn::record::Span {
            stream: "t".into(),
            turn: i,
            role: cairn::record::Role::Tool,
            tool: None,
            text: format!("line {i} of the build log: compiled module m{i}"),
        })
        .collect();
    let before = ledger.len().unwrap();
    let count = |c: &mut postgres::Client, table: &str| -> i64 {
        c.query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .unwrap()
            .get(0)
    };
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows_before = count(&mut admin, "cairn_rows");

    // Hold the head row: the writer inserts its records and rows, then waits to update the
    // head.
    let mut hold = admin.transaction().unwrap();
    hold.execute("SELECT size FROM cairn_head FOR UPDATE", &[])
        .unwrap();
    let writer = {
        let spans = spans.clone();
        let url = url.clone();
        std::thread::spawn(move || {
            let ledger = Ledger::open(&url).unwrap();
            let mut batch = ledger.batch_for(&["t"]).unwrap();
            let rids: Vec<_> = spans
                .into_iter()
                .map(|s| batch.append(s).unwrap().rid)
                .collect();
            (rids, batch.commit())
        })
    };
    let mut killer = pg_admin();
    let started = Instant::now();
    let pid: i32 = loop {
        let rows = killer
            .query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'cairn' AND datname = 'terminated' AND wait_event_type = 'Lock'",
                &[],
            )
            .unwrap();
        if let Some(r) = rows.first() {
            break r.get(0);
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the writer never waited on the head row"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Its records are in the server's table, uncommitted.
    let ok: bool = killer
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .unwrap()
        .get(0);
    assert!(ok);
    hold.rollback().unwrap();
    let (rids, committed) = writer.join().unwrap();
    let e = committed.expect_err("the killed commit fails");
    let message = e.to_string();
    // The server's FATAL reaches the client as its error, or the connection closes before it
    // is read: then the client cannot know the outcome and says so. Either way it says to
    // retry, and (below) nothing was written.
    assert!(
        (message.contains("rolled the batch back")
            || message.contains("may or may not be in the log"))
            && message.contains("retry"),
        "{message}"
    );
    // Nothing half-written: not one of the records, and the head did not move.
    let fresh = Ledger::open(&url).unwrap();
    assert_eq!(fresh.len().unwrap(), before);
    assert_eq!(count(&mut admin, "cairn_log") as u64, before);
    assert_eq!(count(&mut admin, "cairn_rows"), rows_before);
    // The retry: the same records, the same rids, all written once.
    let mut batch = ledger.batch_for(&["t"]).unwrap();
    let again: Vec<_> = spans
        .into_iter()
        .map(|s| batch.append(s).unwrap().rid)
        .collect();
    batch.commit().unwrap();
    assert_eq!(again, rids);
    let fresh = Ledger::open(&url).unwrap();
    let snap = fresh.snapshot().unwrap();
    for rid in &rids {
        assert!(snap.index_of(rid).unwrap().is_some());
    }
    assert!(fresh.verify().unwrap().ok());
}

/// TLS: a server whose certificate a CA made by this test signed is reached with
/// `sslmode=verify-full&sslrootcert=<that CA>`, over TLS; with another CA it is refused.
#[test]
fn tls_with_the_servers_ca_works_and_a_wrong_ca_is_refused() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let t = Tmp::new();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
    let other_key = KeyPair::generate().unwrap();
    let mut other_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    other_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let other = other_params.self_signed(&other_key).unwrap();

    // The server's certificate and key go into its data directory, owned by its user.
    let mut admin = pg_admin();
    let data: String = admin.query_one("SHOW data_directory", &[]).unwrap().get(0);
    let owner = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&data).unwrap().uid()
    };
    for (name, pem) in [
        ("cairn-test-server.crt", server.pem()),
        ("cairn-test-server.key", server_key.serialize_pem()),
    ] {
        let path = Path::new(&data).join(name);
        std::fs::write(&path, pem).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&path, Some(owner), None).unwrap();
    }
    for sql in [
        "ALTER SYSTEM SET ssl_cert_file = 'cairn-test-server.crt'",
        "ALTER SYSTEM SET ssl_key_file = 'cairn-test-server.key'",
        "ALTER SYSTEM SET ssl = on",
        "SELECT pg_reload_conf()",
    ] {
        admin.execute(sql, &[]).unwrap();
    }
    let started = Instant::now();
    while pg_admin()
        .query_one("SHOW ssl", &[])
        .unwrap()
        .get::<_, String>(0)
        != "on"
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ssl never came on"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ca_file = t.file("ca.pem", ca.pem().as_bytes());
    let other_file = t.file("other-ca.pem", other.pem().as_bytes());
    pg_database("tls");
    let url = pg_url("tls").replace("127.0.0.1", "localhost");
    let good = format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        ca_file.display()
    );
    let ledger = Ledger::open(&good).expect("TLS with the server's CA connects");
    let mut batch = ledger.batch().unwrap();
    batch
        .append(cairn::record::Span {
            stream: "tls".into(),
            turn: 0,
            role: cairn::record::Role::User,
            text: "over TLS".into(),
            tool: None,
        })
        .unwrap();
    batch.commit().unwrap();
    let encrypted: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND application_name = 'cairn' AND datname = 'tls'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(encrypted >= 1, "cairn's connections are encrypted");
    drop(ledger);
    let o = run_cairn(Path::new(&good), &["stats"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));

    let wrong = format!(
        "{url}?sslmode=verify-full&sslrootcert={}",
        other_file.display()
    );
    let o = run_cairn(Path::new(&wrong), &["stats"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("cannot connect") && stderr(&o).contains("sslrootcert"),
        "{}",
        stderr(&o)
    );
}

/// Two `cairn serve` processes write one ledger at once (tests/pg/test_two_servers.py, through
/// the official MCP client); then nothing is lost or doubled, verify passes, and a single redb
/// writer fed the same inputs in the server's log order writes the very same log: every
/// verdict equal.
#[test]
fn two_servers_write_one_ledger() {
    let url = pg_database("two_servers");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pg/test_two_servers.py");
    // The Python with the MCP SDK's packages, never the system's (issue 37, row 21).
    let out = Command::new(crate::util::mcp_python())
        .args(["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"])
        .arg(&script)
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_PG_URL", &url)
        .output()
        .expect("the MCP tests' Python runs ($CAIRN_MCP_PYTHON, with the packages of tests/mcp/requirements.txt)");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts: serde_json::Value = said
        .lines()
        .find_map(|l| {
            l.trim_start_matches('.')
                .trim()
                .strip_prefix('{')
                .map(|_| l.trim_start_matches('.').trim())
        })
        .and_then(|l| serde_json::from_str(l).ok())
        .expect("the Python test prints its counts");

    let shared = Ledger::open_read_only(&url).unwrap();
    let report = shared.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies.first());
    let snap = shared.snapshot().unwrap();
    for rid in counts["rids"].as_array().unwrap() {
        let rid: cairn::record::Rid = rid.as_str().unwrap().parse().unwrap();
        assert!(
            snap.index_of(&rid).unwrap().is_some(),
            "acknowledged turn {rid} is missing"
        );
    }
    let spans = snap.of_kind(Kind::Span).unwrap().len();
    assert_eq!(
        spans as u64,
        counts["turns"].as_u64().unwrap(),
        "every turn once"
    );

    // One redb writer, fed the inputs in the server's log order, writes the same log.
    let single = Ledger::in_memory().unwrap();
    let gate = Gatekeeper::default();
    let mut batch = single.batch().unwrap();
    let mut fed = 0u64;
    snap.for_each(|_, _, record| {
        fed += 1;
        match record {
            Record::Summary(s) => {
                gate.propose_summary(&mut batch, s)?;
            }
            Record::Action(a) => {
                gate.propose_action(&mut batch, a)?;
            }
            // What the gates and the classifier write for themselves.
            Record::Verdict(_)
            | Record::Classification(_)
            | Record::Check(_)
            | Record::Ruling(_) => {}
            other => {
                batch.append(other)?;
            }
        }
        Ok(())
    })
    .unwrap();
    batch.commit().unwrap();
    let theirs = single.snapshot().unwrap();
    assert_eq!(theirs.len().unwrap(), snap.len().unwrap());
    for i in 0..snap.len().unwrap() {
        assert_eq!(
            theirs.rid_at(i).unwrap(),
            snap.rid_at(i).unwrap(),
            "log index {i} differs from a single writer's"
        );
    }
    println!(
        "two servers: {} turns ({} in the shared stream), {} compactions admitted, {} with a struck claim, {} actions refused; {} records, equal to a single redb writer's log",
        counts["turns"], counts["shared_turns"], counts["compactions_admitted"], counts["compactions_struck"], counts["actions_refused"], fed
    );
}

/// The derived rows live on the server, written with their records: a new process fills its
/// replica from them, `verify` checks them against the records' rebuild and names a row changed
/// on the server, and a row whose bytes do not decode is refused with a message, not a panic.
#[test]
fn the_servers_derived_rows_are_checked_and_a_malformed_one_is_refused() {
    let url = pg_database("server_rows");
    let o = run_cairn(Path::new(&url), &["demo"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows: i64 = c
        .query_one(
            "SELECT count(*) FROM cairn_rows WHERE value IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        rows > 100,
        "the demo's derived rows are on the server: {rows}"
    );
    let o = run_cairn(Path::new(&url), &["verify"], None);
    assert_eq!(code(&o), 0, "the near miss: {}{}", stdout(&o), stderr(&o));

    // One turn's span changed on the server: verify names the turns table.
    let turn = "(SELECT key FROM cairn_rows WHERE tbl = 3 ORDER BY key LIMIT 1)";
    let saved: Vec<u8> = c
        .query_one(
            &format!("SELECT value FROM cairn_rows WHERE tbl = 3 AND key = {turn}"),
            &[],
        )
        .unwrap()
        .get(0);
    c.execute(
        &format!("UPDATE cairn_rows SET value = decode(repeat('00', 32), 'hex') WHERE tbl = 3 AND key = {turn}"),
        &[],
    )
    .unwrap();
    let o = run_cairn(Path::new(&url), &["verify"], None);
    assert_eq!(code(&o), 3, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("turns table"), "{}", stdout(&o));
    c.execute(
        &format!("UPDATE cairn_rows SET value = $1 WHERE tbl = 3 AND key = {turn}"),
        &[&saved],
    )
    .unwrap();
    let o = run_cairn(Path::new(&url), &["verify"], None);
    assert_eq!(code(&o), 0, "put back: {}{}", stdout(&o), stderr(&o));

    // A key that is not a (stream, turn) pair: refused on open, naming the table.
    c.execute(
        &format!("UPDATE cairn_rows SET key = '\\xff01' WHERE tbl = 3 AND key = {turn}"),
        &[],
    )
    .unwrap();
    let o = run_cairn(Path::new(&url), &["stats"], None);
    assert_ne!(code(&o), 0);
    assert!(
        stderr(&o).contains("turns table has a malformed key") && !stderr(&o).contains("panicked"),
        "{}",
        stderr(&o)
    );
}
