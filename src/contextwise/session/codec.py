"""Messages to JSON text and back: plain dicts as they are, framework objects through their JSON.

LangChain messages go through ``messages_to_dict`` / ``messages_from_dict`` and pydantic-ai
messages through ``ModelMessagesTypeAdapter``; each framework is imported only when one of its
objects is met, so neither is a dependency.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from contextwise.errors import InvalidTypeError, InvalidValueError

_ENVELOPE = "__contextwise__"
_LANGCHAIN = "langchain"
_PYDANTIC_AI = "pydantic-ai"


def encode_message(message: object, index: int) -> str:
    """Encode one message as JSON text.

    Args:
        message: A dict that JSON can encode, a LangChain message or a pydantic-ai message.
        index: The message's index among those added, for the error message.

    Returns:
        The JSON text.

    Raises:
        InvalidTypeError: When the message is none of those (code ``unsupported_message_object``).
        InvalidValueError: When a dict holds a value that JSON cannot encode (code
            ``message_not_json``).
    """
    framework = _framework(message)
    if framework == _LANGCHAIN:
        from langchain_core.messages import messages_to_dict

        data = messages_to_dict([message])[0]  # type: ignore[list-item]
        return _dumps({_ENVELOPE: _LANGCHAIN, "message": data}, index)
    if framework == _PYDANTIC_AI:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        data = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
        return _dumps({_ENVELOPE: _PYDANTIC_AI, "message": data}, index)
    if not isinstance(message, Mapping):
        raise InvalidTypeError(
            "unsupported_message_object", index=index, type_name=type(message).__name__
        )
    return _dumps(dict(message), index)


def decode_message(data: str) -> Any:
    """Decode JSON text written by :func:`encode_message` into the message it encodes.

    Args:
        data: The JSON text.

    Returns:
        A dict, or the LangChain or pydantic-ai message object.
    """
    value = json.loads(data)
    if isinstance(value, dict) and len(value) == 2 and _ENVELOPE in value and "message" in value:
        if value[_ENVELOPE] == _LANGCHAIN:
            from langchain_core.messages import messages_from_dict

            return messages_from_dict([value["message"]])[0]
        if value[_ENVELOPE] == _PYDANTIC_AI:
            from pydantic_ai.messages import ModelMessagesTypeAdapter

            return ModelMessagesTypeAdapter.validate_python([value["message"]])[0]
    return value


def _framework(message: object) -> str | None:
    """Which framework a message object comes from, judged by its class, without importing it."""
    for cls in type(message).__mro__:
        module = cls.__module__
        if module.startswith("langchain_core.messages") and cls.__name__ == "BaseMessage":
            return _LANGCHAIN
        if module == "pydantic_ai.messages" and cls.__name__ in {"ModelRequest", "ModelResponse"}:
            return _PYDANTIC_AI
    return None


def _dumps(value: object, index: int) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError("message_not_json", index=index, reason=str(exc)) from None
