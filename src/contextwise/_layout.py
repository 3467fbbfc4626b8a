"""The layout engine of chat messages: measuring, tool units, groups, pinned messages and spans.

Private to contextwise. :mod:`contextwise.messages` builds its public functions on it, and the
policy engine uses it to trim and compress long conversations in linear time: a conversation is
measured once into a :class:`Profile` (each message's size and role), its groups are found from
that profile, and the span of removable groups is located without listing every group when the
conversation has no tool calls.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import eq, itemgetter
from typing import Any, Final, Literal, TypeAlias, TypeVar

from contextwise.errors import InvalidTypeError
from contextwise.shapes import (
    DEFAULT_PART_ESTIMATE,
    PINNED_ROLES,
    CallKey,
    MessageFacts,
    PartEstimate,
    read_message,
)
from contextwise.shapes._api import plain_size

T = TypeVar("T")

_CHARS: Final = itemgetter(0)
_ROLE: Final = itemgetter(1)

Message: TypeAlias = Any
"""A message in any supported shape (``contextwise.messages.ChatMessage``)."""

PINNED_ORDER: Final[tuple[str, ...]] = tuple(sorted(PINNED_ROLES))
"""The pinned roles, in a stable order."""


@dataclass(frozen=True, slots=True)
class Profile:
    """Each message's size and role, measured once; ``plain`` when no message can be in a tool
    unit (every message is plain, see :func:`~contextwise.shapes._read.plain_size`).

    The lists are never changed in place, so profiles may share them. ``pinned_roles`` lists the
    pinned roles that may occur (all of them unless the measure saw fewer).
    """

    sizes: list[int]
    """The characters of each message."""

    roles: list[object]
    """The role of each message."""

    plain: bool
    """Whether every message is plain: none can be in a tool unit."""

    pinned_roles: tuple[str, ...] = PINNED_ORDER
    """The pinned roles that may occur."""

    facts: list[MessageFacts] | None = None
    """What each message said when it was read, while the list is the one measured."""

    estimated_parts: int = 0
    """How many parts of the measured messages were estimated."""

    def splice(
        self, start: int, stop: int, stay: Sequence[int], added: Profile | None = None
    ) -> Profile:
        """The profile of the messages with the span from ``start`` to ``stop`` replaced: the
        messages ``added`` measures first, then those at the ``stay`` indices (pinned messages,
        kept in place)."""
        sizes = splice(self.sizes, start, stop, stay, () if added is None else added.sizes)
        roles = splice(self.roles, start, stop, stay, () if added is None else added.roles)
        if added is None:
            return Profile(sizes, roles, self.plain, self.pinned_roles)
        either = set(self.pinned_roles) | set(added.pinned_roles)
        pinned_roles = tuple(role for role in PINNED_ORDER if role in either)
        return Profile(sizes, roles, self.plain and added.plain, pinned_roles)

    def slice(self, start: int, stop: int) -> Profile:
        """The profile of the messages without those from ``start`` to ``stop``."""
        return Profile(
            self.sizes[:start] + self.sizes[stop:],
            self.roles[:start] + self.roles[stop:],
            self.plain,
            self.pinned_roles,
        )


def profile_messages(
    items: Sequence[Message],
    sizes: Sequence[int] | None = None,
    estimate: PartEstimate | None = None,
    opaque: bool = False,
) -> Profile:
    """Measure every message once.

    Each message is first asked whether it is plain
    (:func:`~contextwise.shapes._read.plain_size`); a list of plain messages is measured from
    those answers alone, any other list is read message by message (see
    :func:`~contextwise.shapes.read_message`). With ``sizes`` (each message's characters,
    measured earlier), the sizes are taken as they are. Roles are those of
    :class:`~contextwise.shapes.MessageFacts` (a LangChain ``HumanMessage`` is ``user``, a
    Gemini ``model`` content is ``assistant``...). With ``opaque``, an item that no shape knows
    is one opaque unit.
    """
    given = list(sizes) if sizes is not None and len(sizes) == len(items) else None
    plain = plain_profile(items, given)
    if plain is not None:
        return plain
    facts = read_all(items, estimate, opaque)
    return Profile(
        [fact.chars for fact in facts] if given is None else given,
        [fact.role for fact in facts],
        False,
        facts=facts,
        estimated_parts=sum(fact.estimated_parts for fact in facts),
    )


def plain_profile(items: Sequence[Message], sizes: list[int] | None = None) -> Profile | None:
    """The profile of a list of plain messages (see :func:`~contextwise.shapes._read.plain_size`),
    or ``None`` when one message is not plain; with ``sizes``, the sizes are taken as they are."""
    found: list[Any] = list(map(plain_size, items))
    if None in found:
        return None
    roles: list[object] = list(map(_ROLE, found))
    role_set = set(roles)
    pinned_roles = tuple(role for role in PINNED_ORDER if role in role_set)
    return Profile(list(map(_CHARS, found)) if sizes is None else sizes, roles, True, pinned_roles)


def message_tokens(
    message: Message,
    count: Callable[[str], int],
    estimate: PartEstimate | None = None,
    opaque: bool = False,
) -> int:
    """The tokens of one message: its text through ``count``, plus its estimated parts at the
    estimate's characters per token (parts without text are not free in tokens either)."""
    pieces: list[str] = []
    facts = read_message(
        message, part_estimate=estimate, sink=pieces, unknown_items=_unknown(opaque)
    )
    tokens = count("\n".join(pieces))
    if facts.estimated_chars:
        per_token = (estimate or DEFAULT_PART_ESTIMATE).chars_per_token
        tokens += math.ceil(facts.estimated_chars / per_token)
    return tokens


