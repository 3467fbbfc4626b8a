"""Remembered reductions in the three integrations: between two reductions every prompt extends
the previous one (the provider's prompt cache holds), a summary is made once, a restarted process
with a durable store goes on without summarizing again, and nothing a store does ends a run."""

from __future__ import annotations

import asyncio
import copy
import sqlite3
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

import pytest
from agents import Agent as AgentsAgent
from agents import RunConfig, Runner, SQLiteSession
from agents.run_config import CallModelData, ModelInputData
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart
from pydantic_ai.models.function import FunctionModel

from contextwise import (
    ContextPolicy,
    ContextResult,
    InvalidTypeError,
    InvalidValueError,
    MemoryStore,
    MessagesFragment,
    SQLiteStore,
    messages_chars,
)
from contextwise.integrations.langchain import ContextPolicyMiddleware
from contextwise.integrations.openai_agents import PolicySession
from contextwise.integrations.pydantic_ai import ContextPolicyCapability, history_processor
from support import agents as scenario
from support.errors import assert_translated
from test_integrations_langchain import RecordingChatModel, scripted_replies, weather
from test_integrations_openai_agents import RecordingModel
from test_integrations_openai_agents import weather as agents_weather
from test_integrations_pydantic_ai import Recorder

TRIGGER = 1_400
TARGET = 700


def trim_policy() -> dict[str, Any]:
    """Reduce to the target once the conversation crosses twice the target."""
    return {
        "mode": "reduce",
        "trigger_chars": TRIGGER,
        "target_input_chars": TARGET,
        "steps": [
            {"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": TARGET}
        ],
    }


def summary_policy() -> dict[str, Any]:
    """Summarize all but the newest turn once the conversation crosses the trigger."""
    return {
        "mode": "reduce",
        "trigger_chars": TRIGGER,
        "target_input_chars": TARGET,
        "steps": [
            {
                "id": "summary",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "summarize",
                "keep_groups": 1,
            }
        ],
    }


