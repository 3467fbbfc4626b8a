"""The runner: a policy bound once to its options, used by process_context, sessions, the three
integrations and prepare_step, with every option checked at bind time."""

from __future__ import annotations

import asyncio
import importlib
import typing
from collections.abc import Callable
from typing import Any

import pytest

import contextwise
from contextwise import (
    ContextBudget,
    ContextPolicy,
    ContextSession,
    EstimateCounter,
    InvalidTypeError,
    InvalidValueError,
    MemoryStore,
    MessagesFragment,
    ModelSpec,
    PartEstimate,
    PolicyConfigurationError,
    PolicyRunner,
    RunnerOptions,
    prepare_step,
    process_context,
)
from contextwise.policy import _runner as runner_module
from support.errors import assert_translated

TRIM = {
    "mode": "reduce",
    "target_input_chars": 20,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}
SUMMARY = {
    "mode": "reduce",
    "trigger_chars": 40,
    "target_input_chars": 30,
    "steps": [{"id": "sum", "kind": "compress", "fragment_id": "history", "compressor": "llm"}],
}
TOKENS = {"mode": "reduce", "trigger_tokens": 100, "target_input_tokens": 50}


def history(turns: int = 4) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"Question number {n}?"},
            {"role": "assistant", "content": f"Answer number {n}."},
        ]
    return messages


def summarize(messages: object) -> str:
    return "Summary."


# --- the options ---------------------------------------------------------------------------------


def test_runner_options_is_one_public_typed_dict_with_every_runtime_option() -> None:
    assert typing.is_typeddict(RunnerOptions)
    assert list(RunnerOptions.__annotations__) == [
        "counter",
        "budget",
        "compressors",
        "apps",
        "decision_provider",
        "step_timeout",
        "part_estimate",
        "unknown_items",
    ]
    assert RunnerOptions.__total__ is False
    assert contextwise.RunnerOptions is RunnerOptions
    assert contextwise.PolicyRunner is PolicyRunner


def test_bind_returns_a_runner_whose_process_and_aprocess_agree_with_the_shortcut() -> None:
    policy = ContextPolicy.model_validate(TRIM)
    runner = policy.bind()
    fragments = [MessagesFragment("history", messages=history())]

    result = runner.process(fragments)
    result_async = asyncio.run(runner.aprocess(fragments))
    shortcut = process_context(policy, fragments)

    kept = ["Question number 3?", "Answer number 3."]
    for each in (result, result_async, shortcut):
        assert [m["content"] for m in each.fragment("history").messages] == kept
        assert each.report == result.report
    assert runner.policy is policy


def test_replace_gives_a_runner_for_another_budget_and_leaves_the_first_unchanged() -> None:
    fragments = [MessagesFragment("history", messages=history(20))]
    runner = ContextPolicy.model_validate(
        {**TRIM, "target_input_chars": None, "trigger_chars": None, "trigger_tokens": 10**6}
    ).bind(counter=EstimateCounter())
    small = runner.replace(budget=ContextBudget(100, 10, safety=0))

    assert "budget" not in runner.options
    assert small.options["budget"].context_budget() == 90
    big_result = runner.process(fragments)
    small_result = small.process(fragments)
    assert big_result.report.changes == ()
    assert small_result.report.tokens is not None
    assert small_result.report.tokens.after <= 90 < small_result.report.tokens.before
    # A counter can change too; removing the counter that a budget needs is refused.
    assert small.replace(counter=lambda text: len(text)).counter is not None
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(TOKENS).bind(counter=EstimateCounter()).replace(counter=None)
    assert caught.value.code == "counter_required"


APP = {
    "mode": "reduce",
    "trigger_chars": 5,
    "steps": [{"id": "a", "kind": "app", "fragment_id": "history", "app": "redact"}],
}


