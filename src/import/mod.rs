//! Importers (SPEC.md section 5.3): real agents' own logs become cairn's records. Each format
//! is read as a stream, one message at a time, and translated into cairn's JSON Lines (spans
//! with the place they came from, tool calls apart from their results, and the log's own
//! compactions as prose summaries), which go through [`crate::ingest`] and so through every
//! gate. Importing the same log again appends nothing; a log that has grown appends its tail.

mod claude_code;
pub use claude_code::continuations;
mod codex;
mod openai_chat;
mod shape;
mod swe_agent;

use crate::gate::Gatekeeper;
use crate::ingest::lines::{Line, Name, Reference, SourceLine, SpanLine, SummaryLine};
use crate::ingest::Run;
use crate::record::{Author, Role};
use crate::store::{Batch, Ledger, Read};
use serde::Deserialize;
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
    /// Messages imported: the log's lines (or, for a whole-document log, its messages) that
    /// gave at least one span or compaction. Progress lines, event lines and other lines the
    /// importer skips whole do not count (issue 37).
    pub messages: u64,
    /// The log's non-blank lines read (a whole-document log: its messages).
    pub log_lines: u64,
    /// Lines that held bytes that are not UTF-8, each such byte read as U+FFFD.
    pub invalid_utf8: u64,
    /// cairn lines applied: spans, places and compactions.
    pub lines: u64,
    /// Lines whose record was in the ledger already.
    pub present: u64,
    /// The compactions met, in order, each with its verdict.
    pub compactions: Vec<Compaction>,
    /// What was skipped, by reason, with a count: unknown message types, unknown fields,
    /// empty messages, a truncated last line.
    pub skipped: BTreeMap<String, u64>,
    /// The streams written to, in the order first met.
    pub streams: Vec<String>,
    /// Where each stream stands after the log: its next turn and the first turn of its window
    /// (the turn after its last admitted compaction). A log that continues this one goes on
    /// from here ([`Continues`]).
    pub ends: BTreeMap<String, (u64, u64)>,
    /// Streams this log would have shared with another log, and the streams its messages went
    /// to instead: (the name the log gives, the name used).
    pub renamed: Vec<(String, String)>,
}

/// A log that continues an earlier one (SPEC.md 5.3): Claude Code begins a continued session's
/// log with the compaction of the earlier log. Its messages go on in the earlier log's stream,
/// from where that log's import left it, so its compaction is judged over the earlier log's
/// turns.
#[derive(Debug, Clone)]
pub struct Continues {
    /// The earlier log's stream.
    pub stream: String,
    /// Where the earlier log's streams stood after it ([`Report::ends`]).
    pub ends: BTreeMap<String, (u64, u64)>,
}

impl Report {
    /// The report as `cairn import --json` prints it for `file`, with the records it appended.
    pub fn to_json(&self, file: &Path, appended: u64) -> serde_json::Value {
        use serde_json::json;
        json!({
            "file": file.display().to_string(), "messages": self.messages, "lines": self.lines,
            "log_lines": self.log_lines, "invalid_utf8_lines": self.invalid_utf8,
            "present": self.present, "appended": appended, "streams": self.streams,
            "compactions": self.compactions.iter().map(|c| json!({
                "line": c.line, "verdict": if c.admitted { "admitted" } else { "refused" },
                "judged_before": c.judged_before,
                "detail": c.note, "claims": c.claims, "verdict_rid": c.verdict.to_hex(),
                "findings": c.findings.iter().map(|(gate, n)| (gate.clone(), json!(n)))
                    .collect::<serde_json::Map<_, _>>(),
                "examples": c.examples.iter().map(|(gate, detail)| json!({
                    "gate": gate, "detail": detail,
                })).collect::<Vec<_>>(),
                "struck": c.struck,
                "repair": c.repair.as_ref().map(|(rid, admitted, text)| json!({
                    "rid": rid.to_hex(),
                    "verdict": if *admitted { "admitted" } else { "refused" },
                    "text": text,
                })),
            })).collect::<Vec<_>>(),
            "skipped": self.skipped,
            "renamed": self.renamed.iter().map(|(from, to)| json!({"from": from, "to": to}))
                .collect::<Vec<_>>(),
        })
    }

