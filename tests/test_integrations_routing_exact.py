"""Routing is exact in every framework (issue 31, item 6): what a route records is what was sent,
and what a framework adds to a request never breaks the conversation's memory."""

from __future__ import annotations

from typing import Any

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
