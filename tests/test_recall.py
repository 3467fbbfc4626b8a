"""recall and recall_tool: the model reads back what a clear or clip step took out, page by page,
from the framework's history first, then from a session's archive."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from contextwise import (
    CLEARED_PLACEHOLDER,
    ContextSession,
    InvalidTypeError,
    InvalidValueError,
    MemoryStore,
    MessagesFragment,
    RecallPage,
    arecall,
    process_context,
    recall,
    recall_tool,
)
from support.errors import assert_translated

REPORT = "".join(f"Row {n:05}: value {n * 7 % 1000}.\n" for n in range(1_200))[:25_000]


def history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Summarize the report."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_report", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": REPORT},
    ]


def test_a_long_original_is_read_in_pages_that_never_exceed_the_limit() -> None:
    pages: list[RecallPage] = [recall("call_1", history=history())]
    while pages[-1].next_offset is not None:
        pages.append(recall("call_1", history=history(), offset=pages[-1].next_offset))
    assert [page.offset for page in pages] == [0, 8_000, 16_000, 24_000]
    assert max(len(page.text) for page in pages) == 8_000
    assert "".join(page.text for page in pages) == REPORT
    assert (
        pages[-1]
        .for_model()
        .endswith('[recall("call_1"): characters 24000 to 25000 of 25000; end]')
    )


def test_a_cleared_copy_in_the_history_is_passed_over_for_the_original_in_the_archive() -> None:
    cleared = {**history()[2], "content": CLEARED_PLACEHOLDER.format(n=len(REPORT), ref="call_1")}
    archive = [history()[2]]
    page = recall("call_1", history=[*history()[:2], cleared], archive=archive, limit=9)
    assert (page.text, page.source) == ("Row 00000", "archive")


def test_recall_reads_a_session_archive_sync_and_async() -> None:
    session = ContextSession(
        {
            "mode": "reduce",
            "trigger_chars": 1_000,
            "steps": [{"id": "old", "kind": "clear", "fragment_id": "history", "keep_recent": 0}],
        },
        MemoryStore(),
        "s",
    )
    session.add(history())
    context = list(session.context().fragment("history").messages)
    assert context[2]["content"].startswith("[cleared: 25000 characters")
    page = recall("call_1", history=context, archive=session, offset=24_990)
    assert (page.text, page.source) == (REPORT[24_990:], "archive")

    async def read() -> RecallPage:
        return await arecall("call_1", history=context, archive=session.aarchive, limit=3)

    assert asyncio.run(read()).text == "Row"


def test_recall_works_inside_a_running_event_loop() -> None:
    async def inside() -> str:
        return recall("call_1", history=lambda: history(), limit=3).text

    assert asyncio.run(inside()) == "Row"


@pytest.mark.parametrize(
    ("arguments", "error", "code"),
    [
        ({"ref": "call_9"}, InvalidValueError, "unknown_recall_ref"),
        ({"ref": "call_1", "offset": -1}, InvalidValueError, "negative_size"),
        ({"ref": "call_1", "limit": 0}, InvalidValueError, "invalid_recall_limit"),
        ({"ref": 7}, InvalidTypeError, "not_a_string"),
        ({"ref": "call_1", "offset": 1.5}, InvalidTypeError, "not_a_whole_number"),
    ],
)
def test_a_bad_recall_is_a_coded_translated_error(
    arguments: dict[str, Any], error: type[Exception], code: str
) -> None:
    with pytest.raises(error) as caught:
        recall(arguments.pop("ref"), history=history(), **arguments)
    assert caught.value.code == code  # type: ignore[attr-defined]
    assert_translated(caught.value)  # type: ignore[arg-type]


def test_a_source_that_is_not_a_list_is_a_coded_error_naming_it() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        recall("call_9", history=history(), archive=lambda: "not a list")
    assert caught.value.code == "not_a_message_list" and caught.value.params["name"] == "archive"


def test_the_tool_is_an_openai_function_whose_handler_answers_in_pages() -> None:
    tool = recall_tool(history=history, limit=10_000)
    definition = tool.definition()
    assert definition["type"] == "function"
    function = definition["function"]
    assert function["name"] == "recall" and function["parameters"]["required"] == ["ref"]
    assert tool.definition("openai-responses")["parameters"] == function["parameters"]
    answer = tool.handle(json.dumps({"ref": "call_1", "limit": 50_000}))
    assert answer.startswith(REPORT[:10_000])  # a call cannot ask for more than the tool's limit
    assert answer.endswith("; more from offset 10000]")
    assert tool.handle({"ref": "nope"}).startswith("Nothing named 'nope' can be recalled")
    assert asyncio.run(tool.ahandle({"ref": "call_1", "offset": 24_999})).startswith(
        REPORT[-1] + "\n[recall("
    )


def test_the_tool_s_schema_is_what_the_openai_sdk_accepts() -> None:
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.responses import FunctionToolParam
    from pydantic import TypeAdapter

    tool = recall_tool()
    TypeAdapter(ChatCompletionToolParam).validate_python(tool.definition())
    TypeAdapter(FunctionToolParam).validate_python(
        {**tool.definition("openai-responses"), "strict": False}
    )


def test_a_scripted_chat_loop_clears_a_result_then_reads_it_back_page_by_page() -> None:
    """The model reads a 25,000-character report, the policy clears it, and the model recalls
    it through the tool, page by page, without ever receiving more than a page at once."""
    messages = history()
    tool = recall_tool(history=lambda: messages, limit=8_000)
    policy = {
        "mode": "reduce",
        "trigger_chars": 9_000,
        "target_input_chars": 8_500,
        "steps": [
            {
                "id": "old",
                "kind": "clear",
                "fragment_id": "history",
                "keep_recent": 0,
                "exclude_tools": ["recall"],
            }
        ],
    }
    pages: list[str] = []
    offset: int | None = 0
    number = 0
    while offset is not None:
        sent = process_context(policy, [MessagesFragment("history", messages=messages)])
        seen = list(sent.fragment("history").messages)
        assert seen[2]["content"] == '[cleared: 25000 characters; recall("call_1")]'
        # the scripted model asks for the next page
        number += 1
        arguments = json.dumps({"ref": "call_1", "offset": offset})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"r{number}",
                        "type": "function",
                        "function": {"name": "recall", "arguments": arguments},
                    }
                ],
            }
        )
        answer = tool.handle(arguments)
        messages.append({"role": "tool", "tool_call_id": f"r{number}", "content": answer})
        text, footer = answer.rsplit("\n[recall(", 1)
        pages.append(text)
        offset = None if footer.endswith("; end]") else int(footer.rsplit(" ", 1)[1][:-1])
    assert "".join(pages) == REPORT and number == 4
