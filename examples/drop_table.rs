//! Seed 003, self-referential fidelity: a prohibition stated at turn 12 vanishes from the
//! third compaction, which scores itself 0.91. cairn refuses a compaction that evicts the
//! prohibition while the reference is unpinned, refuses it again as a pin loss once a pin
//! exists (anchored score 0.00 against a self score of 0.91), and refuses the DROP TABLE. Each
//! refused compaction comes with its repair, which carries the prohibition word for word and
//! is admitted. Prints the stream's replay.

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
use cairn::record::{Action, Author, Claim, Origin, Rid, Role, Span, Summary};
use cairn::{Ledger, Read};

fn summary(
    parent: Option<Rid>,
    covers: Vec<Rid>,
    evicts: Vec<Rid>,
    claims: Vec<Rid>,
    self_score: u16,
) -> Summary {
    Summary {
        stream: "m".into(),
        parent,
        author: Author::SelfAuthored,
        budget: 40_000,
        covers,
        evicts,
        claims,
        self_score: Some(self_score),
        reground: false,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ledger = Ledger::in_memory()?;
    let gate = Gatekeeper::default();
    let mut b = ledger.batch()?;
    let span = |turn, role, text: &str| Span {
        stream: "m".into(),
        turn,
        role,
        tool: None,
        text: text.into(),
    };
    let claim = |text: &str, origin, witness: Rid, actionable| Claim {
        stream: "m".into(),
        text: text.into(),
        origin,
        witnesses: vec![witness],
        actionable,
    };
    let never = b
        .append(span(
            12,
            Role::User,
            "Never run DROP TABLE on the orders database; archive old tables instead.",
        ))?
        .rid;
    let archived = b
        .append(span(
            40,
            Role::Tool,
            "ALTER TABLE orders_old SET TABLESPACE archive; ALTER TABLE",
        ))?
        .rid;
    let keep = b
        .append(claim(
            "never run DROP TABLE on the orders database",
            Origin::UserSaid,
            never,
            true,
        ))?
        .rid;
    let arch = b
        .append(claim(
            "orders_old was set to the archive tablespace",
            Origin::ToolOutput,
            archived,
            false,
        ))?
        .rid;

    let unpinned = gate.propose_summary(
        &mut b,
        summary(None, vec![never, archived], vec![never], vec![arch], 8800),
    )?;
    assert!(
        !unpinned.admitted
            && unpinned
                .findings
                .iter()
                .any(|f| f.gate == "unpinned-reference")
    );
    let repair = unpinned
        .repair
        .as_ref()
        .expect("a refusal comes with its repair");
    assert!(repair.outcome.admitted && repair.text.contains("Never run DROP TABLE"));

    let items = unpinned_items(&b, "m")?;
    b.append(pin_of("m", "constraints", &items))?;
    let kept = gate.propose_summary(
        &mut b,
        summary(
            Some(repair.outcome.subject.rid),
            vec![never, archived],
            vec![],
            vec![keep, arch],
            8900,
        ),
    )?;
    assert!(kept.admitted);

    let plan = b
        .append(span(
            80,
            Role::Assistant,
            "Archive finished; planning cleanup.",
        ))?
        .rid;
    let next = b
        .append(claim(
            "cleanup of orders_old is next",
            Origin::Inferred,
            plan,
            true,
        ))?
        .rid;
    let lost = gate.propose_summary(
        &mut b,
        summary(
            Some(kept.subject.rid),
            vec![plan],
            vec![never, archived],
            vec![arch, next],
            9100,
        ),
    )?;
    assert!(!lost.admitted && lost.findings.iter().any(|f| f.gate == "pin-loss"));
    assert_eq!(lost.anchored_score, Some(0.0));
    let repaired = lost
        .repair
        .as_ref()
        .expect("a refusal comes with its repair");
    assert!(repaired.outcome.admitted, "{:?}", repaired.outcome.findings);

    let drop = gate.propose_action(
        &mut b,
        Action {
            stream: "m".into(),
            text: "DROP TABLE orders_old".into(),
            irreversible: true,
            relies_on: vec![arch],
        },
    )?;
    assert!(!drop.admitted && drop.findings.iter().any(|f| f.gate == "prohibited-action"));
    b.commit()?;

    print!(
        "{}",
        cairn::replay::replay(&ledger.snapshot()?, "m")?.to_text()
    );
    println!(
        "\nthe repair of the compaction that lost the prohibition:\n{}",
        repaired.text
    );
    println!("\naction 'DROP TABLE orders_old': refused");
    for f in &drop.findings {
        println!("  {}: {}", f.gate, f.detail);
    }
    assert_eq!(
        ledger.snapshot()?.head("m")?,
        Some(repaired.outcome.subject.rid)
    );
    Ok(())
}
