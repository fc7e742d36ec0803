//! OpenAI-style chat message lists: a JSON array of `{role, content, tool_calls,
//! tool_call_id, name}` messages, an object holding one under `messages`, or JSON Lines of
//! messages. Many exported logs and tau-bench-style conversations have this shape.
//!
//! - `user`, `assistant` and `system` (or `developer`) messages are spans of their role; a
//!   `tool` (or `function`) message is the tool's output, named after its call.
//! - An assistant's `tool_calls` are tool calls: the function's name, its arguments.
//! - `content` is a string or a list of parts; the `text` parts are read.
//! - The whole file is one stream, named after the file.

use super::shape::{self, Content};
use super::{Event, ImportError, Report, Source};
use crate::record::Role;
use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

/// The fields of a message that cairn reads or knows to carry nothing it needs.
const KNOWN: &[&str] = &[
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "function_call",
    "refusal",
    "annotations",
    "audio",
    "id",
    "timestamp",
    "created_at",
];

/// A chat message: the fields cairn reads.
#[derive(Deserialize)]
struct Message {
    role: Option<String>,
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    tool_call_id: Option<String>,
    name: Option<String>,
    function_call: Option<Function>,
    id: Option<String>,
    timestamp: Option<Value>,
    created_at: Option<Value>,
}

#[derive(Deserialize)]
struct ToolCall {
    id: Option<String>,
    function: Option<Function>,
}

#[derive(Deserialize)]
struct Function {
    name: Option<String>,
    arguments: Option<Value>,
}

pub(super) struct Translator {
    stream: String,
    calls: HashMap<String, String>,
}

impl Translator {
    pub(super) fn new(path: &Path) -> Translator {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "chat".into());
        Translator {
            stream: format!("openai-chat:{name}"),
            calls: HashMap::new(),
        }
    }

    /// The events of one message.
    pub(super) fn message(
        &mut self,
        _src: &Source<'_>,
        v: Value,
        report: &mut Report,
    ) -> Vec<Event> {
        if !v.is_object() {
            report.skip("a message that is not a JSON object");
            return Vec::new();
        }
        match shape::read::<Message, _>(v, KNOWN, report) {
            Ok(Some(m)) => self.translate(m, report),
            // A value holds no malformed JSON: only a shape it does not have, counted.
            _ => Vec::new(),
        }
    }

    fn translate(&mut self, v: Message, report: &mut Report) -> Vec<Event> {
        let message = v.id.clone().or_else(|| v.tool_call_id.clone());
        let timestamp = shape::stamp(&v.timestamp).or_else(|| shape::stamp(&v.created_at));
        let span = |role: Role, tool: Option<String>, text: String| Event::Span {
            stream: self.stream.clone(),
            role,
            tool,
            text,
            message: message.clone(),
            timestamp: timestamp.clone(),
        };
        let text = shape::text(&v.content);
        let mut out = Vec::new();
        match v.role.as_deref().unwrap_or("") {
            role @ ("user" | "assistant" | "system" | "developer") => {
                let role = match role {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => Role::System,
                };
                if !text.trim().is_empty() {
                    out.push(span(role, None, text));
                }
                let calls = v.tool_calls.iter().filter_map(|c| c.function.as_ref());
                for call in calls.chain(v.function_call.iter()) {
                    let name = call.name.clone().unwrap_or_else(|| "tool".into());
                    out.push(span(
                        Role::ToolCall,
                        Some(name),
                        plain_args(call.arguments.as_ref()),
                    ));
                }
                for c in &v.tool_calls {
                    let name = c.function.as_ref().and_then(|f| f.name.as_ref());
                    if let (Some(id), Some(name)) = (&c.id, name) {
                        self.calls.insert(id.clone(), name.clone());
                    }
                }
                if out.is_empty() {
                    report.skip("an empty message");
                }
            }
            "tool" | "function" => {
                let name = (v.tool_call_id.as_ref())
                    .and_then(|id| self.calls.get(id).cloned())
                    .or_else(|| v.name.clone());
                if text.trim().is_empty() {
                    report.skip("a tool result without text");
                } else {
                    out.push(span(Role::Tool, name, text));
                }
            }
            other => report.skip(format!("a message of role `{other}`")),
        }
        out
    }
}

/// Arguments as the model wrote them: a JSON string as it is, anything else as JSON.
fn plain_args(args: Option<&Value>) -> String {
    match args {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

pub(super) enum ReadError {
    Import(ImportError),
    Json { line: u64, message: String },
}

/// Reads the messages of a file, streaming: a JSON array (or `{"messages": [...]}`) element by
/// element, or JSON Lines. `each` is given the message's line (for JSON Lines; 1 for an array,
/// whose line is not tracked) and the message.
pub(super) fn read(
    reader: &mut dyn BufRead,
    mut each: impl FnMut(u64, Value) -> Result<(), ImportError>,
    progress: &mut dyn FnMut(u64),
) -> Result<(), ReadError> {
    let first = loop {
        let buf = reader.fill_buf().map_err(|e| ReadError::Json {
            line: 1,
            message: format!("cannot read the log ({e})"),
        })?;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let b = buf[i];
                reader.consume(i);
                break Some(b);
            }
            None if buf.is_empty() => break None,
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    match first {
        None => Ok(()),
        Some(b'[') => {
            let mut de = serde_json::Deserializer::from_reader(reader);
            let mut failed = None;
            let seed = Messages {
                each: &mut each,
                failed: &mut failed,
                progress,
            };
            let result = seed.deserialize(&mut de);
            if let Some(e) = failed {
                return Err(ReadError::Import(e));
            }
            result.map_err(|e| ReadError::Json {
                line: e.line() as u64,
                message: format!("malformed JSON at column {} ({e}); nothing of this log was written", e.column()),
            })
        }
        Some(b'{') => {
            // One object: a list under `messages`, or JSON Lines of messages.
            let mut text = String::new();
            reader.read_to_string(&mut text).map_err(|e| ReadError::Json {
                line: 1,
                message: format!("cannot read the log ({e})"),
            })?;
            progress(text.len() as u64);
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                let messages = v["messages"].as_array().cloned().unwrap_or_else(|| vec![v]);
                for m in messages {
                    each(1, m).map_err(ReadError::Import)?;
                }
                return Ok(());
            }
            let count = text.lines().count();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let last = i + 1 == count && !text.ends_with('\n');
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => each(i as u64 + 1, v).map_err(ReadError::Import)?,
                    Err(_) if last => {}
                    Err(e) => {
                        return Err(ReadError::Json {
                            line: i as u64 + 1,
                            message: format!("malformed JSON at column {} ({e}); nothing of this log was written", e.column()),
                        })
                    }
                }
            }
            Ok(())
        }
        Some(other) => Err(ReadError::Json {
            line: 1,
            message: format!(
                "an openai-chat log is a JSON list of messages, an object with `messages`, or JSON Lines; this one starts with {:?}",
                other as char
            ),
        }),
    }
}

/// A JSON array read one message at a time.
struct Messages<'a, F> {
    each: &'a mut F,
    failed: &'a mut Option<ImportError>,
    progress: &'a mut dyn FnMut(u64),
}

impl<'de, F: FnMut(u64, Value) -> Result<(), ImportError>> DeserializeSeed<'de>
    for Messages<'_, F>
{
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(u64, Value) -> Result<(), ImportError>> Visitor<'de> for Messages<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of chat messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0u64;
        while let Some(v) = seq.next_element::<Value>()? {
            n += 1;
            (self.progress)(n);
            if let Err(e) = (self.each)(n, v) {
                *self.failed = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}
