//! JSON Lines ingest: one record per line, references resolved against the ledger state that
//! includes every earlier line of the same batch.
//!
//! ```
//! use cairn::{Ledger, ingest, gate::Gatekeeper};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ledger = Ledger::in_memory()?;
//! let mut batch = ledger.batch()?;
//! let lines = [
//!     r#"{"kind":"span","stream":"s1","turn":212,"role":"user","text":"we are still on libfoo 2.3.1, do not bump."}"#,
//!     r#"{"kind":"summary","stream":"s1","author":"self","budget":4000,"covers":["turn:212"],"evicts":[],"claims":[{"text":"libfoo stays pinned at 2.3.1","origin":"user-said","witnesses":["turn:212"],"actionable":true}]}"#,
//! ];
//! for (i, line) in lines.iter().enumerate() {
//!     ingest::apply_line(&mut batch, &Gatekeeper::default(), i as u64 + 1, line.as_bytes())?;
//! }
//! batch.commit()?;
//! // The span and its classification (a prohibition and a commitment), the claim, the summary
//! // and its verdict.
//! assert_eq!(ledger.len()?, 5);
//! # Ok(()) }
//! ```

mod json;
pub(crate) mod lines;
mod strict;
pub mod turns;

pub use json::{export_line, finding, line_result, repair_json};

use crate::error::{Error, ErrorKind, RefError};
use crate::gate::{Gatekeeper, Outcome, RegroundOutcome};
use crate::record::{
    Action, Author, Check, Claim, ClaimStatus, Classification, Entry, Finding, FoundItem,
    Judgement, Kind, Origin, Pin, PinItem, Place, Receipt, Record, Reground, Retirement, Rid,
    Ruling, Span, Status, Summary, Verdict, SCORE_ONE,
};
use crate::store::{Appended, Batch, Read};
use lines::{
    ClaimEntry, ClaimFields, JudgementLine, Line, PinLine, ReceiptLine, Reference, RetirementLine,
    SummaryLine, VerdictLine,
};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The longest line accepted, in bytes (32 MiB, twice the largest record): `max-line-bytes`.
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The deepest nesting of JSON objects and lists accepted in a line: `max-nesting-depth`.
pub const MAX_NESTING: usize = 32;

/// What [`read_line`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The end of the input.
    End,
    /// A line, now in the buffer without its line ending.
    Line,
    /// A line longer than [`MAX_LINE_BYTES`]: skipped to its end, never held in memory whole.
    TooLong(usize),
}

/// Reads one line into `buf`, holding at most [`MAX_LINE_BYTES`] of it in memory.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    read_line_ended(reader, buf, true).map(|(read, _)| read)
}

