//! The shape of each kind of line, as serde reads it (SPEC.md section 5.1): one struct per
//! kind, each field named, and a field the kind does not take refused (`deny_unknown_fields`).
//! The path of the field at fault (`claims[1].witnesses[0]`) comes from `serde_path_to_error`,
//! and serde's messages become cairn's sentences in one place, [`fault`]. References (`turn:N`,
//! `prior:N`, rids) stay strings here: they resolve against the ledger, in [`super`].
//!
//! The importers build these lines directly, so a log's message and a line of cairn's own
//! JSON Lines enter the ledger by one path.

use crate::record::{score_from_unit, Author, Gate, PinClass, Relation, Role, Score, Status};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// A line's field at fault, if one can be named, and what is wrong.
#[derive(Debug)]
pub(crate) struct Fault {
    pub(crate) field: Option<String>,
    pub(crate) message: String,
}

/// One line of cairn's JSON Lines, by its `kind`.
#[derive(Debug, Clone)]
pub(crate) enum Line {
    Span(SpanLine),
    Claim(ClaimLine),
    Summary(SummaryLine),
    Pin(PinLine),
    Judgement(JudgementLine),
    Verdict(VerdictLine),
    Action(ActionLine),
    Reground(RegroundLine),
    Check(CheckLine),
    Receipt(ReceiptLine),
    Ruling(RulingLine),
    Retirement(RetirementLine),
    Classification(ClassificationLine),
    Place(PlaceLine),
    Entry(EntryLine),
}

/// The kinds a line may name, for the message that refuses any other.
const KINDS: &str = "span, claim, summary, pin, judgement, verdict, action, reground, check, receipt, ruling, retirement, classification, place or entry";

/// A line parsed: its record's fields, and the `rid` it says it has (an exported line).
pub(crate) struct Parsed {
    pub(crate) line: Line,
    pub(crate) rid: Option<String>,
}

/// Reads a line's object: `kind`, `rid` and `index` (the envelope every line may carry), then
/// the fields of its kind.
pub(crate) fn parse(mut map: Map<String, Value>) -> Result<Parsed, Fault> {
    let kind = match map.remove("kind") {
        Some(Value::String(s)) => s,
        None | Some(Value::Null) => return Err(at("kind", "missing; give a string")),
        Some(other) => {
            return Err(at(
                "kind",
                format!("expected a string, found {}", type_name(&other)),
            ))
        }
    };
    let rid = match map.remove("rid") {
        Some(Value::String(s)) => Some(s),
        None | Some(Value::Null) => None,
        Some(other) => {
            return Err(at(
                "rid",
                format!("expected a string, found {}", type_name(&other)),
            ))
        }
    };
    // `index` is where an exported line stood in its ledger: informative, never checked.
    match map.remove("index") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64().is_some() => {}
        Some(other) => {
            return Err(at(
                "index",
                format!(
                    "expected a non-negative integer, found {}",
                    type_name(&other)
                ),
            ))
        }
    }
    let fields = Value::Object(map);
    let line = match kind.as_str() {
        "span" => Line::Span(read(fields)?),
        "claim" => Line::Claim(read(fields)?),
        "summary" => Line::Summary(read(fields)?),
        "pin" => Line::Pin(read(fields)?),
        "judgement" => Line::Judgement(read(fields)?),
        "verdict" => Line::Verdict(read(fields)?),
        "action" => Line::Action(read(fields)?),
        "reground" => Line::Reground(read(fields)?),
        "check" => Line::Check(read(fields)?),
        "receipt" => Line::Receipt(read(fields)?),
        "ruling" => Line::Ruling(read(fields)?),
        "retirement" => Line::Retirement(read(fields)?),
        "classification" => Line::Classification(read(fields)?),
        "place" => Line::Place(read(fields)?),
        "entry" => Line::Entry(read(fields)?),
        other => return Err(at("kind", format!("unknown kind {other:?}; use {KINDS}"))),
    };
    Ok(Parsed { line, rid })
}