@pytest.mark.parametrize(
    ("policy", "options", "removed", "code"),
    [
        (SUMMARY, {"compressors": {"llm": summarize}}, {"compressors": None}, "unknown_compressor"),
        (SUMMARY, {"compressors": {"llm": summarize}}, {"compressors": {}}, "unknown_compressor"),
        (APP, {"apps": {"redact": lambda m: m}}, {"apps": None}, "unknown_app"),
        (APP, {"apps": {"redact": lambda m: m}}, {"apps": {"other": print}}, "unknown_app"),
    ],
)
def test_replace_is_checked_like_bind_and_refuses_to_drop_what_a_step_names(
    policy: dict[str, Any], options: dict[str, Any], removed: dict[str, Any], code: str
) -> None:
    runner = ContextPolicy.model_validate(policy).bind(**options)
    with pytest.raises(PolicyConfigurationError) as caught:
        runner.replace(**removed)
    assert caught.value.code == code
    assert_translated(caught.value)
    # The constructor refuses the same options with the same code.
    with pytest.raises(PolicyConfigurationError) as bound:
        PolicyRunner(policy, **{**options, **removed})
    assert bound.value.code == code


def test_a_replaced_runner_is_reused_only_for_the_same_values_of_the_same_types() -> None:
    runner = ContextPolicy(mode="audit").bind()
    budget = ContextBudget(8_000, 1_000)
    counted = runner.replace(counter=EstimateCounter())
    assert counted.replace(budget=budget) is counted.replace(budget=ContextBudget(8_000, 1_000))
    assert counted.replace(budget=budget) is not counted.replace(budget=ContextBudget(9_000, 1_000))
    assert runner.replace(step_timeout=1).options["step_timeout"] == 1
    with pytest.raises(PolicyConfigurationError) as caught:
        runner.replace(step_timeout=True)  # equal to 1, but not a number of seconds
    assert caught.value.code == "invalid_step_timeout"


def test_a_runner_is_immutable() -> None:
    runner = ContextPolicy(mode="audit").bind()
    with pytest.raises(AttributeError):
        runner.policy = ContextPolicy(mode="reduce")  # type: ignore[misc]
    options = runner.options
    options["step_timeout"] = 3
    assert "step_timeout" not in runner.options


# --- everything is checked at bind time ----------------------------------------------------------


BIND_FAILURES: list[tuple[str, dict[str, Any], dict[str, Any], type[Exception], str]] = [
    ("missing compressor", SUMMARY, {}, PolicyConfigurationError, "unknown_compressor"),
    (
        "missing app",
        {
            "mode": "reduce",
            "trigger_chars": 5,
            "steps": [{"id": "a", "kind": "app", "fragment_id": "history", "app": "redact"}],
        },
        {"apps": {"other": summarize}},
        PolicyConfigurationError,
        "unknown_app",
    ),
    ("budget without counter", TRIM, {"budget": ContextBudget(1000, 10)}, PolicyConfigurationError,
     "counter_required"),
    ("token limit without counter", TOKENS, {}, PolicyConfigurationError, "counter_required"),
    ("compressor not callable", SUMMARY, {"compressors": {"llm": "gpt"}},
     PolicyConfigurationError, "invalid_compressor"),
    ("app not callable", TRIM, {"apps": {"redact": 3}}, PolicyConfigurationError, "invalid_app"),
    ("misspelt option", TRIM, {"compresors": {"llm": summarize}}, PolicyConfigurationError,
     "unknown_runner_option"),
    ("budget of a wrong type", TRIM, {"budget": 1000, "counter": EstimateCounter()},
     InvalidTypeError, "invalid_budget"),
    ("bad step timeout", TRIM, {"step_timeout": -1}, PolicyConfigurationError,
     "invalid_step_timeout"),
    ("bad part estimate", TRIM, {"part_estimate": {"image_tokens": 3}}, InvalidTypeError,
     "invalid_part_estimate_type"),
    ("bad unknown_items", TRIM, {"unknown_items": "ignore"}, PolicyConfigurationError,
     "invalid_unknown_items"),
    ("bad decision provider", TRIM, {"decision_provider": object()}, PolicyConfigurationError,
     "invalid_decision_provider"),
]


