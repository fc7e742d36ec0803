//! Tamper evidence end to end: the ledger's stored tree, signed checkpoints, proofs, and the
//! checks against rollback, fork, rewrite and forgery.

use crate::util::*;
use redb::ReadableTable;

fn ingest(t: &Tmp, lines: &str) {
    let f = t.file("in.jsonl", lines.as_bytes());
    let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
    assert!(code(&o) <= 1, "{}", stderr(&o));
}

fn sign(t: &Tmp, key: &std::path::Path, name: &str) -> std::path::PathBuf {
    let o = t.cairn(&["checkpoint", "--key", key.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    t.file(name, &o.stdout)
}

fn against(t: &Tmp, cp: &std::path::Path, key: Option<&std::path::Path>) -> std::process::Output {
    let mut args = vec!["verify", "--against", cp.to_str().unwrap()];
    if let Some(k) = key {
        args.extend(["--pubkey", k.to_str().unwrap()]);
    }
    t.cairn(&args, None)
}

#[test]
fn signed_checkpoints_catch_rollback_fork_rewrite_and_forgery() {
    let t = Tmp::new();
    ingest(&t, LIBFOO);
    let key = t.dir.path().join("signer");
    assert_eq!(
        code(&t.cairn(&["keygen", "-o", key.to_str().unwrap()], None)),
        0
    );
    let pubkey = t.dir.path().join("signer.pub");
    assert!(std::fs::read_to_string(&pubkey)
        .unwrap()
        .starts_with("cairn+"));
    assert_eq!(
        code(&t.cairn(&["keygen", "-o", key.to_str().unwrap()], None)),
        2,
        "keygen never overwrites"
    );

    let cp1 = sign(&t, &key, "cp1");
    let text = std::fs::read_to_string(&cp1).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("cairn/ledger/") && lines[0].ends_with("/blake3-rfc6962"),
        "{text}"
    );
    assert_eq!(lines[1], "12");
    assert!(
        lines[3].is_empty() && lines[4].starts_with("\u{2014} cairn "),
        "{text}"
    );
    assert_eq!(code(&against(&t, &cp1, Some(&pubkey))), 0);
    let plain = t.file("plain", &t.cairn(&["checkpoint"], None).stdout);
    assert_eq!(code(&against(&t, &plain, None)), 0);

    // The ledger grows: the old checkpoint still holds, and a new one is signed.
    let copy_at_11 = t.dir.path().join("at11.redb");
    std::fs::copy(t.db(), &copy_at_11).unwrap();
    ingest(
        &t,
        r#"{"kind":"span","stream":"s1","turn":300,"role":"user","text":"later"}"#,
    );
    assert_eq!(code(&against(&t, &cp1, Some(&pubkey))), 0);
    let cp2 = sign(&t, &key, "cp2");

    // Forged root, altered size, and the wrong key.
    let forged = text.replace(lines[2], "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    let o = against(&t, &t.file("forged", forged.as_bytes()), Some(&pubkey));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("does not verify"), "{}", stderr(&o));
    let o = against(&t, &t.file("forged-unsigned", forged.as_bytes()), None);
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("fork or rewrite"), "{}", stderr(&o));
    let other = t.dir.path().join("other");
    t.cairn(&["keygen", "-o", other.to_str().unwrap()], None);
    let o = against(&t, &cp1, Some(&t.dir.path().join("other.pub")));
    assert_eq!(code(&o), 3);
    assert!(
        stderr(&o).contains("no signature line carries this key"),
        "{}",
        stderr(&o)
    );

    // Rollback: the file replaced by an older copy.
    std::fs::copy(&copy_at_11, t.db()).unwrap();
    let o = against(&t, &cp2, Some(&pubkey));
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("rollback"), "{}", stderr(&o));
    let o = t.cairn(&["checkpoint", "--key", key.to_str().unwrap()], None);
    assert_eq!(
        code(&o),
        3,
        "never sign a rolled-back ledger: {}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("rolled back"), "{}", stderr(&o));

    // Fork: the old copy grows differently to the same size.
    ingest(
        &t,
        r#"{"kind":"span","stream":"s1","turn":301,"role":"user","text":"a different history"}"#,
    );
    let o = against(&t, &cp2, Some(&pubkey));
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("fork or rewrite"), "{}", stderr(&o));
    let o = t.cairn(&["checkpoint", "--key", key.to_str().unwrap()], None);
    assert_eq!(
        code(&o),
        3,
        "never sign a checkpoint inconsistent with the last one signed"
    );
}

