//! Every gate: one case that fires and one near miss that passes.

use crate::util::ledger;
use cairn::gate::{Effect, Gatekeeper, Policy};
use cairn::ingest::{apply_line, LineResult};
use cairn::record::Status;
use cairn::score::Scorer;
use cairn::Read;

const BASE: &str = r#"{"kind":"span","stream":"g","turn":1,"role":"user","text":"The staging DB listens on port 5433."}
{"kind":"span","stream":"g","turn":2,"role":"tool","name":"psql","text":"connected to staging-db on port 5433"}
{"kind":"span","stream":"g","turn":3,"role":"user","text":"I think the cache lives in src/cache.rs."}
{"kind":"span","stream":"g","turn":4,"role":"assistant","text":"The report generator is written in Rust."}
{"kind":"span","stream":"g","turn":5,"role":"user","text":"the nightly migration did not finish"}
"#;

/// A summary line over turns 1..5 of stream g with the given claims and extra fields.
fn summary(claims: &str, extra: &str) -> String {
    format!(
        r#"{{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1..turn:5"],"evicts":[]{extra},"claims":[{claims}]}}"#
    )
}

fn claim(text: &str, origin: &str, witnesses: &str) -> String {
    format!(
        r#"{{"text":"{text}","origin":"{origin}","witnesses":[{witnesses}],"actionable":true}}"#
    )
}

fn run_with(gate: &Gatekeeper, lines: &str) -> (crate::util::Scenario, Vec<LineResult>) {
    let ledger = ledger();
    let mut b = ledger.batch().unwrap();
    let mut out = Vec::new();
    for (i, line) in lines.lines().enumerate() {
        match apply_line(&mut b, gate, i as u64 + 1, line.as_bytes()) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(e) => panic!("{e}"),
        }
    }
    b.commit().unwrap();
    (ledger, out)
}

fn run(lines: &str) -> (crate::util::Scenario, Vec<LineResult>) {
    run_with(&Gatekeeper::default(), lines)
}

/// The gates named in the last line's verdict, whether it was admitted, and whether a finding
/// of `gate` struck the claim it names.
fn last(lines: &str, gate: &str) -> (Vec<String>, bool, bool) {
    let (_, out) = run(lines);
    let o = out.last().unwrap().gate.as_ref().expect("a gated line");
    let struck = (o.findings.iter()).any(|f| f.gate == gate && o.struck.contains(&f.subject));
    (
        o.findings.iter().map(|f| f.gate.to_string()).collect(),
        o.admitted,
        struck,
    )
}

/// `gate` fires with `effect`: a refusal refuses the proposal; a strike admits it with the
/// claim struck; a flag admits it and strikes nothing for it.
fn fires(lines: &str, gate: &str, effect: Effect) {
    let (found, admitted, struck) = last(lines, gate);
    assert!(
        found.iter().any(|g| g == gate),
        "{gate} should fire: {found:?}"
    );
    let seen = match (admitted, struck) {
        (false, _) => Effect::Refuse,
        (true, true) => Effect::Strike,
        (true, false) => Effect::Flag,
    };
    assert_eq!(seen, effect, "{gate}: findings {found:?}");
}

fn passes(lines: &str, gate: &str) {
    let (found, _, _) = last(lines, gate);
    assert!(
        !found.iter().any(|g| g == gate),
        "{gate} should not fire: {found:?}"
    );
}

fn with(extra: &[String]) -> String {
    let mut s = BASE.to_string();
    for l in extra {
        s.push_str(l);
        s.push('\n');
    }
    s
}

