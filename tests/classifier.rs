//! The decision-relevant classifier on a labelled set: misses lose constraints, false alarms
//! block every compaction, so both are counted and bounded.

use cairn::gate::classify;
use cairn::record::{Rid, Role, Span};
use serde_json::Value;

#[test]
fn classifier_misses_and_false_alarms_on_the_labelled_set() {
    let data = include_str!("data/classifier.jsonl");
    let (mut expected, mut misses, mut alarms, mut spans) = (0, Vec::new(), Vec::new(), 0);
    for line in data.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let span = Span {
            stream: "c".into(),
            turn: 1,
            role: Role::from_name(v["role"].as_str().unwrap()).unwrap(),
            tool: None,
            text: v["text"].as_str().unwrap().into(),
        };
        spans += 1;
        let found: Vec<&str> = classify(Rid([0; 32]), &span)
            .iter()
            .map(|i| i.class.name())
            .collect();
        let want: Vec<&str> = v["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        expected += want.len();
        for w in &want {
            if !found.contains(w) {
                misses.push(format!("{w}: {}", span.text));
            }
        }
        for f in &found {
            if !want.contains(f) {
                alarms.push(format!("{f}: {}", span.text));
            }
        }
    }
    println!(
        "classifier: {spans} spans, {expected} labelled items, {} misses, {} false alarms",
        misses.len(),
        alarms.len()
    );
    for m in &misses {
        println!("  miss  {m}");
    }
    for a in &alarms {
        println!("  alarm {a}");
    }
    assert!(misses.len() <= 2, "misses: {misses:#?}");
    assert!(alarms.len() <= 2, "false alarms: {alarms:#?}");
}

/// Classifier version 2 (derived rules 2): "I don't have / know / remember ..." states a fact,
/// not a rule, and a typographic apostrophe negates as a plain one does.
#[test]
fn facts_with_dont_are_not_prohibitions_and_typographic_apostrophes_count() {
    let user = |text: &str| Span {
        stream: "c".into(),
        turn: 1,
        role: Role::User,
        tool: None,
        text: text.into(),
    };
    let classes = |text: &str| -> Vec<&'static str> {
        classify(Rid([0; 32]), &user(text))
            .iter()
            .map(|i| i.class.name())
            .collect()
    };
    for fact in [
        "I don't have the order ID.",
        "I don\u{2019}t remember the reservation number.",
        "I do not know my reservation id.",
        "If you need anything else, don't hesitate to contact us.",
    ] {
        assert!(!classes(fact).contains(&"prohibition"), "{fact}");
    }
    // Near misses: rules, with either apostrophe.
    for rule in [
        "Don\u{2019}t refund the order without a manager's approval.",
        "Don't run DROP TABLE on production.",
        "I don't want the 5:10 p.m. showing.",
    ] {
        assert!(classes(rule).contains(&"prohibition"), "{rule}");
    }
}

/// The (class, text) of each item the current classifier finds in one span.
fn found(role: Role, text: &str) -> Vec<(String, String)> {
    let span = Span {
        stream: "c".into(),
        turn: 1,
        role,
        tool: None,
        text: text.into(),
    };
    (classify(Rid([0; 32]), &span).into_iter())
        .map(|i| (i.class.name().to_string(), i.text))
        .collect()
}

