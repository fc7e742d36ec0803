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

/// The read commands of issue 22, row 12, with the arguments they are run with.
const READS: &[(&str, &[&str])] = &[
    ("stats", &["--json", "stats"]),
    ("context", &["context", "migration"]),
    ("recall", &["recall", "DROP TABLE orders"]),
    ("why", &["why", "prior:0", "--stream", "staging"]),
    ("export", &["export"]),
    ("replay", &["replay", "staging"]),
];

/// Runs a read command on `db`: its exit code and its output, with the ledger's path (which
/// `stats` prints) written as LEDGER.
fn read_as(db: &std::path::Path, args: &[&str]) -> (i32, Vec<u8>) {
    let o = run_cairn(db, args, None);
    let path = db.display().to_string();
    let out = String::from_utf8_lossy(&o.stdout).replace(&path, "LEDGER");
    (code(&o), out.into_bytes())
}

/// Issue 22, row 12: on a committed corpus of 1,500 single-bit flips of the demo ledger
/// (`tests/data/flips`), each read command either exits 3 or prints exactly what it prints on
/// the clean ledger. Prints the tally.
#[test]
fn every_read_of_a_flipped_demo_ledger_exits_3_or_reads_as_the_clean_one() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flips");
    let pristine = std::fs::read(data.join("demo.redb")).unwrap();
    let flips: Vec<(usize, u8)> = std::fs::read_to_string(data.join("flips.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut p = l.split_whitespace().map(|x| x.parse::<usize>().unwrap());
            (p.next().unwrap(), p.next().unwrap() as u8)
        })
        .collect();
    assert!(flips.len() >= 1_500);
    let t = Tmp::new();
    let clean_db = t.dir.path().join("clean.redb");
    std::fs::write(&clean_db, &pristine).unwrap();
    let clean: Vec<(i32, Vec<u8>)> = READS.iter().map(|(_, a)| read_as(&clean_db, a)).collect();
    assert!(clean.iter().all(|(c, _)| *c == 0), "the clean ledger reads");
    let workers = 4;
    let results: Vec<Vec<(usize, &str, i32, bool)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (flips, pristine, clean, dir) = (&flips, &pristine, &clean, t.dir.path());
                s.spawn(move || {
                    let db = dir.join(format!("flipped-{w}.redb"));
                    let mut out = Vec::new();
                    for (i, (offset, bit)) in flips.iter().enumerate().skip(w).step_by(workers) {
                        let mut bytes = pristine.clone();
                        bytes[*offset] ^= 1 << bit;
                        std::fs::write(&db, &bytes).unwrap();
                        for ((name, args), (clean_code, clean_out)) in READS.iter().zip(clean) {
                            let (c, o) = read_as(&db, args);
                            let same = c == *clean_code && o == *clean_out;
                            out.push((i, *name, c, same));
                        }
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut bad = Vec::new();
    for (name, _) in READS {
        let (mut same, mut caught) = (0, 0);
        for (i, n, c, s) in results.iter().flatten().filter(|r| r.1 == *name) {
            match (c, s) {
                (_, true) => same += 1,
                (3, false) => caught += 1,
                _ => bad.push(format!(
                    "flip {i} {:?}: {n} exits {c} with other output",
                    flips[*i]
                )),
            }
        }
        println!("{name}: {same} as on the clean ledger, {caught} exit 3");
    }
    assert!(
        bad.is_empty(),
        "{} reads presented damage as valid: {bad:#?}",
        bad.len()
    );
}

/// Issue 22, row 11: a flipped bit in a table's length made `verify` ask for terabytes and
/// abort (SIGABRT); one in a text key made `stats` and `why` report a caught `unwrap`. Each now
/// exits 3 with a sentence.
#[test]
fn a_flipped_length_or_text_key_is_exit_3_with_a_sentence() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flips");
    // The demo ledger these offsets were found in: written before the recall index's blocks
    // (issue 25), kept as it was so that the offsets still name the same bytes.
    let pristine = std::fs::read(data.join("demo-v1.redb")).unwrap();
    let t = Tmp::new();
    let db = t.dir.path().join("flipped.redb");
    let flipped = |offset: usize, bit: u8| {
        let mut bytes = pristine.clone();
        bytes[offset] ^= 1 << bit;
        std::fs::write(&db, &bytes).unwrap();
    };
    // Found by running 7da6f49's `verify` on flips of this file: it aborted on this one.
    flipped(148_758, 6);
    let o = run_cairn(&db, &["verify"], None);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(!stderr(&o).contains("memory allocation"), "{}", stderr(&o));
    flipped(57_352, 7);
    for args in [&["stats"][..], &["why", "prior:0", "--stream", "staging"]] {
        let o = run_cairn(&db, args, None);
        assert_eq!(code(&o), 3, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is damaged") && stderr(&o).contains("not valid UTF-8"),
            "{}",
            stderr(&o)
        );
    }
    // Near miss: the clean file verifies and reads.
    std::fs::write(&db, &pristine).unwrap();
    assert_eq!(code(&run_cairn(&db, &["verify"], None)), 0);
    assert_eq!(code(&run_cairn(&db, &["stats"], None)), 0);
}
