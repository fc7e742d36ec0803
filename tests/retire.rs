//! Issue 23, point 4: a pinned item is retired by a record that cites the user turn lifting
//! it, and only so; the pin stays write-once, and the retirement shows wherever the pin does.

use crate::util::ledger;
use cairn::gate::Gatekeeper;
use cairn::ingest::apply_line;
use cairn::record::{Action, Pin, PinClass, PinItem, Retirement, Role, Span};
use cairn::Read;

const RULE: &str = "never run DROP TABLE on the orders database";

fn span(stream: &str, turn: u64, role: Role, text: &str) -> Span {
    Span {
        stream: stream.into(),
        turn,
        role,
        tool: None,
        text: text.into(),
    }
}

#[test]
fn a_user_turn_retires_a_pinned_prohibition_and_nothing_else_does() {
    let ledger = ledger();
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().unwrap();
    let said = b.append(span("m", 1, Role::User, RULE)).unwrap().rid;
    let pin = b
        .append(Pin {
            stream: "m".into(),
            name: "constraints".into(),
            items: vec![PinItem {
                class: PinClass::Prohibition,
                text: RULE.into(),
                witness: Some(said),
            }],
        })
        .unwrap()
        .rid;
    let drop_table = Action {
        stream: "m".into(),
        text: "DROP TABLE orders".into(),
        irreversible: false,
        relies_on: Vec::new(),
    };
    let first = gate.propose_action(&mut b, drop_table.clone()).unwrap();
    assert!(!first.admitted);
    let agent = b
        .append(span(
            "m",
            2,
            Role::Assistant,
            "I think we may drop the orders tables now.",
        ))
        .unwrap()
        .rid;
    let lifted = b
        .append(span(
            "m",
            3,
            Role::User,
            "ok, the orders database is retired; you may drop its tables now",
        ))
        .unwrap()
        .rid;
    b.commit().unwrap();

    // Refused: the agent's own turn, and an item the pin does not hold. Nothing is written.
    let before = ledger.len().unwrap();
    let mut b = ledger.batch().unwrap();
    let by_agent = Retirement {
        stream: "m".into(),
        pin,
        item: RULE.into(),
        witness: agent,
    };
    let e = b.append(by_agent).unwrap_err().to_string();
    assert!(e.contains("user turn"), "{e}");
    let own = Retirement {
        stream: "m".into(),
        pin,
        item: RULE.into(),
        witness: said,
    };
    let e = b.append(own).unwrap_err().to_string();
    assert!(e.contains("cite a later user turn"), "{e}");
    let other = Retirement {
        stream: "m".into(),
        pin,
        item: "never push".into(),
        witness: lifted,
    };
    let e = b.append(other).unwrap_err().to_string();
    assert!(e.contains("holds no item"), "{e}");
    // Through JSON Lines, a retirement without a witness is refused with the way out.
    let line = br#"{"kind":"retirement","stream":"m","pin":"constraints","item":"never run DROP TABLE on the orders database"}"#;
    let e = apply_line(&mut b, &gate, 1, line).unwrap_err().to_string();
    assert!(e.contains("witness"), "{e}");
    drop(b);
    assert_eq!(ledger.len().unwrap(), before);

    // Admitted: the user's turn lifts it; the action is judged again and admitted.
    let mut b = ledger.batch().unwrap();
    let line = br#"{"kind":"retirement","stream":"m","pin":"constraints","item":"never run DROP TABLE on the orders database","witness":"turn:3"}"#;
    apply_line(&mut b, &gate, 1, line).unwrap();
    let again = gate.propose_action(&mut b, drop_table).unwrap();
    assert!(again.admitted, "{:?}", again.findings);
    assert!(again.check.is_some(), "judged again, as a check of its own");
    b.commit().unwrap();

    // The pin is unchanged, and the context shows the item retired by the user's turn.
    let snap = ledger.snapshot().unwrap();
    assert_eq!(snap.pin("m", "constraints").unwrap(), Some(pin));
    let c = cairn::memory::context(&snap, "m", 10_000).unwrap();
    assert_eq!(c.pins.len(), 1);
    assert_eq!(c.pins[0].retired_by, Some(lifted));
    assert!(c.to_text().contains("retired by"), "{}", c.to_text());
    assert!(ledger.verify().unwrap().ok());
}
