"""prepare_step: the policy, then routing, then the budget check, once per harness step."""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import (
    ChoiceQuestion,
    ContextOverflowError,
    ContextPolicy,
    Decision,
    DecisionRequest,
    Effort,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    PreparedStep,
    ProviderUnavailableError,
    RoutingConfigurationError,
    RoutingEvent,
    TextFragment,
    aprepare_step,
    estimate_tokens,
    model_budget,
    prepare_step,
)
from support.errors import assert_translated

SYSTEM = {"role": "system", "content": "You are a coding agent."}

DECISION = Decision(
    questions={
        "model": ChoiceQuestion(
            instructions="Pick the model for the next step.",
            criteria={
                "fast": "Routine edits.",
                "deep": "Hard debugging.",
                "tiny": "Yes/no questions.",
            },
        )
    }
)

MODELS = {
    # context budgets with the default 2 % safety: fast 3420, deep 14680, tiny 1270 tokens
    "fast": ModelSpec(name="small", window=4000, max_output_tokens=500),
    "deep": ModelSpec(
        name="large",
        window=16000,
        max_output_tokens=1000,
        effort="medium",
        supported_efforts=["low", "high"],
    ),
    "tiny": ModelSpec(name="tiny", window=1500, max_output_tokens=200),
}

TRIM = ContextPolicy(
    mode="reduce",
    steps=[{"id": "turns", "kind": "trim", "fragment_id": "history", "keep_groups": 2}],
)


