"""The MCP server survives its clients (issue 22, rows 3, 4, 5, 9 and 10): it closes its
ledger cleanly however a normal session ends, answers every bad message, refuses what a client
may not say, and takes retries without duplicating anything."""

import json
import signal
import subprocess
import time

from mcp import ClientSession

from harness import CAIRN, Http, run, session_calls, stdio, text

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def record(i, stream="s", text_=None):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "record_turns", "arguments": {"stream": stream, "turns": [{"role": "user", "text": text_ or f"this is turn {i} of the test"}]}}}


class Raw:
    """`cairn mcp` spoken to line by line, as a client that sends what it likes."""

    def __init__(self, db, *args):
        self.proc = subprocess.Popen([CAIRN, "--db", str(db), "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.send(INIT)
        assert self.reply()["id"] == 1
        self.send(INITIALIZED)

    def send_bytes(self, b):
        self.proc.stdin.write(b)
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_bytes(json.dumps(msg).encode() + b"\n")

    def reply(self):
        line = self.proc.stdout.readline()
        assert line, "the server closed its output: " + self.proc.stderr.read().decode(errors="replace")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=20)


def reads_cleanly(db):
    """A read command opens the ledger without needing recovery."""
    out = subprocess.run([CAIRN, "--db", str(db), "--json", "stats"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_normal_end_of_the_server_leaves_the_ledger_closed_and_a_crash_is_recovered(tmp_path):
    # stdin closed (EOF): the ledger is closed, and read commands open it at once.
    db = tmp_path / "eof.redb"
    raw = Raw(db)
    raw.send(record(2))
    assert "result" in raw.reply()
    assert raw.close() == 0
    assert reads_cleanly(db)["records"] == 1

    # SIGTERM and SIGINT with the client still connected: the same.
    for sig in (signal.SIGTERM, signal.SIGINT):
        db = tmp_path / f"sig{int(sig)}.redb"
        raw = Raw(db)
        raw.send(record(2))
        assert "result" in raw.reply()
        raw.proc.send_signal(sig)
        assert raw.proc.wait(timeout=20) == 0
        assert reads_cleanly(db)["records"] == 1

    # `cairn serve` stopped by SIGTERM: the same.
    db = tmp_path / "served.redb"
    server = Http(db)
    try:
        run(write_one(server))
    finally:
        server.stop(signal.SIGTERM)
    assert server.proc.returncode == 0
    assert reads_cleanly(db)["records"] == 1

    # Near miss: a real crash (SIGKILL) does need recovery; readers say to run `cairn recover`,
    # which repairs and verifies the ledger, and says what it did.
    db = tmp_path / "killed.redb"
    raw = Raw(db)
    raw.send(record(2))
    assert "result" in raw.reply()
    raw.proc.send_signal(signal.SIGKILL)
    raw.proc.wait(timeout=20)
    out = subprocess.run([CAIRN, "--db", str(db), "stats"], capture_output=True, text=True)
    assert out.returncode == 2 and "cairn --db" in out.stderr and "recover" in out.stderr, out.stderr
    rec = subprocess.run([CAIRN, "--db", str(db), "recover"], capture_output=True, text=True)
    assert rec.returncode == 0 and "recovered" in rec.stdout, rec.stdout + rec.stderr
    assert reads_cleanly(db)["records"] == 1
    again = subprocess.run([CAIRN, "--db", str(db), "recover"], capture_output=True, text=True)
    assert again.returncode == 0 and "nothing to recover" in again.stdout, again.stdout


async def write_one(server):
    async with server.client() as http:
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(server.url, http_client=http) as (read, write):
            r = await session_calls(read, write, [("record_turns", {"stream": "h", "turns": [{"role": "user", "text": "one"}]})])
            assert not r[0].is_error


def test_a_client_cannot_say_who_wrote_its_compaction(tmp_path):
    turns = {"stream": "a", "turns": [{"role": "user", "text": "We deploy on Fridays only."}]}
    claim = {"text": "we deploy on Fridays only", "origin": "user-said", "witnesses": ["turn:0"]}

    async def go(db, extra):
        async with stdio(db) if not extra else stdio_with(db, extra) as (read, write):
            return await session_calls(read, write, [
                ("record_turns", turns),
                ("propose_compaction", {"stream": "a", "covers": ["turn:0"], "claims": [claim], "author": "separate"}),
                ("propose_compaction", {"stream": "a", "covers": ["turn:0"], "claims": [claim]}),
            ])

    r = run(go(tmp_path / "a.redb", None))
    assert r[1].is_error and "cannot say who wrote" in text(r[1]) and "self" in text(r[1]), text(r[1])
    # Near miss: the same proposal without `author` is judged, as self-authored.
    assert r[2].structured_content["verdict"] == "admitted", text(r[2])
    out = subprocess.run([CAIRN, "--db", str(tmp_path / "a.redb"), "--json", "export"], capture_output=True, text=True)
    summaries = [json.loads(l) for l in out.stdout.splitlines() if json.loads(l)["kind"] == "summary"]
    assert [s["author"] for s in summaries] == ["self"]
    # A server started with the policy that its client is a separate summariser says so.
    run(go(tmp_path / "b.redb", ["--client-author", "separate"]))
    out = subprocess.run([CAIRN, "--db", str(tmp_path / "b.redb"), "--json", "export"], capture_output=True, text=True)
    summaries = [json.loads(l) for l in out.stdout.splitlines() if json.loads(l)["kind"] == "summary"]
    assert [s["author"] for s in summaries] == ["separate"]


def stdio_with(db, extra):
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    return stdio_client(StdioServerParameters(command=CAIRN, args=["--db", str(db), "mcp", *extra]))


def test_turn_numbers_cannot_overflow(tmp_path):
    async def go():
        async with stdio(tmp_path / "t.redb") as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                r = await s.call_tool("record_turns", {"stream": "t", "turns": [{"role": "user", "text": "x", "turn": 18446744073709551615}]})
                assert r.is_error and "largest turn number" in text(r), text(r)
                # Near miss: a large turn within range, then an unnumbered one after it.
                r = await s.call_tool("record_turns", {"stream": "t", "turns": [{"role": "user", "text": "x", "turn": 9007199254740990}, {"role": "user", "text": "y"}]})
                assert [t["turn"] for t in r.structured_content["turns"]] == [9007199254740990, 9007199254740991]
                r = await s.call_tool("record_turns", {"stream": "t", "turns": [{"role": "user", "text": "z"}]})
                assert r.is_error and "largest turn number" in text(r), text(r)

    run(go())


def test_every_bad_message_on_stdio_gets_an_answer(tmp_path):
    raw = Raw(tmp_path / "bad.redb")
    raw.send_bytes(b"this is not json\n")
    assert raw.reply()["error"]["code"] == -32700
    raw.send_bytes(b'{"jsonrpc":"2.0","id":5,"method":"ping","x":"\xff"}\n')
    assert raw.reply()["error"]["code"] == -32700
    raw.send_bytes(b"[" * 100000 + b"]" * 100000 + b"\n")
    assert raw.reply()["error"]["code"] == -32700
    raw.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 17})
    r = raw.reply()
    assert r["id"] == 9 and r["error"]["code"] in (-32600, -32602), r
    # A 20 MB record_turns and a 30 MB recall are answered (refused), not dropped.
    raw.send(record(10, text_="x" * (20 << 20)))
    r = raw.reply()
    assert r["id"] == 10 and ("error" in r or r["result"].get("isError")), str(r)[:300]
    raw.send({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "port " * (6 << 20)}}})
    r = raw.reply()
    assert r["id"] == 11 and ("error" in r or r["result"].get("isError")), str(r)[:300]
    # Past the line limit (32 MiB): answered without the id, which was never read.
    raw.send_bytes(b'{"jsonrpc":"2.0","id":12,"method":"ping","pad":"' + b"y" * (33 << 20) + b'"}\n')
    assert raw.reply()["error"]["code"] == -32600
    # Near miss: after all that, a good request is served as ever.
    raw.send(record(13, text_="still here"))
    r = raw.reply()
    assert r["id"] == 13 and not r["result"].get("isError"), r
    assert raw.close() == 0


