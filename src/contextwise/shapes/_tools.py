"""Tool uses in every shape: the tool calls and results a message holds, and copies of it with
results replaced, inputs emptied or thinking dropped.

The ``clear`` and ``clip`` steps and :func:`~contextwise.recall` read messages through these
functions. A copy is always a new object in the message's own shape (a dict, a LangChain message,
a pydantic-ai message); the message given is never changed. Results and calls are addressed by
their position in what :func:`tool_results` and :func:`tool_calls` return.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Final

from contextwise.shapes import _chat as chat
from contextwise.shapes import _gemini as gemini
from contextwise.shapes import _langchain as langchain
from contextwise.shapes import _pydantic_ai as pydantic_ai
from contextwise.shapes import _responses as responses
from contextwise.shapes._facts import MessageShape, ToolCall, ToolResult


@dataclass(frozen=True, slots=True)
class _Tools:
    results: Callable[[Any], list[ToolResult]]
    calls: Callable[[Any], list[ToolCall]]
    with_results: Callable[[Any, Mapping[int, str]], Any]
    without_inputs: Callable[[Any, AbstractSet[int]], Any]
    without_thinking: Callable[[Any], Any | None]


def _none(message: Any) -> None:
    return None


_CHAT: Final = _Tools(
    chat.chat_results,
    chat.chat_calls,
    chat.chat_with_results,
    chat.chat_without_inputs,
    chat.chat_without_thinking,
)

_BY_SHAPE: Final[Mapping[MessageShape, _Tools]] = {
    "openai-chat": _CHAT,
    "anthropic": _CHAT,
    "openai-responses": _Tools(
        responses.item_results,
        responses.item_calls,
        responses.item_with_results,
        responses.item_without_inputs,
        _none,
    ),
    "gemini": _Tools(
        gemini.content_results,
        gemini.content_calls,
        gemini.content_with_results,
        gemini.content_without_inputs,
        gemini.content_without_thinking,
    ),
    "langchain": _Tools(
        langchain.langchain_results,
        langchain.langchain_calls,
        langchain.langchain_with_results,
        langchain.langchain_without_inputs,
        langchain.langchain_without_thinking,
    ),
    "pydantic-ai": _Tools(
        pydantic_ai.pydantic_ai_results,
        pydantic_ai.pydantic_ai_calls,
        pydantic_ai.pydantic_ai_with_results,
        pydantic_ai.pydantic_ai_without_inputs,
        pydantic_ai.pydantic_ai_without_thinking,
    ),
}


def _tools(message: Any, shape: MessageShape) -> _Tools:
    # A Responses message item (a role-based one) is read as a chat message.
    if shape == "openai-responses" and message.get("type") in (None, "message"):
        return _CHAT
    return _BY_SHAPE[shape]


def tool_results(message: Any, shape: MessageShape) -> list[ToolResult]:
    """The tool results that a message of a known shape holds, in order. Results of hosted
    tools, which the provider answers in the call's own item, are not listed."""
    return _tools(message, shape).results(message)


def tool_calls(message: Any, shape: MessageShape) -> list[ToolCall]:
    """The tool calls that a message of a known shape makes, in order."""
    return _tools(message, shape).calls(message)


def with_results(message: Any, shape: MessageShape, texts: Mapping[int, str]) -> Any:
    """A copy of a message whose results at the given positions hold the given texts."""
    return _tools(message, shape).with_results(message, texts)


def without_inputs(message: Any, shape: MessageShape, positions: AbstractSet[int]) -> Any:
    """A copy of a message whose calls at the given positions have empty arguments."""
    return _tools(message, shape).without_inputs(message, positions)


def without_thinking(message: Any, shape: MessageShape) -> Any | None:
    """A copy of a message without its thinking, or ``None`` when it has none, or nothing but
    thinking (a Responses ``reasoning`` item is a whole item, removed by the caller)."""
    return _tools(message, shape).without_thinking(message)