/// Classifier version 3 (derived rules 3): preferences the user states, rules a system prompt
/// states, identifiers kept verbatim; each beside a near miss that is not one.
#[test]
fn preferences_policy_rules_and_identifiers() {
    let has = |role, text, class: &str| found(role, text).iter().any(|(c, _)| c == class);
    // Preferences, and a request for information that is not one.
    assert!(has(
        Role::User,
        "I\u{2019}d prefer to pay with a gift card.",
        "preference"
    ));
    assert!(!has(Role::User, "That's all I need, thanks!", "preference"));
    // A rule in a system prompt, and a simulated user's wish in one.
    assert!(has(
        Role::System,
        "Basic economy flights cannot be modified.",
        "policy"
    ));
    assert!(has(
        Role::System,
        "Each reservation can have at most five passengers.",
        "policy"
    ));
    assert!(!has(Role::System, "You want to fly in economy.", "policy"));
    // Identifiers, verbatim; a version banner's build hash in tool output is not one.
    let ids = found(
        Role::Assistant,
        "Booked. Your reference number is A9NHSO9Y, total 17.60 pounds.",
    );
    let ids: Vec<&str> = ids
        .iter()
        .filter(|(c, _)| c == "identifier")
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(ids, ["A9NHSO9Y", "17.60"]);
    assert!(has(
        Role::Tool,
        "git merge-base 004 main\n332ea13eeb91d603ea135a78737fd6b8536d9b88",
        "identifier"
    ));
    assert!(!has(
        Role::Tool,
        "bun test v1.2.10 (db2e7d7f)",
        "identifier"
    ));
    // Narration in an assistant's list is not a failed attempt; its own report is.
    assert!(!has(
        Role::Assistant,
        "1. Added error handling to the run function",
        "failed-attempt"
    ));
    assert!(has(
        Role::Assistant,
        "The migration failed on the users table.",
        "failed-attempt"
    ));
}

/// Classifier version 4 (derived rules 4): account ids, year-first dates, and names in a
/// system prompt's persona and in a tool's one-line answer; each beside a near miss.
#[test]
fn account_ids_dates_and_persona_names_are_identifiers() {
    let ids = |role: Role, text: &str| -> Vec<String> {
        (found(role, text).into_iter())
            .filter(|(c, _)| c == "identifier")
            .map(|(_, t)| t)
            .collect()
    };
    assert_eq!(
        ids(
            Role::System,
            "You are Noah Muller. Your user id is noah_muller_9847."
        ),
        ["noah_muller_9847", "Noah Muller"]
    );
    // A place in a simulated user's wish is not the persona's name.
    assert!(ids(Role::System, "You want to fly from New York to Seattle.").is_empty());
    assert_eq!(
        ids(Role::System, "Add passenger Kevin, born 2001-04-12."),
        ["2001-04-12"]
    );
    assert_eq!(
        ids(
            Role::Tool,
            "Account has been pulled up for Alessandro Phoenix."
        ),
        ["Alessandro Phoenix"]
    );
    // A tool's listing is not a name line.
    assert!(ids(
        Role::Tool,
        "# TODOs\n\n## How To Use This File\n\nThis file tracks work items."
    )
    .is_empty());
    // A snake_case name without digits is code, not an account.
    assert!(ids(Role::User, "rename the read_config function").is_empty());
}

/// Classifier version 5 (derived rules 5): contractions without an apostrophe, a system
/// prompt's restriction, terminal output a user pasted, a failure the assistant says goes on,
/// "I'm looking to", and names that are not headings, titles or runs across punctuation;
/// each beside a near miss.
#[test]
fn version_five_reads_typed_contractions_restrictions_pasted_failures_and_plain_names() {
    let has =
        |role: Role, text: &str, class: &str| found(role, text).iter().any(|(c, _)| c == class);
    assert!(has(
        Role::User,
        "this is a header and shouldnt be output",
        "prohibition"
    ));
    assert!(!has(
        Role::User,
        "this is a header and should be output",
        "prohibition"
    ));
    assert!(has(
        Role::System,
        "An order can only be cancelled if its status is 'pending'.",
        "prohibition"
    ));
    assert!(!has(
        Role::User,
        "It can only be me, I think.",
        "prohibition"
    ));
    assert!(has(
        Role::User,
        "\u{276f} bun run . tasks status set #001\nerror: missing required argument 'status'",
        "failed-attempt"
    ));
    assert!(!has(
        Role::User,
        "the status should say error when it is missing",
        "failed-attempt"
    ));
    assert!(has(
        Role::Assistant,
        "The tests are failing because the directory already exists.",
        "failed-attempt"
    ));
    assert!(!has(
        Role::Assistant,
        "The tests pass now.",
        "failed-attempt"
    ));
    assert!(has(
        Role::User,
        "I'm looking to fix the merge base of the pr command.",
        "preference"
    ));
    assert!(!has(
        Role::User,
        "I was looking at the merge base.",
        "preference"
    ));

    let names = |text: &str| -> Vec<String> {
        found(Role::Assistant, text)
            .into_iter()
            .filter(|(c, _)| c == "identifier")
            .map(|(_, t)| t)
            .collect()
    };
    assert!(names("### Current Issues With Separate Files").is_empty());
    assert!(names("1. **Limited Test Coverage**: there is one test.").is_empty());
    assert!(names("Please contact the Parkside, Cambridge police station.").is_empty());
    assert!(names("You want tickets for No Time to Die.").is_empty());
    assert_eq!(
        names("I booked a table at the Lalla Grill for you."),
        ["Lalla Grill"]
    );
}

