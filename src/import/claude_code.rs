//! Claude Code session transcripts: JSON Lines, one message a line, as Claude Code 1.0 to 2.1
//! writes them under `~/.claude/projects/*/`.
//!
//! - `user` and `assistant` lines carry `message.content`: a string, or blocks. A `text`
//!   block is a span of the line's role; a `tool_use` block is a tool call (its name, its
//!   input as JSON); a `tool_result` block is the tool's output, named after its call;
//!   `thinking` blocks are skipped.
//! - A compaction is the user line with `isCompactSummary` that follows a `system` line of
//!   subtype `compact_boundary`, and, in older logs, a `summary` line: each becomes a prose
//!   summary of the stream.
//! - A sidechain (`isSidechain`, a subagent's own conversation) is a stream of its own, named
//!   after its parent session and its agent.

use super::{Event, Report, Source};
use serde_json::Value;
use std::collections::HashMap;

/// The fields of a message line that cairn reads or knows to carry nothing it needs.
const KNOWN: &[&str] = &[
    "type",
    "message",
    "uuid",
    "parentUuid",
    "sessionId",
    "timestamp",
    "isSidechain",
    "isCompactSummary",
    "isMeta",
    "userType",
    "cwd",
    "version",
    "gitBranch",
    "requestId",
    "toolUseResult",
    "agentId",
    "slug",
    "isVisibleInTranscriptOnly",
    "logicalParentUuid",
    "subtype",
    "content",
    "level",
    "compactMetadata",
    "summary",
    "leafUuid",
    "thinkingMetadata",
    "todos",
    "isApiErrorMessage",
    "error",
    "permissionMode",
    "sourceToolUseID",
    "toolUseID",
];

#[derive(Default)]
pub(super) struct Translator {
    /// Tool calls by id: their names, for the results that answer them.
    calls: HashMap<String, String>,
}

impl Translator {
    /// The events of one line.
    pub(super) fn line(&mut self, src: &Source<'_>, v: &Value, report: &mut Report) -> Vec<Event> {
        let Some(obj) = v.as_object() else {
            report.skip("a line that is not a JSON object");
            return Vec::new();
        };
        super::count_unknown(obj, KNOWN, report);
        let kind = v["type"].as_str().unwrap_or("");
        let stream = stream_of(src, v);
        let message = v["uuid"].as_str().map(str::to_string);
        let timestamp = v["timestamp"].as_str().map(str::to_string);
        let span = |role: &'static str, tool: Option<String>, text: String| Event::Span {
            stream: stream.clone(),
            role,
            tool,
            text,
            message: message.clone(),
            timestamp: timestamp.clone(),
        };
        match kind {
            "summary" => match v["summary"].as_str() {
                Some(text) if !text.trim().is_empty() => vec![Event::Compaction {
                    stream,
                    text: text.to_string(),
                }],
                _ => {
                    report.skip("a summary line without text");
                    Vec::new()
                }
            },
            "system" => {
                if v["subtype"].as_str() != Some("compact_boundary") {
                    report.skip("a system line other than a compaction boundary");
                }
                // The boundary itself says nothing: the summary follows it.
                Vec::new()
            }
            "user" | "assistant" => {
                if v["isMeta"].as_bool() == Some(true) {
                    report.skip("a meta message (a caveat Claude Code adds, not the user's words)");
                    return Vec::new();
                }
                let content = &v["message"]["content"];
                if v["isCompactSummary"].as_bool() == Some(true) {
                    let text = without_framing(&super::text_of(content));
                    if text.trim().is_empty() {
                        report.skip("a compaction summary without text");
                        return Vec::new();
                    }
                    return vec![Event::Compaction { stream, text }];
                }
                let role = if kind == "user" { "user" } else { "assistant" };
                let mut out = Vec::new();
                match content {
                    Value::String(text) => {
                        if text.trim().is_empty() {
                            report.skip("an empty message");
                        } else {
                            out.push(span(role, None, text.clone()));
                        }
                    }
                    Value::Array(blocks) => {
                        for b in blocks {
                            match b["type"].as_str().unwrap_or("") {
                                "text" => match b["text"].as_str() {
                                    Some(t) if !t.trim().is_empty() => {
                                        out.push(span(role, None, t.to_string()))
                                    }
                                    _ => report.skip("an empty text block"),
                                },
                                "tool_use" => {
                                    let name = b["name"].as_str().unwrap_or("tool").to_string();
                                    if let Some(id) = b["id"].as_str() {
                                        self.calls.insert(id.to_string(), name.clone());
                                    }
                                    out.push(span("tool-call", Some(name), b["input"].to_string()));
                                }
                                "tool_result" => {
                                    let name = (b["tool_use_id"].as_str())
                                        .and_then(|id| self.calls.get(id).cloned());
                                    let text = super::text_of(&b["content"]);
                                    if text.trim().is_empty() {
                                        report.skip("a tool result without text");
                                    } else {
                                        out.push(span("tool", name, text));
                                    }
                                }
                                "thinking" | "redacted_thinking" => {
                                    report.skip("a thinking block (the model's private reasoning)")
                                }
                                "image" | "document" => report.skip("an image or document block"),
                                other => report.skip(format!("a content block of type `{other}`")),
                            }
                        }
                    }
                    _ => report.skip("a message without content"),
                }
                out
            }
            other => {
                report.skip(format!("a line of type `{other}`"));
                Vec::new()
            }
        }
    }
}

/// The stream of a line: `claude-code:SESSION`, or for a sidechain
/// `claude-code:SESSION:sidechain:AGENT`.
fn stream_of(src: &Source<'_>, v: &Value) -> String {
    let session = v["sessionId"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| {
            // A log without session ids is one session, named after its file.
            std::path::Path::new(src.log)
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "session".into())
        });
    if v["isSidechain"].as_bool() == Some(true) {
        let agent = v["agentId"].as_str().unwrap_or("agent");
        format!("claude-code:{session}:sidechain:{agent}")
    } else {
        format!("claude-code:{session}")
    }
}

/// What Claude Code writes around every compaction summary, which states nothing about the
/// conversation: the opening "This session is being continued ..." and the closing "Please
/// continue the conversation ...". Their sentences are dropped; the summary stays.
const FRAMING: &[&str] = &[
    "This session is being continued from a previous conversation",
    "The conversation is summarized below",
    "The summary below covers the earlier portion of the conversation",
    "Please continue the conversation from where we left",
];

fn without_framing(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut kept = line.to_string();
        for f in FRAMING {
            if let Some(at) = kept.find(f) {
                // Drop the framing sentence: from its start to its end (a full stop or colon
                // followed by a space or the line's end).
                let rest = &kept[at..];
                let end = (rest.find(". ").map(|i| i + 2))
                    .or_else(|| rest.find(": ").map(|i| i + 2))
                    .unwrap_or(rest.len());
                kept = format!("{}{}", &kept[..at], &rest[end..]);
            }
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}
