"""Random chat histories for the property tests of messages and policies (no tests here).

A history is drawn once as an abstract conversation (turns of user text, assistant text and tool
rounds) and rendered in the OpenAI or the Anthropic shape. Both renderings hold the same text, so
their measured sizes per user turn are equal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

from contextwise import find_orphan_results, tool_call_ids, tool_result_ids

Shape = Literal["openai", "anthropic"]
SHAPES: tuple[Shape, ...] = ("openai", "anthropic")

_TEXT = st.text(alphabet="abcdefghij é中", min_size=0, max_size=12)


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]
    result: str


@dataclass(frozen=True)
class ToolRound:
    preface: str
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Turn:
    user: str
    steps: tuple[str | ToolRound, ...]
    system_before: str | None = None


@dataclass(frozen=True)
class Conversation:
    system: str | None
    opening: str | None
    turns: tuple[Turn, ...]


def chat(turns: int) -> list[dict[str, Any]]:
    """A plain chat: a system message, then ``turns`` short user/assistant exchanges."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for number in range(turns):
        history += [
            {"role": "user", "content": f"question{number:02d}"},
            {"role": "assistant", "content": f"answer--{number:02d}"},
        ]
    return history


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


calls = st.builds(
    Call,
    name=st.sampled_from(["search", "add", "read_file", "天气"]),
    args=st.dictionaries(
        st.sampled_from(["q", "a", "path"]), st.integers(0, 99) | _TEXT, max_size=2
    ),
    result=_TEXT,
)
tool_rounds = st.builds(
    ToolRound, preface=_TEXT, calls=st.lists(calls, min_size=1, max_size=3).map(tuple)
)
turns = st.builds(
    Turn,
    user=_TEXT,
    steps=st.lists(_TEXT | tool_rounds, min_size=0, max_size=3).map(tuple),
    system_before=st.none() | st.none() | st.none() | _TEXT,
)
conversations = st.builds(
    Conversation,
    system=st.none() | _TEXT,
    opening=st.none() | st.none() | _TEXT,
    turns=st.lists(turns, min_size=0, max_size=8).map(tuple),
)


def render(conversation: Conversation, shape: Shape) -> list[dict[str, Any]]:
    """Render an abstract conversation as OpenAI or Anthropic messages; call ids are unique."""
    messages: list[dict[str, Any]] = []
    if conversation.system is not None:
        messages.append({"role": "system", "content": conversation.system})
    if conversation.opening is not None:
        messages.append({"role": "assistant", "content": conversation.opening})
    for number, turn in enumerate(conversation.turns):
        if turn.system_before is not None:
            role = "developer" if shape == "openai" else "system"
            messages.append({"role": role, "content": turn.system_before})
        if shape == "openai":
            messages.append({"role": "user", "content": turn.user})
        else:
            messages.append({"role": "user", "content": [{"type": "text", "text": turn.user}]})
        for step_number, step in enumerate(turn.steps):
            if isinstance(step, str):
                messages.append({"role": "assistant", "content": step})
                continue
            ids = [f"call_{number}_{step_number}_{k}" for k in range(len(step.calls))]
            if shape == "openai":
                messages.append(
                    {
                        "role": "assistant",
                        "content": step.preface or None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": _compact(call.args)},
                            }
                            for call_id, call in zip(ids, step.calls, strict=True)
                        ],
                    }
                )
                for call_id, call in zip(ids, step.calls, strict=True):
                    messages.append(
                        {"role": "tool", "tool_call_id": call_id, "content": call.result}
                    )
            else:
                blocks: list[dict[str, Any]] = []
                if step.preface:
                    blocks.append({"type": "text", "text": step.preface})
                blocks.extend(
                    {"type": "tool_use", "id": call_id, "name": call.name, "input": call.args}
                    for call_id, call in zip(ids, step.calls, strict=True)
                )
                messages.append({"role": "assistant", "content": blocks})
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": call_id, "content": call.result}
                            for call_id, call in zip(ids, step.calls, strict=True)
                        ],
                    }
                )
    return messages


histories = st.tuples(conversations, st.sampled_from(SHAPES)).map(
    lambda pair: render(pair[0], pair[1])
)
"""Any history, in either shape."""


def pairing_problems(before: Sequence[Any], after: Sequence[Any]) -> list[str]:
    """List how ``after`` breaks the pairing of ``before``: orphans, or calls missing results."""
    problems = [f"orphan result at {index}" for index in find_orphan_results(list(after))]
    answered: dict[str, int] = {}
    for message in before:
        for result in tool_result_ids(message):
            answered[result] = answered.get(result, 0) + 1
    kept_results: dict[str, int] = {}
    for message in after:
        for result in tool_result_ids(message):
            kept_results[result] = kept_results.get(result, 0) + 1
    for message in after:
        for call in tool_call_ids(message):
            if kept_results.get(call, 0) != answered.get(call, 0):
                problems.append(f"call {call} lost some of its results")
    return problems
