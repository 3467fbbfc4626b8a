"""The random histories of tests/support/histories.py hold what the property tests rely on."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from contextwise import messages_chars
from support.histories import Conversation, conversations, histories, pairing_problems, render


@given(conversations)
def test_both_shapes_measure_the_same_text(conversation: Conversation) -> None:
    openai = render(conversation, "openai")
    anthropic = render(conversation, "anthropic")
    assert messages_chars(openai) == messages_chars(anthropic)


@given(histories)
def test_generated_histories_are_well_paired(history: list[dict[str, Any]]) -> None:
    assert pairing_problems(history, history) == []
