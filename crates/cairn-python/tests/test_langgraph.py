"""CairnStore against what LangGraph documents for BaseStore."""

from __future__ import annotations

import asyncio
import json

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

import cairn
from cairn.langgraph import CairnStore


@pytest.fixture
def store(tmp_path):
    return CairnStore(cairn.Ledger(tmp_path / "store.redb"))


def test_get_after_put_and_a_missing_key(store):
    store.put(("users", "u1"), "prefs", {"theme": "dark", "size": 3})
    item = store.get(("users", "u1"), "prefs")
    assert item.value == {"theme": "dark", "size": 3}
    assert item.namespace == ("users", "u1") and item.key == "prefs"
    assert item.created_at == item.updated_at
    assert store.get(("users", "u1"), "nope") is None
    assert store.get(("users", "u2"), "prefs") is None


def test_put_over_put_the_newest_wins_and_the_older_stays_in_history(store):
    ns = ("users", "u1")
    store.put(ns, "prefs", {"theme": "dark"})
    first = store.get(ns, "prefs")
    store.put(ns, "prefs", {"theme": "light"})
    store.put(ns, "prefs", {"theme": "dark"})  # the same value again is a new version
    item = store.get(ns, "prefs")
    assert item.value == {"theme": "dark"}
    assert item.created_at == first.created_at and item.updated_at >= first.updated_at
    assert [v.value["theme"] for v in store.history(ns, "prefs")] == ["dark", "light", "dark"]


def test_delete_is_a_tombstone_and_the_history_stays(store):
    ns = ("docs",)
    store.put(ns, "a", {"text": "first draft"})
    size = len(store.ledger)
    store.delete(ns, "a")
    assert store.get(ns, "a") is None
    assert len(store.ledger) == size + 1, "a delete appends, it removes nothing"
    history = store.history(ns, "a")
    assert history[0] is None and history[1].value == {"text": "first draft"}
    # Deleting what is not there appends nothing; putting again starts the key anew.
    store.delete(ns, "a")
    assert len(store.ledger) == size + 1
    store.put(ns, "a", {"text": "second"})
    assert store.get(ns, "a").value == {"text": "second"}
    assert store.search(("docs",)) and store.ledger.verify().ok


def test_search_by_namespace_prefix_with_filter_limit_and_offset(store):
    for i in range(6):
        store.put(("docs", "team", f"p{i % 2}"), f"d{i}", {"kind": "report" if i % 2 else "note", "n": i})
    store.put(("other",), "x", {"kind": "report", "n": 99})
    everything = store.search(("docs",), limit=100)
    assert len(everything) == 6 and all(i.namespace[0] == "docs" for i in everything)
    reports = store.search(("docs",), filter={"kind": "report"}, limit=100)
    assert sorted(i.value["n"] for i in reports) == [1, 3, 5]
    assert [i.value["n"] for i in store.search(("docs",), filter={"n": {"$gte": 4}}, limit=100)] == [4, 5]
    assert [i.value["n"] for i in store.search(("docs",), filter={"n": {"$ne": 0}, "kind": "note"}, limit=100)] == [2, 4]
    page = store.search(("docs",), limit=2, offset=1)
    assert [i.key for i in page] == [i.key for i in everything[1:3]]
    assert store.search(("docs", "team", "p1"), limit=100) == [i for i in everything if i.namespace[-1] == "p1"]
    assert store.search(("nothing",)) == []


def test_search_with_a_query_ranks_by_recall_and_sees_only_current_versions(store):
    store.put(("mem", "u1"), "a", {"text": "the user prefers dark mode in the editor"})
    store.put(("mem", "u1"), "b", {"text": "deploys go out on Tuesdays"})
    store.put(("mem", "u2"), "c", {"text": "dark chocolate is the favourite"})
    store.put(("mem", "u1"), "d", {"text": "dark mode"}, index=False)
    hits = store.search(("mem",), query="dark mode")
    assert [h.key for h in hits][:1] == ["a"] and "d" not in [h.key for h in hits]
    assert hits[0].score and hits[0].score > 0
    assert [h.key for h in store.search(("mem", "u1"), query="dark")] == ["a"]
    # The key's old text is not an answer once it is replaced.
    store.put(("mem", "u1"), "a", {"text": "the user switched to light themes"})
    assert "a" not in [h.key for h in store.search(("mem",), query="dark mode")]
    assert [h.key for h in store.search(("mem",), query="light")] == ["a"]
    # Indexing only some fields.
    store.put(("mem", "u3"), "e", {"title": "zebra", "body": "okapi"}, index=["title"])
    assert [h.key for h in store.search(("mem",), query="zebra")] == ["e"]
    assert store.search(("mem",), query="okapi") == []


