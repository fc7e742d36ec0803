//! Claude Code session transcripts: JSON Lines, one message a line, as Claude Code 1.0 to 2.1
//! writes them under `~/.claude/projects/*/`.
//!
//! - `user` and `assistant` lines carry `message.content`: a string, or blocks. A `text`
//!   block is a span of the line's role; a `tool_use` block is a tool call (its name, its
//!   input as JSON); a `tool_result` block is the tool's output, named after its call; a
//!   `thinking` block is the assistant's reasoning, a span of the assistant named `thinking`
//!   (a summary restates what the model reasoned as often as what it said). A user line's text
//!   inside `<local-command-stdout>` is what a slash command printed, and inside
//!   `<task-notification>` a background task's report: tool spans. The result
//!   of `AskUserQuestion` that relays the user's answer is a user span, and the result of a
//!   subagent (`Task`, `Agent`) the assistant's: a model's report.
//! - What the user types while the agent works is queued: a `queue-operation` line of
//!   operation `enqueue` holds its text, and newer logs add an `attachment` of type
//!   `queued_command` when the agent reads it. Such a message is a user span placed where the
//!   agent can next read it: before the next user or assistant message (a compaction is not
//!   one), or at the end of the log. The same text delivered later (as a user line or the
//!   attachment), or queued again before that, is not imported again. Queued notifications
//!   and tasks (JSON, tags) and slash commands are not the user's words.
//! - A compaction is the user line with `isCompactSummary` that follows a `system` line of
//!   subtype `compact_boundary`, and, in older logs, a `summary` line: each becomes a prose
//!   summary of the stream.
//! - A sidechain (`isSidechain`, a subagent's own conversation) is a stream of its own, named
//!   after its parent session and its agent.

use super::shape::{self, Block, Content, Part};
use super::{Event, Report, Source};
use crate::record::Role;
use serde::Deserialize;
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
    "operation",
    "attachment",
    "entrypoint",
];

/// A line of a session transcript: the fields cairn reads.
#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: String,
    message: Option<Message>,
    uuid: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "sessionId")]
    session: Option<String>,
    #[serde(rename = "agentId")]
    agent: Option<String>,
    #[serde(rename = "isSidechain")]
    sidechain: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    compact_summary: Option<bool>,
    #[serde(rename = "isMeta")]
    meta: Option<bool>,
    subtype: Option<String>,
    summary: Option<String>,
    /// A `queue-operation` line's operation and its text.
    operation: Option<String>,
    content: Option<serde_json::Value>,
    attachment: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Message {
    content: Option<Content>,
}

#[derive(Default)]
pub(super) struct Translator {
    /// Tool calls by id: their names, for the results that answer them.
    calls: HashMap<String, String>,
    /// The user's queued messages not yet placed: each one's text and its span.
    pending: Vec<(String, Event)>,
    /// The texts of the queued messages placed and not yet delivered.
    queued: Vec<String>,
}

