"""LangChain: the summarizer built from a chat model, and the usage and cost the middleware records
per thread (LangChain's own fake chat models, no provider)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from contextwise import InvalidTypeError, InvalidValueError, ModelPrices, ModelSpec, RuleRouter
from contextwise.integrations.langchain import (
    SUMMARY_PROMPT,
    ContextPolicyMiddleware,
    summarizer,
)
from contextwise.session import SQLiteStore
from support import usage_script as script
from support.fake_chat import RecordingChatModel as Recording

SUMMARY_USAGE = {"input_tokens": script.SUMMARY_INPUT, "output_tokens": script.SUMMARY_OUTPUT,
                 "total_tokens": script.SUMMARY_INPUT + script.SUMMARY_OUTPUT}
ANSWER_USAGE = {"input_tokens": script.ANSWER_INPUT, "output_tokens": script.ANSWER_OUTPUT,
                "total_tokens": script.ANSWER_INPUT + script.ANSWER_OUTPUT}


def summaries(count: int = 20) -> Iterator[AIMessage]:
    for _ in range(count):
        yield AIMessage(script.SUMMARY, usage_metadata=SUMMARY_USAGE)  # type: ignore[arg-type]


def answers(count: int = 20) -> Iterator[AIMessage]:
    for turn in range(count):
        yield AIMessage(script.answer(turn), usage_metadata=ANSWER_USAGE)  # type: ignore[arg-type]


def converse(
    middleware: ContextPolicyMiddleware, model: Recording, turns: int = 5, thread: str = "t1"
) -> list[Any]:
    agent = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": thread}}
    for turn in range(turns):
        agent.invoke({"messages": [HumanMessage(script.question(turn))]}, config)
    return list(agent.get_state(config).values["messages"])


def test_the_summarizer_sends_its_prompt_and_the_summary_reaches_the_model() -> None:
    small, model = Recording(messages=summaries()), Recording(messages=answers())
    middleware = ContextPolicyMiddleware(
        script.summary_policy(), compressors={"summary": summarizer(small)}
    )
    converse(middleware, model)

    assert small.seen, "the summarizer was called"
    system, transcript = small.seen[0]
    assert system.text == SUMMARY_PROMPT
    assert "human: Question 0:" in transcript.text and "ai: Answer 0:" in transcript.text
    assert small.kwargs[0]["max_tokens"] == 1024
    assert any(message.text == script.SUMMARY for message in model.seen[-1])


def test_the_usage_of_the_calls_and_of_the_summaries_is_recorded_per_thread() -> None:
    small, model = Recording(messages=summaries()), Recording(messages=answers())
    middleware = ContextPolicyMiddleware(
        script.summary_policy(), compressors={"summary": summarizer(small)}
    )
    converse(middleware, model)

    summary = middleware.usage("t1")
    assert summary.by_kind["model"].calls == 5
    assert summary.by_kind["model"].usage.input_tokens == 5 * 1000
    made = summary.by_kind["summarizer"]
    assert made.calls == len(small.seen) and made.usage.output_tokens == 20 * len(small.seen)
    assert summary.by_model["fake-model"].calls == 5 + len(small.seen)
    assert middleware.usage("another").total.calls == 0


def test_the_usage_is_kept_in_the_store_and_priced_by_the_routes_spec(tmp_path: Any) -> None:
    prices = ModelPrices(input=2, output=8)
    spec = ModelSpec(name="house-model", prices=prices)
    store = SQLiteStore(tmp_path / "usage.db")
    model = Recording(messages=answers())
    router = RuleRouter([], default="main", models={"main": spec})
    options: Any = {"mode": "audit", "trigger_chars": 10**6}
    middleware = ContextPolicyMiddleware(
        options, store=store, router=router, models={"main": model}
    )
    converse(middleware, model, turns=2)

    again = ContextPolicyMiddleware(options, store=store, router=router, models={"main": model})
    totals = again.usage("t1").total
    assert totals.calls == 2 and totals.unpriced_calls == 0
    assert totals.cost == Decimal(2) * (Decimal(2) * 1000 + Decimal(8) * 50) / 1_000_000


def test_nothing_of_the_summary_is_streamed_to_the_user() -> None:
    small, model = Recording(messages=summaries()), Recording(messages=answers())
    middleware = ContextPolicyMiddleware(
        script.summary_policy(), compressors={"summary": summarizer(small)}
    )
    agent = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "s"}}
    streamed: list[str] = []
    for turn in range(5):
        request = {"messages": [HumanMessage(script.question(turn))]}
        for chunk, _ in agent.stream(request, config, stream_mode="messages"):
            if isinstance(chunk, AIMessageChunk | AIMessage):
                streamed.append(str(chunk.text))
    assert small.seen, "the summarizer was called"
    text = "".join(streamed)
    assert "Answer 4" in text and "Summary:" not in text


class Refusing(Recording):
    """A summarizer model that refuses its first prompt as too long."""

    refused: int = 0

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        if not self.refused:
            self.refused += 1
            self.seen.append(list(messages))
            raise ContextOverflowError("prompt is too long")
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_a_summary_refused_as_too_long_is_sent_again_shorter() -> None:
    small = Refusing(messages=summaries())
    long = [HumanMessage("start " * 500), AIMessage("middle " * 500), HumanMessage("end " * 500)]
    result = summarizer(small)(long)
    assert result.value == script.SUMMARY and result.usage.input_tokens == 300
    first, second = (len(call[1].text) for call in small.seen)
    assert second < first * 0.6 and "[…]" in small.seen[1][1].text


@pytest.mark.parametrize(
    ("arguments", "error", "code"),
    [
        ({"model": "gpt-5"}, InvalidTypeError, "not_an_instance"),
        ({"prompt": 3}, InvalidTypeError, "not_a_string"),
        ({"prompt": "  "}, InvalidValueError, "blank_value"),
        ({"max_tokens": 0}, InvalidValueError, "out_of_range"),
    ],
)
def test_the_summarizer_checks_its_arguments(
    arguments: dict[str, Any], error: type[Exception], code: str
) -> None:
    given: dict[str, Any] = {"model": Recording(messages=summaries()), **arguments}
    with pytest.raises(error) as caught:
        summarizer(given.pop("model"), **given)
    assert getattr(caught.value, "code", None) == code
