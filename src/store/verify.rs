//! `cairn verify`: recompute every rid, re-check every link, rebuild every derived table from
//! the log and compare.

use super::tables::*;
use super::{Ledger, Read, Snapshot};
use crate::error::Result;
use crate::record::{decode, Record, Rid};
use redb::{
    Key, MultimapTableDefinition, ReadTransaction, ReadableMultimapTable, ReadableTable,
    ReadableTableMetadata, TableDefinition, TableHandle, Value,
};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// One thing `verify` found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discrepancy {
    /// The record concerned, where one can be named.
    pub rid: Option<Rid>,
    /// The table where it was found.
    pub table: &'static str,
    /// What is wrong.
    pub detail: String,
}

impl std::fmt::Display for Discrepancy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.rid {
            Some(rid) => write!(f, "{rid}: {} ({} table)", self.detail, self.table),
            None => write!(f, "{} ({} table)", self.detail, self.table),
        }
    }
}

/// What `verify` checked and found.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Records in the log.
    pub records: u64,
    /// Derived tables rebuilt from the log and compared (0 when record errors stopped the
    /// rebuild).
    pub tables_compared: usize,
    /// Everything found wrong. Empty means the ledger is intact.
    pub discrepancies: Vec<Discrepancy>,
}

impl VerifyReport {
    /// Whether nothing was found wrong.
    pub fn ok(&self) -> bool {
        self.discrepancies.is_empty()
    }

    /// The report as `cairn verify --json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        let found: Vec<_> = (self.discrepancies.iter())
            .map(|d| serde_json::json!({"rid": d.rid.map(|r| r.to_hex()), "table": d.table, "detail": d.detail}))
            .collect();
        serde_json::json!({"ok": self.ok(), "records": self.records, "tables_compared": self.tables_compared, "discrepancies": found})
    }

    fn add(&mut self, rid: Option<Rid>, table: &'static str, detail: impl Into<String>) {
        self.discrepancies.push(Discrepancy {
            rid,
            table,
            detail: detail.into(),
        });
    }
}

pub(super) fn verify(ledger: &Ledger) -> Result<VerifyReport> {
    if let Some(shared) = &ledger.shared {
        // The server's rows, not this process's replica: a replica filled anew from them.
        let fresh = Ledger::open_store(std::sync::Arc::clone(&shared.log), false, ledger.rules)?;
        return verify_here(&fresh);
    }
    verify_here(ledger)
}

/// Verifies the ledger in the database this process reads: the file, or a replica.
fn verify_here(ledger: &Ledger) -> Result<VerifyReport> {
    let snap = ledger.snapshot()?;
    let mut report = VerifyReport {
        records: snap.len()?,
        ..VerifyReport::default()
    };
    let records = checked_records(&snap, &mut report)?;
    if !report.ok() {
        // Rebuilding from damaged records would only echo the damage found above.
        return Ok(report);
    }
    let (rebuilt, mut batch) = ledger.rebuild()?;
    for (index, (rid, record)) in records.into_iter().enumerate() {
        match batch.append_any(record) {
            Ok(a) if a.new && a.index == index as u64 => {}
            Ok(a) => report.add(
                Some(rid),
                "log",
                format!(
                    "log index {index} repeats the record first logged at index {}",
                    a.index
                ),
            ),
            Err(e) => report.add(Some(rid), "records", format!("its links do not hold: {e}")),
        }
    }
    batch.commit()?;
    compare_tables(&mut report, snap.txn.raw(), &rebuilt.db.begin_read()?)?;
    Ok(report)
}

