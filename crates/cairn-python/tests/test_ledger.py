"""The Python API over the library: the seed stories equal to the CLI's, errors, threads,
one ledger per path, forks."""

from __future__ import annotations

import json
import multiprocessing
import pathlib
import subprocess
import threading

import pytest

import cairn

STORIES = json.loads((pathlib.Path(__file__).parent / "stories.json").read_text())["stories"]


def cli(cairn_bin: str, db: pathlib.Path, *args: str) -> list[dict]:
    out = subprocess.run([cairn_bin, "--db", str(db), *args], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("story", sorted(STORIES))
def test_a_seed_story_gets_the_same_verdicts_from_python_as_from_the_cli(story, tmp_path, cairn_bin):
    ledger = cairn.Ledger(tmp_path / "py.redb")
    by_cli = tmp_path / "cli.redb"
    verdicts = 0
    for n, step in enumerate(STORIES[story]):
        if "pin_auto" in step:
            stream, name = step["pin_auto"]
            want = cli(cairn_bin, by_cli, "pin", "--auto", stream, name, "--json")[0]
            got = ledger.pin(stream, name)
            assert got.rid == want["rid"] and [i.text for i in got.items] == [i["text"] for i in want["items"]]
            continue
        f = tmp_path / f"step{n}.jsonl"
        f.write_text("\n".join(step["ingest"]) + "\n")
        want = cli(cairn_bin, by_cli, "ingest", "--json", str(f))
        got = ledger.ingest(f)
        assert [json.loads(r.to_json()) for r in got] == want
        verdicts += sum(isinstance(r, cairn.Verdict) for r in got)
    assert verdicts >= 2
    assert any(isinstance(r, cairn.Verdict) and r.refused for r in got), "each story ends in a refusal"
    assert ledger.verify().ok


def test_the_seed_stories_refuse_what_the_seeds_say(tmp_path):
    ledger = cairn.Ledger(tmp_path / "l.redb")
    steps = STORIES["000 libfoo upgraded to 2.4.0"]
    first = ledger.append_all(steps[0]["ingest"])
    assert first[-1].admitted and first[-1].findings == ()
    summary, action = ledger.append_all(steps[1]["ingest"])[1:]
    assert summary.refused and "identifier-drift" in summary.gates
    assert summary.claims[0].status == "fabricated"
    assert action.refused and action.kind == "action"
    assert "refused" in repr(summary)


def test_record_turns_with_a_key_records_nothing_twice_and_refuses_the_key_for_other_turns(db):
    ledger = cairn.Ledger(db)
    turns = [cairn.Turn("user", "we are still on libfoo 2.3.1, do not bump."), cairn.Turn("assistant", "Understood.")]
    first = ledger.record_turns("s", turns, idempotency_key="call-1")
    assert [t.turn for t in first.turns] == [0, 1] and not first.replayed
    size = len(ledger)
    again = ledger.record_turns("s", turns, idempotency_key="call-1")
    assert again.replayed and [t.rid for t in again.turns] == [t.rid for t in first.turns]
    assert len(ledger) == size
    with pytest.raises(cairn.Conflict, match="idempotency_key: \"call-1\" was used by an earlier call"):
        ledger.record_turns("s", [cairn.Turn("user", "other")], idempotency_key="call-1")
    # A new key is a new call.
    assert [t.turn for t in ledger.record_turns("s", turns[:1], idempotency_key="call-2").turns] == [2]


def test_bad_input_raises_a_cairn_error_with_the_librarys_sentence(db):
    ledger = cairn.Ledger(db)
    with pytest.raises(cairn.InvalidInput, match=r"field `turn`: missing; give a non-negative integer"):
        ledger.append({"kind": "span", "stream": "s", "role": "user", "text": "hi"})
    with pytest.raises(cairn.InvalidInput, match=r"unknown kind \"spam\""):
        ledger.append('{"kind":"spam"}')
    with pytest.raises(cairn.InvalidInput, match="argument turns\\[0\\].role: unknown role \"robot\""):
        ledger.record_turns("s", [cairn.Turn("robot", "beep")])
    with pytest.raises(cairn.InvalidInput, match="give at least one turn"):
        ledger.record_turns("s", [])
    with pytest.raises(cairn.InvalidInput, match="give the compaction's claims or its text"):
        ledger.propose("s", covers=["turn:0"])
    ledger.record_span("s", 0, "user", "hello")
    with pytest.raises(cairn.Conflict, match="already holds a different span for turn 0"):
        ledger.record_span("s", 0, "user", "a different hello")
    with pytest.raises(cairn.NotFound, match="no stream \"nope\""):
        ledger.context("nope")
    with pytest.raises(cairn.NotFound):
        ledger.get("00000000deadbeef")
    with pytest.raises(cairn.InvalidInput, match="unknown format"):
        ledger.import_log(db, "word-perfect")
    with pytest.raises(cairn.InvalidInput, match="cannot read policy"):
        cairn.Ledger(db.parent / "other.redb", policy=db.parent / "missing.toml")
    # A line that fails leaves nothing of its batch behind.
    size = len(ledger)
    with pytest.raises(cairn.InvalidInput):
        ledger.append_all([{"kind": "span", "stream": "s", "turn": 1, "role": "user", "text": "kept?"}, "{"])
    assert len(ledger) == size
    # The near miss is taken.
    assert ledger.record_span("s", 1, "user", "kept").new
    assert issubclass(cairn.InvalidInput, cairn.CairnError) and issubclass(cairn.LedgerDamaged, cairn.CairnError)


def test_reads_give_typed_objects_equal_to_the_clis_json(db, cairn_bin):
    ledger = cairn.Ledger(db)
    ledger.record_turns("s", [cairn.Turn("user", "we are still on libfoo 2.3.1, do not bump."), cairn.Turn("tool", "148 passed", tool="cargo")])
    pinned = ledger.pin("s", "constraints")
    assert pinned.rid and pinned.items[0].cls in ("prohibition", "commitment")
    v = ledger.propose("s", covers=["turn:0..turn:1"], claims=[cairn.NewClaim("libfoo stays at 2.3.1", "user-said", ["turn:0"], actionable=True)])
    assert v.admitted, v.findings
    ctx = ledger.context("s")
    assert ctx.head == v.rid and ctx.claims[0].text == "libfoo stays at 2.3.1" and ctx.pins
    hits = ledger.recall("libfoo")
    assert hits.hits and hits.hits[0].kind in ("span", "claim")
    why = ledger.why("prior:0", stream="s")
    assert why["claim"]
    replay = ledger.replay("s")
    assert replay["boundaries"][0]["verdict"] == "admitted"
    report = ledger.verify()
    assert report.ok and report.records == len(ledger)
    record = ledger.get(v.rid[:12])
    assert record.kind == "summary" and record.rid == v.rid
    origin, size, root = ledger.checkpoint().splitlines()
    assert origin.startswith("cairn/ledger/") and int(size) == len(ledger) and len(root) == 44
    gates = ledger.gates()
    # The CLI reads the same ledger once the Python handle is gone.
    expected = {
        "context": json.loads(ctx.to_json()),
        "recall": json.loads(hits.to_json()),
        "verify": json.loads(report.to_json()),
        "gates": [g.__dict__ for g in gates],
    }
    del ledger
    assert cli(cairn_bin, db, "context", "s", "--json")[0] == expected["context"]
    assert cli(cairn_bin, db, "recall", "libfoo", "--json")[0] == expected["recall"]
    assert cli(cairn_bin, db, "verify", "--json")[0] == expected["verify"]
    assert cli(cairn_bin, db, "gates", "--json")[0]["findings"] == expected["gates"]


def test_opening_one_path_twice_in_a_process_gives_the_same_ledger(db, tmp_path):
    a = cairn.Ledger(db)
    b = cairn.Ledger(str(db))
    a.record_span("s", 0, "user", "hello")
    assert len(b) == len(a) == 1
    assert b.context("s").spans[0].text == "hello"
    policy = tmp_path / "p.toml"
    policy.write_text("")
    with pytest.raises(cairn.LedgerBusy, match="already open in this process"):
        cairn.Ledger(db, policy=policy)


def _child(path: str, q) -> None:
    try:
        len(cairn.Ledger(path))
        q.put("opened")
    except cairn.LedgerBusy as e:
        q.put(f"busy: {e}")


def _child_inherited(ledger, q) -> None:
    try:
        len(ledger)
        q.put("used")
    except cairn.LedgerBusy as e:
        q.put(f"busy: {e}")


def test_after_a_fork_the_child_gets_a_clear_error_for_the_parents_handle(db):
    ledger = cairn.Ledger(db)
    ledger.record_span("s", 0, "user", "hello")
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_inherited, args=(ledger, q))
    p.start()
    p.join(30)
    said = q.get(timeout=5)
    assert said.startswith("busy: ") and "fork" in said, said
    # A child that opens the path itself, while the parent holds it, is told the file is held.
    p = ctx.Process(target=_child, args=(str(db), q))
    p.start()
    p.join(30)
    said = q.get(timeout=5)
    assert said.startswith("busy: ") and "locked" in said, said
    assert p.exitcode == 0


