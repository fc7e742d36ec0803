//! Canonical encoding: round trips both ways, and non-canonical bytes rejected.

use cairn::record::*;
use proptest::prelude::*;

fn rid() -> impl Strategy<Value = Rid> {
    any::<[u8; 32]>().prop_map(Rid)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,40}", "[a-z0-9 .:/]{0,20}"]
}

fn score() -> impl Strategy<Value = Score> {
    0..=SCORE_ONE
}

fn origin() -> impl Strategy<Value = Origin> {
    prop_oneof![
        Just(Origin::UserSaid),
        Just(Origin::ToolOutput),
        Just(Origin::Hedged),
        Just(Origin::Inferred),
        Just(Origin::Missing),
        "[a-z]{1,8}".prop_map(|t| Origin::from_tag(&t)),
    ]
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        Just(Role::User),
        Just(Role::Assistant),
        Just(Role::Tool),
        Just(Role::System)
    ]
}

pub fn record() -> impl Strategy<Value = Record> {
    let rids = || prop::collection::vec(rid(), 0..4);
    prop_oneof![
        (
            text(),
            any::<u64>(),
            role(),
            prop::option::of(text()),
            text()
        )
            .prop_map(|(stream, turn, role, tool, text)| Record::Span(Span {
                stream,
                turn,
                role,
                tool,
                text
            })),
        (text(), text(), origin(), rids(), any::<bool>()).prop_map(
            |(stream, text, origin, witnesses, actionable)| Record::Claim(Claim {
                stream,
                text,
                origin,
                witnesses,
                actionable
            })
        ),
        (
            text(),
            prop::option::of(rid()),
            any::<bool>(),
            any::<u64>(),
            (rids(), rids(), prop::collection::hash_set(rid(), 0..4)),
            prop::option::of(score()),
            any::<bool>()
        )
            .prop_map(
                |(stream, parent, sep, budget, (covers, evicts, claims), self_score, reground)| {
                    Record::Summary(Summary {
                        stream,
                        parent,
                        author: if sep {
                            Author::Separate
                        } else {
                            Author::SelfAuthored
                        },
                        budget,
                        covers,
                        evicts,
                        claims: claims.into_iter().collect(),
                        self_score,
                        reground,
                    })
                }
            ),
        (
            text(),
            text(),
            prop::collection::vec((0..4u8, text(), prop::option::of(rid())), 0..3)
        )
            .prop_map(|(stream, name, items)| Record::Pin(Pin {
                stream,
                name,
                items: items
                    .into_iter()
                    .map(|(c, text, witness)| PinItem {
                        class: [
                            PinClass::Prohibition,
                            PinClass::Commitment,
                            PinClass::FailedAttempt,
                            PinClass::Entity
                        ][c as usize],
                        text,
                        witness,
                    })
                    .collect(),
            })),
        (rid(), rid(), 0..3u8, score(), text()).prop_map(|(claim, span, r, score, scorer)| {
            Record::Judgement(Judgement {
                claim,
                span,
                relation: [Relation::Entails, Relation::Contradicts, Relation::Neutral][r as usize],
                score,
                scorer,
            })
        }),
        (
            rid(),
            any::<bool>(),
            prop::collection::vec((prop::sample::select(Gate::ALL), rid(), text()), 0..3),
            prop::option::of(score()),
            prop::option::of(score()),
            any::<[u8; 32]>()
        )
            .prop_map(
                |(subject, admitted, f, self_score, anchored_score, policy)| Record::Verdict(
                    Verdict {
                        claims: Vec::new(),
                        subject,
                        admitted,
                        findings: f
                            .into_iter()
                            .map(|(gate, subject, detail)| Finding {
                                gate,
                                subject,
                                detail
                            })
                            .collect(),
                        self_score,
                        anchored_score,
                        policy,
                    }
                )
            ),
        (text(), text(), any::<bool>(), rids()).prop_map(
            |(stream, text, irreversible, relies_on)| {
                Record::Action(Action {
                    stream,
                    text,
                    irreversible,
                    relies_on,
                })
            }
        ),
        (rid(), rids(), score()).prop_map(|(claim, spans, score)| Record::Reground(Reground {
            claim,
            spans,
            score
        })),
    ]
}

proptest! {
    #[test]
    fn decode_of_encode_is_the_canonical_record(r in record()) {
        let mut canonical = r.clone();
        canonical.canonicalize();
        let bytes = encode(&r);
        prop_assert_eq!(decode(&bytes).unwrap(), canonical.clone());
        prop_assert_eq!(encode(&canonical), bytes);
    }

    #[test]
    fn encode_of_decode_gives_the_same_bytes(r in record(), pos in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = encode(&r);
        let i = pos.index(bytes.len());
        bytes[i] = byte;
        if let Ok(decoded) = decode(&bytes) {
            prop_assert_eq!(encode(&decoded), bytes);
        }
    }

    #[test]
    fn trailing_bytes_are_rejected(r in record(), extra in prop::collection::vec(any::<u8>(), 1..8)) {
        let mut bytes = encode(&r);
        bytes.extend(extra);
        let rejected = matches!(decode(&bytes), Err(DecodeError::Trailing { .. }));
        prop_assert!(rejected);
    }

    #[test]
    fn truncated_bytes_are_rejected(r in record(), cut in any::<prop::sample::Index>()) {
        let bytes = encode(&r);
        let n = cut.index(bytes.len());
        prop_assert!(decode(&bytes[..n]).is_err());
    }
}

