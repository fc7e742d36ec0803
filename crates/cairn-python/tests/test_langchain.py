"""cairn in LangChain's SummarizationMiddleware, with the framework's own fake chat model."""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

import cairn
from cairn.langchain import CairnSummarizationMiddleware, CompactionRefused

# The tool output says "148 passed" and not "148 passed; 0 failed": cairn's classifier reads
# "0 failed" as a failed attempt (a known false positive of the library's classifier), which
# auto_pin would pin and the faithful summaries below do not repeat.
HISTORY = [
    ("user", "We are still on libfoo 2.3.1, do not bump it. Please add request timeouts to the client."),
    ("assistant", "I will add a 30 second timeout to the HTTP client in src/client.rs."),
    ("user", "Run the tests."),
    ("assistant", "cargo test: test result: ok. 148 passed. The timeout is in place and the tests pass."),
    ("user", "Good. Now also log each retry."),
]
FAITHFUL = "We are still on libfoo 2.3.1 and must not bump it. A 30 second timeout was added to the HTTP client in src/client.rs, and the tests pass."
FABRICATED = "libfoo was upgraded to 2.4.0. A 30 second timeout was added to the HTTP client in src/client.rs."
DROPS_THE_PIN = "A 30 second timeout was added to the HTTP client in src/client.rs, and the tests pass."


def messages():
    return [HumanMessage(t, id=f"m{i}") if r == "user" else AIMessage(t, id=f"m{i}") for i, (r, t) in enumerate(HISTORY)]


def middleware(ledger, summaries, **kw):
    kw.setdefault("trigger", ("messages", 5))
    kw.setdefault("keep", ("messages", 2))
    return CairnSummarizationMiddleware(FakeListChatModel(responses=summaries), ledger=ledger, stream="agent", **kw)


def test_a_faithful_summary_is_admitted_inside_a_real_agent():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [FAITHFUL])
    agent = create_agent(FakeListChatModel(responses=["Logging each retry now."]), middleware=[mw])
    out = agent.invoke({"messages": messages()})["messages"]
    assert out[0].text.endswith(FAITHFUL) and out[0].additional_kwargs["cairn_verdict"]
    assert [m.text for m in out[1:3]] == [HISTORY[3][1], HISTORY[4][1]]
    (event,) = mw.events
    assert event.outcome == "admitted" and event.attempts == 1 and event.verdicts[0].admitted
    # Every message is a span, once, and the summary is the stream's head in cairn.
    ctx = ledger.context("agent", budget=100_000)
    assert ctx.head == event.verdicts[0].rid
    assert ledger.verify().ok


def test_every_message_is_recorded_once_however_often_the_list_is_passed():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [], trigger=("messages", 1000))
    msgs = messages()
    assert mw.before_model({"messages": msgs}, None) is None
    size = len(ledger)
    # A new middleware (a restart) sees the same list again: nothing new is recorded.
    again = middleware(ledger, [], trigger=("messages", 1000))
    again.before_model({"messages": msgs}, None)
    assert len(ledger) == size
    spans = [s for s in ledger.context("agent", budget=100_000).spans]
    assert sorted(s.turn for s in spans) == [0, 1, 2, 3, 4]


def test_a_fabricated_sentence_is_struck_and_the_agent_goes_on_with_what_cairn_admitted(caplog):
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [FABRICATED, FABRICATED], max_attempts=2)
    msgs = messages()
    update = mw.before_model({"messages": msgs}, None)
    (event,) = mw.events
    assert event.outcome == "repaired" and event.attempts == 2
    assert "identifier-drift" in event.verdicts[0].gates, event.verdicts[0].findings
    assert "compacted with what cairn admitted instead" in caplog.text
    # The history shrinks to cairn's text and the kept messages; the fabricated sentence is gone.
    assert update is not None and isinstance(update["messages"][0], RemoveMessage)
    kept = update["messages"][1:]
    assert len(kept) < len(msgs)
    summary = kept[0].text
    assert "2.4.0" not in summary and "30 second timeout" in summary, summary
    assert ledger.verify().ok


def test_a_refused_summary_is_repaired_and_the_agent_goes_on_with_the_repair(caplog):
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [DROPS_THE_PIN], max_attempts=1)
    update = mw.before_model({"messages": messages()}, None)
    (event,) = mw.events
    (verdict,) = event.verdicts
    assert verdict.refused and verdict.repair is not None and verdict.repair.admitted, verdict
    assert event.outcome == "repaired" and event.summary == verdict.repair.text
    assert "do not bump" in event.summary, event.summary
    assert update is not None and update["messages"][1].text.endswith(verdict.repair.text)
    assert ledger.context("agent", budget=100_000).head == verdict.repair.rid


def test_the_findings_go_back_to_the_model_and_a_mended_summary_is_admitted():
    ledger = cairn.Ledger.in_memory()
    seen: list[str] = []

    class Recording(FakeListChatModel):
        def _call(self, messages, stop=None, run_manager=None, **kwargs):
            seen.append(messages[-1].content)
            return super()._call(messages, stop, run_manager, **kwargs)

    mw = CairnSummarizationMiddleware(
        Recording(responses=[FABRICATED, FAITHFUL]), ledger=ledger, stream="agent",
        trigger=("messages", 5), keep=("messages", 2), max_attempts=2,
    )
    update = mw.before_model({"messages": messages()}, None)
    assert update is not None and isinstance(update["messages"][0], RemoveMessage)
    assert [e.outcome for e in mw.events] == ["admitted"] and mw.events[0].attempts == 2
    assert "identifier-drift" in seen[1] and "identifier-drift" not in seen[0]


