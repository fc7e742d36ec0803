//! Forensic replay: why, replay, as-of, graph export, the HTML report and the examples.

use crate::util::*;
use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Pin, PinClass, PinItem, Rid, Role, Span, Summary};
use cairn::Ledger;
use cairn::Read;
use serde_json::Value;
use std::process::Command;

fn demo(t: &Tmp) {
    let o = t.cairn(&["demo"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success() || code(o) == 1, "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn why_labels_hops_and_names_the_first_loss() {
    let t = Tmp::new();
    demo(&t);
    let v = json(&t.cairn(&["why", "prior:0", "--stream", "staging", "--json"], None));
    assert_eq!(v["tree"]["hop"], "claim");
    assert_eq!(v["tree"]["status"], "unverified");
    let span = &v["tree"]["children"][0];
    assert_eq!(
        (span["kind"].as_str(), span["hop"].as_str()),
        (Some("span"), Some("witness"))
    );
    assert_eq!(span["detail"], "turn 1, user");
    assert!(span["status"]
        .as_str()
        .unwrap()
        .starts_with("raw, evicted by summary 1"));
    assert_eq!(v["first_loss"]["gate"], "hedge-stripped");

    // A claim built on a carried claim and re-grounded: both hop kinds appear.
    let v = json(&t.cairn(&["why", "prior:1", "--stream", "migration", "--json"], None));
    let hops: Vec<String> = v["tree"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["hop"].as_str().unwrap().to_string())
        .collect();
    assert!(
        hops.iter().any(|h| h.starts_with("carried from summary")),
        "{hops:?}"
    );
    let deep = v["tree"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "claim")
        .unwrap();
    assert!(
        deep["children"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["hop"] == "re-grounded"),
        "{deep}"
    );
    assert!(
        v["first_loss"].is_null(),
        "re-grounding restored it: {}",
        v["losses"]
    );

    // By rid prefix, in text.
    let rid = v["claim"].as_str().unwrap();
    let o = t.cairn(&["why", &rid[..12]], None);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("provenance intact"), "{}", stdout(&o));
    let o = t.cairn(&["why", "turn:3"], None);
    assert_eq!(code(&o), 2);
}

#[test]
fn why_names_identifier_drift_where_it_first_appeared() {
    let t = Tmp::new();
    let f = t.file("a.jsonl", br#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"we are still on libfoo 2.3.1"}
{"kind":"claim","stream":"s","text":"libfoo is on 2.3.1","origin":"user-said","witnesses":["turn:1"]}
"#);
    let out = stdout(&t.cairn(&["ingest", "--json", f.to_str().unwrap()], None));
    let first: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    let g = t.file("b.jsonl", format!(r#"{{"kind":"claim","stream":"s","text":"libfoo went to 2.4.0","origin":"inferred","witnesses":["{}"]}}
"#, first["rid"].as_str().unwrap()).as_bytes());
    let out = stdout(&t.cairn(&["ingest", "--json", g.to_str().unwrap()], None));
    let drift: Value = serde_json::from_str(out.trim()).unwrap();
    let v = json(&t.cairn(&["why", drift["rid"].as_str().unwrap(), "--json"], None));
    let gates: Vec<&str> = v["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["gate"].as_str().unwrap())
        .collect();
    assert!(
        gates.contains(&"identifier-drift") && gates.contains(&"laundered-claim"),
        "{gates:?}"
    );
    assert!(v["losses"].to_string().contains(
        "claim 'libfoo went to 2.4.0' states 2.4.0, which no raw span before it contains verbatim"
    ));
}

#[test]
fn replay_goes_boundary_by_boundary_in_one_json_document() {
    let t = Tmp::new();
    demo(&t);
    let v = json(&t.cairn(&["replay", "migration", "--json"], None));
    let b = v["boundaries"].as_array().unwrap();
    let verdicts: Vec<&str> = b.iter().map(|x| x["verdict"].as_str().unwrap()).collect();
    // Each refused proposal is followed by its repair, cairn's, admitted.
    assert_eq!(
        verdicts,
        ["refused", "admitted", "admitted", "refused", "admitted", "admitted", "admitted"]
    );
    assert_eq!(
        (b[1]["author"].as_str(), b[4]["author"].as_str()),
        (Some("cairn"), Some("cairn"))
    );
    assert_eq!(b[4]["repairs"], b[3]["summary"]);
    assert_eq!(b[3]["anchored_score"], 0.0);
    assert!((b[3]["gap"].as_f64().unwrap() - 0.91).abs() < 1e-9);
    assert_eq!(
        b[3]["dropped"][0]["text"],
        "never run DROP TABLE on the orders database"
    );
    assert_eq!(b[3]["evicted_turns"], serde_json::json!([12, 40]));
    assert_eq!(b[3]["evicted_runs"], "12, 40", "the same turns as runs");
    assert!(b[3]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["gate"] == "pin-loss"));
    assert_eq!(b[3]["carried"].as_array().unwrap().len(), 1);
    let text = stdout(&t.cairn(&["replay", "libfoo"], None));
    assert!(
        text.contains("boundary 2 REFUSED") && text.contains("budget 2000 against parent 4000"),
        "{text}"
    );
    assert_eq!(code(&t.cairn(&["replay", "nosuch"], None)), 2);
}

/// A batch on a fresh ledger holding one span of stream "s".
/// A batch on stream "s" holding one pinned prohibition and a claim that restates it, so
/// every boundary that keeps the claim is admitted with an anchored score.
fn pinned_batch(ledger: &Ledger) -> (cairn::Batch, Rid) {
    let mut b = ledger.batch().unwrap();
    let text = "never run DROP TABLE on the production users table";
    let said = b
        .append(Span {
            stream: "s".into(),
            turn: 1,
            role: Role::User,
            tool: None,
            text: text.into(),
        })
        .unwrap()
        .rid;
    b.append(Pin {
        stream: "s".into(),
        name: "constraints".into(),
        items: vec![PinItem {
            class: PinClass::Prohibition,
            text: text.into(),
            witness: Some(said),
        }],
    })
    .unwrap();
    let claim = b
        .append(Claim {
            stream: "s".into(),
            text: text.into(),
            origin: Origin::UserSaid,
            witnesses: vec![said],
            actionable: false,
        })
        .unwrap()
        .rid;
    (b, claim)
}

/// Proposes a boundary of stream "s" that keeps `claim`, with its self-reported score, and
/// returns it with the anchored score the gate gave it.
fn admitted_boundary(b: &mut cairn::Batch, claim: Rid, budget: u64, own: u16) -> (Rid, f64) {
    let o = Gatekeeper::default()
        .propose_summary(
            b,
            Summary {
                stream: "s".into(),
                parent: b.head("s").unwrap(),
                author: Author::Separate,
                budget,
                covers: vec![],
                evicts: vec![],
                claims: vec![claim],
                self_score: Some(own),
                reground: false,
            },
        )
        .unwrap();
    assert!(o.admitted, "{:?}", o.findings);
    (o.subject.rid, o.anchored_score.expect("an anchored score"))
}

#[test]
fn replay_warns_when_the_gap_between_scores_grows() {
    let ledger = Ledger::in_memory().unwrap();
    let (mut b, claim) = pinned_batch(&ledger);
    for (i, own) in [8500, 8800, 9100, 9400].into_iter().enumerate() {
        let (_, anchored) = admitted_boundary(&mut b, claim, 1000 + i as u64, own);
        assert_eq!(anchored, 1.0, "the pinned prohibition is kept");
        if i == 1 {
            // Near miss: one growing step is not yet a trend.
            assert!(cairn::replay::replay(&b, "s")
                .unwrap()
                .gap_warning
                .is_none());
        }
    }
    b.commit().unwrap();
    let r = cairn::replay::replay(&ledger.snapshot().unwrap(), "s").unwrap();
    let w = r.gap_warning.expect("a warning");
    assert!(w.contains("grew over the last three boundaries"), "{w}");
    // A shrinking gap is not reported.
    let ledger = Ledger::in_memory().unwrap();
    let (mut b, claim) = pinned_batch(&ledger);
    for (i, own) in [9400, 9100, 8800].into_iter().enumerate() {
        admitted_boundary(&mut b, claim, 1000 + i as u64, own);
    }
    assert!(cairn::replay::replay(&b, "s")
        .unwrap()
        .gap_warning
        .is_none());
}

#[test]
fn as_of_shows_the_ledger_at_a_past_log_size() {
    let t = Tmp::new();
    let f = t.file("a.jsonl", LIBFOO.as_bytes());
    t.cairn(&["ingest", f.to_str().unwrap()], None);
    let n: u64 = json(&t.cairn(&["stats", "--json"], None))["records"]
        .as_u64()
        .unwrap();
    let g = t.file(
        "b.jsonl",
        br#"{"kind":"claim","stream":"s1","text":"the build is green","origin":"inferred"}"#,
    );
    t.cairn(&["ingest", g.to_str().unwrap()], None);
    assert_eq!(
        code(&t.cairn(&["gates"], None)),
        1,
        "now there is an unanchored claim"
    );
    let then = t.cairn(&["gates", "--as-of", &n.to_string()], None);
    assert_eq!(
        code(&then),
        0,
        "as of {n} records the ledger was clean: {}",
        stdout(&then)
    );
    let all = stdout(&t.cairn(&["export"], None));
    let past = stdout(&t.cairn(&["export", "--as-of", &n.to_string()], None));
    assert_eq!(past.lines().count() as u64, n);
    assert!(all.starts_with(&past));
    let v = json(&t.cairn(&["replay", "s1", "--as-of", "5", "--json"], None));
    assert_eq!(
        v["boundaries"].as_array().unwrap().len(),
        0,
        "the summary is record 6"
    );
    let o = t.cairn(&["why", "prior:0", "--stream", "s1", "--as-of", "4"], None);
    assert_eq!(code(&o), 2, "no head yet: {}", stderr(&o));
    let o = t.cairn(&["gates", "--as-of", "999"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("past the end of the log"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn export_dot_has_stable_ids_and_renders_with_graphviz() {
    let t = Tmp::new();
    demo(&t);
    let a = stdout(&t.cairn(&["export", "--format", "dot", "--stream", "staging"], None));
    let b = stdout(&t.cairn(&["export", "--format", "dot", "--stream", "staging"], None));
    assert_eq!(a, b);
    assert!(a.starts_with("digraph cairn {"));
    assert!(!a.contains("libfoo"), "only the staging stream");
    assert!(a.contains("[label=\"evicts\"]") && a.contains("color=red"));
    let json_lines = stdout(&t.cairn(&["export", "--stream", "staging"], None));
    for l in json_lines.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert!(
            a.contains(&format!("r{}", &v["rid"].as_str().unwrap()[..16])),
            "{v}"
        );
    }
    if Command::new("dot").arg("-V").output().is_err() {
        eprintln!("skipped rendering: graphviz `dot` is not installed (apt-get install graphviz)");
        return;
    }
    let path = t.file("g.dot", a.as_bytes());
    let o = Command::new("dot")
        .arg("-Tsvg")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("<svg"));
}

#[test]
fn the_report_is_self_contained_and_renders_in_a_headless_browser() {
    let t = Tmp::new();
    demo(&t);
    let out = t.dir.path().join("m.html");
    let o = t.cairn(&["report", "migration", "-o", out.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    for external in ["src=", "href=", "@import", "url("] {
        assert!(
            !html.contains(external),
            "the report must not load {external}"
        );
    }
    assert!(html.contains("<svg id=\"timeline\"") && html.contains("<svg id=\"chart\""));
    assert!(html.contains("polyline points") && html.contains("class=\"mark refused\""));
    assert!(html.contains("pin-loss") && html.contains("unpinned-reference"));

    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("skipped the browser check: no chromium is installed (apt-get install chromium)");
        return;
    };
    let claim = html
        .split("data-claim=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let profile = t.dir.path().join("profile");
    let url = format!("file://{}#claim={claim}", out.display());
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
    let dom = Command::new(chromium)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("Boundary 7: admitted"),
        "the script ran and selected the last boundary"
    );
    // The evicted turns are written as runs, never as a list of every number (issue 37: a
    // long list ran off the page).
    assert!(
        dom.contains("evicts turns ") && !dom.contains("evicts turns ["),
        "{dom}"
    );
    assert!(
        dom.contains("Lineage of: orders_old was set to the archive tablespace"),
        "clicking a claim (here: its link) shows its lineage"
    );
    let png = t.dir.path().join("m.png");
    let shot = Command::new(chromium)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1100,1600")
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(shot.status.success());
    assert!(
        std::fs::metadata(&png).unwrap().len() > 20_000,
        "a real page was drawn"
    );
}

/// Issue 13, item 7: a span text holding `<!--<script>` put the report's script element in a
/// state where its closing tag no longer closed it, so the script never ran.
#[test]
fn span_text_cannot_blind_the_report() {
    let t = Tmp::new();
    let hostile = "<!--<script> </script><script>alert(1)</script> & more";
    let lines = [
        serde_json::json!({"kind":"span","stream":"h","turn":1,"role":"user","text":hostile}),
        serde_json::json!({"kind":"span","stream":"h","turn":2,"role":"user","text":"keep the cache at 512 MB"}),
        serde_json::json!({"kind":"summary","stream":"h","author":"self","budget":100,"covers":["turn:1..turn:2"],"evicts":["turn:1"],"claims":[{"text":"the cache stays at 512 MB","origin":"user-said","witnesses":["turn:2"]},{"text":hostile,"origin":"user-said","witnesses":["turn:1"]}]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let f = t.file("h.jsonl", text.as_bytes());
    let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let out = t.dir.path().join("h.html");
    let o = t.cairn(&["report", "h", "-o", out.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("<!--"), "a comment opener reached the page");
    assert!(
        !html.contains("<script>alert"),
        "a script tag from the data reached the page"
    );
    // The data block is still the data: it parses, and holds the text as written.
    let block = html
        .split("id=\"cairn-data\">")
        .nth(1)
        .and_then(|b| b.split("</script>").next())
        .unwrap();
    let data: Value = serde_json::from_str(block).unwrap();
    assert!(data.to_string().contains("alert(1)"));
    assert!(serde_json::to_string(&data)
        .unwrap()
        .contains("<!--<script>"));
    // Two script elements, both closed where the template closes them.
    assert_eq!(html.matches("<script").count(), 2);
}

/// Issue 13, item 2: `why` on a chain about 10,000 claims deep overflowed the stack (exit
/// 134), and `report` on it ran past 280 s and 1.4 GB, because every claim's tree was built
/// by recursion and the report held every claim's whole tree. A chain of 20,000 claims, each
/// witnessing the one before, over one span (`cargo bench -p cairn-bench --bench replay` times 100,000 and
/// prints the memory it takes).
#[test]
fn why_and_report_answer_on_a_chain_20_000_claims_deep() {
    const DEPTH: usize = 20_000;
    let t = Tmp::new();
    let top = {
        let ledger = Ledger::open(t.db()).unwrap();
        let mut b = ledger.batch().unwrap();
        let mut below = b
            .append(Span {
                stream: "deep".into(),
                turn: 1,
                role: Role::User,
                tool: None,
                text: "the cache holds 512 MB".into(),
            })
            .unwrap()
            .rid;
        for i in 0..DEPTH {
            below = b
                .append(Claim {
                    stream: "deep".into(),
                    text: format!("step {i}: the cache holds 512 MB"),
                    origin: Origin::Inferred,
                    witnesses: vec![below],
                    actionable: false,
                })
                .unwrap()
                .rid;
        }
        b.commit().unwrap();
        below.to_hex()
    };
    let o = t.cairn(&["why", &top], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("(the tree is deeper than"),
        "the shortening is said"
    );
    let last = text.lines().nth(DEPTH + 1).unwrap();
    assert!(
        last.contains(&format!("[depth {DEPTH}] witness -> span")),
        "every node is shown, the span last: {last}"
    );
    // A line a node and a line a loss, indentation capped: linear, where full indentation
    // would be 10 GB.
    assert!(text.len() < 1_000 * DEPTH, "{} bytes", text.len());

    let v = json(&t.cairn(&["why", &top, "--json"], None));
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), DEPTH + 1);
    assert_eq!(nodes[DEPTH]["depth"], DEPTH);
    assert_eq!(nodes[DEPTH]["parent"], DEPTH - 1);
    let mut n = &v["tree"];
    for _ in 0..cairn::replay::SHOWN_DEPTH {
        n = &n["children"][0];
    }
    assert_eq!(
        (n["children"].as_array().unwrap().len(), n["cut"].as_u64()),
        (0, Some((DEPTH - cairn::replay::SHOWN_DEPTH) as u64)),
        "the nested tree says where it stops and how much hangs below"
    );

    let out = t.dir.path().join("deep.html");
    let o = t.cairn(&["report", "deep", "-o", out.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(
        size < 1_000 * DEPTH as u64,
        "each record once in the report's data: {size} bytes"
    );
}

#[test]
fn context_gives_the_agent_its_pins_marked_claims_and_recent_turns() {
    let t = Tmp::new();
    demo(&t);
    let o = t.cairn(&["context", "staging"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("pinned (never dropped):"), "{text}");
    assert!(
        text.contains("[unverified, user-said, hedge-stripped] staging DB port is 5433"),
        "{text}"
    );
    let v = json(&t.cairn(&["context", "staging", "--budget", "20", "--json"], None));
    assert_eq!(v["claims"].as_array().unwrap().len(), 0);
    assert_eq!(v["dropped_claims"], 2);
    assert!(v["used"].as_u64().unwrap() <= 20);
    let o = t.cairn(&["context", "stagign"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("has no stream \"stagign\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn recall_finds_the_port_with_its_standing_and_the_evicted_hedge() {
    let t = Tmp::new();
    demo(&t);
    let o = t.cairn(&["recall", "what port is staging on"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "[staging claim, unverified, user-said, cites turn 1] staging DB port is 5433"
        ),
        "{text}"
    );
    assert!(
        text.contains("turn 1 user, evicted] I think the staging DB"),
        "{text}"
    );
    let v = json(&t.cairn(
        &[
            "recall",
            "DROP TABLE",
            "--stream",
            "migration",
            "--limit",
            "1",
            "--json",
        ],
        None,
    ));
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["stream"], "migration");
    let o = t.cairn(&["recall", "port", "--stream", "stagign"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("has no stream \"stagign\""),
        "{}",
        stderr(&o)
    );
}

/// Issue 22, row 14: replay and the report show actions and each of their checks.
#[test]
fn replay_and_report_show_actions_and_each_check() {
    let t = Tmp::new();
    demo(&t);
    let v = json(&t.cairn(&["replay", "migration", "--json"], None));
    let actions = v["actions"].as_array().expect("actions in the replay");
    let drop = actions
        .iter()
        .find(|a| a["text"] == "DROP TABLE orders_old")
        .expect("the refused DROP TABLE is shown");
    let action_rid = drop["action"]
        .as_str()
        .expect("the action's rid")
        .to_string();
    assert_eq!(drop["checks"][0]["verdict"], "refused");
    // Refused against the pin (and, since the claim it relies on is inferred and so never
    // verified, as irreversible-unverified too).
    let gates: Vec<&str> = drop["checks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["gate"].as_str())
        .collect();
    assert!(gates.contains(&"prohibited-action"), "{gates:?}");
    // A second check, after the stream changed, is shown as its own event.
    let relied = t.cairn(&["why", "prior:1", "--stream", "migration", "--json"], None);
    let relied = json(&relied)["claim"].as_str().unwrap().to_string();
    let pin = format!(
        r#"{{"kind":"pin","stream":"migration","name":"more","items":[{{"class":"prohibition","text":"never truncate orders_old"}}]}}
{{"kind":"action","stream":"migration","text":"DROP TABLE orders_old","irreversible":true,"relies_on":["{relied}"]}}
"#
    );
    let f = t.file("again.jsonl", pin.as_bytes());
    let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let text = stdout(&t.cairn(&["replay", "migration"], None));
    assert!(
        text.contains(&format!("action {}", &action_rid[..12])) && text.contains("check 2 at log"),
        "{text}"
    );
    let out = t.dir.path().join("m.html");
    let o = t.cairn(&["report", "migration", "-o", out.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<table id=\"actions\">") && html.contains("DROP TABLE orders_old"));
    // Near miss: a stream without actions says so.
    let o = t.cairn(&["report", "staging", "-o", out.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("No action of this stream was checked"));
}
