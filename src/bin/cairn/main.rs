//! The `cairn` command line: a thin layer over the library.
//!
//! Exit codes: 0 ok; 1 a gate refused or a query found violations; 2 bad input or usage;
//! 3 integrity failure.

#![forbid(unsafe_code)]

mod ingest_cmd;

use cairn::record::Kind;
use cairn::{Error, Ledger, Read};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// An append-only, content-addressed provenance ledger for long-running LLM agents.
#[derive(Parser)]
#[command(name = "cairn", version, about)]
struct Cli {
    /// The ledger file (else $CAIRN_DB, else ./cairn.redb).
    #[arg(long, global = true, env = "CAIRN_DB", default_value = "cairn.redb")]
    db: PathBuf,
    /// Print results as JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Append JSON Lines records from FILE, or from standard input with `-`.
    Ingest {
        /// A JSON Lines file, or `-` for standard input.
        file: String,
    },
    /// Recompute every rid, re-check every link and rebuild every derived table.
    Verify,
    /// Count records, streams and derived facts.
    Stats,
    /// Print every record with its fields and rid, one JSON object per line.
    Export {
        /// The output format.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
    /// Ingest the built-in demo (the three stories of the seeds) and show the result.
    Demo,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// JSON Lines: one object per record, in log order.
    Json,
}

/// A command's failure: the exit code and the sentence to print.
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure {
            code: if e.is_integrity() { 3 } else { 2 },
            message: e.to_string(),
        }
    }
}

type Outcome = Result<u8, Failure>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| run(&cli));
    let code = match result {
        Ok(Ok(code)) => code,
        Ok(Err(f)) => {
            eprintln!("cairn: {}", f.message);
            f.code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no detail");
            eprintln!(
                "cairn: reading {} failed unexpectedly ({what}); the file may be damaged: run `cairn verify` on it, and restore it from a copy if verify fails",
                cli.db.display()
            );
            3
        }
    };
    ExitCode::from(code)
}

fn run(cli: &Cli) -> Outcome {
    match &cli.command {
        Command::Ingest { file } => ingest_cmd::run(&cli.db, file, cli.json),
        Command::Verify => verify(&cli.db, cli.json),
        Command::Stats => stats(&cli.db, cli.json),
        Command::Export { format } => export(&cli.db, *format),
        Command::Demo => demo(&cli.db, cli.json),
    }
}

/// Opens a ledger that must already exist.
fn open_existing(path: &Path, checked: bool) -> Result<Ledger, Failure> {
    if !path.exists() {
        return Err(Failure::usage(format!(
            "there is no ledger at {}; ingest into it first, or point --db or $CAIRN_DB at one",
            path.display()
        )));
    }
    Ok(if checked {
        Ledger::open_checked(path)?
    } else {
        Ledger::open(path)?
    })
}

fn verify(path: &Path, as_json: bool) -> Outcome {
    let (report, damaged) = match open_existing(path, true) {
        Ok(ledger) => (ledger.verify()?, None),
        Err(f) if f.code == 2 => return Err(f),
        Err(f) => match verify_copy(path) {
            Some(report) => (report, Some(f.message)),
            None => {
                return Err(Failure {
                    code: 3,
                    message: f.message,
                })
            }
        },
    };
    if let Some(message) = &damaged {
        eprintln!("cairn: {message}");
    }
    if as_json {
        let found: Vec<_> = report
            .discrepancies
            .iter()
            .map(
                |d| json!({"rid": d.rid.map(|r| r.to_hex()), "table": d.table, "detail": d.detail}),
            )
            .collect();
        println!(
            "{}",
            json!({"ok": report.ok(), "records": report.records, "tables_compared": report.tables_compared, "discrepancies": found})
        );
    } else if report.ok() && damaged.is_none() {
        println!(
            "{}: {} records; every rid, link and derived table checks out",
            path.display(),
            report.records
        );
    } else {
        for d in &report.discrepancies {
            println!("{d}");
        }
        let rebuilt = if report.tables_compared == 0 {
            " (derived tables were not rebuilt, because records are damaged)"
        } else {
            ""
        };
        eprintln!(
            "cairn: {} has {} discrepancies in {} records{rebuilt}; restore it from a copy",
            path.display(),
            report.discrepancies.len(),
            report.records
        );
    }
    Ok(if report.ok() && damaged.is_none() {
        0
    } else {
        3
    })
}

