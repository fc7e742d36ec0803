//! Derived rows as bytes: an entry of a derived table, set or removed, in redb's own encoding of
//! its key and value and tagged by its table's number. They are what a batch appends beside its
//! records when the ledger's store is not the file it derives into (SPEC.md section 17.2): a
//! batch on a shared ledger keeps every derived row it writes ([`Capture`]), the server stores
//! them in the transaction of their records, and another process's replica, or a copy, takes
//! them as they are ([`apply`]) instead of deriving them again.
//!
//! The bytes come from a server, so they are checked before redb decodes them: a fixed-width
//! type's length, and the UTF-8 and lengths of the variable-width ones.

use super::tables::*;
use crate::error::{ErrorKind, Result};
use redb::{
    Key, MultimapTableDefinition, MultimapTableHandle, ReadTransaction, ReadableMultimapTable,
    ReadableTable, TableDefinition, TableHandle, Value, WriteTransaction,
};
use std::borrow::Borrow;
use std::sync::Mutex;

/// One entry of a derived table, set or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// The table's number ([`number`]).
    pub table: u8,
    /// The key in redb's encoding; for a multimap table, the key's encoding then the value's.
    pub key: Vec<u8>,
    /// The value in redb's encoding (empty for a multimap table), or `None` when removed.
    pub value: Option<Vec<u8>>,
}

/// Every derived table, by number (its place here, from 1): the tables a batch derives from
/// its records, that is every table but `records`, `log` and `meta`. The numbers are stored
/// on servers: a new table takes the next one, and none is reused.
const DERIVED: [&str; 24] = [
    "rids",
    "links",
    "turns",
    "pins",
    "streams",
    "facts",
    "unanchored",
    "depths",
    "evictions",
    "verdicts",
    "status",
    "receipts",
    "entries",
    "places",
    "regrounded",
    "contradictions",
    "by_kind",
    "merkle",
    "items",
    "ordinals",
    "recall_blocks",
    "recall_stream_blocks",
    "terms",
    "recall_stream_ids",
];

/// The number of the derived table named `name`, or `None` for a table that is not derived.
pub(super) fn number(name: &str) -> Option<u8> {
    DERIVED
        .iter()
        .position(|n| *n == name)
        .and_then(|i| u8::try_from(i + 1).ok())
}

/// A part of a variable-width key or value, as redb lays it out.
#[derive(Clone, Copy)]
enum Part {
    /// A fixed-width type of this many bytes.
    Fixed(usize),
    /// A `&str`.
    Str,
    /// A `&[u8]`.
    Bytes,
}

use Part::{Bytes, Fixed, Str};

const STR: &[Part] = &[Str];
const BYTES: &[Part] = &[Bytes];
const STR_U64: &[Part] = &[Str, Fixed(8)];
const STR_STR: &[Part] = &[Str, Str];
const STR_U64_U8: &[Part] = &[Str, Fixed(8), Fixed(1)];

/// Whether `data` is a well-formed encoding of type `T`: a fixed-width type's width, or the
/// layout `parts` of a variable-width one (redb's tuples: a length for every variable-width
/// part but the last, then the parts; the last takes the rest).
fn well_formed<T: Value>(data: &[u8], parts: &[Part]) -> bool {
    if let Some(width) = T::fixed_width() {
        return data.len() == width;
    }
    if parts.len() == 1 {
        return match parts[0] {
            Fixed(n) => data.len() == n,
            Str => std::str::from_utf8(data).is_ok(),
            Bytes => true,
        };
    }
    let mut at = 0usize;
    let mut lens = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        match part {
            Fixed(n) => lens.push(Some(*n)),
            _ if i + 1 == parts.len() => lens.push(None),
            _ => {
                let Some((len, read)) = varint(&data[at..]) else {
                    return false;
                };
                lens.push(Some(len));
                at += read;
            }
        }
    }
    for (part, len) in parts.iter().zip(lens) {
        let end = match len {
            Some(n) => match at.checked_add(n) {
                Some(end) if end <= data.len() => end,
                _ => return false,
            },
            None => data.len(),
        };
        if matches!(part, Str) && std::str::from_utf8(&data[at..end]).is_err() {
            return false;
        }
        at = end;
    }
    at == data.len()
}

