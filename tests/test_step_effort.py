"""prepare_step and effort: request_options, the reasoning reserve, rule and single-model routing,
text fragments placed by role, and optional fragments."""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import (
    ChoiceQuestion,
    ContextPolicy,
    Decision,
    DecisionRequest,
    Effort,
    InvalidValueError,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    PolicyConfigurationError,
    RoutingConfigurationError,
    RoutingRule,
    RuleRouter,
    TextFragment,
    aprepare_step,
    prepare_step,
    process_context,
)

CLAUDE = ModelSpec(
    name="claude-sonnet-4-6",
    api="anthropic",
    window=200_000,
    max_output_tokens=32_000,
    effort="medium",
    reasoning_tokens={"medium": 6_000, "high": 20_000},
)
GPT = ModelSpec(name="gpt-5", api="openai-chat", window=128_000, effort="low")
HISTORY = [{"role": "user", "content": "Fix the failing test."}]


def test_request_options_and_the_reasoning_reserve_agree() -> None:
    prepared = prepare_step(
        ContextPolicy(mode="reduce"), [MessagesFragment("history", HISTORY)], model=CLAUDE, step=1
    )
    options = prepared.request_options()
    assert options == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 32_000,
        "thinking": {"type": "enabled", "budget_tokens": 6_000},
    }
    assert prepared.budget.reasoning == options["thinking"]["budget_tokens"] == 6_000
    assert prepared.budget.output == options["max_tokens"]
    assert prepared.route.reason == "default" and prepared.effort == Effort.MEDIUM


def test_without_an_effort_the_reasoning_argument_is_the_reserve() -> None:
    plain = ModelSpec(name="m", api="openai-chat", window=10_000)
    prepared = prepare_step(
        ContextPolicy(mode="reduce"),
        [MessagesFragment("history", messages=HISTORY)],
        model=plain,
        step=1,
        reasoning=700,
    )
    assert prepared.effort is None
    assert prepared.budget.reasoning == 700
    assert prepared.request_options() == {"model": "m"}


class EffortDecider:
    name = "effort-decider"

    def request(self, request: DecisionRequest) -> dict[str, Any]:
        answers = {
            "model": {"choice": "deep", "confidence": 0.95},
            "effort": {"choice": "high", "confidence": 0.95},
        }
        return {"model": request.model, "answers": answers}


async def test_the_effort_the_decision_chose_is_sent_and_reserved() -> None:
    decision = Decision(
        questions={
            "model": ChoiceQuestion(
                instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
            ),
            "effort": ChoiceQuestion(
                instructions="How hard?", criteria={"low": "Quick.", "high": "Deep."}
            ),
        }
    )
    routing = ModelRouting(
        provider=EffortDecider(),
        model="router-mini",
        decision=decision,
        question="model",
        models={"fast": GPT, "deep": CLAUDE},
        fallback="fast",
        effort_question="effort",
    )
    prepared = await aprepare_step(
        ContextPolicy(mode="reduce"),
        [MessagesFragment("history", messages=HISTORY)],
        router=ModelRouter(routing),
        step=3,
    )
    assert (prepared.model.name, prepared.effort) == ("claude-sonnet-4-6", Effort.HIGH)
    assert prepared.request_options()["thinking"]["budget_tokens"] == 20_000
    assert prepared.budget.reasoning == 20_000


def test_a_rule_router_routes_the_step() -> None:
    router = RuleRouter(
        [RoutingRule(id="long", model="deep", min_tokens=1_000, effort="high")],
        default="fast",
        models={"fast": GPT, "deep": CLAUDE},
    )
    short = prepare_step(
        ContextPolicy(mode="reduce"), [MessagesFragment("h", HISTORY)], router=router, step=1
    )
    assert (short.model.name, short.route.reason) == ("gpt-5", "default")
    assert short.request_options() == {"model": "gpt-5", "reasoning_effort": "low"}
    long = [{"role": "user", "content": "x" * 8_000}]
    deep = prepare_step(
        ContextPolicy(mode="reduce"),
        [MessagesFragment("h", messages=long)],
        router=router,
        step=2,
        active="fast",
    )
    assert (deep.model.name, deep.route.reason, deep.effort) == (
        "claude-sonnet-4-6",
        "rule:long",
        Effort.HIGH,
    )
    assert deep.budget.reasoning == deep.request_options()["thinking"]["budget_tokens"] == 20_000


