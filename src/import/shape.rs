//! How a log's messages are read: each format's message is a struct derived with serde, the
//! same machinery as cairn's own lines ([`crate::ingest`]), but lenient where those are strict.
//! These formats change every release, so a field cairn does not read is counted and skipped
//! (`serde_ignored`), never fatal, and a message of a shape cairn does not know is skipped and
//! counted, naming the field at fault (`serde_path_to_error`).

use super::Report;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// Reads one message into its format's shape `T`. Fields at the top of the message that `T`
/// does not read and `known` does not name are counted as unknown. A message of another
/// shape is counted as skipped and gives `Ok(None)`; malformed JSON is the error.
pub(crate) fn read<'de, T, D>(
    d: D,
    known: &[&str],
    report: &mut Report,
) -> Result<Option<T>, serde_json::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de, Error = serde_json::Error>,
{
    let mut unknown = Vec::new();
    let mut note = |path: serde_ignored::Path<'_>| {
        if let serde_ignored::Path::Map { parent, key } = path {
            if matches!(parent, serde_ignored::Path::Root) && !known.contains(&key.as_str()) {
                unknown.push(key);
            }
        }
    };
    let found = serde_path_to_error::deserialize(serde_ignored::Deserializer::new(d, &mut note));
    for key in unknown {
        report.skip(format!("unknown field `{key}`"));
    }
    match found {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.inner().is_data() => {
            // serde_json places a reader's errors ("... at line 1 column 57"): the line is the
            // message's own, told by the import's error, so only the reason is kept.
            let message = e.inner().to_string();
            let message = message
                .rfind(" at line ")
                .map_or(message.as_str(), |at| &message[..at]);
            let fault = crate::ingest::lines::fault(e.path(), message);
            report.skip(match fault.field {
                Some(field) => format!(
                    "a message whose `{field}` has a shape cairn does not read ({})",
                    fault.message
                ),
                None => format!(
                    "a message of a shape cairn does not read ({})",
                    fault.message
                ),
            });
            Ok(None)
        }
        Err(e) => Err(e.into_inner()),
    }
}

/// Reads one line of a JSON Lines log into its format's shape, as [`read`] reads a message.
pub(crate) fn read_line<'de, T: Deserialize<'de>>(
    text: &'de str,
    known: &[&str],
    report: &mut Report,
) -> Result<Option<T>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let found = read(&mut de, known, report)?;
    // A message of another shape stops the reader midway: the check before the import found
    // its JSON whole, so only a message read whole is checked for trailing characters.
    if found.is_some() {
        de.end()?;
    }
    Ok(found)
}

/// A message's content as the formats write it: a string, or a list of parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Content {
    Text(String),
    Parts(Vec<Part>),
}

/// One part of a content list: a plain string, or a block with a `type`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Block(Block),
}

/// A content block: Claude Code's `text`, `tool_use`, `tool_result` and `thinking` blocks,
/// OpenAI's and Codex's text parts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Block {
    #[serde(rename = "type", default)]
    pub(crate) kind: String,
    /// The text; a `thinking` block's reasoning too.
    #[serde(alias = "thinking")]
    pub(crate) text: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) input: Option<serde_json::Value>,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) content: Option<Content>,
}

impl Content {
    /// The text: the string, or the text of each part that has some, joined by newlines.
    pub(crate) fn text(&self) -> String {
        match self {
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(s) => Some(s.as_str()),
                    Part::Block(b) => b.text.as_deref(),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// The text of optional content: empty when there is none.
pub(crate) fn text(content: &Option<Content>) -> String {
    content.as_ref().map(Content::text).unwrap_or_default()
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content parts")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Content, E> {
                Ok(Content::Text(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Content, E> {
                Ok(Content::Text(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut parts = Vec::new();
                while let Some(p) = seq.next_element()? {
                    parts.push(p);
                }
                Ok(Content::Parts(parts))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Part, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a content block")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Part, E> {
                Ok(Part::Text(s.to_string()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Part, E> {
                Ok(Part::Text(s))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Part, A::Error> {
                Block::deserialize(de::value::MapAccessDeserializer::new(map)).map(Part::Block)
            }
        }
        d.deserialize_any(V)
    }
}

/// A time as the log gives it: a string as written, or a number (seconds since the epoch) as
/// its digits.
pub(crate) fn stamp(v: &Option<serde_json::Value>) -> Option<String> {
    match v {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}
