"""Provider-side editing from the integrations: ``provider_editing="anthropic"`` sends the policy's
clear steps as Anthropic's context management, ``"openai"`` its compress steps as the Responses
API's compaction, and the delegated steps no longer run client-side.

Each request is built by the framework's real model class (LangChain ``ChatAnthropic`` and
``ChatOpenAI``, pydantic-ai ``AnthropicModel`` and ``OpenAIResponsesModel``, the Agents SDK's
OpenAI models) over a mock transport that records the JSON body and the headers the provider's
client would send: nothing leaves the process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from contextwise import (
    ANTHROPIC_CONTEXT_MANAGEMENT_BETA,
    ContextResult,
    EstimateCounter,
    InvalidValueError,
    PolicyConfigurationError,
)
from support.errors import assert_translated
from support.mock_providers import ANTHROPIC_OK, CHAT_OK, RESPONSES_OK, Recorder

TOOL_OUTPUT = "line of the tool's output. " * 80
"""About 2,000 characters: four of them cross the policies' trigger of 1,000 tokens."""

CLEAR_POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_tokens": 1_000,
    "target_input_tokens": 600,
    "steps": [
        {"id": "old-results", "kind": "clear", "fragment_id": "history", "keep_recent": 1},
    ],
}

COMPRESS_POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_tokens": 1_000,
    "target_input_tokens": 600,
    "steps": [
        {"id": "summary", "kind": "compress", "fragment_id": "history", "compressor": "sum"},
    ],
}

CLEAR_EDIT = {
    "type": "clear_tool_uses_20250919",
    "trigger": {"type": "input_tokens", "value": 1_000},
    "keep": {"type": "tool_uses", "value": 1},
}
COMPACTION = [{"type": "compaction", "compact_threshold": 1_000}]


def delegated(results: list[ContextResult]) -> tuple[str, ...]:
    conversation = results[-1].report.conversation
    assert conversation is not None
    return conversation.delegated_steps


def applied(results: list[ContextResult]) -> list[str]:
    return [
        change.id
        for result in results
        for change in result.report.changes
        if change.status == "applied"
    ]


# --- LangChain ----------------------------------------------------------------------------------


def chat_anthropic(recorder: Recorder) -> Any:
    import anthropic
    from langchain_anthropic import ChatAnthropic

    chat = ChatAnthropic(model="claude-test", api_key="test", max_retries=0, max_tokens=100)  # type: ignore[call-arg,arg-type]
    # The chat model builds its SDK clients on first use: these are the same classes, over the
    # mock transport.
    chat.__dict__["_client"] = anthropic.Anthropic(
        api_key="test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=recorder.client(anthropic),
    )
    chat.__dict__["_async_client"] = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=recorder.async_client(anthropic),
    )
    return chat


def chat_openai(recorder: Recorder) -> Any:
    import openai
    from langchain_openai import ChatOpenAI

    # Later langchain-openai releases switch to the Responses API for context_management on
    # their own; the lowest supported one needs it asked for.
    return ChatOpenAI(
        use_responses_api=True,
        model="gpt-test",
        api_key="test",  # type: ignore[arg-type]
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=recorder.client(openai),
        http_async_client=recorder.async_client(openai),
    )


def langchain_tool_history(calls: int = 4) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages: list[Any] = [HumanMessage("Read the files.", id="h0")]
    for n in range(calls):
        call = {"name": "read", "args": {"path": f"f{n}.py"}, "id": f"call_{n}"}
        messages.append(AIMessage(content="", tool_calls=[call], id=f"a{n}"))
        output = f"result {n}: {TOOL_OUTPUT}"
        messages.append(ToolMessage(output, tool_call_id=f"call_{n}", id=f"t{n}"))
    messages.append(HumanMessage("And now?", id="h1"))
    return messages


def run_langchain(chat: Any, middleware: Any, messages: list[Any]) -> Any:
    from langchain.agents import create_agent

    agent = create_agent(model=chat, tools=[], middleware=[middleware])
    return agent.invoke({"messages": messages}, {"configurable": {"thread_id": "t-1"}})


