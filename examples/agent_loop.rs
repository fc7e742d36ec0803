//! A small agent loop on the library, with cairn as its memory: each turn is recorded as it
//! happens, the agent reads its context back before it answers, compacts its window when it
//! grows past a budget (the gates judge each compaction), looks a fact up with `recall`, and
//! checks an irreversible action before running it. The "model" is a script, so the example
//! runs offline; a real runtime puts its LLM call where `reply` is.
//!
//!     cargo run --example agent_loop

use cairn::gate::{pin_of, unpinned_items, Gatekeeper};
use cairn::memory::{context, recall};
use cairn::record::{Action, Author, Claim, Origin, Rid, Role, Span, Summary};
use cairn::{Ledger, Read};

const STREAM: &str = "agent";

/// What the user says on each turn.
const USER: &[&str] = &[
    "Never run DROP TABLE on the production users table.",
    "I think the staging DB is on port 5433.",
    "Please add request timeouts to the HTTP client.",
    "Now make the retry count configurable.",
    "Also log each retry at debug level.",
    "Finally, clean up the old users table on production.",
];

/// The scripted model: a reply to each user turn.
fn reply(user: &str) -> String {
    format!("Done: {}", user.to_lowercase().trim_end_matches('.'))
}

fn record(ledger: &Ledger, turn: u64, role: Role, text: &str) -> Result<Rid, cairn::Error> {
    let mut b = ledger.batch()?;
    let rid = b
        .append(Span {
            stream: STREAM.into(),
            turn,
            role,
            tool: None,
            text: text.into(),
        })?
        .rid;
    b.commit()?;
    Ok(rid)
}

/// Prints a verdict and its findings, as the agent would read them.
fn show(what: &str, outcome: &cairn::gate::Outcome) {
    let verdict = if outcome.admitted {
        "admitted"
    } else {
        "REFUSED"
    };
    println!("{what}: {verdict}");
    for f in &outcome.findings {
        println!("  {}: {}", f.gate.name(), f.detail);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ledger = Ledger::in_memory()?;
    let gate = Gatekeeper::default();
    let mut turn = 0;
    let mut said: Vec<Rid> = Vec::new();
    let mut head = None;
    for (i, user) in USER.iter().enumerate() {
        said.push(record(&ledger, turn, Role::User, user)?);
        turn += 1;
        if i == 0 {
            // Pin what the classifier finds decision-relevant: no compaction may drop it.
            let mut b = ledger.batch()?;
            let items = unpinned_items(&b, STREAM)?;
            b.append(pin_of(STREAM, "constraints", &items))?;
            b.commit()?;
        }
        // The agent reads its memory back before it answers.
        let seen = context(&ledger.snapshot()?, STREAM, 300)?;
        println!(
            "turn {turn}: the model sees {} pinned, {} claims, {} recent turns",
            seen.pins.len(),
            seen.claims.len(),
            seen.spans.len()
        );
        record(&ledger, turn, Role::Assistant, &reply(user))?;
        turn += 1;

        if i == 3 {
            // The window is long: compact the first four turns into claims that cite them.
            let mut b = ledger.batch()?;
            let mut claims = Vec::new();
            for (text, origin, witness) in [
                (
                    "never run DROP TABLE on the production users table",
                    Origin::UserSaid,
                    said[0],
                ),
                ("the staging DB is on port 5433", Origin::UserSaid, said[1]),
                (
                    "request timeouts were added to the HTTP client",
                    Origin::Inferred,
                    said[2],
                ),
            ] {
                let c = Claim {
                    stream: STREAM.into(),
                    text: text.into(),
                    origin,
                    witnesses: vec![witness],
                    actionable: true,
                };
                claims.push(b.append(c)?.rid);
            }
            let window: Vec<Rid> = (0..turn)
                .filter_map(|t| b.turn(STREAM, t).transpose())
                .collect::<Result<_, _>>()?;
            let outcome = gate.propose_summary(
                &mut b,
                Summary {
                    stream: STREAM.into(),
                    parent: head,
                    author: Author::SelfAuthored,
                    budget: 300,
                    covers: window.clone(),
                    evicts: window[..4].to_vec(),
                    claims,
                    self_score: None,
                    reground: false,
                },
            )?;
            b.commit()?;
            show("compaction", &outcome);
            if outcome.admitted {
                head = Some(outcome.subject.rid);
            }
        }
    }

    // Before acting on the port, the agent looks it up: the answer says it is a guess.
    let found = recall(&ledger.snapshot()?, "staging DB port", Some(STREAM), 3)?;
    print!("{}", found.to_text());

    // The last request would drop a table: check the action first.
    let mut b = ledger.batch()?;
    let outcome = gate.propose_action(
        &mut b,
        Action {
            stream: STREAM.into(),
            text: "DROP TABLE users".into(),
            irreversible: true,
            relies_on: vec![],
        },
    )?;
    b.commit()?;
    show("action DROP TABLE users", &outcome);
    println!("\n{}", context(&ledger.snapshot()?, STREAM, 300)?.to_text());
    Ok(())
}
