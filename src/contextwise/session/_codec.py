"""Messages to JSON text and back: plain dicts as they are, framework objects through their JSON.

LangChain messages go through ``messages_to_dict`` / ``messages_from_dict`` and pydantic-ai
messages through ``ModelMessagesTypeAdapter``; each framework is imported only when one of its
objects is met, so neither is a dependency.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextwise._checks import MAX_DEPTH, too_deep
from contextwise._translation import short_text
from contextwise.errors import InvalidTypeError, InvalidValueError

_ENVELOPE = "__contextwise__"
_LANGCHAIN = "langchain"
_PYDANTIC_AI = "pydantic-ai"


def encode_messages(messages: Sequence[object]) -> tuple[list[Any], list[Any]]:
    """Turn messages into JSON data, the form a store holds, and into the messages a session
    hands out.

    A dict whose keys and values are all strings is copied as it is (JSON holds it); another
    dict passes through one JSON encoding and decoding, which checks it and copies it; a
    framework message becomes an envelope that names its framework and holds its own JSON, and
    is read back from it.

    Args:
        messages: Dicts that JSON can encode, LangChain messages or pydantic-ai messages.

    Returns:
        The JSON data of each message, and each message as read back from it, in order.

    Raises:
        InvalidTypeError: When a message is none of those (code ``unsupported_message_object``).
        InvalidValueError: When a dict holds a value that JSON cannot encode, a lone surrogate
            included (code ``message_not_json``), or is nested deeper than the limit (code
            ``message_too_deep``).
    """
    values: list[Any] = []
    pending: list[int] = []
    for index, message in enumerate(messages):
        if type(message) is dict and _strings_only(message):
            values.append(message.copy())
            continue
        pending.append(index)
        try:
            value = _as_data(message, index)
        except InvalidTypeError:
            raise
        except Exception as exc:
            # The framework cannot write its own message (a field set to a value it refuses).
            raise InvalidValueError(
                "message_not_json", index=index, reason=short_text(exc)
            ) from exc
        if too_deep(value):
            raise InvalidValueError("message_too_deep", index=index, limit=MAX_DEPTH)
        values.append(value)
    if pending:
        copied = _round_trip([values[index] for index in pending], pending)
        for index, value in zip(pending, copied, strict=True):
            values[index] = value
    decoded = list(values)
    for index in pending:
        if has_envelope(values[index]):
            try:
                decoded[index] = decode_message(values[index])
            except Exception as exc:
                # What the framework wrote, it cannot read back: it would not survive a store.
                raise InvalidValueError(
                    "message_not_json", index=index, reason=short_text(exc)
                ) from exc
    return values, decoded


def _strings_only(message: dict[Any, Any]) -> bool:
    """Whether every key and value of a dict is a string that UTF-8 encodes (no lone
    surrogate); ``{role, content}`` is checked first. ``False`` sends the dict through JSON,
    which names what is wrong."""
    if len(message) == 2 and type(message.get("role")) is str:
        content = message.get("content")
        return type(content) is str and encodes_utf8(content) and encodes_utf8(message["role"])
    return all(
        type(key) is str and type(value) is str and encodes_utf8(key) and encodes_utf8(value)
        for key, value in message.items()
    )


def encodes_utf8(text: str) -> bool:
    """Whether a text encodes as UTF-8 (no lone surrogate); ASCII is told at once."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_data(message: object, index: int) -> Any:
    """The JSON-ready form of a message that is not a plain dict of strings."""
    framework = _framework(message)
    if framework == _LANGCHAIN:
        # What ``messages_to_dict`` writes, with a value the message's own fields refuse as an
        # error rather than a warning: such a message could not be read back the same.
        data = {"type": message.type, "data": message.model_dump(warnings="error")}  # type: ignore[attr-defined]
        return {_ENVELOPE: _LANGCHAIN, "message": data}
    if framework == _PYDANTIC_AI:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        data = ModelMessagesTypeAdapter.dump_python([message], mode="json", warnings="error")[0]
        return {_ENVELOPE: _PYDANTIC_AI, "message": data}
    if isinstance(message, Mapping):
        return message
    raise InvalidTypeError(
        "unsupported_message_object", index=index, type_name=type(message).__name__
    )


def _round_trip(values: list[Any], indices: list[int]) -> list[Any]:
    """Copy values through JSON in one pass; name the first that JSON cannot encode."""
    try:
        copied: list[Any] = json.loads(_dumps(values))
    except (TypeError, ValueError, RecursionError):
        for index, value in zip(indices, values, strict=True):
            try:
                _dumps(value)
            except (TypeError, ValueError, RecursionError) as exc:
                raise InvalidValueError(
                    "message_not_json", index=index, reason=short_text(exc)
                ) from None
        raise
    return copied


def decode_message(value: Any) -> Any:
    """Turn JSON data written by :func:`encode_messages` back into the message it holds.

    Args:
        value: The JSON data of one message.

    Returns:
        The dict, or the LangChain or pydantic-ai message object.
    """
    if isinstance(value, dict) and len(value) == 2 and _ENVELOPE in value and "message" in value:
        if value[_ENVELOPE] == _LANGCHAIN:
            from langchain_core.messages import messages_from_dict

            return messages_from_dict([value["message"]])[0]
        if value[_ENVELOPE] == _PYDANTIC_AI:
            from pydantic_ai.messages import ModelMessagesTypeAdapter

            return ModelMessagesTypeAdapter.validate_python([value["message"]])[0]
    return value


def has_envelope(value: Any) -> bool:
    """Whether JSON data holds a framework message (so that decoding it makes a new object)."""
    return isinstance(value, dict) and _ENVELOPE in value


def _framework(message: object) -> str | None:
    """Which framework a message object comes from, judged by its class, without importing it."""
    for cls in type(message).__mro__:
        module = cls.__module__
        if module.startswith("langchain_core.messages") and cls.__name__ == "BaseMessage":
            return _LANGCHAIN
        if module == "pydantic_ai.messages" and cls.__name__ in {"ModelRequest", "ModelResponse"}:
            return _PYDANTIC_AI
    return None


def _dumps(value: object) -> str:
    """Compact JSON text that UTF-8 encodes: a lone surrogate fails here, as a store would."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not encodes_utf8(text):
        text.encode("utf-8")  # raises the UnicodeEncodeError (a ValueError) that names it
    return text
