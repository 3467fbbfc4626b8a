"""Routing is exact in every framework (issue 31, item 6): what a route records is what was sent,
and what a framework adds to a request never breaks the conversation's memory."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from contextwise import ModelSpec, RoutingRule, RuleRouter, message_text

AUDIT = {"mode": "audit", "trigger_chars": 100_000}


# --- pydantic-ai -------------------------------------------------------------------------------


def thinking_models() -> tuple[dict[str, Any], list[Any]]:
    """Two FunctionModels that can think; each records the unified ``thinking`` it was sent."""
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.profiles import ModelProfile

    sent: list[Any] = []

    def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
        sent.append(info.model_request_parameters.thinking)
        return ModelResponse(parts=[TextPart("ok")])

    profile = ModelProfile(supports_thinking=True)
    models = {label: FunctionModel(answer, model_name=label, profile=profile)
              for label in ("fast", "deep")}
    return models, sent


def effort_router() -> RuleRouter:
    return RuleRouter(
        [RoutingRule(id="debug", model="deep", effort="high",
                     when=lambda c: "debug" in message_text(c.messages[-1]))],
        default="fast",
        models={"fast": ModelSpec(name="fast", effort="low"),
                "deep": ModelSpec(name="deep", effort="medium")},
    )


def test_pydantic_ai_effort_changes_keep_the_memory_extended() -> None:
    """Bug 1: pydantic-ai appends a ``model-settings-delta`` part to the request after the
    capability fingerprinted it; the next run must still extend the remembered conversation."""
    from pydantic_ai import Agent

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    models, sent = thinking_models()
    results: list[Any] = []
    capability = ContextPolicyCapability(
        AUDIT, on_result=results.append, router=effort_router(), models=models
    )
    agent = Agent(models["fast"], capabilities=[capability])
    history: list[Any] = []
    for prompt in ("hello", "please debug this", "and now", "debug again", "thanks"):
        history = agent.run_sync(prompt, message_history=history).all_messages()
    assert sent == ["low", "high", "low", "high", "low"]
    statuses = [result.report.conversation.status for result in results]
    assert statuses[1:] == ["extended"] * 4
    kinds = {part.part_kind for message in history for part in getattr(message, "parts", ())}
    assert "model-settings-delta" in kinds  # the framework's parts are there, and did not count


def test_pydantic_ai_a_reduction_keeps_the_settings_in_force() -> None:
    """The request that recorded the effort in force is trimmed away: the request sent still
    carries the newest ``model-settings-delta``, so pydantic-ai records no second change."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.profiles import ModelProfile

    def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("x" * 300)])

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    model = FunctionModel(answer, model_name="fast", profile=ModelProfile(supports_thinking=True))
    router = RuleRouter([], default="fast", models={"fast": ModelSpec(name="fast", effort="low")})
    policy = {
        "mode": "reduce", "trigger_chars": 1200, "target_input_chars": 700,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 700}],
    }
    results: list[Any] = []
    capability = ContextPolicyCapability(
        policy, on_result=results.append, router=router, models={"fast": model}
    )
    agent = Agent(model, capabilities=[capability])
    history: list[Any] = []
    for turn in range(6):
        history = agent.run_sync(f"turn {turn}", message_history=history).all_messages()
    assert any(result.report.changes for result in results)  # the first request was trimmed
    deltas = [
        part for message in history for part in getattr(message, "parts", ())
        if part.part_kind == "model-settings-delta"
    ]
    assert [(part.settings, part.top_level) for part in deltas] == [({"thinking": "low"}, True)]


