//! Golden vectors: fixed records give fixed bytes and rids. A change to the encoding, the
//! hashing or the canonical form fails here; such a change needs a new format version.

use cairn::record::*;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn span() -> Span {
    Span {
        stream: "s1".into(),
        turn: 212,
        role: Role::User,
        tool: None,
        text: "we are still on libfoo 2.3.1, do not bump.".into(),
    }
}

pub fn vectors() -> Vec<(&'static str, Record)> {
    let span_rid = Rid::of_bytes(&encode(&span().into()));
    let claim = Claim {
        stream: "s1".into(),
        text: "libfoo stays pinned at 2.3.1".into(),
        origin: Origin::UserSaid,
        witnesses: vec![span_rid],
        actionable: true,
    };
    let claim_rid = Rid::of_bytes(&encode(&claim.clone().into()));
    vec![
        ("span", span().into()),
        ("claim", claim.into()),
        (
            "pin",
            Pin {
                stream: "s1".into(),
                name: "constraints".into(),
                items: vec![PinItem {
                    class: PinClass::Prohibition,
                    text: "do not bump libfoo".into(),
                    witness: Some(span_rid),
                }],
            }
            .into(),
        ),
        (
            "summary",
            Summary {
                stream: "s1".into(),
                parent: None,
                author: Author::SelfAuthored,
                budget: 4000,
                covers: vec![span_rid],
                evicts: vec![],
                claims: vec![claim_rid],
                self_score: Some(9100),
                reground: false,
            }
            .into(),
        ),
        (
            "judgement",
            Judgement {
                claim: claim_rid,
                span: span_rid,
                relation: Relation::Contradicts,
                score: 7100,
                scorer: "person".into(),
            }
            .into(),
        ),
    ]
}

const EXPECTED: &[(&str, &str, &str)] = &[
    ("span", "010102000000000000007331d40000000000000000000000002a00000000000000776520617265207374696c6c206f6e206c6962666f6f20322e332e312c20646f206e6f742062756d702e", "1507a90d1fdf5a8f291969ddd9a802cc4de5ee30d7d3cb5ea5173dbd051d6572"),
    ("claim", "0102020000000000000073311c000000000000006c6962666f6f2073746179732070696e6e656420617420322e332e310000000001000000000000001507a90d1fdf5a8f291969ddd9a802cc4de5ee30d7d3cb5ea5173dbd051d657201", "c418d5d32eff018217ea9bc8eb49ef612b6db88e530bac82d14dc5bcda66fdaa"),
    ("pin", "0104020000000000000073310b00000000000000636f6e73747261696e74730100000000000000000000001200000000000000646f206e6f742062756d70206c6962666f6f011507a90d1fdf5a8f291969ddd9a802cc4de5ee30d7d3cb5ea5173dbd051d6572", "f4674034401131aa2ebff2d0ece0ec38b9c94f15d14303bc58fbce719fab2590"),
    ("summary", "0103020000000000000073310000000000a00f00000000000001000000000000001507a90d1fdf5a8f291969ddd9a802cc4de5ee30d7d3cb5ea5173dbd051d657200000000000000000100000000000000c418d5d32eff018217ea9bc8eb49ef612b6db88e530bac82d14dc5bcda66fdaa018c2300", "b65ff3fdfb4754b0228c60fc788fc520279beae74a498e40883434a8e9154d20"),
    ("judgement", "0105c418d5d32eff018217ea9bc8eb49ef612b6db88e530bac82d14dc5bcda66fdaa1507a90d1fdf5a8f291969ddd9a802cc4de5ee30d7d3cb5ea5173dbd051d657201000000bc1b0600000000000000706572736f6e", "331a58dfb40392c33230a0ddd121d5beabb9ea2f756065dedd22bc0c2a039b63"),
];

#[test]
fn golden_bytes_and_rids() {
    let got: Vec<(String, String, String)> = vectors()
        .into_iter()
        .map(|(name, r)| {
            let bytes = encode(&r);
            (
                name.to_string(),
                hex(&bytes),
                Rid::of_bytes(&bytes).to_hex(),
            )
        })
        .collect();
    assert_eq!(got.len(), EXPECTED.len());
    for (g, e) in got.iter().zip(EXPECTED) {
        assert_eq!((g.0.as_str(), g.1.as_str(), g.2.as_str()), *e);
    }
}
