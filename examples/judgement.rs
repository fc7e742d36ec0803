//! Judgement on real text: the claim/witness pairs and the labelled turns of
//! `tests/data/real/` (SPEC.md section 9.3) through the gates and the classifier.
//!
//!     cargo run --release --example judgement [-- dev|fresh] [claims|turns]
//!
//! `dev` reads `claims_dev.jsonl` and `claims_test.jsonl` (and the turns of both dev and
//! test), the data the rules may be tuned on; `fresh` reads the fresh held-out splits, once, at
//! the end. `JUDGEMENT_CURVES=1` prints the dev curves of SPEC.md 9.4.
//!
//! Each pair becomes a stream of its own: the context turns and the witness as spans, the
//! classifier's items pinned first (as an agent runtime would), then a summary covering them
//! with the one claim, citing the witness. A fabricated claim is caught when the summary is
//! refused or the claim ends fabricated or unanchored; it must never end verified. A faithful
//! claim should be admitted and verified. Turns are classified one by one and compared with
//! their labels, class by class.

#[path = "../tests/pairs.rs"]
mod pairs;

use cairn::gate::{classify, Gatekeeper, Policy};
use cairn::record::{Rid, Span, Status};
use cairn::score::Lexical;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Default)]
struct Tally {
    n: usize,
    refused: usize,
    /// Refused, or ended fabricated or unanchored.
    caught: usize,
    statuses: BTreeMap<&'static str, usize>,
}

/// The claim pairs of a split: the dev split is `claims_dev.jsonl` and the former test split
/// `claims_test.jsonl` (SPEC.md 9.3); the fresh split is read once, at the end of a piece of work.
fn pairs(split: &str) -> Vec<Value> {
    let files: &[&str] = match split {
        "dev" => &["claims_dev", "claims_test"],
        _ => &["claims_fresh"],
    };
    let mut out = Vec::new();
    for f in files {
        let path = format!("tests/data/real/{f}.jsonl");
        let text = std::fs::read_to_string(&path).expect("the claim set");
        for line in text.lines() {
            out.push(serde_json::from_str(line).expect("a JSON line"));
        }
    }
    out
}

fn kind_of(pair: &Value) -> String {
    match pair["label"].as_str() {
        Some("faithful") => format!("faithful/{}", pair["faithful_kind"].as_str().unwrap_or("")),
        _ => pair["kind"].as_str().unwrap_or("").to_string(),
    }
}

/// Each pair's outcome under one policy: (faithful, admitted, status).
fn outcomes(gate: &Gatekeeper, pairs: &[Value]) -> Vec<(bool, bool, Status)> {
    pairs
        .iter()
        .map(|p| {
            let (admitted, status) = pairs::judge(gate, p).expect("gating");
            (p["label"] == "faithful", admitted, status)
        })
        .collect()
}

