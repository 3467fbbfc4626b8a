"""The clear and clip steps and the tool-unit grouping: what a long tool loop keeps, on examples
a reader can check by eye. The random tool loops of every shape are in
tests/test_clearing_properties.py."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from contextwise import (
    CLEARED_PLACEHOLDER,
    CLIP_MARKER,
    ContextPolicy,
    ContextSession,
    EstimateCounter,
    MemoryStore,
    MessagesFragment,
    PolicyConfigurationError,
    TextFragment,
    messages_chars,
    process_context,
    recall,
)
from support.errors import assert_translated


def chat_loop(calls: int, size: int = 5_000) -> list[dict[str, Any]]:
    """One user turn in which the model calls ``fetch`` ``calls`` times."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research agent."},
        {"role": "user", "content": "Compare the three reports and summarize them."},
    ]
    for number in range(calls):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {"name": "fetch", "arguments": json.dumps({"page": number})},
                    }
                ],
            }
        )
        text = f"Page {number}. " + "word " * (size // 5)
        messages.append({"role": "tool", "tool_call_id": f"call_{number}", "content": text})
    return messages


def run(step: dict[str, Any], messages: list[Any], **options: Any) -> Any:
    policy = {"mode": "reduce", "trigger_chars": 1, "target_input_chars": 0, "steps": [step]}
    return process_context(policy, [MessagesFragment("history", messages=messages)], **options)


def clear(**fields: Any) -> dict[str, Any]:
    return {"id": "old-results", "kind": "clear", "fragment_id": "history", **fields}


# --- clear -------------------------------------------------------------------------------------


def test_clear_replaces_the_older_results_with_a_placeholder_that_names_the_call() -> None:
    messages = chat_loop(5)
    result = run(clear(keep_recent=2), messages)
    output = result.fragment("history").messages
    contents = [m["content"] for m in output if m["role"] == "tool"]
    assert contents[:3] == [
        CLEARED_PLACEHOLDER.format(n=len(messages[2 * n + 3]["content"]), ref=f"call_{n}")
        for n in range(3)
    ]
    assert contents[0] == '[cleared: 5008 characters; recall("call_0")]'
    assert contents[3:] == [messages[9]["content"], messages[11]["content"]]
    # The calls, the task and the newest results are the caller's own objects.
    assert output[1] is messages[1] and output[2] is messages[2] and output[-1] is messages[-1]
    assert result.removed["history"] == [messages[3], messages[5], messages[7]]
    change = result.report.changes[0]
    assert (change.kind, change.removed_messages, change.added_messages) == ("clear", 3, 3)
    assert result.report.after_chars == messages_chars(output)


def test_a_cleared_result_is_recalled_from_the_history_page_by_page() -> None:
    messages = chat_loop(3, size=20_000)
    run(clear(keep_recent=0), messages)
    original = messages[3]["content"]
    pages = []
    page = recall("call_0", history=messages)
    pages.append(page.text)
    while page.next_offset is not None:
        page = recall("call_0", history=messages, offset=page.next_offset)
        pages.append(page.text)
    assert [len(text) for text in pages] == [8_000, 8_000, 4_008]
    assert "".join(pages) == original and page.source == "history"


def test_clear_with_inputs_empties_the_cleared_calls_arguments_in_each_shape_s_form() -> None:
    anthropic = [
        {"role": "user", "content": "Look it up."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {"q": "x"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "y" * 500}],
        },
    ]
    output = run(clear(keep_recent=0, inputs=True), anthropic).fragment("history").messages
    assert output[1]["content"][0]["input"] == {}
    assert output[2]["content"][0]["content"] == '[cleared: 500 characters; recall("t1")]'
    chat = run(clear(keep_recent=0, inputs=True), chat_loop(1)).fragment("history").messages
    assert chat[2]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_excluded_tools_and_the_newest_uses_stay_whole() -> None:
    messages = chat_loop(4)
    messages[4]["tool_calls"][0]["function"]["name"] = "recall"
    output = run(clear(keep_recent=1, exclude_tools=["recall"]), messages)
    contents = [m["content"] for m in output.fragment("history").messages if m["role"] == "tool"]
    assert contents[1] == messages[5]["content"]  # the recall tool's page
    assert contents[3] == messages[9]["content"]  # the newest use
    assert contents[0].startswith("[cleared:") and contents[2].startswith("[cleared:")


def test_clear_frees_nothing_below_its_minimum_gain() -> None:
    messages = chat_loop(4)
    gain = run(clear(keep_recent=1), messages).report.changes[0].saved_chars
    assert not run(clear(keep_recent=1, min_gain_chars=gain + 1), messages).report.changes
    assert run(clear(keep_recent=1, min_gain_chars=gain), messages).report.changes
    counter = EstimateCounter()
    tokens = run(clear(keep_recent=1), messages, counter=counter).report.changes[0]
    saved = (tokens.before_tokens or 0) - (tokens.after_tokens or 0)
    assert saved > 1_000
    skipped = run(clear(keep_recent=1, min_gain_tokens=saved + 1), messages, counter=counter)
    assert not skipped.report.changes


