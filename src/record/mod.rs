//! Record kinds, their canonical bytes, and their identity.
//!
//! Every record is an immutable value. Its canonical bytes are one format-version byte, one kind
//! byte, and the body encoded with bincode 2 using fixed-width little-endian integers. Its id
//! (rid) is `BLAKE3(0x00 || bytes)`, which is also the record's leaf hash in a Merkle log.
//! SPEC.md gives the byte layout of every kind.

mod codec;
mod gate;
pub(crate) mod rid;

pub use codec::{decode, decode_trusted, encode, DecodeError, FORMAT_VERSION, MAX_RECORD_BYTES};
pub use gate::{Effect, Gate};
pub use rid::{Rid, RidParseError};

use bincode::{Decode, Encode};

/// Scores are integers in parts per ten thousand: `10_000` is 1.0.
pub type Score = u16;

/// The largest valid [`Score`], standing for 1.0.
pub const SCORE_ONE: Score = 10_000;

/// The kind of a record, as stored in its second byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Raw primary evidence: one turn of a stream.
    Span = 1,
    /// A proposition with provenance links to its witnesses.
    Claim = 2,
    /// A compaction proposal.
    Summary = 3,
    /// A write-once constraint set.
    Pin = 4,
    /// A scorer's or a person's assertion about a claim and a span.
    Judgement = 5,
    /// The outcome of gating a summary or an action.
    Verdict = 6,
    /// A proposed action.
    Action = 7,
    /// A claim re-checked against its raw spans.
    Reground = 8,
    /// An action checked again, against the ledger as it stood at that log index.
    Check = 9,
    /// A write call's idempotency key and what the call appended.
    Receipt = 10,
    /// A judge's answer about a claim and the spans it cites.
    Ruling = 11,
    /// A pinned item lifted by a user turn; the pin itself stays.
    Retirement = 12,
    /// What the classifier found in a span, written by the store when the span is appended.
    Classification = 13,
    /// Where a span came from in the original log: the file, the message id or line, the time.
    Place = 14,
    /// A version of a key-value entry of an application's store (LangGraph's `BaseStore`),
    /// or its deletion.
    Entry = 15,
}

impl Kind {
    /// The kind stored under this byte, if any.
    pub fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Span,
            2 => Kind::Claim,
            3 => Kind::Summary,
            4 => Kind::Pin,
            5 => Kind::Judgement,
            6 => Kind::Verdict,
            7 => Kind::Action,
            8 => Kind::Reground,
            9 => Kind::Check,
            10 => Kind::Receipt,
            11 => Kind::Ruling,
            12 => Kind::Retirement,
            13 => Kind::Classification,
            14 => Kind::Place,
            15 => Kind::Entry,
            _ => return None,
        })
    }

    /// The lower-case name used in JSON Lines and messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Span => "span",
            Kind::Claim => "claim",
            Kind::Summary => "summary",
            Kind::Pin => "pin",
            Kind::Judgement => "judgement",
            Kind::Verdict => "verdict",
            Kind::Action => "action",
            Kind::Reground => "reground",
            Kind::Check => "check",
            Kind::Receipt => "receipt",
            Kind::Ruling => "ruling",
            Kind::Retirement => "retirement",
            Kind::Classification => "classification",
            Kind::Place => "place",
            Kind::Entry => "entry",
        }
    }

    /// Every kind, in byte order.
    pub const ALL: [Kind; 15] = [
        Kind::Span,
        Kind::Claim,
        Kind::Summary,
        Kind::Pin,
        Kind::Judgement,
        Kind::Verdict,
        Kind::Action,
        Kind::Reground,
        Kind::Check,
        Kind::Receipt,
        Kind::Ruling,
        Kind::Retirement,
        Kind::Classification,
        Kind::Place,
        Kind::Entry,
    ];
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Who spoke a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub enum Role {
    /// The person directing the agent.
    User,
    /// The agent itself.
    Assistant,
    /// A tool's output.
    Tool,
    /// The system prompt or runtime.
    System,
    /// A tool call the agent made: the tool's name in `tool`, its arguments as the text. Kept
    /// apart from the tool's output, which is a `Tool` span.
    ToolCall,
}

