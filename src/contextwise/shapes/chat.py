"""The OpenAI Chat and Anthropic Messages shapes, and the OpenAI Responses ``message`` item: a
mapping with a ``role`` and a ``content``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes.facts import MessageFacts, MessageShape, Reader, Role
from contextwise.shapes.parts import ANTHROPIC_KINDS, RESPONSES_KINDS, read_parts

ROLES: Final[Mapping[str, Role]] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""The roles of the chat shapes; a legacy ``function`` message answers a call like ``tool``."""


def read_chat(message: Mapping[str, Any], reader: Reader) -> MessageFacts:
    """Read a chat message in the OpenAI Chat, Anthropic or Responses ``message`` shape.

    Raises:
        InvalidValueError: When the role is missing or unknown.
        InvalidTypeError: When a field has a type that the shape does not allow.
    """
    role = chat_role(message, reader.index)
    facts = MessageFacts("openai-chat", role)
    shape: MessageShape = "openai-responses" if message.get("type") == "message" else "openai-chat"
    if role == "tool":
        facts.has_results = facts.only_results = True
        reader.key(message.get("tool_call_id"), "tool_call_id", facts.results)
    content = message.get("content")
    if isinstance(content, str):
        reader.text(content, "content")
    elif isinstance(content, list | tuple):
        kinds = read_parts(content, reader, "content", facts)
        if not kinds.isdisjoint(ANTHROPIC_KINDS):
            shape = "anthropic"
        elif not kinds.isdisjoint(RESPONSES_KINDS):
            shape = "openai-responses"
    elif content is not None:
        reader.bad("content", content)
    reader.text(message.get("refusal"), "refusal")
    _tool_calls(message.get("tool_calls"), reader, facts)
    function_call = message.get("function_call")
    if function_call is not None:
        if not isinstance(function_call, Mapping):
            reader.bad("function_call", function_call)
        read_call(function_call, reader, "function_call")
    facts.shape = shape
    return reader.finish(facts)


def chat_role(message: Mapping[str, Any], index: int) -> Role:
    """The role of a chat message.

    Raises:
        InvalidValueError: When the role is missing (``missing_message_role``) or is none of the
            chat roles (``unknown_message_role``).
    """
    role = message.get("role")
    known = ROLES.get(role) if isinstance(role, str) else None
    if known is not None:
        return known
    if role is None:
        raise InvalidValueError("missing_message_role", index=index)
    raise InvalidValueError("unknown_message_role", index=index, role=short_repr(role))


def _tool_calls(tool_calls: object, reader: Reader, facts: MessageFacts) -> None:
    if not tool_calls:
        return
    if not isinstance(tool_calls, list | tuple):
        reader.bad("tool_calls", tool_calls)
    for number, call in enumerate(tool_calls):
        where = f"tool_calls[{number}]"
        if not isinstance(call, Mapping):
            reader.bad(where, call)
        reader.key(call.get("id"), f"{where}.id", facts.calls)
        function = call.get("function")
        if function is None:
            # LangChain's dict form puts name and args on the call itself.
            read_call(call, reader, where)
        elif isinstance(function, Mapping):
            read_call(function, reader, f"{where}.function")
        else:
            reader.bad(f"{where}.function", function)


def read_call(call: Mapping[str, Any], reader: Reader, where: str) -> None:
    """Measure a tool call's name and arguments (a string, or a mapping as compact JSON)."""
    reader.text(call.get("name"), f"{where}.name")
    arguments = call.get("arguments", call.get("args"))
    if isinstance(arguments, Mapping):
        reader.data(arguments)
    else:
        reader.text(arguments, f"{where}.arguments")
