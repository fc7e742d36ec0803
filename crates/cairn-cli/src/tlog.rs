//! `cairn checkpoint`, `keygen`, `prove`, `bytes`, `check-inclusion` and `verify --against`.

use crate::{open_existing, open_reader, Failure};
use cairn::checkpoint::{parse_unverified, InclusionProof, Log, SignerKey, VerifierKey};
use cairn::Read;
use serde_json::json;
use std::path::Path;

fn read(path: &Path, what: &str) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {what} {}: {e}", path.display())))
}

fn bad(e: cairn::CheckError) -> Failure {
    Failure::usage(e.to_string())
}

pub fn checkpoint(db: &Path, key: Option<&Path>) -> Result<u8, Failure> {
    // Signing records the checkpoint signed in the ledger; a plain checkpoint only reads.
    let ledger = match key {
        Some(_) => open_existing(db)?,
        None => open_reader(db)?,
    };
    let log = Log::new(&ledger);
    match key {
        None => print!("{}", log.checkpoint()?.body()),
        Some(k) => {
            let key = SignerKey::parse(&read(k, "signing key")?).map_err(bad)?;
            // The last checkpoint this key signed for this ledger is kept beside the key.
            let origin = log.origin()?;
            let sidecar = k.with_extension(match k.extension() {
                Some(e) => format!("{}.last", e.to_string_lossy()),
                None => "last".into(),
            });
            let previous = std::fs::read_to_string(&sidecar)
                .ok()
                .into_iter()
                .flat_map(|t| t.split("\n\n\n").map(str::to_string).collect::<Vec<_>>())
                .filter_map(|t| parse_unverified(&t).ok())
                .find(|c| c.origin == origin);
            let note = log.sign(&key, previous.as_ref())?;
            let mut kept: Vec<String> = std::fs::read_to_string(&sidecar)
                .ok()
                .into_iter()
                .flat_map(|t| t.split("\n\n\n").map(str::to_string).collect::<Vec<_>>())
                .filter(|t| parse_unverified(t).is_ok_and(|c| c.origin != origin))
                .collect();
            kept.push(note.clone());
            std::fs::write(&sidecar, kept.join("\n\n\n"))
                .map_err(|e| Failure::usage(format!("cannot write {}: {e}", sidecar.display())))?;
            print!("{note}");
        }
    }
    Ok(0)
}

pub fn keygen(output: &Path, name: &str) -> Result<u8, Failure> {
    let public = output.with_extension(match output.extension() {
        Some(e) => format!("{}.pub", e.to_string_lossy()),
        None => "pub".into(),
    });
    // Neither key is ever overwritten: a replaced verifier key would make every checkpoint
    // signed before it fail to verify.
    for path in [output, public.as_path()] {
        if path.exists() || path.is_symlink() {
            return Err(Failure::usage(format!(
                "{} exists; keygen never overwrites a key, so choose another path",
                path.display()
            )));
        }
    }
    let key = SignerKey::generate(name).map_err(bad)?;
    write_private(output, &format!("{}\n", key.to_text()))?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&public)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(format!("{}\n", key.verifier().to_text()).as_bytes())
        });
    if let Err(e) = written {
        // No signing key without its verifier key.
        let _ = std::fs::remove_file(output);
        return Err(Failure::usage(format!(
            "cannot write {}: {e}",
            public.display()
        )));
    }
    println!(
        "wrote signing key {} and verifier key {}",
        output.display(),
        public.display()
    );
    Ok(0)
}

fn write_private(path: &Path, text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options
        .open(path)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))
}

fn resolve(ledger: &cairn::Ledger, reference: &str) -> Result<cairn::record::Rid, Failure> {
    Ok(ledger.snapshot()?.resolve(reference)?)
}

