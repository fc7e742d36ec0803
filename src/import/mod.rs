//! Importers (SPEC.md section 5.3): real agents' own logs become cairn's records. Each format
//! is read as a stream, one message at a time, and translated into cairn's JSON Lines (spans
//! with the place they came from, tool calls apart from their results, and the log's own
//! compactions as prose summaries), which go through [`crate::ingest`] and so through every
//! gate. Importing the same log again appends nothing; a log that has grown appends its tail.

mod claude_code;
mod codex;
mod openai_chat;
mod swe_agent;

use crate::gate::Gatekeeper;
use crate::ingest::{LineResult, Run};
use crate::store::Batch;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// A log format cairn imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Claude Code session transcripts (`~/.claude/projects/*/*.jsonl`).
    ClaudeCode,
    /// Codex CLI session rollouts (`~/.codex/sessions/**/rollout-*.jsonl`).
    Codex,
    /// SWE-agent trajectories (`*.traj`).
    SweAgent,
    /// OpenAI-style chat message lists (`[{role, content, tool_calls}, ...]`), or a JSON Lines
    /// file of such messages.
    OpenAiChat,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::SweAgent => "swe-agent",
            Format::OpenAiChat => "openai-chat",
        }
    }

    /// The format of a name, if any.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every format.
    pub const ALL: [Format; 4] = [
        Format::ClaudeCode,
        Format::Codex,
        Format::SweAgent,
        Format::OpenAiChat,
    ];
}

/// What went wrong, naming the file and line of the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct ImportError {
    /// The log file.
    pub file: PathBuf,
    /// Its 1-based line, when one is at fault.
    pub line: Option<u64>,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether the ledger failed, not the log (exit 3 rather than 2).
    pub integrity: bool,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Messages read from the log.
    pub messages: u64,
    /// cairn lines applied: spans, places and compactions.
    pub lines: u64,
    /// Lines whose record was in the ledger already.
    pub present: u64,
    /// The compactions met, each with its verdict: (log line, admitted, note).
    pub compactions: Vec<(u64, bool, String)>,
    /// What was skipped, by reason, with a count: unknown message types, unknown fields,
    /// empty messages, a truncated last line.
    pub skipped: BTreeMap<String, u64>,
    /// The streams written to, in the order first met.
    pub streams: Vec<String>,
}

impl Report {
    fn skip(&mut self, why: impl Into<String>) {
        *self.skipped.entry(why.into()).or_default() += 1;
    }
}

/// One thing a translator found in the log: a span, or a compaction of what came before.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A message, or one block of one.
    Span {
        stream: String,
        role: &'static str,
        tool: Option<String>,
        text: String,
        message: Option<String>,
        timestamp: Option<String>,
    },
    /// The log's own compaction of the stream so far, as prose.
    Compaction { stream: String, text: String },
}

/// A translator's view of one log line.
pub(crate) struct Source<'a> {
    /// The log's name, as places record it.
    pub log: &'a str,
}

/// Imports one log file into `batch`, through `gate`. The whole file is one write: on an error
/// nothing of it is written (drop the batch). `progress` is told the messages read so far.
pub fn import(
    batch: &mut Batch,
    gate: &Gatekeeper,
    format: Format,
    path: &Path,
    mut progress: impl FnMut(u64),
) -> Result<Report, ImportError> {
    let fail = |line: Option<u64>, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
        integrity: false,
    };
    let file = std::fs::File::open(path)
        .map_err(|e| fail(None, format!("cannot open the log ({e}); check the path")))?;
    let mut reader = std::io::BufReader::new(file);
    let log = path.to_string_lossy().to_string();
    let mut state = Importer {
        run: Run::new(),
        report: Report::default(),
        turns: BTreeMap::new(),
        window: BTreeMap::new(),
        refused: BTreeMap::new(),
    };
    let emit = |state: &mut Importer, batch: &mut Batch, line: u64, e: Event| {
        state
            .apply(batch, gate, &log, line, e)
            .map_err(|(m, integrity)| ImportError {
                file: path.to_path_buf(),
                line: Some(line),
                message: m,
                integrity,
            })
    };
    match format {
        Format::ClaudeCode | Format::Codex => {
            let mut translator = match format {
                Format::Codex => Lines::Codex(codex::Translator::new()),
                _ => Lines::ClaudeCode(claude_code::Translator::default()),
            };
            let mut buf = Vec::new();
            let mut line = 0u64;
            loop {
                buf.clear();
                let n = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| fail(Some(line + 1), format!("cannot read the log ({e})")))?;
                if n == 0 {
                    break;
                }
                line += 1;
                progress(line);
                let last = buf.last() != Some(&b'\n');
                let text = String::from_utf8_lossy(&buf);
                if text.trim().is_empty() {
                    continue;
                }
                let value: Value = match serde_json::from_str(text.trim()) {
                    Ok(v) => v,
                    // A session killed mid-write leaves its last line cut short.
                    Err(_) if last => {
                        state
                            .report
                            .skip("a truncated last line (a session cut off mid-write)");
                        continue;
                    }
                    Err(e) => {
                        return Err(fail(
                            Some(line),
                            format!(
                            "malformed JSON at column {} ({e}); nothing of this log was written",
                            e.column()
                        ),
                        ))
                    }
                };
                state.report.messages += 1;
                let src = Source { log: &log };
                for event in translator.line(&src, &value, &mut state.report) {
                    emit(&mut state, batch, line, event)?;
                }
            }
        }
        Format::OpenAiChat => {
            let mut translator = openai_chat::Translator::new(path);
            openai_chat::read(
                &mut reader,
                |line, value| {
                    state.report.messages += 1;
                    let src = Source { log: &log };
                    for event in translator.message(&src, &value, &mut state.report) {
                        emit(&mut state, batch, line, event)?;
                    }
                    Ok(())
                },
                &mut progress,
            )
            .map_err(|e| match e {
                openai_chat::ReadError::Import(e) => e,
                openai_chat::ReadError::Json { line, message } => fail(Some(line), message),
            })?;
        }
        Format::SweAgent => {
            let doc: Value = serde_json::from_reader(reader).map_err(|e| {
                fail(
                    Some(e.line() as u64),
                    format!(
                        "malformed JSON at column {} ({e}); nothing of this log was written",
                        e.column()
                    ),
                )
            })?;
            let src = Source { log: &log };
            let events = swe_agent::events(&src, &doc, &mut state.report);
            progress(state.report.messages);
            for event in events {
                emit(&mut state, batch, 1, event)?;
            }
        }
    }
    Ok(state.report)
}

