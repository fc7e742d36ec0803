//! Forensic replay from the records alone, without re-running any model: `why` (a claim's
//! derivation down to the raw spans, and where its provenance was lost) and `replay` (a
//! stream, boundary by boundary), with the HTML report and the record graph as outputs.
//!
//! ```
//! use cairn::{gate::Gatekeeper, ingest, replay, Ledger, Read};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ledger = Ledger::in_memory()?;
//! let mut batch = ledger.batch()?;
//! let lines = [
//!     r#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"I think the staging DB is on port 5433."}"#,
//!     r#"{"kind":"summary","stream":"s","author":"self","budget":100,"covers":["turn:1"],"evicts":[],"claims":[{"text":"staging DB port is 5433","origin":"user-said","witnesses":["turn:1"]}]}"#,
//! ];
//! for (i, line) in lines.iter().enumerate() {
//!     ingest::apply_line(&mut batch, &Gatekeeper::default(), i as u64 + 1, line.as_bytes())?;
//! }
//! batch.commit()?;
//! let snap = ledger.snapshot()?;
//! let claim = snap.head("s")?.and_then(|h| match snap.get(&h).ok()? {
//!     Some(cairn::record::Record::Summary(s)) => s.claims.first().copied(),
//!     _ => None,
//! }).expect("the admitted summary's claim");
//! let why = replay::why(&snap, claim)?;
//! assert_eq!(why.losses[0].gate, cairn::gate::Gate::HedgeStripped);
//! assert_eq!(replay::replay(&snap, "s")?.boundaries.len(), 1);
//! # Ok(()) }
//! ```

mod graph;
mod report;

pub use graph::{dot, records};
pub use report::html;

use crate::error::{not_a, ErrorKind, Result};
use crate::gate::rules::{self, FoundBy, Grounding, Witness};
use crate::gate::view::View;
use crate::record::{
    score_to_unit, Claim, Finding, Gate, Kind, Record, Rid, Span, Status, Summary, Verdict,
};
use crate::store::{Read, Trusted};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// How a node of a derivation tree was reached from its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// The claim asked about.
    Root,
    /// A direct witness.
    Witness,
    /// A claim that summary `boundary` (1-based, of its stream) carried.
    Carried {
        /// The summary.
        summary: Rid,
        /// Its position among the stream's boundaries.
        boundary: usize,
    },
    /// A raw span a reground checked the claim against.
    Regrounded {
        /// The reground record.
        reground: Rid,
    },
}

impl Hop {
    fn label(&self) -> String {
        match self {
            Hop::Root => "claim".into(),
            Hop::Witness => "witness".into(),
            Hop::Carried { boundary, .. } => format!("carried from summary {boundary}"),
            Hop::Regrounded { .. } => "re-grounded".into(),
        }
    }
}

/// One node of a derivation tree.
#[derive(Debug, Clone)]
pub struct Node {
    /// The record.
    pub rid: Rid,
    /// Its log index.
    pub index: u64,
    /// How it was reached.
    pub hop: Hop,
    /// "claim" or "span".
    pub kind: Kind,
    /// Its text.
    pub text: String,
    /// For a span: its turn and role; for a claim: its origin tag.
    pub detail: String,
    /// For a claim: its status; for a span: "raw" or "evicted by summary N".
    pub status: String,
    /// How far below the root it hangs: the root is at depth 0.
    pub depth: usize,
    /// The position in [`Why::nodes`] of the node it rests under; `None` for the root.
    pub parent: Option<usize>,
    /// Set when the node was already shown higher in the tree.
    pub repeated: bool,
}

/// A point where provenance was lost.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loss {
    /// The log index where it happened (the verdict, or the claim's append).
    pub index: u64,
    /// The gate that describes it.
    pub gate: Gate,
    /// The claim concerned.
    pub claim: Rid,
    /// What happened.
    pub detail: String,
}

/// A claim's derivation and where its provenance was lost.
#[derive(Debug, Clone)]
pub struct Why {
    /// The tree in preorder, flat: the claim first, then each node before what it rests on,
    /// each with its depth and parent. Flat, so a chain 100,000 claims deep costs memory in
    /// proportion to its length and no recursion to walk.
    pub nodes: Vec<Node>,
    /// Every loss found, earliest first.
    pub losses: Vec<Loss>,
}

/// How deep the nested `tree` of `why --json` and the indentation of `why`'s text go; deeper
/// nodes are in `nodes` and in the text, marked with their depth (SPEC.md section 10.1).
pub const SHOWN_DEPTH: usize = 48;

/// A node and what it rests on, each with the hop that reaches it.
pub(crate) type Expanded = (Node, Vec<(Rid, Hop)>);

/// Boundaries (admitted or refused summaries) of a stream, in log order, numbered from 1.
fn boundaries<R: Read>(read: &R, stream: &str) -> Result<Vec<(Rid, u64, Summary)>> {
    let mut out = Vec::new();
    for rid in read.of_kind(Kind::Summary)? {
        match read.named(&rid, "by_kind")? {
            Record::Summary(s) if s.stream == stream => {
                let index = read.index_of(&rid)?.unwrap_or_default();
                out.push((rid, index, s));
            }
            Record::Summary(_) => {}
            _ => {
                return Err(ErrorKind::CorruptFile {
                    path: "by_kind table".into(),
                    detail: format!("{rid} is listed as a summary and is not one"),
                }
                .into())
            }
        }
    }
    // The kind index and the stream's count are two structures: they must agree.
    let counted = read.stream(stream)?.proposals;
    if counted != out.len() as u64 {
        return Err(ErrorKind::CorruptFile {
            path: "by_kind table".into(),
            detail: format!(
                "stream {stream} counts {counted} summaries, the kind index lists {}",
                out.len()
            ),
        }
        .into());
    }
    Ok(out)
}

fn verdict_of<R: Read>(read: &R, subject: &Rid) -> Result<Option<(u64, Verdict)>> {
    let Some(v) = read.verdict_of(subject)? else {
        return Ok(None);
    };
    let index = read.index_of(&v)?.unwrap_or_default();
    match read.named(&v, "verdicts")? {
        Record::Verdict(v) if v.subject == *subject => Ok(Some((index, v))),
        _ => Err(ErrorKind::CorruptFile {
            path: "verdicts table".into(),
            detail: format!("the verdict of {subject} names {v}, which is not its verdict"),
        }
        .into()),
    }
}