def test_threads_share_a_ledger_and_lose_nothing(db):
    ledger = cairn.Ledger(db)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                ledger.record_turns(f"s{n}", [cairn.Turn("user", f"thread {n} says {i}")], idempotency_key=f"{n}-{i}")
                ledger.recall(f"thread {n}")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for n in range(4):
        assert len(ledger.context(f"s{n}", budget=100_000).spans) == 20
    assert ledger.verify().ok


def test_the_gil_is_released_during_a_call(db):
    ledger = cairn.Ledger(db)
    lines = [{"kind": "span", "stream": "s", "turn": i, "role": "tool", "text": f"line {i} " + "x" * 2000} for i in range(400)]
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=count)
    t.start()
    ledger.append_all(lines)
    done.set()
    t.join()
    # The counting thread ran while the append held no GIL.
    assert ticks > 1000, ticks


def test_an_import_reads_an_agents_log_as_the_cli_does(tmp_path, cairn_bin):
    # A real Claude Code session with its /compact (the fixture's README names its source).
    log = pathlib.Path(__file__).resolve().parents[3] / "tests" / "data" / "import" / "claude-code" / "cipher-box-compact-prefix.jsonl"
    ledger = cairn.Ledger(tmp_path / "i.redb")
    report = ledger.import_log(log, "claude-code")
    assert report.messages >= 1 and report.appended >= 1 and report.compactions
    want = cli(cairn_bin, tmp_path / "cli.redb", "import", "--from", "claude-code", str(log), "--json")[0]
    assert json.loads(report.to_json()) == want
    with pytest.raises(cairn.InvalidInput, match="cannot import"):
        ledger.import_log(tmp_path / "missing.jsonl", "claude-code")


