"""cairn: an append-only, content-addressed provenance ledger for long-running LLM agents.

Record an agent's turns as spans, propose compactions (as claims that cite their turns, or as
prose), check actions before they run, pin constraints, and read the memory back. Every call
goes to the Rust library through the native module ``cairn._cairn``, with the GIL released;
what comes back is the JSON that the ``cairn`` command prints with ``--json``, as typed
objects. ``to_json()`` gives that JSON back.

    >>> import cairn
    >>> ledger = cairn.Ledger.in_memory()
    >>> _ = ledger.record_turns("s1", [cairn.Turn("user", "we are still on libfoo 2.3.1, do not bump.")])
    >>> _ = ledger.pin("s1", "constraints")  # what the classifier found: do not bump libfoo
    >>> v = ledger.propose("s1", covers=["turn:0"], text="libfoo was upgraded to 2.4.0.")
    >>> v.admitted, len(v.struck)  # the claim is struck: kept in the ledger, never admitted
    (True, 1)
    >>> ledger.propose("s1", covers=["turn:0"], text="We stay on libfoo 2.3.1; do not bump it.").admitted
    True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable, Mapping, Sequence, Union

from ._cairn import (
    DEFAULT_BUDGET,
    CairnError,
    Conflict,
    InvalidInput,
    LedgerBusy,
    LedgerDamaged,
    NativeLedger,
    NotFound,
)

try:
    __version__ = metadata.version("cairn")
except metadata.PackageNotFoundError:  # run from a source tree without an install
    __version__ = "0.0.0"

__all__ = [
    "DEFAULT_BUDGET",
    "CairnError",
    "Conflict",
    "InvalidInput",
    "LedgerBusy",
    "LedgerDamaged",
    "NotFound",
    "Ledger",
    "Turn",
    "NewClaim",
    "PinItem",
    "Appended",
    "Verdict",
    "Finding",
    "ClaimOutcome",
    "Witness",
    "Recorded",
    "RecordedTurn",
    "Pinned",
    "PinnedItem",
    "Context",
    "ContextPin",
    "ContextClaim",
    "ContextSpan",
    "Recall",
    "Hit",
    "GateFinding",
    "VerifyReport",
    "Discrepancy",
    "ImportReport",
    "Record",
    "Document",
]

PathLike = Union[str, "os.PathLike[str]"]
JsonLine = Union[str, Mapping[str, Any]]


class _Json:
    """The JSON an object was read from: ``to_json()`` gives it back, as the CLI prints it."""

    raw: dict[str, Any]

    def to_json(self) -> str:
        """The object as one line of JSON, as ``cairn ... --json`` prints it."""
        return json.dumps(self.raw, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# What goes in


@dataclass(frozen=True)
class Turn:
    """One turn to record: who spoke (user, assistant, tool or system) and what, verbatim."""

    role: str
    text: str
    turn: int | None = None
    tool: str | None = None

    def _json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "text": self.text}
        if self.turn is not None:
            d["turn"] = self.turn
        if self.tool is not None:
            d["tool"] = self.tool
        return d


@dataclass(frozen=True)
class NewClaim:
    """A claim of a proposed compaction: its text, its origin (user-said, tool-output, hedged
    or inferred), the turns that witness it ("turn:12", "turn:3..turn:5", "prior:N" or rids),
    and whether the agent may act on it."""

    text: str
    origin: str
    witnesses: Sequence[str]
    actionable: bool = False

    def _json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "origin": self.origin,
            "witnesses": _listed("witnesses", self.witnesses),
            "actionable": self.actionable,
        }


@dataclass(frozen=True)
class PinItem:
    """A pinned constraint: its class (prohibition, commitment, failed-attempt, reference...),
    its text, and the turn it was taken from."""

    cls: str
    text: str
    witness: str | None = None

    def _json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"class": self.cls, "text": self.text}
        if self.witness is not None:
            d["witness"] = self.witness
        return d


def _as_json(x: Any) -> Any:
    if hasattr(x, "_json"):
        return x._json()
    if not isinstance(x, Mapping):
        raise InvalidInput(f"expected an object or a dict, found {type(x).__name__}: {x!r:.60}")
    return dict(x)


def _listed(name: str, value: Any) -> list[Any]:
    """A list argument as a list: one string (or a dict) is refused, not read item by item."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidInput(f"{name} takes a list; {type(value).__name__} {value!r:.40} is not one")
    return list(value)