impl Role {
    /// How many roles there are: a table indexed by `role as usize` has this many entries.
    pub const COUNT: usize = 5;
}

/// Where a claim says it came from. `Missing` and `Other` are kept so the gates can flag them.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub enum Origin {
    /// The user said it.
    UserSaid,
    /// A tool printed it.
    ToolOutput,
    /// Somebody said it with a hedge ("I think ...").
    Hedged,
    /// The agent inferred it.
    Inferred,
    /// No origin tag was given.
    Missing,
    /// A tag outside the four known ones, kept byte-exact.
    Other(String),
}

/// Who wrote a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub enum Author {
    /// The agent summarised its own context.
    SelfAuthored,
    /// A separate pass with access to the raw spans.
    Separate,
    /// cairn itself: the nearest admissible compaction to the refused proposal named here
    /// (SPEC.md section 8.9). Only the gates write it; JSON Lines input cannot.
    Repair(Rid),
}

impl Author {
    /// The name used in JSON output: `self`, `separate`, or `cairn` for a repair.
    pub fn name(self) -> &'static str {
        match self {
            Author::SelfAuthored => "self",
            Author::Separate => "separate",
            Author::Repair(_) => "cairn",
        }
    }

    /// The author a JSON Lines name gives. `cairn` names none: only the gates write a repair.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "self" => Some(Author::SelfAuthored),
            "separate" => Some(Author::Separate),
            _ => None,
        }
    }

    /// Every name JSON Lines input accepts, for messages.
    pub const NAMES: &'static str = "self separate ";

    /// The refused proposal this summary repairs, when cairn wrote it.
    pub fn repairs(self) -> Option<Rid> {
        match self {
            Author::Repair(p) => Some(p),
            _ => None,
        }
    }
}

/// The class of a pinned item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub enum PinClass {
    /// Something that must never be done.
    Prohibition,
    /// A numeric commitment: a version, budget, deadline or limit.
    Commitment,
    /// A failed attempt whose reason prevents a retry.
    FailedAttempt,
    /// A named external entity that must not be confused.
    Entity,
    /// A preference or choice the user states.
    Preference,
    /// A rule a system prompt or policy states.
    Policy,
    /// An identifier kept verbatim: a booking or order code, a hash, a phone number, an
    /// amount, a path, a version, a name.
    Identifier,
}

/// How a span bears on a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub enum Relation {
    /// The span entails the claim.
    Entails,
    /// The span contradicts the claim.
    Contradicts,
    /// Neither.
    Neutral,
}

/// Raw primary evidence: one turn of one stream. The only kind that can anchor a claim.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Span {
    /// The stream (agent session) it belongs to.
    pub stream: String,
    /// Its turn number; `(stream, turn)` names at most one span.
    pub turn: u64,
    /// Who spoke it.
    pub role: Role,
    /// The tool's name, for tool output.
    pub tool: Option<String>,
    /// The text, byte-exact.
    pub text: String,
}

/// A proposition with links to its witnesses (spans or earlier claims).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Claim {
    /// The stream it belongs to.
    pub stream: String,
    /// The proposition.
    pub text: String,
    /// Its provenance tag.
    pub origin: Origin,
    /// Rids of spans or claims, sorted and de-duplicated.
    pub witnesses: Vec<Rid>,
    /// Whether the agent may act on it.
    pub actionable: bool,
}

/// A compaction proposal.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Summary {
    /// The stream it compacts.
    pub stream: String,
    /// The summary it replaces, if any.
    pub parent: Option<Rid>,
    /// Who wrote it.
    pub author: Author,
    /// The token budget it was written under.
    pub budget: u64,
    /// The spans of its immediate source window, sorted and de-duplicated.
    pub covers: Vec<Rid>,
    /// The spans it removes from the agent's window, sorted and de-duplicated.
    pub evicts: Vec<Rid>,
    /// Its claims, in order (`prior:N` counts from 0), without repeats.
    pub claims: Vec<Rid>,
    /// The fidelity score it reported for itself.
    pub self_score: Option<Score>,
    /// Whether it asks for its carried claims to be re-grounded at the gate.
    pub reground: bool,
}