def read_all(
    items: Sequence[Message], estimate: PartEstimate | None = None, opaque: bool = False
) -> list[MessageFacts]:
    """Read every message of a list (see :func:`contextwise.shapes.read_message`)."""
    unknown_items = _unknown(opaque)
    return [
        read_message(message, index, part_estimate=estimate, unknown_items=unknown_items)
        for index, message in enumerate(items)
    ]


def _unknown(opaque: bool) -> Literal["error", "opaque"]:
    return "opaque" if opaque else "error"


def indices_of(values: list[object], wanted: object) -> list[int]:
    """The indices of ``values`` equal to ``wanted``, found at C speed."""
    return list(compress(range(len(values)), map(eq, values, repeat(wanted))))


def pinned_indices(
    roles: list[object],
    start: int = 0,
    stop: int | None = None,
    wanted: tuple[str, ...] = PINNED_ORDER,
) -> list[int]:
    """The sorted indices of the ``wanted`` (pinned) roles among ``roles[start:stop]``."""
    stop = len(roles) if stop is None else stop
    window = roles if start == 0 and stop == len(roles) else roles[start:stop]
    found: list[int] = []
    for role in wanted:
        # Counted and found at C speed; pinned messages are few, usually only the first.
        hits = window.count(role)
        if hits > 64:
            found.extend(start + index for index in indices_of(window, role))
            continue
        position = 0
        for _ in range(hits):
            position = window.index(role, position)
            found.append(start + position)
            position += 1
    found.sort()
    return found


def group_bounds(
    items: Sequence[Message], grouping: str, profile: Profile
) -> tuple[list[int], list[bool], list[int]]:
    """Find the groups of a measured conversation.

    Args:
        items: The messages, already checked to be a list or a tuple.
        grouping: ``"user-turn"``, ``"message"`` or ``"tool-unit"`` (the groups of ``message``,
            with the task, the user message that starts the latest turn, pinned).
        profile: The messages' sizes and roles, from :func:`profile_messages`.

    Returns:
        The start of each group, whether each group is pinned, and the sorted indices of the
        pinned messages (system and developer messages, and the task with ``tool-unit``).
    """
    count = len(items)
    roles = profile.roles
    pinned_list = pinned_indices(roles, wanted=profile.pinned_roles)
    starts: list[int] = []
    pinned_groups: list[bool] = []
    if not count:
        return starts, pinned_groups, pinned_list
    attached = None if profile.plain else scan(items, profile.facts)[0]
    if grouping == "user-turn":
        starts = indices_of(roles, "user")
        if attached is not None:
            starts = [index for index in starts if not attached[index]]
        if not starts or starts[0] != 0:
            # What comes before the first user turn is an ordinary group, pinned only when it
            # holds nothing but system and developer messages.
            stop = starts[0] if starts else count
            starts.insert(0, 0)
            pinned_groups.append(pinned_list[:stop] == list(range(stop)))
        pinned_groups.extend([False] * (len(starts) - len(pinned_groups)))
        return starts, pinned_groups, pinned_list
    if grouping == "tool-unit":
        task = task_index(roles, attached)
        if task is not None and task not in pinned_list:
            pinned_list = sorted([*pinned_list, task])
    pinned = set(pinned_list)
    if attached is None:
        starts = list(range(count))
        pinned_groups = [index in pinned for index in starts]
        return starts, pinned_groups, pinned_list
    for index in range(count):
        if index == 0 or not attached[index]:
            if starts:
                pinned_groups.append(all(i in pinned for i in range(starts[-1], index)))
            starts.append(index)
    pinned_groups.append(all(i in pinned for i in range(starts[-1], count)))
    return starts, pinned_groups, pinned_list


