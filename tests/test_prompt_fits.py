"""Issue 28, items 1-3: the whole prompt is measured (system prompt, instructions and tools are
pinned parts), a provider's count replaces the estimate of the previous prompt, and no call goes
above the trigger where the same policy without memory would be at or under it. Each framework's
real agent loop, with its own offline test model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from contextwise import ContextResult, EstimateCounter, messages_chars
from contextwise.integrations.langchain import ContextPolicyMiddleware
from test_integrations_langchain import RecordingChatModel

SYSTEM = "You are a careful research assistant. " * 230
"""A large system prompt: above 8,000 characters."""

TRIGGER = 30_000
TARGET = 20_000


def fits_policy() -> dict[str, Any]:
    """Clear older tool results: with the system prompt pinned, two results always fit."""
    return {
        "mode": "reduce",
        "trigger_chars": TRIGGER,
        "target_input_chars": TARGET,
        "steps": [{"id": "clear", "kind": "clear", "fragment_id": "history", "keep_recent": 2}],
    }


def storm_policy() -> dict[str, Any]:
    """The review's repro: clear keeping three, trigger 100k, target 60k."""
    return {
        "mode": "reduce",
        "trigger_chars": 100_000,
        "target_input_chars": 60_000,
        "steps": [{"id": "clear", "kind": "clear", "fragment_id": "history", "keep_recent": 3}],
    }


STORM_SIZES = [40_000, 40_000, 40_000] + [1_000] * 45
"""The tool results of the review's repro: three large ones, then forty-five small ones."""

FIT_SIZES = [6_000] * 10


@tool
def fetch(size: int) -> str:
    """Fetch a document of the given size."""
    return "r" * size


def fetch_replies(sizes: list[int], usage: int | None = None) -> Iterator[AIMessage]:
    """One fetch call per tool result, then the answer; each reply reports ``usage`` input
    tokens when given."""
    metadata: Any = (
        None
        if usage is None
        else {"input_tokens": usage, "output_tokens": 5, "total_tokens": usage + 5}
    )
    for number, size in enumerate(sizes):
        call = {"name": "fetch", "args": {"size": size}, "id": f"call-{number}"}
        yield AIMessage(content="", tool_calls=[call], usage_metadata=metadata)
    yield AIMessage(content="Done.", usage_metadata=metadata)


def tools_chars() -> int:
    return len(json.dumps(convert_to_openai_tool(fetch)))


def langchain_loop(
    policy: dict[str, Any],
    sizes: list[int],
    *,
    thread: str | None = "t1",
    usage: int | None = None,
    **options: Any,
) -> tuple[list[list[BaseMessage]], list[ContextResult]]:
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(policy, on_result=results.append, **options)
    model = RecordingChatModel(messages=fetch_replies(sizes, usage))
    agent = create_agent(model, tools=[fetch], system_prompt=SYSTEM, middleware=[middleware])
    config: Any = {"configurable": {"thread_id": thread}} if thread else {}
    agent.invoke({"messages": [HumanMessage("Read the documents.")]}, config)
    return model.seen, results


def prompt_sizes(seen: list[list[BaseMessage]]) -> list[int]:
    """What each call's prompt holds: its messages, the system message included, and tools."""
    return [messages_chars(messages) + tools_chars() for messages in seen]


# --- item 1: the whole prompt --------------------------------------------------------------------


def test_langchain_the_system_prompt_and_tools_count_against_the_trigger() -> None:
    assert len(SYSTEM) >= 8_000
    seen, results = langchain_loop(fits_policy(), FIT_SIZES)
    sizes = prompt_sizes(seen)
    assert max(sizes) <= TRIGGER, sizes
    # The policy acted, and says how much of the prompt was pinned.
    assert any(result.report.changes for result in results)
    for result, size in zip(results, sizes, strict=True):
        assert result.report.pinned_chars >= len(SYSTEM) + tools_chars() - 50
        assert abs(result.report.after_chars - size) <= 100