class CountingSummarizer:
    """The working compressor, counting its calls: each one is a summary paid for."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, messages: Sequence[Any]) -> str:
        self.calls += 1
        return scenario.SUMMARY


def fingerprints(messages: Sequence[Any]) -> list[str]:
    """What identifies a sent message across calls, whatever the framework."""
    from contextwise.integrations._conversation import fingerprint

    return [fingerprint(message) for message in messages]


def assert_prefix_extensions_between_reductions(
    prompts: Sequence[Sequence[Any]], results: Sequence[ContextResult]
) -> int:
    """Every prompt extends the previous one, except right after a reduction; return how many
    reductions there were."""
    assert len(prompts) == len(results)
    reductions = 0
    for index in range(1, len(prompts)):
        previous, current = fingerprints(prompts[index - 1]), fingerprints(prompts[index])
        reduced = any(change.status == "applied" for change in results[index].report.changes)
        reductions += reduced
        if not reduced:
            assert current[: len(previous)] == previous, f"call {index} broke the prefix"
    return reductions


# --- LangChain -----------------------------------------------------------------------------------


def langchain_conversation(
    middleware: ContextPolicyMiddleware,
    *,
    turns: int,
    first: int = 0,
    checkpointer: InMemorySaver | None = None,
    thread: str = "thread-1",
) -> tuple[RecordingChatModel, InMemorySaver]:
    """Turns of a LangChain agent with a checkpointer: each invoke sends only the new question."""
    replies = scripted_replies()
    for _ in range(2 * first):
        next(replies)
    model = RecordingChatModel(messages=replies)
    saver = checkpointer or InMemorySaver()
    agent = create_agent(
        model,
        tools=[weather],
        system_prompt=scenario.SYSTEM,
        middleware=[middleware],
        checkpointer=saver,
    )
    config = {"configurable": {"thread_id": thread}}
    for turn in range(first, first + turns):
        agent.invoke({"messages": [HumanMessage(scenario.question(turn))]}, config)
    return model, saver


def sent(model: RecordingChatModel) -> list[list[BaseMessage]]:
    return [seen[1:] for seen in model.seen]  # without the system message


def test_langchain_prompts_extend_each_other_between_reductions() -> None:
    results: list[ContextResult] = []
    model, _ = langchain_conversation(
        ContextPolicyMiddleware(trim_policy(), on_result=results.append), turns=12
    )
    reductions = assert_prefix_extensions_between_reductions(sent(model), results)
    assert 1 <= reductions <= len(results) // 4
    statuses = [
        result.report.conversation.status for result in results if result.report.conversation
    ]
    assert statuses[0] == "resynced" and set(statuses[1:]) == {"extended"}
    for seen in sent(model):
        assert messages_chars(seen) <= TRIGGER + 300  # never far above the trigger
    assert results[-1].report.conversation.key == "ContextPolicyMiddleware:thread-1"


def test_langchain_without_a_thread_id_is_stateless_and_says_so() -> None:
    results: list[ContextResult] = []
    model = RecordingChatModel(messages=scripted_replies())
    middleware = ContextPolicyMiddleware(trim_policy(), on_result=results.append)
    agent = create_agent(
        model, tools=[weather], system_prompt=scenario.SYSTEM, middleware=[middleware]
    )
    agent.invoke({"messages": [HumanMessage(scenario.question(0))]})
    assert {result.report.conversation.status for result in results} == {"stateless"}
    assert middleware._conversation.memory_bytes == 0


def test_langchain_summarizes_once_per_reduction_and_keeps_the_summary() -> None:
    results: list[ContextResult] = []
    summarizer = CountingSummarizer()
    model, _ = langchain_conversation(
        ContextPolicyMiddleware(
            summary_policy(), compressors={"summarize": summarizer}, on_result=results.append
        ),
        turns=12,
    )
    reductions = assert_prefix_extensions_between_reductions(sent(model), results)
    assert summarizer.calls == reductions >= 1
    assert summarizer.calls <= len(results) // 4
    # Between reductions the summary stays at the head of every prompt.
    last_reduction = max(index for index, result in enumerate(results) if result.report.changes)
    for seen in sent(model)[last_reduction:]:
        assert scenario.SUMMARY in str(seen[0].content)


def test_langchain_after_a_restart_with_a_sqlite_store_goes_on_without_summarizing_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    summarizer = CountingSummarizer()
    results: list[ContextResult] = []

    def middleware() -> ContextPolicyMiddleware:
        return ContextPolicyMiddleware(
            summary_policy(),
            compressors={"summarize": summarizer},
            on_result=results.append,
            store=SQLiteStore(path),
            ttl=3600,
        )

    first_model, saver = langchain_conversation(middleware(), turns=8)
    calls_before = summarizer.calls
    assert calls_before >= 1
    last_prompt = sent(first_model)[-1]
    count_before = len(results)
    # A new process: a new middleware, a new store object on the same file, the same checkpoint.
    second_model, _ = langchain_conversation(middleware(), turns=1, first=8, checkpointer=saver)
    restarted = results[count_before]
    assert restarted.report.conversation.status == "extended"
    assert summarizer.calls == calls_before  # the summary was not bought again
    assert fingerprints(sent(second_model)[0][: len(last_prompt)]) == fingerprints(last_prompt)


def test_two_workers_on_one_thread_never_crash_a_run(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "memory.db")
    results: list[ContextResult] = []
    first = ContextPolicyMiddleware(trim_policy(), store=store, on_result=results.append)
    second = ContextPolicyMiddleware(trim_policy(), store=store, on_result=results.append)
    saver = InMemorySaver()
    for turn in range(6):
        worker = first if turn % 2 == 0 else second
        langchain_conversation(worker, turns=1, first=turn, checkpointer=saver)
    statuses = [result.report.conversation.status for result in results]
    # A worker whose memory is stale finds the other's write: it falls back for that call,
    # forgets, and reads the store again on the next one.
    assert "fallback" in statuses
    assert {result.report.conversation.error_code for result in results} <= {
        None,
        "conversation_conflict",
    }


def test_two_runs_on_one_thread_at_once_do_not_crash() -> None:
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(trim_policy(), on_result=results.append)
    model = RecordingChatModel(messages=scripted_replies())
    agent = create_agent(
        model, tools=[weather], system_prompt=scenario.SYSTEM, middleware=[middleware]
    )
    config = {"configurable": {"thread_id": "shared"}}

    async def both() -> None:
        await asyncio.gather(
            agent.ainvoke({"messages": [HumanMessage(scenario.question(0))]}, config),
            agent.ainvoke({"messages": [HumanMessage(scenario.question(1))]}, config),
        )

    asyncio.run(both())
    assert len(results) == len(model.seen) >= 2


class ReadOnlyMemory:
    """A user's store that reads conversations but cannot write them."""

    def load_conversation(self, key: str, *, ttl: float | None = None) -> Any:
        return None


