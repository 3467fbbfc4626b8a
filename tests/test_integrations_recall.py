"""The recall tool in each framework's own form, end to end with the framework's offline model.

In each framework a scripted model fetches a 25,000-character report; the policy clears the
result before the next call, so the model sees the placeholder; the model then calls ``recall``
and reads the report page by page, each page at most 8,000 characters, following the footer of
the page before. The framework's history keeps the original, and the tool reads it there.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.items import ModelResponse as AgentsModelResponse
from agents.items import TResponseInputItem
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData
from agents.usage import Usage
from langchain.agents import create_agent
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from contextwise import MessagesFragment, messages_chars, process_context
from contextwise.integrations import langchain as lc
from contextwise.integrations import openai_agents as oa
from contextwise.integrations import pydantic_ai as pa

REPORT = "".join(f"Row {n:05}: value {n * 7 % 1000}.\n" for n in range(1_200))[:25_000]
PLACEHOLDER = '[cleared: 25000 characters; recall("call_fetch")]'
FOOTER = re.compile(r'\n\[recall\("call_fetch"\): characters (\d+) to (\d+) of 25000; (.*)\]\Z')
POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_chars": 12_000,
    "target_input_chars": 10_000,
    "steps": [
        {"id": "huge", "kind": "clip", "fragment_id": "history", "max_chars": 8_500},
        {"id": "old", "kind": "clear", "fragment_id": "history", "keep_recent": 1},
    ],
}
BOUND = 8_500 + 8_100 + 500
"""The most a model call may see: a clipped result, a page and the rest of the loop."""


def saw_the_report_reduced(calls: Sequence[Sequence[str]]) -> None:
    """The model first saw the report clipped, then cleared: never whole."""
    assert any('[clipped: 16551 characters; recall("call_fetch")]' in t for t in calls[1])
    assert PLACEHOLDER in calls[2]


def next_offset(page: str) -> int | None:
    """What the model reads in a page's footer: where the next page starts."""
    found = FOOTER.search(page)
    assert found is not None, page[-120:]
    return None if found[3] == "end" else int(found[3].removeprefix("more from offset "))


def pages_of(texts: Sequence[str]) -> str:
    """The report as the pages give it, footers cut off."""
    return "".join(FOOTER.sub("", text) for text in texts)


# --- LangChain ---------------------------------------------------------------------------------