/// Reads for one `why`, each made once: a derivation visits the same records, reverse
/// links and kinds from several sides.
struct Walker<'a, R: Read> {
    read: &'a R,
    seen: HashSet<Rid>,
    claims: Vec<(u64, Rid)>,
    records: HashMap<Rid, Option<(u64, Rc<Record>)>>,
    dependents: HashMap<Rid, Rc<Vec<Rid>>>,
    kinds: HashMap<Rid, Option<Kind>>,
    regrounded: HashMap<Rid, Option<Rid>>,
    ancestors: HashMap<Rid, Rc<Vec<Rid>>>,
}

impl<'a, R: Read> Walker<'a, R> {
    fn new(read: &'a R) -> Self {
        Walker {
            read,
            seen: HashSet::new(),
            claims: Vec::new(),
            records: HashMap::new(),
            dependents: HashMap::new(),
            kinds: HashMap::new(),
            regrounded: HashMap::new(),
            ancestors: HashMap::new(),
        }
    }

    /// The latest reground of a claim.
    fn regrounded(&mut self, claim: &Rid) -> Result<Option<Rid>> {
        if let Some(hit) = self.regrounded.get(claim) {
            return Ok(*hit);
        }
        let g = self.read.regrounded(claim)?;
        self.regrounded.insert(*claim, g);
        Ok(g)
    }

    /// A claim's status from the records alone, the one every view shows
    /// ([`Read::standing`]).
    fn standing(&mut self, claim: &Rid) -> Result<crate::store::Standing> {
        self.read.standing(claim)
    }

    /// A record and its log index.
    fn record(&mut self, rid: &Rid) -> Result<Option<(u64, Rc<Record>)>> {
        if let Some(hit) = self.records.get(rid) {
            return Ok(hit.clone());
        }
        // Every rid walked is a link of a record, and links point only to records in the log:
        // one that is not there is damage.
        let found = match self.read.index_of(rid)? {
            Some(i) => self.read.trusted_at(*rid, i)?.map(|r| (i, Rc::new(r))),
            None => return Err(crate::store::missing(*rid, "rids").into()),
        };
        self.records.insert(*rid, found.clone());
        Ok(found)
    }

    /// The records that link to `rid`.
    fn dependents(&mut self, rid: &Rid) -> Result<Rc<Vec<Rid>>> {
        if let Some(hit) = self.dependents.get(rid) {
            return Ok(Rc::clone(hit));
        }
        let deps = Rc::new(self.read.dependents(rid)?);
        self.dependents.insert(*rid, Rc::clone(&deps));
        Ok(deps)
    }

    /// A record's kind, from its header byte unless it was read whole already.
    fn kind(&mut self, rid: &Rid) -> Result<Option<Kind>> {
        if let Some(Some((_, r))) = self.records.get(rid) {
            return Ok(Some(r.kind()));
        }
        if let Some(hit) = self.kinds.get(rid) {
            return Ok(*hit);
        }
        let kind = self.read.kind_of(rid)?;
        if kind.is_none() {
            return Err(crate::store::missing(*rid, "rids").into());
        }
        self.kinds.insert(*rid, kind);
        Ok(kind)
    }

    /// A claim's direct witnesses that are spans or claims, in order, as read for the tree.
    fn witnesses(&mut self, claim: &Claim) -> Result<Vec<Rc<Record>>> {
        let mut out = Vec::new();
        for w in &claim.witnesses {
            if let Some((_, r)) = self.record(w)? {
                if matches!(*r, Record::Span(_) | Record::Claim(_)) {
                    out.push(r);
                }
            }
        }
        Ok(out)
    }

    /// The raw spans reachable from a claim through witnesses, each once (as the gate's
    /// ancestry finds them), from the records already read; remembered per claim, since the
    /// claims of one tree share their ancestors. Walked with a stack, not recursion, so a
    /// chain of any depth is safe: a claim's witnesses are done before the claim.
    fn raw_ancestors(&mut self, claim: Rid) -> Result<Rc<Vec<Rid>>> {
        let mut todo = vec![(claim, false)];
        while let Some((c, witnesses_done)) = todo.pop() {
            if !witnesses_done {
                if self.ancestors.contains_key(&c) {
                    continue;
                }
                // Mark the claim first, so a claim reached again on the way counts as having
                // none (content addressing leaves no cycle to reach it by).
                self.ancestors.insert(c, Rc::new(Vec::new()));
                todo.push((c, true));
                for w in self.claim_witnesses(&c)? {
                    if self.kind(&w)? == Some(Kind::Claim) && !self.ancestors.contains_key(&w) {
                        todo.push((w, false));
                    }
                }
                continue;
            }
            let mut out = Vec::new();
            for w in self.claim_witnesses(&c)? {
                match self.kind(&w)? {
                    Some(Kind::Span) => out.push(w),
                    Some(Kind::Claim) => {
                        if let Some(up) = self.ancestors.get(&w) {
                            out.extend(up.iter());
                        }
                    }
                    _ => {}
                }
            }
            out.sort_unstable();
            out.dedup();
            self.ancestors.insert(c, Rc::new(out));
        }
        Ok(self.ancestors.get(&claim).cloned().unwrap_or_default())
    }

