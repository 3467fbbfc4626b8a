"""Tool-loop conversations in every message shape, for the clear, clip and recall tests.

A conversation is drawn as abstract events (a user turn, a round of tool calls with results of a
given length and optional thinking, an assistant answer with optional thinking, a system
message), then rendered in one shape. The renderer records, independently of contextwise, the
calls and results of each message, each result's original text, each call's tool name and which
messages carry thinking, so that the checks do not trust the code they check. Every rendered
message is valid for its provider's own SDK types (see :func:`assert_valid`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from anthropic.types import MessageParam
from google.genai import types as genai_types
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

SHAPES = ("openai-chat", "anthropic", "openai-responses", "gemini", "langchain", "pydantic-ai")
"""The shapes that a conversation is rendered in."""

TOOLS = ("search", "fetch", "recall")
"""The tool names that the calls use."""

THINKING_SHAPES = ("anthropic", "openai-responses", "gemini", "langchain", "pydantic-ai")
"""The shapes that carry a model's thinking."""


@dataclass
class Conversation:
    """A rendered conversation and what the renderer knows about it."""

    messages: list[Any] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)
    results: list[list[str]] = field(default_factory=list)
    thinking: list[bool] = field(default_factory=list)
    reasoning_item: list[bool] = field(default_factory=list)
    user_turn: list[bool] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    """Each call id's original result text, as recall returns it."""
    tools: dict[str, str] = field(default_factory=dict)
    """Each call id's tool name."""
    order: list[str] = field(default_factory=list)
    """The call ids, in the order of the calls."""

    def add(
        self,
        message: Any,
        *,
        calls: list[str] | None = None,
        results: list[str] | None = None,
        thinking: bool = False,
        reasoning_item: bool = False,
        user_turn: bool = False,
    ) -> None:
        self.messages.append(message)
        self.calls.append(calls or [])
        self.results.append(results or [])
        self.thinking.append(thinking)
        self.reasoning_item.append(reasoning_item)
        self.user_turn.append(user_turn)

    def latest_turn(self) -> int:
        """The index of the user message that starts the latest turn (0 without one)."""
        starts = [index for index, flag in enumerate(self.user_turn) if flag]
        return starts[-1] if starts else 0


events = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text("abc ", min_size=1, max_size=20)),
        st.tuples(
            st.just("tools"),
            st.integers(1, 3),
            st.integers(0, 400),
            st.booleans(),
            st.integers(0, len(TOOLS) - 1),
        ),
        st.tuples(st.just("assistant"), st.text("xyz ", min_size=1, max_size=20), st.booleans()),
        st.tuples(st.just("system"), st.text("sys", min_size=1, max_size=10)),
    ),
    max_size=16,
)
"""Abstract conversations: each event renders as one or more messages."""


def render(shape: str, drawn: list[tuple[Any, ...]]) -> Conversation:
    """Render abstract events in one shape; ids are unique per conversation."""
    conversation = Conversation()
    for number, event in enumerate(drawn):
        kind = event[0]
        if kind == "system" and shape == "gemini":
            kind, event = "user", ("user", event[1])
        if kind == "user":
            _user(shape, conversation, event[1])
        elif kind == "system":
            _system(shape, conversation, event[1])
        elif kind == "assistant":
            _answer(shape, conversation, number, event[1], event[2] and shape in THINKING_SHAPES)
        else:
            count, length, thinking, tool = event[1:]
            _tools(shape, conversation, number, count, length, thinking, TOOLS[tool])
    return conversation


