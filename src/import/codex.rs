//! Codex CLI session rollouts: JSON Lines (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`),
//! each line `{timestamp, type, payload}`.
//!
//! - `response_item` lines are the conversation as the model saw it: a `message` (role
//!   `user`, `assistant`, or `developer`/`system` for instructions) is a span of its role; a
//!   `function_call` or `custom_tool_call` is a tool call (its name, its arguments or input);
//!   a `function_call_output` or `custom_tool_call_output` is the tool's output, named after
//!   its call; `reasoning` is skipped.
//! - A `compacted` line is the log's own compaction: its `message` is a prose summary.
//! - `session_meta` names the stream (`codex:SESSION-ID`); `event_msg` lines repeat what the
//!   response items hold (the user's and the agent's messages) or report progress, and
//!   `turn_context` lines carry settings: all are skipped, counted.

use super::{text_of, Event, Report, Source};
use serde_json::Value;
use std::collections::HashMap;

pub(super) struct Translator {
    stream: Option<String>,
    calls: HashMap<String, String>,
}

impl Translator {
    pub(super) fn new() -> Translator {
        Translator {
            stream: None,
            calls: HashMap::new(),
        }
    }

    fn stream(&mut self, src: &Source<'_>) -> String {
        self.stream
            .get_or_insert_with(|| {
                let stem = std::path::Path::new(src.log)
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "session".into());
                format!("codex:{stem}")
            })
            .clone()
    }

    /// The events of one line.
    pub(super) fn line(&mut self, src: &Source<'_>, v: &Value, report: &mut Report) -> Vec<Event> {
        let p = &v["payload"];
        let timestamp = v["timestamp"].as_str().map(str::to_string);
        match v["type"].as_str().unwrap_or("") {
            "session_meta" => {
                if let Some(id) = p["id"].as_str() {
                    self.stream.get_or_insert_with(|| format!("codex:{id}"));
                }
                Vec::new()
            }
            "compacted" => {
                let text = p["message"].as_str().unwrap_or("");
                if text.trim().is_empty() {
                    report.skip("a compaction without a message");
                    return Vec::new();
                }
                vec![Event::Compaction {
                    stream: self.stream(src),
                    text: text.to_string(),
                }]
            }
            "response_item" => {
                let stream = self.stream(src);
                let message = (p["id"].as_str().or(p["call_id"].as_str())).map(str::to_string);
                let span = |role: &'static str, tool: Option<String>, text: String| Event::Span {
                    stream: stream.clone(),
                    role,
                    tool,
                    text,
                    message: message.clone(),
                    timestamp: timestamp.clone(),
                };
                match p["type"].as_str().unwrap_or("") {
                    "message" => {
                        let role = match p["role"].as_str().unwrap_or("") {
                            "user" => "user",
                            "assistant" => "assistant",
                            "developer" | "system" => "system",
                            other => {
                                report.skip(format!("a message of role `{other}`"));
                                return Vec::new();
                            }
                        };
                        let text = text_of(&p["content"]);
                        if text.trim().is_empty() {
                            report.skip("an empty message");
                            return Vec::new();
                        }
                        vec![span(role, None, text)]
                    }
                    kind @ ("function_call" | "custom_tool_call" | "local_shell_call") => {
                        let name = p["name"].as_str().unwrap_or(kind).to_string();
                        if let Some(id) = p["call_id"].as_str() {
                            self.calls.insert(id.to_string(), name.clone());
                        }
                        let args = match (&p["arguments"], &p["input"], &p["action"]) {
                            (Value::String(a), _, _) | (_, Value::String(a), _) => a.clone(),
                            (_, _, action) if !action.is_null() => action.to_string(),
                            _ => String::new(),
                        };
                        vec![span("tool-call", Some(name), args)]
                    }
                    "function_call_output"
                    | "custom_tool_call_output"
                    | "local_shell_call_output" => {
                        let name =
                            (p["call_id"].as_str()).and_then(|id| self.calls.get(id).cloned());
                        let text = match &p["output"] {
                            Value::String(s) => s.clone(),
                            Value::Object(o) => o
                                .get("content")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            other => text_of(other),
                        };
                        if text.trim().is_empty() {
                            report.skip("a tool output without text");
                            return Vec::new();
                        }
                        vec![span("tool", name, text)]
                    }
                    "reasoning" => {
                        report.skip("a reasoning item (the model's private reasoning)");
                        Vec::new()
                    }
                    other => {
                        report.skip(format!("a response item of type `{other}`"));
                        Vec::new()
                    }
                }
            }
            "event_msg" => {
                report.skip("an event message (repeats the response items, or reports progress)");
                Vec::new()
            }
            other => {
                report.skip(format!("a line of type `{other}`"));
                Vec::new()
            }
        }
    }
}