def test_langchain_the_innermost_middleware_measures_the_final_request() -> None:
    from langchain.agents.middleware import wrap_model_call
    from langchain_core.messages import SystemMessage

    extra = "Always cite the source document. " * 100

    @wrap_model_call
    def add_rules(request: Any, handler: Any) -> Any:
        # An outer middleware changes the system message after the agent built the request.
        system = SystemMessage(f"{request.system_message.content}\n{extra}")
        return handler(request.override(system_message=system))

    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(fits_policy(), on_result=results.append)
    model = RecordingChatModel(messages=fetch_replies(FIT_SIZES))
    agent = create_agent(
        model, tools=[fetch], system_prompt=SYSTEM, middleware=[add_rules, middleware]
    )
    agent.invoke({"messages": [HumanMessage("Read the documents.")]})
    # Listed last, the middleware is the innermost one: it measured the final system message.
    assert all(result.report.pinned_chars >= len(SYSTEM) + len(extra) for result in results)
    assert max(prompt_sizes(model.seen)) <= TRIGGER


# --- item 2: exact where the provider says so ----------------------------------------------------


def test_langchain_a_reported_input_count_replaces_the_estimate_of_the_previous_prompt() -> None:
    policy = {"mode": "audit", "trigger_tokens": 10**6}
    _, estimated = langchain_loop(policy, [2_000, 2_000], counter=EstimateCounter())
    _, counted = langchain_loop(policy, [2_000, 2_000], usage=9_000, counter=EstimateCounter())
    first = estimated[0].report.tokens
    assert first is not None and counted[0].report.tokens == first  # no reply yet: the estimate
    for call in (1, 2):
        alone, exact = estimated[call].report.tokens, counted[call].report.tokens
        assert alone is not None and exact is not None
        previous = estimated[call - 1].report.tokens
        assert previous is not None
        # The provider's count of the previous prompt, plus the estimate of what was added.
        assert exact.before == 9_000 + (alone.before - previous.after)


# --- item 3: no deferral above the trigger -------------------------------------------------------


def test_langchain_no_call_above_the_trigger_where_a_stateless_run_is_under_it() -> None:
    seen, results = langchain_loop(storm_policy(), STORM_SIZES)
    stateless, _ = langchain_loop(storm_policy(), STORM_SIZES, thread=None)
    remembered = [messages_chars(messages) for messages in seen]
    plain = [messages_chars(messages) for messages in stateless]
    assert len(remembered) == len(plain) == len(STORM_SIZES) + 1
    worse = [n for n, (a, b) in enumerate(zip(remembered, plain, strict=True)) if a > 100_000 >= b]
    assert worse == []
    # The memory still pays off: the prompt only grows at its end between reductions.
    assert sum(1 for result in results if result.report.changes) < len(results) // 2


# --- pydantic-ai ---------------------------------------------------------------------------------


class ScriptedFunction:
    """A pydantic-ai ``FunctionModel`` function: one fetch call per size, then the answer; it
    records the size of each prompt (messages, instructions and tools) and reports ``usage``."""

    def __init__(self, sizes: list[int], usage: int | None = None) -> None:
        self.sizes = sizes
        self.usage = usage
        self.prompts: list[int] = []
        self.messages: list[int] = []

    def __call__(self, messages: list[Any], info: Any) -> Any:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.usage import RequestUsage

        tools = sum(
            len(
                json.dumps(
                    {
                        "name": t.name,
                        "description": t.description or "",
                        "parameters": t.parameters_json_schema,
                    }
                )
            )
            for t in info.function_tools
        )
        # The model receives the instructions once (``info.instructions``), not per request.
        chars = messages_chars(
            [
                replace(message, instructions=None)
                if isinstance(message, ModelRequest)
                else message
                for message in messages
            ]
        )
        self.messages.append(chars)
        self.prompts.append(chars + len(info.instructions or "") + tools)
        usage = RequestUsage(input_tokens=self.usage or 0, output_tokens=5)
        number = len(self.prompts) - 1
        if number < len(self.sizes):
            call = ToolCallPart("fetch", {"size": self.sizes[number]}, tool_call_id=f"c-{number}")
            return ModelResponse(parts=[call], usage=usage)
        return ModelResponse(parts=[TextPart("Done.")], usage=usage)


