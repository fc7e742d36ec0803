//! `cairn ingest FILE|-`.

use crate::Failure;
use cairn::gate::Gatekeeper;
use cairn::ingest::line_result;
use cairn::ingest::{read_line, LineError, LineRead, LineResult, Run, MAX_LINE_BYTES};
use cairn::Ledger;
use std::io::{BufRead, BufReader, Read as _, Write};
use std::path::Path;

/// Lines committed together at most, when reading standard input.
const GROUP_COMMIT_LINES: usize = 1000;

/// What an ingest appended.
pub struct Totals {
    /// Non-blank lines read.
    pub lines: u64,
    /// Lines whose record was already in the ledger.
    pub present: u64,
    /// Proposals refused by a gate, and regrounds that failed.
    pub refused: u64,
    /// Admitted summaries that struck some of their claims.
    pub struck: u64,
}

impl Totals {
    fn add(&mut self, r: &LineResult) {
        self.lines += 1;
        self.present += u64::from(!r.new);
        self.refused += u64::from(r.refused.is_some());
        let struck = r
            .gate
            .as_ref()
            .is_some_and(|o| o.admitted && !o.struck.is_empty());
        self.struck += u64::from(struck);
    }

    /// The exit code: 1 when a gate refused a proposal or struck a claim.
    pub fn code(&self) -> u8 {
        u8::from(self.refused > 0 || self.struck > 0)
    }
}

fn line_failure(source: &str, e: LineError, committed: &str) -> Failure {
    Failure {
        code: if e.integrity { 3 } else { 2 },
        message: format!("cannot ingest {source}: {e}; {committed}"),
    }
}

/// Reads one line into `buf` without its line ending; false at end of input. A line over the
/// max-line-bytes limit is an error naming the line and the limit.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    source: &str,
    line: u64,
) -> Result<bool, Failure> {
    match read_line(reader, buf).map_err(|e| Failure::usage(format!("cannot read {source}: {e}")))? {
        LineRead::End => Ok(false),
        LineRead::Line => Ok(true),
        LineRead::TooLong(n) => Err(Failure::usage(format!(
            "cannot ingest {source}: line {}: the line is {n} bytes, beyond the max-line-bytes limit of {MAX_LINE_BYTES}; split it into records of at most 16 MiB",
            line + 1
        ))),
    }
}

