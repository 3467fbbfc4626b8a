"""Reactive compaction: when the provider refuses a prompt as longer than its context window, each
integration reduces again to the window the refusal reports and retries once; a second refusal
raises the framework's own error with the report attached.

Each provider is the real chat model class of the framework's provider package over a mock
transport, which answers with the provider's real 400 body when the prompt is above a window of
``WINDOW`` tokens (4 characters a token), and with an ordinary answer otherwise: nothing leaves the
process.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from contextwise import ContextResult
from contextwise.integrations._overflow import Refusal, read_refusal

WINDOW = 2_000
"""The mock provider's context window, in tokens (4 characters a token)."""

POLICY: dict[str, Any] = {
    # Its trigger is far above the window: only the refusal makes it act.
    "mode": "reduce",
    "trigger_chars": 1_000_000,
    "target_input_chars": 900_000,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}

SYSTEM = "You are a careful assistant. " * 20


def history_dicts(turns: int = 12) -> list[dict[str, str]]:
    """A conversation of ``turns`` turns of about 1,000 characters each."""
    messages: list[dict[str, str]] = []
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"Question {n}: " + "why? " * 100},
            {"role": "assistant", "content": f"Answer {n}: " + "because. " * 55},
        ]
    messages.append({"role": "user", "content": "And the last question?"})
    return messages


class Provider:
    """A mock provider: it records each request's body and refuses those above the window."""

    def __init__(self, refuse: Callable[[int, int], dict[str, Any]], ok: dict[str, Any]):
        self.refuse = refuse
        self.ok = ok
        self.sent: list[int] = []
        self.bodies: list[str] = []
        self.always_refuse = False
        self.stream: str | None = None
        """An event stream to answer an accepted streamed request with."""

    def reply(self, content: bytes) -> tuple[int, Any]:
        body = content.decode("utf-8")
        tokens = len(body) // 4
        self.sent.append(len(body))
        self.bodies.append(body)
        if self.always_refuse or tokens > WINDOW:
            return 400, self.refuse(tokens, WINDOW)
        if self.stream is not None and json.loads(body).get("stream"):
            return 200, self.stream
        return 200, self.ok

    def httpx_transport(self) -> Any:
        """A mock transport of httpx, which google-genai sends through."""
        httpx = importlib.import_module("httpx")
        return httpx.MockTransport(self.handler(httpx))

    def handler(self, module: Any) -> Callable[[Any], Any]:
        def handle(request: Any) -> Any:
            status, body = self.reply(request.content)
            if isinstance(body, str):
                headers = {"content-type": "text/event-stream"}
                return module.Response(status, text=body, headers=headers)
            return module.Response(status, json=body)

        return handle

    def async_client(self, sdk: Any = None) -> Any:
        """An async HTTP client of the SDK's own class (``openai`` by default) over the mock."""
        return self._client((sdk or _openai()).DefaultAsyncHttpxClient)

    def client(self, sdk: Any = None) -> Any:
        """A sync HTTP client of the SDK's own class (``openai`` by default) over the mock."""
        return self._client((sdk or _openai()).DefaultHttpxClient)

    def _client(self, cls: type[Any]) -> Any:
        # openai 3 and anthropic 2 send through httpx2, their earlier releases through httpx.
        names = {base.__module__.split(".")[0] for base in cls.__mro__}
        module = importlib.import_module("httpx2" if "httpx2" in names else "httpx")
        return cls(transport=module.MockTransport(self.handler(module)))


def _openai() -> Any:
    import openai

    return openai


def openai_refusal(tokens: int, window: int) -> dict[str, Any]:
    """OpenAI's body for a chat completion above the window."""
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {tokens} tokens. Please reduce the length of the "
                "messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def anthropic_refusal(tokens: int, window: int) -> dict[str, Any]:
    """Anthropic's body for a message above the window."""
    return {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {tokens} tokens > {window} maximum",
        },
    }


CHAT_OK = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-test",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}

ANTHROPIC_OK = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 1},
}


