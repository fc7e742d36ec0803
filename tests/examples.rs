//! The examples run: the quickstart and the seeds' three stories on the library API, so they
//! cannot rot.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs an example: the binary `cargo test` built beside this test (it builds every example, as
/// `examples/NAME-HASH`), or else through `cargo run`, which builds it in the dev profile.
fn run_example(name: &str) -> Output {
    match built_example(name) {
        Some(path) => Command::new(path).output().unwrap(),
        None => Command::new(env!("CARGO"))
            .args(["run", "--quiet", "-p", "cairn", "--example", name])
            .output()
            .unwrap(),
    }
}

/// The newest build of example `name` in this test's profile directory.
fn built_example(name: &str) -> Option<PathBuf> {
    let dir = std::env::current_exe()
        .ok()?
        .parent()?
        .parent()?
        .join("examples");
    let prefix = format!("{name}-");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let file = entry.file_name().to_string_lossy().into_owned();
            file == name || (file.starts_with(&prefix) && !file.contains('.'))
        })
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max()
        .map(|(_, path)| path)
}

#[test]
fn the_quickstart_example_runs() {
    let o = run_example("quickstart");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("is anchored; 0 claims without"));
}

#[test]
fn the_seed_examples_run_and_print_their_replays() {
    for (example, marker) in [
        ("libfoo", "action 'pip install libfoo==2.4.0': refused"),
        ("port_5433", "provenance first lost at log index"),
        ("drop_table", "anchored score 0.00, gap 0.91"),
    ] {
        let o = run_example(example);
        assert!(
            o.status.success(),
            "{example}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(marker), "{example}: {out}");
        assert!(out.contains("REFUSED"), "{example}");
    }
}

#[test]
fn the_agent_loop_example_compacts_recalls_and_refuses_the_drop() {
    let o = run_example("agent_loop");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("compaction: admitted"), "{out}");
    assert!(
        out.contains(
            "[agent claim, unverified, user-said, cites turn 2] the staging DB is on port 5433"
        ),
        "{out}"
    );
    assert!(out.contains("action DROP TABLE users: REFUSED"), "{out}");
}