def pydantic_ai_loop(
    policy: dict[str, Any],
    sizes: list[int],
    *,
    conversation: str | None = "c1",
    usage: int | None = None,
    instructions: str | None = SYSTEM,
    **options: Any,
) -> tuple[ScriptedFunction, list[ContextResult]]:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import FunctionModel

    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    results: list[ContextResult] = []
    capability = ContextPolicyCapability(policy, on_result=results.append, **options)
    function = ScriptedFunction(sizes, usage)
    agent = Agent(FunctionModel(function), instructions=instructions, capabilities=[capability])

    @agent.tool_plain
    def fetch(size: int) -> str:
        """Fetch a document of the given size."""
        return "r" * size

    extra: Any = {} if conversation is None else {"conversation_id": conversation}
    agent.run_sync("Read the documents.", **extra)
    return function, results


def test_pydantic_ai_the_instructions_and_tools_count_against_the_trigger() -> None:
    function, results = pydantic_ai_loop(fits_policy(), FIT_SIZES)
    assert max(function.prompts) <= TRIGGER, function.prompts
    assert any(result.report.changes for result in results)
    assert all(result.report.pinned_chars >= len(SYSTEM) for result in results)


def test_pydantic_ai_a_reported_input_count_replaces_the_estimate_of_the_previous_prompt() -> None:
    policy = {"mode": "audit", "trigger_tokens": 10**6}
    _, estimated = pydantic_ai_loop(policy, [2_000, 2_000], counter=EstimateCounter())
    _, counted = pydantic_ai_loop(policy, [2_000, 2_000], usage=9_000, counter=EstimateCounter())
    assert counted[0].report.tokens == estimated[0].report.tokens
    for call in (1, 2):
        alone, exact = estimated[call].report.tokens, counted[call].report.tokens
        previous = estimated[call - 1].report.tokens
        assert alone is not None and exact is not None and previous is not None
        assert exact.before == 9_000 + (alone.before - previous.after)


def test_pydantic_ai_no_call_above_the_trigger_after_a_reduction_that_missed_its_target() -> None:
    # pydantic-ai gives every run a conversation id, so there is no stateless run to compare
    # with: the bound is the one a stateless run meets here (1 call of 49, as in the review),
    # above the trigger only where the three newest results alone are above it.
    function, results = pydantic_ai_loop(storm_policy(), STORM_SIZES, instructions=None)
    assert len(function.prompts) == len(STORM_SIZES) + 1
    above = [n for n, size in enumerate(function.prompts) if size > 100_000]
    assert above == [3], above
    assert sum(1 for result in results if result.report.changes) < len(results) // 2


# --- OpenAI Agents SDK ---------------------------------------------------------------------------