    fn skip(&mut self, why: impl Into<String>) {
        *self.skipped.entry(why.into()).or_default() += 1;
    }
}

/// A compaction of the log, as the gates judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The log line it was read from.
    pub line: u64,
    /// Whether the gates admitted it.
    pub admitted: bool,
    /// It was in the ledger already (the log imported again): its verdict is the one the
    /// gates gave when it was first imported, and this import judged nothing new.
    pub judged_before: bool,
    /// The turns it was judged over, and why they reach back further when the log's
    /// previous compaction was refused.
    pub note: String,
    /// Its claims (sentences and list items).
    pub claims: usize,
    /// How many findings each gate made, in the order first made.
    pub findings: Vec<(String, usize)>,
    /// The first few findings ([`EXAMPLES`]), the gate's name and what it found; the verdict
    /// record holds them all (`cairn replay`).
    pub examples: Vec<(String, String)>,
    /// The verdict record.
    pub verdict: crate::record::Rid,
    /// How many of its claims the gates struck.
    pub struck: usize,
    /// When it was refused: its repair (SPEC.md section 8.9), the summary cairn built, whether
    /// the gates admitted it, and its text.
    pub repair: Option<(crate::record::Rid, bool, String)>,
}

/// How many findings of each compaction a report keeps in full: an import of a long log meets
/// thousands of compactions, and their verdicts hold every finding.
pub const EXAMPLES: usize = 3;

/// One thing a translator found in the log: a span, or a compaction of what came before.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A message, or one block of one.
    Span {
        stream: String,
        role: Role,
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
    /// The stream of the earlier log this one continues, which its messages go on in.
    pub continues: Option<&'a str>,
}

/// Messages imported per write: a commit every this many keeps memory bounded on a log of any
/// size (SPEC.md 5.3).
pub const MESSAGES_PER_COMMIT: u64 = 20_000;

/// Imports one log file into `ledger`, through `gate`. The log is first read through once for
/// malformed JSON, so that a bad line writes nothing; then it is imported, committed every
/// [`MESSAGES_PER_COMMIT`] messages. An import cut short (a crash, a full disk) has written
/// whole batches only, and importing the log again completes it. `progress` is told the
/// messages read so far.
pub fn import(
    ledger: &Ledger,
    gate: &Gatekeeper,
    format: Format,
    path: &Path,
    progress: impl FnMut(u64),
) -> Result<Report, ImportError> {
    import_continuing(ledger, gate, format, path, None, progress)
}