/// Classifier version 7 (issue 36, point 10): a failure in a tool's output is one the tool
/// reports (an error's name opening the line, a non-zero exit code, a count of failures, a
/// shell's failure message), not a line that holds the word; a tool call reports none. Each
/// beside a near miss.
#[test]
fn version_seven_takes_a_tools_failure_from_its_report() {
    let failed =
        |role: Role, text: &str| found(role, text).iter().any(|(c, _)| c == "failed-attempt");
    assert!(failed(
        Role::Tool,
        "Exit code 127\n(eval):1: command not found: psql"
    ));
    assert!(failed(
        Role::Tool,
        "TypeError: Cannot read properties of undefined (reading 'page')"
    ));
    assert!(failed(Role::Tool, "Tests: 3 failed, 10 passed"));
    assert!(failed(
        Role::Tool,
        "ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL @cipherbox/e2e test: `playwright test`"
    ));
    assert!(!failed(Role::Tool, "  {:error, _} -> nil"));
    assert!(!failed(
        Role::Tool,
        "[10:11:24.015] [Limiter] Task 2 failed: 84 |"
    ));
    assert!(!failed(
        Role::Tool,
        "89 | throw new Error(\"Item 3 failed\");"
    ));
    assert!(!failed(Role::Tool, "Tests: 0 failed, 13 passed"));
    assert!(!failed(
        Role::Tool,
        "  18\u{2192}export type Status = \"queued\" | \"failed\";"
    ));
    assert!(!failed(
        Role::ToolCall,
        "{\"command\":\"cargo test 2>&1 | grep error\"}"
    ));
}

/// Classifier version 7, continued: a "never" that describes ("recovery never derives keys")
/// forbids nothing where one that tells does; a number right after a word that numbers items
/// names the item, no commitment ("Steps 1-2.5") where a budget is one.
#[test]
fn version_seven_reads_a_described_never_and_a_numbered_step_as_no_constraint() {
    let has =
        |role: Role, text: &str, class: &str| found(role, text).iter().any(|(c, _)| c == class);
    assert!(!has(
        Role::User,
        "Recovery never derives file keys from the private key.",
        "prohibition"
    ));
    assert!(has(
        Role::User,
        "Never derive file keys from the private key.",
        "prohibition"
    ));
    assert!(!has(
        Role::User,
        "Keep unchanged: Steps 1-2.5 of the engine.",
        "commitment"
    ));
    assert!(has(
        Role::User,
        "Keep the budget at 400 dollars.",
        "commitment"
    ));
}

/// Classifier version 8 (issue 36): "version" names what kind a value is and binds nothing, so
/// a sentence that mentions a version is no commitment unless a word binds it ("stay on",
/// "pin", "must"); a version ("v2.0.0", "v3") is no quantity a user asks for ("we need to fix
/// v2.0.0"); and a number after a definite word counts things already named ("for the 3
/// steps"), where "at most 3 retries" commits to one.
#[test]
fn version_eight_needs_a_word_that_binds_the_value() {
    let has =
        |role: Role, text: &str, class: &str| found(role, text).iter().any(|(c, _)| c == class);
    assert!(!has(
        Role::User,
        "all the different version fixes in v2.0.0 to then upgrade to v3, but we need to fix what we have now in v2.0.0 first",
        "commitment"
    ));
    assert!(has(
        Role::User,
        "We need a table for 5 people.",
        "commitment"
    ));
    assert!(has(
        Role::User,
        "we are still on libfoo 2.3.1, do not bump.",
        "commitment"
    ));
    assert!(has(Role::User, "Pin the version at 2.3.1.", "commitment"));
    assert!(!has(
        Role::User,
        "Only one proposal for the 3 steps.",
        "commitment"
    ));
    assert!(has(Role::User, "Allow at most 3 retries.", "commitment"));
}

