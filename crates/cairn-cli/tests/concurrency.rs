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
    let mut holder = t.stream_ingest();
    // Once it acknowledges a line, it certainly holds the ledger open.
    let mut stdin = holder.stdin.take().unwrap();
    stdin.write_all(b"{\"kind\":\"span\",\"stream\":\"h\",\"turn\":1,\"role\":\"user\",\"text\":\"held\"}\n").unwrap();
    stdin.flush().unwrap();
    let mut ack = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut ack)
        .unwrap();
    assert!(ack.contains("\"rid\""), "{ack}");
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
