"""The Gemini shape: a content with a ``role`` (``user`` or ``model``) and a list of ``parts``.

Parts are read in both spellings, the REST API's (``functionCall``, ``inlineData``) and the Python
SDK's (``function_call``, ``inline_data``). A ``functionResponse`` answers the ``functionCall``
with the same ``id``; without ids, it answers the oldest unanswered call with the same name.
Thought parts count their text; a ``thoughtSignature`` is a signature, not content, and counts
zero.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes._facts import (
    CallKey,
    FactsDraft,
    MessageFacts,
    Reader,
    Role,
    ToolCall,
    ToolResult,
    compact_json,
)

ROLES: Final[Mapping[str, Role]] = {
    "user": "user",
    "model": "assistant",
    "function": "tool",
    "tool": "tool",
}
"""The roles of Gemini contents; ``function`` is the role of function responses in older APIs."""


def read_content(content: Mapping[str, Any], reader: Reader) -> MessageFacts:
    """Read a Gemini content.

    Raises:
        InvalidValueError: When the role is missing or unknown.
        InvalidTypeError: When ``parts`` is not a list or a part is malformed.
    """
    role = _role(content, reader.index)
    facts = FactsDraft("gemini", role)
    parts = content.get("parts")
    if not isinstance(parts, list | tuple):
        reader.bad("parts", parts)
    other = False
    for number, part in enumerate(parts):
        where = f"parts[{number}]"
        if not isinstance(part, Mapping):
            reader.bad(where, part)
        response = _field(part, "functionResponse", "function_response")
        if isinstance(response, Mapping):
            facts.has_results = True
            facts.results.append(_call_key(response, reader, f"{where}.functionResponse"))
            reader.data(response.get("response"))
            continue
        other = True
        _part(part, reader, where, facts)
    facts.only_results = facts.has_results and not other
    if role == "tool":
        facts.has_results = facts.only_results = True
    return reader.finish(facts)


def _role(content: Mapping[str, Any], index: int) -> Role:
    role = content.get("role")
    known = ROLES.get(role) if isinstance(role, str) else None
    if known is not None:
        return known
    if role is None:
        raise InvalidValueError("missing_message_role", index=index)
    raise InvalidValueError("unknown_message_role", index=index, role=short_repr(role))


def _part(part: Mapping[str, Any], reader: Reader, where: str, facts: FactsDraft) -> None:
    reader.text(part.get("text"), f"{where}.text")
    call = _field(part, "functionCall", "function_call")
    if isinstance(call, Mapping):
        facts.calls.append(_call_key(call, reader, f"{where}.functionCall"))
        reader.text(call.get("name"), f"{where}.functionCall.name")
        if call.get("args") is not None:
            reader.data(call["args"])
    data = _field(part, "inlineData", "inline_data")
    if isinstance(data, Mapping):
        _media(data, data.get("data"), reader)
    uri = _field(part, "fileData", "file_data")
    if isinstance(uri, Mapping):
        _media(uri, None, reader)
    code = _field(part, "executableCode", "executable_code")
    if isinstance(code, Mapping):
        reader.text(code.get("code"), f"{where}.executableCode.code")
    result = _field(part, "codeExecutionResult", "code_execution_result")
    if isinstance(result, Mapping):
        reader.text(result.get("output"), f"{where}.codeExecutionResult.output")


def _media(blob: Mapping[str, Any], data: object, reader: Reader) -> None:
    mime = _field(blob, "mimeType", "mime_type")
    kind = mime.split("/", 1)[0] if isinstance(mime, str) else ""
    estimate = reader.estimate
    if kind == "image":
        payload = data if isinstance(data, str | bytes) else None
        reader.part(estimate.image_chars(payload, "gemini"))
    elif kind in ("audio", "video"):
        reader.part(estimate.flat_chars("audio" if kind == "audio" else "video"))
    else:
        reader.part(estimate.flat_chars("file"))


def _field(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = part.get(camel)
    return part.get(snake) if value is None else value


def _call_key(call: Mapping[str, Any], reader: Reader | None = None, where: str = "") -> CallKey:
    """A call's id, or its name for pairing by order and name; when reading a message, an id
    that is not a string would pair with nothing, so it is an error."""
    call_id = call.get("id")
    if reader is not None and call_id is not None and not isinstance(call_id, str):
        reader.bad(f"{where}.id", call_id)
    if isinstance(call_id, str) and call_id:
        return call_id
    name = call.get("name")
    return ("name", name if isinstance(name, str) else "")


# --- tool uses: what the clear and clip steps read and rewrite ---------------------------------


def content_results(content: Mapping[str, Any]) -> list[ToolResult]:
    """The function responses of a Gemini content, in order. A response without an id is named
    ``name@digest``, the digest being the start of the SHA-256 of its response's JSON."""
    found: list[ToolResult] = []
    for _, response in _responses(content):
        key = _call_key(response)
        value = response.get("response")
        ref = key if isinstance(key, str) else f"{key[1]}@{_digest(value)}"
        found.append(ToolResult(key, ref, _response_text(value)))
    return found