impl Translator {
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
        let stream = stream_of(src, &v);
        let span = |role: Role, tool: Option<String>, text: String| Event::Span {
            stream: stream.clone(),
            role,
            tool,
            text,
            message: v.uuid.clone(),
            timestamp: v.timestamp.clone(),
        };
        match v.kind.as_str() {
            "summary" => match &v.summary {
                Some(text) if !text.trim().is_empty() => vec![Event::Compaction {
                    stream,
                    text: text.clone(),
                }],
                _ => {
                    report.skip("a summary line without text");
                    Vec::new()
                }
            },
            "queue-operation" => {
                let text = (v.content.as_ref()).and_then(|c| c.as_str());
                // Not yet placed: a message placed already may be sent again later, on purpose.
                let again = |t: &str| self.pending.iter().any(|(q, _)| q == t.trim());
                match text.filter(|t| v.operation.as_deref() == Some("enqueue") && typed(t)) {
                    // Claude Code may queue one message again and again before the agent
                    // reads it: it is one message.
                    Some(t) if again(t) => {
                        report.skip("a queued message queued again (imported once)");
                        Vec::new()
                    }
                    Some(t) => {
                        let event = span(Role::User, None, t.to_string());
                        self.pending.push((t.trim().to_string(), event));
                        Vec::new()
                    }
                    None => {
                        report.skip("a queue operation other than a message the user typed");
                        Vec::new()
                    }
                }
            }
            "attachment" => {
                let a = v.attachment.as_ref();
                let field = |k: &str| a.and_then(|a| a.get(k)).and_then(|x| x.as_str());
                let human = (a.and_then(|a| a.pointer("/origin/kind")))
                    .is_none_or(|k| k.as_str() == Some("human"));
                match field("prompt")
                    .filter(|t| field("type") == Some("queued_command") && human && typed(t))
                {
                    Some(t) if !self.delivered(t) => {
                        let mut out = self.rest();
                        out.push(span(Role::User, None, t.to_string()));
                        out
                    }
                    Some(_) => {
                        report.skip("a queued message delivered (imported where it was typed)");
                        Vec::new()
                    }
                    None => {
                        report.skip("an attachment other than a message the user typed");
                        Vec::new()
                    }
                }
            }
            "system" => {
                if v.subtype.as_deref() != Some("compact_boundary") {
                    report.skip("a system line other than a compaction boundary");
                }
                // The boundary itself says nothing: the summary follows it.
                Vec::new()
            }
            kind @ ("user" | "assistant") => {
                if v.meta == Some(true) {
                    report.skip("a meta message (a caveat Claude Code adds, not the user's words)");
                    return Vec::new();
                }
                let content = v.message.as_ref().and_then(|m| m.content.as_ref());
                if v.compact_summary == Some(true) {
                    let text = without_framing(&content.map(Content::text).unwrap_or_default());
                    if text.trim().is_empty() {
                        report.skip("a compaction summary without text");
                        return Vec::new();
                    }
                    return vec![Event::Compaction { stream, text }];
                }
                let role = if kind == "user" {
                    Role::User
                } else {
                    Role::Assistant
                };
                let mut out = Vec::new();
                // The queued messages go first, save one this line delivers.
                if role == Role::User {
                    let texts: Vec<&str> = match content {
                        Some(Content::Text(t)) => vec![t],
                        Some(Content::Parts(parts)) => (parts.iter())
                            .filter_map(|p| match p {
                                Part::Text(t) => Some(t.as_str()),
                                Part::Block(_) => None,
                            })
                            .collect(),
                        None => Vec::new(),
                    };
                    for t in texts {
                        let at = self.pending.iter().position(|(q, _)| q == t.trim());
                        at.map(|i| self.pending.remove(i));
                    }
                }
                out.extend(self.rest());
                match content {
                    Some(Content::Text(text)) => {
                        if text.trim().is_empty() {
                            report.skip("an empty message");
                        } else if role == Role::User && self.delivered(text) {
                            report.skip("a queued message delivered (imported where it was typed)");
                        } else {
                            let (role, name, text) = speaker(role, text);
                            out.push(span(role, name, text));
                        }
                    }
                    Some(Content::Parts(parts)) => {
                        for part in parts {
                            match part {
                                Part::Text(t) if role == Role::User && self.delivered(t) => report
                                    .skip(
                                        "a queued message delivered (imported where it was typed)",
                                    ),
                                Part::Text(t) if !t.trim().is_empty() => {
                                    let (role, name, t) = speaker(role, t);
                                    out.push(span(role, name, t))
                                }
                                Part::Text(_) => report.skip("an empty text block"),
                                Part::Block(b) => self.block(b, role, &span, &mut out, report),
                            }
                        }
                    }
                    None => report.skip("a message without content"),
                }
                out
            }
            other => {
                report.skip(format!("a line of type `{other}`"));
                Vec::new()
            }
        }
    }

    /// Whether `text` is a queued message already placed, now delivered: the first delivery
    /// of each is taken off the queue.
    fn delivered(&mut self, text: &str) -> bool {
        let t = text.trim();
        let at = self.queued.iter().position(|q| q == t);
        at.map(|i| self.queued.remove(i)).is_some()
    }

    /// The queued messages not yet placed, placed now: at the next message, or at the end of
    /// the log.
    pub(super) fn rest(&mut self) -> Vec<Event> {
        let pending = std::mem::take(&mut self.pending);
        (pending.into_iter())
            .map(|(text, event)| {
                self.queued.push(text);
                event
            })
            .collect()
    }

    /// The span of one content block, if it is one cairn keeps.
    fn block(
        &mut self,
        b: &Block,
        role: Role,
        span: &dyn Fn(Role, Option<String>, String) -> Event,
        out: &mut Vec<Event>,
        report: &mut Report,
    ) {
        match b.kind.as_str() {
            "text" => match &b.text {
                Some(t) if !t.trim().is_empty() => {
                    let (role, name, t) = speaker(role, t);
                    out.push(span(role, name, t))
                }
                _ => report.skip("an empty text block"),
            },
            "tool_use" => {
                let name = b.name.clone().unwrap_or_else(|| "tool".into());
                if let Some(id) = &b.id {
                    self.calls.insert(id.clone(), name.clone());
                }
                let input = b.input.as_ref().map(|i| i.to_string());
                out.push(span(
                    Role::ToolCall,
                    Some(name),
                    input.unwrap_or_else(|| "null".into()),
                ));
            }
            "tool_result" => {
                let name = (b.tool_use_id.as_ref()).and_then(|id| self.calls.get(id).cloned());
                let text = shape::text(&b.content);
                // What the user answered to the assistant's question is the user's words, which
                // the tool only relays; when no one answered, the tool speaks for itself. A relay
                // that repeats each question ("Q"="A") is the tool's, and the answers alone are
                // the user's: the questions are the assistant's words.
                let answer = name.as_deref().is_some_and(asks_the_user) && relays_an_answer(&text);
                if text.trim().is_empty() {
                    report.skip("a tool result without text");
                } else if let Some(answers) = answer.then(|| answers(&text)).flatten() {
                    out.push(span(Role::Tool, name.clone(), text));
                    out.push(span(Role::User, name, answers));
                } else {
                    let role = if answer {
                        Role::User
                    } else if name.as_deref().is_some_and(|n| SUBAGENTS.contains(&n)) {
                        Role::Assistant
                    } else {
                        Role::Tool
                    };
                    out.push(span(role, name, text));
                }
            }
            "thinking" => match &b.text {
                Some(t) if !t.trim().is_empty() => {
                    out.push(span(Role::Assistant, Some("thinking".into()), t.clone()))
                }
                _ => report.skip("a thinking block without text (only its signature)"),
            },
            "redacted_thinking" => report.skip("a redacted thinking block (encrypted reasoning)"),
            "image" | "document" => report.skip("an image or document block"),
            other => report.skip(format!("a content block of type `{other}`")),
        }
    }
}

