"""Chat messages: measuring, grouping and tool units in the OpenAI and Anthropic shapes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwise import (
    InvalidTypeError,
    InvalidValueError,
    find_orphan_results,
    group_messages,
    is_pinned,
    layout_messages,
    message_chars,
    message_text,
    messages_chars,
    tool_call_ids,
    tool_result_ids,
    tool_units,
)
from support.errors import assert_translated
from support.histories import Conversation, conversations, histories, render


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def openai_call(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def openai_result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# --- message_chars --------------------------------------------------------------------------


def test_string_content_counts_its_length_and_not_the_role() -> None:
    assert message_chars({"role": "user", "content": "Hello"}) == 5
    assert message_chars({"role": "assistant", "content": ""}) == 0
    assert message_chars({"role": "assistant", "content": None}) == 0
    assert message_chars({"role": "user", "name": "alice", "content": "Hi"}) == 2


def test_openai_parts_count_text_and_estimate_images() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "text", "text": " this image?"},
        ],
    }
    # An image of unknown size is not free: it counts the flat estimate, 1600 tokens of 4 chars.
    assert message_chars(message) == len("What is in") + len(" this image?") + 6400
    assert message_text(message) == "What is in\n this image?"


def test_openai_tool_call_counts_name_and_arguments_not_ids() -> None:
    message = openai_call("call_abcdef", name="get_weather", arguments='{"city": "Paris"}')
    assert message_chars(message) == len("get_weather") + len('{"city": "Paris"}')
    assert message_chars(openai_result("call_abcdef", "Sunny")) == 5


def test_assistant_text_and_tool_calls_add_up() -> None:
    message = openai_call("c", name="f", arguments="{}")
    message["content"] = "Checking."
    assert message_chars(message) == len("Checking.") + 1 + 2


def test_anthropic_tool_use_counts_the_compact_json_of_its_input() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "été", "n": 3}},
        ],
    }
    assert message_chars(message) == len("Let me look.") + len("search") + len('{"q":"été","n":3}')


def test_anthropic_tool_result_counts_string_and_block_content() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "42"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "abc"}, {"type": "image", "source": {}}],
            },
            {"type": "text", "text": "Go on"},
        ],
    }
    assert message_chars(message) == 2 + 3 + 5 + 6400


def test_thinking_refusal_legacy_function_call_and_langchain_args_count() -> None:
    assert (
        message_chars({"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}]})
        == 3
    )
    assert message_chars({"role": "assistant", "content": None, "refusal": "No."}) == 3
    legacy = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "f", "arguments": "{}"},
    }
    assert message_chars(legacy) == 3
    langchain = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "1", "name": "f", "args": {"a": 1}}],
    }
    assert message_chars(langchain) == 1 + len('{"a":1}')


def test_message_text_joins_the_measured_pieces() -> None:
    message = openai_call("c", name="add", arguments='{"a":1}')
    message["content"] = "Sure."
    assert message_text(message) == 'Sure.\nadd\n{"a":1}'
    assert message_text({"role": "user", "content": ""}) == ""


def test_messages_chars_sums_and_names_the_faulty_index() -> None:
    assert messages_chars([user("ab"), assistant("cde")]) == 5
    with pytest.raises(InvalidTypeError) as caught:
        messages_chars([user("ab"), {"role": "user", "content": 12}])
    assert caught.value.code == "invalid_message_field"
    assert caught.value.params == {"index": 1, "field": "content", "type_name": "int"}


@pytest.mark.parametrize(
    ("message", "code", "field"),
    [
        ("hello", "message_not_a_mapping", None),
        ({"role": "user", "content": [3]}, "invalid_message_field", "content[0]"),
        (
            {"role": "user", "content": [{"type": "text", "text": 3}]},
            "invalid_message_field",
            "content[0].text",
        ),
        ({"role": "assistant", "tool_calls": "f()"}, "invalid_message_field", "tool_calls"),
        ({"role": "assistant", "tool_calls": ["f"]}, "invalid_message_field", "tool_calls[0]"),
        (
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]},
            "invalid_message_field",
            "tool_calls[0].function.arguments",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": 3}],
            },
            "invalid_message_field",
            "content[0].content",
        ),
    ],
)
def test_malformed_messages_raise_a_type_error_with_a_stable_code(
    message: Any, code: str, field: str | None
) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        message_chars(message)
    assert isinstance(caught.value, TypeError)
    assert caught.value.code == code
    assert caught.value.params.get("field") == field
    assert caught.value.params["index"] == 0
    for locale in ("fr", "zh"):
        assert caught.value.render(locale)


def test_a_list_of_messages_must_be_a_list() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        group_messages("hello")  # type: ignore[arg-type]
    assert caught.value.code == "not_a_message_list"
    assert caught.value.params == {"name": "messages", "type_name": "str"}


# --- tool ids, pinning, orphans -----------------------------------------------------------------


def test_tool_ids_in_both_shapes() -> None:
    assert tool_call_ids(openai_call("c1")) == ("c1",)
    assert tool_result_ids(openai_result("c1")) == ("c1",)
    anthropic_result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
    }
    assert tool_result_ids(anthropic_result) == ("t1",)
    assert tool_call_ids(user("hi")) == ()
    assert tool_result_ids(user("hi")) == ()
    server_tool = {
        "role": "assistant",
        "content": [{"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}}],
    }
    assert tool_call_ids(server_tool) == ()


def test_system_and_developer_messages_are_pinned() -> None:
    assert is_pinned({"role": "system", "content": "x"})
    assert is_pinned({"role": "developer", "content": "x"})
    assert not is_pinned(user("x"))


def test_find_orphan_results() -> None:
    history = [user("q"), openai_call("c1"), openai_result("c1"), openai_result("gone")]
    assert find_orphan_results(history) == [3]
    assert find_orphan_results(history[:3]) == []


# --- groupings ----------------------------------------------------------------------------------


def test_messages_before_the_first_user_turn_form_an_ordinary_group() -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        assistant("Welcome!"),
        user("Q1"),
        openai_call("c1"),
        openai_result("c1"),
        assistant("A1"),
        user("Q2"),
        assistant("A2"),
    ]
    groups = group_messages(history)
    assert [(g.start, g.stop, g.pinned) for g in groups] == [
        (0, 2, False),
        (2, 6, False),
        (6, 8, False),
    ]
    assert layout_messages(history).pinned[:2] == [True, False]
    assert groups[0].chars == len("Be brief.") + len("Welcome!")
    assert groups[2].messages == (history[6], history[7])
    assert groups[2].messages[0] is history[6]


def test_user_turn_grouping_without_user_message_is_one_ordinary_group() -> None:
    history = [{"role": "system", "content": "S"}, assistant("A")]
    assert [(g.start, g.stop, g.pinned) for g in group_messages(history)] == [(0, 2, False)]
    system_only = [{"role": "system", "content": "S"}, {"role": "developer", "content": "D"}]
    assert [(g.start, g.stop, g.pinned) for g in group_messages(system_only)] == [(0, 2, True)]
    assert group_messages([]) == []
    assert group_messages([], "message") == []


def test_a_user_message_that_only_carries_tool_results_does_not_start_a_turn() -> None:
    history = [
        user("Add 1 and 2."),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "3"}]},
        assistant("3"),
    ]
    assert [(g.start, g.stop) for g in group_messages(history)] == [(0, 4)]


def test_a_user_message_with_results_and_text_stays_with_its_call() -> None:
    history = [
        user("Add."),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
                {"type": "text", "text": "Now multiply."},
            ],
        },
        assistant("Done"),
    ]
    assert [(g.start, g.stop) for g in group_messages(history)] == [(0, 4)]
    assert [(g.start, g.stop) for g in group_messages(history, "message")] == [
        (0, 1),
        (1, 3),
        (3, 4),
    ]


def test_message_grouping_keeps_parallel_calls_and_pins_system_groups() -> None:
    parallel = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    history = [
        user("Q"),
        parallel,
        openai_result("a"),
        openai_result("b"),
        {"role": "system", "content": "Mind the budget."},
        assistant("A"),
    ]
    groups = group_messages(history, "message")
    assert [(g.start, g.stop, g.pinned) for g in groups] == [
        (0, 1, False),
        (1, 4, False),
        (4, 5, True),
        (5, 6, False),
    ]


def test_a_result_that_arrives_late_pulls_the_messages_between_into_the_unit() -> None:
    history = [
        user("Q"),
        openai_call("c1"),
        assistant("still working"),
        openai_result("c1"),
        user("R"),
    ]
    assert tool_units(history) == [(1, 4)]
    assert [(g.start, g.stop) for g in group_messages(history, "message")] == [
        (0, 1),
        (1, 4),
        (4, 5),
    ]


def test_an_orphan_result_stays_with_the_message_before_it() -> None:
    history = [user("Q"), assistant("A"), openai_result("gone"), user("R")]
    assert [(g.start, g.stop) for g in group_messages(history, "message")] == [
        (0, 1),
        (1, 3),
        (3, 4),
    ]


def test_unknown_grouping_is_a_value_error() -> None:
    with pytest.raises(InvalidValueError) as caught:
        group_messages([user("x")], "turn")  # type: ignore[arg-type]
    assert caught.value.code == "unknown_grouping"
    assert caught.value.params == {
        "grouping": "turn",
        "supported": ["user-turn", "message", "tool-unit"],
    }
    assert_translated(caught.value)


# --- properties ---------------------------------------------------------------------------------


def _unit_of(history: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Every (call index, result index) pair of a history."""
    calls: dict[str, int] = {}
    pairs = []
    for index, message in enumerate(history):
        for result in tool_result_ids(message):
            pairs.append((calls[result], index))
        for call in tool_call_ids(message):
            calls[call] = index
    return pairs