/// [`import`] a log that continues an earlier one, when `continues` says so: its messages go
/// on in the earlier log's stream (SPEC.md 5.3).
pub fn import_continuing(
    ledger: &Ledger,
    gate: &Gatekeeper,
    format: Format,
    path: &Path,
    continues: Option<&Continues>,
    mut progress: impl FnMut(u64),
) -> Result<Report, ImportError> {
    let fail = |line: Option<u64>, message: String| ImportError {
        file: path.to_path_buf(),
        line,
        message,
        integrity: false,
    };
    check(format, path)?;
    let store = |e: crate::error::Error| ImportError {
        file: path.to_path_buf(),
        line: None,
        message: e.to_string(),
        integrity: e.is_integrity(),
    };
    let mut writer = Writer {
        ledger,
        batch: Some(ledger.batch().map_err(store)?),
        since: 0,
    };
    let file = std::fs::File::open(path)
        .map_err(|e| fail(None, format!("cannot open the log ({e}); check the path")))?;
    let mut reader = std::io::BufReader::new(file);
    let log = path.to_string_lossy().to_string();
    let ends = continues.map(|c| c.ends.clone()).unwrap_or_default();
    let mut state = Importer {
        run: Run::new(),
        report: Report::default(),
        turns: ends
            .iter()
            .map(|(s, (next, _))| (s.clone(), *next))
            .collect(),
        window: ends
            .iter()
            .map(|(s, (_, start))| (s.clone(), *start))
            .collect(),
        refused: BTreeMap::new(),
        owned: BTreeMap::new(),
    };
    let continued = continues.map(|c| c.stream.as_str());
    let emit = |state: &mut Importer, writer: &mut Writer<'_>, line: u64, e: Event| {
        state
            .apply(writer.batch(), gate, &log, line, e)
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
            let mut at = 0;
            let invalid = each_line(&mut reader, path, |line, text, last| {
                progress(line);
                state.report.log_lines += 1;
                let src = Source {
                    log: &log,
                    continues: continued,
                };
                let events = match translator.line(&src, text, &mut state.report) {
                    Ok(events) => {
                        state.report.messages += u64::from(!events.is_empty());
                        events
                    }
                    // A session killed mid-write leaves its last line cut short.
                    Err(_) if last => {
                        state
                            .report
                            .skip("a truncated last line (a session cut off mid-write)");
                        Vec::new()
                    }
                    Err(e) => return Err(malformed(path, line, &e)),
                };
                at = line;
                for event in events {
                    emit(&mut state, &mut writer, line, event)?;
                }
                writer.tick().map_err(store)
            })?;
            state.report.invalid_utf8 = invalid;
            // What the translator still holds belongs at the end of the log.
            for event in translator.rest() {
                emit(&mut state, &mut writer, at, event)?;
            }
        }
        Format::OpenAiChat => {
            let mut translator = openai_chat::Translator::new(path);
            openai_chat::read(
                &mut reader,
                |line, value| {
                    state.report.messages += 1;
                    state.report.log_lines += 1;
                    let src = Source {
                        log: &log,
                        continues: continued,
                    };
                    for event in translator.message(&src, value, &mut state.report) {
                        emit(&mut state, &mut writer, line, event)?;
                    }
                    writer.tick().map_err(store)
                },
                &mut progress,
            )
            .map_err(|e| match e {
                openai_chat::ReadError::Import(e) => e,
                openai_chat::ReadError::Json { line, message } => fail(Some(line), message),
            })?;
        }
        Format::SweAgent => {
            let mut de = serde_json::Deserializer::from_reader(reader);
            let doc = shape::read(&mut de, swe_agent::KNOWN, &mut state.report)
                .and_then(|doc| match doc {
                    Some(doc) => de.end().map(|()| Some(doc)),
                    None => Ok(None),
                })
                .map_err(|e| {
                    fail(
                        Some(e.line() as u64),
                        format!(
                            "malformed JSON at column {} ({e}); nothing of this log was written",
                            e.column()
                        ),
                    )
                })?;
            let src = Source {
                log: &log,
                continues: continued,
            };
            let events = match doc {
                Some(doc) => swe_agent::events(&src, doc, &mut state.report),
                None => Vec::new(),
            };
            state.report.log_lines = state.report.messages;
            progress(state.report.messages);
            for event in events {
                emit(&mut state, &mut writer, 1, event)?;
            }
        }
    }
    writer.finish().map_err(store)?;
    let mut report = state.report;
    for stream in &report.streams {
        let next = state.turns.get(stream).copied().unwrap_or(0);
        let start = state.window.get(stream).copied().unwrap_or(0);
        report.ends.insert(stream.clone(), (next, start));
    }
    Ok(report)
}

/// The open batch of an import, committed every [`MESSAGES_PER_COMMIT`] messages.
struct Writer<'a> {
    ledger: &'a Ledger,
    batch: Option<Batch>,
    since: u64,
}