def test_langchain_sends_the_clear_steps_as_anthropic_context_management() -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder(ANTHROPIC_OK)
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(
        CLEAR_POLICY,
        provider_editing="anthropic",
        counter=EstimateCounter(),
        on_result=results.append,
    )
    run_langchain(chat_anthropic(recorder), middleware, langchain_tool_history())
    body, headers = recorder.bodies[-1], recorder.headers[-1]
    assert body["context_management"] == {"edits": [CLEAR_EDIT]}
    assert ANTHROPIC_CONTEXT_MANAGEMENT_BETA in headers["anthropic-beta"]
    # The provider clears: every tool result is sent whole, and no clear step ran here.
    assert all(f"result {n}: " in recorder.sent for n in range(4))
    assert results[-1].report.selection is not None  # the prompt is above the trigger
    assert applied(results) == []
    assert delegated(results) == ("old-results",)


def test_langchain_without_provider_editing_clears_client_side() -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder(ANTHROPIC_OK)
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(
        CLEAR_POLICY, counter=EstimateCounter(), on_result=results.append
    )
    run_langchain(chat_anthropic(recorder), middleware, langchain_tool_history())
    assert "context_management" not in recorder.bodies[-1]
    assert "result 0: " not in recorder.sent
    assert applied(results) == ["old-results"]
    assert delegated(results) == ()


def test_langchain_keeps_the_chat_model_s_own_betas() -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder(ANTHROPIC_OK)
    chat = chat_anthropic(recorder)
    chat.betas = ["token-efficient-tools-2025-02-19"]
    middleware = ContextPolicyMiddleware(
        CLEAR_POLICY, provider_editing="anthropic", counter=EstimateCounter()
    )
    run_langchain(chat, middleware, langchain_tool_history())
    betas = recorder.headers[-1]["anthropic-beta"].split(",")
    assert betas == ["token-efficient-tools-2025-02-19", ANTHROPIC_CONTEXT_MANAGEMENT_BETA]


def test_langchain_sends_the_compress_steps_as_openai_compaction() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    summaries: list[Any] = []

    def summarize(messages: list[Any]) -> str:
        summaries.append(messages)
        return "summary"

    recorder = Recorder(RESPONSES_OK)
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(
        COMPRESS_POLICY,
        provider_editing="openai",
        counter=EstimateCounter(),
        compressors={"sum": summarize},
        on_result=results.append,
    )
    history: list[Any] = []
    for n in range(4):
        history += [HumanMessage(f"question {n}: {TOOL_OUTPUT}"), AIMessage(f"answer {n}")]
    history.append(HumanMessage("And now?"))
    run_langchain(chat_openai(recorder), middleware, history)
    body = recorder.bodies[-1]
    assert body["context_management"] == COMPACTION  # sent to the Responses API
    assert "question 0: " in recorder.sent
    assert summaries == []
    assert delegated(results) == ("summary",)


# --- pydantic-ai --------------------------------------------------------------------------------


def pai_anthropic(recorder: Recorder) -> Any:
    import anthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=recorder.async_client(anthropic),
    )
    return AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))


def pai_responses(recorder: Recorder) -> Any:
    import openai
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=recorder.async_client(openai),
    )
    return OpenAIResponsesModel("gpt-test", provider=OpenAIProvider(openai_client=client))


def pai_tool_history(calls: int = 4) -> list[Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    history: list[Any] = [ModelRequest(parts=[UserPromptPart("Read the files.")])]
    for n in range(calls):
        history.append(
            ModelResponse(parts=[ToolCallPart("read", {"path": f"f{n}.py"}, f"call_{n}")])
        )
        history.append(
            ModelRequest(parts=[ToolReturnPart("read", f"result {n}: {TOOL_OUTPUT}", f"call_{n}")])
        )
    return history


def test_pydantic_ai_sends_the_clear_steps_through_its_anthropic_settings() -> None:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder(ANTHROPIC_OK)
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(
        CLEAR_POLICY,
        provider_editing="anthropic",
        counter=EstimateCounter(),
        on_result=results.append,
    )
    agent = Agent(pai_anthropic(recorder), capabilities=[capability])
    assert agent.run_sync("And now?", message_history=pai_tool_history()).output == "ok"
    body, headers = recorder.bodies[-1], recorder.headers[-1]
    assert body["context_management"] == {"edits": [CLEAR_EDIT]}
    assert ANTHROPIC_CONTEXT_MANAGEMENT_BETA in headers["anthropic-beta"]
    assert all(f"result {n}: " in recorder.sent for n in range(4))
    assert applied(results) == []
    assert delegated(results) == ("old-results",)


def test_pydantic_ai_without_provider_editing_clears_client_side() -> None:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder(ANTHROPIC_OK)
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(
        CLEAR_POLICY, counter=EstimateCounter(), on_result=results.append
    )
    agent = Agent(pai_anthropic(recorder), capabilities=[capability])
    agent.run_sync("And now?", message_history=pai_tool_history())
    assert "context_management" not in recorder.bodies[-1]
    assert "result 0: " not in recorder.sent
    assert applied(results) == ["old-results"]


def test_pydantic_ai_sends_the_compress_steps_as_openai_compaction() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    summaries: list[Any] = []

    def summarize(messages: list[Any]) -> str:
        summaries.append(messages)
        return "summary"

    recorder = Recorder(RESPONSES_OK)
    results: list[ContextResult] = []
    capability = ContextPolicyCapability(
        COMPRESS_POLICY,
        provider_editing="openai",
        counter=EstimateCounter(),
        compressors={"sum": summarize},
        on_result=results.append,
    )
    history: list[Any] = []
    for n in range(4):
        history.append(ModelRequest(parts=[UserPromptPart(f"question {n}: {TOOL_OUTPUT}")]))
        history.append(ModelResponse(parts=[TextPart(f"answer {n}")]))
    agent = Agent(pai_responses(recorder), capabilities=[capability])
    assert agent.run_sync("And now?", message_history=history).output == "ok"
    assert recorder.bodies[-1]["context_management"] == COMPACTION
    assert "question 0: " in recorder.sent
    assert summaries == []
    assert delegated(results) == ("summary",)


def pai_chat(recorder: Recorder) -> Any:
    import openai
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=recorder.async_client(openai),
    )
    return OpenAIChatModel("gpt-test", provider=OpenAIProvider(openai_client=client))


