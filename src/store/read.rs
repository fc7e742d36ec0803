//! Reads that work the same inside a read snapshot and inside a write batch.

use super::recall::Block;
use super::tables::*;
use crate::error::{ErrorKind, RefError, Result};
use crate::record::{decode, Kind, Record, Rid};
use redb::{
    Key, MultimapTableDefinition, MultimapTableHandle, ReadOnlyMultimapTable, ReadOnlyTable,
    ReadTransaction, ReadableMultimapTable, ReadableTable, ReadableTableMetadata, TableDefinition,
    TableHandle, Value, WriteTransaction,
};
use std::any::Any;
use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// A transaction that tables can be read through: a snapshot's [`SnapshotTx`] or a batch's
/// [`WriteTransaction`]. Implemented for those two only; private to the store.
pub trait Tx {
    /// The table handle it gives.
    type T<'a, K: Key + 'static, V: Value + 'static>: Deref<Target: ReadableTable<K, V>>
    where
        Self: 'a;
    /// The multimap table handle it gives.
    type M<'a, K: Key + 'static, V: Key + 'static>: Deref<Target: ReadableMultimapTable<K, V>>
    where
        Self: 'a;
    /// Opens a table for reading.
    fn table<'a, K: Key + Send + Sync + 'static, V: Value + Send + Sync + 'static>(
        &'a self,
        def: TableDefinition<'static, K, V>,
    ) -> Result<Self::T<'a, K, V>>;
    /// Opens a multimap table for reading.
    fn multimap<'a, K: Key + Send + Sync + 'static, V: Key + Send + Sync + 'static>(
        &'a self,
        def: MultimapTableDefinition<'static, K, V>,
    ) -> Result<Self::M<'a, K, V>>;
}

/// A snapshot's read transaction, which keeps every table it opens: a query that reads the
/// same tables many times (`why`, `replay`, the gates' sweep) opens each once per snapshot.
pub struct SnapshotTx {
    txn: ReadTransaction,
    /// Tables opened so far, by the address and length of their name: the names are the
    /// `&'static str` of constant definitions, and equal address and length mean equal names.
    open: Mutex<Vec<Kept>>,
}

/// An opened table: its name's address and length, and the table.
type Kept = (usize, usize, Arc<dyn Any + Send + Sync>);

impl SnapshotTx {
    pub(crate) fn new(txn: ReadTransaction) -> SnapshotTx {
        SnapshotTx {
            txn,
            open: Mutex::new(Vec::new()),
        }
    }

    /// The redb transaction itself.
    pub(super) fn raw(&self) -> &ReadTransaction {
        &self.txn
    }

    /// The table under `name`, opened once.
    fn kept<X: Any + Send + Sync>(
        &self,
        name: &str,
        open: impl FnOnce(&ReadTransaction) -> Result<X>,
    ) -> Result<Arc<X>> {
        let key = (name.as_ptr() as usize, name.len());
        let mut tables = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let at = tables.iter().position(|(p, n, _)| (*p, *n) == key);
        if let Some(i) = at {
            if let Ok(t) = Arc::clone(&tables[i].2).downcast::<X>() {
                return Ok(t);
            }
        }
        let t = Arc::new(open(&self.txn)?);
        let entry: Kept = (key.0, key.1, Arc::clone(&t) as Arc<dyn Any + Send + Sync>);
        match at {
            // The same name opened as another type: keep the latest.
            Some(i) => tables[i] = entry,
            None => tables.push(entry),
        }
        Ok(t)
    }
}

impl Tx for SnapshotTx {
    type T<'a, K: Key + 'static, V: Value + 'static> = Arc<ReadOnlyTable<K, V>>;
    type M<'a, K: Key + 'static, V: Key + 'static> = Arc<ReadOnlyMultimapTable<K, V>>;
    fn table<K: Key + Send + Sync + 'static, V: Value + Send + Sync + 'static>(
        &self,
        def: TableDefinition<'static, K, V>,
    ) -> Result<Arc<ReadOnlyTable<K, V>>> {
        self.kept(def.name(), |t| Ok(t.open_table(def)?))
    }
    fn multimap<K: Key + Send + Sync + 'static, V: Key + Send + Sync + 'static>(
        &self,
        def: MultimapTableDefinition<'static, K, V>,
    ) -> Result<Arc<ReadOnlyMultimapTable<K, V>>> {
        self.kept(def.name(), |t| Ok(t.open_multimap_table(def)?))
    }
}

/// A table a write transaction opened, for one read.
pub struct Opened<X>(X);

