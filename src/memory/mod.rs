//! The read path: what an agent gets back from its memory (SPEC.md section 10a).
//!
//! [`context`] answers "what should the agent see on its next turn": the stream's pins first,
//! never dropped; then the head summary's claims with their status, origin and flags, so a
//! model can tell a fact from a guess; then the raw spans no admitted summary evicted, newest
//! first, as far as the token budget goes. Every part is read from tables the store derives at
//! append (pins, heads, verdicts, statuses, the turn and eviction indexes), never by a scan of
//! the log.

pub mod entries;
mod recall;

pub use recall::{recall, Hit, Recall, MAX_LIMIT, POSTINGS_READ, RESCORED};

use crate::error::Result;
use crate::record::{Gate, Origin, PinClass, Record, Rid, Role, Status};
use crate::store::Read;

/// Tokens an entry costs beyond its text: its label, status and separators.
pub const ENTRY_TOKENS: usize = 4;

/// The tokens a text is counted as: one per four characters, rounded up, plus
/// [`ENTRY_TOKENS`]. An approximation of BPE tokenisers on English text (about four characters
/// a token), stated so that a budget means the same on every machine.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4) + ENTRY_TOKENS
}

/// One pinned constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinLine {
    /// The pin's name.
    pub pin: String,
    /// What kind of constraint.
    pub class: PinClass,
    /// The constraint, verbatim.
    pub text: String,
    /// The span it was taken from, if the pin names one.
    pub witness: Option<Rid>,
    /// The user turn that retired it, if one did: the pin stays, the constraint is lifted.
    pub retired_by: Option<Rid>,
}

/// One claim of the head summary, with how far it can be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimLine {
    /// The claim.
    pub rid: Rid,
    /// Its text.
    pub text: String,
    /// Its standing: the status the head summary's verdict gave it, or verified once it was
    /// re-grounded (the store's `status` table).
    pub status: Status,
    /// Its provenance tag.
    pub origin: Origin,
    /// The flags the gates raised on it without refusing (`laundered-claim`, `hedge-stripped`,
    /// ...), by gate name.
    pub flags: Vec<Gate>,
    /// What it cites.
    pub witnesses: Vec<Rid>,
}

/// One raw span still in the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpanLine {
    /// The span.
    pub rid: Rid,
    /// Its turn.
    pub turn: u64,
    /// Who spoke.
    pub role: Role,
    /// What was said; cut with a marker when the turn alone would take more than its share
    /// of the budget.
    pub text: String,
    /// When the text was cut: the turn's whole length, in characters.
    pub truncated: Option<usize>,
}

/// What an agent should see of a stream on its next turn, within a token budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The stream.
    pub stream: String,
    /// The budget asked for, in tokens (see [`tokens`]).
    pub budget: usize,
    /// The tokens the answer uses.
    pub used: usize,
    /// The pins alone exceed the budget: they are all returned anyway.
    pub over_budget: bool,
    /// Every pinned item of the stream, pins in name order, items in the order pinned.
    pub pins: Vec<PinLine>,
    /// The head summary, if the stream has one.
    pub head: Option<Rid>,
    /// Its claims, in the summary's order, as many as the budget allows.
    pub claims: Vec<ClaimLine>,
    /// Claims of the head left out for the budget.
    pub dropped_claims: usize,
    /// Spans no admitted summary evicted, newest first, as many as the budget allows.
    pub spans: Vec<SpanLine>,
    /// Spans of the window left out for the budget.
    pub dropped_spans: u64,
    /// The turns among them that hold decision-relevant items (prohibitions, commitments,
    /// failed attempts...): they are dropped last, and named when they are.
    pub dropped_decision_turns: Vec<u64>,
}

