#![forbid(unsafe_code)]
//! A deterministic workload shaped like real agent sessions, for benchmarks and tests: spans of
//! 100 B to 4 KB (user turns, assistant turns, tool outputs with paths, versions, ports and
//! stack traces), a compaction every 40 turns with 20 to 60 claims (some carried from the
//! previous summary, some built on earlier claims), pins, and occasional contradictions.
//!
//! The same seed always gives the same records, so two stores can be fed the same workload.

use cairn::gate::Gatekeeper;
use cairn::record::{
    encode, Author, Claim, Judgement, Kind, Origin, Pin, PinClass, PinItem, Record, Relation, Rid,
    Role, Span, Summary,
};

/// Appends a workload record the way its kind enters a ledger: a summary or action through
/// the gates (which append its verdict as well), any other kind directly.
pub fn append(
    batch: &mut cairn::Batch,
    gate: &Gatekeeper,
    record: &Record,
) -> cairn::Result<cairn::Appended> {
    match record {
        // The workload was generated ahead, as if every summary were admitted: its parent is
        // the stream's head as the gates left it (SPEC.md section 4.3).
        Record::Summary(s) => {
            let mut s = s.clone();
            s.parent = cairn::Read::head(&*batch, &s.stream)?;
            Ok(gate.propose_summary(batch, s)?.subject)
        }
        Record::Action(a) => Ok(gate.propose_action(batch, a.clone())?.subject),
        other => batch.append(other.clone()),
    }
}

/// The gates as a comparison with another store runs them: without repairs (SPEC.md 8.9), so
/// cairn holds the workload's records, their verdicts and classifications, and nothing the
/// other store lacks.
pub fn compared_gate() -> Gatekeeper {
    Gatekeeper {
        policy: cairn::gate::Policy {
            repair: false,
            ..cairn::gate::Policy::default()
        },
        ..Gatekeeper::default()
    }
}

/// The workload's records as the gates leave them: each summary's parent set to its stream's
/// head at the time (the workload was generated as if every summary were admitted). A store
/// compared with cairn (SQLite) is given these, so that both walk the same chains.
pub fn as_gated(records: &[Record]) -> cairn::Result<Vec<Record>> {
    let ledger = cairn::Ledger::in_memory()?;
    let gate = compared_gate();
    let mut batch = ledger.batch()?;
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        let mut r = r.clone();
        if let Record::Summary(s) = &mut r {
            s.parent = cairn::Read::head(&batch, &s.stream)?;
        }
        append(&mut batch, &gate, &r)?;
        out.push(r);
    }
    Ok(out)
}

/// Peak resident memory since the last reset, in bytes (Linux; 0 elsewhere).
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Resets the peak that [`peak_rss`] reports (Linux).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A small, fast, deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// One element of a list.
    pub fn pick<'a, T>(&mut self, list: &'a [T]) -> &'a T {
        &list[(self.next_u64() % list.len() as u64) as usize]
    }

    /// True with probability `p` in 1/1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.next_u64() % 1000 < per_mille
    }
}

const NOUNS: &[&str] = &[
    "cache",
    "client",
    "scheduler",
    "parser",
    "index",
    "ledger",
    "queue",
    "token",
    "session",
    "worker",
    "router",
    "bucket",
    "schema",
    "migration",
    "socket",
    "buffer",
    "config",
    "proxy",
    "profile",
    "report",
    "invoice",
    "account",
    "template",
    "pipeline",
    "artifact",
    "manifest",
    "checkpoint",
    "snapshot",
    "replica",
    "shard",
    "tenant",
    "webhook",
    "cursor",
    "batch",
    "gateway",
    "limiter",
    "encoder",
    "decoder",
    "registry",
    "catalog",
    "planner",
    "executor",
];
const VERBS: &[&str] = &[
    "moved",
    "renamed",
    "split",
    "merged",
    "cached",
    "retried",
    "validated",
    "rewrote",
    "benchmarked",
    "profiled",
    "documented",
    "archived",
    "throttled",
    "sharded",
    "inlined",
];
const CRATES: &[&str] = &[
    "libfoo", "serde", "tokio", "hyper", "rustls", "regex", "clap", "redb",
];

/// The role and text of one turn, deterministic from a seed and the turn: the workload's own
/// spans, for callers that build their own sessions.
pub fn turn_text(seed: u64, turn: u64) -> (Role, String) {
    let mut rng = Rng::new(seed ^ turn.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let role = match turn % 4 {
        0 => Role::User,
        1 | 3 => Role::Assistant,
        _ => Role::Tool,
    };
    let versions: Vec<String> = (0..CRATES.len()).map(|k| format!("1.{k}.0")).collect();
    (role, Workload::text(&mut rng, role, turn, &versions))
}

/// What the generator emits, in order.
#[derive(Debug, Clone)]
pub enum Step {
    /// A record to append as it is.
    Append(Record),
    /// A compaction proposal; its claims were emitted just before it.
    Compaction(Summary),
}

/// The knobs of a workload.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Streams (agent sessions) interleaved.
    pub streams: u64,
    /// Turns between compactions.
    pub compaction_every: u64,
    /// Least and most claims per compaction.
    pub claims: (u64, u64),
}