def test_a_short_result_and_a_cleared_one_are_left_as_they_are() -> None:
    messages = chat_loop(2)
    messages[3]["content"] = "ok"
    first = run(clear(keep_recent=0), messages).fragment("history").messages
    assert first[3]["content"] == "ok"
    again = run(clear(keep_recent=0), list(first))
    assert not again.report.changes


def test_clear_with_reasoning_drops_the_thinking_of_earlier_turns_only() -> None:
    def turn(number: int) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"Question {number}"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"Let me look {number}.", "signature": "s"},
                    {"type": "tool_use", "id": f"t{number}", "name": "fetch", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{number}", "content": "y"}],
            },
        ]

    messages = turn(1) + turn(2)
    output = run(clear(reasoning=True), messages).fragment("history").messages
    assert [block["type"] for block in output[1]["content"]] == ["tool_use"]
    assert output[4] is messages[4]  # the latest turn keeps its signed thinking


def test_a_responses_reasoning_item_leaves_with_the_ids_of_its_calls() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "First question"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "done"},
        {"type": "reasoning", "id": "rs_2", "summary": []},
        {
            "type": "message",
            "id": "msg_2",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
        {"role": "user", "content": "Second question"},
    ]
    output = run(clear(reasoning=True), messages).fragment("history").messages
    assert [item.get("type", "user") for item in output] == [
        "user",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "user",
    ]
    assert "id" not in output[1]  # the API refuses an fc_ id without its reasoning item
    assert output[3] is messages[4]  # a message's id is required: its reasoning stays


def test_a_gemini_result_without_an_id_is_named_by_its_tool_and_digest() -> None:
    response = {"output": "z" * 300}
    messages = [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "weather", "response": response}}],
        },
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {}}}]},
    ]
    output = run(clear(keep_recent=1), messages).fragment("history").messages
    digest = hashlib.sha256(json.dumps(response, separators=(",", ":")).encode()).hexdigest()
    ref = f"weather@{digest[:12]}"
    cleared = output[2]["parts"][0]["functionResponse"]["response"]["output"]
    assert cleared == f'[cleared: 300 characters; recall("{ref}")]'
    assert recall(ref, history=messages).text == "z" * 300


def test_hosted_results_and_screenshots_are_never_cleared() -> None:
    screenshot = {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"}
    messages = [
        {"role": "user", "content": "Click it."},
        {
            "type": "computer_call",
            "id": "cu_1",
            "call_id": "c1",
            "action": {"type": "screenshot"},
            "pending_safety_checks": [],
            "status": "completed",
        },
        {"type": "computer_call_output", "call_id": "c1", "output": screenshot},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "x" * 400},
        },
    ]
    assert not run(clear(keep_recent=0), messages).report.changes


def test_a_clearing_reaches_the_session_archive_and_is_recalled_from_it() -> None:
    session = ContextSession(
        {
            "mode": "reduce",
            "trigger_chars": 8_000,
            "target_input_chars": 6_000,
            "steps": [clear(keep_recent=1)],
        },
        MemoryStore(),
        "agent-1",
    )
    messages = chat_loop(3)
    session.add(messages)
    context = session.context().fragment("history").messages
    assert context[3]["content"] == '[cleared: 5008 characters; recall("call_0")]'
    archived = [item.message for item in session.archive()]
    assert archived == [messages[3], messages[5]]
    page = recall("call_1", history=list(context), archive=session, limit=10)
    assert (page.text, page.source, page.total_chars) == ("Page 1. wo", "archive", 5008)


# --- clip --------------------------------------------------------------------------------------


