//! Checkpoints (C2SP tlog-checkpoint) signed as notes (C2SP signed-note) with Ed25519, the
//! proofs cairn prints, and the checks a verifier runs with or without the ledger; and the
//! Merkle log's functions (RFC 6962 / RFC 9162) they rest on.
//!
//! ```
//! use cairn::checkpoint::{Log, SignerKey};
//! use cairn::record::{Role, Span};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ledger = cairn::Ledger::in_memory()?;
//! let mut batch = ledger.batch()?;
//! let span = Span { stream: "s".into(), turn: 1, role: Role::User, tool: None,
//!                   text: "never run DROP TABLE".into() };
//! let added = batch.append(span.clone())?;
//! batch.commit()?;
//! let log = Log::new(&ledger);
//! let key = SignerKey::generate("example")?;
//! let note = log.sign(&key, None)?;
//! // Anyone with the note, the verifier key and the record's bytes checks its inclusion.
//! let checkpoint = key.verifier().open(&note)?;
//! let proof = log.prove_inclusion(added.rid, None)?;
//! proof.check(&checkpoint, &cairn::record::encode(&span.into()))?;
//! assert!(log.verify_against(&note, Some(&key.verifier())).is_ok());
//! # Ok(()) }
//! ```

use crate::error::{CheckError, ErrorKind, Result};
use crate::merkle;
pub use crate::merkle::{
    consistency, inclusion, inclusion_len, root, verify_consistency, verify_inclusion, Hash,
    MemTree, Nodes, Scheme,
};
use crate::record::Rid;
use crate::store::{Ledger, Read, StoreNodes, Trusted};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

fn fmt_err(what: &'static str, why: impl Into<String>) -> CheckError {
    CheckError::Format {
        what,
        why: why.into(),
    }
}

/// A checkpoint: the origin, the tree size and the root hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// `cairn/ledger/<ledger id>/<scheme>`.
    pub origin: String,
    /// The number of records.
    pub size: u64,
    /// The Merkle root at that size.
    pub root: Hash,
}

impl Checkpoint {
    /// The note body: origin, decimal size and base64 root, one per line.
    pub fn body(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        )
    }

    /// Parses a note body (the text before the blank line of a signed note).
    pub fn parse_body(text: &str) -> Result<Checkpoint, CheckError> {
        let mut lines = text.split('\n');
        let origin = lines
            .next()
            .filter(|o| !o.is_empty())
            .ok_or_else(|| fmt_err("the checkpoint", "it has no origin line"))?;
        let size = lines
            .next()
            .filter(|s| {
                !s.is_empty()
                    && s.bytes().all(|b| b.is_ascii_digit())
                    && (s.len() == 1 || !s.starts_with('0'))
            })
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                fmt_err(
                    "the checkpoint",
                    "its second line is not a decimal tree size",
                )
            })?;
        let root = lines
            .next()
            .and_then(|r| B64.decode(r).ok())
            .and_then(|r| Hash::try_from(r.as_slice()).ok())
            .ok_or_else(|| {
                fmt_err(
                    "the checkpoint",
                    "its third line is not a base64 32-byte root hash",
                )
            })?;
        Ok(Checkpoint {
            origin: origin.to_string(),
            size,
            root,
        })
    }
}

/// The origin line of a ledger's checkpoints.
pub fn origin_of(ledger_id: &str) -> String {
    format!("cairn/ledger/{ledger_id}/{}", Scheme::Blake3.name())
}

/// An Ed25519 signing key with its name, in the note package's text form
/// `PRIVATE+KEY+<name>+<key id hex>+<base64(0x01 || seed)>`.
pub struct SignerKey {
    /// The key's name, written in signature lines.
    pub name: String,
    key: SigningKey,
}

/// An Ed25519 verifier key: `<name>+<key id hex>+<base64(0x01 || public key)>`.
#[derive(Debug, Clone)]
pub struct VerifierKey {
    /// The key's name.
    pub name: String,
    key: VerifyingKey,
}