/// One item of a pinned constraint set.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct PinItem {
    /// What kind of constraint it is.
    pub class: PinClass,
    /// The constraint, as text.
    pub text: String,
    /// The span it was taken from, if known.
    pub witness: Option<Rid>,
}

/// A write-once constraint set, named within its stream.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Pin {
    /// The stream it constrains.
    pub stream: String,
    /// Its name; `(stream, name)` holds one pin forever.
    pub name: String,
    /// The items, in the order given.
    pub items: Vec<PinItem>,
}

/// What a scorer or a person asserted about a claim and a span.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Judgement {
    /// The claim judged.
    pub claim: Rid,
    /// The span it was judged against.
    pub span: Rid,
    /// The relation found.
    pub relation: Relation,
    /// Confidence in parts per ten thousand.
    pub score: Score,
    /// Who judged: a scorer id or a person.
    pub scorer: String,
}

/// One gate finding inside a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Finding {
    /// The gate, stored as its stable name, such as `unanchored-claim`.
    pub gate: Gate,
    /// The record the finding is about.
    pub subject: Rid,
    /// A sentence saying what was found.
    pub detail: String,
}

/// A claim's standing, as a gate found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub enum Status {
    /// A raw witness in the summary's source window entails it, or it was re-grounded.
    Verified,
    /// Anchored only through earlier claims or summaries, weakly entailed, or hedge-stripped.
    Unverified,
    /// No raw-span ancestor at all.
    Unanchored,
    /// Similar to its best raw span but not entailed by it.
    Fabricated,
}

/// One claim's status inside a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode)]
pub struct ClaimStatus {
    /// The claim.
    pub claim: Rid,
    /// What the gates found it to be.
    pub status: Status,
}

/// The outcome of gating a summary or an action.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Verdict {
    /// The summary or action gated.
    pub subject: Rid,
    /// Whether it was admitted.
    pub admitted: bool,
    /// What the gates found, in gate order.
    pub findings: Vec<Finding>,
    /// The status of each claim of the subject (a summary's claims, an action's reliances).
    pub claims: Vec<ClaimStatus>,
    /// The score the proposal reported for itself.
    pub self_score: Option<Score>,
    /// The score anchored to the pinned reference.
    pub anchored_score: Option<Score>,
    /// BLAKE3 of the policy the gates ran under.
    pub policy: [u8; 32],
}

/// A proposed action, gated before the agent acts.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Action {
    /// The stream it belongs to.
    pub stream: String,
    /// What the agent means to do.
    pub text: String,
    /// Whether it cannot be undone.
    pub irreversible: bool,
    /// The claims it relies on, sorted and de-duplicated.
    pub relies_on: Vec<Rid>,
}

/// A claim re-checked against its raw-span ancestors.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Reground {
    /// The claim re-checked.
    pub claim: Rid,
    /// The raw spans it was checked against, sorted and de-duplicated.
    pub spans: Vec<Rid>,
    /// The entailment score found.
    pub score: Score,
}

/// An action checked again: the ledger had changed (its stream's pins, head or the statuses
/// of the claims it relies on) since its last check. The action's first check is the action
/// record itself; each later one is a record of this kind, appended at log index `at`, with a
/// verdict of its own (SPEC.md section 8.4a).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Check {
    /// The action checked.
    pub action: Rid,
    /// The log index this check record is appended at: what makes each check its own event.
    pub at: u64,
}

/// A write call's idempotency key, the hash of what the call carried, and the spans it
/// appended: a call retried with the same key and the same content is answered from it and
/// appends nothing; the same key with other content is refused (SPEC.md section 10c).
/// Write-once per (stream, key).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Receipt {
    /// The stream written to.
    pub stream: String,
    /// The key the caller gave the call.
    pub key: String,
    /// BLAKE3 of what the call carried, as the caller sent it.
    pub payload: [u8; 32],
    /// The spans the call appended or found, sorted and de-duplicated.
    pub spans: Vec<Rid>,
}

