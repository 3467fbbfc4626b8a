"""The session's change planner: integer positions that never collide, whatever is inserted."""

from __future__ import annotations

import random
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from contextwise.session import POSITION_GAP, StoredMessage
from contextwise.session._planner import LOWEST_POSITION, place


def kept(item_id: int, position: int) -> StoredMessage:
    data = {"role": "user", "content": str(item_id)}
    return StoredMessage(item_id, position, data, 1, None, None)


def new() -> StoredMessage:
    return StoredMessage(0, 0, {"role": "user", "content": "new"}, 3, None, None)


def check(placed: list[StoredMessage], last_item: int) -> None:
    positions = [item.position for item in placed]
    assert all(isinstance(position, int) for position in positions)
    assert all(first < second for first, second in pairwise(positions))
    ceiling = (last_item + 1) * POSITION_GAP
    assert all(LOWEST_POSITION < position < ceiling for position in positions)


def test_a_thousand_messages_inserted_one_by_one_at_one_spot_never_collide() -> None:
    context = [kept(1, POSITION_GAP), kept(2, 2 * POSITION_GAP)]
    for _ in range(1_000):
        placed, moved = place([context[0], new(), *context[1:]], last_item=2)
        check(placed, 2)
        by_id = dict(moved)
        for item, after in zip(context, [placed[0], *placed[2:]], strict=True):
            assert by_id.get(item.item_id, item.position) == after.position
        inserted = StoredMessage(len(context) + 1, placed[1].position, {}, 3, None, None)
        context = [placed[0], inserted, *placed[2:]]
    assert len(context) == 1_002


def test_kept_messages_stay_where_they_are_while_there_is_room() -> None:
    context = [kept(1, POSITION_GAP), new(), new(), kept(3, 3 * POSITION_GAP), new()]
    placed, moved = place(context, last_item=3)
    check(placed, 3)
    assert moved == []
    assert [placed[0].position, placed[3].position] == [POSITION_GAP, 3 * POSITION_GAP]


def test_reordered_messages_are_all_spread_again_and_reported_as_moved() -> None:
    context = [kept(2, 2 * POSITION_GAP), kept(1, POSITION_GAP), new()]
    placed, moved = place(context, last_item=2)
    check(placed, 2)
    assert dict(moved) == {
        item.item_id: after.position
        for item, after in zip(context, placed, strict=True)
        if item.item_id and item.position != after.position
    }
    assert 2 in dict(moved)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 2**32))
def test_any_mix_of_kept_and_new_messages_gets_increasing_integer_positions(
    shape: list[bool], seed: int
) -> None:
    rng = random.Random(seed)
    last_item = sum(shape) + rng.randint(0, 3)
    ids = sorted(rng.sample(range(1, last_item + 1), sum(shape)))
    # Kept messages in order, packed tight now and then, so that windows must widen.
    tight = rng.random() < 0.5
    spots = range(1, 4 * len(ids) + 2)
    chosen = sorted(rng.sample(spots, len(ids))) if tight else [i * POSITION_GAP for i in ids]
    positions = iter(chosen)
    id_iter = iter(ids)
    context = [kept(next(id_iter), next(positions)) if is_kept else new() for is_kept in shape]
    placed, moved = place(context, last_item)
    check(placed, last_item)
    before = {item.item_id: item.position for item in context if item.item_id}
    after = {item.item_id: item.position for item in placed if item.item_id}
    assert dict(moved) == {key: value for key, value in after.items() if before[key] != value}