@pytest.mark.parametrize(
    ("policy", "options", "error", "code"),
    [case[1:] for case in BIND_FAILURES],
    ids=[case[0] for case in BIND_FAILURES],
)
def test_bind_refuses_what_the_first_model_call_would_have_found(
    policy: dict[str, Any], options: dict[str, Any], error: type[Exception], code: str
) -> None:
    with pytest.raises(error) as caught:
        ContextPolicy.model_validate(policy).bind(**options)
    assert getattr(caught.value, "code", None) == code
    assert_translated(caught.value)  # type: ignore[arg-type]


def test_an_unknown_option_names_itself_and_every_known_option_in_each_language() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy(mode="audit").bind(on_reslut=print)  # type: ignore[call-arg]
    error = caught.value
    assert error.params["names"] == ["on_reslut"]
    assert "unknown_items" in error.params["known"]
    for locale in ("en", "fr", "zh"):
        text = error.render(locale)
        assert "on_reslut" in text and "step_timeout" in text
    assert error.render("fr") != error.render("en") != error.render("zh")


CONSUMERS: dict[str, Callable[..., object]] = {
    "process_context": lambda policy, **options: process_context(
        policy, [MessagesFragment("history", messages=[])], **options
    ),
    "ContextSession": lambda policy, **options: ContextSession(
        policy, MemoryStore(), "s", **options
    ),
    "prepare_step": lambda policy, **options: prepare_step(
        policy,
        [MessagesFragment("history", messages=[])],
        model=ModelSpec(name="m", window=10_000),
        step=1,
        **options,
    ),
    "ContextPolicyMiddleware": lambda policy, **options: importlib.import_module(
        "contextwise.integrations.langchain"
    ).ContextPolicyMiddleware(policy, **options),
    "ContextPolicyCapability": lambda policy, **options: importlib.import_module(
        "contextwise.integrations.pydantic_ai"
    ).ContextPolicyCapability(policy, **options),
    "history_processor": lambda policy, **options: importlib.import_module(
        "contextwise.integrations.pydantic_ai"
    ).history_processor(policy, **options),
    "PolicySession": lambda policy, **options: importlib.import_module(
        "contextwise.integrations.openai_agents"
    ).PolicySession(
        importlib.import_module("agents").SQLiteSession("runner-test"), policy, **options
    ),
}


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_every_consumer_refuses_an_unknown_option_when_it_is_built(consumer: str) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        CONSUMERS[consumer](TRIM, compresors={"llm": summarize})
    assert caught.value.code == "unknown_runner_option"
    assert caught.value.params["names"] == ["compresors"]


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_every_consumer_refuses_a_missing_compressor_or_counter_when_it_is_built(
    consumer: str,
) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        CONSUMERS[consumer](SUMMARY)
    assert caught.value.code == "unknown_compressor"
    if consumer != "prepare_step":  # the step gives the estimate counter to a runner without one
        with pytest.raises(PolicyConfigurationError) as caught:
            CONSUMERS[consumer](TRIM, budget=ContextBudget(1000, 10))
        assert caught.value.code == "counter_required"


class Provider:
    """A decision provider that is never asked: the policies here select in sequence."""

    name = "never"

    async def request(self, request: object) -> object:
        raise AssertionError("not asked")


