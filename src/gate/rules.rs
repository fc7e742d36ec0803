//! One function per gate rule (SPEC.md section 8.1), each returning its finding or nothing.
//! The gatekeeper, the sweep (`cairn gates`) and `why` call these, so a rule and the sentence
//! it reports live in one place; the callers differ only in where they read the facts from.

use super::Policy;
use crate::record::{
    Action, Claim, Finding, Gate, Origin, PinClass, PinItem, Record, Rid, Role, Span, Status,
};
use crate::store::Item;

/// A text shortened for a sentence: its first 60 characters, quoted.
pub(crate) fn quote(s: &str) -> String {
    let mut q: String = s.chars().take(60).collect();
    if q.len() < s.len() {
        q.push_str(" ...");
    }
    format!("'{q}'")
}

fn finding(gate: Gate, subject: Rid, detail: String) -> Finding {
    Finding {
        gate,
        subject,
        detail,
    }
}

/// `missing-origin`: a claim without one of the four origin tags.
pub(crate) fn missing_origin(rid: Rid, claim: &Claim) -> Option<Finding> {
    let q = quote(&claim.text);
    let detail = match &claim.origin {
        Origin::Missing => format!(
            "claim {q} has no origin tag; tag it user-said, tool-output, hedged or inferred"
        ),
        Origin::Other(t) => format!(
            "claim {q} has the unknown origin tag '{t}'; use user-said, tool-output, hedged or inferred"
        ),
        _ => return None,
    };
    Some(finding(Gate::MissingOrigin, rid, detail))
}

/// `unanchored-claim`: no raw-span ancestor through any chain of witnesses; not for a
/// sentence that states what is still to be done (a plan asserts no history) or leads into
/// the items after it (`text::prose::leads_in`: it states nothing of its own), nor for a
/// sentence of a prose compaction that the finder could not place (it recorded the span
/// nearest it, `nearest_judged`): a word scorer that cannot place a sentence has no evidence
/// it was made up. Such a sentence is struck still when it quotes a passage that no text of
/// `raw`, the raw spans of its stream, holds (`text::prose::quotes_only_what_is_held`): a
/// quotation claims someone's very words. The spared stay unanchored, never verified.
pub(crate) fn unanchored_claim(
    rid: Rid,
    claim: &Claim,
    anchored: bool,
    nearest_judged: bool,
    raw: &[&str],
) -> Option<Finding> {
    use crate::text::prose::{leads_in, quotes_only_what_is_held, states_intent};
    let abstractive = nearest_judged && quotes_only_what_is_held(&claim.text, raw);
    let plan = states_intent(&claim.text) || leads_in(&claim.text);
    (!anchored && !plan && !abstractive).then(|| {
        finding(Gate::UnanchoredClaim, rid, format!(
            "claim {} has no raw-span ancestor through any chain of witnesses; cite the spans it comes from",
            quote(&claim.text)
        ))
    })
}

/// `identifier-drift`: an identifier of the claim (a path, URL, dotted or qualified name,
/// version, hash, flag, error code, snake-case name or quoted code span: `text::code`) that no
/// text of `raw` holds verbatim. At the gate `raw` is every raw span of the claim's stream
/// before the compaction, tool calls and their arguments included (SPEC.md section 8.1).
pub(crate) fn identifier_drift(rid: Rid, claim: &Claim, raw: &[&str]) -> Option<Finding> {
    let drift = drifted(&claim.text, raw);
    (!drift.is_empty()).then(|| {
        finding(Gate::IdentifierDrift, rid, format!(
            "claim {} states {}, which no raw span before it contains verbatim; copy identifiers, never paraphrase them",
            quote(&claim.text),
            drift.join(", ")
        ))
    })
}