/// A judge's answer (SPEC.md section 9.6): the claim, the spans it was judged against, the
/// judge's id (its kind and model), the version of the prompt it was asked with, its answer,
/// and the verbatim quote from the spans it gave for it (empty when the judge gives none).
/// Appended by the gate that asked, before its verdict; nothing calls a judge again to read it.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Ruling {
    /// The claim judged.
    pub claim: Rid,
    /// The spans it was judged against, sorted and de-duplicated.
    pub spans: Vec<Rid>,
    /// The judge's id: its kind and model (`chat:llama3.1`, `minicheck:bespoke-minicheck`).
    pub judge: String,
    /// The version of the prompt the judge was asked with.
    pub prompt: String,
    /// What the judge answered: the spans support the claim, contradict it, or do not say.
    pub answer: Relation,
    /// The words of the spans the judge quoted for its answer, verbatim.
    pub quote: String,
}

/// A pinned item retired: the user turn that lifts the constraint, cited as `witness`. The
/// pin stays write-once; gates stop holding compactions and actions to the item, and every
/// view of the pin shows the retirement (SPEC.md section 8.4b). Refused without a user turn of
/// the pin's stream, or for an item the pin does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Retirement {
    /// The pin's stream.
    pub stream: String,
    /// The pin.
    pub pin: Rid,
    /// The item's text, as the pin holds it.
    pub item: String,
    /// The user turn that lifts it.
    pub witness: Rid,
}

/// What the classifier found in a span: the decision-relevant items that `pin --auto`
/// proposes and `unpinned-reference` counts (SPEC.md section 8.3). The store writes it right
/// after the span, in the same transaction, when the classifier finds anything; nothing else
/// may append one, and a span has at most one. Old ledgers, whose items were derived without
/// records, keep the items they derived (SPEC.md section 4.3).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Classification {
    /// The span.
    pub span: Rid,
    /// The id of the classifier that found them (`cairn-classifier-5-…`).
    pub classifier: String,
    /// What it found, in the order it found them: at least one, at most 255.
    pub items: Vec<FoundItem>,
}

/// One item of a [`Classification`] record.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct FoundItem {
    /// What kind of item.
    pub class: PinClass,
    /// The sentence or line that states it.
    pub text: String,
}

/// Where a span came from in the original log it was imported from (SPEC.md section 2.1):
/// written by an importer, or from a span line's `source`, right after the span. The span's own
/// bytes do not change; a span may have more than one place (the same turn seen in two logs).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Place {
    /// The span.
    pub span: Rid,
    /// The log: a file path or a session id, as the importer read it.
    pub log: String,
    /// The message's id in the log (a uuid, a call id), if it has one.
    pub message: Option<String>,
    /// The line of the log (1-based), for a log read line by line.
    pub line: Option<u64>,
    /// The time the log gives the message, as written there (RFC 3339 mostly).
    pub timestamp: Option<String>,
}

/// A version of one entry of an application's key-value store (SPEC.md section 10d): a value
/// under a key in a namespace, or its deletion (a tombstone, `value` None). A put appends a new
/// version naming the one it replaces, so every earlier version stays. Entries belong to no
/// stream: they never enter an agent's `context` or `recall`, only the store's own search.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode)]
pub struct Entry {
    /// The namespace's labels, outermost first: at least one, none empty, none holding
    /// [`NAMESPACE_SEPARATOR`].
    pub namespace: Vec<String>,
    /// The key within the namespace.
    pub key: String,
    /// The value, as JSON text; `None` deletes the entry.
    pub value: Option<String>,
    /// The text the store's search indexes for this version (`None`: not searchable).
    pub text: Option<String>,
    /// The version this one replaces: the key's current version when it was appended.
    pub previous: Option<Rid>,
    /// When the key was first put, in milliseconds since the Unix epoch.
    pub created: u64,
    /// When this version was put, in milliseconds since the Unix epoch.
    pub at: u64,
}

/// The character that cannot appear in a namespace label: the store joins labels with it.
pub const NAMESPACE_SEPARATOR: char = '\u{1f}';

impl Entry {
    /// The namespace as the store keys it: each label followed by [`NAMESPACE_SEPARATOR`], so
    /// that a namespace's prefixes are prefixes of its path.
    pub fn path(namespace: &[String]) -> String {
        let mut out = String::new();
        for label in namespace {
            out.push_str(label);
            out.push(NAMESPACE_SEPARATOR);
        }
        out
    }
}

/// The most items one classification record holds.
pub const MAX_FOUND_ITEMS: usize = 255;

