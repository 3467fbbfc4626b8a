"""Content parts shared by the dict shapes and the framework objects: text, images, audio, files,
reasoning, and the Anthropic ``tool_use`` / ``tool_result`` blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from contextwise._checks import MAX_DEPTH
from contextwise.errors import InvalidValueError
from contextwise.shapes._facts import FactsDraft, Reader

ANTHROPIC_KINDS: Final[frozenset[str]] = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "search_result",
        "image/source",
    }
)
"""Block types that only the Anthropic shape uses."""

RESPONSES_KINDS: Final[frozenset[str]] = frozenset(
    {"input_text", "output_text", "input_image", "input_file", "summary_text"}
)
"""Part types that only the OpenAI Responses shape uses."""

_AUDIO: Final = frozenset({"input_audio", "audio"})
_FILES: Final = frozenset({"file", "input_file"})
_SKIPPED: Final = frozenset({"tool_call", "tool_call_chunk", "invalid_tool_call"})


def read_parts(
    parts: Sequence[object], reader: Reader, where: str, links: FactsDraft
) -> set[str]:
    """Measure a list of content parts; record the calls and results of Anthropic blocks.

    Args:
        parts: The parts (strings or mappings).
        reader: The message's reader.
        where: The field path of the list, for error messages.
        links: The record that receives the calls and results.

    Returns:
        The part types seen, so that the caller can tell the shape.
    """
    kinds: set[str] = set()
    other = False
    for number, part in enumerate(parts):
        at = f"{where}[{number}]"
        if isinstance(part, str):
            reader.text(part, at)
            other = True
            continue
        if not isinstance(part, Mapping):
            reader.bad(at, part)
        kind = part.get("type")
        if isinstance(kind, str):
            kinds.add(kind)
            if kind == "image" and "source" in part:
                kinds.add("image/source")  # an Anthropic image, not a LangChain one
        if kind == "tool_result":
            links.has_results = True
            reader.key(part.get("tool_use_id"), f"{at}.tool_use_id", links.results)
            _inner(part.get("content"), reader, f"{at}.content", links)
            continue
        other = True
        if kind == "tool_use":
            reader.key(part.get("id"), f"{at}.id", links.calls)
        read_part(part, kind, reader, at, links)
    if links.has_results and not other:
        links.only_results = True
    return kinds


def read_part(
    part: Mapping[str, object], kind: object, reader: Reader, at: str, links: FactsDraft
) -> None:
    """Measure one part that is not a ``tool_result``."""
    if not isinstance(kind, str):
        _plain(part, kind, reader, at)
    elif _tool_part(part, kind, reader, at, links):
        return
    elif kind in _TEXT_FIELDS:
        reader.text(part.get(_TEXT_FIELDS[kind]), f"{at}.{_TEXT_FIELDS[kind]}")
    elif kind == "redacted_thinking":
        _encrypted(part.get("data"), reader)
    elif not _media(part, kind, reader, at, links) and kind not in _SKIPPED:
        _plain(part, kind, reader, at)


_TEXT_FIELDS: Final[Mapping[str, str]] = {
    "thinking": "thinking",
    "reasoning": "reasoning",
    "refusal": "refusal",
}
"""The part types whose text is in a field named after the type."""


def _tool_part(
    part: Mapping[str, object], kind: str, reader: Reader, at: str, links: FactsDraft
) -> bool:
    """Measure a tool call or a server-side tool's call or result; tell whether it was one."""
    if kind == "tool_use" or kind.endswith("_tool_use"):
        reader.text(part.get("name"), f"{at}.name")
        if "input" in part:
            reader.data(part["input"])
    elif kind == "server_tool_call":
        reader.text(part.get("name"), f"{at}.name")
        if part.get("args") is not None:
            reader.data(part["args"])
    elif kind.endswith("_tool_result"):
        # A server-side tool's result (Anthropic ``code_execution_tool_result``, LangChain
        # ``server_tool_result``...) is measured, whatever form its content or output takes.
        for name in ("content", "output"):
            value = part.get(name)
            if isinstance(value, list | tuple | str):
                _inner(value, reader, f"{at}.{name}", links)
            elif value is not None:
                reader.data(value)
    else:
        return False
    return True


def _plain(part: Mapping[str, object], kind: object, reader: Reader, at: str) -> None:
    text = part.get("text")
    if isinstance(text, str):
        reader.text(text, at)
    elif text is not None and kind == "text":
        reader.bad(f"{at}.text", text)
    encrypted = part.get("encrypted_content")
    if isinstance(encrypted, str):
        _encrypted(encrypted, reader)


def _inner(content: object, reader: Reader, at: str, links: FactsDraft) -> None:
    if isinstance(content, list | tuple):
        # Each level of parts in parts is two levels of JSON (a list, then an object).
        reader.depth += 2
        if reader.depth > MAX_DEPTH:
            raise InvalidValueError("message_too_deep", index=reader.index, limit=MAX_DEPTH)
        nested = FactsDraft(links.shape, links.role)
        try:
            read_parts(content, reader, at, nested)
        finally:
            reader.depth -= 2
    else:
        reader.text(content, at)


def _encrypted(value: object, reader: Reader) -> None:
    if isinstance(value, str) and value:
        reader.part(reader.estimate.encrypted_chars(value))


def _media(
    part: Mapping[str, object], kind: str, reader: Reader, at: str, links: FactsDraft
) -> bool:
    """Measure an image, audio, video, file or document part; tell whether it was one."""
    estimate = reader.estimate
    if kind == "image_url":
        image = part.get("image_url")
        url, detail = (
            (image.get("url"), image.get("detail"))
            if isinstance(image, Mapping)
            else (
                image,
                None,
            )
        )
        reader.part(estimate.image_chars(_string(url), "openai", detail))
    elif kind == "input_image":
        reader.part(
            estimate.image_chars(_string(part.get("image_url")), "openai", part.get("detail"))
        )
    elif kind == "image":
        reader.part(_image_block(part, reader))
    elif kind in _AUDIO:
        reader.part(estimate.flat_chars("audio"))
    elif kind == "video":
        reader.part(estimate.flat_chars("video"))
    elif kind in _FILES:
        reader.part(estimate.flat_chars("file"))
    elif kind == "document":
        _document(part, reader, at, links)
    elif kind == "search_result":
        reader.text(part.get("title"), f"{at}.title")
        _inner(part.get("content"), reader, f"{at}.content", links)
    else:
        return False
    return True


def _image_block(part: Mapping[str, object], reader: Reader) -> int:
    """An Anthropic image block (``source``) or a LangChain standard image block."""
    source = part.get("source")
    if isinstance(source, Mapping):
        data = source.get("data") if source.get("type") == "base64" else None
        return reader.estimate.image_chars(_string(data), "anthropic")
    data = part.get("base64", part.get("data"))
    return reader.estimate.image_chars(_string(data), "openai")


def _document(part: Mapping[str, object], reader: Reader, at: str, links: FactsDraft) -> None:
    """An Anthropic document: plain-text and content sources are text, the others a file."""
    source = part.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    if isinstance(source, Mapping) and kind == "text":
        reader.text(source.get("data"), f"{at}.source.data")
    elif isinstance(source, Mapping) and kind == "content":
        _inner(source.get("content"), reader, f"{at}.source.content", links)
    else:
        reader.part(reader.estimate.flat_chars("file"))
    reader.text(part.get("title"), f"{at}.title")
    reader.text(part.get("context"), f"{at}.context")


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None