impl Writer<'_> {
    fn batch(&mut self) -> &mut Batch {
        // Only `tick` and `finish` take the batch, and each puts one back or ends the writer.
        self.batch.as_mut().expect("an open batch")
    }

    /// One more message: commits and opens a new batch when the batch holds enough.
    fn tick(&mut self) -> crate::error::Result<()> {
        self.since += 1;
        if self.since >= MESSAGES_PER_COMMIT {
            if let Some(b) = self.batch.take() {
                b.commit()?;
            }
            self.batch = Some(self.ledger.batch()?);
            self.since = 0;
        }
        Ok(())
    }

    fn finish(mut self) -> crate::error::Result<()> {
        match self.batch.take() {
            Some(b) => b.commit(),
            None => Ok(()),
        }
    }
}

/// Reads the log through once for malformed JSON: a bad line is an error that names it, before
/// anything is written. A truncated last line is not (the import skips it and says so).
fn check(format: Format, path: &Path) -> Result<(), ImportError> {
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| ImportError {
                file: path.to_path_buf(),
                line: None,
                message: format!("cannot open the log ({e}); check the path"),
                integrity: false,
            })
    };
    let mut reader = open()?;
    let lines = match format {
        Format::SweAgent => return Ok(()),
        Format::ClaudeCode | Format::Codex => true,
        Format::OpenAiChat => {
            let first = reader
                .fill_buf()
                .ok()
                .and_then(|b| b.iter().copied().find(|c| !c.is_ascii_whitespace()));
            if first == Some(b'[') {
                let mut de = serde_json::Deserializer::from_reader(reader);
                return serde::de::IgnoredAny::deserialize(&mut de)
                    .map(drop)
                    .map_err(|e| malformed(path, e.line() as u64, &e));
            }
            // An object holding `messages` is read whole; else it is JSON Lines.
            let mut text = String::new();
            std::io::Read::read_to_string(&mut reader, &mut text).map_err(|e| ImportError {
                file: path.to_path_buf(),
                line: None,
                message: format!("cannot read the log ({e})"),
                integrity: false,
            })?;
            if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
                return Ok(());
            }
            reader = open()?;
            true
        }
    };
    if lines {
        each_line(
            &mut reader,
            path,
            |line, text, last| match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Err(e) if !last => Err(malformed(path, line, &e)),
                _ => Ok(()),
            },
        )
        .map(drop)?;
    }
    Ok(())
}

/// The translators of the formats written as JSON Lines.
enum Lines {
    ClaudeCode(claude_code::Translator),
    Codex(codex::Translator),
}

impl Lines {
    /// What the translator holds back until a later line, given at the end of the log.
    fn rest(&mut self) -> Vec<Event> {
        match self {
            Lines::ClaudeCode(t) => t.rest(),
            Lines::Codex(_) => Vec::new(),
        }
    }