pub fn prove_inclusion(
    db: &Path,
    reference: &str,
    size: Option<u64>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger = open_reader(db)?;
    let rid = resolve(&ledger, reference)?;
    let p = Log::new(&ledger).prove_inclusion(rid, size)?;
    if as_json {
        let hex = |h: &[u8; 32]| cairn::record::Rid(*h).to_hex();
        println!(
            "{}",
            json!({"origin": p.origin, "index": p.index, "size": p.size, "leaf": hex(&p.leaf), "hashes": p.hashes.iter().map(hex).collect::<Vec<_>>()})
        );
    } else {
        print!("{}", p.to_text());
    }
    Ok(0)
}

pub fn prove_consistency(db: &Path, old: u64, new: u64, as_json: bool) -> Result<u8, Failure> {
    let ledger = open_reader(db)?;
    let p = Log::new(&ledger).prove_consistency(old, new)?;
    if as_json {
        let hex = |h: &[u8; 32]| cairn::record::Rid(*h).to_hex();
        println!(
            "{}",
            json!({"origin": p.origin, "old": p.old, "new": p.new, "hashes": p.hashes.iter().map(hex).collect::<Vec<_>>()})
        );
    } else {
        print!("{}", p.to_text());
    }
    Ok(0)
}

pub fn bytes(db: &Path, reference: &str) -> Result<u8, Failure> {
    let ledger = open_reader(db)?;
    let snap = ledger.snapshot()?;
    let rid = snap.resolve(reference)?;
    let index = snap.index_of(&rid)?.unwrap_or_default();
    let b = snap.bytes_at(index)?.unwrap_or_default();
    println!(
        "{}",
        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
    );
    Ok(0)
}

fn record_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    let raw = std::fs::read(path)
        .map_err(|e| Failure::usage(format!("cannot read record {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&raw);
    let t = text.trim();
    if !t.is_empty() && t.len().is_multiple_of(2) && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok((0..t.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(&t[i..i + 2], 16).ok())
            .collect());
    }
    Ok(raw)
}

pub fn check_inclusion(
    checkpoint: &Path,
    proof: &Path,
    record: &Path,
    pubkey: Option<&Path>,
) -> Result<u8, Failure> {
    let text = read(checkpoint, "checkpoint")?;
    let cp = match pubkey {
        Some(k) => {
            let key = VerifierKey::parse(&read(k, "verifier key")?).map_err(bad)?;
            key.open(&text).map_err(|e| Failure {
                code: 3,
                message: e.to_string(),
            })?
        }
        None => parse_unverified(&text).map_err(bad)?,
    };
    let p = InclusionProof::parse(&read(proof, "proof")?).map_err(bad)?;
    let bytes = record_bytes(record)?;
    match p.check(&cp, &bytes) {
        Ok(()) => {
            println!(
                "the record {} is at index {} of {} at size {}",
                cairn::record::Rid::of_bytes(&bytes),
                p.index,
                cp.origin,
                cp.size
            );
            Ok(0)
        }
        Err(e) => Err(Failure {
            code: 3,
            message: format!("the inclusion does not hold: {e}"),
        }),
    }
}

pub fn verify_against(
    db: &Path,
    file: &Path,
    pubkey: Option<&Path>,
    as_json: bool,
) -> Result<u8, Failure> {
    let text = read(file, "checkpoint")?;
    let key = match pubkey {
        Some(k) => Some(VerifierKey::parse(&read(k, "verifier key")?).map_err(bad)?),
        None => None,
    };
    let ledger = match open_reader(db) {
        Ok(l) => l,
        Err(f) if f.code == 2 => return Err(f),
        Err(f) => {
            return Err(Failure {
                code: 3,
                message: f.message,
            })
        }
    };
    let a = Log::new(&ledger).verify_against(&text, key.as_ref())?;
    if as_json {
        println!(
            "{}",
            json!({"ok": true, "checkpoint_size": a.checkpoint.size, "size": a.size, "signed": a.signed})
        );
    } else {
        println!(
            "{} still holds the history of the checkpoint at size {} ({}); it now holds {} records{}",
            db.display(),
            a.checkpoint.size,
            a.checkpoint.origin,
            a.size,
            if a.signed { "; the signature verifies" } else { "" }
        );
    }
    Ok(0)
}
