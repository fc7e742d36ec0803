#!/usr/bin/env python3
"""Validate claims_test.jsonl / claims_dev.jsonl / claims_fresh.jsonl in this directory.

Checks: every line parses; ids are unique; fields and labels are consistent;
witness texts are under 2,000 characters; no dialogue appears in two splits
(TEST/DEV, and the held-out FRESH split against both); no FRESH witness text is
also a witness in DEV or TEST; the per-kind minimum counts hold; and (when the
source snapshots are available) every witness and context text is verbatim in
its source file at the recorded commit.

Sources are read with `git show COMMIT:PATH` from a snapshot directory
(default /work/.mirror/<owner>+<name>/repo, as laid down by the search tool's
fetch), or from --sources DIR laid out as DIR/<owner>+<name>/<path>.  A text
counts as verbatim when it is a substring of the raw file, or, for JSON
sources, when its JSON-escaped form is a substring of the raw file (the text is
a JSON string value there).

Usage: python3 validate_claims.py [--sources DIR] [--mirror DIR] [--no-source-check]
Prints a counts table; exits non-zero on any failure.
"""
import argparse
import collections
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["negation", "dropped-negation", "antonym", "event-swap", "name-swap",
         "number-swap", "time-swap", "code-swap", "item-swap", "order-swap",
         "role-swap", "invented"]
FAITHFUL_KINDS = ["paraphrase", "negated-paraphrase", "number-kept", "name-kept",
                  "restated-prohibition", "role-attributed"]
ROLES = {"user", "assistant", "tool", "system"}
ORIGIN = {"user": "user-said", "tool": "tool-output", "assistant": "inferred", "system": "inferred"}
SPLITS = ("test", "dev", "fresh")
MIN_FAB = {"test": 10, "dev": 5, "fresh": 6}              # per fabricated kind
MIN_FAITHFUL = {"test": 120, "dev": 60, "fresh": 110}     # all faithful
MIN_FAB_TOTAL = {"test": 0, "dev": 0, "fresh": 110}       # all fabricated
MIN_FAITHFUL_KIND = {"fresh": 8}                          # per faithful_kind (an error; elsewhere a warning under 10)


def load(split, errors):
    recs = []
    path = os.path.join(HERE, f"claims_{split}.jsonl")
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                errors.append(f"{path}:{n}: does not parse: {e}")
    return recs


def check_record(r, split, errors):
    rid = r.get("id", "?")
    for f in ("id", "split", "kind", "label", "claim", "origin", "witness", "source"):
        if f not in r:
            errors.append(f"{rid}: missing field {f}")
            return
    if r["split"] != split:
        errors.append(f"{rid}: split {r['split']} in claims_{split}.jsonl")
    k = r["kind"]
    if k == "faithful":
        if r["label"] != "faithful" or r.get("faithful_kind") not in FAITHFUL_KINDS:
            errors.append(f"{rid}: faithful record needs label faithful and a faithful_kind")
    elif k in KINDS:
        if r["label"] != "fabricated" or "faithful_kind" in r:
            errors.append(f"{rid}: fabricated record has a bad label or a faithful_kind")
    else:
        errors.append(f"{rid}: unknown kind {k}")
    w = r["witness"]
    if w.get("role") not in ROLES or not isinstance(w.get("text"), str) or not w["text"]:
        errors.append(f"{rid}: bad witness")
        return
    if len(w["text"]) >= 2000:
        errors.append(f"{rid}: witness is {len(w['text'])} characters")
    if r["origin"] != ORIGIN[w["role"]]:
        errors.append(f"{rid}: origin {r['origin']} does not fit witness role {w['role']}")
    if len(r.get("context", [])) > 3:
        errors.append(f"{rid}: more than 3 context turns")
    s = r["source"]
    for f in ("repo", "path", "commit", "dialogue", "turn"):
        if f not in s:
            errors.append(f"{rid}: source lacks {f}")