/// Any record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// See [`Span`].
    Span(Span),
    /// See [`Claim`].
    Claim(Claim),
    /// See [`Summary`].
    Summary(Summary),
    /// See [`Pin`].
    Pin(Pin),
    /// See [`Judgement`].
    Judgement(Judgement),
    /// See [`Verdict`].
    Verdict(Verdict),
    /// See [`Action`].
    Action(Action),
    /// See [`Reground`].
    Reground(Reground),
    /// See [`Check`].
    Check(Check),
    /// See [`Receipt`].
    Receipt(Receipt),
    /// See [`Ruling`].
    Ruling(Ruling),
    /// See [`Retirement`].
    Retirement(Retirement),
    /// See [`Classification`].
    Classification(Classification),
    /// See [`Place`].
    Place(Place),
    /// See [`Entry`].
    Entry(Entry),
}

macro_rules! record_from {
    ($($k:ident),*) => {$(
        impl From<$k> for Record {
            fn from(v: $k) -> Record {
                Record::$k(v)
            }
        }
    )*};
}
record_from!(
    Span,
    Claim,
    Summary,
    Pin,
    Judgement,
    Verdict,
    Action,
    Reground,
    Check,
    Receipt,
    Ruling,
    Retirement,
    Classification,
    Place,
    Entry
);

/// A role of a link from one record to another, used in messages and in the reverse-link table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRole {
    /// A claim's witness.
    Witness,
    /// A summary's parent.
    Parent,
    /// A span a summary covers.
    Covers,
    /// A span a summary evicts.
    Evicts,
    /// A claim a summary holds.
    SummaryClaim,
    /// A pin item's witness span.
    PinWitness,
    /// The claim a judgement or reground is about.
    Claim,
    /// The span a judgement is about.
    JudgedSpan,
    /// The subject of a verdict.
    Subject,
    /// A claim an action relies on.
    ReliesOn,
    /// A span a reground checked against.
    RegroundSpan,
    /// The action a check checks again.
    Checked,
    /// A span a write call's receipt names.
    ReceiptSpan,
    /// A span a judge's ruling was given against.
    RulingSpan,
    /// The pin a retirement lifts an item of.
    RetiredPin,
    /// The user turn that lifts a pinned item.
    RetirementWitness,
    /// The span a classification record is about.
    Classified,
    /// The span a place record locates.
    Placed,
    /// The version a store entry replaces.
    Previous,
    /// The refused proposal a repair summary stands in for.
    Repairs,
}

impl LinkRole {
    /// The field name used in JSON Lines and in messages.
    pub fn field(self) -> &'static str {
        match self {
            LinkRole::Witness => "witnesses",
            LinkRole::Parent => "parent",
            LinkRole::Covers => "covers",
            LinkRole::Evicts => "evicts",
            LinkRole::SummaryClaim => "claims",
            LinkRole::PinWitness => "witness",
            LinkRole::Claim => "claim",
            LinkRole::JudgedSpan => "span",
            LinkRole::Subject => "subject",
            LinkRole::ReliesOn => "relies_on",
            LinkRole::RegroundSpan => "spans",
            LinkRole::Checked => "action",
            LinkRole::ReceiptSpan => "spans",
            LinkRole::RulingSpan => "spans",
            LinkRole::RetiredPin => "pin",
            LinkRole::RetirementWitness => "witness",
            LinkRole::Classified => "span",
            LinkRole::Placed => "span",
            LinkRole::Previous => "previous",
            LinkRole::Repairs => "author",
        }
    }

    /// The kinds a link in this role may point to.
    pub fn allowed(self) -> &'static [Kind] {
        match self {
            LinkRole::Witness => &[Kind::Span, Kind::Claim],
            LinkRole::Parent | LinkRole::Repairs => &[Kind::Summary],
            LinkRole::Covers
            | LinkRole::Evicts
            | LinkRole::PinWitness
            | LinkRole::JudgedSpan
            | LinkRole::RegroundSpan
            | LinkRole::ReceiptSpan
            | LinkRole::RulingSpan
            | LinkRole::RetirementWitness
            | LinkRole::Classified
            | LinkRole::Placed => &[Kind::Span],
            LinkRole::RetiredPin => &[Kind::Pin],
            LinkRole::SummaryClaim | LinkRole::Claim | LinkRole::ReliesOn => &[Kind::Claim],
            LinkRole::Subject => &[Kind::Summary, Kind::Action, Kind::Check],
            LinkRole::Checked => &[Kind::Action],
            LinkRole::Previous => &[Kind::Entry],
        }
    }

    /// Whether the target must belong to the same stream as the record that links to it.
    pub fn same_stream(self) -> bool {
        matches!(
            self,
            LinkRole::Parent
                | LinkRole::Repairs
                | LinkRole::Covers
                | LinkRole::Evicts
                | LinkRole::SummaryClaim
                | LinkRole::PinWitness
                | LinkRole::ReceiptSpan
                | LinkRole::RetiredPin
                | LinkRole::RetirementWitness
        )
    }
}

