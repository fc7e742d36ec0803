"""Shared helpers of the MCP tests: the cairn binary, stdio and HTTP servers, and calls
through the official Python MCP SDK's client."""

import asyncio
import os
import re
import signal
import subprocess

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CAIRN = os.environ["CAIRN_BIN"]

TOOLS = {
    "retire",
    "record_turns",
    "propose_compaction",
    "check_action",
    "context",
    "recall",
    "why",
    "pin",
    "reground",
    "gates",
}


def text(result):
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def run(coro):
    return asyncio.run(coro)


def stdio(db):
    return stdio_client(StdioServerParameters(command=CAIRN, args=["--db", str(db), "mcp"]))


class Http:
    """A `cairn serve` process on a free loopback port."""

    def __init__(self, db, token=None, args=()):
        env = dict(os.environ)
        env.pop("CAIRN_TOKEN", None)
        if token:
            env["CAIRN_TOKEN"] = token
        self.proc = subprocess.Popen(
            [CAIRN, "--db", str(db), "serve", "--listen", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        line = self.proc.stderr.readline()
        m = re.search(r"at (http://[^ ]+/mcp)", line)
        assert m, f"cairn serve did not say where it listens: {line!r}"
        self.url = m.group(1)
        self.token = token

    def client(self, token=None):
        token = token or self.token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=20)


async def session_calls(read, write, calls):
    async with ClientSession(read, write) as s:
        await s.initialize()
        return [await s.call_tool(name, args) for name, args in calls]
