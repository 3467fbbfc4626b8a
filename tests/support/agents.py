"""The agent conversation that the integration tests run in each framework, and its checks.

Every turn asks for the weather in one city (in two cities every third turn, as parallel tool
calls); the model calls the ``weather`` tool, reads its result and answers. Twelve turns make about
four times the policy's target, so the policy has to act on most model calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

TURNS = 12
"""The number of user turns in a conversation."""

TARGET = 700
"""The characters the model may see of the conversation: the policy's target, and its trigger
too (a policy with a target and no trigger acts as soon as the conversation is above it)."""

SYSTEM = "You are a weather assistant. Call the weather tool, then answer in one sentence."
"""The system prompt (or instructions): outside the policy's reach, sent on every call."""

CITIES = ("Lyon", "Nantes", "Lille", "Brest", "Dijon", "Nice", "Metz", "Pau", "Rouen")

SUMMARY = "Earlier turns: the user asked for the weather in several French cities."
"""The text that the working compressor returns."""


def trim_policy() -> dict[str, Any]:
    """A policy that trims the oldest turns of the conversation down to the target."""
    return {
        "mode": "reduce",
        "target_input_chars": TARGET,
        "steps": [
            {"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": TARGET}
        ],
    }


def compress_policy() -> dict[str, Any]:
    """A policy that replaces every turn but the newest with the compressor's summary."""
    return {
        "mode": "reduce",
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


def summarize(messages: Sequence[Any]) -> str:
    """A compressor that works: one short sentence for any number of messages."""
    return SUMMARY


async def asummarize(messages: Sequence[Any]) -> str:
    """The same compressor, async."""
    return SUMMARY


def broken_summarize(messages: Sequence[Any]) -> str:
    """A compressor whose service is down."""
    raise ConnectionError("the summarizer is down")


def question(turn: int) -> str:
    """The user's message of a turn."""
    return f"Turn {turn}: what is the weather in {', '.join(cities(turn))} today?"


def cities(turn: int) -> list[str]:
    """The cities a turn asks about: two on every third turn (parallel tool calls), else one."""
    first = CITIES[turn % len(CITIES)]
    if turn % 3 == 2:
        return [first, CITIES[(turn + 1) % len(CITIES)]]
    return [first]


def weather(city: str) -> str:
    """What the weather tool returns."""
    return f"{city}: sunny, 21 degrees, light wind from the west, no rain expected before night."


def answer(turn: int) -> str:
    """The model's final answer of a turn."""
    return f"It is sunny and 21 degrees in {' and '.join(cities(turn))}."


def call_id(turn: int, number: int) -> str:
    """The id of a tool call."""
    return f"call_{turn}_{number}"


def turn_of(text: str) -> int:
    """The turn number that a user message names."""
    return int(text.split(":", 1)[0].removeprefix("Turn "))


def assert_pairs_whole(ids: Iterable[tuple[list[str], list[str]]]) -> None:
    """Check that every tool call of a model input has its result after it, and every result
    its call before it. ``ids`` gives, message by message, the calls it makes and the results
    it holds."""
    called: list[str] = []
    answered: set[str] = set()
    for calls, results in ids:
        for result in results:
            assert result in called, f"the result of {result} came without its call"
            answered.add(result)
        called.extend(calls)
    missing = [call for call in called if call not in answered]
    assert not missing, f"the calls {missing} came without their results"
