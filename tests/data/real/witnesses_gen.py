#!/usr/bin/env python3
"""Build the witness-finder set (witnesses_dev.jsonl / witnesses_test.jsonl).

Each item is one sentence of a hand-written faithful summary claim together with
every span (turn) of the real dialogue it summarises; `answer` is the position of
the span that supports it (the claim row's own witness, matched verbatim).

Inputs (read only):
  - claims_dev.jsonl and claims_test.jsonl in this directory; only rows with
    label == "faithful" become items. claims_fresh.jsonl / turns_fresh.jsonl are
    NOT read.
  - the source files, read with `git show COMMIT:PATH` from the local snapshots
    /work/.mirror/<owner>+<name>/repo (or --mirror DIR), at the commit recorded in
    each claim row. Every dialogue is rebuilt whole from its source file:
      * ConvLab/ConvLab-3 multiwoz21 dummy_data.json: the dialogue whose
        original_id (or dialogue_id) is the claim's dialogue; `turns` in order;
        user -> user, system -> assistant.
      * google-research-datasets/dstc8-schema-guided-dialogue: dialogue
        "<split>:<dialogue_id>"; `turns` in order; USER -> user, SYSTEM -> assistant.
      * asappresearch/abcd data/abcd_sample.json: convo_id; `original` in order;
        customer -> user, agent -> assistant, action -> tool.
      * sierra-research/tau2-bench tasks: dialogue "<domain>:<task id>"; the
        fields of user_scenario.instructions as system spans in the order of
        SOURCES.md: reason_for_call, task_instructions, known_info, unknown_info
        (empty/null fields skipped).
      * Aider-AI/aider chat-history.md and website examples: the segmentation of
        SOURCES.md source 1 (see segment_aider below). It reproduces the turn
        index of all 270 aider claim rows of DEV and TEST.
  Span texts are the verbatim source texts (for aider: a substring of the .md file).

`answer` is the position of the claim row's own witness turn (source.turn);
`answers` lists every position whose text is identical to the witness (more than
one only where a real transcript repeats the same text, e.g. a re-sent prompt);
a finder that returns any of them has found the witness.

Checks (the script exits non-zero if one fails):
  - for every claims_dev/test row (faithful and fabricated) of a rebuilt dialogue,
    the span at source.turn has the row's witness text and role, and every
    context text of the row is among the spans;
  - every answer span text equals the claim's witness text;
  - every item has >= 4 spans;
  - no dialogue is in both output splits.
Items are dropped (and counted) when their dialogue has fewer than 4 spans or the
witness text is not among the spans.

Split: by dialogue. Dialogue keys (repo, path, dialogue) are grouped by source,
sorted, and shuffled with random.Random(SEED); walking that order, each dialogue
goes to the split that so far holds fewer items of its source (ties -> test), so
each source is cut roughly in half. The output is deterministic.

Usage: python3 witnesses_gen.py [--mirror DIR] [--out DIR]
"""
import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261202
MIN_SPANS = 4
TAU2_FIELDS = ("reason_for_call", "task_instructions", "known_info", "unknown_info")


# ---------------------------------------------------------------- sources
class Mirror:
    def __init__(self, root):
        self.root, self.cache = root, {}

    def text(self, repo, commit, path):
        key = (repo, commit, path)
        if key not in self.cache:
            gitdir = os.path.join(self.root, repo.replace("/", "+"), "repo")
            if not os.path.isdir(gitdir):
                raise SystemExit(f"missing snapshot {gitdir} (needed for {repo})")
            out = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                                 check=True, capture_output=True).stdout
            self.cache[key] = out.decode("utf-8")
        return self.cache[key]

    def json(self, repo, commit, path):
        key = ("json", repo, commit, path)
        if key not in self.cache:
            self.cache[key] = json.loads(self.text(repo, commit, path))
        return self.cache[key]


def segment_aider(lines):
    """SOURCES.md source 1: maximal runs of `#### ` lines are a user turn and runs of
    `> ` (or bare `>`) lines a tool turn, both ended by a blank line; other non-blank
    lines form an assistant turn (blank lines kept inside it); `<div...>` lines
    separate turns. `</div...>` lines do not separate turns: outside an assistant turn
    they are skipped, inside one they stay in its text (trailing ones are cut).
    The first line's `#### `/`> ` prefix is removed and trailing whitespace stripped,
    so every text is a substring of the file. Returns [(role, text)]."""
    turns, cur = [], None

    def flush():
        nonlocal cur
        if cur is not None:
            role, ls = cur
            while ls and (ls[-1].strip() == "" or (role == "assistant" and ls[-1].startswith("</div"))):
                ls.pop()
            if ls:
                first = ls[0]
                if role == "user":
                    first = first[5:] if first.startswith("#### ") else first[4:]
                elif role == "tool":
                    first = first[2:] if first.startswith("> ") else first[1:]
                text = "\n".join([first] + ls[1:]).rstrip()
                if text:
                    turns.append((role, text))
        cur = None

    for ln in lines:
        if ln.startswith("<div"):
            flush()
            continue
        if ln.startswith("</div"):
            if cur is not None and cur[0] == "assistant":
                cur[1].append(ln)
            continue
        if ln.startswith("#### ") or ln == "####":
            kind = "user"
        elif ln.startswith("> ") or ln == ">":
            kind = "tool"
        elif ln.strip() == "":
            if cur is not None:
                if cur[0] == "assistant":
                    cur[1].append(ln)
                else:
                    flush()
            continue
        else:
            kind = "assistant"
        if cur is not None and cur[0] == kind:
            cur[1].append(ln)
        else:
            flush()
            cur = [kind, [ln]]
    flush()
    return turns