def test_the_refusal_texts_of_three_providers_are_read() -> None:
    class Refused(Exception):
        pass

    openai_text = openai_refusal(130_532, 128_000)["error"]["message"]
    assert read_refusal(Refused(openai_text)) == Refusal(128_000, 130_532, None)
    assert read_refusal(
        Refused("prompt is too long: 208,310 tokens > 200,000 maximum")
    ) == Refusal(200_000, 208_310, None)
    assert read_refusal(
        Refused("input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000")
    ) == Refusal(200_000, 197_202, 21_333)
    assert read_refusal(
        Refused(
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576)."
        )
    ) == Refusal(1_048_576, 1_200_000, None)
    assert read_refusal(Refused("Your input exceeds the context window.")) == Refusal()


# --- the Agents SDK ---------------------------------------------------------------------------


def agents_model(provider: Provider) -> Any:
    from agents import OpenAIChatCompletionsModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=provider.async_client(),
    )
    return OpenAIChatCompletionsModel("gpt-test", client)


def run_agent(model: Any, items: list[dict[str, str]]) -> Any:
    from agents import Agent, RunConfig, Runner

    agent = Agent(name="helper", instructions=SYSTEM, model=model)
    return asyncio.run(
        Runner.run(agent, items, run_config=RunConfig(tracing_disabled=True))  # type: ignore[arg-type]
    )


def test_agents_sdk_refused_call_is_reduced_and_sent_once_more() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    results: list[ContextResult] = []
    model = PolicyModel(agents_model(provider), POLICY, on_result=results.append)
    answer = run_agent(model, history_dicts())
    assert answer.final_output == "ok"
    assert len(provider.sent) == 2
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    conversation = results[-1].report.conversation
    assert conversation is not None and conversation.overflow
    assert conversation.overflow_limit == WINDOW
    assert conversation.overflow_sent == first // 4
    assert [result.report.conversation.overflow for result in results] == [False, True]


def test_agents_sdk_second_refusal_raises_the_sdk_error_with_the_report() -> None:
    from openai import BadRequestError

    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    provider.always_refuse = True
    model = PolicyModel(agents_model(provider), POLICY)
    with pytest.raises(BadRequestError) as raised:
        run_agent(model, history_dicts())
    assert len(provider.sent) == 2
    report = raised.value.contextwise_report  # type: ignore[attr-defined]
    assert report.conversation.overflow
    assert report.after_chars < report.before_chars
    assert any("contextwise" in note for note in raised.value.__notes__)


def test_agents_sdk_other_bad_requests_are_not_retried() -> None:
    from openai import BadRequestError

    from contextwise.integrations.openai_agents import PolicyModel

    def invalid(tokens: int, window: int) -> dict[str, Any]:
        return {"error": {"message": "bad", "type": "invalid_request_error", "code": "x"}}

    provider = Provider(invalid, CHAT_OK)
    provider.always_refuse = True
    with pytest.raises(BadRequestError) as raised:
        run_agent(PolicyModel(agents_model(provider), POLICY), history_dicts(1))
    assert len(provider.sent) == 1
    assert not hasattr(raised.value, "contextwise_report")


def dumps(value: object) -> str:
    return json.dumps(value)


# --- LangChain ----------------------------------------------------------------------------------


def chat_openai(provider: Provider) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model="gpt-test",
        api_key="test",  # type: ignore[arg-type]
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=provider.client(),
        http_async_client=provider.async_client(),
    )


def chat_anthropic(provider: Provider) -> Any:
    import anthropic
    from langchain_anthropic import ChatAnthropic, chat_models

    if not hasattr(chat_models, "AnthropicContextOverflowError"):
        pytest.skip("this langchain-anthropic raises no ContextOverflowError")

    chat = ChatAnthropic(model="claude-test", api_key="test", max_retries=0, max_tokens=100)  # type: ignore[call-arg,arg-type]
    # The chat model builds its SDK clients on first use: these are the same classes, over the
    # mock transport.
    chat.__dict__["_client"] = anthropic.Anthropic(
        api_key="test", base_url="http://anthropic.test", max_retries=0,
        http_client=provider.client(anthropic),
    )
    chat.__dict__["_async_client"] = anthropic.AsyncAnthropic(
        api_key="test", base_url="http://anthropic.test", max_retries=0,
        http_client=provider.async_client(anthropic),
    )
    return chat


def gemini_refusal(tokens: int, window: int) -> dict[str, Any]:
    """Gemini's body for a prompt above the window."""
    return {
        "error": {
            "code": 400,
            "message": (
                f"The input token count ({tokens}) exceeds the maximum number of tokens "
                f"allowed ({window})."
            ),
            "status": "INVALID_ARGUMENT",
        }
    }


