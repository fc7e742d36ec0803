//! The Merkle log: RFC 6962 known answers in SHA-256 mode, differential tests against a naive
//! recursive reference, mutated proofs, the empty-tree policy, and the ledger's own tree.

use crate::util::span;
use cairn::checkpoint::*;
use cairn::Read;
use proptest::prelude::*;

fn hx(s: &str) -> Hash {
    let v: Vec<u8> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect();
    v.try_into().unwrap()
}

fn b64(s: &str) -> Hash {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .unwrap()
        .try_into()
        .unwrap()
}

const LEAVES: [&str; 8] = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
];

fn kat_tree(n: usize) -> MemTree {
    let mut t = MemTree::new(Scheme::Sha256);
    for l in &LEAVES[..n] {
        let data: Vec<u8> = (0..l.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
            .collect();
        t.push(Scheme::Sha256.leaf(&data));
    }
    t
}

/// The naive reference: RFC 6962's recursive definitions over a list of leaf hashes.
fn ref_root(s: Scheme, leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => s.empty(),
        1 => leaves[0],
        n => {
            let k = 1 << (63 - (n as u64 - 1).leading_zeros());
            s.node(&ref_root(s, &leaves[..k]), &ref_root(s, &leaves[k..]))
        }
    }
}

fn ref_path(s: Scheme, m: usize, leaves: &[Hash]) -> Vec<Hash> {
    let n = leaves.len();
    if n <= 1 {
        return vec![];
    }
    let k = 1 << (63 - (n as u64 - 1).leading_zeros());
    if m < k {
        let mut p = ref_path(s, m, &leaves[..k]);
        p.push(ref_root(s, &leaves[k..]));
        p
    } else {
        let mut p = ref_path(s, m - k, &leaves[k..]);
        p.push(ref_root(s, &leaves[..k]));
        p
    }
}

fn ref_subproof(s: Scheme, m: usize, leaves: &[Hash], whole: bool) -> Vec<Hash> {
    let n = leaves.len();
    if m == n {
        return if whole {
            vec![]
        } else {
            vec![ref_root(s, leaves)]
        };
    }
    let k = 1 << (63 - (n as u64 - 1).leading_zeros());
    if m <= k {
        let mut p = ref_subproof(s, m, &leaves[..k], whole);
        p.push(ref_root(s, &leaves[k..]));
        p
    } else {
        let mut p = ref_subproof(s, m - k, &leaves[k..], false);
        p.push(ref_root(s, &leaves[..k]));
        p
    }
}

fn ref_consistency(s: Scheme, m: usize, leaves: &[Hash]) -> Vec<Hash> {
    if m == 0 || m == leaves.len() {
        return vec![];
    }
    ref_subproof(s, m, leaves, true)
}

