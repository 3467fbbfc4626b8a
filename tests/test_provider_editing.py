"""Provider-side context editing against the providers' own SDKs.

Each request is built by the installed SDK's real client (``anthropic`` 2.x for the beta Messages
call, ``openai`` 3.x for the Responses call) over an ``httpx2.MockTransport``: nothing leaves the
process. A keyword the SDK does not know fails there, the values are checked against the SDK's
typed parameters, and the test reads the body and the headers the SDK would send.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from contextwise import (
    ANTHROPIC_CONTEXT_MANAGEMENT_BETA,
    InvalidTypeError,
    PolicyConfigurationError,
    anthropic_context_management,
    openai_context_management,
)
from support.errors import assert_translated

ANTHROPIC_REPLY = {
    "id": "msg-1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
RESPONSES_REPLY = {
    "id": "resp-1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-5",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
MESSAGES = [{"role": "user", "content": "Fix the failing test."}]


def _client(reply: dict[str, Any], sent: list[httpx2.Request]) -> httpx2.Client:
    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200, json=reply)

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def send_anthropic(kwargs: dict[str, Any]) -> httpx2.Request:
    options = {"model": "claude-sonnet-4-6", "max_tokens": 2_000, "messages": MESSAGES, **kwargs}
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(options)
    sent: list[httpx2.Request] = []
    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=_client(ANTHROPIC_REPLY, sent),
    )
    client.beta.messages.create(**options)
    return sent[0]


def send_responses(kwargs: dict[str, Any]) -> httpx2.Request:
    options = {"model": "gpt-5", "input": "Fix it.", **kwargs}
    TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(options)
    sent: list[httpx2.Request] = []
    client = openai.OpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=_client(RESPONSES_REPLY, sent),
    )
    client.responses.create(**options)
    return sent[0]


POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_tokens": 100_000,
    "target_input_tokens": 60_000,
    "steps": [
        {
            "id": "old-results",
            "kind": "clear",
            "fragment_id": "history",
            "keep_recent": 4,
            "exclude_tools": ["recall"],
            "inputs": True,
            "reasoning": True,
            "min_gain_tokens": 5_000,
        },
        {"id": "summary", "kind": "compress", "fragment_id": "history", "compressor": "sum"},
    ],
}


def test_a_clear_step_becomes_anthropic_s_clear_edits_on_a_real_beta_request() -> None:
    kwargs = anthropic_context_management(POLICY, steps=["old-results"])
    request = send_anthropic(kwargs)
    assert request.url.path == "/v1/messages"
    assert request.headers["anthropic-beta"] == ANTHROPIC_CONTEXT_MANAGEMENT_BETA
    body = json.loads(request.content)
    assert body["context_management"] == {
        "edits": [
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 100_000},
                "keep": {"type": "tool_uses", "value": 4},
                "clear_at_least": {"type": "input_tokens", "value": 5_000},
                "exclude_tools": ["recall"],
                "clear_tool_inputs": True,
            },
        ]
    }


def test_with_compaction_a_compress_step_becomes_anthropic_s_compaction() -> None:
    kwargs = anthropic_context_management(POLICY, compaction=True)
    request = send_anthropic(kwargs)
    assert request.headers["anthropic-beta"] == ("context-management-2025-06-27,compact-2026-01-12")
    edits = json.loads(request.content)["context_management"]["edits"]
    assert [edit["type"] for edit in edits] == [
        "clear_thinking_20251015",
        "clear_tool_uses_20250919",
        "compact_20260112",
    ]
    assert edits[2]["trigger"] == {"type": "input_tokens", "value": 100_000}


def test_a_compress_step_with_a_token_trigger_becomes_responses_compaction() -> None:
    kwargs = openai_context_management(POLICY, steps=["summary"])
    body = json.loads(send_responses(kwargs).content)
    assert body["context_management"] == [{"type": "compaction", "compact_threshold": 100_000}]


def test_the_target_stands_in_for_a_missing_trigger_and_no_step_maps_to_nothing() -> None:
    policy = {**POLICY, "trigger_tokens": None}
    edits = anthropic_context_management(policy, steps=["old-results"])["context_management"]
    assert edits["edits"][1]["trigger"]["value"] == 60_000
    assert anthropic_context_management(POLICY, steps=[]) == {}
    assert openai_context_management({"mode": "reduce", "trigger_tokens": 9}) == {}


@pytest.mark.parametrize(
    ("call", "policy", "code", "named"),
    [
        (
            anthropic_context_management,
            {**POLICY, "trigger_chars": 400_000, "target_input_chars": 240_000},
            "provider_char_limits",
            ["trigger_chars", "target_input_chars"],
        ),
        (
            anthropic_context_management,
            {
                **POLICY,
                "steps": [{"id": "c", "kind": "clear", "fragment_id": "h", "min_gain_chars": 9}],
            },
            "provider_char_limits",
            ["c.min_gain_chars"],
        ),
        (anthropic_context_management, POLICY, "no_provider_equivalent", "summary"),
        (
            anthropic_context_management,
            {**POLICY, "steps": [{"id": "turns", "kind": "trim", "fragment_id": "h"}]},
            "no_provider_equivalent",
            "turns",
        ),
        (openai_context_management, POLICY, "no_provider_equivalent", "old-results"),
        (openai_context_management, {**POLICY, "mode": "audit"}, "provider_editing_mode", "audit"),
        (
            anthropic_context_management,
            {"mode": "reduce", "trigger_chars": 9},
            "provider_char_limits",
            ["trigger_chars"],
        ),
        (openai_context_management, {"mode": "reduce"}, "provider_trigger_required", None),
    ],
)
def test_what_does_not_map_is_a_coded_translated_error_naming_it(
    call: Any, policy: dict[str, Any], code: str, named: Any
) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        call(policy)
    error = caught.value
    assert error.code == code
    if named is not None:
        assert named in error.params.values()
    assert_translated(error)


def test_steps_must_name_steps_of_the_policy() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        anthropic_context_management(POLICY, steps=["old-results", "typo"])
    assert caught.value.code == "unknown_step" and caught.value.params["step_id"] == "typo"
    assert_translated(caught.value)
    with pytest.raises(InvalidTypeError):
        anthropic_context_management(POLICY, steps="old-results")


def test_a_fixed_selection_maps_only_its_steps() -> None:
    policy = {**POLICY, "selection": {"mode": "fixed", "steps": ["old-results"]}}
    edits = anthropic_context_management(policy)["context_management"]["edits"]
    assert [edit["type"] for edit in edits] == [
        "clear_thinking_20251015",
        "clear_tool_uses_20250919",
    ]