fn at(field: &str, message: impl Into<String>) -> Fault {
    Fault {
        field: Some(field.to_string()),
        message: message.into(),
    }
}

/// The fields of one kind, with the path of the field at fault on error.
fn read<T: de::DeserializeOwned>(fields: Value) -> Result<T, Fault> {
    serde_path_to_error::deserialize(fields).map_err(|e| fault(e.path(), &e.inner().to_string()))
}

/// serde's message about the field at `path`, as cairn says it: the field named in full, what
/// it must be, what was found instead.
pub(crate) fn fault(path: &serde_path_to_error::Path, message: &str) -> Fault {
    let mut field = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => field.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => field.push_str(variant),
            serde_path_to_error::Segment::Unknown => field.push('?'),
        }
    }
    let top = field.is_empty();
    let child = |name: &str| {
        if top {
            name.to_string()
        } else {
            format!("{field}.{name}")
        }
    };
    if let Some((name, _)) = message.strip_prefix("missing field ").and_then(quoted) {
        return at(&child(name), format!("missing; give {}", expects(name)));
    }
    if let Some((name, rest)) = message.strip_prefix("unknown field ").and_then(quoted) {
        // The path ends at the unknown key itself.
        let field = if field.ends_with(name) {
            field.clone()
        } else {
            child(name)
        };
        let mut allowed: Vec<&str> = rest
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| !s.is_empty())
            .collect();
        if field == name {
            allowed.insert(0, "kind");
            allowed.extend(["rid", "index"]);
        }
        return at(
            &field,
            format!(
                "unknown field; the fields allowed here are {}",
                allowed.join(", ")
            ),
        );
    }
    let shape = ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.rsplit_once(", expected "));
    let message = match shape {
        Some((found, expected)) => format!(
            "expected {}, found {}",
            expected_name(expected),
            found_name(found)
        ),
        None => message.to_string(),
    };
    Fault {
        field: (!top).then_some(field),
        message,
    }
}

/// The name in backquotes at the start of `s`, and the rest after it.
fn quoted(s: &str) -> Option<(&str, &str)> {
    s.strip_prefix('`').and_then(|s| s.split_once('`'))
}

/// What a field must hold, by its name, for the message that says it is missing.
fn expects(field: &str) -> &'static str {
    match field {
        "turn" | "budget" | "at" => "a non-negative integer",
        "admitted" => "true or false",
        "items" => "a list",
        "span" | "claim" | "subject" | "action" => "a reference",
        _ => "a string",
    }
}

/// serde's name for what it expected, in cairn's words.
fn expected_name(expected: &str) -> &str {
    match expected {
        "u64" => "a non-negative integer",
        "a boolean" => "true or false",
        "a sequence" => "a list",
        other => other,
    }
}

/// serde's description of a value found (`string "7"`, `integer `5``), as its type.
fn found_name(found: &str) -> &str {
    let word = found.split([' ', '`', '"']).next().unwrap_or(found);
    match word {
        "string" | "char" => "a string",
        "integer" | "floating" => "a number",
        "boolean" => "a boolean",
        "map" => "an object",
        "sequence" => "a list",
        "unit" | "null" => "null",
        _ => found,
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A reference to a record: `turn:N`, `turn:A..turn:B`, `prior:N` or a rid (SPEC.md 5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference(pub(crate) String);

impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Reference, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Reference;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a reference string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Reference, E> {
                Ok(Reference(s.to_string()))
            }
        }
        d.deserialize_str(V)
    }
}

/// A score: a JSON number from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit(pub(crate) Score);

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unit, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Unit;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number from 0 to 1")
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Unit, E> {
                score_from_unit(x)
                    .map(Unit)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Float(x), &self))
            }
            fn visit_u64<E: de::Error>(self, x: u64) -> Result<Unit, E> {
                self.visit_f64(x as f64)
            }
            fn visit_i64<E: de::Error>(self, x: i64) -> Result<Unit, E> {
                self.visit_f64(x as f64)
            }
        }
        d.deserialize_f64(V)
    }
}

