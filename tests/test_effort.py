"""Effort levels: the ordered scale, checks, comparisons and clamping."""

from __future__ import annotations

import itertools
import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import contextwise
from contextwise import (
    ContextwiseError,
    Effort,
    InvalidTypeError,
    InvalidValueError,
    clamp_effort,
    compare_effort,
    is_effort,
)

SCALE = ["none", "low", "medium", "high", "max"]
_levels = st.sampled_from(SCALE)
_members_or_strings = st.one_of(_levels, st.sampled_from(list(Effort)))


def test_members_are_their_strings_in_scale_order() -> None:
    assert [level.value for level in Effort] == SCALE
    assert all(Effort(value) == value for value in SCALE)
    assert str(Effort.HIGH) == "high"
    assert f"{Effort.LOW}" == "low"


def test_ordering_follows_the_scale_not_the_alphabet() -> None:
    # Alphabetically "high" < "low" < "max" < "medium" < "none".
    assert sorted([Effort.NONE, Effort.MAX, Effort.LOW, Effort.MEDIUM, Effort.HIGH]) == list(Effort)
    assert Effort.LOW < Effort.HIGH
    assert Effort.MEDIUM < Effort.MAX
    assert Effort.NONE < Effort.LOW
    assert max(Effort) is Effort.MAX
    assert min(Effort) is Effort.NONE


@pytest.mark.parametrize(("a", "b"), list(itertools.product(SCALE, SCALE)))
def test_every_operator_on_every_pair(a: str, b: str) -> None:
    ra, rb = SCALE.index(a), SCALE.index(b)
    ea, eb = Effort(a), Effort(b)
    assert (ea < eb, ea <= eb, ea > eb, ea >= eb) == (ra < rb, ra <= rb, ra > rb, ra >= rb)
    # Against plain strings that are levels, on either side.
    assert (ea < b, ea <= b, ea > b, ea >= b) == (ra < rb, ra <= rb, ra > rb, ra >= rb)
    assert (a < eb, a <= eb, a > eb, a >= eb) == (ra < rb, ra <= rb, ra > rb, ra >= rb)
    assert (ea == eb) == (ea == b) == (a == b)


def test_members_hash_and_compare_equal_to_their_strings() -> None:
    assert {"high": 1}[Effort.HIGH] == 1
    assert {Effort.LOW: 1}["low"] == 1
    assert Effort.HIGH != "High"


@pytest.mark.parametrize("other", ["extreme", "", "HIGH"])
def test_comparing_with_a_string_that_is_no_level_raises(other: str) -> None:
    for compare, left, right in (
        *((op, Effort.LOW, other) for op in (operator.lt, operator.le, operator.gt, operator.ge)),
        (operator.lt, other, Effort.LOW),
    ):
        with pytest.raises(InvalidValueError) as caught:
            compare(left, right)
        assert caught.value.code == "invalid_effort"
        assert caught.value.params["value"] == other
        assert caught.value.params["supported"] == SCALE


@pytest.mark.parametrize("other", [1, None, 2.5, ["low"]])
def test_comparing_with_a_non_string_raises_a_type_error(other: object) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        operator.lt(Effort.LOW, other)
    assert isinstance(caught.value, TypeError)
    assert caught.value.code == "invalid_effort_type"
    assert caught.value.params["type_name"] == type(other).__name__


def test_building_a_member_from_an_unknown_string_raises() -> None:
    with pytest.raises(InvalidValueError) as caught:
        Effort("turbo")
    assert caught.value.code == "invalid_effort"
    with pytest.raises(InvalidTypeError) as type_caught:
        Effort(3)  # type: ignore[arg-type]
    assert type_caught.value.code == "invalid_effort_type"


# --- is_effort -----------------------------------------------------------------------------------


def test_is_effort() -> None:
    for value in [*SCALE, *Effort]:
        assert is_effort(value)
    for bad in ["High", " low", "extreme", "", 0, None, ["low"], {"low": 1}, b"low"]:
        assert not is_effort(bad)


@given(st.text())
def test_property_is_effort_is_membership_of_the_scale(value: str) -> None:
    assert is_effort(value) == (value in SCALE)


# --- compare_effort ------------------------------------------------------------------------------