/// Whether a queued text is the user's typed words: not a notification or task Claude Code
/// queues (JSON or a tag), not a slash command, not empty.
fn typed(text: &str) -> bool {
    let t = text.trim_start();
    !t.is_empty() && !t.starts_with(['{', '<', '/'])
}

/// Claude Code's tool that asks the user a question: its result is the user's answer, a span
/// of the user, when it relays one.
const ASKS_THE_USER: &str = "AskUserQuestion";

/// The tools that run a subagent: a model working for the assistant, whose result is its
/// report (what it read and what it concluded, in its own words). The report is the assistant's
/// span, named after the tool: what a model wrote, which a summary may revise, not a tool's
/// output (SPEC.md 5.3).
const SUBAGENTS: &[&str] = &["Task", "Agent"];

/// Whether a tool is [`ASKS_THE_USER`], built in or as an MCP server serves it
/// (`mcp__SERVER__AskUserQuestion`).
fn asks_the_user(name: &str) -> bool {
    name == ASKS_THE_USER
        || name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.rsplit_once("__"))
            .is_some_and(|(_, tool)| tool == ASKS_THE_USER)
}

/// Whether a result of [`ASKS_THE_USER`] relays the user's answer ("User has answered your
/// questions: ...", "The user answered: ...", "User responses: ...", or a refusal with what
/// "the user said:"), not the tool's own words ("No response after 300s - the user may be away
/// from keyboard").
fn relays_an_answer(text: &str) -> bool {
    let t = text.trim_start().to_lowercase();
    [
        "user has answered",
        "the user answered",
        "user answered",
        "user responses:",
    ]
    .iter()
    .any(|p| t.starts_with(p))
        || t.contains("the user said:")
}

