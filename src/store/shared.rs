//! The seam at the level of the ledger (SPEC.md section 17): where a ledger's log lives when it
//! is not the ledger file itself.
//!
//! A ledger is its log (records in one total order, with a little meta) and the tables derived
//! from it, a pure function of the log that `verify` rebuilds and compares. A redb ledger keeps
//! both in one file and commits them in one transaction. A shared ledger keeps the log in a
//! server ([`SharedLog`], implemented by PostgreSQL in [`super::postgres`]); each process that
//! opens it keeps the derived tables in a redb replica in memory, brings it up to the log's
//! head before every read and write, and appends a batch's records to the log in one server
//! transaction. Gates, replay, memory and the MCP server read the replica through the same
//! [`super::Read`] as a file, and cannot tell which one they run on.

use crate::error::Result;
use crate::record::Rid;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One record of the log: its index, its rid and its canonical bytes.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// Its position in the log.
    pub index: u64,
    /// Its id, the BLAKE3 hash of `bytes`.
    pub rid: Rid,
    /// Its canonical bytes.
    pub bytes: Vec<u8>,
    /// Its kind's byte, for the server's own queries (0 on rows read back).
    pub kind: u8,
    /// Its stream, where its kind has one (`None` on rows read back).
    pub stream: Option<String>,
}

/// A ledger's meta entries (`format`, `rules`, `ledger_id`, the signed checkpoint's size and
/// root), as name and value.
pub(crate) type Meta = Vec<(String, Vec<u8>)>;

/// Where a shared ledger's log lives.
pub(crate) trait SharedLog: Send + Sync {
    /// The ledger's location for messages: a URL without its password.
    fn location(&self) -> &str;

    /// The ledger's meta, or `None` when the server holds no ledger yet. Checks the schema's
    /// version.
    fn meta(&self) -> Result<Option<Meta>>;

    /// Creates an empty ledger with these meta entries, unless another process created one
    /// first; returns the meta of the ledger that is there.
    fn create(&self, meta: &Meta) -> Result<Meta>;

    /// Calls `f` on every record at or after index `from`, in log order, and returns the meta:
    /// all read in one snapshot of the server (a read-only, repeatable-read transaction).
    fn tail(&self, from: u64, f: &mut dyn FnMut(Row) -> Result<()>) -> Result<Meta>;

    /// Begins a write: takes the lock on every stream (`None`) or on the streams named, and
    /// holds it until the write is published or dropped.
    fn begin(&self, streams: Option<&[String]>) -> Result<Box<dyn Writing>>;
}

/// A write under way on a shared log: its locks are held until it is published or dropped, and
/// dropping it writes nothing.
pub(crate) trait Writing: Send {
    /// Calls `f` on every record at or after index `from` that the log holds now.
    fn tail(&mut self, from: u64, f: &mut dyn FnMut(Row) -> Result<()>) -> Result<()>;

    /// Appends `rows` at index `base` with the `meta` entries, in one transaction, once the log
    /// order is locked. When other writers moved the log's head past `base` meanwhile, writes
    /// nothing and returns the head, keeping the lock on the log order: the caller derives
    /// the records from `base` to the head, places its own after them, and publishes again.
    fn publish(&mut self, base: u64, rows: &[Row], meta: &Meta) -> Result<Published>;
}

/// What [`Writing::publish`] did.
pub(crate) enum Published {
    /// The rows are in the log, durably.
    Done,
    /// The log's head moved to this index; nothing was written.
    Moved(u64),
}

/// A shared ledger as one process holds it: the log, whether this process may write, and
/// whether a batch of this process is open on the replica.
#[derive(Clone)]
pub(crate) struct Shared {
    /// The log.
    pub log: Arc<dyn SharedLog>,
    /// Whether the ledger was opened for writing.
    pub writable: bool,
    /// Set while a batch of this process is open: its replica is then being brought up to date
    /// by the batch, and snapshots read it as it stands.
    pub busy: Arc<AtomicBool>,
}

/// Marks a shared ledger's replica as written by an open batch, until dropped.
pub(crate) struct Busy(Arc<AtomicBool>);

impl Busy {
    /// Marks the replica busy.
    pub fn set(flag: &Arc<AtomicBool>) -> Busy {
        flag.store(true, Ordering::SeqCst);
        Busy(Arc::clone(flag))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Whether `location` names a PostgreSQL server rather than a file.
pub(crate) fn is_url(location: &str) -> bool {
    let scheme = location.split("://").next().unwrap_or_default();
    location.contains("://")
        && (scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql"))
}

/// Connects to the shared log at `url`.
#[cfg(feature = "postgres")]
pub(crate) fn connect(url: &str) -> Result<Arc<dyn SharedLog>> {
    Ok(Arc::new(super::postgres::Postgres::connect(url)?))
}

/// Without the `postgres` feature no shared log can be reached.
#[cfg(not(feature = "postgres"))]
pub(crate) fn connect(url: &str) -> Result<Arc<dyn SharedLog>> {
    Err(crate::error::ErrorKind::Remote {
        url: url
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string(),
        detail: "this build of cairn has no PostgreSQL backend; build it with the cargo feature `postgres` (the `cairn` binary has it by default), or give a file path".into(),
    }
    .into())
}
