"""Fake decision providers and routing declarations shared by the routing tests (no tests here)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from contextwise import (
    ChoiceQuestion,
    Decision,
    DecisionRequest,
    ModelRouting,
    ModelSpec,
    RoutingContext,
    TextQuestion,
)

Responder = Callable[[DecisionRequest], Any]

DECISION = Decision(
    questions={
        "summary": TextQuestion(instructions="Summarize the goal."),
        "model": ChoiceQuestion(
            instructions="Pick the model for the next step.",
            criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ),
    }
)

MODELS: dict[str, ModelSpec | str] = {
    "fast": ModelSpec(name="small-model", effort="low", supported_efforts=("low", "high")),
    "deep": ModelSpec(
        name="big-model",
        effort="medium",
        supported_efforts=("high", "max"),
        window=200_000,
        max_output_tokens=8_000,
    ),
}


class FakeProvider:
    """An async provider that records each request and answers with ``respond(request)``."""

    def __init__(self, respond: Responder, name: str = "fake") -> None:
        self.name = name
        self.requests: list[DecisionRequest] = []
        self._respond = respond

    async def request(self, request: DecisionRequest) -> Any:
        self.requests.append(request)
        result = self._respond(request)
        if inspect.isawaitable(result):
            result = await result
        return result


class SyncProvider:
    """A sync provider: ``request`` is a plain method."""

    def __init__(self, respond: Responder, name: str = "sync-fake") -> None:
        self.name = name
        self.requests: list[DecisionRequest] = []
        self._respond = respond

    def request(self, request: DecisionRequest) -> Any:
        self.requests.append(request)
        return self._respond(request)


class HangingProvider:
    """An async provider that never answers, and records whether it was cancelled."""

    name = "hanging"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.requests: list[DecisionRequest] = []

    async def request(self, request: DecisionRequest) -> Any:
        self.requests.append(request)
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


def response(
    choice: str = "deep",
    confidence: float = 0.9,
    key: str = "model",
    **extra: Any,
) -> dict[str, Any]:
    """The dict a provider returns for one choice answer."""
    answer: dict[str, Any] = {"choice": choice, "confidence": confidence, **extra}
    return {"model": "router-mini", "answers": {key: answer}}


def answering(choice: str = "deep", confidence: float = 0.9, **extra: Any) -> Responder:
    return lambda request: response(choice, confidence, **extra)


def raising(error: BaseException) -> Responder:
    def respond(request: DecisionRequest) -> Any:
        raise error

    return respond


def make_routing(provider: Any, **overrides: Any) -> ModelRouting:
    arguments: dict[str, Any] = {
        "provider": provider,
        "model": "router-mini",
        "decision": DECISION,
        "question": "model",
        "models": MODELS,
        "fallback": "fast",
    }
    arguments.update(overrides)
    return ModelRouting(**arguments)


def context(step: int = 1, **overrides: Any) -> RoutingContext:
    arguments: dict[str, Any] = {
        "step": step,
        "model": "small-model",
        "system": "You are a coding agent.",
        "messages": [{"role": "user", "content": "Fix the failing test."}],
        "tools": [{"type": "function", "function": {"name": "run_tests"}}],
    }
    arguments.update(overrides)
    return RoutingContext(**arguments)


def chained(depth: int, root: BaseException) -> BaseException:
    """An error whose ``__cause__`` chain reaches ``root`` ``depth`` levels down."""
    error = root
    for level in range(depth):
        wrapper = RuntimeError(f"wrapper {depth - level}")
        wrapper.__cause__ = error
        error = wrapper
    return error
