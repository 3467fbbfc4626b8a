"""What an agent pays for its input over a whole conversation, with the provider's prompt cache.

A tool-heavy conversation (64 user turns, 2 to 8 tool calls each, tool results of 1,000 to 9,000
characters, about 380 model calls; one turn always fits the limit) is driven through each
framework's real agent loop with its own offline test model, and the messages every model call
receives are captured. Every model call of every row also sends the agent's system prompt
(``SYSTEM``, over 8,000 characters of instructions) and its six tool definitions (``TOOLS``, as
JSON schemas): the ledger prices them as the prompt's prefix. Every row uses the same limit
(120,000 characters) and target (72,000):

- ``trim_messages``: LangChain's ``trim_messages`` at every call (``strategy="last"``,
  ``start_on="human"``, ``include_system=True``, ``max_tokens`` = the limit, in characters), on
  the system message and the conversation (it does not see the tools);
- ``SummarizationMiddleware``: LangChain's (trigger = the limit, keep = the target, on the
  conversation as it counts it), with the same scripted summarizer as contextwise;
- ``ContextSession``: contextwise's session, which stores its reductions, with the system prompt
  and the tools as ``pinned=`` parts;
- the three contextwise integrations, remembering their reductions per conversation and pinning
  the system prompt and the tools as each framework gives them: LangChain's ``create_agent``
  (``system_prompt=``, ``tools=``) with ``ContextPolicyMiddleware``; pydantic-ai's ``Agent``
  (``instructions=``, ``tools=``) with ``ContextPolicyCapability``; the Agents SDK's
  ``Agent(instructions=, tools=)`` with ``PolicyModel``, the model wrapper (the input filter of
  ``PolicySession`` sees the items and the instructions, not the tools);
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

Goals (Anthropic pricing): each integration's total billed input at most 1.02 x
``ContextSession``'s and at most 0.60 x ``trim_messages``'; a cache-hit share of at least 90 %;
fewer summarizer calls than ``SummarizationMiddleware``; no call above the trigger (the policy's
own measure, pinned parts included) that the same policy without memory, run on that call's
whole history, keeps at or under it; the clear-then-trim row never above the limit, with the
current task in every prompt. Exit status 0 when every goal is met, 2 otherwise.

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
SYSTEM = """\
You are the research assistant of a regional statistics office. Analysts ask you about the office's
archived reports: quarterly figures by region, the notes that came with them, the revisions made
since, and the trends that the figures show over several years. You answer from the archives only,
through the tools described below, and you say so when the archives do not hold the answer.

## How you work

1. Read the analyst's question to the end before you call any tool. Decide which records can answer
   it: a region, a quarter, a kind of figure (totals, rates, shares), a report by its number. When
   the question is ambiguous (a region that exists under two names, a quarter without its year), ask
   one short question back instead of guessing, unless the conversation already settles it.
2. Look the records up with `lookup`, one record per call, in the order in which you need them. Use
   `search_archives` first when you do not know the record's reference: it returns references and
   titles, not the records themselves. Do not call `lookup` for a record whose content you already
   have in this conversation, unless the analyst asks for the current version or a revision is
   likely (see "Revisions" below).
3. Read every record you fetched before you answer. A record may contradict another: say which, give
   both figures with their references, and explain which one the office treats as authoritative
   (the newest revision of the report that published the figure first).
4. Answer in a short paragraph, then list the references you used. Give figures with their unit and
   their period, exactly as the record prints them: do not round, do not convert currencies, do not
   recompute a total from its parts unless the analyst asks you to, and then show the computation.

## What the records look like

Each record starts with its reference in square brackets (`[turn.index]` in this archive) followed
by the text of the record as the archive stores it: report titles, figures, quarters, regions,
totals, trends and notes, in the order of the original publication. Records can be long; the
archive does not summarize them, and neither should you when you quote a figure. When a record is
truncated (it ends with an ellipsis and the word "continued"), fetch its continuation with
`fetch_report` before you rely on anything in its last paragraph.

## Revisions

