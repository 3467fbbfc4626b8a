"""The LangChain middleware, end to end: ``create_agent`` with a fake chat model that records what
it receives, over a twelve-turn conversation with tool calls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from contextwise import ContextResult, PolicyConfigurationError, messages_chars
from contextwise.integrations.langchain import ContextPolicyMiddleware
from support import agents as scenario
from support.fake_chat import RecordingChatModel


def scripted_replies() -> Iterator[AIMessage]:
    """Per turn: the tool calls, then the answer."""
    for turn in range(scenario.TURNS):
        calls = [
            {"name": "weather", "args": {"city": city}, "id": scenario.call_id(turn, number)}
            for number, city in enumerate(scenario.cities(turn))
        ]
        yield AIMessage(content="", tool_calls=calls)
        yield AIMessage(content=scenario.answer(turn))


@tool
def weather(city: str) -> str:
    """Tell the weather in a city."""
    return scenario.weather(city)


def converse(
    middleware: ContextPolicyMiddleware, *, use_async: bool = False, turns: int = scenario.TURNS
) -> tuple[RecordingChatModel, list[BaseMessage]]:
    """Run the conversation; return the model (with what it saw) and the agent's messages."""
    model = RecordingChatModel(messages=scripted_replies())
    agent = create_agent(
        model, tools=[weather], system_prompt=scenario.SYSTEM, middleware=[middleware]
    )
    messages: list[BaseMessage] = []
    for turn in range(turns):
        request = {"messages": [*messages, HumanMessage(scenario.question(turn))]}
        state = asyncio.run(agent.ainvoke(request)) if use_async else agent.invoke(request)
        messages = state["messages"]
    return model, messages


def ids(messages: Sequence[BaseMessage]) -> Iterator[tuple[list[str], list[str]]]:
    for message in messages:
        calls = [call["id"] or "" for call in getattr(message, "tool_calls", [])]
        results = [message.tool_call_id] if isinstance(message, ToolMessage) else []
        yield calls, results


def assert_history_whole(messages: Sequence[BaseMessage], turns: int = scenario.TURNS) -> None:
    """The agent state holds every question, every call, every result and every answer."""
    asked = [m.content for m in messages if isinstance(m, HumanMessage)]
    assert asked == [scenario.question(turn) for turn in range(turns)]
    answers = [m.content for m in messages if isinstance(m, AIMessage) and not m.tool_calls]
    assert answers == [scenario.answer(turn) for turn in range(turns)]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert results == [
        scenario.call_id(turn, number)
        for turn in range(turns)
        for number in range(len(scenario.cities(turn)))
    ]


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
def test_the_model_sees_at_most_the_target_and_the_state_keeps_every_message(
    use_async: bool,
) -> None:
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(scenario.trim_policy(), on_result=results.append)
    model, messages = converse(middleware, use_async=use_async)

    assert_history_whole(messages)
    assert messages_chars(messages) > 3 * scenario.TARGET
    assert len(model.seen) == 2 * scenario.TURNS == len(results)
    for seen, result in zip(model.seen, results, strict=True):
        system, *conversation = seen
        assert isinstance(system, SystemMessage) and system.content == scenario.SYSTEM
        # The system message and the tools are pinned parts of the whole prompt.
        assert (
            messages_chars(conversation) == result.report.after_chars - result.report.pinned_chars
        )
        assert messages_chars(conversation) <= scenario.TARGET  # the trim step's target
        scenario.assert_pairs_whole(ids(conversation))
        # The newest message is always sent: the model answers the current turn.
        assert isinstance(conversation[-1], HumanMessage | ToolMessage)
    # The policy had to act: the last calls saw only the newest turns.
    assert sum(bool(result.report.changes) for result in results) >= scenario.TURNS
    last_question = next(m for m in model.seen[-1] if isinstance(m, HumanMessage))
    assert scenario.turn_of(str(last_question.content)) > scenario.TURNS // 2


def test_the_model_receives_the_agents_own_message_objects() -> None:
    middleware = ContextPolicyMiddleware(scenario.trim_policy())
    model, messages = converse(middleware, turns=4)
    by_identity = {id(message) for message in messages}
    assert all(id(message) in by_identity for message in model.seen[-1][1:])


def test_a_failing_compressor_leaves_the_conversation_whole() -> None:
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(
        scenario.compress_policy(),
        compressors={"summarize": scenario.broken_summarize},
        on_result=results.append,
    )
    model, messages = converse(middleware)

    assert_history_whole(messages)
    failed = [change for result in results for change in result.report.changes]
    assert failed and all(change.status == "failed" for change in failed)
    assert {change.error.code for change in failed if change.error} == {"compressor_failed"}
    # Nothing was removed, so every call saw the whole conversation so far.
    assert not any(result.removed["history"] for result in results)
    for seen in model.seen:
        asked = [m.content for m in seen if isinstance(m, HumanMessage)]
        assert asked == [scenario.question(turn) for turn in range(len(asked))]
    assert len(model.seen[-1]) == len(messages)  # the system message, and all but the answer


@pytest.mark.parametrize(
    ("use_async", "compressor"),
    [(False, scenario.summarize), (True, scenario.asummarize)],
    ids=["invoke", "ainvoke-async-compressor"],
)
def test_a_compressor_summary_reaches_the_model_and_the_state_keeps_the_turns(
    use_async: bool, compressor: Callable[[Sequence[Any]], Any]
) -> None:
    middleware = ContextPolicyMiddleware(
        scenario.compress_policy(), compressors={"summarize": compressor}
    )
    model, messages = converse(middleware, use_async=use_async)

    assert_history_whole(messages)
    _, first, *rest = model.seen[-1]
    assert isinstance(first, BaseMessage) and first.text == scenario.SUMMARY
    assert messages_chars([first, *rest]) <= scenario.TARGET
    scenario.assert_pairs_whole(ids(rest))


def test_a_step_on_another_fragment_is_refused_when_the_middleware_is_built() -> None:
    policy = scenario.trim_policy()
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicyMiddleware(policy, fragment_id="conversation")
    assert caught.value.code == "unknown_fragment"
    assert caught.value.params["fragment_id"] == "history"
