//! Judging an action before the agent runs it: `irreversible-unverified` for each claim it
//! relies on, and `prohibited-action` against the stream's pinned prohibitions.

pub(crate) mod line;
pub(crate) mod prohibition;
#[cfg(test)]
mod tests;

use super::pins::pinned_items;
use super::rules::{self, Reliance};
use super::status::claim_status;
use super::view::View;
use super::{Gatekeeper, Judged};
use crate::error::Result;
use crate::record::{Action, ClaimStatus, Record, Relation, Rid, Status};
use crate::store::Read;
use std::collections::HashSet;

/// The chain of self-authored summaries that carries a stream's head claims: the head's depth
/// and the claims it holds.
pub(crate) struct HeadChain {
    depth: u32,
    claims: HashSet<Rid>,
    /// The head's log index: a claim re-grounded after it was re-read from its raw spans
    /// since the chain last grew, and the chain no longer counts against it.
    at: u64,
}

impl HeadChain {
    /// The chain of the stream's current head summary.
    pub(crate) fn of<R: Read>(read: &R, stream: &str) -> Result<HeadChain> {
        let mut chain = HeadChain {
            depth: 0,
            claims: HashSet::new(),
            at: 0,
        };
        if let Some(h) = read.head(stream)? {
            chain.depth = read.facts(&h)?.and_then(|f| f.depth).unwrap_or(0);
            chain.at = read.index_of(&h)?.unwrap_or(0);
            if let Some(Record::Summary(s)) = read.get(&h)? {
                chain.claims = s.claims.into_iter().collect();
            }
        }
        Ok(chain)
    }

    /// What an action's reliance on `claim` rests on, given its status now.
    pub(crate) fn reliance<R: Read>(
        &self,
        read: &R,
        claim: &Rid,
        status: Status,
    ) -> Result<Reliance> {
        let regrounded_since = match read.regrounded(claim)? {
            Some(g) => read.index_of(&g)?.is_some_and(|i| i > self.at),
            None => false,
        };
        let mut judged_by = None;
        if read.regrounded(claim)?.is_none() {
            for d in read.dependents(claim)? {
                if let Some(Record::Ruling(r)) = read.get(&d)? {
                    if r.claim == *claim && r.answer == Relation::Entails {
                        judged_by = Some(r.judge);
                    }
                }
            }
        }
        Ok(Reliance {
            status,
            judged_by,
            depth: read.facts(claim)?.and_then(|f| f.depth),
            chain: if self.claims.contains(claim) && !regrounded_since {
                self.depth
            } else {
                0
            },
        })
    }
}

impl Gatekeeper {
    /// The findings and claim statuses of an action just appended as `rid`.
    pub(super) fn judge_action<R: Read>(
        &self,
        read: &R,
        action: &Action,
        rid: Rid,
    ) -> Result<Judged> {
        let mut judged = Judged::default();
        let mut view = View::new(read);
        let chain = HeadChain::of(read, &action.stream)?;
        for c in &action.relies_on {
            let Some(claim) = view.claim(*c)? else {
                continue;
            };
            let status = claim_status(self, &mut view, *c, &claim)?;
            judged.claims.push(ClaimStatus { claim: *c, status });
            if action.irreversible {
                let reliance = chain.reliance(read, c, status)?;
                let found =
                    rules::irreversible_unverified(action, *c, &claim, reliance, &self.policy);
                judged.findings.extend(found);
            }
        }
        for (pin, item) in pinned_items(read, &action.stream)? {
            let found = rules::prohibited_action(rid, action, (&pin, &item), &self.policy);
            judged.findings.extend(found);
        }
        Ok(judged)
    }
}
