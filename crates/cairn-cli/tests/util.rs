//! Shared test harness of the command line's tests: temporary ledgers and the `cairn` binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Tmp {
    pub dir: tempfile::TempDir,
    /// The ledger's URL when it lives on the test PostgreSQL server.
    pub url: Option<String>,
}

impl Tmp {
    pub fn new() -> Tmp {
        Tmp {
            dir: tempfile::tempdir().expect("temp dir"),
            url: None,
        }
    }

    /// A temporary directory, with the ledger in a new empty database `name` on the test
    /// PostgreSQL server.
    pub fn postgres(name: &str) -> Tmp {
        Tmp {
            dir: tempfile::tempdir().expect("temp dir"),
            url: Some(pg_database(name)),
        }
    }

    /// The ledger: a file in the directory, or the database's URL.
    pub fn db(&self) -> PathBuf {
        match &self.url {
            Some(url) => PathBuf::from(url),
            None => self.dir.path().join("ledger.redb"),
        }
    }

    pub fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).expect("write file");
        p
    }

    /// Starts `cairn --db <db> ingest --json -`, with its standard input and output piped.
    pub fn stream_ingest(&self) -> std::process::Child {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(self.db())
            .args(["ingest", "--json", "-"])
            .env_remove("CAIRN_DB")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cairn ingest")
    }

    /// Runs `cairn --db <db> args...` with optional stdin.
    pub fn cairn(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        run_cairn(&self.db(), args, stdin)
    }
}

/// The PostgreSQL server the tests use: what `tests/pg-cluster.sh` prints, $CAIRN_TEST_PG or the
/// throwaway cluster it starts on port 55432 (Debian's PostgreSQL).
pub fn pg_server() -> String {
    static URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    URL.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/pg-cluster.sh");
        let out = Command::new("bash").args([script, "55432"]).output();
        let out = out.expect("bash runs");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "no test PostgreSQL server: {said}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
    .clone()
}

/// The URL of database `name` on the test server.
pub fn pg_url(name: &str) -> String {
    let server = pg_server();
    let (base, _) = server.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{name}")
}

/// An administrator's connection to the test server.
pub fn pg_admin() -> postgres::Client {
    postgres::Client::connect(&pg_server(), postgres::NoTls).expect("connect to the test server")
}

/// A new empty database `name` on the test server (dropped first if a run left it); its URL.
pub fn pg_database(name: &str) -> String {
    let mut admin = pg_admin();
    admin
        .execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"), &[])
        .expect("drop the test database");
    admin
        .execute(&format!("CREATE DATABASE {name}"), &[])
        .expect("create the test database");
    pg_url(name)
}

pub fn run_cairn(db: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.arg("--db").arg(db).args(args).env_remove("CAIRN_DB");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn cairn");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        // A command that refuses before reading its input closes the pipe: not an error here.
        if let Err(e) = pipe.write_all(input) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
    }
    child.wait_with_output().expect("wait for cairn")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The JSON Lines of the seeds' libfoo story, used by several tests.
pub const LIBFOO: &str = r#"{"kind":"span","stream":"s1","turn":160,"role":"user","text":"refactor the client"}
{"kind":"span","stream":"s1","turn":212,"role":"user","text":"we are still on libfoo 2.3.1, do not bump."}
{"kind":"span","stream":"s1","turn":240,"role":"tool","name":"cargo","text":"test result: ok. 148 passed"}
{"kind":"pin","stream":"s1","name":"constraints","items":[{"class":"prohibition","text":"do not bump libfoo","witness":"turn:212"}]}
{"kind":"summary","stream":"s1","author":"self","budget":4000,"covers":["turn:160..turn:240"],"evicts":["turn:160..turn:212"],"self_score":0.91,"claims":[{"text":"libfoo stays pinned at 2.3.1","origin":"user-said","witnesses":["turn:212"],"actionable":true}]}
{"kind":"span","stream":"s1","turn":241,"role":"tool","text":"pip: libfoo 2.4.0 available"}
{"kind":"judgement","stream":"s1","claim":"prior:0","span":"turn:241","relation":"contradicts"}
{"kind":"action","stream":"s1","text":"run the test suite","irreversible":false,"relies_on":["prior:0"]}
"#;

/// Record count and export of a ledger, to show that something did not change.
pub fn fingerprint(t: &Tmp) -> (String, String) {
    if t.url.is_none() && !t.db().exists() {
        return (String::new(), String::new());
    }
    let stats = t.cairn(&["stats", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats json");
    (
        v["records"].to_string(),
        stdout(&t.cairn(&["export", "--format", "json"], None)),
    )
}

/// The redb tables that tests damaging a file on purpose write to: the store's own definitions
/// are private, so the tests declare the few they need, by name and type (SPEC.md section 4).
pub const RECORDS: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("records");
pub const MERKLE: redb::TableDefinition<(u8, u64), [u8; 32]> = redb::TableDefinition::new("merkle");

/// The Python that runs the tests driven through the official MCP SDK's client: the one
/// `$CAIRN_MCP_PYTHON` names (CI and the README's test command install the packages of
/// `tests/mcp/requirements.txt` into the virtual environment `target/mcp-venv`), else `python3`.
pub fn mcp_python() -> String {
    std::env::var("CAIRN_MCP_PYTHON").unwrap_or_else(|_| "python3".into())
}