/// Applies every line of `reader` in one write transaction: all of it, or none of it. Only the
/// results `keep` selects are held until the commit, so memory stays bounded on large files.
fn ingest_whole<R: BufRead>(
    ledger: &Ledger,
    gate: &Gatekeeper,
    mut open: impl FnMut() -> Result<R, Failure>,
    source: &str,
    keep: impl Fn(&LineResult) -> bool,
    mut each: impl FnMut(&LineResult),
) -> Result<Totals, Failure> {
    // With a judge, the whole file may be read again once the judge has answered what the
    // first reading left to it (`Gatekeeper::judged`); nothing is written until the last.
    let (totals, results) = gate.judged(ledger, |batch| {
        let mut reader = open()?;
        let mut totals = Totals {
            lines: 0,
            present: 0,
            refused: 0,
            struck: 0,
        };
        let mut results = Vec::new();
        let mut buf = Vec::new();
        let mut line = 0u64;
        let mut run = Run::new();
        while next_line(&mut reader, &mut buf, source, line)? {
            line += 1;
            match run.apply_line(batch, gate, line, &buf) {
                Ok(Some(r)) => {
                    totals.add(&r);
                    if keep(&r) {
                        results.push(r);
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(line_failure(source, e, "nothing from it was written")),
            }
        }
        Ok::<_, Failure>((totals, results))
    })?;
    // The judge calls that failed left their claims as the built-in scorer left them: say so.
    for why in gate.scorer.failures() {
        warn!("cairn: {why}");
    }
    results.iter().for_each(&mut each);
    Ok(totals)
}

/// Ingests text as one transaction; used by `cairn demo`.
pub fn ingest_text(
    ledger: &Ledger,
    gate: &Gatekeeper,
    text: &str,
    source: &str,
    each: impl FnMut(&LineResult),
) -> Result<Totals, Failure> {
    ingest_whole(
        ledger,
        gate,
        || Ok(text.as_bytes()),
        source,
        |r| r.gate.is_some(),
        each,
    )
}

/// A gated proposal in text: its verdict on one line, then each finding on a line of its own,
/// flags of an admitted summary included; a failed reground with its reason.
fn print_judged(r: &LineResult, out: &mut impl Write) {
    match &r.gate {
        Some(o) => {
            let verdict = if o.admitted { "admitted" } else { "refused" };
            let _ = sayln!(
                out,
                "line {}: {} {} {verdict}",
                r.line,
                r.kind,
                r.rid.short()
            );
            for f in &o.findings {
                let _ = sayln!(out, "    {}: {}", f.gate, f.detail);
            }
            if !o.struck.is_empty() {
                let _ = sayln!(out, "    struck {} of its claims", o.struck.len());
            }
            if let Some(repair) = &o.repair {
                print_repair(repair, out);
            }
        }
        None => {
            if let Some(why) = &r.refused {
                let _ = sayln!(out, "line {}: {why}", r.line);
            }
        }
    }
}

/// A refused summary's repair in text: its verdict, what changed, and its text.
pub fn print_repair(repair: &cairn::gate::Repair, out: &mut impl Write) {
    let o = &repair.outcome;
    let verdict = if o.admitted { "admitted" } else { "refused" };
    let _ = sayln!(
        out,
        "    repaired: cairn's summary {} {verdict}",
        o.subject.rid.short()
    );
    for c in &repair.changes {
        let _ = sayln!(out, "      {c}");
    }
    for f in o.findings.iter().filter(|f| f.gate.refuses()) {
        let _ = sayln!(out, "      {}: {}", f.gate, f.detail);
    }
    for l in repair.text.lines() {
        let _ = sayln!(out, "      | {l}");
    }
}

fn print_result(r: &LineResult, as_json: bool, out: &mut impl Write) {
    let _ = if as_json {
        writeln!(out, "{}", line_result(r))
    } else {
        sayln!(
            out,
            "line {}: {} {} {}{}",
            r.line,
            if r.new { "appended" } else { "already present" },
            r.kind,
            r.rid,
            r.refused
                .as_ref()
                .map(|w| format!(" ({w})"))
                .unwrap_or_default()
        )
    };
}

pub fn run(db: &Path, gate: &Gatekeeper, file: &str, as_json: bool) -> Result<u8, Failure> {
    // A server's ledger is never removed: another process may be writing to it.
    let existed = db.exists() || Ledger::is_url(db);
    let result = run_on(db, gate, file, as_json);
    // A first ingest that failed leaves no ledger behind: the file it created holds nothing.
    if result.is_err() && !existed {
        let empty = Ledger::open(db).and_then(|l| l.len()).is_ok_and(|n| n == 0);
        if empty {
            let _ = std::fs::remove_file(db);
        }
    }
    result
}

fn run_on(db: &Path, gate: &Gatekeeper, file: &str, as_json: bool) -> Result<u8, Failure> {
    if file == "-" {
        let ledger = Ledger::open(db)?;
        return stream(&ledger, gate, as_json);
    }
    let cannot =
        |e: std::io::Error| Failure::usage(format!("cannot read {file}: {e}; check the path"));
    // A judge may have the file read again (`Gatekeeper::judged`): a regular file is opened
    // again for each reading; anything else (a pipe, a device) is read once, into memory.
    let regular = std::fs::metadata(file).map_err(cannot)?.is_file();
    let held = if regular {
        Vec::new()
    } else {
        std::fs::read(file).map_err(cannot)?
    };
    let open = || -> Result<Box<dyn BufRead + '_>, Failure> {
        if regular {
            let f = std::fs::File::open(file).map_err(cannot)?;
            Ok(Box::new(BufReader::new(f)))
        } else {
            Ok(Box::new(held.as_slice()))
        }
    };
    let ledger = Ledger::open(db)?;
    // Every record the run wrote: a summary's claims, verdicts, rulings, checks, and the
    // classification a new span brings.
    let before = ledger.len()?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let keep = |r: &LineResult| as_json || r.refused.is_some() || r.gate.is_some();
    let totals = ingest_whole(&ledger, gate, open, file, keep, |r| {
        if as_json {
            print_result(r, true, &mut out)
        } else {
            print_judged(r, &mut out)
        }
    })?;
    if !as_json {
        let _ = sayln!(
            out,
            "ingested {file}: {}, {} appended (verdicts and classifications included), {} already present, {} refused, {} admitted with struck claims; the ledger holds {}",
            crate::count(totals.lines, "line", "lines"),
            crate::count(ledger.len()? - before, "record", "records"),
            crate::count(totals.present, "line", "lines"),
            crate::count(totals.refused, "proposal", "proposals"),
            crate::count(totals.struck, "summary", "summaries"),
            crate::count(ledger.len()?, "record", "records"),
        );
    }
    let _ = out.flush();
    Ok(totals.code())
}

/// Standard input as a stream: lines are committed in groups (every line already waiting in
/// the input buffer, up to [`GROUP_COMMIT_LINES`]) and acknowledged only after the commit.
/// A bad line ends the stream: the good lines before it are committed and acknowledged, the
/// bad one writes nothing, and the exit code is 2.
fn stream(ledger: &Ledger, gate: &Gatekeeper, as_json: bool) -> Result<u8, Failure> {
    let mut refused = false;
    let stdin = std::io::stdin();
    let mut reader = BufReader::with_capacity(1 << 16, stdin.lock().take(u64::MAX));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut buf = Vec::new();
    let mut line = 0u64;
    // Begun when a line arrives, not while the input is idle: on a shared ledger a batch holds
    // locks other servers wait for (SPEC.md section 17).
    let mut batch: Option<cairn::Batch> = None;
    let mut pending: Vec<(u64, Vec<u8>, LineResult)> = Vec::new();
    // The run as of the last commit, to apply the group again from when a line fails.
    let (mut run, mut committed_run) = (Run::new(), Run::new());
    let flush = |batch: Option<cairn::Batch>,
                 pending: &mut Vec<(u64, Vec<u8>, LineResult)>,
                 out: &mut std::io::StdoutLock|
     -> Result<(), Failure> {
        if let Some(batch) = batch {
            batch.commit()?;
        }
        for (_, _, r) in pending.drain(..) {
            print_result(&r, as_json, out);
        }
        let _ = out.flush();
        Ok(())
    };
    loop {
        let more = match next_line(&mut reader, &mut buf, "standard input", line) {
            Ok(m) => m,
            Err(f) => {
                flush(batch, &mut pending, &mut out)?;
                return Err(f);
            }
        };
        if more {
            line += 1;
            let open = match batch.take() {
                Some(b) => b,
                None => ledger.batch()?,
            };
            let open = batch.insert(open);
            match run.apply_line(open, gate, line, &buf) {
                Ok(Some(r)) => {
                    refused |= r.refused.is_some()
                        || r.gate.as_ref().is_some_and(|o| !o.struck.is_empty());
                    pending.push((line, buf.clone(), r))
                }
                Ok(None) => {}
                Err(e) => {
                    // Start over without the bad line, so its partial writes are gone.
                    drop(batch);
                    let mut fresh = ledger.batch()?;
                    for (n, bytes, _) in &pending {
                        committed_run
                            .apply_line(&mut fresh, gate, *n, bytes)
                            .map_err(|e| {
                                line_failure("standard input", e, "nothing was written")
                            })?;
                    }
                    flush(Some(fresh), &mut pending, &mut out)?;
                    return Err(line_failure(
                        "standard input",
                        e,
                        "the lines before it were written and acknowledged, and nothing after it was read",
                    ));
                }
            }
        }
        let waiting = !reader.buffer().is_empty();
        if !more || !waiting || pending.len() >= GROUP_COMMIT_LINES {
            flush(batch.take(), &mut pending, &mut out)?;
            committed_run = run.clone();
            if !more {
                return Ok(u8::from(refused));
            }
        }
    }
}
