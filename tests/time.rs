//! Issue 23, point 4: a later witness about the same subject supersedes an earlier one. An
//! evicted span clashes with a claim (`evicted-clash`, or `evicted-disconfirmer` when recorded)
//! only when nothing the claim cites later supersedes it, and a cited span's contradiction
//! counts only when no later cited span supports the claim.

use cairn::gate::Gatekeeper;
use cairn::record::{Author, Claim, Origin, Role, Span, Summary};
use cairn::Ledger;

/// Tool turns (turn, text); one summary covering them all, evicting `evicts`, with the claim
/// citing `cites`. Returns (admitted, the gates that found something).
fn compact(
    turns: &[(u64, &str)],
    evicts: &[u64],
    claim: &str,
    cites: &[u64],
) -> (bool, Vec<String>) {
    let turns: Vec<(u64, Role, &str)> = turns.iter().map(|(t, x)| (*t, Role::Tool, *x)).collect();
    compact_spoken(&turns, evicts, claim, cites)
}

/// [`compact`] with each turn's speaker.
fn compact_spoken(
    turns: &[(u64, Role, &str)],
    evicts: &[u64],
    claim: &str,
    cites: &[u64],
) -> (bool, Vec<String>) {
    let ledger = Ledger::in_memory().unwrap();
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().unwrap();
    let mut rid = std::collections::BTreeMap::new();
    for (turn, role, text) in turns {
        let a = b
            .append(Span {
                stream: "s".into(),
                turn: *turn,
                role: *role,
                tool: (*role == Role::Tool).then(|| "pytest".into()),
                text: (*text).into(),
            })
            .unwrap();
        rid.insert(*turn, a.rid);
    }
    let claim = b
        .append(Claim {
            stream: "s".into(),
            text: claim.into(),
            origin: Origin::ToolOutput,
            witnesses: cites.iter().map(|t| rid[t]).collect(),
            actionable: true,
        })
        .unwrap();
    let o = gate
        .propose_summary(
            &mut b,
            Summary {
                stream: "s".into(),
                parent: None,
                author: Author::SelfAuthored,
                budget: 1000,
                covers: rid.values().copied().collect(),
                evicts: evicts.iter().map(|t| rid[t]).collect(),
                claims: vec![claim.rid],
                self_score: None,
                reground: false,
            },
        )
        .unwrap();
    let gates = o
        .findings
        .iter()
        .map(|f| f.gate.name().to_string())
        .collect();
    (o.admitted, gates)
}

#[test]
fn an_earlier_evicted_result_does_not_disconfirm_a_later_one() {
    let turns = [(1, "6 passed in 0.41s"), (5, "42 passed in 1.02s")];
    let (admitted, gates) = compact(&turns, &[1], "42 passed", &[5]);
    assert!(admitted, "{gates:?}");
    assert!(
        !gates.iter().any(|g| g.starts_with("evicted-")),
        "{gates:?}"
    );
    // Near miss: the contradicting result came later; the scorer reads it as a clash.
    let turns = [(1, "42 passed in 1.02s"), (5, "6 passed in 0.41s")];
    let (_, gates) = compact(&turns, &[5], "42 passed", &[1]);
    assert!(gates.iter().any(|g| g == "evicted-clash"), "{gates:?}");
}

#[test]
fn a_later_cited_span_supersedes_an_earlier_cited_one() {
    let turns = [(1, "6 passed in 0.41s"), (5, "42 passed in 1.02s")];
    let (admitted, gates) = compact(&turns, &[], "42 passed", &[1, 5]);
    assert!(admitted, "{gates:?}");
    // Near miss: the later cited span is the one that contradicts.
    let turns = [(1, "42 passed in 1.02s"), (5, "6 passed in 0.41s")];
    let (admitted, gates) = compact(&turns, &[], "42 passed", &[1, 5]);
    assert!(
        !admitted && gates.iter().any(|g| g == "contradicted-claim"),
        "{gates:?}"
    );
}

/// Seed 001's disconfirmer is "a later tool output": evidence told before the latest evidence a
/// claim rests on is history to it, whoever told it. The user's plan said about 392 files; the
/// script's later output says 396, and the claim rests on that output.
#[test]
fn evidence_told_before_what_the_claim_rests_on_does_not_disconfirm_it() {
    let turns = [
        (
            1,
            Role::User,
            "Generate one step file per step: 392 step files in all.",
        ),
        (
            5,
            Role::Tool,
            "Generated 396 step files across 20 services.",
        ),
    ];
    let claim = "The script generated 396 step files across 20 services.";
    let (admitted, gates) = compact_spoken(&turns, &[1], claim, &[5]);
    assert!(admitted, "{gates:?}");
    assert!(
        !gates.iter().any(|g| g.starts_with("evicted-")),
        "{gates:?}"
    );
    // Near miss: the user said otherwise after the output the claim rests on; it disconfirms.
    let turns = [
        (
            1,
            Role::Tool,
            "Generated 396 step files across 20 services.",
        ),
        (
            5,
            Role::User,
            "No: the script generated 392 step files, I counted them.",
        ),
    ];
    let (_, gates) = compact_spoken(&turns, &[5], claim, &[1]);
    assert!(gates.iter().any(|g| g == "evicted-clash"), "{gates:?}");
}
