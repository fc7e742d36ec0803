//! The examples run: the quickstart and the seeds' three stories on the library API, so they
//! cannot rot.

use std::process::Command;

#[test]
fn the_quickstart_example_runs() {
    let o = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "cairn", "--example", "quickstart"])
        .output()
        .unwrap();
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
        let o = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "-p", "cairn", "--example", example])
            .output()
            .unwrap();
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
    let o = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "cairn", "--example", "agent_loop"])
        .output()
        .unwrap();
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
