//! One claim pair of `tests/data/real/` gated as a stream of its own: shared by the dev-split
//! test (`dev_split.rs`) and `examples/judgement.rs`.
//!
//! The context turns and the witness become spans, the classifier's items are pinned first (as
//! an agent runtime would), then a summary covering them holds the one claim, citing the
//! witness.

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
use cairn::record::{Author, Claim, Origin, Rid, Role, Span, Status, Summary};
use cairn::Ledger;
use serde_json::Value;

/// The role a pair's turn names (user when it names none).
pub fn role(v: &Value) -> Role {
    Role::from_name(v.as_str().unwrap_or("user")).unwrap_or(Role::User)
}

/// Gates one pair; returns (admitted, the claim's status).
pub fn judge(gate: &Gatekeeper, pair: &Value) -> Result<(bool, Status), cairn::Error> {
    let ledger = Ledger::in_memory()?;
    let mut b = ledger.batch()?;
    let mut turns = Vec::new();
    let context = pair["context"].as_array().cloned().unwrap_or_default();
    for (turn, t) in context.iter().chain([&pair["witness"]]).enumerate() {
        let span = Span {
            stream: "p".into(),
            turn: turn as u64,
            role: role(&t["role"]),
            tool: None,
            text: t["text"].as_str().unwrap_or("").to_string(),
        };
        turns.push(b.append(span)?.rid);
    }
    let items = unpinned_items(&b, "p")?;
    if !items.is_empty() {
        b.append(pin_of("p", "auto", &items))?;
    }
    let witness: Rid = *turns.last().expect("the witness");
    let claim = b.append(Claim {
        stream: "p".into(),
        text: pair["claim"].as_str().unwrap_or("").to_string(),
        origin: Origin::from_tag(pair["origin"].as_str().unwrap_or("inferred")),
        witnesses: vec![witness],
        actionable: true,
    })?;
    let summary = Summary {
        stream: "p".into(),
        parent: None,
        author: Author::SelfAuthored,
        budget: 4000,
        covers: turns,
        evicts: Vec::new(),
        claims: vec![claim.rid],
        self_score: None,
        reground: false,
    };
    let o = gate.propose_summary(&mut b, summary)?;
    Ok((o.admitted, o.claims[0].status))
}