def result_text(call_id: str, length: int) -> str:
    """A result's text: lines that say which call they answer."""
    line = f"{call_id}: line of the tool's output.\n"
    return (line * (length // len(line) + 1))[:length]


def _user(shape: str, conversation: Conversation, text: str) -> None:
    if shape in ("openai-chat", "anthropic"):
        message: Any = {"role": "user", "content": text}
    elif shape == "openai-responses":
        message = {"role": "user", "content": [{"type": "input_text", "text": text}]}
    elif shape == "gemini":
        message = {"role": "user", "parts": [{"text": text}]}
    elif shape == "langchain":
        message = HumanMessage(text)
    else:
        message = ModelRequest(parts=[UserPromptPart(text)])
    conversation.add(message, user_turn=True)


def _system(shape: str, conversation: Conversation, text: str) -> None:
    if shape in ("openai-chat", "anthropic"):
        message: Any = {"role": "system", "content": text}
    elif shape == "openai-responses":
        message = {"type": "message", "role": "developer", "content": text}
    elif shape == "langchain":
        message = SystemMessage(text)
    else:
        message = ModelRequest(parts=[SystemPromptPart(text)])
    conversation.add(message)


def _answer(shape: str, conversation: Conversation, number: int, text: str, thinking: bool) -> None:
    thought = f"Thinking {number} about the answer."
    if shape == "openai-chat":
        conversation.add({"role": "assistant", "content": text})
        return
    if shape == "openai-responses":
        if thinking:
            conversation.add(_reasoning(number), reasoning_item=True)
        conversation.add(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{number}",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
        return
    if shape == "anthropic":
        blocks: list[Any] = [_anthropic_thinking(thought)] if thinking else []
        message: Any = {"role": "assistant", "content": [*blocks, {"type": "text", "text": text}]}
    elif shape == "gemini":
        parts: list[Any] = [_gemini_thought(thought)] if thinking else []
        message = {"role": "model", "parts": [*parts, {"text": text}]}
    elif shape == "langchain":
        blocks = [_anthropic_thinking(thought)] if thinking else []
        message = AIMessage([*blocks, {"type": "text", "text": text}])
    else:
        parts = [ThinkingPart(thought, signature="sig")] if thinking else []
        message = ModelResponse(parts=[*parts, TextPart(text)])
    conversation.add(message, thinking=thinking)


def _tools(
    shape: str,
    conversation: Conversation,
    number: int,
    count: int,
    length: int,
    thinking: bool,
    tool: str,
) -> None:
    ids = [f"c{number}_{index}" for index in range(count)]
    thinking = thinking and shape in THINKING_SHAPES
    for call_id in ids:
        conversation.texts[call_id] = result_text(call_id, length)
        conversation.tools[call_id] = tool
        conversation.order.append(call_id)
    arguments = {"query": f"question {number}"}
    thought = f"Thinking {number} about the tools."
    texts = conversation.texts
    if shape == "openai-chat":
        conversation.add(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": i,
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(arguments)},
                    }
                    for i in ids
                ],
            },
            calls=ids,
        )
        for i in ids:
            conversation.add({"role": "tool", "tool_call_id": i, "content": texts[i]}, results=[i])
    elif shape == "anthropic":
        blocks: list[Any] = [_anthropic_thinking(thought)] if thinking else []
        uses = [{"type": "tool_use", "id": i, "name": tool, "input": arguments} for i in ids]
        conversation.add(
            {"role": "assistant", "content": [*blocks, *uses]}, calls=ids, thinking=thinking
        )
        conversation.add(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": texts[i]} for i in ids
                ],
            },
            results=ids,
        )
    elif shape == "openai-responses":
        if thinking:
            conversation.add(_reasoning(number), reasoning_item=True)
        for index, i in enumerate(ids):
            # A call's item id ties it to the reasoning item that produced it.
            item_id = {"id": f"fc_{number}_{index}"} if thinking else {}
            conversation.add(
                {
                    "type": "function_call",
                    **item_id,
                    "call_id": i,
                    "name": tool,
                    "arguments": json.dumps(arguments),
                },
                calls=[i],
            )
        for i in ids:
            conversation.add(
                {"type": "function_call_output", "call_id": i, "output": texts[i]}, results=[i]
            )
    elif shape == "gemini":
        parts: list[Any] = [_gemini_thought(thought)] if thinking else []
        calls = [{"functionCall": {"id": i, "name": tool, "args": arguments}} for i in ids]
        conversation.add({"role": "model", "parts": [*parts, *calls]}, calls=ids, thinking=thinking)
        conversation.add(
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": i, "name": tool, "response": {"output": texts[i]}}}
                    for i in ids
                ],
            },
            results=ids,
        )
    elif shape == "langchain":
        blocks = [_anthropic_thinking(thought)] if thinking else []
        conversation.add(
            AIMessage(blocks, tool_calls=[{"id": i, "name": tool, "args": arguments} for i in ids]),
            calls=ids,
            thinking=thinking,
        )
        for i in ids:
            conversation.add(ToolMessage(texts[i], tool_call_id=i, name=tool), results=[i])
    else:
        thinking_parts: list[Any] = [ThinkingPart(thought, signature="sig")] if thinking else []
        conversation.add(
            ModelResponse(
                parts=[
                    *thinking_parts,
                    *(ToolCallPart(tool, dict(arguments), i, id=f"fc_{i}") for i in ids),
                ]
            ),
            calls=ids,
            thinking=thinking,
        )
        conversation.add(
            ModelRequest(parts=[ToolReturnPart(tool, texts[i], i) for i in ids]), results=ids
        )


