"""The decision types, the shared decision core, the lossless JSON check and the provider errors."""

from __future__ import annotations

import asyncio
import collections
import enum
import itertools
import json
import math
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from contextwise import (
    ChoiceAnswer,
    ChoiceQuestion,
    ContextwiseError,
    Decision,
    DecisionProvider,
    DecisionRequest,
    DecisionResponse,
    DecisionResponseError,
    DecisionTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
    TextAnswer,
    TextQuestion,
    Usage,
    adecide_choice,
    check_json_state,
    decide_choice,
    is_provider_unavailable,
)
from contextwise.decision import CAUSE_CHAIN_DEPTH, MAX_CHOICES, STATE_MAX_DEPTH
from support.errors import assert_translated
from support.routing import FakeProvider, HangingProvider, SyncProvider, answering, raising

QUESTION = ChoiceQuestion(
    instructions="Pick.", criteria={"fast": "Routine edits.", "deep": "Hard debugging."}
)


# --- the decision types ----------------------------------------------------------------------


def test_choice_question_keeps_labels_in_order() -> None:
    question = ChoiceQuestion(instructions="Pick.", criteria={"b": "B", "a": "A", "c": "C"})
    assert question.labels == ("b", "a", "c")
    assert question.kind == "choice"


@pytest.mark.parametrize(
    ("criteria", "code"),
    [
        ({}, "too_few_choices"),
        ({"only": "One option."}, "too_few_choices"),
        ({f"option-{index}": "x" for index in range(MAX_CHOICES + 1)}, "too_many_choices"),
        ({"a": "A", "  ": "Blank."}, "blank_choice_label"),
    ],
)
def test_choice_question_rejects_bad_option_counts(criteria: dict[str, str], code: str) -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        ChoiceQuestion(instructions="Pick.", criteria=criteria)
    assert excinfo.value.code == code


def test_choice_question_accepts_two_and_255_options() -> None:
    assert len(ChoiceQuestion(instructions="x", criteria={"a": "A", "b": "B"}).labels) == 2
    many = {f"option-{index}": "x" for index in range(MAX_CHOICES)}
    assert len(ChoiceQuestion(instructions="x", criteria=many).labels) == MAX_CHOICES


def test_decision_is_frozen_and_forbids_extra_keys() -> None:
    decision = Decision(questions={"model": QUESTION})
    with pytest.raises(ValidationError):
        decision.questions = {}  # type: ignore[misc]
    with pytest.raises(RoutingConfigurationError) as excinfo:
        Decision(questions={"model": QUESTION}, name="x")  # type: ignore[call-arg]
    assert (excinfo.value.code, excinfo.value.params["field"]) == ("unknown_key", "name")
    with pytest.raises(RoutingConfigurationError) as excinfo:
        ChoiceQuestion(instructions="x", criteria={"a": "A", "b": "B"}, extra=1)  # type: ignore[call-arg]
    assert excinfo.value.code == "unknown_key"


def test_decision_needs_a_question_and_non_blank_keys() -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        Decision(questions={})
    assert excinfo.value.code == "empty_decision"
    with pytest.raises(RoutingConfigurationError) as excinfo:
        Decision(questions={" ": QUESTION})
    assert excinfo.value.code == "blank_question_key"


def test_decision_loads_from_json_with_question_kinds() -> None:
    decision = Decision.model_validate_json(
        json.dumps(
            {
                "questions": {
                    "model": {"instructions": "Pick.", "criteria": {"a": "A", "b": "B"}},
                    "goal": {"kind": "text", "instructions": "Summarize."},
                }
            }
        )
    )
    assert isinstance(decision.questions["model"], ChoiceQuestion)
    assert isinstance(decision.questions["goal"], TextQuestion)
    assert Decision.model_validate_json(decision.model_dump_json()) == decision


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"confidence": 1.5}, "confidence_out_of_range"),
        ({"confidence": -0.01}, "confidence_out_of_range"),
        ({"confidence": math.nan}, "confidence_out_of_range"),
        ({"probabilities": {"deep": 0.5, "fast": 0.4}}, "probabilities_not_normalized"),
        ({"probabilities": {"deep": 0.3, "fast": 0.7}}, "probabilities_not_peaked"),
        ({"probabilities": {"deep": 1.2, "fast": -0.2}}, "probability_out_of_range"),
        ({"probabilities": {"deep": math.nan, "fast": 0.1}}, "probability_out_of_range"),
    ],
)
def test_choice_answer_value_rules(fields: dict[str, Any], code: str) -> None:
    values: dict[str, Any] = {"choice": "deep", "confidence": 0.9, **fields}
    with pytest.raises(DecisionResponseError) as excinfo:
        ChoiceAnswer(**values)
    assert excinfo.value.code == code


