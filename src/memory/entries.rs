//! An application's key-value store in the ledger (SPEC.md section 10d): entries under keys in
//! namespaces, as LangGraph's `BaseStore` keeps them. A put appends a new version that names the
//! one it replaces; a delete appends a tombstone; nothing is overwritten, so a key's history
//! stays. Entries are records of their own kind, in no stream: an agent's `context` and
//! `recall` never show them, only [`search`].

use crate::error::{ErrorKind, Result};
use crate::record::{Entry, Kind, Record, Rid};
use crate::store::{Appended, Batch, Read};
use crate::text::terms::{idf, occurrences, terms, weight};

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
/// key's current one; `value` `None` deletes the key. A namespace the record's rules refuse
/// (SPEC.md section 2.1) is refused at append. Deleting a key that holds nothing
/// appends nothing and returns `None`. The caller commits the batch.
pub fn put(
    batch: &mut Batch,
    namespace: &[String],
    key: &str,
    value: Option<String>,
    text: Option<String>,
    at: u64,
) -> Result<Option<(Appended, Entry)>> {
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

/// Every namespace that holds a live entry, in order, each once: a namespace's keys are read
/// until one is live.
pub fn namespaces<R: Read>(read: &R) -> Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut done: Option<String> = None;
    for (path, _, rid) in read.entries("")? {
        if done.as_deref() == Some(path.as_str()) {
            continue;
        }
        let e = named_entry(read, &rid)?;
        if e.value.is_some() {
            out.push(e.namespace);
            done = Some(path);
        }
    }
    Ok(out)
}

/// The live entries under the namespace `prefix` whose searchable text matches `query`, best
/// first, each with its score: BM25 as `recall` scores (its term weights, `idf` over the live
/// entries under the prefix), exact: every live entry under the prefix is read and scored, so
/// no entry that matches is missed however many versions or entries there are. Among equal
/// scores the later put first. At most `limit`.
pub fn search<R: Read>(
    read: &R,
    query: &str,
    prefix: &[String],
    limit: usize,
) -> Result<Vec<(Rid, Entry, f64)>> {
    let asked: Vec<String> = terms(query).0.into_iter().map(|(t, _)| t).collect();
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
    let mut counted = Vec::new();
    let mut df = vec![0u64; asked.len()];
    let mut texts = 0u64;
    for (rid, e) in list(read, prefix)? {
        let Some(text) = &e.text else { continue };
        texts += 1;
        let (tf, len) = occurrences(text, &asked);
        for (held, n) in df.iter_mut().zip(&tf) {
            *held += u64::from(*n > 0);
        }
        if tf.iter().any(|n| *n > 0) {
            counted.push((rid, e, tf, len));
        }
    }
    let mut scored: Vec<(Rid, Entry, f64)> = (counted.into_iter())
        .map(|(rid, e, tf, len)| {
            let score = (tf.iter().enumerate())
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| idf(texts, df[i]) * weight(*n, len))
                .sum::<f64>();
            (rid, e, score)
        })
        .collect();
    scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.1.at.cmp(&a.1.at)));
    scored.truncate(limit);
    Ok(scored)
}
