//! Recording an agent's turns in one call, safely retried with an idempotency key (SPEC.md
//! section 10c, `record_turns`): the rule the MCP server and the Python package both follow.

use super::{lines, LineError, Run};
use crate::error::Error;
use crate::gate::Gatekeeper;
use crate::record::{Receipt, Record, Rid, Role};
use crate::store::{Batch, Read as _};
use serde::{Deserialize, Serialize};

/// The largest turn number taken: 2^53 - 1, the largest integer every JSON client reads
/// exactly, so that a following unnumbered turn always has a number.
pub const MAX_TURN: u64 = (1 << 53) - 1;

/// The longest idempotency key taken, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

/// One turn to record. Its JSON form (`role`, `text`, then `turn` and `tool` when given) is
/// what an idempotency key's receipt hashes, so a retry through any client matches; a client
/// that speaks JSON reads its turns in the same form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Who spoke, by name: user, assistant, tool or system.
    pub role: String,
    /// What was said or printed, verbatim.
    pub text: String,
    /// The turn number; left out, the turn after the stream's last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// For a tool's output: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// One turn as recorded: its number, its span, and whether this call appended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// The turn number.
    pub turn: u64,
    /// The span's rid.
    pub rid: Rid,
    /// False when the span was already in the ledger.
    pub new: bool,
}

/// What [`record_turns`] refused: a bad argument (named by its field, such as `turns[2].turn`)
/// or the ledger's own failure.
#[derive(Debug)]
pub enum Refusal {
    /// An argument that cannot be taken: the field and the sentence that says why.
    Argument {
        /// The field at fault.
        field: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A write-once thing holds other content: the idempotency key was used with other turns,
    /// or a turn's number holds another text. Named by its field, with the sentence.
    Conflict {
        /// The field at fault.
        field: String,
        /// What is held, and what to do.
        message: String,
    },
    /// The ledger failed.
    Ledger(Error),
    /// The ledger is damaged: what was found, and the way out.
    Damaged(String),
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Ledger(e)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Argument { field, message } | Refusal::Conflict { field, message } => {
                write!(f, "argument {field}: {message}")
            }
            Refusal::Ledger(e) => e.fmt(f),
            Refusal::Damaged(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Refusal {}

fn argument(field: impl Into<String>, message: impl Into<String>) -> Refusal {
    Refusal::Argument {
        field: field.into(),
        message: message.into(),
    }
}

/// Records `turns` in `stream` within `batch`, numbering each turn left unnumbered after the
/// stream's last. With `key`, the call's spans and the BLAKE3 of its turns are kept in a
/// receipt record in the same batch: a retry with the same key and turns appends nothing and
/// gets the same turns back (the bool is true: replayed), and the same key with other turns is
/// refused. The caller commits the batch.
pub fn record_turns(
    batch: &mut Batch,
    gate: &Gatekeeper,
    stream: &str,
    turns: &[Turn],
    key: Option<&str>,
) -> Result<(Vec<Recorded>, bool), Refusal> {
    if turns.is_empty() {
        return Err(argument("turns", "give at least one turn"));
    }
    if key.is_some_and(|k| k.is_empty() || k.len() > MAX_KEY_BYTES) {
        return Err(argument(
            "idempotency_key",
            format!("give 1 to {MAX_KEY_BYTES} bytes, such as a UUID"),
        ));
    }
    let encoded = serde_json::to_vec(turns)
        .map_err(|e| argument("turns", format!("cannot be encoded as JSON ({e})")))?;
    let payload = *blake3::hash(&encoded).as_bytes();
    if let Some(key) = key {
        if let Some(done) = replay_receipt(batch, stream, key, payload)? {
            return Ok((done, true));
        }
    }
    let mut next = match batch.last_turn(stream)? {
        Some(t) => t.checked_add(1),
        None => Some(0),
    };
    let mut run = Run::new();
    let mut out = Vec::with_capacity(turns.len());
    for (i, t) in turns.iter().enumerate() {
        let turn = match (t.turn, next) {
            (Some(n), _) if n > MAX_TURN => {
                return Err(argument(
                    format!("turns[{i}].turn"),
                    format!("{n} is past the largest turn number, {MAX_TURN} (2^53 - 1, what every JSON client reads exactly); number turns from 0, or leave `turn` out"),
                ))
            }
            (Some(n), _) => n,
            (None, Some(n)) if n <= MAX_TURN => n,
            (None, _) => {
                return Err(argument(
                    format!("turns[{i}].turn"),
                    format!("stream {stream} already holds the largest turn number, so a turn left unnumbered has no number to take; give it a `turn` below the stream's last"),
                ))
            }
        };
        next = turn.checked_add(1);
        let role = Role::from_name(&t.role).ok_or_else(|| {
            argument(
                format!("turns[{i}].role"),
                format!(
                    "unknown role {:?}; use user, assistant, tool or system",
                    t.role
                ),
            )
        })?;
        let line = lines::Line::Span(lines::SpanLine {
            stream: stream.to_string(),
            turn,
            role: lines::Name(role),
            name: t.tool.clone(),
            text: t.text.clone(),
            source: None,
        });
        let r = run
            .apply_built(batch, gate, i as u64 + 1, line)
            .map_err(|e| at(e, i))?;
        out.push(Recorded {
            turn,
            rid: r.rid,
            new: r.new,
        });
    }
    if let Some(key) = key {
        let receipt = Receipt {
            stream: stream.to_string(),
            key: key.to_string(),
            payload,
            spans: out.iter().map(|r| r.rid).collect(),
        };
        batch.append(receipt)?;
    }
    Ok((out, false))
}

/// A line's failure as the failure of turn `i`.
fn at(e: LineError, i: usize) -> Refusal {
    if e.integrity {
        return Refusal::Damaged(e.message);
    }
    let field = match e.field {
        Some(f) => format!("turns[{i}].{f}"),
        None => format!("turns[{i}]"),
    };
    if e.conflict {
        return Refusal::Conflict {
            field,
            message: e.message,
        };
    }
    argument(field, e.message)
}

/// The answer a call with an idempotency key already got, from its receipt: each turn's number
/// and rid, in turn order; `None` when the key is new. The same key with other turns is
/// refused.
fn replay_receipt(
    batch: &Batch,
    stream: &str,
    key: &str,
    payload: [u8; 32],
) -> Result<Option<Vec<Recorded>>, Refusal> {
    let Some(rid) = batch.receipt(stream, key)? else {
        return Ok(None);
    };
    let Some(Record::Receipt(receipt)) = batch.get(&rid)? else {
        return Err(Refusal::Damaged(format!(
            "the ledger is damaged: the receipts table names {rid}, which is not a receipt; run `cairn verify` on it"
        )));
    };
    if receipt.payload != payload {
        return Err(Refusal::Conflict {
            field: "idempotency_key".to_string(),
            message: format!("{key:?} was used by an earlier call to stream {stream} with other turns (receipt {rid}); a key names one call, so give this call a new key"),
        });
    }
    let mut turns = Vec::new();
    for span in &receipt.spans {
        if let Some(Record::Span(s)) = batch.get(span)? {
            turns.push((s.turn, *span));
        }
    }
    turns.sort();
    Ok(Some(
        turns
            .into_iter()
            .map(|(turn, rid)| Recorded {
                turn,
                rid,
                new: false,
            })
            .collect(),
    ))
}