def test_choice_answer_accepts_ties_and_rounding() -> None:
    tied = ChoiceAnswer(choice="fast", confidence=0.5, probabilities={"deep": 0.5, "fast": 0.5})
    assert tied.choice == "fast"
    thirds = {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}
    assert ChoiceAnswer(choice="c", confidence=0.34, probabilities=thirds).probabilities == thirds
    assert ChoiceAnswer(choice="a", confidence=0.0).confidence == 0.0
    assert ChoiceAnswer(choice="a", confidence=1.0).confidence == 1.0


def test_decision_response_validates_from_a_dict_and_round_trips() -> None:
    response = DecisionResponse.model_validate(
        {
            "model": "router-mini",
            "answers": {
                "model": {"choice": "deep", "confidence": 0.9, "rationale": "Stack trace."},
                "goal": {"text": "Fix the test."},
            },
            "usage": {"input_tokens": 120, "output_tokens": 8},
        }
    )
    assert isinstance(response.answers["model"], ChoiceAnswer)
    assert isinstance(response.answers["goal"], TextAnswer)
    assert response.usage == Usage(input_tokens=120, output_tokens=8)
    assert response.usage.total_tokens == 128
    assert DecisionResponse.model_validate_json(response.model_dump_json()) == response


def test_a_class_with_name_and_request_is_a_decision_provider() -> None:
    assert isinstance(FakeProvider(answering()), DecisionProvider)
    assert isinstance(SyncProvider(answering()), DecisionProvider)
    assert not isinstance(object(), DecisionProvider)


# --- the shared core ---------------------------------------------------------------------------


async def _decide(provider: Any, **overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "model": "router-mini",
        "question": QUESTION,
        "state": {"step": 1},
        "min_confidence": 0.85,
        "key": "model",
    }
    arguments.update(overrides)
    return await adecide_choice(provider, **arguments)


async def test_decide_choice_sends_one_question_and_validates_the_answer() -> None:
    provider = FakeProvider(
        lambda request: {
            "model": "router-mini-2025",
            "answers": {"model": {"choice": "deep", "confidence": 0.9}},
            "usage": {"input_tokens": 10, "output_tokens": 2},
        }
    )
    outcome = await _decide(provider)
    assert (outcome.choice, outcome.confidence, outcome.reason) == ("deep", 0.9, "selected")
    assert outcome.accepted
    assert outcome.usage == Usage(input_tokens=10, output_tokens=2)
    assert outcome.response_model == "router-mini-2025"
    assert outcome.duration_ms >= 0.0
    [request] = provider.requests
    assert request == DecisionRequest(
        model="router-mini", questions={"model": QUESTION}, state={"step": 1}
    )


async def test_decide_choice_reports_a_low_confidence_without_choosing_a_fallback() -> None:
    outcome = await _decide(FakeProvider(answering("fast", 0.5)))
    assert (outcome.choice, outcome.reason, outcome.accepted) == ("fast", "confidence", False)


async def test_decide_choice_accepts_a_returned_model_and_a_sync_provider() -> None:
    returned = DecisionResponse(
        model="m", answers={"model": ChoiceAnswer(choice="fast", confidence=1.0)}
    )
    assert (await _decide(FakeProvider(lambda request: returned))).choice == "fast"
    sync = SyncProvider(lambda request: returned)
    assert (await _decide(sync)).choice == "fast"
    assert len(sync.requests) == 1


def test_sync_decide_choice_runs_the_same_core() -> None:
    provider = SyncProvider(answering("deep", 0.2))
    outcome = decide_choice(
        provider,
        model="router-mini",
        question=QUESTION,
        state={},
        min_confidence=0.85,
        key="model",
    )
    assert (outcome.choice, outcome.reason) == ("deep", "confidence")


