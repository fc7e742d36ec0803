//! Readers while a writer appends, and a second process that finds the ledger in use.

use crate::util::*;
use cairn::record::{Claim, Origin, Record, Rid, Role, Span};
use cairn::{Ledger, Read};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn planned(n: u64) -> Vec<(Record, bool)> {
    // (record, is an unanchored claim)
    let mut out = Vec::new();
    for i in 0..n {
        let span = Record::Span(Span {
            stream: "c".into(),
            turn: i,
            role: Role::Tool,
            tool: None,
            text: format!("line {i}"),
        });
        let rid = Rid::of_bytes(&cairn::record::encode(&span));
        out.push((span, false));
        let floating = i % 3 == 0;
        let witnesses = if floating { vec![] } else { vec![rid] };
        out.push((
            Record::Claim(Claim {
                stream: "c".into(),
                text: format!("claim {i}"),
                origin: Origin::Inferred,
                witnesses,
                actionable: false,
            }),
            floating,
        ));
    }
    out
}

#[test]
fn readers_see_prefixes_of_the_log_and_consistent_gate_answers() {
    let t = Tmp::new();
    let ledger = Arc::new(Ledger::open(t.db()).unwrap());
    let plan = Arc::new(planned(600));
    let rids: Arc<Vec<Rid>> = Arc::new(
        plan.iter()
            .map(|(r, _)| Rid::of_bytes(&cairn::record::encode(r)))
            .collect(),
    );
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let (ledger, plan, rids, done) =
                (ledger.clone(), plan.clone(), rids.clone(), done.clone());
            std::thread::spawn(move || {
                let mut checks = 0usize;
                while !done.load(Ordering::Acquire) || checks == 0 {
                    let snap = ledger.snapshot().unwrap();
                    let n = snap.len().unwrap() as usize;
                    for i in (0..n).step_by(37).chain(n.checked_sub(1)) {
                        assert_eq!(
                            snap.rid_at(i as u64).unwrap(),
                            Some(rids[i]),
                            "the snapshot is a prefix of the log"
                        );
                    }
                    let want = plan[..n].iter().filter(|(_, floating)| *floating).count();
                    assert_eq!(
                        snap.unanchored_claims().unwrap().len(),
                        want,
                        "gate answers as of {n} records"
                    );
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for chunk in plan.chunks(20) {
        let mut b = ledger.batch().unwrap();
        for (r, _) in chunk {
            b.append(r.clone()).unwrap();
        }
        b.commit().unwrap();
    }
    done.store(true, Ordering::Release);
    let checks: usize = readers.into_iter().map(|r| r.join().unwrap()).sum();
    println!(
        "8 readers made {checks} consistent snapshot checks while one writer appended {} records",
        plan.len()
    );
    assert!(checks >= 8);
}

#[test]
fn a_second_process_finds_the_ledger_locked() {
    let t = Tmp::new();
    let f = t.file("a.jsonl", LIBFOO.as_bytes());
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    // A writer that holds the ledger open, waiting on its standard input.
    let (mut holder, stdin) = hold_writer(&t, "held");
    let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is locked: another process has it open"),
        "{}",
        stderr(&o)
    );
    drop(stdin);
    assert!(holder.wait().unwrap().success());
    assert_eq!(code(&t.cairn(&["verify"], None)), 0, "nothing was damaged");
}

/// Issue 13, items 3 and 4: read commands changed the file's header bytes, `verify` turned an
/// empty file into a new ledger, and no second process could read while one wrote.
#[test]
fn read_commands_change_nothing_and_read_beside_a_writer() {
    let t = Tmp::new();
    let f = t.file("a.jsonl", LIBFOO.as_bytes());
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    let before = std::fs::read(t.db()).unwrap();
    let cp = t.file("cp", &t.cairn(&["checkpoint"], None).stdout);
    for cmd in [
        &["stats"][..],
        &["verify"][..],
        &["export"][..],
        &["export", "--format", "dot"][..],
        &["replay", "s1"][..],
        &["gates"][..],
        &["why", "prior:0", "--stream", "s1"][..],
        &["verify", "--against", cp.to_str().unwrap()][..],
        &["checkpoint"][..],
    ] {
        let o = t.cairn(cmd, None);
        assert!(code(&o) <= 1, "{cmd:?}: {}", stderr(&o));
        assert!(
            std::fs::read(t.db()).unwrap() == before,
            "{cmd:?} changed the file"
        );
    }
    // An empty file is not a ledger, and verifying it leaves it empty.
    let empty = t.file("empty.redb", b"");
    let o = run_cairn(&empty, &["verify"], None);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // A writer holds the ledger; readers in other processes read its committed state.
    let (mut holder, stdin) = hold_writer(&t, "held");
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let db = t.db();
            std::thread::spawn(move || run_cairn(&db, &["--json", "stats"], None))
        })
        .collect();
    for r in readers {
        let o = r.join().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // It sees the line the writer acknowledged.
        assert!(
            v["streams"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["stream"] == "h"),
            "{v}"
        );
    }
    // A second writer is still refused.
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 2);
    drop(stdin);
    assert!(holder.wait().unwrap().success());
    assert_eq!(code(&t.cairn(&["verify"], None)), 0);
}

/// A writer killed mid-session leaves the file needing recovery: a read command says so and
/// how to recover, changes nothing, and the next writer recovers it with nothing lost.
#[test]
fn a_ledger_left_by_a_crash_is_named_by_readers_and_recovered_by_the_next_writer() {
    let t = Tmp::new();
    let (mut holder, _stdin) = hold_writer(&t, "acknowledged");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let before = std::fs::read(t.db()).unwrap();
    let o = t.cairn(&["stats"], None);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("needs recovery") && stderr(&o).contains("recover"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read(t.db()).unwrap() == before,
        "the reader changed the file"
    );
    assert_eq!(code(&t.cairn(&["ingest", "/dev/null"], None)), 0);
    let o = t.cairn(&["export"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("acknowledged"),
        "the acknowledged line was kept"
    );
}

/// Starts `cairn ingest -` and feeds it one span line of stream `h`; returns once the line is
/// acknowledged, so the writer certainly holds the ledger open, with its standard input.
fn hold_writer(t: &Tmp, text: &str) -> (std::process::Child, std::process::ChildStdin) {
    let mut holder = t.stream_ingest();
    let mut stdin = holder.stdin.take().unwrap();
    let line = format!(
        "{{\"kind\":\"span\",\"stream\":\"h\",\"turn\":1,\"role\":\"user\",\"text\":{text:?}}}\n"
    );
    stdin.write_all(line.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut ack = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut ack)
        .unwrap();
    assert!(ack.contains("\"rid\""), "{ack}");
    (holder, stdin)
}
