//! `cairn._cairn`: the native half of the Python package (SPEC.md section 16).
//!
//! Every call goes to the cairn library; nothing is judged, stored or read again in Python.
//! Records, verdicts and answers cross as the JSON the CLI prints with `--json` (the library's
//! own `to_json` forms), and `cairn/__init__.py` turns them into typed objects. The GIL is
//! released for the whole of every call into the ledger.

#![forbid(unsafe_code)]

use cairn::checkpoint::{parse_unverified, Log, SignerKey};
use cairn::gate::{pin_of, sweep, unpinned_items, Gatekeeper, Policy};
use cairn::import::{self, Format};
use cairn::ingest::turns::{self, Refusal, Turn};
use cairn::ingest::{export_line, line_result, parse_ref, resolve, LineError, Run};
use cairn::memory::entries;
use cairn::record::{Record, Rid};
use cairn::score::Lexical;
use cairn::{Error, ErrorKind, Ledger as Store, Read};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

create_exception!(
    _cairn,
    CairnError,
    PyException,
    "Every error cairn raises; its message says what is wrong and the way out."
);
create_exception!(
    _cairn,
    InvalidInput,
    CairnError,
    "An argument or a JSON line cairn cannot take: a missing field, an unknown turn, a bad reference."
);
create_exception!(
    _cairn,
    NotFound,
    CairnError,
    "No record, stream or claim answers to what was named."
);
create_exception!(
    _cairn,
    Conflict,
    CairnError,
    "A write-once thing (a pin, a turn, an idempotency key) already holds other content."
);
create_exception!(
    _cairn,
    LedgerBusy,
    CairnError,
    "The ledger is held elsewhere: another process, or a handle from before a fork."
);
create_exception!(
    _cairn,
    LedgerDamaged,
    CairnError,
    "The ledger file is damaged, or could not be read or written."
);

/// A library error as the Python exception of its class, with the library's sentence.
fn raise(e: Error) -> PyErr {
    let message = e.to_string();
    if e.is_conflict() {
        return Conflict::new_err(message);
    }
    match e.kind() {
        ErrorKind::Locked(_) => LedgerBusy::new_err(message),
        ErrorKind::Storage(_)
        | ErrorKind::CorruptFile { .. }
        | ErrorKind::CorruptRecord { .. }
        | ErrorKind::NeedsRecovery(_)
        | ErrorKind::NotALedger { .. }
        | ErrorKind::Decode(_) => LedgerDamaged::new_err(message),
        ErrorKind::NotFound(_)
        | ErrorKind::WrongKind { .. }
        | ErrorKind::NoStream(_)
        | ErrorKind::AsOf { .. } => NotFound::new_err(message),
        ErrorKind::Reference(_)
        | ErrorKind::Ambiguous { .. }
        | ErrorKind::Invalid { .. }
        | ErrorKind::Link { .. }
        | ErrorKind::TooLarge { .. }
        | ErrorKind::TooManyLinks { .. }
        | ErrorKind::Policy(_)
        | ErrorKind::Io { .. } => InvalidInput::new_err(message),
        _ => CairnError::new_err(message),
    }
}

/// A JSON line that cannot be applied: the ledger's fault, or the line's, named by its field.
fn line_error(e: LineError) -> PyErr {
    let message = match &e.field {
        Some(f) => format!("field `{f}`: {}", e.message),
        None => e.message,
    };
    if e.integrity {
        LedgerDamaged::new_err(message)
    } else if e.conflict {
        Conflict::new_err(message)
    } else {
        InvalidInput::new_err(message)
    }
}

fn refusal(r: Refusal) -> PyErr {
    match r {
        r @ Refusal::Conflict { .. } => Conflict::new_err(r.to_string()),
        r @ Refusal::Argument { .. } => InvalidInput::new_err(r.to_string()),
        Refusal::Ledger(e) => raise(e),
        Refusal::Damaged(message) => LedgerDamaged::new_err(message),
    }
}

fn invalid(message: impl Into<String>) -> PyErr {
    InvalidInput::new_err(message.into())
}

/// One open ledger, shared by every handle to its path in this process.
struct Open {
    store: Store,
    /// The gates: one scorer, whose judge state lives across a `judged` call.
    gate: Mutex<Gatekeeper>,
    /// The policy file it was opened with, to refuse a second open with another.
    policy: Option<PathBuf>,
    /// The process that opened it: a forked child must open its own.
    pid: u32,
    /// Whether it lives in memory, with no file.
    memory: bool,
}

