//! The `cairn` command line: a thin layer over the library.
//!
//! Exit codes: 0 ok; 1 a gate refused or a query found violations; 2 bad input or usage;
//! 3 integrity failure.

#![forbid(unsafe_code)]

#[macro_use]
mod out;
mod commands;
mod import_cmd;
mod ingest_cmd;
mod tlog;

use cairn::gate::{Gatekeeper, JudgeKind, Policy};
use cairn::record::Kind;
use cairn::score::{External, Judge, Lexical, Scorer};
#[cfg(feature = "model")]
use cairn::score::{Model, Nli};
use cairn::score::{ScoreError, ScoreProblem};
use cairn::{Error, ErrorKind, Ledger, Read, RefError};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// An append-only, content-addressed provenance ledger for long-running LLM agents.
#[derive(Parser)]
#[command(name = "cairn", version, about)]
struct Cli {
    /// The ledger: a file, or a postgres:// URL with no password in it (else $CAIRN_DB, else
    /// ./cairn.redb). The password comes from $PGPASSWORD or the file $CAIRN_DB_PASSWORD_FILE.
    #[arg(long, global = true, env = "CAIRN_DB", default_value = "cairn.redb")]
    db: PathBuf,
    /// Print results as JSON.
    #[arg(long, global = true)]
    json: bool,
    /// A TOML file of gate thresholds (defaults: the seeds' values).
    #[arg(long, global = true)]
    policy: Option<PathBuf>,
    /// Score with this command (JSON Lines on stdin and stdout) instead of the built-in scorer.
    #[arg(long, global = true, conflicts_with = "model")]
    scorer_cmd: Option<String>,
    /// Score with the NLI model in this directory (config.json, tokenizer.json and
    /// model.safetensors), run in-process; overrides the policy's `model`.
    #[arg(long, global = true)]
    model: Option<PathBuf>,
    /// How long the scorer command may take per answer, in milliseconds.
    #[arg(long, global = true, default_value_t = 10_000)]
    scorer_timeout_ms: u64,
    #[command(subcommand)]
    command: Command,
}

