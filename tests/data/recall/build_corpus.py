#!/usr/bin/env python3
"""Rebuild corpus.jsonl from the bare git mirrors of the source repositories.

    python3 build_corpus.py [--mirrors /work/.mirror] [--out corpus.jsonl]

Every span text is copied verbatim from the file at the pinned commit (see README.md for the
segmentation rules). Turns over 4,000 characters are dropped and the remaining turns of each
stream are numbered 0, 1, 2, ... in source order. Only the standard library is used.
"""
import argparse
import json
import os
import re
import subprocess

MAX_CHARS = 4000

AIDER = ("Aider-AI/aider", "5dc9490bb35f9729ef2c95d00a19ccd30c26339c")
MINSKY = ("edobry/minsky", "2d0f5d07ebe40b8b2245be819c49558147c3cad8")
CONVLAB = ("ConvLab/ConvLab-3", "2a168fc9843e54a468ddec71e001b7559c36aff4")
ABCD = ("asappresearch/abcd", "6b8700ce67c6b37b062dd7a60abc76d7ef832a97")

CHAT_HISTORY = "tests/fixtures/chat-history.md"

# (stream, source kind, path, dialogue selector)
STREAMS = [
    ("aider-0013", "aider-session", CHAT_HISTORY, 13),
    ("aider-0349", "aider-session", CHAT_HISTORY, 349),
    ("aider-0424", "aider-session", CHAT_HISTORY, 424),
    ("aider-0618", "aider-session", CHAT_HISTORY, 618),
    ("aider-0647", "aider-session", CHAT_HISTORY, 647),
    ("aider-0748", "aider-session", CHAT_HISTORY, 748),
    ("aider-pong", "aider-example", "aider/website/examples/pong.md", None),
    ("aider-census", "aider-example", "aider/website/examples/census.md", None),
    ("minsky-backlog", "minsky", ".specstory/history/2025-04-28_16-22-backlog-task-inquiry.md", None),
    ("minsky-pr", "minsky", ".specstory/history/2025-04-29_16-46-debugging-pr-command-logic.md", None),
    ("minsky-rules", "minsky", ".specstory/history/2025-05-01_20-45-existing-guidelines-for-cursor-rules.md", None),
    ("mwoz-pmul1690", "convlab", "data/unified_datasets/multiwoz21/dummy_data.json", "multiwoz21-train-5"),
    ("mwoz-mul2395", "convlab", "data/unified_datasets/multiwoz21/dummy_data.json", "multiwoz21-train-6"),
    ("mwoz-mul2105", "convlab", "data/unified_datasets/multiwoz21/dummy_data.json", "multiwoz21-train-4"),
    ("sgd-1-00001", "convlab", "data/unified_datasets/sgd/dummy_data.json", "sgd-train-1"),
    ("sgd-1-00008", "convlab", "data/unified_datasets/sgd/dummy_data.json", "sgd-train-8"),
    ("tm3-6086332d", "convlab", "data/unified_datasets/tm3/dummy_data.json", "tm3-train-4"),
    ("abcd-3592", "abcd", "data/abcd_sample.json", 3592),
    ("abcd-9489", "abcd", "data/abcd_sample.json", 9489),
]

REPO_OF = {"aider-session": AIDER, "aider-example": AIDER, "minsky": MINSKY, "convlab": CONVLAB, "abcd": ABCD}


def git_show(mirrors, repo, commit, path):
    gd = os.path.join(mirrors, repo.replace("/", "+"), "repo")
    return subprocess.run(["git", "--git-dir=" + gd, "show", f"{commit}:{path}"],
                          capture_output=True, check=True).stdout.decode("utf-8")


# --- aider chat history (same rules as tests/data/real/SOURCES.md, section 1) ---------------
def aider_sessions(text):
    out, cur = [], None
    for line in text.split("\n"):
        if line.startswith("# aider chat started at"):
            cur = [line]
            out.append(cur)
        elif cur is not None:
            cur.append(line)
    return out