    /// The witnesses a claim names; none for another record or none at all.
    fn claim_witnesses(&mut self, rid: &Rid) -> Result<Vec<Rid>> {
        Ok(match self.record(rid)? {
            Some((_, rec)) => match &*rec {
                Record::Claim(c) => c.witnesses.clone(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        })
    }

    /// The first admitted summary that held a claim, and its boundary number: read from the
    /// claim's reverse links, not by scanning the stream.
    fn carrier(&mut self, claim: &Rid) -> Result<Option<(usize, Rid)>> {
        let mut best: Option<(usize, Rid)> = None;
        for dep in self.dependents(claim)?.iter() {
            if self.kind(dep)? != Some(Kind::Summary) || !self.read.admitted(dep)? {
                continue;
            }
            let n = self.read.ordinal(dep)?.unwrap_or(0) as usize;
            if best.is_none_or(|(b, _)| n < b) {
                best = Some((n, *dep));
            }
        }
        Ok(best)
    }

    /// "turn 12, user", and where the span came from when it was imported: "turn 12, user,
    /// session.jsonl line 34 (message 5e1f..., 2025-06-01T10:00:00Z)".
    fn place_detail(&self, rid: &Rid, span: &Span) -> Result<String> {
        let mut detail = format!("turn {}, {}", span.turn, span.role.name());
        if let Some(p) = self.read.place(rid)? {
            detail.push_str(&format!(", {}", p.log));
            if let Some(line) = p.line {
                detail.push_str(&format!(" line {line}"));
            }
            let about: Vec<String> = [p.message.map(|m| format!("message {m}")), p.timestamp]
                .into_iter()
                .flatten()
                .collect();
            if !about.is_empty() {
                detail.push_str(&format!(" ({})", about.join(", ")));
            }
        }
        Ok(detail)
    }

    fn span_node(&mut self, rid: Rid, index: u64, hop: Hop, span: &Span) -> Result<Node> {
        let status = match self.read.evicted_by(&rid)? {
            Some(s) => format!(
                "raw, evicted by summary {}",
                self.read.ordinal(&s)?.unwrap_or(0)
            ),
            None => "raw, in the window".to_string(),
        };
        Ok(Node {
            rid,
            index,
            hop,
            kind: Kind::Span,
            text: span.text.clone(),
            detail: self.place_detail(&rid, span)?,
            status,
            depth: 0,
            parent: None,
            repeated: false,
        })
    }

    /// A span or claim as a node (at depth 0, without a parent), with what it rests on: a
    /// claim's span and claim witnesses, each with its hop, then the spans of its latest
    /// reground. `None` for a record of another kind or no record.
    fn expand(&mut self, rid: Rid, hop: Hop) -> Result<Option<Expanded>> {
        let Some((index, rec)) = self.record(&rid)? else {
            return Ok(None);
        };
        let c = match &*rec {
            Record::Span(s) => return Ok(Some((self.span_node(rid, index, hop, s)?, Vec::new()))),
            Record::Claim(c) => c,
            _ => return Ok(None),
        };
        let standing = self.standing(&rid)?;
        let mut detail = c.origin.tag().unwrap_or("no origin").to_string();
        if let Some(summary) = standing.refused_by {
            let n = self.read.ordinal(&summary)?.unwrap_or(0);
            detail.push_str(&format!("; only in refused summary {n}"));
        }
        let node = Node {
            rid,
            index,
            hop,
            kind: Kind::Claim,
            text: c.text.clone(),
            detail,
            status: standing.status.name().to_string(),
            depth: 0,
            parent: None,
            repeated: false,
        };
        let mut under = Vec::new();
        for w in &c.witnesses {
            match self.kind(w)? {
                Some(Kind::Span) => under.push((*w, Hop::Witness)),
                Some(Kind::Claim) => {
                    let hop = match self.carrier(w)? {
                        Some((boundary, summary)) => Hop::Carried { summary, boundary },
                        None => Hop::Witness,
                    };
                    under.push((*w, hop));
                }
                _ => {}
            }
        }
        if let Some(g) = self.regrounded(&rid)? {
            if let Some((_, r)) = self.record(&g)? {
                if let Record::Reground(r) = &*r {
                    for sp in &r.spans {
                        if self.kind(sp)? == Some(Kind::Span) {
                            under.push((*sp, Hop::Regrounded { reground: g }));
                        }
                    }
                }
            }
        }
        Ok(Some((node, under)))
    }

    /// The derivation tree of a claim in preorder, built with a stack rather than recursion;
    /// a claim met again is shown once more, marked repeated, without what it rests on. Each
    /// claim shown in full is added to `self.claims`.
    fn tree(&mut self, root: Rid) -> Result<Vec<Node>> {
        let mut nodes: Vec<Node> = Vec::new();
        let mut todo = vec![(root, Hop::Root, 0usize, None)];
        while let Some((rid, hop, depth, parent)) = todo.pop() {
            let Some((mut node, under)) = self.expand(rid, hop)? else {
                continue;
            };
            node.depth = depth;
            node.parent = parent;
            if node.kind == Kind::Claim {
                node.repeated = !self.seen.insert(rid);
                if !node.repeated {
                    self.claims.push((node.index, rid));
                    let me = Some(nodes.len());
                    // Reversed onto the stack, so they come off in the claim's own order.
                    for (r, h) in under.into_iter().rev() {
                        todo.push((r, h, depth + 1, me));
                    }
                }
            }
            nodes.push(node);
        }
        Ok(nodes)
    }
}

/// The losses of one `why`, each (gate, claim) once.
#[derive(Default)]
struct Losses {
    found: Vec<Loss>,
    seen: HashSet<(Gate, Rid, Option<Rid>)>,
}

impl Losses {
    /// Adds a loss unless the same gate was reported on the claim (for the same evicted span).
    fn push(&mut self, index: u64, claim: Rid, f: Finding, detail: String, span: Option<Rid>) {
        if self.seen.insert((f.gate, claim, span)) {
            self.found.push(Loss {
                index,
                gate: f.gate,
                claim,
                detail,
            });
        }
    }
}

/// The gates whose findings on a claim tell how its provenance was lost.
const LOSSES: &[Gate] = &[
    Gate::UnanchoredClaim,
    Gate::LaunderedClaim,
    Gate::HedgeStripped,
    Gate::IdentifierDrift,
    Gate::EvictedDisconfirmer,
    Gate::EvictedClash,
    Gate::FabricatedClaim,
    Gate::OriginMismatch,
];

/// A claim's derivation tree down to the raw spans, each hop labelled, and every point where
/// its provenance was lost, earliest first: what the gates recorded when they admitted the
/// claims of the tree, and, for claims no gate judged, the gates' own rules applied to the
/// records. A re-grounding after a loss restores the claim's provenance, except for an
/// identifier that no raw span holds.
pub fn why<R: Read>(read: &R, claim: Rid) -> Result<Why> {
    let mut w = Walker::new(read);
    let found = w.record(&claim)?.map(|(_, r)| r.kind());
    if found != Some(Kind::Claim) {
        return Err(not_a(claim, Kind::Claim, found));
    }
    let nodes = w.tree(claim)?;
    let mut claims = std::mem::take(&mut w.claims);
    claims.sort();
    let losses = losses_of(&mut w, &claims)?;
    Ok(Why { nodes, losses })
}

/// Every loss of these claims (index order), earliest first, less those a later re-grounding
/// of the claim healed. Each loss belongs to one claim and depends on nothing above it, so
/// the losses of a tree are the union of its claims' own.
fn losses_of<R: Read>(w: &mut Walker<'_, R>, claims: &[(u64, Rid)]) -> Result<Vec<Loss>> {
    let read = w.read;
    let mut losses = Losses::default();
    recorded_losses(w, claims, &mut losses)?;
    for (index, cl) in claims {
        unjudged_losses(w, *index, *cl, &mut losses)?;
    }
    evicted_losses(&mut View::new(read), claims, &mut losses)?;
    let mut kept = Vec::new();
    for l in losses.found {
        let healed = match w.regrounded(&l.claim)? {
            Some(g) => read.index_of(&g)?.is_some_and(|i| i > l.index),
            None => false,
        };
        if !healed || l.gate == Gate::IdentifierDrift {
            kept.push(l);
        }
    }
    kept.sort();
    Ok(kept)
}

/// The lineage of many claims at once, each record once: what the HTML report draws.
pub(crate) struct Lineage {
    /// Every claim and span the claims rest on, and the claims themselves, each once in log
    /// order (depth 0, no parent), with what it rests on.
    pub nodes: Vec<Expanded>,
    /// Each claim's first loss over its whole tree, for the claims that have one.
    pub first_loss: HashMap<Rid, Loss>,
}

/// [`Lineage`] of the given claims: one walk over everything they rest on, and each claim's
/// first loss from its own losses and its witnesses' first losses, in log order (a witness
/// is always older than the claim citing it). Linear in the records reached, where a `why`
/// of each claim would be quadratic on a deep chain.
pub(crate) fn lineage<R: Read>(read: &R, roots: &[Rid]) -> Result<Lineage> {
    let mut w = Walker::new(read);
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    let mut todo: Vec<(Rid, Hop)> = roots.iter().map(|r| (*r, Hop::Root)).collect();
    while let Some((rid, hop)) = todo.pop() {
        if !seen.insert(rid) {
            continue;
        }
        if let Some((node, under)) = w.expand(rid, hop)? {
            todo.extend(under.iter().cloned());
            nodes.push((node, under));
        }
    }
    nodes.sort_by_key(|(n, _)| n.index);
    let claims: Vec<(u64, Rid)> = (nodes.iter())
        .filter(|(n, _)| n.kind == Kind::Claim)
        .map(|(n, _)| (n.index, n.rid))
        .collect();
    let mut first_loss: HashMap<Rid, Loss> = HashMap::new();
    for l in losses_of(&mut w, &claims)? {
        first_loss.entry(l.claim).or_insert(l);
    }
    for (n, under) in &nodes {
        if n.kind != Kind::Claim {
            continue;
        }
        let below = (under.iter()).filter_map(|(r, _)| first_loss.get(r));
        if let Some(first) = below.chain(first_loss.get(&n.rid)).min().cloned() {
            first_loss.insert(n.rid, first);
        }
    }
    Ok(Lineage { nodes, first_loss })
}

/// What the gates recorded about these claims in admitted verdicts: refused proposals never
/// took effect, so only admitted verdicts tell the history.
fn recorded_losses<R: Read>(
    w: &mut Walker<'_, R>,
    claims: &[(u64, Rid)],
    losses: &mut Losses,
) -> Result<()> {
    for (_, cl) in claims {
        for dep in w.dependents(cl)?.iter() {
            if w.kind(dep)? != Some(Kind::Verdict) {
                continue;
            }
            let Some((index, v)) = w.record(dep)? else {
                continue;
            };
            let Record::Verdict(v) = &*v else {
                continue;
            };
            if !v.admitted {
                continue;
            }
            for f in v.findings.iter().filter(|f| f.subject == *cl) {
                if LOSSES.contains(&f.gate) {
                    let detail = format!("{} (admitted at log index {index})", f.detail);
                    losses.push(index, *cl, f.clone(), detail, None);
                }
            }
        }
    }
    Ok(())
}

/// The gates' claim rules applied to a claim as it was appended: unanchored or laundered,
/// hedge-stripped, identifier drift. A claim a gate judged has those findings recorded
/// already, and the same (gate, claim) is reported once.
fn unjudged_losses<R: Read>(
    w: &mut Walker<'_, R>,
    index: u64,
    rid: Rid,
    losses: &mut Losses,
) -> Result<()> {
    let Some((_, rec)) = w.record(&rid)? else {
        return Ok(());
    };
    let Record::Claim(claim) = &*rec else {
        return Ok(());
    };
    let direct = w.witnesses(claim)?;
    let rests_on_raw = direct.iter().any(|r| matches!(**r, Record::Span(_)));
    let witnesses: Vec<Witness<'_>> = direct.iter().filter_map(|r| Witness::of(r)).collect();
    let ancestors = w.raw_ancestors(rid)?;
    // Anchored means a raw span is reachable through witnesses: the ancestors just found.
    let grounding = Grounding {
        anchored: !ancestors.is_empty(),
        regrounded: w.regrounded(&rid)?.is_some(),
    };
    let mut spans = Vec::new();
    for a in ancestors.iter() {
        spans.extend(w.record(a)?.map(|(_, r)| r));
    }
    let raw: Vec<&str> = (spans.iter())
        .filter_map(|r| match &**r {
            Record::Span(s) => Some(s.text.as_str()),
            _ => None,
        })
        .collect();
    let mut nearest = false;
    if !grounding.anchored {
        for dep in w.dependents(&rid)?.iter() {
            if let Some((_, r)) = w.record(dep)? {
                if let Record::Judgement(j) = &*r {
                    nearest |= j.claim == rid
                        && j.relation == crate::record::Relation::Neutral
                        && !claim.witnesses.contains(&j.span);
                }
            }
        }
    }
    // A sentence the finder could not place is spared, as at its compaction, unless it quotes
    // what no raw span of its stream holds.
    let mut stream = Vec::new();
    if nearest && crate::text::prose::quotes(&claim.text) {
        for (_, r) in w.read.turns(&claim.stream, 0, u64::MAX)? {
            stream.extend(w.record(&r)?.map(|(_, r)| r));
        }
    }
    let held: Vec<&str> = (stream.iter())
        .filter_map(|r| match &**r {
            Record::Span(s) => Some(s.text.as_str()),
            _ => None,
        })
        .collect();
    let found = rules::unanchored_claim(rid, claim, grounding.anchored, nearest, &held)
        .or_else(|| rules::laundered_claim(rid, claim, grounding, rests_on_raw, None, &[]))
        .into_iter()
        .chain(rules::hedge_stripped(rid, claim, &witnesses))
        .chain(rules::identifier_drift(rid, claim, &raw));
    for f in found {
        let detail = f.detail.clone();
        losses.push(index, rid, f, detail, None);
    }
    Ok(())
}

/// `evicted-disconfirmer` as the gate applies it: an admitted summary evicted a span that a
/// recorded judgement says contradicts a claim of the tree, while it kept a claim that carries
/// that one forward.
fn evicted_losses<R: Read>(
    view: &mut View<'_, R>,
    claims: &[(u64, Rid)],
    losses: &mut Losses,
) -> Result<()> {
    let read = view.read;
    for (_, cl) in claims {
        for sp in read.contradicting_spans(cl)? {
            let Some(summary) = read.evicted_by(&sp)? else {
                continue;
            };
            let (Some(vindex), Some(Record::Summary(s))) = (
                verdict_of(read, &summary)?.map(|(i, _)| i),
                read.get_trusted(&summary)?,
            ) else {
                continue;
            };
            for kept in &s.claims {
                let (_, carried) = view.ancestry(*kept)?;
                let Some(keeper) = view.claim(*kept)? else {
                    continue;
                };
                if carried.contains(cl) {
                    let span = view.span(sp)?;
                    let by = FoundBy::Judgement;
                    let f = rules::evicted_disconfirmer(summary, &keeper, (sp, span.as_ref()), by);
                    let detail = format!("{} (admitted at log index {vindex})", f.detail);
                    losses.push(vindex, *cl, f, detail, Some(sp));
                    break;
                }
            }
        }
    }
    Ok(())
}

fn node_json(n: &Node) -> Value {
    json!({
        "rid": n.rid.to_hex(), "index": n.index, "kind": n.kind.name(), "hop": n.hop.label(),
        "text": n.text, "detail": n.detail, "status": n.status, "repeated": n.repeated,
    })
}

impl Why {
    /// The claim asked about.
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The positions in [`Why::nodes`] of what each node rests on, in order.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                out[p].push(i);
            }
        }
        out
    }

    /// As one JSON document: see [`Why::write_json`].
    pub fn to_json(&self) -> Value {
        let mut out = Vec::new();
        self.write_json(&mut out)
            .and_then(|()| serde_json::from_slice(&out).map_err(std::io::Error::other))
            .unwrap_or(Value::Null)
    }

    /// Writes the JSON document `{claim, tree, nodes, first_loss, losses}`: `tree` nests the
    /// nodes down to [`SHOWN_DEPTH`] (a node whose children lie deeper says how many nodes
    /// hang below it, in `cut`); `nodes` lists every node flat, with its `depth` and `parent`
    /// (a position in `nodes`). Written node by node, so a tree of any size costs no more
    /// memory than the tree itself.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let children = self.children();
        // Built from the leaves up, so no recursion: a node's children come after it.
        let mut below = vec![0usize; self.nodes.len()];
        let mut built: Vec<Option<Value>> = vec![None; self.nodes.len()];
        for i in (0..self.nodes.len()).rev() {
            below[i] = children[i].iter().map(|c| 1 + below[*c]).sum();
            let n = &self.nodes[i];
            if n.depth > SHOWN_DEPTH {
                continue;
            }
            let mut v = node_json(n);
            let kids: Vec<Value> = (children[i].iter())
                .filter_map(|c| built[*c].take())
                .collect();
            v["children"] = Value::Array(kids);
            if n.depth == SHOWN_DEPTH && below[i] > 0 {
                v["cut"] = json!(below[i]);
            }
            built[i] = Some(v);
        }
        let tree = built.first_mut().and_then(Option::take);
        write!(
            out,
            "{{\"claim\":\"{}\",\"tree\":",
            self.root().rid.to_hex()
        )?;
        serde_json::to_writer(&mut *out, &tree)?;
        out.write_all(b",\"nodes\":[")?;
        for (i, n) in self.nodes.iter().enumerate() {
            let mut v = node_json(n);
            v["depth"] = json!(n.depth);
            v["parent"] = json!(n.parent);
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &v)?;
        }
        out.write_all(b"],\"first_loss\":")?;
        serde_json::to_writer(&mut *out, &self.losses.first().map(loss_json))?;
        out.write_all(b",\"losses\":[")?;
        for (i, l) in self.losses.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &loss_json(l))?;
        }
        out.write_all(b"]}")
    }

    /// As indented text: see [`Why::write_text`].
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        let _ = self.write_text(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Writes the tree as indented text, one line per node, then the losses: indentation
    /// stops at [`SHOWN_DEPTH`], and a deeper line starts with its depth, so nothing is left
    /// out.
    pub fn write_text(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.nodes.iter().any(|n| n.depth > SHOWN_DEPTH) {
            writeln!(
                out,
                "(the tree is deeper than {SHOWN_DEPTH} levels: indentation stops there, and each deeper line starts with its depth)"
            )?;
        }
        for n in &self.nodes {
            let pad = "  ".repeat(n.depth.min(SHOWN_DEPTH));
            let deep = if n.depth > SHOWN_DEPTH {
                format!("[depth {}] ", n.depth)
            } else {
                String::new()
            };
            let what = match n.kind {
                Kind::Span => format!("span {} ({})", n.rid.short(), n.detail),
                _ => format!("claim {} [{}]", n.rid.short(), n.detail),
            };
            writeln!(
                out,
                "{pad}{deep}{} -> {what} {}: {:?}{}",
                n.hop.label(),
                n.status,
                n.text,
                if n.repeated { " (shown above)" } else { "" }
            )?;
        }
        match self.losses.first() {
            None => writeln!(out, "provenance intact: every step rests on raw spans"),
            Some(l) => {
                writeln!(
                    out,
                    "provenance first lost at log index {}: {}: {}",
                    l.index, l.gate, l.detail
                )?;
                for l in &self.losses[1..] {
                    writeln!(
                        out,
                        "  then at log index {}: {}: {}",
                        l.index, l.gate, l.detail
                    )?;
                }
                Ok(())
            }
        }
    }
}