/// redb's length varint: one byte up to 253, then 254 and a `u16`, or 255 and a `u32`; with
/// the bytes it took.
fn varint(data: &[u8]) -> Option<(usize, usize)> {
    match *data.first()? {
        n @ 0..=253 => Some((usize::from(n), 1)),
        254 => Some((
            usize::from(u16::from_le_bytes(data.get(1..3)?.try_into().ok()?)),
            3,
        )),
        255 => Some((
            usize::try_from(u32::from_le_bytes(data.get(1..5)?.try_into().ok()?)).ok()?,
            5,
        )),
    }
}

/// Writes `changes` into the derived tables of `txn`. Each is checked before it is decoded; one
/// that is not well formed, or names a table this build does not know, is refused, naming
/// `source`. Changes of one table that follow each other are written with the table opened once.
pub(super) fn apply(txn: &WriteTransaction, changes: &[Change], source: &str) -> Result<()> {
    for run in changes.chunk_by(|a, b| a.table == b.table) {
        let table = run[0].table;
        let done = match table {
            1 => put(txn, RIDS, run, &[], &[]),
            2 => put_multi(txn, LINKS, run),
            3 => put(txn, TURNS, run, STR_U64, &[]),
            4 => put(txn, PINS, run, STR_STR, &[]),
            5 => put(txn, STREAMS, run, STR, BYTES),
            6 => put(txn, FACTS, run, &[], &[]),
            7 => put(txn, UNANCHORED, run, &[], &[]),
            8 => put(txn, DEPTHS, run, &[], &[]),
            9 => put(txn, EVICTIONS, run, &[], &[]),
            10 => put(txn, VERDICTS, run, &[], &[]),
            11 => put(txn, STATUS, run, &[], &[]),
            12 => put(txn, RECEIPTS, run, STR_STR, &[]),
            13 => put(txn, ENTRIES, run, STR_STR, &[]),
            14 => put(txn, PLACES, run, &[], &[]),
            15 => put(txn, REGROUNDED, run, &[], &[]),
            16 => put_multi(txn, CONTRADICTIONS, run),
            17 => put(txn, BY_KIND, run, &[], &[]),
            18 => put(txn, MERKLE, run, &[], &[]),
            19 => put(txn, ITEMS, run, STR_U64_U8, BYTES),
            20 => put(txn, ORDINALS, run, &[], &[]),
            21 => put(txn, RECALL, run, &[], BYTES),
            22 => put(txn, RECALL_STREAMS, run, &[], BYTES),
            23 => put(txn, TERMS, run, STR, &[]),
            24 => put(txn, RECALL_STREAM_IDS, run, STR, &[]),
            _ => Err(format!(
                "a derived row names table number {table}, which this build does not know"
            )),
        };
        done.map_err(|detail| ErrorKind::CorruptFile {
            path: source.into(),
            detail: format!("{detail}; the store holding it was changed outside cairn or by a newer build: restore it from a backup, or open it with the build that wrote it"),
        })?;
    }
    Ok(())
}

/// Writes one table's run of changes.
fn put<K: Key + 'static, V: Value + 'static>(
    txn: &WriteTransaction,
    def: TableDefinition<'static, K, V>,
    run: &[Change],
    key: &[Part],
    value: &[Part],
) -> std::result::Result<(), String> {
    let failed = |e: redb::Error| format!("writing the {} table failed ({e})", def.name());
    let mut table = txn.open_table(def).map_err(|e| failed(e.into()))?;
    for change in run {
        if !well_formed::<K>(&change.key, key) {
            return Err(format!(
                "a row of the {} table has a malformed key",
                def.name()
            ));
        }
        if !(change.value.as_ref()).is_none_or(|v| well_formed::<V>(v, value)) {
            return Err(format!(
                "a row of the {} table has a malformed value",
                def.name()
            ));
        }
    }
    // In the table's own key order (a server sorts the bytes, which is another order for
    // numbers), so the B-tree fills leaf after leaf; a key's changes keep their order.
    let mut sorted: Vec<&Change> = run.iter().collect();
    sorted.sort_by(|a, b| K::compare(&a.key, &b.key));
    for change in sorted {
        let written = match &change.value {
            Some(v) => table
                .insert(K::from_bytes(&change.key), V::from_bytes(v))
                .map(drop),
            None => table.remove(K::from_bytes(&change.key)).map(drop),
        };
        written.map_err(|e| failed(e.into()))?;
    }
    Ok(())
}

