"""The OpenAI Agents SDK session, end to end: ``Runner.run(..., session=PolicySession(...))`` with
a ``Model`` that records its input, over a twelve-turn conversation with reasoning and tool calls.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.items import ModelResponse, TResponseInputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

from contextwise import ContextResult, PolicyConfigurationError, messages_chars
from contextwise.integrations.openai_agents import PolicySession
from support import agents as scenario

Item = dict[str, Any]


class RecordingModel(Model):
    """A model that records the input of every call: per turn, a reasoning item and the tool
    calls, then the answer."""

    def __init__(self) -> None:
        self.seen: list[list[Item]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items: list[Item] = (
            [{"role": "user", "content": input}]
            if isinstance(input, str)
            else [dict(item) for item in copy.deepcopy(input)]
        )
        assert system_instructions == scenario.SYSTEM
        self.seen.append(items)
        last = items[-1]
        if last.get("type") == "function_call_output":
            turn = int(last["call_id"].split("_")[1])
            text = ResponseOutputText(
                annotations=[], text=scenario.answer(turn), type="output_text"
            )
            reply: list[Any] = [
                ResponseOutputMessage(
                    id=f"msg_{turn}",
                    content=[text],
                    role="assistant",
                    status="completed",
                    type="message",
                )
            ]
        else:
            turn = scenario.turn_of(str(last["content"]))
            reply = [
                ResponseReasoningItem(
                    id=f"rs_{turn}",
                    summary=[Summary(text="The weather tool knows.", type="summary_text")],
                    type="reasoning",
                )
            ]
            reply += [
                ResponseFunctionToolCall(
                    arguments=json.dumps({"city": city}),
                    call_id=scenario.call_id(turn, number),
                    name="weather",
                    type="function_call",
                    id=f"fc_{turn}_{number}",
                    status="completed",
                )
                for number, city in enumerate(scenario.cities(turn))
            ]
        return ModelResponse(output=reply, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


@function_tool
def weather(city: str) -> str:
    """Tell the weather in a city."""
    return scenario.weather(city)


async def converse(
    session: PolicySession, turns: int = scenario.TURNS
) -> tuple[RecordingModel, list[Item]]:
    """Run the conversation; return the model and every item the wrapped session stores."""
    model = RecordingModel()
    agent = Agent(name="weather", instructions=scenario.SYSTEM, model=model, tools=[weather])
    config = session.run_config(RunConfig(tracing_disabled=True))
    for turn in range(turns):
        await Runner.run(agent, scenario.question(turn), session=session, run_config=config)
    stored = await session.session.get_items()
    return model, [dict(item) for item in stored]


def ids(items: Sequence[Item]) -> Iterator[tuple[list[str], list[str]]]:
    for item in items:
        kind = item.get("type")
        yield (
            [item["call_id"]] if kind == "function_call" else [],
            [item["call_id"]] if kind == "function_call_output" else [],
        )


def assert_reasoning_with_its_calls(items: Sequence[Item]) -> None:
    """Each reasoning item is followed by its calls, and each call is preceded by its reasoning."""
    for index, item in enumerate(items):
        if item.get("type") == "reasoning":
            assert items[index + 1].get("type") == "function_call"
        if item.get("type") == "function_call":
            before = index - 1
            while items[before].get("type") == "function_call":
                before -= 1
            assert items[before].get("type") == "reasoning"


def questions(items: Sequence[Item]) -> list[str]:
    return [str(item["content"]) for item in items if item.get("role") == "user"]


def assert_history_whole(items: Sequence[Item], turns: int = scenario.TURNS) -> None:
    assert questions(items) == [scenario.question(turn) for turn in range(turns)]
    assert [item["id"] for item in items if item.get("type") == "reasoning"] == [
        f"rs_{turn}" for turn in range(turns)
    ]
    outputs = [item["call_id"] for item in items if item.get("type") == "function_call_output"]
    assert outputs == [
        scenario.call_id(turn, number)
        for turn in range(turns)
        for number in range(len(scenario.cities(turn)))
    ]


def history_part(seen: list[Item]) -> list[Item]:
    """What the session gave the run: everything before the run's own question."""
    last_question = max(i for i, item in enumerate(seen) if item.get("role") == "user")
    return seen[:last_question]


