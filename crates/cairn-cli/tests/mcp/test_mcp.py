"""cairn's MCP server driven by the official Python MCP SDK's client (PyPI `mcp`), over stdio
(`cairn mcp`) and over Streamable HTTP (`cairn serve`).

Run by `cargo test -p cairn-cli --test cli -- mcp` (which sets CAIRN_BIN), or directly:
    CAIRN_BIN=target/debug/cairn python3 -m pytest crates/cairn-cli/tests/mcp -q
"""

import asyncio
import json
import signal
import subprocess

import httpx2
import pytest
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from harness import CAIRN, TOOLS, Http, run, session_calls, stdio, text


def test_stdio_lists_the_tools_with_schemas_and_records_and_reads_back(tmp_path):
    db = tmp_path / "agent.redb"

    async def go():
        async with stdio(db) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = (await s.list_tools()).tools
                assert {t.name for t in tools} == TOOLS
                for t in tools:
                    assert t.description and len(t.description) > 60, t.name
                    assert t.input_schema["type"] == "object", t.name
                rec = next(t for t in tools if t.name == "record_turns")
                assert "turns" in rec.input_schema["properties"]

                r = await s.call_tool(
                    "record_turns",
                    {
                        "stream": "s",
                        "turns": [
                            {"role": "user", "text": "I think the staging DB is on port 5433."},
                            {"role": "tool", "tool": "psql", "text": "connected to staging-db on port 5432"},
                        ],
                    },
                )
                assert not r.is_error, text(r)
                assert [t["turn"] for t in r.structured_content["turns"]] == [0, 1]
                # Turn numbers go on from the last one.
                r = await s.call_tool("record_turns", {"stream": "s", "turns": [{"role": "user", "text": "Now add request timeouts."}]})
                assert r.structured_content["turns"][0]["turn"] == 2

                r = await s.call_tool("context", {"stream": "s"})
                assert [x["turn"] for x in r.structured_content["spans"]] == [2, 1, 0]
                assert "recent turns, newest first" in text(r)
                # An empty stream is an empty memory, not an error.
                r = await s.call_tool("context", {"stream": "new-agent"})
                assert not r.is_error and r.structured_content["spans"] == []

                r = await s.call_tool("recall", {"query": "staging port", "stream": "s"})
                turns = [h.get("turn") for h in r.structured_content["hits"]]
                assert 0 in turns and 1 in turns, r.structured_content

                # A role outside the schema's enum is a protocol error naming the argument.
                with pytest.raises(MCPError) as e:
                    await s.call_tool("record_turns", {"stream": "s", "turns": [{"role": "narrator", "text": "x"}]})
                assert "turns[0].role" in str(e.value), str(e.value)
                # Arguments that parse but name nothing are tool errors the model reads.
                r = await s.call_tool(
                    "propose_compaction",
                    {"stream": "s", "covers": ["turn:0..turn:2"], "claims": [{"text": "x", "origin": "user-said", "witnesses": ["turn:99"]}]},
                )
                assert r.is_error and "claims[0].witnesses[0]" in text(r), text(r)
                # So are arguments that do not fit the schema.
                with pytest.raises(MCPError) as e:
                    await s.call_tool("record_turns", {"stream": "s", "turns": [{"role": "user"}]})
                assert "turns[0]" in str(e.value) and "text" in str(e.value), str(e.value)
                # The near miss: the same call with its text is recorded.
                r = await s.call_tool("record_turns", {"stream": "s", "turns": [{"role": "user", "text": "fixed"}]})
                assert not r.is_error and r.structured_content["turns"][0]["turn"] == 3

    run(go())


def test_a_refusal_is_a_result_the_model_reads(tmp_path):
    db = tmp_path / "agent.redb"

    async def go():
        async with stdio(db) as (read, write):
            r = await session_calls(
                read,
                write,
                [
                    ("record_turns", {"stream": "s", "turns": [
                        {"role": "user", "text": "We are still on libfoo 2.3.1, do not bump it."},
                        {"role": "assistant", "text": "Understood, libfoo stays at 2.3.1."},
                    ]}),
                    ("propose_compaction", {"stream": "s", "covers": ["turn:0..turn:1"], "evicts": ["turn:0..turn:1"], "claims": [
                        {"text": "libfoo was upgraded to 2.4.0", "origin": "user-said", "witnesses": ["turn:0"], "actionable": True},
                    ]}),
                ],
            )
            refused = r[1]
            assert not refused.is_error, "a refusal is a result, not an error"
            assert refused.structured_content["verdict"] == "refused"
            assert refused.structured_content["findings"], refused.structured_content
            assert "Use this text as your compacted context" in text(refused), text(refused)
            # Its advice names this front door's tools, not a shell command (issue 37, row 22).
            findings = refused.structured_content["findings"]
            unpinned = [f for f in findings if f["gate"] == "unpinned-reference"]
            assert unpinned, findings
            assert "call the pin tool" in unpinned[0]["detail"], unpinned[0]
            assert "cairn pin" not in text(refused), text(refused)

    run(go())