/// Writes one multimap table's run of changes (both of them map a rid to rids).
fn put_multi(
    txn: &WriteTransaction,
    def: MultimapTableDefinition<'static, [u8; 32], [u8; 32]>,
    run: &[Change],
) -> std::result::Result<(), String> {
    let failed = |e: redb::Error| format!("writing the {} table failed ({e})", def.name());
    let mut table = txn.open_multimap_table(def).map_err(|e| failed(e.into()))?;
    for change in run {
        let (Ok(k), Ok(v)) = (
            <[u8; 32]>::try_from(change.key.get(..32).unwrap_or_default()),
            <[u8; 32]>::try_from(change.key.get(32..).unwrap_or_default()),
        ) else {
            return Err(format!(
                "a row of the {} table has a malformed key",
                def.name()
            ));
        };
        let written = match change.value {
            Some(_) => table.insert(k, v).map(drop),
            None => table.remove(k, v).map(drop),
        };
        written.map_err(|e| failed(e.into()))?;
    }
    Ok(())
}

/// Calls `f` on every entry of every derived table of `txn` as a change that sets it, table by
/// table in their numbers' order and each in key order: the whole of a redb store's derived
/// rows.
pub(super) fn each(txn: &ReadTransaction, f: &mut dyn FnMut(Change) -> Result<()>) -> Result<()> {
    let names: Vec<String> = txn.list_tables()?.map(|t| t.name().to_string()).collect();
    let multis: Vec<String> = (txn.list_multimap_tables()?)
        .map(|t| t.name().to_string())
        .collect();
    for (i, name) in DERIVED.iter().enumerate() {
        let n = (i + 1) as u8;
        if !names.iter().chain(&multis).any(|m| m == name) {
            continue;
        }
        match n {
            1 => rows(txn, RIDS, n, f),
            2 => multi_rows(txn, LINKS, n, f),
            3 => rows(txn, TURNS, n, f),
            4 => rows(txn, PINS, n, f),
            5 => rows(txn, STREAMS, n, f),
            6 => rows(txn, FACTS, n, f),
            7 => rows(txn, UNANCHORED, n, f),
            8 => rows(txn, DEPTHS, n, f),
            9 => rows(txn, EVICTIONS, n, f),
            10 => rows(txn, VERDICTS, n, f),
            11 => rows(txn, STATUS, n, f),
            12 => rows(txn, RECEIPTS, n, f),
            13 => rows(txn, ENTRIES, n, f),
            14 => rows(txn, PLACES, n, f),
            15 => rows(txn, REGROUNDED, n, f),
            16 => multi_rows(txn, CONTRADICTIONS, n, f),
            17 => rows(txn, BY_KIND, n, f),
            18 => rows(txn, MERKLE, n, f),
            19 => rows(txn, ITEMS, n, f),
            20 => rows(txn, ORDINALS, n, f),
            21 => rows(txn, RECALL, n, f),
            22 => rows(txn, RECALL_STREAMS, n, f),
            23 => rows(txn, TERMS, n, f),
            _ => rows(txn, RECALL_STREAM_IDS, n, f),
        }?;
    }
    Ok(())
}

