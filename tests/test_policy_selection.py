"""Selections: sequence, fixed, auto (deterministic, with reasons) and model (a provider)."""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import (
    ContextPolicy,
    DecisionRequest,
    DecisionResponseError,
    MessagesFragment,
    PolicyConfigurationError,
    ProviderUnavailableError,
    QuotaExceededError,
    TextFragment,
    aprocess_context,
    process_context,
)
from support.histories import chat

FRAGMENTS = [
    MessagesFragment("history", messages=chat(5)),  # 114 characters
    TextFragment("doc", text="d" * 100),
]

STEPS = [
    {"id": "cut-doc", "kind": "trim", "fragmentId": "doc", "field": "text", "targetChars": 40},
    {"id": "old-turns", "kind": "trim", "fragmentId": "history", "keepGroups": 4},
    {"id": "most-turns", "kind": "trim", "fragmentId": "history", "keepGroups": 1},
]


def policy(selection: dict[str, Any], **limits: Any) -> ContextPolicy:
    return ContextPolicy.model_validate(
        {"mode": "reduce", "triggerChars": 200, **limits, "selection": selection, "steps": STEPS}
    )


def applied(result: Any) -> list[str]:
    return [change.id for change in result.report.changes if change.status == "applied"]


def test_sequence_applies_steps_in_order_until_the_target_is_met() -> None:
    result = process_context(policy({"mode": "sequence"}, targetInputChars=160), FRAGMENTS)
    assert applied(result) == ["cut-doc"]  # 214 -> 154
    assert result.report.selection == "sequence" and result.report.decisions == ()


def test_fixed_applies_exactly_the_listed_steps_in_order() -> None:
    result = process_context(
        policy({"mode": "fixed", "steps": ["most-turns", "cut-doc"]}), FRAGMENTS
    )
    assert applied(result) == ["most-turns"]  # 214 - 80 = 134 <= 200: the target is met
    result = process_context(
        policy({"mode": "fixed", "steps": ["old-turns", "cut-doc"]}, targetInputChars=100),
        FRAGMENTS,
    )
    assert applied(result) == ["old-turns", "cut-doc"]


def test_auto_picks_the_step_that_reaches_the_target_with_the_least_removal() -> None:
    # Savings: cut-doc 60, old-turns 20, most-turns 80. Target 170 needs 44: cut-doc and
    # most-turns reach it alone; cut-doc removes less.
    result = process_context(policy({"mode": "auto"}, targetInputChars=170), FRAGMENTS)
    assert applied(result) == ["cut-doc"]
    (decision,) = result.report.decisions
    assert decision.mode == "auto" and decision.step_ids == ("cut-doc",)
    assert "reaches the targets alone" in decision.reason and "60 chars" in decision.reason


def test_auto_applies_the_largest_saving_when_no_step_reaches_the_target_alone() -> None:
    # Target 80 needs 134: no step alone. Largest is most-turns (80), then cut-doc (60) reaches it.
    result = process_context(policy({"mode": "auto"}, targetInputChars=80), FRAGMENTS)
    assert applied(result) == ["most-turns", "cut-doc"]
    reasons = [decision.reason for decision in result.report.decisions]
    assert reasons[0].startswith("no step reaches the targets alone; largest saving (80 chars)")
    assert reasons[1].startswith("reaches the targets alone")


def test_auto_records_when_nothing_is_left_to_remove() -> None:
    result = process_context(policy({"mode": "auto"}, targetInputChars=10), FRAGMENTS)
    assert applied(result) == ["most-turns", "cut-doc"]
    assert result.report.decisions[-1].step_ids == ()
    assert result.report.decisions[-1].reason == "no remaining step reduces the context"


def test_auto_is_deterministic() -> None:
    first = process_context(policy({"mode": "auto"}, targetInputChars=60), FRAGMENTS)
    second = process_context(policy({"mode": "auto"}, targetInputChars=60), FRAGMENTS)
    assert first.report == second.report


