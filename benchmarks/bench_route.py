"""Router overhead per decision, against the bare provider call.

The provider answers instantly, so everything measured beyond the bare call is the router's own
work: building and checking the state, validating the answer, choosing the model, the events and
the log record. The script reports that overhead, and its share of a network decision call; it
sets no goal on it (exit status 0).

Run it with ``python benchmarks/bench_route.py`` (``make bench`` runs every benchmark).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import Any

from contextwise import (
    ChoiceAnswer,
    ChoiceQuestion,
    Decision,
    DecisionRequest,
    DecisionResponse,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    RoutingContext,
    Usage,
)

NETWORK_MS = 100.0
ROUNDS = 7
CALLS = 5_000

QUESTION = ChoiceQuestion(
    instructions="Pick the model for the next step.",
    criteria={"fast": "Routine edits.", "deep": "Hard debugging.", "cheap": "Small talk."},
)
DECISION = Decision(questions={"model": QUESTION})
RESPONSE = DecisionResponse(
    model="router-mini",
    answers={"model": ChoiceAnswer(choice="deep", confidence=0.93)},
    usage=Usage(input_tokens=900, output_tokens=12),
)
RESPONSE_DICT: dict[str, Any] = {
    "model": "router-mini",
    "answers": {"model": {"choice": "deep", "confidence": 0.93}},
    "usage": {"input_tokens": 900, "output_tokens": 12},
}
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "The test suite fails on test_parse; please fix it."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Run the tests first.", "signature": "sig"},
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "t1", "name": "run_tests", "input": {"path": "tests"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}],
    },
    {"role": "assistant", "content": "The parser drops the last token; fixing it now."},
    {"role": "user", "content": "Thanks, go ahead."},
    {"role": "assistant", "content": "Done: the last token is kept and the test passes."},
]
TOOLS = [
    {"type": "function", "function": {"name": "run_tests", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "edit_file", "parameters": {"type": "object"}}},
]
CONTEXT = RoutingContext(
    step=4, model="small", system="You are a coding agent.", messages=MESSAGES, tools=TOOLS
)


class InstantProvider:
    """Answers at once with a prepared response."""

    name = "instant"

    def __init__(self, response: Any) -> None:
        self.response = response

    async def request(self, request: DecisionRequest) -> Any:
        return self.response


def _routing(provider: InstantProvider) -> ModelRouting:
    return ModelRouting(
        provider=provider,
        model="router-mini",
        decision=DECISION,
        question="model",
        models={
            "fast": ModelSpec(name="small", effort="low"),
            "deep": ModelSpec(name="large", effort="high", supported_efforts=["medium", "high"]),
            "cheap": "tiny",
        },
        fallback="fast",
        timeout=30.0,
    )


async def _time(call: Callable[[], Awaitable[Any]]) -> float:
    """The median time of one call in µs, over ROUNDS rounds of CALLS calls."""
    for _ in range(500):
        await call()
    rounds = []
    for _ in range(ROUNDS):
        start = perf_counter()
        for _ in range(CALLS):
            await call()
        rounds.append((perf_counter() - start) / CALLS * 1e6)
    return statistics.median(rounds)


async def _case(label: str, response: Any, on_event: Any = None) -> float:
    provider = InstantProvider(response)
    router = ModelRouter(_routing(provider), on_event=on_event)
    request = DecisionRequest.model_construct(
        model="router-mini", questions={"model": QUESTION}, state={}
    )
    outcome = await router.aroute(CONTEXT)
    assert outcome.choice == "deep", outcome
    bare = await _time(lambda: provider.request(request))
    routed = await _time(lambda: router.aroute(CONTEXT))
    overhead = routed - bare
    print(
        f"{label:<44} bare {bare:8.2f} µs   routed {routed:8.2f} µs   "
        f"overhead {overhead:7.2f} µs   ratio {routed / bare:6.1f}x"
    )
    return overhead


async def main() -> int:
    print(
        f"Router overhead per decision ({len(MESSAGES)} messages, {len(TOOLS)} tools, timeout on)"
    )
    overhead = await _case("answer as a DecisionResponse", RESPONSE)
    await _case("answer as a dict (validated by pydantic)", RESPONSE_DICT)
    await _case("answer as a DecisionResponse, with on_event", RESPONSE, on_event=lambda e: None)
    share = overhead / (NETWORK_MS * 1000.0) * 100.0
    print(f"against a {NETWORK_MS:.0f} ms network decision call, the overhead is {share:.3f} %")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
