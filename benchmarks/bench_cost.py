"""What an agent pays for its input over a whole conversation, with the provider's prompt cache.

A tool-heavy conversation (64 user turns, 2 to 8 tool calls each, tool results of 1,000 to 9,000
characters, about 380 model calls; one turn always fits the limit) is driven through each
framework's real agent loop with its own offline test model, and the messages every model call
receives are captured. Every row uses the same limit (120,000 characters) and target (72,000):

- ``trim_messages``: LangChain's ``trim_messages`` at every call (``strategy="last"``,
  ``start_on="human"``, ``include_system=True``, ``max_tokens`` = the limit, in characters);
- ``SummarizationMiddleware``: LangChain's (trigger = the limit, keep = the target), with the
  same scripted summarizer as contextwise;
- ``ContextSession``: contextwise's session, which stores its reductions;
- the three contextwise integrations, remembering their reductions per conversation;
- ``ContextSession, clear+trim``: a session whose policy clears the older tool results (the
  model can recall them) and then trims whole tool units, keeping the current turn's task;
- the append-only floor: the whole history at every call, over the limit (what caching alone
  costs per sent token).

contextwise's policy summarizes all but the newest turn when the context crosses the limit
(``compress``, ``keep_groups=1``), then trims to the target if the summary is not enough.

The cache is priced by the providers' published rules, with tokens counted as characters / 4.
Anthropic: a cache breakpoint at the end of each prompt; a read costs 0.1 x the base input price,
a write 1.25 x, and nothing under 1,024 tokens is cached. OpenAI (GPT-5 family): a cached prefix
costs 0.1 x, in 128-token blocks past 1,024, and there is no write premium. The summarizer's
input is billed at 1 x. Columns: model calls, the largest and the mean prompt, the total billed
input (model calls plus summarizer calls, in base-price tokens), the cache-hit share, the billed
input per sent token, and the summarizer calls.

Goals (Anthropic pricing): each integration's total billed input at most 1.05 x
``ContextSession``'s and at most 0.60 x ``trim_messages``'; a cache-hit share of at least 90 %;
fewer summarizer calls than ``SummarizationMiddleware``; the clear-then-trim row never above the
limit, with the current task in every prompt. Exit status 0 when every goal is met,
2 otherwise.

A last table sweeps the target (``TARGETS``, each with its limit in the same 5 to 3 ratio) for
the rows whose size can move: ``trim_messages`` (``max_tokens`` = the limit),
``SummarizationMiddleware``, ``ContextSession`` and its clear-then-trim policy. Each prints its
mean prompt and its total billed input at each target; the Performance page draws one against
the other. The run is deterministic: tests/test_bench_cost.py asserts the same figures.

    python benchmarks/bench_cost.py
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

LIMIT = 120_000
TARGET = 72_000
TARGETS = (36_000, 54_000, 72_000, 90_000, 108_000)
"""The targets of the sweep that the Performance page draws (billed input against mean prompt);
each with the limit in the same ratio as ``TARGET`` to ``LIMIT`` (60,000 to 180,000)."""
TURNS = 64
SEED = 20261201
SYSTEM = "You are a research assistant. Use the lookup tool, then answer in a short paragraph."
SUMMARY = "Summary of the earlier turns: " + "the user asked about archived reports; " * 12


# --- the conversation ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One user turn: the question, its tool calls with their results, and the answer."""

    number: int
    question: str
    results: tuple[str, ...]
    answer: str

    def call_id(self, index: int) -> str:
        return f"call_{self.number}_{index}"


