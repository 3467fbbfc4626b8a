"""Chat messages: measuring them, grouping them, and keeping tool calls with their results.

Every function here takes messages in any of the shapes that agent stacks use, item by item and
mixed in one list (see :mod:`contextwise.shapes` and the guide "Message shapes"):

- OpenAI Chat messages and Anthropic Messages messages;
- OpenAI Responses items: ``message``, tool calls and their outputs (paired by ``call_id``),
  hosted calls, and ``reasoning`` items;
- Gemini contents (``role`` and ``parts``);
- LangChain ``BaseMessage`` objects and pydantic-ai ``ModelRequest`` / ``ModelResponse`` objects,
  read through their attributes, without importing either framework.

A message with tool calls and the messages that hold their results form one atomic **tool
unit**, and a Responses ``reasoning`` item belongs to the unit of the item that follows it. Every
grouping keeps a tool unit whole, so no operation built on it can split a call from its results,
leave a result without its call, or separate reasoning from its item. System and developer
messages are **pinned**: trimming never removes them. Position alone pins nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from contextwise._layout import (
    as_message_list,
    attachments,
    group_bounds,
    orphan_results,
    profile_messages,
)
from contextwise._translation import short_text
from contextwise.errors import ContextwiseError, InvalidValueError
from contextwise.shapes import PINNED_ROLES, PartEstimate, read_message

ChatMessage: TypeAlias = Any
"""A message in any supported shape: a mapping (OpenAI Chat, Anthropic, OpenAI Responses item,
Gemini content) or a LangChain or pydantic-ai message object."""

GroupingKind: TypeAlias = Literal["user-turn", "message", "tool-unit"]
"""How messages are grouped: by user turn; each message (or tool unit) on its own; or each
message (or tool unit) on its own with the task kept."""

GROUPINGS: Final[tuple[GroupingKind, ...]] = ("user-turn", "message", "tool-unit")
"""The supported groupings."""


def message_chars(message: ChatMessage, *, part_estimate: PartEstimate | None = None) -> int:
    """Return the number of characters of a chat message, in any supported shape.

    Text is measured exactly: the sum of the lengths of the string content, or the text of each
    text part or block; an assistant's refusal; the text of thinking blocks, reasoning summaries
    and Gemini thought parts; the name and the argument text of each tool call (structured
    arguments, such as an Anthropic ``tool_use`` input, count as their compact JSON, without
    spaces and with non-ASCII characters kept); and the text of each tool result or call output.
    Images, audio, video, files and encrypted reasoning are not free: each counts the estimate of
    ``part_estimate``. Roles, ids and signatures count zero.

    Args:
        message: A message in any supported shape.
        part_estimate: How parts without text are measured; :class:`~contextwise.PartEstimate`
            by default.

    Returns:
        The number of characters, zero or more.

    Raises:
        InvalidTypeError: When the message is neither a mapping nor a supported message object,
            or one of its fields has a type that the shape does not allow (such as a number as
            ``content``). The error reports index 0, since a single message is measured.
        InvalidValueError: When the message has no role, or a role or a Responses item type that
            no supported shape knows.

    Examples:
        >>> from contextwise import message_chars
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
        >>> message_chars({"type": "function_call_output", "call_id": "c1", "output": "Sunny"})
        5
    """
    return read_message(message, part_estimate=part_estimate).chars


def messages_chars(
    messages: Sequence[ChatMessage], *, part_estimate: PartEstimate | None = None
) -> int:
    """Return the number of characters of a list of chat messages: the sum of :func:`message_chars`.

    Args:
        messages: The messages, in any supported shapes.
        part_estimate: How parts without text are measured; :class:`~contextwise.PartEstimate`
            by default.

    Returns:
        The total number of characters.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or one message is malformed;
            the error names the index of the faulty message.
        InvalidValueError: When a message has no role, or a role or a type that no supported
            shape knows.

    Examples:
        >>> from contextwise import messages_chars
        >>> messages_chars([{"role": "system", "content": "Be brief."},
        ...                 {"role": "user", "content": "Hi"}])
        11
    """
    items = as_message_list(messages, "messages")
    return sum(profile_messages(items, estimate=part_estimate).sizes)


def message_text(message: ChatMessage) -> str:
    """Return the text that :func:`message_chars` measures, joined into one string.

    The pieces are joined with a newline, which does not count in :func:`message_chars`. Token
    counters measure a message through this text; the parts measured by an estimate have no
    text and are added to the count separately.

    Args:
        message: A message in any supported shape.

    Returns:
        The message's text pieces joined with newlines.

    Raises:
        InvalidTypeError: When the message is malformed, as for :func:`message_chars`.
        InvalidValueError: When the message has no role, or one that no shape knows.

    Examples:
        >>> from contextwise import message_text
        >>> message_text({"role": "user", "content": [
        ...     {"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {"url": "x"}},
        ...     {"type": "text", "text": "a cat"}]})
        'Look:\\na cat'
    """
    pieces: list[str] = []
    read_message(message, sink=pieces)
    return "\n".join(pieces)


def tool_call_ids(message: ChatMessage) -> tuple[str, ...]:
    """Return the ids of the tool calls that a message makes, in order.

    Each shape names its calls: OpenAI ``tool_calls`` entries, Anthropic ``tool_use`` blocks, the
    ``call_id`` of a Responses call item (``function_call``, ``custom_tool_call``,
    ``computer_call``, ``local_shell_call``...), the ``id`` of a Gemini ``functionCall``, a
    LangChain ``AIMessage.tool_calls`` entry, a pydantic-ai ``ToolCallPart``. Server-side and
    hosted tools (such as ``server_tool_use`` or ``web_search_call``) carry their result in the
    same message and are not listed, nor are Gemini calls without an id, which pair by order and
    name.

    Args:
        message: A message in any supported shape.

    Returns:
        The call ids; empty when the message makes no tool call.

    Raises:
        InvalidTypeError: When the message is malformed, as for :func:`message_chars`.
        InvalidValueError: When the message has no role, or one that no shape knows.

    Examples:
        >>> from contextwise import tool_call_ids
        >>> tool_call_ids({"role": "assistant", "content": [
        ...     {"type": "text", "text": "Let me check."},
        ...     {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x"}}]})
        ('toolu_1',)
    """
    return tuple(read_message(message).call_ids)


def tool_result_ids(message: ChatMessage) -> tuple[str, ...]:
    """Return the ids of the tool calls that a message answers, in order.

    An OpenAI ``tool`` message answers the call named by its ``tool_call_id``; an Anthropic user
    message answers one call per ``tool_result`` block, named by its ``tool_use_id``; a Responses
    output item answers its ``call_id``; a Gemini ``functionResponse`` its ``id``; a LangChain
    ``ToolMessage`` its ``tool_call_id``; a pydantic-ai ``ToolReturnPart`` its ``tool_call_id``.

    Args:
        message: A message in any supported shape.

    Returns:
        The ids of the answered calls; empty when the message holds no tool result.

    Raises:
        InvalidTypeError: When the message is malformed, as for :func:`message_chars`.
        InvalidValueError: When the message has no role, or one that no shape knows.

    Examples:
        >>> from contextwise import tool_result_ids
        >>> tool_result_ids({"role": "tool", "tool_call_id": "call_1", "content": "42"})
        ('call_1',)
    """
    return tuple(read_message(message).result_ids)


def is_pinned(message: ChatMessage) -> bool:
    """Tell whether a message is pinned: a system or developer message, which trimming keeps.

    Args:
        message: A message in any supported shape (a LangChain ``SystemMessage``, or a
            pydantic-ai request with a system prompt, is pinned too).

    Returns:
        Whether the message's role is ``system`` or ``developer``; ``False`` for a value that no
        shape recognises.

    Examples:
        >>> from contextwise import is_pinned
        >>> is_pinned({"role": "developer", "content": "Answer in French."})
        True
    """
    try:
        return read_message(message).role in PINNED_ROLES
    except ContextwiseError:
        return False


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """A run of consecutive messages that an operation keeps or removes as a whole.

    Examples:
        >>> from contextwise import group_messages
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
    """Whether trimming keeps the group: a group made only of system and developer messages (or
    the task, with the ``tool-unit`` grouping)."""

    messages: tuple[ChatMessage, ...]
    """The group's messages, the same objects as in the list."""


def group_messages(
    messages: Sequence[ChatMessage], grouping: GroupingKind = "user-turn"
) -> list[MessageGroup]:
    """Split a conversation into the groups that trimming keeps or removes as a whole.

    With ``user-turn``, a group starts at each user message that says something of its own, and
    runs until the next one. A user message that only carries tool results does not start a group,
    and neither does a user message that answers a tool call of an earlier message, even when it
    also holds text: it belongs to the tool unit of that call. The messages before the first user
    turn form an ordinary group, pinned only when it holds nothing but system and developer
    messages: an assistant greeting before the first user message can be trimmed.

    With ``message``, each message is its own group, except that a tool unit (an assistant message
    with tool calls and every message up to the last one that answers them, with the reasoning
    item before it) forms one group. A group made only of system and developer messages is
    pinned.

    With ``tool-unit``, the groups are those of ``message``, and the task is pinned: the user
    message that starts the latest turn (the last user message that is not inside a tool unit).
    Trimming a long tool loop then removes its older tool units, never what the user asked.

    In every grouping a system or developer message inside an unpinned group is still pinned:
    trimming removes the group's other messages and keeps it in place.

    Args:
        messages: The conversation, in any supported shapes.
        grouping: ``"user-turn"`` (the default), ``"message"`` or ``"tool-unit"``.

    Returns:
        The groups, in order; together they cover every message exactly once.

    Raises:
        InvalidValueError: When the grouping is unknown, or a message has no role, or a role or a
            type that no shape knows.
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> from contextwise import group_messages
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
        >>> [(g.start, g.pinned) for g in group_messages(history, "tool-unit")]
        [(0, True), (1, False), (2, False), (4, False), (5, True)]
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

    A tool unit runs from an assistant message with tool calls (or from the reasoning item before
    it) to the last message that answers one of them, and takes in every message between
    (overlapping units merge). A message holding a
    tool result whose call is not found is attached to the message before it, so that no operation
    moves it further from a call.

    Args:
        messages: The conversation, in any supported shapes.

    Returns:
        The slices of the units that span more than one message, in order.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.
        InvalidValueError: When a message has no role, or a role or a type that no shape knows.

    Examples:
        >>> from contextwise import tool_units
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
        messages: The conversation, in any supported shapes.

    Returns:
        The indices of the messages with at least one orphan result, in order.

    Raises:
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.
        InvalidValueError: When a message has no role, or a role or a type that no shape knows.

    Examples:
        >>> from contextwise import find_orphan_results
        >>> find_orphan_results([{"role": "tool", "tool_call_id": "gone", "content": "42"}])
        [0]
    """
    return orphan_results(as_message_list(messages, "messages"))


@dataclass(frozen=True, slots=True)
class MessageLayout:
    """The measured layout of a conversation: sizes, groups and pinned messages.

    It is computed in linear time, measuring each message once, and is what
    :func:`group_messages` and the policy engine build on.

    Examples:
        >>> from contextwise import layout_messages
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
    """For each message, whether it is pinned: a system or developer message, or the task with
    the ``tool-unit`` grouping."""

    estimated_parts: int = 0
    """How many parts of the messages (images, audio, files, encrypted reasoning) were measured
    by an estimate rather than exactly."""

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
    messages: Sequence[ChatMessage],
    grouping: GroupingKind = "user-turn",
    *,
    part_estimate: PartEstimate | None = None,
) -> MessageLayout:
    """Measure a conversation and find its groups in one linear pass.

    Args:
        messages: The conversation, in any supported shapes.
        grouping: ``"user-turn"`` (the default), ``"message"`` or ``"tool-unit"``; see
            :func:`group_messages`.
        part_estimate: How parts without text are measured; :class:`~contextwise.PartEstimate`
            by default.

    Returns:
        The sizes, group starts and pinned flags.

    Raises:
        InvalidValueError: When the grouping is unknown, or a message has no role, or a role or a
            type that no shape knows.
        InvalidTypeError: When ``messages`` is not a list or a tuple, or a message is malformed.

    Examples:
        >>> from contextwise import layout_messages
        >>> layout = layout_messages([{"role": "system", "content": "Hi"},
        ...                           {"role": "user", "content": "Hello"}])
        >>> layout.sizes, layout.starts, layout.pinned_groups
        ([2, 5], [0, 1], [True, False])
    """
    if grouping not in GROUPINGS:
        raise InvalidValueError(
            "unknown_grouping", grouping=short_text(grouping), supported=list(GROUPINGS)
        )
    items = as_message_list(messages, "messages")
    profile = profile_messages(items, estimate=part_estimate)
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
        estimated_parts=profile.estimated_parts,
    )