@pytest.mark.parametrize(
    ("responder", "code"),
    [
        (answering("medium", 0.9), "unknown_choice"),
        (answering("deep", 1.5), "confidence_out_of_range"),
        (answering("deep", math.nan), "confidence_out_of_range"),
        (
            answering("deep", 0.9, probabilities={"deep": 0.6, "fast": 0.3}),
            "probabilities_not_normalized",
        ),
        (
            answering("deep", 0.9, probabilities={"deep": 0.4, "fast": 0.6}),
            "probabilities_not_peaked",
        ),
        (
            answering("deep", 0.9, probabilities={"deep": 0.9, "other": 0.1}),
            "unknown_probability_label",
        ),
        (lambda request: {"model": "m", "answers": {}}, "missing_answer"),
        (
            lambda request: {"model": "m", "answers": {"model": {"text": "deep"}}},
            "not_a_choice_answer",
        ),
        (
            lambda request: {"model": "m", "answers": {"model": {"choice": "deep"}}},
            "missing_key",
        ),
        (lambda request: {"answers": {}}, "missing_key"),
        (answering("deep", "0.9"), "wrong_type"),  # type: ignore[arg-type]
        (answering("deep", True), "wrong_type"),
        (lambda request: "deep", "invalid_response"),
        (lambda request: None, "invalid_response"),
    ],
)
async def test_decide_choice_rejects_malformed_answers(responder: Any, code: str) -> None:
    with pytest.raises(DecisionResponseError) as excinfo:
        await _decide(FakeProvider(responder))
    assert excinfo.value.code == code


async def test_an_answer_built_without_validation_is_still_checked() -> None:
    bad = ChoiceAnswer.model_construct(choice="deep", confidence=7.0)
    returned = DecisionResponse.model_construct(model="m", answers={"model": bad}, usage=None)
    with pytest.raises(DecisionResponseError) as excinfo:
        await _decide(FakeProvider(lambda request: returned))
    assert excinfo.value.code == "confidence_out_of_range"


async def test_a_malformed_response_names_the_field_and_the_value() -> None:
    provider = FakeProvider(lambda request: {"model": "m", "answers": {"model": {"choice": 3}}})
    with pytest.raises(DecisionResponseError) as excinfo:
        await _decide(provider)
    problems = [(p.code, p.params.get("field")) for p in excinfo.value.problems]
    assert problems == [
        ("wrong_type", "answers.model.choice"),
        ("missing_key", "answers.model.confidence"),
    ]
    assert excinfo.value.params["value"] == "3"
    assert excinfo.value.__cause__ is None


async def test_decide_choice_converts_its_own_timeout_and_cancels_the_request() -> None:
    provider = HangingProvider()
    with pytest.raises(DecisionTimeoutError) as excinfo:
        await _decide(provider, timeout=0.01)
    assert excinfo.value.code == "decision_timeout_after"
    assert excinfo.value.params == {"timeout": 0.01}
    assert provider.cancelled.is_set()


async def test_a_timeout_error_raised_by_the_provider_itself_is_left_alone() -> None:
    own = TimeoutError("socket")
    with pytest.raises(TimeoutError) as excinfo:
        await _decide(FakeProvider(raising(own)), timeout=5)
    assert excinfo.value is own


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"min_confidence": 1.5}, "invalid_min_confidence"),
        ({"timeout": 0}, "invalid_timeout"),
        ({"state": {"x": math.inf}}, "state_non_finite"),
    ],
)
async def test_decide_choice_checks_its_inputs_before_sending(
    overrides: dict[str, Any], code: str
) -> None:
    provider = FakeProvider(answering())
    with pytest.raises(RoutingConfigurationError) as excinfo:
        await _decide(provider, **overrides)
    assert excinfo.value.code == code
    assert provider.requests == []


# --- the cause chain ---------------------------------------------------------------------------


def _chain(*errors: BaseException) -> BaseException:
    """Link errors so that each is the ``__cause__`` of the one before it."""
    for upper, lower in itertools.pairwise(errors):
        upper.__cause__ = lower
    return errors[0]


@given(depth=st.integers(min_value=0, max_value=12), timeout=st.booleans())
def test_an_outage_counts_up_to_eight_levels_down(depth: int, timeout: bool) -> None:
    root: BaseException = DecisionTimeoutError() if timeout else ProviderUnavailableError()
    wrappers = [RuntimeError(str(level)) for level in range(depth)]
    error = _chain(*wrappers, root)
    assert is_provider_unavailable(error) is (depth <= CAUSE_CHAIN_DEPTH)


