//! Seed 000, fabricated history: the user said "we are still on libfoo 2.3.1, do not bump";
//! a tighter compaction asserts "libfoo was upgraded to 2.4.0". The gates refuse it, and the
//! upgrade it would justify; cairn's repair of it, without the upgrade, becomes the head.
//! Prints the stream's replay.

use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Pin, PinClass, PinItem, Role, Span, Summary};
use cairn::{Ledger, Read};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ledger = Ledger::in_memory()?;
    let gate = Gatekeeper::default();
    let mut b = ledger.batch()?;
    let span = |turn, role, text: &str| Span {
        stream: "s1".into(),
        turn,
        role,
        tool: None,
        text: text.into(),
    };
    let refactor = b
        .append(span(
            160,
            Role::User,
            "Refactor the request layer; keep the public API.",
        ))?
        .rid;
    let pinned = b
        .append(span(
            212,
            Role::User,
            "we are still on libfoo 2.3.1, do not bump.",
        ))?
        .rid;
    let tests = b
        .append(span(
            230,
            Role::Tool,
            "test result: ok. 148 passed; 0 failed",
        ))?
        .rid;
    b.append(Pin {
        stream: "s1".into(),
        name: "constraints".into(),
        items: vec![
            PinItem {
                class: PinClass::Prohibition,
                text: "do not bump libfoo".into(),
                witness: Some(pinned),
            },
            PinItem {
                class: PinClass::Commitment,
                text: "libfoo stays at 2.3.1".into(),
                witness: Some(pinned),
            },
        ],
    })?;
    let stays = b
        .append(Claim {
            stream: "s1".into(),
            text: "libfoo stays pinned at 2.3.1".into(),
            origin: Origin::UserSaid,
            witnesses: vec![pinned],
            actionable: true,
        })?
        .rid;
    let first = gate.propose_summary(
        &mut b,
        Summary {
            stream: "s1".into(),
            parent: None,
            author: Author::SelfAuthored,
            budget: 4000,
            covers: vec![refactor, pinned, tests],
            evicts: vec![refactor, pinned],
            claims: vec![stays],
            self_score: Some(9100),
            reground: false,
        },
    )?;
    assert!(first.admitted);

    // Under a halved budget the summariser "resolves" the open question by inventing an upgrade.
    let next = b
        .append(span(241, Role::User, "Now add request timeouts."))?
        .rid;
    let upgraded = b
        .append(Claim {
            stream: "s1".into(),
            text: "dependency libfoo was upgraded to 2.4.0 during the refactor".into(),
            origin: Origin::Inferred,
            witnesses: vec![stays],
            actionable: true,
        })?
        .rid;
    let second = gate.propose_summary(
        &mut b,
        Summary {
            stream: "s1".into(),
            parent: Some(first.subject.rid),
            author: Author::SelfAuthored,
            budget: 2000,
            covers: vec![next],
            evicts: vec![],
            claims: vec![upgraded],
            self_score: Some(9300),
            reground: false,
        },
    )?;
    assert!(!second.admitted, "the fabricated upgrade is refused");
    let bump = gate.propose_action(
        &mut b,
        cairn::record::Action {
            stream: "s1".into(),
            text: "pip install libfoo==2.4.0".into(),
            irreversible: true,
            relies_on: vec![stays],
        },
    )?;
    assert!(!bump.admitted, "the pinned prohibition refuses the bump");
    b.commit()?;

    print!(
        "{}",
        cairn::replay::replay(&ledger.snapshot()?, "s1")?.to_text()
    );
    println!("\naction 'pip install libfoo==2.4.0': refused");
    for f in &bump.findings {
        println!("  {}: {}", f.gate, f.detail);
    }
    let repair = second
        .repair
        .as_ref()
        .expect("a refusal comes with its repair");
    assert!(repair.outcome.admitted && !repair.text.contains("2.4.0"));
    assert_eq!(
        ledger.snapshot()?.head("s1")?,
        Some(repair.outcome.subject.rid)
    );
    Ok(())
}