fn key_id(name: &str, public: &[u8; 32]) -> [u8; 4] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(name.as_bytes());
    h.update([0x0a, 0x01]);
    h.update(public);
    let d: [u8; 32] = h.finalize().into();
    [d[0], d[1], d[2], d[3]]
}

fn hex4(b: [u8; 4]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn check_name(name: &str) -> Result<(), CheckError> {
    if name.is_empty() || name.contains('+') || name.chars().any(char::is_whitespace) {
        return Err(fmt_err(
            "the key name",
            format!("{name:?} must be non-empty, without spaces or '+'"),
        ));
    }
    Ok(())
}

impl SignerKey {
    /// A new key from the operating system's random source.
    pub fn generate(name: &str) -> Result<SignerKey, CheckError> {
        check_name(name)?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| fmt_err("the random source", e.to_string()))?;
        Ok(SignerKey {
            name: name.to_string(),
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// The text form, to store in a private file.
    pub fn to_text(&self) -> String {
        let mut b = vec![0x01];
        b.extend_from_slice(&self.key.to_bytes());
        let id = key_id(&self.name, &self.key.verifying_key().to_bytes());
        format!("PRIVATE+KEY+{}+{}+{}", self.name, hex4(id), B64.encode(b))
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<SignerKey, CheckError> {
        let rest = text
            .trim()
            .strip_prefix("PRIVATE+KEY+")
            .ok_or_else(|| fmt_err("the signing key", "it does not start with PRIVATE+KEY+"))?;
        // The base64 key may itself hold '+': split the name and id off the front only.
        let parts: Vec<&str> = rest.splitn(3, '+').collect();
        let [name, id, key] = parts.as_slice() else {
            return Err(fmt_err(
                "the signing key",
                "expected PRIVATE+KEY+<name>+<id>+<key>",
            ));
        };
        let raw = B64
            .decode(key)
            .map_err(|_| fmt_err("the signing key", "its key is not base64"))?;
        let seed: [u8; 32] = match raw.as_slice() {
            [0x01, rest @ ..] => rest
                .try_into()
                .map_err(|_| fmt_err("the signing key", "its key is not 32 bytes"))?,
            _ => {
                return Err(fmt_err(
                    "the signing key",
                    "it is not an Ed25519 key (algorithm byte 0x01)",
                ))
            }
        };
        let key = SigningKey::from_bytes(&seed);
        if hex4(key_id(name, &key.verifying_key().to_bytes())) != *id {
            return Err(fmt_err(
                "the signing key",
                "its key id does not match its name and key",
            ));
        }
        Ok(SignerKey {
            name: name.to_string(),
            key,
        })
    }

    /// The matching verifier key.
    pub fn verifier(&self) -> VerifierKey {
        VerifierKey {
            name: self.name.clone(),
            key: self.key.verifying_key(),
        }
    }

    /// Signs a note body: the body, a blank line, and `— <name> <base64(key id || signature)>`.
    pub fn sign(&self, body: &str) -> String {
        let sig = self.key.sign(body.as_bytes());
        let mut b = key_id(&self.name, &self.key.verifying_key().to_bytes()).to_vec();
        b.extend_from_slice(&sig.to_bytes());
        format!("{body}\n\u{2014} {} {}\n", self.name, B64.encode(b))
    }
}

impl VerifierKey {
    /// The text form.
    pub fn to_text(&self) -> String {
        let mut b = vec![0x01];
        b.extend_from_slice(&self.key.to_bytes());
        format!(
            "{}+{}+{}",
            self.name,
            hex4(key_id(&self.name, &self.key.to_bytes())),
            B64.encode(b)
        )
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<VerifierKey, CheckError> {
        let parts: Vec<&str> = text.trim().splitn(3, '+').collect();
        let [name, id, key] = parts.as_slice() else {
            return Err(fmt_err("the verifier key", "expected <name>+<id>+<key>"));
        };
        let raw = B64
            .decode(key)
            .map_err(|_| fmt_err("the verifier key", "its key is not base64"))?;
        let public: [u8; 32] = match raw.as_slice() {
            [0x01, rest @ ..] => rest
                .try_into()
                .map_err(|_| fmt_err("the verifier key", "its key is not 32 bytes"))?,
            _ => {
                return Err(fmt_err(
                    "the verifier key",
                    "it is not an Ed25519 key (algorithm byte 0x01)",
                ))
            }
        };
        if hex4(key_id(name, &public)) != *id {
            return Err(fmt_err(
                "the verifier key",
                "its key id does not match its name and key",
            ));
        }
        let key = VerifyingKey::from_bytes(&public)
            .map_err(|e| fmt_err("the verifier key", e.to_string()))?;
        Ok(VerifierKey {
            name: name.to_string(),
            key,
        })
    }

    /// Checks a signed note and returns its checkpoint. The note must carry a signature line
    /// of this key that verifies over the body.
    pub fn open(&self, note: &str) -> Result<Checkpoint, CheckError> {
        let sig_err = |why: &str| CheckError::Signature {
            name: self.name.clone(),
            why: why.to_string(),
        };
        // A plain checkpoint where a signed one is required fails the signature check (an
        // integrity failure), not the format check: its signature was stripped or never made.
        if !note.contains("\n\n") && Checkpoint::parse_body(note).is_ok() {
            return Err(sig_err("it carries no signature at all"));
        }
        let (body, sigs) = split_note(note)?;
        let id = key_id(&self.name, &self.key.to_bytes());
        let mut seen = false;
        for line in sigs.lines() {
            let Some(rest) = line.strip_prefix("\u{2014} ") else {
                return Err(fmt_err(
                    "the signed note",
                    format!("the signature line {line:?} does not start with an em dash"),
                ));
            };
            let Some((name, b64)) = rest.split_once(' ') else {
                continue;
            };
            if name != self.name {
                continue;
            }
            let raw = B64
                .decode(b64)
                .map_err(|_| sig_err("its signature is not base64"))?;
            if raw.len() != 68 || raw[..4] != id {
                continue;
            }
            let sig = Signature::from_bytes(
                raw[4..]
                    .try_into()
                    .map_err(|_| sig_err("its signature is not 64 bytes"))?,
            );
            // Every line of this key must verify, as Go's `note.Open` requires: a valid
            // signature beside an invalid one of the same key is a forged or altered note.
            if self.key.verify_strict(body.as_bytes(), &sig).is_err() {
                return Err(sig_err(if seen {
                    "one of its signatures of this key verifies and another does not: the note was altered or forged"
                } else {
                    "the signature does not verify: the note was altered or forged"
                }));
            }
            seen = true;
        }
        if seen {
            return Checkpoint::parse_body(body);
        }
        Err(sig_err("no signature line carries this key"))
    }
}

/// Splits a signed note into its body (ending in a newline) and its signature lines.
fn split_note(note: &str) -> Result<(&str, &str), CheckError> {
    let at = note.find("\n\n").ok_or_else(|| {
        fmt_err(
            "the signed note",
            "it has no blank line before its signatures",
        )
    })?;
    Ok((&note[..=at], &note[at + 2..]))
}

/// Reads a checkpoint file: a plain body, or a signed note whose signatures are not checked
/// (use [`VerifierKey::open`] for that).
pub fn parse_unverified(text: &str) -> Result<Checkpoint, CheckError> {
    match split_note(text) {
        Ok((body, _)) => Checkpoint::parse_body(body),
        Err(_) => Checkpoint::parse_body(text),
    }
}

/// An inclusion proof as printed by `cairn prove inclusion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InclusionProof {
    /// The ledger's origin.
    pub origin: String,
    /// The leaf index (the record's log index).
    pub index: u64,
    /// The tree size the proof is for.
    pub size: u64,
    /// The leaf hash (the record's rid).
    pub leaf: Hash,
    /// The audit path.
    pub hashes: Vec<Hash>,
}

/// A consistency proof as printed by `cairn prove consistency`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyProof {
    /// The ledger's origin.
    pub origin: String,
    /// The older size.
    pub old: u64,
    /// The newer size.
    pub new: u64,
    /// The proof.
    pub hashes: Vec<Hash>,
}

fn field<'a>(
    lines: &mut impl Iterator<Item = &'a str>,
    key: &str,
    what: &'static str,
) -> Result<&'a str, CheckError> {
    lines
        .next()
        .and_then(|l| l.strip_prefix(key))
        .and_then(|l| l.strip_prefix(' '))
        .ok_or_else(|| fmt_err(what, format!("expected a line `{key} ...`")))
}

fn num(s: &str, what: &'static str) -> Result<u64, CheckError> {
    s.parse()
        .map_err(|_| fmt_err(what, format!("{s:?} is not a decimal number")))
}

fn hashes<'a>(
    lines: impl Iterator<Item = &'a str>,
    what: &'static str,
) -> Result<Vec<Hash>, CheckError> {
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            B64.decode(l)
                .ok()
                .and_then(|b| Hash::try_from(b.as_slice()).ok())
                .ok_or_else(|| fmt_err(what, format!("{l:?} is not a base64 32-byte hash")))
        })
        .collect()
}