def test_http_serves_clients_with_a_token_and_refuses_without_one_or_from_a_foreign_host(tmp_path):
    server = Http(tmp_path / "served.redb", token="s3cret-token")
    try:

        async def go():
            async with server.client() as http:
                async with streamable_http_client(server.url, http_client=http) as (read, write):
                    r = await session_calls(read, write, [
                        ("record_turns", {"stream": "h", "turns": [{"role": "user", "text": "Never run DROP TABLE on the production users table."}]}),
                        ("pin", {"stream": "h", "name": "constraints"}),
                        ("check_action", {"stream": "h", "text": "DROP TABLE users", "irreversible": True}),
                        ("gates", {}),
                    ])
                    assert r[1].structured_content["rid"], text(r[1])
                    assert r[2].structured_content["verdict"] == "refused", text(r[2])
                    assert "Do not run this action" in text(r[2])
            # Two clients at once: both are served, and both see every acknowledged turn.
            async def writer(k):
                async with server.client() as http:
                    async with streamable_http_client(server.url, http_client=http) as (read, write):
                        await session_calls(read, write, [
                            ("record_turns", {"stream": f"c{k}", "turns": [{"role": "user", "text": f"client {k} turn {i}"} for i in range(5)]}),
                        ])
            await asyncio.gather(writer(1), writer(2))
            async with server.client() as http:
                async with streamable_http_client(server.url, http_client=http) as (read, write):
                    r = await session_calls(read, write, [("context", {"stream": "c1"}), ("context", {"stream": "c2"})])
                    assert len(r[0].structured_content["spans"]) == 5
                    assert len(r[1].structured_content["spans"]) == 5

        run(go())
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        hdrs = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        # No token: 401. Wrong token: 401.
        assert httpx2.post(server.url, json=init, headers=hdrs).status_code == 401
        assert httpx2.post(server.url, json=init, headers={**hdrs, "Authorization": "Bearer nope"}).status_code == 401
        auth = {**hdrs, "Authorization": "Bearer s3cret-token"}
        # A Host or Origin not on the allow-list (DNS rebinding): 403.
        assert httpx2.post(server.url, json=init, headers={**auth, "Host": "evil.example"}).status_code == 403
        assert httpx2.post(server.url, json=init, headers={**auth, "Origin": "http://evil.example"}).status_code == 403
        # The near miss: the right token from the loopback host is served.
        assert httpx2.post(server.url, json=init, headers=auth).status_code == 200
    finally:
        server.stop()


