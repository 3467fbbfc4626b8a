"""Building a summary message in the shape of the messages it replaces."""

from __future__ import annotations

import importlib
from typing import Any, Literal, TypeAlias, get_args

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.shapes._read import read_message

SummaryRole: TypeAlias = Literal["user", "assistant", "system", "developer"]
"""The roles a summary message can take."""

SUMMARY_ROLES: tuple[str, ...] = get_args(SummaryRole)


def summary_message(text: str, role: SummaryRole = "user", like: object = None) -> Any:
    """Build a message that holds a summary, in the shape of another message.

    A compressor that returns text has it wrapped by this function, in the shape of the first
    message it replaced, so that the fragment keeps one shape:

    - OpenAI Chat and Anthropic: ``{"role": role, "content": text}``;
    - OpenAI Responses: ``{"type": "message", "role": role, "content": text}``;
    - Gemini: ``{"role": "user" or "model", "parts": [{"text": text}]}`` (Gemini contents have no
      system role, so a system or developer summary is a user content);
    - LangChain: a ``HumanMessage``, an ``AIMessage`` or a ``SystemMessage``;
    - pydantic-ai: a ``ModelRequest`` with a ``UserPromptPart`` or a ``SystemPromptPart``, or a
      ``ModelResponse`` with a ``TextPart``.

    The framework classes are imported only here, when the message to imitate is one of theirs.

    Args:
        text: The summary.
        role: The summary's role.
        like: A message of the shape to build; the OpenAI Chat shape when ``None``.

    Returns:
        The summary message.

    Raises:
        InvalidValueError: When ``like`` is a message that no shape recognises, or ``role`` is
            not a summary role (code ``invalid_choice``).
        InvalidTypeError: When ``text`` is not a string (code ``not_a_string``: a NaN is no
            summary), or ``like`` is neither a mapping nor a supported object.

    Examples:
        >>> from contextwise import summary_message
        >>> summary_message("Earlier: the user asked for the weather.")
        {'role': 'user', 'content': 'Earlier: the user asked for the weather.'}
        >>> summary_message("Done.", "assistant", like={"role": "user", "parts": [{"text": "Hi"}]})
        {'role': 'model', 'parts': [{'text': 'Done.'}]}
    """
    if not isinstance(text, str):
        raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
    if role not in SUMMARY_ROLES:
        raise InvalidValueError(
            "invalid_choice", field="role", expected=list(SUMMARY_ROLES), value=short_repr(role)
        )
    shape = "openai-chat" if like is None else read_message(like).shape
    if shape == "openai-responses":
        return {"type": "message", "role": role, "content": text}
    if shape == "gemini":
        return {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]}
    if shape == "langchain":
        module = importlib.import_module("langchain_core.messages")
        name = {"user": "HumanMessage", "assistant": "AIMessage"}.get(role, "SystemMessage")
        return getattr(module, name)(content=text)
    if shape == "pydantic-ai":
        module = importlib.import_module("pydantic_ai.messages")
        if role == "assistant":
            return module.ModelResponse(parts=[module.TextPart(content=text)])
        part = module.UserPromptPart if role == "user" else module.SystemPromptPart
        return module.ModelRequest(parts=[part(content=text)])
    return {"role": role, "content": text}
