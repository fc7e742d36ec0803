//! The ledger on redb: one file, append-only, with facts derived at append time.

mod backend;
mod file;
#[cfg(feature = "postgres")]
mod postgres;
mod read;
mod recall;
mod rows;
mod shared;
mod tables;
mod verify;

pub use backend::Storage;
pub(crate) use read::sealed::Sealed;
use read::SnapshotTx;
pub(crate) use read::{missing, Trusted};
pub use read::{Read, Standing};
pub use tables::{classify, Facts, Item, StreamState};
pub use verify::{Discrepancy, VerifyReport};

use crate::error::{ErrorKind, Result};
use crate::merkle::{Hash, Nodes, Scheme};
use crate::record::{
    decode, encode, Author, Claim, Entry, Kind, Record, Reground, Relation, Rid, Span, Status,
    Summary, Verdict, FORMAT_VERSION, MAX_RECORD_BYTES,
};
use redb::{
    ConcurrencyMode, Database, DatabaseError, ReadOnlyDatabase, ReadableDatabase, ReadableTable,
    ReadableTableMetadata, StorageError, TableHandle, WriteTransaction,
};
use shared::{Busy, Meta, Published, Pulled, Row, Shared, Store, Writing};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tables::*;

/// Perfect-subtree hashes of a ledger state, for the Merkle log.
pub(crate) struct StoreNodes<'a, R: Read>(pub &'a R);

impl<R: Read> crate::merkle::sealed::Sealed for StoreNodes<'_, R> {}

impl<R: Read> Nodes for StoreNodes<'_, R> {
    fn scheme(&self) -> Scheme {
        Scheme::Blake3
    }

    fn node(&self, level: u32, index: u64) -> Result<Hash> {
        let found = if level == 0 {
            self.0.rid_at(index)?.map(|r| r.0)
        } else {
            self.0
                .subtree(u8::try_from(level).unwrap_or(u8::MAX), index)?
        };
        found.ok_or_else(|| {
            ErrorKind::CorruptFile {
                path: "merkle table".into(),
                detail: format!("the subtree hash at level {level}, index {index} is missing"),
            }
            .into()
        })
    }
}

/// The version of the derivation by which a new ledger builds its tables from its records
/// (SPEC.md section 4.3), kept for the ledger's life in its meta. Version 1 (ledgers created
/// before 2026-11-30): a self-authored summary without a parent has depth 1; from version 2 it
/// has depth 0, as seed 001's `cycle_depth` counts. Versions 1 to 5 derived a span's
/// classifier items from the span itself, by the classifier of that day; those ledgers keep
/// the items they derived. From version 6 (2026-12-02) a span's items come only from its
/// classification record ([`crate::record::Classification`]), which carries the classifier's id.
pub const DERIVATION: u8 = 6;

/// The last derivation version whose spans' items were derived without classification records.
const ITEMS_WITHOUT_RECORDS: u8 = 5;

/// The meta entry of a ledger of derivation 5 or below: the log size when a build that writes
/// classification records first opened it. Spans logged below it keep the items derived for them
/// then; spans at or above it have classification records.
const CLASSIFIED_FROM: &str = "classified_from";

/// The meta entries that name a ledger and its last signed checkpoint: what `cairn copy`
/// carries, and what a shared ledger's replica takes from the server at every read (`cairn
/// copy` into an empty ledger sets the id).
const SYNCED: [&str; 4] = ["ledger_id", LEDGER_ID_CHECK, "signed_size", "signed_root"];

/// The URL in a ledger's path, when it names a PostgreSQL server (SPEC.md section 17).
fn url_of(path: &Path) -> Option<&str> {
    path.to_str().filter(|s| shared::is_url(s))
}

/// The most links one record may hold (`max-links`).
pub const MAX_LINKS: usize = 65_536;

/// redb's page cache: large enough for the hot tables, small enough that ingesting a huge file
/// in one transaction stays in bounded memory (redb writes pages out past it).
const CACHE_BYTES: usize = 160 * 1024 * 1024;

/// An open ledger file.
pub struct Ledger {
    db: Db,
    path: PathBuf,
    rules: u8,
    /// For a ledger whose log lives in a server (SPEC.md section 17): the log; `db` is then
    /// this process's replica of the derived tables, in memory.
    shared: Option<Shared>,
}

/// The database under a ledger: open for writing, or read-only (SPEC.md section 4.4).
enum Db {
    Write(Arc<Database>),
    Read(ReadOnlyDatabase),
}

impl Db {
    fn begin_read(&self) -> std::result::Result<redb::ReadTransaction, redb::TransactionError> {
        match self {
            Db::Write(db) => db.begin_read(),
            Db::Read(db) => db.begin_read(),
        }
    }

    fn begin_write(&self, path: &Path) -> Result<WriteTransaction> {
        match self {
            Db::Write(db) => Ok(db.begin_write()?),
            Db::Read(_) => Err(ErrorKind::ReadOnly(path.to_path_buf()).into()),
        }
    }
}

/// How processes share a ledger file: one writer, and any number of read-only handles in
/// other processes that read committed snapshots beside it.
const SHARING: ConcurrencyMode = ConcurrencyMode::SingleWriter;

/// A consistent, read-only view of the ledger as of the moment it was taken.
pub struct Snapshot {
    txn: SnapshotTx,
}

/// A write batch: appends that become durable together when [`Batch::commit`] is called.
/// Dropping a batch without committing it writes nothing.
pub struct Batch {
    txn: WriteTransaction,
    /// On a shared ledger: the server's write, and this batch's records for it.
    shared: Option<Sharing>,
    rules: u8,
    /// For a rebuild of an old ledger (`verify`, `as_of`): the ledger whose items a span
    /// logged below the index was given without a classification record, to copy them from.
    legacy: Option<(SnapshotTx, u64)>,
    /// Recall postings of this batch's texts not yet written (section 10b).
    recall: recall::Pending,
    /// On a shared ledger, the derived rows this batch's records set: they go to the server
    /// with the records.
    capture: Option<rows::Capture>,
}

/// A batch's write on a shared ledger's server.
struct Sharing {
    /// The server's transaction, holding the batch's locks.
    writing: Box<dyn Writing>,
    /// The replica, to begin a write on again when the log moved.
    db: Arc<Database>,
    /// The log's size when the batch's own records began.
    base: u64,
    /// The streams the batch may append to; `None` for any.
    streams: Option<Vec<String>>,
    /// The batch's own records, in log order.
    records: Vec<Row>,
    /// Meta entries the batch sets.
    meta: Meta,
    /// The ledger's location, for messages.
    location: String,
    /// The replica's one writer in this process, held while the batch is open.
    _busy: Busy,
}

/// The result of an append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The record's id.
    pub rid: Rid,
    /// Its position in the log.
    pub index: u64,
    /// False when the record was already in the ledger and nothing was written.
    pub new: bool,
}

impl Sealed for Snapshot {
    type X = SnapshotTx;
    fn tx(&self) -> &SnapshotTx {
        &self.txn
    }
}

impl Read for Snapshot {}

impl Sealed for Batch {
    type X = WriteTransaction;
    fn tx(&self) -> &WriteTransaction {
        &self.txn
    }
}

impl Read for Batch {}

fn open_error(path: &Path, e: DatabaseError) -> crate::error::Error {
    match e {
        DatabaseError::DatabaseAlreadyOpen => ErrorKind::Locked(path.to_path_buf()).into(),
        DatabaseError::Storage(StorageError::Corrupted(detail)) => ErrorKind::CorruptFile {
            path: path.to_path_buf(),
            detail,
        }
        .into(),
        DatabaseError::Storage(StorageError::Io(source))
            if source.kind() == std::io::ErrorKind::InvalidData =>
        {
            ErrorKind::NotALedger {
                path: path.to_path_buf(),
                expected: FORMAT_VERSION,
                detail: source.to_string(),
            }
            .into()
        }
        // A file cut short inside redb's header or a page: damage, not a usage problem.
        DatabaseError::Storage(StorageError::Io(source))
            if source.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            ErrorKind::CorruptFile {
                path: path.to_path_buf(),
                detail: format!(
                    "the file ends after {size} bytes, inside what its header says it holds: it was truncated"
                ),
            }
            .into()
        }
        DatabaseError::Storage(StorageError::Io(source)) => ErrorKind::Io {
            what: "cannot open the ledger",
            path: path.to_path_buf(),
            source,
        }
        .into(),
        DatabaseError::UpgradeRequired(v) => ErrorKind::NotALedger {
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            detail: format!("redb reports file format {v}, which this build does not read"),
        }
        .into(),
        other => ErrorKind::CorruptFile {
            path: path.to_path_buf(),
            detail: other.to_string(),
        }
        .into(),
    }
}

