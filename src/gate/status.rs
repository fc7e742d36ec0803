//! A claim's status outside a summary's gate: for actions, the sweep and replay.

use super::view::View;
use super::Gatekeeper;
use crate::error::Result;
use crate::record::{Claim, Rid, Status};
use crate::store::Read;
use crate::text::is_hedged;

/// A claim's status outside a summary gate: the one every view gives ([`Read::standing`]),
/// and for a claim no gate judged, computed from its direct span witnesses.
pub(crate) fn claim_status<R: Read>(
    gate: &Gatekeeper,
    view: &mut View<'_, R>,
    rid: Rid,
    claim: &Claim,
) -> Result<Status> {
    let standing = view.read.standing(&rid)?;
    if standing.admitted || standing.refused_by.is_some() || standing.status == Status::Unanchored {
        return Ok(standing.status);
    }
    for w in &claim.witnesses {
        if let Some(sp) = view.span(*w)? {
            if !is_hedged(&sp.text)
                && gate.score(&claim.text, &sp.text)?.entailment >= gate.policy.verify_entailment
            {
                return Ok(Status::Verified);
            }
        }
    }
    Ok(Status::Unverified)
}

/// A claim's status from the records alone, without scoring: [`Read::standing`], the one
/// status every view shows.
pub fn claim_status_plain<R: Read>(read: &R, rid: Rid) -> Result<Status> {
    Ok(read.standing(&rid)?.status)
}
