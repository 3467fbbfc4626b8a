"""The OpenAI Responses items other than ``message``: tool calls and their outputs, hosted tool
calls, and reasoning.

A call and its output pair by ``call_id``: ``function_call`` / ``function_call_output``,
``custom_tool_call`` / ``custom_tool_call_output``, ``computer_call`` / ``computer_call_output``,
``local_shell_call`` / ``local_shell_call_output`` (whose ``id`` names the call),
``shell_call`` / ``shell_call_output`` and ``apply_patch_call`` / ``apply_patch_call_output``.
An ``mcp_approval_request`` pairs with the ``mcp_approval_response`` that names it in
``approval_request_id``. Hosted calls (``web_search_call``, ``file_search_call``, ``mcp_call``,
``image_generation_call``, ``code_interpreter_call``) and ``mcp_list_tools`` carry their result
in the same item. A ``reasoning`` item stays with the item that follows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from contextwise.shapes._estimate import DEFAULT_PART_ESTIMATE
from contextwise.shapes._facts import FactsDraft, MessageFacts, Reader, Role, ToolCall, ToolResult
from contextwise.shapes._parts import read_parts

CALLS: Final[Mapping[str, str]] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
"""Each call type and the type of the output that answers it."""

OUTPUTS: Final[frozenset[str]] = frozenset(CALLS.values())
"""The output types."""

HOSTED: Final[frozenset[str]] = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "mcp_call",
        "image_generation_call",
        "code_interpreter_call",
        "mcp_list_tools",
    }
)
"""The calls that the provider runs and answers in the same item."""

OTHER: Final[frozenset[str]] = frozenset(
    {"reasoning", "mcp_approval_request", "mcp_approval_response", "item_reference", "compaction"}
)
"""The remaining item types."""

ITEM_TYPES: Final[frozenset[str]] = frozenset(CALLS) | OUTPUTS | HOSTED | OTHER
"""Every Responses item type read by this module (``message`` is read as a chat message)."""

# The text fields of each item type; mappings and lists count as their compact JSON.
_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "function_call": ("name", "arguments"),
    "custom_tool_call": ("name", "input"),
    "computer_call": ("action",),
    "local_shell_call": ("action",),
    "shell_call": ("action",),
    "apply_patch_call": ("operation",),
    "web_search_call": ("action",),
    "file_search_call": ("queries", "results"),
    "mcp_call": ("server_label", "name", "arguments", "output", "error"),
    "code_interpreter_call": ("code",),
    "mcp_list_tools": ("server_label", "tools", "error"),
    "mcp_approval_request": ("server_label", "name", "arguments"),
    "mcp_approval_response": ("reason",),
}


def read_item(item: Mapping[str, Any], kind: str, reader: Reader) -> MessageFacts:
    """Read a Responses item of a known type other than ``message``."""
    role: Role = "tool" if kind in OUTPUTS or kind == "mcp_approval_response" else "assistant"
    facts = FactsDraft("openai-responses", role)
    for name in _FIELDS.get(kind, ()):
        value = item.get(name)
        if value is not None:
            reader.data(value)
    if kind in CALLS:
        reader.key(item.get("call_id"), "call_id", facts.calls)
    elif kind in OUTPUTS:
        facts.has_results = facts.only_results = True
        reader.key(item.get("call_id", item.get("id")), "call_id", facts.results)
        _output(item.get("output"), reader, facts)
    elif kind == "mcp_approval_request":
        reader.key(item.get("id"), "id", facts.calls)
    elif kind == "mcp_approval_response":
        facts.has_results = facts.only_results = True
        reader.key(item.get("approval_request_id"), "approval_request_id", facts.results)
    elif kind == "reasoning":
        facts.leads = True
        _reasoning(item, reader)
    elif kind == "image_generation_call":
        reader.part(reader.estimate.image_chars(_string(item.get("result")), "openai"))
    elif kind == "code_interpreter_call":
        _outputs(item.get("outputs"), reader)
    elif kind == "compaction":
        _encrypted(item.get("encrypted_content"), reader)
    return reader.finish(facts)


def _output(output: object, reader: Reader, facts: FactsDraft) -> None:
    """An output: text, a list of content parts, a screenshot, or structured shell output."""
    if isinstance(output, list | tuple):
        for entry in output:
            if isinstance(entry, Mapping) and "type" not in entry:
                reader.text(_string(entry.get("stdout")), "output.stdout")
                reader.text(_string(entry.get("stderr")), "output.stderr")
        parts = [entry for entry in output if not isinstance(entry, Mapping) or "type" in entry]
        read_parts(parts, reader, "output", FactsDraft(facts.shape, facts.role))
    elif isinstance(output, Mapping):
        if output.get("type") == "computer_screenshot":
            image = _string(output.get("image_url"))
            reader.part(reader.estimate.image_chars(image, "openai"))
        else:
            reader.data(output)
    else:
        reader.text(output, "output")


def _reasoning(item: Mapping[str, Any], reader: Reader) -> None:
    for field in ("summary", "content"):
        parts = item.get(field)
        if isinstance(parts, list | tuple):
            for number, part in enumerate(parts):
                if isinstance(part, Mapping):
                    reader.text(part.get("text"), f"{field}[{number}].text")
                else:
                    reader.bad(f"{field}[{number}]", part)
        elif parts is not None:
            reader.bad(field, parts)
    _encrypted(item.get("encrypted_content"), reader)


def _outputs(outputs: object, reader: Reader) -> None:
    """A code interpreter's outputs: logs are text, images are estimated."""
    if not isinstance(outputs, list | tuple):
        return
    for entry in outputs:
        if isinstance(entry, Mapping):
            if entry.get("type") == "image":
                reader.part(reader.estimate.image_chars(_string(entry.get("url")), "openai"))
            else:
                reader.text(_string(entry.get("logs")), "outputs.logs")