# --- model ---------------------------------------------------------------------------------------


class Provider:
    """A fake decision provider that answers from a script and records the requests."""

    name = "fake"

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.requests: list[DecisionRequest] = []

    async def request(self, request: DecisionRequest) -> Any:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return {"model": request.model, "answers": {"step": answer}}


def model_policy(**limits: Any) -> ContextPolicy:
    return policy({"mode": "model", "model": "router-mini", "minConfidence": 0.8}, **limits)


def test_model_follows_a_confident_provider() -> None:
    provider = Provider(
        {"choice": "most-turns", "confidence": 0.95, "rationale": "history is stale"}
    )
    result = process_context(
        model_policy(targetInputChars=170), FRAGMENTS, decision_provider=provider
    )
    assert applied(result) == ["most-turns"]
    (decision,) = result.report.decisions
    assert decision.mode == "model" and decision.step_ids == ("most-turns",)
    assert "0.95" in decision.reason and "history is stale" in decision.reason
    (request,) = provider.requests
    assert request.model == "router-mini"
    question = request.questions["step"]
    assert list(question.criteria) == ["cut-doc", "old-turns", "most-turns"]  # type: ignore[union-attr]
    assert request.state["chars"] == 214 and request.state["target_chars"] == 170


def test_model_falls_back_to_sequence_below_its_threshold() -> None:
    provider = Provider({"choice": "most-turns", "confidence": 0.5})
    result = process_context(
        model_policy(targetInputChars=170), FRAGMENTS, decision_provider=provider
    )
    assert applied(result) == ["cut-doc"]
    (decision,) = result.report.decisions
    assert decision.mode == "sequence" and decision.step_ids == ("cut-doc",)
    assert "below min_confidence 0.8" in decision.reason


def test_model_asks_again_until_the_target_is_met() -> None:
    provider = Provider(
        {"choice": "old-turns", "confidence": 0.9},
        {"choice": "cut-doc", "confidence": 0.9},
    )
    result = process_context(
        model_policy(targetInputChars=140), FRAGMENTS, decision_provider=provider
    )
    assert applied(result) == ["old-turns", "cut-doc"]
    assert len(provider.requests) == 2
    assert list(provider.requests[1].questions["step"].criteria) == ["cut-doc", "most-turns"]  # type: ignore[union-attr]


async def test_model_falls_back_when_the_provider_is_unavailable() -> None:
    provider = Provider(ProviderUnavailableError("503"))
    result = await aprocess_context(
        model_policy(targetInputChars=170), FRAGMENTS, decision_provider=provider
    )
    assert applied(result) == ["cut-doc"]
    assert "unavailable" in result.report.decisions[0].reason


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (QuotaExceededError("429"), QuotaExceededError),
        ({"choice": "nope", "confidence": 0.9}, DecisionResponseError),
        (RuntimeError("bug"), RuntimeError),
    ],
)
def test_model_propagates_other_provider_errors(answer: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        process_context(
            model_policy(targetInputChars=170), FRAGMENTS, decision_provider=Provider(answer)
        )


def test_model_needs_a_decision_provider() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(model_policy(), FRAGMENTS)
    assert caught.value.code == "decision_provider_required"
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(model_policy(), FRAGMENTS, decision_provider=object())  # type: ignore[arg-type]
    assert caught.value.code == "invalid_decision_provider"


def test_audit_reports_the_model_choices_that_reduce_makes() -> None:
    answer = {"choice": "most-turns", "confidence": 0.9}
    reduced = process_context(
        model_policy(targetInputChars=170), FRAGMENTS, decision_provider=Provider(answer)
    )
    audit = model_policy(targetInputChars=170).model_copy(update={"mode": "audit"})
    audited = process_context(audit, FRAGMENTS, decision_provider=Provider(answer))
    assert audited.report.changes == reduced.report.changes
    assert audited.report.decisions == reduced.report.decisions
    assert audited.fragments == tuple(FRAGMENTS)