/// The identifiers of `text` that no text of `raw` holds verbatim. A quoted code span with
/// white space in it is held when its words stand in a text as a run, however that text lays
/// out its lines and indents (a file, a tool call's escaped arguments).
pub(crate) fn drifted(text: &str, raw: &[&str]) -> Vec<String> {
    let held = |i: &str, t: &str| {
        t.contains(i) || (i.contains(char::is_whitespace) && crate::text::verbatim::stands_in(i, t))
    };
    let anywhere = |i: &str| raw.iter().any(|t| held(i, t));
    // A code span that lists items (`sharerId, revokedAt IS NULL`) names each item: each is
    // held somewhere, not the list as one run.
    let listed = |i: &str| {
        !i.contains(['(', ')', '[', ']', '{', '}', '"', '\''])
            && i.contains(", ")
            && i.split(", ")
                .all(|p| !p.trim().is_empty() && anywhere(p.trim()))
    };
    crate::text::code::identifiers(text)
        .into_iter()
        .filter(|i| !anywhere(i) && !listed(i))
        .collect()
}

/// The role a claim's origin tag says its evidence came from, with the tag and the speaker.
fn wanted_role(origin: &Origin) -> Option<(Role, &'static str, &'static str)> {
    match origin {
        Origin::UserSaid => Some((Role::User, "user-said", "user")),
        Origin::ToolOutput => Some((Role::Tool, "tool-output", "tool")),
        _ => None,
    }
}

/// `origin-mismatch`: user-said without a user span among the raw ancestors, tool-output
/// without a tool span. `roles` are the raw ancestors' roles.
pub(crate) fn origin_mismatch(
    rid: Rid,
    claim: &Claim,
    anchored: bool,
    roles: &[Role],
) -> Option<Finding> {
    let (role, tag, who) = wanted_role(&claim.origin)?;
    (anchored && !roles.contains(&role)).then(|| {
        finding(
            Gate::OriginMismatch,
            rid,
            format!(
                "claim {} is tagged {tag}, but no {who} span is among its raw-span ancestors",
                quote(&claim.text)
            ),
        )
    })
}

/// A direct witness of a claim, as `hedge-stripped` reads it.
pub(crate) enum Witness<'a> {
    /// A raw span.
    Span(&'a Span),
    /// An earlier claim.
    Claim(&'a Claim),
}

impl Witness<'_> {
    /// A span or a claim as a witness.
    pub(crate) fn of(record: &Record) -> Option<Witness<'_>> {
        match record {
            Record::Span(s) => Some(Witness::Span(s)),
            Record::Claim(c) => Some(Witness::Claim(c)),
            _ => None,
        }
    }

    /// Whether it is hedged for `claim`: a span whose sentences that are the claim's source
    /// hedge a statement (not a softened request or a question), or a hedged or inferred claim.
    fn hedged(&self, claim: &str) -> bool {
        match self {
            Witness::Span(s) => crate::text::hedges_for(claim, &s.text),
            Witness::Claim(c) => matches!(c.origin, Origin::Hedged | Origin::Inferred),
        }
    }

    fn describe(&self) -> String {
        match self {
            Witness::Span(s) => format!("turn {}: {}", s.turn, quote(&s.text)),
            Witness::Claim(c) => format!("claim {}", quote(&c.text)),
        }
    }
}