def test_the_packages_own_example_runs():
    import doctest

    result = doctest.testmod(cairn)
    assert result.attempted >= 5 and result.failed == 0


def test_odd_arguments_raise_cairn_errors_that_speak_of_the_call(tmp_path):
    ledger = cairn.Ledger.in_memory()
    assert ledger.path is None and "in memory" in repr(ledger)
    for blank in ("", "  ", "\n"):
        with pytest.raises(cairn.InvalidInput, match="the line is blank"):
            ledger.append(blank)
    with pytest.raises(cairn.InvalidInput, match=r"argument turns\[0\]\.role: invalid type: null, expected a string$"):
        ledger.record_turns("s", [cairn.Turn(None, "x")])
    with pytest.raises(cairn.InvalidInput, match=r"argument turns\[0\]\.turn: -1 is not a turn number"):
        ledger.record_turns("s", [cairn.Turn("user", "x", turn=-1)])
    with pytest.raises(cairn.InvalidInput, match="give an integer from 0"):
        ledger.record_turns("s", [cairn.Turn("user", "x", turn=2**70)])
    with pytest.raises(cairn.InvalidInput, match="turns takes a list; str 'abc' is not one"):
        ledger.record_turns("s", "abc")
    with pytest.raises(cairn.InvalidInput, match="give 1 to 256 bytes"):
        ledger.record_turns("s", [cairn.Turn("user", "x")], idempotency_key="")
    ledger.record_turns("s", [cairn.Turn("user", "hello")])
    with pytest.raises(cairn.Conflict, match="already holds a different span for turn 0"):
        ledger.record_turns("s", [cairn.Turn("user", "other", turn=0)])
    with pytest.raises(cairn.InvalidInput, match="covers takes a list; str"):
        ledger.propose("s", covers="turn:0", text="hello")
    with pytest.raises(cairn.InvalidInput, match="covers takes a list; dict"):
        ledger.propose("s", covers={"turn:0": 1}, text="hello")
    with pytest.raises(cairn.InvalidInput, match="budget takes a non-negative integer"):
        ledger.context("s", budget=2**70)
    with pytest.raises(cairn.InvalidInput, match="limit takes a non-negative integer"):
        ledger.recall("hello", limit=-1)
    with pytest.raises(cairn.NotFound, match="no stream 'nostream'"):
        ledger.pin("nostream", "p", [cairn.PinItem("prohibition", "never do it")])
    with pytest.raises(cairn.InvalidInput, match="is a directory"):
        cairn.Ledger(tmp_path)
    with pytest.raises(cairn.InvalidInput, match="NaN or an infinity"):
        ledger.propose("s", covers=["turn:0"], text="hello", self_score=float("nan"))
    with pytest.raises(cairn.NotFound, match="no stream 'nostream'"):
        ledger.check_action("nostream", "DROP TABLE users", irreversible=True)
    assert ledger.get("turn:0", stream="s").fields["text"] == "hello"
    with pytest.raises(cairn.InvalidInput, match="give the key too"):
        ledger.checkpoint(previous="x")
    with pytest.raises(cairn.InvalidInput, match="cannot read"):
        ledger.ingest(tmp_path / "missing.jsonl")
    with pytest.raises(cairn.InvalidInput):
        cairn.Ledger(tmp_path / "no" / "such" / "dir" / "x.redb")
    assert cairn.__version__


