"""What contextwise reads from one message, whatever its shape: the record every shape fills."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final, Literal, NoReturn, TypeAlias

from contextwise._checks import MAX_DEPTH, too_deep
from contextwise._translation import short_text
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.shapes._estimate import PartEstimate

MessageShape: TypeAlias = Literal[
    "openai-chat", "anthropic", "openai-responses", "gemini", "langchain", "pydantic-ai"
]
"""The message shapes that contextwise reads:

- ``openai-chat``: an OpenAI Chat Completions message (a mapping with a ``role``);
- ``anthropic``: an Anthropic Messages message (a ``role`` and a list of content blocks);
- ``openai-responses``: an OpenAI Responses item (a mapping with a ``type``, such as
  ``function_call`` or ``reasoning``);
- ``gemini``: a Gemini content (a mapping with a ``role`` and ``parts``);
- ``langchain``: a LangChain ``BaseMessage`` object;
- ``pydantic-ai``: a pydantic-ai ``ModelRequest`` or ``ModelResponse`` object.
"""

Role: TypeAlias = Literal["system", "developer", "user", "assistant", "tool"]
"""The role of a message once its shape is read: ``tool`` is a message that answers tool calls."""

PINNED_ROLES: Final[frozenset[str]] = frozenset({"system", "developer"})
"""The roles that are never removed: system and developer messages."""

CallKey: TypeAlias = str | tuple[str, str]
"""What pairs a call with its result: the call id, or ``("name", name)`` for a Gemini call
without an id, which pairs by order and name."""


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """What one message says about its size and its place among the others.

    Examples:
        >>> from contextwise import read_message
        >>> facts = read_message({"type": "function_call", "call_id": "c1", "name": "add",
        ...                       "arguments": '{"a":1}'})
        >>> facts.shape, facts.role, facts.chars, facts.call_ids
        ('openai-responses', 'assistant', 10, ['c1'])
    """

    shape: MessageShape
    """The shape the message was recognised as."""

    role: Role
    """The message's role."""

    chars: int = 0
    """The characters of its text, plus the estimate of its parts without text."""

    estimated_parts: int = 0
    """How many of its parts were measured by an estimate (images, audio, files, encrypted
    reasoning)."""

    estimated_chars: int = 0
    """The characters of :attr:`chars` that come from estimates rather than from text."""

    calls: list[CallKey] = field(default_factory=list)
    """The keys of the tool calls it makes, in order."""

    results: list[CallKey] = field(default_factory=list)
    """The keys of the tool calls it answers, in order."""

    has_results: bool = False
    """Whether it holds a tool result."""

    only_results: bool = False
    """Whether it holds tool results and nothing of its own."""

    leads: bool = False
    """Whether it must stay with the message that follows it (a Responses ``reasoning`` item)."""

    @property
    def call_ids(self) -> list[str]:
        """The ids of the tool calls it makes (calls without an id are left out)."""
        return [key for key in self.calls if isinstance(key, str)]

    @property
    def result_ids(self) -> list[str]:
        """The ids of the tool calls it answers (results without an id are left out)."""
        return [key for key in self.results if isinstance(key, str)]


@dataclass(slots=True)
class FactsDraft:
    """What a shape has read of one message so far: its record before the sizes are added.

    :meth:`Reader.finish` turns it into the message's :class:`MessageFacts`.
    """

    shape: MessageShape
    role: Role
    calls: list[CallKey] = field(default_factory=list)
    results: list[CallKey] = field(default_factory=list)
    has_results: bool = False
    only_results: bool = False
    leads: bool = False


class Reader:
    """Accumulates one message's size, and its text pieces when asked, while a shape reads it.

    Args:
        index: The message's index in its list, for error messages.
        estimate: How parts without text are measured.
        sink: The list that receives the message's text pieces, or ``None``.
    """

    __slots__ = ("chars", "depth", "estimate", "estimated", "estimated_chars", "index", "sink")

    def __init__(self, index: int, estimate: PartEstimate, sink: list[str] | None) -> None:
        self.index = index
        self.estimate = estimate
        self.sink = sink
        self.chars = 0
        self.estimated = 0
        self.estimated_chars = 0
        self.depth = 2  # the message and its content list

    def text(self, value: object, where: str) -> None:
        """Count a text field: ``None`` counts zero, a string its length, anything else is an
        error."""
        if value is None:
            return
        if not isinstance(value, str):
            self.bad(where, value)
        self.chars += len(value)
        if self.sink is not None and value:
            self.sink.append(value)

    def data(self, value: object) -> None:
        """Count structured data (tool arguments, results) as its compact JSON text."""
        self.text(value if isinstance(value, str) else compact_json(value, self.index), "")

    def key(self, value: object, where: str, keys: list[CallKey]) -> None:
        """Record a tool call's id: a string, or none at all. Any other value (an integer id)
        would pair with nothing, so it is an error rather than a call left unpaired."""
        if value is None:
            return
        if not isinstance(value, str):
            self.bad(where, value)
        keys.append(value)

    def part(self, chars: int) -> None:
        """Count a part measured by an estimate."""
        self.chars += chars
        self.estimated += 1
        self.estimated_chars += chars

    def bad(self, where: str, value: object) -> NoReturn:
        """Raise the error of a field whose type the shape does not allow."""
        raise InvalidTypeError(
            "invalid_message_field",
            index=self.index,
            field=where,
            type_name=type(value).__name__,
        )

    def finish(self, draft: FactsDraft) -> MessageFacts:
        """The message's record: what the shape read, with the sizes read so far."""
        return MessageFacts(
            draft.shape,
            draft.role,
            chars=self.chars,
            estimated_parts=self.estimated,
            estimated_chars=self.estimated_chars,
            calls=draft.calls,
            results=draft.results,
            has_results=draft.has_results,
            only_results=draft.only_results,
            leads=draft.leads,
        )


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result that a message holds, as the ``clear`` and ``clip`` steps and
    :func:`~contextwise.recall` read it."""

    key: CallKey
    """What pairs it with its call: the call id, or ``("name", name)``."""

    ref: str
    """What names it for :func:`~contextwise.recall`: the call id, or ``name@digest`` for a
    Gemini result without an id (the digest is the start of the SHA-256 of its response)."""

    text: str
    """Its text, as :func:`~contextwise.recall` returns it."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call that a message makes."""

    key: CallKey
    """What pairs it with its results: the call id, or ``("name", name)``."""

    name: str
    """The name of the tool it calls."""


def compact_json(value: object, index: int = 0) -> str:
    """The compact JSON text of a value: no spaces, non-ASCII characters kept, other objects as
    their ``str``.

    Args:
        value: Structured data of a message (tool arguments or results), or a whole item.
        index: The message's index, for errors.

    Raises:
        InvalidValueError: When the value is nested deeper than the limit (code
            ``message_too_deep``), or JSON cannot encode it: a container that holds itself, a
            key that is not a string or number, an integer of more than 4,300 digits (code
            ``message_value_not_json``).
    """
    if too_deep(value):
        raise InvalidValueError("message_too_deep", index=index, limit=MAX_DEPTH)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except Exception as exc:
        # A cycle, a tuple key, a huge int, or an object whose str() fails.
        raise InvalidValueError(
            "message_value_not_json", index=index, reason=short_text(exc)
        ) from exc
