"""Model routing: the declaration, the router's fault handling, the state, effort and observability.

Each fault test asserts the outcome and that nothing else happened: how many requests were sent,
which events were emitted and which log records were written.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwise import (
    ChoiceQuestion,
    Decision,
    DecisionFailedEvent,
    DecisionFinishedEvent,
    DecisionRequest,
    DecisionResponseError,
    DecisionStartedEvent,
    DecisionTimeoutError,
    Effort,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    ProviderUnavailableError,
    QuotaExceededError,
    RouteEvent,
    RouteOutcome,
    RoutingConfigurationError,
    RoutingContext,
    RoutingEvent,
    Usage,
    default_state,
)
from support.errors import assert_translated
from support.routing import (
    DECISION,
    MODELS,
    FakeProvider,
    HangingProvider,
    SyncProvider,
    answering,
    chained,
    context,
    make_routing,
    raising,
    response,
)

JUST_BELOW = math.nextafter(0.85, 0.0)


class Recorder:
    """Collects the router's events."""

    def __init__(self) -> None:
        self.events: list[RoutingEvent] = []

    def __call__(self, event: RoutingEvent) -> None:
        self.events.append(event)

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="contextwise.routing")
    return caplog


def _routing_records(records: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in records.records if record.name == "contextwise.routing"]


async def _route(provider: Any, recorder: Recorder, **overrides: Any) -> RouteOutcome:
    router = ModelRouter(make_routing(provider, **overrides), on_event=recorder)
    return await router.aroute(context())


# --- choices and the confidence threshold ------------------------------------------------------


async def test_confidence_above_the_threshold_selects_the_choice(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(answering("deep", 0.9))
    outcome = await _route(provider, recorder)
    assert outcome == RouteOutcome(
        step=1,
        choice="deep",
        model=MODELS["deep"],
        reason="selected",
        confidence=0.9,
        usage=None,
        effort=Effort.HIGH,
        proposed="deep",
    )
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "finished", "route"]
    [record] = _routing_records(records)
    assert record.levelno == logging.INFO


async def test_confidence_equal_to_the_threshold_selects_the_choice(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(answering("deep", 0.85))
    outcome = await _route(provider, recorder)
    assert (outcome.choice, outcome.reason, outcome.confidence) == ("deep", "selected", 0.85)
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "finished", "route"]
    assert len(_routing_records(records)) == 1


async def test_confidence_just_below_the_threshold_selects_the_fallback(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(answering("deep", JUST_BELOW))
    outcome = await _route(provider, recorder)
    assert (outcome.choice, outcome.model.name, outcome.reason) == (
        "fast",
        "small-model",
        "confidence",
    )
    assert (outcome.confidence, outcome.proposed, outcome.effort) == (
        JUST_BELOW,
        "deep",
        Effort.LOW,
    )
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "finished", "route"]
    assert len(_routing_records(records)) == 1


@given(
    confidence=st.floats(min_value=0.0, max_value=1.0),
    threshold=st.floats(min_value=0.0, max_value=1.0),
)
def test_the_threshold_is_strict_for_any_confidence(confidence: float, threshold: float) -> None:
    provider = SyncProvider(answering("deep", confidence))
    outcome = ModelRouter(make_routing(provider, min_confidence=threshold)).route(context())
    if confidence >= threshold:
        assert (outcome.choice, outcome.reason) == ("deep", "selected")
    else:
        assert (outcome.choice, outcome.reason) == ("fast", "confidence")


# --- provider errors that select the fallback --------------------------------------------------


async def _assert_unavailable_fallback(
    provider: Any, recorder: Recorder, records: pytest.LogCaptureFixture, **overrides: Any
) -> BaseException:
    outcome = await _route(provider, recorder, **overrides)
    assert outcome == RouteOutcome(
        step=1,
        choice="fast",
        model=MODELS["fast"],
        reason="unavailable",
        confidence=None,
        usage=None,
        effort=Effort.LOW,
        proposed=None,
    )
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "failed", "route"]
    failed = recorder.events[1]
    assert isinstance(failed, DecisionFailedEvent) and failed.fallback
    [record] = _routing_records(records)
    assert record.levelno == logging.WARNING
    assert record.reason == "unavailable"  # type: ignore[attr-defined]
    return failed.error


