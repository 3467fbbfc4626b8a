"""The Router protocol, its shared reporting, and sticky routing for both routers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwise import (
    ChoiceQuestion,
    ContextPolicy,
    Decision,
    DecisionRequest,
    Effort,
    InvalidTypeError,
    InvalidValueError,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    RouteOutcome,
    Router,
    RoutingConfigurationError,
    RoutingContext,
    RoutingEvent,
    RoutingRule,
    RuleRouter,
    aprepare_step,
    prepare_step,
)
from tests.support.errors import assert_translated

MODELS = {
    "fast": ModelSpec(name="small-model", window=32_000, effort="low"),
    "deep": ModelSpec(name="big-model", window=64_000, effort="medium"),
    "max": ModelSpec(name="huge-model", window=128_000, effort="high"),
}
HISTORY = [{"role": "user", "content": "Fix the failing test."}]


class Scripted:
    """A decision provider that answers each request with the next scripted choice."""

    name = "scripted"

    def __init__(self, *answers: tuple[str, float, str | None]) -> None:
        self.answers = list(answers)

    def request(self, request: DecisionRequest) -> dict[str, Any]:
        choice, confidence, effort = self.answers.pop(0)
        answers: dict[str, Any] = {"model": {"choice": choice, "confidence": confidence}}
        # No scripted effort: an unsure answer, so the model's own effort runs.
        sure = 0.0 if effort is None else 1.0
        answers["effort"] = {"choice": effort or "low", "confidence": sure}
        return {"model": request.model, "answers": answers}


def model_router(*answers: tuple[str, float, str | None], sticky: bool = True) -> ModelRouter:
    criteria = {"fast": "Routine.", "deep": "Hard.", "max": "Hardest."}
    levels = {"low": "Easy.", "medium": "Some thought.", "high": "Deep thought."}
    decision = Decision(
        questions={
            "model": ChoiceQuestion(instructions="Pick.", criteria=criteria),
            "effort": ChoiceQuestion(instructions="How hard?", criteria=levels),
        }
    )
    routing = ModelRouting(
        provider=Scripted(*answers),
        model="router-mini",
        decision=decision,
        question="model",
        models=MODELS,
        fallback="fast",
        effort_question="effort",
    )
    return ModelRouter(routing, sticky=sticky)


# --- the protocol -----------------------------------------------------------------------------


class Cheapest:
    """A router of the user's own: no base class, only the protocol's members."""

    def __init__(self) -> None:
        self.contexts: list[RoutingContext] = []

    @property
    def models(self) -> Mapping[str, ModelSpec]:
        return MODELS

    @property
    def default(self) -> str:
        return "deep"

    def route(self, context: RoutingContext) -> RouteOutcome:
        self.contexts.append(context)
        return RouteOutcome(
            step=context.step,
            choice="fast",
            model=MODELS["fast"],
            reason="cheapest",
            confidence=None,
            usage=None,
            effort=Effort.NONE,
        )

    async def aroute(self, context: RoutingContext) -> RouteOutcome:
        return self.route(context)


def test_a_router_of_the_users_own_works_in_prepare_step() -> None:
    router = Cheapest()
    typed: Router = router  # the protocol, checked by mypy
    prepared = prepare_step(
        ContextPolicy(mode="reduce"), [MessagesFragment("history", messages=HISTORY)],
        router=typed, step=2, active="deep",
    )
    assert (prepared.model.name, prepared.route.reason, prepared.effort) == (
        "small-model", "cheapest", Effort.NONE,
    )
    assert prepared.budget.window == 32_000
    (context,) = router.contexts
    assert (context.model, context.choice, context.messages) == ("big-model", "deep", HISTORY)
    done = asyncio.run(
        aprepare_step(
            ContextPolicy(mode="reduce"), [MessagesFragment("history", messages=HISTORY)],
            router=router, step=3,
        )
    )
    assert done.route.reason == "cheapest"
    assert router.contexts[-1].choice is None  # no previous call: the default ran nothing yet


def test_both_routers_are_routers_with_models_and_a_default() -> None:
    rules: Router = RuleRouter([], default="deep", models=MODELS)
    model: Router = model_router(("deep", 1.0, None))
    assert (list(rules.models), rules.default) == (["fast", "deep", "max"], "deep")
    assert (list(model.models), model.default) == (["fast", "deep", "max"], "fast")


@pytest.mark.parametrize("router", ["gpt-5", object(), Cheapest.route])
def test_something_that_is_not_a_router_is_refused_in_every_language(router: object) -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        prepare_step(
            ContextPolicy(mode="reduce"), [MessagesFragment("h", messages=HISTORY)],
            router=router, step=1,  # type: ignore[arg-type]
        )
    assert caught.value.code == "invalid_router"
    assert_translated(caught.value)


def test_a_routing_declaration_and_a_rule_are_read_only() -> None:
    router = model_router(("deep", 1.0, None))
    with pytest.raises(AttributeError):
        router.routing.fallback = "deep"  # type: ignore[misc]
    rule = RoutingRule(id="r", model="deep", min_step=1, effort="high")
    with pytest.raises(AttributeError):
        rule.effort = "low"  # type: ignore[misc]
    assert rule.effort == Effort.HIGH


# --- sticky routing -----------------------------------------------------------------------------


def test_a_model_router_holds_a_de_escalation_and_names_it() -> None:
    router = model_router(("fast", 0.99, "low"))
    outcome = router.route(RoutingContext(step=2, model="big-model", choice="deep", effort="high"))
    assert (outcome.choice, outcome.model.name, outcome.effort) == ("deep", "big-model", "high")
    assert (outcome.reason, outcome.routed, outcome.proposed) == ("sticky", "fast", "fast")


def test_a_model_router_lets_an_escalation_through() -> None:
    router = model_router(("max", 0.99, None), ("deep", 0.99, "high"))
    later = router.route(RoutingContext(step=2, model="big-model", choice="deep", effort="medium"))
    assert (later.choice, later.reason, later.routed) == ("max", "selected", None)
    # The same model with a higher effort escalates too.
    higher = router.route(RoutingContext(step=3, model="big-model", choice="deep", effort="low"))
    assert (higher.choice, higher.effort, higher.reason) == ("deep", Effort.HIGH, "selected")


def test_a_fallback_below_the_threshold_is_held_too() -> None:
    router = model_router(("max", 0.2, None))
    outcome = router.route(RoutingContext(step=2, model="big-model"))
    # The previous model is found by name; its own effort is the previous effort.
    assert (outcome.choice, outcome.effort, outcome.reason, outcome.routed) == (
        "deep", Effort.MEDIUM, "sticky", "fast",
    )


def test_without_sticky_or_a_previous_call_the_route_is_the_routers() -> None:
    loose = model_router(("fast", 0.99, None), sticky=False)
    context = RoutingContext(step=2, model="big-model", choice="deep")
    assert loose.route(context).reason == "selected"
    first = model_router(("fast", 0.99, None))
    assert first.route(RoutingContext(step=1, model="unknown-model")).reason == "selected"


def test_a_rule_router_holds_the_default_but_not_a_rule_that_says_otherwise() -> None:
    events: list[RoutingEvent] = []
    rules = [
        RoutingRule(id="long", model="max", min_tokens=1_000),
        RoutingRule(id="summary", model="fast", when=lambda c: c.system == "Summarize.",
                    sticky=False),
    ]
    router = RuleRouter(rules, default="fast", models=MODELS, sticky=True, on_event=events.append)
    held = router.route(RoutingContext(step=5, model="huge-model", choice="max", effort="high"))
    assert (held.choice, held.reason, held.routed, held.effort) == (
        "max", "sticky", "fast", Effort.HIGH,
    )
    told = router.route(
        RoutingContext(step=6, model="huge-model", choice="max", system="Summarize.")
    )
    assert (told.choice, told.reason) == ("fast", "rule:summary")
    assert [event.reason for event in events] == ["sticky", "rule:summary"]  # type: ignore[union-attr]


def test_a_sticky_route_in_prepare_step_keeps_the_active_model() -> None:
    router = RuleRouter([], default="fast", models=MODELS, sticky=True)
    prepared = prepare_step(
        ContextPolicy(mode="reduce"), [MessagesFragment("history", messages=HISTORY)],
        router=router, step=4, active="deep",
    )
    assert (prepared.model.name, prepared.route.reason, prepared.budget.window) == (
        "big-model", "sticky", 64_000,
    )


@given(
    before=st.sampled_from(list(MODELS)),
    after=st.sampled_from(list(MODELS)),
    before_effort=st.sampled_from(list(Effort)),
    after_effort=st.sampled_from(list(Effort)),
)
def test_a_sticky_route_never_goes_down(
    before: str, after: str, before_effort: Effort, after_effort: Effort
) -> None:
    rule = RoutingRule(id="pick", model=after, min_step=0, effort=after_effort)
    router = RuleRouter([rule], default="fast", models=MODELS, sticky=True)
    context = RoutingContext(
        step=1, model=MODELS[before].name, choice=before, effort=before_effort
    )
    outcome = router.route(context)
    order = list(MODELS)
    assert outcome.effort is not None
    escalates = order.index(after) > order.index(before) or outcome.effort > before_effort
    if outcome.reason == "sticky":
        assert (outcome.choice, outcome.effort, outcome.routed) == (before, before_effort, after)
    else:
        assert outcome.choice == after
        assert escalates or (after, outcome.effort) == (before, before_effort)


@pytest.mark.parametrize(
    ("build", "error", "code"),
    [
        (lambda: RuleRouter([], default="fast", models=MODELS, sticky="yes"),
         RoutingConfigurationError, "sticky_not_bool"),
        (lambda: model_router(sticky=1), RoutingConfigurationError, "sticky_not_bool"),  # type: ignore[arg-type]
        (lambda: RoutingRule(id="r", model="fast", min_step=1, sticky=None),
         InvalidTypeError, "not_a_bool"),
        (lambda: RoutingContext(step=1, model="m", effort="turbo"),
         InvalidValueError, "invalid_effort"),
        (lambda: RoutingContext(step=1, model="m", choice=3), InvalidTypeError, "not_a_string"),
    ],
)
def test_bad_sticky_input_is_a_translated_error(build: Any, error: type, code: str) -> None:
    with pytest.raises(error) as caught:
        build()
    assert caught.value.code == code
    assert_translated(caught.value)


def test_one_reporter_logs_both_routers_alike(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="contextwise.routing"):
        RuleRouter([], default="fast", models=MODELS).route(RoutingContext(step=1, model="m"))
        model_router(("deep", 1.0, "high"), sticky=False).route(RoutingContext(step=1, model="m"))
    rules, model = caplog.records
    for record in (rules, model):
        assert record.getMessage().startswith("step 1 routed to ")
    assert (rules.provider, rules.effort, rules.reason) == ("rules", "low", "default")  # type: ignore[attr-defined]
    assert (model.provider, model.effort, model.question) == ("scripted", "high", "model")  # type: ignore[attr-defined]
    assert "question" not in rules.__dict__ and "router_model" not in rules.__dict__


def test_prepare_step_gives_a_sticky_router_the_active_effort() -> None:
    router = model_router(("deep", 0.99, "low"))
    prepared = prepare_step(
        ContextPolicy(mode="reduce"), [MessagesFragment("history", messages=HISTORY)],
        router=router, step=5, active="deep", active_effort="high",
    )
    # The route asks for less effort on the same model: the step keeps the previous effort.
    assert (prepared.route.reason, prepared.effort) == ("sticky", Effort.HIGH)
    with pytest.raises(InvalidValueError) as caught:
        prepare_step(
            ContextPolicy(mode="reduce"), [MessagesFragment("history", messages=HISTORY)],
            router=router, step=6, active="deep", active_effort="turbo",  # type: ignore[arg-type]
        )
    assert caught.value.code == "invalid_effort"
    assert_translated(caught.value)
