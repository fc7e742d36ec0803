//! Shared test harness of the library's tests: temporary ledgers and record builders.

use std::path::PathBuf;

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
