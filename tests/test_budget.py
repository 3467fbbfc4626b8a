"""ContextBudget, BudgetSegment and BudgetPlan: sizes, checks, both planning strategies."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

import contextwise
from contextwise import (
    BudgetPlan,
    BudgetSegment,
    ContextBudget,
    ContextOverflowError,
    ContextwiseError,
    InvalidTypeError,
    InvalidValueError,
    UnsupportedLocaleError,
    use_locale,
)

# --- The budget ------------------------------------------------------------------------------


def test_context_budget_is_window_minus_the_reserves() -> None:
    budget = ContextBudget(window=200_000, output=8_000, reasoning=16_000, safety=1_000)
    assert budget.context_budget() == 200_000 - 8_000 - 16_000 - 1_000
    assert (budget.window, budget.output, budget.reasoning, budget.safety) == (
        200_000,
        8_000,
        16_000,
        1_000,
    )


def test_positional_arguments_follow_the_design_order() -> None:
    assert ContextBudget(1_000, 100, 50, 10).context_budget() == 840


@pytest.mark.parametrize(
    ("window", "expected_safety"),
    [
        (0, 0),
        (49, 0),
        (50, 1),
        (99, 1),
        (100, 2),
        (32_000, 640),
        (200_000, 4_000),
        (128_999, 2_579),
    ],
)
def test_safety_defaults_to_two_percent_in_integers(window: int, expected_safety: int) -> None:
    budget = ContextBudget(window=window, output=0)
    assert budget.safety == expected_safety == window * 2 // 100
    assert isinstance(budget.safety, int)


def test_safety_zero_means_no_margin() -> None:
    assert ContextBudget(window=1_000, output=100, safety=0).context_budget() == 900


def test_sizes_are_floored_to_integers() -> None:
    budget = ContextBudget(window=1_000.9, output=100.99, reasoning=Fraction(7, 2), safety=0.5)
    assert (budget.window, budget.output, budget.reasoning, budget.safety) == (1_000, 100, 3, 0)
    assert all(
        type(value) is int
        for value in (budget.window, budget.output, budget.reasoning, budget.safety)
    )
    # The default safety is computed from the floored window.
    assert ContextBudget(window=149.99, output=0).safety == 2


def test_reserves_equal_to_the_window_leave_zero() -> None:
    budget = ContextBudget(window=1_000, output=600, reasoning=380, safety=20)
    assert budget.context_budget() == 0
    assert budget.fits(0)
    assert not budget.fits(1)


def test_reserves_larger_than_the_window_overflow() -> None:
    with pytest.raises(ContextOverflowError) as caught:
        ContextBudget(window=1_000, output=600, reasoning=390, safety=20)
    err = caught.value
    assert not isinstance(err, ValueError)
    assert err.code == "reserves_exceed_window"
    assert err.params == {
        "reserved": 1_010,
        "output": 600,
        "reasoning": 390,
        "safety": 20,
        "window": 1_000,
    }
    assert "1,010" in str(err) and "1,000" in str(err)


@pytest.mark.parametrize("field", ["window", "output", "reasoning", "safety"])
@pytest.mark.parametrize(
    ("value", "error", "code"),
    [
        (-1, InvalidValueError, "negative_size"),
        (-0.5, InvalidValueError, "negative_size"),
        (math.nan, InvalidValueError, "non_finite_size"),
        (math.inf, InvalidValueError, "non_finite_size"),
        (-math.inf, InvalidValueError, "non_finite_size"),
        (True, InvalidTypeError, "bool_not_a_number"),
        (False, InvalidTypeError, "bool_not_a_number"),
        ("1000", InvalidTypeError, "not_a_number"),
        (object(), InvalidTypeError, "not_a_number"),
        ([1], InvalidTypeError, "not_a_number"),
        (1j, InvalidTypeError, "not_a_number"),
    ],
)
def test_bad_sizes_raise_with_the_name_of_the_size(
    field: str, value: object, error: type[ContextwiseError], code: str
) -> None:
    sizes: dict[str, object] = {"window": 10_000, "output": 100, "reasoning": 0, "safety": 0}
    sizes[field] = value
    with pytest.raises(error) as caught:
        ContextBudget(**sizes)  # type: ignore[arg-type]
    assert caught.value.code == code
    assert caught.value.params["name"] == field
    builtin = ValueError if error is InvalidValueError else TypeError
    assert isinstance(caught.value, builtin)


def test_safety_none_means_the_default_not_a_bad_value() -> None:
    assert ContextBudget(window=1_000, output=0, safety=None).safety == 20


def test_error_messages_state_the_values() -> None:
    with pytest.raises(InvalidValueError) as caught:
        ContextBudget(window=8_000, output=-12_345)
    assert str(caught.value) == "output must be zero or more, got -12,345."
    with pytest.raises(InvalidTypeError) as type_caught:
        ContextBudget(window="large", output=1_000)  # type: ignore[arg-type]
    assert str(type_caught.value) == "window must be a number, got a value of type str."


def test_attributes_are_read_only() -> None:
    budget = ContextBudget(window=1_000, output=100)
    for name in ("window", "output", "reasoning", "safety", "locale"):
        with pytest.raises(AttributeError):
            setattr(budget, name, 5)
    with pytest.raises(AttributeError):
        budget.extra = 1  # type: ignore[attr-defined]
    assert budget.window == 1_000


def test_repr_equality_and_hash() -> None:
    budget = ContextBudget(window=32_000, output=2_000, reasoning=4_000)
    assert repr(budget) == (
        "ContextBudget(window=32000, output=2000, reasoning=4000, safety=640, locale=None)"
    )
    same = ContextBudget(32_000.5, 2_000, 4_000, 640)
    assert budget == same and hash(budget) == hash(same)
    assert budget != ContextBudget(window=32_000, output=2_000, reasoning=4_000, safety=0)
    french = ContextBudget(window=32_000, output=2_000, reasoning=4_000, locale="fr_FR")
    assert budget != french
    assert repr(french).endswith("safety=640, locale='fr')")
    assert budget != (32_000, 2_000, 4_000, 640)
    assert eval(repr(budget), {"ContextBudget": ContextBudget}) == budget


# --- Locales -----------------------------------------------------------------------------------


def test_locale_sets_the_locale_of_every_error_the_budget_raises() -> None:
    budget = ContextBudget(window=8_000, output=1_000, locale="fr-CA")
    assert budget.locale == "fr"
    with pytest.raises(ContextOverflowError) as caught:
        budget.assert_fits(12_345)
    assert caught.value.locale == "fr"
    assert str(caught.value) == caught.value.render("fr")
    with pytest.raises(InvalidValueError) as bad:
        budget.plan([{"id": "a", "tokens": -1}])
    assert bad.value.locale == "fr"
    with pytest.raises(ContextOverflowError) as overflow:
        budget.plan([{"id": "a", "tokens": 7_000}])
    assert overflow.value.locale == "fr"


def test_locale_applies_to_errors_of_the_constructor_too() -> None:
    with pytest.raises(InvalidValueError) as caught:
        ContextBudget(window=-1, output=0, locale="zh_Hans_CN")
    assert caught.value.locale == "zh"
    with pytest.raises(ContextOverflowError) as overflow:
        ContextBudget(window=10, output=20, locale="zh")
    assert overflow.value.locale == "zh"


def test_without_locale_errors_follow_the_default_in_force_when_raised() -> None:
    budget = ContextBudget(window=8_000, output=1_000)
    assert budget.locale is None
    with use_locale("zh"), pytest.raises(ContextOverflowError) as caught:
        budget.assert_fits(9_000)
    assert caught.value.locale == "zh"


def test_an_unsupported_locale_is_refused() -> None:
    with pytest.raises(UnsupportedLocaleError) as caught:
        ContextBudget(window=1_000, output=0, locale="de_DE")
    assert caught.value.code == "unsupported_locale"


def test_errors_render_in_french_and_chinese() -> None:
    with pytest.raises(ContextOverflowError) as caught:
        ContextBudget(window=1_000, output=0, safety=0).plan(
            [{"id": "system", "tokens": 800}, {"id": "history", "tokens": 700}]
        )
    err = caught.value
    assert err.code == "required_segments_overflow"
    for locale in ("fr", "zh"):
        rendered = err.render(locale)
        assert "{" not in rendered and rendered
    assert "1 500" in err.render("fr").replace("\u202f", " ")
    assert "1,500" in err.render("zh")


# --- fits and assert_fits ------------------------------------------------------------------------


def test_fits_is_tokens_at_most_the_budget() -> None:
    budget = ContextBudget(window=10_000, output=1_000, safety=0)
    assert budget.fits(0)
    assert budget.fits(9_000)
    assert budget.fits(8_999.5)
    assert not budget.fits(9_000.5)
    assert not budget.fits(9_001)


def test_assert_fits_states_both_numbers() -> None:
    budget = ContextBudget(window=8_000, output=1_000)
    budget.assert_fits(6_840)
    with pytest.raises(ContextOverflowError) as caught:
        budget.assert_fits(9_500)
    err = caught.value
    assert err.code == "context_overflow"
    assert err.params == {"tokens": 9_500, "context_budget": 6_840}
    assert str(err) == (
        "The context does not fit: 9,500 tokens for a context budget of 6,840 tokens."
    )


@pytest.mark.parametrize(
    ("tokens", "error", "code"),
    [
        (-1, InvalidValueError, "negative_size"),
        (math.nan, InvalidValueError, "non_finite_size"),
        (math.inf, InvalidValueError, "non_finite_size"),
        (True, InvalidTypeError, "bool_not_a_number"),
        ("10", InvalidTypeError, "not_a_number"),
    ],
)
def test_fits_and_assert_fits_refuse_bad_tokens(
    tokens: object, error: type[ContextwiseError], code: str
) -> None:
    budget = ContextBudget(window=10_000, output=1_000)
    for method in (budget.fits, budget.assert_fits):
        with pytest.raises(error) as caught:
            method(tokens)  # type: ignore[arg-type]
        assert caught.value.code == code
        assert caught.value.params["name"] == "tokens"


# --- Segments ------------------------------------------------------------------------------------


def test_segment_defaults_and_positional_form() -> None:
    segment = BudgetSegment("instructions", 1_200)
    assert (segment.id, segment.tokens, segment.priority, segment.required) == (
        "instructions",
        1_200,
        0,
        True,
    )
    assert BudgetSegment("a", 1, 2, False) == BudgetSegment(
        id="a", tokens=1, priority=2, required=False
    )


def test_segment_tokens_are_rounded_up() -> None:
    assert BudgetSegment("a", 899.01).tokens == 900
    assert BudgetSegment("a", 900.0).tokens == 900
    plan = ContextBudget(1_000, 0, safety=0).plan([{"id": "a", "tokens": 999.5}])
    assert plan.used == 1_000


def test_segment_priority_keeps_ints_and_accepts_floats() -> None:
    assert BudgetSegment("a", 1, 3).priority == 3
    assert type(BudgetSegment("a", 1, 3).priority) is int
    assert BudgetSegment("a", 1, 2.5).priority == 2.5


def test_segment_is_frozen_and_forbids_extra_fields() -> None:
    segment = BudgetSegment("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        segment.tokens = 5  # type: ignore[misc]
    with pytest.raises(InvalidValueError) as caught:
        BudgetSegment.model_validate({"id": "a", "tokens": 1, "weight": 2})
    assert caught.value.code == "unknown_key"
    with pytest.raises(TypeError):
        BudgetSegment(id="a", tokens=1, weight=2)  # type: ignore[call-arg]
    assert hash(segment) == hash(BudgetSegment("a", 1))


BAD_SEGMENTS: list[tuple[dict[str, Any], type[ContextwiseError], str, str]] = [
    ({"id": 7, "tokens": 1}, InvalidTypeError, "not_a_string", "id"),
    ({"id": "a", "tokens": -1}, InvalidValueError, "negative_size", "tokens"),
    ({"id": "a", "tokens": math.nan}, InvalidValueError, "non_finite_size", "tokens"),
    ({"id": "a", "tokens": math.inf}, InvalidValueError, "non_finite_size", "tokens"),
    ({"id": "a", "tokens": True}, InvalidTypeError, "bool_not_a_number", "tokens"),
    ({"id": "a", "tokens": "1"}, InvalidTypeError, "not_a_number", "tokens"),
    (
        {"id": "a", "tokens": 1, "priority": -1},
        InvalidValueError,
        "invalid_priority",
        "priority",
    ),
    (
        {"id": "a", "tokens": 1, "priority": math.nan},
        InvalidValueError,
        "invalid_priority",
        "priority",
    ),
    (
        {"id": "a", "tokens": 1, "priority": math.inf},
        InvalidValueError,
        "invalid_priority",
        "priority",
    ),
    ({"id": "a", "tokens": 1, "priority": "2"}, InvalidTypeError, "not_a_number", "priority"),
    (
        {"id": "a", "tokens": 1, "priority": True},
        InvalidTypeError,
        "bool_not_a_number",
        "priority",
    ),
    ({"id": "a", "tokens": 1, "required": 1}, InvalidTypeError, "not_a_bool", "required"),
    ({"id": "a", "tokens": 1, "required": "no"}, InvalidTypeError, "not_a_bool", "required"),
]


@pytest.mark.parametrize(("kwargs", "error", "code", "name"), BAD_SEGMENTS)
def test_bad_segments_raise_the_same_codes_built_or_planned(
    kwargs: dict[str, Any], error: type[ContextwiseError], code: str, name: str
) -> None:
    with pytest.raises(error) as built:
        BudgetSegment(**kwargs)
    assert (built.value.code, built.value.params["name"]) == (code, name)

    budget = ContextBudget(window=10_000, output=0)
    with pytest.raises(error) as planned:
        budget.plan([{"id": "ok", "tokens": 1}, kwargs])
    assert planned.value.code == code
    assert planned.value.params["name"] == f"segments[1].{name}"


@pytest.mark.parametrize(("kwargs", "error", "code", "name"), BAD_SEGMENTS)
def test_validating_a_segment_raises_the_codes_of_the_plan(
    kwargs: dict[str, Any], error: type[ContextwiseError], code: str, name: str
) -> None:
    with pytest.raises(error) as validated:
        BudgetSegment.model_validate(kwargs)
    assert (validated.value.code, validated.value.params["name"]) == (code, name)

    budget = ContextBudget(window=10_000, output=0)
    with pytest.raises(error) as planned:
        budget.plan([kwargs])
    assert planned.value.code == code


@pytest.mark.parametrize(
    ("text", "code", "name"),
    [
        ('{"id": "a", "tokens": -1}', "negative_size", "tokens"),
        ('{"id": "a", "tokens": 1e999}', "non_finite_size", "tokens"),
        ('{"id": "a", "tokens": 1, "priority": -0.5}', "invalid_priority", "priority"),
        ('{"id": "a", "tokens": 1, "priority": 1e999}', "invalid_priority", "priority"),
    ],
)
def test_validating_json_raises_the_codes_of_the_plan(text: str, code: str, name: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        BudgetSegment.model_validate_json(text)
    assert (caught.value.code, caught.value.params["name"]) == (code, name)
    with pytest.raises(InvalidValueError) as planned:
        ContextBudget(window=10_000, output=0).plan([json.loads(text)])
    assert planned.value.code == code


@pytest.mark.parametrize(
    ("data", "code", "params"),
    [
        ({"tokens": 1}, "missing_key", {"field": "id"}),
        ({"id": "a"}, "missing_key", {"field": "tokens"}),
        (
            {"id": "a", "tokens": 1, "priorty": 2},
            "unknown_key",
            {"field": "priorty", "known": ["id", "tokens", "priority", "required"]},
        ),
        ("history", "wrong_type", {"field": "BudgetSegment", "value": "'history'"}),
        (None, "wrong_type", {"field": "BudgetSegment", "value": "None"}),
        (["a", 1], "wrong_type", {"field": "BudgetSegment", "value": "['a', 1]"}),
    ],
)
def test_a_malformed_segment_mapping_is_a_coded_error(
    data: object, code: str, params: dict[str, object]
) -> None:
    for validate in (BudgetSegment.model_validate, BudgetSegment.model_validate_strings):
        with pytest.raises(InvalidValueError) as caught:
            validate(data)
        assert caught.value.code == code
        assert {key: caught.value.params[key] for key in params} == params
    if isinstance(data, dict):
        with pytest.raises(InvalidValueError) as from_json:
            BudgetSegment.model_validate_json(json.dumps(data))
        assert (from_json.value.code, from_json.value.params) == (code, caught.value.params)


@pytest.mark.parametrize(
    "text", ['{"id": "a", "tokens": ', "", "not json", b"\xff", '{"id": "a\ud800", "tokens": 1}']
)
def test_text_that_is_not_json_is_invalid_json(text: str | bytes) -> None:
    with pytest.raises(InvalidValueError) as caught:
        BudgetSegment.model_validate_json(text)
    assert caught.value.code == "invalid_json"
    assert {"line", "column"} <= set(caught.value.params)


def test_validation_errors_speak_the_callers_language() -> None:
    with use_locale("fr"), pytest.raises(InvalidValueError) as caught:
        BudgetSegment.model_validate({"id": "a", "tokens": -1})
    assert str(caught.value) == "tokens doit être positif ou nul (valeur reçue\u00a0: -1)."
    with use_locale("zh"), pytest.raises(InvalidValueError) as missing:
        BudgetSegment.model_validate_json('{"id": "a"}')
    assert missing.value.locale == "zh"
    assert str(missing.value) == missing.value.render("zh") != missing.value.render("en")


def test_validating_a_segment_accepts_what_the_constructor_accepts() -> None:
    assert BudgetSegment.model_validate({"id": "a", "tokens": 2.5}) == BudgetSegment("a", 3)
    segment = BudgetSegment("a", 3, 1.5, False)
    assert BudgetSegment.model_validate(segment) is segment
    assert BudgetSegment.model_validate_json(json.dumps(dataclasses.asdict(segment))) == segment
    assert BudgetSegment.model_validate_json(b'{"id": "a", "tokens": 3}') == BudgetSegment("a", 3)


def test_validating_strings_reads_the_numbers_and_the_flag() -> None:
    text = {"id": "a", "tokens": "899.5", "priority": "2", "required": "false"}
    assert BudgetSegment.model_validate_strings(text) == BudgetSegment("a", 900, 2, False)
    with pytest.raises(InvalidValueError) as negative:
        BudgetSegment.model_validate_strings({"id": "a", "tokens": "-1"})
    assert (negative.value.code, negative.value.params["name"]) == ("negative_size", "tokens")
    with pytest.raises(InvalidValueError) as infinite:
        BudgetSegment.model_validate_strings({"id": "a", "tokens": "1", "priority": "inf"})
    assert infinite.value.code == "invalid_priority"
    with pytest.raises(InvalidValueError) as word:
        BudgetSegment.model_validate_strings({"id": "a", "tokens": "many"})
    assert word.value.code == "wrong_type"
    assert (word.value.params["field"], word.value.params["value"]) == ("tokens", "'many'")


def test_a_malformed_plan_is_a_coded_error() -> None:
    plan = ContextBudget(window=10_000, output=1_000, safety=0).plan(_guide_segments())
    data = plan.model_dump()
    del data["used"]
    with pytest.raises(InvalidValueError) as missing:
        BudgetPlan.model_validate(data)
    assert (missing.value.code, missing.value.params["field"]) == ("missing_key", "used")
    with pytest.raises(InvalidValueError) as wrong:
        BudgetPlan.model_validate_json(plan.model_dump_json().replace('"used":7500', '"used":"x"'))
    assert (wrong.value.code, wrong.value.params["field"]) == ("wrong_type", "used")
    with pytest.raises(InvalidValueError) as broken:
        BudgetPlan.model_validate_json(plan.model_dump_json()[:-1])
    assert broken.value.code == "invalid_json"


def test_required_is_documented_by_what_it_means() -> None:
    page = (Path(__file__).parents[1] / "docs/en/reference/budget.md").read_text("utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| `required` | <code>bool"))
    assert "must fit or the plan fails" in row
    assert "nothing is dropped silently" in row
    assert "render" not in row


def test_a_segment_is_a_dataclass_whose_fields_give_required_and_defaults() -> None:
    fields = {field.name: field for field in dataclasses.fields(BudgetSegment)}
    required = [name for name, field in fields.items() if field.default is dataclasses.MISSING]
    assert required == ["id", "tokens"]
    assert fields["priority"].default == 0
    assert fields["required"].default is True
    assert not isinstance(BudgetSegment("a", 1), pydantic.BaseModel)


# --- The plan ------------------------------------------------------------------------------------


def _guide_segments() -> list[BudgetSegment]:
    return [
        BudgetSegment(id="instructions", tokens=2_000),
        BudgetSegment(id="old-history", tokens=5_000, priority=1, required=False),
        BudgetSegment(id="recent-history", tokens=3_000, priority=3, required=False),
        BudgetSegment(id="examples", tokens=2_500, priority=2, required=False),
    ]


def test_plan_fields_in_order() -> None:
    assert list(BudgetPlan.model_fields) == [
        "window",
        "output_reserved",
        "reasoning_reserved",
        "safety_margin",
        "context_budget",
        "used",
        "remaining",
        "included",
        "dropped",
    ]
    assert all(field.description for field in BudgetPlan.model_fields.values())


def test_greedy_plan_of_the_guide() -> None:
    budget = ContextBudget(window=10_000, output=1_000, reasoning=0, safety=0)
    plan = budget.plan(_guide_segments())
    assert plan == BudgetPlan(
        window=10_000,
        output_reserved=1_000,
        reasoning_reserved=0,
        safety_margin=0,
        context_budget=9_000,
        used=7_500,
        remaining=1_500,
        included=["instructions", "recent-history", "examples"],
        dropped=["old-history"],
    )


def test_plan_reports_the_reserves() -> None:
    plan = ContextBudget(window=100_000, output=4_000, reasoning=8_000).plan([])
    assert (plan.window, plan.output_reserved, plan.reasoning_reserved, plan.safety_margin) == (
        100_000,
        4_000,
        8_000,
        2_000,
    )
    assert plan.context_budget == plan.remaining == 86_000
    assert (plan.used, plan.included, plan.dropped) == (0, [], [])


def test_mappings_and_segments_plan_the_same() -> None:
    budget = ContextBudget(window=10_000, output=1_000, safety=0)
    segments = _guide_segments()
    mappings = [dataclasses.asdict(segment) for segment in segments]
    minimal = [
        {key: value for key, value in mapping.items() if key in ("id", "tokens")}
        if mapping["required"]
        else mapping
        for mapping in mappings
    ]
    ordered = [OrderedDict(mapping) for mapping in mappings]
    expected = budget.plan(segments)
    assert budget.plan(mappings) == budget.plan(minimal) == budget.plan(ordered) == expected


def test_plan_accepts_any_iterable_and_mixed_inputs() -> None:
    budget = ContextBudget(window=10_000, output=1_000, safety=0)
    segments = _guide_segments()
    mixed: list[BudgetSegment | Mapping[str, Any]] = [segments[0], dataclasses.asdict(segments[1])]
    mixed += segments[2:]

    def generate() -> Iterator[BudgetSegment]:
        yield from segments

    assert budget.plan(generate()) == budget.plan(tuple(segments)) == budget.plan(mixed)


def test_greedy_skips_a_segment_that_does_not_fit_and_goes_on() -> None:
    budget = ContextBudget(window=9_000, output=1_000, safety=0)
    segments = [*_guide_segments(), BudgetSegment("manual", 4_000, 2.5, False)]
    greedy = budget.plan(segments)
    assert greedy.included == ["instructions", "recent-history", "examples"]
    assert greedy.dropped == ["old-history", "manual"]
    cutoff = budget.plan(segments, strategy="cutoff")
    assert cutoff.included == ["instructions", "recent-history"]
    assert cutoff.dropped == ["old-history", "examples", "manual"]
    assert (cutoff.used, cutoff.remaining) == (5_000, 3_000)


def test_ties_are_taken_in_input_order_by_greedy() -> None:
    budget = ContextBudget(window=10, output=0, safety=0)
    segments = [{"id": name, "tokens": 4, "required": False} for name in "abc"]
    assert budget.plan(segments).included == ["a", "b"]
    assert budget.plan(segments).dropped == ["c"]


def test_cutoff_keeps_or_drops_a_priority_level_as_a_whole() -> None:
    budget = ContextBudget(window=10, output=0, safety=0)
    segments = [
        {"id": "top", "tokens": 2, "priority": 5, "required": False},
        {"id": "a", "tokens": 4, "priority": 1, "required": False},
        {"id": "b", "tokens": 4, "priority": 1, "required": False},
        {"id": "c", "tokens": 4, "priority": 1.0, "required": False},
        {"id": "low", "tokens": 1, "priority": 0, "required": False},
    ]
    cutoff = budget.plan(segments, strategy="cutoff")
    assert cutoff.included == ["top"]
    assert cutoff.dropped == ["a", "b", "c", "low"]
    greedy = budget.plan(segments)
    assert greedy.included == ["top", "a", "b"]


def test_required_segments_are_kept_whatever_their_priority() -> None:
    budget = ContextBudget(window=10, output=0, safety=0)
    segments = [
        {"id": "optional", "tokens": 6, "priority": 9, "required": False},
        {"id": "required", "tokens": 5, "priority": 0},
    ]
    for strategy in ("greedy", "cutoff"):
        plan = budget.plan(segments, strategy=strategy)  # type: ignore[arg-type]
        assert plan.included == ["required"]
        assert plan.dropped == ["optional"]


def test_zero_token_segments_always_fit() -> None:
    budget = ContextBudget(window=5, output=5, safety=0)
    plan = budget.plan([{"id": "a", "tokens": 0}, {"id": "b", "tokens": 0, "required": False}])
    assert plan.included == ["a", "b"]


def test_required_overflow_names_the_segments_and_the_shortfall() -> None:
    budget = ContextBudget(window=10_000, output=1_000, safety=0)
    segments = [
        {"id": "system", "tokens": 4_000},
        {"id": "optional", "tokens": 1, "required": False},
        {"id": "tools", "tokens": 6_000},
    ]
    with pytest.raises(ContextOverflowError) as caught:
        budget.plan(segments)
    err = caught.value
    assert err.code == "required_segments_overflow"
    assert err.params["segment_ids"] == ["system", "tools"]
    assert err.params["count"] == 2
    assert err.params["required"] == 10_000
    assert err.params["shortfall"] == 1_000
    assert err.params["context_budget"] == 9_000
    assert str(err) == (
        "The 2 required segments 'system' and 'tools' need 10,000 tokens, 1,000 more than the "
        "context budget of 9,000 tokens."
    )


def test_one_required_segment_overflowing_reads_in_the_singular() -> None:
    with pytest.raises(ContextOverflowError) as caught:
        ContextBudget(window=100, output=0, safety=0).plan([{"id": "system", "tokens": 150}])
    assert str(caught.value) == (
        "The required segment 'system' needs 150 tokens, 50 more than the context budget of "
        "100 tokens."
    )


def test_duplicate_ids_are_refused_with_both_positions() -> None:
    budget = ContextBudget(window=100, output=0)
    with pytest.raises(InvalidValueError) as caught:
        budget.plan([{"id": "a", "tokens": 1}, {"id": "b", "tokens": 1}, BudgetSegment("a", 1)])
    assert caught.value.code == "duplicate_segment_id"
    assert caught.value.params == {"segment_id": "a", "first_index": 0, "index": 2}


@pytest.mark.parametrize(
    ("segments", "error", "code", "params"),
    [
        ([{"tokens": 1}], InvalidValueError, "missing_segment_field", {"index": 0, "field": "id"}),
        (
            [{"id": "a", "tokens": 1}, {"id": "b"}],
            InvalidValueError,
            "missing_segment_field",
            {"index": 1, "field": "tokens"},
        ),
        (
            [{"id": "a", "tokens": 1, "priorty": 2}],
            InvalidValueError,
            "unknown_segment_field",
            {"index": 0, "field": "priorty"},
        ),
        (
            [{"id": "a", "tokens": 1}, ("b", 2)],
            InvalidTypeError,
            "invalid_segment",
            {"index": 1, "type_name": "tuple"},
        ),
        ("abc", InvalidTypeError, "not_a_collection", {"name": "segments", "type_name": "str"}),
        (
            {"id": "a", "tokens": 1},
            InvalidTypeError,
            "not_a_collection",
            {"name": "segments", "type_name": "dict"},
        ),
        (42, InvalidTypeError, "not_a_collection", {"name": "segments", "type_name": "int"}),
    ],
)
def test_malformed_segments_are_refused(
    segments: object, error: type[ContextwiseError], code: str, params: dict[str, object]
) -> None:
    with pytest.raises(error) as caught:
        ContextBudget(window=100, output=0).plan(segments)  # type: ignore[arg-type]
    assert caught.value.code == code
    assert {key: caught.value.params[key] for key in params} == params


@pytest.mark.parametrize("strategy", ["best", "GREEDY", "", None, 1])
def test_an_unknown_strategy_is_refused(strategy: object) -> None:
    with pytest.raises(InvalidValueError) as caught:
        ContextBudget(window=100, output=0).plan([], strategy=strategy)  # type: ignore[arg-type]
    assert caught.value.code == "unknown_strategy"
    assert caught.value.params["supported"] == ["greedy", "cutoff"]


def test_plan_is_frozen_and_round_trips_through_json() -> None:
    plan = ContextBudget(window=10_000, output=1_000, safety=0).plan(_guide_segments())
    with pytest.raises(pydantic.ValidationError):
        plan.used = 0  # type: ignore[misc]
    assert BudgetPlan.model_validate_json(plan.model_dump_json()) == plan
    assert list(plan.model_dump()) == list(BudgetPlan.model_fields)


def test_public_names_are_exported() -> None:
    for name in ("BudgetPlan", "BudgetSegment", "ContextBudget", "PlanStrategy"):
        assert name in contextwise.__all__
        assert getattr(contextwise, name) is getattr(contextwise.budget, name)


# --- Properties ----------------------------------------------------------------------------------

_priorities = st.one_of(
    st.integers(min_value=0, max_value=4),
    st.sampled_from([0.5, 1.0, 2.5]),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
)


@st.composite
def _segments(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(st.text(max_size=4), unique=True, max_size=25))
    return [
        {
            "id": segment_id,
            "tokens": draw(st.integers(min_value=0, max_value=60)),
            "priority": draw(_priorities),
            "required": draw(st.sampled_from([True, False, False])),
        }
        for segment_id in ids
    ]


_budgets = st.builds(
    lambda window, output, safety: ContextBudget(window, min(output, window // 2), 0, safety),
    st.integers(min_value=0, max_value=600),
    st.integers(min_value=0, max_value=100),
    st.sampled_from([None, 0]),
)
_strategies = st.sampled_from(["greedy", "cutoff"])


def _plan_or_overflow(
    budget: ContextBudget, segments: list[dict[str, Any]], strategy: str
) -> BudgetPlan | None:
    required = sum(segment["tokens"] for segment in segments if segment["required"])
    if required > budget.context_budget():
        with pytest.raises(ContextOverflowError) as caught:
            budget.plan(segments, strategy=strategy)  # type: ignore[arg-type]
        assert caught.value.params["shortfall"] == required - budget.context_budget()
        assert caught.value.params["segment_ids"] == [
            segment["id"] for segment in segments if segment["required"]
        ]
        return None
    return budget.plan(segments, strategy=strategy)  # type: ignore[arg-type]


@given(_budgets, _segments(), _strategies)
def test_property_required_segments_are_included_or_the_plan_overflows(
    budget: ContextBudget, segments: list[dict[str, Any]], strategy: str
) -> None:
    plan = _plan_or_overflow(budget, segments, strategy)
    if plan is not None:
        required = {segment["id"] for segment in segments if segment["required"]}
        assert required <= set(plan.included)


@given(_budgets, _segments(), _strategies)
def test_property_used_never_exceeds_the_budget(
    budget: ContextBudget, segments: list[dict[str, Any]], strategy: str
) -> None:
    plan = _plan_or_overflow(budget, segments, strategy)
    if plan is not None:
        sizes = {segment["id"]: segment["tokens"] for segment in segments}
        assert plan.used == sum(sizes[segment_id] for segment_id in plan.included)
        assert plan.used <= plan.context_budget == budget.context_budget()
        assert plan.remaining == plan.context_budget - plan.used >= 0


@given(_budgets, _segments(), _strategies)
def test_property_included_and_dropped_partition_the_ids_in_input_order(
    budget: ContextBudget, segments: list[dict[str, Any]], strategy: str
) -> None:
    plan = _plan_or_overflow(budget, segments, strategy)
    if plan is not None:
        ids = [segment["id"] for segment in segments]
        included = set(plan.included)
        assert not included & set(plan.dropped)
        assert plan.included == [segment_id for segment_id in ids if segment_id in included]
        assert plan.dropped == [segment_id for segment_id in ids if segment_id not in included]


def _turn_order(segments: list[dict[str, Any]]) -> list[int]:
    """The order of the optional segments' turns: priority descending, then input order."""
    optional = [index for index, segment in enumerate(segments) if not segment["required"]]
    return sorted(optional, key=lambda index: (-segments[index]["priority"], index))


