"""Recall keeps an index by ref per conversation (issue 30, item 4): a recall reads only the
messages added since the last one, never the whole history again; the recall tools of the
integrations keep it between calls, and a session keeps one for its archive."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import contextwise.recalling
from contextwise import ContextSession, MemoryStore, recall, recall_tool


def tool_turn(n: int, text: str | None = None) -> list[dict[str, Any]]:
    function = {"name": "f", "arguments": "{}"}
    call = {"id": f"call_{n}", "type": "function", "function": function}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}",
         "content": text or f"result {n} " + "x" * 300},
    ]


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    for n in range(turns):
        messages += tool_turn(n)
    return messages


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages recall has read (each read of a message by its shape counts one)."""
    counted = [0]
    real = contextwise.recalling.read_message

    def counting(message: Any, **kwargs: Any) -> Any:
        counted[0] += 1
        return real(message, **kwargs)

    monkeypatch.setattr(contextwise.recalling, "read_message", counting)
    return counted


def test_a_tool_reads_the_history_once_then_only_what_was_added(reads: list[int]) -> None:
    history = conversation(500)
    tool = recall_tool(history=lambda: history)
    assert tool.handle({"ref": "missing"}).startswith("Nothing named 'missing'")
    assert reads[0] == 1_001  # the whole history, once
    assert tool.handle({"ref": "missing"}).startswith("Nothing named")
    assert reads[0] == 1_001  # nothing new: nothing read
    history += tool_turn(500, "fresh")
    assert tool.handle({"ref": "call_500"}).startswith("fresh\n")
    assert reads[0] == 1_001 + 2 + 1  # the two new messages, then the one that holds the ref
    assert tool.handle({"ref": "call_7"}).startswith("result 7 x")


def test_the_newest_original_wins_and_an_edited_history_is_indexed_again(
    reads: list[int],
) -> None:
    history = conversation(10)
    tool = recall_tool(history=lambda: history)
    assert tool.handle({"ref": "call_3"}).startswith("result 3 x")
    history += tool_turn(3, "again")  # the same ref, answered again later
    assert tool.handle({"ref": "call_3"}).startswith("again\n")
    before = reads[0]
    history[-1] = {"role": "tool", "tool_call_id": "call_3", "content": "edited"}
    assert tool.handle({"ref": "call_3"}).startswith("edited\n")
    assert reads[0] - before > len(history)  # the changed history was read again, whole
    # An edit in the middle (a compaction, a redaction) is seen at a sampled message.
    history[15] = {"role": "tool", "tool_call_id": "call_new", "content": "inserted"}
    assert tool.handle({"ref": "call_new"}).startswith("inserted\n")
    other = conversation(3)
    assert recall_tool(history=other).handle({"ref": "call_9"}).startswith("Nothing named")


def test_one_tool_keeps_an_index_per_conversation(reads: list[int]) -> None:
    first, second = conversation(100), [{"role": "user", "content": "Other."}, *tool_turn(1)]
    current = [first]
    tool = recall_tool(history=lambda: current[0])
    for history in (first, second, first, second):
        current[0] = history
        tool.handle({"ref": "missing"})
    assert reads[0] == len(first) + len(second)  # each conversation read once


def test_a_session_keeps_an_index_of_its_archive(reads: list[int]) -> None:
    policy = {"mode": "reduce", "trigger_chars": 100,
              "steps": [{"id": "old", "kind": "clear", "fragment_id": "history",
                         "keep_recent": 0}]}
    session = ContextSession(policy, MemoryStore(), "s")
    session.add(conversation(50))
    session.context()
    assert recall("call_7", archive=session).text.startswith("result 7 xxx")
    first = reads[0]
    assert first >= 50
    for _ in range(3):
        with pytest.raises(contextwise.InvalidValueError):
            recall("missing", archive=session)
    assert reads[0] == first  # the archive did not change: nothing read again
    session.add(tool_turn(50, "late " + "y" * 300))
    session.context()
    assert recall("call_50", archive=session).text.startswith("late y")
    assert reads[0] - first < 10  # only the newly archived messages


def test_the_agents_sdk_recall_tool_keeps_its_index_between_calls(reads: list[int]) -> None:
    from agents import SQLiteSession
    from agents.tool_context import ToolContext

    from contextwise.integrations.openai_agents import recall_tool as agents_recall_tool

    session = SQLiteSession("index")
    items: list[Any] = [{"role": "user", "content": "Go."}]
    for n in range(200):
        items += [{"type": "function_call", "call_id": f"c{n}", "name": "f", "arguments": "{}"},
                  {"type": "function_call_output", "call_id": f"c{n}", "output": f"out {n}"}]
    tool = agents_recall_tool(session)

    async def call(ref: str) -> str:
        arguments = json.dumps({"ref": ref})
        context = ToolContext(context=None, tool_name="recall", tool_call_id="x",
                              tool_arguments=arguments)
        return str(await tool.on_invoke_tool(context, arguments))

    async def run() -> list[str]:
        await session.add_items(items)
        answers = [await call("missing"), await call("c5")]
        await session.add_items([{"type": "function_call_output", "call_id": "c5",
                                  "output": "newer"}])
        answers.append(await call("c5"))
        return answers

    missing, old, new = asyncio.run(run())
    assert missing.startswith("Nothing named") and old.startswith("out 5\n")
    assert new.startswith("newer\n")
    assert reads[0] == len(items) + 1 + 1 + 1  # the history once, the hit, the new item, the hit