@pytest.mark.parametrize("integration", [ContextPolicyMiddleware, ContextPolicyCapability])
def test_a_store_that_cannot_save_conversations_is_refused_when_the_integration_is_built(
    integration: Any,
) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        integration(trim_policy(), store=ReadOnlyMemory())
    assert caught.value.code == "incomplete_store"
    assert caught.value.params["names"] == ["save_conversation"]
    assert caught.value.params["protocols"] == ["ConversationStore"]
    assert_translated(caught.value)
    with pytest.raises(InvalidTypeError) as session_caught:
        PolicySession(SQLiteSession("s"), trim_policy(), store=cast(Any, ReadOnlyMemory()))
    assert session_caught.value.code == "incomplete_store"


class BrokenStore(MemoryStore):
    """A store whose database is gone: every call raises what sqlite3 raises."""

    def load_conversation(self, key: str, *, ttl: float | None = None) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    def save_conversation(
        self, key: str, value: Any, version: int, *, ttl: float | None = None
    ) -> int:
        raise sqlite3.OperationalError("disk I/O error")


def test_a_broken_store_falls_back_to_the_whole_history_and_the_run_goes_on() -> None:
    results: list[ContextResult] = []
    model, _ = langchain_conversation(
        ContextPolicyMiddleware(trim_policy(), store=BrokenStore(), on_result=results.append),
        turns=6,
    )
    assert len(results) == len(model.seen) == 12
    for result, seen in zip(results, sent(model), strict=True):
        assert result.report.conversation.status == "fallback"
        assert result.report.conversation.error_code == "session_store_failed"
        assert messages_chars(seen) == result.report.after_chars - result.report.pinned_chars


def test_memory_is_bounded_in_bytes_least_recently_used_first() -> None:
    middleware = ContextPolicyMiddleware(trim_policy(), max_memory_bytes=4_000)
    conversation = middleware._conversation
    history = [{"role": "user", "content": f"Question {n}?"} for n in range(20)]
    for thread in range(30):
        conversation.fit(history, f"thread-{thread}")
        assert conversation.memory_bytes <= 4_000
    assert "thread-29" in conversation._memory and "thread-0" not in conversation._memory


def test_bad_memory_options_are_coded_errors() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        ContextPolicyMiddleware(trim_policy(), store="memory.db")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_conversation_store"
    assert_translated(caught.value)
    with pytest.raises(InvalidValueError) as bad_ttl:
        ContextPolicyMiddleware(trim_policy(), store=MemoryStore(), ttl=-1)
    assert bad_ttl.value.code == "invalid_ttl"
    assert_translated(bad_ttl.value)
    with pytest.raises(InvalidValueError) as bad_bytes:
        ContextPolicyMiddleware(trim_policy(), max_memory_bytes=0)
    assert bad_bytes.value.code == "out_of_range"


