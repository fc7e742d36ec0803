//! Crash consistency through redb's `StorageBackend`: a backend that keeps the live image and
//! the durable image apart, and stops making writes durable at the N-th sync. For every sync
//! point of a scripted ingest (spans, claims, gated summaries, pins), the crash image opens,
//! verifies, holds every committed batch, and shows no partial batch. Then generated workloads,
//! with a crash after each of their writes.

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
    /// When logging: every write and length change, in order, so that the image after any
    /// prefix of them can be rebuilt (a crash at that write, the disk having kept the writes
    /// in order up to it).
    ops: Option<Vec<(u64, Option<Vec<u8>>)>>,
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
            ops: None,
        })))
    }

    /// A backend over a new file that logs its writes.
    fn logging() -> CrashBackend {
        let b = CrashBackend::new(usize::MAX, Vec::new());
        b.0.lock().unwrap().ops = Some(Vec::new());
        b
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
        let mut s = self.0.lock().unwrap();
        s.live.resize(len as usize, 0);
        if let Some(ops) = &mut s.ops {
            ops.push((len, None));
        }
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
        if let Some(ops) = &mut s.ops {
            ops.push((offset, Some(data.to_vec())));
        }
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

/// How many writes and length changes a logging backend has seen.
fn ops_len(log: &Arc<Mutex<Images>>) -> usize {
    log.lock().unwrap().ops.as_ref().map_or(0, Vec::len)
}

/// The image after the first `k` operations of a log.
fn image_at(ops: &[(u64, Option<Vec<u8>>)], k: usize) -> Vec<u8> {
    let mut img = Vec::new();
    for (at, data) in &ops[..k] {
        match data {
            None => img.resize(*at as usize, 0),
            Some(d) => {
                let o = *at as usize;
                if img.len() < o + d.len() {
                    img.resize(o + d.len(), 0);
                }
                img[o..o + d.len()].copy_from_slice(d);
            }
        }
    }
    img
}

/// One batch of a generated workload: spans, then claims on them, then maybe a summary.
#[derive(Debug, Clone)]
struct Step {
    spans: u8,
    claims: u8,
    summary: bool,
}

fn steps() -> impl proptest::strategy::Strategy<Value = Vec<Step>> {
    use proptest::prelude::*;
    prop::collection::vec(
        (1..4u8, 0..3u8, any::<bool>()).prop_map(|(spans, claims, summary)| Step {
            spans,
            claims,
            summary,
        }),
        2..6,
    )
}

/// Runs a generated workload; returns for each batch the operation count when its commit
/// returned and the log size after it.
fn run_steps(ledger: &Ledger, log: &Arc<Mutex<Images>>, steps: &[Step]) -> Vec<(usize, u64)> {
    let gate = Gatekeeper::default();
    let mut done = Vec::new();
    let mut turn = 0u64;
    let mut window = Vec::new();
    for step in steps {
        let mut b = ledger.batch().unwrap();
        for _ in 0..step.spans {
            turn += 1;
            let s = span(
                "g",
                turn,
                &format!("node {turn} keeps {} entries", turn * 7),
            );
            window.push(b.append(s).unwrap().rid);
        }
        let mut claims = Vec::new();
        for i in 0..step.claims {
            let w = window[(turn as usize + i as usize) % window.len()];
            let c = Claim {
                stream: "g".into(),
                text: format!("node {turn} keeps entries ({i})"),
                origin: Origin::Inferred,
                witnesses: vec![w],
                actionable: false,
            };
            claims.push(b.append(c).unwrap().rid);
        }
        if step.summary {
            claims.sort();
            claims.dedup();
            let s = Summary {
                stream: "g".into(),
                parent: b.head("g").unwrap(),
                author: Author::SelfAuthored,
                budget: 1000,
                covers: window.clone(),
                evicts: window[..window.len() / 2].to_vec(),
                claims,
                self_score: Some(9000),
                reground: false,
            };
            gate.propose_summary(&mut b, s).unwrap();
            window.clear();
        }
        b.commit().unwrap();
        done.push((ops_len(log), ledger.len().unwrap()));
    }
    done
}

/// Crash points at scale: generated workloads, a crash after every write of each, counted.
#[test]
fn a_crash_at_any_write_of_generated_workloads_keeps_committed_batches_whole() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config::default());
    let (mut points, mut workloads) = (0usize, 0usize);
    while points < 1_000 {
        let steps = steps().new_tree(&mut runner).unwrap().current();
        let backend = CrashBackend::logging();
        let log = backend.0.clone();
        let ledger = Ledger::with_storage(backend).unwrap();
        let created = ops_len(&log);
        let done = run_steps(&ledger, &log, &steps);
        let expected: Vec<(Rid, Record)> = {
            let snap = ledger.snapshot().unwrap();
            (0..snap.len().unwrap())
                .map(|i| snap.record_at(i).unwrap().unwrap())
                .collect()
        };
        drop(ledger);
        let ops = log.lock().unwrap().ops.take().unwrap_or_default();
        workloads += 1;
        for k in created..=ops.len() {
            let image = image_at(&ops, k);
            let reopened = Ledger::with_storage(CrashBackend::new(usize::MAX, image))
                .unwrap_or_else(|e| panic!("{steps:?}, write {k}: the image does not open: {e}"));
            let report = reopened.verify().unwrap();
            assert!(
                report.ok(),
                "{steps:?}, write {k}: {:?}",
                report.discrepancies.first()
            );
            let n = reopened.len().unwrap();
            // Every batch whose commit returned is whole; the one being committed, if any, is
            // whole or absent; nothing else shows.
            let committed = done.iter().filter(|(ops, _)| *ops <= k).count();
            let at = |i: usize| if i == 0 { 0 } else { done[i - 1].1 };
            let next = if committed < done.len() {
                at(committed + 1)
            } else {
                at(committed)
            };
            assert!(
                n == at(committed) || n == next,
                "{steps:?}, write {k}: {n} records, expected {} or {next}",
                at(committed)
            );
            let snap = reopened.snapshot().unwrap();
            for (i, (r, record)) in expected.iter().take(n as usize).enumerate() {
                assert_eq!(
                    snap.record_at(i as u64).unwrap().as_ref(),
                    Some(&(*r, record.clone())),
                    "{steps:?}, write {k}: record {i}"
                );
            }
            points += 1;
        }
    }
    println!("{points} crash points checked (a crash after each write) over {workloads} generated workloads");
    assert!(points >= 1_000);
}
