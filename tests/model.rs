//! Gate results against a naive model that walks the whole graph, on random ledgers.

use cairn::gate::{sweep, Gatekeeper};
use cairn::record::*;
use cairn::{Ledger, Read};
use proptest::prelude::*;
use std::collections::BTreeSet;

#[derive(Debug, Clone)]
enum Op {
    Span(u8),
    Claim(Vec<usize>),
    Summary(Vec<usize>, Vec<usize>, bool),
    Contradict(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let picks = || prop::collection::vec(any::<usize>(), 0..4);
    prop_oneof![
        3 => (0..3u8).prop_map(Op::Span),
        3 => (picks(), any::<bool>()).prop_map(|(w, none)| Op::Claim(if none { vec![] } else { w })),
        2 => (picks(), picks(), any::<bool>()).prop_map(|(c, e, sep)| Op::Summary(c, e, sep)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(c, s)| Op::Contradict(c, s)),
    ]
}

#[derive(Default)]
struct Model {
    records: Vec<(Rid, Record)>,
}

impl Model {
    fn get(&self, rid: &Rid) -> Option<&Record> {
        self.records.iter().find(|(r, _)| r == rid).map(|(_, x)| x)
    }

    /// Anchored: some chain of witnesses reaches a span. Walks the whole graph every time.
    fn anchored(&self, claim: &Rid) -> bool {
        match self.get(claim) {
            Some(Record::Claim(c)) => c.witnesses.iter().any(|w| match self.get(w) {
                Some(Record::Span(_)) => true,
                Some(Record::Claim(_)) => self.anchored(w),
                _ => false,
            }),
            _ => false,
        }
    }

    fn verdict(&self, subject: &Rid) -> Option<&Verdict> {
        self.records.iter().find_map(|(_, r)| match r {
            Record::Verdict(v) if v.subject == *subject => Some(v),
            _ => None,
        })
    }

    fn depth(&self, summary: &Rid) -> u32 {
        match self.get(summary) {
            Some(Record::Summary(s)) if s.author == Author::Separate => 0,
            // Re-summarisations since the last grounding: the first compaction is 0.
            Some(Record::Summary(s)) => s.parent.map(|p| 1 + self.depth(&p)).unwrap_or(0),
            _ => 0,
        }
    }

    fn claim_ancestors(&self, claim: &Rid, out: &mut BTreeSet<Rid>) {
        if !out.insert(*claim) {
            return;
        }
        if let Some(Record::Claim(c)) = self.get(claim) {
            for w in &c.witnesses {
                if matches!(self.get(w), Some(Record::Claim(_))) {
                    self.claim_ancestors(w, out);
                }
            }
        }
    }