class ScriptedRouter:
    """A decision provider answering from a script: (choice, confidence) or an error to raise."""

    name = "scripted-router"

    def __init__(self, *replies: tuple[str, float] | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[DecisionRequest] = []

    async def request(self, request: DecisionRequest) -> dict[str, Any]:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        choice, confidence = reply
        answer = {"choice": choice, "confidence": confidence}
        return {"model": request.model, "answers": {"model": answer}}


def _router(provider: ScriptedRouter, events: list[RoutingEvent] | None = None) -> ModelRouter:
    routing = ModelRouting(
        provider=provider,
        model="router-mini",
        decision=DECISION,
        question="model",
        models=MODELS,
        fallback="fast",
    )
    return ModelRouter(routing, on_event=None if events is None else events.append)


def _text(prefix: str, tokens: int) -> str:
    """A text of exactly ``tokens`` estimated tokens: the prefix, then one-token words."""
    text = prefix
    while estimate_tokens(text) < tokens:
        text += " u"
    assert estimate_tokens(text) == tokens
    return text


def _conversation_model(model: ModelSpec, step: int) -> dict[str, Any]:
    """The harness's fake conversation model: an answer of 500 estimated tokens."""
    return {"role": "assistant", "content": _text(f"[{model.name} step {step}]", 500)}


async def test_a_ten_step_harness_loop() -> None:
    """Model switches, a compaction, a recompaction for a smaller window and two fallbacks."""
    provider = ScriptedRouter(
        ("fast", 0.95),
        ("fast", 0.90),
        ("deep", 0.90),  # switch to the large model
        ("deep", 0.92),
        ProviderUnavailableError("503 from upstream"),  # fallback: back to the small model
        ("deep", 0.50),  # low confidence: fallback again; the context is compacted for "fast"
        ("tiny", 0.99),  # a smaller window: the policy runs again for its budget
        ("deep", 0.90),
        ("deep", 0.88),
        ("fast", 0.90),
    )
    events: list[RoutingEvent] = []
    router = _router(provider, events)
    history: list[dict[str, Any]] = [SYSTEM]
    produced: list[dict[str, Any]] = [SYSTEM]
    archive: list[Any] = []
    active: str | None = None
    trace = []
    for step in range(1, 11):
        question = {"role": "user", "content": _text(f"Step {step}:", 200)}
        history.append(question)
        produced.append(question)
        prepared = await aprepare_step(
            TRIM, [MessagesFragment("history", history)], router=router, step=step, active=active
        )
        assert isinstance(prepared, PreparedStep)
        # the compacted context fits the chosen model, and the routing saw exactly that context
        assert prepared.plan.included == ["history"]
        assert prepared.plan.used <= prepared.budget.context_budget()
        # the reasoning reserve is the thinking budget of the effort the step sends
        reserve = prepared.model.thinking_budget(prepared.effort)
        assert prepared.budget.reasoning == reserve
        expected = model_budget(prepared.model, reasoning=reserve).context_budget()
        assert prepared.plan.context_budget == expected
        sent_state = provider.requests[-1].state
        if not prepared.recompacted:
            assert len(sent_state["messages"]) == len(prepared.messages)
        assert sent_state["step"] == step
        assert sent_state["model"] == MODELS[active or "fast"].name
        archive.extend(prepared.removed["history"])
        history = list(prepared.fragment("history").messages)
        answer = _conversation_model(prepared.model, step)
        history.append(answer)
        produced.append(answer)
        trace.append(
            (
                step,
                prepared.route.choice,
                prepared.route.reason,
                bool(prepared.report.changes),
                prepared.recompacted,
                prepared.plan.used,
                prepared.budget.context_budget(),
            )
        )
        active = prepared.route.choice

    # estimated tokens: the system message 6, each question 200, each answer 500; "deep" reserves
    # 500 tokens for thinking at its effort (high), half its output limit
    assert trace == [
        (1, "fast", "selected", False, False, 206, 3420),
        (2, "fast", "selected", False, False, 906, 3420),
        (3, "deep", "selected", False, False, 1606, 14180),
        (4, "deep", "selected", False, False, 2306, 14180),
        (5, "fast", "unavailable", False, False, 3006, 3420),
        (6, "fast", "confidence", True, False, 906, 3420),
        (7, "tiny", "selected", True, True, 906, 1270),
        (8, "deep", "selected", True, False, 906, 14180),
        (9, "deep", "selected", False, False, 1606, 14180),
        (10, "fast", "selected", False, False, 2306, 3420),
    ]
    # nothing was lost: the archive and the final history hold every message ever produced
    assert [history[0], *archive, *history[1:]] == produced
    assert provider.replies == []
    assert [event.kind for event in events].count("route") == 10
    assert [event.kind for event in events].count("failed") == 1


async def test_the_route_carries_the_effort_and_the_chosen_model() -> None:
    prepared = await aprepare_step(
        TRIM,
        [MessagesFragment("history", [SYSTEM, {"role": "user", "content": "Debug this."}])],
        router=_router(ScriptedRouter(("deep", 0.9))),
        step=1,
        active="fast",
        system="You are a coding agent.",
        tools=[{"type": "function", "function": {"name": "run_tests"}}],
    )
    assert prepared.model.name == "large"
    assert prepared.effort == Effort.HIGH
    assert prepared.messages == [SYSTEM, {"role": "user", "content": "Debug this."}]
    assert prepared.recompacted is False


async def test_text_fragments_count_in_the_plan_but_not_in_the_messages() -> None:
    provider = ScriptedRouter(("fast", 0.9))
    prepared = await aprepare_step(
        TRIM,
        [
            TextFragment("notes", text=_text("Notes:", 100)),
            MessagesFragment("history", messages=[SYSTEM, {"role": "user", "content": "Hi"}]),
        ],
        router=_router(provider),
        step=2,
    )
    assert prepared.plan.included == ["notes", "history"]
    assert prepared.plan.used == 100 + 6 + 1
    assert provider.requests[0].state["messages"] == [SYSTEM, {"role": "user", "content": "Hi"}]


async def test_a_context_that_cannot_fit_the_chosen_model_overflows() -> None:
    keep_everything = ContextPolicy(mode="reduce")
    big = [SYSTEM, {"role": "user", "content": "u" * 8000}]
    provider = ScriptedRouter(("tiny", 0.99))
    with pytest.raises(ContextOverflowError) as excinfo:
        await aprepare_step(
            keep_everything,
            [MessagesFragment("history", messages=big)],
            router=_router(provider),
            step=1,
            active="deep",
        )
    assert excinfo.value.code == "required_segments_overflow"
    assert len(provider.requests) == 1


async def test_an_unknown_active_model_is_rejected_before_anything_runs() -> None:
    provider = ScriptedRouter(("fast", 0.9))
    with pytest.raises(RoutingConfigurationError) as excinfo:
        await aprepare_step(
            TRIM, [MessagesFragment("history", [SYSTEM])], router=_router(provider), step=1,
            active="small",
        )
    assert (excinfo.value.code, excinfo.value.params["field"]) == ("unknown_active_model", "active")
    assert provider.requests == []


def test_model_budget_needs_a_window() -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        model_budget(ModelSpec(name="anonymous"))
    assert excinfo.value.code == "missing_window"
    assert_translated(excinfo.value)
    budget = model_budget(ModelSpec(name="anonymous"), window=10_000, output=1_000, reasoning=500)
    assert budget.context_budget() == 10_000 - 1_000 - 500 - 200
    spec = ModelSpec(name="m", window=8_000, max_output_tokens=2_000)
    assert model_budget(spec, window=1, output=1).context_budget() == 8_000 - 2_000 - 160


def test_sync_prepare_step_runs_the_same_step() -> None:
    prepared = prepare_step(
        TRIM,
        [{"id": "history", "messages": [SYSTEM, {"role": "user", "content": "Hi"}]}],
        router=_router(ScriptedRouter(("tiny", 0.97))),
        step=1,
    )
    assert (prepared.route.choice, prepared.model.name) == ("tiny", "tiny")
    assert prepared.fragment("history").messages == (SYSTEM, {"role": "user", "content": "Hi"})
