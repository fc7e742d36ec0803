//! The read path: `memory::context` gives pins first (never dropped), then the head's claims
//! with status, origin and flags, then the window's spans newest first, within a budget.

use cairn::gate::Gatekeeper;
use cairn::ingest::apply_line;
use cairn::memory::{context, tokens};
use cairn::record::{Gate, Status};

const LINES: &str = r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"Never run DROP TABLE on the production users table."}
{"kind":"span","stream":"s","turn":2,"role":"user","text":"I think the staging DB is on port 5433."}
{"kind":"span","stream":"s","turn":3,"role":"tool","name":"psql","text":"connected to staging-db on port 5432"}
{"kind":"span","stream":"s","turn":4,"role":"assistant","text":"The report generator is written in Rust."}
{"kind":"pin","stream":"s","name":"constraints","items":[{"class":"prohibition","text":"never run DROP TABLE on the production users table","witness":"turn:1"}]}
{"kind":"summary","stream":"s","author":"self","budget":1000,"covers":["turn:1..turn:4"],"evicts":["turn:1","turn:2"],"claims":[{"text":"never run DROP TABLE on the production users table","origin":"user-said","witnesses":["turn:1"],"actionable":true},{"text":"the staging DB is on port 5433","origin":"user-said","witnesses":["turn:2"],"actionable":true}]}
{"kind":"span","stream":"s","turn":5,"role":"user","text":"Now add request timeouts."}
"#;

fn ledger() -> crate::util::Scenario {
    written(usize::MAX)
}

/// The lines written `per_batch` to a batch.
fn written(per_batch: usize) -> crate::util::Scenario {
    let ledger = crate::util::ledger();
    let lines: Vec<&str> = LINES.lines().collect();
    for (k, chunk) in lines.chunks(per_batch).enumerate() {
        let mut b = ledger.batch().unwrap();
        for (i, line) in chunk.iter().enumerate() {
            let n = (k * per_batch + i) as u64 + 1;
            apply_line(&mut b, &Gatekeeper::default(), n, line.as_bytes()).unwrap();
        }
        b.commit().unwrap();
    }
    ledger
}

#[test]
fn context_gives_pins_then_marked_claims_then_recent_turns_within_the_budget() {
    let ledger = ledger();
    let snap = ledger.snapshot().unwrap();
    let c = context(&snap, "s", 10_000).unwrap();
    assert!(!c.over_budget);
    assert_eq!(c.pins.len(), 1);
    assert!(c.head.is_some(), "the summary was admitted");
    // The hedged claim is admitted, flagged and not verified: the model can tell it is a guess.
    let port = c.claims.iter().find(|x| x.text.contains("5433")).unwrap();
    assert_ne!(port.status, Status::Verified);
    assert!(
        port.flags.contains(&Gate::HedgeStripped),
        "{:?}",
        port.flags
    );
    let rule = c.claims.iter().find(|x| x.text.contains("DROP")).unwrap();
    assert_eq!(rule.status, Status::Verified);
    // Only unevicted spans, newest first.
    let turns: Vec<u64> = c.spans.iter().map(|s| s.turn).collect();
    assert_eq!(turns, [5, 4, 3]);
    assert_eq!((c.dropped_claims, c.dropped_spans), (0, 0));
    let used: usize = (c.pins.iter().map(|p| tokens(&p.text)))
        .chain(c.claims.iter().map(|x| tokens(&x.text)))
        .chain(c.spans.iter().map(|s| tokens(&s.text)))
        .sum();
    assert_eq!(c.used, used);
    let json = c.to_json();
    assert_eq!(json["claims"][1]["flags"][0], "hedge-stripped");
    assert!(c
        .to_text()
        .contains("[unverified, user-said, hedge-stripped] the staging DB is on port 5433"));
}

#[test]
fn a_short_budget_drops_old_turns_first_then_claims_and_never_pins() {
    let ledger = ledger();
    let snap = ledger.snapshot().unwrap();
    let pins = tokens("never run DROP TABLE on the production users table");
    let claims = tokens("never run DROP TABLE on the production users table")
        + tokens("the staging DB is on port 5433");
    // Room for the pins, both claims and the newest turn only.
    let budget = pins + claims + tokens("Now add request timeouts.");
    let c = context(&snap, "s", budget).unwrap();
    assert_eq!(c.claims.len(), 2);
    assert_eq!(c.spans.iter().map(|s| s.turn).collect::<Vec<_>>(), [5]);
    assert_eq!(c.dropped_spans, 2);
    assert_eq!(c.used, budget);
    // One token short of the second claim: it is left out whole, and so is every span.
    let c = context(&snap, "s", pins + claims - 1).unwrap();
    assert_eq!((c.claims.len(), c.dropped_claims, c.spans.len()), (1, 1, 0));
    // Pins alone over the budget: all given, and the answer says so.
    let c = context(&snap, "s", 3).unwrap();
    assert!(c.over_budget);
    assert_eq!((c.pins.len(), c.claims.len(), c.spans.len()), (1, 0, 0));
    assert!(c.to_text().contains("the pins alone exceed the budget"));
    // A stream the ledger does not hold has an empty context.
    let c = context(&snap, "nope", 100).unwrap();
    assert!(c.pins.is_empty() && c.claims.is_empty() && c.spans.is_empty() && c.head.is_none());
}

