//! `cairn import` (SPEC.md section 5.3), end to end: import, the gates' verdict on the log's own
//! compaction, `why` on a compaction claim back to the turn and the log line it came from,
//! `report`, and importing again.

use crate::util::{code, stderr, stdout, Tmp};
use serde_json::Value;
use std::path::PathBuf;

/// `cairn --json import --from FORMAT LOG`.
fn import(t: &Tmp, format: &str, log: &str) -> std::process::Output {
    t.cairn(&["--json", "import", "--from", format, log], None)
}

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/import")
        .join(path)
}

#[test]
fn a_claude_code_session_imports_with_its_compaction_judged() {
    let t = Tmp::new();
    let log = fixture("made/claude-code-compaction.jsonl");
    let log = log.to_str().unwrap();
    let o = import(&t, "claude-code", log);
    // The compaction claims libfoo was upgraded to 2.4.0: that claim is struck (no earlier
    // turn holds 2.4.0); the compaction is refused for losing the user's prohibition, and its
    // repair, which carries it word for word, is admitted. Exit 1.
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["streams"][0], "claude-code:abc");
    assert_eq!(r["compactions"][0]["line"], 6);
    assert_eq!(r["compactions"][0]["verdict"], "refused");
    assert_eq!(r["compactions"][0]["struck"], 1);
    let repair = &r["compactions"][0]["repair"];
    assert_eq!(repair["verdict"], "admitted", "{repair}");
    let text = repair["text"].as_str().unwrap();
    assert!(
        text.contains("do not bump") && !text.contains("2.4.0"),
        "{repair}"
    );
    let findings = &r["compactions"][0]["findings"];
    assert!(
        findings["identifier-drift"].as_u64().unwrap() >= 1,
        "{findings}"
    );
    let examples = r["compactions"][0]["examples"].as_array().unwrap();
    assert!(
        examples
            .iter()
            .any(|f| f["detail"].as_str().unwrap_or("").contains("2.4.0")),
        "{examples:?}"
    );
    assert_eq!(r["compactions"][0]["claims"], 2);
    // Skipped, and said why: the snapshot line, the cut-off last line. The thinking block is
    // the assistant's reasoning, a span of its own.
    let skipped = r["skipped"].as_object().unwrap();
    assert!(
        skipped.keys().any(|k| k.contains("truncated last line")),
        "{skipped:?}"
    );
    assert!(
        !skipped.keys().any(|k| k.contains("thinking")),
        "{skipped:?}"
    );
    assert!(
        skipped.keys().any(|k| k.contains("file-history-snapshot")),
        "{skipped:?}"
    );

    // The tool call and its result are two spans, the result named after the call.
    let export = stdout(&t.cairn(&["export"], None));
    let lines: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = lines
        .iter()
        .find(|v| v["role"] == "tool-call")
        .expect("a tool call");
    assert_eq!(call["name"], "Bash");
    let result = lines
        .iter()
        .find(|v| v["role"] == "tool")
        .expect("a tool result");
    assert_eq!(result["name"], "Bash");
    // The thinking block is the assistant's reasoning: a span of the assistant, named so.
    let thinking = lines
        .iter()
        .find(|v| v["name"] == "thinking")
        .expect("the thinking block's span");
    assert_eq!(
        (thinking["role"].as_str(), thinking["text"].as_str()),
        (Some("assistant"), Some("hmm"))
    );

    // why: the compaction's faithful claim back to the user's turn, with its place in the log.
    let claim = lines
        .iter()
        .find(|v| v["kind"] == "claim" && v["text"] == "We are still on libfoo 2.3.1.")
        .expect("the faithful claim");
    let why = stdout(&t.cairn(&["why", claim["rid"].as_str().unwrap()], None));
    assert!(
        why.contains("turn 0, user, ") && why.contains("line 1 (message u1, 2025-06-01T10:00:00Z)"),
        "{why}"
    );
    let report = t.db().with_extension("html");
    let o = t.cairn(
        &["report", "claude-code:abc", "-o", report.to_str().unwrap()],
        None,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::read_to_string(&report).unwrap().contains("libfoo"));

    // Again: nothing appended.
    let size = |t: &Tmp| {
        let v: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
        v["records"].as_u64().unwrap()
    };
    let before = size(&t);
    let o = import(&t, "claude-code", log);
    let again: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(again["appended"], 0);
    assert_eq!(size(&t), before);
}