/// The dev curves (SPEC.md 9.4): at each verify threshold, the share of fabricated and of
/// faithful claims that end verified; at each refuse threshold, the share of fabricated claims
/// caught and of faithful claims refused.
fn curves(pairs: &[Value]) {
    let rate = |o: &[(bool, bool, Status)], faithful: bool, f: &dyn Fn(bool, Status) -> bool| {
        let of: Vec<_> = o.iter().filter(|x| x.0 == faithful).collect();
        let n = of.iter().filter(|x| f(x.1, x.2)).count();
        (n, of.len())
    };
    println!(
        "\nverify curve (refuse below 0.30): threshold, fabricated verified, faithful verified"
    );
    for t in [
        0.30, 0.40, 0.50, 0.60, 0.70, 0.80, 0.85, 0.90, 0.95, 0.99, 1.00,
    ] {
        let policy = Policy {
            raw_entailment: 0.30,
            verify_entailment: t,
            ..Policy::default()
        };
        let gate = Gatekeeper {
            policy,
            scorer: Box::new(Lexical),
        };
        let o = outcomes(&gate, pairs);
        let verified = |admitted: bool, s: Status| admitted && s == Status::Verified;
        let (fv, f) = rate(&o, false, &verified);
        let (ov, k) = rate(&o, true, &verified);
        println!(
            "  {t:.2}  {fv:>3} of {f} ({:.1}%)  {ov:>3} of {k} ({:.1}%)",
            100.0 * fv as f64 / f as f64,
            100.0 * ov as f64 / k as f64
        );
    }
    println!(
        "\nrefuse curve (verify at the default): threshold, fabricated caught, faithful refused"
    );
    for r in [0.0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30] {
        let policy = Policy {
            raw_entailment: r,
            ..Policy::default()
        };
        let gate = Gatekeeper {
            policy,
            scorer: Box::new(Lexical),
        };
        let o = outcomes(&gate, pairs);
        let caught = |admitted: bool, s: Status| {
            !admitted || matches!(s, Status::Fabricated | Status::Unanchored)
        };
        let (fc, f) = rate(&o, false, &caught);
        let (or, k) = rate(&o, true, &|admitted: bool, _| !admitted);
        println!(
            "  {r:.2}  {fc:>3} of {f} ({:.1}%)  {or:>3} of {k} ({:.1}%)",
            100.0 * fc as f64 / f as f64,
            100.0 * or as f64 / k as f64
        );
    }
}

