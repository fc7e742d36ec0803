"""A LangGraph ``BaseStore`` kept in a cairn ledger.

``CairnStore`` answers LangGraph's store operations (``GetOp``, ``SearchOp``, ``PutOp`` and
``ListNamespacesOp``, through ``batch`` and ``abatch`` and every method built on them) from a
cairn ledger:

- a put appends a new version of the entry that names the version it replaces, and never
  overwrites: the newest is what ``get`` and ``search`` return, the older ones stay
  (``history``);
- a delete appends a tombstone, not a removal;
- ``search`` with a ``query`` ranks entries with cairn's recall (BM25 over the indexed text of
  each entry's current version), then applies ``filter``, ``offset`` and ``limit``;
- entries are records of their own kind (``entry``), in no stream: an agent's ``context`` and
  ``recall`` never show them.

Which text of a value is searchable: the fields named by ``index`` on a put (LangGraph's paths:
``"profile.name"``, ``"tags[0]"``, ``"tags[*].name"``, ``"tags[-1]"``, or ``"$"`` for the whole
value), ``False`` for none, or the store's ``index_fields`` (``["$"]`` by default). Values are
stored as JSON: a dict with string keys and JSON values, as LangGraph asks of a store. TTLs are not supported (``supports_ttl`` is false): a
ledger forgets nothing.

Usage::

    from cairn import Ledger
    from cairn.langgraph import CairnStore

    store = CairnStore(Ledger("agent.redb"))
    store.put(("users", "u1", "memories"), "m1", {"text": "prefers dark mode"})
    store.search(("users", "u1"), query="dark mode")
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from . import InvalidInput, Ledger, _listed

__all__ = ["CairnStore"]


def _when(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _leaves(value: Any) -> list[str]:
    """The words of a JSON value: its strings and numbers, not its keys."""
    if isinstance(value, dict):
        return [w for v in value.values() for w in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in _leaves(v)]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


_STEP = re.compile(r"([^.\[\]]+)|\[(\*|-?\d+)\]")


def _fields(value: Any, path: str) -> list[Any]:
    """The values at a LangGraph field path: keys joined by dots, list positions in brackets
    (``[0]``, ``[-1]``), ``[*]`` for every element; ``$`` is the whole value."""
    if path == "$":
        return [value]
    found = [value]
    for key, index in _STEP.findall(path):
        step: list[Any] = []
        for v in found:
            if key:
                if isinstance(v, dict) and key in v:
                    step.append(v[key])
            elif isinstance(v, list):
                if index == "*":
                    step.extend(v)
                elif -len(v) <= int(index) < len(v):
                    step.append(v[int(index)])
        found = step
    return found


def _matches(value: Any, wanted: Any) -> bool:
    """A filter's condition on a value: equality, nested objects, or operators ($eq, $ne,
    $gt, $gte, $lt, $lte), as LangGraph documents them."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    return value == wanted


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return value == arg
    if op == "$ne":
        return value != arg
    if value is None:
        return False
    compare = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}
    if op not in compare:
        raise InvalidInput(f"unknown filter operator {op!r}; use $eq, $ne, $gt, $gte, $lt or $lte")
    try:
        return compare[op](value, arg)
    except TypeError:
        raise InvalidInput(f"filter {op} {arg!r} cannot be compared with the stored value {value!r:.40}; compare numbers with numbers and strings with strings") from None


def _item(d: dict[str, Any]) -> Item | None:
    """An entry's version as LangGraph's ``Item``; a deletion is ``None``."""
    if d["value"] is None:
        return None
    return Item(
        value=json.loads(d["value"]),
        key=d["key"],
        namespace=tuple(d["namespace"]),
        created_at=_when(d["created"]),
        updated_at=_when(d["at"]),
    )


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise InvalidInput(f"unknown match type {condition.match_type!r}; use prefix or suffix")
    return all(p == "*" or n == p for n, p in pairs)


class CairnStore(BaseStore):
    """LangGraph's ``BaseStore`` over a cairn ledger: versions appended, never overwritten."""

    supports_ttl = False

    def __init__(self, ledger: Ledger, *, index_fields: Sequence[str] = ("$",)) -> None:
        self.ledger = ledger
        self.index_fields = _listed("index_fields", index_fields)

    # The operations ---------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidInput(f"unknown store operation {type(op).__name__}; use GetOp, SearchOp, PutOp or ListNamespacesOp")

    def _get(self, op: GetOp) -> Item | None:
        found = self.ledger._native.entry_get(list(op.namespace), op.key)
        return None if found is None else _item(json.loads(found))

    def _put(self, op: PutOp) -> None:
        if op.value is not None and not isinstance(op.value, dict):
            raise InvalidInput(f"a store value is a dict, not {type(op.value).__name__}")
        try:
            value = None if op.value is None else json.dumps(op.value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidInput(f"the value of {op.key!r} cannot be stored as JSON ({e}); give strings, finite numbers, booleans, lists and dicts") from None
        text = None
        if op.value is not None and op.index is not False:
            fields = self.index_fields if op.index is None else _listed("index", op.index)
            words = [w for f in fields for found in _fields(op.value, f) for w in _leaves(found)]
            text = " ".join(words) or None
        self.ledger._native.entry_put(list(op.namespace), op.key, value, text, int(time.time() * 1000))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = list(op.namespace_prefix)
        most = 1 << 62
        # A filter narrows after ranking, so every match is read when one is given.
        limit = most if op.filter else min(max(op.offset, 0) + max(op.limit, 0), most)
        found = [json.loads(x) for x in self.ledger._native.entry_search(prefix, op.query or None, limit)]
        out: list[SearchItem] = []
        for d in found:
            value = json.loads(d["value"])
            if op.filter and not all(_matches(value.get(k), v) for k, v in op.filter.items()):
                continue
            out.append(
                SearchItem(
                    namespace=tuple(d["namespace"]),
                    key=d["key"],
                    value=value,
                    created_at=_when(d["created"]),
                    updated_at=_when(d["at"]),
                    score=d.get("score"),
                )
            )
        return out[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [tuple(ns) for ns in self.ledger._native.entry_namespaces()]
        if op.match_conditions:
            namespaces = [ns for ns in namespaces if all(_namespace_matches(ns, c) for c in op.match_conditions)]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset : op.offset + op.limit]

    # What a ledger adds --------------------------------------------------------------------------

    def history(self, namespace: tuple[str, ...], key: str) -> list[Item | None]:
        """Every version of an entry, newest first; a deletion is ``None``."""
        return [_item(json.loads(raw)) for raw in self.ledger._native.entry_history(list(namespace), key)]