def test_a_quota_error_anywhere_in_the_chain_is_never_an_outage() -> None:
    assert not is_provider_unavailable(QuotaExceededError())
    assert not is_provider_unavailable(_chain(QuotaExceededError(), ProviderUnavailableError()))
    assert not is_provider_unavailable(_chain(ProviderUnavailableError(), QuotaExceededError()))
    assert not is_provider_unavailable(
        _chain(RuntimeError(), DecisionTimeoutError(), RuntimeError(), QuotaExceededError())
    )


def test_only_the_cause_chain_counts() -> None:
    error = RuntimeError("raised while handling")
    error.__context__ = ProviderUnavailableError()
    assert not is_provider_unavailable(error)
    assert not is_provider_unavailable(ValueError("foreign"))


def test_a_cyclic_cause_chain_terminates() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert not is_provider_unavailable(first)


# --- the lossless JSON state -------------------------------------------------------------------

_cycle_list: list[Any] = []
_cycle_list.append(_cycle_list)
_cycle_dict: dict[str, Any] = {}
_cycle_dict["self"] = {"again": _cycle_dict}


@pytest.mark.parametrize(
    ("state", "code", "path"),
    [
        ({"x": math.nan}, "state_non_finite", "$.x"),
        ({"x": [1.0, math.inf]}, "state_non_finite", "$.x[1]"),
        ({"x": -math.inf}, "state_non_finite", "$.x"),
        ({"x": -0.0}, "state_negative_zero", "$.x"),
        (_cycle_list, "state_cycle", "$[0]"),
        (_cycle_dict, "state_cycle", "$.self.again"),
        ({1: "one"}, "state_non_string_key", "$"),
        ({"a": {(1, 2): "tuple key"}}, "state_non_string_key", "$.a"),
        ({"when": object()}, "state_not_json", "$.when"),
        ({"pair": (1, 2)}, "state_not_json", "$.pair"),
        ({"tags": {"a", "b"}}, "state_not_json", "$.tags"),
        ({"raw": b"bytes"}, "state_not_json", "$.raw"),
        ({"odd key": [{"x y": math.nan}]}, "state_non_finite", '$["odd key"][0]["x y"]'),
    ],
)
def test_states_that_are_not_lossless_json_are_rejected(state: Any, code: str, path: str) -> None:
    with pytest.raises(RoutingConfigurationError) as excinfo:
        check_json_state(state)
    assert excinfo.value.code == code
    assert excinfo.value.params["path"] == path
    assert excinfo.value.params["field"] == "state"


def test_a_state_nested_too_deep_is_rejected() -> None:
    state: Any = []
    for _ in range(300):
        state = [state]
    with pytest.raises(RoutingConfigurationError) as excinfo:
        check_json_state(state)
    assert excinfo.value.code == "state_too_deep"


def test_the_depth_limit_counts_every_container() -> None:
    def nested(levels: int) -> Any:
        state: Any = "leaf"
        for level in range(levels):
            state = [state] if level % 2 else {"k": state}
        return state

    check_json_state(nested(STATE_MAX_DEPTH))
    with pytest.raises(RoutingConfigurationError) as excinfo:
        check_json_state(nested(STATE_MAX_DEPTH + 1))
    assert excinfo.value.code == "state_too_deep"


class _Label(str, enum.Enum):
    FAST = "fast"


class _Count(enum.IntEnum):
    ONE = 1


class _Tags(list[Any]):
    pass


def test_subclasses_of_json_types_are_accepted_anywhere() -> None:
    # The lean walk leaves these to the full check, which accepts them.
    check_json_state({"label": _Label.FAST, "n": [_Count.ONE, True], "tags": _Tags(["a", 1.5])})
    check_json_state(collections.OrderedDict(messages=[collections.OrderedDict(role="user")]))
    with pytest.raises(RoutingConfigurationError) as excinfo:
        check_json_state({"ok": [1, 2.5, None], "tags": _Tags([0.5, -0.0])})
    assert excinfo.value.code == "state_negative_zero"
    assert excinfo.value.params["path"] == "$.tags[1]"


