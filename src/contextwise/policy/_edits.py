"""The edit ledger of a run: how each change moved a fragment's messages, so that what left is
reported in the order of the input.

:class:`Splice` is the edit of a trim or a compression, :class:`Remap` that of an app, and
:func:`in_input_order` replays successive edits to sort the removed messages by input position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from contextwise._layout import splice
from contextwise.policy._fragments import RemovedItem


@dataclass(frozen=True, slots=True)
class Splice:
    """How a trim or a compression changes a list of messages: the messages from ``start`` to
    ``stop`` leave, except the pinned ones at ``stay``, and ``added`` new ones take their place."""

    start: int
    stop: int
    stay: list[int]
    added: int = 0

    def removed_origins(self, origin: list[int]) -> list[int]:
        """The input positions of the messages that leave, given those of the messages before."""
        kept = set(self.stay)
        return [origin[index] for index in range(self.start, self.stop) if index not in kept]

    def apply(self, origin: list[int]) -> list[int]:
        """The input positions of the messages after the change; a new message takes the position
        of the first message it replaces."""
        return splice(origin, self.start, self.stop, self.stay, [origin[self.start]] * self.added)


@dataclass(frozen=True, slots=True)
class Remap:
    """How an app changes a list of messages: for each new message, the index of the message it
    keeps (``None`` for a new one), and the indices of the messages that leave."""

    source: list[int | None]
    removed: list[int]

    def removed_origins(self, origin: list[int]) -> list[int]:
        """The input positions of the messages that leave, given those of the messages before."""
        return [origin[index] for index in self.removed]

    def apply(self, origin: list[int]) -> list[int]:
        """The input positions of the messages after the change; a new message takes the position
        of the message before it."""
        result: list[int] = []
        previous = -1
        for index in self.source:
            if index is not None:
                previous = origin[index]
            result.append(previous)
        return result


def in_input_order(
    edits: Sequence[tuple[Splice | Remap, Sequence[RemovedItem]]], count: int
) -> list[RemovedItem]:
    """Put the messages that successive edits removed from a list of ``count`` messages in the
    order of that list.

    Each edit comes with the messages it removed, in order. A message that one edit added and a
    later one removed sorts at the position it took.
    """
    origin = list(range(count))
    keyed: list[tuple[int, RemovedItem]] = []
    for edit, removed in edits:
        keyed += zip(edit.removed_origins(origin), removed, strict=True)
        origin = edit.apply(origin)
    keyed.sort(key=itemgetter(0))
    return [item for _, item in keyed]