def aider_sessions(raw):
    """Split chat-history.md at `# aider chat started at` lines; key = 1-based number."""
    sess, n, cur = {}, 0, None
    for ln in raw.split("\n"):
        if ln.startswith("# aider chat started at"):
            n += 1
            ts = ln[len("# aider chat started at"):].strip()
            cur = sess[n] = {"id": f"chat-history#{n:04d}@{ts}", "lines": []}
            continue
        if cur is not None:
            cur["lines"].append(ln)
    return sess


def rebuild(mirror, repo, path, commit, dialogue):
    """Return the dialogue's spans [(orig_index, role, text)] in order, or None."""
    if repo == "Aider-AI/aider":
        raw = mirror.text(repo, commit, path)
        if dialogue.startswith("example:"):
            segs = segment_aider(raw.split("\n"))
        else:
            m = re.match(r"chat-history#(\d+)@", dialogue)
            sess = aider_sessions(raw).get(int(m.group(1))) if m else None
            if sess is None or sess["id"] != dialogue:
                return None
            segs = segment_aider(sess["lines"])
        return [(i, r, t) for i, (r, t) in enumerate(segs)]
    if repo == "ConvLab/ConvLab-3":
        for d in mirror.json(repo, commit, path):
            if dialogue in (d.get("original_id"), d.get("dialogue_id")):
                role = {"user": "user", "system": "assistant"}
                return [(i, role[t["speaker"]], t["utterance"]) for i, t in enumerate(d["turns"])]
        return None
    if repo == "google-research-datasets/dstc8-schema-guided-dialogue":
        did = dialogue.split(":", 1)[1]
        for d in mirror.json(repo, commit, path):
            if d["dialogue_id"] == did:
                role = {"USER": "user", "SYSTEM": "assistant"}
                return [(i, role[t["speaker"]], t["utterance"]) for i, t in enumerate(d["turns"])]
        return None
    if repo == "asappresearch/abcd":
        for d in mirror.json(repo, commit, path):
            if str(d["convo_id"]) == str(dialogue):
                role = {"customer": "user", "agent": "assistant", "action": "tool"}
                return [(i, role[sp], t) for i, (sp, t) in enumerate(d["original"])]
        return None
    if repo == "sierra-research/tau2-bench":
        tid = dialogue.split(":", 1)[1]
        for task in mirror.json(repo, commit, path):
            if str(task["id"]) == tid:
                ins = task["user_scenario"]["instructions"]
                return [(i, "system", ins[f]) for i, f in enumerate(TAU2_FIELDS)
                        if isinstance(ins.get(f), str) and ins[f].strip()]
        return None
    return None