def test_pydantic_ai_refuses_a_model_that_would_drop_the_editing() -> None:
    """pydantic-ai ignores another provider's settings: compaction on the Chat Completions
    model would run the delegated steps nowhere, so the request is refused before it is sent."""
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    recorder = Recorder(CHAT_OK)
    capability = ContextPolicyCapability(
        COMPRESS_POLICY,
        provider_editing="openai",
        counter=EstimateCounter(),
        compressors={"sum": lambda messages: "summary"},
    )
    agent = Agent(pai_chat(recorder), capabilities=[capability])
    with pytest.raises(PolicyConfigurationError) as raised:
        agent.run_sync("And now?")
    assert raised.value.code == "provider_editing_unsupported"
    assert raised.value.params["expected"] == "OpenAIResponsesModel"
    assert recorder.bodies == []
    assert_translated(raised.value)


def test_pydantic_ai_refuses_a_routed_model_that_would_drop_the_editing_at_construction() -> None:
    from contextwise import ModelSpec, RuleRouter
    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    router = RuleRouter(
        [],
        default="claude",
        models={"claude": ModelSpec(name="claude-test"), "gpt": ModelSpec(name="gpt-test")},
    )
    with pytest.raises(PolicyConfigurationError) as raised:
        ContextPolicyCapability(
            CLEAR_POLICY,
            provider_editing="anthropic",
            counter=EstimateCounter(),
            router=router,
            models={
                "claude": pai_anthropic(Recorder(ANTHROPIC_OK)),
                "gpt": pai_chat(Recorder(CHAT_OK)),
            },
        )
    assert raised.value.code == "provider_editing_unsupported"
    assert raised.value.params["model"] == "OpenAIChatModel"


# --- the Agents SDK -----------------------------------------------------------------------------


def agents_chat(recorder: Recorder) -> Any:
    import openai
    from agents import OpenAIChatCompletionsModel

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://proxy.test/v1",
        max_retries=0,
        http_client=recorder.async_client(openai),
    )
    return OpenAIChatCompletionsModel("claude-test", client)


def agents_responses(recorder: Recorder) -> Any:
    import openai
    from agents import OpenAIResponsesModel

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://openai.test/v1",
        max_retries=0,
        http_client=recorder.async_client(openai),
    )
    return OpenAIResponsesModel("gpt-test", client)


def agents_tool_items(calls: int = 4) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Read the files."}]
    for n in range(calls):
        items.append(
            {
                "type": "function_call",
                "call_id": f"call_{n}",
                "name": "read",
                "arguments": json.dumps({"path": f"f{n}.py"}),
            }
        )
        items.append(
            {
                "type": "function_call_output",
                "call_id": f"call_{n}",
                "output": f"result {n}: {TOOL_OUTPUT}",
            }
        )
    items.append({"role": "user", "content": "And now?"})
    return items


def run_agents(model: Any, items: list[dict[str, Any]]) -> Any:
    from agents import Agent, RunConfig, Runner

    agent = Agent(name="helper", instructions="Be brief.", model=model)
    return asyncio.run(
        Runner.run(agent, items, run_config=RunConfig(tracing_disabled=True))  # type: ignore[arg-type]
    )


