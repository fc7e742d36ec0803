//! A claim's status outside a summary's gate: for actions, the sweep and replay.

use super::view::View;
use super::Gatekeeper;
use crate::error::Result;
use crate::record::{Claim, Rid, Status};
use crate::store::Read;
use crate::text::is_hedged;

/// A claim's status outside a summary gate: the latest recorded one, else computed from its
/// direct span witnesses.
pub(crate) fn claim_status<R: Read>(
    gate: &Gatekeeper,
    view: &mut View<'_, R>,
    rid: Rid,
    claim: &Claim,
) -> Result<Status> {
    if view.read.regrounded(&rid)?.is_some() {
        return Ok(Status::Verified);
    }
    if let Some(s) = view.read.status(&rid)? {
        return Ok(s);
    }
    if !view.read.facts(&rid)?.is_some_and(|f| f.anchored) {
        return Ok(Status::Unanchored);
    }
    for w in &claim.witnesses {
        if let Some(sp) = view.span(*w)? {
            if !is_hedged(&sp.text)
                && gate.score(&claim.text, &sp.text)?.entailment >= gate.policy.raw_entailment
            {
                return Ok(Status::Verified);
            }
        }
    }
    Ok(Status::Unverified)
}

/// A claim's status from the records alone, without scoring: re-grounded claims are
/// verified, gated claims keep their latest recorded status, claims with no raw-span ancestor
/// are unanchored, and any other claim no gate judged is unverified.
pub fn claim_status_plain<R: Read>(read: &R, rid: Rid) -> Result<Status> {
    status_given(read, &rid, read.regrounded(&rid)?.is_some())
}

/// [`claim_status_plain`] for a caller that already knows whether the claim was re-grounded.
pub(crate) fn status_given<R: Read>(read: &R, rid: &Rid, regrounded: bool) -> Result<Status> {
    if regrounded {
        return Ok(Status::Verified);
    }
    if let Some(s) = read.status(rid)? {
        return Ok(s);
    }
    Ok(if read.facts(rid)?.is_some_and(|f| f.anchored) {
        Status::Unverified
    } else {
        Status::Unanchored
    })
}
