//! Repair (SPEC.md section 8.9): when the gates refuse a compaction, cairn builds the nearest
//! one they would admit, so the agent has a way forward instead of its whole history. The
//! repair is the proposal less the claims the verdict struck or refused, plus every
//! decision-relevant item the proposal lost, carried word for word, with the disconfirmers it
//! evicted left in the window. It is a summary record of its own, authored by cairn and linked
//! to the refused proposal, and it is gated as any proposal is.

use super::view::{View, Vocab};
use super::{Carry, Gatekeeper, Outcome, Repair};
use crate::error::Result;
use crate::record::{Author, Claim, Gate, Kind, Origin, Record, Rid, Role, Summary};
use crate::store::{Batch, Read};
use std::collections::HashSet;

/// What judging a refused proposal left for its repair.
pub(super) struct Hints {
    /// Evicted spans that disconfirm a kept claim: they stay in the window.
    pub keep: Vec<Rid>,
    /// Decision-relevant items the proposal lost: carried verbatim.
    pub carry: Vec<Carry>,
}

/// Whether a finding takes its claim out of a repair: it struck the claim, the claim's own
/// witness contradicts it, it has no origin tag, or it is laundered where the rate refused.
fn drops(gate: Gate, laundering: bool) -> bool {
    gate.strikes()
        || matches!(gate, Gate::ContradictedClaim | Gate::MissingOrigin)
        || (laundering && gate == Gate::LaunderedClaim)
}

impl Gatekeeper {
    /// Builds, appends and gates the repair of `proposal`, which `refused` refused.
    pub(super) fn repair(
        &self,
        batch: &mut Batch,
        proposal: &Summary,
        refused: &Outcome,
        hints: Hints,
    ) -> Result<Repair> {
        let laundering = (refused.findings.iter()).any(|f| f.gate == Gate::LaunderingRate);
        let mut covers = proposal.covers.clone();
        let mut dropped: HashSet<Rid> = HashSet::new();
        for f in refused
            .findings
            .iter()
            .filter(|f| drops(f.gate, laundering))
        {
            // A laundered claim that cites raw spans stays, with those spans in the repair's
            // source window; one that rests on earlier claims alone is dropped.
            if f.gate == Gate::LaunderedClaim {
                if let Some(Record::Claim(c)) = batch.get(&f.subject)? {
                    // Only spans of the summary's own stream can join its source window.
                    let mut raw = Vec::new();
                    for w in &c.witnesses {
                        if let Some(Record::Span(sp)) = batch.get(w)? {
                            if sp.stream == proposal.stream {
                                raw.push(*w);
                            }
                        }
                    }
                    if !raw.is_empty() {
                        // Canonical form sorts and de-duplicates them.
                        covers.extend(raw);
                        continue;
                    }
                }
            }
            dropped.insert(f.subject);
        }
        // A claim another finding drops is dropped, whatever kept it above.
        for f in refused.findings.iter() {
            if f.gate != Gate::LaunderedClaim && drops(f.gate, laundering) {
                dropped.insert(f.subject);
            }
        }
        let mut claims: Vec<Rid> = (proposal.claims.iter())
            .filter(|c| !dropped.contains(c))
            .copied()
            .collect();
        let keep: HashSet<Rid> = hints.keep.iter().copied().collect();
        let evicts: Vec<Rid> = (proposal.evicts.iter())
            .filter(|e| !keep.contains(e))
            .copied()
            .collect();
        let mut carried: Vec<String> = Vec::new();
        let mut todo = hints.carry;
        // Dropping a claim can lose an item the claim kept: the repair's own losses are carried
        // too, until it loses nothing more (a few rounds; each carries at least one item).
        for _ in 0..4 {
            for item in std::mem::take(&mut todo) {
                if carried.contains(&item.text) {
                    continue;
                }
                carried.push(item.text.clone());
                // An item no span holds cannot be carried: the repair's own verdict then says
                // what it still loses.
                if let Some((rid, span)) = self.carry(batch, proposal, &item)? {
                    if !claims.contains(&rid) {
                        claims.push(rid);
                    }
                    // The span it cites is in the repair's source window: it rests on raw text
                    // the repair covers, not on an earlier summary.
                    if !covers.contains(&span) {
                        covers.push(span);
                    }
                }
            }
            todo = self.still_lost(batch, &proposal.stream, &evicts, &claims)?;
            todo.retain(|c| !carried.contains(&c.text));
            if todo.is_empty() {
                break;
            }
        }
        let repair = Summary {
            stream: proposal.stream.clone(),
            parent: proposal.parent,
            author: Author::Repair(refused.subject.rid),
            budget: proposal.budget,
            covers,
            evicts,
            claims,
            self_score: None,
            reground: false,
        };
        // In canonical form, as the ledger holds it, so it reads the same when met again.
        let mut repair = repair;
        for set in [&mut repair.covers, &mut repair.evicts] {
            set.sort_unstable();
            set.dedup();
        }
        // Keeping a disconfirmer in the window changes which evicted spans rank nearest a
        // claim, so the repair is judged again, without writing, until it evicts no span that
        // contradicts a claim it keeps (a few rounds; each keeps at least one span more).
        for _ in 0..4 {
            let mut record: Record = repair.clone().into();
            record.canonicalize();
            let rid = Rid::of_bytes(&crate::record::encode(&record));
            let judged = self.judge_summary(batch, &repair, rid)?;
            let more: HashSet<Rid> = judged.keep.into_iter().collect();
            if more.is_empty() {
                break;
            }
            repair.evicts.retain(|e| !more.contains(e));
        }
        let (changes, text) = describe(batch, proposal, refused, &repair)?;
        let (outcome, _) = self.gate_summary(batch, repair)?;
        Ok(Repair {
            outcome,
            changes,
            text,
        })
    }