def test_a_summary_that_drops_a_pinned_constraint_is_refused():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [DROPS_THE_PIN], max_attempts=1, fallback="raise")
    with pytest.raises(CompactionRefused):
        mw.before_model({"messages": messages()}, None)
    (verdict,) = mw.events[0].verdicts
    assert verdict.refused and "pin-loss" in verdict.gates, verdict.findings
    pins = ledger.context("agent").pins
    assert any("libfoo" in p.text for p in pins)


def test_with_fallback_raise_the_refusal_is_an_exception_carrying_the_verdicts():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [FABRICATED], max_attempts=1, fallback="raise")
    with pytest.raises(CompactionRefused, match="cairn refused 1 summaries of stream agent") as e:
        mw.before_model({"messages": messages()}, None)
    assert e.value.verdicts[0].refused
    with pytest.raises(ValueError, match="fallback 'drop'"):
        middleware(ledger, [], fallback="drop")


class Failing(FakeListChatModel):
    def _call(self, *a, **kw):
        raise RuntimeError("the summary service is down")


def test_a_summary_call_that_raises_never_removes_history():
    ledger = cairn.Ledger.in_memory()
    mw = CairnSummarizationMiddleware(Failing(responses=["unused"]), ledger=ledger, stream="agent", trigger=("messages", 5), keep=("messages", 2))
    agent = create_agent(FakeListChatModel(responses=["Still here."]), middleware=[mw])
    out = agent.invoke({"messages": messages()})["messages"]
    assert [m.text for m in out[:5]] == [t for _, t in HISTORY], "every message is kept"
    (event,) = mw.events
    assert event.outcome == "failed" and "the summary service is down" in str(event.error)
    assert event.verdicts == []


def test_the_async_path_judges_alike():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [FABRICATED, FAITHFUL], max_attempts=2)
    update = asyncio.run(mw.abefore_model({"messages": messages()}, None))
    assert update is not None and update["messages"][1].text.endswith(FAITHFUL)
    assert [v.admitted for v in mw.events[0].verdicts] == [False, True]


def test_a_new_middleware_on_the_same_ledger_compacts_again_after_an_admitted_compaction():
    ledger = cairn.Ledger.in_memory()
    first = middleware(ledger, [FAITHFUL])
    update = first.before_model({"messages": messages()}, None)
    assert update is not None
    kept = update["messages"][1:]
    later = kept + [AIMessage("Retry logging added to src/client.rs.", id="m5"), HumanMessage("Thanks, that is all.", id="m6"), AIMessage("Done.", id="m7")]
    # A restart: a new instance, the same ledger and stream. The carried fact still has its
    # raw witness, turn 0, which the first compaction evicted and the ledger kept.
    second = middleware(ledger, [FAITHFUL + " Retry logging was added to src/client.rs."], keep=("messages", 1))
    assert second.before_model({"messages": later}, None) is not None, second.events[-1].verdicts[-1].findings
    assert second.events[0].covers.startswith("turn:0..")


def test_an_edited_message_is_a_new_turn_and_messages_without_ids_are_recorded_once():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [], trigger=("messages", 1000))
    mw.before_model({"messages": [HumanMessage("first words", id="x")]}, None)
    again = middleware(ledger, [], trigger=("messages", 1000))
    again.before_model({"messages": [HumanMessage("edited words", id="x")]}, None)
    assert sorted(s.text for s in ledger.context("agent").spans) == ["edited words", "first words"]
    bare = [HumanMessage("no id here"), AIMessage("nor here")]
    mw.before_model({"messages": [HumanMessage("no id here"), AIMessage("nor here")]}, None)
    mw.before_model({"messages": bare}, None)
    mw.before_model({"messages": bare}, None)  # the framework gave them ids the first time
    assert len(ledger.context("agent").spans) == 4
    # The same words after another history are another turn.
    mw.before_model({"messages": [HumanMessage("delete the prod db?"), AIMessage("nor here")]}, None)
    assert len(ledger.context("agent").spans) == 6


def test_messages_without_ids_are_compacted_on_the_first_call():
    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [FAITHFUL])
    bare = [HumanMessage(t) if r == "user" else AIMessage(t) for r, t in HISTORY]
    assert mw.before_model({"messages": bare}, None) is not None
    assert [e.outcome for e in mw.events] == ["admitted"]
    assert mw.events[0].covers == "turn:0..turn:2"
    assert ledger.get("turn:4", stream="agent").fields["text"] == HISTORY[4][1]
    with pytest.raises(cairn.InvalidInput, match="turn:5 names no span in stream agent"):
        ledger.get("turn:5", stream="agent")


def test_chat_messages_keep_their_role_and_each_thread_is_a_stream():
    from langchain_core.messages import ChatMessage

    ledger = cairn.Ledger.in_memory()
    mw = middleware(ledger, [], trigger=("messages", 1000))
    mw.stream = lambda state, runtime: state["thread"]
    mw.before_model({"messages": [ChatMessage(role="user", content="hello from chat", id="c1")], "thread": "t1"}, None)
    (span,) = ledger.context("t1").spans
    assert span.role == "user"
    threaded = middleware(ledger, [], trigger=("messages", 1000))
    threaded.stream = "agent-{thread_id}"
    agent = create_agent(FakeListChatModel(responses=["ok"]), middleware=[threaded])
    agent.invoke({"messages": [HumanMessage("in thread seven")]}, {"configurable": {"thread_id": "7"}})
    assert [s.text for s in ledger.context("agent-7").spans] == ["in thread seven"]