GEMINI_OK = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
}


def chat_gemini(provider: Provider) -> Any:
    from langchain_google_genai import ChatGoogleGenerativeAI, chat_models

    if not hasattr(chat_models, "GoogleContextOverflowError"):
        pytest.skip("this langchain-google-genai raises no ContextOverflowError (4.2.3 and later)")

    return ChatGoogleGenerativeAI(
        model="gemini-test",
        api_key="test",  # type: ignore[arg-type]
        retries=0,
        client_args={"transport": provider.httpx_transport()},
    )


LANGCHAIN_PROVIDERS = {
    "openai": (chat_openai, openai_refusal, CHAT_OK),
    "anthropic": (chat_anthropic, anthropic_refusal, ANTHROPIC_OK),
    "gemini": (chat_gemini, gemini_refusal, GEMINI_OK),
}


def langchain_messages() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage

    return [
        HumanMessage(message["content"], id=f"m{n}")
        if message["role"] == "user"
        else AIMessage(message["content"], id=f"m{n}")
        for n, message in enumerate(history_dicts())
    ]


@pytest.mark.parametrize("name", sorted(LANGCHAIN_PROVIDERS))
@pytest.mark.parametrize("asynchronous", [False, True])
def test_langchain_refused_call_is_reduced_and_sent_once_more(
    name: str, asynchronous: bool
) -> None:
    from langchain.agents import create_agent

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    make, refuse, ok = LANGCHAIN_PROVIDERS[name]
    provider = Provider(refuse, ok)
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(POLICY, on_result=results.append)
    agent = create_agent(make(provider), middleware=[middleware], system_prompt=SYSTEM)
    state = {"messages": langchain_messages()}
    config = {"configurable": {"thread_id": "t1"}}
    if asynchronous:
        reply = asyncio.run(agent.ainvoke(state, config))  # type: ignore[arg-type]
    else:
        reply = agent.invoke(state, config)  # type: ignore[arg-type]
    assert reply["messages"][-1].text == "ok"
    assert len(reply["messages"]) == len(state["messages"]) + 1  # the state keeps every message
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    assert [result.report.conversation.overflow for result in results] == [False, True]
    conversation = results[-1].report.conversation
    assert conversation.overflow_limit == WINDOW
    assert conversation.overflow_sent == first // 4
    assert conversation.key == "ContextPolicyMiddleware:t1"


@pytest.mark.parametrize("name", sorted(LANGCHAIN_PROVIDERS))
def test_langchain_second_refusal_raises_the_chat_model_error_with_the_report(name: str) -> None:
    from langchain.agents import create_agent
    from langchain_core.exceptions import ContextOverflowError

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    make, refuse, ok = LANGCHAIN_PROVIDERS[name]
    provider = Provider(refuse, ok)
    provider.always_refuse = True
    middleware = ContextPolicyMiddleware(POLICY)
    agent = create_agent(make(provider), middleware=[middleware], system_prompt=SYSTEM)
    with pytest.raises(Exception) as raised:  # the chat model's own class, read below
        agent.invoke({"messages": langchain_messages()})
    # langchain-anthropic raises its ContextOverflowError; langchain-openai, whose test of the
    # code reads the SDK's message (from which openai 3 leaves the code out), an
    # openai.BadRequestError with the code context_length_exceeded.
    error = raised.value
    assert isinstance(error, ContextOverflowError) or error.code == "context_length_exceeded"  # type: ignore[attr-defined]
    assert len(provider.sent) == 2
    report = raised.value.contextwise_report  # type: ignore[attr-defined]
    assert report.conversation.overflow and report.after_chars < report.before_chars


# --- pydantic-ai --------------------------------------------------------------------------------


def pai_openai(provider: Provider) -> Any:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(
        api_key="test", base_url="http://openai.test/v1", max_retries=0,
        http_client=provider.async_client(),
    )
    return OpenAIChatModel("gpt-test", provider=OpenAIProvider(openai_client=client))


def pai_anthropic(provider: Provider) -> Any:
    import anthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = anthropic.AsyncAnthropic(
        api_key="test", base_url="http://anthropic.test", max_retries=0,
        http_client=provider.async_client(anthropic),
    )
    return AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))