class FetchModel:
    """An Agents SDK model: one fetch call per size, then the answer; it records each prompt's
    size (items and instructions) and reports ``usage`` input tokens."""

    def __init__(self, sizes: list[int], usage: int | None = None) -> None:
        from agents.models.interface import Model

        self.sizes = sizes
        self.prompts: list[int] = []
        recorder = self

        class _Model(Model):
            async def get_response(
                self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
            ) -> Any:
                from agents.items import ModelResponse
                from agents.usage import Usage
                from openai.types.responses import (
                    ResponseFunctionToolCall,
                    ResponseOutputMessage,
                    ResponseOutputText,
                )

                items = [{"role": "user", "content": input}] if isinstance(input, str) else input
                recorder.prompts.append(messages_chars(items) + len(system_instructions or ""))
                number = len(recorder.prompts) - 1
                output: list[Any]
                if number < len(recorder.sizes):
                    output = [
                        ResponseFunctionToolCall(
                            arguments=json.dumps({"size": recorder.sizes[number]}),
                            call_id=f"call_{number}",
                            name="fetch",
                            type="function_call",
                            id=f"fc_{number}",
                            status="completed",
                        )
                    ]
                else:
                    text = ResponseOutputText(annotations=[], text="Done.", type="output_text")
                    output = [
                        ResponseOutputMessage(
                            id="msg_done",
                            content=[text],
                            role="assistant",
                            status="completed",
                            type="message",
                        )
                    ]
                counted = Usage(requests=1, input_tokens=usage or 0, output_tokens=5)
                return ModelResponse(output=output, usage=counted, response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError("the tests do not stream")

        self.model = _Model()


def agents_loop(
    policy: dict[str, Any],
    sizes: list[int],
    *,
    usage: int | None = None,
    with_hooks: bool = True,
    **options: Any,
) -> tuple[FetchModel, list[ContextResult]]:
    import asyncio

    from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool

    from contextwise.integrations.openai_agents import PolicySession

    @function_tool
    def fetch(size: int) -> str:
        """Fetch a document of the given size."""
        return "r" * size

    results: list[ContextResult] = []
    session = PolicySession(SQLiteSession("fits"), policy, on_result=results.append, **options)
    recorder = FetchModel(sizes, usage)
    agent = Agent(name="reader", instructions=SYSTEM, model=recorder.model, tools=[fetch])
    config = session.run_config(RunConfig(tracing_disabled=True))
    hooks: Any = session.hooks() if with_hooks else None
    asyncio.run(
        Runner.run(
            agent,
            "Read the documents.",
            session=session,
            run_config=config,
            hooks=hooks,
            max_turns=len(sizes) + 5,
        )
    )
    return recorder, results


def test_agents_the_instructions_count_against_the_trigger() -> None:
    recorder, results = agents_loop(fits_policy(), FIT_SIZES)
    assert max(recorder.prompts) <= TRIGGER, recorder.prompts
    assert any(result.report.changes for result in results)
    assert all(result.report.pinned_chars == len(SYSTEM) for result in results)


def test_agents_a_reported_input_count_replaces_the_estimate_of_the_previous_prompt() -> None:
    policy = {"mode": "audit", "trigger_tokens": 10**6}
    _, estimated = agents_loop(policy, [2_000, 2_000], counter=EstimateCounter())
    _, counted = agents_loop(policy, [2_000, 2_000], usage=9_000, counter=EstimateCounter())
    assert counted[0].report.tokens == estimated[0].report.tokens
    for call in (1, 2):
        alone, exact = estimated[call].report.tokens, counted[call].report.tokens
        previous = estimated[call - 1].report.tokens
        assert alone is not None and exact is not None and previous is not None
        assert exact.before == 9_000 + (alone.before - previous.after)


def test_agents_no_call_above_the_trigger_after_a_reduction_that_missed_its_target() -> None:
    # The session's id is its key: there is no stateless run to compare with, so the bound is
    # the one a stateless run meets here: above the trigger only where the three newest results
    # alone are above it (the first call after the third large result).
    recorder, results = agents_loop(storm_policy(), STORM_SIZES)
    assert len(recorder.prompts) == len(STORM_SIZES) + 1
    above = [n for n, size in enumerate(recorder.prompts) if size > 100_000]
    assert above == [3], above
    assert sum(1 for result in results if result.report.changes) < len(results) // 2


# --- ContextSession and prepare_step -------------------------------------------------------------


def chat(turns: int) -> list[dict[str, str]]:
    return [
        message
        for n in range(turns)
        for message in (
            {"role": "user", "content": f"Question {n:02d}? " + "q" * 30},
            {"role": "assistant", "content": f"Answer {n:02d}. " + "a" * 30},
        )
    ]


TRIM = {
    "mode": "reduce",
    "trigger_chars": 600,
    "target_input_chars": 400,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}
TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}


