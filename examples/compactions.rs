//! The gates on real compactions: the labelled set of `tests/data/compactions/` (`LABELS.md`
//! there says how each label was decided and how a finding is judged right from it).
//!
//!     cargo run --release --example compactions [-- dev|fresh|fresh2|SPLIT] [--show]
//!
//! Each log of the split is imported into a ledger of its own (`xz` decompresses it); each of
//! its Claude Code compactions is judged as the importer judges it. Printed, per split: how
//! many findings that refuse a compaction are right, how many of all findings are right, the
//! share of claims a reader calls unsupported or contradicted that got a finding or stayed
//! unverified, per gate right and wrong, and how many refused compactions were repaired and
//! admitted. `dev` is for tuning; `fresh` was committed before any gate change and read once (it is
//! dev data since); `fresh2`, the second held-out half, was read once too (dev data since); a
//! later held-out half is another `labels_SPLIT.jsonl`, read once.

use cairn::gate::Gatekeeper;
use cairn::import::{import, Format};
use cairn::record::{Effect, Gate, Record, Status};
use cairn::{Ledger, Read};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// One labelled statement of a summary.
struct Statement {
    text: String,
    label: String,
    words: HashSet<String>,
}

/// A labelled constraint: its words, and whether the summary keeps it.
struct Constraint {
    words: HashSet<String>,
    kept: bool,
    class: String,
}

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// The share of `a`'s words in `b`.
fn within(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.len() as f64
}

/// The labelled statement a claim of cairn's stands for: the one sharing the most words with
/// it, both ways.
fn matched<'a>(claim: &str, statements: &'a [Statement]) -> Option<&'a Statement> {
    let w = words(claim);
    statements
        .iter()
        .map(|s| (within(&w, &s.words).min(within(&s.words, &w).max(0.5)), s))
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, s)| s)
}

/// Every string inside a JSON value, for the verbatim check of identifiers.
fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[derive(Default, Clone)]
struct Tally {
    right: usize,
    wrong: usize,
}

