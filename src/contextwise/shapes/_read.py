"""Recognising a message's shape and reading it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from contextwise._checks import require_instance
from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.shapes._chat import read_chat
from contextwise.shapes._estimate import DEFAULT_PART_ESTIMATE, PartEstimate
from contextwise.shapes._facts import MessageFacts, MessageShape, Reader, Role, compact_json
from contextwise.shapes._gemini import read_content
from contextwise.shapes._langchain import is_langchain, read_langchain
from contextwise.shapes._pydantic_ai import is_pydantic_ai, read_pydantic_ai
from contextwise.shapes._responses import ITEM_TYPES, read_item


def read_message(
    message: object,
    index: int = 0,
    *,
    part_estimate: PartEstimate | None = None,
    sink: list[str] | None = None,
    unknown_items: Literal["error", "opaque"] = "error",
) -> MessageFacts:
    """Recognise a message's shape and read its role, size, tool calls and tool results.

    The shapes are recognised in this order: a mapping with ``parts`` is a Gemini content; a
    mapping whose ``type`` is a Responses item type other than ``message`` is a Responses item; a
    mapping with a ``role`` is a chat message (OpenAI Chat, Anthropic, or a Responses
    ``message``); an object whose class is LangChain's ``BaseMessage`` or pydantic-ai's
    ``ModelRequest`` / ``ModelResponse`` is read through its attributes.

    Args:
        message: The message, in any supported shape.
        index: The message's index in its list, for error messages.
        part_estimate: How parts without text are measured; :class:`PartEstimate` by default.
        sink: A list that receives the message's text pieces, in order.
        unknown_items: What to do with a message whose role or ``type`` no shape knows:
            ``"error"`` raises; ``"opaque"`` reads it as one assistant unit without tool calls,
            whose size is the length of its compact JSON (which the sink receives).

    Returns:
        What the message says about itself.

    Raises:
        InvalidValueError: When the message has no role (code ``missing_message_role``), or,
            unless ``unknown_items`` is ``"opaque"``, a role that its shape does not know
            (``unknown_message_role``) or a ``type`` that no shape knows
            (``unknown_message_type``).
        InvalidTypeError: When the message is neither a mapping nor a supported object
            (``message_not_a_mapping``), a field has a type its shape does not allow
            (``invalid_message_field``), or ``sink`` is not a list (``not_an_instance``).

    Examples:
        >>> from contextwise import read_message
        >>> facts = read_message({"role": "model", "parts": [
        ...     {"functionCall": {"name": "weather", "args": {"city": "Paris"}}}]})
        >>> facts.shape, facts.role, facts.chars, facts.calls
        ('gemini', 'assistant', 23, [('name', 'weather')])
        >>> item = {"type": "tool_search_call", "id": "ts_1"}
        >>> read_message(item, unknown_items="opaque").chars
        39
    """
    if sink is not None:
        require_instance(sink, list, "sink", "list")
    else:
        plain = plain_size(message)
        if plain is not None:
            shape: MessageShape = "openai-chat" if type(message) is dict else "langchain"
            return MessageFacts(shape, plain[1], chars=plain[0])
    reader = Reader(index, part_estimate or DEFAULT_PART_ESTIMATE, sink)
    mark = 0 if sink is None else len(sink)
    try:
        return _read(message, reader)
    except InvalidValueError as error:
        if unknown_items != "opaque" or error.code not in _UNKNOWN_CODES:
            raise
    if sink is not None:
        del sink[mark:]
    return opaque_facts(message, sink, index)


_UNKNOWN_CODES: Final = frozenset({"unknown_message_role", "unknown_message_type"})

_PLAIN_DICT_ROLES: Final[Mapping[str, Role]] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
}

_PLAIN_LANGCHAIN: Final[Mapping[str, Role]] = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
}

_plain_classes: dict[type, Role | None] = {}
"""The role of each class seen by :func:`plain_size`: ``None`` for a class that is never plain."""


def plain_size(message: object) -> tuple[int, Role] | None:
    """The characters and role of a plain message, or ``None`` when it is not plain.

    Plain is a dict with exactly a ``role`` (``system``, ``developer``, ``user`` or
    ``assistant``) and a string ``content``, or a LangChain ``SystemMessage``, ``HumanMessage``
    or ``AIMessage`` with a string content and no tool call: such a message measures its
    content's length, holds no tool use and starts or continues no tool unit. This is the first
    thing :func:`read_message` asks, so that the long lists of plain messages most harnesses
    keep are read without building a record for each message.
    """
    cls = type(message)
    if cls is dict:
        try:
            content = message["content"]  # type: ignore[index]
            if type(content) is str and len(message) == 2:  # type: ignore[arg-type]
                return len(content), _PLAIN_DICT_ROLES[message["role"]]  # type: ignore[index]
        except (KeyError, TypeError):
            pass  # no such key, or a role that is not a plain one (or not even hashable)
        return None
    try:
        known = _plain_classes[cls]
    except KeyError:
        known = _plain_classes.setdefault(cls, _plain_class_role(cls))
    if known is None:
        return None
    lc: Any = message  # one of LangChain's own message classes: these attributes exist
    content = lc.content
    if type(content) is not str:
        return None
    if known == "assistant":
        extra = lc.additional_kwargs
        if (
            lc.tool_calls
            or lc.invalid_tool_calls
            or type(extra) is not dict
            or extra.get("function_call") is not None
        ):
            return None
    return len(content), known


def _plain_class_role(cls: type) -> Role | None:
    if not cls.__module__.startswith("langchain_core."):
        return None
    return _PLAIN_LANGCHAIN.get(cls.__name__)


def _read(message: object, reader: Reader) -> MessageFacts:
    if isinstance(message, Mapping):
        return _read_mapping(message, reader)
    if is_langchain(message):
        return read_langchain(message, reader)
    if is_pydantic_ai(message):
        return read_pydantic_ai(message, reader)
    raise InvalidTypeError(
        "message_not_a_mapping", index=reader.index, type_name=type(message).__name__
    )


def opaque_facts(message: object, sink: list[str] | None = None, index: int = 0) -> MessageFacts:
    """The facts of an item that no shape knows, kept as one opaque unit: an assistant item
    without tool calls, measured by its compact JSON (an object by its ``str``)."""
    text = compact_json(message, index)
    if sink is not None:
        sink.append(text)
    return MessageFacts(_apparent_shape(message), "assistant", chars=len(text))


def _apparent_shape(message: object) -> MessageShape:
    if is_langchain(message):
        return "langchain"
    if is_pydantic_ai(message):
        return "pydantic-ai"
    if isinstance(message, Mapping) and "parts" in message:
        return "gemini"
    if isinstance(message, Mapping) and "role" not in message:
        return "openai-responses"
    return "openai-chat"


def _read_mapping(message: Mapping[str, Any], reader: Reader) -> MessageFacts:
    if "parts" in message and "content" not in message:
        return read_content(message, reader)
    kind = message.get("type")
    if isinstance(kind, str) and kind in ITEM_TYPES:
        return read_item(message, kind, reader)
    if "role" in message or kind in (None, "message"):
        return read_chat(message, reader)
    raise InvalidValueError("unknown_message_type", index=reader.index, type=short_repr(kind))


def message_shape(message: object) -> MessageShape:
    """Return the shape a message is recognised as.

    Args:
        message: A message in any supported shape.

    Returns:
        One of the names of :data:`MessageShape`.

    Raises:
        InvalidValueError: When no shape recognises the message, as for :func:`read_message`.
        InvalidTypeError: When the message is neither a mapping nor a supported object.

    Examples:
        >>> from contextwise import message_shape
        >>> message_shape({"type": "reasoning", "summary": []})
        'openai-responses'
        >>> message_shape({"role": "user", "content": [{"type": "text", "text": "Hi"}]})
        'openai-chat'
    """
    return read_message(message).shape


def plain_message(message: object) -> Any:
    """Return a message as JSON-ready data, for a decision model to read.

    A mapping is returned as it is. A LangChain message becomes ``{"role", "content"}`` with its
    ``tool_calls`` or ``tool_call_id``; a pydantic-ai message becomes ``{"role", "content"}``
    whose content lists its parts (``type`` is the part kind), thinking parts left out. Values
    that are not JSON become their ``str``.

    Args:
        message: A message in any supported shape.

    Returns:
        The mapping.

    Raises:
        InvalidValueError: When no shape recognises the message.
        InvalidTypeError: When the message is neither a mapping nor a supported object.

    Examples:
        >>> plain_message({"role": "user", "content": "Hi"})
        {'role': 'user', 'content': 'Hi'}
    """
    if isinstance(message, Mapping):
        return message
    facts = read_message(message)
    data: dict[str, Any] = {"role": facts.role}
    if facts.shape == "langchain":
        data["content"] = getattr(message, "content", "")
        calls = getattr(message, "tool_calls", None)
        if calls:
            data["tool_calls"] = list(calls)
        if facts.role == "tool":
            data["tool_call_id"] = getattr(message, "tool_call_id", None)
    else:
        parts = []
        for part in getattr(message, "parts", ()):
            kind = getattr(part, "part_kind", None)
            if kind == "thinking":
                continue
            entry: dict[str, Any] = {"type": kind}
            for name in ("content", "tool_name", "args", "tool_call_id"):
                value = getattr(part, name, None)
                if value is not None:
                    entry[name] = value
            parts.append(entry)
        data["content"] = parts
    result: dict[str, Any] = json.loads(compact_json(data))
    return result