fn claims(split: &str) {
    let mut gate = Gatekeeper::default();
    // JUDGEMENT_VERIFY=0.85 shows the dev split at another verify threshold.
    if let Some(t) = std::env::var("JUDGEMENT_VERIFY")
        .ok()
        .and_then(|t| t.parse().ok())
    {
        gate.policy.verify_entailment = t;
    }
    let pairs = pairs(split);
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    for pair in &pairs {
        let kind = kind_of(pair);
        let (admitted, status) = pairs::judge(&gate, pair).expect("gating");
        let caught = !admitted || matches!(status, Status::Fabricated | Status::Unanchored);
        let miss = if pair["label"] == "faithful" {
            !admitted || status != Status::Verified
        } else {
            !caught || status == Status::Verified
        };
        // On the dev split only (tuning never reads the fresh split's misses).
        if split == "dev" && miss && std::env::var("JUDGEMENT_SHOW").is_ok_and(|c| c == "claims") {
            println!(
                "{kind} {} {} | {} | {}",
                if admitted { "admitted" } else { "refused" },
                status.name(),
                pair["claim"],
                pair["witness"]["text"]
            );
        }
        let t = by_kind.entry(kind).or_default();
        t.n += 1;
        t.refused += usize::from(!admitted);
        t.caught += usize::from(caught);
        *t.statuses.entry(status.name()).or_default() += 1;
    }
    println!(
        "claims ({split}): {} pairs, the built-in scorer",
        pairs.len()
    );
    println!(
        "{:<32} {:>4} {:>8} {:>9} {:>11} {:>11} {:>11}",
        "kind", "n", "refused", "verified", "unverified", "fabricated", "unanchored"
    );
    let (mut fab, mut fab_caught, mut fab_verified) = (0, 0, 0);
    let (mut ok, mut ok_refused, mut ok_verified) = (0, 0, 0);
    for (kind, t) in &by_kind {
        let s = |k: &str| t.statuses.get(k).copied().unwrap_or(0);
        println!(
            "{kind:<32} {:>4} {:>8} {:>9} {:>11} {:>11} {:>11}",
            t.n,
            t.refused,
            s("verified"),
            s("unverified"),
            s("fabricated"),
            s("unanchored")
        );
        if kind.starts_with("faithful/") {
            ok += t.n;
            ok_refused += t.refused;
            ok_verified += s("verified");
        } else {
            fab += t.n;
            fab_caught += t.caught;
            fab_verified += s("verified");
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "fabricated: {fab_caught} of {fab} caught ({:.1}%), {fab_verified} ended verified ({:.1}%); faithful: {ok_refused} of {ok} refused ({:.1}%), {ok_verified} verified ({:.1}%)",
        pct(fab_caught, fab),
        pct(fab_verified, fab),
        pct(ok_refused, ok),
        pct(ok_verified, ok)
    );
    if split == "dev" && std::env::var("JUDGEMENT_CURVES").is_ok() {
        curves(&pairs);
    }
}

fn turns(split: &str) {
    let files: &[&str] = if split == "dev" {
        &["turns_dev", "turns_test"]
    } else {
        &["turns_fresh"]
    };
    let mut text = String::new();
    for f in files {
        let path = format!("tests/data/real/{f}.jsonl");
        text.push_str(&std::fs::read_to_string(&path).expect("the turn set"));
    }
    // Per class: (labelled, found, found and labelled), by turn.
    let mut per: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for line in text.lines() {
        let t: Value = serde_json::from_str(line).expect("a JSON line");
        let span = Span {
            stream: "t".into(),
            turn: 0,
            role: pairs::role(&t["role"]),
            tool: None,
            text: t["text"].as_str().unwrap_or("").to_string(),
        };
        let items = classify(Rid([0; 32]), &span);
        let found: Vec<&str> = items.iter().map(|i| i.class.name()).collect();
        let want: Vec<String> = t["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|i| i["class"].as_str().map(str::to_string))
            .collect();
        for class in [
            "prohibition",
            "commitment",
            "preference",
            "policy",
            "identifier",
            "failed-attempt",
        ] {
            let w = want.iter().any(|x| x == class);
            let f = found.contains(&class);
            // JUDGEMENT_SHOW=class prints that class's misses and false alarms (dev only).
            if split == "dev" && w != f && std::env::var("JUDGEMENT_SHOW").is_ok_and(|c| c == class)
            {
                let what = if w { "MISS" } else { "FALSE" };
                let text: String = span.text.chars().take(200).collect();
                println!("{what} {:?} {}", span.role, text.replace('\n', " "));
                for i in items.iter().filter(|i| i.class.name() == class) {
                    println!(
                        "    found: {}",
                        i.text.chars().take(120).collect::<String>()
                    );
                }
            }
            let e = per.entry(class.to_string()).or_default();
            e.0 += usize::from(w);
            e.1 += usize::from(f);
            e.2 += usize::from(w && f);
        }
    }
    println!(
        "\nturns ({split}): {} turns, the classifier (by turn and class)",
        text.lines().count()
    );
    let (mut l, mut f, mut h) = (0, 0, 0);
    for (class, (labelled, found, hit)) in &per {
        println!(
            "{class:<16} labelled {labelled:>4}  found {found:>4}  recall {:.2}  precision {:.2}",
            *hit as f64 / (*labelled).max(1) as f64,
            *hit as f64 / (*found).max(1) as f64
        );
        (l, f, h) = (l + labelled, f + found, h + hit);
    }
    println!(
        "all classes      labelled {l:>4}  found {f:>4}  recall {:.2}  precision {:.2}",
        h as f64 / l.max(1) as f64,
        h as f64 / f.max(1) as f64
    );
}

fn main() {
    let split = std::env::args().nth(1).unwrap_or_else(|| "dev".to_string());
    if split != "dev" && split != "fresh" {
        eprintln!("judgement: the split is dev or fresh, not {split:?}");
        std::process::exit(2);
    }
    // `-- dev turns` runs only the classifier.
    // `-- fresh claims` reads only the claim pairs, `-- fresh turns` only the turns: each
    // fresh split is read once, when the work it measures is done.
    let part = std::env::args().nth(2);
    if part.as_deref() != Some("turns") {
        claims(&split);
    }
    if part.as_deref() != Some("claims") {
        turns(&split);
    }
}