/// `hedge-stripped`: a user-said or tool-output claim whose every direct witness is hedged.
pub(crate) fn hedge_stripped(
    rid: Rid,
    claim: &Claim,
    witnesses: &[Witness<'_>],
) -> Option<Finding> {
    let (_, tag, _) = wanted_role(&claim.origin)?;
    if witnesses.is_empty() || !witnesses.iter().all(|w| w.hedged(&claim.text)) {
        return None;
    }
    let support: Vec<String> = witnesses.iter().map(Witness::describe).collect();
    Some(finding(
        Gate::HedgeStripped,
        rid,
        format!(
            "claim {} is tagged {tag}, but its only support is hedged ({}); keep the hedge",
            quote(&claim.text),
            support.join("; ")
        ),
    ))
}

/// Whether a span of `role` is evidence a claim can be contradicted by: what a tool printed, or
/// what the user or the system said. A tool call is what the agent did, not a statement, and the
/// assistant's own earlier words are its reasoning, which a summary may revise (SPEC.md 8.1).
pub(crate) fn is_evidence(role: Role) -> bool {
    !matches!(role, Role::ToolCall | Role::Assistant)
}

/// How a claim fares against the raw spans it cites: its direct span witnesses, or, for a
/// claim that cites only claims, its raw-span ancestors (SPEC.md section 8.1).
#[derive(Debug, Clone, Default)]
pub(crate) struct WitnessCheck {
    /// The best entailment among them, and the turn that gives it.
    pub entailment: (f64, Option<u64>),
    /// The strongest contradiction among them that clashes with the claim, the turn that
    /// gives it, and the clash.
    pub contradiction: (f64, Option<u64>, Option<String>),
    /// A covered span the claim does not cite that entails it, when none it cites does.
    pub elsewhere: Option<u64>,
    /// The speaker the claim names and the turn and role of the cited span that is not theirs.
    pub speaker: Option<(&'static str, u64, Role)>,
    /// The latest turn of each speaker among the cited spans that surely support the claim
    /// (entailment at or above `verify_entailment`): what it says supersedes what that speaker
    /// said at earlier turns of the claim's stream.
    pub latest_support: [Option<u64>; Role::COUNT],
    /// The latest turn among the cited spans of evidence (a tool's output, the user's or the
    /// system's words) of the claim's stream that support it (entailment at or above
    /// `raw_entailment`): evidence told before it is history to the claim, and an evicted
    /// span told earlier is no disconfirmer the scorer can find (SPEC.md 8.1, time).
    pub latest_evidence: Option<u64>,
}

/// The speaker a claim's text names as its subject, from its first words ("The user asked
/// ...", "The assistant offered ...", "The tool reported ..."), and the roles a span of that
/// speaker can have. A system prompt speaks for the user in simulated conversations, so it
/// may hold what "the user" or "the customer" wants.
///
/// A sentence that ends with a colon leads into the items after it ("The user's requests
/// were:"): it names who spoke them, and each item is checked on its own; the lead-in itself
/// states no deed, so it names no speaker to check.
pub(crate) fn named_speaker(claim: &str) -> Option<(&'static str, &'static [Role])> {
    use crate::text::Speaker;
    if crate::text::prose::leads_in(claim) {
        return None;
    }
    Some(match crate::text::named_speaker(claim)? {
        Speaker::User => ("the user", &[Role::User, Role::System]),
        Speaker::Assistant => ("the assistant", &[Role::Assistant]),
        Speaker::Tool => ("a tool", &[Role::Tool]),
    })
}

/// `contradicted-claim` when a span the claim cites clashes with it (its own witness
/// contradicts it: the compaction is refused); else `fabricated-claim` when none of the spans
/// it cites entails it, or it names a speaker they are not (the claim is struck). Support found
/// only in a span it does not cite is named, never counted. Never for a claim that is
/// unanchored (it cites no raw span) or was re-grounded.
pub(crate) fn fabricated_claim(
    rid: Rid,
    claim: &Claim,
    grounding: Grounding,
    check: &WitnessCheck,
    policy: &Policy,
) -> Option<Finding> {
    if !grounding.anchored || grounding.regrounded {
        return None;
    }
    let q = quote(&claim.text);
    let turn = |t: Option<u64>| t.map(|t| format!("turn {t}")).unwrap_or_default();
    if let Some((who, t, role)) = check.speaker {
        return Some(finding(Gate::FabricatedClaim, rid, format!(
            "claim {q} says {who} did it, but the span it cites, turn {t}, is the {}'s; say who said it",
            role.name()
        )));
    }
    if let (c, at, Some(clash)) = &check.contradiction {
        return Some(finding(Gate::ContradictedClaim, rid, format!(
            "claim {q} is contradicted by the span it cites, {} (contradiction {c:.2}, at or above {:.2}; {clash}); state what the span says",
            turn(*at),
            policy.contradiction
        )));
    }
    let (e, at) = check.entailment;
    if e >= policy.raw_entailment {
        return None;
    }
    let elsewhere = match check.elsewhere {
        Some(t) => format!(
            "; turn {t}, which it does not cite, does entail it: cite the span a claim comes from"
        ),
        None => String::new(),
    };
    Some(finding(Gate::FabricatedClaim, rid, format!(
        "no span claim {q} cites entails it (best entailment {e:.2} against {}, below {:.2}){elsewhere}",
        turn(at),
        policy.raw_entailment
    )))
}

/// Whether a claim has a raw-span ancestor, and whether it was re-grounded since.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grounding {
    /// A raw span is reachable through its witnesses.
    pub anchored: bool,
    /// A Reground record verified it.
    pub regrounded: bool,
}

/// `laundered-claim`: an anchored claim, not re-grounded, none of whose direct witnesses is a
/// raw span of its source window (`rests_on_raw` false). `window` names that window in the
/// sentence, when there is one (a summary's); `outside` lists the turns of raw spans the claim
/// does cite outside it, so the sentence says what the case is: cited turns outside the
/// window, or earlier claims only.
pub(crate) fn laundered_claim(
    rid: Rid,
    claim: &Claim,
    grounding: Grounding,
    rests_on_raw: bool,
    window: Option<&str>,
    outside: &[u64],
) -> Option<Finding> {
    (grounding.anchored && !grounding.regrounded && !rests_on_raw).then(|| {
        let of = window.map(|w| format!(" of {w}")).unwrap_or_default();
        let detail = if outside.is_empty() {
            format!(
                "claim {} rests on earlier claims, not on a raw span{of}; it stays unverified until re-grounded",
                quote(&claim.text)
            )
        } else {
            let turns: Vec<String> = outside.iter().map(u64::to_string).collect();
            format!(
                "claim {} cites turn {}, outside{}, and no raw span in it; cite a turn the summary covers, or re-ground the claim; it stays unverified until then",
                quote(&claim.text),
                turns.join(", "),
                window.map(|w| format!(" {w}")).unwrap_or_default()
            )
        };
        finding(Gate::LaunderedClaim, rid, detail)
    })
}

/// The laundering-rate threshold of a summary: the policy's, scaled down in proportion when
/// the budget shrinks against the parent summary's.
pub(crate) fn laundering_threshold(
    policy: &Policy,
    budget: u64,
    parent: Option<u64>,
) -> (f64, String) {
    match parent {
        Some(p) if p > 0 && budget < p => (
            // The policy's rate times the ratio, in that order: the last bit decides verdicts.
            policy.laundering_rate * (budget as f64 / p as f64),
            format!(" (scaled by budget {budget}/{p})"),
        ),
        _ => (policy.laundering_rate, String::new()),
    }
}

/// `laundering-rate`: laundered actionable claims / actionable claims above the threshold.
pub(crate) fn laundering_rate(
    rid: Rid,
    laundered: usize,
    actionable: usize,
    (threshold, scaled): (f64, String),
) -> Option<Finding> {
    if actionable == 0 {
        return None;
    }
    let rate = laundered as f64 / actionable as f64;
    (rate > threshold).then(|| {
        finding(Gate::LaunderingRate, rid, format!(
            "{laundered} of {actionable} actionable claims are laundered ({rate:.2}), above the threshold {threshold:.3}{scaled}; re-derive them from raw spans or re-ground them"
        ))
    })
}

/// Who found that a span contradicts a claim.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FoundBy {
    /// A recorded `contradicts` judgement on the claim or a claim it carries forward.
    Judgement,
    /// A judge, at the gate, with the clash it ruled (the passage it quotes).
    Judge(String),
    /// The word scorer alone, at the gate, with the clash it read.
    Scorer(String),
}

