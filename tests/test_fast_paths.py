"""The C-level passes that measure plain histories agree with reading each message.

A long history of plain messages is measured without reading each message in Python; one unusual
message anywhere in it (another key, a content that is not a string, a legacy function call)
must send the whole list to the checked path, so that it measures exactly what each message
measures on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from contextwise import message_chars, messages_chars

langchain_messages = pytest.importorskip("langchain_core.messages")


def _plain(count: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for index in range(1, count):
        role = "user" if index % 2 else "assistant"
        history.append({"role": role, "content": f"message {index}"})
    return history


UNUSUAL: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi", "refusal": "No."},
    {
        "role": "user",
        "content": "Hi",
        "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "assistant", "content": "Hi", "function_call": {"name": "f", "arguments": "{}"}},
    {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
    {"role": "assistant", "content": None},
    {"type": "message", "role": "user", "content": "Hi"},
]


@pytest.mark.parametrize("unusual", UNUSUAL)
@pytest.mark.parametrize("position", [0, 5, -1])
def test_one_unusual_dict_is_measured_as_it_is_alone(
    unusual: dict[str, Any], position: int
) -> None:
    history = _plain(10)
    history.insert(position if position >= 0 else len(history), unusual)
    assert messages_chars(history) == sum(message_chars(message) for message in history)


def _plain_langchain(count: int) -> list[Any]:
    kinds = [langchain_messages.HumanMessage, langchain_messages.AIMessage]
    history: list[Any] = [langchain_messages.SystemMessage(content="Be brief.")]
    history += [kinds[index % 2](content=f"message {index}") for index in range(1, count)]
    return history


def _unusual_langchain() -> list[Any]:
    ai = langchain_messages.AIMessage
    return [
        ai(content="", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 1}}]),
        ai(
            content="",
            invalid_tool_calls=[{"id": "c2", "name": "add", "args": "{", "error": "bad"}],
        ),
        ai(content="", additional_kwargs={"function_call": {"name": "add", "arguments": "{}"}}),
        ai(content=[{"type": "text", "text": "Hello"}]),
        langchain_messages.HumanMessage(content=[{"type": "text", "text": "Hello"}]),
    ]


@pytest.mark.parametrize("which", range(5))
def test_one_unusual_langchain_message_is_measured_as_it_is_alone(which: int) -> None:
    history = _plain_langchain(10)
    history.insert(4, _unusual_langchain()[which])
    assert messages_chars(history) == sum(message_chars(message) for message in history)
    assert messages_chars(history) > sum(message_chars(m) for m in _plain_langchain(10))