#[derive(Default)]
struct Figures {
    compactions: usize,
    refused: usize,
    repaired: usize,
    refusing: Tally,
    all: Tally,
    by_gate: BTreeMap<String, Tally>,
    bad_claims: usize,
    bad_caught: usize,
    unmatched: usize,
    /// Per class: the classifier's items before each compaction that match a labelled
    /// constraint of that class, and those that do not.
    items: BTreeMap<String, Tally>,
    /// Per class: the labelled constraints an item of that class matches, and those none does.
    constraints_found: BTreeMap<String, Tally>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let split = args.next().unwrap_or_else(|| "dev".to_string());
    let show = args.any(|a| a == "--show");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compactions");
    let labels = match std::fs::read_to_string(dir.join(format!("labels_{split}.jsonl"))) {
        Ok(labels) if !split.contains(['/', '.']) => labels,
        _ => {
            eprintln!(
                "compactions: no split {split:?}; a split is a labels_SPLIT.jsonl file of {} (dev, fresh, fresh2, ...)",
                dir.display()
            );
            std::process::exit(2);
        }
    };
    let mut statements: HashMap<(String, u64), Vec<Statement>> = HashMap::new();
    let mut constraints: HashMap<(String, u64), Vec<Constraint>> = HashMap::new();
    for line in labels.lines() {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        let key = (
            v["log"].as_str().unwrap_or("").to_string(),
            v["compaction_line"].as_u64().unwrap_or(0),
        );
        if let Some(text) = v["statement"].as_str() {
            statements.entry(key).or_default().push(Statement {
                text: text.to_string(),
                label: v["label"].as_str().unwrap_or("").to_string(),
                words: words(text),
            });
        } else if let Some(text) = v["constraint"].as_str() {
            constraints.entry(key).or_default().push(Constraint {
                words: words(text),
                kept: v["kept_by_summary"].as_bool().unwrap_or(true),
                class: v["class"].as_str().unwrap_or("").to_string(),
            });
        }
    }
    let mut logs: Vec<String> = statements.keys().map(|(l, _)| l.clone()).collect();
    logs.sort();
    logs.dedup();
    let gate = Gatekeeper::default();
    let mut fig = Figures::default();
    let tmp = std::env::temp_dir().join(format!("cairn-compactions-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("a scratch folder");
    for log in &logs {
        let raw = std::process::Command::new("xz")
            .args(["-dc"])
            .arg(dir.join(log))
            .output()
            .expect("xz runs");
        assert!(
            raw.status.success() && !raw.stdout.is_empty(),
            "xz could not decompress {}: a label's `log` must name a fixture of {}",
            dir.join(log).display(),
            dir.display()
        );
        let file = tmp.join(log.trim_end_matches(".xz"));
        std::fs::write(&file, &raw.stdout).expect("the log written");
        let lines: Vec<&str> = std::str::from_utf8(&raw.stdout)
            .expect("UTF-8")
            .lines()
            .collect();
        let ledger = Ledger::in_memory().expect("a ledger");
        let report = import(&ledger, &gate, Format::ClaudeCode, &file, |_| {})
            .unwrap_or_else(|e| panic!("importing {log}: {}", e.message));
        let snap = ledger.snapshot().expect("a snapshot");
        for c in &report.compactions {
            let key = (log.clone(), c.line);
            let Some(labelled) = statements.get(&key) else {
                continue;
            };
            fig.compactions += 1;
            // The decoded text of every line before the compaction, for identifiers.
            let mut before = String::new();
            for l in lines.iter().take(c.line.saturating_sub(2) as usize) {
                if let Ok(v) = serde_json::from_str::<Value>(l) {
                    strings(&v, &mut before);
                }
            }
            let Some(Record::Verdict(v)) = snap.get(&c.verdict).expect("the verdict") else {
                panic!("no verdict for {log} line {}", c.line);
            };
            if !v.admitted {
                fig.refused += 1;
                // Its repair: a summary authored by cairn naming it.
                for d in snap.dependents(&v.subject).expect("dependents") {
                    if let Some(Record::Summary(s)) = snap.get(&d).expect("a record") {
                        if s.author.repairs() != Some(v.subject) {
                            continue;
                        }
                        if snap.admitted(&d).expect("a verdict") {
                            fig.repaired += 1;
                        } else if show {
                            let rv = snap.verdict_of(&d).expect("a verdict");
                            if let Some(Record::Verdict(rv)) =
                                rv.and_then(|r| snap.get(&r).ok().flatten())
                            {
                                for f in rv.findings.iter().filter(|f| f.gate.refuses()) {
                                    println!(
                                        "  repair refused ({log}:{}): {}: {}",
                                        c.line,
                                        f.gate,
                                        f.detail.chars().take(200).collect::<String>()
                                    );
                                }
                            }
                        }
                    }
                }
            }
            let text_of = |rid| match snap.get(rid).expect("a record") {
                Some(Record::Claim(c)) => c.text,
                _ => String::new(),
            };
            let cons = constraints.get(&key).map(Vec::as_slice).unwrap_or_default();
            // The classifier against the labelled constraints (point 10): its items of the
            // stream up to the compaction's last covered turn.
            if let Some(Record::Summary(s)) = snap.get(&v.subject).expect("the summary") {
                let mut last = 0;
                for r in &s.covers {
                    if let Some(Record::Span(sp)) = snap.get(r).expect("a span") {
                        last = last.max(sp.turn);
                    }
                }
                let items = snap.items(&s.stream).expect("the items");
                let items: Vec<_> = items.into_iter().filter(|i| i.turn <= last).collect();
                for class in ["prohibition", "commitment", "failed-attempt"] {
                    let ours: Vec<HashSet<String>> = (items.iter())
                        .filter(|i| i.class.name() == class)
                        .map(|i| words(&i.text))
                        .collect();
                    let theirs: Vec<&Constraint> =
                        cons.iter().filter(|c| c.class == class).collect();
                    let like = |a: &HashSet<String>, b: &HashSet<String>| {
                        within(a, b) >= 0.5 || within(b, a) >= 0.5
                    };
                    let t = fig.items.entry(class.to_string()).or_default();
                    for i in &ours {
                        if theirs.iter().any(|c| like(&c.words, i)) {
                            t.right += 1;
                        } else {
                            t.wrong += 1;
                        }
                    }
                    let t = fig.constraints_found.entry(class.to_string()).or_default();
                    for c in &theirs {
                        if ours.iter().any(|i| like(&c.words, i)) {
                            t.right += 1;
                        } else {
                            t.wrong += 1;
                        }
                    }
                }
            }
            for f in &v.findings {
                let right = judge(f, &text_of(&f.subject), labelled, cons, &before);
                let Some(right) = right else {
                    fig.unmatched += 1;
                    continue;
                };
                let t = fig.by_gate.entry(f.gate.name().to_string()).or_default();
                let bump = |t: &mut Tally| {
                    if right {
                        t.right += 1
                    } else {
                        t.wrong += 1
                    }
                };
                bump(t);
                bump(&mut fig.all);
                if f.gate.effect() == Effect::Refuse {
                    bump(&mut fig.refusing);
                }
                if show && (!right || std::env::var("SHOWRIGHT").is_ok()) {
                    let label =
                        matched(&text_of(&f.subject), labelled).map_or("-", |s| s.label.as_str());
                    println!(
                        "  {} {} [{label}] ({log}:{}): {}",
                        if right { "right" } else { "wrong" },
                        f.gate,
                        c.line,
                        f.detail
                            .chars()
                            .take(
                                std::env::var("WIDTH")
                                    .ok()
                                    .and_then(|w| w.parse().ok())
                                    .unwrap_or(240)
                            )
                            .collect::<String>()
                    );
                }
            }
            // Claims a reader calls unsupported or contradicted: caught when a finding names
            // them or they are not verified.
            let flagged: HashSet<_> = v.findings.iter().map(|f| f.subject).collect();
            for cs in &v.claims {
                let text = text_of(&cs.claim);
                let Some(st) = matched(&text, labelled) else {
                    continue;
                };
                if st.label == "unsupported" || st.label == "contradicted" {
                    fig.bad_claims += 1;
                    let caught = flagged.contains(&cs.claim) || cs.status != Status::Verified;
                    fig.bad_caught += usize::from(caught);
                    if show && !caught {
                        println!("  missed ({log}:{}): {}", c.line, st.text);
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    print(&split, &fig);
}

/// Whether a finding is right by the labels (LABELS.md), or `None` when its claim matches no
/// labelled statement.
fn judge(
    f: &cairn::record::Finding,
    claim: &str,
    labelled: &[Statement],
    constraints: &[Constraint],
    before: &str,
) -> Option<bool> {
    let label = || matched(claim, labelled).map(|s| s.label.as_str());
    let bad = |l: &str| l == "unsupported" || l == "contradicted";
    Some(match f.gate {
        Gate::FabricatedClaim | Gate::UnanchoredClaim => bad(label()?),
        Gate::ContradictedClaim | Gate::EvictedDisconfirmer | Gate::EvictedClash => {
            label()? == "contradicted"
        }
        Gate::SourceMissing => true,
        Gate::IdentifierDrift => {
            label()?;
            // The identifiers the finding names: between "states " and ", which".
            let named = f.detail.split(" states ").nth(1)?.split(", which").next()?;
            ids(named).iter().any(|id| !before.contains(id.as_str()))
        }
        Gate::UnpinnedReference | Gate::PinLoss => {
            let lost = words(&f.detail);
            constraints
                .iter()
                .any(|c| !c.kept && within(&c.words, &lost) >= 0.5)
        }
        _ => label().is_some_and(bad),
    })
}

/// The identifiers a finding names, which it joins with ", ": a piece that leaves a bracket
/// open is one identifier with the next (`newTestServer(t, handler)`).
fn ids(named: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = 0i32;
    for piece in named.split(", ") {
        match out.last_mut() {
            Some(last) if open > 0 => {
                last.push_str(", ");
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
        open += piece.matches(['(', '[', '{']).count() as i32
            - piece.matches([')', ']', '}']).count() as i32;
        open = open.max(0);
    }
    out
}

fn pct(t: &Tally) -> String {
    let n = t.right + t.wrong;
    if n == 0 {
        return "- (0)".to_string();
    }
    format!(
        "{:.1}% ({} of {n})",
        100.0 * t.right as f64 / n as f64,
        t.right
    )
}

fn print(split: &str, fig: &Figures) {
    println!(
        "split {split}: {} compactions, {} refused, {} of them repaired and admitted",
        fig.compactions, fig.refused, fig.repaired
    );
    println!("  findings that refuse, right: {}", pct(&fig.refusing));
    println!("  all findings, right:         {}", pct(&fig.all));
    let caught = Tally {
        right: fig.bad_caught,
        wrong: fig.bad_claims - fig.bad_caught,
    };
    println!(
        "  unsupported or contradicted claims caught: {}",
        pct(&caught)
    );
    println!(
        "  findings whose claim matches no labelled statement: {}",
        fig.unmatched
    );
    for (g, t) in &fig.by_gate {
        println!("    {g:<22} right {:>3}, wrong {:>3}", t.right, t.wrong);
    }
    println!("  the classifier's items before each compaction, against the labelled constraints:");
    for (class, t) in &fig.items {
        let found = fig
            .constraints_found
            .get(class)
            .cloned()
            .unwrap_or_default();
        println!(
            "    {class:<15} items matching a constraint: {}; constraints an item matches: {}",
            pct(t),
            pct(&found)
        );
    }
}