@given(_members_or_strings, _members_or_strings)
def test_property_compare_effort_follows_the_scale(a: str, b: str) -> None:
    expected = SCALE.index(a) - SCALE.index(b)
    result = compare_effort(a, b)  # type: ignore[arg-type]
    assert result in (-1, 0, 1)
    assert result == (expected > 0) - (expected < 0)
    assert compare_effort(b, a) == -result  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b", "error", "code", "name"),
    [
        ("huge", "low", InvalidValueError, "invalid_effort", "a"),
        ("low", "Low", InvalidValueError, "invalid_effort", "b"),
        (None, "low", InvalidTypeError, "invalid_effort_type", "a"),
        ("low", 3, InvalidTypeError, "invalid_effort_type", "b"),
    ],
)
def test_compare_effort_refuses_invalid_levels(
    a: object, b: object, error: type[ContextwiseError], code: str, name: str
) -> None:
    with pytest.raises(error) as caught:
        compare_effort(a, b)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.params["name"]) == (code, name)


# --- clamp_effort --------------------------------------------------------------------------------


def test_clamp_effort_examples() -> None:
    assert clamp_effort("medium", ["low", "medium", "high"]) is Effort.MEDIUM
    assert clamp_effort("medium", ["low", "high"]) is Effort.HIGH
    assert clamp_effort("max", ["low", "high"]) is Effort.HIGH
    assert clamp_effort("none", ["high", "low"]) is Effort.LOW
    assert clamp_effort(Effort.LOW, (Effort.MAX,)) is Effort.MAX
    assert clamp_effort("high", {"none"}) is Effort.NONE
    assert clamp_effort("low", None) is Effort.LOW


@given(_members_or_strings, st.sets(_levels, min_size=1))
def test_property_clamp_effort(requested: str, supported: set[str]) -> None:
    result = clamp_effort(requested, sorted(supported))  # type: ignore[arg-type]
    assert isinstance(result, Effort)
    assert result in supported
    rank = SCALE.index(requested)
    higher = [level for level in supported if SCALE.index(level) >= rank]
    if requested in supported:
        assert result == requested
    elif higher:
        assert result == min(higher, key=SCALE.index)
    else:
        assert result == max(supported, key=SCALE.index)


def test_clamp_effort_refuses_an_empty_list() -> None:
    with pytest.raises(InvalidValueError) as caught:
        clamp_effort("low", [])
    assert caught.value.code == "empty_supported_efforts"


@pytest.mark.parametrize(
    ("requested", "supported", "error", "code", "name"),
    [
        ("turbo", ["low"], InvalidValueError, "invalid_effort", "requested"),
        (None, ["low"], InvalidTypeError, "invalid_effort_type", "requested"),
        ("low", ["low", "ultra"], InvalidValueError, "invalid_effort", "supported[1]"),
        ("low", ["high", 2], InvalidTypeError, "invalid_effort_type", "supported[1]"),
        ("low", "high", InvalidTypeError, "not_a_collection", "supported"),
        ("low", 5, InvalidTypeError, "not_a_collection", "supported"),
    ],
)
def test_clamp_effort_refuses_invalid_input(
    requested: object, supported: object, error: type[ContextwiseError], code: str, name: str
) -> None:
    with pytest.raises(error) as caught:
        clamp_effort(requested, supported)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.params["name"]) == (code, name)


def test_errors_render_in_french_and_chinese() -> None:
    with pytest.raises(InvalidValueError) as caught:
        compare_effort("turbo", "low")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_effort"
    for locale in ("fr", "zh"):
        rendered = caught.value.render(locale)
        assert rendered and "{" not in rendered


def test_public_names_are_exported() -> None:
    for name in ("Effort", "EffortLevel", "clamp_effort", "compare_effort", "is_effort"):
        assert name in contextwise.__all__
        assert getattr(contextwise, name) is getattr(contextwise.effort, name)


def test_an_effort_without_a_level_is_refused_with_a_code() -> None:
    # Python 3.12 reads an enum's signature as ``(*values)``: ``Effort()`` is a call people make.
    with pytest.raises(InvalidTypeError) as caught:
        Effort()
    assert caught.value.code == "invalid_effort_type"