/// A directory is never a ledger, whichever way it is opened.
fn not_a_directory(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(ErrorKind::NotALedger {
            path: path.to_path_buf(),
            expected: FORMAT_VERSION,
            detail: "it is a directory".into(),
        }
        .into());
    }
    Ok(())
}

impl Ledger {
    /// Opens the ledger at `path`, creating it if it does not exist.
    ///
    /// ```
    /// # fn main() -> Result<(), cairn::Error> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let ledger = cairn::Ledger::open(dir.path().join("agent.redb"))?;
    /// # Ok(()) }
    /// ```
    ///
    /// A `postgres://` (or `postgresql://`) URL in place of the path opens the ledger in that
    /// PostgreSQL database, creating its tables if it has none (feature `postgres`, SPEC.md
    /// section 17).
    pub fn open(path: impl AsRef<Path>) -> Result<Ledger> {
        match url_of(path.as_ref()) {
            Some(url) => Ledger::open_shared(url, true, DERIVATION),
            None => Ledger::open_with(path.as_ref(), false, DERIVATION),
        }
    }

    /// Opens the ledger after redb has checked every page of the file: damage that a plain
    /// open could trip over is reported as [`ErrorKind::CorruptFile`]. `verify` opens this way.
    /// On PostgreSQL it is [`Ledger::open`]: the server checks its own pages.
    pub fn open_checked(path: impl AsRef<Path>) -> Result<Ledger> {
        match url_of(path.as_ref()) {
            Some(url) => Ledger::open_shared(url, true, DERIVATION),
            None => Ledger::open_with(path.as_ref(), true, DERIVATION),
        }
    }

    /// Opens the file at `path` for writing, creating a ledger there that derives by rules
    /// version `rules` if it does not exist.
    fn open_with(path: &Path, check: bool, rules: u8) -> Result<Ledger> {
        not_a_directory(path)?;
        if !path.exists() {
            Ledger::create_atomically(path)?;
        }
        let db = Database::builder()
            .set_check_integrity_on_open(check)
            .set_cache_size(CACHE_BYTES)
            .set_concurrency_mode(SHARING)
            .create(path)
            .map_err(|e| open_error(path, e))?;
        Ledger::start(db, path.to_path_buf(), rules)
    }

