"""Cache breakpoints in the LangChain middleware: the JSON body that the real ``ChatAnthropic``
sends (over a mock transport that records it) carries the markers that were missing, never more
than Anthropic's four, also beside langchain-anthropic's ``AnthropicPromptCachingMiddleware``; the
agent state keeps its messages unmarked and the conversation stays ``extended``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from contextwise import ContextResult
from support.mock_providers import Recorder

SYSTEM = "You are a careful assistant who answers in one word. " * 8

POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_chars": 1_000_000,
    "target_input_chars": 900_000,
    "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
}


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


def markers(value: object) -> int:
    """How many ``cache_control`` keys a JSON value holds, at any depth."""
    if isinstance(value, dict):
        return sum(("cache_control" in value, *(markers(item) for item in value.values())))
    if isinstance(value, list):
        return sum(markers(item) for item in value)
    return 0


def marked_messages(body: dict[str, Any]) -> list[int]:
    """The indices of the body's messages that carry a marker."""
    return [index for index, message in enumerate(body["messages"]) if markers(message)]


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def run(
    middleware: list[Any], recorder: Recorder, turns: int, asynchronous: bool = False
) -> list[Any]:
    """Run an agent with a checkpointer for ``turns`` turns of one thread; its last state."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    agent = create_agent(
        chat_anthropic(recorder),
        tools=[lookup],
        middleware=middleware,
        system_prompt=SYSTEM,
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    state: Any = None
    for turn in range(turns):
        question = {"messages": [{"role": "user", "content": f"Question {turn}?"}]}
        if asynchronous:
            state = asyncio.run(agent.ainvoke(question, config))
        else:
            state = agent.invoke(question, config)
    return list(state["messages"])


@pytest.mark.parametrize("asynchronous", [False, True])
def test_langchain_marks_the_system_prompt_the_previous_end_and_the_newest_message(
    asynchronous: bool,
) -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder()
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(POLICY, cache_breakpoints=True, on_result=results.append)
    messages = run([middleware], recorder, 3, asynchronous)
    first, second, third = recorder.bodies
    # The system prompt's last block, and the newest message; then the previous call's end.
    for body in recorder.bodies:
        assert markers(body["system"]) == 1
        assert markers(body.get("tools", [])) == 0
    assert marked_messages(first) == [0]
    assert marked_messages(second) == [0, 2]
    assert marked_messages(third) == [2, 4]
    assert [markers(body) for body in recorder.bodies] == [2, 3, 3]
    assert [result.report.conversation.status for result in results] == [
        "resynced",
        "extended",
        "extended",
    ]
    # The markers are on the request only: the agent state's messages carry none.
    assert all(isinstance(message.content, str) for message in messages)


def test_langchain_counts_the_markers_of_anthropic_prompt_caching_middleware() -> None:
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder()
    results: list[ContextResult] = []
    ours = ContextPolicyMiddleware(POLICY, cache_breakpoints=True, on_result=results.append)
    # Theirs first, ours last: ours is the innermost and sees the markers theirs added.
    run([AnthropicPromptCachingMiddleware(), ours], recorder, 4)
    alone = Recorder()
    run([AnthropicPromptCachingMiddleware()], alone, 4)
    for body, theirs in zip(recorder.bodies, alone.bodies, strict=True):
        assert markers(body) <= 4
        # Theirs are all kept, and ours add only what is missing.
        assert markers(body) >= markers(theirs)
        assert markers(body["system"]) == 1
    # Ours take the lifetime of theirs: Anthropic wants longer-lived markers first.
    assert recorder.bodies[1]["messages"][0]["content"][-1]["cache_control"] == {
        "type": "ephemeral",
        "ttl": "5m",
    }
    # From the second call on, the end of what the previous call sent is marked too.
    for previous, body in zip(recorder.bodies, recorder.bodies[1:], strict=False):
        end = len(previous["messages"]) - 1
        assert end in marked_messages(body)
    assert [result.report.conversation.status for result in results][1:] == ["extended"] * 3


def test_langchain_four_markers_already_present_get_no_more() -> None:
    from langchain.agents.middleware import AgentMiddleware

    from contextwise.integrations.langchain import ContextPolicyMiddleware

    class FourMarkers(AgentMiddleware):  # type: ignore[type-arg]
        """Marks the system prompt, the last tool, and the two newest messages."""

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            from langchain_core.messages import SystemMessage

            ephemeral = {"type": "ephemeral"}
            system = SystemMessage([{"type": "text", "text": SYSTEM, "cache_control": ephemeral}])
            tool = request.tools[-1].model_copy(update={"extras": {"cache_control": ephemeral}})
            tools = [*request.tools[:-1], tool]
            messages = list(request.messages)
            for index in range(max(0, len(messages) - 2), len(messages)):
                text = messages[index].text
                messages[index] = messages[index].model_copy(
                    update={"content": [{"type": "text", "text": text, "cache_control": ephemeral}]}
                )
            return handler(request.override(system_message=system, tools=tools, messages=messages))

    recorder = Recorder()
    ours = ContextPolicyMiddleware(POLICY, cache_breakpoints=True)
    run([FourMarkers(), ours], recorder, 3)
    assert [markers(body) for body in recorder.bodies] == [3, 4, 4]


def test_langchain_without_cache_breakpoints_sends_no_marker() -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    recorder = Recorder()
    run([ContextPolicyMiddleware(POLICY)], recorder, 2)
    assert [markers(body) for body in recorder.bodies] == [0, 0]


def test_langchain_cache_breakpoints_must_be_a_bool() -> None:
    from contextwise.errors import InvalidTypeError
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    with pytest.raises(InvalidTypeError) as caught:
        ContextPolicyMiddleware(POLICY, cache_breakpoints="yes")  # type: ignore[arg-type]
    assert caught.value.code == "not_a_bool"


def test_langchain_after_a_reduction_no_marker_points_at_the_old_prefix() -> None:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    # The third call crosses the trigger and is trimmed to its newest question.
    policy = {**POLICY, "trigger_chars": 630, "target_input_chars": 610}
    recorder = Recorder()
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(policy, cache_breakpoints=True, on_result=results.append)
    run([middleware], recorder, 4)
    assert [len(body["messages"]) for body in recorder.bodies] == [1, 3, 1, 3]
    # The reduced call changed what the previous one sent: only the system prompt and the newest
    # message are marked; the next call extends the reduced context, and marks its end again.
    assert [marked_messages(body) for body in recorder.bodies] == [[0], [0, 2], [0], [0, 2]]
    assert [markers(body) for body in recorder.bodies] == [2, 3, 2, 3]
    assert [result.report.conversation.status for result in results][1:] == ["extended"] * 3