def test_the_tools_say_their_rules_and_offer_a_way_out(tmp_path):
    """Issue 22, row 16: a reground tool, descriptions that state a compaction's rules, enums
    in the schemas, read-only hints, tool errors for arguments that parse but are wrong, and
    findings whose words match the case."""

    async def go():
        async with stdio(tmp_path / "r.redb") as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert "reground" in tools
                propose = tools["propose_compaction"].description
                assert "covers" in propose and "prior:N" in propose and "re-ground" in propose.lower(), propose
                turn = tools["record_turns"].input_schema
                assert "user" in json.dumps(turn) and "enum" in json.dumps(turn), turn
                pin = json.dumps(tools["pin"].input_schema)
                assert "failed-attempt" in pin and "enum" in pin, pin
                claim = json.dumps(tools["propose_compaction"].input_schema)
                assert all(t in claim for t in ("user-said", "tool-output", "hedged", "inferred")), claim
                for name in ("context", "recall", "why", "gates"):
                    assert tools[name].annotations and tools[name].annotations.read_only_hint, name
                for name in ("record_turns", "propose_compaction", "pin", "reground"):
                    assert not (tools[name].annotations and tools[name].annotations.read_only_hint), name

                await s.call_tool("record_turns", {"stream": "g", "turns": [
                    {"role": "user", "text": "The build runs on the ci-7 runner."},
                    {"role": "assistant", "text": "Noted."},
                    {"role": "user", "text": "Deploys happen on Fridays."},
                ]})
                # A claim citing a raw turn outside `covers` is laundered, and the finding says
                # it cites a turn outside, not that it rests on earlier claims.
                r = await s.call_tool("propose_compaction", {"stream": "g", "covers": ["turn:1..turn:2"], "claims": [
                    {"text": "the build runs on the ci-7 runner", "origin": "user-said", "witnesses": ["turn:0"]},
                    {"text": "deploys happen on Fridays", "origin": "user-said", "witnesses": ["turn:2"]},
                ]})
                details = [f["detail"] for f in r.structured_content["findings"] if f["gate"] == "laundered-claim"]
                assert details and "cites turn 0, outside" in details[0] and "earlier claims" not in details[0], details
                claims = r.structured_content["claims"]
                # The way out: re-ground it against the turn that says it.
                rg = await s.call_tool("reground", {"claim": claims[0]["rid"]})
                assert not rg.is_error and "re-grounded" in text(rg), text(rg)
                # Near miss: a claim its turns do not support is not re-grounded, and says why.
                rg = await s.call_tool("reground", {"claim": claims[1]["rid"][:12]})
                assert not rg.is_error, text(rg)
                # An argument that parses but names nothing: a tool error the model can mend.
                r = await s.call_tool("reground", {"claim": "prior:7", "stream": "g"})
                assert r.is_error, text(r)

    run(go())