def source_group(repo, path):
    if repo == "Aider-AI/aider":
        return "aider/chat-history" if path.endswith("chat-history.md") else "aider/examples"
    if repo == "ConvLab/ConvLab-3":
        return "convlab/" + path.split("/")[-2]
    if repo == "sierra-research/tau2-bench":
        return "tau2/" + path.split("/")[-2]
    return {"asappresearch/abcd": "abcd",
            "google-research-datasets/dstc8-schema-guided-dialogue": "sgd"}[repo]


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    mirror = Mirror(a.mirror)
    errors = []

    rows = []
    for split in ("dev", "test"):            # never claims_fresh.jsonl
        with open(os.path.join(HERE, f"claims_{split}.jsonl"), encoding="utf-8") as fh:
            rows += [json.loads(line) for line in fh if line.strip()]

    by_dlg = collections.OrderedDict()
    for r in rows:
        s = r["source"]
        by_dlg.setdefault((s["repo"], s["path"], s["dialogue"]), []).append(r)

    items, dropped = [], collections.Counter()
    spans_of = {}
    for key, drows in by_dlg.items():
        repo, path, dialogue = key
        commits = {r["source"]["commit"] for r in drows}
        if len(commits) != 1:
            errors.append(f"{key}: several commits {sorted(commits)}")
            continue
        commit = commits.pop()
        spans = rebuild(mirror, repo, path, commit, dialogue)
        if spans is None:
            errors.append(f"{key}: dialogue not found in the source")
            continue
        pos_of = {orig: pos for pos, (orig, _, _) in enumerate(spans)}
        texts = [t for _, _, t in spans]
        out_spans = [{"turn": pos, "role": role, "text": text} for pos, (_, role, text) in enumerate(spans)]
        spans_of[key] = out_spans
        # consistency: every claim row of this dialogue (any label) sits where it says
        for r in drows:
            t = r["source"]["turn"]
            p = pos_of.get(t)
            if p is None or texts[p] != r["witness"]["text"] or out_spans[p]["role"] != r["witness"]["role"]:
                errors.append(f"{r['id']}: span {t} of {dialogue} does not hold its witness")
            for c in r.get("context", []):
                if c["text"] not in texts:
                    errors.append(f"{r['id']}: context text not among the spans of {dialogue}")
        for r in drows:
            if r["label"] != "faithful":
                continue
            if len(out_spans) < MIN_SPANS:
                dropped["fewer than %d spans" % MIN_SPANS] += 1
                continue
            p = pos_of.get(r["source"]["turn"])
            if p is None or texts[p] != r["witness"]["text"]:
                hits = [i for i, x in enumerate(texts) if x == r["witness"]["text"]]
                if not hits:
                    dropped["witness not among the spans"] += 1
                    continue
                p = hits[0]
            answers = [i for i, x in enumerate(texts) if x == r["witness"]["text"]]
            items.append({
                "id": r["id"],
                "sentence": r["claim"],
                "origin": r["origin"],
                "spans": out_spans,
                "answer": p,
                "answers": answers,
                "source": {"repo": repo, "path": path, "commit": commit, "dialogue": dialogue},
                "_key": key,
                "_group": source_group(repo, path),
            })

    # ------------------------------------------------------------ split by dialogue
    n_items = collections.Counter(it["_key"] for it in items)
    groups = collections.defaultdict(list)
    for k in n_items:
        groups[source_group(k[0], k[1])].append(k)
    rng = random.Random(SEED)
    assign = {}
    for g in sorted(groups):
        keys = sorted(groups[g])
        rng.shuffle(keys)
        have = {"test": 0, "dev": 0}
        for k in keys:
            sp = "test" if have["test"] <= have["dev"] else "dev"
            assign[k] = sp
            have[sp] += n_items[k]

    out = {"dev": [], "test": []}
    for it in sorted(items, key=lambda x: x["id"]):
        sp = assign[it["_key"]]
        rec = {"id": it["id"], "split": sp, "sentence": it["sentence"], "origin": it["origin"],
               "spans": it["spans"], "answer": it["answer"], "answers": it["answers"],
               "source": it["source"]}
        # checks
        wtext = next(r for r in rows if r["id"] == it["id"])["witness"]["text"]
        if any(rec["spans"][a]["text"] != wtext for a in [rec["answer"]] + rec["answers"]) \
                or rec["answer"] not in rec["answers"]:
            errors.append(f"{it['id']}: answer text differs from the witness")
        if len(rec["spans"]) < MIN_SPANS:
            errors.append(f"{it['id']}: fewer than {MIN_SPANS} spans")
        if [s["turn"] for s in rec["spans"]] != list(range(len(rec["spans"]))):
            errors.append(f"{it['id']}: turns not 0..n-1")
        out[sp].append(rec)
    dl = {sp: {(r["source"]["repo"], r["source"]["path"], r["source"]["dialogue"]) for r in out[sp]} for sp in out}
    if dl["dev"] & dl["test"]:
        errors.append(f"dialogues in both splits: {sorted(dl['dev'] & dl['test'])}")

    if errors:
        for e in errors:
            print("ERROR:", e, file=sys.stderr)
        sys.exit(1)

    for sp in ("dev", "test"):
        with open(os.path.join(a.out, f"witnesses_{sp}.jsonl"), "w", encoding="utf-8") as fh:
            for rec in out[sp]:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    # ------------------------------------------------------------ report
    faithful = sum(1 for r in rows if r["label"] == "faithful")
    print(f"faithful claim rows: {faithful}; items: {len(items)}; dropped: {dict(dropped) or 0}")
    print("| source | dev items | dev dialogues | test items | test dialogues | mean spans/item |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    allg = sorted({it["_group"] for it in items})
    for g in allg + ["all"]:
        cells = []
        for sp in ("dev", "test"):
            recs = [r for r in out[sp] if g == "all" or source_group(r["source"]["repo"], r["source"]["path"]) == g]
            cells += [len(recs), len({r["source"]["dialogue"] + r["source"]["path"] for r in recs})]
        recs = [r for sp in out for r in out[sp] if g == "all" or source_group(r["source"]["repo"], r["source"]["path"]) == g]
        mean = sum(len(r["spans"]) for r in recs) / len(recs)
        print(f"| {g} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {mean:.1f} |")
    for sp in ("dev", "test"):
        recs = out[sp]
        print(f"{sp}: {len(recs)} items, mean spans/item {sum(len(r['spans']) for r in recs) / len(recs):.2f}, "
              f"median {sorted(len(r['spans']) for r in recs)[len(recs) // 2]}, "
              f"max {max(len(r['spans']) for r in recs)}")


if __name__ == "__main__":
    main()
