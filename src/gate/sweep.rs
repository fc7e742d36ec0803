//! `cairn gates`: every gate query over the current ledger, as it stands now. Judgements
//! recorded after a compaction count: a summary admitted yesterday that evicted a span judged
//! contradicting today is reported.

use super::names::*;
use super::{claim_status, pinned_items, unpinned, unpinned_message, Gatekeeper, View};
use crate::error::Result;
use crate::record::{Kind, Origin, Record, Rid, Status};
use crate::store::Read;
use std::collections::{BTreeSet, HashSet};

/// One finding of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SweepFinding {
    /// The gate's stable name.
    pub gate: String,
    /// The stream concerned.
    pub stream: String,
    /// The record the finding is about.
    pub subject: Rid,
    /// What was found.
    pub detail: String,
}

fn admitted<R: Read>(read: &R, subject: &Rid) -> Result<bool> {
    Ok(match read.verdict_of(subject)? {
        Some(v) => matches!(read.get(&v)?, Some(Record::Verdict(v)) if v.admitted),
        None => false,
    })
}

/// Runs every gate query over the ledger, for one stream or all.
pub fn sweep<R: Read>(
    gate: &Gatekeeper,
    read: &R,
    stream: Option<&str>,
) -> Result<Vec<SweepFinding>> {
    let wanted = |s: &str| stream.is_none_or(|w| w == s);
    let mut out = BTreeSet::new();
    let mut add = |gate: &str, stream: &str, subject: Rid, detail: String| {
        out.insert(SweepFinding {
            gate: gate.to_string(),
            stream: stream.to_string(),
            subject,
            detail,
        });
    };
    let mut view = View::new(read);

    // Claims with no raw-span ancestor: one index read.
    for c in read.unanchored_claims()? {
        if let Some(claim) = view.claim(c)? {
            if wanted(&claim.stream) {
                add(
                    UNANCHORED_CLAIM,
                    &claim.stream,
                    c,
                    format!(
                        "claim '{}' has no raw-span ancestor through any chain of witnesses",
                        claim.text
                    ),
                );
            }
        }
    }
    // Chains deeper than the policy allows: one index range read.
    for (s, depth) in read.deeper_than(Kind::Summary, gate.policy.max_depth)? {
        if let Some(Record::Summary(sum)) = read.get(&s)? {
            if wanted(&sum.stream) && admitted(read, &s)? {
                add(DEPTH_EXCEEDED, &sum.stream, s, format!(
                    "admitted summary is self-authored summary {depth} in a row since the last grounding (more than {})",
                    gate.policy.max_depth
                ));
            }
        }
    }
    let mut compacted = HashSet::new();
    for s in read.of_kind(Kind::Summary)? {
        let Some(Record::Summary(sum)) = read.get(&s)? else {
            continue;
        };
        if !wanted(&sum.stream) || !admitted(read, &s)? {
            continue;
        }
        compacted.insert(sum.stream.clone());
        // Flags the gate raised when it admitted the summary.
        if let Some(Some(Record::Verdict(v))) =
            read.verdict_of(&s)?.map(|v| read.get(&v)).transpose()?
        {
            for f in v.findings {
                add(&f.gate, &sum.stream, f.subject, f.detail);
            }
        }
        // Disconfirmers it evicted, by every judgement recorded up to now.
        let evicts: HashSet<Rid> = sum.evicts.iter().copied().collect();
        for c in &sum.claims {
            let Some(claim) = view.claim(*c)? else {
                continue;
            };
            let (_, carried) = view.ancestry(*c)?;
            for k in carried {
                for sp in read.contradicting_spans(&k)? {
                    if evicts.contains(&sp) {
                        let turn = view.span(sp)?.map(|x| x.turn).unwrap_or_default();
                        add(EVICTED_DISCONFIRMER, &sum.stream, s, format!(
                            "admitted summary evicted turn {turn}, which a recorded judgement says contradicts claim '{}' that it keeps",
                            claim.text
                        ));
                    }
                }
            }
        }
    }
    for a in read.of_kind(Kind::Action)? {
        let Some(Record::Action(action)) = read.get(&a)? else {
            continue;
        };
        if !wanted(&action.stream) || !admitted(read, &a)? {
            continue;
        }
        for c in &action.relies_on {
            let Some(claim) = view.claim(*c)? else {
                continue;
            };
            let status = claim_status(gate, &mut view, *c, &claim)?;
            if status != Status::Verified {
                add(
                    LAUNDERED_CLAIM,
                    &action.stream,
                    *c,
                    format!(
                        "claim '{}' is {} and drives action '{}'",
                        claim.text,
                        status.name(),
                        action.text
                    ),
                );
                if action.irreversible {
                    add(
                        IRREVERSIBLE_UNVERIFIED,
                        &action.stream,
                        a,
                        format!(
                        "admitted irreversible action '{}' relies on claim '{}', which is now {}",
                        action.text,
                        claim.text,
                        status.name()
                    ),
                    );
                }
            } else if action.irreversible && claim.origin == Origin::Hedged {
                add(
                    IRREVERSIBLE_UNVERIFIED,
                    &action.stream,
                    a,
                    format!(
                        "admitted irreversible action '{}' relies on hedged claim '{}'",
                        action.text, claim.text
                    ),
                );
            }
        }
    }
    // Compacted streams whose raw spans hold decision-relevant items no pin covers.
    for s in compacted {
        let pins = pinned_items(read, &s)?;
        let items = unpinned(read, &s, &pins)?;
        if let Some(first) = items.first() {
            add(
                UNPINNED_REFERENCE,
                &s,
                first.span,
                unpinned_message(&s, &items),
            );
        }
    }
    Ok(out.into_iter().collect())
}