/// The translators of the formats written as JSON Lines.
enum Lines {
    ClaudeCode(claude_code::Translator),
    Codex(codex::Translator),
}

impl Lines {
    fn line(&mut self, src: &Source<'_>, v: &Value, report: &mut Report) -> Vec<Event> {
        match self {
            Lines::ClaudeCode(t) => t.line(src, v, report),
            Lines::Codex(t) => t.line(src, v, report),
        }
    }
}

struct Importer {
    run: Run,
    report: Report,
    /// The next turn of each stream.
    turns: BTreeMap<String, u64>,
    /// The first turn of each stream's window: the turn after its last admitted compaction.
    window: BTreeMap<String, u64>,
    /// The line of each stream's last compaction, while it was refused.
    refused: BTreeMap<String, u64>,
}

impl Importer {
    /// Applies one event as a cairn line; on failure, the message and whether the ledger is at
    /// fault.
    fn apply(
        &mut self,
        batch: &mut Batch,
        gate: &Gatekeeper,
        log: &str,
        line: u64,
        event: Event,
    ) -> Result<(), (String, bool)> {
        let value = match event {
            Event::Span {
                stream,
                role,
                tool,
                text,
                message,
                timestamp,
            } => {
                let turn = self.next_turn(&stream);
                let mut source = json!({"log": log, "line": line});
                if let Some(m) = message {
                    source["message"] = json!(m);
                }
                if let Some(t) = timestamp {
                    source["timestamp"] = json!(t);
                }
                let mut v = json!({
                    "kind": "span", "stream": stream, "turn": turn, "role": role, "text": text,
                    "source": source,
                });
                if let Some(t) = tool {
                    v["name"] = json!(t);
                }
                v
            }
            Event::Compaction { stream, text } => {
                // It covers and evicts the stream's window: every span since the last
                // compaction the gates admitted. After a refusal the window still holds the
                // refused one's spans, so the next is judged over them too.
                let next = self.turns.get(&stream).copied().unwrap_or(0);
                let start = self.window.get(&stream).copied().unwrap_or(0);
                let span = if start < next {
                    json!([format!("turn:{start}..turn:{}", next - 1)])
                } else {
                    json!([])
                };
                json!({
                    "kind": "summary", "stream": stream, "author": "self", "budget": 0,
                    "covers": span, "evicts": span, "text": text,
                })
            }
        };
        let stream = value["stream"].as_str().unwrap_or("").to_string();
        if !self.report.streams.contains(&stream) {
            self.report.streams.push(stream);
        }
        let bytes = value.to_string();
        let result: Option<LineResult> = self
            .run
            .apply_line(batch, gate, line, bytes.as_bytes())
            .map_err(|e| (e.message.clone(), e.integrity))?;
        if let Some(r) = result {
            self.report.lines += 1;
            self.report.present += u64::from(!r.new);
            if let Some(o) = &r.gate {
                let stream = value["stream"].as_str().unwrap_or("").to_string();
                let next = self.turns.get(&stream).copied().unwrap_or(0);
                let start = self.window.get(&stream).copied().unwrap_or(0);
                let mut note = match &r.refused {
                    Some(why) => why.clone(),
                    None => format!("admitted over turns {start} to {}", next.saturating_sub(1)),
                };
                if let Some(refused) = self.refused.get(&stream) {
                    note.push_str(&format!(
                        "; judged over the turns since the compaction at line {refused}, which was refused"
                    ));
                }
                if o.admitted {
                    self.window.insert(stream.clone(), next);
                    self.refused.remove(&stream);
                } else {
                    self.refused.insert(stream.clone(), line);
                }
                self.report.compactions.push((line, o.admitted, note));
            }
        }
        Ok(())
    }

    fn next_turn(&mut self, stream: &str) -> u64 {
        let next = self.turns.entry(stream.to_string()).or_insert(0);
        let turn = *next;
        *next += 1;
        turn
    }
}

/// The text of a message's content: a string, or the text of its `text` blocks (or plain
/// string parts), joined by newlines. Both formats write content this way.
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str().or_else(|| b.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
