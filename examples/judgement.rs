//! Judgement on real text: the claim/witness pairs and the labelled turns of
//! `tests/data/real/` (SPEC.md section 9.3) through the gates and the classifier.
//!
//!     cargo run --release --example judgement [-- dev|test]
//!
//! Each pair becomes a stream of its own: the context turns and the witness as spans, the
//! classifier's items pinned first (as an agent runtime would), then a summary covering them
//! with the one claim, citing the witness. A fabricated claim is caught when the summary is
//! refused or the claim ends fabricated or unanchored; it must never end verified. A faithful
//! claim should be admitted and verified. Turns are classified one by one and compared with
//! their labels, class by class.

use cairn::gate::{classify, pin_of, unpinned_items, Gatekeeper};
use cairn::record::{Author, Claim, Origin, Rid, Role, Span, Status, Summary};
use cairn::Ledger;
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

fn role(v: &Value) -> Role {
    Role::from_name(v.as_str().unwrap_or("user")).unwrap_or(Role::User)
}

/// Gates one pair; returns (admitted, the claim's status).
fn judge(gate: &Gatekeeper, pair: &Value) -> Result<(bool, Status), cairn::Error> {
    let ledger = Ledger::in_memory()?;
    let mut b = ledger.batch()?;
    let mut turns = Vec::new();
    let context = pair["context"].as_array().cloned().unwrap_or_default();
    for (turn, t) in context.iter().chain([&pair["witness"]]).enumerate() {
        let span = Span {
            stream: "p".into(),
            turn: turn as u64,
            role: role(&t["role"]),
            tool: None,
            text: t["text"].as_str().unwrap_or("").to_string(),
        };
        turns.push(b.append(span)?.rid);
    }
    let items = unpinned_items(&b, "p")?;
    if !items.is_empty() {
        b.append(pin_of("p", "auto", &items))?;
    }
    let witness: Rid = *turns.last().expect("the witness");
    let claim = b.append(Claim {
        stream: "p".into(),
        text: pair["claim"].as_str().unwrap_or("").to_string(),
        origin: Origin::from_tag(pair["origin"].as_str().unwrap_or("inferred")),
        witnesses: vec![witness],
        actionable: true,
    })?;
    let summary = Summary {
        stream: "p".into(),
        parent: None,
        author: Author::SelfAuthored,
        budget: 4000,
        covers: turns,
        evicts: Vec::new(),
        claims: vec![claim.rid],
        self_score: None,
        reground: false,
    };
    let o = gate.propose_summary(&mut b, summary)?;
    Ok((o.admitted, o.claims[0].status))
}

fn claims(split: &str) {
    let gate = Gatekeeper::default();
    let path = format!("tests/data/real/claims_{split}.jsonl");
    let text = std::fs::read_to_string(&path).expect("the claim set");
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    for line in text.lines() {
        let pair: Value = serde_json::from_str(line).expect("a JSON line");
        let kind = match pair["label"].as_str() {
            Some("faithful") => {
                format!("faithful/{}", pair["faithful_kind"].as_str().unwrap_or(""))
            }
            _ => pair["kind"].as_str().unwrap_or("").to_string(),
        };
        let (admitted, status) = judge(&gate, &pair).expect("gating");
        let caught = !admitted || matches!(status, Status::Fabricated | Status::Unanchored);
        let miss = if pair["label"] == "faithful" {
            !admitted || status != Status::Verified
        } else {
            !caught
        };
        // On the dev split only (tuning never reads the test split's misses).
        if split == "dev" && miss && std::env::var("JUDGEMENT_SHOW").is_ok_and(|c| c == "claims") {
            println!(
                "{kind} {} | {} | {}",
                status.name(),
                pair["claim"],
                pair["witness"]["text"]
            );
        }
        let t = by_kind.entry(kind).or_default();
        t.n += 1;
        t.refused += usize::from(!admitted);
        t.caught +=
            usize::from(!admitted || matches!(status, Status::Fabricated | Status::Unanchored));
        *t.statuses.entry(status.name()).or_default() += 1;
    }
    println!(
        "claims_{split}: {} pairs, the built-in scorer",
        text.lines().count()
    );
    println!(
        "{:<32} {:>4} {:>8} {:>9} {:>11} {:>11} {:>11}",
        "kind", "n", "refused", "verified", "unverified", "fabricated", "unanchored"
    );
    let (mut fab, mut fab_caught, mut fab_verified) = (0, 0, 0);
    let (mut ok, mut ok_refused, mut ok_unverified) = (0, 0, 0);
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
            ok_unverified += s("unverified");
        } else {
            fab += t.n;
            fab_caught += t.caught;
            fab_verified += s("verified");
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "fabricated: {fab_caught} of {fab} caught ({:.1}%), {fab_verified} ended verified; faithful: {ok_refused} of {ok} refused ({:.1}%), {ok_unverified} unverified ({:.1}%)",
        pct(fab_caught, fab),
        pct(ok_refused, ok),
        pct(ok_unverified, ok)
    );
}

fn turns(split: &str) {
    let path = format!("tests/data/real/turns_{split}.jsonl");
    let text = std::fs::read_to_string(&path).expect("the turn set");
    // Per class: (labelled, found, found and labelled), by turn.
    let mut per: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for line in text.lines() {
        let t: Value = serde_json::from_str(line).expect("a JSON line");
        let span = Span {
            stream: "t".into(),
            turn: 0,
            role: role(&t["role"]),
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
        "\nturns_{split}: {} turns, the classifier (by turn and class)",
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
    if split != "dev" && split != "test" {
        eprintln!("judgement: the split is dev or test, not {split:?}");
        std::process::exit(2);
    }
    // `-- dev turns` runs only the classifier.
    if std::env::args().nth(2).as_deref() != Some("turns") {
        claims(&split);
    }
    turns(&split);
}