#[test]
fn a_clean_summary_is_admitted_with_verified_claims() {
    let (ledger, out) = run(&with(&[summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    )]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(o.admitted && o.findings.is_empty(), "{:?}", o.findings);
    assert_eq!(o.claims[0].status, Status::Verified);
    assert_eq!(
        ledger.snapshot().unwrap().head("g").unwrap(),
        Some(out.last().unwrap().rid)
    );
}

#[test]
fn unanchored_claim() {
    let one =
        |text: &str, witnesses: &str| with(&[summary(&claim(text, "user-said", witnesses), "")]);
    let strikes = |text: &str| fires(&one(text, ""), "unanchored-claim", Effect::Strike);
    strikes("the staging DB listens on port 5433");
    passes(
        &one("the staging DB listens on port 5433", r#""turn:1""#),
        "unanchored-claim",
    );
    // A plan asserts no history: what is still to be done needs no raw span under it, but a
    // label that does not name work ahead changes nothing.
    passes(
        &one("Next step: move the staging DB to port 5433", ""),
        "unanchored-claim",
    );
    strikes("Status: moved the staging DB to port 5433");
    // An abstractive claim a runtime writes without witnesses is struck all the same: only
    // cairn's prose finder, having recorded the span nearest it, spares one (prose.rs).
    let inferred = |text: &str| with(&[summary(&claim(text, "inferred", ""), "")]);
    fires(
        &inferred("Root cause identified but NOT YET FIXED"),
        "unanchored-claim",
        Effect::Strike,
    );
    strikes("Root cause identified but NOT YET FIXED");
}

#[test]
fn laundered_claim_and_its_tag_until_regrounded() {
    let first = summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    );
    let carried = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:4"],"evicts":[],"claims":["prior:0"]}"#;
    let (_, out) = run(&with(&[first.clone(), carried.to_string()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(o.findings.iter().any(|f| f.gate == "laundered-claim"));
    assert_eq!(o.claims[0].status, Status::Unverified);
    // Near miss: the same claim carried by a summary whose window holds its witness.
    let covered = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1"],"evicts":[],"claims":["prior:0"]}"#;
    passes(
        &with(&[first.clone(), covered.to_string()]),
        "laundered-claim",
    );
    // Near miss: asking for re-grounding at the gate verifies it.
    let reground = carried.replace(r#""evicts":[]"#, r#""evicts":[],"reground":true"#);
    let (_, out) = run(&with(&[first, reground]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(
        !o.findings.iter().any(|f| f.gate == "laundered-claim"),
        "{:?}",
        o.findings
    );
    assert_eq!(
        (o.claims[0].status, o.regrounded.len()),
        (Status::Verified, 1)
    );
}

/// A claim no span it cites entails is struck; the compaction stands without it.
#[test]
fn fabricated_claim() {
    fires(
        &with(&[summary(
            &claim(
                "the nightly migration was moved to Friday",
                "user-said",
                r#""turn:5""#,
            ),
            "",
        )]),
        "fabricated-claim",
        Effect::Strike,
    );
    passes(
        &with(&[summary(
            &claim(
                "the nightly migration did not finish",
                "user-said",
                r#""turn:5""#,
            ),
            "",
        )]),
        "fabricated-claim",
    );
}

/// Witness first: a claim is judged against the span it cites. Support found only in another
/// covered span is named, never counted: the claim is fabricated.
#[test]
fn fabricated_claim_names_support_the_claim_does_not_cite() {
    let cites = |turn: u32| {
        with(&[summary(
            &claim(
                "the report generator is written in Rust",
                "inferred",
                &format!(r#""turn:{turn}""#),
            ),
            "",
        )])
    };
    let (_, out) = run(&cites(1));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    let f = o
        .findings
        .iter()
        .find(|f| f.gate == "fabricated-claim")
        .expect("fabricated-claim fires");
    assert!(
        f.detail.contains("turn 4, which it does not cite"),
        "{}",
        f.detail
    );
    assert!(
        o.admitted && o.struck == [o.claims[0].claim],
        "{:?}",
        o.findings
    );
    assert_eq!(o.claims[0].status, Status::Fabricated);
    // Near miss: citing the span that says it.
    let (_, out) = run(&cites(4));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(o.admitted, "{:?}", o.findings);
    assert_eq!(o.claims[0].status, Status::Verified);
}

/// A claim that the span it cites contradicts is refused, though the span stays in the window:
/// the span negates what the claim asserts.
#[test]
fn a_claim_its_own_witness_contradicts_is_refused_in_the_window() {
    let (_, out) = run(&with(&[summary(
        &claim("the nightly migration finished", "user-said", r#""turn:5""#),
        "",
    )]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(!o.admitted);
    assert!(
        o.findings.iter().any(|f| f.gate == "contradicted-claim"
            && f.detail
                .contains("contradicted by the span it cites, turn 5")),
        "{:?}",
        o.findings
    );
    assert!(!o.findings.iter().any(|f| f.gate == "evicted-disconfirmer"));
    // Near miss: the same words, negated as the span negates them.
    passes(
        &with(&[summary(
            &claim(
                "the nightly migration did not finish",
                "user-said",
                r#""turn:5""#,
            ),
            "",
        )]),
        "contradicted-claim",
    );
}

/// Another value of the same attribute is a clash: port 5434 where the span says 5433.
#[test]
fn contradicted_claim_needs_a_clash() {
    fires(
        &with(&[summary(
            &claim(
                "the staging DB listens on port 5434",
                "user-said",
                r#""turn:1""#,
            ),
            "",
        )]),
        "contradicted-claim",
        Effect::Refuse,
    );
    // Near miss: a span on the same subject that asserts something else is no contradiction.
    let story = r#"{"kind":"span","stream":"g","turn":6,"role":"user","text":"Never run DROP TABLE on the production users table."}
{"kind":"span","stream":"g","turn":7,"role":"assistant","text":"ALTER TABLE users ADD COLUMN last_login timestamptz;"}"#;
    let s = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:6..turn:7"],"evicts":["turn:7"],"claims":[{"text":"the user forbade running DROP TABLE on the production users table","origin":"user-said","witnesses":["turn:6"],"actionable":true}]}"#;
    let (found, admitted, _) = last(&with(&[story.into(), s.into()]), "contradicted-claim");
    assert!(
        admitted
            && !found
                .iter()
                .any(|g| g == "contradicted-claim" || g == "evicted-disconfirmer"),
        "{found:?}"
    );
}

/// Two summaries for the laundering rate: the first, under `parent_budget`, holds ten
/// actionable claims; the second, under a budget given later, carries one of them (laundered)
/// and states `fresh` new ones.
fn laundering_pair(parent_budget: u32, fresh: u8) -> (String, impl Fn(u32) -> String) {
    let held: Vec<String> = (0..10u8)
        .map(|i| {
            let text = format!(
                "the staging DB listens on port 5433 note {}",
                char::from(b'a' + i)
            );
            claim(&text, "user-said", r#""turn:1""#)
        })
        .collect();
    let first = summary(&held.join(","), "")
        .replace(r#""budget":1000"#, &format!(r#""budget":{parent_budget}"#));
    let second = move |budget: u32| {
        let mut cs = vec!["\"prior:0\"".to_string()];
        cs.extend((0..fresh).map(|i| {
            let text = format!(
                "psql connected to staging-db on port 5433 note {}",
                char::from(b'a' + i)
            );
            claim(&text, "tool-output", r#""turn:2""#)
        }));
        format!(
            r#"{{"kind":"summary","stream":"g","author":"self","budget":{budget},"covers":["turn:2"],"evicts":[],"claims":[{}]}}"#,
            cs.join(",")
        )
    };
    (first, second)
}

#[test]
fn laundering_rate_with_budget_scaling() {
    // Summary 2 carries one claim of summary 1 and states nine fresh ones: 1 of 10 = 0.10.
    let (first, second) = laundering_pair(1000, 9);
    passes(&with(&[first.clone(), second(1000)]), "laundering-rate");
    // Half the parent's budget halves the threshold to 0.075: 0.10 now refuses.
    fires(
        &with(&[first.clone(), second(500)]),
        "laundering-rate",
        Effect::Refuse,
    );
    // A policy can raise the threshold.
    let policy = Policy::from_toml("laundering_rate = 0.5", "test").unwrap();
    let gate = Gatekeeper {
        policy,
        ..Gatekeeper::default()
    };
    let (_, out) = run_with(&gate, &with(&[first, second(500)]));
    assert!(out.last().unwrap().gate.as_ref().unwrap().admitted);
}

/// The threshold is the policy's rate times the budget ratio, computed in that order: with
/// budget 1000 against a parent's 3000 it is 0.15 x (1000/3000) = 0.049999..., so 1 laundered
/// claim of 20 (0.05) refuses. A regression guard from the 2026-11-30 refactor, which briefly
/// computed (0.15 x 1000) / 3000 = 0.05 and admitted it.
#[test]
fn laundering_rate_scales_the_policy_by_the_budget_ratio_in_that_order() {
    let (first, second) = laundering_pair(3000, 19);
    fires(
        &with(&[first.clone(), second(1000)]),
        "laundering-rate",
        Effect::Refuse,
    );
    // Near miss: budget 1001 gives a threshold of 0.05005, above the rate.
    passes(&with(&[first, second(1001)]), "laundering-rate");
}

/// An identifier found verbatim in no raw span of the stream strikes the claim; one found in
/// any earlier span (or naming its tool), even one the claim does not cite, has not drifted,
/// and a bare number is no identifier.
#[test]
fn identifier_drift() {
    fires(
        &with(&[summary(
            &claim(
                "psql connected to staging-db.internal on port 5433",
                "tool-output",
                r#""turn:2""#,
            ),
            "",
        )]),
        "identifier-drift",
        Effect::Strike,
    );
    passes(
        &with(&[summary(
            &claim(
                "psql connected to staging-db on port 5433",
                "tool-output",
                r#""turn:2""#,
            ),
            "",
        )]),
        "identifier-drift",
    );
    // Near miss: the path is in turn 3, which the claim does not cite.
    passes(
        &with(&[summary(
            &claim(
                "the report generator in src/cache.rs is written in Rust",
                "inferred",
                r#""turn:4""#,
            ),
            "",
        )]),
        "identifier-drift",
    );
    // A code span that lists items names each one: each must stand in a turn, not the list.
    let listing = |span: &str| {
        with(&[summary(
            &claim(
                &format!("the cache and the port: `{span}`"),
                "inferred",
                r#""turn:4""#,
            ),
            "",
        )])
    };
    passes(&listing("src/cache.rs, staging-db"), "identifier-drift");
    fires(
        &listing("src/cache.rs, staging-db.internal"),
        "identifier-drift",
        Effect::Strike,
    );
    // A tool's name is what the agent called: held by the span it names (turn 2 is `psql`'s),
    // where a tool no span names has drifted.
    let tool = |name: &str| {
        with(&[summary(
            &claim(
                &format!("the `{name}` tool connected to staging-db on port 5433"),
                "tool-output",
                r#""turn:2""#,
            ),
            "",
        )])
    };
    passes(&tool("psql"), "identifier-drift");
    fires(&tool("mysql"), "identifier-drift", Effect::Strike);
}

#[test]
fn hedge_stripped() {
    fires(
        &with(&[summary(
            &claim(
                "the cache lives in src/cache.rs",
                "user-said",
                r#""turn:3""#,
            ),
            "",
        )]),
        "hedge-stripped",
        Effect::Flag,
    );
    passes(
        &with(&[summary(
            &claim("the cache lives in src/cache.rs", "hedged", r#""turn:3""#),
            "",
        )]),
        "hedge-stripped",
    );
    // A report that hedges another statement does not hedge this one.
    let report = r#"{"kind":"span","stream":"g","turn":6,"role":"tool","text":"The nightly job wrote 40 rows to the audit table. The retry might be flaky."}"#;
    let rows = |origin: &str| {
        with(&[
            report.into(),
            summary(
                &claim(
                    "the nightly job wrote 40 rows to the audit table",
                    origin,
                    r#""turn:6""#,
                ),
                "",
            )
            .replace("turn:1..turn:5", "turn:1..turn:6"),
        ])
    };
    passes(&rows("tool-output"), "hedge-stripped");
    let hedged = rows("tool-output")
        .replace("The retry might be flaky.", "It probably wrote them twice.")
        .replace(
            "The nightly job wrote 40 rows",
            "The nightly job maybe wrote 40 rows",
        );
    fires(&hedged, "hedge-stripped", Effect::Flag);
}

#[test]
fn origin_mismatch() {
    fires(
        &with(&[summary(
            &claim(
                "the report generator is written in Rust",
                "user-said",
                r#""turn:4""#,
            ),
            "",
        )]),
        "origin-mismatch",
        Effect::Flag,
    );
    passes(
        &with(&[summary(
            &claim(
                "the report generator is written in Rust",
                "inferred",
                r#""turn:4""#,
            ),
            "",
        )]),
        "origin-mismatch",
    );
}

#[test]
fn missing_origin_absent_or_unknown() {
    let absent = r#"{"text":"the staging DB listens on port 5433","witnesses":["turn:1"]}"#;
    fires(
        &with(&[summary(absent, "")]),
        "missing-origin",
        Effect::Refuse,
    );
    fires(
        &with(&[summary(
            &claim(
                "the staging DB listens on port 5433",
                "rumour",
                r#""turn:1""#,
            ),
            "",
        )]),
        "missing-origin",
        Effect::Refuse,
    );
    passes(
        &with(&[summary(
            &claim(
                "the staging DB listens on port 5433",
                "inferred",
                r#""turn:1""#,
            ),
            "",
        )]),
        "missing-origin",
    );
}

#[test]
fn evicted_disconfirmer_by_judgement_carried_claim_and_scorer() {
    let first = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1"],"evicts":[],"claims":[{"text":"the staging DB listens on port 5433","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}"#;
    let judged = r#"{"kind":"judgement","stream":"g","claim":"prior:0","span":"turn:4","relation":"contradicts"}"#;
    let evicting = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1..turn:4"],"evicts":["turn:4"],"claims":["prior:0"]}"#;
    fires(
        &with(&[first.into(), judged.into(), evicting.into()]),
        "evicted-disconfirmer",
        Effect::Refuse,
    );
    // Near miss: the same summary keeps the disconfirmer in the window.
    passes(
        &with(&[
            first.into(),
            judged.into(),
            evicting.replace(r#""evicts":["turn:4"]"#, r#""evicts":["turn:3"]"#),
        ]),
        "evicted-disconfirmer",
    );
    // A judgement on a claim it carries forward (a witness claim) counts too.
    let derived = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1..turn:4"],"evicts":["turn:4"],"claims":[{"text":"The staging DB listens on port 5433.","origin":"inferred","witnesses":["prior:0","turn:1"]}]}"#;
    fires(
        &with(&[first.into(), judged.into(), derived.into()]),
        "evicted-disconfirmer",
        Effect::Refuse,
    );
    // The word scorer reads a clash in an evicted tool output, and no judgement records one: a
    // suspicion the verdict shows (`evicted-clash`), and the compaction stands.
    let other = r#"{"kind":"span","stream":"g","turn":6,"role":"tool","text":"the staging DB listens on port 5434"}"#;
    let evict6 = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1..turn:6"],"evicts":["turn:6"],"claims":[{"text":"the staging DB listens on port 5433","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}"#;
    fires(
        &with(&[other.into(), evict6.into()]),
        "evicted-clash",
        Effect::Flag,
    );
    passes(
        &with(&[other.into(), evict6.into()]),
        "evicted-disconfirmer",
    );
    // Near miss: the same summary keeps that output in the window.
    let kept = evict6.replace(r#""evicts":["turn:6"]"#, r#""evicts":[]"#);
    passes(&with(&[other.into(), kept]), "evicted-clash");
}

#[test]
fn depth_exceeded_flags_and_a_separate_pass_resets() {
    let first = summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    );
    let again = |author: &str, n: u32| {
        format!(
            r#"{{"kind":"summary","stream":"g","author":"{author}","budget":1000,"covers":["turn:1"],"evicts":[],"self_score":0.9{n},"claims":["prior:0"]}}"#
        )
    };
    // Seed 001 counts re-summarisations: the first compaction has depth 0, so the fourth is
    // the third re-summarisation and the first past two.
    let four = with(&[
        first.clone(),
        again("self", 1),
        again("self", 2),
        again("self", 3),
    ]);
    fires(&four, "depth-exceeded", Effect::Flag);
    // Near miss: the third compaction, two re-summarisations deep, is not flagged.
    passes(
        &with(&[first.clone(), again("self", 1), again("self", 2)]),
        "depth-exceeded",
    );
    passes(
        &with(&[
            first,
            again("separate", 1),
            again("self", 2),
            again("self", 3),
        ]),
        "depth-exceeded",
    );
    let (ledger, _) = run(&four);
    assert_eq!(
        ledger
            .snapshot()
            .unwrap()
            .deeper_than(cairn::record::Kind::Summary, 2)
            .unwrap()
            .len(),
        1
    );
}

/// A summary covering turns 1 to `to` that evicts `evicts`, with one claim resting on turn 1.
fn port_claim_evicting(to: u64, evicts: &str) -> String {
    summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    )
    .replace(
        r#""covers":["turn:1..turn:5"]"#,
        &format!(r#""covers":["turn:1..turn:{to}"]"#),
    )
    .replace(r#""evicts":[]"#, &format!(r#""evicts":["{evicts}"]"#))
}

/// A summary covering turns 1 to 12 that evicts turn 12, with one claim resting on turn 1.
fn evicting_turn_12() -> String {
    port_claim_evicting(12, "turn:12")
}

#[test]
fn unpinned_reference_names_the_items() {
    let prohibition = r#"{"kind":"span","stream":"g","turn":12,"role":"user","text":"Never run DROP TABLE on the orders database."}"#;
    let s = evicting_turn_12();
    let (_, out) = run(&with(&[prohibition.into(), s.clone()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(!o.admitted);
    let f = o
        .findings
        .iter()
        .find(|f| f.gate == "unpinned-reference")
        .unwrap();
    assert!(f.detail.starts_with("cannot compact stream g: unpinned reference, 1 decision-relevant item (turn 12: prohibition 'Never run DROP TABLE"), "{}", f.detail);
    // The repair carries the prohibition verbatim and is admitted.
    let repair = o.repair.as_ref().expect("a refusal comes with its repair");
    assert!(repair.outcome.admitted, "{:?}", repair.outcome.findings);
    assert!(
        repair
            .text
            .contains("Never run DROP TABLE on the orders database."),
        "{}",
        repair.text
    );
    let pin = r#"{"kind":"pin","stream":"g","name":"c","items":[{"class":"prohibition","text":"never run DROP TABLE","witness":"turn:12"}]}"#;
    passes(
        &with(&[prohibition.into(), pin.into(), s.clone()]),
        "unpinned-reference",
    );
    // Near misses: the span stays in the window, or a claim carries it word for word.
    passes(
        &with(&[
            prohibition.into(),
            s.replace(r#""evicts":["turn:12"]"#, r#""evicts":[]"#),
        ]),
        "unpinned-reference",
    );
    let carried = s.replace(
        r#""claims":["#,
        r#""claims":[{"text":"Never run DROP TABLE on the orders database.","origin":"user-said","witnesses":["turn:12"]},"#,
    );
    passes(&with(&[prohibition.into(), carried]), "unpinned-reference");
    // A claim that rests on the item's span keeps it only when it keeps its denial.
    let resting = |text: &str| {
        s.replace(
            r#""claims":["#,
            &format!(
                r#""claims":[{{"text":"{text}","origin":"user-said","witnesses":["turn:12"]}},"#
            ),
        )
    };
    let (_, out) = run(&with(&[
        prohibition.into(),
        resting("The user spoke of the orders database."),
    ]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(
        o.findings.iter().any(|f| f.gate == "unpinned-reference"),
        "{:?}",
        o.findings
    );
    passes(
        &with(&[
            prohibition.into(),
            resting("The user forbade dropping tables on the orders database."),
        ]),
        "unpinned-reference",
    );
}

/// A failed attempt asks for a pin when its failure stops a retry (seed 003): the program is
/// not there. A summary that evicts it and never says so is refused; one that says so in its
/// own words keeps it; a failure of the work itself asks for nothing.
#[test]
fn a_failure_that_stops_a_retry_is_kept_or_refused() {
    let span = |text: &str| {
        format!(
            r#"{{"kind":"span","stream":"g","turn":12,"role":"tool","text":{}}}"#,
            serde_json::to_string(text).unwrap()
        )
    };
    let missing = span("Exit code 127\n(eval):1: command not found: psql");
    let (_, out) = run(&with(&[missing.clone(), evicting_turn_12()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    let f = (o.findings.iter())
        .find(|f| f.gate == "unpinned-reference")
        .expect("the lost failure refuses");
    assert!(
        f.detail
            .contains("failed-attempt '(eval):1: command not found: psql'"),
        "{}",
        f.detail
    );
    let noticed = r#"{"kind":"span","stream":"g","turn":11,"role":"assistant","text":"psql is not installed in this VM."}"#;
    let said = evicting_turn_12().replace(
        r#""claims":["#,
        r#""claims":[{"text":"psql is not installed in this VM.","origin":"inferred","witnesses":["turn:11"]},"#,
    );
    passes(
        &with(&[noticed.into(), missing, said]),
        "unpinned-reference",
    );
    let work = span("error TS2724: 'x' has no exported member named 'y'");
    passes(&with(&[work, evicting_turn_12()]), "unpinned-reference");
}

/// A summary claim that rests on the span an item came from carries the item, as it carries a
/// pinned one: a plan restated in a sentence keeps the plan's items (issue 36).
#[test]
fn a_claim_resting_on_an_items_span_keeps_it() {
    let plan = r#"{"kind":"span","stream":"g","turn":12,"role":"user","text":"Keep the budget at 400 dollars for the whole migration."}"#;
    let s = evicting_turn_12();
    let (_, out) = run(&with(&[plan.into(), s.clone()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    let f = (o.findings.iter())
        .find(|f| f.gate == "unpinned-reference")
        .expect("the commitment is lost");
    assert!(
        f.detail.contains("commitment 'Keep the budget"),
        "{}",
        f.detail
    );
    let restated = s.replace(
        r#""claims":["#,
        r#""claims":[{"text":"The user set out how the migration is to be paid for.","origin":"user-said","witnesses":["turn:12"]},"#,
    );
    passes(&with(&[plan.into(), restated]), "unpinned-reference");
}

#[test]
fn pin_loss_any_prohibition_or_low_fidelity() {
    let prohibition = r#"{"kind":"span","stream":"g","turn":12,"role":"user","text":"Never run DROP TABLE on the orders database."}"#;
    let pin = r#"{"kind":"pin","stream":"g","name":"c","items":[{"class":"prohibition","text":"never run DROP TABLE on the orders database","witness":"turn:12"}]}"#;
    let dropping = r#"{"kind":"summary","stream":"g","author":"self","budget":1000,"covers":["turn:1..turn:12"],"evicts":["turn:12"],"self_score":0.91,"claims":[{"text":"the staging DB listens on port 5433","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}"#;
    let (_, out) = run(&with(&[prohibition.into(), pin.into(), dropping.into()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(
        !o.admitted && o.findings.iter().any(|f| f.gate == "pin-loss"),
        "{:?}",
        o.findings
    );
    assert_eq!(
        o.anchored_score,
        Some(0.0),
        "self score 0.91, anchored 0.0: the silent loss"
    );
    // Near miss: the same compaction keeps the prohibition as a claim.
    let keeping = dropping.replace(r#""claims":["#, r#""claims":[{"text":"never run DROP TABLE on the orders database","origin":"user-said","witnesses":["turn:12"],"actionable":true},"#);
    passes(
        &with(&[prohibition.into(), pin.into(), keeping]),
        "pin-loss",
    );
    // Near miss: it does not evict the span that states it.
    passes(
        &with(&[
            prohibition.into(),
            pin.into(),
            dropping.replace(r#""evicts":["turn:12"]"#, r#""evicts":[]"#),
        ]),
        "pin-loss",
    );
}

#[test]
fn pin_conflict_is_an_error_and_the_first_pin_stays() {
    let pin = r#"{"kind":"pin","stream":"g","name":"c","items":[{"class":"prohibition","text":"never run DROP TABLE"}]}"#;
    let ledger = ledger();
    let gate = Gatekeeper::default();
    let mut b = ledger.batch().unwrap();
    let first = apply_line(&mut b, &gate, 1, pin.as_bytes())
        .unwrap()
        .unwrap();
    assert!(
        !apply_line(&mut b, &gate, 2, pin.as_bytes())
            .unwrap()
            .unwrap()
            .new,
        "near miss: the identical pin is a no-op"
    );
    let other = pin.replace("never run", "always run");
    let e = apply_line(&mut b, &gate, 3, other.as_bytes()).unwrap_err();
    let gate = "pin-conflict";
    assert!(e.message.starts_with(&format!("{gate}:")), "{e}");
    assert_eq!(b.pin("g", "c").unwrap(), Some(first.rid));
}

fn action(text: &str, irreversible: bool) -> String {
    format!(
        r#"{{"kind":"action","stream":"g","text":"{text}","irreversible":{irreversible},"relies_on":["prior:0"]}}"#
    )
}

#[test]
fn irreversible_unverified() {
    let hedged = summary(
        &claim("the cache lives in src/cache.rs", "hedged", r#""turn:3""#),
        "",
    );
    fires(
        &with(&[hedged.clone(), action("rm -rf src/cache.rs", true)]),
        "irreversible-unverified",
        Effect::Refuse,
    );
    // Near miss: a reversible action on the same claim, and an irreversible one on a verified claim.
    passes(
        &with(&[hedged, action("open src/cache.rs", false)]),
        "irreversible-unverified",
    );
    let verified = summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    );
    passes(
        &with(&[verified, action("point the deploy at port 5433", true)]),
        "irreversible-unverified",
    );
}

#[test]
fn prohibited_action() {
    let prohibition = r#"{"kind":"span","stream":"g","turn":12,"role":"user","text":"Never run DROP TABLE on the orders database."}"#;
    let pin = r#"{"kind":"pin","stream":"g","name":"c","items":[{"class":"prohibition","text":"never run DROP TABLE on the orders database","witness":"turn:12"}]}"#;
    let s = summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    );
    fires(
        &with(&[
            prohibition.into(),
            pin.into(),
            s.clone(),
            action("DROP TABLE orders_old", true),
        ]),
        "prohibited-action",
        Effect::Refuse,
    );
    passes(
        &with(&[
            prohibition.into(),
            pin.into(),
            s,
            action("ALTER TABLE orders_old SET TABLESPACE archive", true),
        ]),
        "prohibited-action",
    );
}

#[test]
fn every_gate_name_is_exercised_by_this_file() {
    let me = include_str!("gates.rs");
    for g in cairn::gate::Gate::ALL {
        assert!(me.contains(&format!("\"{g}\"")), "{g} has no test here");
    }
}

#[test]
fn the_policy_hash_is_recorded_in_every_verdict() {
    let s = summary(
        &claim(
            "the staging DB listens on port 5433",
            "user-said",
            r#""turn:1""#,
        ),
        "",
    );
    let policy = Policy::from_toml("fidelity = 0.9\nmax_depth = 3", "test").unwrap();
    let gate = Gatekeeper {
        policy: policy.clone(),
        ..Gatekeeper::default()
    };
    let (ledger, out) = run_with(&gate, &with(&[s]));
    let v = out.last().unwrap().gate.as_ref().unwrap().verdict;
    let Some(cairn::record::Record::Verdict(v)) = ledger.get(&v).unwrap() else {
        panic!()
    };
    assert_eq!(v.policy, policy.hash(cairn::score::Lexical.id()));
    assert_ne!(v.policy, Policy::default().hash(cairn::score::Lexical.id()));
    for bad in [
        "fidelity = 2",
        "colour = 0.5",
        "max_depth = -1",
        "fidelity =",
    ] {
        assert!(Policy::from_toml(bad, "p.toml").is_err(), "{bad}");
    }
}

/// A summary of a stream that holds no raw span (a log that begins with a compaction of an
/// earlier log) is flagged as having its source missing, not as made up; its claims stay
/// unanchored and unchecked.
#[test]
fn source_missing() {
    let orphan = r#"{"kind":"summary","stream":"h","author":"self","budget":1000,"covers":[],"evicts":[],"claims":[{"text":"the staging DB listens on port 5433","origin":"user-said","witnesses":[]}]}"#;
    fires(&with(&[orphan.into()]), "source-missing", Effect::Flag);
    let (_, out) = run(&with(&[orphan.into()]));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert_eq!(o.claims[0].status, Status::Unanchored);
    assert!(!o.findings.iter().any(|f| f.gate == "unanchored-claim"));
    // Near miss: the same claim in a stream that holds its source is unanchored, and struck.
    let here = orphan.replace(r#""stream":"h""#, r#""stream":"g""#);
    passes(&with(std::slice::from_ref(&here)), "source-missing");
    fires(&with(&[here]), "unanchored-claim", Effect::Strike);
}

/// A claim that names the user as its speaker while it cites the assistant's turn is right
/// when a span of the user's holds the words it quotes; with no word of the user's, it is not.
#[test]
fn a_named_speaker_is_checked_against_the_words_it_quotes() {
    let asked = r#"{"kind":"span","stream":"g","turn":6,"role":"user","text":"hmm, ok: keep the budget at 400 dollars for the whole migration"}"#;
    let agreed = r#"{"kind":"span","stream":"g","turn":7,"role":"assistant","text":"Agreed: the budget stays at 400 dollars for the whole migration."}"#;
    let quoting = |quote: &str| {
        let text = format!(
            "User mid-task message: \\\"{quote}\\\" - the budget stays at 400 dollars for the whole migration."
        );
        summary(&claim(&text, "user-said", r#""turn:7""#), "")
            .replace("turn:1..turn:5", "turn:1..turn:7")
    };
    let detail = |lines: &str| {
        let (_, out) = run(lines);
        let o = out.last().unwrap().gate.as_ref().unwrap();
        (o.findings.iter())
            .filter(|f| f.gate == "fabricated-claim")
            .map(|f| f.detail.clone())
            .collect::<Vec<_>>()
    };
    let found = detail(&with(&[
        asked.into(),
        agreed.into(),
        quoting("keep the budget at 400 dollars"),
    ]));
    assert!(found.is_empty(), "{found:?}");
    // Near miss: the user never wrote it; only the assistant's words are in the stream.
    let found = detail(&with(&[
        agreed.into(),
        quoting("keep the budget at 400 dollars"),
    ]));
    assert!(
        found.iter().any(|d| d.contains("says the user did it")),
        "{found:?}"
    );
    // A lead-in ending with a colon states no deed of its own: its items are checked, not it.
    let lead_in = |text: &str| {
        summary(&claim(text, "user-said", r#""turn:7""#), "")
            .replace("turn:1..turn:5", "turn:1..turn:7")
    };
    let found = detail(&with(&[
        agreed.into(),
        lead_in("The user's requests about the budget for the whole migration were:"),
    ]));
    assert!(found.is_empty(), "{found:?}");
    let found = detail(&with(&[
        agreed.into(),
        lead_in("The user kept the budget for the whole migration at 400 dollars."),
    ]));
    assert!(
        found.iter().any(|d| d.contains("says the user did it")),
        "{found:?}"
    );
}

/// Six evicted tool turns that the word scorer reads as clashing with a claim, none recorded as
/// contradicting it: each is shown (`evicted-clash`, the gate reads four per claim), the claim
/// stays unverified, and the compaction stands; nothing is refused, so nothing is repaired.
#[test]
fn evicted_clashes_leave_the_claim_unverified_and_the_compaction_stands() {
    let mut lines = vec![];
    for t in 6..=11 {
        lines.push(format!(
            r#"{{"kind":"span","stream":"g","turn":{t},"role":"tool","name":"psql","text":"staging DB listens on port 543{t} (check {t})"}}"#
        ));
    }
    let s = port_claim_evicting(11, "turn:6..turn:11");
    lines.push(s.clone());
    let (_, out) = run(&with(&lines));
    let o = out.last().unwrap().gate.as_ref().unwrap();
    assert!(o.admitted, "{:?}", o.findings);
    assert!(o.repair.is_none());
    let found = (o.findings.iter())
        .filter(|f| f.gate == "evicted-clash")
        .count();
    assert!(found >= 1, "{:?}", o.findings);
    assert!(
        o.claims
            .iter()
            .all(|c| c.status != cairn::record::Status::Verified),
        "{:?}",
        o.claims
    );
    // Near miss: evicting none of them, nothing clashes out of the window.
    lines.pop();
    lines.push(s.replace(r#""evicts":["turn:6..turn:11"]"#, r#""evicts":[]"#));
    passes(&with(&lines), "evicted-clash");
}