/// [`read_line`], and whether the line ended in a line feed (the last line of a log being
/// written may not have yet). With `skip` false, a line past the limit is not read to its end:
/// [`LineRead::TooLong`] comes back as soon as the limit is passed (a caller that stops there
/// is not held reading an endless line, such as `/dev/zero`).
pub fn read_line_ended(
    reader: &mut (impl std::io::BufRead + ?Sized),
    buf: &mut Vec<u8>,
    skip: bool,
) -> std::io::Result<(LineRead, bool)> {
    let mut ended = false;
    buf.clear();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (part, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        total += part.len();
        if total <= MAX_LINE_BYTES {
            buf.extend_from_slice(part);
        } else {
            buf.clear();
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            ended = true;
            break;
        }
        if !skip && total > MAX_LINE_BYTES {
            break;
        }
    }
    if !any {
        return Ok((LineRead::End, false));
    }
    if total > MAX_LINE_BYTES {
        return Ok((LineRead::TooLong(total), ended));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok((LineRead::Line, ended))
}

/// The deepest nesting of objects and lists in a JSON text, strings skipped.
fn nesting(text: &str) -> usize {
    let (mut depth, mut max, mut in_str, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A line that cannot be ingested: its number, the field at fault, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {message}", field.as_ref().map(|f| format!(", field `{f}`")).unwrap_or_default())]
pub struct LineError {
    /// The 1-based line number.
    pub line: u64,
    /// The field at fault, if one can be named (`claims[1].witnesses[0]`).
    pub field: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
    /// Whether the failure is the ledger's, not the line's (exit 3 rather than 2).
    pub integrity: bool,
    /// Whether the line meets a write-once thing that holds other content (a turn, a pin).
    pub conflict: bool,
}

/// A claim appended or carried by a summary line.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimResult {
    /// The claim's rid.
    pub rid: Rid,
    /// The claim's text.
    pub text: String,
    /// Whether this line appended it (false when it already existed).
    pub new: bool,
    /// Its status as the summary's gate found it.
    pub status: Option<Status>,
    /// For a claim derived from a prose summary's `text`: its sentence, the witnesses found
    /// and why (SPEC.md section 8.8).
    pub derived: Option<crate::gate::prose::Derived>,
}

/// What one line appended.
#[derive(Debug, Clone, PartialEq)]
pub struct LineResult {
    /// The 1-based line number.
    pub line: u64,
    /// The kind of the line's record.
    pub kind: Kind,
    /// The line's record.
    pub rid: Rid,
    /// Its log index.
    pub index: u64,
    /// False when the record was already in the ledger.
    pub new: bool,
    /// For a summary: its claims, in order.
    pub claims: Vec<ClaimResult>,
    /// For a summary or an action: what the gates decided.
    pub gate: Option<Outcome>,
    /// Why the proposal was refused, or why a reground failed; `None` when admitted.
    pub refused: Option<String>,
}

struct Ctx<'a> {
    batch: &'a mut Batch,
    line: u64,
    run: &'a mut Run,
}

/// What an ingest remembers from line to line: for each stream whose summary lines matched
/// summaries already in the ledger (a file ingested again), the head as it stood after that
/// summary was first judged. A line without `parent`, and `prior:N`, count from that head, so
/// the rest of the file resolves as it did the first time and appends nothing new (SPEC.md
/// section 6.3). A stream without an entry counts from the ledger's head.
#[derive(Debug, Clone, Default)]
pub struct Run {
    heads: std::collections::HashMap<String, Option<Rid>>,
    /// Streams this run appended a new summary to: from then on only the head is looked at
    /// for a summary met again, as on any first ingest.
    fresh: HashSet<String>,
}

impl Run {
    /// A run that has seen no line yet.
    pub fn new() -> Run {
        Run::default()
    }

    /// Applies one line of the run: see [`apply_line`].
    pub fn apply_line(
        &mut self,
        batch: &mut Batch,
        gate: &Gatekeeper,
        line: u64,
        bytes: &[u8],
    ) -> Res<Option<LineResult>> {
        let mut ctx = Ctx {
            batch,
            line,
            run: self,
        };
        apply(&mut ctx, gate, bytes)
    }

    /// Applies one line built by an importer, as [`Run::apply_line`] applies a line of JSON.
    pub(crate) fn apply_built(
        &mut self,
        batch: &mut Batch,
        gate: &Gatekeeper,
        line: u64,
        built: Line,
    ) -> Res<LineResult> {
        let mut ctx = Ctx {
            batch,
            line,
            run: self,
        };
        apply_parsed(&mut ctx, gate, built, None)
    }
}

type Res<T> = Result<T, LineError>;

impl Ctx<'_> {
    /// The head a line of this run counts from: the run's, after a summary it met again, or
    /// else the ledger's.
    fn head(&self, stream: &str) -> Res<Option<Rid>> {
        match self.run.heads.get(stream) {
            Some(h) => Ok(*h),
            None => self.batch.head(stream).map_err(|e| self.store_err(None, e)),
        }
    }

    fn err(&self, field: impl Into<Option<String>>, message: impl Into<String>) -> LineError {
        LineError {
            line: self.line,
            field: field.into(),
            message: message.into(),
            integrity: false,
            conflict: false,
        }
    }

    fn fault(&self, f: lines::Fault) -> LineError {
        self.err(f.field, f.message)
    }

    fn store_err(&self, field: Option<String>, e: Error) -> LineError {
        let integrity = e.is_integrity();
        let field = match e.kind() {
            ErrorKind::Link { role, .. } => field.or_else(|| Some(role.field().to_string())),
            _ => field,
        };
        LineError {
            line: self.line,
            field,
            message: e.to_string(),
            integrity,
            conflict: e.is_conflict(),
        }
    }
}

/// Applies one JSON Lines line to a batch, on its own: a line without `parent` or with
/// `prior:N` counts from the ledger's head. To apply the lines of one file, use a [`Run`], so
/// that ingesting the file again appends nothing. A blank line appends nothing and returns
/// `None`. On error the batch may hold part of the line (a summary's claims): drop the batch,
/// as `cairn ingest` does, so that a file applies whole or not at all.
pub fn apply_line(
    batch: &mut Batch,
    gate: &Gatekeeper,
    line: u64,
    bytes: &[u8],
) -> Res<Option<LineResult>> {
    Run::new().apply_line(batch, gate, line, bytes)
}

fn apply(ctx: &mut Ctx<'_>, gate: &Gatekeeper, bytes: &[u8]) -> Res<Option<LineResult>> {
    let Some(map) = parse_object(ctx, bytes)? else {
        return Ok(None);
    };
    let parsed = lines::parse(map).map_err(|f| ctx.fault(f))?;
    apply_parsed(ctx, gate, parsed.line, parsed.rid).map(Some)
}

