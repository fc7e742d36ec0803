//! SWE-agent trajectories (`.traj`): one JSON document per task, `{trajectory, history,
//! info}`.
//!
//! - `history` is the conversation as the model saw it: `system` and `user` messages are spans
//!   of their role, except that a `user` message of `message_type` `observation` is the tool's
//!   output (the shell's answer to the last action); an `assistant` message is the agent's
//!   words (its `thought`, else its content) and, when it carries an `action`, a tool call.
//! - Without `history`, each step of `trajectory` gives the agent's `response`, its `action`
//!   as a tool call and the `observation` as the tool's output.
//! - A trajectory is one document, not a stream of lines: it is read whole (SWE-agent writes
//!   one per task, megabytes at most). The stream is named after the file.

use super::{text_of, Event, Report, Source};
use serde_json::Value;

pub(super) fn events(src: &Source<'_>, doc: &Value, report: &mut Report) -> Vec<Event> {
    let stem = std::path::Path::new(src.log)
        .file_name()
        .map(|s| s.to_string_lossy().trim_end_matches(".traj").to_string())
        .unwrap_or_else(|| "task".into());
    let mut out = Out {
        stream: format!("swe-agent:{stem}"),
        events: Vec::new(),
    };
    if let Some(history) = doc["history"].as_array() {
        for m in history {
            report.messages += 1;
            let content = text_of(&m["content"]);
            match (m["role"].as_str().unwrap_or(""), m["message_type"].as_str()) {
                ("system", _) => out.push(report, "system", None, content),
                ("user", Some("observation")) | ("tool", _) => {
                    out.push(report, "tool", Some("shell"), content)
                }
                ("user", _) => out.push(report, "user", None, content),
                ("assistant", _) => {
                    let thought = m["thought"].as_str().map(str::to_string);
                    out.push(report, "assistant", None, thought.unwrap_or(content));
                    out.action(&m["action"]);
                }
                (other, _) => report.skip(format!("a message of role `{other}`")),
            }
        }
        return out.events;
    }
    match doc["trajectory"].as_array() {
        Some(steps) => {
            for step in steps {
                report.messages += 1;
                let said = (step["thought"].as_str())
                    .or(step["response"].as_str())
                    .unwrap_or("");
                out.push(report, "assistant", None, said.to_string());
                out.action(&step["action"]);
                let seen = step["observation"].as_str().unwrap_or("").to_string();
                out.push(report, "tool", Some("shell"), seen);
            }
        }
        None => report.skip("a document with neither `history` nor `trajectory`"),
    }
    out.events
}

/// The events of one trajectory, as they are found.
struct Out {
    stream: String,
    events: Vec<Event>,
}

impl Out {
    /// A span, unless its text is empty (then a skip).
    fn push(&mut self, report: &mut Report, role: &'static str, tool: Option<&str>, text: String) {
        if text.trim().is_empty() {
            report.skip("an empty message");
            return;
        }
        self.events.push(Event::Span {
            stream: self.stream.clone(),
            role,
            tool: tool.map(str::to_string),
            text,
            message: None,
            timestamp: None,
        });
    }

    /// The agent's action as a tool call of the shell, when it took one.
    fn action(&mut self, action: &Value) {
        if let Some(a) = action.as_str().filter(|a| !a.trim().is_empty()) {
            self.events.push(Event::Span {
                stream: self.stream.clone(),
                role: "tool-call",
                tool: Some("shell".into()),
                text: a.to_string(),
                message: None,
                timestamp: None,
            });
        }
    }
}