/// The answers of a relay that repeats each question (`"Q1"="A1", "Q2"="A2"`), one per line;
/// `None` when it holds no such pair.
fn answers(text: &str) -> Option<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"=\"") {
        let after = &rest[at + 3..];
        // The answer runs to the quote that closes it: one followed by a comma, a full stop
        // or the text's end.
        let end = (after.match_indices('"'))
            .map(|(i, _)| i)
            .find(|i| {
                let next = after[i + 1..].chars().next();
                next.is_none_or(|c| matches!(c, ',' | '.' | '\n' | ' '))
            })
            .unwrap_or(after.len());
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// Who speaks a text of a user or assistant line, and its words. Claude Code writes into user
/// lines what is not the user's words: what a slash command printed, inside
/// `<local-command-stdout>` (or `-stderr`), a tool span named `local-command`; and the report of
/// a background task or subagent that finished, inside `<task-notification>`, a tool span named
/// `task-notification`. A slash command the user typed, which Claude Code records in tags
/// (`<command-name>/review</command-name>`, `<command-args>...</command-args>`), is the user's,
/// as typed: "/review ...".
fn speaker(role: Role, text: &str) -> (Role, Option<String>, String) {
    let t = text.trim_start();
    let (role, name) = if role != Role::User {
        (role, None)
    } else if t.starts_with("<local-command-stdout>") || t.starts_with("<local-command-stderr>") {
        (Role::Tool, Some("local-command".into()))
    } else if t.starts_with("<task-notification>") {
        (Role::Tool, Some("task-notification".into()))
    } else {
        (role, None)
    };
    let typed = (role == Role::User).then(|| slash_command(text)).flatten();
    (role, name, typed.unwrap_or_else(|| text.to_string()))
}

/// A slash command as the user typed it, from the tags Claude Code records it in: the
/// command's name and its arguments, joined by a space.
fn slash_command(text: &str) -> Option<String> {
    let inside = |tag: &str| {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let from = text.find(&open)? + open.len();
        let to = from + text[from..].find(&close)?;
        Some(text[from..to].trim())
    };
    let name = inside("command-name").filter(|n| n.starts_with('/'))?;
    Some(match inside("command-args").filter(|a| !a.is_empty()) {
        Some(args) => format!("{name} {args}"),
        None => name.to_string(),
    })
}

/// The stream of a line: `claude-code:SESSION`, or for a sidechain
/// `claude-code:SESSION:sidechain:AGENT`.
fn stream_of(src: &Source<'_>, v: &Entry) -> String {
    // A log that continues an earlier one goes on in that log's stream.
    if let Some(stream) = src.continues {
        return match (v.sidechain, v.agent.as_deref()) {
            (Some(true), agent) => {
                format!(
                    "{stream}:sidechain:{}",
                    super::id_part(agent.unwrap_or("agent"))
                )
            }
            _ => stream.to_string(),
        };
    }
    // Ids are the log's own words: escaped, a session id cannot name a sidechain's stream.
    let session = v.session.as_deref().map(super::id_part).unwrap_or_else(|| {
        // A log without session ids is one session, named after its file.
        std::path::Path::new(src.log)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "session".into())
    });
    if v.sidechain == Some(true) {
        let agent = super::id_part(v.agent.as_deref().unwrap_or("agent"));
        format!("claude-code:{session}:sidechain:{agent}")
    } else {
        format!("claude-code:{session}")
    }
}