/// Applies a line read (from JSON, or built by an importer): its record appended the way its
/// kind enters the ledger, a span's `source` as a place record, the rid it says checked.
fn apply_parsed(
    ctx: &mut Ctx<'_>,
    gate: &Gatekeeper,
    mut line: Line,
    expected_rid: Option<String>,
) -> Res<LineResult> {
    let number = ctx.line;
    let source = match &mut line {
        Line::Span(s) => s.source.take(),
        _ => None,
    };
    let (record, mut claims) = build(ctx, gate, line)?;
    let kind = record.kind();
    let (appended, gate_result) = match append_record(ctx, gate, record)? {
        Applied::Appended(a, o) => (a, o.map(|o| *o)),
        Applied::NotRegrounded { claim, reason } => {
            return Ok(LineResult {
                line: number,
                kind,
                rid: claim,
                index: 0,
                new: false,
                claims,
                gate: None,
                refused: Some(reason),
            })
        }
    };
    // A span line's `source`: where the span came from in the original log, a place record.
    if let Some(s) = source {
        let place = Record::Place(Place {
            span: appended.rid,
            log: s.log,
            message: s.message,
            line: s.line,
            timestamp: s.timestamp,
        });
        ctx.batch
            .append(place)
            .map_err(|e| ctx.store_err(Some("source".into()), e))?;
    }
    if let Some(o) = &gate_result {
        for c in &mut claims {
            c.status = o.claims.iter().find(|s| s.claim == c.rid).map(|s| s.status);
        }
    }
    if let Some(expected) = expected_rid {
        if expected != appended.rid.to_hex() {
            return Err(ctx.err(
                Some("rid".into()),
                format!(
                    "the line says rid {expected}, but its content hashes to {}; the line was altered, or drop the rid field",
                    appended.rid
                ),
            ));
        }
    }
    Ok(LineResult {
        line: number,
        kind,
        rid: appended.rid,
        index: appended.index,
        new: appended.new,
        claims,
        refused: gate_result.as_ref().and_then(|o| refusal(kind, o)),
        gate: gate_result,
    })
}

/// The line as one JSON object, or `None` for a blank line.
fn parse_object(ctx: &Ctx<'_>, bytes: &[u8]) -> Res<Option<Map<String, Value>>> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ctx.err(
            None,
            format!(
                "the line is not valid UTF-8 (bad byte at offset {}); re-encode the file as UTF-8",
                e.valid_up_to()
            ),
        )
    })?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let depth = nesting(text);
    if depth > MAX_NESTING {
        return Err(ctx.err(
            None,
            format!("the line nests {depth} levels deep, beyond the max-nesting-depth limit of {MAX_NESTING}; a cairn record needs at most 4"),
        ));
    }
    let value: Value = serde_json::from_str::<strict::Strict>(text)
        .map(|s| s.0)
        .map_err(|e| {
            ctx.err(
                None,
                format!("malformed JSON at column {}: {e}", e.column()),
            )
        })?;
    match value {
        Value::Object(map) => Ok(Some(map)),
        _ => Err(ctx.err(
            None,
            "each line must be one JSON object with a `kind` field",
        )),
    }
}

/// The record a line describes; for a summary, also the claims it appended or carries.
fn build(ctx: &mut Ctx<'_>, gate: &Gatekeeper, line: Line) -> Res<(Record, Vec<ClaimResult>)> {
    let record = match line {
        Line::Summary(s) => return summary(ctx, gate, s),
        Line::Span(s) => Record::Span(Span {
            stream: s.stream,
            turn: s.turn,
            role: s.role.0,
            tool: s.name,
            text: s.text,
        }),
        Line::Claim(c) => {
            let fields = ClaimFields {
                text: c.text,
                origin: c.origin,
                witnesses: c.witnesses,
                actionable: c.actionable,
            };
            Record::Claim(claim(ctx, fields, &c.stream, "")?)
        }
        Line::Pin(p) => pin(ctx, p)?,
        Line::Judgement(j) => judgement(ctx, j)?,
        Line::Verdict(v) => verdict(ctx, v)?,
        Line::Action(a) => Record::Action(Action {
            text: a.text,
            irreversible: a.irreversible,
            relies_on: refs(ctx, "relies_on", &a.relies_on, Some(&a.stream), false)?,
            stream: a.stream,
        }),
        Line::Reground(g) => {
            let stream = g.stream.as_deref();
            Record::Reground(Reground {
                claim: one_ref(ctx, "claim", &g.claim, stream)?,
                spans: refs(ctx, "spans", &g.spans, stream, true)?,
                score: g.score.map_or(0, |u| u.0),
            })
        }
        Line::Check(c) => Record::Check(Check {
            action: one_ref(ctx, "action", &c.action, c.stream.as_deref())?,
            at: c.at,
        }),
        Line::Receipt(r) => receipt(ctx, r)?,
        Line::Ruling(r) => {
            let stream = r.stream.as_deref();
            Record::Ruling(Ruling {
                claim: one_ref(ctx, "claim", &r.claim, stream)?,
                spans: refs(ctx, "spans", &r.spans, stream, true)?,
                judge: r.judge,
                prompt: r.prompt,
                answer: r.answer.0,
                quote: r.quote.unwrap_or_default(),
            })
        }
        Line::Retirement(r) => retirement(ctx, r)?,
        Line::Classification(c) => Record::Classification(Classification {
            span: one_ref(ctx, "span", &c.span, c.stream.as_deref())?,
            classifier: c.classifier,
            items: (c.items.into_iter())
                .map(|i| FoundItem {
                    class: i.class.0,
                    text: i.text,
                })
                .collect(),
        }),
        Line::Place(p) => Record::Place(Place {
            span: one_ref(ctx, "span", &p.span, p.stream.as_deref())?,
            log: p.log,
            message: p.message,
            line: p.line,
            timestamp: p.timestamp,
        }),
        Line::Entry(e) => Record::Entry(Entry {
            previous: match &e.previous {
                Some(p) => Some(one_ref(ctx, "previous", p, None)?),
                None => None,
            },
            namespace: e.namespace,
            key: e.key,
            value: e.value,
            text: e.text,
            created: e.created,
            at: e.at,
        }),
    };
    Ok((record, Vec::new()))
}

