//! The three stories of the seeds, end to end through the command line.

use crate::util::*;
use serde_json::Value;

fn ingest(t: &Tmp, name: &str, lines: &str) -> (i32, Vec<Value>, String) {
    let f = t.file(name, lines.as_bytes());
    let o = t.cairn(&["ingest", "--json", f.to_str().unwrap()], None);
    let out = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (code(&o), out, stderr(&o))
}

fn gates(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["gate"].as_str().unwrap().to_string())
        .collect()
}

/// Seed 000: "libfoo was upgraded to 2.4.0" where the user said "still on 2.3.1, do not bump".
#[test]
fn libfoo_upgraded_to_2_4_0_is_refused() {
    libfoo_upgraded_to_2_4_0_is_refused_on(Tmp::new());
}

/// The same story on a ledger in PostgreSQL (SPEC.md section 17).
#[test]
fn libfoo_upgraded_to_2_4_0_is_refused_on_postgres() {
    libfoo_upgraded_to_2_4_0_is_refused_on(Tmp::postgres(
        "story_libfoo_upgraded_to_2_4_0_is_refused",
    ));
}

fn libfoo_upgraded_to_2_4_0_is_refused_on(t: Tmp) {
    let (c, _, e) = ingest(
        &t,
        "a.jsonl",
        r#"{"kind":"span","stream":"s1","turn":160,"role":"user","text":"Refactor the request layer; keep the public API."}
{"kind":"span","stream":"s1","turn":212,"role":"user","text":"we are still on libfoo 2.3.1, do not bump."}
{"kind":"span","stream":"s1","turn":230,"role":"tool","name":"cargo","text":"test result: ok. 148 passed; 0 failed"}
{"kind":"pin","stream":"s1","name":"constraints","items":[{"class":"prohibition","text":"do not bump libfoo","witness":"turn:212"},{"class":"commitment","text":"libfoo stays at 2.3.1","witness":"turn:212"}]}
{"kind":"summary","stream":"s1","author":"self","budget":4000,"covers":["turn:160..turn:230"],"evicts":["turn:160..turn:212"],"self_score":0.91,"claims":[{"text":"libfoo stays pinned at 2.3.1","origin":"user-said","witnesses":["turn:212"],"actionable":true}]}
"#,
    );
    assert_eq!(c, 0, "the faithful compaction is admitted: {e}");
    let (c, out, _) = ingest(
        &t,
        "b.jsonl",
        r#"{"kind":"span","stream":"s1","turn":241,"role":"user","text":"Now add request timeouts."}
{"kind":"summary","stream":"s1","author":"self","budget":2000,"covers":["turn:241"],"evicts":[],"self_score":0.93,"claims":[{"text":"dependency libfoo was upgraded to 2.4.0 during the refactor","origin":"inferred","witnesses":["prior:0"],"actionable":true}]}
{"kind":"action","stream":"s1","text":"pip install libfoo==2.4.0","irreversible":true,"relies_on":["prior:0"]}
"#,
    );
    assert_eq!(c, 1, "a refusal exits 1");
    let summary = &out[1];
    assert_eq!(summary["verdict"], "refused");
    let g = gates(summary);
    assert!(
        g.contains(&"identifier-drift".to_string()) && g.contains(&"laundering-rate".to_string()),
        "{g:?}"
    );
    // Its only raw witness (turn 212, "still on 2.3.1") does not entail it: fabricated, not
    // merely unverified (issue 12: a claim none of whose witnesses supports it).
    assert_eq!(summary["claims"][0]["status"], "fabricated");
    assert!(g.contains(&"fabricated-claim".to_string()), "{g:?}");
    // The refused summary did not become the head; its repair did, without the upgrade and
    // with the pinned items it lost carried word for word. The upgrade is refused by the pinned
    // prohibition.
    let repair = &summary["repair"];
    assert_eq!(repair["verdict"], "admitted", "{repair}");
    assert!(
        !repair["text"].as_str().unwrap().contains("2.4.0"),
        "{repair}"
    );
    assert!(
        repair["text"]
            .as_str()
            .unwrap()
            .contains("do not bump libfoo"),
        "{repair}"
    );
    assert_eq!(out[2]["verdict"], "refused");
    assert!(
        gates(&out[2]).contains(&"prohibited-action".to_string()),
        "{:?}",
        gates(&out[2])
    );
    let stats: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
    assert_eq!(
        stats["streams"][0]["summaries"], 2,
        "the faithful summary and the repair"
    );
}

