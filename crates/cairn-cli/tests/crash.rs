//! Process-level crashes: `cairn ingest --json -` killed with SIGKILL at random moments. After
//! each kill the ledger opens, verifies, and holds every line acknowledged on stdout.
//! `CAIRN_KILLS` sets the number of kills (default 50).

use crate::util::*;
use cairn::record::Rid;
use cairn::{Ledger, Read};
use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

#[test]
fn kill_9_loses_no_acknowledged_line() {
    let kills: u64 = std::env::var("CAIRN_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    kill_9_on(Tmp::new(), kills);
}

/// The same on a ledger in PostgreSQL: a writer killed mid-batch leaves its transaction rolled
/// back by the server (SPEC.md section 17). Fewer kills: every check derives the whole ledger.
#[test]
fn kill_9_loses_no_acknowledged_line_on_postgres() {
    kill_9_on(Tmp::postgres("crash_kill_9"), 12);
}

fn kill_9_on(t: Tmp, kills: u64) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let (mut acked_total, mut killed_mid_stream) = (0usize, 0usize);
    for k in 0..kills {
        let mut child = t.stream_ingest();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let writer = std::thread::spawn(move || {
            for j in 0..5_000u64 {
                let line = format!("{{\"kind\":\"span\",\"stream\":\"k{k}\",\"turn\":{j},\"role\":\"tool\",\"text\":\"output {k}/{j} {}\"}}\n", "x".repeat((j % 300) as usize));
                if stdin.write_all(line.as_bytes()).is_err() {
                    return;
                }
                if j % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        let reader = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    if let Some(r) = v["rid"].as_str() {
                        acked.push(r.parse::<Rid>().unwrap());
                    }
                }
            }
            acked
        });
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_millis(5 + x % 120));
        let still_running = child.try_wait().unwrap().is_none();
        killed_mid_stream += usize::from(still_running);
        let _ = child.kill();
        let _ = child.wait();
        let _ = writer.join();
        let acked = reader.join().unwrap();
        let ledger = Ledger::open_checked(t.db())
            .unwrap_or_else(|e| panic!("kill {k}: the ledger does not open: {e}"));
        let report = ledger.verify().unwrap();
        assert!(report.ok(), "kill {k}: {:?}", report.discrepancies.first());
        let snap = ledger.snapshot().unwrap();
        for rid in &acked {
            assert!(
                snap.index_of(rid).unwrap().is_some(),
                "kill {k}: acknowledged record {rid} was lost"
            );
        }
        acked_total += acked.len();
    }
    println!("{kills} kills ({killed_mid_stream} mid-stream), {acked_total} acknowledged lines, none lost");
    assert!(
        killed_mid_stream > kills as usize / 2,
        "most kills must land while the stream runs"
    );
}