def test_agents_sdk_sends_the_clear_steps_in_the_extra_body() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder(CHAT_OK)
    results: list[ContextResult] = []
    model = PolicyModel(
        agents_chat(recorder),
        CLEAR_POLICY,
        provider_editing="anthropic",
        counter=EstimateCounter(),
        on_result=results.append,
    )
    assert run_agents(model, agents_tool_items()).final_output == "ok"
    body, headers = recorder.bodies[-1], recorder.headers[-1]
    assert body["context_management"] == {"edits": [CLEAR_EDIT]}
    assert headers["anthropic-beta"] == ANTHROPIC_CONTEXT_MANAGEMENT_BETA
    assert all(f"result {n}: " in recorder.sent for n in range(4))
    assert applied(results) == []
    assert delegated(results) == ("old-results",)


def test_agents_sdk_without_provider_editing_clears_client_side() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder(CHAT_OK)
    results: list[ContextResult] = []
    model = PolicyModel(
        agents_chat(recorder), CLEAR_POLICY, counter=EstimateCounter(), on_result=results.append
    )
    run_agents(model, agents_tool_items())
    assert "context_management" not in recorder.bodies[-1]
    assert "result 0: " not in recorder.sent
    assert applied(results) == ["old-results"]


def test_agents_sdk_sends_the_compress_steps_as_responses_compaction() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    summaries: list[Any] = []

    def summarize(items: list[Any]) -> str:
        summaries.append(items)
        return "summary"

    recorder = Recorder(RESPONSES_OK)
    results: list[ContextResult] = []
    model = PolicyModel(
        agents_responses(recorder),
        COMPRESS_POLICY,
        provider_editing="openai",
        counter=EstimateCounter(),
        compressors={"sum": summarize},
        on_result=results.append,
    )
    items: list[dict[str, Any]] = []
    for n in range(4):
        items += [
            {"role": "user", "content": f"question {n}: {TOOL_OUTPUT}"},
            {"role": "assistant", "content": f"answer {n}"},
        ]
    items.append({"role": "user", "content": "And now?"})
    assert run_agents(model, items).final_output == "ok"
    assert recorder.bodies[-1]["context_management"] == COMPACTION
    assert "question 0: " in recorder.sent
    assert summaries == []
    assert delegated(results) == ("summary",)


# --- checked at construction --------------------------------------------------------------------


def constructor(framework: str) -> Callable[..., Any]:
    """The integration's constructor, importing only its own framework."""
    if framework == "langchain":
        from contextwise.integrations.langchain import ContextPolicyMiddleware

        return ContextPolicyMiddleware
    if framework == "pydantic-ai":
        from contextwise.integrations.pydantic_ai import ContextPolicyCapability

        return ContextPolicyCapability
    from contextwise.integrations.openai_agents import PolicyModel

    recorder = Recorder(CHAT_OK)
    return lambda policy, **kw: PolicyModel(agents_chat(recorder), policy, **kw)


@pytest.mark.parametrize("framework", ["langchain", "pydantic-ai", "agents"])
def test_provider_editing_needs_token_limits(framework: str) -> None:
    make = constructor(framework)
    policy = {
        "mode": "reduce",
        "trigger_chars": 4_000,
        "target_input_chars": 3_000,
        "steps": [{"id": "old-results", "kind": "clear", "fragment_id": "history"}],
    }
    with pytest.raises(PolicyConfigurationError) as raised:
        make(policy, provider_editing="anthropic")
    assert raised.value.code == "provider_char_limits"


@pytest.mark.parametrize("framework", ["langchain", "pydantic-ai", "agents"])
def test_provider_editing_with_no_step_to_delegate_is_refused(framework: str) -> None:
    make = constructor(framework)
    with pytest.raises(PolicyConfigurationError) as raised:
        make(CLEAR_POLICY, provider_editing="openai", counter=EstimateCounter())
    assert raised.value.code == "provider_editing_nothing"
    assert raised.value.params["kind"] == "compress"
    assert_translated(raised.value)


@pytest.mark.parametrize("framework", ["langchain", "pydantic-ai", "agents"])
def test_provider_editing_names_a_provider(framework: str) -> None:
    make = constructor(framework)
    with pytest.raises(InvalidValueError) as raised:
        make(CLEAR_POLICY, provider_editing="gemini", counter=EstimateCounter())
    assert raised.value.code == "invalid_choice"
    assert raised.value.params["field"] == "provider_editing"


