//! `cairn gates`: every gate query over the current ledger, as it stands now. Judgements
//! recorded after a compaction count: a summary admitted yesterday that evicted a span judged
//! contradicting today is reported. The rules are the gate's own (`rules`).

use super::action::HeadChain;
use super::pins::unpinned_items;
use super::rules::{self, FoundBy};
use super::status::claim_status;
use super::view::View;
use super::{Gate, Gatekeeper};
use crate::error::Result;
use crate::record::{Action, Finding, Kind, Record, Rid, Summary};
use crate::store::Read;
use std::collections::{BTreeSet, HashSet};

/// One finding of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SweepFinding {
    /// The gate.
    pub gate: Gate,
    /// The stream concerned.
    pub stream: String,
    /// The record the finding is about.
    pub subject: Rid,
    /// What was found.
    pub detail: String,
}

impl SweepFinding {
    /// The finding as `cairn gates --json` lists it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"gate": self.gate, "stream": self.stream, "subject": self.subject.to_hex(), "detail": self.detail})
    }
}

/// The sweep's findings as it collects them: sorted and free of repeats.
struct Found<'s> {
    stream: Option<&'s str>,
    out: BTreeSet<SweepFinding>,
}

impl Found<'_> {
    fn wanted(&self, stream: &str) -> bool {
        self.stream.is_none_or(|w| w == stream)
    }

    fn add(&mut self, stream: &str, f: Finding) {
        self.out.insert(SweepFinding {
            gate: f.gate,
            stream: stream.to_string(),
            subject: f.subject,
            detail: f.detail,
        });
    }
}

/// Runs every gate query over the ledger, for one stream or all.
pub fn sweep<R: Read>(
    gate: &Gatekeeper,
    read: &R,
    stream: Option<&str>,
) -> Result<Vec<SweepFinding>> {
    let mut found = Found {
        stream,
        out: BTreeSet::new(),
    };
    let mut view = View::new(read);
    unanchored(&mut view, &mut found)?;
    deep(gate, read, &mut found)?;
    let compacted = summaries(&mut view, &mut found)?;
    actions(gate, &mut view, &mut found)?;
    // Compacted streams whose raw spans hold decision-relevant items no pin covers.
    for s in compacted {
        let items: Vec<_> = (unpinned_items(read, &s)?.into_iter())
            .filter(|i| rules::blocks_compaction(i.class))
            .collect();
        if let Some(f) = items
            .first()
            .and_then(|first| rules::unpinned_reference(first.span, &s, &items))
        {
            found.add(&s, f);
        }
    }
    Ok(found.out.into_iter().collect())
}

/// Claims with no raw-span ancestor: one index read.
fn unanchored<R: Read>(view: &mut View<'_, R>, found: &mut Found<'_>) -> Result<()> {
    for c in view.read.unanchored_claims()? {
        if let Some(claim) = view.claim(c)? {
            if found.wanted(&claim.stream) {
                if let Some(f) = super::summary::unanchored(view, c, &claim, false)? {
                    found.add(&claim.stream, f);
                }
            }
        }
    }
    Ok(())
}

/// Admitted summaries deeper than the policy allows: one index range read.
fn deep<R: Read>(gate: &Gatekeeper, read: &R, found: &mut Found<'_>) -> Result<()> {
    for (s, depth) in read.deeper_than(Kind::Summary, gate.policy.max_depth)? {
        if let Some(Record::Summary(sum)) = read.get(&s)? {
            if found.wanted(&sum.stream) && read.admitted(&s)? {
                if let Some(f) = rules::depth_exceeded(s, depth, &gate.policy) {
                    found.add(&sum.stream, f);
                }
            }
        }
    }
    Ok(())
}

/// For each admitted summary: the flags its verdict recorded, and the disconfirmers it
/// evicted by every judgement recorded up to now. Returns the streams compacted.
fn summaries<R: Read>(view: &mut View<'_, R>, found: &mut Found<'_>) -> Result<HashSet<String>> {
    let read = view.read;
    let mut compacted = HashSet::new();
    for s in read.of_kind(Kind::Summary)? {
        let Some(Record::Summary(sum)) = read.get(&s)? else {
            continue;
        };
        if !found.wanted(&sum.stream) || !read.admitted(&s)? {
            continue;
        }
        compacted.insert(sum.stream.clone());
        if let Some(Some(Record::Verdict(v))) =
            read.verdict_of(&s)?.map(|v| read.get(&v)).transpose()?
        {
            for f in v.findings {
                found.add(&sum.stream, f);
            }
        }
        evicted(view, s, &sum, found)?;
    }
    Ok(compacted)
}

/// `evicted-disconfirmer` for an admitted summary, by recorded judgements.
fn evicted<R: Read>(
    view: &mut View<'_, R>,
    rid: Rid,
    sum: &Summary,
    found: &mut Found<'_>,
) -> Result<()> {
    let evicts: HashSet<Rid> = sum.evicts.iter().copied().collect();
    for c in &sum.claims {
        let Some(claim) = view.claim(*c)? else {
            continue;
        };
        let (_, carried) = view.ancestry(*c)?;
        for sp in view.judged_contradicting(&carried, &evicts)? {
            let span = view.span(sp)?;
            let f =
                rules::evicted_disconfirmer(rid, &claim, (sp, span.as_ref()), FoundBy::Judgement);
            found.add(&sum.stream, f);
        }
    }
    Ok(())
}

/// `irreversible-unverified` for admitted irreversible actions, by their claims' standing now.
fn actions<R: Read>(
    gate: &Gatekeeper,
    view: &mut View<'_, R>,
    found: &mut Found<'_>,
) -> Result<()> {
    let read = view.read;
    for a in read.of_kind(Kind::Action)? {
        let Some(Record::Action(action)) = read.get(&a)? else {
            continue;
        };
        if !found.wanted(&action.stream) || !action.irreversible || !read.admitted(&a)? {
            continue;
        }
        reliances(gate, view, &action, found)?;
    }
    Ok(())
}

fn reliances<R: Read>(
    gate: &Gatekeeper,
    view: &mut View<'_, R>,
    action: &Action,
    found: &mut Found<'_>,
) -> Result<()> {
    let chain = HeadChain::of(view.read, &action.stream)?;
    for c in &action.relies_on {
        let Some(claim) = view.claim(*c)? else {
            continue;
        };
        let status = claim_status(gate, view, *c, &claim)?;
        let reliance = chain.reliance(view.read, c, status)?;
        if let Some(f) = rules::irreversible_unverified(action, *c, &claim, reliance, &gate.policy)
        {
            found.add(&action.stream, f);
        }
    }
    Ok(())
}
