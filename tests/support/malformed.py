"""Malformed messages of every shape: a valid conversation per shape, broken one field at a time.

Each shape has a small valid conversation. A malformed variant replaces one field of one message
(a top-level key, or a key of its first part, tool call or content block) by a hostile value, or
deletes it; framework objects get a hostile attribute instead. The variants are drawn with a
fixed seed, the same on every run.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from support.hostile import HOSTILE, deep_list

CONVERSATIONS: dict[str, list[Any]] = {
    "openai-chat": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny."},
        {"role": "assistant", "content": "It is sunny."},
    ],
    "anthropic": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Look it up.", "signature": "sig"},
            {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Sunny."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is sunny."}]},
    ],
    "openai-responses": [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Hm."}]},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "Sunny."},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "It is sunny."}]},
    ],
    "gemini": [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"c": "P"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "weather", "response": {"sky": "sunny"}}}]},
        {"role": "model", "parts": [{"text": "It is sunny.", "thought": False}]},
    ],
}

HOSTILE_FIELDS: dict[str, Any] = {
    name: HOSTILE[name]
    for name in (
        "None", "True", "zero", "2**63", "10**5000", "nan", "empty string", "lone surrogate",
        "empty list", "list of None", "empty dict", "cyclic list", "cyclic dict",
        "tuple key dict", "object", "raising repr", "bytes", "int key dict",
    )
} | {"deep list": deep_list(300)}
"""The hostile values put into message fields (a shallower deep list: messages are many)."""

_DELETE = object()


def _paths(message: Any) -> Iterator[tuple[Any, ...]]:
    """The fields of a dict message that a variant may break: its keys, and the keys of its
    first part, content block or tool call."""
    for key, value in message.items():
        yield (key,)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for inner in value[0]:
                yield (key, 0, inner)
        if isinstance(value, dict):
            for inner in value:
                yield (key, inner)


def _broken(message: Any, path: tuple[Any, ...], value: Any) -> Any:
    broken = copy.deepcopy(message)
    target = broken
    for part in path[:-1]:
        target = target[part]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return broken


def _framework_conversations() -> dict[str, list[Any]]:
    return {
        "langchain": [
            SystemMessage("Be brief."),
            HumanMessage("Weather in Paris?"),
            AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "P"}, "id": "c1"}]),
            ToolMessage("Sunny.", tool_call_id="c1"),
            AIMessage("It is sunny."),
        ],
        "pydantic-ai": [
            ModelRequest(parts=[UserPromptPart(content="Weather in Paris?")]),
            ModelResponse(parts=[ToolCallPart("weather", {"city": "P"}, tool_call_id="c1")]),
            ModelRequest(parts=[ToolReturnPart("weather", "Sunny.", tool_call_id="c1")]),
            ModelResponse(parts=[TextPart(content="It is sunny.")]),
        ],
    }


def _object_variants(shape: str, conversation: list[Any]) -> Iterator[tuple[str, list[Any]]]:
    """Framework messages with one attribute (of the message or its first part) set to a
    hostile value, as a careless program would set it."""
    for index, message in enumerate(conversation):
        targets: list[tuple[str, Any]] = [("", message)]
        parts = getattr(message, "parts", None)
        if parts:
            targets.append(("parts[0].", parts[0]))
        for prefix, target in targets:
            names = [name for name in ("content", "tool_calls", "tool_call_id", "args",
                                       "tool_name", "parts", "role", "type")
                     if hasattr(target, name)]
            for name in names:
                for label, value in HOSTILE_FIELDS.items():
                    broken_list = copy.deepcopy(conversation)
                    broken = broken_list[index]
                    holder = broken.parts[0] if prefix else broken
                    try:
                        object.__setattr__(holder, name, value)
                    except (AttributeError, TypeError, ValueError):
                        continue
                    yield f"{shape}[{index}].{prefix}{name}={label}", broken_list


def malformed(count: int, seed: int = 20261201) -> list[tuple[str, str, list[Any]]]:
    """``count`` malformed conversations, spread over the shapes: (shape, label, messages)."""
    variants: dict[str, list[tuple[str, list[Any]]]] = {}
    for shape, conversation in CONVERSATIONS.items():
        found: list[tuple[str, list[Any]]] = []
        for index, message in enumerate(conversation):
            for path in _paths(message):
                for label, value in [*HOSTILE_FIELDS.items(), ("deleted", _DELETE)]:
                    messages = list(conversation)
                    messages[index] = _broken(message, path, value)
                    where = ".".join(map(str, path))
                    found.append((f"{shape}[{index}].{where}={label}", messages))
        variants[shape] = found
    for shape, conversation in _framework_conversations().items():
        variants[shape] = list(_object_variants(shape, conversation))
    rng = random.Random(seed)
    per_shape = count // len(variants)
    chosen: list[tuple[str, str, list[Any]]] = []
    for shape, found in variants.items():
        picked = rng.sample(found, min(per_shape, len(found)))
        chosen += [(shape, label, messages) for label, messages in picked]
    return chosen