/// `evicted-disconfirmer`: a summary evicted `span`, which contradicts `claim`, a claim the
/// summary keeps. `span` is the evicted span's rid and the span, when it is in the ledger.
/// `subject` is the record the finding is about: the claim at the gate (as verdicts have
/// always stored it), the summary in the sweep and in `why`.
pub(crate) fn evicted_disconfirmer(
    subject: Rid,
    claim: &Claim,
    span: (Rid, Option<&Span>),
    by: FoundBy,
) -> Finding {
    let what = evicted(span);
    let by = match by {
        FoundBy::Judgement => "a recorded judgement".to_string(),
        FoundBy::Judge(clash) | FoundBy::Scorer(clash) => format!("the scorer: {clash}"),
    };
    finding(Gate::EvictedDisconfirmer, subject, format!(
        "the summary evicts {what}, which contradicts claim {} that it keeps (found by {by}); a summary may not evict its own disconfirmers",
        quote(&claim.text)
    ))
}

/// `evicted-clash`: a summary evicted `span`, a span of evidence the word scorer reads as
/// clashing with `claim` (`clash`), and no judgement records a contradiction: a suspicion the
/// verdict shows, which leaves the claim unverified.
pub(crate) fn evicted_clash(
    subject: Rid,
    claim: &Claim,
    span: (Rid, Option<&Span>),
    clash: &str,
) -> Finding {
    finding(Gate::EvictedClash, subject, format!(
        "the summary evicts {}, which the word scorer reads as clashing with claim {} that it keeps ({clash}); no judgement records a contradiction, so the claim stays unverified: check the turn, or record a judgement",
        evicted(span),
        quote(&claim.text)
    ))
}