def test_context_session_measures_the_pinned_parts_with_its_messages() -> None:
    from contextwise.session import ContextSession, MemoryStore

    system = "Answer in one sentence. " * 8
    session = ContextSession(TRIM, MemoryStore(), "pinned")
    session.add(chat(6))  # 6 turns of about 90 characters: under the trigger alone
    alone = session.context()
    assert alone.report.changes == () and alone.report.pinned_chars == 0
    result = session.context(pinned=[system, TOOL])
    report = result.report
    tool_chars = len(json.dumps(TOOL, sort_keys=True, separators=(",", ":")))
    assert report.pinned_chars == len(system) + tool_chars
    assert report.before_chars == alone.report.after_chars + report.pinned_chars
    assert report.changes and report.after_chars <= 400
    # The pinned parts are not stored: the session holds the reduced messages only.
    assert messages_chars(session.messages()) == report.after_chars - report.pinned_chars


def test_prepare_step_counts_the_pinned_parts_against_the_policy_and_the_budget() -> None:
    from contextwise import MessagesFragment, ModelSpec, prepare_step

    history = chat(6)
    system = "Answer in one sentence. " * 8
    plain = prepare_step(
        TRIM, [MessagesFragment("history", messages=history)], model="m", step=1, window=100_000
    )
    pinned = prepare_step(
        TRIM,
        [MessagesFragment("history", messages=history)],
        model=ModelSpec(name="m", window=100_000),
        step=1,
        pinned=[system],
    )
    assert plain.report.changes == ()
    assert pinned.report.pinned_chars == len(system) and pinned.report.changes
    assert pinned.plan.used >= (pinned.report.pinned_tokens or 0) > 0


def test_a_pinned_part_of_the_wrong_type_is_a_coded_error() -> None:
    import pytest

    from contextwise import InvalidTypeError
    from contextwise.session import ContextSession, MemoryStore

    session = ContextSession(TRIM, MemoryStore(), "bad")
    with pytest.raises(InvalidTypeError) as caught:
        session.context(pinned=[None])  # type: ignore[list-item]
    assert caught.value.code == "invalid_pinned_part"
    with pytest.raises(InvalidTypeError) as text:
        session.context(pinned="Be brief.")
    assert text.value.code == "not_a_collection"


# --- item 6: refused early -----------------------------------------------------------------------


