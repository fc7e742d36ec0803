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

use super::shape::{self, Content};
use super::{Event, Report, Source};
use crate::record::Role;
use serde::Deserialize;

/// A trajectory: the fields cairn reads.
#[derive(Deserialize)]
pub(super) struct Doc {
    history: Option<Vec<HistoryMessage>>,
    trajectory: Option<Vec<Step>>,
}

/// The fields of a trajectory that cairn reads or knows to carry nothing it needs.
pub(super) const KNOWN: &[&str] = &[
    "history",
    "trajectory",
    "info",
    "replay_config",
    "environment",
];

#[derive(Deserialize)]
struct HistoryMessage {
    role: Option<String>,
    content: Option<Content>,
    message_type: Option<String>,
    thought: Option<String>,
    action: Option<String>,
}

#[derive(Deserialize)]
struct Step {
    thought: Option<String>,
    response: Option<String>,
    action: Option<String>,
    observation: Option<String>,
}

pub(super) fn events(src: &Source<'_>, doc: Doc, report: &mut Report) -> Vec<Event> {
    let stem = std::path::Path::new(src.log)
        .file_name()
        .map(|s| s.to_string_lossy().trim_end_matches(".traj").to_string())
        .unwrap_or_else(|| "task".into());
    let mut out = Out {
        stream: format!("swe-agent:{stem}"),
        events: Vec::new(),
    };
    if let Some(history) = doc.history {
        for m in history {
            report.messages += 1;
            let content = shape::text(&m.content);
            match (m.role.as_deref().unwrap_or(""), m.message_type.as_deref()) {
                ("system", _) => out.push(report, Role::System, None, content),
                ("user", Some("observation")) | ("tool", _) => {
                    out.push(report, Role::Tool, Some("shell"), content)
                }
                ("user", _) => out.push(report, Role::User, None, content),
                ("assistant", _) => {
                    out.push(report, Role::Assistant, None, m.thought.unwrap_or(content));
                    out.action(m.action.as_deref());
                }
                (other, _) => report.skip(format!("a message of role `{other}`")),
            }
        }
        return out.events;
    }
    match doc.trajectory {
        Some(steps) => {
            for step in steps {
                report.messages += 1;
                let said = step.thought.or(step.response).unwrap_or_default();
                out.push(report, Role::Assistant, None, said);
                out.action(step.action.as_deref());
                let seen = step.observation.unwrap_or_default();
                out.push(report, Role::Tool, Some("shell"), seen);
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
    fn push(&mut self, report: &mut Report, role: Role, tool: Option<&str>, text: String) {
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
    fn action(&mut self, action: Option<&str>) {
        if let Some(a) = action.filter(|a| !a.trim().is_empty()) {
            self.events.push(Event::Span {
                stream: self.stream.clone(),
                role: Role::ToolCall,
                tool: Some("shell".into()),
                text: a.to_string(),
                message: None,
                timestamp: None,
            });
        }
    }
}