/// Seed 001: "I think the staging DB is on port 5433" promoted to a fact, and the
/// "connection refused" span evicted as redundant.
#[test]
fn port_5433_hedge_stripped_then_disconfirmer_eviction_refused() {
    port_5433_hedge_stripped_then_disconfirmer_eviction_refused_on(Tmp::new());
}

/// The same story on a ledger in PostgreSQL (SPEC.md section 17).
#[test]
fn port_5433_hedge_stripped_then_disconfirmer_eviction_refused_on_postgres() {
    port_5433_hedge_stripped_then_disconfirmer_eviction_refused_on(Tmp::postgres(
        "story_port_5433_hedge_stripped_then_disconfirm",
    ));
}

fn port_5433_hedge_stripped_then_disconfirmer_eviction_refused_on(t: Tmp) {
    let (c, out, e) = ingest(
        &t,
        "a.jsonl",
        r#"{"kind":"span","stream":"db","turn":1,"role":"user","text":"I think the staging DB is on port 5433."}
{"kind":"span","stream":"db","turn":2,"role":"tool","name":"psql","text":"psql: error: connection to server at \"staging-db\", port 5433 failed: Connection refused"}
{"kind":"pin","stream":"db","name":"reference","items":[{"class":"failed-attempt","text":"psql to staging-db port 5433 failed: Connection refused","witness":"turn:2"}]}
{"kind":"summary","stream":"db","author":"self","budget":1000,"covers":["turn:1..turn:2"],"evicts":["turn:1"],"claims":[{"text":"staging DB port is 5433","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}
{"kind":"judgement","stream":"db","claim":"prior:0","span":"turn:2","relation":"contradicts"}
{"kind":"span","stream":"db","turn":3,"role":"assistant","text":"Connecting on the usual port."}
{"kind":"summary","stream":"db","author":"self","budget":1000,"covers":["turn:3"],"evicts":["turn:2","turn:3"],"claims":["prior:0"]}
"#,
    );
    assert_eq!(c, 1, "{e}");
    assert_eq!(out[3]["verdict"], "admitted");
    assert!(
        gates(&out[3]).contains(&"hedge-stripped".to_string()),
        "the stripped hedge is found: {:?}",
        gates(&out[3])
    );
    assert_eq!(
        out[3]["claims"][0]["status"], "unverified",
        "a stripped hedge is not a verified fact"
    );
    assert_eq!(out[6]["verdict"], "refused");
    assert!(
        gates(&out[6]).contains(&"evicted-disconfirmer".to_string()),
        "{:?}",
        gates(&out[6])
    );
    // The repair keeps the disconfirmer in the window.
    let repair = &out[6]["repair"];
    assert_eq!(repair["verdict"], "admitted", "{repair}");
    assert!(
        repair["changes"]
            .to_string()
            .contains("kept turn 2 in the window"),
        "{repair}"
    );
    // The guess cannot drive an irreversible action.
    let guess = out[3]["claims"][0]["rid"].as_str().unwrap();
    let action = format!(
        r#"{{"kind":"action","stream":"db","text":"hard-code port 5433 in deploy/staging.env","irreversible":true,"relies_on":["{guess}"]}}
"#
    );
    let (_, out, _) = ingest(&t, "b.jsonl", &action);
    assert_eq!(
        out[0]["verdict"], "refused",
        "the guess cannot drive an irreversible action"
    );
    assert!(gates(&out[0]).contains(&"irreversible-unverified".to_string()));
}

/// Seed 003: a prohibition lost after the third compaction while the self-score was 0.91.
#[test]
fn drop_table_unpinned_then_pin_loss_then_action_refused() {
    drop_table_unpinned_then_pin_loss_then_action_refused_on(Tmp::new());
}

/// The same story on a ledger in PostgreSQL (SPEC.md section 17).
#[test]
fn drop_table_unpinned_then_pin_loss_then_action_refused_on_postgres() {
    drop_table_unpinned_then_pin_loss_then_action_refused_on(Tmp::postgres(
        "story_drop_table_unpinned_then_pin_loss_then_a",
    ));
}

fn drop_table_unpinned_then_pin_loss_then_action_refused_on(t: Tmp) {
    let spans = r#"{"kind":"span","stream":"m","turn":12,"role":"user","text":"Never run DROP TABLE on the orders database; archive old tables instead."}
{"kind":"span","stream":"m","turn":40,"role":"tool","name":"psql","text":"ALTER TABLE orders_old SET TABLESPACE archive; ALTER TABLE"}
"#;
    let first = r#"{"kind":"summary","stream":"m","author":"self","budget":40000,"covers":["turn:12..turn:40"],"evicts":["turn:12"],"self_score":0.88,"claims":[{"text":"orders_old was set to the archive tablespace","origin":"tool-output","witnesses":["turn:40"],"actionable":false}]}
"#;
    let (c, out, _) = ingest(&t, "a.jsonl", &format!("{spans}{first}"));
    assert_eq!(c, 1);
    assert_eq!(out[2]["verdict"], "refused");
    let f = &out[2]["findings"][0];
    assert_eq!(f["gate"], "unpinned-reference");
    assert!(f["detail"].as_str().unwrap().starts_with("cannot compact stream m: unpinned reference, 1 decision-relevant item (turn 12: prohibition 'Never run DROP TABLE"), "{f}");

    // Pin what the classifier found, then compact keeping the prohibition: admitted.
    let o = t.cairn(&["pin", "--auto", "m", "constraints", "--json"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let pin: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(pin["items"][0]["class"], "prohibition");
    let keep = r#"{"kind":"summary","stream":"m","author":"self","budget":40000,"covers":["turn:12..turn:40"],"evicts":[],"self_score":0.89,"claims":[{"text":"never run DROP TABLE on the orders database","origin":"user-said","witnesses":["turn:12"],"actionable":true},{"text":"orders_old was set to the archive tablespace","origin":"tool-output","witnesses":["turn:40"],"actionable":false}]}
"#;
    let (c, out, e) = ingest(&t, "b.jsonl", keep);
    assert_eq!(
        (c, out[0]["verdict"].as_str()),
        (0, Some("admitted")),
        "{e}"
    );

    // The third compaction drops the prohibition and evicts its span: pin loss, whatever the
    // self score.
    let lose = r#"{"kind":"span","stream":"m","turn":80,"role":"assistant","text":"Archive finished; planning cleanup."}
{"kind":"summary","stream":"m","author":"self","budget":40000,"covers":["turn:80"],"evicts":["turn:12","turn:40"],"self_score":0.91,"claims":["prior:1",{"text":"cleanup of orders_old is next","origin":"inferred","witnesses":["turn:80"],"actionable":true}]}
{"kind":"action","stream":"m","text":"DROP TABLE orders_old","irreversible":true,"relies_on":["prior:1"]}
"#;
    let (c, out, _) = ingest(&t, "c.jsonl", lose);
    assert_eq!(c, 1);
    assert_eq!(out[1]["verdict"], "refused");
    assert!(
        gates(&out[1]).contains(&"pin-loss".to_string()),
        "{:?}",
        gates(&out[1])
    );
    assert_eq!(out[1]["anchored_score"], 0.0);
    assert_eq!(out[2]["verdict"], "refused");
    assert!(gates(&out[2]).contains(&"prohibited-action".to_string()));
    // The ledger still verifies, and the gate sweep lists what stands.
    assert_eq!(code(&t.cairn(&["verify"], None)), 0);
}
