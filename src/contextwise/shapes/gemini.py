"""The Gemini shape: a content with a ``role`` (``user`` or ``model``) and a list of ``parts``.

Parts are read in both spellings, the REST API's (``functionCall``, ``inlineData``) and the Python
SDK's (``function_call``, ``inline_data``). A ``functionResponse`` answers the ``functionCall``
with the same ``id``; without ids, it answers the oldest unanswered call with the same name.
Thought parts count their text; a ``thoughtSignature`` is a signature, not content, and counts
zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError
from contextwise.shapes.facts import CallKey, MessageFacts, Reader, Role

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
    facts = MessageFacts("gemini", role)
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


def _part(part: Mapping[str, Any], reader: Reader, where: str, facts: MessageFacts) -> None:
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


def _call_key(call: Mapping[str, Any], reader: Reader, where: str) -> CallKey:
    """A call's id, or its name for pairing by order and name; an id that is not a string would
    pair with nothing, so it is an error."""
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        reader.bad(f"{where}.id", call_id)
    if isinstance(call_id, str) and call_id:
        return call_id
    name = call.get("name")
    return ("name", name if isinstance(name, str) else "")