def content_calls(content: Mapping[str, Any]) -> list[ToolCall]:
    """The function calls of a Gemini content, in order."""
    found: list[ToolCall] = []
    for part in _parts(content):
        call = _field(part, "functionCall", "function_call")
        if isinstance(call, Mapping):
            name = call.get("name")
            found.append(ToolCall(_call_key(call), name if isinstance(name, str) else ""))
    return found


def content_with_results(content: Mapping[str, Any], texts: Mapping[int, str]) -> dict[str, Any]:
    """A copy of a Gemini content whose function responses at the given positions hold
    ``{"output": text}`` as their response."""
    parts = list(_parts(content))
    for position, (index, response) in enumerate(_responses(content)):
        if position in texts:
            key = "functionResponse" if "functionResponse" in parts[index] else "function_response"
            parts[index] = {
                **parts[index],
                key: {**response, "response": {"output": texts[position]}},
            }
    return {**content, "parts": parts}


def content_without_inputs(
    content: Mapping[str, Any], positions: AbstractSet[int]
) -> dict[str, Any]:
    """A copy of a Gemini content whose function calls at the given positions have ``{}`` as
    their arguments."""
    parts: list[Any] = []
    position = 0
    for part in _parts(content):
        call = _field(part, "functionCall", "function_call")
        if isinstance(call, Mapping):
            if position in positions:
                key = "functionCall" if "functionCall" in part else "function_call"
                part = {**part, key: {**call, "args": {}}}
            position += 1
        parts.append(part)
    return {**content, "parts": parts}


def content_without_thinking(content: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of a Gemini content without its thought parts, or ``None`` when it has none or
    holds nothing else."""
    parts = list(_parts(content))
    kept = [part for part in parts if part.get("thought") is not True]
    if len(kept) == len(parts) or not kept:
        return None
    return {**content, "parts": kept}


def _parts(content: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = content.get("parts")
    if not isinstance(parts, list | tuple):
        return []
    return [part for part in parts if isinstance(part, Mapping)]


def _responses(content: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    """Each function response with the index of its part among :func:`_parts`."""
    found: list[tuple[int, Mapping[str, Any]]] = []
    for index, part in enumerate(_parts(content)):
        response = _field(part, "functionResponse", "function_response")
        if isinstance(response, Mapping):
            found.append((index, response))
    return found


def _response_text(value: object) -> str:
    """A response's text: the string of a one-key response such as ``{"output": "..."}``, else
    its compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and len(value) == 1:
        (inner,) = value.values()
        if isinstance(inner, str):
            return inner
    return "" if value is None else compact_json(value)


def _digest(value: object) -> str:
    return hashlib.sha256(compact_json(value).encode()).hexdigest()[:12]
