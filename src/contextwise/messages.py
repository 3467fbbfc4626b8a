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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from contextwise._layout import (
    PINNED_ROLES,
    as_message_list,
    attachments,
    group_bounds,
    measure_message,
    profile_messages,
    tool_info,
)
from contextwise.errors import InvalidValueError

ChatMessage: TypeAlias = Mapping[str, Any]
"""A chat message: a mapping in the OpenAI or the Anthropic shape."""

GroupingKind: TypeAlias = Literal["user-turn", "message"]
"""How messages are grouped: by user turn, or each message (or tool unit) on its own."""

GROUPINGS: Final[tuple[GroupingKind, ...]] = ("user-turn", "message")
"""The supported groupings."""


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
    return measure_message(message, 0, None)


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
    items = as_message_list(messages, "messages")
    return sum(measure_message(message, index, None) for index, message in enumerate(items))


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
    measure_message(message, 0, pieces)
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
    calls, _results, _has_results, _only_results = tool_info(message)
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
    _calls, results, _has_results, _only_results = tool_info(message)
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
    items = as_message_list(messages, "messages")
    attached = attachments(items)
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
    items = as_message_list(messages, "messages")
    seen: set[str] = set()
    orphans: list[int] = []
    for index, message in enumerate(items):
        calls, results, _has_results, _only_results = tool_info(message, index)
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
    items = as_message_list(messages, "messages")
    profile = profile_messages(items)
    starts, pinned_groups, pinned_indices = group_bounds(items, grouping, profile)
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
