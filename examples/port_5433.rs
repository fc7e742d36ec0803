//! Seed 001, laundered provenance: "I think the staging DB is on port 5433" becomes "staging
//! DB port is 5433", and the next compaction tries to evict the "connection refused" output
//! that contradicts it. The stripped hedge is flagged; the eviction is refused. Prints the
//! stream's replay and the claim's lineage.

use cairn::gate::Gatekeeper;
use cairn::record::{
    Author, Claim, Judgement, Origin, Pin, PinClass, PinItem, Relation, Role, Span, Summary,
};
use cairn::Ledger;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ledger = Ledger::in_memory()?;
    let gate = Gatekeeper::default();
    let mut b = ledger.batch()?;
    let span = |turn, role, text: &str| Span {
        stream: "db".into(),
        turn,
        role,
        tool: None,
        text: text.into(),
    };
    let guess = b
        .append(span(
            1,
            Role::User,
            "I think the staging DB is on port 5433.",
        ))?
        .rid;
    let refused = b.append(span(2, Role::Tool, "psql: error: connection to server at \"staging-db\", port 5433 failed: Connection refused"))?.rid;
    b.append(Pin {
        stream: "db".into(),
        name: "reference".into(),
        items: vec![PinItem {
            class: PinClass::FailedAttempt,
            text: "psql to staging-db port 5433 failed: Connection refused".into(),
            witness: Some(refused),
        }],
    })?;
    let port = b
        .append(Claim {
            stream: "db".into(),
            text: "staging DB port is 5433".into(),
            origin: Origin::UserSaid,
            witnesses: vec![guess],
            actionable: true,
        })?
        .rid;
    let first = gate.propose_summary(
        &mut b,
        Summary {
            stream: "db".into(),
            parent: None,
            author: Author::SelfAuthored,
            budget: 1000,
            covers: vec![guess, refused],
            evicts: vec![guess],
            claims: vec![port],
            self_score: Some(9000),
            reground: false,
        },
    )?;
    assert!(first.admitted && first.findings.iter().any(|f| f.gate == "hedge-stripped"));
    b.append(Judgement {
        claim: port,
        span: refused,
        relation: Relation::Contradicts,
        score: 10_000,
        scorer: "person".into(),
    })?;
    let later = b
        .append(span(3, Role::Assistant, "Connecting on the usual port."))?
        .rid;
    let second = gate.propose_summary(
        &mut b,
        Summary {
            stream: "db".into(),
            parent: Some(first.subject.rid),
            author: Author::SelfAuthored,
            budget: 1000,
            covers: vec![later],
            evicts: vec![refused, later],
            claims: vec![port],
            self_score: Some(9200),
            reground: false,
        },
    )?;
    assert!(
        !second.admitted
            && second
                .findings
                .iter()
                .any(|f| f.gate == "evicted-disconfirmer")
    );
    b.commit()?;

    let snap = ledger.snapshot()?;
    print!("{}", cairn::replay::replay(&snap, "db")?.to_text());
    println!("\nwhy 'staging DB port is 5433':");
    print!("{}", cairn::replay::why(&snap, port)?.to_text());
    Ok(())
}
