//! `cairn gates`, `pin --auto`, `reground` and `score`.

use crate::{open_existing, open_reader, view, Failure};
use cairn::gate::{pin_of, sweep, unpinned_items, Gatekeeper, RegroundOutcome};
use cairn::ingest::{parse_ref, resolve};
use cairn::{Error, Ledger};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::path::Path;

/// A stream the command names must be in the ledger: a typo must not read as a clean ledger or
/// an empty graph.
pub fn known_stream<R: cairn::Read>(
    read: &R,
    db: &Path,
    stream: Option<&str>,
) -> Result<(), Failure> {
    let Some(stream) = stream else {
        return Ok(());
    };
    let streams = read.streams()?;
    if streams.iter().any(|s| s == stream) {
        return Ok(());
    }
    // A stream the streams table lacks but the turn index holds is damage (a flipped byte in
    // its name), not a typo: the stream's state lookup says so, exit 3.
    read.stream(stream)?;
    let known = if streams.is_empty() {
        "it has no streams yet".to_string()
    } else {
        let mut shown: Vec<&str> = streams.iter().take(10).map(String::as_str).collect();
        if streams.len() > 10 {
            shown.push("...");
        }
        format!("its streams are {}", shown.join(", "))
    };
    Err(Failure::usage(format!(
        "{} has no stream {stream:?}; {known} (`cairn stats` lists them)",
        db.display()
    )))
}

pub fn gates(
    db: &Path,
    gate: &Gatekeeper,
    stream: Option<&str>,
    as_of: Option<u64>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger = view(db, as_of)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, stream)?;
    let found = sweep(gate, &snap, stream)?;
    if as_json {
        let list: Vec<Value> = found.iter().map(|f| f.to_json()).collect();
        println!("{}", json!({"findings": list, "count": found.len()}));
    } else if found.is_empty() {
        say!(
            "no findings: every gate query over {} comes back clean",
            db.display()
        );
    } else {
        for f in &found {
            say!(
                "{} [{}] {}: {}",
                f.gate,
                f.stream,
                f.subject.short(),
                f.detail
            );
        }
        say!(
            "{}",
            crate::count(found.len() as u64, "finding", "findings")
        );
    }
    Ok(u8::from(!found.is_empty()))
}

pub fn pin(
    db: &Path,
    _gate: &Gatekeeper,
    auto: bool,
    dry_run: bool,
    stream: &str,
    name: &str,
    as_json: bool,
) -> Result<u8, Failure> {
    if !auto {
        return Err(Failure::usage(
            "cairn pin writes a pin from the classifier's findings and needs --auto; to pin items by hand, ingest a pin line",
        ));
    }
    // A dry run only reads: it opens the ledger read-only, so a closed output pipe or any
    // other end of the process cannot leave the file mid-write (issue 37, row 18).
    let mut appended = None;
    let items = if dry_run {
        let ledger = crate::open_reader(db)?;
        let snap = ledger.snapshot()?;
        known_stream(&snap, db, Some(stream))?;
        unpinned_items(&snap, stream)?
    } else {
        // Written and committed, and the ledger closed, before anything is printed: output
        // that cannot be written ends nothing mid-write.
        let ledger = open_existing(db)?;
        let mut batch = ledger.batch()?;
        known_stream(&batch, db, Some(stream))?;
        let items = unpinned_items(&batch, stream)?;
        if !items.is_empty() {
            appended = Some(batch.append(pin_of(stream, name, &items))?);
            batch.commit()?;
        }
        items
    };
    if items.is_empty() {
        // Nothing left to pin is the state `pin --auto` exists to reach, not an error.
        if as_json {
            println!("{}", json!({"pinned": Value::Null, "items": []}));
        } else {
            say!(
                "stream {stream} has no decision-relevant item that a pin does not already cover; nothing to pin"
            );
        }
        return Ok(0);
    }
    let list: Vec<Value> = items
        .iter()
        .map(|i| json!({"turn": i.turn, "class": i.class.name(), "text": i.text, "witness": i.span.to_hex()}))
        .collect();
    if dry_run {
        if as_json {
            println!(
                "{}",
                json!({"dry_run": true, "rid": Value::Null, "stream": stream, "name": name, "items": list})
            );
        } else {
            say!(
                "would pin {} of stream {stream} as {name:?} (dry run: nothing was written)",
                crate::count(items.len() as u64, "item", "items"),
            );
            for i in &items {
                say!("  turn {}: {} '{}'", i.turn, i.class.name(), i.text);
            }
        }
        return Ok(0);
    }
    let Some(appended) = appended else {
        return Ok(0);
    };
    if as_json {
        println!(
            "{}",
            json!({"rid": appended.rid.to_hex(), "stream": stream, "name": name, "items": list})
        );
    } else {
        say!(
            "pinned {} of stream {stream} as {name:?} ({})",
            crate::count(items.len() as u64, "item", "items"),
            appended.rid
        );
        for i in &items {
            say!("  turn {}: {} '{}'", i.turn, i.class.name(), i.text);
        }
    }
    Ok(0)
}