fn claim_with(witnesses: Vec<Rid>, origin: Origin) -> Claim {
    Claim {
        stream: "s".into(),
        text: "t".into(),
        origin,
        witnesses,
        actionable: false,
    }
}

/// Bytes of a claim laid out by hand, bypassing canonicalisation.
fn raw_claim(witnesses: &[Rid], origin_tag: Option<&str>) -> Vec<u8> {
    let mut b = vec![FORMAT_VERSION, Kind::Claim as u8];
    for s in ["s", "t"] {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    }
    match origin_tag {
        None => b.extend(0u32.to_le_bytes()),
        Some(t) => {
            b.extend(5u32.to_le_bytes());
            b.extend((t.len() as u64).to_le_bytes());
            b.extend(t.as_bytes());
        }
    }
    b.extend((witnesses.len() as u64).to_le_bytes());
    for w in witnesses {
        b.extend(w.0);
    }
    b.push(0);
    b
}

#[test]
fn hand_laid_bytes_match_the_encoder() {
    let w = [Rid([1; 32]), Rid([2; 32])];
    assert_eq!(
        raw_claim(&w, None),
        encode(&claim_with(w.to_vec(), Origin::UserSaid).into())
    );
}

#[test]
fn unsorted_or_repeated_witnesses_are_rejected() {
    let (a, b) = (Rid([1; 32]), Rid([2; 32]));
    for ws in [[b, a], [a, a]] {
        let err = decode(&raw_claim(&ws, None)).unwrap_err();
        assert!(matches!(err, DecodeError::NotCanonical { .. }), "{err}");
        assert!(err.to_string().contains("witnesses"), "{err}");
    }
    // The encoder sorts and de-duplicates, so one logical claim has one rid.
    let x = encode(&claim_with(vec![b, a, b], Origin::UserSaid).into());
    assert_eq!(x, encode(&claim_with(vec![a, b], Origin::UserSaid).into()));
}

#[test]
fn a_known_origin_stored_as_free_text_is_rejected() {
    assert!(decode(&raw_claim(&[], Some("user-said"))).is_err());
    assert!(decode(&raw_claim(&[], Some("rumour"))).is_ok());
}

#[test]
fn bad_headers_scores_and_booleans_are_rejected() {
    let good = encode(&claim_with(vec![], Origin::Hedged).into());
    let mut v = good.clone();
    v[0] = 2;
    assert_eq!(decode(&v), Err(DecodeError::Version(2)));
    let mut k = good.clone();
    k[1] = 16;
    assert_eq!(decode(&k), Err(DecodeError::UnknownKind(16)));
    let mut flag = good.clone();
    *flag.last_mut().unwrap() = 2;
    assert!(decode(&flag).is_err());
    assert_eq!(decode(&good[..1]), Err(DecodeError::TooShort(1)));

    let j = Judgement {
        claim: Rid([0; 32]),
        span: Rid([1; 32]),
        relation: Relation::Neutral,
        score: SCORE_ONE + 1,
        scorer: "x".into(),
    };
    let err = decode(&encode(&j.into())).unwrap_err();
    assert!(err.to_string().contains("above the maximum"), "{err}");
}

#[test]
fn a_summary_listing_a_claim_twice_is_rejected() {
    let s = Summary {
        stream: "s".into(),
        parent: None,
        author: Author::SelfAuthored,
        budget: 1,
        covers: vec![],
        evicts: vec![],
        claims: vec![Rid([3; 32]), Rid([3; 32])],
        self_score: None,
        reground: false,
    };
    let err = decode(&encode(&s.into())).unwrap_err();
    assert!(err.to_string().contains("twice"), "{err}");
}

/// A finding stores its gate as the gate's name: the bytes are those of the name as a string,
/// and a name that is no gate is refused at decoding, not read as some other gate.
#[test]
fn a_finding_stores_its_gate_by_name_and_unknown_names_are_refused() {
    let v = Verdict {
        subject: Rid([1; 32]),
        admitted: false,
        findings: vec![Finding {
            gate: Gate::PinLoss,
            subject: Rid([2; 32]),
            detail: "lost".into(),
        }],
        claims: vec![],
        self_score: None,
        anchored_score: None,
        policy: [0; 32],
    };
    let bytes = encode(&v.clone().into());
    let at = bytes
        .windows(8)
        .position(|w| w == b"pin-loss")
        .expect("the name is stored as text");
    assert_eq!(
        &bytes[at - 8..at],
        &8u64.to_le_bytes(),
        "as a string: length, then bytes"
    );
    assert_eq!(decode(&bytes).unwrap(), Record::Verdict(v));
    let mut other = bytes.clone();
    other[at..at + 8].copy_from_slice(b"pin-lost");
    let err = decode(&other).unwrap_err().to_string();
    assert!(err.contains("\"pin-lost\" names no gate"), "{err}");
    // Near miss: another real gate name of the same length decodes, as that gate.
    other[at..at + 8].copy_from_slice(b"pin-loss");
    assert!(decode(&other).is_ok());
}

#[test]
fn every_role_has_a_place_in_tables_indexed_by_role() {
    // Tables of one entry per role (the gates' latest support by speaker) are sized by COUNT.
    for name in Role::NAMES.split_whitespace() {
        let role = Role::from_name(name).unwrap();
        assert!((role as usize) < Role::COUNT, "{name}");
    }
    assert_eq!(Role::NAMES.split_whitespace().count(), Role::COUNT);
}