impl Open {
    /// The gates, taken with the GIL released: a write waits here for another thread's.
    fn gate(&self) -> std::sync::MutexGuard<'_, Gatekeeper> {
        self.gate.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The ledgers open in this process, by canonical path: a second open of a path gets the same
/// ledger, never a second redb handle (which redb refuses).
fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<Open>>> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, Weak<Open>>>> = OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

fn gatekeeper(policy: Option<&Path>) -> PyResult<Gatekeeper> {
    let policy = match policy {
        None => Policy::default(),
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                invalid(format!(
                    "cannot read policy {}: {e}; give the path of a policy TOML file, or none for the defaults",
                    p.display()
                ))
            })?;
            Policy::from_toml(&text, &p.display().to_string()).map_err(|e| raise(e.into()))?
        }
    };
    let scorer = policy.scorer(Box::new(Lexical), None);
    Ok(Gatekeeper { policy, scorer })
}

/// A cairn ledger: open or create the redb file at `path` (or in memory with `path=None`),
/// judging with the policy TOML at `policy` (the defaults when `None`).
#[pyclass(frozen, module = "cairn._cairn", name = "NativeLedger")]
struct NativeLedger {
    open: Arc<Open>,
}

impl NativeLedger {
    /// The ledger, or a clear error in a child process forked after it was opened: redb's
    /// file handle and lock belong to the parent.
    fn open(&self) -> PyResult<&Open> {
        if std::process::id() != self.open.pid && self.open.memory {
            return Err(LedgerBusy::new_err(format!(
                "this in-memory ledger belongs to process {}, and this process is a fork of it; a ledger in memory does not cross a fork, so make one in this process",
                self.open.pid
            )));
        }
        if std::process::id() != self.open.pid {
            return Err(LedgerBusy::new_err(format!(
                "this ledger handle ({}) was opened in process {} and this process is a fork of it; open the ledger again in this process (cairn.Ledger(path)) once the parent has closed it, or share it through the parent",
                self.open.store.path().display(),
                self.open.pid
            )));
        }
        Ok(&self.open)
    }
}

fn stream_known<R: Read>(read: &R, stream: &str) -> PyResult<()> {
    if read.streams().map_err(raise)?.iter().any(|s| s == stream) {
        return Ok(());
    }
    read.stream(stream).map_err(raise)?;
    Err(NotFound::new_err(format!(
        "the ledger has no stream {stream:?}; record a turn in it first, or check the name"
    )))
}

#[pymethods]
impl NativeLedger {
    #[new]
    #[pyo3(signature = (path=None, policy=None))]
    fn new(py: Python<'_>, path: Option<PathBuf>, policy: Option<PathBuf>) -> PyResult<Self> {
        let gate = gatekeeper(policy.as_deref())?;
        let Some(path) = path else {
            let store = py.detach(Store::in_memory).map_err(raise)?;
            return Ok(NativeLedger {
                open: Arc::new(Open {
                    store,
                    gate: Mutex::new(gate),
                    policy,
                    pid: std::process::id(),
                    memory: true,
                }),
            });
        };
        let key = match path.canonicalize() {
            Ok(p) => p,
            Err(_) => std::path::absolute(&path).map_err(|e| {
                invalid(format!(
                    "cannot resolve the path {}: {e}; give a file path",
                    path.display()
                ))
            })?,
        };
        let mut open = registry().lock().unwrap_or_else(|p| p.into_inner());
        open.retain(|_, w| w.strong_count() > 0);
        if let Some(existing) = open.get(&key).and_then(Weak::upgrade) {
            if existing.pid == std::process::id() {
                if existing.policy != policy {
                    return Err(LedgerBusy::new_err(format!(
                        "{} is already open in this process with {}; a ledger has one policy per process, so open it with the same policy, or close the other handle first",
                        key.display(),
                        match &existing.policy {
                            Some(p) => format!("policy {}", p.display()),
                            None => "the default policy".to_string(),
                        }
                    )));
                }
                return Ok(NativeLedger { open: existing });
            }
        }
        let store = py.detach(|| Store::open(&path)).map_err(raise)?;
        let handle = Arc::new(Open {
            store,
            gate: Mutex::new(gate),
            policy,
            pid: std::process::id(),
            memory: false,
        });
        open.insert(key, Arc::downgrade(&handle));
        Ok(NativeLedger { open: handle })
    }

