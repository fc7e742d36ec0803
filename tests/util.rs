//! Shared test harness of the library's tests: temporary ledgers and record builders.

use cairn::record::*;
use cairn::Ledger;
use std::path::{Path, PathBuf};

pub struct Tmp {
    pub dir: tempfile::TempDir,
}

impl Tmp {
    pub fn new() -> Tmp {
        Tmp {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("ledger.redb")
    }
}

/// The ledger a scenario test runs on: in memory, or, with `CAIRN_SCENARIO_DB=postgres`, in a
/// new database on the test PostgreSQL server (SPEC.md section 17): $CAIRN_TEST_PG, or the
/// throwaway cluster `tests/pg-cluster.sh` starts. CI runs the scenario tests both ways. On
/// PostgreSQL, a test that passes ends with `verify` of the server's ledger: a replica filled
/// anew from the rows the test's batches put on the server must equal the records' rebuild.
pub fn ledger() -> Scenario {
    if std::env::var("CAIRN_SCENARIO_DB").as_deref() != Ok("postgres") {
        return Scenario(Ledger::in_memory().expect("a ledger in memory"), false);
    }
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static SERVER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    // What tests/pg-cluster.sh prints: $CAIRN_TEST_PG, or the throwaway cluster it starts.
    let server = SERVER.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pg-cluster.sh");
        let out = std::process::Command::new("bash")
            .args([script, "55432"])
            .output();
        let out = out.expect("bash runs");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "no test PostgreSQL server: {said}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    });
    let name = format!(
        "scenario_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let mut admin = postgres::Client::connect(server, postgres::NoTls).expect("connect");
    admin
        .execute(&format!("CREATE DATABASE {name}"), &[])
        .expect("create the scenario's database");
    let (base, _) = server.rsplit_once('/').expect("a URL with a database");
    Scenario(
        Ledger::open(format!("{base}/{name}")).expect("a ledger on PostgreSQL"),
        true,
    )
}

/// A scenario test's ledger, and whether it is on PostgreSQL.
pub struct Scenario(Ledger, bool);

impl std::ops::Deref for Scenario {
    type Target = Ledger;
    fn deref(&self) -> &Ledger {
        &self.0
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        if self.1 && !std::thread::panicking() {
            let report = self.0.verify().expect("verify the server's ledger");
            assert!(
                report.ok(),
                "the server's rows differ from the records' rebuild: {:?}",
                report.discrepancies
            );
        }
    }
}

pub fn span(stream: &str, turn: u64, text: &str) -> Span {
    Span {
        stream: stream.into(),
        turn,
        role: Role::User,
        tool: None,
        text: text.into(),
    }
}

pub fn claim(stream: &str, text: &str, witnesses: Vec<Rid>) -> Claim {
    Claim {
        stream: stream.into(),
        text: text.into(),
        origin: Origin::UserSaid,
        witnesses,
        actionable: true,
    }
}

pub fn summary(
    stream: &str,
    parent: Option<Rid>,
    author: Author,
    evicts: Vec<Rid>,
    claims: Vec<Rid>,
) -> Summary {
    Summary {
        stream: stream.into(),
        parent,
        author,
        budget: 1000,
        covers: vec![],
        evicts,
        claims,
        self_score: None,
        reground: false,
    }
}

pub fn pin(stream: &str, name: &str, text: &str) -> Pin {
    Pin {
        stream: stream.into(),
        name: name.into(),
        items: vec![PinItem {
            class: PinClass::Prohibition,
            text: text.into(),
            witness: None,
        }],
    }
}

pub fn verdict(subject: Rid, admitted: bool) -> Verdict {
    Verdict {
        subject,
        admitted,
        findings: vec![],
        claims: vec![],
        self_score: None,
        anchored_score: None,
        policy: [0; 32],
    }
}

pub fn tamper(path: &Path, f: impl FnOnce(&redb::WriteTransaction)) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    f(&txn);
    txn.commit().unwrap();
}

/// The redb tables that tests damaging a file on purpose write to: the store's own definitions
/// are private, so the tests declare the few they need, by name and type (SPEC.md section 4).
pub mod tables {
    use redb::TableDefinition;
    pub const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("records");
    pub const LOG: TableDefinition<u64, [u8; 32]> = TableDefinition::new("log");
    pub const UNANCHORED: TableDefinition<[u8; 32], ()> = TableDefinition::new("unanchored");
    pub const ITEMS: TableDefinition<(&str, u64, u8), &[u8]> = TableDefinition::new("items");
}
