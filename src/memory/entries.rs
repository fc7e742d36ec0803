//! An application's key-value store in the ledger (SPEC.md section 10d): entries under keys in
//! namespaces, as LangGraph's `BaseStore` keeps them. A put appends a new version that names the
//! one it replaces; a delete appends a tombstone; nothing is overwritten, so a key's history
//! stays. Entries are records of their own kind, in no stream: an agent's `context` and
//! `recall` never show them, only [`search_entries`](super::search_entries).

use crate::error::{ErrorKind, Result};
use crate::record::{Entry, Kind, Record, Rid, NAMESPACE_SEPARATOR};
use crate::store::{Appended, Batch, Read};

/// The most versions [`history`] walks back.
pub const MAX_HISTORY: usize = 10_000;

/// The current version of the entry at `namespace` and `key`, a deletion included (its
/// `value` is `None`), or `None` when the key was never put.
pub fn current<R: Read>(read: &R, namespace: &[String], key: &str) -> Result<Option<(Rid, Entry)>> {
    match read.entry(&Entry::path(namespace), key)? {
        None => Ok(None),
        Some(rid) => Ok(Some((rid, named_entry(read, &rid)?))),
    }
}

fn named_entry<R: Read>(read: &R, rid: &Rid) -> Result<Entry> {
    match read.get(rid)? {
        Some(Record::Entry(e)) => Ok(e),
        found => Err(ErrorKind::WrongKind {
            rid: *rid,
            want: Kind::Entry,
            found: found.map(|r| r.kind()),
        }
        .into()),
    }
}

/// Puts `value` (JSON text) under `namespace` and `key` at time `at` (milliseconds since the
/// Unix epoch), with `text` for search (`None`: not searchable), as a new version over the
/// key's current one; `value` `None` deletes the key. Deleting a key that holds nothing
/// appends nothing and returns `None`. The caller commits the batch.
pub fn put(
    batch: &mut Batch,
    namespace: &[String],
    key: &str,
    value: Option<String>,
    text: Option<String>,
    at: u64,
) -> Result<Option<(Appended, Entry)>> {
    if let Some(bad) = namespace
        .iter()
        .find(|l| l.is_empty() || l.contains(NAMESPACE_SEPARATOR))
    {
        return Err(ErrorKind::Invalid {
            kind: Kind::Entry,
            reason: format!("namespace label {bad:?} is empty or holds the character U+001F; give labels of other characters"),
        }
        .into());
    }
    let current = current(batch, namespace, key)?;
    let live = current.as_ref().filter(|(_, e)| e.value.is_some());
    if value.is_none() && live.is_none() {
        return Ok(None);
    }
    let entry = Entry {
        namespace: namespace.to_vec(),
        key: key.to_string(),
        text: text.filter(|_| value.is_some()),
        value,
        previous: current.as_ref().map(|(rid, _)| *rid),
        // A key put again after a deletion starts anew.
        created: live.map_or(at, |(_, e)| e.created.min(at)),
        at,
    };
    let appended = batch.append(entry.clone())?;
    Ok(Some((appended, entry)))
}

/// Every version of the entry at `namespace` and `key`, newest first (deletions included), at
/// most [`MAX_HISTORY`].
pub fn history<R: Read>(read: &R, namespace: &[String], key: &str) -> Result<Vec<(Rid, Entry)>> {
    let mut out = Vec::new();
    let mut next = read.entry(&Entry::path(namespace), key)?;
    while let Some(rid) = next {
        if out.len() == MAX_HISTORY {
            break;
        }
        let e = named_entry(read, &rid)?;
        next = e.previous;
        out.push((rid, e));
    }
    Ok(out)
}

/// The live entries (deletions left out) whose namespace starts with `prefix`, in (namespace,
/// key) order.
pub fn list<R: Read>(read: &R, prefix: &[String]) -> Result<Vec<(Rid, Entry)>> {
    let mut out = Vec::new();
    for (_, _, rid) in read.entries(&Entry::path(prefix))? {
        let e = named_entry(read, &rid)?;
        if e.value.is_some() {
            out.push((rid, e));
        }
    }
    Ok(out)
}

/// Every namespace that holds a live entry, in order, each once.
pub fn namespaces<R: Read>(read: &R) -> Result<Vec<Vec<String>>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for (_, e) in list(read, &[])? {
        if out.last() != Some(&e.namespace) {
            out.push(e.namespace);
        }
    }
    Ok(out)
}
