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

use super::shape::{self, Content};
use super::{Event, Report, Source};
use crate::record::Role;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// A line of a rollout: `{timestamp, type, payload}`.
#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: String,
    timestamp: Option<String>,
    payload: Option<Payload>,
}

/// A line's payload: the fields cairn reads, of whichever item it is.
#[derive(Deserialize, Default)]
struct Payload {
    #[serde(rename = "type", default)]
    kind: String,
    id: Option<String>,
    role: Option<String>,
    content: Option<Content>,
    name: Option<String>,
    call_id: Option<String>,
    arguments: Option<Value>,
    input: Option<Value>,
    action: Option<Value>,
    output: Option<Value>,
    message: Option<String>,
}

/// The fields of a line that cairn reads or knows to carry nothing it needs.
const KNOWN: &[&str] = &["timestamp", "type", "payload"];

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

    /// The events of one line; malformed JSON is the error.
    pub(super) fn line(
        &mut self,
        src: &Source<'_>,
        text: &str,
        report: &mut Report,
    ) -> Result<Vec<Event>, serde_json::Error> {
        let entry: Option<Entry> = shape::read_line(text, KNOWN, report)?;
        Ok(entry.map_or_else(Vec::new, |e| self.entry(src, e, report)))
    }

    fn entry(&mut self, src: &Source<'_>, v: Entry, report: &mut Report) -> Vec<Event> {
        let p = v.payload.unwrap_or_default();
        let timestamp = v.timestamp;
        match v.kind.as_str() {
            "session_meta" => {
                if let Some(id) = &p.id {
                    self.stream
                        .get_or_insert_with(|| format!("codex:{}", super::id_part(id)));
                }
                Vec::new()
            }
            "compacted" => {
                let text = p.message.unwrap_or_default();
                if text.trim().is_empty() {
                    report.skip("a compaction without a message");
                    return Vec::new();
                }
                vec![Event::Compaction {
                    stream: self.stream(src),
                    text,
                }]
            }
            "response_item" => {
                let stream = self.stream(src);
                let message = p.id.clone().or_else(|| p.call_id.clone());
                let span = |role: Role, tool: Option<String>, text: String| Event::Span {
                    stream: stream.clone(),
                    role,
                    tool,
                    text,
                    message: message.clone(),
                    timestamp: timestamp.clone(),
                };
                match p.kind.as_str() {
                    "message" => {
                        let role = match p.role.as_deref().unwrap_or("") {
                            "user" => Role::User,
                            "assistant" => Role::Assistant,
                            "developer" | "system" => Role::System,
                            other => {
                                report.skip(format!("a message of role `{other}`"));
                                return Vec::new();
                            }
                        };
                        let text = shape::text(&p.content);
                        if text.trim().is_empty() {
                            report.skip("an empty message");
                            return Vec::new();
                        }
                        vec![span(role, None, text)]
                    }
                    kind @ ("function_call" | "custom_tool_call" | "local_shell_call") => {
                        let name = p.name.clone().unwrap_or_else(|| kind.to_string());
                        if let Some(id) = &p.call_id {
                            self.calls.insert(id.clone(), name.clone());
                        }
                        let args = match (&p.arguments, &p.input, &p.action) {
                            (Some(Value::String(a)), _, _) | (_, Some(Value::String(a)), _) => {
                                a.clone()
                            }
                            (_, _, Some(action)) if !action.is_null() => action.to_string(),
                            _ => String::new(),
                        };
                        vec![span(Role::ToolCall, Some(name), args)]
                    }
                    "function_call_output"
                    | "custom_tool_call_output"
                    | "local_shell_call_output" => {
                        let name = (p.call_id.as_ref()).and_then(|id| self.calls.get(id).cloned());
                        let text = match &p.output {
                            Some(Value::String(s)) => s.clone(),
                            Some(Value::Object(o)) => o
                                .get("content")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            Some(other) => {
                                let content = Content::deserialize(other).ok();
                                shape::text(&content)
                            }
                            None => String::new(),
                        };
                        if text.trim().is_empty() {
                            report.skip("a tool output without text");
                            return Vec::new();
                        }
                        vec![span(Role::Tool, name, text)]
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