pub(crate) fn loss_json(l: &Loss) -> Value {
    json!({"index": l.index, "gate": l.gate, "claim": l.claim.to_hex(), "detail": l.detail})
}

/// A claim of a boundary: its one status ([`Read::standing`]) and, when this boundary's
/// verdict judged it otherwise, that judgement, so history stays visible without a second
/// status.
#[derive(Debug, Clone)]
pub struct BoundaryClaim {
    /// The claim.
    pub rid: Rid,
    /// Its text.
    pub text: String,
    /// Its status, as every view gives it.
    pub status: Status,
    /// What this boundary's verdict judged it, when that differs from `status`.
    pub judged: Option<Status>,
}

/// One compaction boundary of a stream.
#[derive(Debug, Clone)]
pub struct Boundary {
    /// 1-based.
    pub number: usize,
    /// The summary.
    pub summary: Rid,
    /// Its log index.
    pub index: u64,
    /// Whether it was admitted; `None` when it was never gated.
    pub admitted: Option<bool>,
    /// Its author: "self", "separate", or "cairn" for a repair.
    pub author: String,
    /// For a repair: the refused proposal it stands in for (SPEC.md section 8.9).
    pub repairs: Option<Rid>,
    /// Its token budget, and its parent's.
    pub budget: u64,
    /// The parent's budget.
    pub parent_budget: Option<u64>,
    /// Its depth of self-authored summaries.
    pub depth: u32,
    /// The self-reported and the reference-anchored fidelity.
    pub self_score: Option<f64>,
    /// See `self_score`.
    pub anchored_score: Option<f64>,
    /// Claims not in the previous admitted summary.
    pub new: Vec<BoundaryClaim>,
    /// Claims carried from the previous admitted summary.
    pub carried: Vec<BoundaryClaim>,
    /// Claims of the previous admitted summary it no longer holds.
    pub dropped: Vec<(Rid, String)>,
    /// Turns it evicts.
    pub evicted: Vec<u64>,
    /// (gate, detail) of its verdict.
    pub findings: Vec<(Gate, String)>,
    /// Fabricated claims / claims.
    pub fabrication_rate: f64,
    /// Laundered actionable claims / actionable claims.
    pub laundering_rate: f64,
}