Figures are revised. A revised figure is published in a later report that names the report it
revises; the earlier report is not edited. When the analyst asks for "the figure" of a period,
give the latest revision and mention that it is a revision, with the original figure and the
reference of both reports. When the analyst asks what was known at a date, give the figure that
was published at that date, even if it was revised since. Use `compare_quarters` to list the
revisions of one figure across quarters: it is cheaper and more reliable than fetching every
report.

## Regions

The office publishes figures for twelve regions and for the whole country. Regions were merged in
the reform of the administrative map; `list_regions` gives, for a date, the regions that existed
then and what each became. A figure for a merged region is never the sum of the figures of the
regions it replaced, because the boundaries moved: say so when an analyst compares a region across
the reform, and do not add figures across it yourself.

## Citations

Every figure in your answer carries its reference. Use `cite_source` to format a citation when the
analyst asks for one that they can paste into a report: it returns the office's citation style,
with the report's title, number, date of publication and revision. Never invent a reference, a
title or a date. If a figure comes from a record you did not fetch in this conversation, fetch it
first.

## Style

Write in the analyst's language. Be brief: one paragraph for the answer, a list for the references,
a second paragraph only when a caveat matters (a revision, a boundary change, a contradiction
between records, a figure marked provisional). Do not repeat the question. Do not describe the
tools you called or how many; the analyst sees the references. Use the office's vocabulary:
"quarter" rather than "three months", "region" rather than "area", "total" for a sum the report
publishes and "sum" for one you compute. Numbers use the analyst's conventions for the thousands
separator and the decimal mark.

## Limits

You do not forecast, you do not give opinions on policy, and you do not comment on the quality of
the office's work. When an analyst asks for something the archives cannot answer (a forecast, data
from another office, personal data about a respondent), say that it is outside what you can do and,
where one exists, name the office's service that can help. When a tool fails, say which record you
could not read and answer from the others if they suffice; otherwise tell the analyst to try again
later. Never answer from memory a question that the archives can answer: the archives are the
source of truth, and they change.

## Figures and units

Totals are published in thousands unless the record says otherwise; rates are per thousand
inhabitants of the region at the start of the quarter; shares are percentages of the country's
total for the same quarter. Keep the unit that the record uses. When two records use different
units for the same figure (a total in thousands in one, in units in the other), quote both as
printed and say that they agree, or by how much they differ. Seasonally adjusted and raw figures
are different figures: never mix them in one comparison, and say which one you quote. A trend is
what a report calls a trend: do not describe two quarters as a trend unless a report does.

## Provisional figures

The figures of the last two quarters are provisional until the annual report confirms them.
Quote them with the word "provisional" and the date of the report that published them. When the
analyst compares a provisional figure with a confirmed one, say that the comparison may change,
and by how much the last three confirmations moved the figures of the same region on average,
which `compare_quarters` gives. Do not present a provisional figure as a record, a high or a low.

## Long conversations

Analysts often work through many questions in one conversation. The records you fetched earlier
may have been summarized or cleared from what you can see; the references stay. When you need a
figure from a record that you no longer see in full, fetch it again with `lookup` rather than
relying on a summary: summaries do not keep every figure. Keep the current question in view:
answer it, not an earlier one, and do not repeat earlier answers unless asked.

## Mistakes

If you notice that an earlier answer in this conversation quoted a wrong figure or reference,
say so at the start of your next answer, give the right figure with its reference, and say
which earlier answer it corrects. Do not wait to be asked.

## Ambiguous questions

Some questions name a figure that the office publishes under several definitions (employment by
place of work or by place of residence; households or dwellings). Choose the definition that the
conversation has used so far; if it has used none, give the one of the office's headline tables,
name it, and offer the other in one sentence. A question about "last year" means the last complete
calendar year, unless the analyst works on fiscal years, which the conversation shows.

## Confidentiality

