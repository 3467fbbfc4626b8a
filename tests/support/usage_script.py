"""The scripted conversation of the integrations' usage tests, one script for three frameworks.

``tests/test_integrations_usage_langchain.py``, ``..._pydantic_ai.py`` and ``..._openai_agents.py``
each drive the framework's own offline model (LangChain's ``GenericFakeChatModel``, pydantic-ai's
``FunctionModel``, an Agents SDK ``Model`` subclass) from this script: the same questions, answers,
summary, token counts and policy, so that the three files check the same figures.
"""

from __future__ import annotations

from typing import Any

SUMMARY = "Summary: the user plans a trip to Lyon; the budget is 900 euros."
"""What the summarizer model answers."""

SUMMARY_INPUT, SUMMARY_OUTPUT = 300, 20
"""The tokens of one summarizer call: input, output."""

ANSWER_INPUT, ANSWER_OUTPUT = 1000, 50
"""The tokens of one call of the agent's model: input, output."""


def question(turn: int) -> str:
    """The user's question at a turn: long enough that five turns pass the policy's trigger."""
    return f"Question {turn}: " + "words " * 30


def answer(turn: int) -> str:
    """The agent's model's answer at a turn."""
    return f"Answer {turn}: " + "details " * 40


def summary_policy() -> dict[str, Any]:
    """A policy that summarizes every turn but the newest with the ``summary`` compressor."""
    return {
        "mode": "reduce",
        "trigger_chars": 1200,
        "target_input_chars": 700,
        "steps": [
            {
                "id": "summary",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "summary",
                "keep_groups": 1,
            }
        ],
    }