/// A record only the gates write, found in the ledger as it is, or refused with `refusal`.
fn already_written(ctx: &Ctx<'_>, record: Record, refusal: &str) -> Res<Applied> {
    let rid = Rid::of_bytes(&crate::record::encode(&record));
    match ctx
        .batch
        .index_of(&rid)
        .map_err(|e| ctx.store_err(None, e))?
    {
        Some(index) => Ok(Applied::Appended(
            Appended {
                rid,
                index,
                new: false,
            },
            None,
        )),
        None => Err(ctx.err(Some("kind".into()), refusal)),
    }
}

/// What appending a line's record did.
enum Applied {
    /// It was appended (or was there already), with the gates' outcome for a proposal.
    Appended(Appended, Option<Box<Outcome>>),
    /// A reground line whose claim its raw spans do not entail: nothing was appended.
    NotRegrounded {
        /// The claim.
        claim: Rid,
        /// Why.
        reason: String,
    },
}

/// Appends a record the way its kind enters the ledger: summaries and actions through the
/// gates, regrounds through re-grounding, verdicts only when they are there already.
fn append_record(ctx: &mut Ctx<'_>, gate: &Gatekeeper, record: Record) -> Res<Applied> {
    let gated = |o: Outcome| Applied::Appended(o.subject, Some(Box::new(o)));
    Ok(match record {
        Record::Summary(sum) => {
            let (stream, parent) = (sum.stream.clone(), sum.parent);
            let o = gate
                .propose_summary(ctx.batch, sum)
                .map_err(|e| ctx.store_err(None, e))?;
            // The head after it: the summary, its admitted repair, or the parent it had.
            let repaired = (o.repair.as_ref()).filter(|r| r.outcome.admitted);
            let after = if o.admitted {
                Some(o.subject.rid)
            } else {
                repaired.map_or(parent, |r| Some(r.outcome.subject.rid))
            };
            // Met again: the rest of the run counts from the head as it was after it.
            if !o.subject.new {
                ctx.run.heads.insert(stream, after);
            } else {
                if after != parent {
                    ctx.run.heads.remove(&stream);
                }
                ctx.run.fresh.insert(stream);
            }
            gated(o)
        }
        Record::Action(a) => gated(
            gate.propose_action(ctx.batch, a)
                .map_err(|e| ctx.store_err(None, e))?,
        ),
        // Verdicts and rulings are written only by the gates: one already in the ledger (a
        // ledger's own export ingested again) is found, a new one refused.
        Record::Verdict(v) => already_written(
            ctx,
            Record::Verdict(v),
            "verdicts are written by the gates, not ingested; submit the summary or action and cairn will judge it",
        )?,
        Record::Ruling(r) => already_written(
            ctx,
            Record::Ruling(r),
            "rulings are written by the gates from a judge's answer, not ingested; submit the summary under a policy with a judge",
        )?,
        Record::Classification(c) => already_written(
            ctx,
            Record::Classification(c),
            "classifications are written by the store when a span is appended, not ingested; leave the line out and the span's own classification is written with it",
        )?,
        Record::Check(c) => {
            let rid = Rid::of_bytes(&crate::record::encode(&Record::Check(c.clone())));
            let present = ctx
                .batch
                .index_of(&rid)
                .map_err(|e| ctx.store_err(None, e))?;
            if let Some(index) = present {
                return Ok(Applied::Appended(
                    Appended {
                        rid,
                        index,
                        new: false,
                    },
                    None,
                ));
            }
            // A check line not in the ledger asks for the action to be checked again now.
            let action = match ctx.batch.get(&c.action).map_err(|e| ctx.store_err(None, e))? {
                Some(Record::Action(a)) => a,
                _ => {
                    return Err(ctx.err(
                        Some("action".into()),
                        format!("{} is not an action in the ledger; a check names the action it checks again", c.action),
                    ))
                }
            };
            let o = gate
                .propose_action(ctx.batch, action)
                .map_err(|e| ctx.store_err(Some("action".into()), e))?;
            Applied::Appended(o.check.unwrap_or(o.subject), Some(Box::new(o)))
        }
        Record::Reground(g) => match gate
            .reground(ctx.batch, g.claim)
            .map_err(|e| ctx.store_err(Some("claim".into()), e))?
        {
            RegroundOutcome::Regrounded(a) => Applied::Appended(a, None),
            RegroundOutcome::NotEntailed { reason, .. } => Applied::NotRegrounded {
                claim: g.claim,
                reason,
            },
        },
        other => Applied::Appended(
            ctx.batch
                .append(other)
                .map_err(|e| ctx.store_err(None, e))?,
            None,
        ),
    })
}