/// What Claude Code writes around every compaction summary, which states nothing about the
/// conversation: the opening "This session is being continued ...", and the closing lines
/// that point at the transcript and tell the model to go on. Their sentences are dropped; the
/// summary stays.
const FRAMING: &[&str] = &[
    "This session is being continued from a previous conversation",
    "The conversation is summarized below",
    "The summary below covers the earlier portion of the conversation",
];

/// The starts of Claude Code's closing lines: each such line is framing to its end.
const FRAMING_LINES: &[&str] = &[
    "If you need specific details from before compaction",
    "Please continue the conversation from where",
    "Continue the conversation from where it left off",
];

fn without_framing(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if FRAMING_LINES
            .iter()
            .any(|f| line.trim_start().starts_with(f))
        {
            continue;
        }
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

/// The logs of `files` in the order to import them, each with the position in `files` of the
/// earlier log it continues, if that log is among them (SPEC.md 5.3). A Claude Code log that
/// begins with a compaction (a `compact_boundary` line before any message) continues the log
/// that holds the message its `logicalParentUuid` names; that log is imported first.
pub fn continuations(files: &[std::path::PathBuf]) -> std::io::Result<Vec<(usize, Option<usize>)>> {
    let mut opens = Vec::with_capacity(files.len());
    let mut holds: HashMap<String, usize> = HashMap::new();
    for (i, file) in files.iter().enumerate() {
        let (parent, uuids) = read_links(file)?;
        opens.push(parent);
        for u in uuids {
            holds.entry(u).or_insert(i);
        }
    }
    let parent: Vec<Option<usize>> = (opens.iter().enumerate())
        .map(|(i, p)| {
            p.as_ref()
                .and_then(|u| holds.get(u))
                .copied()
                .filter(|j| *j != i)
        })
        .collect();
    // Parents first; a cycle (two logs naming each other) is broken where it is met.
    let mut order = Vec::with_capacity(files.len());
    let mut placed = vec![false; files.len()];
    for start in 0..files.len() {
        let mut chain = vec![start];
        while let Some(p) = chain.last().and_then(|c| parent[*c]) {
            if placed[p] || chain.contains(&p) {
                break;
            }
            chain.push(p);
        }
        for i in chain.into_iter().rev() {
            if !placed[i] {
                placed[i] = true;
                order.push((i, parent[i]));
            }
        }
    }
    Ok(order)
}

/// The `logicalParentUuid` of a log's opening compaction boundary, if it opens with one, and
/// the uuid of every line of it.
fn read_links(file: &std::path::Path) -> std::io::Result<(Option<String>, Vec<String>)> {
    use crate::ingest::{read_line, LineRead};
    let mut reader = std::io::BufReader::new(std::fs::File::open(file)?);
    let (mut parent, mut uuids, mut talked) = (None, Vec::new(), false);
    let mut buf = Vec::new();
    // A line past the limit is skipped, never held whole (the import refuses it after).
    loop {
        match read_line(&mut reader, &mut buf)? {
            LineRead::End => break,
            LineRead::TooLong(_) => continue,
            LineRead::Line => {}
        }
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&buf) else {
            continue;
        };
        let field = |k: &str| v.get(k).and_then(|x| x.as_str());
        if let Some(u) = field("uuid") {
            uuids.push(u.to_string());
        }
        match (field("type"), field("subtype")) {
            (Some("system"), Some("compact_boundary")) if !talked && parent.is_none() => {
                parent = field("logicalParentUuid").map(str::to_string);
            }
            (Some("user" | "assistant"), _) => talked = true,
            _ => {}
        }
    }
    Ok((parent, uuids))
}