PAI_PROVIDERS = {
    "openai": (pai_openai, openai_refusal, CHAT_OK),
    "anthropic": (pai_anthropic, anthropic_refusal, ANTHROPIC_OK),
}


def pai_history() -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    history: list[Any] = []
    for message in history_dicts()[:-1]:
        if message["role"] == "user":
            history.append(ModelRequest(parts=[UserPromptPart(message["content"])]))
        else:
            history.append(ModelResponse(parts=[TextPart(message["content"])]))
    return history


@pytest.mark.parametrize("name", sorted(PAI_PROVIDERS))
def test_pydantic_ai_refused_request_is_reduced_and_attempted_once_more(name: str) -> None:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    make, refuse, ok = PAI_PROVIDERS[name]
    provider = Provider(refuse, ok)
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(POLICY, on_result=results.append)
    agent = Agent(make(provider), capabilities=[capability], instructions=SYSTEM)
    history = pai_history()
    result = agent.run_sync("And the last question?", message_history=history)
    assert result.output == "ok"
    # The run's history keeps every message: only the request was reduced.
    assert len(result.all_messages()) == len(history) + 2
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    assert [r.report.conversation.overflow for r in results] == [False, True]
    assert results[-1].report.conversation.overflow_limit == WINDOW


@pytest.mark.parametrize("name", sorted(PAI_PROVIDERS))
def test_pydantic_ai_second_refusal_raises_its_error_with_the_report(name: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelContextWindowExceededError

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    make, refuse, ok = PAI_PROVIDERS[name]
    provider = Provider(refuse, ok)
    provider.always_refuse = True
    agent = Agent(make(provider), capabilities=[ContextPolicyCapability(POLICY)])
    with pytest.raises(ModelContextWindowExceededError) as raised:
        agent.run_sync("And the last question?", message_history=pai_history())
    assert len(provider.sent) == 2
    report = raised.value.contextwise_report  # type: ignore[attr-defined]
    assert report.conversation.overflow and report.after_chars < report.before_chars


def test_agents_sdk_refusal_feeds_a_bound_calibrated_counter() -> None:
    from contextwise import CalibratedCounter
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    counter = CalibratedCounter().for_model("gpt-test")
    model = PolicyModel(agents_model(provider), POLICY, counter=counter)
    assert counter.calibrated.observations("gpt-test") == 0
    run_agent(model, history_dicts())
    # The provider's count of the refused prompt is one observation of the model's tokens.
    assert counter.calibrated.observations("gpt-test") == 1


def test_agents_sdk_model_remembers_its_reduction_and_pins_the_instructions() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    results: list[ContextResult] = []
    model = PolicyModel(agents_model(provider), POLICY, on_result=results.append)
    items = history_dicts()
    run_agent(model, items)
    following = [*items, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "?"}]
    run_agent(model, following)
    statuses = [result.report.conversation.status for result in results]
    # The retry extends the call it retries, and the second run extends what the retry sent:
    # the reduction is remembered, so the second run is not refused.
    assert statuses == ["resynced", "extended", "extended"]
    assert len(provider.sent) == 3
    assert provider.sent[-1] // 4 <= WINDOW
    request = json.loads(provider.bodies[-1])
    assert request["messages"][0] == {"role": "system", "content": SYSTEM}


def stream_body() -> str:
    chunks = [
        {"delta": {"role": "assistant", "content": "ok"}, "finish_reason": None},
        {"delta": {}, "finish_reason": "stop"},
    ]
    events = [
        json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "gpt-test",
                "choices": [{"index": 0, **chunk}],
            }
        )
        for chunk in chunks
    ]
    return "".join(f"data: {event}\n\n" for event in events) + "data: [DONE]\n\n"


def test_agents_sdk_refused_stream_is_reduced_and_sent_once_more() -> None:
    from agents import Agent, RunConfig, Runner

    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    provider.stream = stream_body()
    results: list[ContextResult] = []
    model = PolicyModel(agents_model(provider), POLICY, on_result=results.append)
    agent = Agent(name="helper", instructions=SYSTEM, model=model)

    async def run() -> Any:
        streamed = Runner.run_streamed(
            agent, history_dicts(), run_config=RunConfig(tracing_disabled=True)  # type: ignore[arg-type]
        )
        async for _ in streamed.stream_events():
            pass
        return streamed.final_output

    assert asyncio.run(run()) == "ok"
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    assert [result.report.conversation.overflow for result in results] == [False, True]