def test_killing_the_server_loses_nothing_it_acknowledged(tmp_path):
    db = tmp_path / "killed.redb"
    server = Http(db)
    acknowledged = 0
    try:

        async def go():
            nonlocal acknowledged
            async with server.client() as http:
                async with streamable_http_client(server.url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        for i in range(30):
                            r = await s.call_tool("record_turns", {"stream": "k", "turns": [{"role": "user", "text": f"turn number {i}"}]})
                            assert not r.is_error
                            acknowledged += 1

        run(go())
    finally:
        server.stop(signal.SIGKILL)
    assert acknowledged == 30
    # A killed writer leaves the file mid-write: `cairn recover` repairs and verifies it.
    rec = subprocess.run([CAIRN, "--db", str(db), "recover"], capture_output=True, text=True)
    assert rec.returncode == 0 and "recovered" in rec.stdout, rec.stdout + rec.stderr
    out = subprocess.run([CAIRN, "--db", str(db), "--json", "context", "k", "--budget", "100000"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["spans"]) == 30
    v = subprocess.run([CAIRN, "--db", str(db), "verify"], capture_output=True, text=True)
    assert v.returncode == 0, v.stdout + v.stderr


def agent_turns():
    """200 turns of a coding session, with a prohibition (turn 3), a version constraint (turn
    10) and a hedged port (turn 20) among plain requests and replies."""
    special = {
        3: ("user", "Never run DROP TABLE on the production users table."),
        10: ("user", "We are still on libfoo 2.3.1, do not bump it."),
        20: ("user", "I think the staging DB is on port 5433."),
    }
    out = []
    for i in range(200):
        role, said = special.get(
            i,
            [("user", f"Please look at module m{i} next."), ("assistant", f"I read module m{i}; it parses the config section {i}.")][i % 2],
        )
        out.append({"role": role, "text": said})
    return out


def test_a_scripted_agent_session_of_200_turns_and_three_compactions(tmp_path):
    db = tmp_path / "session.redb"
    drop = {"text": "never run DROP TABLE on the production users table", "origin": "user-said", "witnesses": ["turn:3"], "actionable": True}
    libfoo = {"text": "libfoo stays at 2.3.1; do not bump it", "origin": "user-said", "witnesses": ["turn:10"], "actionable": True}
    port = {"text": "the staging DB is on port 5433", "origin": "user-said", "witnesses": ["turn:20"], "actionable": True}
    # Cites a real turn that does not support it.
    fabricated = {"text": "libfoo was upgraded to 2.4.0", "origin": "user-said", "witnesses": ["turn:10"], "actionable": True}

    async def go():
        async with stdio(db) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                turns = agent_turns()
                for k in range(0, 200, 40):
                    r = await s.call_tool("record_turns", {"stream": "agent", "turns": turns[k : k + 40]})
                    assert not r.is_error, text(r)
                r = await s.call_tool("pin", {"stream": "agent", "name": "constraints"})
                pinned = [i["text"] for i in r.structured_content["items"]]
                assert "Never run DROP TABLE on the production users table." in pinned, pinned

                def claims_of(ctx):
                    return {c["text"]: c for c in ctx.structured_content["claims"]}

                # 1. A fabricating compaction: its own witness contradicts a claim, so it is
                # refused; its repair, without that claim, is admitted and is the head.
                r = await s.call_tool("propose_compaction", {"stream": "agent", "covers": ["turn:0..turn:59"], "evicts": ["turn:0..turn:59"], "claims": [drop, libfoo, fabricated]})
                assert r.structured_content["verdict"] == "refused", text(r)
                gates = {f["gate"] for f in r.structured_content["findings"]}
                assert "contradicted-claim" in gates, gates
                repair = r.structured_content["repair"]
                assert repair["verdict"] == "admitted", text(r)
                assert "2.4.0" not in repair["text"] and "Use this text" in text(r), text(r)
                ctx = await s.call_tool("context", {"stream": "agent", "budget": 100000})
                assert ctx.structured_content["head"] == repair["rid"]
                assert fabricated["text"] not in claims_of(ctx)
                assert len(ctx.structured_content["spans"]) == 140

                # 2. A faithful compaction with a stripped hedge: admitted, the claim flagged.
                r = await s.call_tool("propose_compaction", {"stream": "agent", "covers": ["turn:0..turn:59"], "evicts": ["turn:0..turn:59"], "claims": [drop, libfoo, port], "self_score": 0.93})
                assert r.structured_content["verdict"] == "admitted", text(r)
                ctx = await s.call_tool("context", {"stream": "agent", "budget": 2000})
                c = claims_of(ctx)
                assert c[drop["text"]]["status"] == "verified"
                assert c[port["text"]]["status"] != "verified"
                assert "hedge-stripped" in c[port["text"]]["flags"]
                assert "[unverified, user-said, hedge-stripped] the staging DB is on port 5433" in text(ctx)
                assert fabricated["text"] not in c
                assert all(sp["turn"] >= 60 for sp in ctx.structured_content["spans"])
                head = ctx.structured_content["head"]

                # 3. A compaction that drops the pinned prohibition: refused; its repair, which
                # carries the pinned items word for word, is the head instead.
                r = await s.call_tool("propose_compaction", {"stream": "agent", "covers": ["turn:60..turn:119"], "evicts": ["turn:60..turn:119"], "claims": [
                    {"text": "module m61 parses the config section 61", "origin": "inferred", "witnesses": ["turn:61"]},
                ]})
                assert r.structured_content["verdict"] == "refused", text(r)
                assert "pin-loss" in {f["gate"] for f in r.structured_content["findings"]}
                repair = r.structured_content["repair"]
                assert repair["verdict"] == "admitted", text(r)
                assert "DROP TABLE" in repair["text"], text(r)
                ctx = await s.call_tool("context", {"stream": "agent", "budget": 2000})
                assert ctx.structured_content["head"] == repair["rid"] != head

                # An irreversible action against the pinned prohibition is refused.
                r = await s.call_tool("check_action", {"stream": "agent", "text": "DROP TABLE users", "irreversible": True})
                assert r.structured_content["verdict"] == "refused", text(r)
                assert "prohibited-action" in {f["gate"] for f in r.structured_content["findings"]}

                # The fabricated claim is never verified anywhere: recall finds it as refused.
                r = await s.call_tool("recall", {"query": "libfoo upgraded 2.4.0", "stream": "agent"})
                hits = [h for h in r.structured_content["hits"] if h["kind"] == "claim" and h["text"] == fabricated["text"]]
                assert hits and all(h["status"] != "verified" and not h["admitted"] for h in hits), r.structured_content

                # Why explains the flagged claim back to its turn.
                r = await s.call_tool("why", {"claim": c[port["text"]]["rid"]})
                assert "turn 20" in text(r) or "turn:20" in text(r), text(r)

    run(go())