impl InclusionProof {
    /// The text form.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "cairn inclusion proof\norigin {}\nindex {}\nsize {}\nleaf {}\n",
            self.origin,
            self.index,
            self.size,
            B64.encode(self.leaf)
        );
        for h in &self.hashes {
            s.push_str(&B64.encode(h));
            s.push('\n');
        }
        s
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<InclusionProof, CheckError> {
        const W: &str = "the inclusion proof";
        let mut lines = text.split('\n');
        if lines.next() != Some("cairn inclusion proof") {
            return Err(fmt_err(W, "its first line is not `cairn inclusion proof`"));
        }
        let origin = field(&mut lines, "origin", W)?.to_string();
        let index = num(field(&mut lines, "index", W)?, W)?;
        let size = num(field(&mut lines, "size", W)?, W)?;
        let leaf = hashes(std::iter::once(field(&mut lines, "leaf", W)?), W)?[0];
        Ok(InclusionProof {
            origin,
            index,
            size,
            leaf,
            hashes: hashes(lines, W)?,
        })
    }

    /// Checks the proof against a checkpoint and a record's canonical bytes: the record hashes
    /// to the proof's leaf, the origins and sizes agree, and the path leads to the root.
    pub fn check(&self, checkpoint: &Checkpoint, record: &[u8]) -> Result<(), CheckError> {
        if Rid::of_bytes(record).0 != self.leaf {
            return Err(CheckError::History(
                "the record's bytes do not hash to the proof's leaf".into(),
            ));
        }
        if self.origin != checkpoint.origin || self.size != checkpoint.size {
            return Err(CheckError::History(format!(
                "the proof is for {} at size {}, the checkpoint for {} at size {}",
                self.origin, self.size, checkpoint.origin, checkpoint.size
            )));
        }
        Ok(merkle::verify_inclusion(
            Scheme::Blake3,
            &self.leaf,
            self.index,
            self.size,
            &self.hashes,
            &checkpoint.root,
        )?)
    }
}