def test_shared_subtrees_are_not_cycles() -> None:
    shared = {"role": "user", "content": "hi"}
    check_json_state({"a": shared, "b": [shared, shared]})


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda value: not (value == 0.0 and math.copysign(1.0, value) < 0)
    )
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_every_lossless_json_value_is_accepted_and_round_trips(value: Any) -> None:
    check_json_state(value)
    assert json.loads(json.dumps(value)) == value


# --- the provider errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code", "base"),
    [
        (DecisionTimeoutError("read timed out"), "decision_timeout", TimeoutError),
        (DecisionTimeoutError(timeout=2.5), "decision_timeout_after", TimeoutError),
        (ProviderUnavailableError("503 from upstream"), "provider_unavailable", ContextwiseError),
        (QuotaExceededError("429 Too Many Requests"), "quota_exceeded", ContextwiseError),
    ],
)
def test_provider_errors_take_a_free_text_detail(
    error: ContextwiseError, code: str, base: type[BaseException]
) -> None:
    assert isinstance(error, base)
    assert isinstance(error, ContextwiseError)
    assert error.code == code
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (copy.code, copy.params, copy.detail, str(copy)) == (
        error.code,
        error.params,
        error.detail,
        str(error),
    )
    assert_translated(error)
    if error.detail:
        assert error.render("zh").endswith(error.detail)


def test_provider_errors_are_not_value_errors_but_response_errors_are() -> None:
    assert not issubclass(ProviderUnavailableError, ValueError)
    assert not issubclass(QuotaExceededError, ValueError)
    assert issubclass(DecisionResponseError, ValueError)
    assert issubclass(RoutingConfigurationError, ValueError)
    error = DecisionResponseError("unknown_choice", question="model", choice="x", allowed=["a"])
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is DecisionResponseError
    assert (copy.code, copy.params) == ("unknown_choice", error.params)
    assert_translated(copy)


def test_provider_errors_render_in_the_locale_given() -> None:
    error = ProviderUnavailableError("503", locale="fr_FR")
    assert error.locale == "fr"
    assert str(error) == error.render("fr")


def test_the_core_is_cancelled_with_its_task() -> None:
    async def scenario() -> None:
        provider = HangingProvider()
        task = asyncio.create_task(_decide(provider))
        await provider.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert provider.cancelled.is_set()

    asyncio.run(scenario())


class CountingProvider:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def request(self, request: DecisionRequest) -> dict[str, object]:
        self.calls += 1
        return {"model": "m", "answers": {key: {"choice": "a", "confidence": 1.0}
                                          for key in request.questions}}


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"question": {"instructions": "Pick.", "criteria": {"a": "A", "b": "B"}}}, "wrong_type"),
        ({"provider": {"name": "p", "request": print}}, "invalid_provider"),
        ({"model": ""}, "blank_router_model"),
        ({"key": ["choice"]}, "blank_question_key"),
        ({"min_confidence": 10**400}, "invalid_min_confidence"),
        ({"timeout": 10**400}, "invalid_timeout"),
        ({"state": {"id": 10**5000}}, "state_huge_int"),
    ],
)
def test_every_argument_is_checked_before_the_provider_is_called(
    arguments: dict[str, Any], code: str
) -> None:
    provider = CountingProvider()
    call: dict[str, Any] = {
        "provider": provider, "model": "m", "state": {}, "min_confidence": 0.5,
        "question": ChoiceQuestion(instructions="Pick.", criteria={"a": "A", "b": "B"}),
    }
    with pytest.raises(RoutingConfigurationError) as caught:
        decide_choice(**{**call, **arguments})
    assert caught.value.code == code
    assert provider.calls == 0
    assert_translated(caught.value)


def test_a_fallback_predicate_that_raises_is_a_coded_error() -> None:
    def broken(error: BaseException) -> bool:
        raise KeyError("no such key")

    with pytest.raises(RoutingConfigurationError) as caught:
        is_provider_unavailable(KeyError("x"), fallback_on=broken)
    assert caught.value.code == "fallback_on_failed"
    assert isinstance(caught.value.__cause__, KeyError)
    with pytest.raises(ContextwiseError) as not_an_error:
        is_provider_unavailable("timeout")  # type: ignore[arg-type]
    assert not_an_error.value.code == "not_an_instance"
