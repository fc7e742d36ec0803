//! Canonical bytes: `[FORMAT_VERSION, kind, bincode body...]`.

use super::{Kind, Record};
use bincode::config::{Configuration, Fixint, Limit, LittleEndian};

/// The format version written as the first byte of every record.
pub const FORMAT_VERSION: u8 = 1;

/// The largest record accepted, in bytes (16 MiB).
pub const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

type Config = Configuration<LittleEndian, Fixint, Limit<MAX_RECORD_BYTES>>;

const CONFIG: Config = bincode::config::standard()
    .with_fixed_int_encoding()
    .with_little_endian()
    .with_limit::<MAX_RECORD_BYTES>();

/// Why bytes are not a canonical record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer than two bytes.
    #[error("the record is {0} bytes long, shorter than its two header bytes")]
    TooShort(usize),
    /// Above [`MAX_RECORD_BYTES`].
    #[error("the record is {0} bytes long, above the limit of {MAX_RECORD_BYTES} bytes")]
    TooLong(usize),
    /// An unknown format version.
    #[error("the record has format version {0}, and this build reads version {FORMAT_VERSION}")]
    Version(u8),
    /// An unknown kind byte.
    #[error("the record has kind byte {0}, which names no record kind (1 to 8)")]
    UnknownKind(u8),
    /// The body did not decode.
    #[error("the {kind} body does not decode: {reason}")]
    Body {
        /// The kind named by the header.
        kind: Kind,
        /// bincode's explanation.
        reason: String,
    },
    /// Bytes after the body.
    #[error("the {kind} record has {extra} bytes after its body")]
    Trailing {
        /// The kind named by the header.
        kind: Kind,
        /// How many bytes follow the body.
        extra: usize,
    },
    /// The body decoded but is not in canonical form.
    #[error("the {kind} record is not canonical: {reason}")]
    NotCanonical {
        /// The kind named by the header.
        kind: Kind,
        /// The rule it breaks.
        reason: String,
    },
}

/// The canonical bytes of a record. A record that is not in canonical form is canonicalised
/// first, so one logical record always has one encoding.
pub fn encode(record: &Record) -> Vec<u8> {
    if record.canonical_violation().is_some() {
        let mut r = record.clone();
        r.canonicalize();
        if r.canonical_violation().is_none() {
            return encode_raw(&r);
        }
    }
    encode_raw(record)
}

fn encode_raw(record: &Record) -> Vec<u8> {
    let mut out = vec![FORMAT_VERSION, record.kind() as u8];
    let body = match record {
        Record::Span(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Claim(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Summary(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Pin(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Judgement(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Verdict(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Action(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Reground(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Check(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Receipt(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Ruling(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Retirement(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Classification(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Place(r) => bincode::encode_to_vec(r, CONFIG),
        Record::Entry(r) => bincode::encode_to_vec(r, CONFIG),
    };
    // Encoding into a Vec fails only past the size limit, which a record that was decoded or
    // built within MAX_RECORD_BYTES cannot reach; the append path checks the length anyway.
    out.extend(body.unwrap_or_default());
    out
}

/// bincode's decoding error as a sentence: its own `Display` prints the `Debug` form.
fn reason(e: bincode::error::DecodeError) -> String {
    use bincode::error::DecodeError as E;
    match e {
        E::UnexpectedEnd { additional } => {
            format!("it ends early: {additional} more bytes were expected")
        }
        E::LimitExceeded => format!("it claims more than the limit of {MAX_RECORD_BYTES} bytes"),
        E::UnexpectedVariant {
            type_name, found, ..
        } => format!("tag {found} names no variant of {type_name}"),
        E::Utf8 { .. } => "a string is not valid UTF-8".to_string(),
        E::InvalidBooleanValue(b) => format!("a boolean is stored as {b}, not 0 or 1"),
        E::OutsideUsizeRange(n) => format!("a length of {n} does not fit in memory"),
        E::ArrayLengthMismatch { required, found } => {
            format!("a list holds {found} items where {required} belong")
        }
        E::OtherString(s) => s,
        E::Other(s) => s.to_string(),
        _ => "it breaks the encoding's rules for its fields".to_string(),
    }
}

fn body<T: bincode::Decode<()>>(kind: Kind, bytes: &[u8]) -> Result<T, DecodeError> {
    let (value, used) =
        bincode::decode_from_slice::<T, _>(bytes, CONFIG).map_err(|e| DecodeError::Body {
            kind,
            reason: reason(e),
        })?;
    if used != bytes.len() {
        return Err(DecodeError::Trailing {
            kind,
            extra: bytes.len() - used,
        });
    }
    Ok(value)
}

/// Decodes bytes the ledger validated when it appended them, without re-checking canonical
/// form: for internal reads on hot paths. Integrity checks (`verify`, exports, `get`) use
/// [`decode`].
pub fn decode_trusted(bytes: &[u8]) -> Result<Record, DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::TooShort(bytes.len()));
    }
    let kind = Kind::from_byte(bytes[1]).ok_or(DecodeError::UnknownKind(bytes[1]))?;
    decode_body(kind, &bytes[2..])
}

fn decode_body(kind: Kind, b: &[u8]) -> Result<Record, DecodeError> {
    Ok(match kind {
        Kind::Span => Record::Span(body(kind, b)?),
        Kind::Claim => Record::Claim(body(kind, b)?),
        Kind::Summary => Record::Summary(body(kind, b)?),
        Kind::Pin => Record::Pin(body(kind, b)?),
        Kind::Judgement => Record::Judgement(body(kind, b)?),
        Kind::Verdict => Record::Verdict(body(kind, b)?),
        Kind::Action => Record::Action(body(kind, b)?),
        Kind::Reground => Record::Reground(body(kind, b)?),
        Kind::Check => Record::Check(body(kind, b)?),
        Kind::Receipt => Record::Receipt(body(kind, b)?),
        Kind::Ruling => Record::Ruling(body(kind, b)?),
        Kind::Retirement => Record::Retirement(body(kind, b)?),
        Kind::Classification => Record::Classification(body(kind, b)?),
        Kind::Place => Record::Place(body(kind, b)?),
        Kind::Entry => Record::Entry(body(kind, b)?),
    })
}

/// Decodes canonical bytes. Rejects trailing bytes, non-canonical bodies, and any input whose
/// re-encoding differs from it.
pub fn decode(bytes: &[u8]) -> Result<Record, DecodeError> {
    if bytes.len() < 2 {
        return Err(DecodeError::TooShort(bytes.len()));
    }
    if bytes.len() > MAX_RECORD_BYTES {
        return Err(DecodeError::TooLong(bytes.len()));
    }
    if bytes[0] != FORMAT_VERSION {
        return Err(DecodeError::Version(bytes[0]));
    }
    let kind = Kind::from_byte(bytes[1]).ok_or(DecodeError::UnknownKind(bytes[1]))?;
    let record = decode_body(kind, &bytes[2..])?;
    if let Some(reason) = record.canonical_violation() {
        return Err(DecodeError::NotCanonical { kind, reason });
    }
    if encode_raw(&record) != bytes {
        return Err(DecodeError::NotCanonical {
            kind,
            reason: "re-encoding the decoded record gives different bytes".into(),
        });
    }
    Ok(record)
}