class Sources:
    def __init__(self, sources_dir, mirror_dir):
        self.sources_dir, self.mirror_dir, self.cache = sources_dir, mirror_dir, {}

    def raw(self, repo, path, commit):
        key = (repo, path, commit)
        if key in self.cache:
            return self.cache[key]
        data = None
        slug = repo.replace("/", "+")
        if self.sources_dir:
            p = os.path.join(self.sources_dir, slug, path)
            if os.path.exists(p):
                data = open(p, "rb").read()
        if data is None:
            gitdir = os.path.join(self.mirror_dir, slug, "repo")
            if os.path.isdir(gitdir):
                try:
                    data = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{path}"],
                                          check=True, capture_output=True).stdout
                except subprocess.CalledProcessError:
                    data = None
        if data is not None and path.endswith(".gz"):
            data = gzip.decompress(data)
        text = data.decode("utf-8") if data is not None else None
        self.cache[key] = text
        return text

    @staticmethod
    def verbatim(text, raw, is_json):
        if text in raw:
            return True
        if is_json:
            for ascii_ in (True, False):
                if json.dumps(text, ensure_ascii=ascii_)[1:-1] in raw:
                    return True
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sources", default=None)
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--no-source-check", action="store_true")
    a = ap.parse_args()
    errors, warnings = [], []
    data = {sp: load(sp, errors) for sp in SPLITS}
    ids = collections.Counter(r.get("id") for sp in data for r in data[sp])
    errors += [f"duplicate id {i}" for i, c in ids.items() if c > 1]
    for sp in data:
        for r in data[sp]:
            check_record(r, sp, errors)
    dlg = {sp: {(r["source"]["repo"], r["source"]["dialogue"]) for r in data[sp]} for sp in data}
    errors += [f"dialogue in both splits: {d}" for d in dlg["test"] & dlg["dev"]]
    for other in ("test", "dev"):
        errors += [f"fresh dialogue also in {other}: {d}" for d in sorted(dlg["fresh"] & dlg[other])]
    old_witness = {r["witness"]["text"] for sp in ("test", "dev") for r in data[sp] if "witness" in r}
    errors += [f"{r['id']}: fresh witness text is also a DEV/TEST witness"
               for r in data["fresh"] if r.get("witness", {}).get("text") in old_witness]

    counts = {sp: collections.Counter(r["kind"] if r["kind"] != "faithful" else "faithful:" + r["faithful_kind"]
                                      for r in data[sp]) for sp in data}
    for sp in data:
        for k in KINDS:
            if counts[sp][k] < MIN_FAB[sp]:
                errors.append(f"{sp}: {k} has {counts[sp][k]} < {MIN_FAB[sp]}")
        nf = sum(counts[sp]["faithful:" + k] for k in FAITHFUL_KINDS)
        if nf < MIN_FAITHFUL[sp]:
            errors.append(f"{sp}: {nf} faithful < {MIN_FAITHFUL[sp]}")
        nfab = sum(counts[sp][k] for k in KINDS)
        if nfab < MIN_FAB_TOTAL[sp]:
            errors.append(f"{sp}: {nfab} fabricated < {MIN_FAB_TOTAL[sp]}")
        for k in FAITHFUL_KINDS:
            if sp in MIN_FAITHFUL_KIND and counts[sp]["faithful:" + k] < MIN_FAITHFUL_KIND[sp]:
                errors.append(f"{sp}: faithful_kind {k} has {counts[sp]['faithful:' + k]} < {MIN_FAITHFUL_KIND[sp]}")
            elif counts[sp]["faithful:" + k] < 10:
                warnings.append(f"{sp}: faithful_kind {k} has only {counts[sp]['faithful:' + k]}")

    checked = unverifiable = 0
    if not a.no_source_check:
        src = Sources(a.sources, a.mirror)
        for sp in data:
            for r in data[sp]:
                s = r["source"]
                raw = src.raw(s["repo"], s["path"], s["commit"])
                if raw is None:
                    unverifiable += 1
                    continue
                is_json = s["path"].endswith(".json") or s["path"].endswith(".json.gz")
                for t in [r["witness"]["text"]] + [c["text"] for c in r.get("context", [])]:
                    checked += 1
                    if not src.verbatim(t, raw, is_json):
                        errors.append(f"{r['id']}: text not verbatim in {s['repo']}:{s['path']}@{s['commit'][:10]}: {t[:60]!r}")
        if unverifiable:
            warnings.append(f"{unverifiable} records: source snapshot not available, verbatim check skipped")

    width = max(len(k) for k in KINDS + ["faithful:" + k for k in FAITHFUL_KINDS])
    print(f"{'kind':<{width}}" + "".join(f"  {sp:>5}" for sp in SPLITS))
    for k in KINDS + ["faithful:" + k for k in FAITHFUL_KINDS]:
        print(f"{k:<{width}}" + "".join(f"  {counts[sp][k]:>5}" for sp in SPLITS))
    print(f"{'total':<{width}}" + "".join(f"  {len(data[sp]):>5}" for sp in SPLITS))
    print(f"verbatim checks passed: {checked - sum(1 for e in errors if 'not verbatim' in e)}/{checked}")
    for w_ in warnings:
        print("warning:", w_)
    for e in errors:
        print("ERROR:", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