    /// What a summary of `stream` evicting `evicts` and holding `claims` would still lose and
    /// a repair must carry.
    fn still_lost(
        &self,
        batch: &Batch,
        stream: &str,
        evicts: &[Rid],
        claims: &[Rid],
    ) -> Result<Vec<Carry>> {
        let mut view = View::new(batch);
        let mut held = Vec::new();
        for c in claims {
            if let Some(claim) = view.claim(*c)? {
                held.push((*c, claim));
            }
        }
        let vocabs: Vec<Vocab> = held.iter().map(|(_, c)| Vocab::of(&c.text)).collect();
        let triples: Vec<(Rid, &Claim, &Vocab)> = (held.iter().zip(&vocabs))
            .map(|((r, c), v)| (*r, c, v))
            .collect();
        let evicts: HashSet<Rid> = evicts.iter().copied().collect();
        let losses = self.losses(&mut view, stream, &evicts, &triples)?;
        Ok(losses.carry(&self.policy))
    }

    /// A lost item as a claim citing the span that states it: the span it was found in or
    /// pinned from, else the first covered span that holds its sentence word for word.
    fn carry(
        &self,
        batch: &mut Batch,
        proposal: &Summary,
        item: &Carry,
    ) -> Result<Option<(Rid, Rid)>> {
        let mut witness = None;
        if let Some(Record::Span(sp)) = item.witness.map(|w| batch.get(&w)).transpose()?.flatten() {
            witness = item.witness.map(|w| (w, sp.role));
        }
        if witness.is_none() {
            for c in &proposal.covers {
                if let Some(Record::Span(sp)) = batch.get(c)? {
                    if crate::text::verbatim::repeats(&item.text, &sp.text) {
                        witness = Some((*c, sp.role));
                        break;
                    }
                }
            }
        }
        let Some((span, role)) = witness else {
            return Ok(None);
        };
        let origin = match role {
            Role::User | Role::System => Origin::UserSaid,
            Role::Tool => Origin::ToolOutput,
            Role::Assistant | Role::ToolCall => Origin::Inferred,
        };
        let appended = batch.append(Claim {
            stream: proposal.stream.clone(),
            text: item.text.clone(),
            origin,
            witnesses: vec![span],
            actionable: false,
        })?;
        Ok(Some((appended.rid, span)))
    }