def _reasoning(number: int) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": f"rs_{number}",
        "summary": [{"type": "summary_text", "text": f"Reasoning {number}."}],
        "encrypted_content": "gAAAA" * 8,
    }


def _anthropic_thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "sig"}


def _gemini_thought(text: str) -> dict[str, Any]:
    return {"text": text, "thought": True, "thoughtSignature": "c2ln"}


_CHAT = TypeAdapter(list[ChatCompletionMessageParam])
_ANTHROPIC = TypeAdapter(list[MessageParam])
_RESPONSES = TypeAdapter(list[ResponseInputItemParam])


def assert_valid(shape: str, messages: list[Any]) -> None:
    """Check messages against their provider's or framework's own types.

    The dict shapes are validated by the typed request parameters of the provider SDKs
    (``openai``, ``anthropic``, ``google-genai``); framework messages must round-trip through
    their framework's own serialization.
    """
    if shape == "openai-chat":
        _CHAT.validate_python(messages)
    elif shape == "anthropic":
        _ANTHROPIC.validate_python([m for m in messages if m["role"] != "system"])
    elif shape == "openai-responses":
        _RESPONSES.validate_python(messages)
    elif shape == "gemini":
        for message in messages:
            genai_types.Content.model_validate(message)
    elif shape == "langchain":
        assert messages_from_dict(messages_to_dict(messages)) == messages
    else:
        dumped = ModelMessagesTypeAdapter.dump_python(messages)
        assert ModelMessagesTypeAdapter.validate_python(dumped) == messages


def result_texts(shape: str, message: Any) -> dict[str, str]:
    """The text of each tool result a message holds, by call id, read without contextwise."""
    if shape == "langchain":
        return {message.tool_call_id: message.content} if isinstance(message, ToolMessage) else {}
    if shape == "pydantic-ai":
        return {
            part.tool_call_id: part.content
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        }
    if shape == "openai-chat":
        return {message["tool_call_id"]: message["content"]} if message["role"] == "tool" else {}
    if shape == "anthropic":
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        return {b["tool_use_id"]: b["content"] for b in blocks if b["type"] == "tool_result"}
    if shape == "openai-responses":
        if message.get("type") == "function_call_output":
            return {message["call_id"]: message["output"]}
        return {}
    return {
        part["functionResponse"]["id"]: part["functionResponse"]["response"]["output"]
        for part in message["parts"]
        if "functionResponse" in part
    }


def call_arguments(shape: str, message: Any) -> dict[str, Any]:
    """The arguments of each tool call a message makes, by call id, read without contextwise."""
    if shape == "langchain":
        return {call["id"]: call["args"] for call in getattr(message, "tool_calls", [])}
    if shape == "pydantic-ai":
        return {
            part.tool_call_id: part.args for part in message.parts if isinstance(part, ToolCallPart)
        }
    if shape == "openai-chat":
        calls = message.get("tool_calls") or []
        return {call["id"]: call["function"]["arguments"] for call in calls}
    if shape == "anthropic":
        content = message["content"]
        blocks = content if isinstance(content, list) else []
        return {b["id"]: b["input"] for b in blocks if b["type"] == "tool_use"}
    if shape == "openai-responses":
        if message.get("type") == "function_call":
            return {message["call_id"]: message["arguments"]}
        return {}
    return {
        part["functionCall"]["id"]: part["functionCall"]["args"]
        for part in message["parts"]
        if "functionCall" in part
    }


def has_thinking(shape: str, message: Any) -> bool:
    """Whether a message carries thinking, read without contextwise."""
    if shape == "langchain":
        content = message.content
        return isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") == "thinking" for block in content
        )
    if shape == "pydantic-ai":
        return any(isinstance(part, ThinkingPart) for part in message.parts)
    if shape == "anthropic":
        content = message["content"]
        return isinstance(content, list) and any(b["type"] == "thinking" for b in content)
    if shape == "gemini":
        return any(part.get("thought") is True for part in message["parts"])
    if shape == "openai-responses":
        return message.get("type") == "reasoning"
    return False