def test_clip_cuts_a_long_result_to_its_head_and_tail_around_the_marker() -> None:
    text = "".join(f"line {n:03}\n" for n in range(200))  # 1,800 characters
    messages = [
        {"role": "user", "content": "Read the log."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_log",
                    "type": "function",
                    "function": {"name": "log", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_log", "content": text},
    ]
    step = {"id": "clip", "kind": "clip", "fragment_id": "history", "max_chars": 400}
    clipped = run(step, messages).fragment("history").messages[2]["content"]
    marker = CLIP_MARKER.format(n=1_800 - (400 - 48), ref="call_log")
    assert marker == '\n[clipped: 1448 characters; recall("call_log")]\n' and len(marker) == 48
    assert len(clipped) == 400
    assert clipped == text[:176] + marker + text[-176:]
    assert recall("call_log", history=messages, limit=2_000).text == text


def test_clip_counts_tokens_with_the_counter() -> None:
    messages = chat_loop(1, size=4_000)
    step = {"id": "clip", "kind": "clip", "fragment_id": "history", "max_tokens": 100}
    result = run(step, messages, counter=EstimateCounter())
    content = result.fragment("history").messages[3]["content"]
    assert EstimateCounter().count(content) <= 100 < EstimateCounter().count(content + "x" * 8)


# --- tool-unit ---------------------------------------------------------------------------------


def test_tool_unit_trims_older_units_of_the_turn_and_keeps_the_task() -> None:
    messages = chat_loop(14)
    assert messages_chars(messages) > 68_000
    step = {
        "id": "units",
        "kind": "trim",
        "fragment_id": "history",
        "grouping": {"kind": "tool-unit"},
        "target_chars": 12_000,
    }
    output = list(run(step, messages).fragment("history").messages)
    assert output[:2] == messages[:2]  # the system message and the task
    assert output[-2:] == messages[-2:]  # the newest unit
    assert messages_chars(output) <= 12_000
    assert [m["tool_call_id"] for m in output if m["role"] == "tool"] == ["call_12", "call_13"]


def test_a_clear_then_trim_policy_bounds_a_tool_loop_and_keeps_the_task() -> None:
    messages = chat_loop(14)
    policy = {
        "mode": "reduce",
        "trigger_chars": 20_000,
        "target_input_chars": 12_000,
        "steps": [
            clear(keep_recent=2),
            {
                "id": "units",
                "kind": "trim",
                "fragment_id": "history",
                "grouping": {"kind": "tool-unit"},
                "target_chars": 12_000,
            },
        ],
    }
    result = process_context(policy, [MessagesFragment("history", messages=messages)])
    output = result.fragment("history").messages
    assert output[1] is messages[1] and result.report.after_chars <= 12_000
    assert [change.kind for change in result.report.changes] == ["clear"]  # clear was enough


def test_without_keep_task_tool_unit_is_message_grouping() -> None:
    messages = chat_loop(3)
    step = {
        "id": "units",
        "kind": "trim",
        "fragment_id": "history",
        "grouping": {"kind": "tool-unit", "keep_task": False},
        "keep_groups": 1,
    }
    output = run(step, messages).fragment("history").messages
    assert output == (messages[0], *messages[-2:])


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "code", "field"),
    [
        (clear(keep_recent=-1), "out_of_range", "steps[0].keep_recent"),
        (clear(keepRecent=2, colour="blue"), "unknown_key", "steps[0].colour"),
        (clear(inputs="yes"), "wrong_type", "steps[0].inputs"),
        (
            {"id": "c", "kind": "clip", "fragmentId": "h", "field": "text", "maxChars": 9},
            "invalid_choice",
            "steps[0].field",
        ),
        (
            {"id": "c", "kind": "clip", "fragmentId": "h", "maxChars": -5},
            "out_of_range",
            "steps[0].maxChars",
        ),
    ],
)
def test_a_bad_value_is_a_coded_translated_error_with_its_field_path(
    step: dict[str, Any], code: str, field: str
) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "steps": [step]})
    assert (caught.value.code, caught.value.params["field"]) == (code, field)
    assert_translated(caught.value)


@pytest.mark.parametrize(
    ("step", "code"),
    [
        ({"id": "c", "kind": "clip", "fragment_id": "h"}, "clip_without_limit"),
        (
            {
                "id": "t",
                "kind": "trim",
                "fragment_id": "h",
                "grouping": {"kind": "message", "keep_task": False},
            },
            "keep_task_without_tool_unit",
        ),
    ],
)
def test_a_step_that_breaks_a_rule_is_a_coded_translated_error(
    step: dict[str, Any], code: str
) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "steps": [step]})
    assert caught.value.code == code and caught.value.params["step_id"] == step["id"]
    assert_translated(caught.value)


def test_clip_on_a_text_fragment_and_token_limits_without_a_counter_are_refused() -> None:
    policy = {
        "mode": "reduce",
        "trigger_chars": 5,
        "steps": [{"id": "c", "kind": "clip", "fragment_id": "doc", "max_chars": 90}],
    }
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(policy, [TextFragment("doc", text="A long text.")])
    assert caught.value.code == "field_mismatch"
    assert_translated(caught.value)
    tokens = {
        "mode": "reduce",
        "trigger_chars": 5,
        "steps": [
            clear(min_gain_tokens=10),
            {"id": "c", "kind": "clip", "fragment_id": "history", "max_tokens": 9},
        ],
    }
    with pytest.raises(PolicyConfigurationError) as missing:
        ContextPolicy.model_validate(tokens).bind()
    assert missing.value.params["limits"] == ["old-results.min_gain_tokens", "c.max_tokens"]
