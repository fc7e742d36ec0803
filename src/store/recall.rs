//! The recall index's writes (SPEC.md section 10b): a batch gathers the postings of the texts
//! it appends and writes them at commit, or whenever [`FLUSH_AT`] are waiting, as one block
//! per term and weight band (a segment of the index, as Lucene and FTS5 write one per flush),
//! with one update of each term's count. Written one B-tree entry per posting, a span's
//! fifty-odd postings cost most of an append and most of the file; a block holds a batch's
//! postings of a term in three bytes each.
//!
//! Within a term, postings are ordered by weight band (sixteen), then by log index, so that
//! appends land at the end of a band; a query reads the heaviest band first.
//!
//! Terms and streams are numbered in the order they first appear in the log (the order texts
//! are gathered, whatever the batches), so that postings are small fixed-width keys and a
//! ledger rebuilt in one batch by `verify` numbers them as the ledger written in many did.

use super::rows::Tables;
use super::tables::{RECALL, RECALL_STREAMS, RECALL_STREAM_IDS, TERMS};
use crate::error::{ErrorKind, Result};
use crate::record::Record;
use crate::text::terms::{quantize, terms, weight};
use redb::{ReadableTable, ReadableTableMetadata};
use std::collections::HashMap;

/// Postings a batch holds before it writes them: bounded, so a huge ingest in one
/// transaction stays in bounded memory.
pub(super) const FLUSH_AT: usize = 200_000;

/// The band of a quantised weight: sixteen bands over its range. Postings are keyed by band,
/// not by weight, so that a batch's postings of a term land at the end of a few bands (the
/// log index grows) instead of all over the term's list: a batch writes near as many B-tree
/// pages as it has distinct terms, not as it has postings.
pub(crate) fn band(weight: u16) -> u8 {
    (weight >> 12) as u8
}

/// Postings waiting to be written: (stream number, term number, weight, log index), numbers
/// local to the buffer, in first-seen order.
#[derive(Default)]
pub(super) struct Pending {
    streams: Vec<String>,
    stream_numbers: HashMap<String, u32>,
    terms: Vec<String>,
    term_numbers: HashMap<String, u32>,
    /// Texts holding each term, by local term number.
    texts_with: Vec<u64>,
    postings: Vec<(u32, u32, u16, u64)>,
    texts: u64,
}

/// The local number of `name` in `names`, given on first sight.
fn number(names: &mut Vec<String>, numbers: &mut HashMap<String, u32>, name: &str) -> u32 {
    if let Some(&n) = numbers.get(name) {
        return n;
    }
    let n = names.len() as u32;
    names.push(name.to_string());
    numbers.insert(name.to_string(), n);
    n
}

impl Pending {
    /// Gathers the postings of a span's or a claim's text; other records have none.
    pub(super) fn add(&mut self, record: &Record, index: u64) {
        let (stream, text) = match record {
            Record::Span(s) => (&s.stream, &s.text),
            Record::Claim(c) => (&c.stream, &c.text),
            _ => return,
        };
        let s = number(&mut self.streams, &mut self.stream_numbers, stream);
        let (found, len) = terms(text);
        for (term, tf) in found {
            let t = number(&mut self.terms, &mut self.term_numbers, &term);
            if t as usize == self.texts_with.len() {
                self.texts_with.push(0);
            }
            self.texts_with[t as usize] += 1;
            self.postings.push((s, t, quantize(weight(tf, len)), index));
        }
        self.texts += 1;
    }

    /// Whether enough postings wait to be written now.
    pub(super) fn full(&self) -> bool {
        self.postings.len() >= FLUSH_AT
    }