/// An evicted span as a finding names it: its turn and its opening words, or its rid.
fn evicted(span: (Rid, Option<&Span>)) -> String {
    match span.1 {
        Some(s) => format!("turn {} ({})", s.turn, quote(&s.text)),
        None => span.0.to_string(),
    }
}

/// `source-missing`: a summary of a stream that holds no raw span at all, such as a log that
/// begins with a compaction of an earlier log imported without it. Its claims cannot be
/// checked, so they are unanchored; nothing says they were made up.
pub(crate) fn source_missing(rid: Rid, stream: &str, claims: usize) -> Finding {
    finding(Gate::SourceMissing, rid, format!(
        "the source of this summary is not in the ledger: stream {stream} holds no raw span before it, so its {claims} claims stay unanchored and unchecked; import the earlier log it continues first (cairn import DIR links a continued log to it)"
    ))
}

/// `depth-exceeded`: a summary deeper than the policy's `max_depth`.
pub(crate) fn depth_exceeded(rid: Rid, depth: u32, policy: &Policy) -> Option<Finding> {
    (depth > policy.max_depth).then(|| {
        finding(Gate::DepthExceeded, rid, format!(
            "this is self-authored summary {depth} in a row since the last grounding, more than {}; re-ground against the raw spans or use a separate pass",
            policy.max_depth
        ))
    })
}

/// `unpinned-reference`: the stream's raw spans hold decision-relevant items no pin covers.
///
/// Only the seed's classes block a compaction: prohibitions, commitments, failed attempts (and
/// entities, pinned by hand). Preferences, policy rules and identifiers (classifier of derived
/// rules 3) are offered to `pin --auto` and guarded by `pin-loss` once pinned, but a compaction
/// that leaves them unpinned is not refused for it: they are many, and a false alarm would block
/// every compaction of a stream that names an order code.
pub(crate) fn unpinned_reference(subject: Rid, stream: &str, items: &[Item]) -> Option<Finding> {
    let items: Vec<&Item> = items
        .iter()
        .filter(|i| blocks_compaction(i.class))
        .collect();
    if items.is_empty() {
        return None;
    }
    let shown: Vec<String> = items
        .iter()
        .take(5)
        .map(|i| format!("turn {}: {} {}", i.turn, i.class.name(), quote(&i.text)))
        .collect();
    Some(finding(Gate::UnpinnedReference, subject, format!(
        "cannot compact stream {stream}: unpinned reference, {} decision-relevant item{} ({}{}); pin them (cairn pin --auto {stream} NAME) or extend the budget",
        items.len(),
        if items.len() == 1 { "" } else { "s" },
        shown.join("; "),
        if items.len() > 5 { "; ..." } else { "" }
    )))
}