impl Shape {
    /// One stream whose 200-turn windows are each compacted into 50 claims: the shape of the
    /// gate benchmarks.
    pub fn gate_window() -> Shape {
        Shape {
            streams: 1,
            compaction_every: 200,
            claims: (50, 50),
        }
    }
}

/// The spans, pins and claims a workload appends before its first compaction, and that
/// compaction: one window to gate.
pub fn first_window(seed: u64, shape: Shape) -> Option<(Vec<Record>, Summary)> {
    let mut records = Vec::new();
    for step in Workload::new(seed, shape) {
        match step {
            Step::Append(r) if matches!(r.kind(), Kind::Span | Kind::Pin | Kind::Claim) => {
                records.push(r)
            }
            Step::Append(_) => {}
            Step::Compaction(s) => return Some((records, s)),
        }
    }
    None
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            streams: 4,
            compaction_every: 40,
            claims: (20, 60),
        }
    }
}

struct StreamGen {
    name: String,
    /// Each crate's version in this session: a real session does not change them at random.
    versions: Vec<String>,
    turn: u64,
    window: Vec<(Rid, String)>,
    head: Option<Rid>,
    head_claims: Vec<Rid>,
    self_depth: u64,
}

/// The generator: an endless, deterministic sequence of steps.
pub struct Workload {
    rng: Rng,
    shape: Shape,
    streams: Vec<StreamGen>,
    next: usize,
    queue: std::collections::VecDeque<Step>,
}

fn rid_of(r: &Record) -> Rid {
    Rid::of_bytes(&encode(r))
}

impl Workload {
    /// A workload from a seed and a shape.
    pub fn new(seed: u64, shape: Shape) -> Workload {
        let streams = (0..shape.streams.max(1))
            .map(|i| StreamGen {
                versions: (0..CRATES.len() as u64)
                    .map(|k| {
                        format!(
                            "{}.{}.{}",
                            (seed + i + k) % 3,
                            (seed * 7 + i * 3 + k * 5) % 40,
                            (seed + k * 11) % 20
                        )
                    })
                    .collect(),
                name: format!("session-{seed}-{i}"),
                turn: 0,
                window: Vec::new(),
                head: None,
                head_claims: Vec::new(),
                self_depth: 0,
            })
            .collect();
        Workload {
            rng: Rng::new(seed),
            shape,
            streams,
            next: 0,
            queue: Default::default(),
        }
    }

    fn text(rng: &mut Rng, role: Role, turn: u64, versions: &[String]) -> String {
        let (a, b, c, v) = (
            rng.pick(NOUNS),
            rng.pick(NOUNS),
            rng.pick(NOUNS),
            rng.pick(VERBS),
        );
        let k = (rng.next_u64() % CRATES.len() as u64) as usize;
        let (krate, version) = (CRATES[k], &versions[k]);
        let port = rng.range(1024, 9999);
        let target = match role {
            Role::User => rng.range(100, 400),
            Role::Assistant => rng.range(200, 1500),
            _ => rng.range(300, 4000),
        } as usize;
        let mut s = match role {
            Role::User => format!("Turn {turn}: please check how the {a} talks to the {b}; we stay on {krate} {version} and the {c} listens on port {port}."),
            Role::Assistant => format!("I {v} the {a} handling into src/{a}/{b}.rs; the {c} now owns its retry budget of {} attempts.", rng.range(2, 9)),
            _ => format!("$ cargo test -p {a}\n   Compiling {krate} v{version}\nrunning {} tests\ntest {b}::{c} ... ok\n", rng.range(3, 90)),
        };
        while s.len() < target {
            let (x, y) = (rng.pick(NOUNS), rng.pick(NOUNS));
            let line = match (role, rng.range(0, 3)) {
                (Role::Tool, 0) => format!(
                    "thread 'main' panicked at src/{x}/{y}.rs:{}:{}\n",
                    rng.range(1, 900),
                    rng.range(1, 80)
                ),
                (Role::Tool, 1) => format!(
                    "   at {x}::{y}::handle (src/{x}/mod.rs:{})\n",
                    rng.range(1, 500)
                ),
                (Role::Tool, _) => format!(
                    "{x} {y} listening on 127.0.0.1:{} ok\n",
                    rng.range(1024, 9999)
                ),
                (_, 0) => format!(" The {x} depends on the {y} through src/{x}/{y}.rs."),
                (_, 1) => format!(" Keep the {x} behind the {y} for now."),
                _ => format!(" Next, look at the {x} and the {y} together."),
            };
            s.push_str(&line);
        }
        s.truncate(target.max(100));
        while !s.is_char_boundary(s.len()) {
            s.pop();
        }
        s
    }