    /// Opens an existing ledger read-only: nothing in the file changes, a read-only file
    /// opens, any number of processes may read at once, and a reader reads committed
    /// snapshots beside the one process that writes. A ledger a crash left mid-write is
    /// refused ([`ErrorKind::NeedsRecovery`]): the next open for writing recovers it.
    ///
    /// On PostgreSQL (a `postgres://` URL), nothing is written to the server, and the ledger
    /// must exist.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Ledger> {
        let path = path.as_ref();
        if let Some(url) = url_of(path) {
            return Ledger::open_shared(url, false, DERIVATION);
        }
        not_a_directory(path)?;
        let db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .set_concurrency_mode(SHARING)
            .open_read_only(path)
            .map_err(|e| match e {
                DatabaseError::RepairAborted => ErrorKind::NeedsRecovery(path.to_path_buf()).into(),
                DatabaseError::Storage(StorageError::Io(source))
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    ErrorKind::Io {
                        what: "cannot open the ledger",
                        path: path.to_path_buf(),
                        source,
                    }
                    .into()
                }
                other => open_error(path, other),
            })?;
        let mut ledger = Ledger {
            db: Db::Read(db),
            path: path.to_path_buf(),
            rules: DERIVATION,
            shared: None,
        };
        ledger.rules = match ledger.read_meta()? {
            Some(rules) => rules,
            None => {
                return Err(ErrorKind::NotALedger {
                    path: path.to_path_buf(),
                    expected: FORMAT_VERSION,
                    detail: "it has no cairn meta table".into(),
                }
                .into())
            }
        };
        Ok(ledger)
    }

    /// A ledger on an open database: checks an old ledger's meta, or writes a new one's with
    /// the derived rules of version `rules`.
    fn start(db: Database, path: PathBuf, rules: u8) -> Result<Ledger> {
        let mut ledger = Ledger {
            db: Db::Write(Arc::new(db)),
            path,
            rules,
            shared: None,
        };
        ledger.rules = ledger.init(rules)?;
        ledger.upgrade()?;
        ledger.record_derived_items()?;
        Ok(ledger)
    }

    /// Brings a ledger written before some table existed up to date, in one transaction: the
    /// receipts table (empty: no receipt was written before it), and the recall index (SPEC.md
    /// section 10b), built from its records. A ledger that has both is left as it is.
    fn upgrade(&self) -> Result<()> {
        let txn = self.db.begin_write(&self.path)?;
        let names: Vec<String> = txn.list_tables()?.map(|t| t.name().to_string()).collect();
        let receipts = !names.iter().any(|n| n == "receipts");
        let places = !names.iter().any(|n| n == "places");
        let entries = !names.iter().any(|n| n == "entries");
        // No index, or one of an older layout (version 1, a B-tree entry per posting): built
        // anew from the records.
        let recall = txn
            .open_table(META)?
            .get(RECALL_META)?
            .is_none_or(|v| v.value() != [RECALL_VERSION]);
        if !receipts && !places && !entries && !recall {
            return Ok(());
        }
        if entries {
            txn.open_table(ENTRIES)?;
        }
        if receipts {
            txn.open_table(RECEIPTS)?;
        }
        if places {
            txn.open_table(PLACES)?;
        }
        if !recall {
            txn.commit()?;
            return Ok(());
        }
        let old: Vec<_> = (txn.list_tables()?)
            .filter(|t| RECALL_V1.contains(&t.name()))
            .collect();
        for table in old {
            txn.delete_table(table)?;
        }
        let mut pending = recall::Pending::default();
        {
            let records = txn.open_table(RECORDS)?;
            for entry in records.iter()? {
                let (index, bytes) = entry?;
                pending.add(&decode(bytes.value())?, index.value());
                if pending.full() {
                    pending.flush(rows::Tables::plain(&txn))?;
                }
            }
        }
        pending.flush(rows::Tables::plain(&txn))?;
        txn.open_table(META)?
            .insert(RECALL_META, [RECALL_VERSION].as_slice())?;
        txn.commit()?;
        Ok(())
    }

    /// Turns the items a ledger of derivation 5 or below derived for its spans into
    /// classification records, once, in one transaction, the first time a build that writes
    /// them opens it for writing: one record per span with items, in the order of the items
    /// table, carrying the classifier id `cairn-derived-N` for derivation N, since that day's
    /// classifier is no longer in the code. The log size before them is kept in the meta as
    /// [`CLASSIFIED_FROM`]: spans below it had their items before they had records.
    fn record_derived_items(&self) -> Result<()> {
        if self.rules > ITEMS_WITHOUT_RECORDS {
            return Ok(());
        }
        let mut batch = self.batch()?;
        if batch.txn.open_table(META)?.get(CLASSIFIED_FROM)?.is_some() {
            return Ok(());
        }
        let size = batch.txn.open_table(LOG)?.len()?;
        let mut spans: Vec<((String, u64), Vec<Item>)> = Vec::new();
        for row in batch.txn.open_table(ITEMS)?.iter()? {
            let (key, value) = row?;
            let (stream, turn, _) = key.value();
            let item =
                Item::from_bytes(turn, value.value()).ok_or_else(|| ErrorKind::CorruptFile {
                    path: self.path.clone(),
                    detail: format!("an item of turn {turn} of stream {stream} is too short"),
                })?;
            match spans.last_mut() {
                Some((at, items)) if at.0 == stream && at.1 == turn => items.push(item),
                _ => spans.push(((stream.to_string(), turn), vec![item])),
            }
        }
        let classifier = format!("cairn-derived-{}", self.rules);
        for ((stream, turn), items) in spans {
            {
                let mut table = batch.txn.open_table(ITEMS)?;
                for k in 0..items.len() {
                    table.remove((stream.as_str(), turn, k as u8))?;
                }
            }
            let record = Record::Classification(crate::record::Classification {
                span: items[0].span,
                classifier: classifier.clone(),
                items: (items.into_iter())
                    .map(|i| crate::record::FoundItem {
                        class: i.class,
                        text: i.text,
                    })
                    .collect(),
            });
            batch.append_canonical(&record)?;
        }
        batch
            .txn
            .open_table(META)?
            .insert(CLASSIFIED_FROM, size.to_le_bytes().as_slice())?;
        batch.commit()
    }

    /// Creates a new ledger file under a temporary name and renames it into place once its
    /// tables and meta are committed, so a crash during creation leaves no half-made ledger.
    fn create_atomically(path: &Path) -> Result<()> {
        let tmp = path.with_file_name(format!(
            ".{}.creating-{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::process::id()
        ));
        let io = |what, source| ErrorKind::Io {
            what,
            path: path.to_path_buf(),
            source,
        };
        // A failure (a full disk, say) removes the temporary file and names the path asked
        // for, not the temporary one.
        let made = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .set_concurrency_mode(SHARING)
            .create(&tmp)
            .map_err(|e| open_error(path, e))
            .and_then(|db| Ledger::start(db, path.to_path_buf(), DERIVATION).map(drop));
        if let Err(e) = made {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // A hard link never replaces a file: if another process created the ledger meanwhile,
        // its ledger stays and this one is dropped.
        let linked = std::fs::hard_link(&tmp, path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(io("cannot create the ledger", e).into()),
        }
    }

    /// Whether `location` names a ledger on a PostgreSQL server (a `postgres://` or
    /// `postgresql://` URL) rather than a file.
    pub fn is_url(location: &Path) -> bool {
        url_of(location).is_some()
    }

    /// A ledger held in memory only, for tests and for rebuilding derived tables.
    pub fn in_memory() -> Result<Ledger> {
        Ledger::in_memory_with(DERIVATION)
    }

    /// A ledger in memory that derives its tables by the rules of version `rules`: for
    /// rebuilding an older ledger's tables as they were derived (`verify`, `as_of`).
    fn in_memory_with(rules: u8) -> Result<Ledger> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| open_error(Path::new(":memory:"), e))?;
        Ledger::start(db, PathBuf::from(":memory:"), rules)
    }

    /// A ledger on storage of the caller's own: for fault injection in tests (storage that
    /// loses writes after a chosen sync, say).
    pub fn with_storage(storage: impl Storage) -> Result<Ledger> {
        let db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create_with_backend(backend::Backend(storage))
            .map_err(|e| open_error(Path::new(":backend:"), e))?;
        Ledger::start(db, PathBuf::from(":backend:"), DERIVATION)
    }

    /// Creates the tables and the meta entries of a new ledger, deriving by the rules of
    /// version `rules`, or checks those of an old one; returns the ledger's rules version.
    fn init(&self, rules: u8) -> Result<u8> {
        if let Some(written) = self.read_meta()? {
            return Ok(written);
        }
        self.create_meta(rules)
    }

    /// The rules version of an existing ledger's meta; `None` when the file has no meta table.
    fn read_meta(&self) -> Result<Option<u8>> {
        let snap = self.db.begin_read()?;
        match snap.open_table(META) {
            Ok(meta) => {
                let format = meta.get("format")?.map(|g| g.value().to_vec());
                // A ledger from before rules were versioned derived by version 1.
                let written = meta.get("rules")?.map(|g| g.value().to_vec());
                // The id check (written since 2026-12-01) covers the rules version too: a ledger
                // with one derives by the version it names, and a flipped version is damage.
                let id = meta.get("ledger_id")?.map(|g| g.value().to_vec());
                let check = meta.get(LEDGER_ID_CHECK)?.map(|g| g.value().to_vec());
                if let Some(check) = &check {
                    let rules = written.as_deref().and_then(|w| w.first().copied());
                    let expected =
                        ledger_id_check(id.as_deref().unwrap_or_default(), rules.unwrap_or(0));
                    if expected.as_slice() != check.as_slice() {
                        return Err(ErrorKind::CorruptFile {
                            path: self.path.clone(),
                            detail: "its ledger id or rules version does not match the check written beside them".into(),
                        }
                        .into());
                    }
                }
                match format.as_deref() {
                    Some([FORMAT_VERSION]) => match written.as_deref() {
                        None => Ok(Some(1)),
                        Some([v]) if (1..=DERIVATION).contains(v) => Ok(Some(*v)),
                        Some(v) => Err(ErrorKind::NotALedger {
                            path: self.path.clone(),
                            expected: FORMAT_VERSION,
                            detail: format!(
                                "it derives by rules version {}, and this build knows versions 1 to {DERIVATION}",
                                v.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ")
                            ),
                        }
                        .into()),
                    },
                    other => Err(ErrorKind::NotALedger {
                        path: self.path.clone(),
                        expected: FORMAT_VERSION,
                        detail: match other {
                            Some(v) => format!(
                                "its meta table says format {}",
                                v.iter()
                                    .map(|b| b.to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            None => "its meta table has no format entry".into(),
                        },
                    }
                    .into()),
                }
            }
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Creates the tables and meta of a new ledger deriving by rules version `rules`.
    fn create_meta(&self, rules: u8) -> Result<u8> {
        let txn = self.db.begin_write(&self.path)?;
        if txn.list_tables()?.next().is_some() {
            return Err(ErrorKind::NotALedger {
                path: self.path.clone(),
                expected: FORMAT_VERSION,
                detail: "it is a redb file without cairn's meta table".into(),
            }
            .into());
        }
        txn.open_table(RECORDS)?;
        txn.open_table(LOG)?;
        txn.open_table(RIDS)?;
        txn.open_multimap_table(LINKS)?;
        txn.open_table(TURNS)?;
        txn.open_table(PINS)?;
        txn.open_table(STREAMS)?;
        txn.open_table(FACTS)?;
        txn.open_table(UNANCHORED)?;
        txn.open_table(DEPTHS)?;
        txn.open_table(EVICTIONS)?;
        txn.open_table(VERDICTS)?;
        txn.open_table(BY_KIND)?;
        txn.open_table(MERKLE)?;
        txn.open_table(ORDINALS)?;
        txn.open_table(ITEMS)?;
        txn.open_table(STATUS)?;
        txn.open_table(REGROUNDED)?;
        txn.open_table(RECEIPTS)?;
        txn.open_table(PLACES)?;
        txn.open_table(ENTRIES)?;
        txn.open_multimap_table(CONTRADICTIONS)?;
        txn.open_table(RECALL)?;
        txn.open_table(RECALL_STREAMS)?;
        txn.open_table(TERMS)?;
        txn.open_table(RECALL_STREAM_IDS)?;
        {
            let mut meta = txn.open_table(META)?;
            meta.insert("format", [FORMAT_VERSION].as_slice())?;
            meta.insert(RECALL_META, [RECALL_VERSION].as_slice())?;
            let id = new_ledger_id(&self.path);
            meta.insert("ledger_id", id.as_slice())?;
            meta.insert(LEDGER_ID_CHECK, ledger_id_check(&id, rules).as_slice())?;
            meta.insert("rules", [rules].as_slice())?;
        }
        txn.commit()?;
        Ok(rules)
    }

    /// The version of the rules this ledger derives its tables by (SPEC.md section 4.3): the
    /// version current when the ledger was created, kept for its life so that `verify`
    /// rebuilds what was derived.
    pub fn rules(&self) -> u8 {
        self.rules
    }

    /// The file this ledger lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ledger's id: 16 random-looking bytes fixed at creation, in hex.
    pub fn id(&self) -> Result<String> {
        let snap = self.db.begin_read()?;
        let meta = snap.open_table(META)?;
        let id = meta.get("ledger_id")?.map(|g| g.value().to_vec());
        let check = meta.get(LEDGER_ID_CHECK)?.map(|g| g.value().to_vec());
        if id.as_ref().is_none_or(|i| i.len() != 16) {
            return Err(ErrorKind::CorruptFile {
                path: self.path.clone(),
                detail: "its meta table has no 16-byte ledger id".into(),
            }
            .into());
        }
        if let (Some(id), Some(check)) = (&id, &check) {
            if ledger_id_check(id, self.rules).as_slice() != check.as_slice() {
                return Err(ErrorKind::CorruptFile {
                    path: self.path.clone(),
                    detail: "its ledger id does not match the check written beside it".into(),
                }
                .into());
            }
        }
        Ok(id
            .map(|b| b.iter().map(|x| format!("{x:02x}")).collect())
            .unwrap_or_default())
    }

    /// A read snapshot of the committed state. On a shared ledger, the state as the server
    /// holds it now, read in one server snapshot.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.sync()?;
        Ok(Snapshot {
            txn: SnapshotTx::new(self.db.begin_read()?),
        })
    }

    /// Starts a write batch. Only one batch is open at a time; a second call waits. On a shared
    /// ledger, it also waits for every other process's batch to end, and holds theirs off
    /// until it ends.
    pub fn batch(&self) -> Result<Batch> {
        self.begin(None)
    }

    /// Starts a write batch that appends to the named streams only (a record of another stream
    /// is refused). On a file it is [`Ledger::batch`]. On a shared ledger it waits only for
    /// other processes' batches on the same streams: batches on other streams are judged in
    /// parallel, and their records enter the log one batch after another (SPEC.md section 17).
    pub fn batch_for(&self, streams: &[&str]) -> Result<Batch> {
        let names: Vec<String> = streams.iter().map(|s| s.to_string()).collect();
        self.begin(Some(names))
    }

    fn begin(&self, streams: Option<Vec<String>>) -> Result<Batch> {
        let Some(shared) = &self.shared else {
            return self.local_batch();
        };
        let Db::Write(db) = &self.db else {
            return Err(ErrorKind::ReadOnly(self.path.clone()).into());
        };
        if !shared.writable {
            return Err(ErrorKind::ReadOnly(self.path.clone()).into());
        }
        // The replica's writer first, then the server's locks: a second batch of this process
        // waits holding nothing. While a batch waits for a server lock, this process's
        // snapshots read the replica as it stands (SPEC.md section 17.5).
        let busy = Busy::take(&shared.busy);
        let writing = shared.log.begin(streams.as_deref())?;
        let mut batch = self.local_batch()?;
        let from = batch.len()?;
        // What others appended, read in one snapshot of the server: a record appended after it
        // moves the head, and the commit takes it then.
        let location = shared.log.location();
        file::take_read(&batch.txn, location, |f| shared.log.read(from, f))?;
        batch.capture = Some(rows::Capture::default());
        batch.shared = Some(Sharing {
            writing,
            db: Arc::clone(db),
            base: batch.len()?,
            streams,
            records: Vec::new(),
            meta: Vec::new(),
            location: location.to_string(),
            _busy: busy,
        });
        Ok(batch)
    }

    /// Brings a shared ledger's replica up to the server's log and meta, unless a batch of
    /// this process is open (it brought the replica up to date when it began).
    fn sync(&self) -> Result<()> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        if shared.busy.held() {
            return Ok(());
        }
        let mut open: Option<Batch> = None;
        let from = self.db.begin_read()?.open_table(LOG)?.len()?;
        let location = shared.log.location();
        let mut intake = file::Intake::new();
        // Another thread's batch may have committed between the read of `from` and the write
        // that takes what was read: its records are there already, and when it holds them all
        // its rows are as new as the server's or newer, so they are not taken.
        let mut held = None;
        let meta = shared.log.read(from, &mut |pulled| {
            let batch = self.opened(&mut open)?;
            let held = match held {
                Some(held) => held,
                None => *held.insert(batch.len()?),
            };
            match &pulled {
                Pulled::Record(row) if row.index < held => Ok(()),
                Pulled::Row(_) if !intake.took_records() => Ok(()),
                _ => intake.push(&batch.txn, pulled, location),
            }
        })?;
        if let Some(batch) = open.as_mut() {
            intake.flush(&batch.txn, location)?;
        }
        let kept = synced_meta(&self.db.begin_read()?)?;
        let fresh: Meta = meta
            .into_iter()
            .filter(|(n, v)| {
                SYNCED.contains(&n.as_str()) && !kept.contains(&(n.clone(), v.clone()))
            })
            .collect();
        if !fresh.is_empty() {
            self.opened(&mut open)?.put_meta(&fresh)?;
        }
        match open {
            Some(batch) => batch.commit(),
            None => Ok(()),
        }
    }

    /// The batch in `slot`, begun (on this process's own database) if there is none yet.
    fn opened<'a>(&self, slot: &'a mut Option<Batch>) -> Result<&'a mut Batch> {
        let batch = match slot.take() {
            Some(batch) => batch,
            None => self.local_batch()?,
        };
        Ok(slot.insert(batch))
    }

    /// A batch on this process's own database only: on a shared ledger, one that derives what
    /// the server holds into the replica.
    fn local_batch(&self) -> Result<Batch> {
        Ok(Batch {
            txn: self.db.begin_write(&self.path)?,
            shared: None,
            rules: self.rules,
            legacy: None,
            recall: recall::Pending::default(),
            capture: None,
        })
    }

    /// Opens the ledger in the database at `url`, creating it (deriving by rules version
    /// `rules`) when `writable` and the database holds none.
    fn open_shared(url: &str, writable: bool, rules: u8) -> Result<Ledger> {
        Ledger::open_store(shared::connect(url)?, writable, rules)
    }

    /// Opens the ledger that `log` holds, as [`Ledger::open_shared`] does.
    fn open_store(log: Arc<dyn Store>, writable: bool, rules: u8) -> Result<Ledger> {
        let meta = match log.meta()? {
            Some(meta) => meta,
            None if writable => {
                let id = new_ledger_id(Path::new(log.location()));
                log.create(&vec![
                    ("format".into(), vec![FORMAT_VERSION]),
                    ("rules".into(), vec![rules]),
                    ("ledger_id".into(), id.to_vec()),
                    (
                        LEDGER_ID_CHECK.into(),
                        ledger_id_check(&id, rules).to_vec(),
                    ),
                ])?
            }
            None => {
                return Err(ErrorKind::Remote {
                    url: log.location().to_string(),
                    detail: "the database holds no cairn ledger; ingest into it first, or check the URL's database name".into(),
                }
                .into())
            }
        };
        let get = |name: &str| meta.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let wrong = |detail: String| -> crate::error::Error {
            ErrorKind::Remote {
                url: log.location().to_string(),
                detail,
            }
            .into()
        };
        match get("format").as_deref() {
            Some([FORMAT_VERSION]) => {}
            _ => {
                return Err(wrong(format!(
                    "its ledger is not of record format {FORMAT_VERSION}, which this build reads; open it with the cairn build that wrote it"
                )))
            }
        }
        let rules = match get("rules").as_deref() {
            Some([v]) if (ITEMS_WITHOUT_RECORDS + 1..=DERIVATION).contains(v) => *v,
            _ => {
                return Err(wrong(format!(
                    "its ledger derives by a rules version this build does not know (it knows {}); open it with the cairn build that wrote it",
                    if ITEMS_WITHOUT_RECORDS + 1 == DERIVATION {
                        format!("version {DERIVATION}")
                    } else {
                        format!("versions {} to {DERIVATION}", ITEMS_WITHOUT_RECORDS + 1)
                    }
                )))
            }
        };
        let id = get("ledger_id").unwrap_or_default();
        let check = get(LEDGER_ID_CHECK).unwrap_or_default();
        if id.len() != 16 || ledger_id_check(&id, rules).as_slice() != check.as_slice() {
            return Err(wrong(
                "its ledger id or rules version does not match the check written beside them; restore the database from a backup".into(),
            ));
        }
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| open_error(Path::new(log.location()), e))?;
        let mut ledger = Ledger::start(db, PathBuf::from(log.location()), rules)?;
        // The first sync takes the ledger's id and check from the server.
        ledger.shared = Some(Shared {
            log,
            writable,
            busy: Arc::default(),
        });
        ledger.sync()?;
        Ok(ledger)
    }

    /// Copies every record of `from`, in its log order, with the rows derived from them, into a
    /// new or empty ledger at `to` (a path or a `postgres://` URL), with its ledger id and last
    /// signed checkpoint: `cairn copy`. The source's store is read whole in one snapshot and the
    /// target's written in one transaction, both through the store's seam (SPEC.md section
    /// 17.2): the copy has the same rids, log order, Merkle root and derived rows, and no gate
    /// or judge runs again. Returns the number of records.
    pub fn copy(from: &Ledger, to: impl AsRef<Path>) -> Result<u64> {
        let to = to.as_ref();
        let refuse = |detail: String| -> crate::error::Error {
            ErrorKind::Copy {
                to: to.display().to_string(),
                detail,
            }
            .into()
        };
        if from.rules <= ITEMS_WITHOUT_RECORDS {
            return Err(refuse(format!(
                "the source derives by rules version {}, whose span items were derived without records and cannot be derived again elsewhere; export it and ingest the export into the target instead",
                from.rules
            )));
        }
        if from.recall_version()? != Some(RECALL_VERSION) {
            return Err(refuse(
                "the source's recall index is of an older layout, rebuilt the first time it is opened for writing; open it for writing once (cairn stats with a build that writes), then copy".into(),
            ));
        }
        let (mut records, mut changes) = (Vec::new(), Vec::new());
        let meta = from.with_store(|store| {
            store.read(0, &mut |pulled| {
                match pulled {
                    Pulled::Record(row) => records.push(row),
                    Pulled::Row(change) => changes.push(change),
                }
                Ok(())
            })
        })?;
        // A record the append rule refuses today (a stream name with a control character, in
        // a file written before the rule: SPEC.md 4.2) is named, and nothing is written.
        for row in &records {
            let record = crate::record::decode_trusted(&row.bytes).map_err(|e| {
                refuse(format!("record {} at log index {} cannot be read ({e}); run `cairn verify` on the source", row.rid.short(), row.index))
            })?;
            if let Some(reason) = record.stream_name_violation() {
                return Err(refuse(format!(
                    "record {} ({}) at log index {} cannot move: {reason}. A new ledger holds no such name; export the source (`cairn export`), rename the stream in the export, and ingest it into the target",
                    row.rid.short(),
                    record.kind().name(),
                    row.index
                )));
            }
        }
        let target = match url_of(to) {
            Some(url) => Ledger::open_shared(url, true, from.rules)?,
            None => Ledger::open_with(to, false, from.rules)?,
        };
        let held = target.len()?;
        if held > 0 {
            return Err(refuse(format!(
                "it already holds {held} records, and a copy goes only into a new or empty ledger; give a new path or an empty database"
            )));
        }
        if target.rules != from.rules {
            return Err(refuse(format!(
                "it derives by rules version {} and the source by {}; give a new path or an empty database",
                target.rules, from.rules
            )));
        }
        let carried: Meta = meta
            .into_iter()
            .filter(|(name, _)| SYNCED.contains(&name.as_str()))
            .collect();
        let size = records.len() as u64;
        target.with_store(|store| match store.begin(None)?.publish(0, &records, &changes, &carried)? {
            Published::Done => Ok(size),
            Published::Moved(head) => Err(refuse(format!(
                "another process appended {head} records to it while it was copied into; give a new path or an empty database"
            ))),
        })
    }

    /// Runs `f` on the store that holds the ledger: the server's, or the file's own.
    fn with_store<T>(&self, f: impl FnOnce(&dyn Store) -> Result<T>) -> Result<T> {
        match &self.shared {
            Some(shared) => f(&*shared.log),
            None => f(&file::File {
                db: &self.db,
                location: self.path.display().to_string(),
            }),
        }
    }

    /// The version of the recall index's layout, from the meta.
    fn recall_version(&self) -> Result<Option<u8>> {
        let txn = self.db.begin_read()?;
        let meta = txn.open_table(META)?;
        let found = meta.get(RECALL_META)?;
        Ok(found.and_then(|v| v.value().first().copied()))
    }

    /// A ledger in memory with this one's derivation, and a batch on it that rebuilds this
    /// ledger's tables from its records: `verify`'s rebuild and `as_of`. A span logged before
    /// this ledger had classification records gets the items this ledger derived for it, copied,
    /// since the classifier of that day is no longer in the code.
    fn rebuild(&self) -> Result<(Ledger, Batch)> {
        let blank = Ledger::in_memory_with(self.rules)?;
        let mut batch = blank.batch()?;
        if self.rules <= ITEMS_WITHOUT_RECORDS {
            let snap = self.snapshot()?;
            let below = match snap.txn.raw().open_table(META)?.get(CLASSIFIED_FROM)? {
                Some(g) => {
                    let b: [u8; 8] = g.value().try_into().map_err(|_| ErrorKind::CorruptFile {
                        path: self.path.clone(),
                        detail: format!("its meta entry {CLASSIFIED_FROM} is not 8 bytes"),
                    })?;
                    u64::from_le_bytes(b)
                }
                // Opened read-only and never by a build that writes classification records.
                None => u64::MAX,
            };
            batch.legacy = Some((snap.txn, below));
        }
        Ok((blank, batch))
    }

    /// A record by rid, from the committed state.
    pub fn get(&self, rid: &Rid) -> Result<Option<Record>> {
        self.snapshot()?.get(rid)
    }

    /// The number of records, from the committed state.
    pub fn len(&self) -> Result<u64> {
        self.snapshot()?.len()
    }

    /// Whether the ledger holds no record.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The spans of a stream in turn order, with their rids, from the committed state.
    pub fn spans(&self, stream: &str) -> Result<Vec<(Rid, crate::record::Span)>> {
        let snap = self.snapshot()?;
        let mut out = Vec::new();
        for (_, rid) in snap.turns(stream, 0, u64::MAX)? {
            if let Some(Record::Span(span)) = snap.get(&rid)? {
                out.push((rid, span));
            }
        }
        Ok(out)
    }

    /// The ledger as it was at log size `n` (the `records` count of `stats`): the first `n`
    /// records replayed into a ledger in memory, with every derived table as it stood then.
    pub fn as_of(&self, n: u64) -> Result<Ledger> {
        let snap = self.snapshot()?;
        let size = snap.len()?;
        if n > size {
            return Err(ErrorKind::AsOf { asked: n, size }.into());
        }
        let (past, mut batch) = self.rebuild()?;
        for i in 0..n {
            if let Some((_, record)) = snap.record_at(i)? {
                batch.append_any(record)?;
            }
        }
        batch.commit()?;
        Ok(past)
    }

    /// Runs `cairn verify`'s checks: see [`VerifyReport`].
    pub fn verify(&self) -> Result<VerifyReport> {
        verify::verify(self)
    }
}

