//! Prose compactions (SPEC.md section 8.8): a summary written as text becomes claims with the
//! witnesses found for them, and every gate judges those claims.

use crate::util::summary;
use cairn::gate::{Gate, Gatekeeper};
use cairn::ingest::{self, Run};
use cairn::record::{Author, Origin, Record, Role, Span, Status};
use cairn::{Ledger, Read};

fn turn(turn: u64, role: Role, text: &str) -> Span {
    Span {
        stream: "s".into(),
        turn,
        role,
        tool: None,
        text: text.into(),
    }
}

/// A stream with a constraint, a tool's answer and a guess, all covered.
fn ledger() -> (crate::util::Scenario, Vec<cairn::record::Rid>) {
    let ledger = crate::util::ledger();
    let mut b = ledger.batch().unwrap();
    let rids = [
        turn(1, Role::User, "We are still on libfoo 2.3.1, do not bump."),
        turn(2, Role::Tool, "name = \"libfoo\"\nversion = \"2.3.1\""),
        turn(3, Role::User, "I think the staging DB is on port 5433."),
        turn(
            4,
            Role::Assistant,
            "Moved retry handling into src/net/client.rs; tests pass.",
        ),
    ]
    .into_iter()
    .map(|s| b.append(s).unwrap().rid)
    .collect();
    // The runtime pins the stream's constraints, as `pin --auto` does.
    let items = b.items("s").unwrap();
    b.append(cairn::gate::pin_of("s", "auto", &items)).unwrap();
    b.commit().unwrap();
    (ledger, rids)
}

fn propose(
    ledger: &Ledger,
    covers: Vec<cairn::record::Rid>,
    text: &str,
) -> cairn::gate::prose::Prose {
    let mut b = ledger.batch().unwrap();
    let mut s = summary("s", None, Author::SelfAuthored, vec![], vec![]);
    s.covers = covers;
    let p = Gatekeeper::default()
        .propose_prose(&mut b, s, text)
        .unwrap();
    b.commit().unwrap();
    p
}

/// Markup hides nothing (issue 36, point 9): a fenced block is a quote, verified when a span
/// holds its lines, struck when none does; a heading that asserts is a claim, struck when
/// nothing supports it, where a bare label is none.
#[test]
fn a_quote_or_a_heading_is_judged_as_any_sentence() {
    let (first, rids) = ledger();
    let quoted = "## Summary\n\n```\nname = \"libfoo\"\nversion = \"2.3.1\"\n```";
    let p = propose(&first, rids, quoted);
    assert_eq!(p.claims.len(), 1);
    assert!(
        p.outcome.admitted && p.outcome.struck.is_empty(),
        "{:?}",
        p.outcome.findings
    );
    assert_eq!(p.outcome.claims[0].status, Status::Verified);
    let (second, rids) = ledger();
    let made_up =
        "## libfoo was upgraded to 2.4.0\n\n```\nname = \"libfoo\"\nversion = \"2.4.0\"\n```";
    let p = propose(&second, rids, made_up);
    assert_eq!(p.claims.len(), 2);
    assert_eq!(p.outcome.struck.len(), 2, "{:?}", p.outcome.findings);
}

#[test]
fn faithful_prose_is_admitted_with_its_witnesses_found() {
    let (ledger, rids) = ledger();
    let text = "## Summary\n\nWe are still on libfoo 2.3.1. Do not bump libfoo.\n\
                - Retry handling moved into src/net/client.rs.\n```\nname = \"libfoo\"\nversion = \"2.3.1\"\n```";
    let p = propose(&ledger, rids.clone(), text);
    assert!(p.outcome.admitted, "{:?}", p.outcome.findings);
    let sentences: Vec<&str> = p.claims.iter().map(|(_, d)| d.sentence.as_str()).collect();
    assert_eq!(
        sentences,
        [
            "We are still on libfoo 2.3.1.",
            "Do not bump libfoo.",
            "Retry handling moved into src/net/client.rs.",
            // The fenced block is judged too, as a quote of what it shows (issue 36, point 9).
            "name = \"libfoo\"\nversion = \"2.3.1\""
        ]
    );
    let (_, first) = &p.claims[0];
    assert_eq!(first.witnesses[0].rid, rids[0]);
    assert_eq!(first.witnesses[0].turn, Some(1));
    assert_eq!(first.origin, Origin::UserSaid);
    assert!(first.why.contains("turn 1 (user)"), "{}", first.why);
    // The assistant's report is the agent's own: inferred.
    assert_eq!(p.claims[2].1.origin, Origin::Inferred);
    assert_eq!(p.claims[2].1.witnesses[0].rid, rids[3]);
    // Each derived claim is an ordinary record citing what was found, its score kept.
    let snap = ledger.snapshot().unwrap();
    let Some(Record::Claim(c)) = snap.get(&p.claims[0].0.rid).unwrap() else {
        panic!("no claim")
    };
    // The tool's lock file says 2.3.1 too: both support it, the user's turn first.
    assert_eq!(first.witnesses.len(), 2);
    assert!(c.witnesses.contains(&rids[0]) && c.witnesses.contains(&rids[1]));
    let judged = snap.of_kind(cairn::record::Kind::Judgement).unwrap();
    let cited: usize = p.claims.iter().map(|(_, d)| d.witnesses.len()).sum();
    assert_eq!(judged.len(), cited);
    // The gates judge them as any claims: admitted, none fabricated.
    let statuses: Vec<Status> = p.outcome.claims.iter().map(|s| s.status).collect();
    assert_eq!(statuses.len(), 4);
    assert!(
        statuses
            .iter()
            .all(|s| matches!(s, Status::Verified | Status::Unverified)),
        "{statuses:?}"
    );
}

