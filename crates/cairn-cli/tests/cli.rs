//! The command line: exit codes, JSON contracts, bad input, integrity failures.

use crate::util::*;
use serde_json::Value;
use std::io::Write;

fn ingest_ok(t: &Tmp, content: &str) -> Vec<Value> {
    let f = t.file("in.jsonl", content.as_bytes());
    let o = t.cairn(&["ingest", "--json", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn ingest_json_reports_each_line_and_summary_claims() {
    let t = Tmp::new();
    let out = ingest_ok(&t, LIBFOO);
    assert_eq!(out.len(), 8);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(v["line"], i as u64 + 1);
        assert_eq!(v["rid"].as_str().unwrap().len(), 64);
    }
    assert_eq!(out[0]["kind"], "span");
    assert_eq!(out[4]["kind"], "summary");
    let claims = out[4]["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0]["text"], "libfoo stays pinned at 2.3.1");
    assert_eq!(claims[0]["rid"].as_str().unwrap().len(), 64);

    let stats: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
    assert_eq!(
        stats["records"], 12,
        "8 lines, the summary's claim, two verdicts, the classification of the user's turn"
    );
    // Ingesting the same file again appends nothing.
    let again = ingest_ok(&t, LIBFOO);
    assert!(again.iter().all(|v| v["new"] == false));
    let stats: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
    assert_eq!(stats["records"], 12);
}

#[test]
fn export_lists_every_record_and_reingests_to_the_same_rids() {
    let t = Tmp::new();
    ingest_ok(&t, LIBFOO);
    let export = stdout(&t.cairn(&["export", "--format", "json"], None));
    let lines: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 12);
    assert!(lines
        .iter()
        .all(|v| v["rid"].as_str().map(str::len) == Some(64) && v["kind"].is_string()));
    let summary = lines.iter().find(|v| v["kind"] == "summary").unwrap();
    assert_eq!(summary["self_score"], 0.91);
    assert_eq!(summary["author"], "self");

    let copy = Tmp::new();
    let f = copy.file("export.jsonl", export.as_bytes());
    let o = copy.cairn(&["ingest", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&copy.cairn(&["export"], None)), export);
}

/// Each bad-input class exits 2, names the line and the field, and writes nothing.
#[test]
fn bad_lines_exit_2_name_line_and_field_and_write_nothing() {
    let cases: &[(&[u8], &str)] = &[
        (b"{\"kind\":\"span\",\"stream\":\"s1\",", "line 3: malformed JSON"),
        (br#"{"kind":"sapn","stream":"s1"}"#, "line 3, field `kind`: unknown kind \"sapn\""),
        (br#"{"kind":"span","stream":"s1","role":"user","text":"x"}"#, "line 3, field `turn`: missing"),
        (br#"{"kind":"span","stream":"s1","turn":"7","role":"user","text":"x"}"#, "line 3, field `turn`: expected a non-negative integer, found a string"),
        (br#"{"kind":"claim","stream":"s1","text":"x","witnesses":["turn:999"]}"#, "line 3, field `witnesses[0]`: turn:999 names no span in stream s1"),
        (br#"{"kind":"action","stream":"s1","text":"x","relies_on":["turn:212"]}"#, "line 3, field `relies_on`"),
        (b"{\"kind\":\"span\",\"stream\":\"s1\",\"turn\":9,\"role\":\"user\",\"text\":\"\xff\xfe\"}", "line 3: the line is not valid UTF-8"),
        (br#"{"kind":"span","stream":"s1","turn":9,"role":"user","text":"x","colour":"red"}"#, "line 3, field `colour`: unknown field"),
        (br#"{"kind":"pin","stream":"s1","name":"constraints","items":[{"class":"prohibition","text":"bump freely"}]}"#, "line 3: pin-conflict"),
        (br#"{"kind":"claim","stream":"s1","text":"x","witnesses":["prior:0"]}"#, "line 3, field `witnesses[0]`: prior:0 needs a head summary"),
        // Issue 13, item 10: the last of two equal keys used to win, storing "evil".
        (br#"{"kind":"span","stream":"s1","turn":9,"role":"user","text":"benign","text":"evil"}"#, "the key \"text\" appears twice in one object"),
    ];
    let t = Tmp::new();
    ingest_ok(
        &t,
        LIBFOO
            .split_inclusive('\n')
            .take(4)
            .collect::<String>()
            .as_str(),
    );
    let before = fingerprint(&t);
    for (bad, expect) in cases {
        let mut content =
            br#"{"kind":"span","stream":"s1","turn":500,"role":"user","text":"good line"}
{"kind":"span","stream":"s1","turn":501,"role":"user","text":"good line"}
"#
            .to_vec();
        content.extend_from_slice(bad);
        content.push(b'\n');
        let f = t.file("bad.jsonl", &content);
        let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
        assert_eq!(code(&o), 2, "{expect}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(expect),
            "expected {expect:?} in {:?}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("nothing from it was written"),
            "{}",
            stderr(&o)
        );
        assert_eq!(fingerprint(&t), before, "{expect}: the ledger changed");
    }
}

#[test]
fn a_wrong_link_kind_is_refused_with_its_field() {
    let t = Tmp::new();
    let out = ingest_ok(&t, LIBFOO);
    let pin_rid = out[3]["rid"].as_str().unwrap();
    let bad = format!(
        r#"{{"kind":"claim","stream":"s1","text":"x","witnesses":["{}"]}}"#,
        &pin_rid[..12]
    );
    let before = fingerprint(&t);
    let f = t.file("bad.jsonl", bad.as_bytes());
    let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 1, field `witnesses`: claim field `witnesses` links to"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("which is a pin"), "{}", stderr(&o));
    assert_eq!(fingerprint(&t), before);
}

#[test]
fn stdin_acknowledges_durable_lines_and_stops_at_a_bad_one() {
    let t = Tmp::new();
    let input = format!(
        "{}{}\n",
        LIBFOO, r#"{"kind":"claim","stream":"s1","text":"x","witnesses":["turn:9999"]}"#
    );
    let o = t.cairn(&["ingest", "--json", "-"], Some(input.as_bytes()));
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let acked: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(acked.len(), 8);
    assert!(
        stderr(&o).contains("line 9, field `witnesses[0]`"),
        "{}",
        stderr(&o)
    );
    let export = stdout(&t.cairn(&["export"], None));
    for a in &acked {
        assert!(export.contains(a["rid"].as_str().unwrap()));
    }
    let stats: Value = serde_json::from_slice(&t.cairn(&["stats", "--json"], None).stdout).unwrap();
    assert_eq!(stats["records"], 12);
}

#[test]
fn verify_passes_on_a_clean_ledger_and_fails_with_3_on_a_flipped_byte() {
    let t = Tmp::new();
    let span_rid = ingest_ok(&t, LIBFOO)[1]["rid"]
        .as_str()
        .unwrap()
        .to_string();
    let o = t.cairn(&["verify", "--json"], None);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["records"].clone()),
        (Value::Bool(true), Value::from(12))
    );

    // Flip one byte of a span's text wherever it sits in the file.
    let mut file = std::fs::read(t.db()).unwrap();
    let needle = b"we are still on libfoo 2.3.1";
    let hits: Vec<usize> = (0..file.len() - needle.len())
        .filter(|i| &file[*i..*i + needle.len()] == needle)
        .collect();
    assert!(!hits.is_empty());
    for h in hits {
        file[h + 16] ^= 0x20;
    }
    std::fs::write(t.db(), &file).unwrap();
    let o = t.cairn(&["verify"], None);
    assert_eq!(code(&o), 3, "stdout {} stderr {}", stdout(&o), stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(stderr(&o).contains("discrepanc"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&span_rid),
        "the damaged span is named: {}",
        stdout(&o)
    );
}

#[test]
fn a_file_that_is_not_a_ledger_exits_3_with_a_sentence() {
    let t = Tmp::new();
    std::fs::write(t.db(), vec![0x5a; 8192]).unwrap();
    for cmd in [&["verify"][..], &["stats"][..]] {
        let o = t.cairn(cmd, None);
        assert_eq!(code(&o), 3, "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with("cairn: "), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
}

#[test]
fn a_missing_ledger_is_a_usage_error_and_is_not_created() {
    let t = Tmp::new();
    for cmd in ["verify", "stats", "export"] {
        let o = t.cairn(&[cmd], None);
        assert_eq!(code(&o), 2, "{cmd}");
        assert!(
            stderr(&o).contains("there is no ledger at"),
            "{}",
            stderr(&o)
        );
    }
    assert!(!t.db().exists());
}

#[test]
fn the_ledger_path_comes_from_db_then_env_then_the_default() {
    let t = Tmp::new();
    let f = t.file("in.jsonl", LIBFOO.as_bytes());
    let env_db = t.dir.path().join("from-env.redb");
    let run = |args: &[&str], env: Option<&std::path::Path>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.current_dir(t.dir.path())
            .args(args)
            .env_remove("CAIRN_DB");
        if let Some(e) = env {
            c.env("CAIRN_DB", e);
        }
        c.output().unwrap()
    };
    assert_eq!(
        code(&run(&["ingest", f.to_str().unwrap()], Some(&env_db))),
        0
    );
    assert!(env_db.exists());
    assert!(!t.dir.path().join("cairn.redb").exists());
    assert_eq!(code(&run(&["ingest", f.to_str().unwrap()], None)), 0);
    assert!(t.dir.path().join("cairn.redb").exists());
    let flag_db = t.dir.path().join("flag.redb");
    assert_eq!(
        code(&run(
            &[
                "--db",
                flag_db.to_str().unwrap(),
                "ingest",
                f.to_str().unwrap()
            ],
            Some(&env_db)
        )),
        0
    );
    assert!(flag_db.exists());
}

#[test]
fn usage_errors_exit_2() {
    let t = Tmp::new();
    assert_eq!(code(&t.cairn(&["frobnicate"], None)), 2);
    assert_eq!(code(&t.cairn(&["export", "--format", "xml"], None)), 2);
    let o = t.cairn(&["ingest", "/nonexistent/file.jsonl"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("cannot read /nonexistent/file.jsonl"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_demo_runs_and_verifies() {
    let t = Tmp::new();
    let o = t.cairn(&["demo", "--json"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verify_ok"], true);
    assert!(v["records"].as_u64().unwrap() > 20);
    assert!(v["refused"].as_u64().unwrap() >= 5, "{v}");
    let gates: Vec<&str> = v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| {
            d["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["gate"].as_str().unwrap())
        })
        .collect();
    for g in [
        "identifier-drift",
        "hedge-stripped",
        "evicted-disconfirmer",
        "unpinned-reference",
        "pin-loss",
        "prohibited-action",
    ] {
        assert!(gates.contains(&g), "the demo shows {g}: {gates:?}");
    }
}

#[test]
fn gates_exits_0_on_a_clean_ledger_and_1_with_findings() {
    let t = Tmp::new();
    ingest_ok(&t, LIBFOO);
    let o = t.cairn(&["gates", "--json"], None);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["count"],
        0
    );
    // A claim with no witness, ingested on its own (not through a summary gate).
    let f = t.file(
        "u.jsonl",
        br#"{"kind":"claim","stream":"s1","text":"the build is green","origin":"inferred"}"#,
    );
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    let o = t.cairn(&["gates", "--json", "--stream", "s1"], None);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["findings"][0]["gate"], "unanchored-claim");
    // A stream the ledger does not have is a usage error, not a clean ledger (issue 13).
    let other = t.cairn(&["gates", "--stream", "nope"], None);
    assert_eq!(code(&other), 2, "{}", stdout(&other));
}

#[test]
fn reground_verifies_a_claim_from_its_evicted_raw_spans() {
    let t = Tmp::new();
    let out = ingest_ok(&t, LIBFOO);
    // "libfoo stays pinned at 2.3.1" is a paraphrase the words of turn 212 ("we are still on
    // libfoo 2.3.1, do not bump") cannot confirm: re-grounding verifies only what the raw
    // spans surely support (issue 23), so it stays as it was and the command exits 1.
    let claim = out[4]["claims"][0]["rid"].as_str().unwrap().to_string();
    let o = t.cairn(&["reground", &claim[..10], "--json"], None);
    assert_eq!(code(&o), 1, "{}{}", stdout(&o), stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["regrounded"], false);
    assert!(
        v["detail"].as_str().unwrap().contains("surely enough"),
        "{v}"
    );
    // A claim that turn 240 states is re-grounded from it.
    let f = t.file("kept.jsonl", br#"{"kind":"claim","stream":"s1","text":"the test result was ok with 148 passed","origin":"tool-output","witnesses":["turn:240"]}"#);
    let r: Value = serde_json::from_slice(
        &t.cairn(&["ingest", "--json", f.to_str().unwrap()], None)
            .stdout,
    )
    .unwrap();
    let o = t.cairn(&["reground", r["rid"].as_str().unwrap(), "--json"], None);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["regrounded"], true);
    // A claim its ancestors do not entail stays as it was, and the command exits 1.
    let f = t.file("x.jsonl", br#"{"kind":"claim","stream":"s1","text":"libfoo moved to 3.0.0","origin":"inferred","witnesses":["turn:212"]}"#);
    let r: Value = serde_json::from_slice(
        &t.cairn(&["ingest", "--json", f.to_str().unwrap()], None)
            .stdout,
    )
    .unwrap();
    let o = t.cairn(&["reground", r["rid"].as_str().unwrap()], None);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("3.0.0"), "{}", stdout(&o));
    let o = t.cairn(&["reground", "prior:0", "--stream", "s1", "--json"], None);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

#[test]
fn score_reads_claims_and_sources() {
    let t = Tmp::new();
    let input = br#"{"claim":"libfoo was upgraded to 2.4.0","source":"we are still on libfoo 2.3.1, do not bump."}
{"claim":"we are on libfoo 2.3.1","source":"we are still on libfoo 2.3.1, do not bump."}
"#;
    let o = t.cairn(&["score"], Some(input));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        v[0]["contradiction"].as_f64().unwrap() >= 0.6,
        "2.3.1 against 2.4.0: {}",
        v[0]
    );
    assert!(v[1]["entailment"].as_f64().unwrap() > v[0]["entailment"].as_f64().unwrap());
    let o = t.cairn(&["score"], Some(b"{\"claim\":1}\n"));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("line 1"), "{}", stderr(&o));
}

#[test]
fn an_external_scorer_answers_times_out_or_dies_with_a_clear_error() {
    let t = Tmp::new();
    let input = b"{\"claim\":\"a\",\"source\":\"b\"}\n";
    let ok =
        r#"while read l; do echo '{"entailment":0.9,"contradiction":0.05,"similarity":0.8}'; done"#;
    let o = t.cairn(&["score", "--scorer-cmd", ok], Some(input));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"entailment\":0.9"), "{}", stdout(&o));
    let o = t.cairn(
        &[
            "score",
            "--scorer-cmd",
            "sleep 5",
            "--scorer-timeout-ms",
            "300",
        ],
        Some(input),
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("no answer within 300 ms"),
        "{}",
        stderr(&o)
    );
    let o = t.cairn(&["score", "--scorer-cmd", "exit 3"], Some(input));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("scorer external:exit 3 failed"),
        "{}",
        stderr(&o)
    );
    let o = t.cairn(
        &[
            "score",
            "--scorer-cmd",
            "while read l; do echo nonsense; done",
        ],
        Some(input),
    );
    assert!(stderr(&o).contains("not JSON"), "{}", stderr(&o));
}

#[test]
fn a_policy_file_changes_thresholds_and_bad_ones_are_refused() {
    let t = Tmp::new();
    let good = t.file("p.toml", b"laundering_rate = 0.5\nmax_depth = 4\n");
    let f = t.file("in.jsonl", LIBFOO.as_bytes());
    let o = t.cairn(
        &[
            "--policy",
            good.to_str().unwrap(),
            "ingest",
            f.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let bad = t.file("bad.toml", b"fidelity = 1.5\n");
    let o = t.cairn(&["--policy", bad.to_str().unwrap(), "gates"], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("`fidelity` must be a number from 0 to 1"),
        "{}",
        stderr(&o)
    );
}

/// A build without the `model` feature (the default since issue 25) refuses a model with the
/// way to a build that has it; the built-in scorer still scores. CI builds with every feature,
/// so this runs in a plain `cargo test -p cairn-cli`.
#[test]
#[cfg(not(feature = "model"))]
fn a_build_without_the_model_scorer_says_how_to_get_one() {
    let t = Tmp::new();
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/nli/tiny-deberta-v3"
    );
    let pair = br#"{"claim":"a table was booked","source":"The agent booked a table for two."}"#;
    let o = t.cairn(&["--model", model, "score"], Some(pair));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("built without the model scorer")
            && stderr(&o).contains("--features model"),
        "{}",
        stderr(&o)
    );
    let o = t.cairn(&["score"], Some(pair));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
#[cfg(feature = "model")]
fn a_model_directory_scores_in_process_and_a_bad_one_is_refused() {
    let t = Tmp::new();
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/nli/tiny-deberta-v3"
    );
    let pair = br#"{"claim":"a table was booked","source":"The agent booked a table for two."}"#;
    let o = t.cairn(&["--model", model, "score"], Some(pair));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let e = v["entailment"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&e), "{v}");
    // The same through a policy file's `model` key.
    let dir = std::path::Path::new(model);
    let policy = t.file(
        "policy.toml",
        format!("model = {:?}\n", dir.to_str().unwrap()).as_bytes(),
    );
    let o = t.cairn(&["--policy", policy.to_str().unwrap(), "score"], Some(pair));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(serde_json::from_str::<Value>(stdout(&o).trim()).unwrap(), v);
    // A directory that is not a model: exit 2, naming the file and the way out.
    let o = t.cairn(
        &[
            "--model",
            t.db().parent().unwrap().to_str().unwrap(),
            "score",
        ],
        Some(pair),
    );
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("cannot read config.json") && err.contains("--model"),
        "{err}"
    );
    // Both a model and a scorer command: a usage error.
    let o = t.cairn(
        &["--model", model, "--scorer-cmd", "cat", "score"],
        Some(pair),
    );
    assert_eq!(code(&o), 2);
}

/// Issue 13, item 5: `verify` copied a damaged ledger to `$TMPDIR/cairn-verify-PID.redb`,
/// following a symlink planted there and overwriting its target.
#[test]
fn verify_never_follows_a_planted_symlink_in_the_temp_directory() {
    let t = Tmp::new();
    std::fs::write(t.db(), vec![0x5a; 8192]).unwrap();
    let tmp = t.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let victim = t.dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // `exec` keeps the shell's process id, so the planted name is the one the old build used.
    let script = format!(
        "ln -s {} {}/cairn-verify-$$.redb && exec {} --db {} verify",
        victim.display(),
        tmp.display(),
        env!("CARGO_BIN_EXE_cairn"),
        t.db().display()
    );
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // Only the planted link is left: the private copy is gone.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1);
}

/// Issue 13, item 14: an unknown stream read as a clean ledger or an empty graph, `why` on a
/// span said no record had its rid, and `pin --auto` with nothing left to pin exited 2.
#[test]
fn unknown_names_are_errors_that_list_what_exists() {
    let t = Tmp::new();
    let lines = ingest_ok(&t, LIBFOO);
    for cmd in [
        &["gates", "--stream", "nosuch"][..],
        &["export", "--format", "dot", "--stream", "nosuch"][..],
        &["export", "--stream", "nosuch"][..],
        &["replay", "nosuch"][..],
        &["pin", "--auto", "nosuch", "p"][..],
    ] {
        let o = t.cairn(cmd, None);
        assert_eq!(code(&o), 2, "{cmd:?}");
        assert!(
            stderr(&o).contains("has no stream \"nosuch\"; its streams are s1"),
            "{cmd:?}: {}",
            stderr(&o)
        );
    }
    // Near miss: the stream that exists.
    assert_eq!(
        code(&t.cairn(&["export", "--format", "dot", "--stream", "s1"], None)),
        0
    );
    // `why` on a span names what the rid is.
    let span = lines[1]["rid"].as_str().unwrap();
    let o = t.cairn(&["why", span], None);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("is a span, not a claim"),
        "{}",
        stderr(&o)
    );
    // Nothing left to pin is a state, not an error.
    let o = t.cairn(&["pin", "--auto", "s1", "all"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = t.cairn(&["pin", "--auto", "s1", "again"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("nothing to pin"), "{}", stdout(&o));
}

/// Issue 13, item 15: file-mode ingest joined a refusal's findings into one long line,
/// said nothing of admitted summaries, wrote "1 findings", and did not count verdicts.
#[test]
fn ingest_text_output_is_one_finding_per_line_and_counts_what_it_wrote() {
    let t = Tmp::new();
    let f = t.file("in.jsonl", LIBFOO.as_bytes());
    let out = stdout(&t.cairn(&["ingest", f.to_str().unwrap()], None));
    // The admitted summary and the action are reported.
    let has = |text: &str, start: &str, end: &str| {
        text.lines()
            .any(|l| l.starts_with(start) && l.ends_with(end))
    };
    assert!(has(&out, "line 5: summary ", " admitted"), "{out}");
    assert!(has(&out, "line 8: action ", " admitted"), "{out}");
    // The records appended are the records the ledger holds (it was empty): verdicts count.
    let last = out.lines().last().unwrap();
    assert!(
        last.contains("12 records appended") && last.ends_with("holds 12 records"),
        "{last}"
    );
    // A refusal: its verdict line, then each finding on a line of its own.
    let bad = t.file(
        "bad.jsonl",
        br#"{"kind":"span","stream":"s2","turn":1,"role":"user","text":"we are still on libfoo 2.3.1, do not bump."}
{"kind":"pin","stream":"s2","name":"c","items":[{"class":"prohibition","text":"do not bump libfoo","witness":"turn:1"}]}
{"kind":"summary","stream":"s2","author":"self","budget":100,"covers":["turn:1"],"evicts":["turn:1"],"claims":[{"text":"libfoo was upgraded to 2.4.0","origin":"user-said","witnesses":["turn:1"],"actionable":true}]}
"#,
    );
    let refused = stdout(&t.cairn(&["ingest", bad.to_str().unwrap()], None));
    assert!(has(&refused, "line 3: summary ", " refused"), "{refused}");
    assert!(
        refused.lines().filter(|l| l.starts_with("    ")).count() >= 2,
        "{refused}"
    );
    assert!(refused.lines().all(|l| l.len() < 400), "{refused}");
    for wrong in [" 1 findings", " 1 records", " 1 lines", " 1 proposals"] {
        assert!(!out.contains(wrong) && !refused.contains(wrong), "{wrong}");
    }
    // `gates` counts in the right number, and `replay --json` rounds its gap.
    let g = stdout(&t.cairn(&["gates"], None));
    assert!(!g.contains("\n1 findings"), "{g}");
    let r = stdout(&t.cairn(&["--json", "replay", "s1"], None));
    assert!(!r.contains("00000000"), "{r}");
}

/// Issue 13, item 12: a ledger truncated to 100 bytes exited 2, and a reader that closed
/// the pipe (`cairn demo | head -3`) made cairn exit 3 saying the file may be damaged.
#[test]
fn truncation_is_an_integrity_failure_and_a_closed_pipe_is_not() {
    let t = Tmp::new();
    ingest_ok(&t, LIBFOO);
    let whole = std::fs::read(t.db()).unwrap();
    std::fs::write(t.db(), &whole[..100]).unwrap();
    for cmd in [&["stats"][..], &["verify"][..], &["export"][..]] {
        let o = t.cairn(cmd, None);
        assert_eq!(code(&o), 3, "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
    }
    // The reader goes away before cairn writes a byte.
    let fresh = Tmp::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--db", fresh.db().to_str().unwrap(), "demo"])
        .env_remove("CAIRN_DB")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The demo's ledger was written whole all the same.
    let v = fresh.cairn(&["verify"], None);
    assert_eq!(code(&v), 0, "{}", stderr(&v));
}

/// Issue 13, item 13: a failed first ingest left an empty ledger file behind, and a failed
/// creation named (and left) its temporary `.NAME.creating-PID` file.
#[test]
fn a_failed_first_ingest_or_creation_leaves_nothing_behind() {
    let t = Tmp::new();
    let bad = t.file("bad.jsonl", br#"{"kind":"span","stream":"s1"}"#);
    let o = t.cairn(&["ingest", bad.to_str().unwrap()], None);
    assert_eq!(code(&o), 2);
    assert!(
        !t.db().exists(),
        "the failed first ingest left {}",
        t.db().display()
    );
    // Near miss: a failed ingest into a ledger that exists keeps it, records and all.
    ingest_ok(&t, LIBFOO);
    assert_eq!(code(&t.cairn(&["ingest", bad.to_str().unwrap()], None)), 2);
    assert!(t.db().exists());
    // A ledger that cannot be created: the error names the path asked for, and no temporary
    // file is left.
    let blocker = t.file("not-a-dir", b"x");
    let inside = blocker.join("x.redb");
    let good = t.file("good.jsonl", LIBFOO.as_bytes());
    let o = run_cairn(&inside, &["ingest", good.to_str().unwrap()], None);
    assert_ne!(code(&o), 0);
    assert!(
        stderr(&o).contains("x.redb") && !stderr(&o).contains("creating"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(t.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("creating"))
        .collect();
    assert!(left.is_empty());
}

/// Issue 13, item 16: `ingest --help` named no record kinds or fields, and the demo ended
/// without saying what to try next.
#[test]
fn help_names_the_record_kinds_and_the_demo_says_what_to_try_next() {
    let t = Tmp::new();
    let help = stdout(&t.cairn(&["ingest", "--help"], None));
    for kind in [
        "span",
        "claim",
        "summary",
        "pin",
        "judgement",
        "action",
        "reground",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(kind)),
            "{kind}: {help}"
        );
    }
    assert!(
        help.contains("witnesses") && help.contains("prior:N"),
        "{help}"
    );
    let demo = stdout(&t.cairn(&["demo"], None));
    let next = demo
        .split("next, try:")
        .nth(1)
        .expect("the demo suggests what to try next");
    // Each suggestion runs.
    for line in next
        .lines()
        .filter(|l| l.trim_start().starts_with("cairn "))
    {
        let words: Vec<&str> = line.split('#').next().unwrap().split_whitespace().collect();
        let args: Vec<&str> = words[3..].to_vec(); // after `cairn --db PATH`
        let out = t.dir.path().join("m.html");
        let args: Vec<&str> = args
            .iter()
            .map(|a| {
                if *a == "m.html" {
                    out.to_str().unwrap()
                } else {
                    a
                }
            })
            .collect();
        let o = t.cairn(&args, None);
        assert!(code(&o) <= 1, "{line}: {}", stderr(&o));
    }
}

/// Issue 13, item 8: a timeout killed only the shell wrapper, an answer had no size cap, and
/// answers were paired with requests by order alone, so one extra line moved every score.
#[test]
fn an_external_scorer_is_killed_whole_capped_and_kept_in_step() {
    let t = Tmp::new();
    let input = b"{\"claim\":\"a\",\"source\":\"b\"}\n{\"claim\":\"c\",\"source\":\"d\"}\n";
    // A scorer that starts a child of its own and never answers: the timeout ends both.
    let pid_file = t.dir.path().join("pid");
    let slow = format!("sleep 600 & echo $! > {}; wait", pid_file.display());
    let o = t.cairn(
        &["score", "--scorer-cmd", &slow, "--scorer-timeout-ms", "500"],
        Some(input),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Gone, or a zombie waiting to be reaped: either way no longer running.
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false);
    assert!(!alive, "the scorer's own child {pid} outlived the timeout");
    // An endless answer is cut at 1 MiB.
    let o = t.cairn(&["score", "--scorer-cmd", "cat /dev/zero"], Some(input));
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("an answer longer than"),
        "{}",
        stderr(&o)
    );
    // Two lines for one request: the extra line is named, not paired with the next claim.
    let two = r#"while read l; do echo '{"entailment":0.9,"contradiction":0.05,"similarity":0.8}'; echo '{"entailment":0.1,"contradiction":0.9,"similarity":0.8}'; done"#;
    // The second request follows the first after a pause, as an agent's would: by then the
    // stray line has arrived. (A scorer without ids that answers late is caught only by the
    // id check; SPEC 9.2.)
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "--db",
            t.db().to_str().unwrap(),
            "score",
            "--scorer-cmd",
            two,
        ])
        .env_remove("CAIRN_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut requests = child.stdin.take().unwrap();
    let mut lines = input.split_inclusive(|b| *b == b'\n');
    requests.write_all(lines.next().unwrap()).unwrap();
    requests.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    requests.write_all(lines.next().unwrap()).unwrap();
    drop(requests);
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stderr(&o).contains("which no request asked for"),
        "{}",
        stderr(&o)
    );
    // An answer with another request's id is refused; one echoing the right id is used.
    let wrong = r#"while read l; do echo '{"id":7,"entailment":0.9,"contradiction":0.05,"similarity":0.8}'; done"#;
    let o = t.cairn(&["score", "--scorer-cmd", wrong], Some(input));
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("to request 1"), "{}", stderr(&o));
    let echo = r#"python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({"id": r["id"], "entailment": 0.9, "contradiction": 0.05, "similarity": 0.8}), flush=True)
'"#;
    let o = t.cairn(&["score", "--scorer-cmd", echo], Some(input));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2);
}

/// Issue 13, item 11: ingesting a file again appended its parentless summaries again (on top
/// of the new head), `demo` run twice flipped a verdict, and a ledger's own export could not be
/// ingested back into it (rid mismatch at a summary without a parent).
#[test]
fn ingesting_the_same_lines_again_appends_nothing_and_changes_no_verdict() {
    let t = Tmp::new();
    let records = |t: &Tmp| json_of(&t.cairn(&["stats", "--json"], None))["records"].clone();
    let first = json_of(&t.cairn(&["demo", "--json"], None));
    let after_first = records(&t);
    let second = json_of(&t.cairn(&["demo", "--json"], None));
    assert_eq!(second["appended"], 0, "{second}");
    assert_eq!(first["verdicts"], second["verdicts"], "no verdict changes");
    assert_eq!(records(&t), after_first);

    // Its own export, ingested back: nothing new, and every rid the lines carry holds.
    let export = stdout(&t.cairn(&["export"], None));
    let f = t.file("export.jsonl", export.as_bytes());
    let o = t.cairn(&["ingest", "--json", f.to_str().unwrap()], None);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    assert!(
        stdout(&o).lines().all(|l| json_line(l)["new"] == false),
        "{}",
        stdout(&o)
    );
    assert_eq!(records(&t), after_first);

    // Two parentless summaries, three times over; the near miss is a fourth file with one
    // more summary, which is appended on top of the head.
    let t = Tmp::new();
    let lines = [
        r#"{"kind":"span","stream":"p","turn":1,"role":"user","text":"the wiki moved to a new host"}"#,
        r#"{"kind":"summary","stream":"p","author":"self","budget":100,"covers":["turn:1"],"evicts":[],"claims":[{"text":"the wiki moved to a new host","origin":"user-said","witnesses":["turn:1"]}]}"#,
        r#"{"kind":"span","stream":"p","turn":2,"role":"user","text":"Maria reviews the release notes"}"#,
        r#"{"kind":"summary","stream":"p","author":"self","budget":100,"covers":["turn:2"],"evicts":[],"claims":["prior:0",{"text":"Maria reviews the release notes","origin":"user-said","witnesses":["turn:2"]}]}"#,
    ];
    let f = t.file("two.jsonl", format!("{}\n", lines.join("\n")).as_bytes());
    let mut sizes = Vec::new();
    for _ in 0..3 {
        let o = t.cairn(&["ingest", f.to_str().unwrap()], None);
        assert!(code(&o) <= 1, "{}", stderr(&o));
        sizes.push(records(&t));
    }
    assert_eq!((&sizes[1], &sizes[2]), (&sizes[0], &sizes[0]), "{sizes:?}");
    let more = format!(
        "{}\n{}\n",
        lines.join("\n"),
        r#"{"kind":"summary","stream":"p","author":"self","budget":100,"covers":[],"evicts":["turn:1"],"claims":["prior:0","prior:1"]}"#
    );
    let g = t.file("three.jsonl", more.as_bytes());
    let o = t.cairn(&["ingest", "--json", g.to_str().unwrap()], None);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let news: Vec<bool> = (stdout(&o).lines())
        .map(|l| json_line(l)["new"] == true)
        .collect();
    assert_eq!(news, [false, false, false, false, true], "{}", stdout(&o));

    // On a first ingest, a summary repeated after another is proposed anew on top of the
    // head, as before: a run that has appended to a stream looks only at its head.
    let t = Tmp::new();
    let again = format!("{}\n{}\n", lines.join("\n"), lines[1]);
    let f = t.file("again.jsonl", again.as_bytes());
    let o = t.cairn(&["ingest", "--json", f.to_str().unwrap()], None);
    assert!(code(&o) <= 1, "{}", stderr(&o));
    let news: Vec<bool> = (stdout(&o).lines())
        .map(|l| json_line(l)["new"] == true)
        .collect();
    assert_eq!(news, [true, true, true, true, true], "{}", stdout(&o));
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(code(o) <= 1, "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn json_line(l: &str) -> serde_json::Value {
    serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))
}

/// Issue 37, row 18: `pin --auto --dry-run ... | head -1` must not leave the ledger needing
/// recovery: the dry run opens read-only, and its output pipe closing early ends nothing
/// mid-write.
#[test]
fn a_dry_run_whose_output_pipe_closes_leaves_the_ledger_as_it_was() {
    let t = Tmp::new();
    let mut lines = String::new();
    for turn in 1..=40 {
        lines.push_str(&format!(
            "{{\"kind\":\"span\",\"stream\":\"s\",\"turn\":{turn},\"role\":\"user\",\"text\":\"never run DROP TABLE on table t{turn} of the prod database\"}}\n"
        ));
    }
    let f = t.file("p.jsonl", lines.as_bytes());
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    let before = fingerprint(&t);
    for _ in 0..3 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--db")
            .arg(t.db())
            .args(["pin", "--auto", "--dry-run", "s", "constraints"])
            .env_remove("CAIRN_DB")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn cairn");
        // The reader goes away at once, as `head -1` does after its line.
        drop(child.stdout.take());
        let _ = child.wait();
    }
    assert_eq!(fingerprint(&t), before, "a dry run writes nothing");
    let o = t.cairn(&["stats"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("mid-write"), "{}", stderr(&o));
}

/// Issue 23, point 4: `pin --auto --dry-run` shows what would be pinned and writes nothing;
/// the same command without it pins (pins are forever, so preview first).
#[test]
fn pin_auto_dry_run_previews_and_writes_nothing() {
    let t = Tmp::new();
    let f = t.file(
        "p.jsonl",
        br#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"never run DROP TABLE on the prod database"}"#,
    );
    assert_eq!(code(&t.cairn(&["ingest", f.to_str().unwrap()], None)), 0);
    let before = fingerprint(&t);
    let o = t.cairn(
        &["pin", "--auto", "--dry-run", "s", "constraints", "--json"],
        None,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dry_run"], true);
    assert!(v["rid"].is_null());
    assert!(
        v["items"][0]["text"]
            .as_str()
            .unwrap()
            .contains("DROP TABLE"),
        "{v}"
    );
    assert_eq!(fingerprint(&t), before, "a dry run writes nothing");
    // --dry-run needs --auto.
    assert_eq!(
        code(&t.cairn(&["pin", "--dry-run", "s", "constraints"], None)),
        2
    );
    // Near miss: without --dry-run the same items are pinned.
    let o = t.cairn(&["pin", "--auto", "s", "constraints", "--json"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["rid"].is_string(), "{v}");
    assert_ne!(fingerprint(&t), before);
}

/// Issue 37, row 11: a text that holds terminal controls (ESC, CR, NUL) and a right-to-left
/// override reaches the terminal as visible escapes in every text output, and `--json` carries it
/// unchanged. The near miss: a plain text prints as it is.
#[test]
fn text_output_escapes_control_and_bidi_characters_and_json_keeps_them() {
    let t = Tmp::new();
    let hostile = "deploy ok\u{1b}[2K\rclaims without a raw-span ancestor: 0\u{0}\u{202e}gnp.exe";
    let lines = [
        jsonl(
            &serde_json::json!({"kind":"span","stream":"s","turn":1,"role":"user","text":"deploy the release candidate"}),
        ),
        jsonl(
            &serde_json::json!({"kind":"span","stream":"s","turn":2,"role":"tool","text":hostile}),
        ),
        jsonl(
            &serde_json::json!({"kind":"summary","stream":"s","author":"self","budget":100,"covers":["turn:1..turn:2"],"evicts":[],"self_score":0.9,"claims":[{"text":"deploy ok","origin":"tool-output","witnesses":["turn:2"]}]}),
        ),
    ];
    let out = ingest_ok(&t, &lines.concat());
    let claim = out[2]["claims"][0]["rid"].as_str().unwrap().to_string();
    let raw = |s: &str| s.contains(['\u{1b}', '\r', '\0', '\u{202e}']);
    for args in [
        vec!["context", "s"],
        vec!["recall", "deploy"],
        vec!["replay", "s"],
        vec!["why", claim.as_str()],
        vec!["stats"],
    ] {
        let o = t.cairn(&args, None);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(!raw(&text), "{args:?} printed a raw control: {text:?}");
        // Replay and stats show no span text; the others show it, escaped.
        if !["replay", "stats"].contains(&args[0]) {
            assert!(
                text.contains("\\u{1b}[2K\\u{d}claims without") || text.contains("\\u{1b}"),
                "{args:?} lost the text: {text}"
            );
        }
        let mut json_args = args.clone();
        json_args.insert(0, "--json");
        let j = stdout(&t.cairn(&json_args, None));
        if args[0] == "context" {
            let v: Value = serde_json::from_str(&j).unwrap();
            let texts: Vec<&str> = v["spans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["text"].as_str().unwrap())
                .collect();
            assert!(texts.contains(&hostile), "{texts:?}");
        }
    }
    // The near miss: plain text, right-to-left letters and accents print as they are.
    let t = Tmp::new();
    let plain = "שלום, café: the deploy went out";
    ingest_ok(
        &t,
        &jsonl(
            &serde_json::json!({"kind":"span","stream":"s","turn":1,"role":"user","text":plain}),
        ),
    );
    let o = t.cairn(&["context", "s"], None);
    assert!(stdout(&o).contains(plain), "{}", stdout(&o));
}

fn jsonl(v: &Value) -> String {
    format!("{v}\n")
}