    /// The repair a refused proposal already has in the ledger, as it was judged.
    pub(super) fn recorded_repair(
        &self,
        batch: &Batch,
        proposal: &Summary,
        refused: &Outcome,
    ) -> Result<Option<Repair>> {
        let of = refused.subject.rid;
        for d in batch.dependents(&of)? {
            if batch.kind_of(&d)? != Some(Kind::Summary) {
                continue;
            }
            let Some(Record::Summary(s)) = batch.get(&d)? else {
                continue;
            };
            if s.author != Author::Repair(of) {
                continue;
            }
            let Some(v) = batch.verdict_of(&d)? else {
                continue;
            };
            let index = batch.index_of(&d)?.unwrap_or(0);
            let subject = crate::store::Appended {
                rid: d,
                index,
                new: false,
            };
            let (changes, text) = describe(batch, proposal, refused, &s)?;
            let outcome = super::recorded(batch, subject, v, Vec::new())?;
            return Ok(Some(Repair {
                outcome,
                changes,
                text,
            }));
        }
        Ok(None)
    }
}

/// A claim's text, quoted for a change line.
fn quoted(batch: &Batch, claim: &Rid) -> Result<String> {
    Ok(match batch.get(claim)? {
        Some(Record::Claim(c)) => super::rules::quote(&c.text),
        _ => claim.to_string(),
    })
}

/// What a repair changed from the proposal it repairs, one sentence each, and its text: the
/// claims it keeps, one a line, then the items it carries under a heading of their own. Read
/// from the records alone, so a repair met again reads as it did when it was written.
fn describe(
    batch: &Batch,
    proposal: &Summary,
    refused: &Outcome,
    repair: &Summary,
) -> Result<(Vec<String>, String)> {
    let mut changes = Vec::new();
    for c in proposal
        .claims
        .iter()
        .filter(|c| !repair.claims.contains(c))
    {
        let mut why: Vec<&str> = Vec::new();
        for f in refused.findings.iter().filter(|f| f.subject == *c) {
            if !why.contains(&f.gate.name()) {
                why.push(f.gate.name());
            }
        }
        changes.push(format!(
            "dropped claim {} ({})",
            quoted(batch, c)?,
            why.join(", ")
        ));
    }
    let (mut kept, mut carried) = (Vec::new(), Vec::new());
    for c in &repair.claims {
        if let Some(Record::Claim(claim)) = batch.get(c)? {
            if proposal.claims.contains(c) {
                kept.push(format!("- {}", claim.text));
            } else {
                changes.push(format!(
                    "carried {} word for word",
                    super::rules::quote(&claim.text)
                ));
                carried.push(format!("- {}", claim.text));
            }
        }
    }
    for c in repair
        .covers
        .iter()
        .filter(|c| !proposal.covers.contains(c))
    {
        if let Some(Record::Span(sp)) = batch.get(c)? {
            changes.push(format!(
                "took turn {} into its source window: a claim it keeps or carries rests on it",
                sp.turn
            ));
        }
    }
    for e in proposal
        .evicts
        .iter()
        .filter(|e| !repair.evicts.contains(e))
    {
        if let Some(Record::Span(sp)) = batch.get(e)? {
            changes.push(format!(
                "kept turn {} in the window: it disconfirms a kept claim",
                sp.turn
            ));
        }
    }
    let mut text = kept.join("\n");
    if !carried.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("Kept verbatim from the log:\n");
        text.push_str(&carried.join("\n"));
    }
    Ok((changes, text))
}