@given(_budgets, _segments())
def test_property_greedy_never_drops_a_segment_that_still_fitted_at_its_turn(
    budget: ContextBudget, segments: list[dict[str, Any]]
) -> None:
    plan = _plan_or_overflow(budget, segments, "greedy")
    if plan is None:
        return
    included = set(plan.included)
    remaining = budget.context_budget() - sum(s["tokens"] for s in segments if s["required"])
    for index in _turn_order(segments):
        segment = segments[index]
        if segment["id"] in included:
            assert segment["tokens"] <= remaining
            remaining -= segment["tokens"]
        else:
            assert segment["tokens"] > remaining, f"{segment['id']!r} fitted but was dropped"


@given(_budgets, _segments())
def test_property_cutoff_never_keeps_a_lower_priority_while_dropping_a_higher_one(
    budget: ContextBudget, segments: list[dict[str, Any]]
) -> None:
    plan = _plan_or_overflow(budget, segments, "cutoff")
    if plan is None:
        return
    included = set(plan.included)
    optional = [segment for segment in segments if not segment["required"]]
    kept = [segment["priority"] for segment in optional if segment["id"] in included]
    dropped = [segment["priority"] for segment in optional if segment["id"] not in included]
    if kept and dropped:
        # Strictly: equal priorities are kept or dropped together.
        assert min(kept) > max(dropped)
    if dropped:
        # The first level dropped really did not fit in what the kept levels left.
        top = max(dropped)
        level = sum(segment["tokens"] for segment in optional if segment["priority"] == top)
        assert level > plan.remaining


