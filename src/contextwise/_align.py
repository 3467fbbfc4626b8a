"""Sequence alignment for the exact ledger: which input messages are still in the output. Internal.

An app step returns a new list of messages. To report exactly what left the context, the old list
is aligned with the new one: a longest common subsequence of equal messages, then each old message
left over is paired with an equal new message left over, if any (a message the app moved). What
remains of the old list is exactly what the new list no longer holds: as many copies of each
message as it lost, never one it still has. When no message
repeats on either side (the usual case), it is a longest increasing run, found in O(N log N).
Otherwise Myers' O((N + M) D) difference algorithm runs in its linear-space form, after the common
prefix and suffix are matched directly: an app that rewrites, drops or inserts a few messages
(D small) is aligned in linear time, and memory stays O(N + M).

Messages are compared with ``==``. To compare them in constant time, each message is first
turned into a token: equal messages get equal tokens (a frozen, hashable form of the message
when it has one, otherwise a search among the unhashable messages already seen).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Alignment:
    """How an old list of items maps onto a new one.

    ``source[j]`` is the index in the old list of the item kept as the ``j``-th new item, or
    ``None`` for an inserted item; ``removed`` lists, in order, the old indices kept nowhere.
    The kept indices increase along ``source``, except for the items that moved.
    """

    source: list[int | None]
    removed: list[int]


def align(before: Sequence[object], after: Sequence[object]) -> Alignment:
    """Align two sequences on a longest common subsequence of equal items, then pair the moves.

    Args:
        before: The old items.
        after: The new items.

    Returns:
        For each new item the old index it keeps (or ``None``), and the old indices removed.

    Examples:
        >>> result = align(["a", "b", "c", "d"], ["a", "B", "c", "d", "e"])
        >>> result.source, result.removed
        ([0, None, 2, 3, None], [1])
        >>> align(["a", "b", "c"], ["c", "a", "b"]).removed
        []
    """
    old, new = tokenize(before, after)
    pairs = common_subsequence(old, new)
    source: list[int | None] = [None] * len(after)
    kept = [False] * len(before)
    for old_index, new_index in pairs:
        source[new_index] = old_index
        kept[old_index] = True
    waiting: dict[int, list[int]] = {}
    for index, was_kept in enumerate(kept):
        if not was_kept:
            waiting.setdefault(old[index], []).append(index)
    for new_index, token in enumerate(new):
        candidates = waiting.get(token)
        if source[new_index] is None and candidates:
            old_index = candidates.pop(0)
            source[new_index] = old_index
            kept[old_index] = True
    removed = [index for index, was_kept in enumerate(kept) if not was_kept]
    return Alignment(source, removed)


def tokenize(before: Sequence[object], after: Sequence[object]) -> tuple[list[int], list[int]]:
    """Replace each item by an integer token: two items get one token exactly when equal."""
    by_key: dict[Hashable, int] = {}
    unhashable: list[tuple[object, int]] = []

    def token(item: object) -> int:
        try:
            key = freeze(item)
            hash(key)
        except TypeError:
            for seen, number in unhashable:
                if seen == item:
                    return number
            number = len(by_key) + len(unhashable)
            unhashable.append((item, number))
            return number
        found = by_key.get(key)
        if found is None:
            found = by_key[key] = len(by_key) + len(unhashable)
        return found

    return [token(item) for item in before], [token(item) for item in after]


def freeze(value: object) -> Hashable:
    """A hashable form of a JSON-like value that is equal exactly when the values are equal.

    Dicts become frozensets of their items and lists tuples, each tagged with its kind so that a
    list never equals a tuple or a dict. Anything else is kept as it is (and may be unhashable,
    which the caller handles).
    """
    if isinstance(value, dict):
        try:
            # The fast path, in C: a flat dict of hashable values (most chat messages). Its tag
            # differs from the walked form's, so the two forms never collide.
            return ("flat-dict", frozenset(value.items()))
        except TypeError:
            return ("dict", frozenset((key, freeze(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(freeze(item) for item in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(freeze(item) for item in value))
    return value


def common_subsequence(old: Sequence[int], new: Sequence[int]) -> list[tuple[int, int]]:
    """A longest common subsequence of two token lists, as increasing ``(old, new)`` index pairs.

    Examples:
        >>> common_subsequence([1, 2, 3, 4], [1, 3, 4, 5])
        [(0, 0), (2, 1), (3, 2)]
    """
    if len(set(old)) == len(old) and len(set(new)) == len(new):
        return _unique_subsequence(old, new)
    pairs: list[tuple[int, int]] = []
    _diff(old, 0, len(old), new, 0, len(new), pairs)
    return pairs


def _unique_subsequence(old: Sequence[int], new: Sequence[int]) -> list[tuple[int, int]]:
    # When no token repeats on either side, each token pairs at most one old item with one new
    # item, and a longest common subsequence is a longest increasing run of old indices taken in
    # new order: O(N log N) by patience sorting, whatever the number of differences.
    position = {token: index for index, token in enumerate(old)}
    candidates = [(position[token], j) for j, token in enumerate(new) if token in position]
    tops: list[int] = []  # the smallest old index ending an increasing run of each length
    ends: list[int] = []  # the candidate holding that index
    back: list[int] = [-1] * len(candidates)
    for number, (old_index, _) in enumerate(candidates):
        length = bisect_left(tops, old_index)
        if length == len(tops):
            tops.append(old_index)
            ends.append(number)
        else:
            tops[length] = old_index
            ends[length] = number
        back[number] = ends[length - 1] if length else -1
    chain: list[tuple[int, int]] = []
    number = ends[-1] if ends else -1
    while number >= 0:
        chain.append(candidates[number])
        number = back[number]
    return chain[::-1]


def _diff(
    old: Sequence[int],
    old_lo: int,
    old_hi: int,
    new: Sequence[int],
    new_lo: int,
    new_hi: int,
    pairs: list[tuple[int, int]],
) -> None:
    # The common prefix and suffix are matched directly; what differs in between is split at its
    # middle snake into two halves with about half the differences each, so the recursion is
    # O(log D) deep.
    while old_lo < old_hi and new_lo < new_hi and old[old_lo] == new[new_lo]:
        pairs.append((old_lo, new_lo))
        old_lo += 1
        new_lo += 1
    tail: list[tuple[int, int]] = []
    while old_lo < old_hi and new_lo < new_hi and old[old_hi - 1] == new[new_hi - 1]:
        old_hi -= 1
        new_hi -= 1
        tail.append((old_hi, new_hi))
    if old_lo < old_hi and new_lo < new_hi:
        x, y, u, v = middle_snake(old, old_lo, old_hi, new, new_lo, new_hi)
        _diff(old, old_lo, x, new, new_lo, y, pairs)
        pairs.extend((x + step, y + step) for step in range(u - x))
        _diff(old, u, old_hi, new, v, new_hi, pairs)
    pairs.extend(reversed(tail))


def middle_snake(
    old: Sequence[int], old_lo: int, old_hi: int, new: Sequence[int], new_lo: int, new_hi: int
) -> tuple[int, int, int, int]:
    """The middle snake of Myers' algorithm on ``old[old_lo:old_hi]`` and ``new[new_lo:new_hi]``.

    Returns ``(x, y, u, v)``: the snake runs from ``(x, y)`` to ``(u, v)`` in absolute indices, on
    a shortest edit path, and splits the problem into two strictly smaller ones.
    """
    n = old_hi - old_lo
    m = new_hi - new_lo
    delta = n - m
    odd = delta % 2 == 1
    limit = (n + m + 1) // 2
    # The furthest x reached on each diagonal k, kept in dicts: only O(D) diagonals are ever
    # visited, so a long list with few differences costs O(D) memory per call, not O(N + M).
    forward: dict[int, int] = {1: 0}
    backward: dict[int, int] = {1: 0}
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and forward[k - 1] < forward[k + 1]):
                x = forward[k + 1]
            else:
                x = forward[k - 1] + 1
            y = x - k
            start_x, start_y = x, y
            while x < n and y < m and old[old_lo + x] == new[new_lo + y]:
                x += 1
                y += 1
            forward[k] = x
            if (
                odd
                and delta - (d - 1) <= k <= delta + (d - 1)
                and forward[k] + backward[delta - k] >= n
            ):
                return old_lo + start_x, new_lo + start_y, old_lo + x, new_lo + y
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and backward[k - 1] < backward[k + 1]):
                x = backward[k + 1]
            else:
                x = backward[k - 1] + 1
            y = x - k
            start_x, start_y = x, y
            while x < n and y < m and old[old_hi - 1 - x] == new[new_hi - 1 - y]:
                x += 1
                y += 1
            backward[k] = x
            if (
                not odd
                and -d <= delta - k <= d
                and backward[k] + forward[delta - k] >= n
            ):
                return old_hi - x, new_hi - y, old_hi - start_x, new_hi - start_y
    raise AssertionError("a middle snake always exists")  # pragma: no cover
