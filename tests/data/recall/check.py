#!/usr/bin/env python3
"""Validate the recall evaluation set: corpus.jsonl and queries.jsonl.

    python3 check.py                 # structure only (no network, no build)
    python3 check.py --sources       # also rebuild the corpus from the git mirrors
                                     # (/work/.mirror or --mirrors DIR) and compare

Checks:
  corpus.jsonl   every line parses; fields are exactly kind, stream, turn, role, text; kind is
                 "span"; stream matches [a-z0-9-]+; role is user, assistant, tool or system; text is
                 a non-empty string of at most 4,000 characters; each stream's turns are 0, 1, 2, ...
                 in file order; no stream is split across the file.
  queries.jsonl  every line parses; fields are exactly id, query, stream, relevant; ids are unique
                 and look like q001; query is a non-empty string; stream is null or a corpus stream;
                 relevant is a non-empty list of {stream, turn, grade} naming existing spans, with no
                 span listed twice, grade 1 or 2, at least one grade 2; a query scoped to a stream
                 lists only spans of that stream; at least 60 queries.
  --sources      build_corpus.py rebuilt from the mirrors gives exactly corpus.jsonl, and every
                 text of a Markdown source is a verbatim substring of its file.
Exit status 0 when everything passes, 1 otherwise.
"""
import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROLES = {"user", "assistant", "tool", "system"}
STREAM_RE = re.compile(r"^[a-z0-9-]+$")
ID_RE = re.compile(r"^q\d{3,}$")
MAX_CHARS = 4000
MIN_QUERIES = 60


def load_jsonl(path, errors):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                errors.append(f"{os.path.basename(path)}:{n}: blank line")
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                errors.append(f"{os.path.basename(path)}:{n}: not JSON ({e})")
    return rows


def check_corpus(rows, errors):
    spans = {}
    next_turn = collections.defaultdict(int)
    finished = set()
    last_stream = None
    for n, r in rows:
        where = f"corpus.jsonl:{n}"
        if not isinstance(r, dict) or set(r) != {"kind", "stream", "turn", "role", "text"}:
            errors.append(f"{where}: fields must be exactly kind, stream, turn, role, text")
            continue
        if r["kind"] != "span":
            errors.append(f"{where}: kind {r['kind']!r} is not span")
        s, t = r["stream"], r["turn"]
        if not isinstance(s, str) or not STREAM_RE.match(s):
            errors.append(f"{where}: bad stream {s!r}")
            continue
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            errors.append(f"{where}: bad turn {t!r}")
            continue
        if r["role"] not in ROLES:
            errors.append(f"{where}: bad role {r['role']!r}")
        if not isinstance(r["text"], str) or not r["text"].strip():
            errors.append(f"{where}: empty text")
        elif len(r["text"]) > MAX_CHARS:
            errors.append(f"{where}: text of {len(r['text'])} characters (over {MAX_CHARS})")
        if s != last_stream:
            if last_stream is not None:
                finished.add(last_stream)
            if s in finished:
                errors.append(f"{where}: stream {s} resumes after another stream")
            last_stream = s
        if t != next_turn[s]:
            errors.append(f"{where}: stream {s} turn {t}, expected {next_turn[s]}")
        next_turn[s] = t + 1
        if (s, t) in spans:
            errors.append(f"{where}: duplicate span {s}:{t}")
        spans[(s, t)] = r
    return spans


