"""The change planner: from a policy run's result to the change a store commits. Pure.

Nothing here reads or writes a store: each function takes the session's cached context and the
run's result and returns values. A change says which messages leave the context (by step), which
new messages enter it (a summary, an app's message) and at which integer positions, and which
kept messages move (when an app reordered them, or to make room).

Positions are integers. An added message takes ``item_id * POSITION_GAP``; a new message between
two others takes a position between theirs, spaced by up to ``POSITION_GAP``; when no integer is
left between them, the nearest kept messages are spread again, so positions never collide however
many messages enter at one spot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from operator import attrgetter, is_
from typing import Any

from contextwise._layout import plain_profile
from contextwise.session._records import (
    POSITION_GAP,
    ChangeEntry,
    SessionChange,
    StoredMessage,
)

LOWEST_POSITION = -(2**62)
"""The lowest position a message may take (positions are 64-bit integers in a database)."""


@dataclass(frozen=True, slots=True)
class Cache:
    """The cached context, as parallel lists that are never changed in place (a run keeps the
    one it started from): each message as stored and decoded, its characters, its tokens for
    the session's counter, and the roles when every message is plain (else ``None``)."""

    stored: list[StoredMessage]
    messages: list[Any]
    chars: list[int]
    tokens: list[int] | None
    roles: list[object] | None

    def __add__(self, other: Cache) -> Cache:
        return Cache(
            self.stored + other.stored,
            self.messages + other.messages,
            self.chars + other.chars,
            None if self.tokens is None or other.tokens is None else self.tokens + other.tokens,
            None if self.roles is None or other.roles is None else self.roles + other.roles,
        )

    def without(self, start: int, stop: int) -> Cache:
        """The cache without the messages from ``start`` to ``stop``."""
        return Cache(
            self.stored[:start] + self.stored[stop:],
            self.messages[:start] + self.messages[stop:],
            self.chars[:start] + self.chars[stop:],
            None if self.tokens is None else self.tokens[:start] + self.tokens[stop:],
            None if self.roles is None else self.roles[:start] + self.roles[stop:],
        )

    def picked(self, indices: Sequence[int]) -> Cache:
        """The cache of the messages at ``indices``, in that order."""
        tokens, roles = self.tokens, self.roles
        return Cache(
            [self.stored[index] for index in indices],
            [self.messages[index] for index in indices],
            [self.chars[index] for index in indices],
            None if tokens is None else [tokens[index] for index in indices],
            None if roles is None else [roles[index] for index in indices],
        )

    def with_stored(self, stored: list[StoredMessage]) -> Cache:
        """The same cache with other stored records (the same messages, placed or numbered)."""
        return Cache(stored, self.messages, self.chars, self.tokens, self.roles)


CacheMessages = Callable[[Sequence[Any]], Cache]
"""Encodes and measures new messages into a cache, with placeholder records."""


@dataclass(frozen=True, slots=True)
class ChangePlan:
    """A change to commit, and the context the session holds once it is committed."""

    change: SessionChange
    context: Cache


def plan_change(
    cache: Cache,
    new_messages: Sequence[Any],
    applied: Sequence[str],
    removed_by: Mapping[int, str],
    *,
    version: int,
    last_item: int,
    measure: CacheMessages,
    at: datetime,
) -> ChangePlan:
    """Turn a run's result into a stored change: what leaves, what is new, and where it goes.

    Args:
        cache: The context the run started from.
        new_messages: The messages of the session's fragment after the run.
        applied: The ids of the steps that changed the context, in order (at least one).
        removed_by: The step that took out each message the run removed, by ``id()``.
        version: The session's version the run started from.
        last_item: The highest item id the session has given.
        measure: Encodes and measures the messages the run created.
        at: When the change is made.

    Returns:
        The change and the context after it; created messages hold placeholder item ids.
    """
    creator = applied[-1]
    matched = match_in_order(cache, new_messages)
    moved: list[tuple[int, int]] = []
    created: list[StoredMessage] = []
    if matched is None:
        context, removed, removed_messages = rebuild(cache, new_messages, measure)
        placed, moved = place(context.stored, last_item)
        context = context.with_stored(placed)
        created = [item for item in placed if item.item_id == 0]
    else:
        context, removed, removed_messages = matched
    steps: dict[str, ChangeEntry] = {}
    if set(removed_by.values()) <= {creator}:
        if removed:
            steps[creator] = ChangeEntry(creator, list(map(_ITEM_ID, removed)))
    else:
        # A message that one step of this run made and a later one took out (a summary trimmed
        # at once) was never in a context: it is not kept.
        for item, message in zip(removed, removed_messages, strict=True):
            step = removed_by.get(id(message), creator)
            change_entry = steps.get(step)
            if change_entry is None:
                change_entry = steps[step] = ChangeEntry(step)
            change_entry.archived.append(item.item_id)
    if created:
        steps.setdefault(creator, ChangeEntry(creator)).created.extend(created)
    ordered = [steps[step] for step in dict.fromkeys([*applied, *steps]) if step in steps]
    change = SessionChange(version=version, at=at, entries=ordered, moved=moved)
    return ChangePlan(change, context)