/// Classifier version 9 (issue 36): a line that is one call is code, whatever its string
/// says: a test's `t.Fatal("auth command not found")` in a diff reports no failure, where the
/// shell's own "command not found" does; nor does such a line say why a retry would fail.
#[test]
fn version_nine_reads_a_call_as_code() {
    let failed =
        |role: Role, text: &str| found(role, text).iter().any(|(c, _)| c == "failed-attempt");
    assert!(!failed(
        Role::Tool,
        "  +\tif authCmd == nil {\n  +\t\tt.Fatal(\"auth command not found\")\n  +\t}"
    ));
    assert!(!failed(Role::Tool, "log.error(\"connection refused\");"));
    assert!(failed(Role::Tool, "bash: port: command not found"));
    assert!(failed(
        Role::Tool,
        "Error: connect(ECONNREFUSED) failed: connection refused"
    ));
    // A failing test run whose output shows that code is a failure of the work, which a retry
    // mends: it asks for no pin; the shell's own "command not found" still does.
    let shown =
        "--- FAIL: TestAuth (0.00s)\nexit status 1\n\t\tt.Fatal(\"auth command not found\")";
    assert_eq!(failed_attempts(&[(Role::Tool, shown)]), 0);
    let missing = "--- FAIL: TestAuth (0.00s)\nexit status 1\nbash: port: command not found";
    assert_eq!(failed_attempts(&[(Role::Tool, missing)]), 1);
    // Version 10: a file listing as `cat -n` prints it (a line number, then a tab) is code too.
    assert!(!failed(
        Role::Tool,
        "    12\tError: the build failed\n    13\t"
    ));
    let listed =
        "--- FAIL: TestAuth (0.00s)\nexit status 1\n    33\t### Rate Limiting & Pagination";
    assert_eq!(failed_attempts(&[(Role::Tool, listed)]), 0);
}

/// The failed attempts no pin covers in a stream of tool calls and outputs.
fn failed_attempts(spans: &[(Role, &str)]) -> usize {
    let ledger = crate::util::ledger();
    let mut b = ledger.batch().unwrap();
    for (turn, (role, text)) in spans.iter().enumerate() {
        b.append(Span {
            stream: "f".into(),
            turn: turn as u64,
            role: *role,
            tool: Some("Bash".into()),
            text: (*text).into(),
        })
        .unwrap();
    }
    b.commit().unwrap();
    let snap = ledger.snapshot().unwrap();
    cairn::gate::unpinned_items(&snap, "f")
        .unwrap()
        .iter()
        .filter(|i| i.class.name() == "failed-attempt")
        .count()
}