#[test]
fn rfc6962_hasher_known_answers() {
    let s = Scheme::Sha256;
    assert_eq!(
        s.empty(),
        hx("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    );
    assert_eq!(
        s.leaf(b""),
        hx("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
    );
    assert_eq!(
        s.leaf(b"L123456"),
        hx("395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56")
    );
    assert_eq!(
        s.node(b"N123", b"N456"),
        hx("aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb")
    );
}

#[test]
fn rfc6962_roots_nodes_and_proofs_known_answers() {
    let roots = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];
    let t = kat_tree(8);
    for (n, r) in roots.iter().enumerate() {
        assert_eq!(root(&t, n as u64).unwrap(), hx(r), "root at size {n}");
    }
    let nodes: [&[&str]; 4] = [
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
            "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
        ],
        &[
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        ],
        &[
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
        &["5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"],
    ];
    for (level, row) in nodes.iter().enumerate() {
        for (i, h) in row.iter().enumerate() {
            assert_eq!(
                t.node(level as u32, i as u64).unwrap(),
                hx(h),
                "node {level}/{i}"
            );
        }
    }
    let paths: &[(u64, u64, &[&str])] = &[
        (0, 1, &[]),
        (
            0,
            2,
            &["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"],
        ),
        (
            1,
            2,
            &["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"],
        ),
        (
            2,
            3,
            &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
        ),
        (
            1,
            5,
            &[
                "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            ],
        ),
        (
            0,
            8,
            &[
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
            ],
        ),
        (
            5,
            8,
            &[
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            ],
        ),
    ];
    for (i, n, want) in paths {
        let got = inclusion(&t, *i, *n).unwrap();
        assert_eq!(
            got,
            want.iter().map(|h| hx(h)).collect::<Vec<_>>(),
            "inclusion {i} in {n}"
        );
        verify_inclusion(
            Scheme::Sha256,
            &t.node(0, *i).unwrap(),
            *i,
            *n,
            &got,
            &root(&t, *n).unwrap(),
        )
        .unwrap();
    }
    let consistency_vectors: &[(u64, u64, &[&str])] = &[
        (1, 1, &[]),
        (
            1,
            8,
            &[
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
            ],
        ),
        (
            6,
            8,
            &[
                "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            ],
        ),
        (
            2,
            5,
            &[
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            ],
        ),
    ];
    for (m, n, want) in consistency_vectors {
        let got = consistency(&t, *m, *n).unwrap();
        assert_eq!(
            got,
            want.iter().map(|h| hx(h)).collect::<Vec<_>>(),
            "consistency {m} -> {n}"
        );
        verify_consistency(
            Scheme::Sha256,
            *m,
            *n,
            &got,
            &root(&t, *m).unwrap(),
            &root(&t, *n).unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn transparency_dev_golden_roots_for_larger_trees() {
    // compact/range_test.go TestGetRootHashGolden: leaf i's data is i as two bytes, little-endian.
    let mut t = MemTree::new(Scheme::Sha256);
    for i in 0..255u16 {
        t.push(Scheme::Sha256.leaf(&i.to_le_bytes()));
    }
    for (size, want) in [
        (10, "VjWMPSYNtCuCNlF/RLnQy6HcwSk6CIipfxm+hettA+4="),
        (15, "j4SulYmocFuxdeyp12xXCIgK6PekBcxzAIj4zbQzNEI="),
        (16, "c+4Uc6BCMOZf/v3NZK1kqTUJe+bBoFtOhP+P3SayKRE="),
        (100, "dUh9hYH88p0CMoHkdr1wC2szbhcLAXOejWpINIooKUY="),
        (255, "SmdsuKUqiod3RX2jyF2M6JnbdE4QuTwwipfAowI4/i0="),
    ] {
        assert_eq!(
            root(&t, size).unwrap(),
            b64(want),
            "golden root at size {size}"
        );
    }
}

fn leaves(s: Scheme, n: usize) -> Vec<Hash> {
    (0..n as u32).map(|i| s.leaf(&i.to_be_bytes())).collect()
}

fn tree(s: Scheme, l: &[Hash]) -> MemTree {
    let mut t = MemTree::new(s);
    for h in l {
        t.push(*h);
    }
    t
}

#[test]
fn every_size_up_to_256_matches_the_naive_reference() {
    for s in [Scheme::Blake3, Scheme::Sha256] {
        let all = leaves(s, 256);
        let t = tree(s, &all);
        for n in 0..=256usize {
            let r = root(&t, n as u64).unwrap();
            assert_eq!(r, ref_root(s, &all[..n]), "root {n}");
            let step = if n <= 64 { 1 } else { 7 };
            for i in (0..n).step_by(step) {
                let p = inclusion(&t, i as u64, n as u64).unwrap();
                assert_eq!(p, ref_path(s, i, &all[..n]), "path {i} in {n}");
                assert_eq!(p.len(), inclusion_len(i as u64, n as u64));
                verify_inclusion(s, &all[i], i as u64, n as u64, &p, &r).unwrap();
            }
            for m in (0..=n).step_by(step) {
                let p = consistency(&t, m as u64, n as u64).unwrap();
                assert_eq!(
                    p,
                    ref_consistency(s, m, &all[..n]),
                    "consistency {m} -> {n}"
                );
                verify_consistency(s, m as u64, n as u64, &p, &root(&t, m as u64).unwrap(), &r)
                    .unwrap();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_larger_trees_match_the_reference(n in 257usize..3000, a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let s = Scheme::Blake3;
        let all = leaves(s, n);
        let t = tree(s, &all);
        let r = root(&t, n as u64).unwrap();
        prop_assert_eq!(r, ref_root(s, &all));
        let i = a.index(n);
        let p = inclusion(&t, i as u64, n as u64).unwrap();
        prop_assert_eq!(&p, &ref_path(s, i, &all));
        prop_assert!(verify_inclusion(s, &all[i], i as u64, n as u64, &p, &r).is_ok());
        let m = b.index(n + 1);
        let c = consistency(&t, m as u64, n as u64).unwrap();
        prop_assert_eq!(&c, &ref_consistency(s, m, &all));
        prop_assert!(verify_consistency(s, m as u64, n as u64, &c, &ref_root(s, &all[..m]), &r).is_ok());
    }
}

#[test]
fn every_mutated_inclusion_proof_is_rejected() {
    let s = Scheme::Blake3;
    let all = leaves(s, 300);
    let t = tree(s, &all);
    for (i, n) in [
        (0u64, 1u64),
        (0, 2),
        (1, 2),
        (5, 8),
        (6, 7),
        (17, 100),
        (255, 256),
        (299, 300),
        (128, 300),
    ] {
        let r = root(&t, n).unwrap();
        let leaf = all[i as usize];
        let p = inclusion(&t, i, n).unwrap();
        verify_inclusion(s, &leaf, i, n, &p, &r).unwrap();
        for k in 0..p.len() {
            for bit in 0..256 {
                let mut q = p.clone();
                q[k][bit / 8] ^= 1 << (bit % 8);
                assert!(
                    verify_inclusion(s, &leaf, i, n, &q, &r).is_err(),
                    "flipped bit {bit} of hash {k} ({i} in {n})"
                );
            }
        }
        for bit in 0..256 {
            let mut l = leaf;
            l[bit / 8] ^= 1 << (bit % 8);
            assert!(verify_inclusion(s, &l, i, n, &p, &r).is_err());
            let mut rr = r;
            rr[bit / 8] ^= 1 << (bit % 8);
            assert!(verify_inclusion(s, &leaf, i, n, &p, &rr).is_err());
        }
        // The mutations of transparency-dev's corruptInclusionProof. A size that keeps the
        // path's shape with the same root (8 -> 7 for leaf 5) cannot be told from the proof
        // alone: the checkpoint binds the size to the root under its signature.
        for (j, m) in [
            (i.wrapping_sub(1), n),
            (i + 1, n),
            (i ^ 2, n),
            (i, n * 2),
            (i, n / 2),
        ] {
            if (j, m) != (i, n) {
                assert!(
                    verify_inclusion(s, &leaf, j, m, &p, &r).is_err(),
                    "index {j} size {m} for {i} in {n}"
                );
            }
        }
        if !p.is_empty() {
            assert!(
                verify_inclusion(s, &leaf, i, n, &p[..p.len() - 1], &r).is_err(),
                "truncated"
            );
            assert!(
                verify_inclusion(s, &leaf, i, n, &p[1..], &r).is_err(),
                "front removed"
            );
        }
        for extra in [r, [0u8; 32], leaf] {
            let mut q = p.clone();
            q.push(extra);
            assert!(
                verify_inclusion(s, &leaf, i, n, &q, &r).is_err(),
                "extended"
            );
            let mut q = vec![extra];
            q.extend(p.iter().copied());
            assert!(
                verify_inclusion(s, &leaf, i, n, &q, &r).is_err(),
                "prepended"
            );
        }
    }
}

#[test]
fn every_mutated_consistency_proof_is_rejected() {
    let s = Scheme::Blake3;
    let all = leaves(s, 300);
    let t = tree(s, &all);
    for (m, n) in [
        (1u64, 2u64),
        (1, 8),
        (2, 5),
        (3, 7),
        (4, 8),
        (6, 8),
        (63, 64),
        (64, 65),
        (100, 300),
        (257, 300),
    ] {
        let (rm, rn) = (root(&t, m).unwrap(), root(&t, n).unwrap());
        let p = consistency(&t, m, n).unwrap();
        verify_consistency(s, m, n, &p, &rm, &rn).unwrap();
        for k in 0..p.len() {
            for bit in 0..256 {
                let mut q = p.clone();
                q[k][bit / 8] ^= 1 << (bit % 8);
                assert!(
                    verify_consistency(s, m, n, &q, &rm, &rn).is_err(),
                    "flipped bit {bit} of hash {k} ({m} -> {n})"
                );
            }
        }
        for bit in 0..256 {
            let mut a = rm;
            a[bit / 8] ^= 1 << (bit % 8);
            assert!(verify_consistency(s, m, n, &p, &a, &rn).is_err());
            let mut b = rn;
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(verify_consistency(s, m, n, &p, &rm, &b).is_err());
        }
        for (a, b) in [(m - 1, n), (m + 1, n), (m, n * 2), (m / 2, n), (m, n / 2)] {
            if (a, b) != (m, n) && a > 0 {
                assert!(
                    verify_consistency(s, a, b, &p, &rm, &rn).is_err(),
                    "sizes {a} -> {b} for {m} -> {n}"
                );
            }
        }
        assert!(
            verify_consistency(
                s,
                m,
                n,
                &[p.as_slice(), &[[7u8; 32]]].concat()[1..],
                &rm,
                &rn
            )
            .is_err(),
            "front replaced"
        );
        assert!(
            verify_consistency(s, m, n, &p[..p.len() - 1], &rm, &rn).is_err(),
            "truncated"
        );
        let mut q = p.clone();
        q.push(rn);
        assert!(
            verify_consistency(s, m, n, &q, &rm, &rn).is_err(),
            "extended"
        );
        assert!(
            verify_consistency(s, n, m, &p, &rn, &rm).is_err(),
            "reversed"
        );
    }
}

#[test]
fn the_empty_tree_and_size_0_policy() {
    let s = Scheme::Blake3;
    let t = MemTree::new(s);
    assert_eq!(
        root(&t, 0).unwrap(),
        *blake3::hash(b"").as_bytes(),
        "the empty root is H() of no input"
    );
    assert!(
        inclusion(&t, 0, 0).is_err(),
        "nothing is included in the empty tree"
    );
    assert!(verify_inclusion(s, &[0; 32], 0, 0, &[], &s.empty()).is_err());
    let all = leaves(s, 5);
    let t = tree(s, &all);
    assert!(
        consistency(&t, 0, 5).unwrap().is_empty(),
        "every tree extends the empty one"
    );
    verify_consistency(s, 0, 5, &[], &s.empty(), &root(&t, 5).unwrap()).unwrap();
    assert!(
        verify_consistency(s, 0, 5, &[all[0]], &s.empty(), &root(&t, 5).unwrap()).is_err(),
        "from size 0 the proof is empty"
    );
    verify_consistency(s, 5, 5, &[], &root(&t, 5).unwrap(), &root(&t, 5).unwrap()).unwrap();
    assert!(
        verify_consistency(s, 5, 5, &[], &root(&t, 5).unwrap(), &root(&t, 4).unwrap()).is_err(),
        "equal sizes need equal roots"
    );
    assert!(consistency(&t, 6, 5).is_err());
}

#[test]
fn the_stored_tree_matches_the_log_at_every_size() {
    let ledger = cairn::Ledger::in_memory().unwrap();
    let mut mem = MemTree::new(Scheme::Blake3);
    for turn in 0..70 {
        let mut b = ledger.batch().unwrap();
        // A text the classifier finds nothing in: one record per turn.
        let a = b.append(span("s", turn, "a turn")).unwrap();
        b.commit().unwrap();
        mem.push(a.rid.0);
        let n = turn + 1;
        assert_eq!(
            Log::new(&ledger).root_at(n).unwrap(),
            root(&mem, n).unwrap(),
            "size {n}"
        );
    }
    let log = Log::new(&ledger);
    let cp = log.checkpoint().unwrap();
    assert_eq!(cp.size, 70);
    for i in [0u64, 1, 33, 63, 64, 69] {
        let rid = ledger.snapshot().unwrap().rid_at(i).unwrap().unwrap();
        let p = log.prove_inclusion(rid, None).unwrap();
        let bytes = ledger.snapshot().unwrap().bytes_at(i).unwrap().unwrap();
        p.check(&cp, &bytes).unwrap();
        let older = log.prove_inclusion(rid, Some(i + 1)).unwrap();
        assert_eq!(older.size, i + 1);
    }
    let c = log.prove_consistency(10, 70).unwrap();
    let old = root(&mem, 10).unwrap();
    verify_consistency(Scheme::Blake3, 10, 70, &c.hashes, &old, &cp.root).unwrap();
    assert!(log.prove_consistency(10, 71).is_err());
}

/// Issue 37, row 16: a note with a valid and an invalid signature of the same key is refused,
/// as Go's `note.Open` refuses it; the valid signature alone opens.
#[test]
fn a_note_with_a_bad_signature_beside_a_good_one_of_the_same_key_is_refused() {
    let signer = SignerKey::generate("example.com/log").unwrap();
    let verifier = signer.verifier();
    let cp = Checkpoint {
        origin: origin_of("0123"),
        size: 3,
        root: [7u8; 32],
    };
    let note = signer.sign(&cp.body());
    assert_eq!(verifier.open(&note).unwrap(), cp);
    // The same key's signature over another body, pasted below the good one.
    let other = Checkpoint {
        size: 4,
        ..cp.clone()
    };
    let forged_line = signer.sign(&other.body());
    let forged_line = forged_line.lines().last().unwrap();
    for note in [
        format!("{note}{forged_line}\n"),
        format!(
            "{}\n{forged_line}\n{}\n",
            cp.body(),
            note.lines().last().unwrap()
        ),
    ] {
        let e = verifier.open(&note).unwrap_err();
        assert!(e.to_string().contains("forged"), "{e}");
    }
}