def storm_policy() -> dict[str, Any]:
    """A paid step (a summary) that cannot reach the target (the newest turn alone is above it),
    after a trim that brings the context under the trigger."""
    return {
        "mode": "reduce",
        "trigger_chars": 300,
        "target_input_chars": 100,
        "steps": [
            {"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 250},
            {
                "id": "sum",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "brief",
                "keep_groups": 1,
            },
        ],
    }


def test_no_reduction_storm_of_paid_steps_when_what_must_stay_is_above_the_target() -> None:
    results: list[ContextResult] = []
    summaries: list[int] = []

    def brief(messages: Any) -> str:
        summaries.append(len(messages))
        return "summary"

    middleware = ContextPolicyMiddleware(
        storm_policy(), on_result=results.append, compressors={"brief": brief}
    )
    conversation = middleware._conversation
    history: list[dict[str, str]] = []
    for turn in range(12):
        history = [*history, {"role": "user", "content": f"{turn:02d} " + "x" * 150}]
        conversation.fit(history, "thread")
    reports = [result.report for result in results]
    waited = [report for report in reports if report.conversation.deferred]
    assert waited, "the paid step never waited"
    assert all(not report.target_met for report in waited)
    # The summary waits until the context grew by the gap between trigger and target (200
    # characters): fewer summaries than calls above the trigger.
    above = [report for report in reports if report.before_chars > 300]
    assert len(summaries) < len(above)


def test_a_wait_of_paid_steps_ends_when_the_budget_would_be_passed() -> None:
    from contextwise import ContextBudget, EstimateCounter

    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(
        storm_policy(),
        on_result=results.append,
        compressors={"brief": lambda messages: "summary"},
        counter=EstimateCounter(),
        budget=ContextBudget(window=30, output=5, safety=0),
    )
    conversation = middleware._conversation
    history: list[dict[str, str]] = []
    for turn in range(6):
        history = [*history, {"role": "user", "content": f"{turn:02d} " + "x" * 150}]
        conversation.fit(history, "thread")
    assert any(result.report.conversation.forced for result in results)


# --- pydantic-ai ---------------------------------------------------------------------------------


def pydantic_ai_conversation(
    capability: Any, *, turns: int, system_prompt: str | None = None
) -> tuple[Recorder, list[ModelMessage]]:
    recorder = Recorder()
    agent = Agent(
        FunctionModel(recorder),
        instructions=scenario.SYSTEM,
        system_prompt=system_prompt or (),
        capabilities=[capability],
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        """Tell the weather in a city."""
        return scenario.weather(city)

    history: list[ModelMessage] = []
    for turn in range(turns):
        result = agent.run_sync(scenario.question(turn), message_history=history)
        history = result.all_messages()
    return recorder, history


def test_pydantic_ai_prompts_extend_each_other_and_summaries_are_bought_once() -> None:
    results: list[ContextResult] = []
    summarizer = CountingSummarizer()
    capability = ContextPolicyCapability(
        summary_policy(), compressors={"summarize": summarizer}, on_result=results.append
    )
    recorder, _ = pydantic_ai_conversation(capability, turns=12)
    reductions = assert_prefix_extensions_between_reductions(recorder.seen, results)
    assert summarizer.calls == reductions >= 1
    assert summarizer.calls <= len(results) // 4
    keys = {result.report.conversation.key for result in results}
    assert len(keys) == 1 and None not in keys  # one conversation id across the runs


def test_pydantic_ai_with_a_system_prompt_pins_only_the_system_parts() -> None:
    results: list[ContextResult] = []
    document = "A long document. " * 400  # the first prompt: 6,800 characters
    capability = ContextPolicyCapability(trim_policy(), on_result=results.append)
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder), system_prompt="Be brief.", capabilities=[capability])

    @agent.tool_plain
    def weather(city: str) -> str:
        """Tell the weather in a city."""
        return scenario.weather(city)

    history: list[ModelMessage] = []
    for turn in range(8):
        prompt = scenario.question(turn) + (document if turn == 0 else "")
        history = agent.run_sync(prompt, message_history=history).all_messages()
    last = recorder.seen[-1]
    # The system prompt is still there, the long first prompt is gone, and no two requests are
    # side by side.
    first = last[0]
    assert isinstance(first, ModelRequest)
    assert isinstance(first.parts[0], SystemPromptPart) and first.parts[0].content == "Be brief."
    assert document not in str(last)
    kinds = [message.kind for message in last]
    assert all(a != b or a != "request" for a, b in pairwise(kinds))
    assert messages_chars(last) <= TRIGGER + 300