def test_pydantic_ai_an_effort_the_model_cannot_take_is_not_recorded() -> None:
    """Bug 6: a model whose profile lacks thinking drops pydantic-ai's ``thinking``; the route
    records no effort, and warns once, naming why."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models.test import TestModel

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    model = TestModel()
    router = RuleRouter([], default="fast", models={"fast": ModelSpec(name="fast", effort="high")})
    agent = Agent(model, capabilities=[
        ContextPolicyCapability(AUDIT, router=router, models={"fast": model})
    ])
    with pytest.warns(UserWarning, match="does not support thinking") as caught:
        first = agent.run_sync("hi")
        second = agent.run_sync("again", message_history=first.all_messages())
    assert len([w for w in caught if "thinking" in str(w.message)]) == 1
    records = [
        (message.metadata or {})["contextwise_route"]
        for message in second.all_messages() if isinstance(message, ModelResponse)
    ]
    assert [(record["choice"], record["effort"]) for record in records] == [("fast", None)] * 2


# --- LangChain ---------------------------------------------------------------------------------


GEMINI_OK = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
}


def gemini_chat(bodies: list[dict[str, Any]]) -> Any:
    """The real ``ChatGoogleGenerativeAI`` over a mock httpx transport that records each body."""
    import httpx
    from langchain_google_genai import ChatGoogleGenerativeAI

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=GEMINI_OK)

    return ChatGoogleGenerativeAI(
        model="gemini-test", api_key="test",  # type: ignore[arg-type]
        retries=0, client_args={"transport": httpx.MockTransport(handle)},
    )


@pytest.mark.parametrize(
    ("spec", "thinking"),
    [
        (ModelSpec(name="gemini-2.5-flash", api="gemini", effort="high", max_output_tokens=4000),
         {"thinking_budget": 2000}),
        (ModelSpec(name="gemini-3-pro", api="gemini", effort="low",
                   effort_names={"low": "low", "high": "high"}),
         {"thinking_level": "LOW"}),
    ],
)
@pytest.mark.parametrize("use_async", [False, True])
def test_langchain_gemini_routing_sends_its_thinking(
    spec: ModelSpec, thinking: dict[str, Any], use_async: bool
) -> None:
    """Bug 2: a Gemini spec sends what ``ChatGoogleGenerativeAI`` takes, never ``config=``."""
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    bodies: list[dict[str, Any]] = []
    chat = gemini_chat(bodies)
    router = RuleRouter([], default="x", models={"x": spec})
    middleware = ContextPolicyMiddleware(AUDIT, router=router, models={"x": chat})
    agent = create_agent(chat, middleware=[middleware])
    state = {"messages": [HumanMessage("hello")]}
    result = asyncio.run(agent.ainvoke(state)) if use_async else agent.invoke(state)
    assert result["messages"][-1].content == "ok"
    config = bodies[0]["generationConfig"]
    assert {key: value for key, value in config["thinkingConfig"].items()
            if key not in ("includeThoughts", "include_thoughts")} == thinking
    if spec.max_output_tokens is not None:
        assert config["maxOutputTokens"] == spec.max_output_tokens
    record = result["messages"][-1].response_metadata["contextwise_route"]
    assert record["effort"] == spec.effort.value  # type: ignore[union-attr]


def test_langchain_a_spec_without_api_records_no_effort() -> None:
    """Bug 6: without ``api`` the middleware cannot send an effort; the route says so."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    chat = GenericFakeChatModel(messages=iter([AIMessage("one"), AIMessage("two")]))
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    router = RuleRouter([], default="x", models={"x": ModelSpec(name="m", effort="high")})
    middleware = ContextPolicyMiddleware(AUDIT, router=router, models={"x": chat})
    agent = create_agent(chat, middleware=[middleware])
    with pytest.warns(UserWarning, match="declares no api") as caught:
        first = agent.invoke({"messages": [HumanMessage("hello")]})
        second = agent.invoke({"messages": [*first["messages"], HumanMessage("more")]})
    assert len(caught) == 1
    records = [message.response_metadata["contextwise_route"]
               for message in second["messages"] if isinstance(message, AIMessage)]
    assert [(record["choice"], record["effort"]) for record in records] == [("x", None)] * 2


# --- issue 31 item 7: the small ones -----------------------------------------------------------

TRIM = {
    "mode": "reduce", "trigger_chars": 300, "target_input_chars": 200,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history", "target_chars": 200}],
}