@given(_budgets, _segments(), _strategies)
def test_property_mappings_and_budget_segments_give_the_same_plan(
    budget: ContextBudget, segments: list[dict[str, Any]], strategy: str
) -> None:
    plan = _plan_or_overflow(budget, segments, strategy)
    if plan is not None:
        objects = [BudgetSegment(**segment) for segment in segments]
        assert budget.plan(objects, strategy=strategy) == plan  # type: ignore[arg-type]


@given(
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=0, max_value=10**9),
    st.one_of(st.none(), st.integers(min_value=0, max_value=10**9)),
)
def test_property_budget_formula_or_overflow(
    window: int, output: int, reasoning: int, safety: int | None
) -> None:
    margin = window * 2 // 100 if safety is None else safety
    if output + reasoning + margin > window:
        with pytest.raises(ContextOverflowError):
            ContextBudget(window, output, reasoning, safety)
        return
    budget = ContextBudget(window, output, reasoning, safety)
    assert budget.context_budget() == window - output - reasoning - margin >= 0
    assert budget.fits(budget.context_budget())
    assert not budget.fits(budget.context_budget() + 1)


def test_integers_of_any_size_are_exact() -> None:
    huge = 10**400
    budget = ContextBudget(huge, 10, safety=0)
    assert budget.context_budget() == huge - 10
    segment = BudgetSegment("a", 1, huge)
    assert segment.priority == huge
    plan = budget.plan([segment, {"id": "b", "tokens": 5, "priority": huge - 1, "required": False}])
    assert plan.included == ["a", "b"]


def test_a_budget_is_a_frozen_dataclass_whose_constructor_checks() -> None:
    # A plain value (DESIGN §12.7): the dataclass makes equality, hash and repr; the constructor
    # is the budget's own, which floors, fills the safety margin and checks.
    import dataclasses

    budget = ContextBudget(window=1_000.9, output=100)
    assert dataclasses.is_dataclass(budget)
    assert dataclasses.astuple(budget) == (1_000, 100, 0, 20, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        budget.window = 5  # type: ignore[misc]


def test_a_segment_from_json_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from contextwise import _validation

    parsed: list[object] = []
    original = _validation.from_json

    def counting(text: Any) -> Any:
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(_validation, "from_json", counting)
    assert BudgetSegment.model_validate_json('{"id": "a", "tokens": 3}') == BudgetSegment("a", 3)
    assert len(parsed) == 1