def _count(name: str, value: Any) -> int:
    """A count argument (a budget, a limit): a non-negative integer that fits 63 bits."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise InvalidInput(f"{name} takes a non-negative integer below 2^63; {value!r:.40} is not one")
    return value


def _line(x: JsonLine | list[Any]) -> str:
    """A line (or a list of objects) as JSON text; NaN, infinities and objects JSON cannot
    carry are refused."""
    if isinstance(x, str):
        return x
    try:
        return json.dumps(x, allow_nan=False, ensure_ascii=False)
    except ValueError as e:
        raise InvalidInput(f"a line holds NaN or an infinity, which JSON cannot carry ({e}); give a finite number") from None
    except TypeError as e:
        raise InvalidInput(f"a line holds a value JSON cannot carry ({e}); give strings, numbers, booleans, lists and dicts") from None


# ---------------------------------------------------------------------------------------------
# What comes back


@dataclass(frozen=True)
class Finding:
    """What a gate found: the gate's name, the record it is about, and a sentence."""

    gate: str
    subject: str
    detail: str


@dataclass(frozen=True)
class Witness:
    """A turn found to support a claim of a prose compaction, with its entailment score."""

    rid: str
    turn: int | None
    entailment: float


@dataclass(frozen=True)
class ClaimOutcome:
    """A claim of a proposal as the gates judged it: verified, unverified, fabricated..."""

    rid: str
    status: str | None
    text: str | None = None
    new: bool | None = None
    origin: str | None = None
    witnesses: tuple[Witness, ...] = ()
    why: str | None = None


@dataclass(frozen=True, repr=False)
class Appended(_Json):
    """A record appended (or found already present: ``new`` is false)."""

    kind: str
    rid: str
    index: int
    new: bool
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"Appended(kind={self.kind!r}, rid={self.rid[:16]!r}, index={self.index}, new={self.new})"


@dataclass(frozen=True, repr=False)
class Verdict(_Json):
    """What the gates decided about a compaction or an action: ``admitted`` or not, every
    finding, each claim's status, and the verdict record's rid."""

    kind: str
    rid: str
    index: int
    new: bool
    admitted: bool
    verdict_rid: str | None
    findings: tuple[Finding, ...]
    claims: tuple[ClaimOutcome, ...]
    anchored_score: float | None
    detail: str | None
    raw: dict[str, Any] = field(compare=False)
    struck: tuple[str, ...] = ()
    repair: Repair | None = None

    @property
    def refused(self) -> bool:
        """Whether the gates refused it."""
        return not self.admitted

    @property
    def gates(self) -> list[str]:
        """The names of the gates that found something, in order."""
        return [f.gate for f in self.findings]

    def __repr__(self) -> str:
        state = "admitted" if self.admitted else "refused"
        found = ", ".join(f"{f.gate}" for f in self.findings)
        return f"Verdict({self.kind} {self.rid[:16]}: {state}; findings: [{found}]; {len(self.claims)} claim(s))"


@dataclass(frozen=True)
class Repair:
    """The nearest compaction cairn admits in place of a refused one (SPEC.md section 8.9): its
    own summary record, authored by cairn, gated as any proposal. ``text`` is what an agent can
    use as its compacted context; ``changes`` says what differs from the proposal."""

    rid: str
    admitted: bool
    text: str
    changes: tuple[str, ...]
    findings: tuple[Finding, ...]


def _repair(d: dict[str, Any] | None) -> Repair | None:
    if not d:
        return None
    return Repair(
        rid=d["rid"],
        admitted=d["verdict"] == "admitted",
        text=d.get("text", ""),
        changes=tuple(d.get("changes", [])),
        findings=tuple(Finding(f["gate"], f["subject"], f["detail"]) for f in d.get("findings", [])),
    )


