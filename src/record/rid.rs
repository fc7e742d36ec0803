//! Record ids: 32-byte BLAKE3 hashes, written as 64 lower-case hex characters.

use bincode::{Decode, Encode};
use std::fmt;
use std::str::FromStr;

/// A record id: `BLAKE3(0x00 || record bytes)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
pub struct Rid(pub [u8; 32]);

impl Rid {
    /// The rid of a record's canonical bytes.
    pub fn of_bytes(bytes: &[u8]) -> Rid {
        let mut h = blake3::Hasher::new();
        h.update(&[0x00]);
        h.update(bytes);
        Rid(*h.finalize().as_bytes())
    }

    /// The full hex form.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
            s.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
        }
        s
    }

    /// The first 12 hex characters, for messages.
    pub fn short(&self) -> String {
        self.to_hex()[..12].to_string()
    }
}

impl fmt::Display for Rid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Rid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rid({})", self.short())
    }
}

/// Why a string is not a rid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RidParseError {
    /// Not 64 characters long.
    #[error("a rid is 64 hex characters, and this one has {0}")]
    Length(usize),
    /// A character outside 0-9, a-f, A-F.
    #[error("a rid is written in hex, and {0:?} is not a hex digit")]
    NotHex(char),
}

/// Parses hex digits into nibbles, for rids and rid prefixes.
pub(crate) fn hex_nibbles(s: &str) -> Result<Vec<u8>, RidParseError> {
    s.chars()
        .map(|c| {
            c.to_digit(16)
                .map(|d| d as u8)
                .ok_or(RidParseError::NotHex(c))
        })
        .collect()
}

impl FromStr for Rid {
    type Err = RidParseError;

    fn from_str(s: &str) -> Result<Rid, RidParseError> {
        let n = hex_nibbles(s)?;
        if n.len() != 64 {
            return Err(RidParseError::Length(s.chars().count()));
        }
        let mut out = [0u8; 32];
        for (i, pair) in n.chunks(2).enumerate() {
            out[i] = (pair[0] << 4) | pair[1];
        }
        Ok(Rid(out))
    }
}