/// A value written by its JSON Lines name (`"user"`, `"prohibition"`, `"entails"`).
pub(crate) trait Named: Sized {
    fn from_name(name: &str) -> Option<Self>;
    /// Every accepted name, for messages.
    fn names() -> String;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn from_name(name: &str) -> Option<Self> {
                <$t>::from_name(name)
            }
            fn names() -> String {
                <$t>::NAMES.trim_end().to_string()
            }
        }
    )*};
}
named!(Role, PinClass, Relation, Status);

/// `cairn` reads as a repair whose proposal `repairs` names (resolved by the summary line);
/// only a repair already in the ledger, met again, is accepted (SPEC.md section 8.9).
impl Named for Author {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "cairn" => Some(Author::Repair(crate::record::Rid([0; 32]))),
            _ => Author::from_name(name),
        }
    }
    fn names() -> String {
        Author::NAMES.trim_end().to_string()
    }
}

impl Named for Gate {
    fn from_name(name: &str) -> Option<Self> {
        Gate::from_name(name)
    }
    fn names() -> String {
        Gate::ALL
            .iter()
            .map(|g| g.name())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A [`Named`] value read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Name<T>(pub(crate) T);

impl<'de, T: Named> Deserialize<'de> for Name<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<T: Named> Visitor<'_> for V<T> {
            type Value = Name<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name<T>, E> {
                T::from_name(s).map(Name).ok_or_else(|| {
                    E::custom(format!("unknown value {s:?}; use one of: {}", T::names()))
                })
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// A span: `source` is where it came from in the original log, written as a place record.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpanLine {
    pub(crate) stream: String,
    pub(crate) turn: u64,
    pub(crate) role: Name<Role>,
    pub(crate) name: Option<String>,
    pub(crate) text: String,
    pub(crate) source: Option<SourceLine>,
}

/// Where a span came from in the original log.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object {log, message?, line?, timestamp?}"
)]
pub(crate) struct SourceLine {
    pub(crate) log: String,
    pub(crate) message: Option<String>,
    pub(crate) line: Option<u64>,
    pub(crate) timestamp: Option<String>,
}

/// A claim, on a line of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClaimLine {
    pub(crate) stream: String,
    pub(crate) text: String,
    pub(crate) origin: Option<String>,
    #[serde(default)]
    pub(crate) witnesses: Vec<Reference>,
    #[serde(default)]
    pub(crate) actionable: bool,
}

/// A claim inside a summary line: in the summary's stream.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a claim object")]
pub(crate) struct ClaimFields {
    pub(crate) text: String,
    pub(crate) origin: Option<String>,
    #[serde(default)]
    pub(crate) witnesses: Vec<Reference>,
    #[serde(default)]
    pub(crate) actionable: bool,
}

/// One entry of a summary's `claims`: a new claim, or a reference to one in the ledger.
#[derive(Debug, Clone)]
pub(crate) enum ClaimEntry {
    New(ClaimFields),
    Carried(Reference),
}

impl<'de> Deserialize<'de> for ClaimEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ClaimEntry, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ClaimEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a claim object or a reference")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ClaimEntry, E> {
                Ok(ClaimEntry::Carried(Reference(s.to_string())))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ClaimEntry, A::Error> {
                ClaimFields::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(ClaimEntry::New)
            }
        }
        d.deserialize_any(V)
    }
}