/// Why a gated proposal was refused: its refusing findings, joined; `None` when admitted.
fn refusal(kind: Kind, o: &Outcome) -> Option<String> {
    (!o.admitted).then(|| {
        format!(
            "{} refused: {}",
            kind,
            o.findings
                .iter()
                .filter(|f| f.gate.refuses())
                .map(|f| f.detail.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )
    })
}

/// A parsed reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    /// `turn:N`
    Turn(u64),
    /// `turn:A..turn:B`, inclusive.
    Range(u64, u64),
    /// `prior:N`: claim N of the stream's head summary.
    Prior(usize),
    /// A full rid or a hex prefix of at least 8 characters.
    Hex(String),
}

/// Parses a reference: `turn:N`, `turn:A..turn:B`, `prior:N`, or hex.
pub fn parse_ref(s: &str) -> Result<Ref, RefError> {
    let number = |t: &str, prefix: &'static str| -> Result<u64, RefError> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(RefError::NotANumber {
                reference: s.to_string(),
                prefix,
            });
        }
        t.parse::<u64>()
            .map_err(|_| RefError::TooLarge(s.to_string()))
    };
    if let Some(rest) = s.strip_prefix("turn:") {
        if let Some((a, b)) = rest.split_once("..") {
            let b = b
                .strip_prefix("turn:")
                .ok_or_else(|| RefError::RangeForm(s.to_string()))?;
            let (a, b) = (number(a, "turn:")?, number(b, "turn:")?);
            if a > b {
                return Err(RefError::EmptyRange(s.to_string()));
            }
            return Ok(Ref::Range(a, b));
        }
        return Ok(Ref::Turn(number(rest, "turn:")?));
    }
    if let Some(rest) = s.strip_prefix("prior:") {
        let n = number(rest, "prior:")?;
        return usize::try_from(n)
            .map(Ref::Prior)
            .map_err(|_| RefError::TooLarge(s.to_string()));
    }
    if s.len() >= 8 && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Ref::Hex(s.to_ascii_lowercase()));
    }
    Err(RefError::Unknown(s.to_string()))
}

/// Resolves a reference to the records it names, against a ledger state (a batch sees its own
/// appends). `turn:` and `prior:` need the stream they count in.
pub fn resolve<R: Read>(read: &R, stream: Option<&str>, r: &Ref) -> Result<Vec<Rid>, Error> {
    resolve_at(read, stream, r, None)
}

/// [`resolve`], with `prior:N` counted from `head` when it is given.
fn resolve_at<R: Read>(
    read: &R,
    stream: Option<&str>,
    r: &Ref,
    head: Option<Option<Rid>>,
) -> Result<Vec<Rid>, Error> {
    let need_stream = || stream.ok_or(RefError::NeedsStream);
    match r {
        Ref::Turn(n) => {
            let s = need_stream()?;
            let rid = read.turn(s, *n)?.ok_or_else(|| RefError::NoTurn {
                stream: s.to_string(),
                turn: *n,
            })?;
            Ok(vec![rid])
        }
        Ref::Range(a, b) => {
            let s = need_stream()?;
            let spans = read.turns(s, *a, *b)?;
            if spans.is_empty() {
                return Err(RefError::NoTurns {
                    stream: s.to_string(),
                    first: *a,
                    last: *b,
                }
                .into());
            }
            Ok(spans.into_iter().map(|(_, rid)| rid).collect())
        }
        Ref::Prior(n) => {
            let s = need_stream()?;
            let no_head = || RefError::NoHead {
                stream: s.to_string(),
                n: *n,
            };
            let head = match head {
                Some(h) => h,
                None => read.head(s)?,
            };
            let head = head.ok_or_else(no_head)?;
            let Some(Record::Summary(sum)) = read.get(&head)? else {
                return Err(no_head().into());
            };
            let rid = sum
                .claims
                .get(*n)
                .copied()
                .ok_or(RefError::PriorOutOfRange {
                    stream: s.to_string(),
                    n: *n,
                    claims: sum.claims.len(),
                })?;
            Ok(vec![rid])
        }
        Ref::Hex(h) => Ok(vec![read.resolve(h)?]),
    }
}

