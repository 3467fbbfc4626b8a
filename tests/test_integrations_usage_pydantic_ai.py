"""pydantic-ai: the summarizer built from a model, its usage joining the run's usage, and the usage
the capability records per conversation (pydantic-ai's own ``FunctionModel``, no provider)."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelContextWindowExceededError, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

from contextwise import InvalidTypeError, ModelPrices, ModelSpec, RuleRouter
from contextwise.integrations.pydantic_ai import (
    SUMMARY_PROMPT,
    ContextPolicyCapability,
    summarizer,
)
from contextwise.session import SQLiteStore
from support import usage_script as script


class Summaries:
    """The summarizer model's function: it records each request and answers with the summary."""

    def __init__(self, refuse: bool = False) -> None:
        self.seen: list[list[ModelMessage]] = []
        self.refuse = refuse

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        if self.refuse and len(self.seen) == 1:
            raise ModelContextWindowExceededError("small", "prompt is too long")
        usage = RequestUsage(input_tokens=script.SUMMARY_INPUT, output_tokens=script.SUMMARY_OUTPUT)
        return ModelResponse(parts=[TextPart(script.SUMMARY)], usage=usage)


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    turn = sum(isinstance(message, ModelResponse) for message in messages)
    return ModelResponse(
        parts=[TextPart(script.answer(turn))],
        usage=RequestUsage(input_tokens=script.ANSWER_INPUT, output_tokens=script.ANSWER_OUTPUT),
    )


def converse(
    capability: ContextPolicyCapability, model: FunctionModel, turns: int = 5, **run: Any
) -> tuple[list[ModelMessage], str]:
    agent = Agent(model, capabilities=[capability])
    history: list[ModelMessage] = []
    conversation = ""
    for turn in range(turns):
        result = agent.run_sync(
            script.question(turn), message_history=history, **run
        )
        history, conversation = result.all_messages(), result.conversation_id
    return history, conversation


def test_the_summarizer_sends_its_prompt_and_the_summary_reaches_the_model() -> None:
    small, seen = Summaries(), []

    def main(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return answer(messages, info)

    capability = ContextPolicyCapability(
        script.summary_policy(),
        compressors={"summary": summarizer(FunctionModel(small, model_name="small"))},
    )
    converse(capability, FunctionModel(main, model_name="main"))

    assert small.seen, "the summarizer was called"
    (request,) = small.seen[0]
    assert isinstance(request, ModelRequest)
    system, user = request.parts
    assert isinstance(system, SystemPromptPart) and system.content == SUMMARY_PROMPT
    assert isinstance(user, UserPromptPart) and "user: Question 0:" in str(user.content)
    assert "assistant: Answer 0:" in str(user.content)
    texts = [
        str(part.content)
        for message in seen[-1]
        for part in message.parts
        if hasattr(part, "content")
    ]
    assert any(script.SUMMARY in text for text in texts)


def test_the_usage_of_the_calls_and_of_the_summaries_is_recorded_per_conversation() -> None:
    small = Summaries()
    capability = ContextPolicyCapability(
        script.summary_policy(),
        compressors={"summary": summarizer(FunctionModel(small, model_name="small"))},
    )
    _, conversation = converse(capability, FunctionModel(answer, model_name="main"))

    summary = capability.usage(conversation)
    assert summary.by_kind["model"].calls == 5
    assert summary.by_model["main"].usage.input_tokens == 5 * 1000
    made = summary.by_kind["summarizer"]
    assert made.calls == len(small.seen) >= 1
    assert summary.by_model["small"].usage.output_tokens == 20 * len(small.seen)
    assert capability.usage("another").total.calls == 0


def test_the_summarys_usage_joins_the_runs_usage_so_the_limits_apply() -> None:
    small = Summaries()
    capability = ContextPolicyCapability(
        script.summary_policy(),
        compressors={"summary": summarizer(FunctionModel(small, model_name="small"))},
    )
    agent = Agent(FunctionModel(answer, model_name="main"), capabilities=[capability])
    history: list[ModelMessage] = []
    usages = []
    for turn in range(5):
        result = agent.run_sync(script.question(turn), message_history=history)
        history = result.all_messages()
        usages.append(result.usage)
    assert small.seen
    assert sum(usage.output_tokens for usage in usages) == 5 * 50 + len(small.seen) * 20

    limited = Agent(FunctionModel(answer, model_name="main"), capabilities=[capability])
    with pytest.raises(UsageLimitExceeded):
        # The summary's 300 input tokens join the run's 1000: over a limit of 1100.
        limited.run_sync(
            "One more script.question: " + "words " * 300,
            message_history=history,
            usage_limits=UsageLimits(input_tokens_limit=1100),
        )


def test_the_usage_is_kept_in_the_store_and_priced_by_the_routes_spec(tmp_path: Any) -> None:
    spec = ModelSpec(name="house-model", prices=ModelPrices(input=2, output=8))
    store = SQLiteStore(tmp_path / "usage.db")
    router = RuleRouter([], default="main", models={"main": spec})
    options: Any = {"mode": "audit", "trigger_chars": 10**6}
    model = FunctionModel(answer, model_name="main")
    capability = ContextPolicyCapability(
        options, store=store, router=router, models={"main": model}
    )
    _, conversation = converse(capability, model, turns=2)

    again = ContextPolicyCapability(options, store=store, router=router, models={"main": model})
    totals = again.usage(conversation).total
    assert totals.calls == 2 and totals.unpriced_calls == 0
    assert totals.cost == Decimal(2) * (Decimal(2) * 1000 + Decimal(8) * 50) / 1_000_000


def test_a_summary_refused_as_too_long_is_sent_again_shorter() -> None:
    small = Summaries(refuse=True)
    summarize = summarizer(FunctionModel(small, model_name="small"))
    long = [ModelRequest.user_text_prompt("start " * 500 + "end " * 500)]
    result = asyncio.run(summarize(long))
    assert result.value == script.SUMMARY and result.usage.input_tokens == 300
    first, second = (str(call[0].parts[1].content) for call in small.seen)
    assert len(second) < len(first) * 0.6 and "[…]" in second


def test_the_summarizer_refuses_what_is_not_a_model() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        summarizer("openai:gpt-5")  # type: ignore[arg-type]
    assert caught.value.code == "not_an_instance"