def _result(d: dict[str, Any]) -> Appended | Verdict:
    if "verdict" not in d:
        return Appended(d["kind"], d["rid"], d["index"], d["new"], raw=d)
    claims = tuple(
        ClaimOutcome(
            rid=c["rid"],
            status=c.get("status"),
            text=c.get("text"),
            new=c.get("new"),
            origin=c.get("origin"),
            witnesses=tuple(
                Witness(w["rid"], w.get("turn"), w["entailment"]) for w in c.get("witnesses", [])
            ),
            why=c.get("why"),
        )
        for c in d.get("claims", [])
    )
    return Verdict(
        kind=d["kind"],
        rid=d["rid"],
        index=d["index"],
        new=d["new"],
        admitted=d["verdict"] == "admitted",
        verdict_rid=d.get("verdict_rid"),
        findings=tuple(Finding(f["gate"], f["subject"], f["detail"]) for f in d.get("findings", [])),
        claims=claims,
        anchored_score=d.get("anchored_score"),
        detail=d.get("detail"),
        raw=d,
        struck=tuple(d.get("struck", [])),
        repair=_repair(d.get("repair")),
    )


@dataclass(frozen=True)
class RecordedTurn:
    """A turn as recorded: its number, its span's rid, and whether this call appended it."""

    turn: int
    rid: str
    new: bool


@dataclass(frozen=True, repr=False)
class Recorded(_Json):
    """The turns a ``record_turns`` call recorded; ``replayed`` when its idempotency key had
    recorded them before and nothing was appended."""

    stream: str
    turns: tuple[RecordedTurn, ...]
    replayed: bool
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        numbers = ", ".join(str(t.turn) for t in self.turns)
        return f"Recorded(stream={self.stream!r}, turns=[{numbers}], replayed={self.replayed})"


@dataclass(frozen=True)
class PinnedItem:
    """An item of a pin."""

    cls: str
    text: str
    turn: int | None = None
    witness: str | None = None


@dataclass(frozen=True, repr=False)
class Pinned(_Json):
    """A pin written (``rid``), or what a dry run would pin (``rid`` None)."""

    stream: str
    name: str
    rid: str | None
    items: tuple[PinnedItem, ...]
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"Pinned(stream={self.stream!r}, name={self.name!r}, rid={self.rid and self.rid[:16]!r}, items={len(self.items)})"


@dataclass(frozen=True)
class ContextPin:
    pin: str
    cls: str
    text: str
    witness: str | None
    retired_by: str | None


@dataclass(frozen=True)
class ContextClaim:
    rid: str
    text: str
    status: str
    origin: str | None
    flags: tuple[str, ...]
    witnesses: tuple[str, ...]


@dataclass(frozen=True)
class ContextSpan:
    rid: str
    turn: int
    role: str
    text: str
    truncated: int | None = None


@dataclass(frozen=True, repr=False)
class Context(_Json):
    """What the agent should see next: pins first, then the head summary's claims with their
    status, then the raw turns no admitted summary evicted, newest first, within the budget."""

    stream: str
    budget: int
    used: int
    pins: tuple[ContextPin, ...]
    head: str | None
    claims: tuple[ContextClaim, ...]
    spans: tuple[ContextSpan, ...]
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return (
            f"Context(stream={self.stream!r}, used={self.used}/{self.budget}, pins={len(self.pins)}, "
            f"claims={len(self.claims)}, spans={len(self.spans)})"
        )


@dataclass(frozen=True)
class Hit:
    """A record that answers a recall query: a span or a claim, with its score."""

    kind: str
    rid: str
    stream: str
    text: str
    score: float
    turn: int | None = None
    role: str | None = None
    status: str | None = None


@dataclass(frozen=True, repr=False)
class Recall(_Json):
    query: str
    stream: str | None
    hits: tuple[Hit, ...]
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"Recall(query={self.query!r}, hits={len(self.hits)})"


@dataclass(frozen=True)
class GateFinding:
    """What the gate sweep found standing in the ledger."""

    gate: str
    stream: str
    subject: str
    detail: str


@dataclass(frozen=True)
class Discrepancy:
    rid: str | None
    table: str
    detail: str


@dataclass(frozen=True, repr=False)
class VerifyReport(_Json):
    """What ``verify`` checked: every record, link and derived table."""

    ok: bool
    records: int
    tables_compared: int
    discrepancies: tuple[Discrepancy, ...]
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"VerifyReport(ok={self.ok}, records={self.records}, tables_compared={self.tables_compared}, discrepancies={len(self.discrepancies)})"


@dataclass(frozen=True, repr=False)
class ImportReport(_Json):
    """What importing an agent's log did: messages read, records appended, each compaction
    met with its verdict, and what was skipped."""

    file: str
    messages: int
    appended: int
    present: int
    streams: tuple[str, ...]
    compactions: tuple[dict[str, Any], ...]
    skipped: dict[str, int]
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"ImportReport(file={self.file!r}, messages={self.messages}, appended={self.appended}, compactions={len(self.compactions)})"


