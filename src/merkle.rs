//! A Merkle log over the append order, in the shape of RFC 6962 and RFC 9162:
//! leaf = H(0x00 || record bytes) (which is the record's rid), node = H(0x01 || left || right),
//! and a tree of n leaves splits at the largest power of two below n.
//!
//! The ledger stores the hash of every perfect subtree when its last leaf is appended, so the
//! root at any size, an inclusion proof and a consistency proof each read O(log n) nodes. The
//! same code runs with SHA-256 to reproduce RFC 6962's known answers.

use crate::error::{ProofError, Result};

/// A 32-byte hash.
pub type Hash = [u8; 32];

/// The hash function under the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// BLAKE3, the ledger's scheme: the leaf hash is the record's rid.
    Blake3,
    /// SHA-256, RFC 6962's own, for known-answer tests.
    Sha256,
}

fn sha256(parts: &[&[u8]]) -> Hash {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn blake3(parts: &[&[u8]]) -> Hash {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(p);
    }
    *h.finalize().as_bytes()
}

impl Scheme {
    fn hash(self, parts: &[&[u8]]) -> Hash {
        match self {
            Scheme::Blake3 => blake3(parts),
            Scheme::Sha256 => sha256(parts),
        }
    }

    /// The leaf hash of some data: H(0x00 || data).
    pub fn leaf(self, data: &[u8]) -> Hash {
        self.hash(&[&[0x00], data])
    }

    /// An interior node: H(0x01 || left || right).
    pub fn node(self, left: &[u8], right: &[u8]) -> Hash {
        self.hash(&[&[0x01], left, right])
    }

    /// The root of the empty tree: H() of no input, as RFC 6962 defines it.
    pub fn empty(self) -> Hash {
        self.hash(&[])
    }

    /// The name used in checkpoint origins.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Blake3 => "blake3-rfc6962",
            Scheme::Sha256 => "sha256-rfc6962",
        }
    }
}

/// The seal on [`Nodes`]: only the ledger's stored tree and [`MemTree`] give subtree hashes.
pub(crate) mod sealed {
    /// Implemented by the crate's own trees only.
    pub trait Sealed {}
}

/// Where perfect-subtree hashes come from: `node(level, index)` is the hash of leaves
/// `index * 2^level .. (index + 1) * 2^level`, asked only for subtrees that are complete.
/// Sealed: the ledger's stored tree and [`MemTree`] implement it.
pub trait Nodes: sealed::Sealed {
    /// The hash function.
    fn scheme(&self) -> Scheme;
    /// A perfect subtree's hash.
    fn node(&self, level: u32, index: u64) -> Result<Hash>;
}

fn largest_power_below(n: u64) -> u64 {
    // The largest power of two strictly below n, for n >= 2.
    1u64 << (63 - (n - 1).leading_zeros())
}

/// The hash of leaves `start..end`, from perfect subtrees: O(log n) reads.
fn range_hash<N: Nodes + ?Sized>(t: &N, start: u64, end: u64) -> Result<Hash> {
    let len = end - start;
    if len == 0 {
        return Ok(t.scheme().empty());
    }
    if len.is_power_of_two() && start.is_multiple_of(len) {
        let level = len.trailing_zeros();
        return t.node(level, start >> level);
    }
    let k = largest_power_below(len);
    let left = range_hash(t, start, start + k)?;
    let right = range_hash(t, start + k, end)?;
    Ok(t.scheme().node(&left, &right))
}

/// The root of the tree of the first `size` leaves.
pub fn root<N: Nodes + ?Sized>(t: &N, size: u64) -> Result<Hash> {
    range_hash(t, 0, size)
}

/// The audit path of leaf `index` in the tree of `size` leaves (RFC 6962 PATH).
pub fn inclusion<N: Nodes + ?Sized>(t: &N, index: u64, size: u64) -> Result<Vec<Hash>> {
    if index >= size {
        return Err(ProofError::Leaf { index, size }.into());
    }
    let mut out = Vec::new();
    let (mut start, mut end) = (0, size);
    let mut siblings = Vec::new();
    while end - start > 1 {
        let k = largest_power_below(end - start);
        if index < start + k {
            siblings.push((start + k, end));
            end = start + k;
        } else {
            siblings.push((start, start + k));
            start += k;
        }
    }
    for (a, b) in siblings.into_iter().rev() {
        out.push(range_hash(t, a, b)?);
    }
    Ok(out)
}