impl Boundary {
    /// Self score minus anchored score, when both exist.
    pub fn gap(&self) -> Option<f64> {
        Some(self.self_score? - self.anchored_score?)
    }
}

/// A stream's boundaries and what they show together.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The stream.
    pub stream: String,
    /// Every boundary, admitted or refused, in log order.
    pub boundaries: Vec<Boundary>,
    /// Set when the gap between self and anchored scores grew over the last boundaries.
    pub gap_warning: Option<String>,
    /// Every action of the stream, in log order, with every check of it.
    pub actions: Vec<ActionChecks>,
}

/// An action the agent proposed, and each time the gate judged it.
#[derive(Debug, Clone)]
pub struct ActionChecks {
    /// The action.
    pub action: Rid,
    /// Its log index.
    pub index: u64,
    /// What the agent meant to do.
    pub text: String,
    /// Whether it cannot be undone.
    pub irreversible: bool,
    /// Each check, in log order: the first is the action itself, later ones check records.
    pub checks: Vec<ActionCheck>,
}

/// One check of an action and its verdict.
#[derive(Debug, Clone)]
pub struct ActionCheck {
    /// The record judged: the action for its first check, a check record after.
    pub subject: Rid,
    /// Its log index.
    pub index: u64,
    /// Whether the action was admitted; `None` when no verdict was found.
    pub admitted: Option<bool>,
    /// (gate, detail) of its verdict.
    pub findings: Vec<(Gate, String)>,
}

