"""The bugs that a newcomer found inside the three frameworks, each pinned by a test that failed
before its fix (reviews/newcomer-frameworks.md)."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import ChatMessage, HumanMessage

from contextwise import ContextPolicy, ContextResult, MessagesFragment
from contextwise.integrations.langchain import ContextPolicyMiddleware
from support import agents as scenario
from test_integrations_langchain import RecordingChatModel, scripted_replies, weather


def test_estimated_parts_counts_the_input_even_when_a_step_changed_the_fragment() -> None:
    image = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look."},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    history = [
        image,
        {"role": "assistant", "content": "A cat. " * 30},
        {"role": "user", "content": "And?"},
    ]
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "target_input_chars": 100,
            "steps": [
                {
                    "id": "t",
                    "kind": "trim",
                    "fragment_id": "history",
                    "grouping": {"kind": "message"},
                }
            ],
        }
    )
    result = policy.bind().process([MessagesFragment("history", messages=history)])
    assert [change.status for change in result.report.changes] == ["applied"]
    assert result.report.estimated_parts == 1


def test_a_custom_chat_role_does_not_crash_the_langchain_middleware() -> None:
    results: list[ContextResult] = []
    middleware = ContextPolicyMiddleware(scenario.trim_policy(), on_result=results.append)
    model = RecordingChatModel(messages=scripted_replies())
    agent = create_agent(model, tools=[weather], middleware=[middleware])
    critic = ChatMessage(role="critic", content="Be more precise about the cities.")
    agent.invoke({"messages": [critic, HumanMessage(scenario.question(0))]})
    assert results and results[0].report.before_chars >= len(critic.content)
    assert any(message is critic for message in model.seen[0]) or results[0].removed["history"]


def test_an_async_on_result_is_awaited_on_the_sync_path() -> None:
    seen: list[ContextResult] = []

    async def record(result: ContextResult) -> None:
        seen.append(result)

    middleware = ContextPolicyMiddleware(scenario.trim_policy(), on_result=record)
    model = RecordingChatModel(messages=scripted_replies())
    agent = create_agent(model, tools=[weather], middleware=[middleware])
    agent.invoke({"messages": [HumanMessage(scenario.question(0))]})
    assert len(seen) == len(model.seen) == 2


def test_server_side_tool_results_are_measured() -> None:
    from langchain_core.messages import AIMessage

    from contextwise import message_chars

    stdout = "x" * 5_000
    anthropic = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "s1", "name": "code_execution", "input": {}},
            {
                "type": "code_execution_tool_result",
                "tool_use_id": "s1",
                "content": {"type": "code_execution_result", "stdout": stdout, "stderr": ""},
            },
        ],
    }
    assert message_chars(anthropic) > 5_000
    langchain = AIMessage(
        content=[
            {"type": "server_tool_call", "id": "s1", "name": "web_search", "args": {"q": "x"}},
            {"type": "server_tool_result", "tool_call_id": "s1", "output": "y" * 5_000},
        ]
    )
    assert message_chars(langchain) > 5_000