/// The proof that the tree of `old` leaves is a prefix of the tree of `new` leaves
/// (RFC 6962 PROOF). Empty when `old` is 0 or equal to `new`.
pub fn consistency<N: Nodes + ?Sized>(t: &N, old: u64, new: u64) -> Result<Vec<Hash>> {
    if old > new {
        return Err(ProofError::NotPrefix { old, new }.into());
    }
    if old == 0 || old == new {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let (mut m, mut start, mut end, mut whole) = (old, 0u64, new, true);
    let mut pending = Vec::new();
    loop {
        let n = end - start;
        if m == n {
            if !whole {
                pending.push((start, end));
            }
            break;
        }
        let k = largest_power_below(n);
        if m <= k {
            pending.push((start + k, end));
            end = start + k;
        } else {
            pending.push((start, start + k));
            start += k;
            m -= k;
            whole = false;
        }
    }
    for (a, b) in pending.into_iter().rev() {
        out.push(range_hash(t, a, b)?);
    }
    Ok(out)
}

/// Checks an inclusion proof (RFC 9162 section 2.1.3.2).
pub fn verify_inclusion(
    scheme: Scheme,
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::Leaf { index, size });
    }
    let want = inclusion_len(index, size);
    if proof.len() != want {
        return Err(ProofError::Length {
            got: proof.len(),
            want,
        });
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return Err(ProofError::Length {
                got: proof.len(),
                want,
            });
        }
        if f & 1 == 1 || f == s {
            r = scheme.node(p, &r);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            r = scheme.node(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 || r != *root {
        return Err(ProofError::Mismatch { what: "root" });
    }
    Ok(())
}

/// The number of hashes in an inclusion proof.
pub fn inclusion_len(index: u64, size: u64) -> usize {
    if index >= size {
        return 0;
    }
    let inner = 64 - (index ^ (size - 1)).leading_zeros();
    let border = (index >> inner).count_ones();
    (inner + border) as usize
}

/// Checks a consistency proof (RFC 9162 section 2.1.4.2). The empty tree is a prefix of every
/// tree: from size 0 the proof must be empty. Between equal sizes the proof must be empty and
/// the roots equal.
pub fn verify_consistency(
    scheme: Scheme,
    old: u64,
    new: u64,
    proof: &[Hash],
    old_root: &Hash,
    new_root: &Hash,
) -> Result<(), ProofError> {
    if old > new {
        return Err(ProofError::NotPrefix { old, new });
    }
    if old == 0 || old == new {
        if !proof.is_empty() {
            return Err(ProofError::Length {
                got: proof.len(),
                want: 0,
            });
        }
        if old == new && old_root != new_root {
            return Err(ProofError::Mismatch { what: "root" });
        }
        return Ok(());
    }
    if proof.is_empty() {
        return Err(ProofError::Length { got: 0, want: 1 });
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(*old_root);
    }
    path.extend_from_slice(proof);
    let (mut f, mut s) = (old - 1, new - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (path[0], path[0]);
    for c in &path[1..] {
        if s == 0 {
            return Err(ProofError::Length {
                got: proof.len(),
                want: proof.len() - 1,
            });
        }
        if f & 1 == 1 || f == s {
            fr = scheme.node(c, &fr);
            sr = scheme.node(c, &sr);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            sr = scheme.node(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::Length {
            got: proof.len(),
            want: proof.len() + 1,
        });
    }
    if fr != *old_root {
        return Err(ProofError::Mismatch { what: "old root" });
    }
    if sr != *new_root {
        return Err(ProofError::Mismatch { what: "new root" });
    }
    Ok(())
}

/// A tree held in memory, for verifiers and tests: every perfect subtree's hash.
#[derive(Debug, Clone)]
pub struct MemTree {
    scheme: Scheme,
    levels: Vec<Vec<Hash>>,
}

impl MemTree {
    /// An empty tree.
    pub fn new(scheme: Scheme) -> MemTree {
        MemTree {
            scheme,
            levels: vec![Vec::new()],
        }
    }

    /// Appends a leaf hash, completing every perfect subtree it closes.
    pub fn push(&mut self, leaf: Hash) {
        let mut h = leaf;
        let mut level = 0;
        loop {
            self.levels[level].push(h);
            let i = self.levels[level].len() - 1;
            if i.is_multiple_of(2) {
                break;
            }
            h = self.scheme.node(&self.levels[level][i - 1], &h);
            level += 1;
            if self.levels.len() == level {
                self.levels.push(Vec::new());
            }
        }
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.levels[0].len() as u64
    }
}

impl sealed::Sealed for MemTree {}

impl Nodes for MemTree {
    fn scheme(&self) -> Scheme {
        self.scheme
    }

    fn node(&self, level: u32, index: u64) -> Result<Hash> {
        self.levels
            .get(level as usize)
            .and_then(|l| l.get(index as usize))
            .copied()
            .ok_or_else(|| ProofError::MissingNode { level, index }.into())
    }
}