/// Every action of a stream with its checks, in log order.
fn actions<R: Read>(read: &R, stream: &str) -> Result<Vec<ActionChecks>> {
    let mut out = Vec::new();
    for rid in read.of_kind(Kind::Action)? {
        let Some(Record::Action(a)) = read.get_trusted(&rid)? else {
            continue;
        };
        if a.stream != stream {
            continue;
        }
        let index = read.index_of(&rid)?.unwrap_or(0);
        let mut subjects = vec![(index, rid)];
        for d in read.dependents(&rid)? {
            if read.kind_of(&d)? == Some(Kind::Check) {
                subjects.push((read.index_of(&d)?.unwrap_or(0), d));
            }
        }
        subjects.sort();
        let mut checks = Vec::new();
        for (at, subject) in subjects {
            let verdict = match read.verdict_of(&subject)? {
                Some(v) => match read.get_trusted(&v)? {
                    Some(Record::Verdict(v)) => Some(v),
                    _ => None,
                },
                None => None,
            };
            checks.push(ActionCheck {
                subject,
                index: at,
                admitted: verdict.as_ref().map(|v| v.admitted),
                findings: (verdict.iter())
                    .flat_map(|v| v.findings.iter())
                    .map(|f| (f.gate, f.detail.clone()))
                    .collect(),
            });
        }
        out.push(ActionChecks {
            action: rid,
            index,
            text: a.text,
            irreversible: a.irreversible,
            checks,
        });
    }
    Ok(out)
}