/// What `stream`'s agent should see next, within `budget` tokens: pins (never dropped), then
/// the head summary's claims in order, then the window's spans newest first. When the budget
/// runs short, spans go first, then claims (the last of them). Among spans, those holding
/// decision-relevant items are kept first and dropped last (and the dropped ones are named),
/// then the others newest first; a span longer than a quarter of the budget left for spans is
/// cut to that, with a marker, rather than pushing out every older one. A claim that does not
/// fit is left out whole. A stream the ledger does not hold gives an empty context.
pub fn context<R: Read>(read: &R, stream: &str, budget: usize) -> Result<Context> {
    let mut used = 0;
    let mut pins = Vec::new();
    for (name, pin, rid) in pins_checked(read, stream)? {
        let lifted = read.retirements(&rid)?;
        for item in pin.items {
            used += tokens(&item.text);
            let retired_by = (lifted.iter())
                .find(|(text, _)| *text == item.text)
                .map(|(_, (_, turn))| *turn);
            pins.push(PinLine {
                pin: name.clone(),
                class: item.class,
                text: item.text,
                witness: item.witness,
                retired_by,
            });
        }
    }
    let over_budget = used > budget;
    let state = read.stream(stream)?;
    if state.head.is_none() && state.summaries > 0 {
        return Err(damage(
            "streams",
            format!(
                "stream {stream} counts {} admitted summaries but names no head",
                state.summaries
            ),
        ));
    }
    let mut claims = Vec::new();
    let mut dropped_claims = 0;
    if let Some(head) = state.head {
        let summary = match read.named(&head, "streams")? {
            Record::Summary(s) if s.stream == stream => s.claims,
            _ => {
                return Err(damage(
                    "streams",
                    format!("the head of stream {stream}, {head}, is not a summary of it"),
                ))
            }
        };
        let verdict = match read.verdict_of(&head)? {
            Some(v) => match read.named(&v, "verdicts")? {
                Record::Verdict(v) if v.subject == head && v.admitted => v,
                _ => {
                    return Err(damage(
                        "verdicts",
                        format!("the verdict of head {head} is not its admission"),
                    ))
                }
            },
            None => {
                return Err(damage(
                    "verdicts",
                    format!("the head of stream {stream}, {head}, has no verdict"),
                ))
            }
        };
        let verdict = Some(verdict);
        for rid in summary {
            // Once one claim is left out, the rest are counted, not read.
            if dropped_claims > 0 {
                dropped_claims += 1;
                continue;
            }
            let Record::Claim(claim) = read.named(&rid, "records")? else {
                return Err(damage(
                    "records",
                    format!("summary {head} holds {rid}, which is not a claim"),
                ));
            };
            let cost = tokens(&claim.text);
            if used + cost > budget {
                dropped_claims += 1;
                continue;
            }
            used += cost;
            let status = read.standing(&rid)?.status;
            let mut flags: Vec<Gate> = (verdict.iter())
                .flat_map(|v| v.findings.iter())
                .filter(|f| f.subject == rid)
                .map(|f| f.gate)
                .collect();
            flags.dedup();
            claims.push(ClaimLine {
                rid,
                text: claim.text,
                status,
                origin: claim.origin,
                flags,
                witnesses: claim.witnesses,
            });
        }
    }
    let window = state.spans.saturating_sub(state.evicted);
    let mut spans = Vec::new();
    let mut dropped_decision_turns = Vec::new();
    // Spans give way to claims: once a claim is left out, so is every span.
    if dropped_claims == 0 {
        let left = budget.saturating_sub(used);
        let cap = (left / SPAN_SHARE).max(MIN_SPAN_TOKENS);
        let mut taken = std::collections::HashSet::new();
        // Turns that hold decision-relevant items go in first, newest first, and are dropped
        // last: a prohibition said at turn 0 outlives the chatter after it.
        let mut relevant: Vec<(u64, Rid)> = (read.items(stream)?.into_iter())
            .map(|i| (i.turn, i.span))
            .collect();
        relevant.dedup();
        relevant.reverse();
        for (turn, rid) in relevant {
            if read.evicted_by(&rid)?.is_some() {
                continue;
            }
            match fitted(read, rid, turn, cap, budget.saturating_sub(used))? {
                Some((line, cost)) => {
                    used += cost;
                    taken.insert(rid);
                    spans.push(line);
                }
                None => dropped_decision_turns.push(turn),
            }
        }
        dropped_decision_turns.sort_unstable();
        // Then the other turns of the window, newest first, while they fit.
        let (mut walked, mut full) = (0u64, false);
        read.window_newest_first(stream, |turn, rid| {
            walked += 1;
            if taken.contains(&rid) {
                return Ok(true);
            }
            // The window is read through the eviction index: the summaries must agree.
            if read.evicted_by(&rid)?.is_some() {
                return Err(damage(
                    "evictions",
                    format!("span {rid} is in the window and evicted"),
                ));
            }
            match fitted(read, rid, turn, cap, budget.saturating_sub(used))? {
                Some((line, cost)) => {
                    used += cost;
                    spans.push(line);
                    Ok(true)
                }
                None => {
                    full = true;
                    Ok(false)
                }
            }
        })?;
        // Walked to its end, the window holds as many turns as the stream's state counts.
        if !full && walked != window {
            return Err(damage(
                "turns",
                format!("stream {stream}'s window holds {walked} turns, its state counts {window}"),
            ));
        }
        spans.sort_by_key(|s| std::cmp::Reverse(s.turn));
    }
    Ok(Context {
        stream: stream.to_string(),
        budget,
        used,
        over_budget,
        pins,
        head: state.head,
        claims,
        dropped_claims,
        dropped_spans: window.saturating_sub(spans.len() as u64),
        dropped_decision_turns,
        spans,
    })
}