/// Every logged record whose stored bytes hash to its rid and decode; each that does not is
/// reported.
fn checked_records(snap: &Snapshot, report: &mut VerifyReport) -> Result<Vec<(Rid, Record)>> {
    let mut records = Vec::new();
    for index in 0..report.records {
        let Some(rid) = snap.rid_at(index)? else {
            report.add(
                None,
                "log",
                format!("the log has no entry at index {index}"),
            );
            continue;
        };
        let Some(bytes) = snap.bytes_at(index)? else {
            report.add(
                Some(rid),
                "records",
                format!("no bytes are stored for log index {index}"),
            );
            continue;
        };
        let actual = Rid::of_bytes(&bytes);
        if actual != rid {
            report.add(
                Some(rid),
                "records",
                format!("the stored bytes at log index {index} hash to {actual}, not to the rid in the log"),
            );
            continue;
        }
        match decode(&bytes) {
            Ok(record) => records.push((rid, record)),
            Err(e) => report.add(
                Some(rid),
                "records",
                format!("the stored bytes do not decode: {e}"),
            ),
        }
    }
    Ok(records)
}

/// Compares every table of the ledger with the same table rebuilt from its records.
fn compare_tables(
    out: &mut VerifyReport,
    tx: &ReadTransaction,
    fresh: &ReadTransaction,
) -> Result<()> {
    compare(out, tx, fresh, "records", RECORDS)?;
    compare(out, tx, fresh, "log", LOG)?;
    compare(out, tx, fresh, "rids", RIDS)?;
    compare_multimap(out, tx, fresh, "links", LINKS)?;
    compare(out, tx, fresh, "turns", TURNS)?;
    compare(out, tx, fresh, "pins", PINS)?;
    compare(out, tx, fresh, "streams", STREAMS)?;
    compare(out, tx, fresh, "facts", FACTS)?;
    compare(out, tx, fresh, "unanchored", UNANCHORED)?;
    compare(out, tx, fresh, "depths", DEPTHS)?;
    compare(out, tx, fresh, "evictions", EVICTIONS)?;
    compare(out, tx, fresh, "verdicts", VERDICTS)?;
    compare(out, tx, fresh, "by_kind", BY_KIND)?;
    compare(out, tx, fresh, "merkle", MERKLE)?;
    compare(out, tx, fresh, "ordinals", ORDINALS)?;
    compare(out, tx, fresh, "items", ITEMS)?;
    compare(out, tx, fresh, "status", STATUS)?;
    compare(out, tx, fresh, "regrounded", REGROUNDED)?;
    compare_multimap(out, tx, fresh, "contradictions", CONTRADICTIONS)?;
    // Tables added after the first ledgers: a ledger written before one of them, opened
    // read-only, has none of it.
    compare_added(out, tx, fresh, "receipts", RECEIPTS)?;
    compare_added(out, tx, fresh, "places", PLACES)?;
    compare_added(out, tx, fresh, "entries", ENTRIES)?;
    check_ledger_id(out, tx)?;
    out.tables_compared = 22;
    // A ledger written before the recall index, and not opened for writing since, has none:
    // there is nothing to compare (its first open for writing builds it, section 10b).
    // Likewise one whose index is of an older layout (section 10b): it is rebuilt at the
    // ledger's first open for writing, and not read before.
    let version = tx
        .open_table(META)?
        .get(super::RECALL_META)?
        .map(|v| v.value().to_vec());
    if version.as_deref() == Some(&[super::RECALL_VERSION]) {
        compare_postings(
            out,
            tx,
            fresh,
            "recall",
            RECALL,
            |k| k.2,
            |k, i| (k.0, k.1, i),
        )?;
        compare_postings(
            out,
            tx,
            fresh,
            "recall_streams",
            RECALL_STREAMS,
            |k| k.3,
            |k, i| (k.0, k.1, k.2, i),
        )?;
        compare(out, tx, fresh, "terms", TERMS)?;
        compare(out, tx, fresh, "recall_stream_ids", RECALL_STREAM_IDS)?;
        out.tables_compared = 26;
    }
    Ok(())
}