def test_a_retried_record_turns_with_its_key_records_nothing_twice_even_after_a_restart(tmp_path):
    db = tmp_path / "retry.redb"
    turns = [{"role": "user", "text": f"turn text {i}"} for i in range(14)]

    async def call(args_list):
        async with stdio(db) as (read, write):
            return await session_calls(read, write, [("record_turns", a) for a in args_list])

    first, again = run(call([
        {"stream": "r", "turns": turns, "idempotency_key": "call-1"},
        {"stream": "r", "turns": turns, "idempotency_key": "call-1"},
    ]))
    assert [t["turn"] for t in first.structured_content["turns"]] == list(range(14))
    assert again.structured_content["replayed"] and again.structured_content["turns"] == [dict(t, new=False) for t in first.structured_content["turns"]]
    # After a restart, the same retry is still a no-op; the same key with other turns is refused.
    after, other = run(call([
        {"stream": "r", "turns": turns, "idempotency_key": "call-1"},
        {"stream": "r", "turns": turns[:3], "idempotency_key": "call-1"},
    ]))
    assert after.structured_content["replayed"], text(after)
    assert other.is_error and "other turns" in text(other), text(other)
    # Near miss: a new key records new turns.
    (fresh,) = run(call([{"stream": "r", "turns": turns[:2], "idempotency_key": "call-2"}]))
    assert [t["turn"] for t in fresh.structured_content["turns"]] == [14, 15]
    out = subprocess.run([CAIRN, "--db", str(db), "--json", "stats"], capture_output=True, text=True)
    st = json.loads(out.stdout)
    assert st["streams"][0]["spans"] == 16 and st["kinds"]["receipt"] == 2, st
    v = subprocess.run([CAIRN, "--db", str(db), "verify"], capture_output=True, text=True)
    assert v.returncode == 0, v.stdout + v.stderr