/// A field inside `prefix` (a list entry's path), or at the top when `prefix` is empty.
fn path(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The records a list of references names, in order; `field` is the list's path.
fn refs(
    ctx: &Ctx<'_>,
    field: &str,
    list: &[Reference],
    stream: Option<&str>,
    range: bool,
) -> Res<Vec<Rid>> {
    let mut out = Vec::new();
    for (i, r) in list.iter().enumerate() {
        out.extend(resolve_ref(ctx, format!("{field}[{i}]"), r, stream, range)?);
    }
    Ok(out)
}

fn resolve_ref(
    ctx: &Ctx<'_>,
    field: String,
    r: &Reference,
    stream: Option<&str>,
    range: bool,
) -> Res<Vec<Rid>> {
    let r = parse_ref(&r.0).map_err(|e| ctx.err(Some(field.clone()), e.to_string()))?;
    if !range && matches!(r, Ref::Range(..)) {
        return Err(ctx.err(
            Some(field),
            "a range names many spans; this field takes one record",
        ));
    }
    let head = stream.and_then(|s| ctx.run.heads.get(s).copied());
    resolve_at(ctx.batch, stream, &r, head).map_err(|e| {
        let message = match e.kind() {
            ErrorKind::Reference(RefError::NeedsStream) => {
                "turn: and prior: references need the line's `stream` field; add it, or use a rid"
                    .to_string()
            }
            _ => e.to_string(),
        };
        ctx.err(Some(field), message)
    })
}

/// The one record a reference names; `field` is its path.
fn one_ref(ctx: &Ctx<'_>, field: &str, r: &Reference, stream: Option<&str>) -> Res<Rid> {
    Ok(resolve_ref(ctx, field.to_string(), r, stream, false)?[0])
}

/// A claim of `stream`; `prefix` is the path of the claim object in its line.
fn claim(ctx: &Ctx<'_>, c: ClaimFields, stream: &str, prefix: &str) -> Res<Claim> {
    Ok(Claim {
        stream: stream.to_string(),
        origin: c
            .origin
            .as_deref()
            .map_or(Origin::Missing, Origin::from_tag),
        witnesses: refs(
            ctx,
            &path(prefix, "witnesses"),
            &c.witnesses,
            Some(stream),
            true,
        )?,
        text: c.text,
        actionable: c.actionable,
    })
}

fn summary(
    ctx: &mut Ctx<'_>,
    gate: &Gatekeeper,
    s: SummaryLine,
) -> Res<(Record, Vec<ClaimResult>)> {
    let stream = s.stream;
    let explicit = s.parent.is_some();
    let parent = match &s.parent {
        Some(r) => Some(one_ref(ctx, "parent", r, Some(&stream))?),
        None => ctx.head(&stream)?,
    };
    let author = match (s.author.0, &s.repairs) {
        (Author::Repair(_), Some(r)) => Author::Repair(one_ref(ctx, "repairs", r, Some(&stream))?),
        (Author::Repair(_), None) => {
            return Err(ctx.err(
                Some("repairs".into()),
                "missing: a summary authored by cairn names the refused proposal it repairs in `repairs`, as `cairn export` writes it",
            ))
        }
        (a, _) => a,
    };
    let mut sum = Summary {
        stream: stream.clone(),
        parent,
        author,
        budget: s.budget,
        covers: refs(ctx, "covers", &s.covers, Some(&stream), true)?,
        evicts: refs(ctx, "evicts", &s.evicts, Some(&stream), true)?,
        claims: Vec::new(),
        self_score: s.self_score.map(|u| u.0),
        reground: s.reground,
    };
    let results =
        match (s.claims, s.text) {
            (Some(_), Some(_)) => return Err(ctx.err(
                Some("text".into()),
                "a summary gives its claims as `claims` or as prose in `text`, not both; drop one",
            )),
            (None, None) => return Err(ctx.err(
                Some("claims".into()),
                "missing: a summary gives its claims as a list in `claims`, or as prose in `text`",
            )),
            (None, Some(text)) => prose(ctx, gate, &mut sum, &text)?,
            (Some(entries), None) => listed(ctx, &mut sum, entries)?,
        };
    if !explicit {
        if let Some(again) = met_again(ctx, &sum)? {
            return Ok((again, results));
        }
    }
    Ok((Record::Summary(sum), results))
}

/// The claims a summary line lists in `claims`, appended (new ones) or carried, and added to
/// `sum`. Every claim is resolved before any is appended, so a bad claim leaves nothing behind.
fn listed(ctx: &mut Ctx<'_>, sum: &mut Summary, entries: Vec<ClaimEntry>) -> Res<Vec<ClaimResult>> {
    let pending = summary_claims(ctx, entries, &sum.stream)?;
    let mut results = Vec::new();
    for (field, p) in pending {
        let result = match p {
            SummaryClaim::New(c) => {
                let text = c.text.clone();
                let a = ctx
                    .batch
                    .append(c)
                    .map_err(|e| ctx.store_err(Some(field.clone()), e))?;
                ClaimResult {
                    rid: a.rid,
                    text,
                    new: a.new,
                    status: None,
                    derived: None,
                }
            }
            SummaryClaim::Carried(rid, text) => ClaimResult {
                rid,
                text,
                new: false,
                status: None,
                derived: None,
            },
        };
        if sum.claims.contains(&result.rid) {
            return Err(ctx.err(
                Some(field),
                "this claim is already listed in the same summary",
            ));
        }
        sum.claims.push(result.rid);
        results.push(result);
    }
    Ok(results)
}

/// The claims of a prose summary line (`text` instead of `claims`, SPEC.md section 8.8):
/// derived, appended and added to `sum`.
fn prose(
    ctx: &mut Ctx<'_>,
    gate: &Gatekeeper,
    sum: &mut Summary,
    text: &str,
) -> Res<Vec<ClaimResult>> {
    let derived = gate
        .derive(ctx.batch, &sum.stream, &sum.covers, text)
        .map_err(|e| ctx.store_err(Some("text".into()), e))?;
    crate::gate::prose::cover_witnesses(&mut sum.covers, &derived);
    let appended = gate
        .append_derived(ctx.batch, &sum.stream, derived)
        .map_err(|e| ctx.store_err(Some("text".into()), e))?;
    let mut results = Vec::with_capacity(appended.len());
    for (a, d) in appended {
        sum.claims.push(a.rid);
        results.push(ClaimResult {
            rid: a.rid,
            text: d.sentence.clone(),
            new: a.new,
            status: None,
            derived: Some(d),
        });
    }
    Ok(results)
}

/// A summary without `parent` identical, parent aside, to one the stream already holds on
/// its chain of heads (with the head or any earlier head as parent, or none) is that summary
/// submitted again, as when a file is ingested twice, not a new summary on top of the head.
/// Found by hashing the summary with each parent of the chain in turn, one read a step: the
/// whole chain at a stream's first summary line of a run, and only the head (the summary
/// equal to the head itself) once the run has appended a new summary to the stream.
fn met_again(ctx: &Ctx<'_>, sum: &Summary) -> Res<Option<Record>> {
    let store = |e| ctx.store_err(None, e);
    let mut parent = sum.parent;
    let mut seen = HashSet::new();
    let mut steps = if ctx.run.fresh.contains(&sum.stream) {
        2
    } else {
        usize::MAX
    };
    while steps > 0 {
        steps -= 1;
        let mut again = Record::Summary(Summary {
            parent,
            ..sum.clone()
        });
        again.canonicalize();
        let rid = Rid::of_bytes(&crate::record::encode(&again));
        if ctx.batch.index_of(&rid).map_err(store)?.is_some() {
            return Ok(Some(again));
        }
        let Some(p) = parent.filter(|p| seen.insert(*p)) else {
            return Ok(None);
        };
        parent = match ctx.batch.get(&p).map_err(store)? {
            Some(Record::Summary(h)) => h.parent,
            _ => return Ok(None),
        };
    }
    Ok(None)
}

/// One entry of a summary line's `claims`.
enum SummaryClaim {
    /// A claim object, to append.
    New(Claim),
    /// A reference to a claim in the ledger: its rid and text.
    Carried(Rid, String),
}

/// The claims of a summary line, each with its field name, resolved but not yet appended.
fn summary_claims(
    ctx: &Ctx<'_>,
    entries: Vec<ClaimEntry>,
    stream: &str,
) -> Res<Vec<(String, SummaryClaim)>> {
    let mut pending = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let field = format!("claims[{i}]");
        let entry = match entry {
            ClaimEntry::Carried(r) => {
                let rid = one_ref(ctx, &field, &r, Some(stream))?;
                match ctx.batch.get(&rid).map_err(|e| ctx.store_err(None, e))? {
                    Some(Record::Claim(c)) => SummaryClaim::Carried(rid, c.text),
                    Some(other) => {
                        return Err(ctx.err(
                            Some(field),
                            format!(
                                "{rid} is a {}, but a summary's claims must be claims",
                                other.kind()
                            ),
                        ))
                    }
                    None => return Err(ctx.err(Some(field), format!("{rid} is not in the ledger"))),
                }
            }
            ClaimEntry::New(c) => SummaryClaim::New(claim(ctx, c, stream, &field)?),
        };
        pending.push((field, entry));
    }
    Ok(pending)
}