    fn evicted_disconfirmer(&self, s: &Summary) -> bool {
        s.claims.iter().any(|c| {
            let mut anc = BTreeSet::new();
            self.claim_ancestors(c, &mut anc);
            self.records.iter().any(|(_, r)| {
                matches!(r, Record::Judgement(j) if j.relation == Relation::Contradicts
                    && anc.contains(&j.claim) && s.evicts.contains(&j.span))
            })
        })
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn gates_agree_with_a_naive_graph_walk(ops in prop::collection::vec(op(), 1..30)) {
        let ledger = Ledger::in_memory().unwrap();
        let gate = Gatekeeper::default();
        let mut b = ledger.batch().unwrap();
        let mut turn = 0u64;
        for op in &ops {
            let snapshot: Vec<(Rid, Kind)> = (0..b.len().unwrap())
                .filter_map(|i| b.record_at(i).unwrap().map(|(r, x)| (r, x.kind())))
                .collect();
            let of = |k: Kind| snapshot.iter().filter(|x| x.1 == k).map(|x| x.0).collect::<Vec<_>>();
            let pick = |pool: &[Rid], i: usize| (!pool.is_empty()).then(|| pool[i % pool.len()]);
            match op {
                Op::Span(role) => {
                    turn += 1;
                    let role = [Role::User, Role::Tool, Role::Assistant][*role as usize];
                    b.append(Span { stream: "m".into(), turn, role, tool: None, text: format!("fact number {turn} holds") }).unwrap();
                }
                Op::Claim(w) => {
                    let pool: Vec<Rid> = of(Kind::Span).into_iter().chain(of(Kind::Claim)).collect();
                    let witnesses = w.iter().filter_map(|i| pick(&pool, *i)).collect();
                    let text = format!("claim {}", snapshot.len());
                    b.append(Claim { stream: "m".into(), text, origin: Origin::Inferred, witnesses, actionable: false }).unwrap();
                }
                Op::Summary(c, e, sep) => {
                    let claims: Vec<Rid> = c.iter().filter_map(|i| pick(&of(Kind::Claim), *i)).collect::<BTreeSet<_>>().into_iter().collect();
                    let evicts = e.iter().filter_map(|i| pick(&of(Kind::Span), *i)).collect();
                    let author = if *sep { Author::Separate } else { Author::SelfAuthored };
                    let s = Summary { stream: "m".into(), parent: b.head("m").unwrap(), author, budget: 100, covers: vec![], evicts, claims, self_score: None, reground: false };
                    gate.propose_summary(&mut b, s).unwrap();
                }
                Op::Contradict(c, s) => {
                    if let (Some(claim), Some(span)) = (pick(&of(Kind::Claim), *c), pick(&of(Kind::Span), *s)) {
                        b.append(Judgement { claim, span, relation: Relation::Contradicts, score: 10_000, scorer: "t".into() }).unwrap();
                    }
                }
            }
        }
        b.commit().unwrap();
        let snap = ledger.snapshot().unwrap();
        let mut model = Model::default();
        for i in 0..snap.len().unwrap() {
            model.records.push(snap.record_at(i).unwrap().unwrap());
        }
        let found = sweep(&gate, &snap, None).unwrap();
        let subjects = |g: &str| found.iter().filter(|f| f.gate == g).map(|f| f.subject).collect::<BTreeSet<_>>();

        let claims: Vec<Rid> = model.records.iter().filter(|(_, r)| r.kind() == Kind::Claim).map(|(r, _)| *r).collect();
        let naive_unanchored: BTreeSet<Rid> = claims.iter().filter(|c| !model.anchored(c)).copied().collect();
        prop_assert_eq!(subjects("unanchored-claim"), naive_unanchored.clone());

        let summaries: Vec<(Rid, Summary)> = model.records.iter().filter_map(|(r, x)| match x { Record::Summary(s) => Some((*r, s.clone())), _ => None }).collect();
        let admitted = |r: &Rid| model.verdict(r).is_some_and(|v| v.admitted);
        let naive_deep: BTreeSet<Rid> = summaries.iter().filter(|(r, _)| admitted(r) && model.depth(r) > 2).map(|(r, _)| *r).collect();
        prop_assert_eq!(subjects("depth-exceeded").intersection(&summaries.iter().map(|x| x.0).collect()).copied().collect::<BTreeSet<_>>(), naive_deep);

        let naive_evicted: BTreeSet<Rid> = summaries.iter().filter(|(r, s)| admitted(r) && model.evicted_disconfirmer(s)).map(|(r, _)| *r).collect();
        let swept: BTreeSet<Rid> = found.iter().filter(|f| f.gate == "evicted-disconfirmer" && f.detail.contains("recorded judgement")).map(|f| f.subject).collect();
        prop_assert_eq!(swept, naive_evicted);

        // At the gate: a claim is struck as unanchored exactly when the naive walk finds it
        // unanchored, in a stream that holds a raw span (with none, the summary's source is
        // missing, and says so); refused summaries never become the head.
        let mut last_admitted = None;
        for (r, s) in &summaries {
            let v = model.verdict(r).unwrap();
            let spans_before = (model.records.iter())
                .take_while(|(x, _)| x != r)
                .any(|(_, x)| x.kind() == Kind::Span);
            let flagged: BTreeSet<Rid> = v.findings.iter().filter(|f| f.gate == "unanchored-claim").map(|f| f.subject).collect();
            let naive: BTreeSet<Rid> = s.claims.iter().filter(|c| spans_before && naive_unanchored.contains(c)).copied().collect();
            prop_assert_eq!(flagged, naive.clone());
            prop_assert!(cairn::gate::Gate::UnanchoredClaim.strikes());
            let missing = v.findings.iter().any(|f| f.gate == "source-missing");
            prop_assert_eq!(missing, !spans_before);
            if v.admitted {
                last_admitted = Some(*r);
            }
        }
        prop_assert_eq!(snap.head("m").unwrap(), last_admitted);
        let report = ledger.verify().unwrap();
        prop_assert!(report.ok(), "{:?}", report.discrepancies);
    }
}
