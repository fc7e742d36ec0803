#![forbid(unsafe_code)]
#![deny(missing_docs)]
//! cairn: an append-only, content-addressed provenance ledger for long-running LLM agents.
//!
//! Raw spans, claims and summaries are immutable records addressed by the BLAKE3 hash of
//! their canonical bytes, with hash links to their witnesses. Pins are write-once. Facts the
//! gates need (is a claim anchored in a raw span, how deep is a summary chain, what is each
//! stream's window) are derived once, at append, and stored beside the records.
//!
//! ```
//! use cairn::{Ledger, Read};
//! use cairn::record::{Claim, Origin, Role, Span};
//! # fn main() -> Result<(), cairn::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! let ledger = Ledger::open(dir.path().join("agent.redb"))?;
//! let mut batch = ledger.batch()?;
//! let said = batch.append(Span {
//!     stream: "s1".into(), turn: 212, role: Role::User, tool: None,
//!     text: "we are still on libfoo 2.3.1, do not bump.".into(),
//! })?;
//! let claim = batch.append(Claim {
//!     stream: "s1".into(), text: "libfoo stays pinned at 2.3.1".into(),
//!     origin: Origin::UserSaid, witnesses: vec![said.rid], actionable: true,
//! })?;
//! batch.commit()?;
//!
//! let snap = ledger.snapshot()?;
//! assert!(snap.facts(&claim.rid)?.unwrap().anchored);
//! assert!(snap.unanchored_claims()?.is_empty());
//! # Ok(()) }
//! ```

// The layers, bottom to top (SPEC.md section 15): a module uses only the rows above its own.
pub mod checkpoint;
mod error;
pub mod gate;
pub mod import;
pub mod ingest;
pub mod memory;
mod merkle;
pub mod record;
pub mod replay;
pub mod score;
mod store;
mod text;

pub use error::{
    CheckError, Error, ErrorKind, PolicyError, PolicyProblem, ProofError, RefError, Result,
    StorageError,
};
pub use store::{
    Appended, Batch, Discrepancy, Facts, Item, Ledger, Read, Snapshot, Standing, Storage,
    StreamState, VerifyReport, DERIVATION, MAX_LINKS,
};
pub use text::visible::{visible, visible_line};
