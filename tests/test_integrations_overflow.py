"""Reactive compaction: when the provider refuses a prompt as longer than its context window, each
integration reduces again to the window the refusal reports and retries once; a second refusal
raises the framework's own error with the report attached.

Each provider is the real chat model class of the framework's provider package over a mock
transport, which answers with the provider's real 400 body when the prompt is above a window of
``WINDOW`` tokens (4 characters a token), and with an ordinary answer otherwise: nothing leaves the
process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from contextwise import ContextResult
from contextwise.integrations._overflow import Refusal, read_refusal

WINDOW = 2_000
"""The mock provider's context window, in tokens (4 characters a token)."""

POLICY: dict[str, Any] = {
    # Its trigger is far above the window: only the refusal makes it act.
    "mode": "reduce",
    "trigger_chars": 1_000_000,
    "target_input_chars": 900_000,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}

SYSTEM = "You are a careful assistant. " * 20


def history_dicts(turns: int = 12) -> list[dict[str, str]]:
    """A conversation of ``turns`` turns of about 1,000 characters each."""
    messages: list[dict[str, str]] = []
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"Question {n}: " + "why? " * 100},
            {"role": "assistant", "content": f"Answer {n}: " + "because. " * 55},
        ]
    messages.append({"role": "user", "content": "And the last question?"})
    return messages


class Provider:
    """A mock provider: it records each request's body and refuses those above the window."""

    def __init__(self, refuse: Callable[[int, int], dict[str, Any]], ok: dict[str, Any]):
        self.refuse = refuse
        self.ok = ok
        self.sent: list[int] = []
        self.always_refuse = False

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content.decode("utf-8")
        tokens = len(body) // 4
        self.sent.append(len(body))
        if self.always_refuse or tokens > WINDOW:
            return httpx2.Response(400, json=self.refuse(tokens, WINDOW))
        return httpx2.Response(200, json=self.ok)

    def async_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))


def openai_refusal(tokens: int, window: int) -> dict[str, Any]:
    """OpenAI's body for a chat completion above the window."""
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {tokens} tokens. Please reduce the length of the "
                "messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def anthropic_refusal(tokens: int, window: int) -> dict[str, Any]:
    """Anthropic's body for a message above the window."""
    return {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {tokens} tokens > {window} maximum",
        },
    }


CHAT_OK = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-test",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}

ANTHROPIC_OK = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}


def test_the_refusal_texts_of_three_providers_are_read() -> None:
    class Refused(Exception):
        pass

    openai_text = openai_refusal(130_532, 128_000)["error"]["message"]
    assert read_refusal(Refused(openai_text)) == Refusal(128_000, 130_532, None)
    assert read_refusal(
        Refused("prompt is too long: 208,310 tokens > 200,000 maximum")
    ) == Refusal(200_000, 208_310, None)
    assert read_refusal(
        Refused("input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000")
    ) == Refusal(200_000, 197_202, 21_333)
    assert read_refusal(
        Refused(
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576)."
        )
    ) == Refusal(1_048_576, 1_200_000, None)
    assert read_refusal(Refused("Your input exceeds the context window.")) == Refusal()


# --- the Agents SDK ---------------------------------------------------------------------------


def agents_model(provider: Provider) -> Any:
    from agents import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=provider.async_client(),
    )
    return OpenAIChatCompletionsModel("gpt-test", client)


def run_agent(model: Any, items: list[dict[str, str]]) -> Any:
    from agents import Agent, RunConfig, Runner

    agent = Agent(name="helper", instructions=SYSTEM, model=model)
    return asyncio.run(
        Runner.run(agent, items, run_config=RunConfig(tracing_disabled=True))  # type: ignore[arg-type]
    )


def test_agents_sdk_refused_call_is_reduced_and_sent_once_more() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    results: list[ContextResult] = []
    model = PolicyModel(agents_model(provider), POLICY, on_result=results.append)
    answer = run_agent(model, history_dicts())
    assert answer.final_output == "ok"
    assert len(provider.sent) == 2
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    conversation = results[-1].report.conversation
    assert conversation is not None and conversation.overflow
    assert conversation.overflow_limit == WINDOW
    assert conversation.overflow_sent == first // 4
    assert [result.report.conversation.overflow for result in results] == [False, True]


def test_agents_sdk_second_refusal_raises_the_sdk_error_with_the_report() -> None:
    from openai import BadRequestError

    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    provider.always_refuse = True
    model = PolicyModel(agents_model(provider), POLICY)
    with pytest.raises(BadRequestError) as raised:
        run_agent(model, history_dicts())
    assert len(provider.sent) == 2
    report = raised.value.contextwise_report  # type: ignore[attr-defined]
    assert report.conversation.overflow
    assert report.after_chars < report.before_chars
    assert any("contextwise" in note for note in raised.value.__notes__)


def test_agents_sdk_other_bad_requests_are_not_retried() -> None:
    from openai import BadRequestError

    from contextwise.integrations.openai_agents import PolicyModel

    def invalid(tokens: int, window: int) -> dict[str, Any]:
        return {"error": {"message": "bad", "type": "invalid_request_error", "code": "x"}}

    provider = Provider(invalid, CHAT_OK)
    provider.always_refuse = True
    with pytest.raises(BadRequestError) as raised:
        run_agent(PolicyModel(agents_model(provider), POLICY), history_dicts(1))
    assert len(provider.sent) == 1
    assert not hasattr(raised.value, "contextwise_report")


def dumps(value: object) -> str:
    return json.dumps(value)