    /// The ledger's file path; `None` in memory.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        (!self.open.memory).then(|| self.open.store.path().to_path_buf())
    }

    /// Whether the ledger holds a stream of this name (a span or a summary in it).
    fn has_stream(&self, py: Python<'_>, stream: String) -> PyResult<bool> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            Ok(snap.streams().map_err(raise)?.contains(&stream))
        })
    }

    /// The number of records in the log.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let open = self.open()?;
        let n = py.detach(|| open.store.len()).map_err(raise)?;
        Ok(n as usize)
    }

    /// Applies JSON lines (cairn's JSON Lines, one object each) in one transaction, as `cairn
    /// ingest` does, and gives back each line's result as `ingest --json` prints it.
    fn apply_lines(&self, py: Python<'_>, lines: Vec<String>) -> PyResult<Vec<String>> {
        let open = self.open()?;
        py.detach(|| {
            let gate = open.gate();
            gate.judged(&open.store, |batch| {
                let mut run = Run::new();
                let mut out = Vec::with_capacity(lines.len());
                for (i, line) in lines.iter().enumerate() {
                    match run.apply_line(batch, &gate, i as u64 + 1, line.as_bytes()) {
                        Ok(Some(r)) => out.push(line_result(&r).to_string()),
                        Ok(None) => {}
                        Err(e) => return Err(Failed::Line(e)),
                    }
                }
                Ok(out)
            })
        })
        .map_err(Failed::into_py)
    }

    /// Records turns of `stream` (JSON: a list of {role, text, turn?, tool?}), with an
    /// idempotency key when given; the answer as the MCP tool `record_turns` gives it.
    #[pyo3(signature = (stream, turns, idempotency_key=None))]
    fn record_turns(
        &self,
        py: Python<'_>,
        stream: String,
        turns: String,
        idempotency_key: Option<String>,
    ) -> PyResult<String> {
        let mut read = serde_json::Deserializer::from_str(&turns);
        let turns: Vec<Turn> = serde_path_to_error::deserialize(&mut read).map_err(|e| {
            // serde's position in the JSON the package wrote means nothing to the caller.
            let message = e.inner().to_string();
            let message = message.split(" at line ").next().unwrap_or_default();
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            invalid(format!("argument turns{path}: {message}"))
        })?;
        let open = self.open()?;
        let (recorded, replayed) = py
            .detach(|| {
                let gate = open.gate();
                gate.judged(&open.store, |batch| {
                    turns::record_turns(batch, &gate, &stream, &turns, idempotency_key.as_deref())
                        .map_err(Failed::Turns)
                })
            })
            .map_err(Failed::into_py)?;
        let list: Vec<Value> = (recorded.iter())
            .map(|r| json!({"turn": r.turn, "rid": r.rid.to_hex(), "new": r.new}))
            .collect();
        Ok(json!({"stream": stream, "turns": list, "replayed": replayed}).to_string())
    }

    /// Pins the stream's decision-relevant items the classifier found that no pin covers yet,
    /// as `cairn pin --auto` does; with `dry_run`, writes nothing.
    #[pyo3(signature = (stream, name, dry_run=false))]
    fn pin_auto(
        &self,
        py: Python<'_>,
        stream: String,
        name: String,
        dry_run: bool,
    ) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| -> PyResult<String> {
            let mut batch = open.store.batch().map_err(raise)?;
            stream_known(&batch, &stream)?;
            let items = unpinned_items(&batch, &stream).map_err(raise)?;
            let list: Vec<Value> = (items.iter())
                .map(|i| json!({"turn": i.turn, "class": i.class.name(), "text": i.text, "witness": i.span.to_hex()}))
                .collect();
            if items.is_empty() || dry_run {
                return Ok(json!({"dry_run": dry_run, "rid": Value::Null, "stream": stream, "name": name, "items": list}).to_string());
            }
            let appended = batch.append(pin_of(&stream, &name, &items)).map_err(raise)?;
            batch.commit().map_err(raise)?;
            Ok(json!({"dry_run": false, "rid": appended.rid.to_hex(), "stream": stream, "name": name, "items": list}).to_string())
        })
    }

    /// What the agent should see next in `stream` (`cairn context --json`).
    fn context(&self, py: Python<'_>, stream: String, budget: usize) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            stream_known(&snap, &stream)?;
            let c = cairn::memory::context(&snap, &stream, budget).map_err(raise)?;
            Ok(c.to_json().to_string())
        })
    }

    /// The records that answer `query` (`cairn recall --json`).
    #[pyo3(signature = (query, stream=None, limit=10))]
    fn recall(
        &self,
        py: Python<'_>,
        query: String,
        stream: Option<String>,
        limit: usize,
    ) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            if let Some(s) = &stream {
                stream_known(&snap, s)?;
            }
            let r =
                cairn::memory::recall(&snap, &query, stream.as_deref(), limit).map_err(raise)?;
            Ok(r.to_json().to_string())
        })
    }

    /// How a claim came to be believed (`cairn why --json`): a rid, a prefix, or prior:N with
    /// `stream`.
    #[pyo3(signature = (reference, stream=None))]
    fn why(&self, py: Python<'_>, reference: String, stream: Option<String>) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            if let Some(s) = &stream {
                stream_known(&snap, s)?;
            }
            let r = parse_ref(&reference).map_err(|e| raise(e.into()))?;
            let rid = resolve(&snap, stream.as_deref(), &r).map_err(raise)?[0];
            match snap.get(&rid).map_err(raise)? {
                Some(Record::Claim(_)) => {}
                Some(other) => {
                    return Err(invalid(format!(
                        "{} is a {}, not a claim; why traces a claim",
                        rid.short(),
                        other.kind().name()
                    )))
                }
                None => {
                    return Err(NotFound::new_err(format!(
                        "no record in the ledger has rid {rid}"
                    )))
                }
            }
            Ok(cairn::replay::why(&snap, rid)
                .map_err(raise)?
                .to_json()
                .to_string())
        })
    }

    /// The stream's history of compactions and verdicts (`cairn replay --json`).
    fn replay(&self, py: Python<'_>, stream: String) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            stream_known(&snap, &stream)?;
            Ok(cairn::replay::replay(&snap, &stream)
                .map_err(raise)?
                .to_json()
                .to_string())
        })
    }

    /// Every gate query over the ledger, or one stream (`cairn gates --json`).
    #[pyo3(signature = (stream=None))]
    fn gates(&self, py: Python<'_>, stream: Option<String>) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let gate = open.gate();
            let snap = open.store.snapshot().map_err(raise)?;
            if let Some(s) = &stream {
                stream_known(&snap, s)?;
            }
            let found = sweep(&gate, &snap, stream.as_deref()).map_err(raise)?;
            let list: Vec<Value> = found.iter().map(|f| f.to_json()).collect();
            Ok(json!({"findings": list, "count": found.len()}).to_string())
        })
    }

    /// Checks every record, link and derived table (`cairn verify --json`).
    fn verify(&self, py: Python<'_>) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| Ok(open.store.verify().map_err(raise)?.to_json().to_string()))
    }

    /// The log's checkpoint: unsigned, or signed with the signing key's text (`cairn keygen`
    /// writes one), continuing from `previous`, the last note this key signed for this ledger.
    #[pyo3(signature = (key=None, previous=None))]
    fn checkpoint(
        &self,
        py: Python<'_>,
        key: Option<String>,
        previous: Option<String>,
    ) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let log = Log::new(&open.store);
            let Some(key) = key else {
                return Ok(log.checkpoint().map_err(raise)?.body());
            };
            let key = SignerKey::parse(&key).map_err(|e| invalid(e.to_string()))?;
            let previous = match previous {
                Some(p) => Some(
                    parse_unverified(&p).map_err(|e| invalid(format!("argument previous: {e}")))?,
                ),
                None => None,
            };
            log.sign(&key, previous.as_ref()).map_err(raise)
        })
    }

    /// Imports an agent's log file (`cairn import --from FORMAT --json`).
    fn import_log(&self, py: Python<'_>, format: String, path: PathBuf) -> PyResult<String> {
        let Some(format) = Format::from_name(&format) else {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            return Err(invalid(format!(
                "unknown format {format:?}; use {}",
                names.join(", ")
            )));
        };
        let open = self.open()?;
        py.detach(|| {
            let gate = open.gate();
            let before = open.store.len().map_err(raise)?;
            let report =
                import::import(&open.store, &gate, format, &path, |_| {}).map_err(|e| {
                    let message = format!("cannot import {e}");
                    if e.integrity {
                        LedgerDamaged::new_err(message)
                    } else {
                        InvalidInput::new_err(message)
                    }
                })?;
            let appended = open.store.len().map_err(raise)? - before;
            Ok(report.to_json(&path, appended).to_string())
        })
    }

    /// Puts a store entry (`value` JSON text, `None` deletes) as a new version over the key's
    /// current one; the version written as JSON, or `None` for a delete of nothing.
    #[pyo3(signature = (namespace, key, value, text, at))]
    fn entry_put(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
        key: String,
        value: Option<String>,
        text: Option<String>,
        at: u64,
    ) -> PyResult<Option<String>> {
        let open = self.open()?;
        py.detach(|| {
            let mut batch = open.store.batch().map_err(raise)?;
            let put = entries::put(&mut batch, &namespace, &key, value, text, at).map_err(raise)?;
            let Some((appended, entry)) = put else {
                return Ok(None);
            };
            batch.commit().map_err(raise)?;
            Ok(Some(entry_json(appended.rid, &entry).to_string()))
        })
    }

    /// The current version of a store entry as JSON (a deletion's `value` is null), or `None`.
    fn entry_get(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
        key: String,
    ) -> PyResult<Option<String>> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            let found = entries::current(&snap, &namespace, &key).map_err(raise)?;
            Ok(found.map(|(rid, e)| entry_json(rid, &e).to_string()))
        })
    }

    /// Every version of a store entry, newest first.
    fn entry_history(
        &self,
        py: Python<'_>,
        namespace: Vec<String>,
        key: String,
    ) -> PyResult<Vec<String>> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            let all = entries::history(&snap, &namespace, &key).map_err(raise)?;
            Ok(all
                .iter()
                .map(|(rid, e)| entry_json(*rid, e).to_string())
                .collect())
        })
    }

    /// The live entries under a namespace prefix: ranked by `query` as `recall` ranks (each
    /// with its `score`), or all of them in (namespace, key) order without one.
    #[pyo3(signature = (prefix, query, limit))]
    fn entry_search(
        &self,
        py: Python<'_>,
        prefix: Vec<String>,
        query: Option<String>,
        limit: usize,
    ) -> PyResult<Vec<String>> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            match query {
                Some(q) => {
                    let found = entries::search(&snap, &q, &prefix, limit).map_err(raise)?;
                    Ok(found
                        .iter()
                        .map(|(rid, e, score)| {
                            let mut v = entry_json(*rid, e);
                            v["score"] = json!((score * 1e4).round() / 1e4);
                            v.to_string()
                        })
                        .collect())
                }
                None => {
                    let all = entries::list(&snap, &prefix).map_err(raise)?;
                    Ok(all
                        .iter()
                        .take(limit)
                        .map(|(rid, e)| entry_json(*rid, e).to_string())
                        .collect())
                }
            }
        })
    }

    /// Every namespace holding a live entry, in order.
    fn entry_namespaces(&self, py: Python<'_>) -> PyResult<Vec<Vec<String>>> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            entries::namespaces(&snap).map_err(raise)
        })
    }

    /// One record as `cairn export` writes it: by rid or prefix, or turn:N or prior:N with
    /// `stream`.
    #[pyo3(signature = (rid, stream=None))]
    fn get(&self, py: Python<'_>, rid: String, stream: Option<String>) -> PyResult<String> {
        let open = self.open()?;
        py.detach(|| {
            let snap = open.store.snapshot().map_err(raise)?;
            let r = parse_ref(&rid).map_err(|e| raise(e.into()))?;
            let rid: Rid = resolve(&snap, stream.as_deref(), &r).map_err(raise)?[0];
            let record = snap.get(&rid).map_err(raise)?.ok_or_else(|| {
                NotFound::new_err(format!("no record in the ledger has rid {rid}"))
            })?;
            let index = snap.index_of(&rid).map_err(raise)?.unwrap_or_default();
            Ok(export_line(index, rid, &record).to_string())
        })
    }
}