impl<X> Deref for Opened<X> {
    type Target = X;
    fn deref(&self) -> &X {
        &self.0
    }
}

impl Tx for WriteTransaction {
    type T<'a, K: Key + 'static, V: Value + 'static> = Opened<redb::Table<'a, K, V>>;
    type M<'a, K: Key + 'static, V: Key + 'static> = Opened<redb::MultimapTable<'a, K, V>>;
    fn table<'a, K: Key + Send + Sync + 'static, V: Value + Send + Sync + 'static>(
        &'a self,
        def: TableDefinition<'static, K, V>,
    ) -> Result<Opened<redb::Table<'a, K, V>>> {
        Ok(Opened(self.open_table(def)?))
    }
    fn multimap<'a, K: Key + Send + Sync + 'static, V: Key + Send + Sync + 'static>(
        &'a self,
        def: MultimapTableDefinition<'static, K, V>,
    ) -> Result<Opened<redb::MultimapTable<'a, K, V>>> {
        Ok(Opened(self.open_multimap_table(def)?))
    }
}

/// A claim's status as every view shows it, from [`Read::standing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The status.
    pub status: crate::record::Status,
    /// Whether an admitted verdict or a reground set it.
    pub admitted: bool,
    /// The refused summary whose verdict gave the status, for a claim no admitted summary
    /// carried.
    pub refused_by: Option<Rid>,
}

/// The seal on [`Read`]: only the store's own [`Snapshot`](crate::Snapshot) and
/// [`Batch`](crate::Batch) implement it, and only the store sees the transaction underneath.
pub(crate) mod sealed {
    /// The transaction a ledger state reads through.
    pub trait Sealed {
        /// The transaction type underneath.
        type X: super::Tx;
        /// The transaction underneath.
        fn tx(&self) -> &Self::X;
    }
}

/// Read access to a ledger state: a committed [`Snapshot`](crate::Snapshot) or an open
/// [`Batch`](crate::Batch), which sees its own appends. Sealed: no type outside cairn
/// implements it, so every read goes through the ledger's own checks.
pub trait Read: sealed::Sealed {
    /// The number of records in the log.
    fn len(&self) -> Result<u64> {
        Ok(self.tx().table(LOG)?.len()?)
    }

    /// Whether the log is empty.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The log index of a record.
    fn index_of(&self, rid: &Rid) -> Result<Option<u64>> {
        Ok(self.tx().table(RIDS)?.get(&rid.0)?.map(|g| g.value()))
    }

    /// The rid at a log index.
    fn rid_at(&self, index: u64) -> Result<Option<Rid>> {
        Ok(self.tx().table(LOG)?.get(index)?.map(|g| Rid(g.value())))
    }

