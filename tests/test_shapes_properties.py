"""Properties of trimming and compressing, per message shape, over random histories.

Each history is drawn as a list of abstract events (user text, assistant text, a round of
parallel tool calls with optional reasoning, a hosted call, a system message), then rendered in
one shape. The renderer records, independently of contextwise, which call ids each message makes
and answers and which messages are reasoning items, so that the checks do not trust the code
they check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from contextwise import (
    ContextPolicy,
    MessagesFragment,
    message_shape,
    messages_chars,
    process_context,
)

SHAPES = ("openai-chat", "anthropic", "openai-responses", "gemini", "langchain", "pydantic-ai")


@dataclass
class History:
    """A rendered history and what the renderer knows about it."""

    messages: list[Any] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)
    results: list[list[str]] = field(default_factory=list)
    reasoning: list[bool] = field(default_factory=list)

    def add(
        self,
        message: Any,
        calls: list[str] | None = None,
        results: list[str] | None = None,
        reasoning: bool = False,
    ) -> None:
        self.messages.append(message)
        self.calls.append(calls or [])
        self.results.append(results or [])
        self.reasoning.append(reasoning)


events = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(min_size=0, max_size=30)),
        st.tuples(st.just("assistant"), st.text(min_size=1, max_size=30), st.booleans()),
        st.tuples(st.just("tools"), st.integers(1, 3), st.booleans(), st.integers(0, 3)),
        st.tuples(st.just("hosted"), st.text(max_size=10)),
        st.tuples(st.just("system"), st.text(max_size=20)),
    ),
    max_size=14,
)

_TOOL_KINDS = ("function_call", "custom_tool_call", "computer_call", "local_shell_call")


def render(shape: str, drawn: list[tuple[Any, ...]]) -> History:
    """Render abstract events in one shape; ids are unique per history."""
    history = History()
    first_request = True
    for number, event in enumerate(drawn):
        kind = event[0]
        if kind == "system" and shape == "gemini":
            kind, event = "user", ("user", event[1])
        if kind == "hosted" and shape != "openai-responses":
            kind, event = "assistant", ("assistant", event[1] or "h", False)
        if kind == "user":
            _user(shape, history, event[1], first_request)
            first_request = False
        elif kind == "system":
            _system(shape, history, event[1])
        elif kind == "assistant":
            _assistant(shape, history, event[1], event[2])
        elif kind == "hosted":
            history.add(
                {
                    "type": "web_search_call",
                    "id": f"ws{number}",
                    "status": "completed",
                    "action": {"type": "search", "query": event[1]},
                }
            )
        else:
            _tools(shape, history, number, event[1], event[2], event[3])
    return history


def _user(shape: str, history: History, text: str, first: bool) -> None:
    if shape in ("openai-chat", "anthropic"):
        history.add({"role": "user", "content": text})
    elif shape == "openai-responses":
        history.add({"role": "user", "content": [{"type": "input_text", "text": text}]})
    elif shape == "gemini":
        history.add({"role": "user", "parts": [{"text": text}]})
    elif shape == "langchain":
        history.add(HumanMessage(text))
    else:
        parts: list[Any] = [UserPromptPart(text)]
        history.add(ModelRequest(parts=parts))


def _system(shape: str, history: History, text: str) -> None:
    if shape in ("openai-chat", "anthropic"):
        history.add({"role": "system", "content": text})
    elif shape == "openai-responses":
        history.add({"type": "message", "role": "developer", "content": text})
    elif shape == "langchain":
        history.add(SystemMessage(text))
    else:
        history.add(ModelRequest(parts=[SystemPromptPart(text)]))


def _assistant(shape: str, history: History, text: str, reasoning: bool) -> None:
    if shape == "openai-chat":
        history.add({"role": "assistant", "content": text})
    elif shape == "anthropic":
        history.add({"role": "assistant", "content": [{"type": "text", "text": text}]})
    elif shape == "openai-responses":
        if reasoning:
            history.add(
                {
                    "type": "reasoning",
                    "id": f"rs{len(history.messages)}",
                    "summary": [{"type": "summary_text", "text": "why"}],
                    "encrypted_content": "gAAA" * 5,
                },
                reasoning=True,
            )
        history.add(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
    elif shape == "gemini":
        history.add({"role": "model", "parts": [{"text": text}]})
    elif shape == "langchain":
        history.add(AIMessage(text))
    else:
        history.add(ModelResponse(parts=[TextPart(text)]))


def _tools(
    shape: str, history: History, number: int, count: int, reasoning: bool, variant: int
) -> None:
    ids = [f"c{number}_{index}" for index in range(count)]
    if shape == "openai-chat":
        history.add(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    for i in ids
                ],
            },
            calls=ids,
        )
        for i in ids:
            history.add({"role": "tool", "tool_call_id": i, "content": "r" * variant}, results=[i])
    elif shape == "anthropic":
        history.add(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": i, "name": "f", "input": {"n": variant}} for i in ids
                ],
            },
            calls=ids,
        )
        history.add(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids
                ],
            },
            results=ids,
        )
    elif shape == "openai-responses":
        if reasoning:
            history.add({"type": "reasoning", "id": f"rs{number}", "summary": []}, reasoning=True)
        kind = _TOOL_KINDS[variant]
        for i in ids:
            history.add(
                {
                    "type": kind,
                    "call_id": i,
                    "name": "f",
                    "arguments": "{}",
                    "action": {"type": "exec", "command": ["ls"]},
                },
                calls=[i],
            )
        for i in ids:
            history.add({"type": f"{kind}_output", "call_id": i, "output": "done"}, results=[i])
    elif shape == "gemini":
        named = variant % 2 == 0  # without ids: paired by order and name
        history.add(
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": f"f{i}", "args": {}} | ({} if named else {"id": i})}
                    for i in ids
                ],
            },
            calls=ids,
        )
        history.add(
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {"name": f"f{i}", "response": {"ok": 1}}
                        | ({} if named else {"id": i})
                    }
                    for i in ids
                ],
            },
            results=ids,
        )
    elif shape == "langchain":
        history.add(
            AIMessage("", tool_calls=[{"id": i, "name": "f", "args": {}} for i in ids]), calls=ids
        )
        for i in ids:
            history.add(ToolMessage("r" * variant, tool_call_id=i), results=[i])
    else:
        history.add(ModelResponse(parts=[ToolCallPart("f", {}, i) for i in ids]), calls=ids)
        history.add(ModelRequest(parts=[ToolReturnPart("f", "ok", i) for i in ids]), results=ids)


def _positions(output: tuple[Any, ...] | list[Any], history: History) -> list[int]:
    """The input index of each output message, found by identity (fails on a stranger)."""
    where = {id(message): index for index, message in enumerate(history.messages)}
    found = [where.get(id(message)) for message in output]
    assert None not in found, "an output message is not one of the caller's objects"
    return [index for index in found if index is not None]


def check_whole(kept: list[int], history: History) -> None:
    """No unit is split: no orphan result, no call without its results, no lone reasoning."""
    kept_set = set(kept)
    owner: dict[str, int] = {}
    for index, calls in enumerate(history.calls):
        for call in calls:
            owner[call] = index
    for index in kept:
        for result in history.results[index]:
            assert owner[result] in kept_set, f"result {result} kept without its call"
        for call in history.calls[index]:
            for other, results in enumerate(history.results):
                if call in results:
                    assert other in kept_set, f"call {call} kept without its result"
        if history.reasoning[index]:
            assert index + 1 in kept_set, "a reasoning item kept without its following item"
        if index > 0 and history.reasoning[index - 1]:
            assert index - 1 in kept_set, "an item kept without its reasoning item"


def _policy(grouping: str, keep_groups: int, target: int | None, kind: str) -> ContextPolicy:
    step: dict[str, Any] = {
        "id": "s",
        "kind": kind,
        "fragmentId": "h",
        "grouping": {"kind": grouping},
        "keepGroups": keep_groups,
    }
    if kind == "trim" and target is not None:
        step["targetChars"] = target
    if kind == "compress":
        step["compressor"] = "summarize"
    return ContextPolicy.model_validate(
        {"mode": "reduce", "triggerChars": 1, "targetInputChars": 0, "steps": [step]}
    )


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drawn=events,
    grouping=st.sampled_from(["user-turn", "message"]),
    keep_groups=st.integers(0, 3),
    target=st.one_of(st.none(), st.integers(0, 300)),
)
def test_trim_keeps_units_whole_and_returns_the_callers_objects(
    shape: str, drawn: list[tuple[Any, ...]], grouping: str, keep_groups: int, target: int | None
) -> None:
    history = render(shape, drawn)
    result = process_context(
        _policy(grouping, keep_groups, target, "trim"), [MessagesFragment("h", history.messages)]
    )
    kept_messages = result.fragments[0].messages
    removed = result.removed.get("h", [])
    kept = _positions(kept_messages, history)
    gone = _positions(removed, history)
    assert kept == sorted(kept) and gone == sorted(gone)
    assert sorted(kept + gone) == list(range(len(history.messages)))
    check_whole(kept, history)
    assert result.report.after_chars == messages_chars(kept_messages)
    assert result.report.before_chars == messages_chars(history.messages)


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drawn=events, grouping=st.sampled_from(["user-turn", "message"]), keep_groups=st.integers(0, 2)
)
def test_compress_hands_over_and_returns_the_fragments_shape(
    shape: str, drawn: list[tuple[Any, ...]], grouping: str, keep_groups: int
) -> None:
    history = render(shape, drawn)
    seen: list[list[Any]] = []

    def summarize(messages: list[Any]) -> str:
        seen.append(messages)
        return "S"

    compressors: dict[str, Callable[..., Any]] = {"summarize": summarize}
    result = process_context(
        _policy(grouping, keep_groups, None, "compress"),
        [MessagesFragment("h", messages=history.messages)],
        compressors=compressors,
    )
    output = list(result.fragments[0].messages)
    allowed = {shape, "openai-chat"} if shape == "anthropic" else {shape}
    for given_messages in seen:
        assert {message_shape(message) for message in given_messages} <= allowed
    originals = {id(message) for message in history.messages}
    strangers = [message for message in output if id(message) not in originals]
    assert len(strangers) <= 1
    if strangers:
        expected = "openai-chat" if shape == "anthropic" else shape
        assert message_shape(strangers[0]) == expected
    kept = _positions([m for m in output if id(m) in originals], history)
    check_whole(kept, history)
    removed = result.removed.get("h", [])
    assert sorted(kept + _positions(removed, history)) == list(range(len(history.messages)))
    assert result.report.after_chars == messages_chars(output)