    fn line(
        &mut self,
        src: &Source<'_>,
        text: &str,
        report: &mut Report,
    ) -> Result<Vec<Event>, serde_json::Error> {
        match self {
            Lines::ClaudeCode(t) => t.line(src, text, report),
            Lines::Codex(t) => t.line(src, text, report),
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
    /// The stream each stream name of the log goes to: itself, or its own name when another
    /// log holds the name ([`Importer::own_stream`]).
    owned: BTreeMap<String, String>,
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
        let (stream, built) = match event {
            Event::Span {
                stream,
                role,
                tool,
                text,
                message,
                timestamp,
            } => {
                let first = (role, tool.as_deref(), text.as_str(), message.as_deref());
                let stream = self.own_stream(batch, stream, first)?;
                let turn = self.next_turn(&stream);
                let span = SpanLine {
                    stream: stream.clone(),
                    turn,
                    role: Name(role),
                    name: tool,
                    text,
                    source: Some(SourceLine {
                        log: log.to_string(),
                        message,
                        line: Some(line),
                        timestamp,
                    }),
                };
                (stream, Line::Span(span))
            }
            Event::Compaction { stream, text } => {
                let stream = self.owned.get(&stream).cloned().unwrap_or(stream);
                // It covers and evicts the stream's window: every span since the last
                // compaction the gates admitted. After a refusal the window still holds the
                // refused one's spans, so the next is judged over them too.
                let next = self.turns.get(&stream).copied().unwrap_or(0);
                let start = self.window.get(&stream).copied().unwrap_or(0);
                let window: Vec<Reference> = if start < next {
                    vec![Reference(format!("turn:{start}..turn:{}", next - 1))]
                } else {
                    Vec::new()
                };
                let summary = SummaryLine {
                    stream: stream.clone(),
                    parent: None,
                    author: Name(Author::SelfAuthored),
                    repairs: None,
                    budget: 0,
                    covers: window.clone(),
                    evicts: window,
                    claims: None,
                    text: Some(text),
                    self_score: None,
                    reground: false,
                };
                (stream, Line::Summary(summary))
            }
        };
        if !self.report.streams.contains(&stream) {
            self.report.streams.push(stream.clone());
        }
        let r = self
            .run
            .apply_built(batch, gate, line, built)
            .map_err(|e| (e.message.clone(), e.integrity))?;
        self.report.lines += 1;
        self.report.present += u64::from(!r.new);
        if let Some(o) = &r.gate {
            let next = self.turns.get(&stream).copied().unwrap_or(0);
            let start = self.window.get(&stream).copied().unwrap_or(0);
            let mut note = if start < next {
                format!("judged over turns {start} to {}", next - 1)
            } else {
                "judged over no turns (no message of its stream comes before it)".to_string()
            };
            if let Some(refused) = self.refused.get(&stream) {
                note.push_str(&format!(
                    "; judged over the turns since the compaction at line {refused}, which was refused"
                ));
            }
            // An admitted repair stands for a refused compaction: the window moves on.
            let repaired = o.repair.as_ref().is_some_and(|r| r.outcome.admitted);
            if o.admitted || repaired {
                self.window.insert(stream.clone(), next);
                self.refused.remove(&stream);
            } else {
                self.refused.insert(stream.clone(), line);
            }
            let mut findings: Vec<(String, usize)> = Vec::new();
            for f in &o.findings {
                let gate = f.gate.to_string();
                match findings.iter_mut().find(|(g, _)| *g == gate) {
                    Some((_, n)) => *n += 1,
                    None => findings.push((gate, 1)),
                }
            }
            self.report.compactions.push(Compaction {
                line,
                admitted: o.admitted,
                judged_before: !r.new,
                note,
                claims: r.claims.len(),
                findings,
                examples: (o.findings.iter().take(EXAMPLES))
                    .map(|f| (f.gate.to_string(), f.detail.clone()))
                    .collect(),
                verdict: o.verdict,
                struck: o.struck.len(),
                repair: (o.repair.as_ref())
                    .map(|r| (r.outcome.subject.rid, r.outcome.admitted, r.text.clone())),
            });
        }
        Ok(())
    }

    /// The stream a log's stream name goes to, decided at the name's first span. A stream is
    /// a log's own when the ledger has no turn 0 in it, or when its turn 0 is this span (the
    /// same text from the same message: the same log imported again, or grown since). A stream
    /// another log began (a copied or forged session id) is not written into: this log's
    /// messages go to `NAME~HASH`, named by its first message, and the report says so
    /// (SPEC.md 5.3). A stream the log continues from an earlier import is its own.
    fn own_stream(
        &mut self,
        batch: &Batch,
        stream: String,
        first: (Role, Option<&str>, &str, Option<&str>),
    ) -> Result<String, (String, bool)> {
        let began = |name: &str| {
            began_with(batch, name, first).map_err(|e| (e.to_string(), e.is_integrity()))
        };
        if let Some(owned) = self.owned.get(&stream) {
            return Ok(owned.clone());
        }
        let mut name = stream.clone();
        if !self.turns.contains_key(&stream) && !began(&name)? {
            let (role, _, text, message) = first;
            let mut key = blake3::Hasher::new();
            key.update(role.name().as_bytes());
            key.update(message.unwrap_or(text).as_bytes());
            name = format!("{stream}~{}", &key.finalize().to_hex()[..12]);
            if !began(&name)? {
                return Err((format!(
                    "stream {stream} and stream {name} both hold another log's first turn; import this log into a ledger of its own"
                ), false));
            }
            self.report.renamed.push((stream.clone(), name.clone()));
        }
        self.owned.insert(stream, name.clone());
        Ok(name)
    }

    fn next_turn(&mut self, stream: &str) -> u64 {
        let next = self.turns.entry(stream.to_string()).or_insert(0);
        let turn = *next;
        *next += 1;
        turn
    }
}

/// Whether `stream` has no turn 0 yet, or its turn 0 is the span `first` (role, tool, text and
/// message id) would write.
fn began_with(
    batch: &Batch,
    stream: &str,
    (role, tool, text, message): (Role, Option<&str>, &str, Option<&str>),
) -> crate::error::Result<bool> {
    let Some(rid) = batch.turn(stream, 0)? else {
        return Ok(true);
    };
    let same_span = match batch.get(&rid)? {
        Some(crate::record::Record::Span(s)) => {
            s.role == role && s.tool.as_deref() == tool && s.text == text
        }
        _ => false,
    };
    let place = batch.place(&rid)?;
    let same_message = place.as_ref().and_then(|p| p.message.as_deref()) == message;
    Ok(same_span && same_message)
}

/// A part of a stream name taken from a log's own fields (a session or agent id): letters,
/// digits, `.`, `_` and `-` as they are, every other byte as `%XX`, so that no id can spell
/// the `:` that joins a stream name's parts (SPEC.md 5.3).
pub(crate) fn id_part(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Calls `f` with each non-blank line of a log (its 1-based number, its text trimmed, and
/// whether it is the last and unterminated), stopping at the first error. Bytes that are not
/// UTF-8 are read as U+FFFD; the lines that held any are counted and the count returned.
fn each_line(
    reader: &mut dyn BufRead,
    path: &Path,
    mut f: impl FnMut(u64, &str, bool) -> Result<(), ImportError>,
) -> Result<u64, ImportError> {
    use crate::ingest::{read_line_ended, LineRead, MAX_LINE_BYTES};
    let mut buf = Vec::new();
    let (mut line, mut invalid) = (0u64, 0u64);
    loop {
        // At most MAX_LINE_BYTES of a line is ever held: a longer one is refused, never read
        // whole into memory (issue 37: a 200 MB line, or /dev/zero).
        let (read, ended) = read_line_ended(reader, &mut buf, false).map_err(|e| ImportError {
            file: path.to_path_buf(),
            line: Some(line + 1),
            message: format!("cannot read the log ({e})"),
            integrity: false,
        })?;
        line += 1;
        match read {
            LineRead::End => return Ok(invalid),
            LineRead::TooLong(n) => {
                return Err(ImportError {
                    file: path.to_path_buf(),
                    line: Some(line),
                    message: format!(
                        "the line is {n} bytes long, past the limit of {MAX_LINE_BYTES}; nothing of this log was written (split the message, or leave the line out)"
                    ),
                    integrity: false,
                })
            }
            LineRead::Line => {}
        }
        let last = !ended;
        let text = String::from_utf8_lossy(&buf);
        invalid += u64::from(matches!(text, std::borrow::Cow::Owned(_)));
        if !text.trim().is_empty() {
            f(line, text.trim(), last)?;
        }
    }
}

/// A malformed line: the file, the line, the column and serde's reason.
fn malformed(path: &Path, line: u64, e: &serde_json::Error) -> ImportError {
    ImportError {
        file: path.to_path_buf(),
        line: Some(line),
        message: format!(
            "malformed JSON at column {} ({e}); nothing of this log was written",
            e.column()
        ),
        integrity: false,
    }
}