/// Replays a stream boundary by boundary from its records.
pub fn replay<R: Read>(read: &R, stream: &str) -> Result<Replay> {
    let all = boundaries(read, stream)?;
    if all.is_empty() && read.stream(stream)?.spans == 0 {
        return Err(ErrorKind::NoStream(stream.to_string()).into());
    }
    let mut out = Vec::new();
    let mut previous: Option<Summary> = None;
    for (n, (rid, index, s)) in all.into_iter().enumerate() {
        let b = boundary(read, n + 1, (rid, index), &s, previous.as_ref())?;
        if b.admitted == Some(true) {
            previous = Some(s);
        }
        out.push(b);
    }
    let gap_warning = gap_warning(&out);
    Ok(Replay {
        stream: stream.to_string(),
        boundaries: out,
        gap_warning,
        actions: actions(read, stream)?,
    })
}

/// A claim's text and whether it is actionable; empty for a rid that is not a claim.
fn claim_text<R: Read>(read: &R, rid: &Rid) -> Result<(String, bool)> {
    match read.named(rid, "rids")? {
        Record::Claim(c) => Ok((c.text, c.actionable)),
        _ => Err(ErrorKind::CorruptFile {
            path: "records table".into(),
            detail: format!("a summary holds {rid}, which is not a claim"),
        }
        .into()),
    }
}

/// Boundary `number` of a stream: summary `s` at log index `at.1`, after the stream's
/// previous admitted summary.
fn boundary<R: Read>(
    read: &R,
    number: usize,
    at: (Rid, u64),
    s: &Summary,
    previous: Option<&Summary>,
) -> Result<Boundary> {
    let (rid, index) = at;
    let verdict = verdict_of(read, &rid)?.map(|(_, v)| v);
    let statuses: BTreeMap<Rid, Status> = (verdict.iter())
        .flat_map(|v| v.claims.iter().map(|c| (c.claim, c.status)))
        .collect();
    let laundered = |c: &Rid| {
        (verdict.iter())
            .flat_map(|v| v.findings.iter())
            .any(|f| f.gate == Gate::LaunderedClaim && f.subject == *c)
    };
    let before: HashSet<Rid> = previous
        .iter()
        .flat_map(|p| p.claims.iter().copied())
        .collect();
    let mut b = Boundary {
        number,
        summary: rid,
        index,
        admitted: verdict.as_ref().map(|v| v.admitted),
        author: s.author.name().to_string(),
        repairs: s.author.repairs(),
        budget: s.budget,
        parent_budget: parent_budget(read, s)?,
        depth: checked_depth(read, &rid, s)?,
        self_score: s.self_score.map(score_to_unit),
        anchored_score: verdict
            .as_ref()
            .and_then(|v| v.anchored_score.map(score_to_unit)),
        new: Vec::new(),
        carried: Vec::new(),
        dropped: Vec::new(),
        evicted: Vec::new(),
        findings: (verdict.iter())
            .flat_map(|v| v.findings.iter().map(|f| (f.gate, f.detail.clone())))
            .collect(),
        fabrication_rate: 0.0,
        laundering_rate: 0.0,
    };
    let (mut actionable, mut laundered_actionable, mut fabricated) = (0usize, 0usize, 0usize);
    for c in &s.claims {
        let (text, act) = claim_text(read, c)?;
        let judged = statuses.get(c).copied();
        fabricated += usize::from(judged == Some(Status::Fabricated));
        let status = read.standing(c)?.status;
        if act {
            actionable += 1;
            laundered_actionable += usize::from(laundered(c));
        }
        let list = if before.contains(c) {
            &mut b.carried
        } else {
            &mut b.new
        };
        list.push(BoundaryClaim {
            rid: *c,
            text,
            status,
            judged: judged.filter(|j| *j != status),
        });
    }
    for c in previous.iter().flat_map(|p| p.claims.iter()) {
        if !s.claims.contains(c) {
            b.dropped.push((*c, claim_text(read, c)?.0));
        }
    }
    for sp in &s.evicts {
        match read.named(sp, "records")? {
            Record::Span(x) => b.evicted.push(x.turn),
            _ => {
                return Err(ErrorKind::CorruptFile {
                    path: "records table".into(),
                    detail: format!("summary {rid} evicts {sp}, which is not a span"),
                }
                .into())
            }
        }
    }
    b.evicted.sort_unstable();
    b.fabrication_rate = rate(fabricated, s.claims.len());
    b.laundering_rate = rate(laundered_actionable, actionable);
    Ok(b)
}

/// A summary's stored depth, checked against its parent's by the rule that derived it
/// (SPEC.md section 4.3): a separate pass is 0; a self-authored summary with a parent is the
/// parent's + 1, or 0 when it asked to be re-grounded; a first one is 0 (1 under rules 1).
/// A depth the rule cannot give is a damaged facts table.
fn checked_depth<R: Read>(read: &R, rid: &Rid, s: &Summary) -> Result<u32> {
    let depth = |r: &Rid| -> Result<Option<u32>> { Ok(read.facts(r)?.and_then(|f| f.depth)) };
    let Some(d) = depth(rid)? else {
        return Err(damaged_facts(rid));
    };
    let fits = match (s.author, s.parent) {
        (crate::record::Author::Separate, _) => d == 0,
        (_, None) => d <= 1,
        (_, Some(p)) => match depth(&p)? {
            Some(pd) => d == pd.saturating_add(1) || (s.reground && d == 0),
            None => false,
        },
    };
    if fits {
        Ok(d)
    } else {
        Err(damaged_facts(rid))
    }
}

fn damaged_facts(rid: &Rid) -> crate::error::Error {
    ErrorKind::CorruptFile {
        path: "facts table".into(),
        detail: format!("the depth stored for summary {rid} is not what its chain gives"),
    }
    .into()
}

/// The budget of a summary's parent, if it has one.
fn parent_budget<R: Read>(read: &R, s: &Summary) -> Result<Option<u64>> {
    Ok(match s.parent {
        Some(p) => match read.get_trusted(&p)? {
            Some(Record::Summary(ps)) => Some(ps.budget),
            _ => None,
        },
        None => None,
    })
}

/// `part / whole`, 0 when `whole` is 0.
fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The warning when the gap between self-reported and anchored fidelity grew over the last
/// three boundaries (seed 003).
fn gap_warning(boundaries: &[Boundary]) -> Option<String> {
    let gaps: Vec<(usize, f64)> = boundaries
        .iter()
        .filter_map(|b| b.gap().map(|g| (b.number, g)))
        .collect();
    match gaps.as_slice() {
        [.., (_, a), (_, b), (n, c)] if a < b && b < c && c - a >= 0.05 => Some(format!(
            "the gap between self-reported and reference-anchored fidelity grew over the last three boundaries ({a:.2}, {b:.2}, {c:.2} up to summary {n}): this compaction is eating its own evidence (seed 003)"
        )),
        _ => None,
    }
}

