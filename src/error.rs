//! Every error of the library, in the library's words: each message is a sentence that names
//! the thing and the way out. Command-line advice (which flag to give, which command to run)
//! is the `cairn` program's to add.
//!
//! This module sits just above `record` (SPEC.md section 15): the Merkle log, the scorers, the
//! store, the gates, checkpoints, ingest and replay all return these types, so none of them is
//! defined in a module above another that needs it.

use crate::record::{DecodeError, Kind, LinkRole, Rid};
use std::path::PathBuf;

/// What went wrong. Boxed inside [`Error`] so `Result` stays small.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The storage engine failed to read or write the file.
    #[error("the ledger file could not be read or written ({0}); check the disk and the path, then verify the ledger")]
    Storage(StorageError),
    /// Another process holds the ledger open.
    #[error("the ledger {} is locked: another process has it open for writing; wait for it to finish or open another file", .0.display())]
    Locked(PathBuf),
    /// A write was asked of a ledger opened read-only.
    #[error("the ledger {} is open read-only, so nothing can be appended; open it with Ledger::open to write", .0.display())]
    ReadOnly(PathBuf),
    /// A ledger written before the recall index existed, opened read-only, so the index
    /// could not be built.
    #[error("this ledger was written before cairn kept a recall index, and it is open read-only, so the index cannot be built; open it for writing once (any command that writes, such as `cairn --db LEDGER ingest /dev/null`) and the index is built from its records")]
    NoRecallIndex,
    /// A crash left the ledger mid-write, and a read-only open does not recover it.
    #[error("the ledger {} was left mid-write by a crash and needs recovery, which reading it does not do; run `cairn --db {} recover` (or open it for writing once, Ledger::open) and it is recovered and verified", .0.display(), .0.display())]
    NeedsRecovery(PathBuf),
    /// redb found the file damaged.
    #[error("the ledger {} is corrupt ({detail}); restore it from a copy; verifying it names the damaged records", path.display())]
    CorruptFile {
        /// The file.
        path: PathBuf,
        /// What redb reported.
        detail: String,
    },
    /// A stored record fails its integrity checks.
    #[error("record {rid} at log index {index} is damaged: {detail}; verify the ledger for a full report")]
    CorruptRecord {
        /// The record's id as stored in the log.
        rid: Rid,
        /// Its log index.
        index: u64,
        /// What is wrong.
        detail: String,
    },
    /// The file is not a cairn ledger this build can read.
    #[error("{} is not a cairn ledger of format version {expected} ({detail}); open a cairn ledger or a new path", path.display())]
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
    /// A summary, action, verdict or reground handed to `Batch::append`: those enter the
    /// ledger only through the gates and re-grounding.
    #[error("{}", ungated(*.0))]
    Ungated(Kind),
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
    #[error("{}: stream {stream} already holds pin {name:?} ({existing}); pins are write-once, so choose a new name", crate::record::Gate::PinConflict)]
    PinConflict {
        /// The stream.
        stream: String,
        /// The pin's name.
        name: String,
        /// The pin that stays.
        existing: Rid,
    },
    /// A receipt under an existing (stream, key) with different content.
    #[error("stream {stream} already holds a receipt for idempotency key {key:?} ({existing}), for other content; a key names one call, so give a new call a new key")]
    ReceiptConflict {
        /// The stream.
        stream: String,
        /// The idempotency key.
        key: String,
        /// The receipt that stays.
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
    /// A new summary whose parent is not its stream's current head.
    #[error("{}", not_head(stream, parent.as_ref(), head.as_ref()))]
    ParentNotHead {
        /// The stream.
        stream: String,
        /// The parent the summary names.
        parent: Option<Rid>,
        /// The stream's head: its last admitted summary.
        head: Option<Rid>,
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
    /// A record exists but is not of the kind asked for, or no record of that kind has the rid.
    #[error("{}", wrong_kind(rid, *want, *found))]
    WrongKind {
        /// The rid asked about.
        rid: Rid,
        /// The kind asked for.
        want: Kind,
        /// The kind found, if any record has the rid.
        found: Option<Kind>,
    },
    /// No span or summary belongs to the stream named.
    #[error("no span or summary belongs to stream {0}; check the stream's name")]
    NoStream(String),
    /// A reference that does not parse or names nothing.
    #[error("{0}")]
    Reference(#[from] RefError),
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
    /// A log size past the end of the log.
    #[error("log size {asked} is past the end of the log, which holds {size} records; give a size from 0 to {size}")]
    AsOf {
        /// The size asked for.
        asked: u64,
        /// The log's size.
        size: u64,
    },
    /// A Merkle proof request or check failed.
    #[error("{0}")]
    Proof(#[from] ProofError),
    /// A checkpoint, key or proof check failed.
    #[error("{0}")]
    Check(#[from] CheckError),
    /// The scorer failed.
    #[error("{0}")]
    Score(#[from] ScoreError),
    /// The policy was refused.
    #[error("{0}")]
    Policy(#[from] PolicyError),
    /// The ledger's PostgreSQL server refused, failed or could not be reached (SPEC.md
    /// section 17). `url` is the connection string without its password.
    #[error("the ledger on PostgreSQL at {url}: {detail}")]
    Remote {
        /// Where the ledger is, without a password.
        url: String,
        /// What happened, and the way out.
        detail: String,
    },
    /// `cairn copy` refused its target.
    #[error("cannot copy the ledger into {to}: {detail}")]
    Copy {
        /// The target, a path or a URL.
        to: String,
        /// Why, and the way out.
        detail: String,
    },
    /// A batch begun for some streams was handed a record of another.
    #[error("this write batch was begun for stream(s) {streams}, and the record belongs to stream {stream}; begin the batch for every stream it appends to (Ledger::batch_for), or with Ledger::batch")]
    OutsideBatch {
        /// The record's stream.
        stream: String,
        /// The batch's streams.
        streams: String,
    },
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

fn ungated(kind: Kind) -> String {
    let way = match kind {
        Kind::Summary => "propose it with Gatekeeper::propose_summary, which appends it with its verdict",
        Kind::Action => "propose it with Gatekeeper::propose_action, which appends it with its verdict",
        Kind::Verdict => "verdicts are written only by the gates; propose the summary or action and its verdict is appended",
        Kind::Check => "checks are written only by the action gate; propose the action again with Gatekeeper::propose_action",
        Kind::Ruling => "rulings are written only by the gates, from a judge's answer; propose the summary under a policy with a judge",
        _ => "regrounds are written only by re-grounding; call Gatekeeper::reground on the claim",
    };
    format!(
        "a {kind} cannot be appended directly, because the ledger is gated by construction: {way}"
    )
}

fn not_head(stream: &str, parent: Option<&Rid>, head: Option<&Rid>) -> String {
    let named = match parent {
        Some(p) => format!("names parent {p}"),
        None => "names no parent".to_string(),
    };
    match head {
        Some(h) => format!(
            "the summary of stream {stream} {named}, but the stream's head (its last admitted summary) is {h}; a compaction replaces the head, so give parent {h} or leave it out"
        ),
        None => format!(
            "the summary of stream {stream} {named}, but the stream has no admitted summary yet; a first compaction has no parent, so leave it out"
        ),
    }
}

fn wrong_kind(rid: &Rid, want: Kind, found: Option<Kind>) -> String {
    match found {
        Some(k) => format!("record {rid} is a {k}, not a {want}; give the rid of a {want}"),
        None => format!("no {want} in the ledger has rid {rid}"),
    }
}

/// The error for a rid that names no record of the kind wanted.
pub(crate) fn not_a(rid: Rid, want: Kind, found: Option<Kind>) -> Error {
    ErrorKind::WrongKind { rid, want, found }.into()
}

/// The error returned by every fallible cairn call.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<ErrorKind>);

impl Error {
    /// Whether this is redb saying a table does not exist: a ledger written before the table
    /// was added, opened read-only.
    pub(crate) fn is_missing_table(&self) -> bool {
        matches!(&*self.0, ErrorKind::Storage(StorageError(e)) if matches!(**e, redb::Error::TableDoesNotExist(_)))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// Whether a write-once thing (a pin, a receipt, a turn, a verdict, the stream's head)
    /// already holds other content.
    pub fn is_conflict(&self) -> bool {
        matches!(
            *self.0,
            ErrorKind::PinConflict { .. }
                | ErrorKind::ReceiptConflict { .. }
                | ErrorKind::TurnConflict { .. }
                | ErrorKind::ParentNotHead { .. }
                | ErrorKind::VerdictExists { .. }
        )
    }

    /// Whether this error means the ledger's integrity is in doubt (exit code 3).
    pub fn is_integrity(&self) -> bool {
        matches!(
            *self.0,
            ErrorKind::Storage(_)
                | ErrorKind::CorruptFile { .. }
                | ErrorKind::CorruptRecord { .. }
                | ErrorKind::NotALedger { .. }
                | ErrorKind::Check(CheckError::History(_))
                | ErrorKind::Check(CheckError::Signature { .. })
                | ErrorKind::Check(CheckError::Proof(_))
        )
    }
}

impl<T: Into<ErrorKind>> From<T> for Error {
    fn from(e: T) -> Error {
        Error(Box::new(e.into()))
    }
}

/// What the storage engine reported when it failed: its own words, kept as the error's source.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StorageError(Box<redb::Error>);

macro_rules! redb_errors {
    ($($t:ty),*) => {$(
        // The engine's error types stay out of the public API: these conversions serve the
        // store's `?` and are hidden from the documentation.
        #[doc(hidden)]
        impl From<$t> for ErrorKind {
            fn from(e: $t) -> ErrorKind {
                ErrorKind::Storage(StorageError(Box::new(e.into())))
            }
        }
    )*};
}
redb_errors!(
    redb::Error,
    redb::StorageError,
    redb::TableError,
    redb::TransactionError,
    redb::CommitError,
    redb::DatabaseError
);

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a Merkle proof could not be made or does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// A leaf outside the tree.
    #[error("leaf {index} is not in a tree of {size} leaves; give an index below {size}")]
    Leaf {
        /// The leaf asked for.
        index: u64,
        /// The tree's size.
        size: u64,
    },
    /// An older size above the newer one.
    #[error(
        "a tree of {old} leaves cannot be a prefix of a tree of {new}; give the older size first"
    )]
    NotPrefix {
        /// The older size.
        old: u64,
        /// The newer size.
        new: u64,
    },
    /// A subtree hash the tree does not hold.
    #[error("no complete subtree at level {level}, index {index}")]
    MissingNode {
        /// The subtree's level.
        level: u32,
        /// Its index at that level.
        index: u64,
    },
    /// The proof has the wrong number of hashes for the sizes.
    #[error("the proof has {got} hashes, and a proof for these sizes has {want}")]
    Length {
        /// Hashes given.
        got: usize,
        /// Hashes expected.
        want: usize,
    },
    /// The hashes do not lead to the root.
    #[error("the proof does not lead to the root: the {what} recomputed from it differs")]
    Mismatch {
        /// Which root.
        what: &'static str,
    },
}

/// Why a checkpoint, a key or a proof was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The text is not in the expected format.
    #[error("{what} is malformed: {why}")]
    Format {
        /// What was being read.
        what: &'static str,
        /// What is wrong.
        why: String,
    },
    /// No signature by the given key, or a signature that does not verify.
    #[error("the checkpoint is not signed by key {name}: {why}")]
    Signature {
        /// The key's name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The ledger does not hold the checkpoint's history.
    #[error("{0}")]
    History(String),
    /// A proof failed.
    #[error("{0}")]
    Proof(#[from] ProofError),
}

/// Why a scorer could not score.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scorer {scorer} failed: {problem}")]
#[non_exhaustive]
pub struct ScoreError {
    /// The scorer's id.
    pub scorer: String,
    /// What went wrong.
    pub problem: ScoreProblem,
}

impl ScoreError {
    /// The failure of scorer `scorer`: for a [`Scorer`](crate::score::Scorer) of your own,
    /// `ScoreError::new(self.id(), ScoreProblem::Other(reason))`.
    pub fn new(scorer: impl Into<String>, problem: ScoreProblem) -> ScoreError {
        ScoreError {
            scorer: scorer.into(),
            problem,
        }
    }
}

/// What went wrong inside a scorer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScoreProblem {
    /// The external command could not be started.
    #[error("cannot start `{command}`: {reason}; check the command")]
    Start {
        /// The command.
        command: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The command's standard input or output is not a pipe.
    #[error("its standard input or output is not a pipe")]
    NotPiped,
    /// The command stopped reading its requests.
    #[error("it stopped reading its input ({reason}); did it exit?")]
    StoppedReading {
        /// The operating system's reason.
        reason: String,
    },
    /// Reading the command's answer failed.
    #[error("reading its output failed: {reason}")]
    Read {
        /// The operating system's reason.
        reason: String,
    },
    /// No answer in time.
    #[error("it gave no answer within {ms} ms")]
    Timeout {
        /// The time allowed per answer.
        ms: u128,
    },
    /// The command exited or closed its output without answering.
    #[error("it {} without answering", match status { Some(s) => format!("exited ({s})"), None => "closed its output".to_string() })]
    Exited {
        /// Its exit status, when it exited.
        status: Option<String>,
    },
    /// The answer is not JSON.
    #[error("it answered {answer:?}, which is not JSON: {reason}")]
    NotJson {
        /// The line it answered.
        answer: String,
        /// The parser's reason.
        reason: String,
    },
    /// The answer lacks a score.
    #[error("its answer {answer:?} lacks `{field}` as a number from 0 to 1")]
    Field {
        /// The line it answered.
        answer: String,
        /// The score missing.
        field: &'static str,
    },
    /// The answer names another request's id.
    #[error("it answered {answer:?} to request {id}, whose id it does not carry; answers must come one per request, in order, with the request's id if they carry one")]
    WrongId {
        /// The line it answered.
        answer: String,
        /// The id of the request.
        id: u64,
    },
    /// A line came before any request asked for it.
    #[error("it wrote {answer:?}, which no request asked for; a scorer answers each request with exactly one line")]
    Unasked {
        /// The line it wrote.
        answer: String,
    },
    /// An earlier call panicked while holding the scorer.
    #[error("an earlier call panicked")]
    Poisoned,
    /// The command is not running; it is started again on the next call.
    #[error("it is not running; the next call starts it again")]
    NotRunning,
    /// A model directory that cannot be loaded: a missing or unreadable file, a config cairn
    /// does not support, or weights that do not match the config.
    #[error("the model in {dir} cannot be loaded: {reason}")]
    ModelLoad {
        /// The model directory.
        dir: String,
        /// What is wrong, and what to do about it.
        reason: String,
    },
    /// Running the model on a pair failed.
    #[error("running the model failed: {reason}")]
    Inference {
        /// The framework's reason.
        reason: String,
    },
    /// A scorer outside this crate failed, for the reason it gives.
    #[error("{0}")]
    Other(String),
}

/// Why a policy was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policy {source_name}: {problem}; fix the policy")]
#[non_exhaustive]
pub struct PolicyError {
    /// The file name, for messages.
    pub source_name: String,
    /// What is wrong.
    pub problem: PolicyProblem,
}

/// What is wrong with a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyProblem {
    /// Not valid TOML.
    #[error("not valid TOML: {0}")]
    Toml(String),
    /// A key the policy does not have.
    #[error("unknown key `{key}`; the keys are {known}")]
    UnknownKey {
        /// The key given.
        key: String,
        /// The keys a policy has.
        known: String,
    },
    /// A threshold outside [0, 1].
    #[error("`{0}` must be a number from 0 to 1")]
    Threshold(String),
    /// A `max_depth` that is not a non-negative integer.
    #[error("`max_depth` must be a non-negative integer")]
    MaxDepth,
    /// A judge key that is missing, mistyped or inconsistent.
    #[error("{0}")]
    Judge(String),
    /// A `verify_entailment` below `raw_entailment`.
    #[error("`verify_entailment` ({verify}) is below `raw_entailment` ({raw}); a claim cannot be verified by less support than keeps it from being refused, so raise `verify_entailment` or lower `raw_entailment`")]
    VerifyBelowRefuse {
        /// The verify threshold given, as written.
        verify: String,
        /// The refuse threshold in force, as written.
        raw: String,
    },
    /// A `model` that is not a path.
    #[error("`model` must be the path of an NLI model directory, as a string")]
    Model,
}

/// Why a reference (`turn:N`, `turn:A..turn:B`, `prior:N`, or a rid) does not parse or names
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RefError {
    /// `turn:` or `prior:` without a decimal number after it.
    #[error("{reference:?} is not a reference: {prefix} must be followed by a decimal number")]
    NotANumber {
        /// The reference given.
        reference: String,
        /// `turn:` or `prior:`.
        prefix: &'static str,
    },
    /// A number too large for a turn or a claim index.
    #[error("{0:?} is not a reference: the number is too large")]
    TooLarge(String),
    /// A range not written `turn:A..turn:B`.
    #[error("{0:?} is not a reference: write a range as turn:A..turn:B")]
    RangeForm(String),
    /// A range whose first turn is after its last.
    #[error("{0:?} is an empty range: the first turn is after the last")]
    EmptyRange(String),
    /// Nothing a reference can be.
    #[error("{0:?} is not a reference; use turn:N, turn:A..turn:B, prior:N, or a rid (64 hex digits, or a unique prefix of 8 or more)")]
    Unknown(String),
    /// `turn:` and `prior:` need a stream.
    #[error("turn: and prior: references need a stream; name the stream, or use a rid")]
    NeedsStream,
    /// No span of the stream has the turn.
    #[error("turn:{turn} names no span in stream {stream}; append that span first")]
    NoTurn {
        /// The stream.
        stream: String,
        /// The turn.
        turn: u64,
    },
    /// No span of the stream lies in the range.
    #[error("turn:{first}..turn:{last} names no span in stream {stream}")]
    NoTurns {
        /// The stream.
        stream: String,
        /// The first turn.
        first: u64,
        /// The last turn.
        last: u64,
    },
    /// `prior:N` on a stream without a head summary.
    #[error("prior:{n} needs a head summary, and stream {stream} has none yet")]
    NoHead {
        /// The stream.
        stream: String,
        /// The claim index.
        n: usize,
    },
    /// `prior:N` past the head summary's claims.
    #[error("prior:{n} is out of range: the head summary of stream {stream} has {claims} claims (prior:0 to prior:{})", claims.saturating_sub(1))]
    PriorOutOfRange {
        /// The stream.
        stream: String,
        /// The claim index.
        n: usize,
        /// The head summary's claims.
        claims: usize,
    },
    /// A rid prefix that is not hex or has the wrong length.
    #[error("{0} is not a rid: give the full 64 hex digits, or a unique prefix of 8 or more")]
    NotARid(String),
}
