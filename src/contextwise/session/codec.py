"""Messages to JSON text and back: plain dicts as they are, framework objects through their JSON.

LangChain messages go through ``messages_to_dict`` / ``messages_from_dict`` and pydantic-ai
messages through ``ModelMessagesTypeAdapter``; each framework is imported only when one of its
objects is met, so neither is a dependency.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError, InvalidValueError

_ENVELOPE = "__contextwise__"
_LANGCHAIN = "langchain"
_PYDANTIC_AI = "pydantic-ai"


def encode_messages(messages: Sequence[object]) -> list[Any]:
    """Turn messages into JSON data, the form a store holds: a fresh copy that JSON can encode.

    Plain dicts pass through one JSON encoding and decoding, which checks them and copies them;
    a framework message becomes an envelope that names its framework and holds its own JSON.

    Args:
        messages: Dicts that JSON can encode, LangChain messages or pydantic-ai messages.

    Returns:
        The JSON data of each message, in order.

    Raises:
        InvalidTypeError: When a message is none of those (code ``unsupported_message_object``).
        InvalidValueError: When a dict holds a value that JSON cannot encode (code
            ``message_not_json``).
    """
    values: list[Any] = []
    for index, message in enumerate(messages):
        if type(message) is dict:
            values.append(message)
            continue
        framework = _framework(message)
        if framework == _LANGCHAIN:
            from langchain_core.messages import messages_to_dict

            data = messages_to_dict([message])[0]  # type: ignore[list-item]
            values.append({_ENVELOPE: _LANGCHAIN, "message": data})
        elif framework == _PYDANTIC_AI:
            from pydantic_ai.messages import ModelMessagesTypeAdapter

            data = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
            values.append({_ENVELOPE: _PYDANTIC_AI, "message": data})
        elif isinstance(message, Mapping):
            values.append(message)
        else:
            raise InvalidTypeError(
                "unsupported_message_object", index=index, type_name=type(message).__name__
            )
    try:
        copied: list[Any] = json.loads(_dumps(values))
    except (TypeError, ValueError):
        for index, value in enumerate(values):
            try:
                _dumps(value)
            except (TypeError, ValueError) as exc:
                raise InvalidValueError("message_not_json", index=index, reason=str(exc)) from None
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
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
