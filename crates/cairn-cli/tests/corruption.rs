//! Bit flips at random offsets of a ledger file: each is harmless, or reported at open or by
//! `verify` as an integrity failure; never a panic, and never damaged data presented as valid.
//! `CAIRN_FLIPS` sets the number of trials (default 1,000).

use crate::util::*;
use cairn::record::Rid;
use cairn::{Ledger, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Debug, Default)]
struct Tally {
    harmless: usize,
    at_open: usize,
    by_verify: usize,
    verify_error: usize,
}

fn records(l: &Ledger) -> Result<Vec<(Rid, Vec<u8>)>, cairn::Error> {
    let snap = l.snapshot()?;
    let mut out = Vec::new();
    for i in 0..snap.len()? {
        out.push((
            snap.rid_at(i)?.unwrap_or(Rid([0; 32])),
            snap.bytes_at(i)?.unwrap_or_default(),
        ));
    }
    Ok(out)
}

#[test]
fn every_flip_is_harmless_or_caught_and_none_panics() {
    let t = Tmp::new();
    assert_eq!(code(&t.cairn(&["demo"], None)), 0);
    let pristine_file = std::fs::read(t.db()).unwrap();
    let pristine = records(&Ledger::open(t.db()).unwrap()).unwrap();
    let trials: usize = std::env::var("CAIRN_FLIPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let path = t.dir.path().join("flipped.redb");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut tally = Tally::default();
    for trial in 0..trials {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let offset = (x % pristine_file.len() as u64) as usize;
        let bit = (x >> 40) % 8;
        let mut bytes = pristine_file.clone();
        bytes[offset] ^= 1 << bit;
        std::fs::write(&path, &bytes).unwrap();
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<&'static str, String> {
            let ledger = match Ledger::open_checked(&path) {
                Err(e) if e.is_integrity() => return Ok("at_open"),
                Err(e) => return Err(format!("open failed without an integrity error: {e}")),
                Ok(l) => l,
            };
            match ledger.verify() {
                Err(e) if e.is_integrity() => Ok("verify_error"),
                Err(e) => Err(format!("verify failed without an integrity error: {e}")),
                Ok(r) if !r.ok() => Ok("by_verify"),
                Ok(_) => match records(&ledger) {
                    Ok(now) if now == pristine => Ok("harmless"),
                    Ok(_) => Err(
                        "verify passed but the records differ: damage presented as valid".into(),
                    ),
                    Err(e) if e.is_integrity() => Ok("verify_error"),
                    Err(e) => Err(format!("reading failed without an integrity error: {e}")),
                },
            }
        }));
        match outcome {
            Ok(Ok("harmless")) => tally.harmless += 1,
            Ok(Ok("at_open")) => tally.at_open += 1,
            Ok(Ok("by_verify")) => tally.by_verify += 1,
            Ok(Ok(_)) => tally.verify_error += 1,
            Ok(Err(why)) => panic!("trial {trial}, byte {offset} bit {bit}: {why}"),
            Err(_) => panic!("trial {trial}, byte {offset} bit {bit}: a panic"),
        }
    }
    println!(
        "{trials} flips of a {}-byte ledger: {tally:?}",
        pristine_file.len()
    );
    assert_eq!(
        tally.harmless + tally.at_open + tally.by_verify + tally.verify_error,
        trials
    );
    assert!(
        tally.at_open + tally.by_verify + tally.verify_error > 0,
        "some flips must be caught"
    );
}
