//! The redb tables and the small fixed-layout values stored in them. SPEC.md section 4 lists
//! them with their invariants.

use crate::record::{
    Classification, FoundItem, PinClass, Rid, Role, Span, MAX_FOUND_ITEMS, MAX_RECORD_BYTES,
};
use crate::text::{
    self,
    classify::{Class, Found, Voice},
};
use redb::{MultimapTableDefinition, TableDefinition};

/// Log index -> canonical record bytes. The records are keyed by log index (see SPEC.md, "Why
/// records are keyed by log index").
pub const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("records");
/// Log index -> rid: the append log.
pub const LOG: TableDefinition<u64, [u8; 32]> = TableDefinition::new("log");
/// Rid -> log index: the log's inverse.
pub const RIDS: TableDefinition<[u8; 32], u64> = TableDefinition::new("rids");
/// Link target -> the records that link to it.
pub const LINKS: MultimapTableDefinition<[u8; 32], [u8; 32]> =
    MultimapTableDefinition::new("links");
/// (stream, turn) -> span rid.
pub const TURNS: TableDefinition<(&str, u64), [u8; 32]> = TableDefinition::new("turns");
/// (stream, name) -> pin rid.
pub const PINS: TableDefinition<(&str, &str), [u8; 32]> = TableDefinition::new("pins");
/// Stream -> [`StreamState`] bytes.
pub const STREAMS: TableDefinition<&str, &[u8]> = TableDefinition::new("streams");
/// Claim or summary rid -> [`Facts`] bytes.
pub const FACTS: TableDefinition<[u8; 32], [u8; 6]> = TableDefinition::new("facts");
/// Rids of claims with no raw-span ancestor.
pub const UNANCHORED: TableDefinition<[u8; 32], ()> = TableDefinition::new("unanchored");
/// (kind byte, depth, rid) for anchored claims and for summaries.
pub const DEPTHS: TableDefinition<(u8, u32, [u8; 32]), ()> = TableDefinition::new("depths");
/// Evicted span -> the first summary that evicted it.
pub const EVICTIONS: TableDefinition<[u8; 32], [u8; 32]> = TableDefinition::new("evictions");
/// Gated subject (summary or action) -> its verdict: one verdict per subject.
pub const VERDICTS: TableDefinition<[u8; 32], [u8; 32]> = TableDefinition::new("verdicts");
/// Claim -> its latest status byte (see [`crate::record::Status`]), from admitted verdicts and
/// regrounds.
pub const STATUS: TableDefinition<[u8; 32], u8> = TableDefinition::new("status");
/// (stream, idempotency key) -> the receipt of the write call that used it.
pub const RECEIPTS: TableDefinition<(&str, &str), [u8; 32]> = TableDefinition::new("receipts");
/// (namespace path, key) -> the key's current version in an application's store (SPEC.md
/// section 10d): the last entry record appended for it, a deletion included; a ledger written
/// before entries gets the empty table on its first open for writing.
pub const ENTRIES: TableDefinition<(&str, &str), [u8; 32]> = TableDefinition::new("entries");
/// Span -> the first place record that locates it in an imported log (SPEC.md 2.1); a ledger
/// written before places gets the empty table on its first open for writing.
pub const PLACES: TableDefinition<[u8; 32], [u8; 32]> = TableDefinition::new("places");
/// Claim -> its latest reground record.
pub const REGROUNDED: TableDefinition<[u8; 32], [u8; 32]> = TableDefinition::new("regrounded");
/// Claim -> spans that a judgement says contradict it.
pub const CONTRADICTIONS: MultimapTableDefinition<[u8; 32], [u8; 32]> =
    MultimapTableDefinition::new("contradictions");