/// The rid a table entry is about: a 32-byte key, a key ending in a rid, or a 32-byte value.
fn entry_rid(key: &[u8], value: &[u8]) -> Option<Rid> {
    let tail =
        |b: &[u8]| -> Option<Rid> { b.get(b.len().checked_sub(32)?..)?.try_into().ok().map(Rid) };
    match (key.len(), value.len()) {
        (32, _) => tail(key),
        (37, _) => tail(key),
        (9, 32) => tail(value),
        (_, 32) => tail(value),
        _ => None,
    }
}

/// The ledger's id must be there, 16 bytes, and match the check written beside it (ledgers
/// created before the check have none: their id is only checked for its length).
fn check_ledger_id(out: &mut VerifyReport, tx: &ReadTransaction) -> Result<()> {
    let meta = tx.open_table(META)?;
    let id = meta.get("ledger_id")?.map(|g| g.value().to_vec());
    let check = meta
        .get(super::LEDGER_ID_CHECK)?
        .map(|g| g.value().to_vec());
    let rules = meta
        .get("rules")?
        .and_then(|g| g.value().first().copied())
        .unwrap_or(0);
    let problem = match (&id, &check) {
        (None, _) => Some("the meta table has no ledger id".to_string()),
        (Some(id), _) if id.len() != 16 => {
            Some(format!("the ledger id is {} bytes long, not 16", id.len()))
        }
        (Some(id), Some(check))
            if super::ledger_id_check(id, rules).as_slice() != check.as_slice() =>
        {
            Some(
                "the ledger id or rules version does not match their check: one was altered"
                    .to_string(),
            )
        }
        _ => None,
    };
    if let Some(detail) = problem {
        out.discrepancies.push(Discrepancy {
            rid: None,
            table: "meta",
            detail,
        });
    }
    Ok(())
}

fn describe<K: Key + 'static>(key: &[u8]) -> String {
    if key.len() == 32 {
        return Rid(key.try_into().unwrap_or([0; 32])).to_hex();
    }
    format!("{:?}", K::from_bytes(key))
}

type Entry = (Vec<u8>, Vec<u8>);

fn entries<K: Key + 'static, V: Value + 'static>(
    tx: &ReadTransaction,
    def: TableDefinition<'static, K, V>,
) -> Result<Vec<Entry>> {
    let table = tx.open_table(def)?;
    // The entry count is read from the file, which may be damaged: it is not trusted as a
    // capacity (a flipped bit would ask for terabytes), only as a hint up to a bound.
    let hint = usize::try_from(table.len()?).unwrap_or(0).min(1 << 16);
    let mut out = Vec::with_capacity(hint);
    for e in table.iter()? {
        let (k, v) = e?;
        out.push((
            K::as_bytes(&k.value()).as_ref().to_vec(),
            V::as_bytes(&v.value()).as_ref().to_vec(),
        ));
    }
    Ok(out)
}

fn compare<K: Key + 'static, V: Value + 'static>(
    report: &mut VerifyReport,
    stored: &ReadTransaction,
    rebuilt: &ReadTransaction,
    name: &'static str,
    def: TableDefinition<'static, K, V>,
) -> Result<()> {
    let a = entries(stored, def)?;
    let b = entries(rebuilt, def)?;
    // The count redb keeps beside a table is read by the commands (the log's length is how
    // many records there are): it must be the number of entries.
    let counted = stored.open_table(def)?.len()?;
    if counted != a.len() as u64 {
        report.discrepancies.push(Discrepancy {
            rid: None,
            table: name,
            detail: format!(
                "the table's stored length is {counted}, but it holds {} entries",
                a.len()
            ),
        });
    }
    merge(report, name, &a, &b, |x, y| K::compare(x, y), describe::<K>);
    Ok(())
}