def test_langchain_warns_once_when_it_reduces_without_a_thread_id() -> None:
    """Bug 14: without a thread id nothing remembers a reduction; the middleware says so once,
    and not at all with a thread id (no checkpointer needed)."""
    import warnings

    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    def run(config: Any) -> list[warnings.WarningMessage]:
        chat = GenericFakeChatModel(messages=iter([AIMessage("a" * 150) for _ in range(4)]))
        agent = create_agent(chat, middleware=[ContextPolicyMiddleware(TRIM)])
        messages: list[Any] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for turn in range(4):
                messages = [*messages, HumanMessage(f"question {turn} " + "q" * 100)]
                messages = agent.invoke({"messages": messages}, config=config)["messages"]
        return [w for w in caught if "thread id" in str(w.message)]

    stateless = run(None)
    assert len(stateless) == 1
    assert "thread_id" in str(stateless[0].message)
    assert run({"configurable": {"thread_id": "t-1"}}) == []


# --- OpenAI Agents SDK -------------------------------------------------------------------------


def test_agents_sdk_sticky_route_survives_a_restart_through_the_store(tmp_path: Any) -> None:
    """Bug 8: the route is kept in the store under the output items' ids; a new RoutedModel
    (a restarted worker) on the same store keeps the sticky model and effort."""
    from agents import Agent, Runner

    from contextwise.integrations.openai_agents import RoutedModel
    from contextwise.session import SQLiteStore
    from tests.test_integrations_routing import agents_models

    router = RuleRouter(
        [RoutingRule(id="debug", model="deep", effort="high",
                     when=lambda c: "debug" in message_text(c.messages[-1]))],
        default="fast",
        models={"fast": ModelSpec(name="fast", effort="low"),
                "deep": ModelSpec(name="deep", effort="medium")},
        sticky=True,
    )
    path = tmp_path / "routes.db"

    def run(prompt: str, history: list[Any], store: Any) -> tuple[list[Any], dict[str, Any]]:
        models, seen = agents_models({"fast": [False], "deep": [False]})
        agent = Agent(name="a", model=RoutedModel(router, models=models, store=store))
        result = asyncio.run(Runner.run(agent, [*history, {"role": "user", "content": prompt}]))
        return result.to_input_list(), seen

    history, seen = run("please debug this", [], SQLiteStore(path))
    assert seen == {"fast": [], "deep": ["high"]}
    _, seen = run("thanks", history, SQLiteStore(path))  # a restarted worker
    assert seen == {"fast": [], "deep": ["high"]}
    _, seen = run("thanks", history, None)  # without the store the route is forgotten
    assert seen == {"fast": ["low"], "deep": []}


def test_agents_sdk_a_store_that_fails_never_ends_the_run() -> None:
    from agents import Agent, Runner

    from contextwise.integrations.openai_agents import RoutedModel
    from tests.test_integrations_routing import agents_models

    class Broken:
        def load_conversation(self, key: str, *, ttl: Any = None) -> Any:
            raise OSError("disk")

        def save_conversation(self, key: str, value: Any, version: int, *, ttl: Any = None) -> int:
            raise OSError("disk")

    router = RuleRouter([], default="fast", models={"fast": ModelSpec(name="fast", effort="low")})
    models, seen = agents_models({"fast": [False, False]})
    agent = Agent(name="a", model=RoutedModel(router, models=models, store=Broken()))
    first = asyncio.run(Runner.run(agent, "hi"))
    again = [*first.to_input_list(), {"role": "user", "content": "more"}]
    assert asyncio.run(Runner.run(agent, again)).final_output == "done"
    assert seen == {"fast": ["low", "low"]}


def test_a_clip_limit_smaller_than_its_marker_is_refused() -> None:
    """Bug 13: ``max_chars=10`` used to be accepted and give a 47-character marker."""
    from contextwise import ContextPolicy, PolicyConfigurationError
    from tests.support.errors import assert_translated

    step = {"id": "huge", "kind": "clip", "fragment_id": "history", "max_chars": 10}
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "trigger_chars": 100, "steps": [step]})
    assert caught.value.code == "clip_below_marker"
    assert caught.value.params["max_chars"] == 10
    assert caught.value.params["marker_chars"] > 47
    assert_translated(caught.value)