/// (kind byte, log index) -> rid: every record of a kind, in log order.
pub const BY_KIND: TableDefinition<(u8, u64), [u8; 32]> = TableDefinition::new("by_kind");
/// (level >= 1, index) -> the hash of the perfect subtree of leaves
/// `index * 2^level .. (index + 1) * 2^level`; level 0 is the `log` table itself.
pub const MERKLE: TableDefinition<(u8, u64), [u8; 32]> = TableDefinition::new("merkle");
/// (stream, turn, k) -> the k-th decision-relevant item the classifier found in that span,
/// found once, at append: `[class byte, span rid (32 bytes), text...]`.
pub const ITEMS: TableDefinition<(&str, u64, u8), &[u8]> = TableDefinition::new("items");
/// Summary rid -> its position among its stream's summaries (1-based): its boundary number.
pub const ORDINALS: TableDefinition<[u8; 32], u64> = TableDefinition::new("ordinals");
/// (term id, weight band, first log index) -> a block of postings: the recall index (SPEC.md
/// section 10b) over every span and claim. A commit writes one block per term and band it
/// touches, holding its postings of that band in log order ([`super::recall::Block`]). Read
/// backwards, block by block and each block from its end, a term's postings come heaviest
/// band first and newest first within a band.
pub const RECALL: TableDefinition<(u32, u8, u64), &[u8]> = TableDefinition::new("recall_blocks");
/// (stream id, term id, weight band, first log index) -> a block: the same postings, per
/// stream.
pub const RECALL_STREAMS: TableDefinition<(u32, u32, u8, u64), &[u8]> =
    TableDefinition::new("recall_stream_blocks");
/// The tables of the recall index's first layout (recall version 1, one B-tree entry per
/// posting): dropped when a build with blocks first opens the ledger for writing.
pub const RECALL_V1: [&str; 4] = ["recall", "recall_streams", "terms", "recall_stream_ids"];
/// Term -> (its id, the number of spans and claims that hold it); the empty term -> (0, the
/// number indexed). Ids are given in the order terms first appear in the log.
pub const TERMS: TableDefinition<&str, (u32, u64)> = TableDefinition::new("terms");
/// Stream -> its id in the recall index, given in the order streams first appear in the log.
pub const RECALL_STREAM_IDS: TableDefinition<&str, u32> = TableDefinition::new("recall_stream_ids");
/// Ledger metadata: `format`, `ledger_id`, and `signed_size`/`signed_root` of the last
/// checkpoint signed.
pub const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Facts derived once, at append, for claims and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// Whether a raw span is reachable through witnesses (always true for summaries).
    pub anchored: bool,
    /// For a claim: claim hops to the nearest raw span (0 when a span is a direct witness);
    /// for a summary: consecutive self-authored summaries ending at it.
    pub depth: Option<u32>,
}

impl Facts {
    /// The stored form: `[kind, anchored, depth u32 LE]`, depth `u32::MAX` for none.
    pub(crate) fn to_bytes(self, kind: u8) -> [u8; 6] {
        let d = self.depth.unwrap_or(u32::MAX).to_le_bytes();
        [kind, u8::from(self.anchored), d[0], d[1], d[2], d[3]]
    }

    /// Reads the stored form.
    pub(crate) fn from_bytes(b: [u8; 6]) -> Facts {
        let d = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        Facts {
            anchored: b[1] == 1,
            depth: (d != u32::MAX).then_some(d),
        }
    }
}

/// Per-stream counters and the head summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct StreamState {
    /// The latest admitted summary.
    pub head: Option<Rid>,
    /// Spans appended.
    pub spans: u64,
    /// Distinct spans evicted by summaries.
    pub evicted: u64,
    /// Summaries admitted.
    pub summaries: u64,
    /// Summaries refused.
    pub refused: u64,
    /// Summaries appended, admitted, refused or not gated.
    pub proposals: u64,
}

impl StreamState {
    /// Spans still in the agent's window.
    pub fn window(&self) -> u64 {
        self.spans - self.evicted
    }
}

