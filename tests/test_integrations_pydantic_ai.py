"""The pydantic-ai capability and history processor, end to end: an agent on pydantic-ai's
``FunctionModel``, which records what it receives, over a twelve-turn conversation with tool
calls."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability, ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from contextwise import ContextResult, PolicyConfigurationError, messages_chars
from contextwise.integrations.pydantic_ai import ContextPolicyCapability, history_processor
from support import agents as scenario


class Recorder:
    """The model's function: it records the messages of every request and follows the script."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
        if returns:
            turn = int(returns[0].tool_call_id.split("_")[1])
            return ModelResponse(parts=[TextPart(scenario.answer(turn))])
        # pydantic-ai merges consecutive requests: a summary request joins the user's prompt.
        prompt = [part for part in last.parts if isinstance(part, UserPromptPart)][-1]
        turn = scenario.turn_of(str(prompt.content))
        return ModelResponse(
            parts=[
                ToolCallPart("weather", {"city": city}, tool_call_id=scenario.call_id(turn, n))
                for n, city in enumerate(scenario.cities(turn))
            ]
        )


def converse(
    capability: AbstractCapability[Any], turns: int = scenario.TURNS
) -> tuple[Recorder, list[ModelMessage]]:
    """Run the conversation; return the recorder and the run's history after the last turn."""
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder), instructions=scenario.SYSTEM, capabilities=[capability])

    @agent.tool_plain
    def weather(city: str) -> str:
        """Tell the weather in a city."""
        return scenario.weather(city)

    history: list[ModelMessage] = []
    for turn in range(turns):
        result = agent.run_sync(scenario.question(turn), message_history=history)
        history = result.all_messages()
    return recorder, history


def ids(messages: Sequence[ModelMessage]) -> Iterator[tuple[list[str], list[str]]]:
    for message in messages:
        calls = [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]
        results = [p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)]
        yield calls, results


def questions(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def assert_history_whole(messages: Sequence[ModelMessage], turns: int = scenario.TURNS) -> None:
    """The run's history holds every question, call, result and answer."""
    assert questions(messages) == [scenario.question(turn) for turn in range(turns)]
    answers = [
        part.content for message in messages for part in message.parts if isinstance(part, TextPart)
    ]
    assert answers == [scenario.answer(turn) for turn in range(turns)]
    results = [result for _, found in ids(messages) for result in found]
    assert results == [
        scenario.call_id(turn, number)
        for turn in range(turns)
        for number in range(len(scenario.cities(turn)))
    ]


def test_the_request_carries_at_most_the_target_and_the_history_keeps_every_message() -> None:
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(scenario.trim_policy(), on_result=results.append)
    recorder, history = converse(capability)

    assert_history_whole(history)
    assert messages_chars(history) > 3 * scenario.TARGET
    assert len(recorder.seen) == 2 * scenario.TURNS == len(results)
    for seen, result in zip(recorder.seen, results, strict=True):
        # The instructions reach the model once, from the request parameters: pinned parts.
        sent = [replace(m, instructions=None) if isinstance(m, ModelRequest) else m for m in seen]
        assert messages_chars(sent) == result.report.after_chars - result.report.pinned_chars
        assert messages_chars(sent) <= scenario.TARGET  # the trim step's target
        scenario.assert_pairs_whole(ids(seen))
    # The capability remembers its reductions: it reduces when the context crosses the
    # trigger, not at every request.
    reductions = sum(bool(result.report.changes) for result in results)
    assert scenario.TURNS // 2 <= reductions < len(results)
    assert scenario.turn_of(questions(recorder.seen[-1])[0]) > scenario.TURNS // 2


def test_the_request_holds_the_runs_own_message_objects() -> None:
    recorder, history = converse(ContextPolicyCapability(scenario.trim_policy()), turns=5)
    by_identity = {id(message) for message in history}
    assert all(id(message) in by_identity for message in recorder.seen[-1])


def test_a_failing_compressor_leaves_the_request_and_the_history_whole() -> None:
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(
        scenario.compress_policy(),
        compressors={"summarize": scenario.broken_summarize},
        on_result=results.append,
    )
    recorder, history = converse(capability)

    assert_history_whole(history)
    failed = [change for result in results for change in result.report.changes]
    assert failed and all(change.status == "failed" for change in failed)
    assert not any(result.removed["history"] for result in results)
    for seen in recorder.seen:
        asked = questions(seen)
        assert asked == [scenario.question(turn) for turn in range(len(asked))]
    assert len(recorder.seen[-1]) == len(history) - 1  # all but the final answer


@pytest.mark.parametrize(
    "compressor", [scenario.summarize, scenario.asummarize], ids=["sync", "async"]
)
def test_a_compressor_summary_reaches_the_model_and_the_history_keeps_the_turns(
    compressor: Callable[[Sequence[Any]], Any],
) -> None:
    capability = ContextPolicyCapability(
        scenario.compress_policy(), compressors={"summarize": compressor}
    )
    recorder, history = converse(capability)

    assert_history_whole(history)
    first, *rest = recorder.seen[-1]
    texts = [getattr(part, "content", None) for part in first.parts]
    assert scenario.SUMMARY in texts
    assert messages_chars(recorder.seen[-1]) <= scenario.TARGET
    scenario.assert_pairs_whole(ids(rest))


def test_the_history_processor_gives_process_history_the_policys_context() -> None:
    results: list[ContextResult] = []
    process = history_processor(scenario.trim_policy(), on_result=results.append)
    recorder, history = converse(ProcessHistory(process))

    # ProcessHistory writes the processor's output back: the history loses what was trimmed,
    # and the results hold every message it lost.
    removed = [message for result in results for message in result.removed["history"]]
    assert removed and all(message not in history for message in removed)
    for seen in recorder.seen:
        assert messages_chars(seen) <= scenario.TARGET
        scenario.assert_pairs_whole(ids(seen))


def test_a_text_step_is_refused_when_the_capability_is_built() -> None:
    policy = {
        "mode": "reduce",
        "trigger_chars": 100,
        "steps": [
            {
                "id": "cut",
                "kind": "trim",
                "fragment_id": "history",
                "field": "text",
                "target_chars": 50,
            }
        ],
    }
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicyCapability(policy)
    assert caught.value.code == "field_mismatch"
