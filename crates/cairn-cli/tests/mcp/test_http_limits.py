"""`cairn serve` holds against clients that hang, flood or pretend (issue 22, rows 5 to 8): bad
bodies are answered 400 with a JSON-RPC error, sessions expire and are capped, connections
must send their headers in time and are capped, and Host and Origin match exactly."""

import json
import logging
import socket
import threading
import time
from urllib.parse import urlparse

import httpx2

from harness import Http, run, session_calls

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
HDRS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def port_of(server):
    return urlparse(server.url).port


def raw_request(server, head, body=b"", wait=5):
    """Sends bytes as they are and returns what comes back until the server closes or `wait`."""
    s = socket.create_connection(("127.0.0.1", port_of(server)), timeout=wait)
    s.sendall(head + body)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out:
                break
    except socket.timeout:
        pass
    s.close()
    return out


def request_bytes(server, host=None, extra=b"", target=b"/mcp", body=None):
    body = json.dumps(INIT).encode() if body is None else body
    host = host or f"127.0.0.1:{port_of(server)}".encode()
    return (b"POST " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n" + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n", body)


def status(reply):
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1") else None


def test_bad_bodies_get_400_with_a_json_rpc_error(tmp_path):
    server = Http(tmp_path / "h.redb")
    try:
        r = httpx2.post(server.url, content=b"{not json", headers=HDRS)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700, (r.status_code, r.text)
        r = httpx2.post(server.url, content=json.dumps({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": 3}), headers=HDRS)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32600 and r.json()["id"] == 4, r.text
        # Near miss: a good initialize is served.
        assert httpx2.post(server.url, json=INIT, headers=HDRS).status_code == 200
    finally:
        server.stop()


def test_sessions_are_capped_expire_when_idle_and_close_cleanly(tmp_path, caplog):
    server = Http(tmp_path / "s.redb", args=["--max-sessions", "2", "--session-ttl", "2"])
    try:
        ids = []
        for _ in range(2):
            r = httpx2.post(server.url, json=INIT, headers=HDRS)
            assert r.status_code == 200, r.text
            ids.append(r.headers["mcp-session-id"])
        # Cap + 1: a clear error, as JSON-RPC.
        r = httpx2.post(server.url, json=INIT, headers=HDRS)
        assert r.status_code == 503 and "limit of 2 sessions" in r.json()["error"]["message"], r.text
        # Closing one answers 204 and makes room.
        r = httpx2.delete(server.url, headers={**HDRS, "mcp-session-id": ids[0]})
        assert r.status_code == 204, r.status_code
        r = httpx2.post(server.url, json=INIT, headers=HDRS)
        assert r.status_code == 200, r.text
        # After the time to live without a request, sessions are gone and room is made.
        time.sleep(4)
        for _ in range(2):
            assert httpx2.post(server.url, json=INIT, headers=HDRS).status_code == 200
        # The SDK's own session close is not logged as a failure.
        caplog.set_level(logging.DEBUG)

        async def go():
            async with server.client() as http:
                from mcp.client.streamable_http import streamable_http_client

                async with streamable_http_client(server.url, http_client=http) as (read, write):
                    await session_calls(read, write, [("context", {"stream": "x"})])

        time.sleep(4)
        run(go())
        failures = [r.getMessage() for r in caplog.records if "terminat" in r.getMessage().lower() and r.levelno >= logging.WARNING]
        assert not failures, failures
    finally:
        server.stop()


def test_connections_must_send_headers_in_time_and_are_capped(tmp_path):
    server = Http(tmp_path / "c.redb", args=["--header-timeout", "1", "--max-connections", "2"])
    try:
        # Partial headers, then nothing: closed after the timeout, before any authentication.
        s = socket.create_connection(("127.0.0.1", port_of(server)), timeout=10)
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        got = s.recv(65536)
        took = time.monotonic() - started
        assert took < 5, f"held {took:.1f} s"
        assert got == b"" or status(got) == 408, got
        s.close()
        # Two idle connections fill the cap; a third is answered 503 at once.
        a = socket.create_connection(("127.0.0.1", port_of(server)))
        b = socket.create_connection(("127.0.0.1", port_of(server)))
        time.sleep(0.2)
        third = raw_request(server, b"", wait=3)
        assert status(third) == 503 and b"limit of 2 connections" in third, third
        a.close()
        b.close()
        # Near miss: once they are gone, a request is served.
        time.sleep(0.3)
        head, body = request_bytes(server)
        assert status(raw_request(server, head, body)) == 200
    finally:
        server.stop()


def test_host_and_origin_match_exactly(tmp_path):
    server = Http(tmp_path / "o.redb")
    port = port_of(server)
    try:
        me = f"127.0.0.1:{port}".encode()
        for head, body in [
            request_bytes(server, host=b"evil.com@" + me),
            request_bytes(server, extra=b"Host: evil.com\r\n"),
            request_bytes(server, extra=b"Origin: http://" + me + b"\r\nOrigin: http://evil.com\r\n"),
            request_bytes(server, target=b"http://evil.com/mcp"),
        ]:
            reply = raw_request(server, head, body)
            assert status(reply) == 403, (head, reply[:200])
        # Near misses: one Host, one allowed Origin, an absolute-form target naming this server.
        for head, body in [
            request_bytes(server),
            request_bytes(server, extra=b"Origin: http://" + me + b"\r\n"),
            request_bytes(server, target=b"http://" + me + b"/mcp"),
        ]:
            reply = raw_request(server, head, body)
            assert status(reply) == 200, (head, reply[:300])
    finally:
        server.stop()


def test_an_empty_or_unreadable_body_gets_400_with_a_json_rpc_error(tmp_path):
    server = Http(tmp_path / "e.redb")
    try:
        r = httpx2.post(server.url, content=b"", headers=HDRS)
        assert r.status_code == 400 and r.json()["error"]["code"] == -32700, (r.status_code, r.text)
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
        reply = raw_request(server, head, b"zz\r\n")
        assert status(reply) == 400, reply[:200]
    finally:
        server.stop()


def call(i, name, args):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def test_a_request_whose_id_is_still_in_flight_is_refused_before_anything_is_written(tmp_path):
    """Issue 37, row 12: a second request of a session with the id of one still being answered
    (here a compaction whose judge waits on the client's model, which never answers) is refused
    at once with a JSON-RPC error, and nothing of it is written. Near misses: another id is
    served meanwhile, and the id is free again once its answer is sent."""
    policy = tmp_path / "policy.toml"
    policy.write_text('judge = "sampling"\njudge_timeout_ms = 4000\n')
    server = Http(tmp_path / "f.redb", args=("--policy", str(policy)))
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"sampling": {}}}}
    try:
        with httpx2.Client(timeout=30) as c:
            r = c.post(server.url, json=init, headers=HDRS)
            h = {**HDRS, "Mcp-Session-Id": r.headers["mcp-session-id"]}
            c.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
            turn = {"stream": "s", "turns": [{"role": "user", "text": "Not right now, thanks"}]}
            assert c.post(server.url, json=call(2, "record_turns", turn), headers=h).status_code == 200
            compaction = {"stream": "s", "covers": ["turn:0"], "claims": [{"text": "The user turned the offer down for the moment.", "origin": "user-said", "witnesses": ["turn:0"]}]}
            first = {}
            waiting = threading.Thread(target=lambda: first.update(r=httpx2.post(server.url, json=call(7, "propose_compaction", compaction), headers=h, timeout=30)))
            waiting.start()
            time.sleep(1.0)
            assert waiting.is_alive(), "the compaction was to wait on the client's model"
            forged = {"stream": "s", "turns": [{"role": "user", "text": "forged turn"}]}
            dup = c.post(server.url, json=call(7, "record_turns", forged), headers=h)
            assert dup.status_code == 409, (dup.status_code, dup.text)
            assert dup.json()["id"] == 7 and dup.json()["error"]["code"] == -32600, dup.text
            assert "still being answered" in dup.json()["error"]["message"], dup.text
            other = c.post(server.url, json=call(8, "context", {"stream": "s"}), headers=h)
            assert other.status_code == 200 and "Not right now" in other.text, other.text
            assert "forged turn" not in other.text, other.text
            waiting.join(30)
            assert '"id":7' in first["r"].text.replace(" ", ""), first["r"].text
            again = c.post(server.url, json=call(7, "context", {"stream": "s"}), headers=h)
            assert again.status_code == 200 and "forged turn" not in again.text, again.text
    finally:
        server.stop()