/// A failed attempt fixed later is history (issue 36, point 10): when a later tool call runs
/// the same command again and its output reports no failure, the first failure asks for no
/// pin; a failure whose command never ran again still does.
#[test]
fn a_failure_whose_command_later_succeeds_asks_for_no_pin() {
    let run = |outputs: &[&str]| {
        let spans: Vec<(Role, &str)> = (outputs.iter())
            .flat_map(|out| {
                [
                    (Role::ToolCall, r#"{"command":"pnpm --filter web build"}"#),
                    (Role::Tool, *out),
                ]
            })
            .collect();
        failed_attempts(&spans)
    };
    let failed = "error: could not connect to server: Connection refused";
    assert_eq!(run(&[failed]), 1);
    assert_eq!(run(&[failed, "built in 3.2s"]), 0);
    assert_eq!(run(&[failed, failed]), 2);
    // A failure of the work itself (a type error) is mended by changing the work: it asks
    // for no pin, fixed later or not (seed 003: a failed attempt counts when its reason is
    // what stops a retry).
    let work = "error TS2724: '\"x\"' has no exported member named 'y'";
    assert_eq!(run(&[work]), 0);
}

/// A command run in the background fails in the output a later call reads by the task's id:
/// that output is the command's, so running the command again without a failure fixes it.
#[test]
fn a_background_failure_is_the_command_that_started_the_task() {
    let run = failed_attempts;
    let build = r#"{"command":"pnpm --filter web build","run_in_background":true}"#;
    let started =
        "Command running in background with ID: b2620ef. Output is being written to a file.";
    let read = r#"{"task_id":"b2620ef","block":true}"#;
    let failed = "error: could not connect to server: Connection refused";
    let mut spans = vec![
        (Role::ToolCall, build),
        (Role::Tool, started),
        (Role::ToolCall, read),
        (Role::Tool, failed),
    ];
    assert_eq!(run(&spans), 1);
    spans.extend([
        (Role::ToolCall, r#"{"command":"pnpm --filter web build"}"#),
        (Role::Tool, "built in 3.2s"),
    ]);
    assert_eq!(run(&spans), 0);
    // Near miss: another task's output read by its id is not this command's.
    let other = r#"{"task_id":"b9e783c","block":true}"#;
    spans[2] = (Role::ToolCall, other);
    assert_eq!(run(&spans), 1);
}

/// Classifier version 11 (issue 36): "why don't you ..." suggests, even without its question
/// mark, and forbids nothing, where "don't ..." forbids; a number after "all" counts things
/// already named ("all three"), where "at most three" commits; a "do not" after the thing it
/// describes forbids nothing. And a line that says why a retry
/// would fail must name what was refused: `which gh || echo "NOT INSTALLED"` prints a line that
/// names nothing, and asks for no pin, where "command not found: gh" does.
#[test]
fn version_eleven_reads_a_suggestion_and_an_unnamed_failure_as_no_constraint() {
    let has =
        |role: Role, text: &str, class: &str| found(role, text).iter().any(|(c, _)| c == class);
    assert!(!has(
        Role::User,
        "why don't you show me before vs after even though the skill said so",
        "prohibition"
    ));
    assert!(has(
        Role::User,
        "don't show me before vs after, the skill said so",
        "prohibition"
    ));
    assert!(!has(
        Role::User,
        "I want basically all 3 of them.",
        "commitment"
    ));
    assert!(has(Role::User, "I want at most 3 of them.", "commitment"));
    assert!(!has(
        Role::User,
        "I want basically all three, for the presentation part too.",
        "commitment"
    ));
    assert!(has(Role::User, "I want three of them.", "commitment"));
    // Version 12: an estimate binds nothing ("~121 lines" in a plan's table); a bound does.
    assert!(!has(
        Role::User,
        "| CLI commands | docdb, rds | ~121 lines | only the service name differs |",
        "commitment"
    ));
    assert!(!has(
        Role::User,
        "Keep it to about 120 lines.",
        "commitment"
    ));
    assert!(has(
        Role::User,
        "Keep it to at most 120 lines.",
        "commitment"
    ));
    // The estimate is the one marked: "5" beside "~50" is no estimate.
    assert!(has(
        Role::User,
        "Keep it under 5 minutes; the suite has ~50 tests.",
        "commitment"
    ));
    // A "do not" after a thing it describes forbids nothing; one that opens its clause, or
    // follows the person it speaks to or for, does.
    assert!(!has(
        Role::User,
        "**Note**: Plugin skills (`/recall`) do NOT use `claude -p`.",
        "prohibition"
    ));
    assert!(!has(
        Role::User,
        "The tests don't hit the network.",
        "prohibition"
    ));
    for rule in [
        "Do NOT use `claude -p` in plugin skills.",
        "Please, don't hit the network in tests.",
        "We do not use `claude -p` in plugin skills.",
        "Run the tests and don't hit the network.",
        "If it fails don't retry the upload.",
        "Absolutely do not push to main.",
        "IMPORTANT do not push to main.",
    ] {
        assert!(has(Role::User, rule, "prohibition"), "{rule}");
    }
    assert_eq!(
        failed_attempts(&[(Role::Tool, "Exit code 1\nNOT INSTALLED")]),
        0
    );
    assert_eq!(
        failed_attempts(&[(Role::Tool, "Exit code 127\nbash: gh: command not found")]),
        1
    );
}