#[test]
fn recall_ranks_spans_and_claims_with_their_standing_and_finds_evicted_turns() {
    let ledger = ledger();
    let snap = ledger.snapshot().unwrap();
    let r = cairn::memory::recall(&snap, "what port is staging on", Some("s"), 10).unwrap();
    assert!(r.hits.len() >= 3, "{r:?}");
    // The claim carries its standing: admitted, not verified, user-said, citing turn 2.
    let claim = r
        .hits
        .iter()
        .find(|h| h.text.contains("5433") && h.turn.is_none());
    let claim = claim.expect("the laundered claim is found");
    assert!(claim.admitted);
    assert_ne!(claim.status, Some(Status::Verified));
    assert_eq!(claim.witnesses.len(), 1);
    assert_eq!(claim.witnesses[0].1, Some(2));
    // The evicted hedge is found and marked evicted; the tool's answer is not evicted.
    let hedge = r.hits.iter().find(|h| h.turn == Some(2)).expect("turn 2");
    assert!(hedge.evicted);
    let tool = r.hits.iter().find(|h| h.turn == Some(3)).expect("turn 3");
    assert!(!tool.evicted);
    // Best first; a span about nothing asked ranks below them or not at all.
    assert!(r.hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(!r.hits.iter().take(3).any(|h| h.turn == Some(5)));
    // Near miss: the same query in another stream finds nothing, and a limit is kept.
    assert!(cairn::memory::recall(&snap, "staging port", Some("t"), 10)
        .unwrap()
        .hits
        .is_empty());
    assert_eq!(
        cairn::memory::recall(&snap, "staging port", None, 1)
            .unwrap()
            .hits
            .len(),
        1
    );
    let json = r.to_json();
    assert!(json["hits"][0]["kind"].as_str().is_some());
}

#[test]
fn recall_index_is_rebuilt_by_verify_and_matches_one_batch_or_many() {
    // Texts appended over many batches give the same index as all in one (verify rebuilds in
    // one batch and compares).
    let stepwise = written(1);
    let report = stepwise.verify().unwrap();
    assert!(report.ok(), "{:?}", report.discrepancies);
    assert_eq!(report.tables_compared, 26);
    let whole = ledger();
    let one = whole.snapshot().unwrap();
    let many = stepwise.snapshot().unwrap();
    let q = "DROP TABLE production";
    let a = cairn::memory::recall(&one, q, None, 5).unwrap();
    let b = cairn::memory::recall(&many, q, None, 5).unwrap();
    assert_eq!(a.hits, b.hits);
}

/// Issue 22, row 15: a tight budget drops decision-relevant turns last and names them, and
/// one oversized turn is cut with a marker instead of emptying the context.
#[test]
fn decision_relevant_turns_are_dropped_last_and_an_oversized_turn_is_cut() {
    use cairn::record::{Role, Span};
    let ledger = crate::util::ledger();
    let mut b = ledger.batch().unwrap();
    let mut turn = |n: u64, role: Role, text: String| {
        b.append(Span {
            stream: "m".into(),
            turn: n,
            role,
            tool: None,
            text,
        })
        .unwrap();
    };
    turn(
        0,
        Role::User,
        "Never run DROP TABLE on the orders database.".into(),
    );
    for n in 1..40 {
        turn(
            n,
            Role::Assistant,
            format!("I looked at module m{n} and it parses section {n} of the config."),
        );
    }
    turn(40, Role::Tool, "row ".repeat(75_000));
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();

    let c = cairn::memory::context(&snap, "m", 100).unwrap();
    assert!(c.used <= 100, "{} tokens", c.used);
    // The rule at turn 0 is kept; the oversized tool output is cut, not dropped with all
    // before it.
    let turns: Vec<u64> = c.spans.iter().map(|s| s.turn).collect();
    assert!(turns.contains(&0), "{turns:?}");
    let big = c
        .spans
        .iter()
        .find(|s| s.turn == 40)
        .expect("the big turn, cut");
    assert_eq!(big.truncated, Some(300_000));
    assert!(big.text.contains("cut: ") && big.text.len() < 1000);
    assert!(c.dropped_decision_turns.is_empty());

    // Past what even the rule fits in, it is dropped last and named.
    let tiny = cairn::memory::context(&snap, "m", 10).unwrap();
    assert_eq!(tiny.dropped_decision_turns, vec![0]);
    assert!(tiny.to_text().contains("decision-relevant items"));
    // Near miss: a budget that holds everything cuts nothing and drops nothing.
    let all = cairn::memory::context(&snap, "m", 1_000_000).unwrap();
    assert_eq!(all.spans.len(), 41);
    assert!(all.spans.iter().all(|s| s.truncated.is_none()));
    assert_eq!(
        (all.dropped_spans, all.dropped_decision_turns.len()),
        (0, 0)
    );
}
