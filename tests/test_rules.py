"""RuleRouter: ordered, deterministic rules, the default, events, logs and coded errors."""

from __future__ import annotations

import asyncio
import logging

import pytest

from contextwise import (
    ContextwiseError,
    Effort,
    InvalidTypeError,
    InvalidValueError,
    ModelSpec,
    RouteOutcome,
    RoutingConfigurationError,
    RoutingContext,
    RoutingEvent,
    RoutingRule,
    RoutingRuleError,
    RuleFailedEvent,
    RuleRouter,
)

MODELS = {
    "fast": ModelSpec(name="small-model", effort="low"),
    "deep": ModelSpec(name="big-model", effort="medium", supported_efforts=["medium", "high"]),
    "tools": "tool-model",
}
TOOLS = [{"type": "function", "function": {"name": "run_tests"}}]


def long_messages(chars: int) -> list[dict[str, str]]:
    """A message of ``chars`` characters whose estimate is a quarter of them, rounded up: words
    of three letters after a space, each one token."""
    whole, rest = divmod(chars, 4)
    return [{"role": "user", "content": " abc" * whole + (" " + "a" * (rest - 1) if rest else "")}]


def make_router(**options: object) -> RuleRouter:
    rules = [
        RoutingRule(id="huge", model="deep", min_tokens=50_000, effort="max"),
        RoutingRule(id="late-tools", model="tools", min_step=5, has_tools=True),
        RoutingRule(id="debug", model="deep", when=lambda c: "traceback" in c.system),
    ]
    return RuleRouter(rules, default="fast", models=MODELS, **options)  # type: ignore[arg-type]


def test_the_first_matching_rule_picks_the_model_and_names_itself_in_the_reason() -> None:
    router = make_router()
    context = RoutingContext(step=1, model="small-model", messages=long_messages(200_001))
    huge = router.route(context)
    assert (huge.choice, huge.model.name, huge.reason) == ("deep", "big-model", "rule:huge")
    # The rule asks for max, the model supports medium and high: the nearest lower level.
    assert huge.effort == Effort.HIGH
    assert huge.model.effort_sent == Effort.MEDIUM  # the model's own
    assert huge.confidence is None and huge.usage is None
    just_under = RoutingContext(step=1, model="m", messages=long_messages(199_996))
    assert router.route(just_under).reason == "default"
    early = RoutingContext(step=4, model="m", tools=TOOLS)
    assert router.route(early).reason == "default"
    late = RoutingContext(step=5, model="m", tools=TOOLS)
    assert router.route(late).reason == "rule:late-tools"
    assert router.route(RoutingContext(step=9, model="m")).reason == "default"
    debug = router.route(RoutingContext(step=2, model="m", system="Read the traceback."))
    assert (debug.choice, debug.reason, debug.effort) == ("deep", "rule:debug", Effort.MEDIUM)


def test_rules_are_tried_in_order() -> None:
    both = RoutingContext(
        step=7, model="m", system="traceback", tools=TOOLS, messages=long_messages(400_000)
    )
    assert make_router().route(both).reason == "rule:huge"
    reordered = RuleRouter(
        list(reversed(make_router().rules)), default="fast", models=MODELS
    )
    assert reordered.route(both).reason == "rule:debug"


def test_the_default_takes_the_steps_no_rule_matches_with_the_models_effort() -> None:
    outcome = make_router().route(RoutingContext(step=1, model="small-model"))
    assert outcome == RouteOutcome(
        step=1,
        choice="fast",
        model=MODELS["fast"],
        reason="default",
        confidence=None,
        usage=None,
        effort=Effort.LOW,
    )


def test_tokens_are_counted_with_the_routers_counter_over_instructions_and_messages() -> None:
    words = RuleRouter(
        [RoutingRule(id="wordy", model="deep", min_tokens=10)],
        default="fast",
        models=MODELS,
        counter=lambda text: len(text.split()),
    )
    context = RoutingContext(
        step=1,
        model="m",
        system="one two three four",
        messages=[{"role": "user", "content": "five six seven eight nine"}],
    )
    assert words.route(context).reason == "default"  # 9 words
    more = RoutingContext(
        step=1, model="m", system="one two three four five", messages=context.messages
    )
    assert words.route(more).reason == "rule:wordy"  # 10 words


async def test_aroute_gives_the_same_outcome_as_route() -> None:
    router = make_router()
    context = RoutingContext(step=6, model="m", tools=TOOLS)
    assert await router.aroute(context) == router.route(context)


def test_route_works_inside_a_running_event_loop() -> None:
    async def main() -> RouteOutcome:
        return make_router().route(RoutingContext(step=6, model="m", tools=TOOLS))

    assert asyncio.run(main()).reason == "rule:late-tools"


def test_events_and_a_log_record_report_each_route(caplog: pytest.LogCaptureFixture) -> None:
    events: list[RoutingEvent] = []
    router = make_router(on_event=events.append)
    with caplog.at_level(logging.INFO, logger="contextwise.routing"):
        router.route(RoutingContext(step=5, model="m", tools=TOOLS))
    # A rule router sends events of its own: no decision started, no empty router model.
    assert [event.kind for event in events] == ["route"]
    (routed,) = events
    assert routed.step == 5
    assert routed.reason == "rule:late-tools"  # type: ignore[union-attr]
    assert routed.model == "tool-model"  # type: ignore[union-attr]
    assert routed.duration_ms >= 0  # type: ignore[union-attr]
    (record,) = caplog.records
    assert record.levelno == logging.INFO
    assert record.reason == "rule:late-tools"  # type: ignore[attr-defined]
    assert record.provider == "rules"  # type: ignore[attr-defined]
    assert record.model == "tool-model"  # type: ignore[attr-defined]