impl Record {
    /// This record's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Record::Span(_) => Kind::Span,
            Record::Claim(_) => Kind::Claim,
            Record::Summary(_) => Kind::Summary,
            Record::Pin(_) => Kind::Pin,
            Record::Judgement(_) => Kind::Judgement,
            Record::Verdict(_) => Kind::Verdict,
            Record::Action(_) => Kind::Action,
            Record::Reground(_) => Kind::Reground,
            Record::Check(_) => Kind::Check,
            Record::Receipt(_) => Kind::Receipt,
            Record::Ruling(_) => Kind::Ruling,
            Record::Retirement(_) => Kind::Retirement,
            Record::Classification(_) => Kind::Classification,
            Record::Place(_) => Kind::Place,
            Record::Entry(_) => Kind::Entry,
        }
    }

    /// Why the record's stream name cannot be taken for a new record: it holds a control
    /// character (NUL, ESC, CR, ...). One rule for both stores, checked when a record is
    /// appended (issue 37): PostgreSQL refuses NUL in text, and a terminal obeys the others.
    /// Records already in a ledger are not checked again, so an old ledger still opens.
    pub fn stream_name_violation(&self) -> Option<String> {
        let stream = self.stream()?;
        let bad = stream.chars().find(|c| c.is_control())?;
        Some(format!(
            "its stream name {stream:?} holds the control character U+{:04X}; name the stream with printable characters",
            u32::from(bad)
        ))
    }

    /// The stream the record belongs to, for the kinds that name one.
    pub fn stream(&self) -> Option<&str> {
        match self {
            Record::Span(r) => Some(&r.stream),
            Record::Claim(r) => Some(&r.stream),
            Record::Summary(r) => Some(&r.stream),
            Record::Pin(r) => Some(&r.stream),
            Record::Action(r) => Some(&r.stream),
            Record::Receipt(r) => Some(&r.stream),
            Record::Retirement(r) => Some(&r.stream),
            Record::Judgement(_)
            | Record::Verdict(_)
            | Record::Reground(_)
            | Record::Check(_)
            | Record::Ruling(_)
            | Record::Classification(_)
            | Record::Place(_)
            | Record::Entry(_) => None,
        }
    }

    /// Every outgoing link, with its role, in encoding order.
    pub fn links(&self) -> Vec<(LinkRole, Rid)> {
        fn all(role: LinkRole, rids: &[Rid]) -> impl Iterator<Item = (LinkRole, Rid)> + '_ {
            rids.iter().map(move |r| (role, *r))
        }
        match self {
            Record::Span(_) => Vec::new(),
            Record::Claim(c) => all(LinkRole::Witness, &c.witnesses).collect(),
            Record::Summary(s) => s
                .parent
                .iter()
                .map(|p| (LinkRole::Parent, *p))
                .chain(s.author.repairs().map(|p| (LinkRole::Repairs, p)))
                .chain(all(LinkRole::Covers, &s.covers))
                .chain(all(LinkRole::Evicts, &s.evicts))
                .chain(all(LinkRole::SummaryClaim, &s.claims))
                .collect(),
            Record::Pin(p) => p
                .items
                .iter()
                .filter_map(|i| i.witness.map(|w| (LinkRole::PinWitness, w)))
                .collect(),
            Record::Judgement(j) => {
                vec![(LinkRole::Claim, j.claim), (LinkRole::JudgedSpan, j.span)]
            }
            Record::Verdict(v) => std::iter::once((LinkRole::Subject, v.subject))
                .chain(v.claims.iter().map(|c| (LinkRole::Claim, c.claim)))
                .collect(),
            Record::Action(a) => all(LinkRole::ReliesOn, &a.relies_on).collect(),
            Record::Reground(r) => std::iter::once((LinkRole::Claim, r.claim))
                .chain(all(LinkRole::RegroundSpan, &r.spans))
                .collect(),
            Record::Check(c) => vec![(LinkRole::Checked, c.action)],
            Record::Receipt(r) => all(LinkRole::ReceiptSpan, &r.spans).collect(),
            Record::Ruling(r) => std::iter::once((LinkRole::Claim, r.claim))
                .chain(all(LinkRole::RulingSpan, &r.spans))
                .collect(),
            Record::Retirement(r) => vec![
                (LinkRole::RetiredPin, r.pin),
                (LinkRole::RetirementWitness, r.witness),
            ],
            Record::Classification(f) => vec![(LinkRole::Classified, f.span)],
            Record::Place(p) => vec![(LinkRole::Placed, p.span)],
            Record::Entry(e) => e
                .previous
                .iter()
                .map(|p| (LinkRole::Previous, *p))
                .collect(),
        }
    }

    /// Puts the record in canonical form: link sets sorted and de-duplicated, known origin tags
    /// written as their variant. Summary claims keep their order.
    pub fn canonicalize(&mut self) {
        fn set(v: &mut Vec<Rid>) {
            v.sort_unstable();
            v.dedup();
        }
        match self {
            Record::Claim(c) => {
                set(&mut c.witnesses);
                if let Origin::Other(tag) = &c.origin {
                    if let Some(known) = Origin::parse_known(tag) {
                        c.origin = known;
                    }
                }
            }
            Record::Summary(s) => {
                set(&mut s.covers);
                set(&mut s.evicts);
            }
            Record::Action(a) => set(&mut a.relies_on),
            Record::Reground(r) => set(&mut r.spans),
            Record::Receipt(r) => set(&mut r.spans),
            Record::Ruling(r) => set(&mut r.spans),
            Record::Span(_)
            | Record::Pin(_)
            | Record::Judgement(_)
            | Record::Verdict(_)
            | Record::Check(_)
            | Record::Retirement(_)
            | Record::Classification(_)
            | Record::Place(_)
            | Record::Entry(_) => {}
        }
    }

    /// The first rule of canonical form this record breaks, if any.
    pub fn canonical_violation(&self) -> Option<String> {
        fn set(field: &str, v: &[Rid]) -> Option<String> {
            v.windows(2)
                .any(|w| w[0] >= w[1])
                .then(|| format!("`{field}` is not sorted and free of repeats"))
        }
        fn score(field: &str, s: Option<Score>) -> Option<String> {
            s.filter(|s| *s > SCORE_ONE)
                .map(|s| format!("`{field}` is {s}, above the maximum of {SCORE_ONE}"))
        }
        match self {
            Record::Span(_) | Record::Pin(_) | Record::Check(_) | Record::Retirement(_) => None,
            Record::Claim(c) => set("witnesses", &c.witnesses).or_else(|| match &c.origin {
                Origin::Other(t) if Origin::parse_known(t).is_some() => {
                    Some(format!("origin tag `{t}` is stored as free text"))
                }
                _ => None,
            }),
            Record::Summary(s) => set("covers", &s.covers)
                .or_else(|| set("evicts", &s.evicts))
                .or_else(|| score("self_score", s.self_score))
                .or_else(|| {
                    let mut seen = s.claims.clone();
                    seen.sort_unstable();
                    seen.windows(2)
                        .any(|w| w[0] == w[1])
                        .then(|| "`claims` lists a claim twice".to_string())
                }),
            Record::Judgement(j) => score("score", Some(j.score)),
            Record::Verdict(v) => score("self_score", v.self_score)
                .or_else(|| score("anchored_score", v.anchored_score)),
            Record::Action(a) => set("relies_on", &a.relies_on),
            Record::Reground(r) => set("spans", &r.spans).or_else(|| score("score", Some(r.score))),
            Record::Receipt(r) => set("spans", &r.spans),
            Record::Ruling(r) => set("spans", &r.spans),
            Record::Classification(f) => {
                if f.items.is_empty() || f.items.len() > MAX_FOUND_ITEMS {
                    Some(format!(
                        "`items` holds {} items; a classification record holds 1 to {MAX_FOUND_ITEMS}",
                        f.items.len()
                    ))
                } else if f.classifier.is_empty() {
                    Some("`classifier` is empty".to_string())
                } else if f.items.iter().any(|i| i.text.is_empty()) {
                    Some("an item's `text` is empty".to_string())
                } else {
                    None
                }
            }
            Record::Place(p) => {
                if p.log.is_empty() {
                    Some("`log` is empty; name the file or session the span came from".to_string())
                } else if p.message.as_deref() == Some("") || p.timestamp.as_deref() == Some("") {
                    Some(
                        "`message` and `timestamp` are left out when the log has none, never empty"
                            .to_string(),
                    )
                } else {
                    None
                }
            }
            Record::Entry(e) => {
                if e.namespace.is_empty() {
                    Some("`namespace` is empty; give at least one label".to_string())
                } else if (e.namespace.iter())
                    .any(|l| l.is_empty() || l.contains(NAMESPACE_SEPARATOR))
                {
                    Some("a `namespace` label is empty or holds the character U+001F".to_string())
                } else if e.value.is_none() && e.text.is_some() {
                    Some("a deletion (no `value`) has no `text` to search".to_string())
                } else if e.created > e.at {
                    Some(format!(
                        "`created` ({}) is after `at` ({})",
                        e.created, e.at
                    ))
                } else {
                    None
                }
            }
        }
    }
}

