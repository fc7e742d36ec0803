"""Two `cairn serve` processes on one PostgreSQL ledger (SPEC.md section 17), driven at once by
the official Python MCP SDK's client: turns, compactions and action checks, interleaved, in a
stream both servers write and in a stream of each server's own.

Run by the Rust test `postgres::two_servers_write_one_ledger` (crates/cairn-cli/tests), which
makes an empty database, sets CAIRN_BIN and CAIRN_PG_URL, and afterwards checks the ledger
against a single redb writer fed the same records in the server's log order.
"""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "mcp"))

from harness import Http, run, text  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

URL = os.environ["CAIRN_PG_URL"]
ROUNDS = 12


def test_two_servers_interleave_turns_and_compactions_in_shared_and_own_streams():
    servers = {"a": Http(URL), "b": Http(URL)}
    acked = {}
    verdicts = []
    try:

        async def agent(name, server):
            own = f"{name}-own"
            async with server.client() as http:
                async with streamable_http_client(server.url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        turns = {own: [], "shared": []}
                        for i in range(ROUNDS):
                            for stream in (own, "shared"):
                                said = f"{name} on {stream}, round {i}: the staging port for service m{i} is {5400 + i}."
                                if i == 0:
                                    said = f"Never run DROP TABLE on the {stream} users table. {said}"
                                r = await s.call_tool("record_turns", {
                                    "stream": stream,
                                    "idempotency_key": f"{name}-{stream}-{i}",
                                    "turns": [
                                        {"role": "user", "text": said},
                                        {"role": "tool", "text": f"ok: {name} {stream} {i}"},
                                    ],
                                })
                                assert not r.is_error, text(r)
                                for t in r.structured_content["turns"]:
                                    assert t["new"], t
                                    assert t["rid"] not in acked, f"turn rid {t['rid']} acknowledged twice"
                                    acked[t["rid"]] = (stream, t["turn"])
                                    turns[stream].append(t["turn"])
                            if i == 0:
                                r = await s.call_tool("pin", {"stream": own, "name": "constraints"})
                                assert not r.is_error, text(r)
                            # Each server compacts its own stream; server a compacts the shared one too.
                            compacted = [own] + (["shared"] if name == "a" else [])
                            if i % 4 == 3:
                                for stream in compacted:
                                    mine = turns[stream]
                                    first, last = mine[0], mine[-1]
                                    witness = mine[-2]
                                    claim = {
                                        "text": f"the staging port for service m{i} is {5400 + i}",
                                        "origin": "user-said",
                                        "witnesses": [f"turn:{witness}"],
                                    }
                                    if (i // 4) % 2 == 1:
                                        claim = {**claim, "text": f"the staging port for service m{i} is {5500 + i}"}
                                    keep = {
                                        "text": f"never run DROP TABLE on the {stream} users table",
                                        "origin": "user-said",
                                        "witnesses": [f"turn:{mine[0]}"],
                                        "actionable": True,
                                    }
                                    r = await s.call_tool("propose_compaction", {
                                        "stream": stream,
                                        "covers": [f"turn:{first}..turn:{last}"],
                                        "evicts": [],
                                        "claims": [keep, claim],
                                    })
                                    assert not r.is_error, text(r)
                                    verdict = r.structured_content["verdict"]
                                    # A wrong port is struck from an admitted compaction.
                                    if verdict == "admitted" and r.structured_content["struck"]:
                                        verdict = "struck"
                                    verdicts.append((name, stream, i, verdict))
                                r = await s.call_tool("check_action", {"stream": own, "text": f"DROP TABLE users; -- {name} {i}", "irreversible": True})
                                assert not r.is_error, text(r)
                                assert r.structured_content["verdict"] == "refused", text(r)
                                verdicts.append((name, own, i, "action refused"))
                        return turns

        async def both():
            return await asyncio.gather(agent("a", servers["a"]), agent("b", servers["b"]))

        done = run(both())
        # Each server reads what the other wrote: the shared stream holds every turn of both.
        async def read_back():
            async with servers["b"].client() as http:
                async with streamable_http_client(servers["b"].url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        return await s.call_tool("context", {"stream": "a-own", "budget": 100000})

        r = run(read_back())
        assert not r.is_error, text(r)
        assert len(r.structured_content["spans"]) == 2 * ROUNDS, text(r)
    finally:
        for server in servers.values():
            server.stop()
    shared = sorted(t for turns in done for t in turns["shared"])
    assert shared == list(range(len(shared))), "the shared stream's turns are numbered without gaps or repeats"
    admitted = sum(1 for v in verdicts if v[3] == "admitted")
    struck = sum(1 for v in verdicts if v[3] == "struck")
    assert admitted and struck, verdicts
    print(json.dumps({"turns": len(acked), "shared_turns": len(shared), "compactions_admitted": admitted, "compactions_struck": struck, "actions_refused": sum(1 for v in verdicts if v[3] == "action refused"), "rids": sorted(acked)}))
