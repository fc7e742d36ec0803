//! The gates' stable names. A finding stores its gate's name as a string (SPEC.md section 2.1),
//! so the bytes of a verdict, and so its rid, are the same as when names were plain strings.

use bincode::de::{BorrowDecoder, Decoder};
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{BorrowDecode, Decode, Encode};

macro_rules! gates {
    ($($(#[$doc:meta])* $v:ident = $s:literal, effect: $e:ident;)*) => {
        /// A gate: a rule over the record graph that judges a compaction or an action. Its
        /// name is stable: used in findings, JSON output and tests (SPEC.md section 8.1).
        /// Gates order by name, as lists of findings have always been sorted.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Gate {
            $($(#[$doc])* $v,)*
        }

        impl Gate {
            /// Every gate, in the order of SPEC.md section 8.1's table.
            pub const ALL: &'static [Gate] = &[$(Gate::$v),*];

            /// The stable name, such as `unanchored-claim`.
            pub fn name(self) -> &'static str {
                match self { $(Gate::$v => $s),* }
            }

            /// The gate with this stable name.
            pub fn from_name(name: &str) -> Option<Gate> {
                match name { $($s => Some(Gate::$v),)* _ => None }
            }

            /// What a finding of this gate does to the proposal (SPEC.md section 8.1).
            pub fn effect(self) -> Effect {
                match self { $(Gate::$v => Effect::$e),* }
            }

            /// Whether a finding of this gate refuses the proposal.
            pub fn refuses(self) -> bool {
                self.effect() == Effect::Refuse
            }

            /// Whether a finding of this gate strikes the claim it names: the claim stays in
            /// the record, marked, and is not admitted; the rest of the compaction can stand.
            pub fn strikes(self) -> bool {
                self.effect() == Effect::Strike
            }
        }
    };
}

/// What a finding does to the proposal it is about. Each gate has one effect, listed once, in
/// the table below (SPEC.md section 8.1 says why each sits where it does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The proposal is refused: it never becomes the stream's head.
    Refuse,
    /// The claim the finding names is struck: kept in the record, marked, not admitted.
    Strike,
    /// The finding is recorded; the proposal stands.
    Flag,
}

impl Effect {
    /// The lower-case name used in JSON output: `refuses`, `strikes`, `flags`.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Refuse => "refuses",
            Effect::Strike => "strikes",
            Effect::Flag => "flags",
        }
    }
}

gates! {
    /// No raw-span ancestor through any chain of witnesses.
    UnanchoredClaim = "unanchored-claim", effect: Strike;
    /// No origin tag, or an unknown one.
    MissingOrigin = "missing-origin", effect: Refuse;
    /// An identifier not found verbatim in any raw-span ancestor.
    IdentifierDrift = "identifier-drift", effect: Strike;
    /// No span it cites entails it, or it names a speaker its spans are not.
    FabricatedClaim = "fabricated-claim", effect: Strike;
    /// A span it cites contradicts it: the claim's own witness clashes with it.
    ContradictedClaim = "contradicted-claim", effect: Refuse;
    /// The summary's source is not in the ledger: a log that begins with a compaction of an
    /// earlier log, imported without it.
    SourceMissing = "source-missing", effect: Flag;
    /// Rests on earlier claims, not on a raw span of the summary's source window.
    LaunderedClaim = "laundered-claim", effect: Flag;
    /// Too many actionable claims are laundered.
    LaunderingRate = "laundering-rate", effect: Refuse;
    /// A user-said or tool-output claim supported only by hedged evidence.
    HedgeStripped = "hedge-stripped", effect: Flag;
    /// An origin tag without an ancestor of that role.
    OriginMismatch = "origin-mismatch", effect: Flag;
    /// The summary evicts a span that contradicts a claim it keeps: a recorded contradiction,
    /// or a judge's ruling.
    EvictedDisconfirmer = "evicted-disconfirmer", effect: Refuse;
    /// The summary evicts a span of evidence that the word scorer reads as clashing with a
    /// claim it keeps, which no judgement records: a suspicion, shown, and the claim stays
    /// unverified.
    EvictedClash = "evicted-clash", effect: Flag;
    /// More than the allowed self-authored re-summarisations since the last grounding.
    DepthExceeded = "depth-exceeded", effect: Flag;
    /// Decision-relevant items in the raw spans that no pin covers.
    UnpinnedReference = "unpinned-reference", effect: Refuse;
    /// Pinned items lost by the compaction.
    PinLoss = "pin-loss", effect: Refuse;
    /// A different pin under an existing (stream, name): an append error, never a finding.
    PinConflict = "pin-conflict", effect: Refuse;
    /// An irreversible action relying on a claim that is not verified.
    IrreversibleUnverified = "irreversible-unverified", effect: Refuse;
    /// An action matching a pinned prohibition.
    ProhibitedAction = "prohibited-action", effect: Refuse;
}

impl Ord for Gate {
    fn cmp(&self, other: &Gate) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Gate {
    fn partial_cmp(&self, other: &Gate) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<str> for Gate {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Gate {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl serde::Serialize for Gate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Encode for Gate {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        self.name().encode(encoder)
    }
}

impl<Context> Decode<Context> for Gate {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        let name = String::decode(decoder)?;
        Gate::from_name(&name)
            .ok_or_else(|| DecodeError::OtherString(format!("{name:?} names no gate")))
    }
}

impl<'de, Context> BorrowDecode<'de, Context> for Gate {
    fn borrow_decode<D: BorrowDecoder<'de, Context = Context>>(
        decoder: &mut D,
    ) -> Result<Self, DecodeError> {
        Gate::decode(decoder)
    }
}