IDLE = {"mode": "reduce", "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}]}


def test_a_reduce_policy_that_can_never_act_is_refused_when_it_is_bound() -> None:
    import pytest

    from contextwise import ContextBudget, ContextPolicy, PolicyConfigurationError, process_context
    from contextwise.session import ContextSession, MemoryStore
    from support.errors import assert_translated

    attempts = [
        lambda: ContextPolicy.model_validate(IDLE).bind(),
        lambda: process_context(IDLE, []),
        lambda: ContextSession(IDLE, MemoryStore(), "idle"),
        lambda: ContextPolicy.model_validate(IDLE)
        .bind(counter=EstimateCounter(), budget=ContextBudget(1_000, 100))
        .replace(budget=None),
    ]
    for attempt in attempts:
        with pytest.raises(PolicyConfigurationError) as caught:
            attempt()
        assert caught.value.code == "reduce_never_acts"
        assert_translated(caught.value)
    # With a budget it acts; in audit mode it only reports.
    ContextPolicy.model_validate(IDLE).bind(
        counter=EstimateCounter(), budget=ContextBudget(1_000, 100)
    )
    ContextPolicy.model_validate({**IDLE, "mode": "audit"}).bind()


def test_a_reduce_policy_without_limits_is_accepted_by_the_integrations() -> None:
    from contextwise.integrations.openai_agents import PolicySession

    ContextPolicyMiddleware(IDLE)
    PolicySession(_sqlite_session(), IDLE)


def _sqlite_session() -> Any:
    from agents import SQLiteSession

    return SQLiteSession("idle")


class LimitedChatModel(RecordingChatModel):
    """A chat model with its own output limit, as ``ChatAnthropic.max_tokens``."""

    max_tokens: int | None = None


def test_an_anthropic_route_with_effort_takes_the_chat_models_own_max_tokens() -> None:
    from langchain.agents.middleware import wrap_model_call

    from contextwise import ModelSpec, RuleRouter

    spec = ModelSpec(name="claude-sonnet-4-5", api="anthropic", effort="high")
    router = RuleRouter([], default="claude", models={"claude": spec})
    settings: list[dict[str, Any]] = []

    @wrap_model_call
    def record(request: Any, handler: Any) -> Any:
        settings.append(dict(request.model_settings))
        return handler(request)

    chat = LimitedChatModel(messages=iter([AIMessage("Hello.")]), max_tokens=20_000)
    middleware = ContextPolicyMiddleware(
        {"mode": "audit", "trigger_chars": 10**6}, router=router, models={"claude": chat}
    )
    agent = create_agent(chat, middleware=[middleware, record])
    agent.invoke({"messages": [HumanMessage("Hi")]})
    assert settings[0]["max_tokens"] == 20_000
    assert settings[0]["thinking"]["type"] == "enabled"


def test_an_anthropic_route_with_effort_and_no_output_limit_is_refused_at_construction() -> None:
    import pytest

    from contextwise import ModelSpec, RoutingConfigurationError, RuleRouter
    from support.errors import assert_translated

    spec = ModelSpec(name="claude-sonnet-4-5", api="anthropic", effort="high")
    router = RuleRouter([], default="claude", models={"claude": spec})
    chat = LimitedChatModel(messages=iter([]))
    with pytest.raises(RoutingConfigurationError) as caught:
        ContextPolicyMiddleware({"mode": "audit"}, router=router, models={"claude": chat})
    assert caught.value.code == "missing_output_limit"
    assert_translated(caught.value)


def test_langchain_the_response_format_schema_is_pinned() -> None:
    from langchain.agents.middleware import ModelRequest
    from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
    from pydantic import BaseModel

    from contextwise.integrations import langchain as integration

    class Weather(BaseModel):
        """The weather in a city."""

        city: str
        degrees: int

    schema = Weather.model_json_schema()
    model = RecordingChatModel(messages=iter([]))
    for response_format in (ToolStrategy(Weather), ProviderStrategy(Weather), Weather):
        request = ModelRequest(model=model, messages=[], response_format=response_format)
        assert integration._pinned_parts(request) == [schema]


def test_agents_the_usage_hooks_call_the_hooks_of_their_own() -> None:
    import asyncio

    from agents import Agent, RunConfig, RunHooks, Runner, SQLiteSession

    from contextwise.integrations.openai_agents import PolicySession

    class Counting(RunHooks[Any]):
        def __init__(self) -> None:
            self.events: list[str] = []

        async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
            self.events.append("llm_start")

        async def on_llm_end(self, *args: Any, **kwargs: Any) -> None:
            self.events.append("llm_end")

        async def on_agent_start(self, *args: Any, **kwargs: Any) -> None:
            self.events.append("agent_start")

        async def on_agent_end(self, *args: Any, **kwargs: Any) -> None:
            self.events.append("agent_end")

    base = Counting()
    session = PolicySession(SQLiteSession("hooks"), {"mode": "audit", "trigger_chars": 10**6})
    recorder = FetchModel([], usage=1_234)
    agent = Agent(name="reader", instructions=SYSTEM, model=recorder.model)
    config = session.run_config(RunConfig(tracing_disabled=True))
    asyncio.run(
        Runner.run(agent, "Hi", session=session, run_config=config, hooks=session.hooks(base))
    )
    assert base.events == ["agent_start", "llm_start", "llm_end", "agent_end"]
    assert session._input_tokens == 1_234
