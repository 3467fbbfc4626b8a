"""Routing and effort inside the three frameworks: each call goes to the chosen label's own model,
with the route's effort in the framework's own settings, driven by each framework's offline
models."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool

from contextwise import (
    ChoiceQuestion,
    Decision,
    DecisionRequest,
    Effort,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    RoutingConfigurationError,
    RoutingContext,
    RoutingRule,
    RuleRouter,
)
from contextwise.integrations._routing import StepRouting
from contextwise.integrations.langchain import ContextPolicyMiddleware
from support.fake_chat import RecordingChatModel
from tests.support.errors import assert_translated

POLICY = {"mode": "audit", "trigger_chars": 100_000}
SPECS = {
    "fast": ModelSpec(name="gpt-5-mini", api="openai-chat", effort="low"),
    "deep": ModelSpec(name="gpt-5", api="openai-chat", effort="medium"),
}


class ScriptedRouter:
    """A decision provider answering each request with the next (label, confidence, effort)."""

    name = "scripted"

    def __init__(self, *answers: tuple[str, float, str]) -> None:
        self.answers = list(answers)
        self.requests: list[DecisionRequest] = []

    def request(self, request: DecisionRequest) -> dict[str, Any]:
        self.requests.append(request)
        choice, confidence, effort = self.answers.pop(0)
        return {
            "model": request.model,
            "answers": {
                "model": {"choice": choice, "confidence": confidence},
                "effort": {"choice": effort, "confidence": confidence},
            },
            "usage": {"input_tokens": 100, "output_tokens": 5},
        }


def model_router(
    *answers: tuple[str, float, str], sticky: bool = False
) -> tuple[ModelRouter, ScriptedRouter]:
    provider = ScriptedRouter(*answers)
    decision = Decision(
        questions={
            "model": ChoiceQuestion(
                instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
            ),
            "effort": ChoiceQuestion(
                instructions="How hard?", criteria={"low": "Easy.", "high": "Hard."}
            ),
        }
    )
    routing = ModelRouting(
        provider=provider,
        model="router-mini",
        decision=decision,
        question="model",
        models=SPECS,
        fallback="fast",
        effort_question="effort",
    )
    return ModelRouter(routing, sticky=sticky), provider


# --- LangChain ---------------------------------------------------------------------------------


class Recording(RecordingChatModel):
    """LangChain's fake chat model, recording the keyword arguments (the model settings) of each
    call it serves."""

    label: str = ""

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Each call's number of messages and keyword arguments."""
        return [
            {"messages": len(messages), **kwargs}
            for messages, kwargs in zip(self.seen, self.kwargs, strict=True)
        ]

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(**kwargs)  # the model settings reach each call, as with a real model


@tool
def look(topic: str) -> str:
    """Look a topic up."""
    return f"notes on {topic}"


def tool_call(number: int) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "look", "args": {"topic": "x"}, "id": f"c{number}"}]
    )


def langchain_models(replies: dict[str, list[AIMessage]]) -> dict[str, Recording]:
    return {label: Recording(label=label, messages=iter(items)) for label, items in replies.items()}


def run_langchain(
    middleware: ContextPolicyMiddleware, models: dict[str, Recording], *, use_async: bool
) -> list[BaseMessage]:
    agent = create_agent(models["fast"], tools=[look], middleware=[middleware])
    request = {"messages": [HumanMessage("Fix the failing test.")]}
    state = asyncio.run(agent.ainvoke(request)) if use_async else agent.invoke(request)
    return list(state["messages"])


@pytest.mark.parametrize("use_async", [False, True])
def test_langchain_calls_go_to_the_routed_model_with_its_effort(use_async: bool) -> None:
    router, provider = model_router(
        ("fast", 0.95, "low"), ("deep", 0.95, "high"), ("fast", 0.9, "low")
    )
    models = langchain_models(
        {"fast": [tool_call(1), AIMessage("done")], "deep": [tool_call(2)]}
    )
    middleware = ContextPolicyMiddleware(POLICY, router=router, models=models)
    messages = run_langchain(middleware, models, use_async=use_async)
    assert [call["reasoning_effort"] for call in models["fast"].calls] == ["low", "low"]
    assert [call["reasoning_effort"] for call in models["deep"].calls] == ["high"]
    # Each step routed once, after the policy, with the step number and the tools shown.
    assert [request.state["step"] for request in provider.requests] == [1, 2, 3]
    assert provider.requests[0].state["tools"][0]["function"]["name"] == "look"
    answers = [m for m in messages if isinstance(m, AIMessage)]
    routes = [m.response_metadata["contextwise_route"] for m in answers]
    assert [(route["choice"], route["effort"]) for route in routes] == [
        ("fast", "low"), ("deep", "high"), ("fast", "low"),
    ]