@dataclass(frozen=True, repr=False)
class Record(_Json):
    """One record of the ledger, as ``cairn export`` writes it."""

    kind: str
    rid: str
    index: int
    fields: dict[str, Any] = field(compare=False)
    raw: dict[str, Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"Record(kind={self.kind!r}, rid={self.rid[:16]!r}, index={self.index})"


@dataclass(frozen=True, repr=False)
class Document(_Json):
    """A larger answer (``why``, ``replay``), as its JSON document."""

    name: str
    raw: dict[str, Any] = field(compare=False)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __repr__(self) -> str:
        return f"Document({self.name}: {', '.join(self.raw)})"


# ---------------------------------------------------------------------------------------------
# The ledger


class Ledger:
    """A cairn ledger, a redb file at ``path`` (created if missing), judged with the policy
    TOML at ``policy`` (the defaults when None).

    Opening the same path twice in one process gives the same ledger. A handle opened before
    a ``fork`` raises ``LedgerBusy`` in the child; the child may open the path itself once the
    parent has closed it (while the parent holds the file, that open raises ``LedgerBusy`` too,
    saying the file is locked). Safe to share between threads: writes wait for one another,
    reads run beside them.
    """

    __slots__ = ("_native",)

    def __init__(self, path: PathLike, *, policy: PathLike | None = None) -> None:
        if os.path.isdir(path):
            raise InvalidInput(f"{os.fspath(path)} is a directory; give the path of a ledger file in it, such as {os.path.join(os.fspath(path), 'agent.redb')}")
        self._native = NativeLedger(os.fspath(path), None if policy is None else os.fspath(policy))

    @classmethod
    def in_memory(cls, *, policy: PathLike | None = None) -> "Ledger":
        """A ledger that lives in memory, for tests and scratch work."""
        ledger = cls.__new__(cls)
        ledger._native = NativeLedger(None, None if policy is None else os.fspath(policy))
        return ledger

    @property
    def path(self) -> str | None:
        """The ledger's file; ``None`` for a ledger in memory."""
        p = self._native.path
        return None if p is None else os.fspath(p)

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else repr(self.path)
        return f"Ledger({where}, records={len(self)})"

    # Writing ---------------------------------------------------------------------------------

    def append(self, line: JsonLine) -> Appended | Verdict:
        """Appends one line of cairn's JSON Lines (a dict or its JSON text): a span, a claim,
        a summary, a pin, an action... A summary or an action is judged: a ``Verdict``."""
        done = self.append_all([line])
        if not done:
            raise InvalidInput("the line is blank; give one JSON object, such as {\"kind\": \"span\", ...}")
        return done[0]

    def append_all(self, lines: Iterable[JsonLine]) -> list[Appended | Verdict]:
        """Appends lines in one transaction, as ``cairn ingest`` does with a file: all of them
        or, when one is bad, none."""
        texts = [_line(x) for x in _listed("lines", lines)]
        return [_result(json.loads(r)) for r in self._native.apply_lines(texts)]

    def ingest(self, path: PathLike) -> list[Appended | Verdict]:
        """Appends every line of a JSON Lines file in one transaction (``cairn ingest``)."""
        try:
            with open(path, encoding="utf-8") as f:
                lines = [line for line in f if line.strip()]
        except (OSError, UnicodeDecodeError) as e:
            raise InvalidInput(f"cannot read {os.fspath(path)}: {e}; give a JSON Lines file") from None
        return self.append_all(lines)

    def record_span(
        self, stream: str, turn: int, role: str, text: str, *, tool: str | None = None
    ) -> Appended:
        """Records one turn of ``stream`` as a span, verbatim."""
        line: dict[str, Any] = {"kind": "span", "stream": stream, "turn": turn, "role": role, "text": text}
        if tool is not None:
            line["name"] = tool
        r = self.append(line)
        assert isinstance(r, Appended)
        return r

    def record_turns(
        self,
        stream: str,
        turns: Sequence[Turn | Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
    ) -> Recorded:
        """Records turns of ``stream`` in one transaction; a turn left unnumbered follows the
        stream's last. With ``idempotency_key``, a retry with the same turns records nothing
        again and gets the same answer, even after a restart; the same key with other turns in
        the same stream raises ``Conflict`` (a key names one call to one stream)."""
        listed = [_as_json(t) for t in _listed("turns", turns)]
        for i, t in enumerate(listed):
            n = t.get("turn")
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 2**64):
                raise InvalidInput(f"argument turns[{i}].turn: {n!r} is not a turn number; give an integer from 0 to 2^53 - 1, or leave it out")
        d = json.loads(self._native.record_turns(stream, _line(listed), idempotency_key))
        return Recorded(
            d["stream"],
            tuple(RecordedTurn(t["turn"], t["rid"], t["new"]) for t in d["turns"]),
            d["replayed"],
            raw=d,
        )

    def propose(
        self,
        stream: str,
        *,
        covers: Sequence[str],
        claims: Sequence[NewClaim | Mapping[str, Any] | str] | None = None,
        text: str | None = None,
        evicts: Sequence[str] = (),
        parent: str | None = None,
        author: str = "self",
        budget: int = DEFAULT_BUDGET,
        self_score: float | None = None,
        reground: bool = False,
    ) -> Verdict:
        """Proposes a compaction of ``stream``: a summary over the turns ``covers`` names,
        given as ``claims`` (each citing its turns; "prior:N" carries claim N of the current
        summary) or as prose ``text``, from which cairn finds each sentence's witnesses.
        Returns the verdict; a refused compaction changes nothing in the stream's window."""
        if (claims is None) == (text is None):
            raise InvalidInput("give the compaction's claims or its text, one of the two")
        line: dict[str, Any] = {
            "kind": "summary",
            "stream": stream,
            "author": author,
            "budget": budget,
            "covers": _listed("covers", covers),
            "evicts": _listed("evicts", evicts),
        }
        if parent is not None:
            line["parent"] = parent
        if claims is not None:
            line["claims"] = [c if isinstance(c, str) else _as_json(c) for c in _listed("claims", claims)]
        else:
            line["text"] = text
        if self_score is not None:
            line["self_score"] = self_score
        if reground:
            line["reground"] = True
        r = self.append(line)
        assert isinstance(r, Verdict)
        return r

    def check_action(
        self, stream: str, text: str, *, irreversible: bool, relies_on: Sequence[str] = ()
    ) -> Verdict:
        """Checks an action before it runs ("DROP TABLE users", "pip install libfoo==2.4.0"),
        against the pinned prohibitions and the claims it relies on. Refused: do not run it.
        The stream must hold a turn: an action checked in a misspelt stream would meet none of
        its pins, so it raises ``NotFound``."""
        if not self._native.has_stream(stream):
            raise NotFound(f"the ledger has no stream {stream!r}; record the agent's turns in it first, or check the name")
        r = self.append(
            {
                "kind": "action",
                "stream": stream,
                "text": text,
                "irreversible": irreversible,
                "relies_on": _listed("relies_on", relies_on),
            }
        )
        assert isinstance(r, Verdict)
        return r

    def pin(
        self,
        stream: str,
        name: str,
        items: Sequence[PinItem | Mapping[str, Any]] | None = None,
        *,
        dry_run: bool = False,
    ) -> Pinned:
        """Pins constraints of ``stream`` under ``name``, write-once. Without ``items``, pins
        what the classifier found that no pin covers yet (``cairn pin --auto``). The stream must
        hold a turn (``NotFound`` otherwise), as a pin on a misspelt stream would guard nothing."""
        if items is not None and not self._native.has_stream(stream):
            raise NotFound(f"the ledger has no stream {stream!r}; record the agent's turns in it first, or check the name")
        if items is None:
            d = json.loads(self._native.pin_auto(stream, name, dry_run))
            return Pinned(
                d["stream"],
                d["name"],
                d["rid"],
                tuple(PinnedItem(i["class"], i["text"], i.get("turn"), i.get("witness")) for i in d["items"]),
                raw=d,
            )
        if dry_run:
            raise InvalidInput("dry_run previews the classifier's items; give no items with it")
        listed = [_as_json(i) for i in _listed("items", items)]
        r = self.append({"kind": "pin", "stream": stream, "name": name, "items": listed})
        d = {"dry_run": False, "rid": r.rid, "stream": stream, "name": name, "items": listed}
        return Pinned(
            stream,
            name,
            r.rid,
            tuple(PinnedItem(i["class"], i["text"], None, i.get("witness")) for i in listed),
            raw=d,
        )

    def retire(self, stream: str, pin: str, item: str, witness: str) -> Appended:
        """Retires a pinned item the user lifted ("the budget is now $600"): ``pin`` is the
        pin's name or rid, ``item`` the item's text as pinned, ``witness`` the user's turn that
        lifts it ("turn:N", later than the turn that stated it). The pin never changes; the
        gates hold compactions and actions only to the items in force from now on."""
        r = self.append({"kind": "retirement", "stream": stream, "pin": pin, "item": item, "witness": witness})
        assert isinstance(r, Appended)
        return r

    def import_log(self, path: PathLike, format: str) -> ImportReport:
        """Imports an agent's own log (``cairn import --from FORMAT``): claude-code, codex,
        openai-chat or swe-agent."""
        d = json.loads(self._native.import_log(format, os.fspath(path)))
        return ImportReport(
            d["file"],
            d["messages"],
            d["appended"],
            d["present"],
            tuple(d["streams"]),
            tuple(d["compactions"]),
            dict(d["skipped"]),
            raw=d,
        )

    def checkpoint(self, key: str | None = None, previous: str | None = None) -> str:
        """The log's checkpoint note: its size and Merkle root; signed with the text of a
        signing key (``cairn keygen``), continuing from ``previous``, the last note that key
        signed for this ledger."""
        if previous is not None and key is None:
            raise InvalidInput("previous is the last note a key signed; give the key too, or neither")
        return self._native.checkpoint(key, previous)

    # Reading ---------------------------------------------------------------------------------

    def context(self, stream: str, budget: int = DEFAULT_BUDGET) -> Context:
        """What the agent should see on its next turn, within ``budget`` tokens."""
        d = json.loads(self._native.context(stream, _count("budget", budget)))
        return Context(
            stream=d["stream"],
            budget=d["budget"],
            used=d["used"],
            pins=tuple(
                ContextPin(p["pin"], p["class"], p["text"], p["witness"], p["retired_by"]) for p in d["pins"]
            ),
            head=d["head"],
            claims=tuple(
                ContextClaim(c["rid"], c["text"], c["status"], c["origin"], tuple(c["flags"]), tuple(c["witnesses"]))
                for c in d["claims"]
            ),
            spans=tuple(
                ContextSpan(s["rid"], s["turn"], s["role"], s["text"], s.get("truncated")) for s in d["spans"]
            ),
            raw=d,
        )

    def recall(self, query: str, stream: str | None = None, limit: int = 10) -> Recall:
        """The spans and claims that answer ``query``, best first."""
        d = json.loads(self._native.recall(query, stream, _count("limit", limit)))
        hits = tuple(
            Hit(h["kind"], h["rid"], h["stream"], h["text"], h["score"], h.get("turn"), h.get("role"), h.get("status"))
            for h in d["hits"]
        )
        return Recall(d["query"], d["stream"], hits, raw=d)

    def why(self, claim: str, stream: str | None = None) -> Document:
        """How a claim came to be believed: its witnesses down to the raw turns, and where
        its provenance was lost. ``claim`` is a rid, a prefix, or prior:N with ``stream``."""
        return Document("why", json.loads(self._native.why(claim, stream)))

    def replay(self, stream: str) -> Document:
        """The stream's compactions in order, each with its verdict, what it carried, dropped
        and evicted."""
        return Document("replay", json.loads(self._native.replay(stream)))

    def gates(self, stream: str | None = None) -> list[GateFinding]:
        """Runs every gate query over the ledger (or one stream): what stands found."""
        d = json.loads(self._native.gates(stream))
        return [GateFinding(f["gate"], f["stream"], f["subject"], f["detail"]) for f in d["findings"]]

    def verify(self) -> VerifyReport:
        """Checks every rid, link and derived table against the log."""
        d = json.loads(self._native.verify())
        return VerifyReport(
            d["ok"],
            d["records"],
            d["tables_compared"],
            tuple(Discrepancy(x["rid"], x["table"], x["detail"]) for x in d["discrepancies"]),
            raw=d,
        )

    def get(self, rid: str, stream: str | None = None) -> Record:
        """One record by rid or a prefix of 8 or more hex digits, or by turn:N or prior:N of
        ``stream``."""
        d = json.loads(self._native.get(rid, stream))
        fields = {k: v for k, v in d.items() if k not in ("kind", "rid", "index")}
        return Record(d["kind"], d["rid"], d["index"], fields, raw=d)