fn pin(ctx: &Ctx<'_>, p: PinLine) -> Res<Record> {
    if p.items.is_empty() {
        return Err(ctx.err(Some("items".into()), "a pin needs at least one item"));
    }
    let mut items = Vec::with_capacity(p.items.len());
    for (i, item) in p.items.into_iter().enumerate() {
        let witness = match &item.witness {
            Some(w) => Some(one_ref(
                ctx,
                &format!("items[{i}].witness"),
                w,
                Some(&p.stream),
            )?),
            None => None,
        };
        items.push(PinItem {
            class: item.class.0,
            text: item.text,
            witness,
        });
    }
    Ok(Record::Pin(Pin {
        stream: p.stream,
        name: p.name,
        items,
    }))
}

fn judgement(ctx: &Ctx<'_>, j: JudgementLine) -> Res<Record> {
    let stream = j.stream.as_deref();
    Ok(Record::Judgement(Judgement {
        claim: one_ref(ctx, "claim", &j.claim, stream)?,
        span: one_ref(ctx, "span", &j.span, stream)?,
        relation: j.relation.0,
        score: j.score.map_or(SCORE_ONE, |u| u.0),
        scorer: j.scorer.unwrap_or_else(|| "person".into()),
    }))
}

fn verdict(ctx: &Ctx<'_>, v: VerdictLine) -> Res<Record> {
    let stream = v.stream.as_deref();
    let mut findings = Vec::with_capacity(v.findings.len());
    for (i, f) in v.findings.into_iter().enumerate() {
        findings.push(Finding {
            gate: f.gate.0,
            subject: one_ref(ctx, &format!("findings[{i}].subject"), &f.subject, stream)?,
            detail: f.detail,
        });
    }
    let policy = match &v.policy {
        None => [0u8; 32],
        Some(h) => h.parse::<Rid>().map(|r| r.0).map_err(|e| {
            ctx.err(
                Some("policy".into()),
                format!("expected a 64-digit hex hash: {e}"),
            )
        })?,
    };
    let mut claims = Vec::with_capacity(v.claims.len());
    for (i, c) in v.claims.into_iter().enumerate() {
        claims.push(ClaimStatus {
            claim: one_ref(ctx, &format!("claims[{i}].claim"), &c.claim, stream)?,
            status: c.status.0,
        });
    }
    Ok(Record::Verdict(Verdict {
        claims,
        subject: one_ref(ctx, "subject", &v.subject, stream)?,
        admitted: v.admitted,
        findings,
        self_score: v.self_score.map(|u| u.0),
        anchored_score: v.anchored_score.map(|u| u.0),
        policy,
    }))
}