fn rows<K: Key + 'static, V: Value + 'static>(
    txn: &ReadTransaction,
    def: TableDefinition<'static, K, V>,
    n: u8,
    f: &mut dyn FnMut(Change) -> Result<()>,
) -> Result<()> {
    for entry in txn.open_table(def)?.iter()? {
        let (k, v) = entry?;
        f(Change {
            table: n,
            key: K::as_bytes(&k.value()).as_ref().to_vec(),
            value: Some(V::as_bytes(&v.value()).as_ref().to_vec()),
        })?;
    }
    Ok(())
}

fn multi_rows(
    txn: &ReadTransaction,
    def: MultimapTableDefinition<'static, [u8; 32], [u8; 32]>,
    n: u8,
    f: &mut dyn FnMut(Change) -> Result<()>,
) -> Result<()> {
    for entry in txn.open_multimap_table(def)?.iter()? {
        let (k, values) = entry?;
        for v in values {
            let mut key = k.value().to_vec();
            key.extend_from_slice(&v?.value());
            f(Change {
                table: n,
                key,
                value: Some(Vec::new()),
            })?;
        }
    }
    Ok(())
}

/// The derived rows a batch wrote, kept while it derives.
#[derive(Default)]
pub(super) struct Capture(Mutex<Vec<Change>>);

impl Capture {
    fn push(&self, change: Change) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(change);
    }

    /// The rows kept, each key once with its last change, ordered by table and key.
    pub(super) fn take(&self) -> Vec<Change> {
        let mut all = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        // A stable sort keeps each key's changes in the order they were made: the last wins.
        all.sort_by(|a, b| (a.table, &a.key).cmp(&(b.table, &b.key)));
        let mut out: Vec<Change> = Vec::with_capacity(all.len());
        for change in all {
            match out.last_mut() {
                Some(last) if last.table == change.table && last.key == change.key => {
                    *last = change;
                }
                _ => out.push(change),
            }
        }
        out
    }
}

/// A batch's write transaction as its derivation writes it: every derived table opened through
/// it keeps its changes in the capture, when there is one.
#[derive(Clone, Copy)]
pub(super) struct Tables<'a> {
    /// The batch's transaction.
    pub txn: &'a WriteTransaction,
    /// Where derived rows are kept, on a shared ledger.
    pub capture: Option<&'a Capture>,
}

impl<'a> Tables<'a> {
    /// A transaction whose derived rows are not kept: a file's own.
    pub fn plain(txn: &'a WriteTransaction) -> Tables<'a> {
        Tables { txn, capture: None }
    }

    /// Opens a derived table for writing.
    pub fn table<K: Key + 'static, V: Value + 'static>(
        self,
        def: TableDefinition<'static, K, V>,
    ) -> Result<Table<'a, K, V>> {
        Ok(Table {
            inner: self.txn.open_table(def)?,
            kept: self.kept(def.name()),
        })
    }

    /// Opens a derived multimap table for writing.
    pub fn multimap<K: Key + 'static, V: Key + 'static>(
        self,
        def: MultimapTableDefinition<'static, K, V>,
    ) -> Result<Multimap<'a, K, V>> {
        Ok(Multimap {
            inner: self.txn.open_multimap_table(def)?,
            kept: self.kept(def.name()),
        })
    }

    /// The capture and the table's number, when its changes are kept.
    fn kept(self, name: &str) -> Option<(&'a Capture, u8)> {
        let capture = self.capture?;
        // Every table the derivation writes is numbered; a unit test checks it.
        Some((capture, number(name)?))
    }
}

/// Keeps a change in the capture, when there is one: `change` gives its key and value, made
/// only then.
fn keep(kept: Option<(&Capture, u8)>, change: impl FnOnce() -> (Vec<u8>, Option<Vec<u8>>)) {
    if let Some((capture, table)) = kept {
        let (key, value) = change();
        capture.push(Change { table, key, value });
    }
}

/// A derived table open for writing: reads through it as through redb's, and its writes are
/// kept when the batch keeps its rows.
pub(super) struct Table<'a, K: Key + 'static, V: Value + 'static> {
    inner: redb::Table<'a, K, V>,
    kept: Option<(&'a Capture, u8)>,
}

