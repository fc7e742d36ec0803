#!/usr/bin/env python3
"""Validate turns_fresh.jsonl (the held-out, hand-labelled turn split) in this directory.

Checks: every line parses; every record has the fields of turns_dev.jsonl (id, split,
role, text, items, source{repo, path, commit, dialogue, turn}); ids are unique and start
with "fresh-"; split is "fresh"; the role and every item class are valid; texts are
non-empty and under 3,000 characters; every item text is a verbatim substring of its
turn text; and no (source.path, dialogue) of turns_fresh.jsonl occurs in
turns_dev.jsonl or turns_test.jsonl.  When the source snapshots are present (default
/work/.mirror/<owner>+<name>/repo, as laid down by the search tool's fetch; or --sources
DIR laid out as DIR/<owner>+<name>/<path>), it also checks that every turn text is
verbatim in its source file at the recorded commit (for JSON sources, the JSON-escaped
text is a substring of the raw file); pass --no-source-check to skip that.

Prints the counts per role and per class and the file's SHA-256.  Exits non-zero on any
failure.

Usage: python3 validate_turns.py [--file PATH] [--sources DIR] [--mirror DIR] [--no-source-check]
"""
import argparse
import collections
import hashlib
import json
import os
import sys

from validate_claims import Sources  # reads a source file from a snapshot, checks verbatim text

HERE = os.path.dirname(os.path.abspath(__file__))
ROLES = ("user", "assistant", "tool", "system")
CLASSES = ("prohibition", "commitment", "preference", "policy", "identifier", "failed-attempt")
FIELDS = ("id", "split", "role", "text", "items", "source")
SOURCE_FIELDS = ("repo", "path", "commit", "dialogue", "turn")
MAX_TEXT = 3000


def load(path, errors):
    recs = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{path}:{n}: does not parse: {e}")
                continue
            if not isinstance(r, dict):
                errors.append(f"{path}:{n}: not a JSON object")
                continue
            recs.append(r)
    return recs


def check_record(r, errors):
    rid = r.get("id", "?")
    missing = [f for f in FIELDS if f not in r]
    if missing:
        errors.append(f"{rid}: missing field(s) {', '.join(missing)}")
        return
    if not isinstance(rid, str) or not rid.startswith("fresh-"):
        errors.append(f"{rid}: id does not start with 'fresh-'")
    if r["split"] != "fresh":
        errors.append(f"{rid}: split is {r['split']!r}, not 'fresh'")
    if r["role"] not in ROLES:
        errors.append(f"{rid}: bad role {r['role']!r}")
    text = r["text"]
    if not isinstance(text, str) or not text:
        errors.append(f"{rid}: empty or non-string text")
        return
    if len(text) >= MAX_TEXT:
        errors.append(f"{rid}: text is {len(text)} characters (limit {MAX_TEXT})")
    if not isinstance(r["items"], list):
        errors.append(f"{rid}: items is not a list")
    else:
        for it in r["items"]:
            if not isinstance(it, dict) or set(it) != {"class", "text"}:
                errors.append(f"{rid}: item is not {{class, text}}: {it!r}")
                continue
            if it["class"] not in CLASSES:
                errors.append(f"{rid}: bad item class {it['class']!r}")
            if not isinstance(it["text"], str) or not it["text"]:
                errors.append(f"{rid}: empty item text")
            elif it["text"] not in text:
                errors.append(f"{rid}: item text is not a substring of the turn: {it['text'][:80]!r}")
    s = r["source"]
    if not isinstance(s, dict):
        errors.append(f"{rid}: source is not an object")
        return
    for f in SOURCE_FIELDS:
        if f not in s:
            errors.append(f"{rid}: source lacks {f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=os.path.join(HERE, "turns_fresh.jsonl"))
    ap.add_argument("--sources", default=None)
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--no-source-check", action="store_true")
    a = ap.parse_args()

    errors, warnings = [], []
    recs = load(a.file, errors)
    for r in recs:
        check_record(r, errors)
    ids = collections.Counter(r.get("id") for r in recs)
    errors += [f"duplicate id {i}" for i, c in ids.items() if c > 1]

    # Disjointness from the dev and test splits, by (source.path, dialogue).
    fresh_dlg = {(r["source"].get("path"), r["source"].get("dialogue"))
                 for r in recs if isinstance(r.get("source"), dict)}
    old_texts = set()
    for name in ("turns_dev.jsonl", "turns_test.jsonl"):
        p = os.path.join(HERE, name)
        if not os.path.exists(p):
            errors.append(f"{name} not found next to this script; cannot check disjointness")
            continue
        old = load(p, errors)
        old_dlg = {(r["source"]["path"], r["source"]["dialogue"]) for r in old}
        errors += [f"fresh dialogue also in {name}: {d}" for d in sorted(fresh_dlg & old_dlg, key=str)]
        old_texts |= {r["text"] for r in old}
    for r in recs:
        if r.get("text") in old_texts:
            warnings.append(f"{r.get('id')}: the same text is a turn of turns_dev/test.jsonl")

    # Verbatim check against the source snapshots.
    checked = verbatim = unavailable = 0
    if not a.no_source_check:
        src = Sources(a.sources, a.mirror)
        for r in recs:
            s = r.get("source")
            if not isinstance(s, dict) or not isinstance(r.get("text"), str):
                continue
            raw = src.raw(s.get("repo", ""), s.get("path", ""), s.get("commit", ""))
            if raw is None:
                unavailable += 1
                continue
            checked += 1
            if Sources.verbatim(r["text"], raw, s["path"].endswith(".json")):
                verbatim += 1
            else:
                errors.append(f"{r['id']}: text is not verbatim in {s['repo']}:{s['path']}@{s['commit'][:10]}")
        if unavailable:
            warnings.append(f"{unavailable} turn(s) not source-checked: snapshot not found "
                            f"(use --sources DIR or --mirror DIR)")

    # Counts.
    by_role = collections.Counter(r.get("role") for r in recs)
    no_item = collections.Counter(r.get("role") for r in recs if not r.get("items"))
    cls = collections.defaultdict(collections.Counter)
    for r in recs:
        for it in r.get("items") or []:
            cls[r.get("role")][it.get("class")] += 1
            cls["all"][it.get("class")] += 1
    head = ["role", "turns", "no item"] + list(CLASSES)
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for role in ROLES + ("all",):
        turns = len(recs) if role == "all" else by_role[role]
        none = sum(no_item.values()) if role == "all" else no_item[role]
        print("| " + " | ".join([role, str(turns), str(none)] + [str(cls[role][c]) for c in CLASSES]) + " |")
    repos = collections.Counter((r["source"]["repo"], r["source"]["path"]) for r in recs if isinstance(r.get("source"), dict))
    print()
    print("turns per source file:")
    for (repo, path), n in sorted(repos.items()):
        print(f"  {repo}  {path}: {n}")
    print(f"dialogues: {len(fresh_dlg)}")
    if not a.no_source_check:
        print(f"source check: {verbatim}/{checked} texts verbatim")

    with open(a.file, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    print(f"SHA-256 {os.path.basename(a.file)}: {digest}")

    for w in warnings:
        print("warning:", w)
    if errors:
        for e in errors:
            print("error:", e)
        print(f"{len(errors)} error(s)")
        sys.exit(1)
    print("no errors")


if __name__ == "__main__":
    main()
