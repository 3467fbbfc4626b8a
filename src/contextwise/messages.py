"""Chat messages: measuring them, grouping them, and keeping tool calls with their results.

Messages are plain mappings in either of the two common shapes, and both are understood
everywhere:

- the OpenAI chat shape: ``role``, ``content`` (a string or a list of parts), ``tool_calls`` on an
  assistant message, and ``role: "tool"`` messages that answer them through ``tool_call_id``;
- the Anthropic shape: ``content`` as a list of blocks, with ``tool_use`` blocks in an assistant
  message and ``tool_result`` blocks, which name the call in ``tool_use_id``, in the next user
  message.

An assistant message with tool calls and the messages that hold their results form one atomic
**tool unit**. Every grouping keeps a tool unit whole, so no operation built on it can split a
call from its results or leave a result without its call. System and developer messages are
**pinned**: trimming never removes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq
from typing import Any, Final, Literal, NoReturn, TypeAlias

from contextwise.errors import InvalidTypeError, InvalidValueError

ChatMessage: TypeAlias = Mapping[str, Any]
"""A chat message: a mapping in the OpenAI or the Anthropic shape."""

GroupingKind: TypeAlias = Literal["user-turn", "message"]
"""How messages are grouped: by user turn, or each message (or tool unit) on its own."""

GROUPINGS: Final[tuple[GroupingKind, ...]] = ("user-turn", "message")
"""The supported groupings."""

PINNED_ROLES: Final[frozenset[str]] = frozenset({"system", "developer"})
"""The roles that are never removed: system and developer messages."""

_RESULT_ROLES: Final[frozenset[str]] = frozenset({"tool", "function"})
_PINNED_ORDER: Final[tuple[str, ...]] = tuple(sorted(PINNED_ROLES))


def message_chars(message: ChatMessage) -> int:
    """Return the number of characters of a chat message's text.

    The count is the sum of the lengths of: the string content, or the text of each text part
    (OpenAI) or text block (Anthropic); an assistant's refusal; the text of thinking blocks; the
    name and the argument text of each tool call (for an Anthropic ``tool_use`` block, the name and
    the compact JSON of its ``input``, without spaces and with non-ASCII characters kept); and the
    text of each tool result. Roles, ids, images and other non-text parts count zero.

    Args:
        message: A chat message in the OpenAI or the Anthropic shape.

    Returns:
        The number of characters, zero or more.

    Raises:
        InvalidTypeError: When the message is not a mapping, or one of its fields has a type that
            the shape does not allow (such as a number as ``content``). The error reports index 0,
            since a single message is measured.

    Examples:
        >>> message_chars({"role": "user", "content": "Hello"})
        5
        >>> message_chars({"role": "assistant", "content": None, "tool_calls": [
        ...     {"id": "c1", "type": "function",
        ...      "function": {"name": "add", "arguments": '{"a":1}'}}]})
        10
        >>> message_chars({"role": "user", "content": [
        ...     {"type": "tool_result", "tool_use_id": "t1", "content": "42"},
        ...     {"type": "text", "text": "Thanks"}]})
        8
    """
    return _walk(message, 0, None)


def messages_chars(messages: Sequence[ChatMessage]) -> int:
    """Return the number of characters of a list of chat messages: the sum of :func:`message_chars`.

    Args:
        messages: The messages, in the OpenAI or the Anthropic shape.

    Returns:
        The total number of characters.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or one message is malformed;
            the error names the index of the faulty message.

    Examples:
        >>> messages_chars([{"role": "system", "content": "Be brief."},
        ...                 {"role": "user", "content": "Hi"}])
        11
    """
    items = _as_list(messages, "messages")
    return sum(_walk(message, index, None) for index, message in enumerate(items))


def message_text(message: ChatMessage) -> str:
    """Return the text that :func:`message_chars` measures, joined into one string.

    The pieces are joined with a newline, which does not count in :func:`message_chars`. Token
    counters measure a message through this text.

    Args:
        message: A chat message in the OpenAI or the Anthropic shape.

    Returns:
        The message's text pieces joined with newlines.

    Raises:
        InvalidTypeError: When the message is malformed, as for :func:`message_chars`.

    Examples:
        >>> message_text({"role": "user", "content": [
        ...     {"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {"url": "x"}},
        ...     {"type": "text", "text": "a cat"}]})
        'Look:\\na cat'
    """
    pieces: list[str] = []
    _walk(message, 0, pieces)
    return "\n".join(pieces)


def tool_call_ids(message: ChatMessage) -> tuple[str, ...]:
    """Return the ids of the tool calls that a message makes, in order.

    OpenAI ``tool_calls`` entries and Anthropic ``tool_use`` blocks are both read. Server-side
    tools (such as ``server_tool_use``) carry their result in the same message and are not listed.

    Args:
        message: A chat message in the OpenAI or the Anthropic shape.

    Returns:
        The call ids; empty when the message makes no tool call.

    Examples:
        >>> tool_call_ids({"role": "assistant", "content": [
        ...     {"type": "text", "text": "Let me check."},
        ...     {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x"}}]})
        ('toolu_1',)
    """
    calls, _results, _has_results, _only_results = _tool_info(message)
    return tuple(calls)


def tool_result_ids(message: ChatMessage) -> tuple[str, ...]:
    """Return the ids of the tool calls that a message answers, in order.

    An OpenAI ``tool`` message answers the call named by its ``tool_call_id``; an Anthropic user
    message answers one call per ``tool_result`` block, named by its ``tool_use_id``.

    Args:
        message: A chat message in the OpenAI or the Anthropic shape.

    Returns:
        The ids of the answered calls; empty when the message holds no tool result.

    Examples:
        >>> tool_result_ids({"role": "tool", "tool_call_id": "call_1", "content": "42"})
        ('call_1',)
    """
    _calls, results, _has_results, _only_results = _tool_info(message)
    return tuple(results)


def is_pinned(message: ChatMessage) -> bool:
    """Tell whether a message is pinned: a system or developer message, which trimming keeps.

    Args:
        message: A chat message.

    Returns:
        Whether the message's role is ``system`` or ``developer``.

    Examples:
        >>> is_pinned({"role": "developer", "content": "Answer in French."})
        True
    """
    return isinstance(message, Mapping) and message.get("role") in PINNED_ROLES


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """A run of consecutive messages that an operation keeps or removes as a whole.

    Examples:
        >>> group = group_messages([{"role": "user", "content": "Hi"}])[0]
        >>> group.start, group.stop, group.chars, group.pinned
        (0, 1, 2, False)
    """

    start: int
    """The index of the group's first message in the list."""

    stop: int
    """The index just after the group's last message, as in a slice."""

    chars: int
    """The characters of the group's messages, measured by :func:`message_chars`."""

    pinned: bool
    """Whether trimming keeps the group: the preamble of a ``user-turn`` grouping, or a group made
    only of system and developer messages."""

    messages: tuple[ChatMessage, ...]
    """The group's messages, the same objects as in the list."""


def group_messages(
    messages: Sequence[ChatMessage], grouping: GroupingKind = "user-turn"
) -> list[MessageGroup]:
    """Split a conversation into the groups that trimming keeps or removes as a whole.

    With ``user-turn``, a group starts at each user message that says something of its own, and
    runs until the next one. A user message that only carries tool results does not start a group,
    and neither does a user message that answers a tool call of an earlier message, even when it
    also holds text: it belongs to the tool unit of that call. The messages before the first group
    (usually the system prompt) form a pinned preamble.

    With ``message``, each message is its own group, except that a tool unit (an assistant message
    with tool calls and every message up to the last one that answers them) forms one group. A
    group made only of system and developer messages is pinned.

    In both groupings a system or developer message inside an unpinned group is still pinned:
    trimming removes the group's other messages and keeps it in place.

    Args:
        messages: The conversation, in the OpenAI or the Anthropic shape.
        grouping: ``"user-turn"`` (the default) or ``"message"``.

    Returns:
        The groups, in order; together they cover every message exactly once.

    Raises:
        InvalidValueError: When the grouping is unknown.
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> history = [
        ...     {"role": "system", "content": "Be brief."},
        ...     {"role": "user", "content": "Weather in Paris?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1",
        ...         "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        ...     {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
        ...     {"role": "assistant", "content": "Sunny."},
        ...     {"role": "user", "content": "Thanks!"},
        ... ]
        >>> [(g.start, g.stop, g.pinned) for g in group_messages(history)]
        [(0, 1, True), (1, 5, False), (5, 6, False)]
        >>> [(g.start, g.stop) for g in group_messages(history, "message")]
        [(0, 1), (1, 2), (2, 4), (4, 5), (5, 6)]
    """
    layout = layout_messages(messages, grouping)
    items = layout.messages
    sizes = layout.sizes
    groups: list[MessageGroup] = []
    bounds = [*layout.starts, len(items)]
    for number in range(len(layout.starts)):
        start, stop = bounds[number], bounds[number + 1]
        groups.append(
            MessageGroup(
                start=start,
                stop=stop,
                chars=sum(sizes[start:stop]),
                pinned=layout.pinned_groups[number],
                messages=tuple(items[start:stop]),
            )
        )
    return groups


def tool_units(messages: Sequence[ChatMessage]) -> list[tuple[int, int]]:
    """Return the tool units of a conversation as ``(start, stop)`` slices.

    A tool unit runs from an assistant message with tool calls to the last message that answers
    one of them, and takes in every message between (overlapping units merge). A message holding a
    tool result whose call is not found is attached to the message before it, so that no operation
    moves it further from a call.

    Args:
        messages: The conversation, in the OpenAI or the Anthropic shape.

    Returns:
        The slices of the units that span more than one message, in order.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> tool_units([
        ...     {"role": "user", "content": "Add 1 and 2."},
        ...     {"role": "assistant", "content": [
        ...         {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 2}}]},
        ...     {"role": "user", "content": [
        ...         {"type": "tool_result", "tool_use_id": "t1", "content": "3"}]},
        ...     {"role": "assistant", "content": "3"},
        ... ])
        [(1, 3)]
    """
    items = _as_list(messages, "messages")
    attached = _attachments(items)
    units: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(items) + 1):
        if index == len(items) or not attached[index]:
            if index - start > 1:
                units.append((start, index))
            start = index
    return units


def find_orphan_results(messages: Sequence[ChatMessage]) -> list[int]:
    """Return the indices of messages holding a tool result whose call no earlier message makes.

    A conversation that a model API accepts has none. contextwise never creates one from a
    conversation that had none.

    Args:
        messages: The conversation, in the OpenAI or the Anthropic shape.

    Returns:
        The indices of the messages with at least one orphan result, in order.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> find_orphan_results([{"role": "tool", "tool_call_id": "gone", "content": "42"}])
        [0]
    """
    items = _as_list(messages, "messages")
    seen: set[str] = set()
    orphans: list[int] = []
    for index, message in enumerate(items):
        calls, results, _has_results, _only_results = _tool_info(message, index)
        if any(result not in seen for result in results):
            orphans.append(index)
        seen.update(calls)
    return orphans


@dataclass(frozen=True, slots=True)
class MessageLayout:
    """The measured layout of a conversation: sizes, groups and pinned messages.

    It is computed in linear time, measuring each message once, and is what
    :func:`group_messages` and the policy engine build on.

    Examples:
        >>> layout = layout_messages([
        ...     {"role": "system", "content": "Be brief."},
        ...     {"role": "user", "content": "Hi"},
        ...     {"role": "assistant", "content": "Hello!"},
        ...     {"role": "user", "content": "Bye"},
        ... ])
        >>> layout.starts, layout.pinned_groups, layout.unpinned_groups
        ([0, 1, 3], [True, False, False], [(1, 3), (3, 4)])
    """

    messages: Sequence[ChatMessage]
    """The messages, as given."""

    sizes: list[int]
    """The characters of each message, from :func:`message_chars`."""

    starts: list[int]
    """The index of the first message of each group, in order; the first is always 0."""

    pinned_groups: list[bool]
    """For each group, whether it is pinned as a whole."""

    pinned: list[bool]
    """For each message, whether it is a system or developer message."""

    @property
    def unpinned_groups(self) -> list[tuple[int, int]]:
        """The ``(start, stop)`` slices of the groups that trimming may remove, in order."""
        bounds = [*self.starts, len(self.messages)]
        return [
            (bounds[number], bounds[number + 1])
            for number in range(len(self.starts))
            if not self.pinned_groups[number]
        ]


def layout_messages(
    messages: Sequence[ChatMessage], grouping: GroupingKind = "user-turn"
) -> MessageLayout:
    """Measure a conversation and find its groups in one linear pass.

    Args:
        messages: The conversation, in the OpenAI or the Anthropic shape.
        grouping: ``"user-turn"`` (the default) or ``"message"``; see :func:`group_messages`.

    Returns:
        The sizes, group starts and pinned flags.

    Raises:
        InvalidValueError: When the grouping is unknown.
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> layout = layout_messages([{"role": "system", "content": "Hi"},
        ...                           {"role": "user", "content": "Hello"}])
        >>> layout.sizes, layout.starts, layout.pinned_groups
        ([2, 5], [0, 1], [True, False])
    """
    if grouping not in GROUPINGS:
        raise InvalidValueError(
            "unknown_grouping", grouping=str(grouping), supported=list(GROUPINGS)
        )
    items = _as_list(messages, "messages")
    profile = _profile(items)
    starts, pinned_groups, pinned_indices = _group_bounds(items, grouping, profile)
    pinned = [False] * len(items)
    for index in pinned_indices:
        pinned[index] = True
    return MessageLayout(
        messages=items,
        sizes=profile.sizes,
        starts=starts,
        pinned_groups=pinned_groups,
        pinned=pinned,
    )


class _Profile:
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
        pinned_roles: tuple[str, ...] = _PINNED_ORDER,
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

    def slice(self, start: int, stop: int) -> _Profile:
        """Drop the messages from ``start`` to ``stop``; the lists are built when first read."""
        result = _Profile(self.sizes, self.roles, self.plain, self.pinned_roles)
        result._cut = (start, stop)
        return result


def _profile(items: Sequence[ChatMessage], sizes: Sequence[int] | None = None) -> _Profile:
    """Measure every message once; a fast path handles plain ``{role, content: str}`` dicts.

    With ``sizes`` (each message's characters, measured earlier), nothing is measured again.
    """
    if sizes is not None and len(sizes) == len(items):
        return _profile_known(items, list(sizes))
    if items:
        try:
            # C-level passes: far faster than one Python-level walk per message.
            if set(map(len, items)) == {2}:
                get: Any = dict.get
                roles: list[object] = list(map(get, items, repeat("role")))
                role_set = set(roles)
                if None not in role_set and role_set.isdisjoint(_RESULT_ROLES):
                    # str.__len__ measures and checks the type in one pass; a content that is
                    # not a string raises TypeError and takes the checked path below.
                    contents = map(get, items, repeat("content"))
                    pinned_roles = tuple(role for role in _PINNED_ORDER if role in role_set)
                    return _Profile(list(map(str.__len__, contents)), roles, True, pinned_roles)
        except TypeError:
            pass  # not all dicts, or unhashable roles: the checked path below reports it
    sizes = [_walk(message, index, None) for index, message in enumerate(items)]
    return _Profile(sizes, [message.get("role") for message in items], False)


def _profile_known(items: Sequence[ChatMessage], sizes: list[int]) -> _Profile:
    """The profile of messages whose sizes are known: only roles and plainness are read."""
    get: Any = dict.get
    try:
        if items and set(map(len, items)) == {2}:
            roles: list[object] = list(map(get, items, repeat("role")))
            role_set = set(roles)
            if (
                None not in role_set
                and role_set.isdisjoint(_RESULT_ROLES)
                and set(map(type, map(get, items, repeat("content")))) == {str}
            ):
                pinned_roles = tuple(role for role in _PINNED_ORDER if role in role_set)
                return _Profile(sizes, roles, True, pinned_roles)
    except TypeError:
        pass  # not all dicts: the general profile below
    return _Profile(sizes, [message.get("role") for message in items], False)


def _indices(values: list[object], wanted: object) -> list[int]:
    """The indices of ``values`` equal to ``wanted``, found at C speed."""
    return list(compress(range(len(values)), map(eq, values, repeat(wanted))))


def _pinned_indices(
    roles: list[object],
    start: int = 0,
    stop: int | None = None,
    wanted: tuple[str, ...] = _PINNED_ORDER,
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
            found.extend(position + index for index in _indices(roles[position:stop], role))
    found.sort()
    return found


def _group_bounds(
    items: Sequence[ChatMessage], grouping: GroupingKind, profile: _Profile
) -> tuple[list[int], list[bool], list[int]]:
    """Find the groups of a measured conversation.

    Args:
        items: The messages, already checked to be a list or a tuple.
        grouping: ``"user-turn"`` or ``"message"``.
        profile: The messages' sizes and roles, from :func:`_profile`.

    Returns:
        The start of each group, whether each group is pinned, and the sorted indices of the
        pinned (system and developer) messages.
    """
    count = len(items)
    roles = profile.roles
    pinned_indices = _pinned_indices(roles, wanted=profile.pinned_roles)
    starts: list[int] = []
    pinned_groups: list[bool] = []
    if not count:
        return starts, pinned_groups, pinned_indices
    attached = None if profile.plain else _scan(items)[0]
    if grouping == "user-turn":
        starts = _indices(roles, "user")
        if attached is not None:
            starts = [index for index in starts if not attached[index]]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
            pinned_groups.append(True)
        pinned_groups.extend([False] * (len(starts) - len(pinned_groups)))
        return starts, pinned_groups, pinned_indices
    pinned = set(pinned_indices)
    if attached is None:
        starts = list(range(count))
        pinned_groups = [index in pinned for index in starts]
        return starts, pinned_groups, pinned_indices
    for index in range(count):
        if index == 0 or not attached[index]:
            if starts:
                pinned_groups.append(all(i in pinned for i in range(starts[-1], index)))
            starts.append(index)
    pinned_groups.append(all(i in pinned for i in range(starts[-1], count)))
    return starts, pinned_groups, pinned_indices


def _attachments(items: Sequence[ChatMessage]) -> list[bool]:
    """For each message, whether it must stay with the message before it (inside a tool unit)."""
    return _scan(items)[0]


def _scan(items: Sequence[ChatMessage]) -> tuple[list[bool], list[object]]:
    """One pass: whether each message is attached to the one before it, and each message's role."""
    count = len(items)
    reach = [-1] * count
    calls: dict[str, int] = {}
    attached = [False] * count
    roles: list[object] = []
    for index, message in enumerate(items):
        call_ids, result_ids, has_results, _only = _tool_info(message, index)
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


def _tool_info(message: object, index: int = 0) -> tuple[list[str], list[str], bool, bool]:
    """Return a message's call ids, result ids, whether it holds results, whether only results."""
    if not isinstance(message, Mapping):
        raise InvalidTypeError(
            "message_not_a_mapping", index=index, type_name=type(message).__name__
        )
    calls: list[str] = []
    results: list[str] = []
    role = message.get("role")
    has_results = role in _RESULT_ROLES
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


def _as_list(messages: object, name: str) -> Sequence[ChatMessage]:
    if isinstance(messages, list | tuple):
        return messages
    raise InvalidTypeError("not_a_message_list", name=name, type_name=type(messages).__name__)


def _walk(message: object, index: int, sink: list[str] | None) -> int:
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
        total = _walk_parts(content, index, "content", sink)
    elif content is not None:
        _bad_field(index, "content", content)
    refusal = message.get("refusal")
    if refusal is not None:
        total += _text(refusal, index, "refusal", sink)
    tool_calls = message.get("tool_calls")
    if tool_calls:
        if not isinstance(tool_calls, list | tuple):
            _bad_field(index, "tool_calls", tool_calls)
        for number, call in enumerate(tool_calls):
            field = f"tool_calls[{number}]"
            if not isinstance(call, Mapping):
                _bad_field(index, field, call)
            function = call.get("function")
            if function is None:
                # LangChain's dict form puts name and args on the call itself.
                total += _call(call, index, field, sink)
            elif isinstance(function, Mapping):
                total += _call(function, index, f"{field}.function", sink)
            else:
                _bad_field(index, f"{field}.function", function)
    function_call = message.get("function_call")
    if function_call is not None:
        if not isinstance(function_call, Mapping):
            _bad_field(index, "function_call", function_call)
        total += _call(function_call, index, "function_call", sink)
    return total


def _walk_parts(parts: Sequence[object], index: int, field: str, sink: list[str] | None) -> int:
    total = 0
    for number, part in enumerate(parts):
        where = f"{field}[{number}]"
        if isinstance(part, str):
            total += len(part)
            if sink is not None and part:
                sink.append(part)
            continue
        if not isinstance(part, Mapping):
            _bad_field(index, where, part)
        kind = part.get("type")
        if isinstance(kind, str) and (kind == "tool_use" or kind.endswith("_tool_use")):
            total += _text(part.get("name"), index, f"{where}.name", sink)
            if "input" in part:
                total += _text(_compact_json(part["input"]), index, f"{where}.input", sink)
        elif kind == "tool_result":
            inner = part.get("content")
            if isinstance(inner, list | tuple):
                total += _walk_parts(inner, index, f"{where}.content", sink)
            else:
                total += _text(inner, index, f"{where}.content", sink)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            inner = part.get("content")
            if isinstance(inner, list | tuple):
                total += _walk_parts(inner, index, f"{where}.content", sink)
            elif isinstance(inner, str):
                total += _text(inner, index, f"{where}.content", sink)
        elif kind == "thinking":
            total += _text(part.get("thinking"), index, f"{where}.thinking", sink)
        elif kind == "refusal":
            total += _text(part.get("refusal"), index, f"{where}.refusal", sink)
        else:
            text = part.get("text")
            if isinstance(text, str):
                total += len(text)
                if sink is not None and text:
                    sink.append(text)
            elif text is not None and kind == "text":
                _bad_field(index, f"{where}.text", text)
    return total


def _call(call: Mapping[str, Any], index: int, field: str, sink: list[str] | None) -> int:
    total = _text(call.get("name"), index, f"{field}.name", sink)
    arguments = call.get("arguments", call.get("args"))
    if isinstance(arguments, Mapping):
        arguments = _compact_json(arguments)
    return total + _text(arguments, index, f"{field}.arguments", sink)


def _text(value: object, index: int, field: str, sink: list[str] | None) -> int:
    if value is None:
        return 0
    if not isinstance(value, str):
        _bad_field(index, field, value)
    if sink is not None and value:
        sink.append(value)
    return len(value)


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _bad_field(index: int, field: str, value: object) -> NoReturn:
    raise InvalidTypeError(
        "invalid_message_field", index=index, field=field, type_name=type(value).__name__
    )