def check_queries(rows, spans, errors):
    streams = {s for s, _ in spans}
    ids = set()
    for n, q in rows:
        where = f"queries.jsonl:{n}"
        if not isinstance(q, dict) or set(q) != {"id", "query", "stream", "relevant"}:
            errors.append(f"{where}: fields must be exactly id, query, stream, relevant")
            continue
        qid = q["id"]
        if not isinstance(qid, str) or not ID_RE.match(qid):
            errors.append(f"{where}: bad id {qid!r}")
        elif qid in ids:
            errors.append(f"{where}: duplicate id {qid}")
        ids.add(qid)
        where = f"{where} ({qid})"
        if not isinstance(q["query"], str) or not q["query"].strip():
            errors.append(f"{where}: empty query")
        scope = q["stream"]
        if scope is not None and scope not in streams:
            errors.append(f"{where}: stream {scope!r} is not in the corpus")
        rel = q["relevant"]
        if not isinstance(rel, list) or not rel:
            errors.append(f"{where}: relevant must be a non-empty list")
            continue
        seen = set()
        for x in rel:
            if not isinstance(x, dict) or set(x) != {"stream", "turn", "grade"}:
                errors.append(f"{where}: relevant item must be exactly stream, turn, grade: {x!r}")
                continue
            key = (x["stream"], x["turn"])
            if key not in spans:
                errors.append(f"{where}: span {key[0]}:{key[1]} is not in the corpus")
            if key in seen:
                errors.append(f"{where}: span {key[0]}:{key[1]} listed twice")
            seen.add(key)
            if x["grade"] not in (1, 2) or isinstance(x["grade"], bool):
                errors.append(f"{where}: grade {x['grade']!r} not in {{1, 2}}")
            if scope is not None and x["stream"] != scope:
                errors.append(f"{where}: scoped to {scope} but lists {key[0]}:{key[1]}")
        if not any(isinstance(x, dict) and x.get("grade") == 2 for x in rel):
            errors.append(f"{where}: no grade-2 span")
    if len(ids) < MIN_QUERIES:
        errors.append(f"only {len(ids)} queries (need at least {MIN_QUERIES})")


def check_sources(corpus_path, mirrors, errors):
    sys.dont_write_bytecode = True
    sys.path.insert(0, HERE)
    import build_corpus as bc  # noqa: E402
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "corpus.jsonl")
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            sys.argv = ["build_corpus.py", "--mirrors", mirrors, "--out", out]
            bc.main()
        with open(out, encoding="utf-8") as a, open(corpus_path, encoding="utf-8") as b:
            if a.read() != b.read():
                errors.append("corpus.jsonl differs from a rebuild with build_corpus.py")
    raw_cache = {}
    by_stream = {s: (kind, path) for s, kind, path, _ in bc.STREAMS}
    n_checked = 0
    for line in open(corpus_path, encoding="utf-8"):
        r = json.loads(line)
        kind, path = by_stream[r["stream"]]
        if not path.endswith(".md"):
            continue  # JSON sources: the rebuild above compares the decoded strings
        repo, commit = bc.REPO_OF[kind]
        if path not in raw_cache:
            raw_cache[path] = bc.git_show(mirrors, repo, commit, path)
        if r["text"] not in raw_cache[path]:
            errors.append(f"{r['stream']}:{r['turn']}: text is not a substring of {repo}:{path}")
        n_checked += 1
    return n_checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", action="store_true", help="rebuild from the git mirrors and compare")
    ap.add_argument("--mirrors", default="/work/.mirror")
    a = ap.parse_args()
    errors = []
    corpus_path = os.path.join(HERE, "corpus.jsonl")
    spans = check_corpus(load_jsonl(corpus_path, errors), errors)
    qrows = load_jsonl(os.path.join(HERE, "queries.jsonl"), errors)
    check_queries(qrows, spans, errors)
    verbatim = None
    if a.sources:
        verbatim = check_sources(corpus_path, a.mirrors, errors)

    streams = collections.Counter(s for s, _ in spans)
    roles = collections.Counter(r["role"] for r in spans.values())
    qs = [q for _, q in qrows if isinstance(q, dict)]
    scoped = sum(1 for q in qs if q.get("stream") is not None)
    grades = collections.Counter(x.get("grade") for q in qs for x in q.get("relevant", []) if isinstance(x, dict))
    print(f"corpus: {len(spans)} spans in {len(streams)} streams; roles "
          + ", ".join(f"{k} {v}" for k, v in sorted(roles.items())))
    print(f"queries: {len(qs)} ({scoped} scoped to a stream, {len(qs) - scoped} global); "
          f"judgements: {grades[2]} grade 2, {grades[1]} grade 1")
    if verbatim is not None:
        print(f"sources: rebuild compared; {verbatim} Markdown-sourced texts checked verbatim")
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else f"{len(errors)} error(s)")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