/// One decision-relevant item the classifier found in a raw span, as the `items` table holds
/// it: what `cairn pin --auto` pins and `unpinned-reference` counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The span it was found in.
    pub span: Rid,
    /// That span's turn.
    pub turn: u64,
    /// What kind of item.
    pub class: PinClass,
    /// The sentence or line that states it.
    pub text: String,
}

/// The decision-relevant items the classifier finds in a span: what the store keeps in its
/// `items` table, through the span's classification record (SPEC.md section 8.3).
///
/// ```
/// use cairn::record::{Rid, Role, Span, PinClass};
/// let span = Span { stream: "s1".into(), turn: 7, role: Role::User, tool: None,
///                   text: "Never run DROP TABLE on production.".into() };
/// let items = cairn::gate::classify(Rid([0; 32]), &span);
/// assert_eq!(items[0].class, PinClass::Prohibition);
/// assert_eq!(items[0].turn, 7);
/// ```
pub fn classify(rid: Rid, span: &Span) -> Vec<Item> {
    let voice = match span.role {
        Role::User => Voice::User,
        Role::Assistant => Voice::Assistant,
        // A tool call's arguments are read as a tool's text: no names or paths from them.
        Role::Tool | Role::ToolCall => Voice::Tool,
        Role::System => Voice::System,
    };
    text::classify::classify(voice, &span.text)
        .into_iter()
        // A tool call is what the agent did: it reports no failure of its own.
        .filter(|f| !(span.role == Role::ToolCall && f.class == Class::FailedAttempt))
        .map(|found| Item::found(rid, span.turn, found))
        .collect()
}

/// The classification record of span `rid`, or `None` when the classifier finds nothing in it. It
/// holds at most [`MAX_FOUND_ITEMS`] items, and no more text than fits one record: past either,
/// the span's later items are left out.
pub(crate) fn classification(rid: Rid, span: &Span) -> Option<Classification> {
    // Room for the record's fixed fields and each item's class and length.
    let mut room = MAX_RECORD_BYTES - 1024;
    let items: Vec<FoundItem> = classify(rid, span)
        .into_iter()
        .take(MAX_FOUND_ITEMS)
        .take_while(|item| {
            let cost = item.text.len() + 16;
            let fits = cost <= room;
            room = room.saturating_sub(cost);
            fits
        })
        .map(|item| FoundItem {
            class: item.class,
            text: item.text,
        })
        .collect();
    (!items.is_empty()).then(|| Classification {
        span: rid,
        classifier: text::classify::id().to_string(),
        items,
    })
}

impl Item {
    /// The item the classifier found in span `span` of turn `turn`.
    fn found(span: Rid, turn: u64, found: Found) -> Item {
        let class = match found.class {
            Class::Prohibition => PinClass::Prohibition,
            Class::Commitment => PinClass::Commitment,
            Class::FailedAttempt => PinClass::FailedAttempt,
            Class::Preference => PinClass::Preference,
            Class::Policy => PinClass::Policy,
            Class::Identifier => PinClass::Identifier,
        };
        Item {
            span,
            turn,
            class,
            text: found.text,
        }
    }

    /// The stored form: `[class byte, span rid (32 bytes), text...]`.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut v = vec![self.class as u8];
        v.extend_from_slice(&self.span.0);
        v.extend_from_slice(self.text.as_bytes());
        v
    }

    /// Reads the stored form of the item found in turn `turn`; `None` when it is too short.
    pub(crate) fn from_bytes(turn: u64, v: &[u8]) -> Option<Item> {
        let class = match *v.first()? {
            0 => PinClass::Prohibition,
            1 => PinClass::Commitment,
            2 => PinClass::FailedAttempt,
            4 => PinClass::Preference,
            5 => PinClass::Policy,
            6 => PinClass::Identifier,
            _ => PinClass::Entity,
        };
        let span = Rid(v.get(1..33)?.try_into().ok()?);
        Some(Item {
            span,
            turn,
            class,
            text: String::from_utf8_lossy(&v[33..]).into_owned(),
        })
    }
}