_ITEM_ID = attrgetter("item_id")


def match_in_order(
    cache: Cache, new_messages: Sequence[Any]
) -> tuple[Cache, list[StoredMessage], list[Any]] | None:
    """The kept cache, and the removed messages as stored and as given, when the new messages
    are cached messages kept in order (trims only remove); ``None`` when a message is new or
    moved."""
    messages = cache.messages
    count, size = len(messages), len(new_messages)
    prefix = 0
    while prefix < size and prefix < count and messages[prefix] is new_messages[prefix]:
        prefix += 1
    tail = size - prefix
    # The usual trim: the pinned head stays, then the newest messages; checked at C speed.
    if tail <= count - prefix and all(map(is_, new_messages[prefix:], messages[count - tail :])):
        cut = count - tail
        return cache.without(prefix, cut), cache.stored[prefix:cut], messages[prefix:cut]
    kept: list[int] = []
    removed: list[int] = []
    index = 0
    for message in new_messages:
        while index < count and messages[index] is not message:
            removed.append(index)
            index += 1
        if index == count:
            return None
        kept.append(index)
        index += 1
    removed.extend(range(index, count))
    return (
        cache.picked(kept),
        [cache.stored[index] for index in removed],
        [messages[index] for index in removed],
    )


def rebuild(
    cache: Cache, new_messages: Sequence[Any], measure: CacheMessages
) -> tuple[Cache, list[StoredMessage], list[Any]]:
    """The new context when messages are new or moved: the cached ones are found by identity,
    the new ones measured (with a placeholder record); and the cached messages that left."""
    known = {id(message): index for index, message in enumerate(cache.messages)}
    combined = cache
    indices: list[int] = []
    for message in new_messages:
        index = known.get(id(message))
        if index is None:
            index = len(combined.messages)
            combined += measure([message])
        indices.append(index)
    context = combined.picked(indices)
    if context.roles is None:
        context = Cache(
            context.stored,
            context.messages,
            context.chars,
            context.tokens,
            plain_roles(context.messages),
        )
    kept = {id(message) for message in context.messages}
    gone = [index for index, message in enumerate(cache.messages) if id(message) not in kept]
    return (
        context,
        [cache.stored[index] for index in gone],
        [cache.messages[index] for index in gone],
    )


def place(
    stored: Sequence[StoredMessage], last_item: int
) -> tuple[list[StoredMessage], list[tuple[int, int]]]:
    """Give the new messages of a context (item id 0) integer positions between their
    neighbours, and the kept messages that must move new positions.

    Kept messages keep their positions while they are in order and there is room between them.
    When an app reordered them, every message is spread again. When new messages do not fit
    between their neighbours, the window around them widens to the nearest kept messages, which
    are spread with them. Every position stays below ``(last_item + 1) * POSITION_GAP``, where the
    next added message goes.

    Returns:
        The records with their positions, and the ``(item_id, position)`` of each kept message
        that moves.
    """
    positions = [item.position if item.item_id else None for item in stored]
    kept = [position for position in positions if position is not None]
    ceiling = (last_item + 1) * POSITION_GAP
    if any(first >= second for first, second in pairwise(kept)):
        new_positions = _spread(LOWEST_POSITION, ceiling, len(positions), anchor_high=True)
    else:
        new_positions = _fill(positions, ceiling)
    placed = [
        item if item.position == position and item.item_id else _with_position(item, position)
        for item, position in zip(stored, new_positions, strict=True)
    ]
    moved = [
        (item.item_id, position)
        for item, position in zip(stored, new_positions, strict=True)
        if item.item_id and item.position != position
    ]
    return placed, moved