def task_index(roles: list[object], attached: list[bool] | None) -> int | None:
    """The index of the task: the last user message that starts a turn (one that is not inside
    a tool unit), or ``None`` when there is none."""
    for index in range(len(roles) - 1, -1, -1):
        if roles[index] == "user" and (attached is None or not attached[index]):
            return index
    return None


def attachments(items: Sequence[Message]) -> list[bool]:
    """For each message, whether it must stay with the message before it (inside a tool unit)."""
    return scan(items)[0]


def scan(
    items: Sequence[Message], facts: list[MessageFacts] | None = None
) -> tuple[list[bool], list[object]]:
    """One pass: whether each message is attached to the one before it, and each message's role.

    A message is attached when it holds a tool result, when it lies between a call and the last
    result that answers it, or when the message before it is a reasoning item that leads it.
    """
    if facts is None or len(facts) != len(items):
        facts = read_all(items)
    count = len(items)
    reach = [-1] * count
    calls: dict[CallKey, int] = {}
    named: dict[CallKey, deque[int]] = {}
    attached = [False] * count
    leads = False
    for index, fact in enumerate(facts):
        if fact.has_results or leads:
            attached[index] = True
        for result in fact.results:
            origin = _origin(result, calls, named)
            if origin is not None and reach[origin] < index:
                reach[origin] = index
        for call in fact.calls:
            if isinstance(call, tuple):
                named.setdefault(call, deque()).append(index)
            else:
                calls[call] = index
        leads = fact.leads
    furthest = -1
    for index in range(count):
        if index <= furthest:
            attached[index] = True
        if reach[index] > furthest:
            furthest = reach[index]
    return attached, [fact.role for fact in facts]


def _origin(
    result: CallKey, calls: dict[CallKey, int], named: dict[CallKey, deque[int]]
) -> int | None:
    """The message that made the call a result answers: by id, or the oldest open call of that
    name (Gemini calls without ids pair by order and name)."""
    if isinstance(result, tuple):
        waiting = named.get(result)
        return waiting.popleft() if waiting else None
    return calls.get(result)


def orphan_results(items: Sequence[Message], opaque: bool = False) -> list[int]:
    """The indices of the messages holding a result whose call no earlier message makes."""
    seen: set[CallKey] = set()
    open_named: dict[CallKey, int] = {}
    orphans: list[int] = []
    for index, fact in enumerate(read_all(items, opaque=opaque)):
        orphan = False
        for result in fact.results:
            if isinstance(result, tuple):
                waiting = open_named.get(result, 0)
                orphan = orphan or waiting <= 0
                open_named[result] = waiting - 1
            else:
                orphan = orphan or result not in seen
        if orphan:
            orphans.append(index)
        for call in fact.calls:
            if isinstance(call, tuple):
                open_named[call] = max(0, open_named.get(call, 0)) + 1
            else:
                seen.add(call)
    return orphans


def as_message_list(messages: object, name: str) -> Sequence[Message]:
    if isinstance(messages, list | tuple):
        return messages
    raise InvalidTypeError("not_a_message_list", name=name, type_name=type(messages).__name__)


# --- spans of removable groups ---------------------------------------------------------------


def older_groups(
    messages: Sequence[Message], grouping: Any, keep_groups: int, profile: Profile
) -> tuple[list[int], list[int], list[int]]:
    """Return the starts and the ends of the removable groups (oldest first), and pinned indices.

    The removable groups are the unpinned groups but the newest ``keep_groups``.
    """
    starts, pinned_groups, pinned = group_bounds(messages, grouping, profile)
    ends = [*starts[1:], len(messages)]
    if True in pinned_groups[1:]:
        firsts = [start for start, flag in zip(starts, pinned_groups, strict=True) if not flag]
        ends = [end for end, flag in zip(ends, pinned_groups, strict=True) if not flag]
    else:
        offset = 1 if pinned_groups and pinned_groups[0] else 0
        firsts, ends = starts[offset:], ends[offset:]
    removable = max(0, len(firsts) - keep_groups)
    return firsts[:removable], ends[:removable], pinned


def pinned_between(pinned: list[int], start: int, stop: int) -> list[int]:
    """The pinned indices from ``start`` to ``stop`` (excluded)."""
    return pinned[bisect_left(pinned, start) : bisect_left(pinned, stop)]


CHUNK = 64
"""How many values :func:`reach` first adds up at C speed before it checks the running sum; each
next slice is twice as long, so the sum reads little more than the values it passes."""

Span: TypeAlias = tuple[int, int, Callable[[int], int], list[int]]