/// Compares a table of blocks of postings by their postings: a ledger written in many commits
/// cuts its postings into blocks where its commits fell, and the rebuild in one batch cuts
/// them elsewhere; what must agree is each posting (its key, log index and weight). A block
/// that does not decode is a discrepancy. `first` reads a block key's first log index, `at`
/// makes the key of its posting at a log index.
fn compare_postings<K>(
    report: &mut VerifyReport,
    stored: &ReadTransaction,
    rebuilt: &ReadTransaction,
    name: &'static str,
    def: TableDefinition<'static, K, &'static [u8]>,
    first: fn(&K) -> u64,
    at: fn(&K, u64) -> K,
) -> Result<()>
where
    K: Key + 'static + for<'a> Value<SelfType<'a> = K>,
{
    let expand = |tx: &ReadTransaction, report: &mut VerifyReport| -> Result<Vec<Entry>> {
        let table = tx.open_table(def)?;
        let mut out = Vec::new();
        for e in table.iter()? {
            let (k, v) = e?;
            let k = k.value();
            match super::recall::Block::decode(first(&k), v.value()) {
                Ok(postings) => out.extend(postings.into_iter().map(|(i, w)| {
                    let key = K::as_bytes(&at(&k, i)).as_ref().to_vec();
                    (key, w.to_le_bytes().to_vec())
                })),
                Err(e) => report.add(None, name, e.to_string()),
            }
        }
        out.sort_by(|a, b| K::compare(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
        Ok(out)
    };
    let a = expand(stored, report)?;
    let b = expand(rebuilt, report)?;
    merge(report, name, &a, &b, |x, y| K::compare(x, y), describe::<K>);
    Ok(())
}

/// Compares a table added after the first ledgers: a ledger written before it, opened
/// read-only, has no such table and holds nothing of it, which the rebuilt table must agree
/// with.
fn compare_added<K: Key + 'static, V: Value + 'static>(
    report: &mut VerifyReport,
    stored: &ReadTransaction,
    rebuilt: &ReadTransaction,
    name: &'static str,
    def: TableDefinition<'static, K, V>,
) -> Result<()> {
    if stored.list_tables()?.any(|t| t.name() == name) {
        return compare(report, stored, rebuilt, name, def);
    }
    let fresh = entries(rebuilt, def)?;
    merge(report, name, &[], &fresh, |x, y| x.cmp(y), describe::<K>);
    Ok(())
}

fn merge(
    report: &mut VerifyReport,
    name: &'static str,
    stored: &[Entry],
    rebuilt: &[Entry],
    cmp: impl Fn(&[u8], &[u8]) -> Ordering,
    describe: impl Fn(&[u8]) -> String,
) {
    let (mut i, mut j) = (0, 0);
    while i < stored.len() || j < rebuilt.len() {
        let order = match (stored.get(i), rebuilt.get(j)) {
            (Some(a), Some(b)) => cmp(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Less => {
                let (k, v) = &stored[i];
                let detail = format!(
                    "entry {} is stored but the log does not produce it",
                    describe(k)
                );
                report.add(entry_rid(k, v), name, detail);
                i += 1;
            }
            Ordering::Greater => {
                let (k, v) = &rebuilt[j];
                let detail = format!(
                    "entry {} is missing or differs from what the log produces",
                    describe(k)
                );
                report.add(entry_rid(k, v), name, detail);
                j += 1;
            }
        }
    }
}

fn compare_multimap<K: Key + 'static, V: Key + 'static>(
    report: &mut VerifyReport,
    stored: &ReadTransaction,
    rebuilt: &ReadTransaction,
    name: &'static str,
    def: MultimapTableDefinition<'static, K, V>,
) -> Result<()> {
    let collect = |tx: &ReadTransaction| -> Result<Vec<Entry>> {
        let table = tx.open_multimap_table(def)?;
        let mut set = BTreeSet::new();
        for e in table.iter()? {
            let (k, values) = e?;
            let kb = K::as_bytes(&k.value()).as_ref().to_vec();
            for v in values {
                set.insert((kb.clone(), V::as_bytes(&v?.value()).as_ref().to_vec()));
            }
        }
        Ok(set.into_iter().collect())
    };
    let a = collect(stored)?;
    let b = collect(rebuilt)?;
    merge(report, name, &a, &b, |x, y| x.cmp(y), describe::<K>);
    Ok(())
}