def test_langchain_falls_back_below_the_confidence_threshold() -> None:
    router, _ = model_router(("deep", 0.3, "high"))
    models = langchain_models({"fast": [AIMessage("done")], "deep": []})
    messages = run_langchain(
        ContextPolicyMiddleware(POLICY, router=router, models=models), models, use_async=False
    )
    assert [call["reasoning_effort"] for call in models["fast"].calls] == ["low"]  # its own
    assert messages[-1].response_metadata["contextwise_route"]["reason"] == "confidence"


def test_langchain_sticky_keeps_the_cache_model_from_the_history() -> None:
    router, _ = model_router(("deep", 0.95, "high"), ("fast", 0.95, "low"), ("fast", 0.95, "low"),
                             sticky=True)
    models = langchain_models({"fast": [], "deep": [tool_call(1), tool_call(2), AIMessage("ok")]})
    messages = run_langchain(
        ContextPolicyMiddleware(POLICY, router=router, models=models), models, use_async=False
    )
    assert models["fast"].calls == []
    assert [call["reasoning_effort"] for call in models["deep"].calls] == ["high"] * 3
    reasons = [
        m.response_metadata["contextwise_route"]["reason"]
        for m in messages if isinstance(m, AIMessage)
    ]
    assert reasons == ["selected", "sticky", "sticky"]


def test_langchain_rule_routing_with_anthropic_thinking() -> None:
    specs = {
        "fast": ModelSpec(name="claude-haiku", api="anthropic", max_output_tokens=8_000),
        "deep": ModelSpec(name="claude-opus", api="anthropic", max_output_tokens=32_000),
    }
    router = RuleRouter(
        [RoutingRule(id="later", model="deep", min_step=2, effort="high")],
        default="fast",
        models=specs,
    )
    models = langchain_models({"fast": [tool_call(1)], "deep": [AIMessage("done")]})
    run_langchain(
        ContextPolicyMiddleware(POLICY, router=router, models=models), models, use_async=False
    )
    assert "thinking" not in models["fast"].calls[0]  # no effort: nothing sent
    deep = models["deep"].calls[0]
    assert (deep["thinking"], deep["max_tokens"]) == (
        {"type": "enabled", "budget_tokens": 16_384}, 32_000,
    )


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"router": RuleRouter([], default="fast", models=SPECS)}, "router_needs_models"),
        ({"models": {"fast": None}}, "router_needs_models"),
        ({"router": "fast", "models": {}}, "invalid_router"),
        ({"router": RuleRouter([], default="fast", models=SPECS), "models": ["fast"]},
         "framework_models_not_mapping"),
        ({"router": RuleRouter([], default="fast", models=SPECS), "models": {"fast": 1, "big": 2}},
         "framework_models_mismatch"),
    ],
)
def test_bad_routing_options_are_translated_errors(options: dict[str, Any], code: str) -> None:
    with pytest.raises(RoutingConfigurationError) as caught:
        ContextPolicyMiddleware(POLICY, **options)
    assert caught.value.code == code
    assert_translated(caught.value)


def test_a_context_without_a_previous_route_starts_on_the_default() -> None:
    router, _ = model_router()
    routing = StepRouting(router, {"fast": 1, "deep": 2})
    context = routing.context(1, (), {"choice": "unknown", "effort": "high"})
    assert context == RoutingContext(step=1, model="gpt-5-mini")
    kept = routing.context(2, [], {"choice": "deep", "effort": "turbo"})
    assert (kept.model, kept.choice, kept.effort) == ("gpt-5", "deep", None)
    assert routing.context(3, [], {"choice": "deep", "effort": "high"}).effort == Effort.HIGH


# --- pydantic-ai -------------------------------------------------------------------------------