impl ConsistencyProof {
    /// The text form.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "cairn consistency proof\norigin {}\nold {}\nnew {}\n",
            self.origin, self.old, self.new
        );
        for h in &self.hashes {
            s.push_str(&B64.encode(h));
            s.push('\n');
        }
        s
    }

    /// Reads the text form.
    pub fn parse(text: &str) -> Result<ConsistencyProof, CheckError> {
        const W: &str = "the consistency proof";
        let mut lines = text.split('\n');
        if lines.next() != Some("cairn consistency proof") {
            return Err(fmt_err(
                W,
                "its first line is not `cairn consistency proof`",
            ));
        }
        let origin = field(&mut lines, "origin", W)?.to_string();
        let old = num(field(&mut lines, "old", W)?, W)?;
        let new = num(field(&mut lines, "new", W)?, W)?;
        Ok(ConsistencyProof {
            origin,
            old,
            new,
            hashes: hashes(lines, W)?,
        })
    }
}

/// The Merkle view of a ledger: checkpoints, proofs and checks against checkpoints.
pub struct Log<'a> {
    ledger: &'a Ledger,
}

/// What `verify --against` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Against {
    /// The checkpoint checked.
    pub checkpoint: Checkpoint,
    /// The ledger's size now.
    pub size: u64,
    /// The ledger's root now.
    pub root: Hash,
    /// Whether a signature was checked.
    pub signed: bool,
}

