"""In the async paths, the integrations write usage to the store in a worker thread: the event
loop never waits for the store (pydantic-ai's ``FunctionModel`` and an Agents SDK model of our
own, no provider)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from contextwise.integrations.pydantic_ai import ContextPolicyCapability, summarizer
from contextwise.session import MemoryStore


class ThreadNoting(MemoryStore):
    """A store that notes the thread of each usage write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[int, str]] = []

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        self.writes.append((threading.get_ident(), str(record.get("kind"))))
        super().add_usage(session_id, record)


POLICY: dict[str, Any] = {
    "mode": "reduce",
    "trigger_chars": 1200,
    "target_input_chars": 700,
    "steps": [
        {"id": "summary", "kind": "compress", "fragment_id": "history",
         "compressor": "summary", "keep_groups": 1},
    ],
}


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    turn = sum(isinstance(message, ModelResponse) for message in messages)
    return ModelResponse(
        parts=[TextPart(f"Answer {turn}: " + "details " * 40)],
        usage=RequestUsage(input_tokens=1000, output_tokens=50),
    )


def summary(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("Summary.")], usage=RequestUsage(input_tokens=300, output_tokens=20)
    )


def test_pydantic_ai_usage_is_written_off_the_event_loop() -> None:
    store = ThreadNoting()
    capability = ContextPolicyCapability(
        POLICY,
        store=store,
        compressors={"summary": summarizer(FunctionModel(summary, model_name="small"))},
    )
    agent = Agent(FunctionModel(answer, model_name="main"), capabilities=[capability])

    async def converse() -> int:
        history: list[ModelMessage] = []
        for turn in range(5):
            result = await agent.run(
                f"Question {turn}: " + "words " * 30, message_history=history
            )
            history = result.all_messages()
        return threading.get_ident()

    loop_thread = asyncio.run(converse())
    kinds = {kind for _, kind in store.writes}
    assert kinds == {"model", "summarizer"}
    assert all(thread != loop_thread for thread, _ in store.writes)


def test_agents_sdk_policy_model_usage_is_written_off_the_event_loop() -> None:
    from agents import Agent as AgentsAgent
    from agents import Model, ModelResponse, RunConfig, Runner, Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    from contextwise.integrations.openai_agents import PolicyModel

    class Offline(Model):
        model = "gpt-5-mini"

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            text = ResponseOutputText(annotations=[], text="done", type="output_text")
            message = ResponseOutputMessage(
                id="msg_1", content=[text], role="assistant", status="completed", type="message"
            )
            usage = Usage(requests=1, input_tokens=10, output_tokens=1, total_tokens=11)
            return ModelResponse(output=[message], usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    store = ThreadNoting()
    trim = {
        "mode": "reduce", "trigger_chars": 4000, "target_input_chars": 3000,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
    }
    agent = AgentsAgent(name="a", model=PolicyModel(Offline(), trim, store=store))

    async def run() -> int:
        await Runner.run(agent, "Hello?", run_config=RunConfig(tracing_disabled=True))
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert [kind for _, kind in store.writes] == ["model"]
    assert store.writes[0][0] != loop_thread


def test_the_in_memory_ledgers_are_bounded_in_bytes() -> None:
    from agents import Agent as AgentsAgent
    from agents import Model, ModelResponse, RunConfig, Runner, Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    from contextwise.integrations.openai_agents import PolicyModel

    class Offline(Model):
        model = "gpt-5-mini"

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            text = ResponseOutputText(annotations=[], text="done", type="output_text")
            message = ResponseOutputMessage(
                id="msg_1", content=[text], role="assistant", status="completed", type="message"
            )
            usage = Usage(requests=1, input_tokens=10, output_tokens=1, total_tokens=11)
            return ModelResponse(output=[message], usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    trim = {
        "mode": "reduce", "trigger_chars": 4000, "target_input_chars": 3000,
        "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}],
    }
    model = PolicyModel(Offline(), trim, max_memory_bytes=8_000)
    agent = AgentsAgent(name="a", model=model)
    questions = [f"Question {n}?" for n in range(40)]

    async def run() -> None:
        for question in questions:
            await Runner.run(agent, question, run_config=RunConfig(tracing_disabled=True))

    asyncio.run(run())
    # The least recently used conversations' ledgers were forgotten; the newest are whole.
    assert model.usage(questions[0]).total.calls == 0
    assert model.usage(questions[-1]).total.calls == 1
    kept = sum(model.usage(question).total.calls for question in questions)
    assert 1 < kept < len(questions)
