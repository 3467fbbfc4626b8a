"""The OpenAI Chat and Anthropic Messages shapes, and the OpenAI Responses ``message`` item: a
mapping with a ``role`` and a ``content``."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, TypeGuard

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes._estimate import DEFAULT_PART_ESTIMATE
from contextwise.shapes._facts import (
    FactsDraft,
    MessageFacts,
    MessageShape,
    Reader,
    Role,
    ToolCall,
    ToolResult,
)
from contextwise.shapes._parts import ANTHROPIC_KINDS, RESPONSES_KINDS, read_parts

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
    facts = FactsDraft("openai-chat", role)
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


def _tool_calls(tool_calls: object, reader: Reader, facts: FactsDraft) -> None:
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


# --- tool uses: what the clear and clip steps read and rewrite ---------------------------------

THINKING_BLOCKS: Final[frozenset[str]] = frozenset({"thinking", "redacted_thinking"})
"""The Anthropic block types that hold a model's thinking."""


def chat_results(message: Mapping[str, Any]) -> list[ToolResult]:
    """The tool results of a chat message: a ``tool`` message's content, then each Anthropic
    ``tool_result`` block, in order; a result without a call id is left out."""
    found: list[ToolResult] = []
    if message.get("role") in ("tool", "function"):
        answered = message.get("tool_call_id")
        if isinstance(answered, str):
            found.append(ToolResult(answered, answered, content_text(message.get("content"))))
        return found
    for block in _result_blocks(message):
        answered = block.get("tool_use_id")
        if isinstance(answered, str):
            found.append(ToolResult(answered, answered, content_text(block.get("content"))))
    return found


def chat_calls(message: Mapping[str, Any]) -> list[ToolCall]:
    """The tool calls of a chat message: its ``tool_calls`` entries, then its ``tool_use``
    blocks, in order; a call without an id is left out."""
    found: list[ToolCall] = []
    for call in _call_entries(message):
        function = call.get("function")
        source = function if isinstance(function, Mapping) else call
        name = source.get("name")
        found.append(ToolCall(call["id"], name if isinstance(name, str) else ""))
    for block in _use_blocks(message):
        name = block.get("name")
        found.append(ToolCall(block["id"], name if isinstance(name, str) else ""))
    return found


def chat_with_results(message: Mapping[str, Any], texts: Mapping[int, str]) -> dict[str, Any]:
    """A copy of a chat message whose results at the given positions (those of
    :func:`chat_results`) hold the given texts instead of their content."""
    if message.get("role") in ("tool", "function"):
        return {**message, "content": texts[0]} if 0 in texts else dict(message)
    position = 0
    content: list[Any] = []
    for part in message.get("content") or ():
        if _is_block(part, "tool_result") and isinstance(part.get("tool_use_id"), str):
            if position in texts:
                part = {**part, "content": texts[position]}
            position += 1
        content.append(part)
    return {**message, "content": content}


def chat_without_inputs(message: Mapping[str, Any], positions: AbstractSet[int]) -> dict[str, Any]:
    """A copy of a chat message whose calls at the given positions (those of :func:`chat_calls`)
    have empty arguments: ``"{}"`` for a string, ``{}`` for an object."""
    position = 0
    calls: list[Any] = []
    for call in message.get("tool_calls") or ():
        if _has_id(call):
            if position in positions:
                call = _emptied_call(call)
            position += 1
        calls.append(call)
    copy = dict(message)
    if calls:
        copy["tool_calls"] = calls
    content = message.get("content")
    if isinstance(content, list | tuple):
        blocks: list[Any] = []
        for part in content:
            if _is_block(part, "tool_use") and isinstance(part.get("id"), str):
                if position in positions:
                    part = {**part, "input": {}}
                position += 1
            blocks.append(part)
        copy["content"] = blocks
    return copy


def chat_without_thinking(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of a chat message without its thinking blocks, or ``None`` when it has none or
    holds nothing else."""
    content = message.get("content")
    if not isinstance(content, list | tuple):
        return None
    kept = [part for part in content if not _is_thinking(part)]
    if len(kept) == len(content) or not kept:
        return None
    return {**message, "content": kept}


def content_text(content: object) -> str:
    """The text of a content (a string, or a list of parts), its pieces joined by newlines."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    if isinstance(content, list | tuple):
        reader = Reader(0, DEFAULT_PART_ESTIMATE, pieces)
        read_parts(content, reader, "content", FactsDraft("openai-chat", "tool"))
    return "\n".join(pieces)


def _is_block(part: object, kind: str) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(part, Mapping) and part.get("type") == kind


def _is_thinking(part: object) -> bool:
    return isinstance(part, Mapping) and part.get("type") in THINKING_BLOCKS


def _has_id(call: object) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(call, Mapping) and isinstance(call.get("id"), str)


def _call_entries(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [call for call in message.get("tool_calls") or () if _has_id(call)]


def _blocks(message: Mapping[str, Any], kind: str, key: str) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list | tuple):
        return []
    return [part for part in content if _is_block(part, kind) and isinstance(part.get(key), str)]


def _result_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _blocks(message, "tool_result", "tool_use_id")


def _use_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _blocks(message, "tool_use", "id")


def _emptied_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call entry with empty arguments, in the form it had."""
    function = call.get("function")
    if isinstance(function, Mapping):
        return {**call, "function": {**function, "arguments": "{}"}}
    arguments = call.get("args", call.get("arguments"))
    key = "args" if "args" in call else "arguments"
    return {**call, key: "{}" if isinstance(arguments, str) else {}}