def test_agents_sdk_model_measures_with_the_providers_count_of_the_last_call() -> None:
    from contextwise import EstimateCounter
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)  # every answer counts 10 input tokens
    results: list[ContextResult] = []
    policy = {"mode": "audit", "trigger_tokens": 100_000}
    model = PolicyModel(
        agents_model(provider), policy, on_result=results.append, counter=EstimateCounter()
    )
    items = history_dicts(2)
    run_agent(model, items)
    following = [*items, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "?"}]
    run_agent(model, following)
    first, second = (result.report.tokens for result in results)
    assert first is not None and second is not None
    # The second call's measure is the provider's 10 tokens plus the two items added since.
    assert second.before < 40 < first.before


def test_the_retry_keeps_the_window_less_the_output_reserve_and_a_margin() -> None:
    from contextwise.integrations._overflow import FALLBACK_SHARE, Overflow

    refused = Refusal(limit=128_000, sent=130_532)
    assert Overflow(refused).share(None) == (128_000 - 6_400) / 130_532
    # The output the request reserved: the refusal's own figure, else the integration's.
    assert Overflow(refused, reserve=8_000).share(None) == (128_000 - 8_000 - 6_400) / 130_532
    with_output = Refusal(limit=200_000, sent=197_202, output=21_333)
    assert Overflow(with_output, reserve=1).share(None) == (200_000 - 21_333 - 10_000) / 197_202
    # No window reported: 10 percent under what was sent.
    assert Overflow(Refusal()).share(5_000) == FALLBACK_SHARE
    # Without the provider's count, contextwise's own measure of the whole prompt stands in.
    assert Overflow(Refusal(limit=1_000)).share(2_000) == (1_000 - 50) / 2_000


def test_a_reduce_policy_without_limits_acts_on_a_refusal() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    results: list[ContextResult] = []
    trim = {"id": "turns", "kind": "trim", "fragment_id": "history"}
    policy = {"mode": "reduce", "steps": [trim]}
    model = PolicyModel(agents_model(provider), policy, on_result=results.append)
    assert run_agent(model, history_dicts()).final_output == "ok"
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    assert results[-1].report.conversation.overflow


def test_an_audit_policy_changes_nothing_on_a_refusal() -> None:
    from openai import BadRequestError

    from contextwise.integrations.openai_agents import PolicyModel

    provider = Provider(openai_refusal, CHAT_OK)
    model = PolicyModel(agents_model(provider), {"mode": "audit", "trigger_chars": 100})
    with pytest.raises(BadRequestError) as raised:
        run_agent(model, history_dicts())
    assert len(provider.sent) == 1  # not retried
    report = raised.value.contextwise_report  # type: ignore[attr-defined]
    assert report.mode == "audit" and report.conversation.overflow


def test_pydantic_ai_refused_stream_is_reduced_and_attempted_once_more() -> None:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    provider = Provider(openai_refusal, CHAT_OK)
    provider.stream = stream_body()
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(POLICY, on_result=results.append)
    agent = Agent(pai_openai(provider), capabilities=[capability])

    async def run() -> str:
        question = "And the last question?"
        async with agent.run_stream(question, message_history=pai_history()) as streamed:
            return await streamed.get_output()

    assert asyncio.run(run()) == "ok"
    first, retry = provider.sent
    assert first // 4 > WINDOW >= retry // 4
    assert [r.report.conversation.overflow for r in results] == [False, True]


def _cache_markers(body: str) -> int:
    """How many ``cache_control`` markers an Anthropic request body carries."""
    return body.count('"cache_control"')


def test_pydantic_ai_retry_after_a_refusal_keeps_its_cache_breakpoints() -> None:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    provider = Provider(anthropic_refusal, ANTHROPIC_OK)
    capability = ContextPolicyCapability(POLICY, cache_breakpoints=True)
    agent = Agent(pai_anthropic(provider), capabilities=[capability], instructions=SYSTEM)
    result = agent.run_sync("And the last question?", message_history=pai_history())
    assert result.output == "ok"
    first, retry = provider.bodies
    # The retry is a new prefix (the reduction changed what the previous call sent): it carries
    # the markers of the instructions and the newest message again, never more than four.
    assert _cache_markers(first) >= 2
    assert 2 <= _cache_markers(retry) <= 4
    assert len(retry) < len(first)
