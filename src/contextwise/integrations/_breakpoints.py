"""Where a request's prompt-cache breakpoints go, whatever the framework.

A provider with explicit prompt caching (Anthropic's ``cache_control``) caches the prompt up to
each block that carries a marker, and reads a cached prefix back only at a marker. Anthropic takes
at most four markers in a request, counting those on the tools, the system prompt and the messages.
The prefix of a request is stable in three places, which is where a marker pays:

- after the system prompt and the tools (the pinned parts), which no reduction changes;
- at the end of what the previous call of this conversation sent, when this call extends it (the
  previous call wrote its cache there, this call reads it back);
- on the newest message, so that the next call reads back everything sent now.

:func:`choose` takes what the request holds after the policy ran and the markers already in it
(another middleware's, the user's), and returns only the positions that miss a marker, newest
first, so that the request never carries more than :data:`MAX_BREAKPOINTS`. The markers are put on
the request only: an integration never stores them in its memory, and they never change a
message's fingerprint.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from contextwise.errors import InvalidTypeError

MAX_BREAKPOINTS: Final = 4
"""The most cache markers that Anthropic takes in one request."""

SYSTEM: Final = -1
"""The position of the end of the pinned prefix: after the tools and the system prompt."""


def choose(
    count: int,
    *,
    pinned: bool,
    previous: int | None = None,
    marked: Collection[int] = (),
    present: int = 0,
    limit: int = MAX_BREAKPOINTS,
) -> tuple[int, ...]:
    """The positions where a marker is missing, in the order they are worth it.

    Args:
        count: How many messages the request sends (after the policy).
        pinned: Whether the request has a system prompt or tools before its messages.
        previous: How many of the request's first messages are what the previous call of the
            conversation sent, unchanged (``None`` when the conversation was re-synced, reduced at
            its start, or has no memory).
        marked: The positions that already carry a marker: :data:`SYSTEM` or a message's index.
        present: How many markers the request already carries, wherever they are (at least the
            number of ``marked`` positions; a marker on a tool counts here).
        limit: The most markers a request may carry.

    Returns:
        The positions to mark: the newest message, then :data:`SYSTEM`, then the last message the
        previous call sent; only those that miss a marker, and no more than the room left.
    """
    wanted: list[int] = []
    if count > 0:
        wanted.append(count - 1)
    if pinned:
        wanted.append(SYSTEM)
    if previous is not None and 0 < previous <= count:
        wanted.append(previous - 1)
    room = limit - max(present, len(set(marked)))
    chosen: list[int] = []
    for position in wanted:
        if room <= 0:
            break
        if position in marked or position in chosen:
            continue
        chosen.append(position)
        room -= 1
    return tuple(chosen)


def check_flag(value: object) -> bool:
    """``cache_breakpoints`` as given, when it is a bool.

    Raises:
        InvalidTypeError: When it is not ``True`` or ``False`` (code ``not_a_bool``).
    """
    if not isinstance(value, bool):
        raise InvalidTypeError(
            "not_a_bool", name="cache_breakpoints", type_name=type(value).__name__
        )
    return value