fn receipt(ctx: &Ctx<'_>, r: ReceiptLine) -> Res<Record> {
    let payload = r.payload.parse::<Rid>().map_err(|e| {
        ctx.err(
            Some("payload".into()),
            format!("{e}; a payload is the BLAKE3 hash of the call, 64 hex digits"),
        )
    })?;
    Ok(Record::Receipt(Receipt {
        spans: refs(ctx, "spans", &r.spans, Some(&r.stream), true)?,
        key: r.key,
        payload: payload.0,
        stream: r.stream,
    }))
}

/// A retirement line: `pin` is the pin's name in `stream` (or its rid), `witness` the user
/// turn that lifts the item.
fn retirement(ctx: &Ctx<'_>, r: RetirementLine) -> Res<Record> {
    let stream = r.stream;
    let named = ctx
        .batch
        .pin(&stream, &r.pin)
        .map_err(|e| ctx.err(Some("pin".into()), e.to_string()))?;
    let pin = match named {
        Some(rid) => rid,
        None => one_ref(ctx, "pin", &Reference(r.pin.clone()), Some(&stream)).map_err(|_| {
            ctx.err(
                Some("pin".into()),
                format!(
                    "stream {stream} has no pin named {:?}; give a pin's name or rid",
                    r.pin
                ),
            )
        })?,
    };
    let Some(witness) = &r.witness else {
        return Err(ctx.err(
            Some("witness".into()),
            "a retirement cites the user turn that lifts the constraint (`witness`: \"turn:N\"); it is refused without one",
        ));
    };
    Ok(Record::Retirement(Retirement {
        pin,
        item: r.item,
        witness: one_ref(ctx, "witness", witness, Some(&stream))?,
        stream,
    }))
}