pub fn reground(
    db: &Path,
    gate: &Gatekeeper,
    reference: &str,
    stream: Option<&str>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger: Ledger = open_existing(db)?;
    let mut batch = ledger.batch()?;
    let r = parse_ref(reference).map_err(Error::from)?;
    let claim = resolve(&batch, stream, &r)?[0];
    let outcome = gate.reground(&mut batch, claim)?;
    batch.commit()?;
    let (code, v) = match &outcome {
        RegroundOutcome::Regrounded(a) => (
            0,
            json!({"claim": claim.to_hex(), "regrounded": true, "rid": a.rid.to_hex(), "new": a.new}),
        ),
        RegroundOutcome::NotEntailed { best, reason } => (
            1,
            json!({"claim": claim.to_hex(), "regrounded": false, "best_entailment": best, "detail": reason}),
        ),
    };
    if as_json {
        println!("{v}");
    } else {
        match outcome {
            RegroundOutcome::Regrounded(a) => say!(
                "claim {claim} is re-grounded ({}); it is verified and its depth is reset",
                a.rid
            ),
            RegroundOutcome::NotEntailed { reason, .. } => {
                say!("claim {claim} stays as it was: {reason}")
            }
        }
    }
    Ok(code)
}

pub fn score(gate: &Gatekeeper) -> Result<u8, Failure> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| {
            Failure::usage(format!(
                "line {}: {what}; each line is {{\"claim\":..,\"source\":..}}",
                n + 1
            ))
        };
        let v: Value =
            serde_json::from_str(&line).map_err(|e| bad(&format!("malformed JSON: {e}")))?;
        let claim = v["claim"]
            .as_str()
            .ok_or_else(|| bad("field `claim` must be a string"))?;
        let source = v["source"]
            .as_str()
            .ok_or_else(|| bad("field `source` must be a string"))?;
        let s = gate.scorer.score(claim, source).map_err(|e| Failure {
            code: 2,
            message: e.to_string(),
        })?;
        let r = |x: f64| (x * 10_000.0).round() / 10_000.0;
        let _ = writeln!(
            out,
            "{}",
            json!({"entailment": r(s.entailment), "contradiction": r(s.contradiction), "similarity": r(s.similarity)})
        );
    }
    Ok(0)
}

pub fn why(
    db: &Path,
    reference: &str,
    stream: Option<&str>,
    as_of: Option<u64>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger = view(db, as_of)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, stream)?;
    let r = parse_ref(reference).map_err(Error::from)?;
    let batchless = resolve_claim(&snap, stream, &r)?;
    let why = cairn::replay::why(&snap, batchless)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let written = if as_json {
        why.write_json(&mut out).and_then(|()| writeln!(out))
    } else {
        let mut text = Vec::new();
        why.write_text(&mut text).and_then(|()| {
            out.write_all(crate::out::visible(&String::from_utf8_lossy(&text)).as_bytes())
        })
    };
    match written.and_then(|()| out.flush()) {
        // A closed pipe (`cairn why ... | head`) ends the answer quietly.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::usage(format!(
            "the answer could not be written to standard output ({e}); check the disk or the pipe it goes to"
        ))),
        _ => Ok(0),
    }
}

/// Resolves a reference to one claim: a rid or prefix, or prior:N of a stream's head.
fn resolve_claim(
    snap: &cairn::Snapshot,
    stream: Option<&str>,
    r: &cairn::ingest::Ref,
) -> Result<cairn::record::Rid, Failure> {
    use cairn::ingest::Ref;
    match r {
        Ref::Hex(_) | Ref::Prior(_) => {
            let rid = resolve(snap, stream, r)?[0];
            match cairn::Read::get(snap, &rid)? {
                Some(cairn::record::Record::Claim(_)) | None => Ok(rid),
                Some(other) => Err(Failure::usage(format!(
                    "{} is a {}, not a claim; why traces a claim (`cairn export --stream STREAM` lists each record with its kind)",
                    rid.short(),
                    other.kind().name()
                ))),
            }
        }
        _ => Err(Failure::usage(
            "why takes a claim: a rid, a prefix of 8 or more hex digits, or prior:N with --stream",
        )),
    }
}