def test_a_rule_that_raises_is_a_routing_error_naming_the_rule(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(context: RoutingContext) -> bool:
        return bool(context.tools[0]["missing"])

    events: list[RoutingEvent] = []
    router = RuleRouter(
        [
            RoutingRule(id="late", model="deep", min_step=100),
            RoutingRule(id="tool-kind", model="tools", when=broken),
        ],
        default="fast",
        models=MODELS,
        on_event=events.append,
    )
    with caplog.at_level(logging.INFO, logger="contextwise.routing"), pytest.raises(
        RoutingRuleError
    ) as caught:
        router.route(RoutingContext(step=3, model="m", tools=TOOLS))
    error = caught.value
    assert error.code == "rule_failed"
    assert error.params == {"rule": "tool-kind", "step": 3, "error_type": "KeyError"}
    assert isinstance(error.__cause__, KeyError)
    assert "tool-kind" in str(error) and "'missing'" in str(error)
    for locale in ("fr", "zh"):
        assert error.render(locale) != error.render("en")
        assert "tool-kind" in error.render(locale) and "KeyError" in error.render(locale)
    (failed,) = events
    assert isinstance(failed, RuleFailedEvent)
    assert (failed.kind, failed.rule, failed.step) == ("rule_failed", "tool-kind", 3)
    assert failed.error is error
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.rule == "tool-kind"  # type: ignore[attr-defined]
    assert not hasattr(record, "router_model") and not hasattr(record, "question")


def test_a_predicate_must_return_a_bool() -> None:
    async def not_plain(context: RoutingContext) -> bool:
        return True

    router = RuleRouter(
        [RoutingRule(id="async", model="deep", when=not_plain)],  # type: ignore[arg-type]
        default="fast",
        models=MODELS,
    )
    with pytest.raises(RoutingRuleError) as caught:
        router.route(RoutingContext(step=1, model="m"))
    assert isinstance(caught.value.__cause__, InvalidTypeError)
    assert caught.value.__cause__.code == "not_a_bool"


def _config_error(code: str, build: object) -> ContextwiseError:
    with pytest.raises(ContextwiseError) as caught:
        build()  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    for locale in ("fr", "zh"):
        assert caught.value.render(locale) != caught.value.render("en")
    return caught.value


def test_a_rule_set_without_a_default_is_rejected() -> None:
    rules = [RoutingRule(id="huge", model="deep", min_tokens=50_000)]
    error = _config_error("missing_default", lambda: RuleRouter(rules, models=MODELS))
    assert isinstance(error, RoutingConfigurationError)
    assert error.params["field"] == "default"
    assert "deep" in error.render("zh")
    _config_error("unknown_fallback", lambda: RuleRouter(rules, default="huge", models=MODELS))


def test_bad_rule_sets_are_coded_errors() -> None:
    rule = RoutingRule(id="huge", model="deep", min_tokens=1)
    cases = {
        "unknown_rule_model": lambda: RuleRouter(
            [RoutingRule(id="r", model="giant", min_step=1)], default="fast", models=MODELS
        ),
        "duplicate_rule_id": lambda: RuleRouter([rule, rule], default="fast", models=MODELS),
        "invalid_rule": lambda: RuleRouter([{"id": "r"}], default="fast", models=MODELS),
        "empty_models": lambda: RuleRouter([], default="fast", models={}),
        "models_not_mapping": lambda: RuleRouter([], default="fast", models=["fast"]),
        "not_a_collection": lambda: RuleRouter(rule, default="fast", models=MODELS),
        "on_event_not_callable": lambda: RuleRouter(
            [], default="fast", models=MODELS, on_event="print"
        ),
        "rule_without_condition": lambda: RoutingRule(id="always", model="deep"),
        "blank_rule_id": lambda: RoutingRule(id=" ", model="deep", min_step=1),
        "blank_model_name": lambda: RoutingRule(id="r", model="", min_step=1),
        "rule_not_callable": lambda: RoutingRule(id="r", model="deep", when="big"),
        "not_a_bool": lambda: RoutingRule(id="r", model="deep", has_tools="yes"),
        "not_a_number": lambda: RoutingRule(id="r", model="deep", min_tokens=1.5),
        "negative_size": lambda: RoutingRule(id="r", model="deep", min_step=-1),
        "invalid_effort": lambda: RoutingRule(id="r", model="deep", min_step=1, effort="turbo"),
    }
    for code, build in cases.items():
        _config_error(code, build)
    with pytest.raises(InvalidValueError):
        RoutingRule(id="r", model="deep", min_step=1, effort="turbo")  # type: ignore[arg-type]


def test_a_single_model_router_runs_every_step_on_its_model() -> None:
    events: list[RoutingEvent] = []
    router = RuleRouter.single(
        ModelSpec(name="gpt-5", effort="max", supported_efforts=["low", "high"]),
        on_event=events.append,
    )
    outcome = router.route(RoutingContext(step=3, model="gpt-5", messages=long_messages(10**6)))
    assert (outcome.choice, outcome.model.name, outcome.reason) == ("gpt-5", "gpt-5", "default")
    assert outcome.effort == Effort.HIGH
    assert [event.kind for event in events] == ["route"]
    assert RuleRouter.single("small").route(RoutingContext(step=1, model="x")).model.name == "small"
    _config_error("invalid_model_spec", lambda: RuleRouter.single(""))