def test_errors_cross_to_another_process_by_pickle():
    import pickle

    from cairn.langchain import CompactionRefused

    for e in (cairn.InvalidInput("x"), cairn.Conflict("y"), CompactionRefused("z", [])):
        again = pickle.loads(pickle.dumps(e))
        assert type(again) is type(e) and str(again) == str(e)
    assert cairn.InvalidInput.__module__ == "cairn"


def test_a_pinned_item_the_user_lifted_is_retired_from_python(db):
    # Issue 37, row 20: a pinned fact changes; Python retires the old item citing the user's turn.
    ledger = cairn.Ledger(db)
    ledger.record_turns("s", [
        cairn.Turn("user", "never run DROP TABLE on the orders database"),
        cairn.Turn("user", "ok, the orders database is retired; you may drop its tables now"),
    ])
    ledger.pin("s", "constraints", [cairn.PinItem("prohibition", "never run DROP TABLE on the orders database", "turn:0")])
    refused = ledger.check_action("s", "psql -c 'DROP TABLE orders'", irreversible=True)
    assert refused.refused, refused
    # Near miss: the turn that imposed the rule cannot lift it.
    with pytest.raises(cairn.CairnError):
        ledger.retire("s", "constraints", "never run DROP TABLE on the orders database", "turn:0")
    ledger.retire("s", "constraints", "never run DROP TABLE on the orders database", "turn:1")
    assert ledger.context("s").pins[0].retired_by, ledger.context("s").pins
    again = ledger.check_action("s", "psql -c 'DROP TABLE orders'", irreversible=True)
    assert "prohibited-action" not in again.gates, again