def _encrypted(value: object, reader: Reader) -> None:
    if isinstance(value, str) and value:
        reader.part(reader.estimate.encrypted_chars(value))


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


# --- tool uses: what the clear and clip steps read and rewrite ---------------------------------

TEXT_OUTPUTS: Final[frozenset[str]] = OUTPUTS - {"computer_call_output"}
"""The outputs whose content may be text; a ``computer_call_output`` must stay a screenshot."""

FREE_INPUTS: Final[Mapping[str, str]] = {"function_call": "arguments", "custom_tool_call": "input"}
"""The calls whose input is free text, by the field that holds it; the other calls hold
structured actions that the API requires."""


def item_results(item: Mapping[str, Any]) -> list[ToolResult]:
    """The tool result of a Responses item: the output of a call, when it may be text."""
    if item.get("type") not in TEXT_OUTPUTS:
        return []
    answered = item.get("call_id", item.get("id"))
    if not isinstance(answered, str):
        return []
    pieces: list[str] = []
    reader = Reader(0, DEFAULT_PART_ESTIMATE, pieces)
    _output(item.get("output"), reader, FactsDraft("openai-responses", "tool"))
    return [ToolResult(answered, answered, "\n".join(pieces))]


def item_calls(item: Mapping[str, Any]) -> list[ToolCall]:
    """The tool call of a Responses call item; its name, or its type for a built-in tool."""
    kind = item.get("type")
    call_id = item.get("call_id")
    if kind not in CALLS or not isinstance(call_id, str):
        return []
    name = item.get("name")
    return [ToolCall(call_id, name if isinstance(name, str) else str(kind).removesuffix("_call"))]


def item_with_results(item: Mapping[str, Any], texts: Mapping[int, str]) -> dict[str, Any]:
    """A copy of an output item that holds a text instead of its output (a shell output keeps
    its outcome)."""
    if 0 not in texts:
        return dict(item)
    text = texts[0]
    if item.get("type") != "shell_call_output":
        return {**item, "output": text}
    chunks = item.get("output")
    last = chunks[-1] if isinstance(chunks, list | tuple) and chunks else {}
    chunk: dict[str, Any] = {"stdout": text, "stderr": ""}
    if isinstance(last, Mapping) and "outcome" in last:
        chunk["outcome"] = last["outcome"]
    return {**item, "output": [chunk]}


def item_without_inputs(item: Mapping[str, Any], positions: AbstractSet[int]) -> dict[str, Any]:
    """A copy of a call item with empty free-text input (``"{}"``); a built-in tool's action
    stays, since the API requires it."""
    field = FREE_INPUTS.get(str(item.get("type")))
    if field is None or 0 not in positions:
        return dict(item)
    return {**item, field: "{}"}


def without_item_id(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of a call item without its ``id``, which ties it to the reasoning item that
    produced it; ``None`` when the item's ``id`` is required (a message, a built-in call)."""
    if "id" not in item:
        return dict(item)
    if item.get("type") not in FREE_INPUTS:
        return None
    return {key: value for key, value in item.items() if key != "id"}