def test_every_model_call_sees_at_most_the_target_and_the_session_stores_everything() -> None:
    results: list[ContextResult] = []
    session = PolicySession(
        SQLiteSession("weather"), scenario.trim_policy(), on_result=results.append
    )
    model, stored = asyncio.run(converse(session))

    assert_history_whole(stored)
    assert messages_chars(stored) > 3 * scenario.TARGET
    assert len(model.seen) == 2 * scenario.TURNS == len(results)
    for seen in model.seen:
        # The whole input of every call, the run's own tool calls and outputs included.
        assert messages_chars(seen) <= scenario.TARGET
        scenario.assert_pairs_whole(ids(seen))
        assert_reasoning_with_its_calls(seen)
    assert sum(bool(result.report.changes) for result in results) >= scenario.TURNS // 2
    assert scenario.turn_of(questions(model.seen[-1])[0]) > scenario.TURNS // 2


def test_a_limit_reads_the_wrapped_sessions_latest_items_unchanged() -> None:
    session = PolicySession(SQLiteSession("weather"), scenario.trim_policy())
    _, stored = asyncio.run(converse(session, turns=6))
    latest = asyncio.run(session.get_items(limit=3))
    assert [dict(item) for item in latest] == stored[-3:]


def test_a_failing_compressor_leaves_the_history_whole() -> None:
    results: list[ContextResult] = []
    session = PolicySession(
        SQLiteSession("weather"),
        scenario.compress_policy(),
        compressors={"summarize": scenario.broken_summarize},
        on_result=results.append,
    )
    model, stored = asyncio.run(converse(session))

    assert_history_whole(stored)
    failed = [change for result in results for change in result.report.changes]
    assert failed and all(change.status == "failed" for change in failed)
    assert not any(result.removed["history"] for result in results)
    for seen in model.seen:
        asked = questions(seen)
        assert asked == [scenario.question(turn) for turn in range(len(asked))]
    assert len(model.seen[-1]) == len(stored) - 1  # all but the final answer


@pytest.mark.parametrize(
    "compressor", [scenario.summarize, scenario.asummarize], ids=["sync", "async"]
)
def test_a_compressor_summary_reaches_the_model_and_the_session_keeps_the_turns(
    compressor: Callable[[Sequence[Any]], Any],
) -> None:
    session = PolicySession(
        SQLiteSession("weather"),
        scenario.compress_policy(),
        compressors={"summarize": compressor},
    )
    model, stored = asyncio.run(converse(session))

    assert_history_whole(stored)
    seen = model.seen[-1]
    assert scenario.SUMMARY in json.dumps(seen[0])
    assert messages_chars(history_part(seen)) <= scenario.TARGET
    scenario.assert_pairs_whole(ids(seen))
    assert_reasoning_with_its_calls(seen)


def test_pop_and_clear_go_to_the_wrapped_session() -> None:
    stored = SQLiteSession("weather")
    session = PolicySession(stored, scenario.trim_policy())

    async def scenario_steps() -> tuple[Any, list[Any], list[Any]]:
        await session.add_items(
            [{"role": "user", "content": "Hi"}, {"role": "user", "content": "?"}]
        )
        popped = await session.pop_item()
        kept = await stored.get_items()
        await session.clear_session()
        return popped, kept, await stored.get_items()

    popped, kept, cleared = asyncio.run(scenario_steps())
    assert dict(popped or {}) == {"role": "user", "content": "?"}
    assert [dict(item) for item in kept] == [{"role": "user", "content": "Hi"}]
    assert cleared == []
    assert session.session_id == "weather"


def test_a_policy_without_its_compressor_is_refused_when_the_session_is_built() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        PolicySession(SQLiteSession("weather"), scenario.compress_policy())
    assert caught.value.code == "unknown_compressor"