def test_routing_models_must_be_the_frameworks_models() -> None:
    """Item 7: a label's model that is not the framework's model is refused when the integration
    is built, not at its first call."""
    from agents import Model as AgentsModel

    from contextwise import InvalidTypeError
    from contextwise.integrations.langchain import ContextPolicyMiddleware
    from contextwise.integrations.openai_agents import RoutedModel
    from contextwise.integrations.pydantic_ai import ContextPolicyCapability
    from tests.support.errors import assert_translated

    router = RuleRouter([], default="x", models={"x": ModelSpec(name="m")})
    builders = [
        (lambda: ContextPolicyMiddleware(AUDIT, router=router, models={"x": "gpt-5"}),
         "BaseChatModel"),
        (lambda: ContextPolicyCapability(AUDIT, router=router, models={"x": "gpt-5"}), "Model"),
        (lambda: RoutedModel(router, models={"x": "gpt-5"}), AgentsModel.__name__),
    ]
    for build, expected in builders:
        with pytest.raises(InvalidTypeError) as caught:
            build()
        assert caught.value.code == "not_an_instance"
        assert caught.value.params["expected"] == expected
        assert caught.value.params["name"] == "models['x']"
        assert_translated(caught.value)


@pytest.mark.parametrize(
    ("step", "path"),
    [
        ({"id": "a", "kind": "trim", "target_chars": 50}, "steps[0].fragment_id"),
        ({"id": "a", "kind": "trim", "targetChars": 50}, "steps[0].fragmentId"),
    ],
)
def test_a_missing_key_is_named_as_the_policy_spells_its_keys(
    step: dict[str, Any], path: str
) -> None:
    """Bug 13: a policy written in snake_case gets snake_case paths in its errors."""
    from contextwise import ContextPolicy, PolicyConfigurationError

    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "steps": [step]})
    assert caught.value.code == "missing_key"
    assert caught.value.params["field"] == path


def test_an_empty_list_in_an_error_reads_none() -> None:
    """Bug 13: "it provides -" for an application that gives no compressor."""
    from contextwise import PolicyConfigurationError, PolicyRunner

    step = {"id": "a", "kind": "compress", "fragment_id": "history", "compressor": "summ"}
    with pytest.raises(PolicyConfigurationError) as caught:
        PolicyRunner({"mode": "reduce", "trigger_chars": 100, "target_input_chars": 50,
                      "steps": [step]})
    assert caught.value.code == "unknown_compressor"
    assert caught.value.render("en").endswith("it provides none.")
    assert caught.value.render("fr").endswith("compresseurs fournis\u00a0: aucun.")
    assert caught.value.render("zh").endswith("无。")


def test_an_upstream_sliding_window_is_reported_once() -> None:
    """Bug 17: pydantic-ai's ``ProcessHistory`` keeping the last messages in front of the
    capability makes the history shrink at its start while its end grows; a warning says so,
    once."""
    import warnings

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.test import TestModel

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    def keep_last(messages: list[Any]) -> list[Any]:
        return messages[-3:]

    results: list[Any] = []
    capability = ContextPolicyCapability(AUDIT, on_result=results.append)
    agent = Agent(TestModel(), capabilities=[ProcessHistory(keep_last), capability])
    history: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for turn in range(6):
            history = agent.run_sync(f"turn {turn}", message_history=history).all_messages()
    windows = [w for w in caught if "sliding window" in str(w.message)]
    assert len(windows) == 1
    assert "resynced" in [result.report.conversation.status for result in results]

    # Without the window, the history only extends: no warning.
    results.clear()
    plain = Agent(TestModel(), capabilities=[ContextPolicyCapability(AUDIT)])
    history = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for turn in range(6):
            history = plain.run_sync(f"turn {turn}", message_history=history).all_messages()
    assert not [w for w in caught if "sliding window" in str(w.message)]


def test_an_agents_sdk_session_limit_is_reported_once() -> None:
    """Bug 17: ``SessionSettings(limit)`` in front of the policy is the same sliding window."""
    import warnings

    from agents import SQLiteSession
    from agents.memory import SessionSettings

    from contextwise.integrations.openai_agents import PolicySession
    from tests.test_integrations_openai_agents import converse

    results: list[Any] = []
    windowed = SQLiteSession("w", session_settings=SessionSettings(limit=6))
    session = PolicySession(windowed, AUDIT, on_result=results.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(converse(session, turns=6))
    assert len([w for w in caught if "sliding window" in str(w.message)]) == 1
    assert "resynced" in [result.report.conversation.status for result in results[1:]]
