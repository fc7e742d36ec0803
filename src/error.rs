//! The crate's error type: every message is a sentence that names the thing and the way out.

use crate::record::{DecodeError, Kind, LinkRole, Rid};
use std::path::PathBuf;

/// What went wrong. Boxed inside [`Error`] so `Result` stays small.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// redb failed to read or write the file.
    #[error("the ledger file could not be read or written ({0}); check the disk and the path, then run `cairn verify`")]
    Storage(#[from] redb::Error),
    /// Another process holds the ledger open.
    #[error("the ledger {} is locked: another process has it open for writing; wait for it to finish or use another --db", .0.display())]
    Locked(PathBuf),
    /// redb found the file damaged.
    #[error("the ledger {} is corrupt ({detail}); restore it from a copy; `cairn verify` names the damaged records", path.display())]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What redb reported.
        detail: String,
    },
    /// A stored record fails its integrity checks.
    #[error("record {rid} at log index {index} is damaged: {detail}; run `cairn verify` for a full report")]
    CorruptRecord {
        /// The record's id as stored in the log.
        rid: Rid,
        /// Its log index.
        index: u64,
        /// What is wrong.
        detail: String,
    },
    /// The file is not a cairn ledger this build can read.
    #[error("{} is not a cairn ledger of format version {expected} ({detail}); point --db at a cairn ledger or a new path", path.display())]
    NotALedger {
        /// The file.
        path: PathBuf,
        /// The version this build reads.
        expected: u8,
        /// What was found.
        detail: String,
    },
    /// A record is too large to store.
    #[error("the {kind} record is {size} bytes, above the limit of {limit} bytes (max-record-bytes); split its text")]
    TooLarge {
        /// Its kind.
        kind: Kind,
        /// Its encoded size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A record with more links than allowed.
    #[error(
        "the {kind} record has {links} links, beyond the max-links limit of {limit}; split it"
    )]
    TooManyLinks {
        /// Its kind.
        kind: Kind,
        /// Its links.
        links: usize,
        /// The limit.
        limit: usize,
    },
    /// A record breaks a rule of canonical form that canonicalising cannot mend.
    #[error("the {kind} record is invalid: {reason}; fix the record and append it again")]
    Invalid {
        /// Its kind.
        kind: Kind,
        /// The rule it breaks.
        reason: String,
    },
    /// A record's bytes were not canonical.
    #[error("the record bytes are not a canonical cairn record: {0}")]
    Decode(#[from] DecodeError),
    /// A link points to nothing, or to the wrong kind, or to another stream.
    #[error("{kind} field `{}` links to {target}, {problem}", role.field())]
    Link {
        /// The kind of the record being appended.
        kind: Kind,
        /// The link's role.
        role: LinkRole,
        /// The target rid.
        target: Rid,
        /// What is wrong, as the end of a sentence.
        problem: String,
    },
    /// A pin under an existing (stream, name) with different content.
    #[error("pin-conflict: stream {stream} already holds pin {name:?} ({existing}); pins are write-once, so choose a new name")]
    PinConflict {
        /// The stream.
        stream: String,
        /// The pin's name.
        name: String,
        /// The pin that stays.
        existing: Rid,
    },
    /// A second verdict for a gated subject.
    #[error("{subject} already has a verdict ({existing}); a proposal is gated once, so submit a new summary or action instead")]
    VerdictExists {
        /// The summary or action.
        subject: Rid,
        /// Its verdict.
        existing: Rid,
    },
    /// A second, different span for a (stream, turn).
    #[error("stream {stream} already holds a different span for turn {turn} ({existing}); spans are immutable, so give the new text its own turn")]
    TurnConflict {
        /// The stream.
        stream: String,
        /// The turn.
        turn: u64,
        /// The span that stays.
        existing: Rid,
    },
    /// No record has this rid or prefix.
    #[error("no record in the ledger has rid {0}")]
    NotFound(String),
    /// A prefix that matches more than one rid.
    #[error(
        "rid prefix {prefix} is ambiguous: it matches {first} and {second}; give more hex digits"
    )]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// One match.
        first: Rid,
        /// Another.
        second: Rid,
    },
    /// An `--as-of` past the end of the log.
    #[error("--as-of {asked} is past the end of the log, which holds {size} records; give a size from 0 to {size}")]
    AsOf {
        /// The size asked for.
        asked: u64,
        /// The log's size.
        size: u64,
    },
    /// A Merkle proof request or check failed.
    #[error("{0}")]
    Proof(#[from] crate::merkle::ProofError),
    /// A checkpoint, key or proof check failed.
    #[error("{0}")]
    Check(crate::checkpoint::CheckError),
    /// The scorer failed.
    #[error("{0}")]
    Score(String),
    /// The policy file was refused.
    #[error("{0}; fix the file or drop --policy to use the defaults")]
    Policy(String),
    /// A file could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The error returned by every fallible cairn call.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<ErrorKind>);

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// Whether this error means the ledger's integrity is in doubt (exit code 3).
    pub fn is_integrity(&self) -> bool {
        matches!(
            *self.0,
            ErrorKind::Storage(_)
                | ErrorKind::CorruptFile { .. }
                | ErrorKind::CorruptRecord { .. }
                | ErrorKind::NotALedger { .. }
                | ErrorKind::Check(crate::checkpoint::CheckError::History(_))
                | ErrorKind::Check(crate::checkpoint::CheckError::Signature { .. })
                | ErrorKind::Check(crate::checkpoint::CheckError::Proof(_))
        )
    }
}

impl<T: Into<ErrorKind>> From<T> for Error {
    fn from(e: T) -> Error {
        Error(Box::new(e.into()))
    }
}

macro_rules! redb_errors {
    ($($t:ty),*) => {$(
        impl From<$t> for ErrorKind {
            fn from(e: $t) -> ErrorKind {
                ErrorKind::Storage(e.into())
            }
        }
    )*};
}
redb_errors!(
    redb::StorageError,
    redb::TableError,
    redb::TransactionError,
    redb::CommitError,
    redb::DatabaseError
);

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