/// Whether an unpinned item of this class refuses a compaction (`unpinned-reference`).
pub(crate) fn blocks_compaction(class: PinClass) -> bool {
    matches!(
        class,
        PinClass::Prohibition | PinClass::Commitment | PinClass::FailedAttempt | PinClass::Entity
    )
}

/// `pin-loss`: reference-anchored fidelity below the policy's, or any pinned prohibition lost.
/// `lost` holds each lost item with its pin's name.
pub(crate) fn pin_loss(
    rid: Rid,
    stream: &str,
    fidelity: f64,
    lost: &[(String, PinItem)],
    policy: &Policy,
) -> Option<Finding> {
    let prohibition_lost = lost.iter().any(|(_, i)| i.class == PinClass::Prohibition);
    if fidelity >= policy.fidelity && !prohibition_lost {
        return None;
    }
    let names: Vec<String> = lost
        .iter()
        .map(|(n, i)| format!("{} {} (pin {n})", i.class.name(), quote(&i.text)))
        .collect();
    Some(finding(Gate::PinLoss, rid, format!(
        "cannot compact stream {stream}: pin-loss, reference-anchored fidelity {fidelity:.2} (threshold {:.2}){}; lost: {}",
        policy.fidelity,
        if prohibition_lost { ", and a pinned prohibition is lost" } else { "" },
        names.join(", ")
    )))
}

/// What an action's reliance on a claim rests on, for `irreversible-unverified`.
#[derive(Debug, Clone)]
pub(crate) struct Reliance {
    /// The claim's status now.
    pub status: Status,
    /// Its depth in claims, when anchored.
    pub depth: Option<u32>,
    /// The depth of the chain of self-authored summaries that carries it (0 when none does,
    /// or when the claim was re-grounded after the chain's head).
    pub chain: u32,
    /// The judge whose ruling verified it, when a judge (not the built-in scorer) did and it
    /// was not re-grounded since.
    pub judged_by: Option<String>,
}

/// `irreversible-unverified`: an irreversible action relies on a claim that is not verified,
/// is hedged, is deeper than `max_depth`, or is carried by a chain deeper than `max_depth`.
pub(crate) fn irreversible_unverified(
    action: &Action,
    rid: Rid,
    claim: &Claim,
    reliance: Reliance,
    policy: &Policy,
) -> Option<Finding> {
    if !action.irreversible {
        return None;
    }
    let mut why = Vec::new();
    if reliance.status != Status::Verified {
        why.push(format!("it is {}", reliance.status.name()));
    } else if let Some(judge) = reliance
        .judged_by
        .filter(|_| !policy.judge_carries_irreversible)
    {
        why.push(format!(
            "only judge {judge} verified it (the policy's judge_carries_irreversible is off)"
        ));
    }
    if claim.origin == Origin::Hedged {
        why.push("it is hedged".to_string());
    }
    if let Some(d) = reliance.depth.filter(|d| *d > policy.max_depth) {
        why.push(format!("it is {d} claims deep"));
    }
    if reliance.chain > policy.max_depth {
        why.push(format!(
            "it is carried by a chain of {} self-authored summaries",
            reliance.chain
        ));
    }
    (!why.is_empty()).then(|| {
        finding(
            Gate::IrreversibleUnverified,
            rid,
            format!(
                "irreversible action {} relies on claim {}, and {}; re-ground the claim first",
                quote(&action.text),
                quote(&claim.text),
                why.join(" and ")
            ),
        )
    })
}

/// `prohibited-action`: the action does what a pinned prohibition forbids (SPEC.md 8.4).
pub(crate) fn prohibited_action(
    rid: Rid,
    action: &Action,
    (pin, item): (&str, &PinItem),
    policy: &Policy,
) -> Option<Finding> {
    if item.class != PinClass::Prohibition {
        return None;
    }
    let how = super::pins::prohibits(
        &item.text,
        &action.text,
        action.irreversible,
        policy.prohibition_match,
    )?;
    Some(finding(
        Gate::ProhibitedAction,
        rid,
        format!(
            "action {} matches pinned prohibition {} (pin {pin}): {how}; refused",
            quote(&action.text),
            quote(&item.text)
        ),
    ))
}
