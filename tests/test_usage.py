"""Usage: one meaning for every provider, read from each SDK's own objects and from dicts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextwise import (
    DecisionResponse,
    InvalidTypeError,
    InvalidValueError,
    Usage,
    usage_from,
)

EXPECTED = Usage(
    input_tokens=1_500,
    cached_input_tokens=1_024,
    output_tokens=300,
    reasoning_tokens=120,
)


def test_openai_chat_completion_object_and_dict() -> None:
    from openai.types.chat import ChatCompletion
    from openai.types.completion_usage import (
        CompletionTokensDetails,
        CompletionUsage,
        PromptTokensDetails,
    )

    usage = CompletionUsage(
        prompt_tokens=1_500,
        completion_tokens=300,
        total_tokens=1_800,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=1_024),
        completion_tokens_details=CompletionTokensDetails(reasoning_tokens=120),
    )
    completion = ChatCompletion(
        id="c", choices=[], created=0, model="gpt-5", object="chat.completion", usage=usage
    )
    assert usage_from(completion) == EXPECTED
    assert usage_from(usage) == EXPECTED
    assert usage_from(completion.model_dump()) == EXPECTED
    assert usage_from(completion.model_dump()["usage"]) == EXPECTED


def test_openai_responses_object_and_dict() -> None:
    from openai.types.responses import Response, ResponseUsage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    usage = ResponseUsage(
        input_tokens=1_500,
        output_tokens=300,
        total_tokens=1_800,
        input_tokens_details=InputTokensDetails(cached_tokens=1_024, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=120),
    )
    response = Response.model_construct(id="r", model="gpt-5", output=[], usage=usage)
    assert usage_from(response) == EXPECTED
    assert usage_from(usage.model_dump()) == EXPECTED
    assert usage_from({"usage": usage.model_dump()}) == EXPECTED


def test_anthropic_message_counts_cache_reads_and_writes_in_the_input() -> None:
    from anthropic.types import CacheCreation, Message
    from anthropic.types import Usage as AnthropicUsage

    usage = AnthropicUsage(
        input_tokens=76,
        cache_read_input_tokens=1_024,
        cache_creation_input_tokens=400,
        cache_creation=CacheCreation(ephemeral_5m_input_tokens=100, ephemeral_1h_input_tokens=300),
        output_tokens=300,
    )
    message = Message(
        id="m", content=[], model="claude-sonnet-4-5", role="assistant", type="message",
        usage=usage,
    )
    expected = Usage(
        input_tokens=1_500,
        cached_input_tokens=1_024,
        cache_write_tokens={"5m": 100, "1h": 300},
        output_tokens=300,
    )
    assert usage_from(message) == expected
    assert usage_from(message.model_dump()) == expected
    without_breakdown = {"input_tokens": 76, "cache_read_input_tokens": 1_024,
                         "cache_creation_input_tokens": 400, "output_tokens": 300}
    assert usage_from({"usage": without_breakdown}).cache_write_tokens == {"5m": 400}
    assert usage_from(AnthropicUsage(input_tokens=10, output_tokens=2)) == Usage(
        input_tokens=10, output_tokens=2
    )


def test_gemini_response_adds_thoughts_and_tool_use_prompt() -> None:
    from google.genai import types

    metadata = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=1_400,
        tool_use_prompt_token_count=100,
        cached_content_token_count=1_024,
        candidates_token_count=180,
        thoughts_token_count=120,
        total_token_count=1_800,
    )
    response = types.GenerateContentResponse(usage_metadata=metadata)
    assert usage_from(response) == EXPECTED
    assert usage_from(response.model_dump()) == EXPECTED
    camel = {"usageMetadata": {"promptTokenCount": 1_400, "toolUsePromptTokenCount": 100,
                               "cachedContentTokenCount": 1_024, "candidatesTokenCount": 180,
                               "thoughtsTokenCount": 120}}
    assert usage_from(camel) == EXPECTED


def test_langchain_usage_metadata() -> None:
    from langchain_core.messages import AIMessage

    message = AIMessage(
        content="done",
        usage_metadata={
            "input_tokens": 1_500,
            "output_tokens": 300,
            "total_tokens": 1_800,
            "input_token_details": {"cache_read": 1_024, "cache_creation": 200},
            "output_token_details": {"reasoning": 120},
        },
    )
    expected = EXPECTED.model_copy(update={"cache_write_tokens": {"default": 200}})
    assert usage_from(message) == expected
    assert usage_from(message.usage_metadata) == expected


def test_pydantic_ai_request_and_run_usage() -> None:
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.usage import RequestUsage, RunUsage

    request = RequestUsage(
        input_tokens=1_500,
        cache_read_tokens=1_024,
        cache_write_tokens=300,
        cache_write_1h_tokens=100,
        output_tokens=300,
        details={"reasoning_tokens": 120},
    )
    expected = EXPECTED.model_copy(update={"cache_write_tokens": {"5m": 200, "1h": 100}})
    assert usage_from(request) == expected
    assert usage_from(ModelResponse(parts=[TextPart("done")], usage=request)) == expected
    run = RunUsage(requests=2, input_tokens=1_500, cache_read_tokens=1_024, output_tokens=300,
                   details={"reasoning_tokens": 120})
    assert usage_from(run) == EXPECTED

    class RunResult:  # pydantic-ai's AgentRunResult has usage() as a method
        def usage(self) -> RunUsage:
            return run

    assert usage_from(RunResult()) == EXPECTED


def test_openai_agents_usage_and_run_context() -> None:
    from agents import RunContextWrapper
    from agents.usage import Usage as AgentsUsage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    usage = AgentsUsage(
        requests=1,
        input_tokens=1_500,
        output_tokens=300,
        total_tokens=1_800,
        input_tokens_details=InputTokensDetails(cached_tokens=1_024, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=120),
    )
    assert usage_from(usage) == EXPECTED

    class RunResult:
        context_wrapper = RunContextWrapper(context=None, usage=usage)

    assert usage_from(RunResult()) == EXPECTED


@pytest.mark.parametrize("value", [None, 3, "usage", {"usage": None}, {"text": "hi"}, object()])
def test_an_unknown_shape_is_a_coded_error(value: Any) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        usage_from(value)
    assert caught.value.code == "unknown_usage_shape"


def test_a_named_source_reads_an_ambiguous_dict() -> None:
    plain = {"input_tokens": 100, "output_tokens": 5, "cache_read_input_tokens": 0}
    assert usage_from(plain, source="anthropic").input_tokens == 100
    with pytest.raises(InvalidValueError) as caught:
        usage_from(plain, source="bedrock")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_choice"


def test_a_count_that_is_not_a_whole_number_is_refused() -> None:
    with pytest.raises(InvalidValueError) as caught:
        usage_from({"prompt_tokens": "12", "completion_tokens": 1})
    assert caught.value.code == "wrong_type"


def test_parts_never_exceed_their_whole() -> None:
    with pytest.raises(InvalidValueError) as caught:
        Usage(input_tokens=10, cached_input_tokens=11)
    assert caught.value.code == "inconsistent_usage"
    with pytest.raises(InvalidValueError) as caught:
        Usage(output_tokens=10, reasoning_tokens=11)
    assert caught.value.code == "inconsistent_usage"
    with pytest.raises(InvalidValueError) as caught:
        Usage(input_tokens=10, cache_write_tokens={"5m": -1})
    assert caught.value.code == "out_of_range"


counts = st.integers(min_value=0, max_value=10**9)


@st.composite
def usages(draw: st.DrawFn) -> Usage:
    cached, written, uncached = draw(counts), draw(counts), draw(counts)
    reasoning, answer = draw(counts), draw(counts)
    retention = draw(st.sampled_from(["5m", "1h", "default"]))
    return Usage(
        input_tokens=cached + written + uncached,
        cached_input_tokens=cached,
        cache_write_tokens={retention: written} if written else {},
        output_tokens=reasoning + answer,
        reasoning_tokens=reasoning,
    )


@given(usages(), usages())
def test_property_usages_add_up_and_round_trip(first: Usage, second: Usage) -> None:
    total = first + second
    assert total.input_tokens == first.input_tokens + second.input_tokens
    assert total.uncached_input_tokens == first.uncached_input_tokens + second.uncached_input_tokens
    assert total.total_cache_write_tokens == (
        first.total_cache_write_tokens + second.total_cache_write_tokens
    )
    assert sum([first, second]) == total
    assert Usage.model_validate_json(total.model_dump_json()) == total
    assert hash(Usage.model_validate(total.model_dump())) == hash(total)


def test_a_decision_response_carries_a_usage() -> None:
    response = DecisionResponse.model_validate(
        {"model": "router", "answers": {"m": {"choice": "a", "confidence": 1.0}},
         "usage": {"input_tokens": 120, "output_tokens": 8}}
    )
    assert response.usage == Usage(input_tokens=120, output_tokens=8)


def test_the_reference_shows_the_mapping_table_row_by_row() -> None:
    from conftest import ROOT

    for language in ("en", "fr", "zh"):
        page = (ROOT / "docs" / language / "reference" / "accounting.md").read_text("utf-8")
        rows = [line for line in page.splitlines() if line.startswith("| ")]
        assert any("`cache_read_input_tokens`" in row for row in rows), language
        assert sum("`prompt_tokens`" in row or "`input_tokens`" in row for row in rows) >= 7