pub fn replay(db: &Path, stream: &str, as_of: Option<u64>, as_json: bool) -> Result<u8, Failure> {
    let ledger = view(db, as_of)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, Some(stream))?;
    let r = cairn::replay::replay(&snap, stream)?;
    if as_json {
        println!("{}", r.to_json());
    } else {
        print!("{}", crate::out::visible(&r.to_text()));
    }
    Ok(0)
}

pub fn context(
    db: &Path,
    stream: &str,
    budget: usize,
    as_of: Option<u64>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger = view(db, as_of)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, Some(stream))?;
    let c = cairn::memory::context(&snap, stream, budget)?;
    if as_json {
        println!("{}", c.to_json());
    } else {
        print!("{}", crate::out::visible(&c.to_text()));
    }
    Ok(0)
}

pub fn recall(
    db: &Path,
    query: &str,
    stream: Option<&str>,
    limit: usize,
    as_of: Option<u64>,
    as_json: bool,
) -> Result<u8, Failure> {
    let ledger = view(db, as_of)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, stream)?;
    let r = cairn::memory::recall(&snap, query, stream, limit)?;
    if as_json {
        println!("{}", r.to_json());
    } else {
        print!("{}", crate::out::visible(&r.to_text()));
    }
    Ok(0)
}

pub fn report(db: &Path, stream: &str, output: &Path) -> Result<u8, Failure> {
    let ledger = open_reader(db)?;
    let snap = ledger.snapshot()?;
    known_stream(&snap, db, Some(stream))?;
    let html = cairn::replay::html(&snap, stream)?;
    std::fs::write(output, &html)
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", output.display())))?;
    say!(
        "wrote {} ({} bytes) for stream {stream}",
        output.display(),
        html.len()
    );
    Ok(0)
}

/// `cairn mcp`: the MCP tools over stdio, for an agent that starts this process.
pub fn mcp(db: &Path, gate: Gatekeeper, client_author: &str) -> Result<u8, Failure> {
    cairn_mcp::run_stdio(memory(db, gate, client_author)?).map_err(Failure::usage)?;
    Ok(0)
}

/// The MCP tools over the ledger at `db`, created if missing, counting clients' compactions
/// as written by `client_author`.
fn memory(db: &Path, gate: Gatekeeper, client_author: &str) -> Result<cairn_mcp::Memory, Failure> {
    let author = cairn::record::Author::from_name(client_author).ok_or_else(|| {
        Failure::usage(format!(
            "--client-author {client_author:?} is not an author; use self or separate"
        ))
    })?;
    let ledger = std::sync::Arc::new(cairn::Ledger::open(db)?);
    let memory = cairn_mcp::Memory::new(ledger, gate)
        .map_err(|e| Failure::usage(format!("cannot start the ledger's writer thread: {e}")))?;
    Ok(memory.with_client_author(author))
}

/// `cairn serve`: the MCP tools over Streamable HTTP until interrupted; the bearer token comes
/// from `CAIRN_TOKEN`, never from the command line.
pub fn serve(
    db: &Path,
    gate: Gatekeeper,
    client_author: &str,
    options: cairn_mcp::HttpOptions,
) -> Result<u8, Failure> {
    let most = 1 << 20;
    let (sessions, connections) = (options.limits.max_sessions, options.limits.max_connections);
    if !(1..=most).contains(&sessions) || !(1..=most).contains(&connections) {
        return Err(Failure::usage(format!(
            "--max-sessions and --max-connections take 1 to {most}; give a number in that range"
        )));
    }
    let token = std::env::var("CAIRN_TOKEN").ok().filter(|t| !t.is_empty());
    let memory = memory(db, gate, client_author)?;
    let options = cairn_mcp::HttpOptions { token, ..options };
    let db = db.display().to_string();
    cairn_mcp::run_http(memory, options, |addr| {
        warn!("cairn serve: {db} at http://{addr}/mcp (Ctrl-C stops)");
    })
    .map_err(Failure::usage)?;
    Ok(0)
}