#[test]
fn a_sentence_quoting_what_no_span_holds_is_unanchored_and_struck_and_the_rest_stands() {
    let (ledger, rids) = ledger();
    let p = propose(
        &ledger,
        rids,
        "We are still on libfoo 2.3.1. The user's last word was \"ship the payments service on friday\".",
    );
    let (appended, d) = &p.claims[1];
    assert!(p.outcome.admitted, "{:?}", p.outcome.findings);
    assert_eq!(p.outcome.struck, [appended.rid]);
    // Never dropped: recorded, with no witness, and the reason given.
    assert!(d.witnesses.is_empty());
    assert!(d.why.contains("unanchored"), "{}", d.why);
    assert!(appended.new);
    assert!(
        p.outcome
            .findings
            .iter()
            .any(|f| f.gate == Gate::UnanchoredClaim && f.subject == appended.rid),
        "{:?}",
        p.outcome.findings
    );
}

#[test]
fn a_sentence_no_span_places_stays_unanchored_without_a_finding() {
    // Near miss of the quoted sentence above: it quotes no one, so the word scorer's failing
    // to place it is no evidence it was made up (summaries word their support their own way,
    // and name what the model knows: "Pydantic v2", "Kubernetes"). It is kept, unanchored and
    // never verified, with no finding (SPEC.md 8.1).
    for sentence in [
        "Hit the context budget before completing the design.",
        "The payments service was migrated to Kubernetes.",
    ] {
        let (ledger, rids) = ledger();
        let p = propose(
            &ledger,
            rids,
            &format!("We are still on libfoo 2.3.1. {sentence}"),
        );
        let (appended, d) = &p.claims[1];
        assert!(d.witnesses.is_empty(), "{d:?}");
        assert!(p.outcome.admitted, "{:?}", p.outcome.findings);
        assert!(p.outcome.struck.is_empty(), "{:?}", p.outcome.findings);
        let status = p.outcome.claims.iter().find(|c| c.claim == appended.rid);
        assert_eq!(status.map(|c| c.status), Some(Status::Unanchored));
    }
    // A lead-in ending with a colon states nothing of its own, and is not struck either.
    let (ledger, rids) = self::ledger();
    let p = propose(
        &ledger,
        rids,
        "We are still on libfoo 2.3.1.\n\nConstraints carried over from the Kubernetes runbook:",
    );
    assert!(p.outcome.struck.is_empty(), "{:?}", p.outcome.findings);
}

/// A sentence that names the user where the finder found only the assistant's turn stays
/// unverified and is not struck: the finder chose that span by its words, and a user's brief
/// reply ("2", "unlocked") is no span a word scorer can place. A claim a runtime cites itself
/// is struck for the same mismatch (`gates::a_named_speaker_is_checked_against_the_words_it_quotes`).
#[test]
fn a_speaker_the_finders_span_is_not_leaves_the_sentence_unverified() {
    let (ledger, rids) = ledger();
    let p = propose(
        &ledger,
        rids,
        "The user moved retry handling into src/net/client.rs.",
    );
    let (appended, d) = &p.claims[0];
    assert_eq!(d.witnesses[0].turn, Some(4), "{d:?}");
    assert!(p.outcome.struck.is_empty(), "{:?}", p.outcome.findings);
    let status = p.outcome.claims.iter().find(|c| c.claim == appended.rid);
    assert_eq!(status.map(|c| c.status), Some(Status::Unverified));
    // Near miss: naming the speaker the span is, the sentence is verified.
    drop(ledger);
    let (ledger, rids) = self::ledger();
    let p = propose(
        &ledger,
        rids,
        "The assistant moved retry handling into src/net/client.rs.",
    );
    let (appended, _) = &p.claims[0];
    let status = p.outcome.claims.iter().find(|c| c.claim == appended.rid);
    assert_eq!(status.map(|c| c.status), Some(Status::Verified));
}