/// The record kinds and their fields, for `cairn ingest --help` (SPEC.md section 5 has the rest).
const INGEST_HELP: &str = "\
Each line is one JSON object with a `kind`; a field given twice is refused:
  span       stream, turn, role (user|assistant|tool|system), text [, name]
  claim      stream, text, witnesses [refs] [, origin (user-said|tool-output|hedged|inferred), actionable]
  summary    stream, author (self|separate), budget, covers, evicts [refs or ranges turn:A..turn:B],
             claims [objects as for claim, or refs] [, parent, self_score, reground]   (gated)
  pin        stream, name, items [{class, text [, witness]}]   (write-once per name)
  judgement  stream, claim, span, relation (entails|contradicts|neutral) [, score, scorer]
  action     stream, text, relies_on [refs] [, irreversible]   (gated)
  reground   stream, claim   (re-checked against the claim's raw spans)
A ref is a rid, a prefix of 8 or more hex digits, turn:N, or prior:N (the head summary's N-th
claim). Pin classes: prohibition, commitment, failed-attempt, entity, preference, policy,
identifier. A file applies whole or not at all; `-` commits groups of lines as they arrive.
Example:
  {\"kind\":\"span\",\"stream\":\"s1\",\"turn\":1,\"role\":\"user\",\"text\":\"we are still on libfoo 2.3.1, do not bump.\"}";

#[derive(Subcommand)]
enum Command {
    /// Append JSON Lines records from FILE, or from standard input with `-`.
    #[command(after_long_help = INGEST_HELP)]
    Ingest {
        /// A JSON Lines file, or `-` for standard input.
        file: String,
    },
    /// Import a real agent's own log (Claude Code, Codex CLI, SWE-agent, OpenAI-style chat): its messages become
    /// spans that remember where they came from, and its compactions prose summaries, judged
    /// by the gates. A directory imports every log in it.
    Import {
        /// The log's format: claude-code, codex, swe-agent or openai-chat.
        #[arg(long = "from")]
        format: String,
        /// A log file, or a directory of them (`*.jsonl`, `*.json`, `*.traj`).
        path: PathBuf,
    },
    /// Recompute every rid, re-check every link and rebuild every derived table; with
    /// --against, check that the ledger still holds a checkpoint's history.
    Verify {
        /// A checkpoint file (plain or signed) the ledger must still be consistent with.
        #[arg(long)]
        against: Option<PathBuf>,
        /// The verifier key (from `cairn keygen`) whose signature the checkpoint must carry.
        #[arg(long, requires = "against")]
        pubkey: Option<PathBuf>,
    },
    /// Copy every record, in log order, with the ledger's id and last signed checkpoint, into a
    /// new or empty ledger: a file or a postgres:// URL. The copy has the same rids, log order,
    /// Merkle root and export; its tables are derived again, and no gate or judge runs.
    Copy {
        /// The ledger to copy: a file or a postgres:// URL.
        from: PathBuf,
        /// The new ledger: a new path, or a URL of a database without a cairn ledger.
        to: PathBuf,
    },
    /// Recover a ledger a crash left mid-write (redb replays its own log, keeping every
    /// committed batch whole), then verify it, and say what was done.
    Recover,
    /// Print a checkpoint of the Merkle log: origin, size and root; signed with --key.
    Checkpoint {
        /// A signing key from `cairn keygen`.
        #[arg(long)]
        key: Option<PathBuf>,
    },
    /// Write a new Ed25519 signing key to FILE and its verifier key to FILE.pub.
    Keygen {
        /// Where to write the signing key.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        /// The key's name, written in signature lines.
        #[arg(long, default_value = "cairn")]
        name: String,
    },
    /// Print a Merkle proof.
    Prove {
        #[command(subcommand)]
        what: ProveCommand,
    },
    /// Print a record's canonical bytes in hex, for an offline inclusion check.
    Bytes {
        /// A rid or a unique prefix of 8 or more hex digits.
        reference: String,
    },
    /// Check an inclusion proof with only a checkpoint, the proof and the record's bytes.
    CheckInclusion {
        /// The checkpoint file.
        #[arg(long)]
        checkpoint: PathBuf,
        /// The proof file from `cairn prove inclusion`.
        #[arg(long)]
        proof: PathBuf,
        /// The record's canonical bytes, in hex (from `cairn bytes`) or raw.
        #[arg(long)]
        record: PathBuf,
        /// The verifier key whose signature the checkpoint must carry.
        #[arg(long)]
        pubkey: Option<PathBuf>,
    },
    /// Count records, streams and derived facts.
    Stats,
    /// Print the record graph: JSON Lines (every record with its fields and rid) or dot.
    Export {
        /// The output format.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// Only this stream's records and the judgements, verdicts and regrounds about them.
        #[arg(long)]
        stream: Option<String>,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// Show a claim's derivation down to the raw spans, and where its provenance was lost.
    Why {
        /// A rid, a unique prefix of 8 or more hex digits, or prior:N with --stream.
        reference: String,
        /// The stream, for prior:N.
        #[arg(long)]
        stream: Option<String>,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// What the stream's agent should see next, within a token budget: pins (never
    /// dropped), the head summary's claims with status, origin and flags, then recent turns.
    Context {
        /// The stream.
        stream: String,
        /// The budget in tokens (one token per four characters, plus 4 per entry).
        #[arg(long, default_value_t = 4000)]
        budget: usize,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// Find the spans and claims that match a query, ranked (BM25), each with its standing:
    /// a span's turn and whether it was evicted, a claim's status, origin and witnesses.
    Recall {
        /// The query, in words ("what port is staging on").
        query: String,
        /// Search this stream only (all streams when left out).
        #[arg(long)]
        stream: Option<String>,
        /// The most hits to give (at most 1000).
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// Replay a stream boundary by boundary: verdicts, claims, evictions, scores.
    Replay {
        /// The stream.
        stream: String,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// Write a self-contained HTML report of a stream.
    Report {
        /// The stream.
        stream: String,
        /// The HTML file to write.
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
    /// Ingest the built-in demo (the three stories of the seeds) and show the result.
    Demo,
    /// Run every gate query over the current ledger; exit 1 if anything is found.
    Gates {
        /// Only this stream.
        #[arg(long)]
        stream: Option<String>,
        /// The ledger as it was at this log size.
        #[arg(long)]
        as_of: Option<u64>,
    },
    /// Write a pin: with --auto, from the classifier's decision-relevant items.
    Pin {
        /// Pin what the classifier finds in the stream's raw spans that no pin covers yet.
        #[arg(long)]
        auto: bool,
        /// With --auto: show what would be pinned, and write nothing (pins are forever).
        #[arg(long = "dry-run", requires = "auto")]
        dry_run: bool,
        /// The stream.
        stream: String,
        /// The pin's name (write-once).
        name: String,
    },
    /// Re-check a claim against its raw-span ancestors; exit 1 if they do not entail it.
    Reground {
        /// A rid, a unique prefix of 8 or more hex digits, or prior:N with --stream.
        reference: String,
        /// The stream, for prior:N.
        #[arg(long)]
        stream: Option<String>,
    },
    /// Score JSON Lines {"claim":..,"source":..} from stdin; print entailment, contradiction, similarity.
    Score,
    /// Serve the ledger to an agent over MCP on stdin and stdout (the agent starts this
    /// process); creates the ledger if it does not exist.
    Mcp {
        /// Who writes the compactions this server's client proposes: `self` (the agent
        /// summarises its own context) or `separate` (the client is a separate summariser
        /// with access to the raw turns). Clients cannot say so themselves.
        #[arg(long = "client-author", default_value = "self", value_parser = ["self", "separate"])]
        client_author: String,
    },
    /// Serve the ledger over MCP's Streamable HTTP at http://ADDR/mcp, to many clients at once;
    /// a bearer token, if set in CAIRN_TOKEN, is required of every request.
    Serve {
        /// The address to listen on; a non-loopback address needs CAIRN_TOKEN.
        #[arg(long, default_value = "127.0.0.1:8765")]
        listen: std::net::SocketAddr,
        /// Another Host header value to accept (a name the server is reached by), repeatable.
        #[arg(long = "allow-host")]
        allow_host: Vec<String>,
        /// Another Origin header value to accept (a browser page allowed to call it), repeatable.
        #[arg(long = "allow-origin")]
        allow_origin: Vec<String>,
        /// Who writes the compactions clients propose: `self` or `separate` (as for `mcp`).
        #[arg(long = "client-author", default_value = "self", value_parser = ["self", "separate"])]
        client_author: String,
        /// MCP sessions open at once; an initialize past it is refused with 503.
        #[arg(long = "max-sessions", default_value_t = 1024)]
        max_sessions: usize,
        /// Seconds a session may go without a request before it is closed and freed.
        #[arg(long = "session-ttl", default_value_t = 300)]
        session_ttl: u64,
        /// TCP connections open at once; one past it is answered 503 and closed.
        #[arg(long = "max-connections", default_value_t = 512)]
        max_connections: usize,
        /// Seconds a connection has to send a request's headers, from opening or from its
        /// previous response (so also how long an idle connection is kept).
        #[arg(long = "header-timeout", default_value_t = 10)]
        header_timeout: u64,
    },
}

#[derive(Subcommand)]
enum ProveCommand {
    /// That a record is in the log at a size.
    Inclusion {
        /// A rid or a unique prefix of 8 or more hex digits.
        reference: String,
        /// The tree size (default: the current size).
        #[arg(long)]
        size: Option<u64>,
    },
    /// That the log at OLD records is a prefix of the log at NEW.
    Consistency {
        /// The older size.
        old: u64,
        /// The newer size.
        new: u64,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// JSON Lines: one object per record, in log order.
    Json,
    /// Graphviz dot: one node per record, one edge per link.
    Dot,
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
        let message = match advice(&e) {
            Some(a) => format!("{e} ({a})"),
            None => e.to_string(),
        };
        Failure {
            code: if e.is_integrity() { 3 } else { 2 },
            message,
        }
    }
}

/// What to do about a library error on the command line: the flag to give or the command to
/// run. The library's messages speak of ledgers, records and sizes; this adds the `cairn` words.
fn advice(e: &Error) -> Option<&'static str> {
    Some(match e.kind() {
        ErrorKind::Storage(_) | ErrorKind::CorruptFile { .. } | ErrorKind::CorruptRecord { .. } => {
            "`cairn verify` checks the ledger"
        }
        ErrorKind::Locked(_) => "or give another --db",
        ErrorKind::NotALedger { .. } => "point --db at a cairn ledger or a new path",
        ErrorKind::AsOf { .. } => "`cairn stats` shows the log size",
        ErrorKind::Policy(_) => "or drop --policy to use the defaults",
        ErrorKind::Reference(RefError::NeedsStream) => "give --stream",
        ErrorKind::Score(ScoreError {
            problem: ScoreProblem::Timeout { .. },
            ..
        }) => "raise --scorer-timeout-ms, or fix the command",
        ErrorKind::Score(ScoreError {
            problem: ScoreProblem::ModelLoad { .. },
            ..
        }) => "point --model (or the policy's `model`) at another model directory, or drop it to use the built-in scorer",
        _ => return None,
    })
}

type Outcome = Result<u8, Failure>;

/// "1 finding", "2 findings": a count with its noun in the right number.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| run(&cli));
    let code = match result {
        Ok(Ok(code)) => code,
        Ok(Err(f)) => {
            warn!("cairn: {}", f.message);
            f.code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no detail");
            // The reader of our output went away (`cairn demo | head -3`): nothing is wrong
            // with the ledger, and what was asked for was written until the reader stopped.
            if what.starts_with("failed printing to stdout") && what.contains("os error 32") {
                return ExitCode::SUCCESS;
            }
            // redb decodes text keys with `from_utf8(..).unwrap()`: a flipped bit in one is
            // damage, said as such rather than as the panic's words.
            let found = if what.contains("Utf8Error") {
                "a text key that is not valid UTF-8"
            } else {
                "bytes it could not read past"
            };
            warn!(
                "cairn: the ledger {} is damaged: reading it found {found}; run `cairn verify` on it, and restore it from a copy if verify fails (what failed: {what})",
                cli.db.display()
            );
            3
        }
    };
    ExitCode::from(code)
}

fn gatekeeper(cli: &Cli) -> Result<Gatekeeper, Failure> {
    let policy = match &cli.policy {
        None => Policy::default(),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::usage(format!("cannot read policy {}: {e}", p.display())))?;
            Policy::from_toml(&text, &p.display().to_string())
                .map_err(|e| Failure::from(Error::from(e)))?
        }
    };
    // A relative `model` in a policy file is relative to that file.
    let from_policy = policy.model.as_ref().map(|m| match &cli.policy {
        Some(p) if m.is_relative() => p.parent().unwrap_or(Path::new("")).join(m),
        _ => m.clone(),
    });
    let model = cli.model.as_ref().or(from_policy.as_ref());
    // With an `nli` judge the model judges what the built-in scorer is not sure of; otherwise
    // a model scores every pair.
    let nli_judge = policy
        .judge
        .as_ref()
        .is_some_and(|j| j.kind == JudgeKind::Nli);
    if nli_judge && cli.scorer_cmd.is_some() {
        return Err(Failure::usage(
            "the policy's judge is `nli`, which judges behind the built-in scorer, and --scorer-cmd replaces that scorer; drop --scorer-cmd, or the policy's judge".to_string(),
        ));
    }
    if nli_judge && model.is_none() {
        return Err(Failure::usage(
            "the policy's judge is `nli`, but no model is given; set the policy's `model` or pass --model DIR".to_string(),
        ));
    }
    let (base, nli): (Box<dyn Scorer>, Option<Box<dyn Judge>>) = match (&cli.scorer_cmd, model) {
        (Some(cmd), _) => (
            Box::new(External::new(
                cmd,
                std::time::Duration::from_millis(cli.scorer_timeout_ms),
            )),
            None,
        ),
        (None, Some(dir)) if nli_judge => (Box::new(Lexical), Some(model_judge(dir)?)),
        (None, Some(dir)) => (model_scorer(dir)?, None),
        (None, None) => (Box::new(Lexical), None),
    };
    let scorer = policy.scorer(base, nli);
    Ok(Gatekeeper { policy, scorer })
}

/// The in-process NLI model in `dir`, as the scorer of every pair.
#[cfg(feature = "model")]
fn model_scorer(dir: &Path) -> Result<Box<dyn Scorer>, Failure> {
    let model = Model::load(dir).map_err(|e| Failure::from(Error::from(e)))?;
    Ok(Box::new(model))
}

/// The in-process NLI model in `dir`, as the judge behind the built-in scorer.
#[cfg(feature = "model")]
fn model_judge(dir: &Path) -> Result<Box<dyn Judge>, Failure> {
    let model = Model::load(dir).map_err(|e| Failure::from(Error::from(e)))?;
    Ok(Box::new(Nli::new(model)))
}

#[cfg(not(feature = "model"))]
fn model_scorer(dir: &Path) -> Result<Box<dyn Scorer>, Failure> {
    Err(without_model(dir))
}

#[cfg(not(feature = "model"))]
fn model_judge(dir: &Path) -> Result<Box<dyn Judge>, Failure> {
    Err(without_model(dir))
}

/// A model asked of a build without the model scorer.
#[cfg(not(feature = "model"))]
fn without_model(dir: &Path) -> Failure {
    Failure::usage(format!(
        "this cairn was built without the model scorer, so it cannot load the model in {}; build it with `cargo install --path crates/cairn-cli --features model`, or drop --model (and the policy's `model`) to use the built-in scorer",
        dir.display()
    ))
}

fn run(cli: &Cli) -> Outcome {
    let gate = gatekeeper(cli)?;
    match &cli.command {
        Command::Ingest { file } => ingest_cmd::run(&cli.db, &gate, file, cli.json),
        Command::Import { format, path } => import_cmd::run(&cli.db, &gate, format, path, cli.json),
        Command::Verify { against: None, .. } => verify(&cli.db, cli.json),
        Command::Recover => recover(&cli.db, cli.json),
        Command::Copy { from, to } => copy(from, to, cli.json),
        Command::Verify {
            against: Some(file),
            pubkey,
        } => tlog::verify_against(&cli.db, file, pubkey.as_deref(), cli.json),
        Command::Checkpoint { key } => tlog::checkpoint(&cli.db, key.as_deref()),
        Command::Keygen { output, name } => tlog::keygen(output, name),
        Command::Prove { what } => match what {
            ProveCommand::Inclusion { reference, size } => {
                tlog::prove_inclusion(&cli.db, reference, *size, cli.json)
            }
            ProveCommand::Consistency { old, new } => {
                tlog::prove_consistency(&cli.db, *old, *new, cli.json)
            }
        },
        Command::Bytes { reference } => tlog::bytes(&cli.db, reference),
        Command::CheckInclusion {
            checkpoint,
            proof,
            record,
            pubkey,
        } => tlog::check_inclusion(checkpoint, proof, record, pubkey.as_deref()),
        Command::Stats => stats(&cli.db, cli.json),
        Command::Export {
            format,
            stream,
            as_of,
        } => export(&cli.db, *format, stream.as_deref(), *as_of),
        Command::Why {
            reference,
            stream,
            as_of,
        } => commands::why(&cli.db, reference, stream.as_deref(), *as_of, cli.json),
        Command::Context {
            stream,
            budget,
            as_of,
        } => commands::context(&cli.db, stream, *budget, *as_of, cli.json),
        Command::Recall {
            query,
            stream,
            limit,
            as_of,
        } => commands::recall(&cli.db, query, stream.as_deref(), *limit, *as_of, cli.json),
        Command::Replay { stream, as_of } => commands::replay(&cli.db, stream, *as_of, cli.json),
        Command::Report { stream, output } => commands::report(&cli.db, stream, output),
        Command::Demo => demo(&cli.db, &gate, cli.json),
        Command::Gates { stream, as_of } => {
            commands::gates(&cli.db, &gate, stream.as_deref(), *as_of, cli.json)
        }
        Command::Pin {
            auto,
            dry_run,
            stream,
            name,
        } => commands::pin(&cli.db, &gate, *auto, *dry_run, stream, name, cli.json),
        Command::Reground { reference, stream } => {
            commands::reground(&cli.db, &gate, reference, stream.as_deref(), cli.json)
        }
        Command::Score => commands::score(&gate),
        Command::Mcp { client_author } => commands::mcp(&cli.db, gate, client_author),
        Command::Serve {
            listen,
            allow_host,
            allow_origin,
            client_author,
            max_sessions,
            session_ttl,
            max_connections,
            header_timeout,
        } => commands::serve(
            &cli.db,
            gate,
            client_author,
            cairn_mcp::HttpOptions {
                listen: *listen,
                allowed_hosts: allow_host.clone(),
                allowed_origins: allow_origin.clone(),
                token: None,
                limits: cairn_mcp::Limits {
                    max_sessions: *max_sessions,
                    session_ttl: std::time::Duration::from_secs(*session_ttl),
                    max_connections: *max_connections,
                    header_timeout: std::time::Duration::from_secs(*header_timeout),
                    ..cairn_mcp::Limits::default()
                },
            },
        ),
    }
}

/// A ledger the command reads or appends to must already exist: only `ingest` and `demo`
/// create one.
fn must_exist(path: &Path) -> Result<(), Failure> {
    // A server says for itself whether it holds a ledger.
    if path.exists() || Ledger::is_url(path) {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "there is no ledger at {}; ingest into it first, or point --db or $CAIRN_DB at one",
        path.display()
    )))
}

/// Opens an existing ledger read-only, for the commands that only read: nothing in the file
/// changes, a read-only file opens, and many readers may run beside the one writer.
pub fn open_reader(path: &Path) -> Result<Ledger, Failure> {
    must_exist(path)?;
    Ok(Ledger::open_read_only(path)?)
}

/// Opens an existing ledger for writing (`pin`, `reground`, `checkpoint --key`).
pub fn open_existing(path: &Path) -> Result<Ledger, Failure> {
    must_exist(path)?;
    Ok(Ledger::open(path)?)
}

fn verify(path: &Path, as_json: bool) -> Outcome {
    // Read-only: verifying evidence never changes it. Damage redb trips over while reading
    // sends the check to a private copy, where cairn's own checks name the records.
    let first = open_reader(path).and_then(|l| l.verify().map_err(Failure::from));
    let (report, damaged) = match first {
        Ok(report) => (report, None),
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
        warn!("cairn: {message}");
    }
    if as_json {
        println!("{}", report.to_json());
    } else if report.ok() && damaged.is_none() {
        say!(
            "{}: {} records; every rid, link and derived table checks out",
            path.display(),
            report.records
        );
    } else {
        for d in &report.discrepancies {
            say!("{d}");
        }
        let rebuilt = if report.tables_compared == 0 {
            " (derived tables were not rebuilt, because records are damaged)"
        } else {
            ""
        };
        warn!(
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

/// `cairn copy FROM TO`: reads FROM, writes a new ledger at TO, and prints both logs' size and
/// Merkle root, which must match.
fn copy(from: &Path, to: &Path, as_json: bool) -> Outcome {
    let source = open_reader(from)?;
    let records = Ledger::copy(&source, to)?;
    let before = cairn::checkpoint::Log::new(&source).checkpoint()?;
    drop(source);
    let target = Ledger::open_read_only(to)?;
    let after = cairn::checkpoint::Log::new(&target).checkpoint()?;
    let root = |h: &[u8; 32]| h.iter().map(|b| format!("{b:02x}")).collect::<String>();
    if (before.size, before.root) != (after.size, after.root) {
        return Err(Failure {
            code: 3,
            message: format!(
                "the copy at {} has {} records and root {}, and the source {} records and root {}; verify both",
                to.display(),
                after.size,
                root(&after.root),
                before.size,
                root(&before.root)
            ),
        });
    }
    if as_json {
        println!(
            "{}",
            json!({"from": from.display().to_string(), "to": to.display().to_string(), "records": records, "root": root(&after.root)})
        );
    } else {
        say!(
            "copied {records} records from {} to {}; both logs have Merkle root {}",
            from.display(),
            to.display(),
            root(&after.root)
        );
    }
    Ok(0)
}

/// When redb finds the file damaged, runs cairn's own checks on a copy, so the damaged
/// records can be named without writing to the original. `None` when even that fails.
///
/// The copy gets a fresh random name, created exclusively with owner-only permissions, so
/// nothing planted in the temporary directory (a symlink to another file, say) is followed or
/// overwritten; it is removed when the check ends.
/// `cairn recover`: opens the ledger for writing, which lets redb recover a file a crash left
/// mid-write, verifies it, and says whether anything needed recovering.
fn recover(path: &Path, as_json: bool) -> Outcome {
    must_exist(path)?;
    let needed = match Ledger::open_read_only(path) {
        Ok(_) => false,
        Err(e) if matches!(e.kind(), cairn::ErrorKind::NeedsRecovery(_)) => true,
        Err(e) => return Err(e.into()),
    };
    let ledger = Ledger::open(path)?;
    let report = ledger.verify()?;
    drop(ledger);
    let done = if needed {
        "recovered: it was left mid-write, and redb's recovery kept every committed batch whole"
    } else {
        "nothing to recover: it was closed cleanly"
    };
    if as_json {
        println!(
            "{}",
            json!({"ledger": path.display().to_string(), "recovered": needed, "ok": report.ok(), "records": report.records})
        );
    } else if report.ok() {
        say!(
            "{}: {done}; {} records, every rid, link and derived table checks out",
            path.display(),
            report.records
        );
    } else {
        say!(
            "{}: {done}; verify found {} discrepancies (run `cairn verify` to list them)",
            path.display(),
            report.discrepancies.len()
        );
    }
    Ok(if report.ok() { 0 } else { 3 })
}

fn verify_copy(path: &Path) -> Option<cairn::VerifyReport> {
    // An empty file holds no ledger to check (and opening a copy would make one).
    if std::fs::metadata(path).map_or(true, |m| m.len() == 0) {
        return None;
    }
    let mut copy = tempfile::Builder::new()
        .prefix("cairn-verify-")
        .suffix(".redb")
        .tempfile()
        .ok()?;
    let mut original = std::fs::File::open(path).ok()?;
    std::io::copy(&mut original, copy.as_file_mut()).ok()?;
    let at = copy.path().to_path_buf();
    std::panic::catch_unwind(|| Ledger::open(&at).ok()?.verify().ok())
        .ok()
        .flatten()
}

fn stats_value(ledger: &Ledger) -> Result<serde_json::Value, Failure> {
    let snap = ledger.snapshot()?;
    let records = snap.len()?;
    let kinds = recount(&snap, records)?;
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
        "rules": ledger.rules(),
        "records": records,
        "kinds": by_kind,
        "streams": streams,
        "unanchored_claims": snap.unanchored_claims()?.len(),
        "summaries_deeper_than_two": snap.deeper_than(Kind::Summary, 2)?.len(),
        "claims_deeper_than_two": snap.deeper_than(Kind::Claim, 2)?.len(),
        // A ledger on PostgreSQL has no file: null.
        "file_bytes": if Ledger::is_url(ledger.path()) {
            Value::Null
        } else {
            json!(std::fs::metadata(ledger.path()).map(|m| m.len()).unwrap_or(0))
        },
    }))
}

/// Every record's kind counted from the log itself, and what the derived tables say of the
/// streams, the unanchored claims and the chains deeper than two, recomputed from the records
/// as the log has them: stats prints numbers, and a damaged table must not change one unseen.
fn recount(snap: &cairn::Snapshot, records: u64) -> Result<[u64; Kind::ALL.len() + 1], Failure> {
    use cairn::record::Record;
    use std::collections::{HashMap, HashSet};
    #[derive(Default)]
    struct Tally {
        spans: u64,
        evicted: HashSet<cairn::record::Rid>,
        summaries: u64,
        refused: u64,
        proposals: u64,
        head: Option<cairn::record::Rid>,
    }
    let mut kinds = [0u64; Kind::ALL.len() + 1];
    let mut streams: HashMap<String, Tally> = HashMap::new();
    let mut summaries: HashMap<cairn::record::Rid, cairn::record::Summary> = HashMap::new();
    let (mut unanchored, mut deep_summaries, mut deep_claims) = (0usize, 0usize, 0usize);
    for i in 0..records {
        let Some((rid, record)) = snap.record_at(i)? else {
            return Err(damaged(format!(
                "log index {i} holds no record, though the log is longer"
            )));
        };
        kinds[record.kind() as usize] += 1;
        match &record {
            Record::Span(x) => streams.entry(x.stream.clone()).or_default().spans += 1,
            Record::Summary(x) => {
                streams.entry(x.stream.clone()).or_default().proposals += 1;
                summaries.insert(rid, x.clone());
            }
            Record::Verdict(v) => {
                if let Some(x) = summaries.get(&v.subject) {
                    let t = streams.entry(x.stream.clone()).or_default();
                    if v.admitted {
                        t.summaries += 1;
                        t.head = Some(v.subject);
                        t.evicted.extend(x.evicts.iter().copied());
                    } else {
                        t.refused += 1;
                    }
                }
            }
            _ => {}
        }
        if matches!(record.kind(), Kind::Claim | Kind::Summary) {
            let Some(f) = snap.facts(&rid)? else {
                return Err(damaged(format!("the facts of {rid} are missing")));
            };
            let deep = f.anchored && f.depth.is_some_and(|d| d > 2);
            match record.kind() {
                Kind::Claim => {
                    unanchored += usize::from(!f.anchored);
                    deep_claims += usize::from(deep);
                }
                _ => deep_summaries += usize::from(deep),
            }
        }
    }
    let stored = snap.streams()?;
    if stored.len() != streams.len() {
        return Err(damaged(format!(
            "the streams table names {} streams, the log {}",
            stored.len(),
            streams.len()
        )));
    }
    for name in stored {
        let s = snap.stream(&name)?;
        let t = streams.remove(&name).unwrap_or_default();
        let same = (
            s.spans,
            s.evicted,
            s.summaries,
            s.refused,
            s.proposals,
            s.head,
        ) == (
            t.spans,
            t.evicted.len() as u64,
            t.summaries,
            t.refused,
            t.proposals,
            t.head,
        );
        if !same {
            return Err(damaged(format!(
                "the state of stream {name} is not what its records give"
            )));
        }
    }
    let counted = (
        snap.unanchored_claims()?.len(),
        snap.deeper_than(Kind::Summary, 2)?.len(),
        snap.deeper_than(Kind::Claim, 2)?.len(),
    );
    if counted != (unanchored, deep_summaries, deep_claims) {
        return Err(damaged(
            "the unanchored or depths index disagrees with the facts table".into(),
        ));
    }
    Ok(kinds)
}

/// A damaged ledger found by a read command: exit 3.
fn damaged(detail: String) -> Failure {
    Failure {
        code: 3,
        message: format!("the ledger is damaged: {detail}; run `cairn verify` on it, and restore it from a copy if verify fails"),
    }
}

fn print_stats(v: &serde_json::Value, as_json: bool) {
    if as_json {
        println!("{v}");
        return;
    }
    say!(
        "ledger {} (id {})",
        v["ledger"].as_str().unwrap_or(""),
        v["ledger_id"].as_str().unwrap_or("")
    );
    match v["file_bytes"].as_u64() {
        Some(bytes) => say!("records: {} in {bytes} bytes", v["records"]),
        None => say!("records: {} on PostgreSQL", v["records"]),
    }
    if let Some(kinds) = v["kinds"].as_object() {
        let parts: Vec<String> = kinds
            .iter()
            .filter(|(_, n)| n.as_u64() != Some(0))
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        say!("by kind: {}", parts.join(", "));
    }
    for s in v["streams"].as_array().into_iter().flatten() {
        let n = |k: &str| s[k].as_u64().unwrap_or(0);
        say!(
            "stream {}: {}, {} evicted, window {}, {}",
            // A ledger written before stream names were checked (SPEC 4.2) may hold a new
            // line in one: it stays on its line.
            crate::out::visible_line(s["stream"].as_str().unwrap_or("")),
            count(n("spans"), "span", "spans"),
            n("evicted"),
            n("window"),
            count(n("summaries"), "admitted summary", "admitted summaries")
        );
    }
    say!(
        "claims without a raw-span ancestor: {}; summary chains deeper than two: {}",
        v["unanchored_claims"],
        v["summaries_deeper_than_two"]
    );
}

fn stats(path: &Path, as_json: bool) -> Outcome {
    let ledger = open_reader(path)?;
    print_stats(&stats_value(&ledger)?, as_json);
    Ok(0)
}

/// Opens an existing ledger, or its past at log size `as_of`.
pub fn view(path: &Path, as_of: Option<u64>) -> Result<Ledger, Failure> {
    let ledger = open_reader(path)?;
    Ok(match as_of {
        Some(n) => ledger.as_of(n)?,
        None => ledger,
    })
}

fn export(path: &Path, format: Format, stream: Option<&str>, as_of: Option<u64>) -> Outcome {
    use std::io::Write;
    let ledger = view(path, as_of)?;
    let snap = ledger.snapshot()?;
    commands::known_stream(&snap, path, stream)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // A closed pipe (`cairn export | head`) ends the export quietly.
    match format {
        Format::Json => {
            for (index, rid, record) in cairn::replay::records(&snap, stream)? {
                let _ = writeln!(out, "{}", cairn::ingest::export_line(index, rid, &record));
            }
        }
        Format::Dot => {
            let _ = out.write_all(cairn::replay::dot(&snap, stream)?.as_bytes());
        }
    }
    let _ = out.flush();
    Ok(0)
}

const DEMO: &str = include_str!("demo.jsonl");

fn demo(path: &Path, gate: &Gatekeeper, as_json: bool) -> Outcome {
    let ledger = Ledger::open(path)?;
    let before = ledger.len()?;
    let mut verdicts = Vec::new();
    let outcome = ingest_cmd::ingest_text(&ledger, gate, DEMO, "the built-in demo", |r| {
        if let Some(o) = &r.gate {
            let mut d = json!({
                "line": r.line, "kind": r.kind.name(), "rid": r.rid.to_hex(),
                "verdict": if o.admitted { "admitted" } else { "refused" },
                "findings": o.findings.iter().map(cairn::ingest::finding).collect::<Vec<_>>(),
            });
            if let Some(repair) = &o.repair {
                d["repair"] = cairn::ingest::repair_json(repair);
            }
            verdicts.push(d);
        }
    })?;
    let appended = ledger.len()? - before;
    let report = ledger.verify()?;
    let found = cairn::gate::sweep(gate, &ledger.snapshot()?, None)?;
    let mut v = stats_value(&ledger)?;
    v["demo_lines"] = json!(outcome.lines);
    v["appended"] = json!(appended);
    v["refused"] = json!(outcome.refused);
    v["verdicts"] = json!(verdicts);
    v["gate_findings"] = json!(found.len());
    v["verify_ok"] = json!(report.ok());
    // The ledger is closed before anything is printed: a reader that stops reading early
    // ends the printing, never a write in progress.
    drop(ledger);
    if as_json {
        println!("{v}");
        return Ok(if report.ok() { 0 } else { 3 });
    }
    say!(
        "ingested the built-in demo ({}: {} appended, {} already present)",
        count(outcome.lines, "line", "lines"),
        count(appended, "record", "records"),
        count(outcome.present, "line", "lines")
    );
    say!(
        "\nthe gates judged {}:",
        count(verdicts.len() as u64, "proposal", "proposals")
    );
    for d in &verdicts {
        say!(
            "  line {:>2} {:<7} {}",
            d["line"],
            d["kind"].as_str().unwrap_or(""),
            d["verdict"].as_str().unwrap_or("")
        );
        for f in d["findings"].as_array().into_iter().flatten() {
            say!(
                "      {}: {}",
                f["gate"].as_str().unwrap_or(""),
                f["detail"].as_str().unwrap_or("")
            );
        }
        let repair = &d["repair"];
        if repair.is_object() {
            say!(
                "    repaired: cairn's summary {} {}",
                &repair["rid"].as_str().unwrap_or("")[..12],
                repair["verdict"].as_str().unwrap_or("")
            );
            for c in repair["changes"].as_array().into_iter().flatten() {
                say!("      {}", c.as_str().unwrap_or(""));
            }
            for l in repair["text"].as_str().unwrap_or("").lines() {
                say!("      | {l}");
            }
        }
    }
    say!();
    print_stats(&v, false);
    say!(
        "cairn gates finds {} over the ledger as it stands",
        count(found.len() as u64, "finding", "findings")
    );
    say!(
        "verify: {}",
        if report.ok() {
            "every rid, link and derived table checks out"
        } else {
            "DISCREPANCIES FOUND"
        }
    );
    let db = path.display();
    say!(
        "\nnext, try:\n  cairn --db {db} why prior:0 --stream libfoo   # the libfoo claim's lineage back to raw spans\n  cairn --db {db} replay staging               # the port-5433 story, boundary by boundary\n  cairn --db {db} report migration -o m.html   # the DROP TABLE story as one HTML page\n  cairn --db {db} gates                        # every gate query over the ledger"
    );
    Ok(if report.ok() { 0 } else { 3 })
}
