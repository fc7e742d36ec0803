//! The gates' stable names. A finding stores its gate's name as a string (SPEC.md section 2.1),
//! so the bytes of a verdict, and so its rid, are the same as when names were plain strings.

use bincode::de::{BorrowDecoder, Decoder};
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{BorrowDecode, Decode, Encode};

macro_rules! gates {
    ($($(#[$doc:meta])* $v:ident = $s:literal, refuses: $r:literal;)*) => {
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

            /// Whether a finding of this gate refuses the proposal; the others only flag it.
            pub fn refuses(self) -> bool {
                match self { $(Gate::$v => $r),* }
            }
        }
    };
}

gates! {
    /// No raw-span ancestor through any chain of witnesses.
    UnanchoredClaim = "unanchored-claim", refuses: true;
    /// No origin tag, or an unknown one.
    MissingOrigin = "missing-origin", refuses: true;
    /// An identifier not found verbatim in any raw-span ancestor.
    IdentifierDrift = "identifier-drift", refuses: true;
    /// Similar to its best raw span, but not entailed by any.
    FabricatedClaim = "fabricated-claim", refuses: true;
    /// Rests on earlier claims, not on a raw span of the summary's source window.
    LaunderedClaim = "laundered-claim", refuses: false;
    /// Too many actionable claims are laundered.
    LaunderingRate = "laundering-rate", refuses: true;
    /// A user-said or tool-output claim supported only by hedged evidence.
    HedgeStripped = "hedge-stripped", refuses: false;
    /// An origin tag without an ancestor of that role.
    OriginMismatch = "origin-mismatch", refuses: false;
    /// The summary evicts a span that contradicts a claim it keeps.
    EvictedDisconfirmer = "evicted-disconfirmer", refuses: true;
    /// More than the allowed self-authored re-summarisations since the last grounding.
    DepthExceeded = "depth-exceeded", refuses: false;
    /// Decision-relevant items in the raw spans that no pin covers.
    UnpinnedReference = "unpinned-reference", refuses: true;
    /// Pinned items lost by the compaction.
    PinLoss = "pin-loss", refuses: true;
    /// A different pin under an existing (stream, name): an append error, never a finding.
    PinConflict = "pin-conflict", refuses: true;
    /// An irreversible action relying on a claim that is not verified.
    IrreversibleUnverified = "irreversible-unverified", refuses: true;
    /// An action matching a pinned prohibition.
    ProhibitedAction = "prohibited-action", refuses: true;
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
