//! The README's library example, run by `cargo test` so it cannot rot.

use cairn::record::{Claim, Origin, Role, Span};
use cairn::{Ledger, Read};

fn main() -> Result<(), cairn::Error> {
    let dir = std::env::temp_dir().join(format!("cairn-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| cairn::ErrorKind::Io {
        what: "cannot create",
        path: dir.clone(),
        source,
    })?;
    let ledger = Ledger::open(dir.join("agent.redb"))?;
    let mut batch = ledger.batch()?;
    let said = batch.append(Span {
        stream: "s1".into(),
        turn: 212,
        role: Role::User,
        tool: None,
        text: "we are still on libfoo 2.3.1, do not bump.".into(),
    })?;
    let claim = batch.append(Claim {
        stream: "s1".into(),
        text: "libfoo stays pinned at 2.3.1".into(),
        origin: Origin::UserSaid,
        witnesses: vec![said.rid],
        actionable: true,
    })?;
    batch.commit()?;

    let snap = ledger.snapshot()?;
    assert!(snap.facts(&claim.rid)?.is_some_and(|f| f.anchored));
    println!(
        "claim {} is anchored; {} claims without a raw-span ancestor",
        claim.rid.short(),
        snap.unanchored_claims()?.len()
    );
    drop((snap, ledger));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