def test_agents_sdk_refuses_compaction_on_the_chat_completions_api() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    with pytest.raises(PolicyConfigurationError) as raised:
        PolicyModel(
            agents_chat(Recorder(CHAT_OK)),
            COMPRESS_POLICY,
            provider_editing="openai",
            counter=EstimateCounter(),
            compressors={"sum": lambda items: "summary"},
        )
    assert raised.value.code == "provider_editing_unsupported"
    assert raised.value.params["expected"] == "OpenAIResponsesModel"
    assert_translated(raised.value)


def test_agents_sdk_refuses_anthropic_edits_on_the_responses_api() -> None:
    from contextwise.integrations.openai_agents import PolicyModel

    with pytest.raises(PolicyConfigurationError) as raised:
        PolicyModel(
            agents_responses(Recorder(RESPONSES_OK)),
            CLEAR_POLICY,
            provider_editing="anthropic",
            counter=EstimateCounter(),
        )
    assert raised.value.code == "provider_editing_unsupported"


# --- one call path: PolicyModel around a RoutedModel ---------------------------------------------


def named_models(*names: str) -> dict[str, Any]:
    """Offline Agents SDK models with a name: each records the items and settings it receives
    and answers with a message (with an id) and a usage."""
    from agents import Model, ModelResponse, Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    class Named(Model):
        def __init__(self, name: str) -> None:
            self.model = name
            self.calls: list[tuple[Any, Any]] = []

        async def get_response(
            self,
            system_instructions: Any,
            input: Any,
            model_settings: Any,
            *args: Any,
            **kwargs: Any,
        ) -> ModelResponse:
            self.calls.append((input, model_settings))
            text = ResponseOutputText(annotations=[], text="done", type="output_text")
            message = ResponseOutputMessage(
                id=f"msg_{self.model}_{len(self.calls)}",
                content=[text],
                role="assistant",
                status="completed",
                type="message",
            )
            usage = Usage(requests=1, input_tokens=100, output_tokens=10, total_tokens=110)
            return ModelResponse(output=[message], usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return {name: Named(name) for name in names}


def test_agents_sdk_policy_model_around_a_routed_model_is_one_call_path() -> None:
    from contextwise import ModelSpec, RuleRouter
    from contextwise.integrations.openai_agents import PolicyModel, RoutedModel

    models = named_models("gpt-5-mini", "gpt-5")
    specs = {"fast": ModelSpec(name="gpt-5-mini", effort="low"), "deep": ModelSpec(name="gpt-5")}
    router = RuleRouter([], default="fast", models=specs)
    routed = RoutedModel(router, models={"fast": models["gpt-5-mini"], "deep": models["gpt-5"]})
    trim = {
        "mode": "reduce",
        "trigger_chars": 400,
        "target_input_chars": 200,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
    }
    results: list[ContextResult] = []
    model = PolicyModel(routed, trim, on_result=results.append)
    items: list[dict[str, Any]] = []
    for n in range(6):
        items += [
            {"role": "user", "content": f"Question {n}: " + "why? " * 10},
            {"role": "assistant", "content": f"Answer {n}: " + "because. " * 5},
        ]
    items.append({"role": "user", "content": "And now?"})
    assert run_agents(model, items).final_output == "done"
    # The chosen model is called directly, with the policy's context and the route's effort.
    ((sent, settings),) = models["gpt-5-mini"].calls
    assert len(sent) < len(items) and sent[-1]["content"] == "And now?"
    assert settings.reasoning.effort == "low"
    assert results[-1].report.changes[0].id == "turns"
    # Its usage is recorded under the chosen model's name.
    summary = model.usage(items[0])
    assert list(summary.by_model) == ["gpt-5-mini"]
    assert summary.total.calls == 1 and summary.total.usage.input_tokens == 100


def test_agents_sdk_routed_model_alone_sends_the_items_as_they_are() -> None:
    from contextwise import ModelSpec, RuleRouter
    from contextwise.integrations.openai_agents import RoutedModel

    models = named_models("gpt-5-mini")
    router = RuleRouter([], default="fast", models={"fast": ModelSpec(name="gpt-5-mini")})
    items = [{"role": "user", "content": "Question " * 200}]
    assert run_agents(RoutedModel(router, models={"fast": models["gpt-5-mini"]}), items)
    ((sent, settings),) = models["gpt-5-mini"].calls
    assert sent == items
    assert settings.reasoning is None
