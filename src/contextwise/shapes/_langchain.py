"""LangChain messages (``BaseMessage`` objects), read through their attributes without importing
LangChain.

``SystemMessage`` is pinned, ``HumanMessage`` starts a user turn, ``AIMessage.tool_calls`` are
the calls (their ``id`` pairs them) and a ``ToolMessage`` answers the call named by its
``tool_call_id``. The content is a string or a list of blocks in any of the dict shapes; the
``tool_call`` blocks of LangChain's standard content repeat ``tool_calls`` and count once.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes._chat import THINKING_BLOCKS, content_text, read_call
from contextwise.shapes._facts import FactsDraft, MessageFacts, Reader, Role, ToolCall, ToolResult
from contextwise.shapes._parts import read_parts

TYPES: Final[Mapping[str, Role]] = {
    "system": "system",
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "SystemMessageChunk": "system",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "tool",
}
"""The ``type`` of each LangChain message class and its role (``chat`` messages carry a role)."""

_CHAT_ROLES: Final[Mapping[str, Role]] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
}


def is_langchain(message: object) -> bool:
    """Tell whether an object is a LangChain message: an instance of a class named
    ``BaseMessage`` from ``langchain_core``, found without importing LangChain."""
    cls = type(message)
    if cls.__module__.startswith("langchain_core.messages"):
        return True
    return any(
        base.__name__ == "BaseMessage" and base.__module__.startswith("langchain_core")
        for base in cls.__mro__
    )


def read_langchain(message: Any, reader: Reader) -> MessageFacts:
    """Read a LangChain message.

    Raises:
        InvalidValueError: When the message's type or role is unknown (a ``RemoveMessage``, for
            example, is an instruction to LangGraph, not a message).
    """
    role = _role(message, reader.index)
    facts = FactsDraft("langchain", role)
    content = getattr(message, "content", None)
    if isinstance(content, str):
        reader.text(content, "content")
    elif isinstance(content, list | tuple):
        read_parts(content, reader, "content", facts)
    elif content is not None:
        reader.bad("content", content)
    if role == "tool":
        facts.has_results = facts.only_results = True
        reader.key(getattr(message, "tool_call_id", None), "tool_call_id", facts.results)
    elif role == "assistant":
        _calls(message, reader, facts)
    return reader.finish(facts)


def _role(message: Any, index: int) -> Role:
    kind = getattr(message, "type", None)
    if kind == "chat" or kind == "ChatMessageChunk":
        role = getattr(message, "role", None)
        known = _CHAT_ROLES.get(role) if isinstance(role, str) else None
    else:
        role = kind
        known = TYPES.get(kind) if isinstance(kind, str) else None
    if known is None:
        raise InvalidValueError("unknown_message_role", index=index, role=short_repr(role))
    return known


def _calls(message: Any, reader: Reader, facts: FactsDraft) -> None:
    """The tool calls of an AI message; calls already read from content blocks count once."""
    seen = set(facts.calls)
    for field in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(message, field, None) or ()
        if not isinstance(calls, list | tuple):
            reader.bad(field, calls)
        for number, call in enumerate(calls):
            if not isinstance(call, Mapping):
                reader.bad(f"{field}[{number}]", call)
            call_id = call.get("id")
            if isinstance(call_id, str) and call_id in seen:
                continue
            if field == "tool_calls":
                reader.key(call_id, f"{field}[{number}].id", facts.calls)
            read_call(call, reader, f"{field}[{number}]")
    extra = getattr(message, "additional_kwargs", None)
    if isinstance(extra, Mapping) and not facts.calls:
        function_call = extra.get("function_call")
        if isinstance(function_call, Mapping):
            read_call(function_call, reader, "additional_kwargs.function_call")


# --- tool uses: what the clear and clip steps read and rewrite ---------------------------------


def langchain_results(message: Any) -> list[ToolResult]:
    """The tool result of a ``ToolMessage``: its content, answering its ``tool_call_id``."""
    answered = getattr(message, "tool_call_id", None)
    if getattr(message, "type", None) not in ("tool", "ToolMessageChunk") or not isinstance(
        answered, str
    ):
        return []
    return [ToolResult(answered, answered, content_text(getattr(message, "content", None)))]


def langchain_calls(message: Any) -> list[ToolCall]:
    """The tool calls of an ``AIMessage``: its ``tool_calls``, then the ``tool_use`` blocks of
    its content that they do not list."""
    found: list[ToolCall] = []
    for call in getattr(message, "tool_calls", None) or ():
        if isinstance(call, Mapping) and isinstance(call.get("id"), str):
            name = call.get("name")
            found.append(ToolCall(call["id"], name if isinstance(name, str) else ""))
    listed = {call.key for call in found}
    content = getattr(message, "content", None)
    for block in content if isinstance(content, list) else ():
        if (
            isinstance(block, Mapping)
            and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)
            and block["id"] not in listed
        ):
            name = block.get("name")
            found.append(ToolCall(block["id"], name if isinstance(name, str) else ""))
    return found


def langchain_with_results(message: Any, texts: Mapping[int, str]) -> Any:
    """A copy of a ``ToolMessage`` whose content is the given text."""
    return message.model_copy(update={"content": texts[0]}) if 0 in texts else message


def langchain_without_inputs(message: Any, positions: AbstractSet[int]) -> Any:
    """A copy of an ``AIMessage`` whose calls at the given positions have empty arguments, in
    ``tool_calls``, in the ``tool_use`` blocks of its content and in the provider's
    ``additional_kwargs``."""
    calls = langchain_calls(message)
    cleared = {calls[position].key for position in positions if position < len(calls)}
    update: dict[str, Any] = {
        "tool_calls": [
            {**call, "args": {}} if call.get("id") in cleared else call
            for call in getattr(message, "tool_calls", None) or ()
        ]
    }
    content = getattr(message, "content", None)
    if isinstance(content, list):
        update["content"] = [
            {**block, "input": {}}
            if isinstance(block, Mapping)
            and block.get("type") == "tool_use"
            and block.get("id") in cleared
            else block
            for block in content
        ]
    extra = getattr(message, "additional_kwargs", None)
    if isinstance(extra, Mapping) and isinstance(extra.get("tool_calls"), list):
        update["additional_kwargs"] = {
            **extra,
            "tool_calls": [
                _emptied_raw_call(call)
                if isinstance(call, Mapping) and call.get("id") in cleared
                else call
                for call in extra["tool_calls"]
            ],
        }
    return message.model_copy(update=update)


def langchain_without_thinking(message: Any) -> Any | None:
    """A copy of an ``AIMessage`` without the thinking blocks of its content, or ``None`` when it
    has none or holds nothing else (a message with tool calls always holds something else)."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return None
    kept = [block for block in content if not _is_thinking(block)]
    if len(kept) == len(content) or not (kept or getattr(message, "tool_calls", None)):
        return None
    return message.model_copy(update={"content": kept})


def _is_thinking(block: object) -> bool:
    return isinstance(block, Mapping) and block.get("type") in THINKING_BLOCKS


def _emptied_raw_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    if isinstance(function, Mapping):
        return {**call, "function": {**function, "arguments": "{}"}}
    return dict(call)