def test_a_step_needs_exactly_one_of_router_and_model() -> None:
    fragments = [MessagesFragment("h", messages=HISTORY)]
    policy = ContextPolicy(mode="reduce")
    with pytest.raises(RoutingConfigurationError) as neither:
        prepare_step(policy, fragments, step=1)
    assert neither.value.code == "router_or_model"
    with pytest.raises(RoutingConfigurationError) as both:
        prepare_step(policy, fragments, step=1, model=GPT, router=RuleRouter.single(GPT))
    assert both.value.code == "router_or_model"
    with pytest.raises(RoutingConfigurationError) as wrong:
        prepare_step(policy, fragments, step=1, router="gpt-5")  # type: ignore[arg-type]
    assert wrong.value.code == "invalid_router"
    for error in (neither.value, wrong.value):
        assert error.render("fr") != error.render("en") != error.render("zh")
        assert "router" in error.render("zh")


# --- text fragments reach the model ------------------------------------------------------------


def test_text_fragments_become_messages_of_their_role_in_fragment_order() -> None:
    fragments = [
        TextFragment("instructions", text="You fix failing tests.", role="system"),
        MessagesFragment("history", messages=HISTORY),
        {"id": "memory", "text": "The tests live in tests/.", "role": "user"},
        TextFragment("notes", text="Run make test."),
    ]
    prepared = prepare_step(ContextPolicy(mode="reduce"), fragments, model=GPT, step=1)
    assert prepared.messages == [
        {"role": "system", "content": "You fix failing tests."},
        {"role": "user", "content": "Fix the failing test."},
        {"role": "user", "content": "The tests live in tests/."},
        {"role": "user", "content": "Run make test."},
    ]
    assert prepared.fragment("notes").role == "user"  # the documented default


def test_a_trimmed_text_fragment_keeps_its_role() -> None:
    policy = {
        "mode": "reduce",
        "triggerChars": 50,
        "targetInputChars": 40,
        "steps": [
            {"id": "cut", "kind": "trim", "fragmentId": "doc", "field": "text", "targetChars": 40}
        ],
    }
    result = process_context(policy, [TextFragment("doc", text="x" * 200, role="system")])
    assert result.report.changes[0].status == "applied"
    assert result.fragment("doc").role == "system"


def test_a_bad_role_is_a_coded_error() -> None:
    for build in (
        lambda: TextFragment("doc", text="x", role="assistant"),  # type: ignore[arg-type]
        lambda: process_context(
            ContextPolicy(mode="validate"), [{"id": "history", "messages": HISTORY, "role": "user"}]
        ),
    ):
        with pytest.raises(InvalidValueError) as caught:
            build()
        assert caught.value.code == "invalid_fragment_role"
        assert caught.value.render("fr") != caught.value.render("en")
        assert "system" in caught.value.render("zh")


# --- optional fragments ------------------------------------------------------------------------

OPTIONAL = {
    "mode": "reduce",
    "triggerChars": 30,
    "targetInputChars": 25,
    "optionalFragments": ["scratch"],
    "steps": [
        {"id": "cut-scratch", "kind": "trim", "fragmentId": "scratch", "field": "text",
         "targetChars": 20},
        {"id": "cut-doc", "kind": "trim", "fragmentId": "doc", "field": "text", "targetChars": 20},
    ],
}


def test_steps_on_an_absent_optional_fragment_are_skipped_and_reported() -> None:
    result = process_context(OPTIONAL, [TextFragment("doc", text="y" * 100)])
    assert result.report.skipped_steps == ("cut-scratch",)
    assert [change.id for change in result.report.changes] == ["cut-doc"]
    both = [TextFragment("scratch", text="z" * 100), TextFragment("doc", text="y")]
    present = process_context(OPTIONAL, both)
    assert present.report.skipped_steps == ()
    assert [change.id for change in present.report.changes] == ["cut-scratch"]


def test_a_fixed_selection_skips_the_steps_of_an_absent_optional_fragment() -> None:
    policy = {**OPTIONAL, "selection": {"mode": "fixed", "steps": ["cut-scratch", "cut-doc"]}}
    result = process_context(policy, [TextFragment("doc", text="y" * 100)])
    assert result.report.skipped_steps == ("cut-scratch",)
    assert [change.id for change in result.report.changes] == ["cut-doc"]


def test_an_absent_fragment_that_is_not_optional_still_fails() -> None:
    policy = {**OPTIONAL, "optionalFragments": []}
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(policy, [TextFragment("doc", text="y" * 100)])
    assert caught.value.code == "unknown_fragment"


def test_prepare_step_reports_the_skipped_steps() -> None:
    prepared = prepare_step(OPTIONAL, [TextFragment("doc", text="y" * 100)], model=GPT, step=1)
    assert prepared.report.skipped_steps == ("cut-scratch",)