def test_entries_never_enter_an_agents_context_or_recall(store):
    ledger = store.ledger
    ledger.record_turns("agent", [cairn.Turn("user", "we talk about dark mode here")])
    store.put(("mem",), "a", {"text": "dark mode preferred"})
    hits = ledger.recall("dark mode")
    assert [h.kind for h in hits.hits] == ["span"]
    assert all("preferred" not in s.text for s in ledger.context("agent").spans)
    # The entry is a record of its own kind in the ledger.
    rid = json.loads(ledger._native.entry_get(["mem"], "a"))["rid"]
    assert ledger.get(rid).kind == "entry" and ledger.get(rid).fields["namespace"] == ["mem"]


def test_list_namespaces_with_prefix_suffix_depth_limit_and_offset(store):
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "b", "c")]:
        store.put(ns, "k", {"v": 1})
    store.put(("gone",), "k", {"v": 1})
    store.delete(("gone",), "k")
    assert store.list_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("x", "b", "c")]
    assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"), ("a", "e")]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("x", "b", "c")]
    assert store.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d"), ("x", "b", "c")]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "e"), ("x", "b")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "e")]
    ops = [ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("a",)), MatchCondition("suffix", ("d",))))]
    assert store.batch(ops) == [[("a", "b", "d")]]


def test_batch_and_the_async_twins(store):
    ns = ("async",)
    results = store.batch([PutOp(ns, "k", {"v": 1}), GetOp(ns, "k"), SearchOp(ns), GetOp(ns, "missing")])
    assert results[0] is None and results[1].value == {"v": 1} and len(results[2]) == 1 and results[3] is None

    async def run():
        await store.aput(ns, "k2", {"v": 2, "text": "asynchronous write"})
        got = await store.aget(ns, "k2")
        found = await store.asearch(ns, query="asynchronous")
        spaces = await store.alist_namespaces(prefix=("async",))
        await store.adelete(ns, "k2")
        return got, found, spaces, await store.aget(ns, "k2")

    got, found, spaces, after = asyncio.run(run())
    assert got.value["v"] == 2 and [f.key for f in found] == ["k2"] and spaces == [ns] and after is None


def test_bad_namespaces_and_values_are_refused(store):
    with pytest.raises(ValueError):
        store.put((), "k", {"v": 1})
    with pytest.raises(ValueError):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(cairn.InvalidInput, match="U\\+001F"):
        store.put(("a\x1fb",), "k", {"v": 1})
    with pytest.raises(cairn.InvalidInput, match="unknown filter operator"):
        store.put(("f",), "k", {"n": 1})
        store.search(("f",), filter={"n": {"$near": 1}})


def test_search_finds_a_match_behind_many_versions_and_many_entries(store):
    store.put(("p",), "target", {"text": "needle"})
    for i in range(300):
        store.put(("p",), "noise", {"text": f"needle in a haystack {i}"})
    for i in range(1_100):
        store.put(("f",), f"k{i}", {"text": "sky", "i": i})
    assert [h.key for h in store.search(("p",), query="needle")] == ["target", "noise"]
    assert [h.value["i"] for h in store.search(("f",), query="sky", filter={"i": 0})] == [0]
    assert len(store.search(("f",), query="sky", limit=2_000)) == 1_100
    assert len(store.search(("f",), query="sky", offset=1_098, limit=5)) == 2
    assert len(store.search(("f",), query="sky", limit=2**70)) == 1_100


def test_langgraphs_index_paths_empty_keys_and_values_json_cannot_carry(store):
    store.put(("t",), "a", {"tags": [{"name": "zebra"}, {"name": "okapi"}], "title": "x"}, index=["tags[*].name"])
    store.put(("t",), "b", {"tags": ["lynx", "puma"]}, index=["tags[-1]"])
    assert [h.key for h in store.search(("t",), query="okapi")] == ["a"]
    assert [h.key for h in store.search(("t",), query="puma")] == ["b"]
    assert store.search(("t",), query="lynx") == []
    store.put(("t",), "", {"v": 1})
    assert store.get(("t",), "").value == {"v": 1}
    with pytest.raises(cairn.InvalidInput, match="cannot be stored as JSON"):
        store.put(("t",), "c", {"when": {1, 2}})
    with pytest.raises(cairn.InvalidInput, match="index takes a list; str"):
        store.put(("t",), "d", {"text": "zz"}, index="text")
    store.put(("t",), "e", {"text": "words", "n": 3})
    with pytest.raises(cairn.InvalidInput, match="cannot be compared"):
        store.search(("t",), filter={"text": {"$gt": 2}})