async def test_a_provider_timeout_selects_the_fallback(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = DecisionTimeoutError("read timed out")
    provider = FakeProvider(raising(error))
    assert await _assert_unavailable_fallback(provider, recorder, records) is error


async def test_a_hang_is_cut_by_the_routers_timeout(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = HangingProvider()
    error = await _assert_unavailable_fallback(provider, recorder, records, timeout=0.01)
    assert isinstance(error, DecisionTimeoutError)
    assert error.code == "decision_timeout_after"
    assert provider.cancelled.is_set()


async def test_unavailability_raised_directly_selects_the_fallback(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(raising(ProviderUnavailableError("503 from upstream")))
    await _assert_unavailable_fallback(provider, recorder, records)


@pytest.mark.parametrize("depth", [1, 8])
async def test_unavailability_found_down_the_cause_chain_selects_the_fallback(
    depth: int, recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = chained(depth, ProviderUnavailableError("connection reset"))
    provider = FakeProvider(raising(error))
    assert await _assert_unavailable_fallback(provider, recorder, records) is error


# --- errors that propagate ---------------------------------------------------------------------


async def _assert_propagates(
    provider: Any,
    recorder: Recorder,
    records: pytest.LogCaptureFixture,
    expected: type[BaseException],
    **overrides: Any,
) -> BaseException:
    with pytest.raises(expected) as excinfo:
        await _route(provider, recorder, **overrides)
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "failed"]
    failed = recorder.events[1]
    assert isinstance(failed, DecisionFailedEvent)
    assert failed.error is excinfo.value and not failed.fallback
    [record] = _routing_records(records)
    assert record.levelno == logging.WARNING
    assert record.error_type == type(excinfo.value).__name__  # type: ignore[attr-defined]
    return excinfo.value


async def test_unavailability_nine_levels_down_propagates(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = chained(9, ProviderUnavailableError())
    raised = await _assert_propagates(FakeProvider(raising(error)), recorder, records, RuntimeError)
    assert raised is error


@pytest.mark.parametrize(
    "error",
    [
        QuotaExceededError("429 Too Many Requests"),
        chained(1, QuotaExceededError()),
    ],
)
async def test_a_quota_error_propagates_even_with_on_error_fallback(
    error: BaseException, recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(raising(error))
    raised = await _assert_propagates(
        provider, recorder, records, type(error), on_error="fallback"
    )
    assert raised is error


async def test_a_quota_error_wrapped_in_an_outage_still_propagates(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = ProviderUnavailableError("gateway")
    error.__cause__ = QuotaExceededError("upstream quota")
    raised = await _assert_propagates(
        FakeProvider(raising(error)), recorder, records, ProviderUnavailableError
    )
    assert raised is error


@pytest.mark.parametrize(
    ("responder", "code"),
    [
        (answering("medium", 0.99), "unknown_choice"),
        (answering("deep", 1.01), "confidence_out_of_range"),
        (answering("deep", -0.5), "confidence_out_of_range"),
        (answering("deep", math.nan), "confidence_out_of_range"),
        (
            answering("deep", 0.9, probabilities={"deep": 0.7, "fast": 0.2}),
            "probabilities_not_normalized",
        ),
        (
            answering("deep", 0.9, probabilities={"deep": 0.3, "fast": 0.7}),
            "probabilities_not_peaked",
        ),
        (lambda request: response("deep", 0.9, key="summary"), "missing_answer"),
        (lambda request: {"model": "router-mini", "answers": {}}, "missing_answer"),
    ],
)
async def test_malformed_answers_propagate_as_decision_response_errors(
    responder: Any, code: str, recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = await _assert_propagates(
        FakeProvider(responder), recorder, records, DecisionResponseError
    )
    assert isinstance(error, DecisionResponseError) and error.code == code
    assert_translated(error)


async def test_a_foreign_exception_propagates(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    error = KeyError("bug in the provider")
    raised = await _assert_propagates(FakeProvider(raising(error)), recorder, records, KeyError)
    assert raised is error


@pytest.mark.parametrize(
    "error",
    [ProviderUnavailableError("503"), DecisionTimeoutError(), chained(3, DecisionTimeoutError())],
)
async def test_on_error_fail_propagates_outages(
    error: BaseException, recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    raised = await _assert_propagates(
        FakeProvider(raising(error)), recorder, records, type(error), on_error="fail"
    )
    assert raised is error


async def test_on_error_fail_propagates_the_routers_own_timeout(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = HangingProvider()
    await _assert_propagates(
        provider, recorder, records, DecisionTimeoutError, on_error="fail", timeout=0.01
    )
    assert provider.cancelled.is_set()


async def test_cancelling_the_awaiting_task_cancels_the_request(
    recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = HangingProvider()
    router = ModelRouter(make_routing(provider, timeout=60), on_event=recorder)
    task = asyncio.create_task(router.aroute(context()))
    await provider.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert provider.cancelled.is_set()
    assert len(provider.requests) == 1
    assert recorder.kinds == ["started", "failed"]
    failed = recorder.events[1]
    assert isinstance(failed, DecisionFailedEvent)
    assert isinstance(failed.error, asyncio.CancelledError) and not failed.fallback
    [record] = _routing_records(records)
    assert record.levelno == logging.INFO


# --- the declaration ---------------------------------------------------------------------------


class _NoName:
    async def request(self, request: DecisionRequest) -> Any:
        return None


class _NoRequest:
    name = "no-request"


_PROVIDER = FakeProvider(answering())
_MIXED = Decision(
    questions={
        "goal": DECISION.questions["summary"],
        "model": DECISION.questions["model"],
    }
)


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        ({"provider": _NoName()}, "invalid_provider", "provider"),
        ({"provider": _NoRequest()}, "invalid_provider", "provider"),
        ({"provider": None}, "invalid_provider", "provider"),
        ({"model": ""}, "blank_router_model", "model"),
        ({"model": "   "}, "blank_router_model", "model"),
        ({"model": None}, "blank_router_model", "model"),
        ({"decision": {"questions": {}}}, "invalid_decision", "decision"),
        ({"question": "effort"}, "unknown_question", "question"),
        ({"question": "summary"}, "question_not_choice", "question"),
        ({"models": ["fast", "deep"]}, "models_not_mapping", "models"),
        ({"models": {"fast": "a"}}, "models_do_not_match_criteria", "models"),
        (
            {"models": {"fast": "a", "deep": "b", "mini": "c"}},
            "models_do_not_match_criteria",
            "models",
        ),
        ({"models": {"fast": "a", "deep": 3}}, "invalid_model_spec", "models"),
        ({"models": {"fast": "a", "deep": " "}}, "invalid_model_spec", "models"),
        ({"fallback": "mini"}, "unknown_fallback", "fallback"),
        ({"min_confidence": 1.01}, "invalid_min_confidence", "min_confidence"),
        ({"min_confidence": -0.1}, "invalid_min_confidence", "min_confidence"),
        ({"min_confidence": math.nan}, "invalid_min_confidence", "min_confidence"),
        ({"min_confidence": True}, "invalid_min_confidence", "min_confidence"),
        ({"min_confidence": "0.9"}, "invalid_min_confidence", "min_confidence"),
        ({"on_error": "ignore"}, "invalid_on_error", "on_error"),
        ({"state": {"step": 1}}, "state_not_callable", "state"),
        ({"timeout": 0}, "invalid_timeout", "timeout"),
        ({"timeout": -1.0}, "invalid_timeout", "timeout"),
        ({"timeout": math.inf}, "invalid_timeout", "timeout"),
    ],
)
def test_every_declaration_error_names_its_field(
    overrides: dict[str, Any], code: str, field: str
) -> None:
    arguments = {"provider": _PROVIDER, **overrides}
    with pytest.raises(RoutingConfigurationError) as excinfo:
        make_routing(**arguments)
    assert excinfo.value.code == code
    assert excinfo.value.params["field"] == field
    assert_translated(excinfo.value)


def test_declaration_errors_are_raised_in_the_documented_order() -> None:
    """With every field wrong, the errors appear one by one as each earlier field is fixed."""
    fields: dict[str, Any] = {
        "provider": None,
        "model": "",
        "question": "summary",
        "models": {"fast": "a"},
        "fallback": "mini",
        "min_confidence": 2,
        "on_error": "retry",
        "state": 1,
        "timeout": -1,
    }
    fixes: dict[str, Any] = {
        "provider": _PROVIDER,
        "model": "router-mini",
        "question": "model",
        "models": MODELS,
        "fallback": "fast",
        "min_confidence": 0.5,
        "on_error": "fail",
        "state": None,
        "timeout": 1.0,
    }
    seen: list[str] = []
    for name in fixes:
        with pytest.raises(RoutingConfigurationError) as excinfo:
            make_routing(**fields)
        seen.append(excinfo.value.params["field"])
        fields[name] = fixes[name]
    assert seen == list(fixes)
    assert make_routing(**fields).on_error == "fail"


def test_models_mismatch_lists_missing_and_unexpected_labels() -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        make_routing(_PROVIDER, models={"fast": "a", "mini": "b"})
    assert excinfo.value.params["missing"] == ["deep"]
    assert excinfo.value.params["unexpected"] == ["mini"]


def test_a_declaration_is_immutable_and_normalizes_models() -> None:
    routing = make_routing(_PROVIDER, models={"deep": "big-model", "fast": ModelSpec(name="s")})
    assert list(routing.models) == ["fast", "deep"]  # the question's order
    assert routing.models["deep"] == ModelSpec(name="big-model")
    assert routing.routing_question is DECISION.questions["model"]
    with pytest.raises(AttributeError):
        routing.fallback = "deep"
    with pytest.raises(TypeError):
        routing.models["fast"] = ModelSpec(name="x")  # type: ignore[index]
    assert "router-mini" in repr(routing)


def test_a_question_in_a_mixed_decision_can_route() -> None:
    routing = make_routing(_PROVIDER, decision=_MIXED)
    assert routing.question == "model"


def test_model_spec_rules() -> None:
    assert ModelSpec(name="m").effort_sent is None
    assert ModelSpec(name="m", effort="high").effort_sent == Effort.HIGH
    assert ModelSpec(name="m", effort="max", supported_efforts=["low", "high"]).effort_sent == (
        Effort.HIGH
    )
    assert ModelSpec(name="m", effort="low", supported_efforts=["medium"]).effort_sent == (
        Effort.MEDIUM
    )
    for bad in (
        {"name": ""},
        {"name": "m", "effort": "turbo"},
        {"name": "m", "window": 0},
        {"name": "m", "max_output_tokens": -1},
        {"name": "m", "supported_efforts": []},
        {"name": "m", "temperature": 0.2},
    ):
        with pytest.raises(ValueError):
            ModelSpec(**bad)


def test_routing_context_checks_the_step() -> None:
    with pytest.raises(TypeError) as type_error:
        RoutingContext(step="1", model="m")  # type: ignore[arg-type]
    assert getattr(type_error.value, "code", None) == "not_a_number"
    with pytest.raises(ValueError) as value_error:
        RoutingContext(step=-1, model="m")
    assert getattr(value_error.value, "code", None) == "negative_size"


# --- the state ---------------------------------------------------------------------------------


_THINKING_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the failing test."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "secret", "signature": "abc"},
            {"type": "redacted_thinking", "data": "xyz"},
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "t1", "name": "run_tests", "input": {}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"role": "assistant", "content": "Done.", "reasoning_content": "hidden chain"},
]


async def test_the_default_state_leaves_reasoning_out_without_mutating_the_input() -> None:
    provider = FakeProvider(answering())
    snapshot = repr(_THINKING_MESSAGES)
    routing = make_routing(provider)
    await ModelRouter(routing).aroute(context(step=4, messages=_THINKING_MESSAGES))
    [request] = provider.requests
    assert request.state == {
        "system": "You are a coding agent.",
        "step": 4,
        "model": "small-model",
        "tools": [{"type": "function", "function": {"name": "run_tests"}}],
        "messages": [
            {"role": "user", "content": "Fix the failing test."},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Running the tests."},
                    {"type": "tool_use", "id": "t1", "name": "run_tests", "input": {}},
                ],
            },
            _THINKING_MESSAGES[2],
            {"role": "assistant", "content": "Done."},
        ],
    }
    assert list(request.state) == ["system", "step", "model", "tools", "messages"]
    assert repr(_THINKING_MESSAGES) == snapshot
    assert request.questions == {"model": DECISION.questions["model"]}
    assert request.model == "router-mini"


def test_default_state_shares_messages_without_reasoning() -> None:
    message = {"role": "user", "content": "hi"}
    state = default_state(RoutingContext(step=0, model="m", messages=[message]))
    assert state["messages"][0] is message


async def test_a_sync_state_function_replaces_the_default() -> None:
    seen: list[RoutingContext] = []

    def state(ctx: RoutingContext) -> dict[str, Any]:
        seen.append(ctx)
        return {"step": ctx.step, "last": ctx.messages[-1]["content"]}

    provider = FakeProvider(answering())
    ctx = context(step=7)
    await ModelRouter(make_routing(provider, state=state)).aroute(ctx)
    assert seen == [ctx]
    assert provider.requests[0].state == {"step": 7, "last": "Fix the failing test."}


async def test_an_async_state_function_replaces_the_default() -> None:
    async def state(ctx: RoutingContext) -> list[Any]:
        await asyncio.sleep(0)
        return [ctx.step, ctx.model]

    provider = FakeProvider(answering())
    await ModelRouter(make_routing(provider, state=state)).aroute(context(step=2))
    assert provider.requests[0].state == [2, "small-model"]


_cycle: dict[str, Any] = {}
_cycle["loop"] = [_cycle]


@pytest.mark.parametrize(
    ("state", "code"),
    [
        ({"x": math.nan}, "state_non_finite"),
        ({"x": math.inf}, "state_non_finite"),
        ({"x": -math.inf}, "state_non_finite"),
        ({"x": -0.0}, "state_negative_zero"),
        (_cycle, "state_cycle"),
        ({1: "x"}, "state_non_string_key"),
        ({"x": object()}, "state_not_json"),
        ({"x": (1, 2)}, "state_not_json"),
    ],
)
async def test_a_state_that_is_not_lossless_json_is_rejected_before_any_request(
    state: Any, code: str, recorder: Recorder, records: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider(answering())
    with pytest.raises(RoutingConfigurationError) as excinfo:
        await _route(provider, recorder, state=lambda ctx: state)
    assert excinfo.value.code == code
    assert provider.requests == []
    assert recorder.kinds == ["started", "failed"]
    assert len(_routing_records(records)) == 1


async def test_the_default_state_is_checked_too() -> None:
    provider = FakeProvider(answering())
    bad = context(messages=[{"role": "user", "content": "x", "score": math.nan}])
    with pytest.raises(RoutingConfigurationError) as excinfo:
        await ModelRouter(make_routing(provider)).aroute(bad)
    assert excinfo.value.params["path"] == "$.messages[0].score"
    assert provider.requests == []


async def test_a_state_function_that_raises_propagates() -> None:
    def state(ctx: RoutingContext) -> Any:
        raise LookupError("no history")

    provider = FakeProvider(answering())
    with pytest.raises(LookupError):
        await ModelRouter(make_routing(provider, state=state)).aroute(context())
    assert provider.requests == []


# --- sync providers, sync route, effort ------------------------------------------------------


def test_sync_route_with_a_sync_provider() -> None:
    provider = SyncProvider(answering("deep", 0.95))
    outcome = ModelRouter(make_routing(provider)).route(context(step=3))
    assert (outcome.step, outcome.choice, outcome.reason) == (3, "deep", "selected")
    assert len(provider.requests) == 1


def test_sync_route_with_an_async_provider_and_a_fallback() -> None:
    provider = FakeProvider(raising(ProviderUnavailableError()))
    outcome = ModelRouter(make_routing(provider)).route(context())
    assert (outcome.choice, outcome.reason) == ("fast", "unavailable")


@pytest.mark.parametrize(
    ("effort", "supported", "expected"),
    [
        (None, None, None),
        ("medium", None, Effort.MEDIUM),
        ("medium", ["medium", "high"], Effort.MEDIUM),
        ("medium", ["low", "high"], Effort.HIGH),
        ("max", ["low", "high"], Effort.HIGH),
        ("none", ["low"], Effort.LOW),
    ],
)
async def test_the_models_own_effort_is_clamped_to_the_supported_levels(
    effort: str | None, supported: list[str] | None, expected: Effort | None
) -> None:
    models = {
        "fast": "small-model",
        "deep": ModelSpec(name="big-model", effort=effort, supported_efforts=supported),
    }
    routing = make_routing(FakeProvider(answering("deep", 0.99)), models=models)
    outcome = await ModelRouter(routing).aroute(context())
    assert outcome.effort == expected
    assert routing.models["deep"].effort_sent == expected


# --- observability -----------------------------------------------------------------------------


async def test_events_carry_durations_usage_and_the_choice(recorder: Recorder) -> None:
    provider = FakeProvider(
        lambda request: {
            **response("deep", 0.93),
            "usage": {"input_tokens": 321, "output_tokens": 9},
        }
    )
    outcome = await _route(provider, recorder)
    started, finished, route = recorder.events
    assert started == DecisionStartedEvent(
        step=1, provider="fake", router_model="router-mini", question="model"
    )
    assert isinstance(finished, DecisionFinishedEvent)
    assert (finished.choice, finished.confidence) == ("deep", 0.93)
    assert finished.usage == Usage(input_tokens=321, output_tokens=9)
    assert finished.duration_ms >= 0.0
    assert isinstance(route, RouteEvent)
    assert (route.choice, route.model, route.reason, route.confidence) == (
        "deep",
        "big-model",
        "selected",
        0.93,
    )
    assert route.usage == outcome.usage == finished.usage
    assert route.effort == Effort.HIGH
    assert route.duration_ms >= finished.duration_ms


async def test_failed_events_carry_a_duration(recorder: Recorder) -> None:
    await _route(FakeProvider(raising(ProviderUnavailableError())), recorder)
    failed = recorder.events[1]
    assert isinstance(failed, DecisionFailedEvent)
    assert failed.duration_ms >= 0.0
    assert failed.kind == "failed"


async def test_the_log_record_is_structured(records: pytest.LogCaptureFixture) -> None:
    provider = FakeProvider(
        lambda request: {**response("deep", 0.9), "usage": {"input_tokens": 5, "output_tokens": 1}}
    )
    await ModelRouter(make_routing(provider)).aroute(context(step=6))
    [record] = _routing_records(records)
    fields = {
        name: getattr(record, name)
        for name in (
            "step",
            "choice",
            "model",
            "reason",
            "confidence",
            "provider",
            "router_model",
            "question",
            "input_tokens",
            "output_tokens",
            "error_type",
            "error_code",
        )
    }
    assert fields == {
        "step": 6,
        "choice": "deep",
        "model": "big-model",
        "reason": "selected",
        "confidence": 0.9,
        "provider": "fake",
        "router_model": "router-mini",
        "question": "model",
        "input_tokens": 5,
        "output_tokens": 1,
        "error_type": None,
        "error_code": None,
    }
    assert record.duration_ms >= record.decision_ms >= 0.0  # type: ignore[attr-defined]
    assert "step 6 routed to deep" in record.getMessage()


async def test_a_failure_record_names_the_error_code(records: pytest.LogCaptureFixture) -> None:
    with pytest.raises(QuotaExceededError):
        await ModelRouter(make_routing(FakeProvider(raising(QuotaExceededError())))).aroute(
            context()
        )
    [record] = _routing_records(records)
    assert (record.error_type, record.error_code) == (  # type: ignore[attr-defined]
        "QuotaExceededError",
        "quota_exceeded",
    )


async def test_nothing_is_logged_when_the_logger_is_silent() -> None:
    logger = logging.getLogger("contextwise.routing")
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        outcome = await ModelRouter(make_routing(FakeProvider(answering()))).aroute(context())
    finally:
        logger.setLevel(previous)
    assert outcome.choice == "deep"


async def test_an_error_in_on_event_propagates() -> None:
    def broken(event: RoutingEvent) -> None:
        raise RuntimeError("handler bug")

    router = ModelRouter(make_routing(FakeProvider(answering())), on_event=broken)
    with pytest.raises(RuntimeError, match="handler bug"):
        await router.aroute(context())


def test_a_two_option_question_from_another_decision() -> None:
    decision = Decision(
        questions={
            "tier": ChoiceQuestion(instructions="Tier?", criteria={"cheap": "c", "smart": "s"})
        }
    )
    routing = ModelRouting(
        provider=SyncProvider(lambda request: response("smart", 1.0, key="tier")),
        model="router",
        decision=decision,
        question="tier",
        models={"cheap": "m1", "smart": "m2"},
        fallback="cheap",
    )
    assert ModelRouter(routing).route(context()).model.name == "m2"


def test_the_router_checks_its_arguments() -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        ModelRouter({"provider": "x"})  # type: ignore[arg-type]
    assert (excinfo.value.code, excinfo.value.params["field"]) == ("invalid_routing", "routing")
    with pytest.raises(RoutingConfigurationError) as excinfo:
        ModelRouter(make_routing(_PROVIDER), on_event="print")  # type: ignore[arg-type]
    assert excinfo.value.code == "on_event_not_callable"


def test_routing_configuration_errors_pickle() -> None:
    import pickle

    with pytest.raises(RoutingConfigurationError) as excinfo:
        make_routing(_PROVIDER, fallback="mini")
    copy = pickle.loads(pickle.dumps(excinfo.value))
    assert type(copy) is RoutingConfigurationError
    assert (copy.code, copy.params, str(copy)) == (
        "unknown_fallback",
        excinfo.value.params,
        str(excinfo.value),
    )
