//! The recall index's writes (SPEC.md section 10b): a batch gathers the postings of the texts
//! it appends and writes them in key order, at commit or whenever [`FLUSH_AT`] are waiting,
//! with one update of each term's count. Written one by one, a span's fifty-odd postings land
//! at fifty places of two B-trees and cost most of an append; sorted, they land side by side.

use super::tables::{RECALL, RECALL_STREAMS, TERMS};
use crate::error::Result;
use crate::record::Record;
use crate::text::terms::{quantize, terms, weight};
use redb::{ReadableTable, WriteTransaction};
use std::collections::HashMap;

/// Postings a batch holds before it writes them: bounded, so a huge ingest in one
/// transaction stays in bounded memory.
pub(super) const FLUSH_AT: usize = 200_000;

/// Postings waiting to be written: (stream number, term, weight, log index).
#[derive(Default)]
pub(super) struct Pending {
    streams: Vec<String>,
    numbers: HashMap<String, u32>,
    postings: Vec<(u32, String, u16, u64)>,
    texts_with: HashMap<String, u64>,
    texts: u64,
}

impl Pending {
    /// Gathers the postings of a span's or a claim's text; other records have none.
    pub(super) fn add(&mut self, record: &Record, index: u64) {
        let (stream, text) = match record {
            Record::Span(s) => (&s.stream, &s.text),
            Record::Claim(c) => (&c.stream, &c.text),
            _ => return,
        };
        let number = match self.numbers.get(stream) {
            Some(&n) => n,
            None => {
                let n = self.streams.len() as u32;
                self.streams.push(stream.clone());
                self.numbers.insert(stream.clone(), n);
                n
            }
        };
        let (terms, len) = terms(text);
        for (term, tf) in terms {
            *self.texts_with.entry(term.clone()).or_default() += 1;
            self.postings
                .push((number, term, quantize(weight(tf, len)), index));
        }
        self.texts += 1;
    }

    /// Whether enough postings wait to be written now.
    pub(super) fn full(&self) -> bool {
        self.postings.len() >= FLUSH_AT
    }

    /// Writes the waiting postings in key order, and each term's count once.
    pub(super) fn flush(&mut self, txn: &WriteTransaction) -> Result<()> {
        if self.texts == 0 {
            return Ok(());
        }
        let mut p = std::mem::take(&mut self.postings);
        p.sort_unstable_by(|a, b| (&a.1, a.2, a.3).cmp(&(&b.1, b.2, b.3)));
        {
            let mut all = txn.open_table(RECALL)?;
            for (_, term, w, index) in &p {
                all.insert((term.as_str(), *w, *index), ())?;
            }
        }
        let streams = &self.streams;
        p.sort_unstable_by(|a, b| {
            (&streams[a.0 as usize], &a.1, a.2, a.3).cmp(&(&streams[b.0 as usize], &b.1, b.2, b.3))
        });
        {
            let mut own = txn.open_table(RECALL_STREAMS)?;
            for (s, term, w, index) in &p {
                own.insert(
                    (streams[*s as usize].as_str(), term.as_str(), *w, *index),
                    (),
                )?;
            }
        }
        let mut counts: Vec<(String, u64)> = self.texts_with.drain().collect();
        counts.push((String::new(), self.texts));
        counts.sort_unstable();
        let mut table = txn.open_table(TERMS)?;
        for (term, n) in counts {
            let old = table.get(term.as_str())?.map_or(0, |g| g.value());
            table.insert(term.as_str(), old + n)?;
        }
        self.texts = 0;
        self.streams.clear();
        self.numbers.clear();
        Ok(())
    }
}