impl Snapshot {
    /// Calls `f` on every record in log order, stopping at the first error.
    pub fn for_each(&self, mut f: impl FnMut(u64, Rid, Record) -> Result<()>) -> Result<()> {
        for i in 0..self.len()? {
            if let Some((rid, record)) = self.record_at(i)? {
                f(i, rid, record)?;
            }
        }
        Ok(())
    }
}

/// The [`SYNCED`] meta entries a ledger state holds.
fn synced_meta(txn: &redb::ReadTransaction) -> Result<Meta> {
    let meta = txn.open_table(META)?;
    let mut out = Vec::new();
    for name in SYNCED {
        if let Some(v) = meta.get(name)? {
            out.push((name.to_string(), v.value().to_vec()));
        }
    }
    Ok(out)
}

fn new_ledger_id(path: &Path) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    h.update(&now.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(path.to_string_lossy().as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

pub(crate) fn decode_state(bytes: &[u8]) -> Option<StreamState> {
    let config = bincode::config::standard().with_fixed_int_encoding();
    bincode::decode_from_slice(bytes, config)
        .ok()
        .filter(|(_, n)| *n == bytes.len())
        .map(|(s, _)| s)
}

fn encode_state(state: &StreamState) -> Vec<u8> {
    let config = bincode::config::standard().with_fixed_int_encoding();
    bincode::encode_to_vec(state, config).unwrap_or_default()
}

impl Batch {
    /// The batch's transaction as its derivation writes it: on a shared ledger the derived
    /// rows it writes are kept, to go to the server with the records.
    fn tables(&self) -> rows::Tables<'_> {
        rows::Tables {
            txn: &self.txn,
            capture: self.capture.as_ref(),
        }
    }

    /// Writes the recall postings waiting in memory (section 10b).
    fn flush_recall(&mut self) -> Result<()> {
        let tables = rows::Tables {
            txn: &self.txn,
            capture: self.capture.as_ref(),
        };
        self.recall.flush(tables)
    }

    /// Appends a record. A record already in the ledger is not written again: the result has
    /// `new: false` and the existing rid and index. A record whose links point to missing
    /// records, to the wrong kind or to another stream is refused, and nothing is written.
    ///
    /// ```
    /// use cairn::{Ledger, Read, record::{Span, Role}};
    /// # fn main() -> Result<(), cairn::Error> {
    /// let ledger = Ledger::in_memory()?;
    /// let mut batch = ledger.batch()?;
    /// let span = Span { stream: "s1".into(), turn: 212, role: Role::User, tool: None,
    ///                   text: "we are still on libfoo 2.3.1, do not bump.".into() };
    /// let first = batch.append(span.clone())?;
    /// let again = batch.append(span)?;
    /// assert!(first.new && !again.new && first.rid == again.rid);
    /// batch.commit()?;
    /// // The span, then its classification: a prohibition and a commitment.
    /// assert_eq!(ledger.len()?, 2);
    /// # Ok(()) }
    /// ```
    ///
    /// Summaries and actions enter only through the gates
    /// ([`crate::gate::Gatekeeper::propose_summary`] and `propose_action`), which append them
    /// with their verdict; verdicts and regrounds are written only by the gates and by
    /// re-grounding. Handed any of those four kinds, `append` refuses and writes nothing.
    ///
    /// A new span is classified as it is appended: when the classifier finds anything, its
    /// classification record follows the span in the log (SPEC.md section 8.3).
    pub fn append(&mut self, record: impl Into<Record>) -> Result<Appended> {
        let mut record = record.into();
        let kind = record.kind();
        if matches!(
            kind,
            Kind::Summary
                | Kind::Action
                | Kind::Verdict
                | Kind::Reground
                | Kind::Check
                | Kind::Ruling
                | Kind::Classification
        ) {
            return Err(ErrorKind::Ungated(kind).into());
        }
        if let Some(reason) = record.stream_name_violation() {
            return Err(ErrorKind::Invalid { kind, reason }.into());
        }
        record.canonicalize();
        let appended = self.append_canonical(&record)?;
        if let (true, Record::Span(span)) = (appended.new, &record) {
            if let Some(found) = tables::classification(appended.rid, span) {
                self.append_canonical(&Record::Classification(found))?;
            }
        }
        Ok(appended)
    }

    /// Appends a record of any kind as it is: only the gates, re-grounding, and the replays of
    /// records already judged (verify's rebuild, `as_of`) call it. A span appended this way
    /// is not classified: a replay carries its classification record.
    pub(crate) fn append_any(&mut self, record: Record) -> Result<Appended> {
        let mut record = record;
        record.canonicalize();
        self.append_canonical(&record)
    }

    /// Appends a record already in canonical order.
    fn append_canonical(&mut self, record: &Record) -> Result<Appended> {
        if let Some(reason) = record.canonical_violation() {
            let kind = record.kind();
            return Err(ErrorKind::Invalid { kind, reason }.into());
        }
        let bytes = encode(record);
        if bytes.len() > MAX_RECORD_BYTES {
            return Err(ErrorKind::TooLarge {
                kind: record.kind(),
                size: bytes.len(),
                limit: MAX_RECORD_BYTES,
            }
            .into());
        }
        let links = record.links().len();
        if links > MAX_LINKS {
            return Err(ErrorKind::TooManyLinks {
                kind: record.kind(),
                links,
                limit: MAX_LINKS,
            }
            .into());
        }
        let rid = Rid::of_bytes(&bytes);
        if let Some(index) = self.index_of(&rid)? {
            return Ok(Appended {
                rid,
                index,
                new: false,
            });
        }
        if let Some(Sharing {
            streams: Some(streams),
            ..
        }) = &self.shared
        {
            if let Some(stream) = record.stream() {
                if !streams.iter().any(|s| s == stream) {
                    return Err(ErrorKind::OutsideBatch {
                        stream: stream.to_string(),
                        streams: streams.join(", "),
                    }
                    .into());
                }
            }
        }
        self.check_links(record)?;
        self.check_unique(record)?;
        let index = self.write(record, rid, &bytes)?;
        if let Some(s) = &mut self.shared {
            s.records.push(Row {
                index,
                rid,
                bytes: bytes.clone(),
                kind: record.kind() as u8,
                stream: record.stream().map(str::to_string),
            });
        }
        self.derive(record, rid, index)?;
        self.recall.add(record, index);
        if self.recall.full() {
            self.flush_recall()?;
        }
        Ok(Appended {
            rid,
            index,
            new: true,
        })
    }

    /// Appends canonical record bytes as they are, rejecting bytes that are not canonical.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> Result<Appended> {
        let record = decode(bytes)?;
        self.append(record)
    }

    /// Records the size and root of a checkpoint just signed over this ledger.
    pub(crate) fn record_signed(&mut self, size: u64, root: [u8; 32]) -> Result<()> {
        self.set_meta(&vec![
            ("signed_size".into(), size.to_le_bytes().to_vec()),
            ("signed_root".into(), root.to_vec()),
        ])
    }

    /// Sets meta entries, in the replica and, on a shared ledger, on the server at commit.
    fn set_meta(&mut self, entries: &Meta) -> Result<()> {
        self.put_meta(entries)?;
        if let Some(s) = &mut self.shared {
            s.meta.extend(entries.iter().cloned());
        }
        Ok(())
    }

    /// Writes meta entries into this batch's own database.
    fn put_meta(&mut self, entries: &Meta) -> Result<()> {
        let mut meta = self.txn.open_table(META)?;
        for (name, value) in entries {
            meta.insert(name.as_str(), value.as_slice())?;
        }
        Ok(())
    }

    /// Makes every append of the batch durable at once. On a shared ledger the records go to
    /// the server with their derived rows in one transaction, after any that other processes
    /// appended since the batch began; if the connection is lost, nothing of the batch is in
    /// the ledger, or (when it was lost in the commit itself) the error says it may be, and a
    /// retry writes nothing twice.
    pub fn commit(mut self) -> Result<()> {
        self.flush_recall()?;
        let Some(mut sharing) = self.shared.take() else {
            return Ok(self.txn.commit()?);
        };
        if sharing.records.is_empty() && sharing.meta.is_empty() {
            // Only others' records were taken: the replica keeps them.
            drop(sharing);
            return Ok(self.txn.commit()?);
        }
        let mut changes = self.capture.take().map(|c| c.take()).unwrap_or_default();
        let mut txn = self.txn;
        loop {
            match sharing.writing.publish(
                sharing.base,
                &sharing.records,
                &changes,
                &sharing.meta,
            )? {
                Published::Done => {
                    drop(sharing);
                    return Ok(txn.commit()?);
                }
                Published::Moved(head) => {
                    // Others appended meanwhile: take their records and rows, then derive this
                    // batch's records again after them (the same records, so the same rids and
                    // verdicts).
                    drop(txn);
                    let mut again = Batch {
                        txn: sharing.db.begin_write()?,
                        shared: None,
                        rules: self.rules,
                        legacy: None,
                        recall: recall::Pending::default(),
                        capture: Some(rows::Capture::default()),
                    };
                    let from = again.len()?;
                    let location = sharing.location.clone();
                    let writing = &mut sharing.writing;
                    file::take_read(&again.txn, &location, |f| writing.tail(from, f))?;
                    let base = again.len()?;
                    if base != head {
                        return Err(ErrorKind::Remote {
                            url: location,
                            detail: format!("its log's head is at {head}, and only {base} records could be read; nothing of this batch was written: retry it"),
                        }
                        .into());
                    }
                    // A record another writer appended too is there already: not written twice.
                    let mut placed = Vec::with_capacity(sharing.records.len());
                    for row in std::mem::take(&mut sharing.records) {
                        let done = again.append_any(decode(&row.bytes)?)?;
                        if done.new {
                            placed.push(Row {
                                index: done.index,
                                ..row
                            });
                        }
                    }
                    again.put_meta(&sharing.meta)?;
                    again.flush_recall()?;
                    changes = again.capture.take().map(|c| c.take()).unwrap_or_default();
                    sharing.records = placed;
                    sharing.base = base;
                    txn = again.txn;
                }
            }
        }
    }

    fn check_links(&self, record: &Record) -> Result<()> {
        let kind = record.kind();
        let links = record.links();
        if links.is_empty() {
            return Ok(());
        }
        // Both tables opened once for every link of the record.
        let rids = self.txn.open_table(RIDS)?;
        let records = self.txn.open_table(RECORDS)?;
        for (role, target) in links {
            let link_err = |problem: String| ErrorKind::Link {
                kind,
                role,
                target,
                problem,
            };
            let index = rids.get(&target.0)?.map(|g| g.value());
            let guard = match index {
                Some(i) => records.get(i)?,
                None => None,
            };
            let target_kind = guard
                .as_ref()
                .and_then(|g| g.value().get(1).copied().and_then(Kind::from_byte));
            let Some(target_kind) = target_kind else {
                return Err(link_err(
                    "which is not in the ledger; append the record it names first".into(),
                )
                .into());
            };
            if !role.allowed().contains(&target_kind) {
                let allowed: Vec<&str> = role.allowed().iter().map(|k| k.name()).collect();
                return Err(link_err(format!(
                    "which is a {target_kind}, but `{}` must name a {}",
                    role.field(),
                    allowed.join(" or ")
                ))
                .into());
            }
            if role.same_stream() {
                let target_stream = match &guard {
                    Some(g) => crate::record::decode_trusted(g.value())
                        .map_err(|e| ErrorKind::CorruptRecord {
                            rid: target,
                            index: index.unwrap_or_default(),
                            detail: e.to_string(),
                        })?
                        .stream()
                        .map(str::to_string),
                    None => None,
                };
                let own = record.stream().unwrap_or_default();
                if target_stream.as_deref() != Some(own) {
                    return Err(link_err(format!(
                        "which belongs to stream {}, but `{}` must stay within stream {own}",
                        target_stream.unwrap_or_default(),
                        role.field()
                    ))
                    .into());
                }
            }
        }
        Ok(())
    }

    fn check_unique(&self, record: &Record) -> Result<()> {
        match record {
            Record::Span(s) => {
                if let Some(existing) = self.turn(&s.stream, s.turn)? {
                    return Err(ErrorKind::TurnConflict {
                        stream: s.stream.clone(),
                        turn: s.turn,
                        existing,
                    }
                    .into());
                }
            }
            Record::Verdict(v) => {
                if let Some(existing) = self.verdict_of(&v.subject)? {
                    return Err(ErrorKind::VerdictExists {
                        subject: v.subject,
                        existing,
                    }
                    .into());
                }
            }
            Record::Check(c) => {
                let len = self.len()?;
                if c.at != len {
                    return Err(ErrorKind::Invalid {
                        kind: Kind::Check,
                        reason: format!(
                            "`at` is {}, but a check is appended at the log's end, index {len}",
                            c.at
                        ),
                    }
                    .into());
                }
            }
            Record::Entry(e) => {
                let current = self.entry(&Entry::path(&e.namespace), &e.key)?;
                if e.previous != current {
                    return Err(ErrorKind::Invalid {
                        kind: Kind::Entry,
                        reason: match current {
                            Some(c) => format!("`previous` must name the key's current version, {c}, which another put appended meanwhile; read the entry again and put over it"),
                            None => "`previous` names a version, but the key has none; leave `previous` out for a key's first version".to_string(),
                        },
                    }
                    .into());
                }
            }
            Record::Receipt(r) => {
                if let Some(existing) = self.receipt(&r.stream, &r.key)? {
                    return Err(ErrorKind::ReceiptConflict {
                        stream: r.stream.clone(),
                        key: r.key.clone(),
                        existing,
                    }
                    .into());
                }
            }
            Record::Retirement(r) => {
                let invalid = |reason: String| ErrorKind::Invalid {
                    kind: Kind::Retirement,
                    reason,
                };
                let item = match self.get(&r.pin)? {
                    Some(Record::Pin(p)) => p.items.into_iter().find(|i| i.text == r.item),
                    _ => None,
                };
                let Some(item) = item else {
                    return Err(invalid(format!(
                        "pin {} holds no item {:?}; give the item's text exactly as the pin holds it",
                        r.pin, r.item
                    ))
                    .into());
                };
                let lifting = match self.get(&r.witness)? {
                    Some(Record::Span(s)) if s.role == crate::record::Role::User => s,
                    _ => {
                        return Err(invalid(
                            "`witness` must be the user turn that lifts the constraint; a pinned item is retired only on the user's word".to_string(),
                        )
                        .into())
                    }
                };
                // The turn that imposed the constraint cannot be the one that lifts it.
                let imposed = match item.witness {
                    Some(w) => self.get(&w)?,
                    None => None,
                };
                if let Some(Record::Span(imposed)) = imposed {
                    if lifting.turn <= imposed.turn {
                        return Err(invalid(format!(
                            "`witness` is turn {}, but the item was stated at turn {}; cite a later user turn that lifts it",
                            lifting.turn, imposed.turn
                        ))
                        .into());
                    }
                }
            }
            Record::Classification(f) => {
                // Links are checked first: the span exists. In a rebuild, a span logged before
                // its ledger had classification records has its items copied, and its record
                // replaces them.
                let copied = match &self.legacy {
                    Some((_, below)) => self.index_of(&f.span)?.is_some_and(|i| i < *below),
                    None => false,
                };
                if let (false, Some(Record::Span(s))) = (copied, self.get(&f.span)?) {
                    let table = self.txn.open_table(ITEMS)?;
                    let mut rows = table.range(
                        (s.stream.as_str(), s.turn, 0)..=(s.stream.as_str(), s.turn, u8::MAX),
                    )?;
                    if rows.next().is_some() {
                        return Err(ErrorKind::Invalid {
                            kind: Kind::Classification,
                            reason: format!(
                                "span {} (turn {} of stream {}) already has its items; a span is classified once, when it is appended",
                                f.span, s.turn, s.stream
                            ),
                        }
                        .into());
                    }
                }
            }
            Record::Pin(p) => {
                if let Some(existing) = self.pin(&p.stream, &p.name)? {
                    return Err(ErrorKind::PinConflict {
                        stream: p.stream.clone(),
                        name: p.name.clone(),
                        existing,
                    }
                    .into());
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn write(&mut self, record: &Record, rid: Rid, bytes: &[u8]) -> Result<u64> {
        // Each table is opened once per append: opening is a good part of an append's cost.
        let mut log = self.txn.open_table(LOG)?;
        let index = log.len()?;
        log.insert(index, rid.0)?;
        extend_tree(&log, &mut self.tables().table(MERKLE)?, index, rid)?;
        drop(log);
        self.txn.open_table(RECORDS)?.insert(index, bytes)?;
        self.tables().table(RIDS)?.insert(rid.0, index)?;
        self.tables()
            .table(BY_KIND)?
            .insert((record.kind() as u8, index), rid.0)?;
        let links = record.links();
        if !links.is_empty() {
            let mut table = self.tables().multimap(LINKS)?;
            for (_, target) in links {
                table.insert(target.0, rid.0)?;
            }
        }
        Ok(index)
    }

    fn update_stream(&mut self, stream: &str, f: impl FnOnce(&mut StreamState)) -> Result<()> {
        let mut table = self.tables().table(STREAMS)?;
        let mut state = match table.get(stream)? {
            Some(g) => decode_state(g.value()).ok_or_else(|| ErrorKind::CorruptFile {
                path: "streams table".into(),
                detail: format!("the state of stream {stream} does not decode"),
            })?,
            None => StreamState::default(),
        };
        f(&mut state);
        table.insert(stream, encode_state(&state).as_slice())?;
        Ok(())
    }

    fn set_facts(&mut self, kind: Kind, rid: Rid, facts: Facts) -> Result<()> {
        self.tables()
            .table(FACTS)?
            .insert(rid.0, facts.to_bytes(kind as u8))?;
        match facts.depth {
            Some(d) if facts.anchored => {
                self.tables()
                    .table(DEPTHS)?
                    .insert((kind as u8, d, rid.0), ())?;
            }
            _ => {
                self.tables().table(UNANCHORED)?.insert(rid.0, ())?;
            }
        }
        Ok(())
    }

    /// Derives and stores the facts that gates read as index lookups.
    fn derive(&mut self, record: &Record, rid: Rid, index: u64) -> Result<()> {
        match record {
            Record::Span(s) => self.derive_span(s, rid, index),
            Record::Classification(f) => self.derive_classification(f),
            Record::Claim(c) => self.derive_claim(c, rid),
            Record::Summary(s) => self.derive_summary(s, rid),
            Record::Verdict(v) => {
                self.tables().table(VERDICTS)?.insert(v.subject.0, rid.0)?;
                if let Some(Record::Summary(s)) = self.get(&v.subject)? {
                    self.settle_summary(v, v.subject, &s)?;
                }
                Ok(())
            }
            Record::Reground(g) => self.derive_reground(g, rid),
            Record::Judgement(j) => {
                if j.relation == Relation::Contradicts {
                    self.tables()
                        .multimap(CONTRADICTIONS)?
                        .insert(j.claim.0, j.span.0)?;
                }
                Ok(())
            }
            Record::Pin(p) => {
                self.tables()
                    .table(PINS)?
                    .insert((p.stream.as_str(), p.name.as_str()), rid.0)?;
                Ok(())
            }
            Record::Place(p) => {
                let mut table = self.tables().table(PLACES)?;
                if table.get(&p.span.0)?.is_none() {
                    table.insert(p.span.0, rid.0)?;
                }
                Ok(())
            }
            Record::Action(_) | Record::Check(_) | Record::Ruling(_) | Record::Retirement(_) => {
                Ok(())
            }
            Record::Receipt(r) => {
                self.tables()
                    .table(RECEIPTS)?
                    .insert((r.stream.as_str(), r.key.as_str()), rid.0)?;
                Ok(())
            }
            Record::Entry(e) => {
                self.tables()
                    .table(ENTRIES)?
                    .insert((Entry::path(&e.namespace).as_str(), e.key.as_str()), rid.0)?;
                Ok(())
            }
        }
    }

    /// A span's turn and its stream's count; in a rebuild of an old ledger, the items that
    /// ledger derived for a span logged before it had classification records.
    fn derive_span(&mut self, s: &Span, rid: Rid, index: u64) -> Result<()> {
        self.tables()
            .table(TURNS)?
            .insert((s.stream.as_str(), s.turn), rid.0)?;
        if let Some((source, below)) = &self.legacy {
            if index < *below {
                let from = source.raw().open_table(ITEMS)?;
                let mut to = self.tables().table(ITEMS)?;
                let key = |k| (s.stream.as_str(), s.turn, k);
                for row in from.range(key(0)..=key(u8::MAX))? {
                    let (k, v) = row?;
                    // A row that names another span is not this span's: verify reports it.
                    if v.value().get(1..33) == Some(rid.0.as_slice()) {
                        to.insert(k.value(), v.value())?;
                    }
                }
            }
        }
        self.update_stream(&s.stream, |st| st.spans += 1)
    }

    /// A classification record's items, as the span's rows of the items table.
    fn derive_classification(&mut self, f: &crate::record::Classification) -> Result<()> {
        let Some(Record::Span(s)) = self.get(&f.span)? else {
            return Ok(());
        };
        let mut table = self.tables().table(ITEMS)?;
        if self.legacy.is_some() {
            // Copied rows give way to the record's: a row it does not hold is not kept.
            let key = |k| (s.stream.as_str(), s.turn, k);
            table.clear(key(0), key(u8::MAX))?;
        }
        for (k, found) in f.items.iter().enumerate() {
            let item = Item {
                span: f.span,
                turn: s.turn,
                class: found.class,
                text: found.text.clone(),
            };
            table.insert(
                (s.stream.as_str(), s.turn, k as u8),
                item.to_bytes().as_slice(),
            )?;
        }
        Ok(())
    }

    /// A claim's anchored bit and depth, from its witnesses' facts: a witness with facts is a
    /// claim, one without is a span (links are checked: a claim's witnesses are spans or
    /// claims).
    fn derive_claim(&mut self, c: &Claim, rid: Rid) -> Result<()> {
        let mut depth: Option<u32> = None;
        let table = self.txn.open_table(FACTS)?;
        for w in &c.witnesses {
            let d = match table.get(&w.0)? {
                Some(g) => Facts::from_bytes(g.value()).depth.map(|d| d + 1),
                None => Some(0),
            };
            depth = match (depth, d) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        drop(table);
        let facts = Facts {
            anchored: depth.is_some(),
            depth,
        };
        self.set_facts(Kind::Claim, rid, facts)
    }

    /// A summary's depth of self-authored summaries and its boundary number.
    fn derive_summary(&mut self, s: &Summary, rid: Rid) -> Result<()> {
        let first = if self.rules >= 2 { 0 } else { 1 };
        let depth = match (s.author, s.parent) {
            (Author::Separate, _) => 0,
            _ if s.reground && self.grounded(s)? => 0,
            // A repair carries the proposal's self-authored claims: it counts as self.
            (_, None) => first,
            (_, Some(p)) => self.facts(&p)?.and_then(|f| f.depth).unwrap_or(0) + 1,
        };
        let facts = Facts {
            anchored: true,
            depth: Some(depth),
        };
        self.set_facts(Kind::Summary, rid, facts)?;
        let ordinal = self.stream(&s.stream)?.proposals + 1;
        self.tables().table(ORDINALS)?.insert(rid.0, ordinal)?;
        self.update_stream(&s.stream, |st| st.proposals = ordinal)
    }

    /// A re-grounded claim: verified, with depth 0.
    fn derive_reground(&mut self, g: &Reground, rid: Rid) -> Result<()> {
        self.tables().table(REGROUNDED)?.insert(g.claim.0, rid.0)?;
        self.tables()
            .table(STATUS)?
            .insert(g.claim.0, Status::Verified as u8)?;
        if let Some(old) = self.facts(&g.claim)? {
            let mut depths = self.tables().table(DEPTHS)?;
            if let Some(d) = old.depth {
                depths.remove((Kind::Claim as u8, d, g.claim.0))?;
            }
            drop(depths);
            self.tables().table(UNANCHORED)?.remove(g.claim.0)?;
            let fresh = Facts {
                anchored: true,
                depth: Some(0),
            };
            self.set_facts(Kind::Claim, g.claim, fresh)?;
        }
        Ok(())
    }

    /// Whether every claim of a summary rests on a span it covers or was re-grounded: such a
    /// summary, when it asks for re-grounding, restarts the count of self-authored summaries.
    fn grounded(&self, s: &Summary) -> Result<bool> {
        for c in &s.claims {
            if self.regrounded(c)?.is_some() {
                continue;
            }
            match self.get(c)? {
                Some(Record::Claim(claim))
                    if claim.witnesses.iter().any(|w| s.covers.contains(w)) => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Applies a summary's verdict: an admitted summary becomes the stream's head, its
    /// evictions apply and its claims take the statuses the gates found; a refused one only
    /// counts as refused.
    fn settle_summary(&mut self, v: &Verdict, rid: Rid, s: &Summary) -> Result<()> {
        if !v.admitted {
            return self.update_stream(&s.stream, |st| st.refused += 1);
        }
        let mut newly_evicted = 0;
        {
            let mut ev = self.tables().table(EVICTIONS)?;
            for span in &s.evicts {
                if ev.get(&span.0)?.is_none() {
                    ev.insert(span.0, rid.0)?;
                    newly_evicted += 1;
                }
            }
        }
        {
            let mut status = self.tables().table(STATUS)?;
            for c in &v.claims {
                status.insert(c.claim.0, c.status as u8)?;
            }
        }
        self.update_stream(&s.stream, |st| {
            st.head = Some(rid);
            st.evicted += newly_evicted;
            st.summaries += 1;
        })
    }
}

/// The meta entry that holds a check of the ledger id, so that `verify` sees it altered.
pub(crate) const LEDGER_ID_CHECK: &str = "ledger_id_check";

/// The check of a ledger's id and rules version, both fixed at creation: the first 16 bytes
/// of BLAKE3("cairn-ledger-id\0" || id || rules).
pub(crate) fn ledger_id_check(id: &[u8], rules: u8) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    h.update(b"cairn-ledger-id\0");
    h.update(id);
    h.update(&[rules]);
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// The meta entry that says a ledger has the recall index, and its version.
pub(crate) const RECALL_META: &str = "recall";
/// The version of the recall index's terms and weights (`text::terms`).
pub(crate) const RECALL_VERSION: u8 = 2;

/// Stores the hash of every perfect subtree that leaf `index` (just written to `log`)
/// completes, reading the left siblings from the open log and Merkle tables.
fn extend_tree(
    log: &redb::Table<'_, u64, [u8; 32]>,
    merkle: &mut rows::Table<'_, (u8, u64), [u8; 32]>,
    index: u64,
    rid: Rid,
) -> Result<()> {
    let (mut h, mut i, mut level) = (rid.0, index, 0u8);
    while i & 1 == 1 {
        let left = if level == 0 {
            log.get(i - 1)?.map(|g| g.value())
        } else {
            merkle.get((level, i - 1))?.map(|g| g.value())
        };
        let left = left.ok_or_else(|| ErrorKind::CorruptFile {
            path: "merkle table".into(),
            detail: format!(
                "the subtree hash at level {level}, index {} is missing",
                i - 1
            ),
        })?;
        h = Scheme::Blake3.node(&left, &h);
        i >>= 1;
        level += 1;
        merkle.insert((level, i), h)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::*;

    /// Issue 37, row 14: a file written before stream names were checked may hold a control
    /// character in one. It still opens and reads; `cairn copy` names the record that cannot
    /// move and writes nothing. The near miss: the same ledger without it copies.
    #[test]
    fn a_copy_names_the_record_whose_stream_name_cannot_move() {
        let dir = tempfile::tempdir().unwrap();
        let span = |stream: &str| {
            Record::Span(crate::record::Span {
                stream: stream.into(),
                turn: 0,
                role: crate::record::Role::User,
                tool: None,
                text: "hello".into(),
            })
        };
        let old = Ledger::open(dir.path().join("old.redb")).unwrap();
        let mut b = old.batch().unwrap();
        b.append(span("fine")).unwrap();
        // As a build before the rule wrote it: past `append`'s check.
        let bad = b.append_canonical(&span("a\u{0}b")).unwrap();
        b.commit().unwrap();
        assert_eq!(old.len().unwrap(), 2, "the span and the old span");
        let to = dir.path().join("copy.redb");
        let e = Ledger::copy(&old, &to).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "record {} (span) at log index {} cannot move",
                bad.rid.short(),
                bad.index
            )) && e.contains("U+0000"),
            "{e}"
        );
        assert!(!to.exists(), "nothing is written");
        // The near miss.
        let clean = Ledger::open(dir.path().join("clean.redb")).unwrap();
        let mut b = clean.batch().unwrap();
        b.append(span("fine")).unwrap();
        b.commit().unwrap();
        let moved = Ledger::copy(&clean, dir.path().join("copy2.redb")).unwrap();
        assert_eq!(moved, clean.len().unwrap());
    }
}