    /// Writes the waiting postings in key order, and each term's count once.
    pub(super) fn flush(&mut self, txn: Tables<'_>) -> Result<()> {
        if self.texts == 0 {
            return Ok(());
        }
        // Ledger-wide ids, new ones given in first-seen order.
        let mut term_ids = Vec::with_capacity(self.terms.len());
        {
            let mut table = txn.table(TERMS)?;
            let (_, texts) = table.get("")?.map_or((0, 0), |g| g.value());
            table.insert("", (0, texts + self.texts))?;
            for (term, n) in self.terms.iter().zip(&self.texts_with) {
                let known = table.get(term.as_str())?.map(|g| g.value());
                let (id, df) = match known {
                    Some(v) => v,
                    None => (table.len()? as u32, 0),
                };
                table.insert(term.as_str(), (id, df + n))?;
                term_ids.push(id);
            }
        }
        let mut stream_ids = Vec::with_capacity(self.streams.len());
        {
            let mut table = txn.table(RECALL_STREAM_IDS)?;
            for stream in &self.streams {
                let known = table.get(stream.as_str())?.map(|g| g.value());
                let id = match known {
                    Some(id) => id,
                    None => {
                        let id = table.len()? as u32;
                        table.insert(stream.as_str(), id)?;
                        id
                    }
                };
                stream_ids.push(id);
            }
        }
        let mut p: Vec<(u32, u32, u16, u64)> = std::mem::take(&mut self.postings)
            .into_iter()
            .map(|(s, t, w, i)| (stream_ids[s as usize], term_ids[t as usize], w, i))
            .collect();
        p.sort_unstable_by_key(|&(_, t, w, i)| (t, band(w), i));
        {
            let mut all = txn.table(RECALL)?;
            for run in p.chunk_by(|a, b| (a.1, band(a.2)) == (b.1, band(b.2))) {
                let (_, t, w, first) = run[0];
                let block = Block::encode(first, run.iter().map(|&(_, _, w, i)| (i, w)));
                all.insert((t, band(w), first), block.as_slice())?;
            }
        }
        p.sort_unstable_by_key(|&(s, t, w, i)| (s, t, band(w), i));
        {
            let mut own = txn.table(RECALL_STREAMS)?;
            let key = |x: &(u32, u32, u16, u64)| (x.0, x.1, band(x.2));
            for run in p.chunk_by(|a, b| key(a) == key(b)) {
                let (s, t, w, first) = run[0];
                let block = Block::encode(first, run.iter().map(|&(_, _, w, i)| (i, w)));
                own.insert((s, t, band(w), first), block.as_slice())?;
            }
        }
        *self = Pending::default();
        Ok(())
    }
}

/// A block of postings: for each, in log order, the distance of its log index from the one
/// before (from the key's first index for the first, so 0) as a LEB128 varint, then its
/// weight, two bytes little-endian. A batch's postings of a term are a few log indexes
/// apart, so a posting takes three or four bytes.
pub(crate) struct Block;

impl Block {
    /// The bytes of `postings` (log index, weight), in log order, starting at `first`.
    pub(crate) fn encode(first: u64, postings: impl Iterator<Item = (u64, u16)>) -> Vec<u8> {
        let mut out = Vec::new();
        let mut last = first;
        for (index, weight) in postings {
            let mut gap = index - last;
            last = index;
            loop {
                let byte = (gap & 0x7f) as u8;
                gap >>= 7;
                if gap == 0 {
                    out.push(byte);
                    break;
                }
                out.push(byte | 0x80);
            }
            out.extend_from_slice(&weight.to_le_bytes());
        }
        out
    }

    /// The postings (log index, weight) of a block whose first index is `first`, in log order;
    /// a block that does not decode is a damaged file.
    pub(crate) fn decode(first: u64, bytes: &[u8]) -> Result<Vec<(u64, u16)>> {
        let damaged = || -> crate::error::Error {
            ErrorKind::CorruptFile {
                path: "recall table".into(),
                detail: format!("the block of postings from log index {first} does not decode"),
            }
            .into()
        };
        let mut out = Vec::with_capacity(bytes.len() / 3);
        let (mut at, mut last) = (0usize, first);
        while at < bytes.len() {
            let mut gap = 0u64;
            let mut shift = 0u32;
            loop {
                let byte = *bytes.get(at).ok_or_else(damaged)?;
                at += 1;
                if shift > 63 {
                    return Err(damaged());
                }
                gap |= u64::from(byte & 0x7f) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    break;
                }
            }
            let w = bytes.get(at..at + 2).ok_or_else(damaged)?;
            at += 2;
            last = last.checked_add(gap).ok_or_else(damaged)?;
            out.push((last, u16::from_le_bytes([w[0], w[1]])));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Block;

    #[test]
    fn a_block_decodes_to_its_postings_and_a_cut_one_is_damaged() {
        let postings = [(1_000, 7u16), (1_003, 65_535), (1_300, 0), (90_000_000, 12)];
        let bytes = Block::encode(1_000, postings.iter().copied());
        assert_eq!(Block::decode(1_000, &bytes).unwrap(), postings);
        assert!(Block::decode(1_000, &bytes[..bytes.len() - 1]).is_err());
        assert!(Block::decode(1_000, &[0x80; 12]).is_err());
        assert_eq!(Block::decode(5, &[]).unwrap(), []);
    }
}
