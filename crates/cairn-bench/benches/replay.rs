//! Forensic replay figures: `why` at chain depth 6, the HTML report of a 1,000-turn stream
//! (size, build time, and render time in headless Chromium where it is installed), and `why`
//! and the report on a chain of claims 100,000 deep (time and peak memory).
//! Run with `cargo bench -p cairn-bench --bench replay`.

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
use cairn::record::{Author, Claim, Origin, Rid, Role, Span, Summary};
use cairn::{Ledger, Read};
use std::time::Instant;

fn main() {
    let ledger = Ledger::in_memory().expect("ledger");
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().expect("batch");
    let mut window: Vec<(Rid, String)> = Vec::new();
    let mut parent = None;
    let mut carried: Vec<Rid> = Vec::new();
    let mut admitted = 0;
    for turn in 0..1000u64 {
        let (role, t) = cairn_bench::turn_text(1, turn);
        let tool = (role == cairn::record::Role::Tool).then(|| "shell".to_string());
        let rid = b
            .append(Span {
                stream: "s".into(),
                turn,
                role,
                tool,
                text: t.clone(),
            })
            .expect("span")
            .rid;
        window.push((rid, t));
        if turn % 40 == 39 {
            let items = unpinned_items(&b, "s").expect("classify");
            if !items.is_empty() {
                b.append(pin_of("s", &format!("auto-{turn}"), &items))
                    .expect("pin");
            }
            let mut claims = carried.clone();
            for (span, t) in window.iter().step_by(2) {
                let words: Vec<&str> = t.split_whitespace().take(9).collect();
                let c = Claim {
                    stream: "s".into(),
                    text: words.join(" "),
                    origin: Origin::Inferred,
                    witnesses: vec![*span],
                    actionable: false,
                };
                claims.push(b.append(c).expect("claim").rid);
            }
            claims.sort();
            claims.dedup();
            let s = Summary {
                stream: "s".into(),
                parent,
                author: if turn % 160 == 159 {
                    Author::Separate
                } else {
                    Author::SelfAuthored
                },
                budget: 4000,
                covers: window.iter().map(|w| w.0).collect(),
                evicts: window.iter().map(|w| w.0).collect(),
                claims: claims.clone(),
                self_score: Some(8500 + (turn % 7) as u16 * 150),
                reground: true,
            };
            let o = gate.propose_summary(&mut b, s).expect("gate");
            // A refused proposal's repair, when admitted, is the head the next one follows.
            parent = cairn::Read::head(&b, "s").expect("head");
            if o.admitted {
                admitted += 1;
                carried = claims.into_iter().take(5).collect();
            }
            window.clear();
        }
    }
    // A chain of claims six deep above one raw span.
    let (span, _) = (b.turn("s", 999).expect("turn").expect("span"), ());
    let mut top = b
        .append(Claim {
            stream: "s".into(),
            text: "depth 0".into(),
            origin: Origin::Inferred,
            witnesses: vec![span],
            actionable: false,
        })
        .expect("claim")
        .rid;
    for d in 1..=6 {
        top = b
            .append(Claim {
                stream: "s".into(),
                text: format!("depth {d}"),
                origin: Origin::Inferred,
                witnesses: vec![top],
                actionable: false,
            })
            .expect("claim")
            .rid;
    }
    b.commit().expect("commit");
    let snap = ledger.snapshot().expect("snapshot");
    println!(
        "1,000-turn stream: {} records, 25 boundaries, {admitted} admitted",
        snap.len().expect("len")
    );

    let runs = 2000;
    let t = Instant::now();
    for _ in 0..runs {
        let w = cairn::replay::why(&snap, top).expect("why");
        assert!(w.nodes.len() > 1);
    }
    println!(
        "why at depth 6: {:.1} us per call ({runs} calls)",
        t.elapsed().as_secs_f64() * 1e6 / runs as f64
    );

    let t = Instant::now();
    let html = cairn::replay::html(&snap, "s").expect("report");
    println!(
        "report: {} bytes, built in {:.1} ms",
        html.len(),
        t.elapsed().as_secs_f64() * 1000.0
    );
    let path = std::env::temp_dir().join(format!("cairn-report-{}.html", std::process::id()));
    std::fs::write(&path, &html).expect("write");
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ];
    let profile = std::env::temp_dir().join(format!("cairn-chromium-{}", std::process::id()));
    let t = Instant::now();
    match std::process::Command::new("chromium")
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", path.display()))
        .output()
    {
        Ok(o)
            if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("Boundary 25") =>
        {
            println!("report load and script run in headless Chromium (process start included): {:.0} ms", t.elapsed().as_secs_f64() * 1000.0);
        }
        _ => println!("report render time: skipped (no chromium)"),
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&profile);
    deep_chain(100_000);
}

/// `why` (text and JSON) and the report on a chain of `depth` claims, each witnessing the one
/// before, over one span: the time each takes and the process's peak memory after each.
fn deep_chain(depth: usize) {
    let ledger = Ledger::in_memory().expect("ledger");
    let mut b = ledger.batch().expect("batch");
    let span = Span {
        stream: "deep".into(),
        turn: 1,
        role: Role::User,
        tool: None,
        text: "the cache holds 512 MB".into(),
    };
    let mut below = b.append(span).expect("span").rid;
    for i in 0..depth {
        let c = Claim {
            stream: "deep".into(),
            text: format!("step {i}: the cache holds 512 MB"),
            origin: Origin::Inferred,
            witnesses: vec![below],
            actionable: false,
        };
        below = b.append(c).expect("claim").rid;
    }
    b.commit().expect("commit");
    let snap = ledger.snapshot().expect("snapshot");
    cairn_bench::reset_peak();
    let base = cairn_bench::peak_rss();
    let mb = |x: u64| x.saturating_sub(base) as f64 / 1e6;
    let t = Instant::now();
    let w = cairn::replay::why(&snap, below).expect("why");
    // Written as `cairn why` writes them, to a sink that only counts the bytes.
    let (mut text, mut json) = (Count(0), Count(0));
    w.write_text(&mut text).expect("text");
    w.write_json(&mut json).expect("json");
    println!(
        "why on a chain {depth} claims deep: {} nodes, {} losses, text {:.1} MB and JSON {:.1} MB in {:.2} s; peak memory {:.0} MB above the ledger's",
        w.nodes.len(),
        w.losses.len(),
        text.0 as f64 / 1e6,
        json.0 as f64 / 1e6,
        t.elapsed().as_secs_f64(),
        mb(cairn_bench::peak_rss())
    );
    drop(w);
    cairn_bench::reset_peak();
    let t = Instant::now();
    let html = cairn::replay::html(&snap, "deep").expect("report");
    println!(
        "report on the same chain: {:.1} MB in {:.2} s; peak memory {:.0} MB above the ledger's",
        html.len() as f64 / 1e6,
        t.elapsed().as_secs_f64(),
        mb(cairn_bench::peak_rss())
    );
}

/// A writer that counts what it is given and keeps none of it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
