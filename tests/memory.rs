//! The read path: `memory::context` gives pins first (never dropped), then the head's claims
//! with status, origin and flags, then the window's spans newest first, within a budget.

use cairn::gate::Gatekeeper;
use cairn::ingest::apply_line;
use cairn::memory::{context, tokens};
use cairn::record::{Gate, Status};
use cairn::Ledger;

const LINES: &str = r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"Never run DROP TABLE on the production users table."}
{"kind":"span","stream":"s","turn":2,"role":"user","text":"I think the staging DB is on port 5433."}
{"kind":"span","stream":"s","turn":3,"role":"tool","name":"psql","text":"connected to staging-db on port 5432"}
{"kind":"span","stream":"s","turn":4,"role":"assistant","text":"The report generator is written in Rust."}
{"kind":"pin","stream":"s","name":"constraints","items":[{"class":"prohibition","text":"never run DROP TABLE on the production users table","witness":"turn:1"}]}
{"kind":"summary","stream":"s","author":"self","budget":1000,"covers":["turn:1..turn:4"],"evicts":["turn:1","turn:2"],"claims":[{"text":"never run DROP TABLE on the production users table","origin":"user-said","witnesses":["turn:1"],"actionable":true},{"text":"the staging DB is on port 5433","origin":"user-said","witnesses":["turn:2"],"actionable":true}]}
{"kind":"span","stream":"s","turn":5,"role":"user","text":"Now add request timeouts."}
"#;

fn ledger() -> Ledger {
    let ledger = Ledger::in_memory().unwrap();
    let mut b = ledger.batch().unwrap();
    for (i, line) in LINES.lines().enumerate() {
        apply_line(
            &mut b,
            &Gatekeeper::default(),
            i as u64 + 1,
            line.as_bytes(),
        )
        .unwrap();
    }
    b.commit().unwrap();
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