def aider_blocks(lines):
    """lines[0] is the session header (or a dummy line for the examples)."""
    res, kind, buf = [], None, []

    def flush():
        nonlocal kind, buf
        if kind:
            t = "\n".join(buf).rstrip()
            if kind == "user" and t.startswith("#### "):
                t = t[5:]
            if kind == "tool":
                t = t[2:] if t.startswith("> ") else t[1:]
            res.append((kind, t))
        kind, buf = None, []

    for line in lines[1:]:
        if line.strip() == "":
            if kind == "assistant":
                buf.append(line)
            else:
                flush()
            continue
        if line.startswith("<div") or line.startswith("</div"):
            flush()
            continue
        if line.startswith("#### "):
            k = "user"
        elif line.startswith("> ") or line.rstrip() == ">":
            k = "tool"
        else:
            k = "assistant"
        if k != kind:
            flush()
            kind = k
        buf.append(line)
    flush()
    return res


# --- minsky SpecStory histories ---------------------------------------------------------------
TOOLISH = ("<details>", "Read file:", "Cancelled", "Could not resolve URI", "Error calling tool",
           "Model failed", "Model provided")


def minsky_turns(text):
    out = []
    for i, s in enumerate(text.split("\n\n---\n\n")):
        t = s.strip()
        if i == 0:  # the file header (generator comment and title) precedes the first user section
            m = re.search(r"_\*\*User\*\*_", t)
            if not m:
                continue
            t = t[m.start():]
        if t.startswith("_**User**_"):
            body = t[len("_**User**_"):].strip()
            if body:
                out.append(("user", body))
        elif t.startswith("_**Assistant**_"):
            body = t[len("_**Assistant**_"):].strip()
            if body:
                out.append(("tool" if body.startswith(TOOLISH) or body.startswith("```bash\n") else "assistant", body))
        elif t.startswith("```bash\n") or t.startswith(TOOLISH):
            out.append(("tool", t))
        elif t:
            out.append(("assistant", t))
    return out


def load(mirrors, kind, path, sel):
    repo, commit = REPO_OF[kind]
    raw = git_show(mirrors, repo, commit, path)
    if kind == "aider-session":
        return aider_blocks(aider_sessions(raw)[sel - 1])
    if kind == "aider-example":
        return aider_blocks(["(file start)"] + raw.split("\n"))
    if kind == "minsky":
        return minsky_turns(raw)
    if kind == "convlab":
        d = next(x for x in json.loads(raw) if x["dialogue_id"] == sel)
        return [({"user": "user", "system": "assistant"}[t["speaker"]], t["utterance"]) for t in d["turns"]]
    if kind == "abcd":
        d = next(x for x in json.loads(raw) if x["convo_id"] == sel)
        return [({"customer": "user", "agent": "assistant", "action": "tool"}[sp], txt) for sp, txt in d["original"]]
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--out", default=os.path.join(here, "corpus.jsonl"))
    a = ap.parse_args()
    n_lines, dropped = 0, {}
    with open(a.out, "w", encoding="utf-8") as f:
        for stream, kind, path, sel in STREAMS:
            turns = load(a.mirrors, kind, path, sel)
            kept = [(i, r, t) for i, (r, t) in enumerate(turns) if t.strip() and len(t) <= MAX_CHARS]
            dropped[stream] = [i for i, (r, t) in enumerate(turns) if not (t.strip() and len(t) <= MAX_CHARS)]
            for n, (_, role, text) in enumerate(kept):
                f.write(json.dumps({"kind": "span", "stream": stream, "turn": n, "role": role, "text": text},
                                   ensure_ascii=False) + "\n")
                n_lines += 1
            print(f"{stream}: {len(kept)} turns kept of {len(turns)}; dropped source turns {dropped[stream]}")
    print(f"{n_lines} spans in {len(STREAMS)} streams -> {a.out}")


if __name__ == "__main__":
    main()