def test_pin_dry_run_previews_what_the_classifier_would_pin_and_writes_nothing(tmp_path):
    """Issue 23, point 4: pins are forever, so the `pin` tool previews with `dry_run`."""
    db = tmp_path / "p.redb"

    async def go():
        async with stdio(db) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("record_turns", {"stream": "s", "turns": [{"role": "user", "text": "never run DROP TABLE on the prod database"}]})
                preview = await s.call_tool("pin", {"stream": "s", "name": "constraints", "dry_run": True})
                again = await s.call_tool("pin", {"stream": "s", "name": "constraints", "dry_run": True})
                bad = await s.call_tool("pin", {"stream": "s", "name": "x", "dry_run": True, "items": [{"class": "prohibition", "text": "never"}]})
                done = await s.call_tool("pin", {"stream": "s", "name": "constraints"})
                return preview, again, bad, done

    preview, again, bad, done = run(go())
    assert preview.structured_content["dry_run"] is True and preview.structured_content["rid"] is None
    assert "DROP TABLE" in preview.structured_content["items"][0]["text"], text(preview)
    # Nothing was written: the same preview again, and then the pin itself.
    assert again.structured_content["items"] == preview.structured_content["items"]
    assert bad.is_error and "dry_run" in text(bad), text(bad)
    assert done.structured_content["rid"], text(done)


def test_a_compaction_in_prose_is_judged_with_the_witnesses_found(tmp_path):
    turns = {"stream": "p", "turns": [
        {"role": "user", "text": "We are still on libfoo 2.3.1, do not bump."},
        {"role": "tool", "text": "name = \"libfoo\"\nversion = \"2.3.1\""},
    ]}

    async def go():
        async with stdio(tmp_path / "p.redb") as (read, write):
            return await session_calls(read, write, [
                ("record_turns", turns),
                ("pin", {"stream": "p", "name": "auto"}),
                # Prose that states a bump the user forbade: the claim is struck, each claim shown.
                ("propose_compaction", {"stream": "p", "covers": ["turn:0..turn:1"],
                                        "text": "## Summary\nlibfoo was upgraded to 2.4.0."}),
                # Near miss: prose that keeps the version is admitted.
                ("propose_compaction", {"stream": "p", "covers": ["turn:0..turn:1"],
                                        "text": "We are still on libfoo 2.3.1."}),
            ])

    async def both():
        from mcp.shared.exceptions import MCPError
        async with stdio(tmp_path / "p.redb") as (read, write):
            try:
                r = await session_calls(read, write, [
                    ("propose_compaction", {"stream": "p", "covers": ["turn:0"], "text": "x.",
                                            "claims": [{"text": "x", "origin": "user-said", "witnesses": ["turn:0"]}]}),
                ])
            except MCPError as e:
                return str(e)
        return text(r[0]) if r[0].is_error else "no error: " + text(r[0])

    r = run(go())
    refused, admitted = r[2], r[3]
    assert refused.structured_content["struck"], text(refused)
    assert "[fabricated] libfoo was upgraded" in text(refused), text(refused)
    assert "claim [" in text(refused) and "found:" in text(refused), text(refused)
    assert admitted.structured_content["verdict"] == "admitted", text(admitted)
    claim = admitted.structured_content["claims"][0]
    assert claim["origin"] == "user-said" and claim["witnesses"][0]["turn"] == 0, claim
    assert "turn 0 (user)" in claim["why"], claim
    # Claims and text together: refused, naming the argument.
    said = run(both())
    assert "text" in said and "not both" in said, said
