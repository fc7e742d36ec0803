//! The seam at the level of the ledger (SPEC.md section 17.2): what the store does, whichever
//! backend holds the ledger.
//!
//! A ledger is its log (records in one total order, with a little meta) and the rows derived
//! from it, a pure function of the log that `verify` rebuilds and compares. A [`Store`] appends
//! a batch of records with their derived rows in one transaction at the log's head, and reads
//! records by log index and derived rows by table and key, from an index on, in one snapshot.
//! It has two implementations: a redb database ([`super::file`]) and PostgreSQL
//! ([`super::postgres`]).
//!
//! A ledger file is its own store: a batch derives straight into its tables. A ledger on a
//! server is read through a replica in each process that opens it, a redb database in memory
//! that holds the server's rows: it is filled from the server's rows when the ledger is opened,
//! and brought to the log's head before every read and write by the rows of the records
//! appended since. A batch derives its records in the replica, keeps the rows it derives
//! ([`super::rows::Capture`]) and appends them with its records to the server in one
//! transaction. Gates, replay, memory and the MCP server read the replica through the same
//! [`super::Read`] as a file, and cannot tell which store they run on.

use super::rows::Change;
use crate::error::Result;
use crate::record::Rid;
use std::sync::{Arc, Condvar, Mutex};

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

/// What a read of a store brings, in this order: the records from an index on, in log order,
/// then the derived rows.
pub(crate) enum Pulled {
    /// A record of the log.
    Record(Row),
    /// A derived row.
    Row(Change),
}

/// What holds a ledger: its log, its derived rows and its meta.
pub(crate) trait Store: Send + Sync {
    /// The ledger's location for messages: a path, or a URL without its password.
    fn location(&self) -> &str;

    /// The ledger's meta, or `None` when the store holds no ledger yet. Checks the schema's
    /// version.
    fn meta(&self) -> Result<Option<Meta>>;

    /// Creates an empty ledger with these meta entries, unless another process created one
    /// first; returns the meta of the ledger that is there.
    fn create(&self, meta: &Meta) -> Result<Meta>;

    /// Calls `f` on every record at or after index `from`, in log order, then on every derived
    /// row those records set or removed, as it stands now, ordered by table and key (from 0:
    /// every row), and returns the meta: all read in one snapshot.
    fn read(&self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<Meta>;

    /// Begins a write: takes the lock on every stream (`None`) or on the streams named, and
    /// holds it until the write is published or dropped.
    fn begin(&self, streams: Option<&[String]>) -> Result<Box<dyn Writing>>;
}

/// A write under way on a store: its locks are held until it is published or dropped, and
/// dropping it writes nothing.
pub(crate) trait Writing: Send {
    /// Reads as [`Store::read`] does, what the log holds now. Called under the lock on the log
    /// order that [`Writing::publish`] keeps when it returns [`Published::Moved`], so nothing
    /// is appended meanwhile.
    fn tail(&mut self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<()>;

    /// Appends `records` at index `base` with their derived `rows` (each key once) and the
    /// `meta` entries, in one transaction, once the log order is locked. When other writers
    /// moved the log's head past `base` meanwhile, writes nothing and returns the head, keeping
    /// the lock on the log order: the caller takes the records and rows from `base` to the
    /// head ([`Writing::tail`]), derives its own after them, and publishes again.
    fn publish(
        &mut self,
        base: u64,
        records: &[Row],
        rows: &[Change],
        meta: &Meta,
    ) -> Result<Published>;
}

/// What [`Writing::publish`] did.
pub(crate) enum Published {
    /// The rows are in the log, durably.
    Done,
    /// The log's head moved to this index; nothing was written.
    Moved(u64),
}

/// A shared ledger as one process holds it: its store, whether this process may write, and
/// the replica's one writer.
#[derive(Clone)]
pub(crate) struct Shared {
    /// The store on the server.
    pub log: Arc<dyn Store>,
    /// Whether the ledger was opened for writing.
    pub writable: bool,
    /// Held by a batch of this process while it is open: its replica is then being brought up
    /// to date by the batch, and snapshots read it as it stands.
    pub busy: Arc<Slot>,
}

/// The replica's one writer in a process. A batch takes it before the server's locks and keeps
/// it to its end, so two batches of one process never hold one of the server's locks and the
/// replica's write transaction against each other: the second waits here, holding nothing.
#[derive(Default)]
pub(crate) struct Slot {
    held: Mutex<bool>,
    freed: Condvar,
}

impl Slot {
    /// Whether a batch holds it.
    pub fn held(&self) -> bool {
        *self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The slot, held until dropped.
pub(crate) struct Busy(Arc<Slot>);

impl Busy {
    /// Waits for the slot and takes it.
    pub fn take(slot: &Arc<Slot>) -> Busy {
        let mut held = slot.held.lock().unwrap_or_else(|e| e.into_inner());
        while *held {
            held = slot.freed.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        *held = true;
        Busy(Arc::clone(slot))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.held.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.0.freed.notify_one();
    }
}

/// Whether `location` names a PostgreSQL server rather than a file.
pub(crate) fn is_url(location: &str) -> bool {
    let scheme = location.split("://").next().unwrap_or_default();
    location.contains("://")
        && (scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql"))
}

/// Connects to the store at `url`.
#[cfg(feature = "postgres")]
pub(crate) fn connect(url: &str) -> Result<Arc<dyn Store>> {
    Ok(Arc::new(super::postgres::Postgres::connect(url)?))
}

/// Without the `postgres` feature no server can be reached.
#[cfg(not(feature = "postgres"))]
pub(crate) fn connect(url: &str) -> Result<Arc<dyn Store>> {
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
