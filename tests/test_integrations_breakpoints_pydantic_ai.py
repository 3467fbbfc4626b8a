"""Cache breakpoints in the pydantic-ai capability: the JSON body that pydantic-ai's own
``AnthropicModel`` sends (over a mock transport that records it) carries the markers that were
missing, placed by pydantic-ai's ``cache`` setting and ``CachePoint`` parts, never more than
Anthropic's four; the run's history keeps no marker and the conversation stays ``extended``."""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import ContextResult
from support.mock_providers import Recorder

INSTRUCTIONS = "You are a careful assistant who answers in one word. " * 8

POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_chars": 1_000_000,
    "target_input_chars": 900_000,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}


def anthropic_model(recorder: Recorder) -> Any:
    import anthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=recorder.async_client(anthropic),
    )
    return AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))


def markers(value: object) -> int:
    """How many ``cache_control`` keys a JSON value holds, at any depth."""
    if isinstance(value, dict):
        return sum(("cache_control" in value, *(markers(item) for item in value.values())))
    if isinstance(value, list):
        return sum(markers(item) for item in value)
    return 0


def marked_messages(body: dict[str, Any]) -> list[int]:
    """The indices of the body's messages that carry a marker."""
    return [index for index, message in enumerate(body["messages"]) if markers(message)]


def run(capabilities: list[Any], recorder: Recorder, turns: int) -> list[Any]:
    """Run an agent for ``turns`` runs that continue one history; the last history."""
    from pydantic_ai import Agent

    agent = Agent(anthropic_model(recorder), instructions=INSTRUCTIONS, capabilities=capabilities)

    @agent.tool_plain
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    history: list[Any] = []
    for turn in range(turns):
        result = agent.run_sync(f"Question {turn}?", message_history=history)
        history = result.all_messages()
    return history


def test_pydantic_ai_marks_the_prefix_the_previous_end_and_the_newest_message() -> None:
    from pydantic_ai.messages import CachePoint, ModelRequest, UserPromptPart

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder()
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(POLICY, cache_breakpoints=True, on_result=results.append)
    history = run([capability], recorder, 3)
    for body in recorder.bodies:
        # The instructions and the tools, and the newest message through automatic caching.
        assert markers(body["system"]) == 1
        assert markers(body["tools"]) == 1
        assert "cache_control" in body
        assert markers(body) <= 4
    first, second, third = recorder.bodies
    assert marked_messages(first) == []
    # From the second call on, the end of what the previous call sent.
    assert marked_messages(second) == [0]
    assert marked_messages(third) == [2]
    assert [markers(body) for body in recorder.bodies] == [3, 4, 4]
    assert [result.report.conversation.status for result in results] == [
        "resynced",
        "extended",
        "extended",
    ]
    # The markers are on the request only: the run's history holds no CachePoint.
    for message in history:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                    assert not any(isinstance(item, CachePoint) for item in part.content)


def test_pydantic_ai_counts_the_caching_capabilitys_markers() -> None:
    from pydantic_ai.capabilities import Caching

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder()
    results: list[ContextResult] = []
    ours = ContextPolicyCapability(POLICY, cache_breakpoints=True, on_result=results.append)
    run([Caching(), ours], recorder, 3)
    alone = Recorder()
    run([Caching()], alone, 3)
    for body, theirs in zip(recorder.bodies, alone.bodies, strict=True):
        assert markers(body) <= 4
        assert markers(body) >= markers(theirs)
    assert marked_messages(recorder.bodies[2]) == [2]
    assert [result.report.conversation.status for result in results][1:] == ["extended"] * 2


def test_pydantic_ai_without_cache_breakpoints_sends_no_marker() -> None:
    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder()
    run([ContextPolicyCapability(POLICY)], recorder, 2)
    assert [markers(body) for body in recorder.bodies] == [0, 0]


def test_pydantic_ai_cache_breakpoints_must_be_a_bool() -> None:
    from contextwise.errors import InvalidTypeError
    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    with pytest.raises(InvalidTypeError) as caught:
        ContextPolicyCapability(POLICY, cache_breakpoints=1)  # type: ignore[arg-type]
    assert caught.value.code == "not_a_bool"