#[test]
fn a_grown_log_appends_its_tail_and_a_malformed_line_writes_nothing() {
    let t = Tmp::new();
    let full = std::fs::read_to_string(fixture("made/claude-code-compaction.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let head = t.file("s.jsonl", format!("{}\n", lines[..3].join("\n")).as_bytes());
    let o = import(&t, "claude-code", head.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let first: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    // The log grows by two messages: only they are appended (and their records).
    std::fs::write(&head, format!("{}\n", lines[..7].join("\n"))).unwrap();
    let o = import(&t, "claude-code", head.to_str().unwrap());
    let grown: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(grown["present"], first["lines"]);
    assert!(grown["appended"].as_u64().unwrap() > 0);

    // A malformed line in the middle: exit 2, the file and the line named, nothing written.
    let bad = t.file(
        "bad.jsonl",
        format!(
            "{}\n{{\"type\": \"user\", \n{}\n",
            lines[0].replace("abc", "xyz"),
            lines[1]
        )
        .as_bytes(),
    );
    let stats = |t: &Tmp| {
        let v: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
        (v["records"].clone(), v["kinds"].clone())
    };
    let before = stats(&t);
    let o = t.cairn(
        &["import", "--from", "claude-code", bad.to_str().unwrap()],
        None,
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("bad.jsonl, line 2: malformed JSON"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stats(&t), before);
    // An unknown format is a usage error that names the formats.
    let o = t.cairn(&["import", "--from", "cursor", bad.to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains(
            "--from claude-code or --from codex or --from swe-agent or --from openai-chat"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_openai_chat_list_imports_tool_calls_apart_from_their_results() {
    let t = Tmp::new();
    let log = fixture("made/openai-chat-tools.json");
    let o = import(&t, "openai-chat", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["messages"], 6);
    assert_eq!(r["skipped"]["a message of role `critic`"], 1);
    let export = stdout(&t.cairn(&["export"], None));
    let spans: Vec<Value> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .collect();
    let roles: Vec<&str> = spans.iter().map(|v| v["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "tool-call", "tool", "assistant"]);
    assert_eq!(spans[2]["name"], "read_config");
    assert_eq!(spans[3]["name"], "read_config");
    assert_eq!(spans[0]["stream"], "openai-chat:openai-chat-tools");
    // The system prompt's prohibition is an item the gates hold compactions to.
    let o = t.cairn(
        &[
            "pin",
            "--auto",
            "--dry-run",
            "openai-chat:openai-chat-tools",
            "p",
        ],
        None,
    );
    assert!(
        stdout(&o).contains("Never run DROP TABLE"),
        "{}",
        stdout(&o)
    );
}

/// Real logs (tests/data/import/SOURCES.md): Claude Code sessions from FSM1/cipher-box (MIT),
/// one with a manual `/compact`, and a mini-swe-agent chat log (MIT).
#[test]
fn real_claude_code_sessions_import_and_their_compaction_is_judged() {
    let t = Tmp::new();
    let plain = fixture("claude-code/cipher-box-session.jsonl");
    let o = import(&t, "claude-code", plain.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    // Messages imported, of the lines read: progress lines and snapshots are not messages.
    assert_eq!(
        (&r["messages"], &r["log_lines"]),
        (&Value::from(25), &Value::from(43))
    );
    assert!(r["compactions"].as_array().unwrap().is_empty());
    // Hook progress lines and file snapshots are counted and skipped, never fatal.
    assert!(
        r["skipped"]["a line of type `progress`"].as_u64().unwrap() > 0,
        "{}",
        r["skipped"]
    );

    let compacted = fixture("claude-code/cipher-box-compact-prefix.jsonl");
    let o = import(&t, "claude-code", compacted.to_str().unwrap());
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    // The manual /compact at line 298 becomes a prose summary that the gates judge.
    let c = &r["compactions"][0];
    assert_eq!(c["line"], 298, "{r}");
    // Exit 1 on a refusal or a struck claim.
    let struck = c["struck"].as_u64().unwrap_or(0) > 0;
    assert_eq!(code(&o), i32::from(c["verdict"] == "refused" || struck));
    let o = t.cairn(&["verify"], None);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    // Again: the same claims, the same verdict, nothing appended (the finder's weights do not
    // move with what the first import added).
    let again = import(&t, "claude-code", compacted.to_str().unwrap());
    let again: Value = serde_json::from_str(stdout(&again).trim()).unwrap();
    assert_eq!(again["appended"], 0, "{again}");
    assert_eq!(
        again["compactions"][0]["findings"],
        r["compactions"][0]["findings"]
    );

    // why on a claim of the compaction that found a witness: back to its turn and log line.
    let export = stdout(&t.cairn(&["export"], None));
    let lines: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let claim = lines
        .iter()
        .find(|v| v["kind"] == "claim" && v["witnesses"].as_array().is_some_and(|w| !w.is_empty()))
        .expect("a compaction claim with a witness");
    let why = stdout(&t.cairn(&["why", claim["rid"].as_str().unwrap()], None));
    assert!(
        why.contains("cipher-box-compact-prefix.jsonl line "),
        "{why}"
    );
    let stream = lines.iter().find(|v| v["kind"] == "summary").unwrap()["stream"]
        .as_str()
        .unwrap()
        .to_string();
    let html = t.db().with_extension("html");
    let o = t.cairn(&["report", &stream, "-o", html.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_real_chat_log_imports_as_openai_chat() {
    let t = Tmp::new();
    let log = fixture("openai-chat/mini-swe-agent-gemini-django-16255.traj.json");
    let o = import(&t, "openai-chat", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["messages"], 36);
    // mini-swe-agent's raw API responses ride along under `extra`: counted and skipped.
    assert!(
        r["skipped"]["unknown field `extra`"].as_u64().unwrap() > 0,
        "{}",
        r["skipped"]
    );
    let again = import(&t, "openai-chat", log.to_str().unwrap());
    let again: Value = serde_json::from_str(stdout(&again).trim()).unwrap();
    assert_eq!(again["appended"], 0);
}

/// A real Codex CLI rollout (EntityProcess/agentv, MIT; SOURCES.md).
#[test]
fn a_real_codex_rollout_imports_with_its_tool_calls_and_outputs() {
    let t = Tmp::new();
    let log = fixture("codex/agentv-rollout.jsonl");
    let o = import(&t, "codex", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    // Event lines repeat the response items: lines read, not messages.
    assert_eq!(
        (&r["messages"], &r["log_lines"]),
        (&Value::from(56), &Value::from(92))
    );
    assert_eq!(
        r["streams"][0],
        "codex:019ed836-b1da-78f1-8a0c-e598363d10f4"
    );
    let skipped = r["skipped"].as_object().unwrap();
    assert!(
        skipped.keys().any(|k| k.contains("reasoning")),
        "{skipped:?}"
    );
    let export = stdout(&t.cairn(&["export"], None));
    let spans: Vec<Value> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .collect();
    let count = |role: &str| spans.iter().filter(|v| v["role"] == role).count();
    // 22 function calls and one custom tool call; 20 + 1 outputs with text.
    assert_eq!(count("tool-call"), 23);
    assert!(count("tool") >= 20);
    let user: Vec<&str> = (spans.iter())
        .filter(|v| v["role"] == "user")
        .filter_map(|v| v["text"].as_str())
        .collect();
    assert!(user.contains(&"please push"), "{user:?}");
    let call = spans.iter().find(|v| v["role"] == "tool-call").unwrap();
    assert_eq!(call["name"], "exec_command");
    // The output is named after its call.
    let out = spans.iter().find(|v| v["role"] == "tool").unwrap();
    assert_eq!(out["name"], "exec_command");
}

/// SWE-agent: a made trajectory (no real one under a usable licence: SOURCES.md).
#[test]
fn a_swe_agent_trajectory_imports_actions_apart_from_observations() {
    let t = Tmp::new();
    let log = fixture("made/swe-agent-task.traj");
    let o = import(&t, "swe-agent", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["messages"], 6);
    assert_eq!(r["streams"][0], "swe-agent:swe-agent-task");
    let export = stdout(&t.cairn(&["export"], None));
    let roles: Vec<String> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .map(|v| v["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool-call",
            "tool",
            "assistant",
            "tool-call",
            "tool"
        ]
    );
    // The task's prohibition asks for a pin; the observation's traceback is a failure of the
    // work, which the next edit mends, so it asks for none (SPEC.md 8.1, unpinned-reference).
    let o = t.cairn(
        &[
            "pin",
            "--auto",
            "--dry-run",
            "swe-agent:swe-agent-task",
            "p",
        ],
        None,
    );
    assert!(
        stdout(&o).contains("prohibition 'Never run rm -rf"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("failed-attempt"), "{}", stdout(&o));
}

/// The README's forensic walkthrough: each `$ cairn ...` command of its `walkthrough` blocks is
/// run from the repository's root, each ledger it names (`NAME.redb`) a file of the test's own,
/// and prints the lines shown under it (up to the `...` that marks where the README stops
/// showing).
#[test]
fn the_readme_walkthrough_prints_what_it_shows() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let t = Tmp::new();
    let mut blocks = 0;
    let mut rest = readme.as_str();
    while let Some(at) = rest.find("```walkthrough\n") {
        rest = &rest[at + "```walkthrough\n".len()..];
        let end = rest.find("```").unwrap();
        let block = &rest[..end];
        rest = &rest[end..];
        let mut lines = block.lines();
        let command = lines.next().unwrap().strip_prefix("$ cairn ").unwrap();
        let shown: Vec<&str> = lines.take_while(|l| *l != "...").collect();
        let args: Vec<String> = (command.split_whitespace())
            .map(|a| match a.strip_suffix(".redb") {
                Some(_) => t.dir.path().join(a).to_string_lossy().to_string(),
                None => a.to_string(),
            })
            .collect();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout).to_string();
        let printed: Vec<&str> = printed.lines().take(shown.len()).collect();
        assert_eq!(printed, shown, "`cairn {command}` printed otherwise");
        blocks += 1;
    }
    assert_eq!(
        blocks, 4,
        "the README's walkthrough has an import and a why, and an import and a replay"
    );
}

/// A continued session (issue 36, point 6): imported with the directory that holds the log
/// it continues, a log that begins with a compaction goes on in that log's stream, so its
/// compaction is judged over the earlier log's turns and admitted; imported alone, its source
/// is missing and it says so, not "fabricated". (Made logs, `made/continued/`; the continued
/// one sorts first by name, and is imported second.)
#[test]
fn a_continued_log_goes_on_in_the_stream_of_the_log_it_continues() {
    let t = Tmp::new();
    let dir = fixture("made/continued");
    let o = import(&t, "claude-code", dir.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let reports: Vec<Value> = (stdout(&o).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    assert!(reports[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("b-earlier.jsonl"));
    let continued = &reports[1];
    assert!(
        continued["continues"]
            .as_str()
            .unwrap()
            .ends_with("b-earlier.jsonl"),
        "{continued}"
    );
    assert_eq!(continued["streams"][0], "claude-code:earlier");
    let c = &continued["compactions"][0];
    assert_eq!(c["verdict"], "admitted", "{c}");
    assert!(c["findings"].as_object().unwrap().is_empty(), "{c}");
    assert!(
        c["detail"].as_str().unwrap().contains("turns 0 to 2"),
        "{c}"
    );

    // Alone, the same log's compaction has no source in the ledger.
    let alone = Tmp::new();
    let log = dir.join("a-continued.jsonl");
    let o = import(&alone, "claude-code", log.to_str().unwrap());
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let c = &r["compactions"][0];
    assert_eq!(c["findings"]["source-missing"], 1, "{c}");
    assert!(c["findings"].get("fabricated-claim").is_none(), "{c}");
}

/// Who speaks in a Claude Code log (issue 36): a slash command's printed output, which Claude
/// Code writes into a user line, is a tool's; the user's answer to `AskUserQuestion`, which a
/// tool result relays (also when an MCP server serves the tool), is the user's; a subagent's
/// report is the assistant's; an ordinary tool result stays the tool's.
#[test]
fn a_slash_commands_output_is_a_tools_and_an_answer_to_the_assistant_is_the_users() {
    let t = Tmp::new();
    let log = t.file(
        "speakers.jsonl",
        concat!(
            r#"{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"<local-command-stdout>Set model to Opus</local-command-stdout>"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a1","message":{"role":"assistant","content":[{"type":"tool_use","id":"q1","name":"AskUserQuestion","input":{"question":"Rotate keys now?"}},{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"ls"}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q1","content":"User has answered: lazy rotation"},{"type":"tool_result","tool_use_id":"b1","content":"Cargo.toml"}]}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a2","message":{"role":"assistant","content":[{"type":"tool_use","id":"q2","name":"AskUserQuestion","input":{"question":"Ship it?"}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u4","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q2","content":"No response after 300s - the user may be away from keyboard."}]}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a3","message":{"role":"assistant","content":[{"type":"tool_use","id":"q3","name":"mcp__conductor__AskUserQuestion","input":{"question":"Where?"}},{"type":"tool_use","id":"q4","name":"mcp__conductor__AskUserQuestionLater","input":{}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u5","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q3","content":"User responses:\n1. in the configured database"},{"type":"tool_result","tool_use_id":"q4","content":"User responses: queued for later"}]}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a4","message":{"role":"assistant","content":[{"type":"tool_use","id":"q5","name":"AskUserQuestion","input":{"questions":[]}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u7","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"q5","content":"User has answered your questions: \"Send an email 2 hours after pickup?\"=\"B) Skip it\", \"Keep the budget at 400?\"=\"Yes, 400\". You can now continue with the user's answers in mind."}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u6","message":{"role":"user","content":"<command-message>security:review</command-message>\n<command-name>/security:review</command-name>\n<command-args>all of phase 14 work</command-args>"}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u3","message":{"role":"user","content":"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>Background command finished</summary>\n</task-notification>"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"a5","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"prompt":"Map the onboarding styles"}},{"type":"tool_use","id":"t2","name":"TaskCreate","input":{"subject":"styles"}}]}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u8","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"I now have a complete picture: the outline is inline."},{"type":"tool_result","tool_use_id":"t2","content":"Task #1 created"}]}}"#,
            "\n",
        )
        .as_bytes(),
    );
    let o = import(&t, "claude-code", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let export = stdout(&t.cairn(&["export"], None));
    let spans: Vec<(String, String)> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .map(|v| {
            (
                v["role"].as_str().unwrap().to_string(),
                v["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let role_of = |text: &str| {
        (spans.iter())
            .find(|(_, t)| t.contains(text))
            .map(|(r, _)| r.as_str())
    };
    assert_eq!(role_of("Set model to Opus"), Some("tool"), "{spans:?}");
    assert_eq!(role_of("lazy rotation"), Some("user"), "{spans:?}");
    assert_eq!(role_of("Cargo.toml"), Some("tool"), "{spans:?}");
    assert_eq!(role_of("No response after 300s"), Some("tool"), "{spans:?}");
    // The same tool served by an MCP server relays the user's answer too; another tool whose
    // name merely begins the same does not.
    assert_eq!(
        role_of("in the configured database"),
        Some("user"),
        "{spans:?}"
    );
    assert_eq!(role_of("queued for later"), Some("tool"), "{spans:?}");
    // A relay that repeats each question is the tool's; the answers alone are the user's.
    assert_eq!(role_of("Send an email 2 hours"), Some("tool"), "{spans:?}");
    let answered = spans
        .iter()
        .find(|(r, t)| r == "user" && t.contains("Skip it"));
    assert_eq!(
        answered.map(|(_, t)| t.as_str()),
        Some("B) Skip it\nYes, 400"),
        "{spans:?}"
    );
    // A slash command the user typed is theirs, as typed, without Claude Code's tags.
    let typed = spans.iter().find(|(_, t)| t.contains("security:review"));
    assert_eq!(
        typed.map(|(r, t)| (r.as_str(), t.as_str())),
        Some(("user", "/security:review all of phase 14 work")),
        "{spans:?}"
    );
    assert_eq!(
        role_of("Background command finished"),
        Some("tool"),
        "{spans:?}"
    );
    // A subagent's report is a model's words, the assistant's; a tool whose name merely begins
    // the same is a tool.
    assert_eq!(role_of("complete picture"), Some("assistant"), "{spans:?}");
    assert_eq!(role_of("Task #1 created"), Some("tool"), "{spans:?}");
}

/// What the user typed while the agent worked (issue 36): Claude Code queues it, and the
/// queued text is the only record of it unless it is delivered later as a user line. It is a
/// user span, placed at the next message (or the log's end), and imported once, however often
/// Claude Code queues it again; the tasks and notifications Claude Code queues, and slash
/// commands, are not the user's words.
#[test]
fn a_message_the_user_queued_is_the_users_and_imported_once() {
    let t = Tmp::new();
    let q = |op: &str, text: &str| {
        format!(
            r#"{{"type":"queue-operation","operation":"{op}","sessionId":"s","content":{}}}"#,
            serde_json::to_string(text).unwrap()
        )
    };
    let lines = [
        r#"{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"Build the web app."}}"#.to_string(),
        q("enqueue", "can you commit changes to each section atomically?"),
        q("dequeue", ""),
        q("enqueue", "can you commit changes to each section atomically?"),
        q("enqueue", r#"{"task_id":"b1","description":"Run tests"}"#),
        q("enqueue", "/compact"),
        q("enqueue", "also run the linter"),
        r#"{"type":"queue-operation","operation":"remove","sessionId":"s"}"#.to_string(),
        r#"{"type":"assistant","sessionId":"s","uuid":"a1","message":{"role":"assistant","content":"Building now."}}"#.to_string(),
        r#"{"type":"user","sessionId":"s","uuid":"u2","message":{"role":"user","content":"also run the linter"}}"#.to_string(),
        q("enqueue", "and push when green"),
    ];
    let log = t.file("queued.jsonl", (lines.join("\n") + "\n").as_bytes());
    let o = import(&t, "claude-code", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let export = stdout(&t.cairn(&["export"], None));
    let spans: Vec<(u64, String, String)> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .map(|v| {
            (
                v["turn"].as_u64().unwrap(),
                v["role"].as_str().unwrap().to_string(),
                v["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let said: Vec<(&str, &str)> = (spans.iter())
        .map(|(_, r, t)| (r.as_str(), t.as_str()))
        .collect();
    assert_eq!(
        said,
        vec![
            ("user", "Build the web app."),
            ("user", "can you commit changes to each section atomically?"),
            ("user", "also run the linter"),
            ("assistant", "Building now."),
            ("user", "and push when green"),
        ],
        "{spans:?}"
    );
}

/// A message whose fields have a shape cairn does not read is skipped and counted with the
/// field's path, never fatal; an unknown field is counted; the well-shaped messages around
/// them import (issue 24, points 3 and 4).
#[test]
fn a_message_of_an_unknown_shape_is_skipped_with_its_field_named() {
    let t = Tmp::new();
    let log = t.file(
        "shapes.jsonl",
        concat!(
            r#"{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"we stay on libfoo 2.3.1"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"u2","message":{"role":"assistant","content":7}}"#,
            "\n",
            r#"{"type":"user","sessionId":"s","uuid":"u3","isMeta":"no","message":{"content":"x"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"s","uuid":"u4","mood":"calm","message":{"content":[{"type":"text","text":"noted: libfoo stays"}]}}"#,
            "\n",
        )
        .as_bytes(),
    );
    let o = import(&t, "claude-code", log.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let skipped = r["skipped"].as_object().unwrap();
    assert_eq!(
        skipped["a message whose `message.content` has a shape cairn does not read (expected a string or a list of content parts, found a number)"],
        1,
        "{skipped:?}"
    );
    assert_eq!(
        skipped["a message whose `isMeta` has a shape cairn does not read (expected true or false, found a string)"],
        1,
        "{skipped:?}"
    );
    assert_eq!(skipped["unknown field `mood`"], 1, "{skipped:?}");
    let export = stdout(&t.cairn(&["export"], None));
    let texts: Vec<String> = (export.lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["kind"] == "span")
        .map(|v| v["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["we stay on libfoo 2.3.1", "noted: libfoo stays"]);
}

/// Issue 37, row 19: a directory import walks its sub-folders, where Codex keeps its sessions
/// by date; a link to a folder is not followed.
#[test]
fn a_directory_import_walks_sub_folders_and_not_links() {
    let t = Tmp::new();
    let root = t.dir.path().join("sessions");
    let day = root.join("2026").join("12").join("03");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(
        fixture("codex/agentv-rollout.jsonl"),
        day.join("rollout.jsonl"),
    )
    .unwrap();
    // A link back up the tree would walk for ever if followed.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&root, day.join("loop")).unwrap();
    let o = import(&t, "codex", root.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let reports: Vec<Value> = (stdout(&o).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 1, "{}", stdout(&o));
    assert!(reports[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("rollout.jsonl"));
    // Near miss: a folder with no log anywhere below is a usage error that says so.
    let empty = t.dir.path().join("empty").join("deeper");
    std::fs::create_dir_all(&empty).unwrap();
    let o = import(&t, "codex", t.dir.path().join("empty").to_str().unwrap());
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("nor do its sub-folders"),
        "{}",
        stderr(&o)
    );
}

/// Issue 37, row 9: a line past the limit is refused before it is held, with a sentence, and a
/// failed first import leaves no ledger file behind.
#[test]
fn a_line_past_the_limit_is_refused_and_a_failed_first_import_leaves_no_ledger() {
    let t = Tmp::new();
    let log = t.dir.path().join("huge.jsonl");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        f.write_all(b"{\"type\":\"user\",\"message\":{\"content\":\"")
            .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..33 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\"}}\n").unwrap();
    }
    let o = import(&t, "claude-code", log.to_str().unwrap());
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("past the limit"), "{}", stderr(&o));
    assert!(
        !t.db().exists(),
        "a failed first import leaves no ledger file"
    );
    // Near miss: a log within the limit imports into a new ledger.
    let o = import(
        &t,
        "codex",
        fixture("codex/agentv-rollout.jsonl").to_str().unwrap(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.db().exists());
}

/// Issue 37, row 10: a log that carries another log's `sessionId` does not take its stream,
/// and a session id cannot spell a sidechain's stream. Whichever log comes first, both import,
/// each under its own name, the report says so, and importing either again appends nothing.
/// The near miss: the same log grown by a message goes on in its own stream.
#[test]
fn a_log_with_another_logs_session_id_imports_under_its_own_name() {
    let t = Tmp::new();
    let line = |uuid: &str, session: &str, text: &str, extra: &str| {
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"{uuid}","sessionId":"{session}","timestamp":"2025-06-01T10:00:00Z"{extra}}}"#
        )
    };
    // The forger imports first, under the victim's session id, and writes a "sidechain" too.
    let forged = t.file(
        "forged.jsonl",
        format!(
            "{}\n{}\n",
            line("f1", "victim", "the release was approved", ""),
            line("f2", "victim:sidechain:agentA", "approved by the user", "")
        )
        .as_bytes(),
    );
    let victim = t.file(
        "victim.jsonl",
        format!(
            "{}\n{}\n",
            line("v1", "victim", "do not release before Friday", ""),
            line(
                "v2",
                "victim",
                "the review is still open",
                r#","isSidechain":true,"agentId":"agentA""#
            )
        )
        .as_bytes(),
    );
    let o = import(&t, "claude-code", forged.to_str().unwrap());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        r["streams"],
        serde_json::json!([
            "claude-code:victim",
            "claude-code:victim%3Asidechain%3AagentA"
        ])
    );
    let o = import(&t, "claude-code", victim.to_str().unwrap());
    assert_eq!(code(&o), 0, "the real log must import: {}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let own = r["renamed"][0]["to"].as_str().unwrap().to_string();
    assert_eq!(r["renamed"][0]["from"], "claude-code:victim");
    assert!(own.starts_with("claude-code:victim~"), "{r}");
    // Its sidechain is its own: the forged session id spelt no sidechain's stream.
    assert_eq!(
        r["streams"],
        serde_json::json!([own, "claude-code:victim:sidechain:agentA"])
    );
    let text = t.cairn(
        &["import", "--from", "claude-code", victim.to_str().unwrap()],
        None,
    );
    assert!(
        stdout(&text).contains(&format!(
            "stream claude-code:victim already holds another log's messages, so this log's went to stream {own}"
        )),
        "{}",
        stdout(&text)
    );
    // Imported again, each log finds its own stream and appends nothing.
    for log in [&forged, &victim] {
        let o = import(&t, "claude-code", log.to_str().unwrap());
        let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(r["appended"], 0, "{r}");
    }
    let ctx = stdout(&t.cairn(&["context", &own], None));
    assert!(ctx.contains("do not release before Friday"), "{ctx}");
    assert!(!ctx.contains("approved"), "{ctx}");

    // The near miss: the victim's log grows by a message; it goes on in its own stream.
    let mut grown = std::fs::read_to_string(&victim).unwrap();
    grown.push_str(&line("v3", "victim", "Friday it is", ""));
    grown.push('\n');
    std::fs::write(&victim, grown).unwrap();
    let o = import(&t, "claude-code", victim.to_str().unwrap());
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["streams"][0], own.as_str(), "{r}");
    assert_eq!(r["present"], 2, "{r}");
}

/// Issue 37, the minor breaks: a log imported again refuses nothing anew (exit 0, its
/// compaction marked as judged when first imported); progress lines are not messages; a
/// compaction with no turns before it says so; bytes that are not UTF-8 are counted.
#[test]
fn a_log_imported_again_exits_0_and_the_report_counts_what_it_read() {
    let t = Tmp::new();
    let log = fixture("made/claude-code-compaction.jsonl");
    let log = log.to_str().unwrap();
    let o = import(&t, "claude-code", log);
    assert_eq!(code(&o), 1, "a refusal the first time: {}", stderr(&o));
    let first: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(first["compactions"][0]["judged_before"], false);
    let o = import(&t, "claude-code", log);
    assert_eq!(code(&o), 0, "nothing judged anew: {}", stderr(&o));
    let again: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(again["appended"], 0);
    assert_eq!(again["compactions"][0]["verdict"], "refused");
    assert_eq!(again["compactions"][0]["judged_before"], true);
    let text = stdout(&t.cairn(&["import", "--from", "claude-code", log], None));
    assert!(
        text.contains("compaction at line 6: refused when first imported"),
        "{text}"
    );

    // Progress lines, a compaction with nothing before it, and a byte that is not UTF-8.
    let mut bytes = Vec::new();
    for line in [
        r#"{"type":"progress","data":{"type":"hook_progress"},"sessionId":"p1","uuid":"x1"}"#,
        r#"{"type":"progress","data":{"type":"bash_progress"},"sessionId":"p1","uuid":"x2"}"#,
        r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"s1","sessionId":"p1"}"#,
        r#"{"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation.\n\n- The cache was moved to Redis."},"isCompactSummary":true,"uuid":"u1","sessionId":"p1"}"#,
    ] {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(br#"{"type":"user","message":{"role":"user","content":"caf"#);
    bytes.push(0xE9);
    bytes.extend_from_slice(b"\"},\"uuid\":\"u2\",\"sessionId\":\"p1\"}\n");
    let odd = t.file("odd.jsonl", &bytes);
    let o = import(&t, "claude-code", odd.to_str().unwrap());
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["log_lines"], 5, "{r}");
    assert_eq!(r["messages"], 2, "the summary and the user's message: {r}");
    assert_eq!(r["invalid_utf8_lines"], 1, "{r}");
    let detail = r["compactions"][0]["detail"].as_str().unwrap();
    assert!(detail.starts_with("judged over no turns"), "{detail}");
    let text = stdout(&t.cairn(
        &["import", "--from", "claude-code", odd.to_str().unwrap()],
        None,
    ));
    assert!(text.contains("2 messages of 5 lines"), "{text}");
    assert!(
        text.contains("1 line held bytes that are not UTF-8"),
        "{text}"
    );
    // The near miss: a clean log counts none.
    assert_eq!(first["invalid_utf8_lines"], 0);
}
