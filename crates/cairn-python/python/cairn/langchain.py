"""cairn in LangChain's compaction step: a ``SummarizationMiddleware`` whose summaries are judged.

LangChain's ``SummarizationMiddleware`` (langchain 1.x) replaces every earlier message with a
model-written summary. ``CairnSummarizationMiddleware`` keeps its triggers and its choice of
what to summarise, and adds cairn at the step where memory is thrown away:

- every message it sees is recorded in the ledger as a span of ``stream``, once: the
  middleware is handed the whole message list on each call, and each message is recorded
  under an idempotency key made of its id and a hash of its text, so seeing it again (even
  after a restart) records nothing new, and a message edited under the same id is a new turn;
  ``stream`` may hold ``{thread_id}``, filled from the run's config, so that each conversation
  is a stream of its own, or be a function of the state and runtime;
- every summary the model writes is proposed to cairn as prose, covering every turn of the
  stream up to the cut (``turn:0..turn:N``), so carried facts keep their raw witnesses;
- a summary refused, or with claims struck, is not used as written: the verdict and its
  findings are reported (``events``, and the ``cairn`` logger), and the model is asked again
  with the findings, at most ``max_attempts`` times in all. Then the history is compacted with
  what cairn admitted of the last attempt: its claims less those struck, or, when it was
  refused, cairn's repair of it (SPEC.md section 8.9), and the log says so. Only when cairn
  admitted nothing, or ``fallback`` is "raise", does the middleware fall back to ``fallback``: "keep_history" keeps every message and does not try again until
  ``retry_after_messages`` more messages have arrived, "raise" raises ``CompactionRefused``;
- a summary call that fails never removes history: the error is reported and the messages
  stay.

Usage::

    from langchain.agents import create_agent
    from cairn import Ledger
    from cairn.langchain import CairnSummarizationMiddleware

    ledger = Ledger("agent.redb")
    agent = create_agent(
        model,
        middleware=[CairnSummarizationMiddleware(model, ledger=ledger, stream="support-4411",
                                                 trigger=("tokens", 4000), keep=("messages", 20))],
    )
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence, Union

from langchain.agents.middleware.summarization import SummarizationMiddleware
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from . import CairnError, Conflict, Ledger, Turn, Verdict

__all__ = ["CairnSummarizationMiddleware", "CompactionEvent", "CompactionRefused"]

log = logging.getLogger("cairn")

Fallback = Literal["keep_history", "raise"]


class CompactionRefused(CairnError):
    """Raised with ``fallback="raise"`` when every attempt at a summary was refused."""

    def __init__(self, message: str, verdicts: Sequence[Verdict] = ()) -> None:
        super().__init__(message)
        self.verdicts = list(verdicts)

    def __reduce__(self) -> tuple[Any, ...]:
        return (CompactionRefused, (str(self), self.verdicts))


@dataclass
class CompactionEvent:
    """What one compaction step did: ``outcome`` is "admitted", "repaired" (no attempt was
    admitted whole: the history is compacted with what cairn admitted instead, the last
    attempt less its struck claims or cairn's repair of it), "refused" (nothing admitted,
    history kept), or "failed" (the summary call raised, history kept)."""

    outcome: str
    stream: str
    covers: str
    attempts: int
    verdicts: list[Verdict] = field(default_factory=list)
    error: BaseException | None = None
    summary: str | None = None


_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "tool": "tool", "system": "system"}


def _role(m: BaseMessage) -> str:
    if isinstance(m, ChatMessage):
        return _CHAT_ROLES.get(m.role.lower(), "user")
    if isinstance(m, HumanMessage):
        return "user"
    if isinstance(m, AIMessage):
        return "assistant"
    if isinstance(m, ToolMessage):
        return "tool"
    if isinstance(m, SystemMessage):
        return "system"
    return "user" if m.type == "human" else "assistant"


def _text(m: BaseMessage) -> str:
    text: str = str(m.text)
    if isinstance(m, AIMessage) and m.tool_calls:
        calls = "; ".join(f"called {c['name']} with {c.get('args')}" for c in m.tool_calls)
        text = f"{text}\n{calls}" if text else calls
    return text


def _is_summary(m: BaseMessage) -> bool:
    return (m.additional_kwargs or {}).get("lc_source") == "summarization"


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


def _key(m: BaseMessage, text: str, before: str) -> str:
    """A message's idempotency key: its id and a hash of what it says, so the same message seen
    again is recorded once and one edited under its id anew. A message without an id is known
    by what it says and by everything before it in the list (``before``, a running hash)."""
    said = _digest(_role(m), text)
    return f"langchain:{m.id}:{said}" if m.id else f"langchain:after:{_digest(before, said)}"


StreamName = Union[str, Callable[[Any, Any], str]]


@dataclass
class _Stream:
    """What the middleware remembers of one stream between calls."""

    turns: dict[str, int] = field(default_factory=dict)
    hold_until: int = 0
    # Ids the framework gave messages that came without one, and the key each was recorded
    # under: the same message object, passed again with its new id, is the same turn.
    given: dict[str, str] = field(default_factory=dict)


class CairnSummarizationMiddleware(SummarizationMiddleware):
    """``SummarizationMiddleware`` whose summaries cairn judges before they replace anything.

    Takes every argument of ``SummarizationMiddleware`` and: ``ledger`` and ``stream``, where
    the conversation is recorded; ``max_attempts``, how many summaries to ask for (the later
    ones told the findings against the earlier) before ``fallback``; ``retry_after_messages``,
    how many new messages to wait for after a fallback before trying again; ``auto_pin``, to
    pin what cairn's classifier finds (prohibitions, commitments, failed attempts) before each
    compaction, so a summary that drops one is refused; ``author``, who wrote the summaries
    ("self" when the agent's own model writes them).
    """

    def __init__(
        self,
        model: Any,
        *,
        ledger: Ledger,
        stream: StreamName,
        max_attempts: int = 2,
        fallback: Fallback = "keep_history",
        retry_after_messages: int = 10,
        auto_pin: bool = True,
        author: str = "self",
        **kwargs: Any,
    ) -> None:
        super().__init__(model, **kwargs)
        if max_attempts < 1:
            raise ValueError(f"max_attempts is {max_attempts}; give 1 or more")
        if fallback not in ("keep_history", "raise"):
            raise ValueError(f"fallback {fallback!r} is not one of 'keep_history' or 'raise'")
        self.ledger = ledger
        self.stream = stream
        self.max_attempts = max_attempts
        self.fallback = fallback
        self.retry_after_messages = retry_after_messages
        self.auto_pin = auto_pin
        self.author = author
        self.events: list[CompactionEvent] = []
        self._streams: dict[str, _Stream] = {}

    # Recording -------------------------------------------------------------------------------

    def _stream(self, state: Any, runtime: Any) -> str:
        if callable(self.stream):
            return self.stream(state, runtime)
        if "{thread_id}" not in self.stream:
            return self.stream
        from langgraph.config import get_config

        try:
            config = get_config()
        except RuntimeError:  # called outside a graph run
            config = {}
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        if thread is None:
            raise ValueError(f"stream {self.stream!r} names the thread, but the run has no thread_id in its config")
        return self.stream.format(thread_id=thread)

    def _record(self, stream: str, messages: Sequence[AnyMessage]) -> tuple[_Stream, dict[int, str]]:
        """Records each message not yet seen, once, under its idempotency key; gives the keys of
        the messages that came without an id, by their place."""
        known = self._streams.setdefault(stream, _Stream())
        before, idless = "", {}
        for position, m in enumerate(messages):
            if _is_summary(m):
                continue
            text = _text(m)
            if not text:
                continue
            key = known.given.get(m.id) if m.id else None
            key = key or _key(m, text, before)
            before = _digest(before, key)
            if not m.id:
                idless[position] = key
            if key not in known.turns:
                tool = m.name if isinstance(m, ToolMessage) and m.name else None
                r = self.ledger.record_turns(stream, [Turn(_role(m), text, tool=tool)], idempotency_key=key)
                known.turns[key] = r.turns[0].turn
            if m.id:
                known.turns[m.id] = known.turns[key]
        return known, idless

    @staticmethod
    def _covers(known: _Stream, summarized: Sequence[AnyMessage]) -> str | None:
        """Every turn of the stream up to the last one summarized: a carried fact keeps its raw
        witness, which an earlier summary evicted but the ledger kept."""
        turns = [known.turns[m.id] for m in summarized if m.id in known.turns]
        if not turns:
            return None
        return f"turn:0..turn:{max(turns)}"

    # Judging ---------------------------------------------------------------------------------

    def _propose(self, stream: str, covers: str, summary: str) -> Verdict:
        if self.auto_pin and self.ledger.pin(stream, "langchain", dry_run=True).items:
            # A pin's name is write-once: each new one takes the next free number.
            taken = 1 + len({p.pin for p in self.ledger.context(stream).pins if p.pin.startswith("langchain-")})
            while True:
                try:
                    self.ledger.pin(stream, f"langchain-{taken}")
                    break
                except Conflict:
                    taken += 1
        return self.ledger.propose(stream, covers=[covers], evicts=[covers], text=summary, author=self.author)

    @staticmethod
    def _feedback(v: Verdict) -> str:
        lines = [
            "Your previous summary was refused by the memory's checks. Write it again, fixing these findings:",
            *(f"- {f.gate}: {f.detail}" for f in v.findings),
            "State only what the messages say, copy numbers, versions, paths and names verbatim, keep "
            "a guess a guess, and keep every prohibition and commitment the user stated.",
        ]
        return "\n".join(lines)

    def _ask(self, messages: list[AnyMessage], feedback: str | None) -> str:
        if feedback is None or self.summarizer is not None:
            return self._create_summary(messages)
        prompt = self._format_summary_prompt(self._trim_messages_for_summary(messages))
        return self._summary_model.invoke(f"{prompt}\n\n{feedback}").text.strip()

    async def _aask(self, messages: list[AnyMessage], feedback: str | None) -> str:
        if feedback is None or self.summarizer is not None:
            return await self._acreate_summary(messages)
        prompt = self._format_summary_prompt(self._trim_messages_for_summary(messages))
        return (await self._summary_model.ainvoke(f"{prompt}\n\n{feedback}")).text.strip()

    def _cut(
        self, state: Any, runtime: Any
    ) -> tuple[str, _Stream, list[AnyMessage], list[AnyMessage], str] | None:
        messages = state["messages"]
        stream = self._stream(state, runtime)
        # Recorded before the framework gives id-less messages fresh ids; each given id is
        # remembered with the key its message was recorded under.
        known, idless = self._record(stream, messages)
        self._ensure_message_ids(messages)
        for position, key in idless.items():
            m = messages[position]
            known.given[m.id] = key
            known.turns[m.id] = known.turns[key]
        if len(messages) < known.hold_until:
            return None
        if not self._should_summarize(messages, self.token_counter(messages)):
            return None
        cutoff = self._determine_cutoff_index(messages)
        if cutoff <= 0:
            return None
        summarized, preserved = self._partition_messages(messages, cutoff)
        covers = self._covers(known, summarized)
        if covers is None:
            return None
        return stream, known, summarized, preserved, covers

    def _standing(
        self,
        event: CompactionEvent,
        known: _Stream,
        preserved: list[AnyMessage],
        messages: list[AnyMessage],
    ) -> dict[str, Any] | None:
        """After the last attempt: what cairn admitted of it (its claims less those struck, or
        the repair cairn built when it was refused) replaces the history; else nothing does."""
        # With fallback "raise" the caller wants the refusal, not cairn's substitute.
        usable = event.verdicts and event.outcome != "failed" and self.fallback != "raise"
        last = event.verdicts[-1] if usable else None
        text, rid = None, None
        if last is not None and last.admitted:
            kept = [c.text for c in last.claims if c.rid not in last.struck and c.text]
            text, rid = " ".join(kept), last.verdict_rid
        elif last is not None and last.repair is not None and last.repair.admitted:
            text, rid = last.repair.text, last.repair.rid
        if not text:
            self._settled(event, known, messages)
            return None
        event.outcome, event.summary = "repaired", text
        self._settled(event, known, messages)
        new = self._build_new_messages(text)
        for m in new:
            m.additional_kwargs["cairn_verdict"] = rid
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new, *preserved]}

    def _settled(self, event: CompactionEvent, known: _Stream, messages: list[AnyMessage]) -> None:
        self.events.append(event)
        if event.outcome == "admitted":
            known.hold_until = 0
            log.info("cairn admitted the compaction of %s over %s", event.stream, event.covers)
            return
        if event.outcome == "repaired":
            known.hold_until = 0
            last = event.verdicts[-1]
            found = "; ".join(f"{f.gate}: {f.detail}" for f in last.findings)
            log.warning(
                "cairn admitted no summary of %s over %s whole after %d attempts; the history is compacted with what cairn admitted instead (%s). Last findings: %s",
                event.stream,
                event.covers,
                event.attempts,
                "its claims less those struck" if last.admitted else f"its repair {last.repair.rid[:12] if last.repair else ''}",
                found,
            )
            return
        known.hold_until = len(messages) + self.retry_after_messages
        if event.outcome == "failed":
            log.warning("the summary call failed (%s); the history of %s is kept", event.error, event.stream)
            return
        last = event.verdicts[-1]
        found = "; ".join(f"{f.gate}: {f.detail}" for f in last.findings)
        log.warning(
            "cairn refused %d summaries of %s over %s; the history is kept. Last findings: %s",
            event.attempts,
            event.stream,
            event.covers,
            found,
        )
        if self.fallback == "raise":
            raise CompactionRefused(
                f"cairn refused {event.attempts} summaries of stream {event.stream} over {event.covers}; last findings: {found}",
                event.verdicts,
            )

    def _replace(self, summary: str, verdict: Verdict, preserved: list[AnyMessage]) -> dict[str, Any]:
        new = self._build_new_messages(summary)
        for m in new:
            m.additional_kwargs["cairn_verdict"] = verdict.verdict_rid
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new, *preserved]}

    def _judged(
        self,
        event: CompactionEvent,
        known: _Stream,
        summary: str,
        preserved: list[AnyMessage],
        messages: list[AnyMessage],
    ) -> tuple[dict[str, Any] | None, str | None]:
        """Proposes one summary: the state update when admitted, else the findings to send back."""
        verdict = self._propose(event.stream, event.covers, summary)
        event.verdicts.append(verdict)
        if not verdict.admitted or verdict.struck:
            return None, self._feedback(verdict)
        event.outcome, event.summary = "admitted", summary
        self._settled(event, known, messages)
        return self._replace(summary, verdict, preserved), None

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        cut = self._cut(state, runtime)
        if cut is None:
            return None
        stream, known, summarized, preserved, covers = cut
        messages = state["messages"]
        event, feedback = CompactionEvent("refused", stream, covers, 0), None
        while event.attempts < self.max_attempts:
            event.attempts += 1
            try:
                summary = self._ask(summarized, feedback)
            except Exception as e:  # the framework's own summary failure: keep the history
                event.outcome, event.error = "failed", e
                break
            update, feedback = self._judged(event, known, summary, preserved, messages)
            if update is not None:
                return update
        return self._standing(event, known, preserved, messages)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        cut = self._cut(state, runtime)
        if cut is None:
            return None
        stream, known, summarized, preserved, covers = cut
        messages = state["messages"]
        event, feedback = CompactionEvent("refused", stream, covers, 0), None
        while event.attempts < self.max_attempts:
            event.attempts += 1
            try:
                summary = await self._aask(summarized, feedback)
            except Exception as e:  # the framework's own summary failure: keep the history
                event.outcome, event.error = "failed", e
                break
            update, feedback = self._judged(event, known, summary, preserved, messages)
            if update is not None:
                return update
        return self._standing(event, known, preserved, messages)
