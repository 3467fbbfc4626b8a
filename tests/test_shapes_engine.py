"""Every place that takes messages reads every shape: trim, compress, app, routing, prepare_step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from contextwise import (
    ChoiceQuestion,
    ContextPolicy,
    Decision,
    EstimateCounter,
    Fragment,
    InvalidTypeError,
    InvalidValueError,
    MessagesFragment,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    PartEstimate,
    RoutingContext,
    default_state,
    find_orphan_results,
    group_messages,
    messages_chars,
    prepare_step,
    process_context,
    tool_units,
)

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}


def policy(**step: Any) -> ContextPolicy:
    base = {"id": "s", "fragmentId": "h", "kind": "trim", "keepGroups": 1}
    return ContextPolicy.model_validate(
        {"mode": "reduce", "triggerChars": 1, "targetInputChars": 0, "steps": [base | step]}
    )


def test_one_list_can_mix_every_shape() -> None:
    history: list[Any] = [
        SystemMessage("Be brief."),
        {"role": "user", "content": "Weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "Sunny"},
        {"role": "user", "parts": [{"text": "And tomorrow?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "forecast", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "forecast", "response": {}}}]},
        HumanMessage("Thanks"),
        ModelResponse(parts=[TextPart("You're welcome.")]),
    ]
    assert [(g.start, g.stop, g.pinned) for g in group_messages(history)] == [
        (0, 1, True),
        (1, 5, False),
        (5, 8, False),
        (8, 10, False),
    ]
    assert tool_units(history) == [(2, 5), (6, 8)]
    assert find_orphan_results(history) == []
    assert find_orphan_results(history[4:]) == [0]
    assert find_orphan_results(history[7:]) == [0]  # a Gemini response without its call


def test_a_reasoning_item_is_never_left_without_its_call() -> None:
    history = [
        {"role": "user", "content": "Plan a trip."},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "x"}]},
        {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "results"},
        {"type": "reasoning", "id": "rs_2", "summary": []},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Ok"}],
        },
    ]
    groups = group_messages(history, "message")
    assert [(g.start, g.stop) for g in groups] == [(0, 1), (1, 4), (4, 6)]


def test_langchain_objects_come_back_by_identity_in_fragments_and_removed() -> None:
    history = [
        SystemMessage("Be brief."),
        HumanMessage("Add 1 and 2"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 1, "b": 2}}]),
        ToolMessage("3", tool_call_id="c1"),
        AIMessage("3"),
        HumanMessage("Thanks"),
    ]
    result = process_context(policy(), [MessagesFragment("h", messages=history)])
    kept = result.fragments[0].messages
    assert [id(m) for m in kept] == [id(history[0]), id(history[5])]
    assert [id(m) for m in result.removed["h"]] == [id(m) for m in history[1:5]]
    assert result.report.after_chars == messages_chars(kept)


def test_pydantic_ai_history_is_trimmed_natively() -> None:
    history = [
        ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("Add 1 and 2")]),
        ModelResponse(parts=[ThinkingPart("hmm"), ToolCallPart("add", {"a": 1}, "t1")]),
        ModelRequest(parts=[ToolReturnPart("add", 3, "t1")]),
        ModelResponse(parts=[TextPart("3")]),
        ModelRequest(parts=[UserPromptPart("Thanks")]),
        ModelResponse(parts=[TextPart("You're welcome")]),
    ]
    result = process_context(policy(), [MessagesFragment("h", messages=history)])
    kept = list(result.fragments[0].messages)
    assert kept == [history[0], history[4], history[5]]
    assert all(a is b for a, b in zip(kept, [history[0], history[4], history[5]], strict=True))


def test_a_compressor_gets_the_shape_and_its_text_becomes_a_message_of_that_shape() -> None:
    history = [HumanMessage("one " * 30), AIMessage("two " * 30), HumanMessage("three")]
    given: list[Any] = []

    def summarize(messages: list[Any]) -> str:
        given.extend(messages)
        return "Summary."

    result = process_context(
        policy(kind="compress", compressor="summarize"),
        [MessagesFragment("h", messages=history)],
        compressors={"summarize": summarize},
    )
    kept = result.fragments[0].messages
    assert all(isinstance(message, HumanMessage | AIMessage) for message in given)
    assert isinstance(kept[0], HumanMessage) and kept[0].content == "Summary."
    assert kept[1] is history[2]


def test_a_compressor_may_return_a_framework_message() -> None:
    history = [HumanMessage("one " * 30), AIMessage("two " * 30), HumanMessage("three")]
    result = process_context(
        policy(kind="compress", compressor="summarize"),
        [MessagesFragment("h", messages=history)],
        compressors={"summarize": lambda messages: AIMessage("Short.")},
    )
    kept = result.fragments[0].messages
    assert isinstance(kept[0], AIMessage) and result.report.changes[0].status == "applied"


def test_an_app_that_drops_a_message_gives_back_the_callers_objects() -> None:
    history = [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]

    def drop_first(fragment: Fragment) -> list[Any]:
        return list(fragment.messages)[1:]

    result = process_context(
        ContextPolicy.model_validate(
            {
                "mode": "reduce",
                "triggerChars": 1,
                "steps": [{"id": "a", "kind": "app", "fragmentId": "h", "app": "drop"}],
            }
        ),
        [MessagesFragment("h", messages=history)],
        apps={"drop": drop_first},
    )
    kept = result.fragments[0].messages
    assert [id(m) for m in kept] == [id(history[1]), id(history[2])]
    assert result.removed["h"][0] is history[0]


def test_estimated_parts_are_counted_in_chars_tokens_and_the_report() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, IMAGE]},
        {"role": "assistant", "content": "A cat."},
    ]
    result = process_context(
        ContextPolicy(mode="audit"), [MessagesFragment("h", history)], counter=EstimateCounter()
    )
    report = result.report
    assert report.estimated_parts == 1
    assert report.before_chars == 4 + 6400 + 6
    assert report.tokens is not None and report.tokens.before >= 1600
    small = PartEstimate(image_tokens=10)
    result = process_context(
        ContextPolicy(mode="audit"), [MessagesFragment("h", messages=history)], part_estimate=small
    )
    assert result.report.before_chars == 4 + 40 + 6
    with pytest.raises(InvalidTypeError) as caught:
        process_context(ContextPolicy(mode="audit"), [], part_estimate={"image_tokens": 1})
    assert caught.value.code == "invalid_part_estimate_type"


def test_an_assistant_greeting_before_the_first_user_turn_can_be_trimmed() -> None:
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Hi"},
    ]
    result = process_context(policy(), [MessagesFragment("h", messages=history)])
    assert list(result.fragments[0].messages) == [history[0], history[2]]
    assert result.removed["h"] == [history[1]]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"content": "no role"}, "missing_message_role"),
        ({"role": "robot", "content": "beep"}, "unknown_message_role"),
        ({"type": "teleport", "id": "x"}, "unknown_message_type"),
    ],
)
def test_an_unreadable_message_is_a_coded_error_everywhere(
    message: dict[str, Any], code: str
) -> None:
    history = [{"role": "user", "content": "Hi"}, message]
    for call in (
        lambda: group_messages(history),
        lambda: messages_chars(history),
        lambda: process_context(policy(), [MessagesFragment("h", messages=history)]),
    ):
        with pytest.raises(InvalidValueError) as caught:
            call()
        assert caught.value.code == code
        assert caught.value.params["index"] == 1


def test_the_routing_state_reads_framework_messages_as_json() -> None:
    context = RoutingContext(
        step=1,
        model="fast",
        messages=[
            HumanMessage("Fix the bug"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "run", "args": {"cmd": "ls"}}]),
            ModelResponse(parts=[ThinkingPart("secret"), TextPart("Done")]),
        ],
    )
    state = default_state(context)
    assert json.loads(json.dumps(state)) == state
    assert state["messages"][0] == {"role": "user", "content": "Fix the bug"}
    assert state["messages"][1]["tool_calls"][0]["id"] == "c1"
    assert state["messages"][2]["content"] == [{"type": "text", "content": "Done"}]


class Router:
    name = "router"

    async def request(self, request: Any) -> dict[str, Any]:
        answer = {"choice": "fast", "confidence": 0.9}
        return {"model": request.model, "answers": {"model": answer}}


def test_prepare_step_takes_framework_messages_and_counts_images() -> None:
    routing = ModelRouting(
        provider=Router(),
        model="router-mini",
        decision=Decision(
            questions={
                "model": ChoiceQuestion(
                    instructions="Pick.", criteria={"fast": "Any.", "deep": "Hard."}
                )
            }
        ),
        question="model",
        models={
            "fast": ModelSpec(name="small", window=64_000),
            "deep": ModelSpec(name="large", window=64_000),
        },
        fallback="fast",
    )
    history = [
        HumanMessage(content=[{"type": "text", "text": "What is this?"}, IMAGE]),
        AIMessage("A cat."),
    ]
    prepared = prepare_step(
        ContextPolicy(mode="reduce"),
        [MessagesFragment("h", messages=history)],
        router=ModelRouter(routing),
        step=1,
    )
    assert prepared.model.name == "small"
    assert prepared.fragments[0].messages == tuple(history)
    assert prepared.plan.used >= 1600  # the image counts in the budget
    small = prepare_step(
        ContextPolicy(mode="reduce"),
        [MessagesFragment("h", messages=history)],
        router=ModelRouter(routing),
        step=1,
        part_estimate=PartEstimate(image_tokens=10),
    )
    assert small.plan.used < 100