/// A summary: its claims as `claims`, or as prose in `text` (SPEC.md section 8.8).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SummaryLine {
    pub(crate) stream: String,
    pub(crate) parent: Option<Reference>,
    pub(crate) author: Name<Author>,
    /// For a repair (author `cairn`, as `export` writes it): the refused proposal it repairs.
    pub(crate) repairs: Option<Reference>,
    pub(crate) budget: u64,
    #[serde(default)]
    pub(crate) covers: Vec<Reference>,
    #[serde(default)]
    pub(crate) evicts: Vec<Reference>,
    pub(crate) claims: Option<Vec<ClaimEntry>>,
    pub(crate) text: Option<String>,
    pub(crate) self_score: Option<Unit>,
    #[serde(default)]
    pub(crate) reground: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PinLine {
    pub(crate) stream: String,
    pub(crate) name: String,
    pub(crate) items: Vec<PinItemLine>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {class, text, witness?}")]
pub(crate) struct PinItemLine {
    pub(crate) class: Name<PinClass>,
    pub(crate) text: String,
    pub(crate) witness: Option<Reference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JudgementLine {
    pub(crate) stream: Option<String>,
    pub(crate) claim: Reference,
    pub(crate) span: Reference,
    pub(crate) relation: Name<Relation>,
    pub(crate) score: Option<Unit>,
    pub(crate) scorer: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictLine {
    pub(crate) stream: Option<String>,
    pub(crate) subject: Reference,
    pub(crate) admitted: bool,
    #[serde(default)]
    pub(crate) findings: Vec<FindingLine>,
    #[serde(default)]
    pub(crate) claims: Vec<ClaimStatusLine>,
    pub(crate) self_score: Option<Unit>,
    pub(crate) anchored_score: Option<Unit>,
    pub(crate) policy: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {gate, subject, detail}")]
pub(crate) struct FindingLine {
    pub(crate) gate: Name<Gate>,
    pub(crate) subject: Reference,
    pub(crate) detail: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {claim, status}")]
pub(crate) struct ClaimStatusLine {
    pub(crate) claim: Reference,
    pub(crate) status: Name<Status>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionLine {
    pub(crate) stream: String,
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) irreversible: bool,
    #[serde(default)]
    pub(crate) relies_on: Vec<Reference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegroundLine {
    pub(crate) stream: Option<String>,
    pub(crate) claim: Reference,
    #[serde(default)]
    pub(crate) spans: Vec<Reference>,
    pub(crate) score: Option<Unit>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckLine {
    pub(crate) stream: Option<String>,
    pub(crate) action: Reference,
    pub(crate) at: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReceiptLine {
    pub(crate) stream: String,
    pub(crate) key: String,
    pub(crate) payload: String,
    #[serde(default)]
    pub(crate) spans: Vec<Reference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulingLine {
    pub(crate) stream: Option<String>,
    pub(crate) claim: Reference,
    #[serde(default)]
    pub(crate) spans: Vec<Reference>,
    pub(crate) judge: String,
    pub(crate) prompt: String,
    pub(crate) answer: Name<Relation>,
    pub(crate) quote: Option<String>,
}

/// A retirement: `pin` is the pin's name in `stream`, or its rid.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetirementLine {
    pub(crate) stream: String,
    pub(crate) pin: String,
    pub(crate) item: String,
    pub(crate) witness: Option<Reference>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClassificationLine {
    pub(crate) stream: Option<String>,
    pub(crate) span: Reference,
    pub(crate) classifier: String,
    pub(crate) items: Vec<FoundItemLine>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an object {class, text}")]
pub(crate) struct FoundItemLine {
    pub(crate) class: Name<PinClass>,
    pub(crate) text: String,
}

/// A place on a line of its own, as `export` writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlaceLine {
    pub(crate) stream: Option<String>,
    pub(crate) span: Reference,
    pub(crate) log: String,
    pub(crate) message: Option<String>,
    pub(crate) line: Option<u64>,
    pub(crate) timestamp: Option<String>,
}

/// A store entry's version, as `export` writes it (SPEC.md section 10d).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntryLine {
    pub(crate) namespace: Vec<String>,
    pub(crate) key: String,
    pub(crate) value: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) previous: Option<Reference>,
    pub(crate) created: u64,
    pub(crate) at: u64,
}