    fn turn(&mut self, si: usize) {
        let rng = &mut self.rng;
        let st = &mut self.streams[si];
        let role = match rng.range(0, 19) {
            0..=4 => Role::User,
            5..=11 => Role::Assistant,
            _ => Role::Tool,
        };
        let text = Workload::text(rng, role, st.turn, &st.versions);
        let span = Record::Span(Span {
            stream: st.name.clone(),
            turn: st.turn,
            role,
            tool: (role == Role::Tool).then(|| "shell".to_string()),
            text: text.clone(),
        });
        let rid = rid_of(&span);
        self.queue.push_back(Step::Append(span));
        if st.turn == 0 {
            let pin = Record::Pin(Pin {
                stream: st.name.clone(),
                name: "constraints".into(),
                items: vec![
                    PinItem {
                        class: PinClass::Prohibition,
                        text: "never run DROP TABLE on production".into(),
                        witness: None,
                    },
                    PinItem {
                        class: PinClass::Commitment,
                        text: format!("stay on {} {}", CRATES[0], st.versions[0]),
                        witness: None,
                    },
                ],
            });
            self.queue.push_back(Step::Append(pin));
        }
        st.turn += 1;
        st.window.push((rid, text));
        if st.turn.is_multiple_of(self.shape.compaction_every) {
            self.compact(si);
        }
    }

    fn compact(&mut self, si: usize) {
        let rng = &mut self.rng;
        let st = &mut self.streams[si];
        let n = rng.range(self.shape.claims.0, self.shape.claims.1);
        let mut claims = Vec::new();
        let carried = (n / 4).min(st.head_claims.len() as u64);
        for k in 0..carried as usize {
            claims.push(st.head_claims[k]);
        }
        let mut last_claim: Option<Rid> = None;
        while (claims.len() as u64) < n {
            let claim = new_claim(rng, st, last_claim);
            let rid = rid_of(&claim);
            if claims.contains(&rid) {
                continue;
            }
            self.queue.push_back(Step::Append(claim));
            claims.push(rid);
            last_claim = Some(rid);
        }
        if rng.chance(200) && !st.head_claims.is_empty() {
            let (span, _) = rng.pick(&st.window).clone();
            self.queue
                .push_back(Step::Append(Record::Judgement(Judgement {
                    claim: st.head_claims[0],
                    span,
                    relation: Relation::Contradicts,
                    score: 8000,
                    scorer: "workload".into(),
                })));
        }
        let separate = st.self_depth >= 2 && rng.chance(500);
        let summary = Summary {
            stream: st.name.clone(),
            parent: st.head,
            author: if separate {
                Author::Separate
            } else {
                Author::SelfAuthored
            },
            budget: 4000,
            covers: st.window.iter().map(|w| w.0).collect(),
            evicts: st
                .window
                .iter()
                .take(st.window.len() / 2)
                .map(|w| w.0)
                .collect(),
            claims: claims.clone(),
            self_score: Some(rng.range(8000, 9800) as u16),
            reground: false,
        };
        st.self_depth = if separate { 0 } else { st.self_depth + 1 };
        let mut canonical = Record::Summary(summary.clone());
        canonical.canonicalize();
        st.head = Some(rid_of(&canonical));
        st.head_claims = claims;
        st.window.clear();
        self.queue.push_back(Step::Compaction(summary));
    }
}

/// A claim drawn from a span of the stream's window, sometimes resting on the previous claim
/// as well, sometimes citing nothing.
fn new_claim(rng: &mut Rng, st: &StreamGen, last_claim: Option<Rid>) -> Record {
    let (span, text) = rng.pick(&st.window).clone();
    let words: Vec<&str> = text
        .split_whitespace()
        .take(rng.range(6, 12) as usize)
        .collect();
    // One claim in ten rests on the previous one as well: chains of claims.
    let mut witnesses = vec![span];
    if let (Some(prev), true) = (last_claim, rng.chance(100)) {
        witnesses.push(prev);
    }
    // One claim in a hundred cites nothing: the unanchored kind the gates refuse.
    if rng.chance(10) {
        witnesses.clear();
    }
    Record::Claim(Claim {
        stream: st.name.clone(),
        text: words.join(" "),
        origin: rng
            .pick(&[Origin::UserSaid, Origin::ToolOutput, Origin::Inferred])
            .clone(),
        witnesses,
        actionable: rng.chance(300),
    })
}

impl Iterator for Workload {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        while self.queue.is_empty() {
            let si = self.next % self.streams.len();
            self.next += 1;
            self.turn(si);
        }
        self.queue.pop_front()
    }
}