/// Damage found in a derived table: never an empty or different answer.
fn damage(table: &'static str, detail: String) -> crate::error::Error {
    crate::error::ErrorKind::CorruptFile {
        path: format!("{table} table").into(),
        detail,
    }
    .into()
}

/// A stream's pins by name, each checked against the log: the pins table must name pin records
/// of the stream, and every pin record of the stream (found through the kind index, a second
/// structure) must be in it, so one damaged entry cannot drop a pinned prohibition unseen.
fn pins_checked<R: Read>(read: &R, stream: &str) -> Result<Vec<(String, crate::record::Pin, Rid)>> {
    let mut out = Vec::new();
    for (name, rid) in read.pins(stream)? {
        match read.named(&rid, "pins")? {
            Record::Pin(p) if p.stream == stream && p.name == name => out.push((name, p, rid)),
            _ => {
                return Err(damage(
                    "pins",
                    format!("pin {name:?} of stream {stream} names {rid}, which is not that pin"),
                ))
            }
        }
    }
    let mut of_stream = 0;
    for rid in read.of_kind(crate::record::Kind::Pin)? {
        if let Record::Pin(p) = read.named(&rid, "by_kind")? {
            of_stream += usize::from(p.stream == stream);
        }
    }
    if of_stream != out.len() {
        return Err(damage(
            "pins",
            format!(
                "stream {stream} has {of_stream} pin records but its pins table names {}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// At most this share of the budget left for turns goes to one turn: a longer turn is cut
/// (with a marker), so one 300 KB tool output cannot push every older turn out.
pub const SPAN_SHARE: usize = 4;

/// The fewest tokens a turn is given before it is cut, whatever the budget.
pub const MIN_SPAN_TOKENS: usize = 32;

/// A span as a context line within `cap` tokens (cut with a marker past it) if that fits in
/// `left`, with its cost; `None` when it does not fit.
fn fitted<R: Read>(
    read: &R,
    rid: Rid,
    turn: u64,
    cap: usize,
    left: usize,
) -> Result<Option<(SpanLine, usize)>> {
    let s = match read.named(&rid, "turns")? {
        Record::Span(s) if s.turn == turn => s,
        _ => {
            return Err(damage(
                "turns",
                format!("turn {turn} names {rid}, which is not that turn's span"),
            ))
        }
    };
    let chars = s.text.chars().count();
    let (text, truncated) = if tokens(&s.text) <= cap {
        (s.text, None)
    } else {
        // Room for the marker, then as many characters as the cap leaves.
        let keep = cap.saturating_sub(ENTRY_TOKENS + MARKER_TOKENS) * 4;
        let head: String = s.text.chars().take(keep).collect();
        let shown = head.chars().count();
        (
            format!("{head} [... cut: {shown} of {chars} characters shown; the whole turn is in the ledger]"),
            Some(chars),
        )
    };
    let cost = tokens(&text);
    if cost > left {
        return Ok(None);
    }
    Ok(Some((
        SpanLine {
            rid,
            turn,
            role: s.role,
            text,
            truncated,
        },
        cost,
    )))
}

/// The tokens the cut marker takes.
const MARKER_TOKENS: usize = 24;

impl Context {
    /// The context as a JSON object: `stream`, `budget`, `used`, `over_budget`, `pins`
    /// (`pin`, `class`, `text`, `witness`), `head`, `claims` (`rid`, `text`, `status`,
    /// `origin`, `flags`, `witnesses`), `dropped_claims`, `spans` (`rid`, `turn`, `role`,
    /// `text`, newest first, and `truncated`, the whole length, when the text was cut),
    /// `dropped_spans` and `dropped_decision_turns`. Rids are full hex.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        json!({
            "stream": self.stream,
            "budget": self.budget,
            "used": self.used,
            "over_budget": self.over_budget,
            "pins": self.pins.iter().map(|p| json!({
                "pin": p.pin, "class": p.class.name(), "text": p.text,
                "witness": p.witness.map(|w| w.to_hex()),
                "retired_by": p.retired_by.map(|w| w.to_hex()),
            })).collect::<Vec<_>>(),
            "head": self.head.map(|h| h.to_hex()),
            "claims": self.claims.iter().map(|c| json!({
                "rid": c.rid.to_hex(), "text": c.text, "status": c.status.name(),
                "origin": c.origin.tag(),
                "flags": c.flags.iter().map(|g| g.name()).collect::<Vec<_>>(),
                "witnesses": c.witnesses.iter().map(|w| w.to_hex()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "dropped_claims": self.dropped_claims,
            "spans": self.spans.iter().map(|s| {
                let mut v = json!({
                    "rid": s.rid.to_hex(), "turn": s.turn, "role": s.role.name(), "text": s.text,
                });
                if let Some(n) = s.truncated {
                    v["truncated"] = json!(n);
                }
                v
            }).collect::<Vec<_>>(),
            "dropped_spans": self.dropped_spans,
            "dropped_decision_turns": self.dropped_decision_turns,
        })
    }

    /// The context as text for a model or a person: one line a pin, a claim (its status,
    /// origin and flags in brackets first) or a span (turn and role first).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let over = if self.over_budget {
            "; the pins alone exceed the budget, and are all given"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "context of stream {}: {} of {} tokens{over}",
            self.stream, self.used, self.budget
        );
        if !self.pins.is_empty() {
            let _ = writeln!(out, "pinned (never dropped):");
            for p in &self.pins {
                let retired = match p.retired_by {
                    Some(turn) => format!(" [retired by {}: no longer in force]", turn.short()),
                    None => String::new(),
                };
                let _ = writeln!(out, "  [{}] {}{retired}", p.class.name(), one_line(&p.text));
            }
        }
        if let Some(head) = self.head {
            let _ = writeln!(out, "claims of the head summary {}:", head.short());
            for c in &self.claims {
                let mut tags = vec![c.status.name(), c.origin.tag().unwrap_or("no origin")];
                tags.extend(c.flags.iter().map(|g| g.name()));
                let _ = writeln!(out, "  [{}] {}", tags.join(", "), one_line(&c.text));
            }
        }
        if !self.spans.is_empty() {
            let _ = writeln!(out, "recent turns, newest first:");
            for s in &self.spans {
                let _ = writeln!(
                    out,
                    "  turn {} {}: {}",
                    s.turn,
                    s.role.name(),
                    one_line(&s.text)
                );
            }
        }
        if self.dropped_claims > 0 || self.dropped_spans > 0 {
            let _ = writeln!(
                out,
                "left out for the budget: {} of the head's claims, {} of the window's turns",
                self.dropped_claims, self.dropped_spans
            );
        }
        if !self.dropped_decision_turns.is_empty() {
            let turns: Vec<String> = (self.dropped_decision_turns.iter())
                .map(u64::to_string)
                .collect();
            let _ = writeln!(
                out,
                "among them turns holding decision-relevant items (rules, commitments, failed attempts): {}; raise the budget, or pin them",
                turns.join(", ")
            );
        }
        out
    }
}

/// A text on one line: line breaks become spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
