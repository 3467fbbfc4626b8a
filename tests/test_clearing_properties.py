"""Properties of the clear and clip steps, per message shape, over random tool loops.

Each conversation is drawn as abstract events and rendered in one shape (see
``support.tool_loops``), which records what each message calls and answers, each result's text
and which messages carry thinking. After a clear or a clip, the messages must still be valid for
the provider's own SDK types (or the framework's own serialization), every call must keep its
results, the ledger must be exact, and every cleared result must be recallable.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwise import (
    CLEARED_PLACEHOLDER,
    CLIP_MARKER,
    MessagesFragment,
    find_orphan_results,
    message_shape,
    messages_chars,
    process_context,
    recall,
    tool_call_ids,
    tool_result_ids,
)
from support.tool_loops import (
    SHAPES,
    TOOLS,
    Conversation,
    assert_valid,
    call_arguments,
    events,
    has_thinking,
    render,
    result_texts,
)

CLIP_ROOM = len(CLIP_MARKER.format(n=10**6, ref="call_" + "x" * 24))
"""The smallest ``max_chars`` a clip step takes: its marker for a large cut and a long call id."""


def _policy(step: dict[str, Any]) -> dict[str, Any]:
    return {"mode": "reduce", "trigger_chars": 1, "target_input_chars": 0, "steps": [step]}


def _origins(conversation: Conversation, output: list[Any]) -> list[int]:
    """The input index of each output message: itself, or the message its copy replaces (only a
    Responses reasoning item ever leaves the list)."""
    found: list[int] = []
    index = 0
    for message in output:
        # A reasoning item is kept or dropped, never copied.
        while conversation.reasoning_item[index] and message is not conversation.messages[index]:
            index += 1
        found.append(index)
        index += 1
    return found


def _check_ledger(conversation: Conversation, output: list[Any], result: Any) -> None:
    kept = {id(message) for message in output}
    removed = result.removed["h"]
    expected = [message for message in conversation.messages if id(message) not in kept]
    assert [id(message) for message in removed] == [id(message) for message in expected]
    assert result.report.after_chars == messages_chars(output)
    for change in result.report.changes:
        assert change.before_chars - change.removed_chars + change.added_chars == (
            change.after_chars
        )


def _check_pairs(conversation: Conversation, output: list[Any]) -> None:
    assert [c for m in output for c in tool_call_ids(m)] == [
        c for calls in conversation.calls for c in calls
    ]
    assert [r for m in output for r in tool_result_ids(m)] == [
        r for results in conversation.results for r in results
    ]
    assert find_orphan_results(output) == []


def _older(conversation: Conversation, keep_recent: int, exclude: set[str]) -> set[str]:
    """The calls that a clear step reaches: all but the newest ``keep_recent`` not excluded."""
    uses = [call for call in conversation.order if conversation.tools[call] not in exclude]
    return set(uses[: max(0, len(uses) - keep_recent)])


def _shorter(conversation: Conversation, call: str) -> bool:
    """Whether the placeholder of a call's result is shorter than the result."""
    text = conversation.texts[call]
    return len(CLEARED_PLACEHOLDER.format(n=len(text), ref=call)) < len(text)