def test_process_history_with_a_system_prompt_stays_bounded_for_sixty_turns() -> None:
    policy = {
        "mode": "reduce",
        "target_input_chars": 1_500,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 1_500}],
    }
    recorder = Recorder()
    agent = Agent(
        FunctionModel(recorder),
        system_prompt="Be brief.",
        capabilities=[ProcessHistory(history_processor(policy))],
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        """Tell the weather in a city."""
        return scenario.weather(city)

    history: list[ModelMessage] = []
    sizes: list[int] = []
    for turn in range(60):
        history = agent.run_sync(scenario.question(turn), message_history=history).all_messages()
        sizes.append(messages_chars(recorder.seen[-1]))
        first = history[0]
        assert isinstance(first, ModelRequest)
        assert len(first.parts) <= 3, f"turn {turn}: the first request grows"
    assert max(sizes) <= 1_500 + 400
    assert max(sizes[30:]) <= max(sizes[:30]) + 200  # bounded, not growing


# --- the Agents SDK ------------------------------------------------------------------------------


async def agents_conversation(
    session: PolicySession, turns: int, base: RunConfig | None = None
) -> RecordingModel:
    model = RecordingModel()
    agent = AgentsAgent(
        name="weather", instructions=scenario.SYSTEM, model=model, tools=[agents_weather]
    )
    config = session.run_config(base or RunConfig(tracing_disabled=True))
    for turn in range(turns):
        await Runner.run(agent, scenario.question(turn), session=session, run_config=config)
    return model


def test_agents_sdk_prompts_extend_each_other_and_get_items_is_unchanged() -> None:
    results: list[ContextResult] = []
    summarizer = CountingSummarizer()
    stored = SQLiteSession("memory")
    session = PolicySession(
        stored, summary_policy(), compressors={"summarize": summarizer}, on_result=results.append
    )
    model = asyncio.run(agents_conversation(session, 12))
    reductions = assert_prefix_extensions_between_reductions(model.seen, results)
    assert summarizer.calls == reductions >= 1
    assert asyncio.run(session.get_items()) == asyncio.run(stored.get_items())
    assert asyncio.run(session.get_items(limit=2)) == asyncio.run(stored.get_items(limit=2))


def test_agents_sdk_a_session_limit_no_longer_bypasses_the_policy() -> None:
    from agents.memory import SessionSettings

    results: list[ContextResult] = []
    stored = SQLiteSession("limited", session_settings=SessionSettings(limit=40))
    session = PolicySession(stored, trim_policy(), on_result=results.append)
    model = asyncio.run(agents_conversation(session, 12))
    assert len(results) == len(model.seen)
    assert max(messages_chars(seen) for seen in model.seen) <= TRIGGER + 300


def test_agents_sdk_the_filter_composes_with_the_callers_filter() -> None:
    calls: list[int] = []

    def keep_count(data: CallModelData[Any]) -> ModelInputData:
        calls.append(len(data.model_data.input))
        return data.model_data

    session = PolicySession(SQLiteSession("composed"), trim_policy())
    base = RunConfig(tracing_disabled=True, call_model_input_filter=keep_count)
    model = asyncio.run(agents_conversation(session, 8, base))
    # The caller's filter ran at every call, on what the policy kept.
    assert calls == [len(seen) for seen in model.seen]


def test_agents_sdk_item_types_contextwise_does_not_know_are_opaque_units() -> None:
    results: list[ContextResult] = []
    stored = SQLiteSession("opaque")
    unknown = [
        {"type": "tool_search_call", "id": "ts_1", "status": "completed", "arguments": {}},
        {"type": "tool_search_output", "id": "to_1", "status": "completed", "tools": []},
    ]
    asyncio.run(stored.add_items(copy.deepcopy(unknown)))
    session = PolicySession(stored, trim_policy(), on_result=results.append)

    async def filtered() -> ModelInputData:
        items = [*await stored.get_items(), {"role": "user", "content": "Hi"}]
        data = CallModelData(
            model_data=ModelInputData(input=items, instructions=None), agent=None, context=None
        )
        return await session.model_input_filter(data)  # type: ignore[arg-type]

    kept = asyncio.run(filtered())
    assert [item.get("type") for item in kept.input[:2]] == [
        "tool_search_call",
        "tool_search_output",
    ]
    assert results[0].report.before_chars > len("Hi")


# --- the policy itself: a summary survives the run that made it -----------------------------------


def test_a_trim_after_a_compress_keeps_the_summary_it_just_made() -> None:
    history: list[dict[str, str]] = []
    for n in range(6):
        history += [
            {"role": "user", "content": f"Question {n} " * 5},
            {"role": "assistant", "content": f"Answer {n} " * 5},
        ]
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "target_input_chars": 100,
            "steps": [
                {
                    "id": "summary",
                    "kind": "compress",
                    "fragment_id": "history",
                    "compressor": "s",
                    "keep_groups": 1,
                },
                {"id": "trim", "kind": "trim", "fragment_id": "history", "target_chars": 100},
            ],
        }
    )
    result = policy.bind(compressors={"s": lambda messages: "Summary of earlier turns."}).process(
        [MessagesFragment("history", messages=history)]
    )
    kept = [message["content"] for message in result.fragment("history").messages]
    assert kept[0] == "Summary of earlier turns."
    assert [change.id for change in result.report.changes] == ["summary"]
    assert not result.report.target_met and result.report.shortfall_chars == 25


def stored_memory(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT conversation_key, version FROM contextwise_conversations"
        ).fetchall()


def test_the_store_keeps_fingerprints_and_made_messages_not_a_copy_of_the_history(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    summarizer = CountingSummarizer()
    langchain_conversation(
        ContextPolicyMiddleware(
            summary_policy(), compressors={"summarize": summarizer}, store=SQLiteStore(path)
        ),
        turns=8,
    )
    rows = stored_memory(path)
    assert [row[0] for row in rows] == ["ContextPolicyMiddleware:thread-1"]
    with sqlite3.connect(path) as connection:
        (data,) = connection.execute("SELECT data FROM contextwise_conversations").fetchone()
    assert scenario.question(0) not in data  # the history stays in the checkpointer
    assert scenario.SUMMARY in data  # what contextwise made is kept
