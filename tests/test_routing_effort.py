"""The decision chooses the effort: ModelRouting(effort_question=...) and RouteOutcome.effort."""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import (
    ChoiceQuestion,
    Decision,
    DecisionRequest,
    Effort,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    ProviderUnavailableError,
    RoutingConfigurationError,
    RoutingContext,
    RoutingEvent,
)

DECISION = Decision(
    questions={
        "model": ChoiceQuestion(
            instructions="Pick the model for the next step.",
            criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ),
        "effort": ChoiceQuestion(
            instructions="How hard should the model think?",
            criteria={"low": "A quick edit.", "medium": "Some care.", "max": "A deep bug."},
        ),
    }
)
MODELS = {
    "fast": ModelSpec(name="small-model", effort="low"),
    "deep": ModelSpec(name="big-model", effort="medium", supported_efforts=["medium", "high"]),
}


class Scripted:
    """Answers both questions with fixed choices and confidences; records the requests."""

    name = "scripted"

    def __init__(self, answers: dict[str, tuple[str, float]] | Exception) -> None:
        self.answers = answers
        self.requests: list[DecisionRequest] = []

    def request(self, request: DecisionRequest) -> dict[str, Any]:
        self.requests.append(request)
        if isinstance(self.answers, Exception):
            raise self.answers
        answers = {
            key: {"choice": choice, "confidence": confidence}
            for key, (choice, confidence) in self.answers.items()
        }
        return {"model": request.model, "answers": answers}


def route(provider: Scripted, on_event: Any = None) -> Any:
    routing = ModelRouting(
        provider=provider,
        model="router-mini",
        decision=DECISION,
        question="model",
        models=MODELS,
        fallback="fast",
        effort_question="effort",
    )
    return ModelRouter(routing, on_event=on_event).route(
        RoutingContext(step=2, model="small-model")
    )


def test_both_questions_are_asked_in_one_request_and_the_effort_is_clamped() -> None:
    provider = Scripted({"model": ("deep", 0.95), "effort": ("max", 0.9)})
    outcome = route(provider)
    (request,) = provider.requests
    assert list(request.questions) == ["model", "effort"]
    assert outcome.model.name == "big-model"
    assert outcome.effort == Effort.HIGH  # max, clamped to the model's medium and high
    assert outcome.model.effort_sent == Effort.MEDIUM  # the model's own effort


def test_a_confident_effort_applies_to_the_chosen_model() -> None:
    outcome = route(Scripted({"model": ("fast", 0.99), "effort": ("max", 0.99)}))
    assert (outcome.model.name, outcome.effort) == ("small-model", Effort.MAX)


@pytest.mark.parametrize(
    "answers",
    [
        {"model": ("deep", 0.95), "effort": ("max", 0.5)},  # the effort answer is unsure
        {"model": ("deep", 0.5), "effort": ("max", 0.95)},  # the model answer is unsure
    ],
)
def test_under_the_threshold_the_effort_falls_back_to_the_models_own(
    answers: dict[str, tuple[str, float]],
) -> None:
    outcome = route(Scripted(answers))
    assert outcome.effort == outcome.model.effort_sent
    assert outcome.effort in (Effort.LOW, Effort.MEDIUM)


def test_on_an_outage_the_fallback_runs_at_its_own_effort() -> None:
    events: list[RoutingEvent] = []
    outcome = route(Scripted(ProviderUnavailableError("503")), on_event=events.append)
    assert (outcome.reason, outcome.model.name, outcome.effort) == (
        "unavailable",
        "small-model",
        Effort.LOW,
    )
    assert [event.kind for event in events] == ["started", "failed", "route"]
    assert events[-1].effort == Effort.LOW  # type: ignore[union-attr]


def test_the_route_event_carries_the_chosen_effort() -> None:
    events: list[RoutingEvent] = []
    routing = ModelRouting(
        provider=Scripted({"model": ("deep", 0.95), "effort": ("low", 0.95)}),
        model="router-mini",
        decision=DECISION,
        question="model",
        models=MODELS,
        fallback="fast",
        effort_question="effort",
    )
    ModelRouter(routing, on_event=events.append).route(RoutingContext(step=1, model="m"))
    assert events[-1].kind == "route"
    assert events[-1].effort == Effort.MEDIUM  # type: ignore[union-attr]  # low -> medium


def test_without_an_effort_question_only_the_routing_question_is_asked() -> None:
    provider = Scripted({"model": ("deep", 0.95)})
    routing = ModelRouting(
        provider=provider,
        model="router-mini",
        decision=DECISION,
        question="model",
        models=MODELS,
        fallback="fast",
    )
    outcome = ModelRouter(routing).route(RoutingContext(step=1, model="m"))
    assert list(provider.requests[0].questions) == ["model"]
    assert outcome.effort == outcome.model.effort_sent == Effort.MEDIUM


@pytest.mark.parametrize(
    ("effort_question", "decision", "code"),
    [
        ("speed", DECISION, "unknown_question"),
        ("model", DECISION, "effort_question_is_routing_question"),
        (
            "effort",
            Decision(
                questions={
                    "model": DECISION.questions["model"],
                    "effort": ChoiceQuestion(
                        instructions="How hard?", criteria={"low": "Quick.", "extreme": "Deep."}
                    ),
                }
            ),
            "effort_question_labels",
        ),
    ],
)
def test_a_bad_effort_question_is_a_coded_error(
    effort_question: str, decision: Decision, code: str
) -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelRouting(
            provider=Scripted({}),
            model="router-mini",
            decision=decision,
            question="model",
            models=MODELS,
            fallback="fast",
            effort_question=effort_question,
        )
    assert caught.value.code == code
    assert caught.value.params["field"] == "effort_question"
    for locale in ("fr", "zh"):
        assert caught.value.render(locale) != caught.value.render("en")
        assert effort_question in caught.value.render(locale)