def pydantic_models(
    script: dict[str, list[bool]],
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """One FunctionModel per label (a model that can think); each answers with a tool call (True)
    or the final text, and records the unified ``thinking`` of each request it serves."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.profiles import ModelProfile

    seen: dict[str, list[Any]] = {label: [] for label in script}

    def serve(label: str) -> Any:
        def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
            seen[label].append({"thinking": info.model_request_parameters.thinking})
            if script[label].pop(0):
                return ModelResponse(parts=[ToolCallPart("look", {"topic": "x"})])
            return ModelResponse(parts=[TextPart("done")])

        profile = ModelProfile(supports_thinking=True)
        return FunctionModel(answer, model_name=f"model-{label}", profile=profile)

    return {label: serve(label) for label in script}, seen


def pydantic_agent(router: Any, models: dict[str, Any]) -> Any:
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    agent = Agent(
        models["fast"],
        system_prompt="You fix tests.",
        capabilities=[ContextPolicyCapability(POLICY, router=router, models=models)],
    )

    @agent.tool_plain
    def look(topic: str) -> str:
        """Look a topic up."""
        return f"notes on {topic}"

    return agent


@pytest.mark.parametrize("use_async", [False, True])
def test_pydantic_ai_requests_go_to_the_routed_model_with_its_thinking(use_async: bool) -> None:
    router, provider = model_router(
        ("fast", 0.95, "low"), ("deep", 0.95, "high"), ("fast", 0.9, "low")
    )
    models, seen = pydantic_models({"fast": [True, False], "deep": [True]})
    agent = pydantic_agent(router, models)
    prompt = "Fix the failing test."
    result = asyncio.run(agent.run(prompt)) if use_async else agent.run_sync(prompt)
    assert result.output == "done"
    assert [settings["thinking"] for settings in seen["fast"]] == ["low", "low"]
    assert [settings["thinking"] for settings in seen["deep"]] == ["high"]
    assert [request.state["step"] for request in provider.requests] == [1, 2, 3]
    assert "You fix tests." in provider.requests[0].state["system"]
    assert provider.requests[0].state["tools"][0]["function"]["name"] == "look"
    from pydantic_ai.messages import ModelResponse

    responses = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    routes = [(m.metadata or {})["contextwise_route"] for m in responses]
    assert [(r["choice"], r["model"], r["effort"]) for r in routes] == [
        ("fast", "gpt-5-mini", "low"), ("deep", "gpt-5", "high"), ("fast", "gpt-5-mini", "low"),
    ]
    assert [m.model_name for m in result.all_messages() if isinstance(m, ModelResponse)] == [
        "model-fast", "model-deep", "model-fast",
    ]


def test_pydantic_ai_falls_back_below_the_threshold_and_sticky_keeps_the_model() -> None:
    router, _ = model_router(("deep", 0.95, "high"), ("fast", 0.2, "low"), ("fast", 0.99, "low"),
                             sticky=True)
    models, seen = pydantic_models({"fast": [], "deep": [True, True, False]})
    result = pydantic_agent(router, models).run_sync("Fix it.")
    assert seen["fast"] == []  # the fallback and the cheaper route are both held
    assert [settings["thinking"] for settings in seen["deep"]] == ["high"] * 3
    from pydantic_ai.messages import ModelResponse

    reasons = [
        (m.metadata or {})["contextwise_route"]["reason"]
        for m in result.all_messages() if isinstance(m, ModelResponse)
    ]
    assert reasons == ["selected", "sticky", "sticky"]
    # A later run continuing the history keeps the route too.
    more, seen_more = pydantic_models({"fast": [], "deep": [False]})
    again, _ = model_router(("fast", 0.99, "low"), sticky=True)
    follow = pydantic_agent(again, more).run_sync("And now?", message_history=result.all_messages())
    assert [settings["thinking"] for settings in seen_more["deep"]] == ["high"]
    assert follow.output == "done"


def test_pydantic_ai_effort_none_turns_thinking_off() -> None:
    specs = {"fast": ModelSpec(name="m", effort="none"), "deep": ModelSpec(name="n")}
    router = RuleRouter([], default="fast", models=specs)
    models, seen = pydantic_models({"fast": [False], "deep": []})
    pydantic_agent(router, models).run_sync("Hi")
    assert seen["fast"][0]["thinking"] is False


# --- OpenAI Agents SDK -------------------------------------------------------------------------


def agents_models(script: dict[str, list[bool]]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """One offline Agents SDK model per label: each answers with a tool call (True) or the final
    text, with ids on its items, and records the reasoning effort of each call it serves."""
    import json

    from agents import Model, ModelResponse, Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    seen: dict[str, list[Any]] = {label: [] for label in script}
    counter = iter(range(1_000))

    class Offline(Model):
        def __init__(self, label: str) -> None:
            self.label = label

        async def get_response(
            self, system_instructions: Any, input: Any, model_settings: Any, *args: Any,
            **kwargs: Any,
        ) -> ModelResponse:
            reasoning = model_settings.reasoning
            seen[self.label].append(None if reasoning is None else reasoning.effort)
            number = next(counter)
            if script[self.label].pop(0):
                call = ResponseFunctionToolCall(
                    arguments=json.dumps({"topic": "x"}), call_id=f"call_{number}", name="look",
                    type="function_call", id=f"fc_{number}", status="completed",
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            text = ResponseOutputText(annotations=[], text="done", type="output_text")
            message = ResponseOutputMessage(
                id=f"msg_{number}", content=[text], role="assistant", status="completed",
                type="message",
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return {label: Offline(label) for label in script}, seen


def run_agents(model: Any) -> Any:
    from agents import Agent, Runner, function_tool

    @function_tool
    def look(topic: str) -> str:
        """Look a topic up."""
        return f"notes on {topic}"

    agent = Agent(name="fixer", instructions="You fix tests.", model=model, tools=[look])
    return asyncio.run(Runner.run(agent, "Fix the failing test."))


def test_agents_sdk_routed_model_sends_each_call_to_the_chosen_model_with_its_effort() -> None:
    from contextwise.integrations.openai_agents import RoutedModel

    router, provider = model_router(
        ("fast", 0.95, "low"), ("deep", 0.95, "high"), ("fast", 0.9, "low")
    )
    models, seen = agents_models({"fast": [True, False], "deep": [True]})
    result = run_agents(RoutedModel(router, models=models))
    assert result.final_output == "done"
    assert seen == {"fast": ["low", "low"], "deep": ["high"]}
    assert [request.state["step"] for request in provider.requests] == [1, 2, 3]
    assert provider.requests[0].state["system"] == "You fix tests."
    assert provider.requests[0].state["tools"][0]["function"]["name"] == "look"


def test_agents_sdk_fallback_and_sticky() -> None:
    from contextwise.integrations.openai_agents import RoutedModel

    unsure, _ = model_router(("deep", 0.1, "high"))
    models, seen = agents_models({"fast": [False], "deep": []})
    run_agents(RoutedModel(unsure, models=models))
    assert seen == {"fast": ["low"], "deep": []}  # the fallback, with its own effort

    sticky, _ = model_router(("deep", 0.95, "high"), ("fast", 0.95, "low"), ("fast", 0.95, "low"),
                             sticky=True)
    models, seen = agents_models({"fast": [], "deep": [True, True, False]})
    run_agents(RoutedModel(sticky, models=models))
    assert seen == {"fast": [], "deep": ["high", "high", "high"]}


def test_agents_sdk_routed_model_refuses_bad_models() -> None:
    from contextwise.integrations.openai_agents import RoutedModel

    router = RuleRouter([], default="fast", models=SPECS)
    with pytest.raises(RoutingConfigurationError) as caught:
        RoutedModel(router, models={"fast": object()})  # type: ignore[dict-item]
    assert caught.value.code == "framework_models_mismatch"
    assert caught.value.params["missing"] == ["deep"]
    assert_translated(caught.value)


def test_pydantic_ai_a_streamed_answer_is_followed_by_its_model_name() -> None:
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.profiles import ModelProfile

    profile = ModelProfile(supports_thinking=True)
    models = {
        label: TestModel(call_tools=[], custom_output_text=label, model_name=f"model-{label}",
                         profile=profile)
        for label in ("fast", "deep")
    }
    router, _ = model_router(("deep", 0.95, "high"), ("fast", 0.95, "low"), sticky=True)
    agent = pydantic_agent(router, models)

    async def streamed() -> list[Any]:
        async with agent.run_stream("Fix it.") as run:
            assert await run.get_output() == "deep"
        return run.all_messages()

    history = asyncio.run(streamed())
    # pydantic-ai keeps no hook's change on a streamed response: the next request finds the
    # previous model by its name, at its own effort.
    assert (history[-1].model_name, history[-1].metadata) == ("model-deep", None)
    follow = agent.run_sync("And now?", message_history=history)
    last = follow.all_messages()[-1]
    assert isinstance(last, ModelResponse) and last.model_name == "model-deep"
    assert (last.metadata or {})["contextwise_route"]["reason"] == "sticky"
    assert models["deep"].last_model_request_parameters is not None
    assert models["deep"].last_model_request_parameters.thinking == "medium"


def test_agents_sdk_stream_response_routes_and_remembers() -> None:
    from types import SimpleNamespace

    from agents import Model, ModelSettings, ModelTracing

    from contextwise.integrations.openai_agents import RoutedModel

    class Streaming(Model):
        def __init__(self, label: str) -> None:
            self.label = label
            self.efforts: list[Any] = []

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        async def stream_response(  # type: ignore[override]
            self, system_instructions: Any, input: Any, model_settings: Any, *args: Any,
            **kwargs: Any,
        ) -> Any:
            self.efforts.append(model_settings.reasoning.effort)
            item = {"id": f"msg_{self.label}_{len(self.efforts)}", "type": "message"}
            yield SimpleNamespace(type="response.output_text.delta")
            done = SimpleNamespace(output=[item])
            yield SimpleNamespace(type="response.completed", response=done)

    router, _ = model_router(("deep", 0.95, "high"), ("fast", 0.95, "low"), sticky=True)
    models = {"fast": Streaming("fast"), "deep": Streaming("deep")}
    routed = RoutedModel(router, models=models)  # type: ignore[arg-type]

    async def call(items: list[Any]) -> list[Any]:
        stream = routed.stream_response(
            "You fix tests.", items, ModelSettings(), [], None, [], ModelTracing.DISABLED,
            previous_response_id=None, conversation_id=None, prompt=None,
        )
        return [event async for event in stream]

    first = asyncio.run(call([{"role": "user", "content": "Fix it."}]))
    assert [event.type for event in first] == ["response.output_text.delta", "response.completed"]
    answer = first[-1].response.output[0]
    follow_up = {"role": "user", "content": "And now?"}
    asyncio.run(call([{"role": "user", "content": "Fix it."}, answer, follow_up]))
    assert (models["deep"].efforts, models["fast"].efforts) == (["high", "high"], [])


def test_langchain_sticky_survives_a_restart_through_the_checkpointer() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "restart-1"}}

    def process(answers: tuple[str, float, str], replies: dict[str, list[AIMessage]]) -> Any:
        """A new middleware and agent on the same checkpointer, as a restarted process builds."""
        router, _ = model_router(answers, sticky=True)
        models = langchain_models(replies)
        middleware = ContextPolicyMiddleware(POLICY, router=router, models=models)
        return create_agent(models["fast"], middleware=[middleware], checkpointer=saver), models

    first, _ = process(("deep", 0.95, "high"), {"fast": [], "deep": [AIMessage("one")]})
    first.invoke({"messages": [HumanMessage("Fix it.")]}, config)  # type: ignore[arg-type]
    second, models = process(("fast", 0.95, "low"), {"fast": [], "deep": [AIMessage("two")]})
    state = second.invoke({"messages": [HumanMessage("Thanks.")]}, config)  # type: ignore[arg-type]
    assert models["fast"].calls == []
    assert [call["reasoning_effort"] for call in models["deep"].calls] == ["high"]
    assert state["messages"][-1].response_metadata["contextwise_route"]["reason"] == "sticky"


def test_agents_sdk_routed_model_sees_the_policys_context() -> None:
    from agents import Agent, RunConfig, Runner, SQLiteSession

    from contextwise.integrations.openai_agents import PolicySession, RoutedModel

    router, provider = model_router(*[("fast", 0.95, "low")] * 4)
    models, seen = agents_models({"fast": [False] * 4, "deep": []})
    trim = {
        "mode": "reduce", "trigger_chars": 120, "target_input_chars": 60,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 60}],
    }
    session = PolicySession(SQLiteSession("routed"), trim)
    agent = Agent(name="fixer", instructions="You fix tests.", model=RoutedModel(router, models))
    config = session.run_config(RunConfig(tracing_disabled=True))

    async def converse() -> None:
        for number in range(4):
            question = f"Question number {number}: what fails in the suite today?"
            await Runner.run(agent, question, session=session, run_config=config)

    asyncio.run(converse())
    assert seen["fast"] == ["low"] * 4
    # The router saw the trimmed input, never the whole stored history.
    shown = [len(request.state["messages"]) for request in provider.requests]
    assert shown == [1, 3, 1, 3]  # the stored history grows 1, 3, 5, 7
