//! A redb database as a [`Store`]: a ledger file, or a replica in memory (SPEC.md section 17.2).
//!
//! A ledger file's own batches derive straight into its tables, in the transaction that logs
//! their records, so they do not go through this; `cairn copy` does, on either side, and a
//! shared ledger's replica takes the server's records and rows by the same [`take`].

use super::rows::{self, Change};
use super::shared::{Meta, Published, Pulled, Row, Store, Writing};
use super::tables::{LOG, META, RECORDS};
use super::Db;
use crate::error::{ErrorKind, Result};
use crate::record::{decode, Rid};
use redb::{
    Database, ReadTransaction, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    WriteTransaction,
};
use std::sync::Arc;

/// A redb database holding a ledger, as a store.
pub(super) struct File<'a> {
    /// The database.
    pub db: &'a Db,
    /// Its path, for messages.
    pub location: String,
}

impl Store for File<'_> {
    fn location(&self) -> &str {
        &self.location
    }

    fn meta(&self) -> Result<Option<Meta>> {
        let meta = all_meta(&self.db.begin_read()?)?;
        Ok((!meta.is_empty()).then_some(meta))
    }

    fn create(&self, meta: &Meta) -> Result<Meta> {
        if let Some(there) = self.meta()? {
            return Ok(there);
        }
        let Db::Write(db) = self.db else {
            return Err(ErrorKind::ReadOnly(self.location.clone().into()).into());
        };
        let txn = db.begin_write()?;
        {
            let mut table = txn.open_table(META)?;
            for (name, value) in meta {
                table.insert(name.as_str(), value.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(meta.clone())
    }

    fn read(&self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<Meta> {
        read(&self.db.begin_read()?, from, &self.location, f)
    }

    fn begin(&self, _streams: Option<&[String]>) -> Result<Box<dyn Writing>> {
        // One writer at a time, whatever the streams: redb's own write lock.
        let Db::Write(db) = self.db else {
            return Err(ErrorKind::ReadOnly(self.location.clone().into()).into());
        };
        Ok(Box::new(FileWriting {
            txn: Some(db.begin_write()?),
            db: Arc::clone(db),
            location: self.location.clone(),
        }))
    }
}

/// Every meta entry of a redb ledger.
fn all_meta(txn: &ReadTransaction) -> Result<Meta> {
    let mut out = Vec::new();
    for entry in txn.open_table(META)?.iter()? {
        let (name, value) = entry?;
        out.push((name.value().to_string(), value.value().to_vec()));
    }
    Ok(out)
}

/// Reads the records from `from` on and then the derived rows, as [`Store::read`] says. A redb
/// database does not note which records set a row, so it reads derived rows only whole, from
/// index 0: a later start is refused.
fn read(
    txn: &ReadTransaction,
    from: u64,
    location: &str,
    f: &mut dyn FnMut(Pulled) -> Result<()>,
) -> Result<Meta> {
    let log = txn.open_table(LOG)?;
    let records = txn.open_table(RECORDS)?;
    let size = log.len()?;
    if from > 0 && from < size {
        return Err(ErrorKind::CorruptFile {
            path: location.into(),
            detail: format!("a read of its derived rows from log index {from} was asked for, and a redb ledger gives them only whole, from index 0; read it from the start"),
        }
        .into());
    }
    for index in from..size {
        let rid = Rid(log
            .get(index)?
            .ok_or_else(|| missing_at(location, index))?
            .value());
        let bytes = records
            .get(index)?
            .ok_or_else(|| missing_at(location, index))?
            .value()
            .to_vec();
        let record = decode(&bytes).map_err(|e| ErrorKind::CorruptRecord {
            rid,
            index,
            detail: format!("its stored bytes do not decode ({e})"),
        })?;
        f(Pulled::Record(Row {
            index,
            rid,
            kind: record.kind() as u8,
            stream: record.stream().map(str::to_string),
            bytes,
        }))?;
    }
    if from == 0 {
        rows::each(txn, &mut |change| f(Pulled::Row(change)))?;
    }
    all_meta(txn)
}

fn missing_at(location: &str, index: u64) -> ErrorKind {
    ErrorKind::CorruptFile {
        path: location.into(),
        detail: format!("its log has no record at index {index}; run cairn verify"),
    }
}

/// A write on a redb store: its write transaction, which is the store's one writer.
struct FileWriting {
    txn: Option<WriteTransaction>,
    db: Arc<Database>,
    location: String,
}

impl Writing for FileWriting {
    fn tail(&mut self, from: u64, f: &mut dyn FnMut(Pulled) -> Result<()>) -> Result<()> {
        // While this write is open nothing else commits: the last commit is the head.
        read(&self.db.begin_read()?, from, &self.location, f).map(drop)
    }

    fn publish(
        &mut self,
        base: u64,
        records: &[Row],
        rows: &[Change],
        meta: &Meta,
    ) -> Result<Published> {
        let Some(txn) = self.txn.take() else {
            return Err(ErrorKind::CorruptFile {
                path: self.location.clone().into(),
                detail: "a write was published twice".into(),
            }
            .into());
        };
        let head = txn.open_table(LOG)?.len()?;
        if head != base {
            self.txn = Some(txn);
            return Ok(Published::Moved(head));
        }
        take(&txn, records, &self.location)?;
        rows::apply(&txn, rows, &self.location)?;
        {
            let mut table = txn.open_table(META)?;
            for (name, value) in meta {
                table.insert(name.as_str(), value.as_slice())?;
            }
        }
        txn.commit()?;
        Ok(Published::Done)
    }
}

/// Logs records read from another store at the end of `txn`'s log, checking that each lands at
/// its index and that its bytes hash to its rid. Their derived rows come beside them.
pub(super) fn take(txn: &WriteTransaction, records: &[Row], source: &str) -> Result<()> {
    let mut log = txn.open_table(LOG)?;
    let mut bytes = txn.open_table(RECORDS)?;
    for row in records {
        let at = log.len()?;
        if at != row.index || Rid::of_bytes(&row.bytes) != row.rid {
            return Err(ErrorKind::CorruptRecord {
                rid: row.rid,
                index: row.index,
                detail: format!(
                    "in {source} it {}",
                    if at != row.index {
                        format!("would land at log index {at}")
                    } else {
                        "has bytes that do not hash to its rid".to_string()
                    }
                ),
            }
            .into());
        }
        log.insert(row.index, row.rid.0)?;
        bytes.insert(row.index, row.bytes.as_slice())?;
    }
    Ok(())
}

/// Takes into `txn` everything `read` gives (a [`Store::read`] or a [`Writing::tail`]),
/// through an [`Intake`].
pub(super) fn take_read<T>(
    txn: &WriteTransaction,
    source: &str,
    read: impl FnOnce(&mut dyn FnMut(Pulled) -> Result<()>) -> Result<T>,
) -> Result<T> {
    let mut intake = Intake::new();
    let out = read(&mut |pulled| intake.push(txn, pulled, source))?;
    intake.flush(txn, source)?;
    Ok(out)
}

/// What a read of another store brings into a write transaction, taken in chunks: records are
/// logged ([`take`]) and rows written ([`rows::apply`]) a few thousand at a time, each table
/// opened once per chunk.
pub(super) struct Intake {
    records: Vec<Row>,
    rows: Vec<Change>,
    /// Whether any record was logged.
    logged: bool,
}

impl Intake {
    const CHUNK: usize = 4096;
    /// Rows per chunk: more, as each chunk is sorted in its tables' key orders.
    const ROWS: usize = 65_536;

    pub fn new() -> Intake {
        Intake {
            records: Vec::new(),
            rows: Vec::new(),
            logged: false,
        }
    }

    /// Whether any record was taken, logged or waiting.
    pub fn took_records(&self) -> bool {
        self.logged || !self.records.is_empty()
    }

    /// Takes one thing read.
    pub fn push(&mut self, txn: &WriteTransaction, pulled: Pulled, source: &str) -> Result<()> {
        match pulled {
            Pulled::Record(row) => {
                self.records.push(row);
                if self.records.len() >= Self::CHUNK {
                    self.flush(txn, source)?;
                }
            }
            Pulled::Row(change) => {
                self.rows.push(change);
                if self.rows.len() >= Self::ROWS {
                    self.flush(txn, source)?;
                }
            }
        }
        Ok(())
    }

    /// Writes what is waiting: the records first, as they come first.
    pub fn flush(&mut self, txn: &WriteTransaction, source: &str) -> Result<()> {
        if !self.records.is_empty() {
            take(txn, &self.records, source)?;
            self.records.clear();
            self.logged = true;
        }
        rows::apply(txn, &self.rows, source)?;
        self.rows.clear();
        Ok(())
    }
}