/// When redb finds the file damaged, runs cairn's own checks on a copy, so the damaged
/// records can be named without writing to the original. `None` when even that fails.
fn verify_copy(path: &Path) -> Option<cairn::VerifyReport> {
    let copy = std::env::temp_dir().join(format!("cairn-verify-{}.redb", std::process::id()));
    std::fs::copy(path, &copy).ok()?;
    let report = std::panic::catch_unwind(|| Ledger::open(&copy).ok()?.verify().ok())
        .ok()
        .flatten();
    let _ = std::fs::remove_file(&copy);
    report
}

fn stats_value(ledger: &Ledger) -> Result<serde_json::Value, Failure> {
    let snap = ledger.snapshot()?;
    let records = snap.len()?;
    let mut kinds = [0u64; 9];
    for i in 0..records {
        if let Some(rid) = snap.rid_at(i)? {
            if let Some(k) = snap.kind_of(&rid)? {
                kinds[k as usize] += 1;
            }
        }
    }
    let by_kind: serde_json::Map<_, _> = Kind::ALL
        .iter()
        .map(|k| (k.name().to_string(), json!(kinds[*k as usize])))
        .collect();
    let mut streams = Vec::new();
    for name in snap.streams()? {
        let s = snap.stream(&name)?;
        streams.push(json!({
            "stream": name, "spans": s.spans, "evicted": s.evicted, "window": s.window(),
            "summaries": s.summaries, "head": s.head.map(|h| h.to_hex()),
        }));
    }
    Ok(json!({
        "ledger": ledger.path().display().to_string(),
        "ledger_id": ledger.id()?,
        "records": records,
        "kinds": by_kind,
        "streams": streams,
        "unanchored_claims": snap.unanchored_claims()?.len(),
        "summaries_deeper_than_two": snap.deeper_than(Kind::Summary, 2)?.len(),
        "claims_deeper_than_two": snap.deeper_than(Kind::Claim, 2)?.len(),
        "file_bytes": std::fs::metadata(ledger.path()).map(|m| m.len()).unwrap_or(0),
    }))
}

fn print_stats(v: &serde_json::Value, as_json: bool) {
    if as_json {
        println!("{v}");
        return;
    }
    println!(
        "ledger {} (id {})",
        v["ledger"].as_str().unwrap_or(""),
        v["ledger_id"].as_str().unwrap_or("")
    );
    println!("records: {} in {} bytes", v["records"], v["file_bytes"]);
    if let Some(kinds) = v["kinds"].as_object() {
        let parts: Vec<String> = kinds
            .iter()
            .filter(|(_, n)| n.as_u64() != Some(0))
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        println!("by kind: {}", parts.join(", "));
    }
    for s in v["streams"].as_array().into_iter().flatten() {
        println!(
            "stream {}: {} spans, {} evicted, window {}, {} summaries",
            s["stream"].as_str().unwrap_or(""),
            s["spans"],
            s["evicted"],
            s["window"],
            s["summaries"]
        );
    }
    println!(
        "claims without a raw-span ancestor: {}; summary chains deeper than two: {}",
        v["unanchored_claims"], v["summaries_deeper_than_two"]
    );
}

fn stats(path: &Path, as_json: bool) -> Outcome {
    let ledger = open_existing(path, false)?;
    print_stats(&stats_value(&ledger)?, as_json);
    Ok(0)
}

fn export(path: &Path, format: Format) -> Outcome {
    let ledger = open_existing(path, false)?;
    let snap = ledger.snapshot()?;
    match format {
        Format::Json => {
            use std::io::Write;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            snap.for_each(|index, rid, record| {
                // A closed pipe (`cairn export | head`) ends the export quietly.
                let _ = writeln!(out, "{}", cairn::json::export_line(index, rid, &record));
                Ok(())
            })?;
            let _ = out.flush();
        }
    }
    Ok(0)
}

const DEMO: &str = include_str!("demo.jsonl");

fn demo(path: &Path, as_json: bool) -> Outcome {
    let ledger = Ledger::open(path)?;
    let outcome = ingest_cmd::ingest_text(&ledger, DEMO, "the built-in demo")?;
    let report = ledger.verify()?;
    let mut v = stats_value(&ledger)?;
    v["demo_lines"] = json!(outcome.lines);
    v["appended"] = json!(outcome.appended);
    v["verify_ok"] = json!(report.ok());
    if !as_json {
        println!(
            "ingested the built-in demo ({} lines: {} records appended, {} lines already present)",
            outcome.lines, outcome.appended, outcome.present
        );
    }
    print_stats(&v, as_json);
    if !as_json {
        println!(
            "verify: {}",
            if report.ok() {
                "every rid, link and derived table checks out"
            } else {
                "DISCREPANCIES FOUND"
            }
        );
    }
    Ok(if report.ok() { 0 } else { 3 })
}