#[test]
fn a_contradicted_sentence_is_struck_and_its_near_miss_admitted() {
    let (ledger, rids) = ledger();
    // Nothing supports it and the turn it speaks of clashes with it: the finder's reading, so
    // the sentence is struck (a claim's own cited witness would refuse: gates.rs).
    let struck = propose(&ledger, rids.clone(), "libfoo was upgraded to 2.4.0.");
    let (appended, d) = &struck.claims[0];
    assert!(d.witnesses[0].contradicts, "{d:?}");
    assert_eq!(
        struck.outcome.struck,
        [appended.rid],
        "{:?}",
        struck.outcome.findings
    );
    let (ledger, rids2) = self::ledger();
    let admitted = propose(&ledger, rids2, "libfoo stays at 2.3.1.");
    assert!(admitted.outcome.admitted, "{:?}", admitted.outcome.findings);
    assert_eq!(rids.len(), 4);
}

#[test]
fn a_guess_restated_as_fact_is_not_laundered_through_prose() {
    let (ledger, rids) = ledger();
    // The sentence drops the user's hedge; the derived claim cites the hedged turn, and the
    // hedge gate sees that the summary stated a guess as a fact.
    let p = propose(&ledger, rids.clone(), "The staging DB port is 5433.");
    let (_, d) = &p.claims[0];
    assert_eq!(d.witnesses[0].rid, rids[2]);
    assert!(
        p.outcome
            .findings
            .iter()
            .any(|f| f.gate == Gate::HedgeStripped),
        "{:?}",
        p.outcome.findings
    );
    // Near miss: keeping the hedge is a hedged claim, and no hedge is stripped.
    let (ledger, rids) = self::ledger();
    let p = propose(
        &ledger,
        rids,
        "The user thinks the staging DB is on port 5433.",
    );
    assert!(
        !p.outcome
            .findings
            .iter()
            .any(|f| f.gate == Gate::HedgeStripped),
        "{:?}",
        p.outcome.findings
    );
}

#[test]
fn a_prose_line_ingests_once_and_reports_each_claim() {
    let (ledger, _) = ledger();
    let line = r#"{"kind":"summary","stream":"s","author":"self","budget":4000,"covers":["turn:1..turn:4"],"text":"We are still on libfoo 2.3.1. Do not bump libfoo."}"#;
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().unwrap();
    let r = Run::new()
        .apply_line(&mut b, &gate, 1, line.as_bytes())
        .unwrap()
        .unwrap();
    b.commit().unwrap();
    assert_eq!(r.claims.len(), 2);
    let v = ingest::line_result(&r);
    assert_eq!(v["claims"][0]["witnesses"][0]["turn"], 1);
    assert_eq!(v["claims"][0]["origin"], "user-said");
    assert!(v["claims"][0]["why"].as_str().unwrap().contains("turn 1"));
    let size = ledger.len().unwrap();
    // The same line again appends nothing.
    let mut b = ledger.batch().unwrap();
    let again = Run::new()
        .apply_line(&mut b, &gate, 1, line.as_bytes())
        .unwrap()
        .unwrap();
    b.commit().unwrap();
    assert!(!again.new);
    assert_eq!(ledger.len().unwrap(), size);
    // Both claims and text: refused, naming the field.
    let both = line.replace(r#""text""#, r#""claims":[],"text""#);
    let mut b = ledger.batch().unwrap();
    let err = Run::new()
        .apply_line(&mut b, &gate, 7, both.as_bytes())
        .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("text"));
    assert!(err.message.contains("not both"), "{}", err.message);
}

/// A sentence the finder cannot entail is still anchored, unverified, by the span that holds
/// the words it quotes, or half of its identifiers (two or more); one whose quote no span
/// holds stays unanchored and is struck.
#[test]
fn a_quote_or_its_identifiers_anchor_a_sentence_unverified() {
    let anchored = |text: &str| {
        let (ledger, rids) = ledger();
        let p = propose(&ledger, rids, text);
        let (appended, d) = &p.claims[0];
        (
            !d.witnesses.is_empty(),
            p.outcome.struck.contains(&appended.rid),
        )
    };
    assert_eq!(
        anchored("Their last word on it was \"do not bump\", said with some force."),
        (true, false)
    );
    assert_eq!(
        anchored("The retry code went to src/net/client.rs after libfoo 2.3.1 was settled."),
        (true, false)
    );
    assert_eq!(
        anchored("Their last word on it was \"ship it on friday\", said with some force."),
        (false, true)
    );
}
