"""pydantic-ai messages (``ModelRequest`` and ``ModelResponse`` objects), read through their
attributes without importing pydantic-ai.

A request that carries a ``SystemPromptPart`` is pinned as a whole; a request with a
``UserPromptPart`` starts a user turn. A ``ToolCallPart`` is a call, answered by the
``ToolReturnPart`` (or the ``RetryPromptPart`` naming a tool) with the same ``tool_call_id``.
Built-in tool calls carry their result in the same response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Any, Final

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes._estimate import DEFAULT_PART_ESTIMATE, PartKind
from contextwise.shapes._facts import FactsDraft, MessageFacts, Reader, Role, ToolCall, ToolResult
from contextwise.shapes._parts import read_parts

_MEDIA: Final[Mapping[str, PartKind]] = {
    "image-url": "image",
    "audio-url": "audio",
    "video-url": "video",
    "document-url": "file",
}
_RESULTS: Final = frozenset({"tool-return", "retry-prompt"})


def is_pydantic_ai(message: object) -> bool:
    """Tell whether an object is a pydantic-ai ``ModelRequest`` or ``ModelResponse``, found
    without importing pydantic-ai."""
    cls = type(message)
    return cls.__name__ in ("ModelRequest", "ModelResponse") and cls.__module__.startswith(
        "pydantic_ai"
    )


def read_pydantic_ai(message: Any, reader: Reader) -> MessageFacts:
    """Read a pydantic-ai request or response.

    Raises:
        InvalidValueError: When the message's ``kind`` is neither ``request`` nor ``response``.
        InvalidTypeError: When ``parts`` is not a list.
    """
    kind = getattr(message, "kind", None)
    if kind not in ("request", "response"):
        raise InvalidValueError("unknown_message_role", index=reader.index, role=short_repr(kind))
    parts = getattr(message, "parts", None)
    if not isinstance(parts, Sequence):
        reader.bad("parts", parts)
    facts = FactsDraft("pydantic-ai", "assistant" if kind == "response" else "user")
    kinds: set[str] = set()
    for number, part in enumerate(parts):
        part_kind = getattr(part, "part_kind", None)
        kinds.add(part_kind if isinstance(part_kind, str) else "")
        where = f"parts[{number}]"
        if kind == "request":
            _request_part(part, part_kind, reader, where, facts)
        else:
            _response_part(part, part_kind, reader, where, facts)
    reader.text(getattr(message, "instructions", None), "instructions")
    if kind == "request":
        facts.role = _request_role(kinds, facts)
    return reader.finish(facts)


def _request_role(kinds: set[str], facts: FactsDraft) -> Role:
    if "system-prompt" in kinds:
        return "system"
    if facts.has_results and kinds <= _RESULTS:
        facts.only_results = True
        return "tool"
    return "user"


def _request_part(part: Any, kind: object, reader: Reader, where: str, facts: FactsDraft) -> None:
    content = getattr(part, "content", None)
    if kind in _RESULTS and (kind == "tool-return" or getattr(part, "tool_name", None)):
        facts.has_results = True
        call_id = getattr(part, "tool_call_id", None)
        if isinstance(call_id, str):
            facts.results.append(call_id)
        _value(content, reader, where)
    elif kind == "user-prompt" and isinstance(content, Sequence) and not isinstance(content, str):
        for item in content:
            _user_content(item, reader, where)
    else:
        _value(content, reader, where)


def _response_part(
    part: Any, kind: object, reader: Reader, where: str, facts: FactsDraft
) -> None:
    if kind in ("tool-call", "builtin-tool-call"):
        if kind == "tool-call":
            call_id = getattr(part, "tool_call_id", None)
            if isinstance(call_id, str):
                facts.calls.append(call_id)
        reader.text(getattr(part, "tool_name", None), f"{where}.tool_name")
        args = getattr(part, "args", None)
        if args is not None:
            reader.data(args)
    elif kind == "file":
        _user_content(getattr(part, "content", None), reader, where)
    else:
        _value(getattr(part, "content", None), reader, where)


def _value(content: object, reader: Reader, where: str) -> None:
    """Text counts its length; media objects are estimated; other data counts its JSON."""
    if content is None or isinstance(content, str):
        reader.text(content, where)
    elif isinstance(content, list | tuple):
        for item in content:
            _user_content(item, reader, where)
    elif hasattr(content, "kind") and not isinstance(content, Mapping):
        _user_content(content, reader, where)
    else:
        reader.data(content)


def _user_content(item: object, reader: Reader, where: str) -> None:
    """One item of a user prompt: text, a URL to a medium, or binary content."""
    if isinstance(item, str):
        reader.text(item, where)
        return
    if isinstance(item, Mapping):
        read_parts([item], reader, where, FactsDraft("pydantic-ai", "user"))
        return
    kind = getattr(item, "kind", None)
    estimate = reader.estimate
    media = _MEDIA.get(kind) if isinstance(kind, str) else None
    if media == "image":
        reader.part(estimate.image_chars(_string(getattr(item, "url", None)), "openai"))
    elif media is not None:
        reader.part(estimate.flat_chars(media))
    elif kind in ("binary", "uploaded-file"):
        _binary(item, reader)
    elif kind == "text-content":
        reader.text(getattr(item, "content", None), where)
    elif kind != "cache-point":
        reader.data(item)


def _binary(item: object, reader: Reader) -> None:
    media_type = getattr(item, "media_type", None)
    family = media_type.split("/", 1)[0] if isinstance(media_type, str) else ""
    estimate = reader.estimate
    if family == "image":
        data = getattr(item, "data", None)
        reader.part(estimate.image_chars(data if isinstance(data, bytes) else None, "openai"))
    elif family in ("audio", "video"):
        reader.part(estimate.flat_chars("audio" if family == "audio" else "video"))
    else:
        reader.part(estimate.flat_chars("file"))


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


# --- tool uses: what the clear and clip steps read and rewrite ---------------------------------


def pydantic_ai_results(message: Any) -> list[ToolResult]:
    """The tool results of a ``ModelRequest``: its ``ToolReturnPart`` parts and the
    ``RetryPromptPart`` parts that name a tool, in order."""
    found: list[ToolResult] = []
    for part in _result_parts(message):
        pieces: list[str] = []
        _value(part.content, Reader(0, DEFAULT_PART_ESTIMATE, pieces), "content")
        found.append(ToolResult(part.tool_call_id, part.tool_call_id, "\n".join(pieces)))
    return found


def pydantic_ai_calls(message: Any) -> list[ToolCall]:
    """The tool calls of a ``ModelResponse``: its ``ToolCallPart`` parts, in order."""
    return [ToolCall(part.tool_call_id, str(part.tool_name)) for part in _call_parts(message)]


def pydantic_ai_with_results(message: Any, texts: Mapping[int, str]) -> Any:
    """A copy of a ``ModelRequest`` whose results at the given positions hold the given texts."""
    results = _result_parts(message)
    new = {id(results[position]): text for position, text in texts.items()}
    parts = [
        replace(part, content=new[id(part)]) if id(part) in new else part for part in message.parts
    ]
    return replace(message, parts=parts)


def pydantic_ai_without_inputs(message: Any, positions: AbstractSet[int]) -> Any:
    """A copy of a ``ModelResponse`` whose calls at the given positions have empty arguments:
    ``"{}"`` for a string, ``{}`` otherwise."""
    calls = _call_parts(message)
    chosen = {id(calls[position]) for position in positions if position < len(calls)}
    parts = [
        replace(part, args="{}" if isinstance(part.args, str) else {})
        if id(part) in chosen
        else part
        for part in message.parts
    ]
    return replace(message, parts=parts)


def pydantic_ai_without_thinking(message: Any) -> Any | None:
    """A copy of a ``ModelResponse`` without its ``ThinkingPart`` parts, or ``None`` when it has
    none or holds nothing else. Its tool calls lose their provider item ``id``, which may tie
    them to the reasoning that produced them."""
    if getattr(message, "kind", None) != "response":
        return None
    parts = list(message.parts)
    kept = [part for part in parts if getattr(part, "part_kind", None) != "thinking"]
    if len(kept) == len(parts) or not kept:
        return None
    kept = [
        replace(part, id=None)
        if getattr(part, "part_kind", None) == "tool-call" and getattr(part, "id", None)
        else part
        for part in kept
    ]
    return replace(message, parts=kept)


def _result_parts(message: Any) -> list[Any]:
    if getattr(message, "kind", None) != "request":
        return []
    return [
        part
        for part in message.parts
        if getattr(part, "part_kind", None) in _RESULTS
        and (getattr(part, "part_kind", None) == "tool-return" or getattr(part, "tool_name", None))
        and isinstance(getattr(part, "tool_call_id", None), str)
    ]


def _call_parts(message: Any) -> list[Any]:
    if getattr(message, "kind", None) != "response":
        return []
    return [
        part
        for part in message.parts
        if getattr(part, "part_kind", None) == "tool-call"
        and isinstance(getattr(part, "tool_call_id", None), str)
    ]