def all_options() -> RunnerOptions:
    """A value for every runner option."""
    return {
        "counter": EstimateCounter(),
        "budget": ContextBudget(100_000, 1_000),
        "compressors": {"llm": summarize},
        "apps": {"redact": lambda fragment: fragment},
        "decision_provider": Provider(),
        "step_timeout": 5.0,
        "part_estimate": PartEstimate(image_tokens=100),
        "unknown_items": "opaque",
    }


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_every_consumer_takes_every_option_and_a_runner(consumer: str) -> None:
    options = all_options()
    assert set(options) == set(RunnerOptions.__annotations__)
    CONSUMERS[consumer](SUMMARY, **options)
    if consumer == "process_context":  # the shortcut binds a policy; a runner has process()
        return
    runner = ContextPolicy.model_validate(SUMMARY).bind(**options)
    CONSUMERS[consumer](runner)
    with pytest.raises(PolicyConfigurationError) as caught:
        CONSUMERS[consumer](runner, step_timeout=3)
    assert caught.value.code == "runner_with_options"
    assert_translated(caught.value)


@pytest.mark.parametrize(
    "consumer", ["ContextPolicyMiddleware", "ContextPolicyCapability", "PolicySession"]
)
def test_an_integration_refuses_a_callback_that_is_not_callable(consumer: str) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        CONSUMERS[consumer](TRIM, on_result="print")
    assert caught.value.code == "not_callable"
    assert_translated(caught.value)