class ReadingChatModel(GenericFakeChatModel):
    """LangChain's fake chat model: it records every call, and after fetching it reads the
    footer of the last recall page to ask for the next one."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        offset: int | None = 0
        if isinstance(last, HumanMessage):
            reply = AIMessage("", tool_calls=[{"id": "call_fetch", "name": "fetch", "args": {}}])
            self.messages = iter([reply])
        else:
            assert isinstance(last, ToolMessage)
            offset = 0 if last.tool_call_id == "call_fetch" else next_offset(str(last.content))
            number = len(self.seen)
            reply = (
                AIMessage("The report is read.")
                if offset is None
                else AIMessage(
                    "",
                    tool_calls=[
                        {
                            "id": f"r{number}",
                            "name": "recall",
                            "args": {"ref": "call_fetch", "offset": offset},
                        }
                    ],
                )
            )
            self.messages = iter([reply])
        return super()._generate(messages, stop, run_manager, **kw)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        return self


@tool
def fetch() -> str:
    """Fetch the report."""
    return REPORT


@pytest.mark.parametrize("use_async", [False, True])
def test_langchain_the_model_reads_a_cleared_report_back_page_by_page(use_async: bool) -> None:
    model = ReadingChatModel(messages=iter([]))
    agent = create_agent(
        model,
        tools=[fetch, lc.recall_tool()],
        middleware=[lc.ContextPolicyMiddleware(POLICY)],
    )
    request = {"messages": [HumanMessage("Summarize the report.")]}
    state = asyncio.run(agent.ainvoke(request)) if use_async else agent.invoke(request)
    assert state["messages"][-1].content == "The report is read."
    saw_the_report_reduced([[str(m.content) for m in seen] for seen in model.seen])
    pages = [m.content for m in state["messages"] if isinstance(m, ToolMessage)][1:]
    assert len(pages) == 4 and pages_of(pages) == REPORT
    assert max(messages_chars(seen) for seen in model.seen) < BOUND


# --- pydantic-ai -------------------------------------------------------------------------------


def reading_model(seen: list[list[ModelMessage]]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [part for part in last.parts if isinstance(part, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("fetch", {}, "call_fetch")])
        if returns[0].tool_call_id == "call_fetch":
            offset: int | None = 0
        else:
            offset = next_offset(str(returns[0].content))
        if offset is None:
            return ModelResponse(parts=[TextPart("The report is read.")])
        number = len(seen)
        return ModelResponse(
            parts=[ToolCallPart("recall", {"ref": "call_fetch", "offset": offset}, f"r{number}")]
        )

    return FunctionModel(respond)


def test_pydantic_ai_the_model_reads_a_cleared_report_back_page_by_page() -> None:
    seen: list[list[ModelMessage]] = []
    agent = PydanticAgent(
        reading_model(seen),
        capabilities=[pa.ContextPolicyCapability(POLICY)],
        tools=[pa.recall_tool()],
    )

    @agent.tool_plain
    def fetch() -> str:
        """Fetch the report."""
        return REPORT

    result = agent.run_sync("Summarize the report.")
    assert result.output == "The report is read."
    saw_the_report_reduced(
        [
            [str(p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
            for messages in seen
        ]
    )
    pages = [
        str(part.content)
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == "recall"
    ]
    assert len(pages) == 4 and pages_of(pages) == REPORT
    assert max(messages_chars(messages) for messages in seen) < BOUND


# --- OpenAI Agents SDK -------------------------------------------------------------------------


class ReadingModel(Model):
    """A Responses model: it fetches, then follows the footer of each recall page."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> AgentsModelResponse:
        items = (
            [{"role": "user", "content": input}]
            if isinstance(input, str)
            else [dict(item) for item in input]
        )
        self.seen.append(items)
        last = items[-1]
        if last.get("type") != "function_call_output":
            reply: Any = self._call("fetch", "call_fetch", {})
        else:
            offset = 0 if last["call_id"] == "call_fetch" else next_offset(str(last["output"]))
            if offset is None:
                text = ResponseOutputText(
                    annotations=[], text="The report is read.", type="output_text"
                )
                reply = ResponseOutputMessage(
                    id="msg_1", content=[text], role="assistant", status="completed", type="message"
                )
            else:
                number = len(self.seen)
                reply = self._call("recall", f"r{number}", {"ref": "call_fetch", "offset": offset})
        return AgentsModelResponse(output=[reply], usage=Usage(), response_id=None)

    @staticmethod
    def _call(name: str, call_id: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            arguments=json.dumps(arguments),
            call_id=call_id,
            name=name,
            type="function_call",
            status="completed",
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@function_tool(name_override="fetch")
def fetch_report() -> str:
    """Fetch the report."""
    return REPORT


def clear_before_each_call(data: CallModelData[Any]) -> ModelInputData:
    """The Agents SDK's own hook before each model call, applying the clearing policy."""
    items = data.model_data.input
    fitted = process_context(POLICY, [MessagesFragment("history", items)], unknown_items="opaque")
    return ModelInputData(
        input=list(fitted.fragment("history").messages),
        instructions=data.model_data.instructions,
    )


def test_openai_agents_the_model_reads_a_cleared_report_back_page_by_page() -> None:
    model = ReadingModel()
    session = SQLiteSession("recall")
    agent = Agent(name="reader", model=model, tools=[fetch_report, oa.recall_tool(session)])
    config = RunConfig(tracing_disabled=True, call_model_input_filter=clear_before_each_call)

    async def run() -> Any:
        return await Runner.run(agent, "Summarize the report.", session=session, run_config=config)

    result = asyncio.run(run())
    assert result.final_output == "The report is read."
    saw_the_report_reduced(
        [[str(item.get("output", "")) for item in items] for items in model.seen]
    )
    stored = asyncio.run(session.get_items())
    pages = [
        str(item["output"])
        for item in stored
        if item.get("type") == "function_call_output" and item["call_id"].startswith("r")
    ]
    assert len(pages) == 4 and pages_of(pages) == REPORT
    assert max(messages_chars(items) for items in model.seen) < BOUND


def test_openai_agents_the_tool_reads_only_the_archive_without_a_session() -> None:
    archive = [{"type": "function_call_output", "call_id": "call_fetch", "output": REPORT}]
    recall = oa.recall_tool(archive=archive, limit=9)

    async def invoke() -> Any:
        from agents.tool_context import ToolContext

        context = ToolContext(
            context=None,
            tool_name="recall",
            tool_call_id="x",
            tool_arguments='{"ref": "call_fetch"}',
        )
        return await recall.on_invoke_tool(context, '{"ref": "call_fetch"}')

    assert asyncio.run(invoke()).startswith("Row 00000\n[recall(")