impl Origin {
    /// The tag as written in JSON Lines; `None` for a missing tag.
    pub fn tag(&self) -> Option<&str> {
        Some(match self {
            Origin::UserSaid => "user-said",
            Origin::ToolOutput => "tool-output",
            Origin::Hedged => "hedged",
            Origin::Inferred => "inferred",
            Origin::Missing => return None,
            Origin::Other(t) => t,
        })
    }

    fn parse_known(tag: &str) -> Option<Origin> {
        Some(match tag {
            "user-said" => Origin::UserSaid,
            "tool-output" => Origin::ToolOutput,
            "hedged" => Origin::Hedged,
            "inferred" => Origin::Inferred,
            _ => return None,
        })
    }

    /// The origin for a tag: one of the four known ones, or `Other`.
    pub fn from_tag(tag: &str) -> Origin {
        Origin::parse_known(tag).unwrap_or_else(|| Origin::Other(tag.to_string()))
    }
}

macro_rules! names {
    ($t:ty { $($v:ident = $s:literal),* }) => {
        impl $t {
            /// The name used in JSON Lines.
            pub fn name(self) -> &'static str {
                match self { $(<$t>::$v => $s),* }
            }
            /// The value for a JSON Lines name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some(<$t>::$v),)* _ => None }
            }
            /// Every accepted name, for messages.
            pub const NAMES: &'static str = concat!($($s, " "),*);
        }
    };
}
names!(Role { User = "user", Assistant = "assistant", Tool = "tool", System = "system", ToolCall = "tool-call" });
names!(PinClass {
    Prohibition = "prohibition",
    Commitment = "commitment",
    FailedAttempt = "failed-attempt",
    Entity = "entity",
    Preference = "preference",
    Policy = "policy",
    Identifier = "identifier"
});
names!(Relation { Entails = "entails", Contradicts = "contradicts", Neutral = "neutral" });
names!(Status {
    Verified = "verified",
    Unverified = "unverified",
    Unanchored = "unanchored",
    Fabricated = "fabricated"
});

/// A JSON number in [0, 1] as parts per ten thousand, rounded to the nearest.
pub fn score_from_unit(x: f64) -> Option<Score> {
    (x.is_finite() && (0.0..=1.0).contains(&x)).then(|| (x * f64::from(SCORE_ONE)).round() as Score)
}

/// A score as a number in [0, 1].
pub fn score_to_unit(s: Score) -> f64 {
    f64::from(s) / f64::from(SCORE_ONE)
}