def conversation(turns: int = TURNS, seed: int = SEED) -> list[Turn]:
    """The deterministic tool-heavy conversation."""
    rng = random.Random(seed)
    words = ("report", "archive", "figure", "quarter", "region", "total", "trend", "note")
    made: list[Turn] = []
    for number in range(turns):
        calls = rng.randint(2, 8)
        results = tuple(
            f"[{number}.{index}] "
            + " ".join(rng.choice(words) for _ in range(rng.randint(1_000, 9_000) // 7))
            for index in range(calls)
        )
        question = f"Turn {number}: " + "what do the archives say about " * rng.randint(2, 6)
        answer = f"Answer {number}: " + "the archives agree. " * rng.randint(3, 10)
        made.append(Turn(number, question, results, answer))
    return made


# --- pricing -------------------------------------------------------------------------------------


def tokens(chars: int) -> int:
    return math.ceil(chars / 4)


@dataclass
class Ledger:
    """The prompts of one row, priced as they come."""

    name: str
    calls: int = 0
    sent_tokens: int = 0
    max_prompt: int = 0
    anthropic_billed: float = 0.0
    anthropic_cached: int = 0
    openai_billed: float = 0.0
    openai_cached: int = 0
    summarizer_calls: int = 0
    summarizer_tokens: int = 0
    kept_task: bool = True
    """Whether every prompt held the current turn's task (the clear-then-trim row checks it)."""
    _breakpoints: set[bytes] = field(default_factory=set)

    def prompt(self, keys: Sequence[tuple[str, int]]) -> None:
        """Price one model call's prompt: (identity, characters) per message, system first."""
        total = tokens(len(SYSTEM)) + sum(tokens(chars) for _, chars in keys)
        digest = hashlib.blake2b(SYSTEM.encode(), digest_size=16)
        prefix_tokens = tokens(len(SYSTEM))
        cached = 0
        prefixes: list[bytes] = []
        for key, chars in keys:
            digest.update(key.encode())
            prefix_tokens += tokens(chars)
            mark = digest.copy().digest()
            prefixes.append(mark)
            if mark in self._breakpoints:
                cached = prefix_tokens
        self._breakpoints.add(prefixes[-1] if prefixes else b"")
        self.calls += 1
        self.sent_tokens += total
        self.max_prompt = max(self.max_prompt, total)
        # Anthropic: reads at 0.1 x, the rest written at 1.25 x; nothing under 1,024 tokens.
        if total < 1_024:
            self.anthropic_billed += total
        else:
            read = cached if cached >= 1_024 else 0
            self.anthropic_cached += read
            self.anthropic_billed += 0.1 * read + 1.25 * (total - read)
        # OpenAI: a cached prefix in 128-token blocks past 1,024, at 0.1 x; no write premium.
        blocks = 1_024 + 128 * ((cached - 1_024) // 128) if cached >= 1_024 else 0
        self.openai_cached += blocks
        self.openai_billed += 0.1 * blocks + (total - blocks)

    def summarized(self, chars: int) -> None:
        self.summarizer_calls += 1
        self.summarizer_tokens += tokens(chars)

    @property
    def billed(self) -> float:
        """Anthropic-priced input of the model calls plus the summarizer's, in base tokens."""
        return self.anthropic_billed + self.summarizer_tokens

    @property
    def cache_share(self) -> float:
        return self.anthropic_cached / self.sent_tokens if self.sent_tokens else 0.0

    @property
    def per_sent_token(self) -> float:
        return self.billed / self.sent_tokens if self.sent_tokens else 0.0


def key_of(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def limit_for(target: int) -> int:
    """The limit that goes with a target: the same ratio as ``TARGET`` to ``LIMIT``."""
    return target * LIMIT // TARGET


def policy(target: int = TARGET) -> dict[str, Any]:
    return {
        "mode": "reduce",
        "trigger_chars": limit_for(target),
        "target_input_chars": target,
        "steps": [
            {
                "id": "summary",
                "kind": "compress",
                "fragment_id": "history",
                "compressor": "summarize",
                "keep_groups": 1,
            },
            {"id": "trim", "kind": "trim", "fragment_id": "history", "target_chars": target},
        ],
    }


def summarizer(ledger: Ledger) -> Callable[[Sequence[Any]], str]:
    from contextwise import messages_chars

    def summarize(messages: Sequence[Any]) -> str:
        ledger.summarized(messages_chars(list(messages)))
        return SUMMARY

    return summarize


# --- LangChain -----------------------------------------------------------------------------------


def _langchain_keys(messages: Sequence[Any]) -> list[tuple[str, int]]:
    from contextwise import message_chars

    return [
        (
            key_of(
                [
                    type(m).__name__,
                    m.content,
                    getattr(m, "tool_calls", None),
                    getattr(m, "tool_call_id", None),
                ]
            ),
            message_chars(m),
        )
        for m in messages
    ]


def _langchain_run(ledger: Ledger, middleware: list[Any], turns: list[Turn]) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    results = {turn.call_id(i): text for turn in turns for i, text in enumerate(turn.results)}

    class Recording(GenericFakeChatModel):
        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            ledger.prompt(
                _langchain_keys([m for m in messages if not isinstance(m, SystemMessage)])
            )
            return super()._generate(messages, stop, run_manager, **kwargs)

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def replies() -> Iterator[AIMessage]:
        for turn in turns:
            for index in range(len(turn.results)):
                call = {
                    "name": "lookup",
                    "args": {"call": turn.call_id(index)},
                    "id": turn.call_id(index),
                }
                yield AIMessage(content="", tool_calls=[call])
            yield AIMessage(content=turn.answer)

    @tool
    def lookup(call: str) -> str:
        """Look a record up in the archives."""
        return results[call]

    agent = create_agent(
        Recording(messages=replies()),
        tools=[lookup],
        system_prompt=SYSTEM,
        middleware=middleware,
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": ledger.name}, "recursion_limit": 100}
    for turn in turns:
        agent.invoke({"messages": [HumanMessage(turn.question)]}, config)


def run_trim_messages(turns: list[Turn], target: int = TARGET) -> Ledger:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import trim_messages

    ledger = Ledger("trim_messages")

    def chars(messages: Sequence[Any]) -> int:
        from contextwise import messages_chars

        return messages_chars(list(messages))

    class TrimEveryCall(AgentMiddleware):  # type: ignore[type-arg]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            trimmed = trim_messages(
                request.messages,
                strategy="last",
                start_on="human",
                include_system=True,
                max_tokens=limit_for(target),
                token_counter=chars,
            )
            return handler(request.override(messages=trimmed))

    _langchain_run(ledger, [TrimEveryCall()], turns)
    return ledger


def run_summarization_middleware(turns: list[Turn], target: int = TARGET) -> Ledger:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from contextwise import messages_chars

    ledger = Ledger("SummarizationMiddleware")

    class Summarizer(GenericFakeChatModel):
        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            ledger.summarized(messages_chars(list(messages)))
            return super()._generate(messages, stop, run_manager, **kwargs)

    def chars(messages: Sequence[Any]) -> int:
        return messages_chars(list(messages))

    middleware = SummarizationMiddleware(
        model=Summarizer(messages=iter([SUMMARY] * 10_000)),
        trigger=("tokens", limit_for(target)),
        keep=("tokens", target),
        token_counter=chars,
        trim_tokens_to_summarize=None,
    )
    _langchain_run(ledger, [middleware], turns)
    return ledger


def run_langchain_middleware(turns: list[Turn]) -> Ledger:
    from contextwise.integrations.langchain import ContextPolicyMiddleware

    ledger = Ledger("ContextPolicyMiddleware")
    middleware = ContextPolicyMiddleware(policy(), compressors={"summarize": summarizer(ledger)})
    _langchain_run(ledger, [middleware], turns)
    return ledger


# --- pydantic-ai ---------------------------------------------------------------------------------


def run_pydantic_ai(turns: list[Turn]) -> Ledger:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from contextwise import message_chars
    from contextwise.integrations.pydantic_ai import ContextPolicyCapability

    ledger = Ledger("ContextPolicyCapability")
    by_call = {turn.call_id(i): (turn, i) for turn in turns for i in range(len(turn.results))}
    by_question = {turn.question: turn for turn in turns}

    def part_key(part: Any) -> Any:
        if isinstance(part, SystemPromptPart):
            return None
        return [
            type(part).__name__,
            getattr(part, "content", None),
            getattr(part, "tool_call_id", None),
        ]

    def keys(messages: Sequence[Any]) -> list[tuple[str, int]]:
        found = []
        for message in messages:
            parts = [part_key(p) for p in message.parts if part_key(p) is not None]
            if parts:
                system = sum(
                    len(p.content) for p in message.parts if isinstance(p, SystemPromptPart)
                )
                found.append((key_of(parts), message_chars(message) - system))
        return found

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        ledger.prompt(keys(messages))
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if returns:
            turn, index = by_call[returns[-1].tool_call_id]
            if index + 1 < len(turn.results):
                return ModelResponse(
                    parts=[
                        ToolCallPart(
                            "lookup",
                            {"call": turn.call_id(index + 1)},
                            tool_call_id=turn.call_id(index + 1),
                        )
                    ]
                )
            return ModelResponse(parts=[TextPart(turn.answer)])
        prompt = [p for p in last.parts if isinstance(p, UserPromptPart)][-1]
        turn = by_question[str(prompt.content)]
        return ModelResponse(
            parts=[ToolCallPart("lookup", {"call": turn.call_id(0)}, tool_call_id=turn.call_id(0))]
        )

    capability = ContextPolicyCapability(policy(), compressors={"summarize": summarizer(ledger)})
    agent = Agent(FunctionModel(model), system_prompt=SYSTEM, capabilities=[capability])

    @agent.tool_plain
    def lookup(call: str) -> str:
        """Look a record up in the archives."""
        turn, index = by_call[call]
        return turn.results[index]

    history: list[ModelRequest | ModelResponse] = []
    for turn in turns:
        history = agent.run_sync(turn.question, message_history=history).all_messages()
    return ledger


# --- the Agents SDK ------------------------------------------------------------------------------


def run_openai_agents(turns: list[Turn]) -> Ledger:
    from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from contextwise import message_chars
    from contextwise.integrations.openai_agents import PolicySession

    ledger = Ledger("PolicySession")
    by_call = {turn.call_id(i): (turn, i) for turn in turns for i in range(len(turn.results))}
    by_question = {turn.question: turn for turn in turns}

    def call(turn: Turn, index: int) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            arguments=json.dumps({"call": turn.call_id(index)}),
            call_id=turn.call_id(index),
            name="lookup",
            type="function_call",
            id=f"fc_{turn.call_id(index)}",
            status="completed",
        )

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            items = [{"role": "user", "content": input}] if isinstance(input, str) else input
            ledger.prompt([(key_of(item), message_chars(item)) for item in items])
            last = items[-1]
            if last.get("type") == "function_call_output":
                turn, index = by_call[last["call_id"]]
                if index + 1 < len(turn.results):
                    output: list[Any] = [call(turn, index + 1)]
                else:
                    text = ResponseOutputText(annotations=[], text=turn.answer, type="output_text")
                    output = [
                        ResponseOutputMessage(
                            id=f"msg_{turn.number}",
                            content=[text],
                            role="assistant",
                            status="completed",
                            type="message",
                        )
                    ]
            else:
                output = [call(by_question[str(last["content"])], 0)]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def lookup(call: str) -> str:
        """Look a record up in the archives."""
        turn, index = by_call[call]
        return turn.results[index]

    session = PolicySession(
        SQLiteSession("cost"), policy(), compressors={"summarize": summarizer(ledger)}
    )
    agent = Agent(name="research", instructions=SYSTEM, model=Scripted(), tools=[lookup])
    config = session.run_config(RunConfig(tracing_disabled=True))

    async def converse() -> None:
        for turn in turns:
            await Runner.run(agent, turn.question, session=session, run_config=config, max_turns=20)

    asyncio.run(converse())
    return ledger


# --- ContextSession and the floor ----------------------------------------------------------------


def chat_calls(turns: list[Turn]) -> Iterator[list[dict[str, Any]]]:
    """The messages new at each model call of the conversation, in OpenAI chat shape."""
    previous: list[dict[str, Any]] = []
    for turn in turns:
        new: list[dict[str, Any]] = [*previous, {"role": "user", "content": turn.question}]
        for index, text in enumerate(turn.results):
            yield new
            call = {
                "id": turn.call_id(index),
                "type": "function",
                "function": {"name": "lookup", "arguments": json.dumps({"call": index})},
            }
            new = [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": turn.call_id(index), "content": text},
            ]
        yield new
        previous = [{"role": "assistant", "content": turn.answer}]


def _chat_keys(messages: Sequence[Any]) -> list[tuple[str, int]]:
    from contextwise import message_chars

    return [(key_of(message), message_chars(message)) for message in messages]


def run_session(turns: list[Turn], target: int = TARGET) -> Ledger:
    from contextwise import ContextSession, MemoryStore

    ledger = Ledger("ContextSession")
    session = ContextSession(
        policy(target), MemoryStore(), "cost", compressors={"summarize": summarizer(ledger)}
    )
    for new in chat_calls(turns):
        session.add(new)
        ledger.prompt(_chat_keys(session.context().fragment("history").messages or ()))
    return ledger


def clear_then_trim_policy(target: int = TARGET) -> dict[str, Any]:
    """Clear the older tool results (the model can recall them), then trim whole tool units,
    keeping the current turn's task."""
    return {
        "mode": "reduce",
        "trigger_chars": limit_for(target),
        "target_input_chars": target,
        "steps": [
            {"id": "clear", "kind": "clear", "fragment_id": "history", "keep_recent": 3},
            {
                "id": "trim",
                "kind": "trim",
                "fragment_id": "history",
                "grouping": {"kind": "tool-unit", "keep_task": True},
                "target_chars": target,
            },
        ],
    }


def run_clear_then_trim(turns: list[Turn], target: int = TARGET) -> Ledger:
    """ContextSession with the clear-then-trim policy; every prompt keeps the current task."""
    from contextwise import ContextSession, MemoryStore

    ledger = Ledger("ContextSession, clear+trim")
    session = ContextSession(clear_then_trim_policy(target), MemoryStore(), "cost")
    task = ""
    for new in chat_calls(turns):
        task = next((m["content"] for m in new if m["role"] == "user"), task)
        session.add(new)
        sent = session.context().fragment("history").messages or ()
        ledger.kept_task = ledger.kept_task and any(m.get("content") == task for m in sent)
        ledger.prompt(_chat_keys(sent))
    return ledger


def run_floor(turns: list[Turn]) -> Ledger:
    ledger = Ledger("append-only floor")
    history: list[dict[str, Any]] = []
    for new in chat_calls(turns):
        history += new
        ledger.prompt(_chat_keys(history))
    return ledger


# --- the table -----------------------------------------------------------------------------------

ROWS: tuple[Callable[[list[Turn]], Ledger], ...] = (
    run_trim_messages,
    run_summarization_middleware,
    run_session,
    run_langchain_middleware,
    run_pydantic_ai,
    run_openai_agents,
    run_clear_then_trim,
    run_floor,
)
INTEGRATIONS = ("ContextPolicyMiddleware", "ContextPolicyCapability", "PolicySession")


def measure(turns: list[Turn] | None = None) -> dict[str, Ledger]:
    """Every row's ledger, by name."""
    conversation_turns = conversation() if turns is None else turns
    ledgers = [row(conversation_turns) for row in ROWS]
    return {ledger.name: ledger for ledger in ledgers}


SWEPT: tuple[Callable[[list[Turn], int], Ledger], ...] = (
    run_trim_messages,
    run_summarization_middleware,
    run_session,
    run_clear_then_trim,
)


@dataclass(frozen=True)
class SweepPoint:
    """One row at one target: its mean prompt and its total billed input, in tokens."""

    name: str
    target: int
    mean_prompt: int
    billed: float


def sweep(turns: list[Turn] | None = None, targets: Sequence[int] = TARGETS) -> list[SweepPoint]:
    """The rows whose size can move, at each target (and its limit): what a smaller context
    saves, and what it costs in cache hits."""
    conversation_turns = conversation() if turns is None else turns
    points: list[SweepPoint] = []
    for row in SWEPT:
        for target in targets:
            ledger = row(conversation_turns, target)
            mean = ledger.sent_tokens // max(1, ledger.calls)
            points.append(SweepPoint(ledger.name, target, mean, ledger.billed))
    return points


def goals(ledgers: dict[str, Ledger]) -> list[tuple[str, bool]]:
    """Each goal with whether it is met."""
    session = ledgers["ContextSession"]
    trim = ledgers["trim_messages"]
    summarization = ledgers["SummarizationMiddleware"]
    cleared = ledgers["ContextSession, clear+trim"]
    limit = tokens(LIMIT + len(SYSTEM)) + 200
    found: list[tuple[str, bool]] = [
        (
            f"clear+trim: never above the limit ({cleared.max_prompt:,} <= {limit:,} tokens)",
            cleared.max_prompt <= limit,
        ),
        ("clear+trim: every prompt keeps the current task", cleared.kept_task),
    ]
    for name in INTEGRATIONS:
        row = ledgers[name]
        found += [
            (
                f"{name}: billed <= 1.05 x ContextSession ({row.billed / session.billed:.3f} x)",
                row.billed <= 1.05 * session.billed,
            ),
            (
                f"{name}: billed <= 0.60 x trim_messages ({row.billed / trim.billed:.3f} x)",
                row.billed <= 0.60 * trim.billed,
            ),
            (
                f"{name}: cache-hit share >= 90 % ({100 * row.cache_share:.1f} %)",
                row.cache_share >= 0.90,
            ),
            (
                f"{name}: summarizer calls < SummarizationMiddleware's "
                f"({row.summarizer_calls} < {summarization.summarizer_calls})",
                row.summarizer_calls < summarization.summarizer_calls,
            ),
        ]
    return found


def main() -> int:
    ledgers = measure()
    print(f"conversation: {TURNS} turns, limit {LIMIT:,} characters, target {TARGET:,}")
    header = (
        f"{'row':<26}{'calls':>6}{'max prompt':>12}{'mean prompt':>13}"
        f"{'billed (Anthropic)':>20}{'cache hit':>11}{'per sent':>10}"
        f"{'billed (OpenAI)':>17}{'summaries':>11}"
    )
    print(header)
    for ledger in ledgers.values():
        print(
            f"{ledger.name:<26}{ledger.calls:>6}{ledger.max_prompt:>12,}"
            f"{ledger.sent_tokens // max(1, ledger.calls):>13,}{ledger.billed:>20,.0f}"
            f"{100 * ledger.cache_share:>10.1f}%{ledger.per_sent_token:>10.3f}"
            f"{ledger.openai_billed + ledger.summarizer_tokens:>17,.0f}"
            f"{ledger.summarizer_calls:>11}"
        )
    results = goals(ledgers)
    for text, met in results:
        print(("met     " if met else "MISSED  ") + text)
    print()
    print("billed input against mean prompt, by target (characters):")
    print(f"{'row':<26}{'limit':>9}{'target':>9}{'mean prompt':>13}{'billed (Anthropic)':>20}")
    for point in sweep():
        print(
            f"{point.name:<26}{limit_for(point.target):>9,}{point.target:>9,}"
            f"{point.mean_prompt:>13,}{point.billed:>20,.0f}"
        )
    return 0 if all(met for _, met in results) else 2


if __name__ == "__main__":
    sys.exit(main())