def _check_reasoning(
    shape: str, conversation: Conversation, output: list[Any], reasoning: bool
) -> None:
    latest = conversation.latest_turn()
    origins = _origins(conversation, output)
    present = set(origins)
    for index in range(len(conversation.messages)):
        if not (conversation.thinking[index] or conversation.reasoning_item[index]):
            continue
        if index >= latest or not reasoning:
            assert index in present, "thinking of the latest turn, or not asked, was dropped"
            assert has_thinking(shape, output[origins.index(index)])
        elif conversation.reasoning_item[index]:
            following = conversation.messages[index + 1]
            needs_id = following.get("type") == "message"
            assert (index in present) == needs_id
        else:
            assert not has_thinking(shape, output[origins.index(index)])
    if shape == "openai-responses":
        for position, item in enumerate(output):
            if item.get("type") == "reasoning":
                assert position + 1 < len(output) and output[position + 1]["type"] != "reasoning"
            if item.get("type") == "function_call" and "id" in item:
                before = position - 1
                while before >= 0 and output[before].get("type") == "function_call":
                    before -= 1
                assert before >= 0 and output[before].get("type") == "reasoning"


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drawn=events,
    keep_recent=st.integers(0, 4),
    exclude=st.sets(st.sampled_from(TOOLS), max_size=1),
    inputs=st.booleans(),
    reasoning=st.booleans(),
)
def test_clear_keeps_every_shape_valid_paired_and_recallable(
    shape: str,
    drawn: list[tuple[Any, ...]],
    keep_recent: int,
    exclude: set[str],
    inputs: bool,
    reasoning: bool,
) -> None:
    conversation = render(shape, drawn)
    assert_valid(shape, conversation.messages)
    step = {
        "id": "old",
        "kind": "clear",
        "fragment_id": "h",
        "keep_recent": keep_recent,
        "exclude_tools": sorted(exclude),
        "inputs": inputs,
        "reasoning": reasoning,
    }
    result = process_context(_policy(step), [MessagesFragment("h", messages=conversation.messages)])
    output = list(result.fragments[0].messages)

    assert_valid(shape, output)
    assert {message_shape(message) for message in output} <= {
        message_shape(message) for message in conversation.messages
    }
    _check_ledger(conversation, output, result)
    _check_pairs(conversation, output)
    older = _older(conversation, keep_recent, exclude)
    texts = {k: v for message in output for k, v in result_texts(shape, message).items()}
    arguments = {k: v for message in output for k, v in call_arguments(shape, message).items()}
    originals = {
        k: v for message in conversation.messages for k, v in call_arguments(shape, message).items()
    }
    for call, original in conversation.texts.items():
        if call in older and _shorter(conversation, call):
            assert texts[call] == CLEARED_PLACEHOLDER.format(n=len(original), ref=call)
            page = recall(call, history=conversation.messages, limit=10_000)
            assert page.text == original and page.next_offset is None
        else:
            assert texts[call] == original
        if inputs and call in older:
            assert arguments[call] in ("{}", {})
        else:
            assert arguments[call] == originals[call]
    _check_reasoning(shape, conversation, output, reasoning)

    again = process_context(_policy(step), [MessagesFragment("h", messages=output)])
    assert not again.report.changes, "a second clear changed the cleared context"


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=events, max_chars=st.integers(CLIP_ROOM, 300))
def test_clip_keeps_every_shape_valid_and_every_result_within_its_limit(
    shape: str, drawn: list[tuple[Any, ...]], max_chars: int
) -> None:
    conversation = render(shape, drawn)
    step = {"id": "clip", "kind": "clip", "fragment_id": "h", "max_chars": max_chars}
    result = process_context(_policy(step), [MessagesFragment("h", messages=conversation.messages)])
    output = list(result.fragments[0].messages)

    assert_valid(shape, output)
    _check_ledger(conversation, output, result)
    _check_pairs(conversation, output)
    texts = {k: v for message in output for k, v in result_texts(shape, message).items()}
    for call, original in conversation.texts.items():
        if len(original) <= max_chars:
            assert texts[call] == original
            continue
        clipped = texts[call]
        if clipped == original:  # not even the marker alone would be shorter
            assert len(CLIP_MARKER.format(n=len(original), ref=call)) >= len(original)
            continue
        assert len(clipped) < len(original)
        assert f'recall("{call}")' in clipped
        marker_end = clipped.index(f'recall("{call}")]\n') + len(f'recall("{call}")]\n')
        if len(clipped) <= max_chars:
            head = clipped[: clipped.index("\n[clipped: ")]
            tail = clipped[marker_end:]
            assert original.startswith(head) and original.endswith(tail)
        assert recall(call, history=conversation.messages, limit=10_000).text == original


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=events, keep_groups=st.integers(0, 2), target=st.integers(0, 2_000))
def test_tool_unit_trim_keeps_the_task_and_every_unit_whole(
    shape: str, drawn: list[tuple[Any, ...]], keep_groups: int, target: int
) -> None:
    conversation = render(shape, drawn)
    step = {
        "id": "units",
        "kind": "trim",
        "fragment_id": "h",
        "grouping": {"kind": "tool-unit"},
        "keep_groups": keep_groups,
        "target_chars": target,
    }
    result = process_context(_policy(step), [MessagesFragment("h", messages=conversation.messages)])
    output = list(result.fragments[0].messages)

    assert_valid(shape, output)
    _check_ledger(conversation, output, result)
    kept = {id(message) for message in output}
    assert all(any(message is original for original in conversation.messages) for message in output)
    if any(conversation.user_turn):
        assert id(conversation.messages[conversation.latest_turn()]) in kept
    owner = {call: i for i, calls in enumerate(conversation.calls) for call in calls}
    for index, message in enumerate(conversation.messages):
        if id(message) not in kept:
            continue
        for result_id in conversation.results[index]:
            assert id(conversation.messages[owner[result_id]]) in kept
        for call in conversation.calls[index]:
            for other, results in enumerate(conversation.results):
                if call in results:
                    assert id(conversation.messages[other]) in kept