#[test]
fn a_rewritten_record_is_caught_against_a_checkpoint_and_by_verify() {
    let t = Tmp::new();
    ingest(&t, LIBFOO);
    let cp = t.file("cp", &t.cairn(&["checkpoint"], None).stdout);
    {
        let db = redb::Database::open(t.db()).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut records = txn.open_table(RECORDS).unwrap();
            let mut bytes = records.get(1).unwrap().unwrap().value().to_vec();
            let n = bytes.len();
            bytes[n - 3] ^= 0x01;
            records.insert(1, bytes.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let o = against(&t, &cp, None);
    assert_eq!(code(&o), 3);
    assert!(stderr(&o).contains("fork or rewrite"), "{}", stderr(&o));
    assert_eq!(code(&t.cairn(&["verify"], None)), 3);
}

#[test]
fn a_tampered_tree_node_is_caught_by_verify() {
    let t = Tmp::new();
    ingest(&t, LIBFOO);
    {
        let db = redb::Database::open(t.db()).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(MERKLE)
            .unwrap()
            .insert((1u8, 0u64), [9u8; 32])
            .unwrap();
        txn.commit().unwrap();
    }
    let o = t.cairn(&["verify"], None);
    assert_eq!(code(&o), 3);
    assert!(stdout(&o).contains("merkle table"), "{}", stdout(&o));
}

#[test]
fn an_inclusion_checks_offline_with_a_checkpoint_a_proof_and_a_record() {
    let t = Tmp::new();
    ingest(&t, LIBFOO);
    let key = t.dir.path().join("k");
    t.cairn(&["keygen", "-o", key.to_str().unwrap()], None);
    let cp = sign(&t, &key, "cp");
    let export = stdout(&t.cairn(&["export"], None));
    let rid = serde_json::from_str::<serde_json::Value>(export.lines().nth(4).unwrap()).unwrap()
        ["rid"]
        .as_str()
        .unwrap()
        .to_string();
    let proof = t.file(
        "proof",
        &t.cairn(&["prove", "inclusion", &rid[..10]], None).stdout,
    );
    let record = t.file("record", &t.cairn(&["bytes", &rid], None).stdout);
    // Only the three files and the public key: no ledger.
    let run =
        |args: &[&str]| run_cairn(std::path::Path::new("/nonexistent/ledger.redb"), args, None);
    let check = |rec: &std::path::Path, proof: &std::path::Path| {
        run(&[
            "check-inclusion",
            "--checkpoint",
            cp.to_str().unwrap(),
            "--proof",
            proof.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
            "--pubkey",
            t.dir.path().join("k.pub").to_str().unwrap(),
        ])
    };
    let o = check(&record, &proof);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("the record {rid} is at index 4")),
        "{}",
        stdout(&o)
    );
    let other = serde_json::from_str::<serde_json::Value>(export.lines().nth(5).unwrap()).unwrap()
        ["rid"]
        .as_str()
        .unwrap()
        .to_string();
    let wrong = t.file("wrong", &t.cairn(&["bytes", &other], None).stdout);
    assert_eq!(code(&check(&wrong, &proof)), 3, "another record");
    let smaller = t.file(
        "p6",
        &t.cairn(&["prove", "inclusion", &rid, "--size", "6"], None)
            .stdout,
    );
    let o = check(&record, &smaller);
    assert_eq!(code(&o), 3, "a proof for another size");
    let mut bad = std::fs::read_to_string(&proof).unwrap();
    let last = bad.trim_end().rsplit('\n').next().unwrap().to_string();
    bad = bad.replace(&last, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    assert_eq!(
        code(&check(&record, &t.file("bad", bad.as_bytes()))),
        3,
        "an altered path"
    );
    let o = t.cairn(&["prove", "consistency", "4", "11", "--json"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["old"].as_u64(), v["new"].as_u64()), (Some(4), Some(11)));
    assert_eq!(
        code(&t.cairn(&["prove", "consistency", "11", "4"], None)),
        2
    );
    assert_eq!(
        code(&t.cairn(&["prove", "inclusion", &rid, "--size", "4"], None)),
        2,
        "record 4 is not in the first 4"
    );
}

#[test]
fn an_empty_ledger_checkpoints_at_size_0_with_the_empty_root() {
    let t = Tmp::new();
    let f = t.file("empty.jsonl", b"");
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    let o = t.cairn(&["checkpoint"], None);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "0");
    use base64::Engine;
    let root = base64::engine::general_purpose::STANDARD
        .decode(lines[2])
        .unwrap();
    let hex: String = root.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    );
    let cp = t.file("cp0", text.as_bytes());
    ingest(&t, LIBFOO);
    assert_eq!(
        code(&against(&t, &cp, None)),
        0,
        "every ledger extends its empty beginning"
    );
    let rid = stdout(&t.cairn(&["export"], None))
        .lines()
        .next()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["rid"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .unwrap();
    assert_eq!(
        code(&t.cairn(&["prove", "inclusion", &rid, "--size", "0"], None)),
        2
    );
}