def removable_span(
    messages: Sequence[Message], grouping: Any, keep_groups: int, profile: Profile
) -> Span | None:
    """Locate the removable groups: all unpinned groups but the newest ``keep_groups``.

    Returns ``None`` when there is none, else the first index of the oldest removable group, the
    end of the newest one, a function from an index in that span to the end of its group, and the
    pinned indices in the span (which stay). A plain conversation grouped by user turn is read
    from its roles without listing every group.
    """
    if profile.plain and grouping == "user-turn":
        return plain_turn_span(profile.roles, keep_groups, profile.pinned_roles)
    if profile.plain and grouping == "message":
        return plain_message_span(profile.roles, keep_groups, profile.pinned_roles)
    firsts, ends, pinned = older_groups(messages, grouping, keep_groups, profile)
    if not ends:
        return None

    def group_end(index: int) -> int:
        return ends[bisect_right(ends, index)]

    first, end = firsts[0], ends[-1]
    return first, end, group_end, pinned_between(pinned, first, end)


def plain_turn_span(
    roles: list[object], keep_groups: int, pinned_roles: tuple[str, ...]
) -> Span | None:
    """:func:`removable_span` for messages without tool calls: each user message starts a group,
    and the messages before the first one form a group of their own."""
    try:
        first_user = roles.index("user")
    except ValueError:
        first_user = len(roles)
    # The preamble is removable when it holds a message that is not pinned.
    preamble = any(role not in PINNED_ROLES for role in roles[:first_user])
    first = 0 if preamble else first_user
    if first == len(roles):
        return None
    if keep_groups:
        end = nth_last(roles, "user", keep_groups, first_user if preamble else first_user + 1)
        if end is None:
            return None
    else:
        end = len(roles)

    def group_end(index: int) -> int:
        try:
            return roles.index("user", index + 1, end)
        except ValueError:
            return end

    return first, end, group_end, pinned_indices(roles, first, end, pinned_roles)


def plain_message_span(
    roles: list[object], keep_groups: int, pinned_roles: tuple[str, ...]
) -> Span | None:
    """:func:`removable_span` for messages without tool calls grouped by message: each message
    is a group, the pinned ones stay, and the newest ``keep_groups`` unpinned ones stay too."""
    pinned = pinned_indices(roles, wanted=pinned_roles)
    removable = len(roles) - len(pinned) - keep_groups
    if removable <= 0:
        return None
    first, last = unpinned_at(pinned, 0), unpinned_at(pinned, removable - 1)
    end = last + 1
    pinned_set = set(pinned)

    def group_end(index: int) -> int:
        while index in pinned_set:
            index += 1
        return index + 1

    return first, end, group_end, pinned_between(pinned, first, end)


def unpinned_at(pinned: list[int], rank: int) -> int:
    """The index of the unpinned message of rank ``rank`` (from 0), given the sorted pinned
    indices."""
    index = rank
    for position in pinned:
        if position > index:
            break
        index += 1
    return index


def nth_last(values: list[object], wanted: object, count: int, start: int) -> int | None:
    """The index of the ``count``-th last ``wanted`` in ``values[start:]``, or ``None``.

    The search goes backwards in slices that double in size, so it reads little more than the
    values it passes.
    """
    stop = len(values)
    size = 64
    while stop > start:
        low = max(start, stop - size)
        part = values[low:stop]
        hits = part.count(wanted)
        if hits >= count:
            return low + indices_of(part, wanted)[hits - count]
        count -= hits
        stop = low
        size *= 2
    return None


def reach(values: list[int], start: int, stop: int, excess: int, stay: list[int]) -> int | None:
    """The first index from ``start`` at which the values add up to ``excess``, or ``None``.

    The values at the ``stay`` indices (pinned messages, which are not removed) count zero. The
    sum runs over slices at C speed and stops at the slice that reaches ``excess``.
    """
    offset = 0
    if stay:
        values = values[start:stop]
        for index in stay:
            values[index - start] = 0
        offset, start, stop = start, 0, stop - start
    running = 0
    size = CHUNK
    while start < stop:
        end = min(start + size, stop)
        sums = list(accumulate(values[start:end], initial=running))
        running = sums[-1]
        if running >= excess:
            return offset + start + bisect_left(sums, excess, 1) - 1
        start = end
        size *= 2
    return None


def splice(
    values: Sequence[T], start: int, stop: int, stay: Sequence[int], added: Sequence[T] = ()
) -> list[T]:
    """``values`` with the span from ``start`` to ``stop`` replaced: ``added`` first, then the
    values at the ``stay`` indices of the span (pinned messages, kept in place)."""
    return [*values[:start], *added, *(values[index] for index in stay), *values[stop:]]