/// A store entry's version as JSON: its rid, namespace, key, value (JSON text, null for a
/// deletion), previous version, and times.
fn entry_json(rid: Rid, e: &cairn::record::Entry) -> Value {
    json!({
        "rid": rid.to_hex(), "namespace": e.namespace, "key": e.key, "value": e.value,
        "previous": e.previous.map(|p| p.to_hex()), "created": e.created, "at": e.at,
    })
}

/// What a write inside `judged` can fail with.
enum Failed {
    Ledger(Error),
    Line(LineError),
    Turns(Refusal),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        Failed::Ledger(e)
    }
}

impl Failed {
    fn into_py(self) -> PyErr {
        match self {
            Failed::Ledger(e) => raise(e),
            Failed::Line(e) => line_error(e),
            Failed::Turns(r) => refusal(r),
        }
    }
}

#[pymodule]
fn _cairn(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<NativeLedger>()?;
    // The errors are the package's: `cairn.CairnError`, which is where pickle finds them again
    // (an error crossing to another process, as multiprocessing sends it).
    for (name, class) in [
        ("CairnError", py.get_type::<CairnError>()),
        ("InvalidInput", py.get_type::<InvalidInput>()),
        ("NotFound", py.get_type::<NotFound>()),
        ("Conflict", py.get_type::<Conflict>()),
        ("LedgerBusy", py.get_type::<LedgerBusy>()),
        ("LedgerDamaged", py.get_type::<LedgerDamaged>()),
    ] {
        class.setattr("__module__", "cairn")?;
        m.add(name, class)?;
    }
    m.add("DEFAULT_BUDGET", 4000)?;
    Ok(())
}
