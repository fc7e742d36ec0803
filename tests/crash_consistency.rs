//! Crash consistency through redb's `StorageBackend`: a backend that keeps the live image and
//! the durable image apart, and stops making writes durable at the N-th sync. For every sync
//! point of a scripted ingest (spans, claims, gated summaries, pins), the crash image opens,
//! verifies, holds every committed batch, and shows no partial batch.

use crate::util::span;
use cairn::gate::Gatekeeper;
use cairn::record::*;
use cairn::{Ledger, Read};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Images {
    live: Vec<u8>,
    durable: Vec<u8>,
    syncs: usize,
    freeze_at: usize,
}

#[derive(Debug, Clone)]
struct CrashBackend(Arc<Mutex<Images>>);

impl CrashBackend {
    fn new(freeze_at: usize, image: Vec<u8>) -> CrashBackend {
        CrashBackend(Arc::new(Mutex::new(Images {
            durable: image.clone(),
            live: image,
            syncs: 0,
            freeze_at,
        })))
    }
}

impl cairn::Storage for CrashBackend {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.0.lock().unwrap().live.len() as u64)
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        let s = self.0.lock().unwrap();
        let o = offset as usize;
        let src = s.live.get(o..o + out.len()).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past the end")
        })?;
        out.copy_from_slice(src);
        Ok(())
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.lock().unwrap().live.resize(len as usize, 0);
        Ok(())
    }
    fn sync_data(&self) -> std::io::Result<()> {
        let mut s = self.0.lock().unwrap();
        s.syncs += 1;
        if s.syncs < s.freeze_at {
            s.durable = s.live.clone();
        }
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let mut s = self.0.lock().unwrap();
        let o = offset as usize;
        if s.live.len() < o + data.len() {
            s.live.resize(o + data.len(), 0);
        }
        s.live[o..o + data.len()].copy_from_slice(data);
        Ok(())
    }
}

/// The scripted ingest: batches committed one after another. Returns, for each batch, the
/// sync count when its commit returned, and the log size after it.
fn script(ledger: &Ledger, images: &Arc<Mutex<Images>>) -> Vec<(usize, u64)> {
    let gate = Gatekeeper::default();
    let mut done = Vec::new();
    let mut commit = |b: cairn::Batch| {
        b.commit().unwrap();
        done.push((images.lock().unwrap().syncs, ledger.len().unwrap()));
    };
    let texts = [
        "we are still on libfoo 2.3.1, do not bump.",
        "I think the staging DB is on port 5433.",
        "refactor the client",
        "tests pass: 148 passed",
    ];
    for round in 0..4u64 {
        let mut b = ledger.batch().unwrap();
        let mut spans = Vec::new();
        for k in 0..5 {
            let s = span("s", round * 10 + k, texts[(k % 4) as usize]);
            spans.push(b.append(s).unwrap().rid);
        }
        commit(b);
        let mut b = ledger.batch().unwrap();
        if round == 0 {
            let pin = Pin {
                stream: "s".into(),
                name: "c".into(),
                items: vec![PinItem {
                    class: PinClass::Prohibition,
                    text: "do not bump libfoo".into(),
                    witness: Some(spans[0]),
                }],
            };
            b.append(pin).unwrap();
        }
        let claim = Claim {
            stream: "s".into(),
            text: format!("round {round}: libfoo stays at 2.3.1"),
            origin: Origin::UserSaid,
            witnesses: vec![spans[0]],
            actionable: true,
        };
        let c = b.append(claim).unwrap().rid;
        let s = Summary {
            stream: "s".into(),
            parent: b.head("s").unwrap(),
            author: Author::SelfAuthored,
            budget: 1000,
            covers: spans.clone(),
            evicts: spans[1..3].to_vec(),
            claims: vec![c],
            self_score: Some(9000),
            reground: round == 3,
        };
        gate.propose_summary(&mut b, s).unwrap();
        commit(b);
    }
    done
}

#[test]
fn every_sync_point_leaves_a_consistent_ledger() {
    // A dry run counts the sync points and the log size after each batch.
    let probe = CrashBackend::new(usize::MAX, Vec::new());
    let images = probe.0.clone();
    let ledger = Ledger::with_storage(probe).unwrap();
    let init_syncs = images.lock().unwrap().syncs;
    let done = script(&ledger, &images);
    let expected: Vec<(Rid, Record)> = {
        let snap = ledger.snapshot().unwrap();
        (0..snap.len().unwrap())
            .map(|i| snap.record_at(i).unwrap().unwrap())
            .collect()
    };
    let total = images.lock().unwrap().syncs;
    drop(ledger);
    let sizes: Vec<u64> = done.iter().map(|d| d.1).collect();
    assert!(total >= sizes.len(), "{total} syncs");
    let mut checked = 0;
    for freeze_at in 1..=total + 1 {
        let backend = CrashBackend::new(freeze_at, Vec::new());
        let images = backend.0.clone();
        let ledger = Ledger::with_storage(backend).unwrap();
        let _ = script(&ledger, &images);
        drop(ledger);
        let crash = images.lock().unwrap().durable.clone();
        if crash.is_empty() {
            continue; // nothing was ever durable: there is no file to reopen
        }
        let durable_batches = done.iter().filter(|(syncs, _)| *syncs < freeze_at).count();
        let reopened = match Ledger::with_storage(CrashBackend::new(usize::MAX, crash)) {
            Ok(l) => l,
            // A crash while the file itself was being created, before its first commit: no
            // batch was acknowledged, and `Ledger::open` creates files under a temporary name,
            // so a real path never holds such an image.
            Err(e) if durable_batches == 0 && freeze_at <= init_syncs => {
                assert!(e.is_integrity(), "sync {freeze_at}: {e}");
                continue;
            }
            Err(e) => panic!("sync {freeze_at}: the crash image does not open: {e}"),
        };
        let report = reopened.verify().unwrap();
        assert!(
            report.ok(),
            "sync {freeze_at}: {:?}",
            report.discrepancies.first()
        );
        let n = reopened.len().unwrap();
        // Every batch whose commit returned before the frozen sync is durable, and nothing
        // else is: the log ends exactly at a batch boundary.
        let want = if durable_batches == 0 {
            0
        } else {
            sizes[durable_batches - 1]
        };
        assert_eq!(
            n, want,
            "sync {freeze_at}: {n} records, expected {want} (batches end at {sizes:?})"
        );
        let snap = reopened.snapshot().unwrap();
        for (i, (r, record)) in expected.iter().take(n as usize).enumerate() {
            assert_eq!(
                snap.record_at(i as u64).unwrap().as_ref(),
                Some(&(*r, record.clone())),
                "sync {freeze_at}: record {i}"
            );
        }
        checked += 1;
    }
    println!("{checked} crash points checked out of {} syncs", total + 1);
    assert!(checked >= sizes.len());
}
