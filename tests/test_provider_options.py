"""provider_options against the providers' own SDKs, and the ModelSpec fields it reads.

Each request is built by the real client object of the SDK (``openai``, ``anthropic``,
``google-genai``) over an ``httpx2.MockTransport``: nothing leaves the process. A key the SDK does
not know fails there (an unexpected keyword argument, or Gemini's ``extra="forbid"`` config), and
the values are checked against the SDK's typed request parameters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from contextwise import (
    ContextwiseError,
    Effort,
    InvalidValueError,
    ModelSpec,
    RoutingConfigurationError,
    provider_options,
)
from support.errors import assert_translated

Sent = list[dict[str, Any]]

CHAT_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-5",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
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
GEMINI_REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}


def _transport(reply: dict[str, Any], sent: Sent) -> httpx2.Client:
    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append({**json.loads(request.content), "__path__": request.url.path})
        return httpx2.Response(200, json=reply)

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def openai_client(reply: dict[str, Any], sent: Sent) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="test", base_url="http://openai.test/v1", max_retries=0,
        http_client=_transport(reply, sent),
    )


def anthropic_client(sent: Sent) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test", base_url="http://anthropic.test", max_retries=0,
        http_client=_transport(ANTHROPIC_REPLY, sent),
    )


MESSAGES = [{"role": "user", "content": "Fix the failing test."}]


def send_chat(options: dict[str, Any]) -> dict[str, Any]:
    TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(
        {"messages": MESSAGES, **options}, strict=False
    )
    sent: Sent = []
    openai_client(CHAT_REPLY, sent).chat.completions.create(messages=MESSAGES, **options)
    return sent[0]


def send_responses(options: dict[str, Any]) -> dict[str, Any]:
    TypeAdapter(ResponseCreateParamsNonStreaming).validate_python({"input": "Fix it.", **options})
    sent: Sent = []
    openai_client(RESPONSES_REPLY, sent).responses.create(input="Fix it.", **options)
    return sent[0]


def send_anthropic(options: dict[str, Any]) -> dict[str, Any]:
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python({"messages": MESSAGES, **options})
    sent: Sent = []
    anthropic_client(sent).messages.create(messages=MESSAGES, **options)
    return sent[0]


def send_gemini(options: dict[str, Any]) -> dict[str, Any]:
    genai = pytest.importorskip("google.genai")
    sent: Sent = []
    client = genai.Client(
        api_key="test",
        http_options=genai.types.HttpOptions(
            base_url="http://gemini.test", httpx_client=_transport(GEMINI_REPLY, sent)
        ),
    )
    client.models.generate_content(contents="Fix the failing test.", **options)
    return sent[0]


# --- OpenAI --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("effort", "word"),
    [("none", "none"), ("low", "minimal"), ("medium", "medium"), ("high", "high"), ("max", "max")],
)
def test_openai_chat_sends_reasoning_effort(effort: str, word: str) -> None:
    spec = ModelSpec(
        name="gpt-5", api="openai-chat", max_output_tokens=8_000, effort_names={"low": "minimal"}
    )
    options = provider_options(spec, effort)
    assert options == {"model": "gpt-5", "max_completion_tokens": 8_000, "reasoning_effort": word}
    body = send_chat(options)
    assert body["reasoning_effort"] == word
    assert body["max_completion_tokens"] == 8_000
    assert body["model"] == "gpt-5"


def test_openai_responses_sends_a_reasoning_object() -> None:
    spec = ModelSpec(name="gpt-5", api="openai-responses", max_output_tokens=4_000)
    options = provider_options(spec, "high")
    assert options == {
        "model": "gpt-5", "max_output_tokens": 4_000, "reasoning": {"effort": "high"}
    }
    body = send_responses(options)
    assert body["reasoning"] == {"effort": "high"}
    assert body["max_output_tokens"] == 4_000
    assert send_responses(provider_options(spec, "none"))["reasoning"] == {"effort": "none"}


def test_the_effort_is_clamped_to_the_supported_levels_first() -> None:
    spec = ModelSpec(name="o-mini", api="openai-chat", supported_efforts=["low", "high"])
    assert provider_options(spec, "medium")["reasoning_effort"] == "high"
    assert provider_options(spec, "max")["reasoning_effort"] == "high"
    # none is not supported: the nearest higher level is sent instead of disabling reasoning.
    assert send_chat(provider_options(spec, "none"))["reasoning_effort"] == "low"


def test_the_models_own_effort_is_the_default_and_no_effort_sends_no_reasoning() -> None:
    assert provider_options(ModelSpec(name="m", api="openai-chat", effort="low"))[
        "reasoning_effort"
    ] == "low"
    plain = provider_options(ModelSpec(name="m", api="openai-chat"))
    assert plain == {"model": "m"}
    assert "reasoning_effort" not in send_chat(plain)


def test_a_misspelt_key_fails_in_the_sdk() -> None:
    with pytest.raises(TypeError, match="reasoning_efort"):
        openai_client(CHAT_REPLY, []).chat.completions.create(
            messages=MESSAGES, model="gpt-5", reasoning_efort="low"  # type: ignore[call-arg]
        )
    with pytest.raises(TypeError, match="thinkng"):
        anthropic_client([]).messages.create(
            messages=MESSAGES, model="c", max_tokens=10, thinkng={"type": "disabled"}  # type: ignore[call-arg]
        )
    with pytest.raises(ValueError, match="thinking_budgt"):
        send_gemini({"model": "g", "config": {"thinking_config": {"thinking_budgt": 0}}})
    with pytest.raises(ValueError, match="reasoning_effort"):
        TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(
            {"messages": MESSAGES, "model": "gpt-5", "reasoning_effort": "turbo"}
        )


# --- Anthropic -----------------------------------------------------------------------------------


def test_anthropic_sends_a_thinking_budget_from_reasoning_tokens() -> None:
    spec = ModelSpec(
        name="claude-sonnet-4-6",
        api="anthropic",
        max_output_tokens=16_000,
        reasoning_tokens={"low": 2_048, "high": 12_000},
    )
    options = provider_options(spec, "high")
    assert options == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 16_000,
        "thinking": {"type": "enabled", "budget_tokens": 12_000},
    }
    body = send_anthropic(options)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 12_000}
    assert body["max_tokens"] == 16_000
    assert send_anthropic(provider_options(spec, "low"))["thinking"]["budget_tokens"] == 2_048
    # medium has no entry: the default budget, 4 096 tokens.
    assert send_anthropic(provider_options(spec, "medium"))["thinking"]["budget_tokens"] == 4_096


def test_anthropic_none_disables_thinking() -> None:
    spec = ModelSpec(name="claude-sonnet-4-6", api="anthropic", max_output_tokens=8_000)
    options = provider_options(spec, Effort.NONE)
    assert options["thinking"] == {"type": "disabled"}
    assert send_anthropic(options)["thinking"] == {"type": "disabled"}


def test_anthropic_effort_names_send_adaptive_thinking_with_an_effort() -> None:
    spec = ModelSpec(
        name="claude-opus-4-6",
        api="anthropic",
        max_output_tokens=8_000,
        effort_names={"max": "xhigh", "medium": "medium"},
    )
    body = send_anthropic(provider_options(spec, "max"))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "xhigh"}
    assert send_anthropic(provider_options(spec, "medium"))["output_config"] == {"effort": "medium"}


def test_the_default_budget_leaves_room_for_the_answer() -> None:
    spec = ModelSpec(name="claude-haiku", api="anthropic", max_output_tokens=20_000)
    assert spec.thinking_budget("max") == 10_000
    assert send_anthropic(provider_options(spec, "max"))["thinking"]["budget_tokens"] == 10_000


# --- Gemini --------------------------------------------------------------------------------------


def gemini_thinking(body: dict[str, Any]) -> dict[str, Any]:
    """The thinking config the SDK sent, with its keys in snake case (the API takes both)."""
    sent: dict[str, Any] = body["generationConfig"]["thinkingConfig"]
    return {re.sub(r"([A-Z])", r"_\1", key).lower(): value for key, value in sent.items()}


def test_gemini_sends_a_thinking_budget_or_a_thinking_level() -> None:
    spec = ModelSpec(name="gemini-2.5-flash", api="gemini", max_output_tokens=8_192)
    options = provider_options(spec, "none")
    assert options == {
        "model": "gemini-2.5-flash",
        "config": {"max_output_tokens": 8_192, "thinking_config": {"thinking_budget": 0}},
    }
    body = send_gemini(options)
    assert body["generationConfig"]["maxOutputTokens"] == 8_192
    assert gemini_thinking(body) == {"thinking_budget": 0}
    high = send_gemini(provider_options(spec, "high"))
    assert gemini_thinking(high) == {"thinking_budget": 4_096}
    named = ModelSpec(name="gemini-3-pro", api="gemini", effort_names={"low": "low", "max": "high"})
    assert gemini_thinking(send_gemini(provider_options(named, "max"))) == {
        "thinking_level": "HIGH"
    }
    genai = pytest.importorskip("google.genai")
    config = genai.types.GenerateContentConfig.model_validate(
        provider_options(named, "low")["config"]
    )
    assert config.thinking_config.thinking_level == genai.types.ThinkingLevel.LOW


# --- the ModelSpec fields and their errors -------------------------------------------------------


def _both_languages_carry(err: ContextwiseError, *values: object) -> None:
    english = err.render("en")
    for locale in ("fr", "zh"):
        text = err.render(locale)
        assert text != english
        for value in values:
            assert str(value) in text, (locale, value, text)


def test_an_unknown_api_is_a_coded_error() -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(name="m", api="cohere")
    assert caught.value.code == "unknown_api"
    assert caught.value.params["field"] == "api"
    _both_languages_carry(caught.value, "'cohere'", "openai-responses")


def test_an_effort_word_that_no_provider_accepts_is_a_coded_error() -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(name="m", effort_names={"high": "turbo"})
    assert caught.value.code == "unknown_effort_name"
    assert caught.value.params["level"] == "high"
    _both_languages_carry(caught.value, "turbo", "high", "minimal")


def test_an_effort_word_that_the_api_does_not_accept_is_a_coded_error() -> None:
    ModelSpec(name="m", api="openai-chat", effort_names={"low": "minimal"})
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(name="m", api="anthropic", effort_names={"low": "minimal"})
    assert caught.value.code == "effort_name_not_in_api"
    _both_languages_carry(caught.value, "minimal", "anthropic", "xhigh")


def test_an_unknown_level_in_effort_names_or_reasoning_tokens_is_a_coded_error() -> None:
    for field in ("effort_names", "reasoning_tokens"):
        with pytest.raises(InvalidValueError) as caught:
            ModelSpec(name="m", **{field: {"turbo": 1 if field == "reasoning_tokens" else "low"}})
        assert caught.value.code == "invalid_effort"


def test_a_thinking_budget_must_stay_below_the_output_limit_and_within_the_window() -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(name="m", max_output_tokens=8_000, reasoning_tokens={"high": 8_000})
    assert caught.value.code == "reasoning_tokens_over_output"
    _both_languages_carry(caught.value, "high")
    assert "8\u202f000" in caught.value.render("fr")
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(name="m", window=16_000, reasoning_tokens={"max": 20_000})
    assert caught.value.code == "reasoning_tokens_over_window"
    assert "16,000" in caught.value.render("zh")
    with pytest.raises(InvalidValueError) as negative:
        ModelSpec(name="m", reasoning_tokens={"low": -1})
    assert negative.value.code == "negative_size"


def test_provider_options_needs_an_api_and_anthropic_needs_an_output_limit() -> None:
    for model in ("gpt-5", ModelSpec(name="gpt-5")):
        with pytest.raises(RoutingConfigurationError) as caught:
            provider_options(model, "low")
        assert caught.value.code == "missing_api"
        _both_languages_carry(caught.value, "gpt-5", "openai-chat")
    with pytest.raises(RoutingConfigurationError) as caught:
        provider_options(ModelSpec(name="claude", api="anthropic"), "low")
    assert caught.value.code == "missing_output_limit"
    _both_languages_carry(caught.value, "claude", "anthropic")
    with pytest.raises(InvalidValueError):
        provider_options(ModelSpec(name="m", api="openai-chat"), "turbo")  # type: ignore[arg-type]


SENDERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "openai-chat": send_chat,
    "openai-responses": send_responses,
    "anthropic": send_anthropic,
    "gemini": send_gemini,
}


@pytest.mark.parametrize("api", list(SENDERS))
@pytest.mark.parametrize("effort", [*list(Effort), None])
def test_every_api_and_level_builds_a_request_its_sdk_accepts(
    api: str, effort: Effort | None
) -> None:
    spec = ModelSpec(name="model-x", api=api, max_output_tokens=16_000)  # type: ignore[arg-type]
    options = provider_options(spec, effort)
    body = SENDERS[api](options)
    if api == "gemini":
        assert body["__path__"].endswith("/models/model-x:generateContent")
        assert body["generationConfig"]["maxOutputTokens"] == 16_000
    else:
        assert body["model"] == "model-x"
    sent_keys = set(body) - {"__path__", "messages", "input", "contents"}
    expected = set(options) - {"config"} if api != "gemini" else {"generationConfig"}
    assert sent_keys == expected - ({"model"} if api == "gemini" else set())


def test_anthropic_rejects_an_explicit_budget_below_its_minimum() -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec(
            name="claude-sonnet-4-6",
            api="anthropic",
            max_output_tokens=8_000,
            reasoning_tokens={"low": 512},
        )
    assert caught.value.code == "thinking_budget_below_minimum"
    assert caught.value.params["field"] == "reasoning_tokens"
    assert caught.value.params["tokens"] == 512
    assert caught.value.params["minimum"] == 1_024
    assert_translated(caught.value)


def test_other_apis_keep_small_explicit_budgets() -> None:
    spec = ModelSpec(name="gemini-2.5-flash", api="gemini", reasoning_tokens={"low": 512})
    assert provider_options(spec, "low")["config"]["thinking_config"] == {"thinking_budget": 512}


def test_anthropic_explicit_zero_budget_disables_thinking() -> None:
    spec = ModelSpec(
        name="claude-sonnet-4-6", api="anthropic", max_output_tokens=800,
        reasoning_tokens={"low": 0},
    )
    assert send_anthropic(provider_options(spec, "low"))["thinking"] == {"type": "disabled"}


def test_anthropic_derived_budget_below_minimum_is_an_error() -> None:
    spec = ModelSpec(name="claude-sonnet-4-6", api="anthropic", max_output_tokens=2_000)
    with pytest.raises(RoutingConfigurationError) as caught:
        provider_options(spec, "medium")
    assert caught.value.code == "derived_thinking_budget_below_minimum"
    assert caught.value.params["tokens"] == 1_000
    assert caught.value.params["limit"] == 2_000
    assert_translated(caught.value)
    fixed = spec.model_copy(update={"reasoning_tokens": {Effort.MEDIUM: 1_024}})
    fixed = ModelSpec.model_validate(fixed.model_dump())
    assert send_anthropic(provider_options(fixed, "medium"))["thinking"]["budget_tokens"] == 1_024


@pytest.mark.parametrize("limit", [1, 2, 1_000, 1_024])
def test_anthropic_output_limit_without_room_for_thinking_is_an_error(limit: int) -> None:
    spec = ModelSpec(name="claude-sonnet-4-6", api="anthropic", max_output_tokens=limit)
    with pytest.raises(RoutingConfigurationError) as caught:
        provider_options(spec, "low")
    assert caught.value.code == "output_limit_below_thinking_minimum"
    assert caught.value.params["field"] == "max_output_tokens"
    assert caught.value.params["limit"] == limit
    assert_translated(caught.value)
    assert provider_options(spec, "none")["thinking"] == {"type": "disabled"}


@pytest.mark.parametrize("limit", [1_025, 2_047, 2_048, 2_049, 4_096, 8_000, 16_000])
@pytest.mark.parametrize("level", ["low", "medium", "high", "max"])
def test_every_anthropic_budget_sent_is_at_least_the_minimum(limit: int, level: str) -> None:
    spec = ModelSpec(name="claude-sonnet-4-6", api="anthropic", max_output_tokens=limit)
    try:
        options = provider_options(spec, level)
    except RoutingConfigurationError as err:
        assert err.code == "derived_thinking_budget_below_minimum"
        return
    body = send_anthropic(options)
    assert 1_024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]
