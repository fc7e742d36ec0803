"""What a Python call adds over the Rust call, for one append and one gate.

Writes a workload of JSON lines (spans, then summaries over them, then actions), runs it through
the Rust library (`cargo bench -p cairn-bench --bench calls`, each line in its own
transaction) and through the Python package (`cairn.Ledger.append`, the same), and prints the
mean time of each in microseconds and the difference. Run from the repository root with the
package installed (`bash crates/cairn-python/tests/run.sh` installs it in target/python-venv):

    target/python-venv/bin/python crates/cairn-python/bench/overhead.py [SPANS]
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile
import time

import cairn

spans = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
lines: list[dict] = []
for t in range(spans):
    text = f"turn {t}: the build of service-{t % 17} on port {5400 + t % 50} passed {t % 9} checks; version 2.{t % 7}.{t % 11}"
    lines.append({"kind": "span", "stream": "bench", "turn": t, "role": "tool" if t % 3 else "user", "text": text})
for i in range(200):
    first = (i * 10) % spans
    covered = f"turn:{first}..turn:{min(first + 9, spans - 1)}"
    lines.append({
        "kind": "summary", "stream": "bench", "author": "self", "budget": 1000 + i,
        "covers": [covered], "evicts": [],
        "claims": [{"text": f"the build of service-{first % 17} passed", "origin": "tool-output", "witnesses": [f"turn:{first + 1}"], "actionable": False}],
    })
for i in range(200):
    lines.append({"kind": "action", "stream": "bench", "text": f"systemctl restart service-{i}", "irreversible": False, "relies_on": []})



def mean(v: list[float]) -> float:
    return sum(v) / len(v)


def run(memory: bool) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "lines.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
        rust = subprocess.run(
            ["cargo", "bench", "-q", "-p", "cairn-bench", "--bench", "calls", "--", str(path)] + (["--memory"] if memory else []),
            capture_output=True, text=True, check=True,
        )
        by_rust = json.loads(rust.stdout.strip().splitlines()[-1])
        ledger = cairn.Ledger.in_memory() if memory else cairn.Ledger(pathlib.Path(d) / "py.redb")
        appends: list[float] = []
        gates: list[float] = []
        for x in lines:
            started = time.perf_counter()
            r = ledger.append(x)
            took = (time.perf_counter() - started) * 1e6
            (gates if isinstance(r, cairn.Verdict) else appends).append(took)
    return {"append_rust_us": round(by_rust["append_us"], 1), "append_python_us": round(mean(appends), 1),
            "gate_rust_us": round(by_rust["gate_us"], 1), "gate_python_us": round(mean(gates), 1),
            "appends": len(appends), "gates": len(gates)}


print(f"{'ledger':<8} {'call':<8} {'Rust us':>10} {'Python us':>10} {'added us':>10}")
figures = {}
for memory in (True, False):
    where = "memory" if memory else "file"
    f = figures[where] = run(memory)
    for call in ("append", "gate"):
        rust_us, py_us = f[f"{call}_rust_us"], f[f"{call}_python_us"]
        print(f"{where:<8} {call:<8} {rust_us:>10.1f} {py_us:>10.1f} {py_us - rust_us:>10.1f}")
print(json.dumps(figures))