# --- validated once ------------------------------------------------------------------------------


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every validation of a policy against its options, as the runner module makes them."""
    calls: list[object] = []
    original = runner_module.validate_context_policy

    def counting(*args: Any, **kwargs: Any) -> ContextPolicy:
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(runner_module, "validate_context_policy", counting)
    return calls


def test_a_runner_validates_its_policy_once_however_often_it_runs(
    validations: list[object],
) -> None:
    runner = ContextPolicy.model_validate(SUMMARY).bind(compressors={"llm": summarize})
    for turns in range(1, 6):
        runner.process([MessagesFragment("history", messages=history(turns))])
    assert len(validations) == 1
    # A replacement binds new options: it is checked once, like bind, and then reused.
    for _ in range(3):
        runner.replace(step_timeout=2).process([MessagesFragment("history", messages=history())])
    assert len(validations) == 2


def test_a_session_validates_its_policy_once_when_it_is_built(validations: list[object]) -> None:
    session = ContextSession(SUMMARY, MemoryStore(), "once", compressors={"llm": summarize})
    for _ in range(5):
        session.add(history(1))
        session.context()
    assert len(validations) == 1
    assert session.runner.policy.mode == "reduce"


def test_prepare_step_with_a_runner_rebinds_once_per_model_not_per_step(
    validations: list[object],
) -> None:
    runner = ContextPolicy.model_validate(TRIM).bind()
    after_first_step = 0
    for step in range(1, 5):
        prepare_step(
            runner,
            [MessagesFragment("history", messages=history(step))],
            model=ModelSpec(name="m", window=10_000),
            step=step,
        )
        after_first_step = after_first_step or len(validations)
    # The first step derives the runners it needs (a counter, the model's budget) and checks
    # them; the next steps of the same model reuse them.
    assert after_first_step <= 3
    assert len(validations) == after_first_step


def test_the_options_plumbing_is_gone() -> None:
    engine = importlib.import_module("contextwise.policy._engine")
    for name in ("RunSetup", "prepare_run", "run_effects", "context_effects", "process_context"):
        assert not hasattr(engine, name), name
    conversation = importlib.import_module("contextwise.integrations._conversation")
    assert not hasattr(conversation, "ConversationPolicy")
    assert not hasattr(conversation, "PolicyOptions")
    session = ContextSession(TRIM, MemoryStore(), "plain")
    assert not hasattr(session, "_options") and not hasattr(session, "_run_setup")


# --- what the options do in every consumer -------------------------------------------------------


def test_a_session_uses_the_budget_and_part_estimate_it_is_given() -> None:
    image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look."},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    estimate = PartEstimate(image_tokens=2_000)
    policy = {
        "mode": "reduce",
        "steps": [
            {
                "id": "turns",
                "kind": "trim",
                "fragment_id": "history",
                "grouping": {"kind": "message"},
            }
        ],
    }
    session = ContextSession(
        policy,
        MemoryStore(),
        "budget",
        counter=EstimateCounter(),
        budget=ContextBudget(1_000, 100, safety=0),
        part_estimate=estimate,
    )
    session.add([image, {"role": "assistant", "content": "A cat."}])
    result = session.context()
    assert result.report.tokens is not None
    assert result.report.tokens.input_limit == 900
    assert result.report.tokens.before >= 2_000
    assert [m["content"] for m in session.messages()] == ["A cat."]


def test_prepare_step_passes_the_step_timeout_to_the_policy() -> None:
    import time

    def slow(messages: object) -> str:
        time.sleep(0.5)
        return "Summary."

    prepared = prepare_step(
        SUMMARY,
        [MessagesFragment("history", messages=history())],
        model=ModelSpec(name="m", window=10_000),
        step=1,
        compressors={"llm": slow},
        step_timeout=0.05,
    )
    change = prepared.report.changes[0]
    assert change.status == "failed"
    assert change.error is not None and change.error.code == "compressor_timeout"


def test_a_budget_given_to_prepare_step_caps_every_models_budget() -> None:
    fragments = [MessagesFragment("history", messages=history(30))]
    model = ModelSpec(name="m", window=100_000)
    policy = {"mode": "reduce", "steps": [TRIM["steps"][0]]}
    free = prepare_step(policy, fragments, model=model, step=1)
    capped = prepare_step(
        policy, fragments, model=model, step=1, budget=ContextBudget(200, 50, safety=0)
    )
    assert free.report.changes == ()
    assert capped.report.tokens is not None and capped.report.tokens.input_limit == 150
    assert capped.report.tokens.after <= 150
    assert capped.budget.window == 100_000


# --- unknown items -------------------------------------------------------------------------------


def test_unknown_items_are_an_error_by_default_and_one_opaque_unit_when_asked() -> None:
    items = [
        {"role": "user", "content": "Find the tool."},
        {"type": "tool_search_call", "id": "ts_1", "status": "completed", "query": "weather"},
        {"type": "tool_search_output", "id": "to_1", "tools": ["weather"] * 20},
        {"role": "user", "content": "Now use it."},
    ]
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "target_input_chars": 15,
            "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
        }
    )
    with pytest.raises(InvalidValueError) as caught:
        policy.bind().process([MessagesFragment("history", messages=items)])
    assert caught.value.code == "unknown_message_type"

    result = policy.bind(unknown_items="opaque").process([MessagesFragment("history", items)])
    kept = result.fragment("history").messages
    assert list(kept) == [items[3]]
    assert [item for item in result.removed["history"]] == items[:3]
    # Each opaque item is measured by its compact JSON, never changed.
    import json

    sizes = [len(json.dumps(item, separators=(",", ":"))) for item in items[1:3]]
    assert result.report.before_chars == len("Find the tool.") + sum(sizes) + len("Now use it.")


def test_the_integrations_bind_opaque_unknown_items_by_default() -> None:
    langchain = importlib.import_module("contextwise.integrations.langchain")
    middleware = langchain.ContextPolicyMiddleware(TRIM)
    assert middleware._conversation.runner.options["unknown_items"] == "opaque"
    strict = langchain.ContextPolicyMiddleware(TRIM, unknown_items="error")
    assert strict._conversation.runner.options["unknown_items"] == "error"
    assert ContextSession(TRIM, MemoryStore(), "x").runner.options.get("unknown_items") is None


def test_a_runner_is_shared_by_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    runner = ContextPolicy.model_validate(SUMMARY).bind(compressors={"llm": summarize})
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(
                lambda n: runner.process([MessagesFragment("history", messages=history(n))]),
                range(1, 13),
            )
        )
    for n, result in enumerate(results, start=1):
        expected = sum(len(m["content"]) for m in history(n))
        assert result.report.before_chars == expected