Some records are marked restricted. Quote their figures only to analysts whose question shows they
work on the report the record belongs to; otherwise say that the record exists and is restricted.
Never quote the name of a respondent, even when a record holds one by mistake: say that the record
holds personal data and must be corrected, and give its reference so that the archive can fix it.
Restricted records stay restricted in summaries and citations: never copy their figures into a
citation that `cite_source` formats for an analyst who may not see them.
"""
TOOLS: tuple[dict[str, Any], ...] = tuple(
    {"type": "function", "function": {"name": name, "description": text, "parameters": schema}}
    for name, text, schema in (
        (
            "lookup",
            "Look a record up in the archives by its reference and return its full text.",
            {
                "type": "object",
                "properties": {"call": {"type": "string", "description": "The reference."}},
                "required": ["call"],
            },
        ),
        (
            "search_archives",
            "Search the archives; return the references and titles of the matching records.",
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for."},
                    "region": {"type": "string", "description": "Only this region."},
                    "quarter": {"type": "string", "description": "Only this quarter (2026-Q3)."},
                    "limit": {"type": "integer", "description": "At most this many references."},
                },
                "required": ["query"],
            },
        ),
        (
            "fetch_report",
            "Return the continuation of a truncated record, from the given page on.",
            {
                "type": "object",
                "properties": {
                    "reference": {"type": "string", "description": "The record's reference."},
                    "page": {"type": "integer", "description": "The page to start from."},
                },
                "required": ["reference"],
            },
        ),
        (
            "compare_quarters",
            "List every published revision of one figure across a range of quarters.",
            {
                "type": "object",
                "properties": {
                    "figure": {"type": "string", "description": "The figure's name."},
                    "region": {"type": "string", "description": "The region, or the country."},
                    "first": {"type": "string", "description": "The first quarter (2024-Q1)."},
                    "last": {"type": "string", "description": "The last quarter (2026-Q3)."},
                },
                "required": ["figure", "region", "first", "last"],
            },
        ),
        (
            "list_regions",
            "List the regions that existed at a date, and what each became after the reform.",
            {
                "type": "object",
                "properties": {"date": {"type": "string", "description": "An ISO date."}},
                "required": ["date"],
            },
        ),
        (
            "cite_source",
            "Format the office's citation of a report: title, number, date and revision.",
            {
                "type": "object",
                "properties": {
                    "reference": {"type": "string", "description": "The record's reference."},
                    "revision": {"type": "integer", "description": "The revision, if not last."},
                },
                "required": ["reference"],
            },
        ),
    )
)
"""The conversation's tools, as the OpenAI tool format writes them: every model call sends them."""
PINNED: tuple[str | dict[str, Any], ...] = (SYSTEM, *TOOLS)
"""What every model call holds besides the messages: the system prompt and the tools."""
PREFIX = SYSTEM + "".join(
    json.dumps(tool, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for tool in TOOLS
)
"""The prompt's prefix as the ledger prices it: the system prompt, then the tool definitions."""
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
    prefix: str = PREFIX
    """What every call sends before the messages: the system prompt and the tools."""
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
    measured: list[int] = field(default_factory=list)
    """Each call's prompt in characters as its policy measured it (``after_chars``, the pinned
    parts included), for the contextwise rows."""
    pinned_chars: int = 0
    """The largest pinned size a policy's report gave (the system prompt and the tools as the
    framework writes them), for the contextwise rows."""
    above_trigger: int = 0
    """The calls whose prompt the policy left above its trigger."""
    stateless_under: int = 0
    """Of those, the calls that the same policy without memory kept at or under the trigger."""
    _breakpoints: set[bytes] = field(default_factory=set)

    def prompt(self, keys: Sequence[tuple[str, int]]) -> None:
        """Price one model call's prompt: (identity, characters) per message, after the prefix
        (the system prompt and the tools), which every call sends."""
        prefix_tokens = tokens(len(self.prefix))
        total = prefix_tokens + sum(tokens(chars) for _, chars in keys)
        digest = hashlib.blake2b(self.prefix.encode(), digest_size=16)
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

    def reported(self, result: Any) -> None:
        """Keep the size of a call's prompt that a policy's report gives (an ``on_result``)."""
        self.measured.append(result.report.after_chars)
        self.pinned_chars = max(self.pinned_chars, result.report.pinned_chars)

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
    from langchain_core.tools import StructuredTool
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

    def answer(**arguments: Any) -> str:
        return results[arguments["call"]]

    tools = [
        StructuredTool(
            name=spec["function"]["name"],
            description=spec["function"]["description"],
            args_schema=spec["function"]["parameters"],
            func=answer,
        )
        for spec in TOOLS
    ]
    agent = create_agent(
        Recording(messages=replies()),
        tools=tools,
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
        """``trim_messages`` on the system message and the conversation (it knows no tools)."""

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            system = [] if request.system_message is None else [request.system_message]
            trimmed = trim_messages(
                [*system, *request.messages],
                strategy="last",
                start_on="human",
                include_system=True,
                max_tokens=limit_for(target),
                token_counter=chars,
            )
            return handler(request.override(messages=trimmed[len(system) :]))

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
    middleware = ContextPolicyMiddleware(
        policy(), on_result=ledger.reported, compressors={"summarize": summarizer(ledger)}
    )
    _langchain_run(ledger, [middleware], turns)
    return ledger


# --- pydantic-ai ---------------------------------------------------------------------------------


def run_pydantic_ai(turns: list[Turn]) -> Ledger:
    from pydantic_ai import Agent, Tool
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
                # The system prompt is the prefix: sent once, not with each message.
                system = sum(
                    len(p.content) for p in message.parts if isinstance(p, SystemPromptPart)
                ) + len(getattr(message, "instructions", None) or "")
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

    def answer(**arguments: Any) -> str:
        turn, index = by_call[arguments["call"]]
        return turn.results[index]

    tools = [
        Tool.from_schema(
            answer,
            spec["function"]["name"],
            spec["function"]["description"],
            spec["function"]["parameters"],
        )
        for spec in TOOLS
    ]
    capability = ContextPolicyCapability(
        policy(), on_result=ledger.reported, compressors={"summarize": summarizer(ledger)}
    )
    agent = Agent(FunctionModel(model), instructions=SYSTEM, tools=tools, capabilities=[capability])

    history: list[ModelRequest | ModelResponse] = []
    for turn in turns:
        history = agent.run_sync(turn.question, message_history=history).all_messages()
    return ledger


# --- the Agents SDK ------------------------------------------------------------------------------


def run_openai_agents(turns: list[Turn]) -> Ledger:
    from agents import Agent, FunctionTool, RunConfig, Runner, SQLiteSession
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from contextwise import message_chars
    from contextwise.integrations.openai_agents import PolicyModel

    ledger = Ledger("PolicyModel")
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

    async def answer(context: Any, arguments: str) -> str:
        turn, index = by_call[json.loads(arguments)["call"]]
        return turn.results[index]

    tools: list[Any] = [
        FunctionTool(
            name=spec["function"]["name"],
            description=spec["function"]["description"],
            params_json_schema=spec["function"]["parameters"],
            on_invoke_tool=answer,
            strict_json_schema=False,
        )
        for spec in TOOLS
    ]
    # PolicySession's input filter sees the items and the instructions, not the tools: the
    # model wrapper sees the whole call, so the tools are measured too.
    model = PolicyModel(
        Scripted(),
        policy(),
        on_result=ledger.reported,
        compressors={"summarize": summarizer(ledger)},
    )
    agent = Agent(name="research", instructions=SYSTEM, model=model, tools=tools)
    session = SQLiteSession("cost")
    config = RunConfig(tracing_disabled=True)

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
        result = session.context(pinned=PINNED)
        ledger.reported(result)
        ledger.prompt(_chat_keys(result.fragment("history").messages or ()))
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
        sent = session.context(pinned=PINNED).fragment("history").messages or ()
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


def above_the_trigger(ledger: Ledger, turns: list[Turn], target: int = TARGET) -> None:
    """Count the calls whose prompt the row's policy left above the trigger, and those of them
    that the same policy without memory (a new ``ContextSession`` on the call's whole history,
    with the same pinned parts) brings to the trigger or under it."""
    from contextwise import ContextSession, MemoryStore

    trigger = limit_for(target)
    above = {index for index, chars in enumerate(ledger.measured) if chars > trigger}
    ledger.above_trigger = len(above)
    ledger.stateless_under = 0
    history: list[dict[str, Any]] = []
    for index, new in enumerate(chat_calls(turns)):
        history += new
        if index in above:
            stateless = ContextSession(
                policy(target), MemoryStore(), "stateless", compressors={"summarize": _summary}
            )
            stateless.add(history)
            if stateless.context(pinned=PINNED).report.after_chars <= trigger:
                ledger.stateless_under += 1


def _summary(messages: Sequence[Any]) -> str:
    return SUMMARY


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
INTEGRATIONS = ("ContextPolicyMiddleware", "ContextPolicyCapability", "PolicyModel")


def measure(turns: list[Turn] | None = None) -> dict[str, Ledger]:
    """Every row's ledger, by name."""
    conversation_turns = conversation() if turns is None else turns
    ledgers = [row(conversation_turns) for row in ROWS]
    for ledger in ledgers:
        if ledger.measured:
            above_the_trigger(ledger, conversation_turns)
    return {ledger.name: ledger for ledger in ledgers}


SWEPT: tuple[tuple[str, Callable[[list[Turn], int], Ledger]], ...] = (
    ("trim_messages", run_trim_messages),
    ("SummarizationMiddleware", run_summarization_middleware),
    ("ContextSession", run_session),
    ("ContextSession, clear+trim", run_clear_then_trim),
)


@dataclass(frozen=True)
class SweepPoint:
    """One row at one target: its mean prompt and its total billed input, in tokens."""

    name: str
    target: int
    mean_prompt: int
    billed: float


def sweep(
    turns: list[Turn] | None = None,
    targets: Sequence[int] = TARGETS,
    measured: dict[str, Ledger] | None = None,
) -> list[SweepPoint]:
    """The rows whose size can move, at each target (and its limit): what a smaller context
    saves, and what it costs in cache hits. The rows of ``measured`` (from :func:`measure`, on
    the same conversation) are taken as they are at ``TARGET`` rather than run again."""
    conversation_turns = conversation() if turns is None else turns
    known = measured or {}
    points: list[SweepPoint] = []
    for name, row in SWEPT:
        for target in targets:
            reuse = target == TARGET and name in known
            ledger = known[name] if reuse else row(conversation_turns, target)
            mean = ledger.sent_tokens // max(1, ledger.calls)
            points.append(SweepPoint(ledger.name, target, mean, ledger.billed))
    return points


def goals(ledgers: dict[str, Ledger]) -> list[tuple[str, bool]]:
    """Each goal with whether it is met."""
    session = ledgers["ContextSession"]
    trim = ledgers["trim_messages"]
    summarization = ledgers["SummarizationMiddleware"]
    cleared = ledgers["ContextSession, clear+trim"]
    limit = tokens(LIMIT) + 200
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
                f"{name}: billed <= 1.02 x ContextSession ({row.billed / session.billed:.3f} x)",
                row.billed <= 1.02 * session.billed,
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
            (
                f"{name}: calls above the trigger that the policy without memory keeps under it"
                f" = 0 ({row.stateless_under} of the {row.above_trigger} calls above)",
                row.stateless_under == 0,
            ),
        ]
    return found


def main() -> int:
    ledgers = measure()
    print(f"conversation: {TURNS} turns, limit {LIMIT:,} characters, target {TARGET:,}")
    tools_chars = len(PREFIX) - len(SYSTEM)
    print(
        f"every call sends a system prompt of {len(SYSTEM):,} characters and {len(TOOLS)} tool"
        f" definitions of {tools_chars:,} (the cached prefix, billed on every row);"
        " the contextwise rows pin them"
    )
    print(
        "Agents SDK: PolicyModel (the model wrapper, which sees the tools;"
        " PolicySession's input filter sees only the items and the instructions)"
    )
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
    for point in sweep(measured=ledgers):
        print(
            f"{point.name:<26}{limit_for(point.target):>9,}{point.target:>9,}"
            f"{point.mean_prompt:>13,}{point.billed:>20,.0f}"
        )
    return 0 if all(met for _, met in results) else 2


if __name__ == "__main__":
    sys.exit(main())