impl<'a> Log<'a> {
    /// The Merkle view of a ledger.
    pub fn new(ledger: &'a Ledger) -> Log<'a> {
        Log { ledger }
    }

    /// The origin of this ledger's checkpoints.
    pub fn origin(&self) -> Result<String> {
        Ok(origin_of(&self.ledger.id()?))
    }

    /// The checkpoint at the current size.
    pub fn checkpoint(&self) -> Result<Checkpoint> {
        let snap = self.ledger.snapshot()?;
        let size = snap.len()?;
        Ok(Checkpoint {
            origin: self.origin()?,
            size,
            root: merkle::root(&StoreNodes(&snap), size)?,
        })
    }

    /// The Merkle root of the log at an earlier (or the current) size, from the stored tree.
    pub fn root_at(&self, size: u64) -> Result<Hash> {
        let snap = self.ledger.snapshot()?;
        let len = snap.len()?;
        if size > len {
            return Err(ErrorKind::AsOf {
                asked: size,
                size: len,
            }
            .into());
        }
        merkle::root(&StoreNodes(&snap), size)
    }

    /// An inclusion proof for the record at `index` in the tree of `size` records.
    pub fn prove_inclusion(&self, rid: Rid, size: Option<u64>) -> Result<InclusionProof> {
        let snap = self.ledger.snapshot()?;
        let index = snap
            .index_of(&rid)?
            .ok_or_else(|| ErrorKind::NotFound(rid.to_hex()))?;
        let size = size.unwrap_or(snap.len()?);
        if size > snap.len()? {
            return Err(ErrorKind::AsOf {
                asked: size,
                size: snap.len()?,
            }
            .into());
        }
        Ok(InclusionProof {
            origin: self.origin()?,
            index,
            size,
            leaf: rid.0,
            hashes: merkle::inclusion(&StoreNodes(&snap), index, size)?,
        })
    }

    /// A consistency proof between two sizes.
    pub fn prove_consistency(&self, old: u64, new: u64) -> Result<ConsistencyProof> {
        let snap = self.ledger.snapshot()?;
        if new > snap.len()? {
            return Err(ErrorKind::AsOf {
                asked: new,
                size: snap.len()?,
            }
            .into());
        }
        Ok(ConsistencyProof {
            origin: self.origin()?,
            old,
            new,
            hashes: merkle::consistency(&StoreNodes(&snap), old, new)?,
        })
    }

    /// Every leaf recomputed from the stored bytes, up to `size`, as a tree in memory.
    fn recomputed<R: Read>(&self, snap: &R, size: u64) -> Result<MemTree> {
        let mut tree = MemTree::new(Scheme::Blake3);
        for i in 0..size {
            let bytes = snap.bytes_at(i)?.ok_or_else(|| ErrorKind::CorruptFile {
                path: self.ledger.path().to_path_buf(),
                detail: format!("the record at log index {i} is missing"),
            })?;
            tree.push(Rid::of_bytes(&bytes).0);
        }
        Ok(tree)
    }

    /// Signs a checkpoint at the current size with `key`, and records it as the last one
    /// signed. Refuses when the ledger is not consistent with the last checkpoint signed, or
    /// when the leaves appended since, recomputed from their stored bytes, disagree with the
    /// stored tree.
    /// `previous` is the last checkpoint this key signed for this ledger, kept outside the
    /// ledger file (the CLI keeps it beside the key), so that a ledger file rolled back to an
    /// older copy, which also rolls back the ledger's own record of signing, is still caught.
    pub fn sign(&self, key: &SignerKey, previous: Option<&Checkpoint>) -> Result<String> {
        let mut batch = self.ledger.batch()?;
        let size = batch.len()?;
        let nodes = StoreNodes(&batch);
        let stored_root = merkle::root(&nodes, size)?;
        let (last_size, last_root) = batch.last_signed()?;
        let refuse = |why: String| -> crate::error::Error {
            ErrorKind::Check(CheckError::History(format!("refusing to sign: {why}"))).into()
        };
        let origin = self.origin()?;
        let (last_size, last_root) = match previous.filter(|p| p.origin == origin) {
            Some(p) if p.size >= last_size => (p.size, Some(p.root)),
            _ => (last_size, last_root),
        };
        if size < last_size {
            return Err(refuse(format!("the ledger holds {size} records, fewer than the {last_size} of the last checkpoint signed: it was rolled back")));
        }
        // Recompute every leaf appended since the last signature from its stored bytes.
        let mut tree = MemTree::new(Scheme::Blake3);
        for i in 0..size {
            let leaf = if i < last_size {
                nodes.node(0, i)?
            } else {
                let bytes = batch.bytes_at(i)?.unwrap_or_default();
                let leaf = Rid::of_bytes(&bytes).0;
                if leaf != nodes.node(0, i)? {
                    return Err(refuse(format!(
                        "the record at log index {i} no longer hashes to its logged rid"
                    )));
                }
                leaf
            };
            tree.push(leaf);
        }
        let fresh_root = merkle::root(&tree, size)?;
        if fresh_root != stored_root {
            return Err(refuse(
                "the stored tree disagrees with the leaves recomputed from the records".into(),
            ));
        }
        if let Some(last_root) = last_root {
            let proof = merkle::consistency(&nodes, last_size, size)?;
            merkle::verify_consistency(
                Scheme::Blake3,
                last_size,
                size,
                &proof,
                &last_root,
                &stored_root,
            )
            .map_err(|e| {
                refuse(format!(
                    "the ledger is not consistent with the last checkpoint signed ({e})"
                ))
            })?;
        }
        let body = Checkpoint {
            origin,
            size,
            root: stored_root,
        }
        .body();
        batch.record_signed(size, stored_root)?;
        batch.commit()?;
        Ok(key.sign(&body))
    }

    /// Checks that the ledger still holds the history of a checkpoint: the same origin, at
    /// least its size, the same root at its size (recomputed from the stored bytes), and a
    /// consistency proof from it to the current tree. With a key, the signature must verify.
    pub fn verify_against(&self, text: &str, key: Option<&VerifierKey>) -> Result<Against> {
        let checkpoint = match key {
            Some(k) => k.open(text).map_err(ErrorKind::Check)?,
            None => parse_unverified(text).map_err(ErrorKind::Check)?,
        };
        let history = |why: String| -> crate::error::Error {
            ErrorKind::Check(CheckError::History(why)).into()
        };
        let origin = self.origin()?;
        if checkpoint.origin != origin {
            return Err(history(format!(
                "the checkpoint is for {}, and this ledger is {origin}: another ledger, or a fork",
                checkpoint.origin
            )));
        }
        let snap = self.ledger.snapshot()?;
        let size = snap.len()?;
        if size < checkpoint.size {
            return Err(history(format!(
                "rollback: the checkpoint covers {} records and the ledger now holds {size}",
                checkpoint.size
            )));
        }
        let tree = self.recomputed(&snap, size)?;
        let then = merkle::root(&tree, checkpoint.size)?;
        if then != checkpoint.root {
            return Err(history(format!(
                "fork or rewrite: at size {} the ledger's records give root {}, and the checkpoint says {}",
                checkpoint.size,
                B64.encode(then),
                B64.encode(checkpoint.root)
            )));
        }
        let now = merkle::root(&tree, size)?;
        let stored = merkle::root(&StoreNodes(&snap), size)?;
        if stored != now {
            return Err(history("the stored tree disagrees with the leaves recomputed from the records; verify the ledger to find the damaged records".into()));
        }
        let proof = merkle::consistency(&StoreNodes(&snap), checkpoint.size, size)?;
        merkle::verify_consistency(
            Scheme::Blake3,
            checkpoint.size,
            size,
            &proof,
            &checkpoint.root,
            &now,
        )
        .map_err(|e| {
            history(format!(
                "the consistency proof from size {} fails: {e}",
                checkpoint.size
            ))
        })?;
        Ok(Against {
            checkpoint,
            size,
            root: now,
            signed: key.is_some(),
        })
    }
}
