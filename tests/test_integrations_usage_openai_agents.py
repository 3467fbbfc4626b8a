"""The Agents SDK: the summarizer built from a model, the usage that ``PolicyModel`` and
``PolicySession`` record, and the warning of a session that applies nothing (a ``Model``
subclass of our own, no provider)."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from contextwise import InvalidTypeError
from contextwise.integrations.openai_agents import (
    SUMMARY_PROMPT,
    PolicyModel,
    PolicySession,
    summarizer,
)
from contextwise.session import SQLiteStore
from support import usage_script as script


def message(text: str, number: int) -> ResponseOutputMessage:
    content = [ResponseOutputText(annotations=[], text=text, type="output_text")]
    return ResponseOutputMessage(
        id=f"msg_{number}", content=content, role="assistant", status="completed", type="message"
    )


class Scripted(Model):
    """A model that records each call's instructions, input and settings, and answers ``text``
    with the given usage; it may refuse its first call as too long."""

    def __init__(self, text: str, usage: Usage, *, name: str, refuse: bool = False) -> None:
        self.text, self.usage, self.model, self.refuse = text, usage, name, refuse
        self.seen: list[tuple[str | None, list[Any], Any]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.seen.append((system_instructions, items, model_settings))
        if self.refuse and len(self.seen) == 1:
            httpx = _httpx()
            request = httpx.Request("POST", "https://api.openai.com/v1/responses")
            body = {"error": {"code": "context_length_exceeded", "message": "too long"}}
            raise openai.BadRequestError(
                "too long",
                response=httpx.Response(400, request=request, json=body),
                body=body["error"],
            )
        number = len(self.seen)
        text = self.text if self.text == script.SUMMARY else script.answer(number)
        return ModelResponse(output=[message(text, number)], usage=self.usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests do not stream")


def _httpx() -> Any:
    """The HTTP module of the installed openai: httpx2 for openai 3, httpx before."""
    names = {base.__module__.split(".")[0] for base in openai.DefaultAsyncHttpxClient.__mro__}
    return importlib.import_module("httpx2" if "httpx2" in names else "httpx")


def small_model(**kwargs: Any) -> Scripted:
    usage = Usage(
        requests=1, input_tokens=script.SUMMARY_INPUT, output_tokens=script.SUMMARY_OUTPUT
    )
    return Scripted(script.SUMMARY, usage, name="small", **kwargs)


def main_model() -> Scripted:
    usage = Usage(requests=1, input_tokens=script.ANSWER_INPUT, output_tokens=script.ANSWER_OUTPUT)
    return Scripted("Answer", usage, name="gpt-5-mini")


async def converse(agent: Agent[Any], first: str, turns: int = 5) -> None:
    history: list[Any] = []
    for turn in range(turns):
        prompt = first if turn == 0 else script.question(turn)
        result = await Runner.run(
            agent,
            [*history, {"role": "user", "content": prompt}],
            run_config=RunConfig(tracing_disabled=True),
        )
        history = result.to_input_list()


FIRST = script.question(0)


def test_policy_model_summarizes_and_records_the_usage_per_conversation() -> None:
    small, main = small_model(), main_model()
    model = PolicyModel(main, script.summary_policy(), compressors={"summary": summarizer(small)})
    asyncio.run(converse(Agent(name="a", instructions="Be brief.", model=model), FIRST))

    assert small.seen, "the summarizer was called"
    instructions, (item,), settings = small.seen[0]
    assert instructions == SUMMARY_PROMPT and settings.max_tokens == 1024
    assert "user: Question 0:" in item["content"] and "assistant: Answer 1:" in item["content"]
    assert any(script.SUMMARY in str(sent) for sent in main.seen[-1][1])

    summary = model.usage(FIRST)
    assert summary.by_kind["model"].calls == 5
    assert summary.by_model["gpt-5-mini"].usage.input_tokens == 5 * 1000
    assert summary.by_kind["model"].unpriced_calls == 0  # genai-prices knows gpt-5-mini
    assert summary.by_model["small"].calls == len(small.seen)
    assert summary.by_kind["summarizer"].usage.output_tokens == 20 * len(small.seen)
    assert model.usage("another conversation").total.calls == 0


def test_policy_model_keeps_the_usage_in_the_store(tmp_path: Any) -> None:
    store = SQLiteStore(tmp_path / "usage.db")
    options: Any = {"mode": "audit", "trigger_chars": 10**6}
    model = PolicyModel(main_model(), options, store=store)
    asyncio.run(converse(Agent(name="a", model=model), FIRST, turns=2))
    again = PolicyModel(main_model(), options, store=store)
    assert again.usage(FIRST).total.calls == 2


def test_a_summary_refused_as_too_long_is_sent_again_shorter() -> None:
    small = small_model(refuse=True)
    items = [{"role": "user", "content": "start " * 500 + "end " * 500}]
    result = asyncio.run(summarizer(small)(items))
    assert result.value == script.SUMMARY and result.usage.input_tokens == 300
    assert result.model == "small"
    first, second = (call[1][0]["content"] for call in small.seen)
    assert len(second) < len(first) * 0.6 and "[…]" in second


def test_the_summarizer_refuses_what_is_not_a_model() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        summarizer("gpt-5-nano")  # type: ignore[arg-type]
    assert caught.value.code == "not_an_instance"


def test_policy_session_records_the_usage_through_its_hooks(tmp_path: Any) -> None:
    small = small_model()
    session = PolicySession(
        SQLiteSession("s1", str(tmp_path / "items.db")),
        script.summary_policy(),
        compressors={"summary": summarizer(small)},
    )
    agent = Agent(name="a", model=main_model())

    async def run() -> None:
        for turn in range(5):
            await Runner.run(
                agent,
                script.question(turn),
                session=session,
                hooks=session.hooks(),
                run_config=session.run_config(RunConfig(tracing_disabled=True)),
            )

    asyncio.run(run())
    summary = session.usage()
    assert summary.by_kind["model"].calls == 5
    assert summary.by_kind["summarizer"].calls == len(small.seen) >= 1


def test_a_session_that_applies_nothing_warns_once(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    options: Any = {"mode": "audit", "trigger_chars": 10**6}
    session = PolicySession(SQLiteSession("s2", str(tmp_path / "items.db")), options)
    agent = Agent(name="a", model=main_model())

    async def run(config: RunConfig, used: PolicySession) -> None:
        for turn in range(3):
            await Runner.run(agent, f"Question {turn}", session=used, run_config=config)

    with caplog.at_level(logging.WARNING, logger="contextwise.integrations"):
        asyncio.run(run(RunConfig(tracing_disabled=True), session))
    warned = [record for record in caplog.records if "nothing applied its policy" in record.message]
    assert len(warned) == 1

    caplog.clear()
    applied = PolicySession(SQLiteSession("s3", str(tmp_path / "items.db")), options)
    with caplog.at_level(logging.WARNING, logger="contextwise.integrations"):
        asyncio.run(run(applied.run_config(RunConfig(tracing_disabled=True)), applied))
    assert not [record for record in caplog.records if "nothing applied" in record.message]


def test_a_session_under_a_policy_model_does_not_warn(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    options: Any = {"mode": "audit", "trigger_chars": 10**6}
    session = PolicySession(SQLiteSession("s4", str(tmp_path / "items.db")), options)
    agent = Agent(name="a", model=PolicyModel(main_model(), options))

    async def run() -> None:
        for turn in range(3):
            await Runner.run(
                agent,
                f"Question {turn}",
                session=session,
                run_config=RunConfig(tracing_disabled=True),
            )

    with caplog.at_level(logging.WARNING, logger="contextwise.integrations"):
        asyncio.run(run())
    assert not [record for record in caplog.records if "nothing applied" in record.message]