impl<'a, K: Key + 'static, V: Value + 'static> std::ops::Deref for Table<'a, K, V> {
    type Target = redb::Table<'a, K, V>;
    fn deref(&self) -> &redb::Table<'a, K, V> {
        &self.inner
    }
}

impl<K: Key + 'static, V: Value + 'static> Table<'_, K, V> {
    /// Sets `key` to `value`.
    pub fn insert<'k, 'v>(
        &mut self,
        key: impl Borrow<K::SelfType<'k>>,
        value: impl Borrow<V::SelfType<'v>>,
    ) -> Result<()> {
        keep(self.kept, || {
            let key = K::as_bytes(key.borrow()).as_ref().to_vec();
            (key, Some(V::as_bytes(value.borrow()).as_ref().to_vec()))
        });
        self.inner.insert(key, value)?;
        Ok(())
    }

    /// Removes `key`.
    pub fn remove<'k>(&mut self, key: impl Borrow<K::SelfType<'k>>) -> Result<()> {
        keep(self.kept, || {
            (K::as_bytes(key.borrow()).as_ref().to_vec(), None)
        });
        self.inner.remove(key)?;
        Ok(())
    }

    /// Removes every key in `from..=to`.
    pub fn clear<'k>(&mut self, from: K::SelfType<'k>, to: K::SelfType<'k>) -> Result<()> {
        let keys: Vec<Vec<u8>> = (self.inner.range::<K::SelfType<'k>>(from..=to)?)
            .map(|e| e.map(|(k, _)| K::as_bytes(&k.value()).as_ref().to_vec()))
            .collect::<std::result::Result<_, _>>()?;
        for key in keys {
            self.remove(K::from_bytes(&key))?;
        }
        Ok(())
    }
}

/// A derived multimap table open for writing.
pub(super) struct Multimap<'a, K: Key + 'static, V: Key + 'static> {
    inner: redb::MultimapTable<'a, K, V>,
    kept: Option<(&'a Capture, u8)>,
}

impl<K: Key + 'static, V: Key + 'static> Multimap<'_, K, V> {
    /// Adds `value` under `key`.
    pub fn insert<'k, 'v>(
        &mut self,
        key: impl Borrow<K::SelfType<'k>>,
        value: impl Borrow<V::SelfType<'v>>,
    ) -> Result<()> {
        keep(self.kept, || {
            let mut both = K::as_bytes(key.borrow()).as_ref().to_vec();
            both.extend_from_slice(V::as_bytes(value.borrow()).as_ref());
            (both, Some(Vec::new()))
        });
        self.inner.insert(key, value)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_derived_table_has_a_number_and_the_others_none() {
        for name in DERIVED {
            assert!(number(name).is_some(), "{name}");
        }
        for name in ["records", "log", "meta"] {
            assert_eq!(number(name), None);
        }
        assert_eq!(number(RECALL_STREAM_IDS.name()), Some(24));
        assert_eq!(number(LINKS.name()), Some(2));
    }

    #[test]
    fn malformed_bytes_are_caught_before_redb_decodes_them() {
        let turn = <(&str, u64)>::as_bytes(&("s1", 7));
        assert!(well_formed::<(&str, u64)>(&turn, STR_U64));
        assert!(!well_formed::<(&str, u64)>(
            &turn[..turn.len() - 1],
            STR_U64
        ));
        let mut bad = turn.clone();
        bad[1] = 0xff;
        assert!(!well_formed::<(&str, u64)>(&bad, STR_U64));
        let pin = <(&str, &str)>::as_bytes(&("s1", "never drop"));
        assert!(well_formed::<(&str, &str)>(&pin, STR_STR));
        assert!(!well_formed::<(&str, &str)>(&[200], STR_STR));
        assert!(!well_formed::<u64>(&[1, 2, 3], &[]));
        assert!(well_formed::<u64>(&[0; 8], &[]));
        assert!(!well_formed::<&str>(&[0xc3], STR));
    }
}