/// A boundary's claims as JSON: `rid`, `text`, `status` (the claim's one status) and, when
/// this boundary's verdict judged it otherwise, `judged`.
fn claims_json(v: &[BoundaryClaim]) -> Value {
    v.iter()
        .map(|c| {
            let mut o = json!({"rid": c.rid.to_hex(), "text": c.text, "status": c.status.name()});
            if let Some(j) = c.judged {
                o["judged"] = json!(j.name());
            }
            o
        })
        .collect()
}

impl Replay {
    /// As one JSON document.
    pub fn to_json(&self) -> Value {
        json!({
            "stream": self.stream,
            "gap_warning": self.gap_warning,
            "boundaries": self.boundaries.iter().map(|b| json!({
                "number": b.number, "summary": b.summary.to_hex(), "index": b.index,
                "verdict": match b.admitted { Some(true) => "admitted", Some(false) => "refused", None => "ungated" },
                "author": b.author, "repairs": b.repairs.map(|r| r.to_hex()), "budget": b.budget, "parent_budget": b.parent_budget, "depth": b.depth,
                "self_score": b.self_score, "anchored_score": b.anchored_score, "gap": b.gap().map(|g| (g * 10_000.0).round() / 10_000.0),
                "new": claims_json(&b.new), "carried": claims_json(&b.carried),
                "dropped": b.dropped.iter().map(|(r, t)| json!({"rid": r.to_hex(), "text": t})).collect::<Vec<_>>(),
                "evicted_turns": b.evicted,
                "evicted_runs": turn_runs(&b.evicted),
                "findings": b.findings.iter().map(|(g, d)| json!({"gate": g, "detail": d})).collect::<Vec<_>>(),
                "fabrication_rate": b.fabrication_rate, "laundering_rate": b.laundering_rate,
            })).collect::<Vec<_>>(),
            "actions": self.actions.iter().map(|a| json!({
                "action": a.action.to_hex(), "index": a.index, "text": a.text, "irreversible": a.irreversible,
                "checks": a.checks.iter().map(|c| json!({
                    "subject": c.subject.to_hex(), "index": c.index,
                    "verdict": match c.admitted { Some(true) => "admitted", Some(false) => "refused", None => "ungated" },
                    "findings": c.findings.iter().map(|(g, d)| json!({"gate": g, "detail": d})).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// As text, one block per boundary.
    pub fn to_text(&self) -> String {
        let n = self.boundaries.len();
        let mut out = format!(
            "stream {}: {n} {}\n",
            self.stream,
            if n == 1 { "boundary" } else { "boundaries" }
        );
        let f = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        for b in &self.boundaries {
            let verdict = match b.admitted {
                Some(true) => "ADMITTED",
                Some(false) => "REFUSED",
                None => "UNGATED",
            };
            out.push_str(&format!(
                "\nboundary {} {verdict} (summary {}, {} author{}, depth {}, budget {}{})\n",
                b.number,
                b.summary.short(),
                b.author,
                b.repairs
                    .map(|r| format!(", the repair of refused summary {}", r.short()))
                    .unwrap_or_default(),
                b.depth,
                b.budget,
                b.parent_budget
                    .map(|p| format!(" against parent {p}"))
                    .unwrap_or_default()
            ));
            out.push_str(&format!(
                "  self score {}, anchored score {}, gap {}; fabrication rate {:.2}, laundering rate {:.2}\n",
                f(b.self_score),
                f(b.anchored_score),
                f(b.gap()),
                b.fabrication_rate,
                b.laundering_rate
            ));
            // The verdict's reasons first, then what the summary holds.
            for (g, d) in &b.findings {
                out.push_str(&format!("  {g}: {d}\n"));
            }
            for (label, list) in [("new", &b.new), ("carried", &b.carried)] {
                for c in list.iter() {
                    let judged = c
                        .judged
                        .map(|j| format!(" (judged {} here)", j.name()))
                        .unwrap_or_default();
                    // A claim of several lines (a quoted code block) keeps them indented.
                    out.push_str(&format!(
                        "  {label:<8} {} {}{judged}: {}\n",
                        c.rid.short(),
                        c.status.name(),
                        c.text.trim_end().replace('\n', "\n             ")
                    ));
                }
            }
            for (r, t) in &b.dropped {
                out.push_str(&format!("  dropped  {}: {t}\n", r.short()));
            }
            if !b.evicted.is_empty() {
                out.push_str(&format!("  evicts turns {}\n", turn_runs(&b.evicted)));
            }
        }
        for a in &self.actions {
            out.push_str(&format!(
                "\naction {} at log {}{}: {}\n",
                a.action.short(),
                a.index,
                if a.irreversible {
                    " (irreversible)"
                } else {
                    ""
                },
                a.text
            ));
            for (k, c) in a.checks.iter().enumerate() {
                let verdict = match c.admitted {
                    Some(true) => "ADMITTED",
                    Some(false) => "REFUSED",
                    None => "UNGATED",
                };
                out.push_str(&format!(
                    "  check {} at log {}: {verdict}\n",
                    k + 1,
                    c.index
                ));
                for (g, d) in &c.findings {
                    out.push_str(&format!("    {g}: {d}\n"));
                }
            }
        }
        if let Some(w) = &self.gap_warning {
            out.push_str(&format!("\nwarning: {w}\n"));
        }
        out
    }
}

/// Turns written as runs: "0-138, 140, 142-341".
fn turn_runs(turns: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &t in turns {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == t => *end = t,
            _ => runs.push((t, t)),
        }
    }
    (runs.iter())
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::replay::turn_runs;

    #[test]
    fn evicted_turns_print_as_runs() {
        assert_eq!(turn_runs(&[0, 1, 2, 3, 5, 7, 8]), "0-3, 5, 7-8");
        assert_eq!(turn_runs(&[4]), "4");
        assert_eq!(turn_runs(&[]), "");
    }
}
