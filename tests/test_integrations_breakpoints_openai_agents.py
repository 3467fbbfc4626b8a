"""Cache breakpoints in the Agents SDK's ``PolicyModel``: the JSON body that the Agents SDK's own
OpenAI models send (over a mock transport that records it) carries OpenAI's
``prompt_cache_breakpoint`` where it was missing, never more than four in a request; the run's
items keep no breakpoint and the conversation stays ``extended``."""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
from typing import Any

import pytest

from contextwise import ContextResult

INSTRUCTIONS = "You are a careful assistant who answers in one word. " * 8

POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_chars": 1_000_000,
    "target_input_chars": 900_000,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}


def chat_answer(number: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


def responses_answer(number: int) -> dict[str, Any]:
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": f"msg_{number}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 11,
        },
    }


class Recorder:
    """A mock OpenAI API that records each request's JSON body and answers ``ok``."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.bodies: list[dict[str, Any]] = []
        self.numbers = itertools.count(1)

    def client(self) -> Any:
        import openai

        cls = openai.DefaultAsyncHttpxClient
        # openai 3 sends through httpx2, its earlier releases through httpx.
        names = {base.__module__.split(".")[0] for base in cls.__mro__}
        module = importlib.import_module("httpx2" if "httpx2" in names else "httpx")

        def handle(request: Any) -> Any:
            self.bodies.append(json.loads(request.content.decode("utf-8")))
            number = next(self.numbers)
            answer = chat_answer(number) if self.api == "chat" else responses_answer(number)
            return module.Response(200, json=answer)

        return cls(transport=module.MockTransport(handle))

    def model(self) -> Any:
        from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel
        from openai import AsyncOpenAI

        client = AsyncOpenAI(
            api_key="test", base_url="http://openai.test/v1", max_retries=0,
            http_client=self.client(),
        )
        if self.api == "chat":
            return OpenAIChatCompletionsModel("gpt-test", client)
        return OpenAIResponsesModel("gpt-test", client)

    def sent(self, body: dict[str, Any]) -> list[Any]:
        """The body's messages (Chat Completions) or input items (Responses)."""
        return list(body["messages"] if self.api == "chat" else body["input"])


def breakpoints(value: object) -> int:
    """How many ``prompt_cache_breakpoint`` keys a JSON value holds, at any depth."""
    if isinstance(value, dict):
        found = "prompt_cache_breakpoint" in value
        return sum((found, *(breakpoints(item) for item in value.values())))
    if isinstance(value, list):
        return sum(breakpoints(item) for item in value)
    return 0


def marked(recorder: Recorder, body: dict[str, Any]) -> list[int]:
    return [index for index, item in enumerate(recorder.sent(body)) if breakpoints(item)]


def run(model: Any, turns: int, first: list[Any] | None = None) -> list[Any]:
    """Run an agent for ``turns`` runs, each continuing the items of the one before."""
    from agents import Agent, RunConfig, Runner

    agent = Agent(name="helper", instructions=INSTRUCTIONS, model=model)
    items: list[Any] = list(first or [])
    for turn in range(turns):
        items.append({"role": "user", "content": f"Question {turn}?"})
        result = asyncio.run(
            Runner.run(agent, items, run_config=RunConfig(tracing_disabled=True))
        )
        items = result.to_input_list()
    return items


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_agents_sdk_marks_the_previous_end_and_the_newest_item(api: str) -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder(api)
    results: list[ContextResult] = []
    model = PolicyModel(
        recorder.model(), POLICY, cache_breakpoints=True, on_result=results.append
    )
    items = run(model, 3)
    system = 1 if api == "chat" else 0  # Chat Completions sends the instructions as a message
    first, second, third = (marked(recorder, body) for body in recorder.bodies)
    assert first == [system]
    assert second == [system, system + 2]
    assert third == [system + 2, system + 4]
    assert all(breakpoints(body) <= 4 for body in recorder.bodies)
    assert [result.report.conversation.status for result in results] == [
        "resynced",
        "extended",
        "extended",
    ]
    # The breakpoints are on the request only: the run's items carry none.
    assert breakpoints(items) == 0


def test_agents_sdk_counts_the_breakpoints_already_present() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder("responses")
    model = PolicyModel(recorder.model(), POLICY, cache_breakpoints=True)
    own = [
        {
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"Fact {n}.",
                    "prompt_cache_breakpoint": {"mode": "explicit"},
                }
            ],
        }
        for n in range(3)
    ]
    run(model, 2, first=own)
    # Three of the user's, then the newest item: the fourth; the next call has no room left.
    assert [breakpoints(body) for body in recorder.bodies] == [4, 4]
    assert marked(recorder, recorder.bodies[0]) == [0, 1, 2, 3]


def test_agents_sdk_without_cache_breakpoints_sends_none() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder("responses")
    run(PolicyModel(recorder.model(), POLICY), 2)
    assert [breakpoints(body) for body in recorder.bodies] == [0, 0]


def test_agents_sdk_cache_breakpoints_must_be_a_bool() -> None:
    from contextwise.errors import InvalidTypeError
    from contextwise.integrations.openai_agents import PolicyModel

    with pytest.raises(InvalidTypeError) as caught:
        PolicyModel(Recorder("responses").model(), POLICY, cache_breakpoints=None)  # type: ignore[arg-type]
    assert caught.value.code == "not_a_bool"