/// Issue 13, item 9: keygen replaced an existing verifier key `v.pub` beside a new `v`.
#[test]
fn keygen_never_replaces_an_existing_verifier_key() {
    let t = Tmp::new();
    let key = t.dir.path().join("v");
    let public = t.dir.path().join("v.pub");
    std::fs::write(&public, "the verifier everyone trusts\n").unwrap();
    let o = t.cairn(&["keygen", "-o", key.to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("v.pub exists"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&public).unwrap(),
        "the verifier everyone trusts\n"
    );
    assert!(!key.exists(), "no signing key without its verifier");
    // Near miss: a free name writes both.
    let free = t.dir.path().join("w");
    assert_eq!(
        code(&t.cairn(&["keygen", "-o", free.to_str().unwrap()], None)),
        0
    );
    assert!(t.dir.path().join("w.pub").exists());
}

/// Issue 13, item 12: a signed checkpoint with its signature stripped, given to
/// `verify --against` with the verifier key, exited 2 (bad input) instead of 3 (integrity).
#[test]
fn a_checkpoint_stripped_of_its_signature_is_an_integrity_failure() {
    let t = Tmp::new();
    ingest(&t, LIBFOO);
    let key = t.dir.path().join("k");
    assert_eq!(
        code(&t.cairn(&["keygen", "-o", key.to_str().unwrap()], None)),
        0
    );
    let signed = std::fs::read_to_string(sign(&t, &key, "cp")).unwrap();
    let body = signed.split("\n\n").next().unwrap().to_string() + "\n";
    let stripped = t.file("stripped", body.as_bytes());
    let pubkey = t.dir.path().join("k.pub");
    let o = against(&t, &stripped, Some(&pubkey));
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("carries no signature"),
        "{}",
        stderr(&o)
    );
    // Near misses: the same body without --pubkey is a plain checkpoint and holds; a file
    // that is no checkpoint at all is still bad input.
    assert_eq!(code(&against(&t, &stripped, None)), 0);
    let junk = t.file("junk", b"not a checkpoint\n");
    assert_eq!(code(&against(&t, &junk, Some(&pubkey))), 2);
}
