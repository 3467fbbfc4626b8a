"""The layout engine of chat messages: measuring, tool units, groups, pinned messages and spans.

Private to contextwise. :mod:`contextwise.messages` builds its public functions on it, and the
policy engine uses it to trim and compress long conversations in linear time: a conversation is
measured once into a :class:`Profile` (each message's size and role), its groups are found from
that profile, and the span of removable groups is located without listing every group when the
conversation has no tool calls.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, compress, repeat
from operator import eq
from typing import Any, Final, NoReturn, TypeAlias, TypeVar

from contextwise.errors import InvalidTypeError

T = TypeVar("T")

Message: TypeAlias = Mapping[str, Any]
"""A chat message in the OpenAI or the Anthropic shape (``contextwise.messages.ChatMessage``)."""

PINNED_ROLES: Final[frozenset[str]] = frozenset({"system", "developer"})
"""The roles that are never removed: system and developer messages."""

RESULT_ROLES: Final[frozenset[str]] = frozenset({"tool", "function"})
"""The roles of the OpenAI messages that hold a tool result."""

PINNED_ORDER: Final[tuple[str, ...]] = tuple(sorted(PINNED_ROLES))
"""The pinned roles, in a stable order."""


class Profile:
    """Each message's size and role, measured once; ``plain`` when no message can be in a tool
    unit (every message is a dict with exactly a role and a string content).

    The lists are never changed in place, so profiles may share them. ``pinned_roles`` lists the
    pinned roles that may occur (all of them unless the measure saw fewer).
    """

    __slots__ = ("_cut", "_roles", "_sizes", "pinned_roles", "plain")

    def __init__(
        self,
        sizes: list[int],
        roles: list[object],
        plain: bool,
        pinned_roles: tuple[str, ...] = PINNED_ORDER,
    ) -> None:
        self._sizes = sizes
        self._roles = roles
        self.plain = plain
        self.pinned_roles = pinned_roles
        self._cut: tuple[int, int] | None = None

    @property
    def sizes(self) -> list[int]:
        """The characters of each message."""
        if self._cut is not None:
            self._apply_cut()
        return self._sizes

    @property
    def roles(self) -> list[object]:
        """The role of each message (``None`` when it has none)."""
        if self._cut is not None:
            self._apply_cut()
        return self._roles

    def _apply_cut(self) -> None:
        assert self._cut is not None
        start, stop = self._cut
        self._sizes = self._sizes[:start] + self._sizes[stop:]
        self._roles = self._roles[:start] + self._roles[stop:]
        self._cut = None

    def slice(self, start: int, stop: int) -> Profile:
        """Drop the messages from ``start`` to ``stop``; the lists are built when first read."""
        result = Profile(self.sizes, self.roles, self.plain, self.pinned_roles)
        result._cut = (start, stop)
        return result


def profile_messages(items: Sequence[Message], sizes: Sequence[int] | None = None) -> Profile:
    """Measure every message once; a fast path handles plain ``{role, content: str}`` dicts.

    With ``sizes`` (each message's characters, measured earlier), nothing is measured again.
    """
    if sizes is not None and len(sizes) == len(items):
        return profile_known(items, list(sizes))
    if items:
        try:
            # C-level passes: far faster than one Python-level walk per message.
            if set(map(len, items)) == {2}:
                get: Any = dict.get
                roles: list[object] = list(map(get, items, repeat("role")))
                role_set = set(roles)
                if None not in role_set and role_set.isdisjoint(RESULT_ROLES):
                    # str.__len__ measures and checks the type in one pass; a content that is
                    # not a string raises TypeError and takes the checked path below.
                    contents = map(get, items, repeat("content"))
                    pinned_roles = tuple(role for role in PINNED_ORDER if role in role_set)
                    return Profile(list(map(str.__len__, contents)), roles, True, pinned_roles)
        except TypeError:
            pass  # not all dicts, or unhashable roles: the checked path below reports it
    sizes = [measure_message(message, index, None) for index, message in enumerate(items)]
    return Profile(sizes, [message.get("role") for message in items], False)


def profile_known(items: Sequence[Message], sizes: list[int]) -> Profile:
    """The profile of messages whose sizes are known: only roles and plainness are read."""
    get: Any = dict.get
    try:
        if items and set(map(len, items)) == {2}:
            roles: list[object] = list(map(get, items, repeat("role")))
            role_set = set(roles)
            if (
                None not in role_set
                and role_set.isdisjoint(RESULT_ROLES)
                and set(map(type, map(get, items, repeat("content")))) == {str}
            ):
                pinned_roles = tuple(role for role in PINNED_ORDER if role in role_set)
                return Profile(sizes, roles, True, pinned_roles)
    except TypeError:
        pass  # not all dicts: the general profile below
    return Profile(sizes, [message.get("role") for message in items], False)


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
    found: list[int] = []
    for role in wanted:
        position = start
        # list.index scans at C speed; pinned messages are few, usually only the first.
        for _ in range(64):
            try:
                position = roles.index(role, position, stop)
            except ValueError:
                break
            found.append(position)
            position += 1
        else:
            found.extend(position + index for index in indices_of(roles[position:stop], role))
    found.sort()
    return found


def group_bounds(
    items: Sequence[Message], grouping: str, profile: Profile
) -> tuple[list[int], list[bool], list[int]]:
    """Find the groups of a measured conversation.

    Args:
        items: The messages, already checked to be a list or a tuple.
        grouping: ``"user-turn"`` or ``"message"``.
        profile: The messages' sizes and roles, from :func:`profile_messages`.

    Returns:
        The start of each group, whether each group is pinned, and the sorted indices of the
        pinned (system and developer) messages.
    """
    count = len(items)
    roles = profile.roles
    pinned_list = pinned_indices(roles, wanted=profile.pinned_roles)
    starts: list[int] = []
    pinned_groups: list[bool] = []
    if not count:
        return starts, pinned_groups, pinned_list
    attached = None if profile.plain else scan(items)[0]
    if grouping == "user-turn":
        starts = indices_of(roles, "user")
        if attached is not None:
            starts = [index for index in starts if not attached[index]]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
            pinned_groups.append(True)
        pinned_groups.extend([False] * (len(starts) - len(pinned_groups)))
        return starts, pinned_groups, pinned_list
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


def attachments(items: Sequence[Message]) -> list[bool]:
    """For each message, whether it must stay with the message before it (inside a tool unit)."""
    return scan(items)[0]


def scan(items: Sequence[Message]) -> tuple[list[bool], list[object]]:
    """One pass: whether each message is attached to the one before it, and each message's role."""
    count = len(items)
    reach = [-1] * count
    calls: dict[str, int] = {}
    attached = [False] * count
    roles: list[object] = []
    for index, message in enumerate(items):
        call_ids, result_ids, has_results, _only = tool_info(message, index)
        roles.append(message.get("role"))
        if has_results:
            attached[index] = True
            for result in result_ids:
                origin = calls.get(result)
                if origin is not None and reach[origin] < index:
                    reach[origin] = index
        for call in call_ids:
            calls[call] = index
    furthest = -1
    for index in range(count):
        if index <= furthest:
            attached[index] = True
        if reach[index] > furthest:
            furthest = reach[index]
    return attached, roles


def tool_info(message: object, index: int = 0) -> tuple[list[str], list[str], bool, bool]:
    """Return a message's call ids, result ids, whether it holds results, whether only results."""
    if not isinstance(message, Mapping):
        raise InvalidTypeError(
            "message_not_a_mapping", index=index, type_name=type(message).__name__
        )
    calls: list[str] = []
    results: list[str] = []
    role = message.get("role")
    has_results = role in RESULT_ROLES
    only_results = has_results
    if has_results:
        answered = message.get("tool_call_id")
        if isinstance(answered, str):
            results.append(answered)
    tool_calls = message.get("tool_calls")
    if tool_calls and isinstance(tool_calls, list | tuple):
        for call in tool_calls:
            if isinstance(call, Mapping):
                call_id = call.get("id")
                if isinstance(call_id, str):
                    calls.append(call_id)
    content = message.get("content")
    if isinstance(content, list | tuple) and content:
        other = False
        for block in content:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "tool_result":
                has_results = True
                answered = block.get("tool_use_id")
                if isinstance(answered, str):
                    results.append(answered)
            else:
                other = True
                if kind == "tool_use":
                    call_id = block.get("id")
                    if isinstance(call_id, str):
                        calls.append(call_id)
        only_results = only_results or (has_results and not other)
    return calls, results, has_results, only_results


def as_message_list(messages: object, name: str) -> Sequence[Message]:
    if isinstance(messages, list | tuple):
        return messages
    raise InvalidTypeError("not_a_message_list", name=name, type_name=type(messages).__name__)


def measure_message(message: object, index: int, sink: list[str] | None) -> int:
    """Measure one message; append its text pieces to ``sink`` when given."""
    if not isinstance(message, Mapping):
        raise InvalidTypeError(
            "message_not_a_mapping", index=index, type_name=type(message).__name__
        )
    total = 0
    content = message.get("content")
    if isinstance(content, str):
        total = len(content)
        if sink is not None and content:
            sink.append(content)
    elif isinstance(content, list | tuple):
        total = measure_parts(content, index, "content", sink)
    elif content is not None:
        bad_field(index, "content", content)
    refusal = message.get("refusal")
    if refusal is not None:
        total += measure_text(refusal, index, "refusal", sink)
    tool_calls = message.get("tool_calls")
    if tool_calls:
        if not isinstance(tool_calls, list | tuple):
            bad_field(index, "tool_calls", tool_calls)
        for number, call in enumerate(tool_calls):
            field = f"tool_calls[{number}]"
            if not isinstance(call, Mapping):
                bad_field(index, field, call)
            function = call.get("function")
            if function is None:
                # LangChain's dict form puts name and args on the call itself.
                total += measure_call(call, index, field, sink)
            elif isinstance(function, Mapping):
                total += measure_call(function, index, f"{field}.function", sink)
            else:
                bad_field(index, f"{field}.function", function)
    function_call = message.get("function_call")
    if function_call is not None:
        if not isinstance(function_call, Mapping):
            bad_field(index, "function_call", function_call)
        total += measure_call(function_call, index, "function_call", sink)
    return total


def measure_parts(parts: Sequence[object], index: int, field: str, sink: list[str] | None) -> int:
    total = 0
    for number, part in enumerate(parts):
        where = f"{field}[{number}]"
        if isinstance(part, str):
            total += len(part)
            if sink is not None and part:
                sink.append(part)
            continue
        if not isinstance(part, Mapping):
            bad_field(index, where, part)
        kind = part.get("type")
        if isinstance(kind, str) and (kind == "tool_use" or kind.endswith("_tool_use")):
            total += measure_text(part.get("name"), index, f"{where}.name", sink)
            if "input" in part:
                total += measure_text(compact_json(part["input"]), index, f"{where}.input", sink)
        elif kind == "tool_result":
            inner = part.get("content")
            if isinstance(inner, list | tuple):
                total += measure_parts(inner, index, f"{where}.content", sink)
            else:
                total += measure_text(inner, index, f"{where}.content", sink)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            inner = part.get("content")
            if isinstance(inner, list | tuple):
                total += measure_parts(inner, index, f"{where}.content", sink)
            elif isinstance(inner, str):
                total += measure_text(inner, index, f"{where}.content", sink)
        elif kind == "thinking":
            total += measure_text(part.get("thinking"), index, f"{where}.thinking", sink)
        elif kind == "refusal":
            total += measure_text(part.get("refusal"), index, f"{where}.refusal", sink)
        else:
            text = part.get("text")
            if isinstance(text, str):
                total += len(text)
                if sink is not None and text:
                    sink.append(text)
            elif text is not None and kind == "text":
                bad_field(index, f"{where}.text", text)
    return total


def measure_call(call: Mapping[str, Any], index: int, field: str, sink: list[str] | None) -> int:
    total = measure_text(call.get("name"), index, f"{field}.name", sink)
    arguments = call.get("arguments", call.get("args"))
    if isinstance(arguments, Mapping):
        arguments = compact_json(arguments)
    return total + measure_text(arguments, index, f"{field}.arguments", sink)


def measure_text(value: object, index: int, field: str, sink: list[str] | None) -> int:
    if value is None:
        return 0
    if not isinstance(value, str):
        bad_field(index, field, value)
    if sink is not None and value:
        sink.append(value)
    return len(value)


def compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def bad_field(index: int, field: str, value: object) -> NoReturn:
    raise InvalidTypeError(
        "invalid_message_field", index=index, field=field, type_name=type(value).__name__
    )


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


CHUNK = 4096
"""How many values :func:`reach` adds up at C speed before it checks the running sum."""

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
    """:func:`removable_span` for messages without tool calls: each user message starts a group."""
    try:
        first = roles.index("user")
    except ValueError:
        return None
    if keep_groups:
        end = nth_last(roles, "user", keep_groups, first + 1)
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
    while start < stop:
        chunk = values[start : min(start + CHUNK, stop)]
        total = sum(chunk)
        if running + total >= excess:
            sums = list(accumulate(chunk, initial=running))
            return offset + start + bisect_left(sums, excess, 1) - 1
        running += total
        start += CHUNK
    return None


def splice(
    values: Sequence[T], start: int, stop: int, stay: Sequence[int], added: Sequence[T] = ()
) -> list[T]:
    """``values`` with the span from ``start`` to ``stop`` replaced: ``added`` first, then the
    values at the ``stay`` indices of the span (pinned messages, kept in place)."""
    return [*values[:start], *added, *(values[index] for index in stay), *values[stop:]]