@given(histories, st.sampled_from(["user-turn", "message", "tool-unit"]))
def test_groups_cover_every_message_once_and_never_split_a_tool_unit(
    history: list[dict[str, Any]], grouping: Any
) -> None:
    groups = group_messages(history, grouping)
    covered = [index for group in groups for index in range(group.start, group.stop)]
    assert covered == list(range(len(history)))
    assert sum(group.chars for group in groups) == messages_chars(history)
    group_of = {
        index: number for number, g in enumerate(groups) for index in range(g.start, g.stop)
    }
    for call_index, result_index in _unit_of(history):
        assert group_of[call_index] == group_of[result_index]
    for start, stop in tool_units(history):
        assert len({group_of[index] for index in range(start, stop)}) == 1


@given(histories)
def test_every_unpinned_user_turn_starts_with_a_user_message_of_its_own(
    history: list[dict[str, Any]],
) -> None:
    for group in group_messages(history):
        first = group.messages[0]
        if group.pinned:
            assert all(is_pinned(message) for message in group.messages)
        elif group.start > 0 or first["role"] == "user":
            assert first["role"] == "user"
            assert tool_result_ids(first) == ()
        else:  # what comes before the first user turn: an ordinary group
            assert all(message["role"] != "user" for message in group.messages)


@given(conversations)
def test_user_turns_measure_the_same_in_both_shapes(conversation: Conversation) -> None:
    openai = group_messages(render(conversation, "openai"))
    anthropic = group_messages(render(conversation, "anthropic"))
    assert [(g.chars, g.pinned) for g in openai] == [(g.chars, g.pinned) for g in anthropic]


@given(histories)
def test_message_chars_is_the_length_of_the_measured_text_pieces(
    history: list[dict[str, Any]],
) -> None:
    for message in history:
        text = message_text(message)
        pieces = text.split("\n") if text else []
        assert message_chars(message) == sum(len(piece) for piece in pieces)