    /// The stored bytes at a log index.
    fn bytes_at(&self, index: u64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .tx()
            .table(RECORDS)?
            .get(index)?
            .map(|g| g.value().to_vec()))
    }

    /// The record at a log index, decoded and checked against its rid.
    fn record_at(&self, index: u64) -> Result<Option<(Rid, Record)>> {
        let Some(rid) = self.rid_at(index)? else {
            return Ok(None);
        };
        let corrupt = |detail: String| ErrorKind::CorruptRecord { rid, index, detail };
        let bytes = self
            .bytes_at(index)?
            .ok_or_else(|| corrupt("its bytes are missing from the records table".into()))?;
        if Rid::of_bytes(&bytes) != rid {
            return Err(corrupt("its bytes no longer hash to its rid".into()).into());
        }
        let record = decode(&bytes).map_err(|e| corrupt(e.to_string()))?;
        Ok(Some((rid, record)))
    }

    /// A record by rid: the rid index must lead to a log entry of that very rid.
    fn get(&self, rid: &Rid) -> Result<Option<Record>> {
        let Some(i) = self.index_of(rid)? else {
            return Ok(None);
        };
        match self.record_at(i)? {
            Some((at, r)) if at == *rid => Ok(Some(r)),
            _ => Err(ErrorKind::CorruptFile {
                path: "rids table".into(),
                detail: format!("it sends {rid} to log index {i}, which holds another record"),
            }
            .into()),
        }
    }

    /// The kind of a record by rid, read from its header byte without decoding it (its bytes
    /// are checked against the rid).
    fn kind_of(&self, rid: &Rid) -> Result<Option<Kind>> {
        let Some(index) = self.index_of(rid)? else {
            return Ok(None);
        };
        let records = self.tx().table(RECORDS)?;
        let Some(guard) = records.get(index)? else {
            return Err(missing(*rid, "rids").into());
        };
        if Rid::of_bytes(guard.value()) != *rid {
            return Err(ErrorKind::CorruptRecord {
                rid: *rid,
                index,
                detail: "its bytes no longer hash to its rid".into(),
            }
            .into());
        }
        Ok(guard.value().get(1).copied().and_then(Kind::from_byte))
    }

    /// The kind of the record at a log index, its bytes checked against the logged rid; a
    /// missing record below the log's length is damage.
    fn kind_at(&self, index: u64) -> Result<Kind> {
        let rid = self.rid_at(index)?.ok_or_else(|| ErrorKind::CorruptFile {
            path: "log table".into(),
            detail: format!("log index {index} holds no rid, though the log is longer"),
        })?;
        let corrupt = |detail: &str| ErrorKind::CorruptRecord {
            rid,
            index,
            detail: detail.to_string(),
        };
        let records = self.tx().table(RECORDS)?;
        let guard = records
            .get(index)?
            .ok_or_else(|| corrupt("its bytes are missing from the records table"))?;
        if Rid::of_bytes(guard.value()) != rid {
            return Err(corrupt("its bytes no longer hash to its rid").into());
        }
        let kind = guard.value().get(1).copied().and_then(Kind::from_byte);
        Ok(kind.ok_or_else(|| corrupt("its kind byte names no kind"))?)
    }

    /// A record a derived table names: its absence is damage, not an empty answer.
    fn named(&self, rid: &Rid, table: &'static str) -> Result<Record> {
        self.get(rid)?.ok_or_else(|| missing(*rid, table).into())
    }

    /// The derived facts of a claim or summary.
    fn facts(&self, rid: &Rid) -> Result<Option<Facts>> {
        Ok(self
            .tx()
            .table(FACTS)?
            .get(&rid.0)?
            .map(|g| Facts::from_bytes(g.value())))
    }

    /// A stream's counters and head; the default state for a stream never seen.
    fn stream(&self, stream: &str) -> Result<StreamState> {
        let table = self.tx().table(STREAMS)?;
        let Some(g) = table.get(stream)? else {
            // A stream with spans always has a state: its absence is damage.
            if self.last_turn(stream)?.is_some() {
                return Err(ErrorKind::CorruptFile {
                    path: "streams table".into(),
                    detail: format!("stream {stream} has turns but no state"),
                }
                .into());
            }
            return Ok(StreamState::default());
        };
        let state = super::decode_state(g.value()).ok_or_else(|| ErrorKind::CorruptFile {
            path: "streams table".into(),
            detail: format!("the state of stream {stream} does not decode"),
        })?;
        // An admitted summary is always the head of some state: a state that counts admitted
        // summaries and names no head, or names more evicted spans than spans, is damaged.
        let len = self.len()?;
        let counts = [
            state.spans,
            state.evicted,
            state.summaries,
            state.refused,
            state.proposals,
        ];
        let head_ok = match state.head {
            None => state.summaries == 0,
            Some(h) => {
                let summary =
                    matches!(self.get(&h)?, Some(Record::Summary(s)) if s.stream == stream);
                let verdict = match self.verdict_of(&h)? {
                    Some(v) => self.get(&v)?,
                    None => None,
                };
                summary
                    && matches!(verdict, Some(Record::Verdict(v)) if v.admitted && v.subject == h)
            }
        };
        if !head_ok
            || counts.iter().any(|c| *c > len)
            || state.evicted > state.spans
            || state.summaries + state.refused > state.proposals
        {
            return Err(ErrorKind::CorruptFile {
                path: "streams table".into(),
                detail: format!("the state of stream {stream} contradicts the log"),
            }
            .into());
        }
        Ok(state)
    }

    /// The names of every stream, sorted.
    fn streams(&self) -> Result<Vec<String>> {
        let table = self.tx().table(STREAMS)?;
        let mut out = Vec::new();
        for entry in table.iter()? {
            out.push(entry?.0.value().to_string());
        }
        Ok(out)
    }

    /// The head summary of a stream.
    fn head(&self, stream: &str) -> Result<Option<Rid>> {
        Ok(self.stream(stream)?.head)
    }

    /// The span of a stream's turn.
    fn turn(&self, stream: &str, turn: u64) -> Result<Option<Rid>> {
        Ok(self
            .tx()
            .table(TURNS)?
            .get((stream, turn))?
            .map(|g| Rid(g.value())))
    }

    /// The highest turn number of a stream's spans, if it has any.
    fn last_turn(&self, stream: &str) -> Result<Option<u64>> {
        let table = self.tx().table(TURNS)?;
        let last = table.range((stream, 0)..=(stream, u64::MAX))?.next_back();
        Ok(match last {
            Some(entry) => Some(entry?.0.value().1),
            None => None,
        })
    }

    /// The spans of a stream with turns in `first..=last`, in turn order.
    fn turns(&self, stream: &str, first: u64, last: u64) -> Result<Vec<(u64, Rid)>> {
        let table = self.tx().table(TURNS)?;
        let mut out = Vec::new();
        for entry in table.range((stream, first)..=(stream, last))? {
            let (k, v) = entry?;
            out.push((k.value().1, Rid(v.value())));
        }
        Ok(out)
    }

    /// The spans of a stream that no admitted summary has evicted, in turn order: one range
    /// read of the turn index, with the eviction index opened once.
    fn unevicted_spans(&self, stream: &str) -> Result<Vec<Rid>> {
        let turns = self.tx().table(TURNS)?;
        let evictions = self.tx().table(EVICTIONS)?;
        let mut out = Vec::new();
        for entry in turns.range((stream, 0)..=(stream, u64::MAX))? {
            let rid = entry?.1.value();
            if evictions.get(&rid)?.is_none() {
                out.push(Rid(rid));
            }
        }
        Ok(out)
    }

    /// Calls `take` with the spans of a stream that no admitted summary has evicted, newest
    /// first, until it returns `false`: one reverse range read of the turn index, so reading
    /// the last few turns of a long stream costs those turns.
    fn window_newest_first(
        &self,
        stream: &str,
        mut take: impl FnMut(u64, Rid) -> Result<bool>,
    ) -> Result<()> {
        let turns = self.tx().table(TURNS)?;
        let evictions = self.tx().table(EVICTIONS)?;
        for entry in turns.range((stream, 0)..=(stream, u64::MAX))?.rev() {
            let (k, v) = entry?;
            let rid = v.value();
            if evictions.get(&rid)?.is_none() && !take(k.value().1, Rid(rid))? {
                break;
            }
        }
        Ok(())
    }

    /// The pin under (stream, name).
    fn pin(&self, stream: &str, name: &str) -> Result<Option<Rid>> {
        Ok(self
            .tx()
            .table(PINS)?
            .get((stream, name))?
            .map(|g| Rid(g.value())))
    }

    /// The decision-relevant items the classifier found in a stream's spans, in turn order.
    fn items(&self, stream: &str) -> Result<Vec<Item>> {
        let table = self.tx().table(ITEMS)?;
        let mut out = Vec::new();
        for entry in table.range((stream, 0, 0)..=(stream, u64::MAX, u8::MAX))? {
            let (k, v) = entry?;
            let (_, turn, _) = k.value();
            out.extend(Item::from_bytes(turn, v.value()));
        }
        Ok(out)
    }

    /// The receipt of the write call that used an idempotency key in a stream, if any (none
    /// in a ledger written before receipts existed).
    fn receipt(&self, stream: &str, key: &str) -> Result<Option<Rid>> {
        let table = match self.tx().table(RECEIPTS) {
            Ok(t) => t,
            Err(e) if e.is_missing_table() => return Ok(None),
            Err(e) => return Err(e),
        };
        let found = table.get((stream, key))?.map(|g| Rid(g.value()));
        Ok(found)
    }

    /// The current version of a store entry (SPEC.md section 10d): the last entry record
    /// appended under the namespace `path` ([`crate::record::Entry::path`]) and `key`, a
    /// deletion included; none in a ledger written before entries existed.
    fn entry(&self, path: &str, key: &str) -> Result<Option<Rid>> {
        let table = match self.tx().table(ENTRIES) {
            Ok(t) => t,
            Err(e) if e.is_missing_table() => return Ok(None),
            Err(e) => return Err(e),
        };
        let found = table.get((path, key))?.map(|g| Rid(g.value()));
        Ok(found)
    }

    /// Every store key whose namespace path starts with `prefix` (all of them for ""), with its
    /// current version, in (path, key) order.
    fn entries(&self, prefix: &str) -> Result<Vec<(String, String, Rid)>> {
        let table = match self.tx().table(ENTRIES) {
            Ok(t) => t,
            Err(e) if e.is_missing_table() => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in table.range((prefix, "")..)? {
            let (k, v) = entry?;
            let (path, key) = k.value();
            if !path.starts_with(prefix) {
                break;
            }
            out.push((path.to_string(), key.to_string(), Rid(v.value())));
        }
        Ok(out)
    }

    /// The pins of a stream: (name, rid), sorted by name.
    fn pins(&self, stream: &str) -> Result<Vec<(String, Rid)>> {
        let table = self.tx().table(PINS)?;
        let mut out = Vec::new();
        for entry in table.range((stream, "")..)? {
            let (k, v) = entry?;
            let (s, name) = k.value();
            if s != stream {
                break;
            }
            out.push((name.to_string(), Rid(v.value())));
        }
        Ok(out)
    }

    /// Every record of a kind, in log order: one index range read.
    fn of_kind(&self, kind: Kind) -> Result<Vec<Rid>> {
        let table = self.tx().table(BY_KIND)?;
        let k = kind as u8;
        let mut out = Vec::new();
        for entry in table.range((k, 0)..=(k, u64::MAX))? {
            out.push(Rid(entry?.1.value()));
        }
        Ok(out)
    }

    /// The records that link to `rid`, sorted by rid.
    fn dependents(&self, rid: &Rid) -> Result<Vec<Rid>> {
        let table = self.tx().multimap(LINKS)?;
        let mut out = Vec::new();
        for v in table.get(&rid.0)? {
            out.push(Rid(v?.value()));
        }
        Ok(out)
    }

    /// Where span `span` came from in the log it was first imported from: its first place
    /// record (SPEC.md 2.1), one index read.
    fn place(&self, span: &Rid) -> Result<Option<crate::record::Place>> {
        let table = match self.tx().table(PLACES) {
            Ok(t) => t,
            // A ledger written before places, opened read-only: it has none.
            Err(e) if e.is_missing_table() => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(rid) = table.get(&span.0)?.map(|g| Rid(g.value())) else {
            return Ok(None);
        };
        match self.get(&rid)? {
            Some(Record::Place(p)) => Ok(Some(p)),
            _ => Err(missing(rid, "places").into()),
        }
    }

    /// The items of pin `pin` that retirements lifted (SPEC.md 8.4b): each item's text, with
    /// the retirement's rid and the user turn that lifted it, in the order of their rids.
    fn retirements(&self, pin: &Rid) -> Result<Vec<(String, (Rid, Rid))>> {
        let mut out = Vec::new();
        for d in self.dependents(pin)? {
            if let Some(Record::Retirement(r)) = self.get(&d)? {
                if r.pin == *pin {
                    out.push((r.item, (d, r.witness)));
                }
            }
        }
        Ok(out)
    }

    /// The summary that first evicted a span, if any; checked against the records: the
    /// summary named must be admitted and evict the span, and when none is named, no admitted
    /// summary among the span's dependents may evict it (a damaged evictions table would
    /// otherwise put an evicted turn back in the window).
    fn evicted_by(&self, span: &Rid) -> Result<Option<Rid>> {
        let found = self
            .tx()
            .table(EVICTIONS)?
            .get(&span.0)?
            .map(|g| Rid(g.value()));
        let evicts = |summary: &Rid| -> Result<bool> {
            let Some(Record::Summary(s)) = self.get(summary)? else {
                return Ok(false);
            };
            if !s.evicts.contains(span) {
                return Ok(false);
            }
            let verdict = match self.verdict_of(summary)? {
                Some(v) => self.get(&v)?,
                None => None,
            };
            Ok(matches!(verdict, Some(Record::Verdict(v)) if v.admitted))
        };
        let consistent = match found {
            Some(summary) => evicts(&summary)?,
            None => {
                let mut none = true;
                for d in self.dependents(span)? {
                    if evicts(&d)? {
                        none = false;
                        break;
                    }
                }
                none
            }
        };
        if !consistent {
            return Err(ErrorKind::CorruptFile {
                path: "evictions table".into(),
                detail: format!(
                    "its entry for span {span} disagrees with the summaries that evict it"
                ),
            }
            .into());
        }
        Ok(found)
    }

    /// The verdict on a summary, action or check, if it was gated. When the verdicts table
    /// has none, the reverse links are asked too: a verdict that names the subject there is a
    /// damaged verdicts table, not an ungated proposal.
    fn verdict_of(&self, subject: &Rid) -> Result<Option<Rid>> {
        let found = self
            .tx()
            .table(VERDICTS)?
            .get(&subject.0)?
            .map(|g| Rid(g.value()));
        if found.is_none() {
            for d in self.dependents(subject)? {
                if matches!(self.get(&d)?, Some(Record::Verdict(v)) if v.subject == *subject) {
                    return Err(ErrorKind::CorruptFile {
                        path: "verdicts table".into(),
                        detail: format!("verdict {d} on {subject} is missing from it"),
                    }
                    .into());
                }
            }
        }
        Ok(found)
    }

    /// Whether a gated summary or action was admitted: false when refused or never gated.
    fn admitted(&self, subject: &Rid) -> Result<bool>
    where
        Self: Sized,
    {
        let Some(v) = self.verdict_of(subject)? else {
            return Ok(false);
        };
        // The verdict's bytes were checked when it was appended: decode them as the ledger's
        // own hot paths do, without re-hashing.
        Ok(matches!(self.get_trusted(&v)?, Some(Record::Verdict(v)) if v.admitted))
    }

    /// A claim's latest status from an admitted verdict or a reground; `None` if never gated.
    fn status(&self, claim: &Rid) -> Result<Option<crate::record::Status>> {
        use crate::record::Status;
        Ok(self
            .tx()
            .table(STATUS)?
            .get(&claim.0)?
            .map(|g| match g.value() {
                0 => Status::Verified,
                1 => Status::Unverified,
                2 => Status::Unanchored,
                _ => Status::Fabricated,
            }))
    }

    /// A summary's boundary number: its position among its stream's summaries, from 1.
    fn ordinal(&self, summary: &Rid) -> Result<Option<u64>> {
        let n = self
            .tx()
            .table(ORDINALS)?
            .get(&summary.0)?
            .map(|g| g.value());
        if n.is_none() && matches!(self.kind_of(summary)?, Some(Kind::Summary)) {
            return Err(ErrorKind::CorruptFile {
                path: "ordinals table".into(),
                detail: format!("summary {summary} has no boundary number"),
            }
            .into());
        }
        // A boundary number counts its stream's summaries from 1: no more than the log holds.
        let len = self.len()?;
        if n.is_some_and(|n| n == 0 || n > len) {
            return Err(ErrorKind::CorruptFile {
                path: "ordinals table".into(),
                detail: format!("summary {summary} has boundary number {}", n.unwrap_or(0)),
            }
            .into());
        }
        Ok(n)
    }

    /// The latest reground of a claim.
    fn regrounded(&self, claim: &Rid) -> Result<Option<Rid>> {
        Ok(self
            .tx()
            .table(REGROUNDED)?
            .get(&claim.0)?
            .map(|g| Rid(g.value())))
    }

    /// A claim's one status, as every view gives it (SPEC.md section 8.1): verified once
    /// re-grounded; else the status of the latest admitted verdict that carried it; else, for
    /// a claim only refused summaries carried, the status the latest of their verdicts gave it,
    /// with that summary; else unverified when it has a raw-span ancestor, unanchored when not.
    fn standing(&self, claim: &Rid) -> Result<Standing>
    where
        Self: Sized,
    {
        let recorded = self.status(claim)?;
        if self.regrounded(claim)?.is_some() {
            return Ok(Standing {
                status: crate::record::Status::Verified,
                admitted: true,
                refused_by: None,
            });
        }
        // The verdicts that carried the claim, through the reverse links: the latest admitted
        // one must have set the status table, and the latest refused one speaks for a claim
        // no admitted summary carried. The two structures must agree.
        let mut admitted: Option<(u64, crate::record::Status)> = None;
        let mut refused: Option<(u64, Rid, crate::record::Status)> = None;
        // Newest first: the first admitted verdict met is the latest, and with it the search
        // ends, so a claim carried by many compactions costs one or two reads, not its history.
        let mut dependents = Vec::new();
        for d in self.dependents(claim)? {
            if let Some(i) = self.index_of(&d)? {
                dependents.push((i, d));
            }
        }
        dependents.sort_unstable_by_key(|d| std::cmp::Reverse(d.0));
        for (_, dependent) in dependents {
            if !matches!(self.kind_of(&dependent)?, Some(Kind::Summary)) {
                continue;
            }
            let Some(verdict) = self.verdict_of(&dependent)? else {
                continue;
            };
            let Some(at) = self.index_of(&verdict)? else {
                continue;
            };
            if let Some(Record::Verdict(v)) = self.trusted_at(verdict, at)? {
                if let Some(c) = v.claims.iter().find(|c| c.claim == *claim) {
                    if v.admitted {
                        admitted = Some((at, c.status));
                        break;
                    }
                    if refused.is_none() {
                        refused = Some((at, dependent, c.status));
                    }
                }
            }
        }
        let status_damaged = || -> crate::error::Error {
            ErrorKind::CorruptFile {
                path: "status table".into(),
                detail: format!(
                    "the status of claim {claim} is not what its latest admitted verdict gave it"
                ),
            }
            .into()
        };
        match (recorded, admitted) {
            (Some(status), Some((_, given))) if status == given => {
                return Ok(Standing {
                    status,
                    admitted: true,
                    refused_by: None,
                })
            }
            (None, None) => {}
            _ => return Err(status_damaged()),
        }
        if let Some((_, summary, status)) = refused {
            return Ok(Standing {
                status,
                admitted: false,
                refused_by: Some(summary),
            });
        }
        let anchored = self.facts(claim)?.is_some_and(|f| f.anchored);
        Ok(Standing {
            status: if anchored {
                crate::record::Status::Unverified
            } else {
                crate::record::Status::Unanchored
            },
            admitted: false,
            refused_by: None,
        })
    }

    /// Spans that a recorded judgement says contradict the claim.
    fn contradicting_spans(&self, claim: &Rid) -> Result<Vec<Rid>> {
        let table = self.tx().multimap(CONTRADICTIONS)?;
        let mut out = Vec::new();
        for v in table.get(&claim.0)? {
            out.push(Rid(v?.value()));
        }
        Ok(out)
    }

    /// Every claim with no raw-span ancestor: one index read.
    fn unanchored_claims(&self) -> Result<Vec<Rid>> {
        let table = self.tx().table(UNANCHORED)?;
        let mut out = Vec::new();
        for entry in table.iter()? {
            out.push(Rid(entry?.0.value()));
        }
        Ok(out)
    }

    /// Every record of `kind` (claim or summary) whose depth is at least `min_depth`, deepest
    /// last: one index range read.
    fn deeper_than(&self, kind: Kind, depth: u32) -> Result<Vec<(Rid, u32)>> {
        let table = self.tx().table(DEPTHS)?;
        let k = kind as u8;
        let mut out = Vec::new();
        if depth == u32::MAX {
            return Ok(out);
        }
        for entry in table.range((k, depth + 1, [0u8; 32])..=(k, u32::MAX, [0xffu8; 32]))? {
            let (key, _) = entry?;
            let (_, d, rid) = key.value();
            out.push((Rid(rid), d));
        }
        Ok(out)
    }

    /// Whether the ledger holds the recall index (SPEC.md section 10b): a ledger written
    /// before it existed gets it when it is first opened for writing.
    fn has_recall_index(&self) -> Result<bool> {
        let meta = self.tx().table(META)?;
        if let Some(version) = meta.get(super::RECALL_META)? {
            // An index of an older layout is rebuilt at the ledger's first open for writing;
            // until then it is not read.
            return Ok(version.value() == [super::RECALL_VERSION]);
        }
        // A ledger created with the id check was created with the index: without its entry
        // the meta table is damaged, not old.
        if meta.get(super::LEDGER_ID_CHECK)?.is_some() {
            return Err(ErrorKind::CorruptFile {
                path: "meta table".into(),
                detail: "the recall index's entry is missing from a ledger created with it".into(),
            }
            .into());
        }
        Ok(false)
    }

    /// A term of the recall index: its id and the number of spans and claims that hold it.
    /// The empty term gives (0, the number of spans and claims indexed).
    fn recall_term(&self, term: &str) -> Result<Option<(u32, u64)>> {
        Ok(self.tx().table(TERMS)?.get(term)?.map(|g| g.value()))
    }

    /// A stream's id in the recall index, if it has any text indexed.
    fn recall_stream(&self, stream: &str) -> Result<Option<u32>> {
        Ok(self
            .tx()
            .table(RECALL_STREAM_IDS)?
            .get(stream)?
            .map(|g| g.value()))
    }

    /// Calls `take` with the recall index's postings of term `term` (weight, log index), over
    /// all streams or over the stream of id `stream` only, heaviest weight band first (sixteen
    /// bands) and newest first within a band, until it returns `false`.
    fn postings(
        &self,
        stream: Option<u32>,
        term: u32,
        mut take: impl FnMut(u16, u64) -> bool,
    ) -> Result<()> {
        // Each block from its end: newest first within a band.
        let mut block = |first: u64, bytes: &[u8]| -> Result<bool> {
            let postings = Block::decode(first, bytes)?;
            Ok(postings.into_iter().rev().all(|(index, w)| take(w, index)))
        };
        match stream {
            None => {
                let table = self.tx().table(RECALL)?;
                for entry in table.range((term, 0, 0)..=(term, u8::MAX, u64::MAX))?.rev() {
                    let (k, v) = entry?;
                    if !block(k.value().2, v.value())? {
                        break;
                    }
                }
            }
            Some(s) => {
                let table = self.tx().table(RECALL_STREAMS)?;
                for entry in table
                    .range((s, term, 0, 0)..=(s, term, u8::MAX, u64::MAX))?
                    .rev()
                {
                    let (k, v) = entry?;
                    if !block(k.value().3, v.value())? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Resolves a full rid or a unique hex prefix of at least 8 characters.
    fn resolve(&self, text: &str) -> Result<Rid> {
        let not_a_rid = || ErrorKind::Reference(RefError::NotARid(text.to_string()));
        let nibbles = crate::record::rid::hex_nibbles(text).map_err(|_| not_a_rid())?;
        if nibbles.len() > 64 || nibbles.len() < 8 {
            return Err(not_a_rid().into());
        }
        let mut lo = [0u8; 32];
        let mut hi = [0xffu8; 32];
        for (i, n) in nibbles.iter().enumerate() {
            let shift = if i % 2 == 0 { 4 } else { 0 };
            let mask = 0xf << shift;
            lo[i / 2] = (lo[i / 2] & !mask) | (n << shift);
            hi[i / 2] = (hi[i / 2] & !mask) | (n << shift);
        }
        let table = self.tx().table(RIDS)?;
        let mut found = table.range(lo..=hi)?;
        let first = match found.next() {
            Some(e) => Rid(e?.0.value()),
            None => return Err(ErrorKind::NotFound(text.to_string()).into()),
        };
        if let Some(e) = found.next() {
            return Err(ErrorKind::Ambiguous {
                prefix: text.to_string(),
                first,
                second: Rid(e?.0.value()),
            }
            .into());
        }
        Ok(first)
    }
}

/// The damage of a derived table that names a record the log does not hold.
pub(crate) fn missing(rid: Rid, table: &'static str) -> ErrorKind {
    ErrorKind::CorruptFile {
        path: format!("{table} table").into(),
        detail: format!("it names record {rid}, which the log does not hold"),
    }
}

/// Reads for the ledger's own hot paths and bookkeeping, beside [`Read`]: records decoded
/// without re-checking them, the stored Merkle nodes, and the last checkpoint signed. Private
/// to the crate, so a user's reads always go through the checks.
pub(crate) trait Trusted: Read {
    /// A record by rid, decoded without re-hashing or re-checking its canonical form: for the
    /// ledger's own hot paths (link checks, gates, replay). Use [`Read::get`] to present a
    /// record as valid.
    fn get_trusted(&self, rid: &Rid) -> Result<Option<Record>> {
        let Some(index) = self.index_of(rid)? else {
            return Ok(None);
        };
        self.trusted_at(*rid, index)
    }
    /// The record `rid` at log `index`, decoded as [`Trusted::get_trusted`] does.
    fn trusted_at(&self, rid: Rid, index: u64) -> Result<Option<Record>> {
        let records = self.tx().table(RECORDS)?;
        let Some(guard) = records.get(index)? else {
            return Ok(None);
        };
        // The hash is checked (a flipped bit in a record, or in the rid index that led here,
        // is damage, never a different record); the canonical re-encoding is not.
        if Rid::of_bytes(guard.value()) != rid {
            return Err(ErrorKind::CorruptRecord {
                rid,
                index,
                detail: "its bytes no longer hash to its rid".into(),
            }
            .into());
        }
        let record =
            crate::record::decode_trusted(guard.value()).map_err(|e| ErrorKind::CorruptRecord {
                rid,
                index,
                detail: e.to_string(),
            })?;
        Ok(Some(record))
    }

    /// The stored hash of the perfect subtree at `level` (1 or more), `index`, of the Merkle
    /// log; level 0 is the log itself ([`Read::rid_at`]).
    fn subtree(&self, level: u8, index: u64) -> Result<Option<[u8; 32]>> {
        Ok(self
            .tx()
            .table(MERKLE)?
            .get((level, index))?
            .map(|g| g.value()))
    }
    /// The size and root of the last checkpoint signed over this ledger, as the ledger records
    /// it: `(0, None)` before the first.
    fn last_signed(&self) -> Result<(u64, Option<[u8; 32]>)> {
        let meta = self.tx().table(META)?;
        let size = meta
            .get("signed_size")?
            .and_then(|g| <[u8; 8]>::try_from(g.value()).ok())
            .map(u64::from_le_bytes);
        let root = meta
            .get("signed_root")?
            .and_then(|g| <[u8; 32]>::try_from(g.value()).ok());
        Ok((size.unwrap_or(0), root))
    }
}

impl<R: Read> Trusted for R {}
