"""The framework-free choice of cache breakpoints: only the missing positions, never more than
Anthropic's four markers in a request."""

from __future__ import annotations

import pytest

from contextwise.integrations._breakpoints import MAX_BREAKPOINTS, SYSTEM, choose


def test_a_first_call_marks_the_pinned_prefix_and_the_newest_message() -> None:
    assert choose(5, pinned=True) == (4, SYSTEM)


def test_without_pinned_parts_only_the_newest_message_is_marked() -> None:
    assert choose(3, pinned=False) == (2,)


def test_an_extended_call_marks_the_end_of_what_the_previous_call_sent() -> None:
    assert choose(7, pinned=True, previous=5) == (6, SYSTEM, 4)


def test_positions_already_marked_are_not_marked_again() -> None:
    assert choose(7, pinned=True, previous=5, marked={6}, present=1) == (SYSTEM, 4)
    assert choose(7, pinned=True, previous=5, marked={SYSTEM, 4, 6}, present=3) == ()


@pytest.mark.parametrize("present", range(MAX_BREAKPOINTS + 2))
def test_a_request_never_carries_more_than_four_markers(present: int) -> None:
    chosen = choose(9, pinned=True, previous=6, present=present)
    assert present + len(chosen) <= max(present, MAX_BREAKPOINTS)
    # The most useful positions go first: the newest message, then the pinned prefix.
    assert chosen == (8, SYSTEM, 5)[: max(0, MAX_BREAKPOINTS - present)]


def test_markers_elsewhere_count_against_the_room_left() -> None:
    # Three markers on tools: one position left, the newest message.
    assert choose(4, pinned=True, previous=2, present=3) == (3,)


def test_nothing_new_since_the_previous_call_marks_one_position() -> None:
    assert choose(4, pinned=False, previous=4) == (3,)


@pytest.mark.parametrize("previous", [None, 0, 9])
def test_no_previous_end_without_a_usable_previous_call(previous: int | None) -> None:
    assert choose(4, pinned=False, previous=previous) == (3,)


def test_an_empty_request_marks_only_its_pinned_prefix() -> None:
    assert choose(0, pinned=True) == (SYSTEM,)
    assert choose(0, pinned=False) == ()