def restored_positions(
    context: Sequence[StoredMessage],
    restored: Sequence[StoredMessage],
    leaving: Collection[int],
    last_item: int,
) -> list[tuple[int, int]]:
    """The moves that keep positions apart when a restore puts archived messages back.

    An archived message keeps its position, and a message placed since may have taken the same
    integer. Each restored message that meets another at one position gets a new position
    between its neighbours (which move only when there is no room).

    Args:
        context: The context as stored now.
        restored: The archived messages the restore puts back.
        leaving: The item ids that leave the context with the restore (its summaries).
        last_item: The highest item id the session has given.

    Returns:
        The ``(item_id, position)`` of each message that moves; none when nothing meets.
    """
    merged = sorted(
        [*(item for item in context if item.item_id not in leaving), *restored],
        key=lambda item: (item.position, item.item_id),
    )
    counts = Counter(item.position for item in merged)
    if all(count == 1 for count in counts.values()):
        return []
    back = {item.item_id for item in restored}
    slots: list[int | None] = [
        None if item.item_id in back and counts[item.position] > 1 else item.position
        for item in merged
    ]
    filled = _fill(slots, (last_item + 1) * POSITION_GAP)
    return [
        (item.item_id, position)
        for item, position in zip(merged, filled, strict=True)
        if item.position != position
    ]


def _fill(positions: Sequence[int | None], ceiling: int) -> list[int]:
    """Positions for the ``None`` entries, between their neighbours; neighbours move only when
    there is no room."""
    result: list[int | None] = list(positions)
    index = 0
    while index < len(result):
        if result[index] is None:
            index = _fill_window(result, index, ceiling)
        else:
            index += 1
    return [position for position in result if position is not None]


def _fill_window(result: list[int | None], start: int, ceiling: int) -> int:
    """Fill the run of ``None`` entries at ``start``, widening the window over its kept
    neighbours, one side then the other, until it fits; return where the window ends.

    Every entry before ``start`` holds a position already; entries after it may not.
    """
    stop, right = start, True
    while True:
        while stop < len(result) and result[stop] is None:
            stop += 1
        low = LOWEST_POSITION if start == 0 else result[start - 1]
        high = ceiling if stop == len(result) else result[stop]
        assert low is not None and high is not None
        count = stop - start
        if high - low > count:
            result[start:stop] = _spread(low, high, count, anchor_high=start == 0)
            return stop
        # No integer is left between the neighbours: the window takes the next kept one in.
        if stop < len(result) and (right or start == 0):
            result[stop] = None
            stop += 1
        else:
            start -= 1
            result[start] = None
        right = not right


def _spread(low: int, high: int, count: int, *, anchor_high: bool) -> list[int]:
    """``count`` increasing integers strictly between ``low`` and ``high``, ``POSITION_GAP``
    apart when there is room, packed against ``high`` (with nothing before them) or ``low``."""
    step = min(POSITION_GAP, (high - low) // (count + 1))
    if anchor_high:
        return [high - step * (count - offset) for offset in range(count)]
    return [low + step * (offset + 1) for offset in range(count)]


def _with_position(item: StoredMessage, position: int) -> StoredMessage:
    return StoredMessage(
        item.item_id,
        position,
        item.data,
        item.chars,
        item.tokens,
        item.counter_id,
        item.created_by,
    )


def plain_roles(messages: Sequence[Any]) -> list[object] | None:
    """The roles of messages that are all plain (a ``{role, content: str}`` dict, or a LangChain
    message without tool calls), found without reading them further; ``None`` when one is not."""
    profile = plain_profile(messages)
    return None if profile is None else profile.roles
