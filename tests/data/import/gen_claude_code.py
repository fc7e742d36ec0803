#!/usr/bin/env python3
"""Writes a large Claude Code session log for the importer's scale figures (SPEC.md 5.3).

    python3 tests/data/import/gen_claude_code.py OUT.jsonl SIZE_MB

Built from the real sample shapes of this directory (SOURCES.md): the lines of
`claude-code/cipher-box-session.jsonl` (user and assistant messages, tool calls and results,
hook progress, file snapshots, system lines) are written again and again, each copy a session
of its own (a fresh `sessionId` and fresh `uuid`s), and every fourth session ends with the real
`compact_boundary` and `isCompactSummary` pair of `claude-code/cipher-box-compact-prefix.jsonl`.
Deterministic: the same size gives the same bytes.
"""

import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent


def lines(name):
    with open(HERE / name, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    limit = int(size_mb * 1024 * 1024)
    session = lines("claude-code/cipher-box-session.jsonl")
    compact = lines("claude-code/cipher-box-compact-prefix.jsonl")
    boundary = next(l for l in compact if l.get("subtype") == "compact_boundary")
    summary = next(l for l in compact if l.get("isCompactSummary"))
    written = 0
    n = 0
    ns = uuid.UUID("6f1c6a52-4d0e-4b57-9f43-0c5c2d1b7a10")
    with open(out, "w", encoding="utf-8") as f:
        while written < limit:
            sid = str(uuid.uuid5(ns, f"session-{n}"))
            copy = list(session)
            if n % 4 == 3:
                copy += [boundary, summary]
            for k, line in enumerate(copy):
                line = dict(line)
                if "sessionId" in line:
                    line["sessionId"] = sid
                if "uuid" in line:
                    line["uuid"] = str(uuid.uuid5(ns, f"{n}-{k}"))
                text = json.dumps(line, ensure_ascii=False) + "\n"
                f.write(text)
                written += len(text.encode("utf-8"))
            n += 1
    print(f"{out}: {written} bytes, {n} sessions")


if __name__ == "__main__":
    main()
