"""Valid calls of contextwise's public callables: the plausible values of the fuzz.

``tests/test_fuzz_public.py`` finds every public name by introspection and fuzzes it; it takes
the value it gives each argument it does not fuzz, and the arguments it builds an instance
with, from the calls here (``VALID_CALLS``). Nothing requires a public name to be listed: a name
missing here is still fuzzed, with ``None`` where no plausible value is known. Each entry is a
name, a function and the keyword arguments of one call that succeeds. A function here builds
what the call needs afresh (a session, a store), so no call depends on another.

Two kinds of call are fuzzed from here, because the introspecting fuzz does not reach them:
the command line (``COMMAND_LINE``: ``contextwise.cli`` reads files and standard input, so it
is not walked), and the runner options given through ``**options`` (``ENTRY_POINTS_IN_RUNNER``:
the introspecting fuzz gives a ``**options`` only an unknown keyword).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

import contextwise.cli
from contextwise import (
    BudgetSegment,
    CalibratedCounter,
    CallableCounter,
    ChoiceQuestion,
    ContextBudget,
    ContextOverflowError,
    ContextPolicy,
    ContextSession,
    Decision,
    DecisionRequest,
    DecisionResponse,
    Effort,
    EstimateCounter,
    Fragment,
    IdempotencyKey,
    MemoryStore,
    MessagesFragment,
    ModelPrices,
    ModelRouter,
    ModelRouting,
    ModelSpec,
    OpenAIDecisionProvider,
    PartEstimate,
    PolicyRunner,
    RoutingContext,
    RoutingRule,
    RuleRouter,
    SessionChange,
    SQLAlchemyStore,
    SQLiteStore,
    StoredMessage,
    TextFragment,
    TextQuestion,
    TokenizerCounter,
    Usage,
    UsageLedger,
    WithUsage,
    adecide_choice,
    anthropic_context_management,
    aprepare_step,
    aprocess_context,
    arecall,
    as_token_counter,
    check_json_state,
    clamp_effort,
    compare_effort,
    context_policy_json_schema,
    cost,
    count_tokens,
    counter_key,
    decide_choice,
    default_state,
    estimate_by_script,
    estimate_tokens,
    find_orphan_results,
    get_locale,
    group_messages,
    is_effort,
    is_pinned,
    is_provider_unavailable,
    layout_messages,
    message_chars,
    message_shape,
    message_text,
    messages_chars,
    model_budget,
    normalize_locale,
    openai_context_management,
    prepare_step,
    price_usage,
    process_context,
    provider_options,
    read_message,
    recall,
    recall_tool,
    set_locale,
    summarize_usage,
    summary_message,
    tool_call_ids,
    tool_result_ids,
    tool_units,
    usage_from,
    use_locale,
    validate_context_policy,
)

FOLDER = tempfile.mkdtemp(prefix="contextwise-fuzz-")
"""Where the fuzz's SQLite files live; removed when the test process ends."""
atexit.register(shutil.rmtree, FOLDER, ignore_errors=True)


class Provider:
    """A decision provider that always chooses the first label, confidently."""

    name = "fuzz"

    def request(self, request: DecisionRequest) -> dict[str, Any]:
        return {
            "model": request.model,
            "answers": {key: {"choice": "a", "confidence": 0.9} for key in request.questions},
        }


class Words:
    """A tokenizer: one token per word."""

    def encode(self, text: str) -> list[int]:
        return [len(word) for word in text.split()]


QUESTION = ChoiceQuestion(instructions="Pick.", criteria={"a": "A", "b": "B"})
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi"},
]
POLICY = {
    "mode": "reduce",
    "trigger_chars": 10,
    "steps": [
        {"id": "t", "kind": "trim", "fragment_id": "history", "grouping": {"kind": "message"}}
    ],
}
SPEC = ModelSpec(name="m", window=8000, max_output_tokens=1000, api="openai-chat")
ROUTING = {
    "provider": Provider(),
    "model": "router",
    "decision": Decision(questions={"model": QUESTION}),
    "question": "model",
    "models": {"a": "m1", "b": "m2"},
    "fallback": "a",
}
CONTEXT = RoutingContext(step=1, model="m1", messages=MESSAGES)
PRICES = ModelPrices(input=2, output=8, cached_input=0.2)
REQUEST = {"system": "Be brief.", "messages": [{"role": "user", "content": "What changed?"}]}
TOOL_HISTORY = [{"role": "tool", "tool_call_id": "call_7", "content": "x" * 300}]
CLEAR_POLICY = {
    "mode": "reduce", "trigger_tokens": 100_000, "target_input_tokens": 60_000,
    "steps": [{"id": "old-results", "kind": "clear", "fragment_id": "history", "keep_recent": 3}],
}
COMPACT_POLICY = {
    "mode": "reduce", "trigger_tokens": 200_000,
    "steps": [{"id": "summary", "kind": "compress", "fragment_id": "history",
               "compressor": "summarize"}],
}
RULES = {"rules": [RoutingRule(id="r", model="a", min_tokens=1)], "default": "b",
         "models": {"a": "m1", "b": "m2"}}


def fragments() -> list[Fragment]:
    return [MessagesFragment("history", messages=list(MESSAGES))]


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coroutine)


def session(**arguments: Any) -> ContextSession:
    values = {"policy": POLICY, "store": MemoryStore(), "session_id": "s"}
    values.update(arguments)
    return ContextSession(**values)


def filled_session() -> ContextSession:
    """A session with a stored reduction, so that a restore has a change to find."""
    opened = session()
    opened.add([{"role": "user", "content": f"message {n}"} for n in range(4)])
    opened.context()
    return opened


def sqlite_store() -> SQLiteStore:
    return SQLiteStore(os.path.join(FOLDER, "fuzz.db"))


def stored() -> list[StoredMessage]:
    return [StoredMessage(0, 0, {"role": "user", "content": "Hi"}, 2, None, None)]


def change() -> SessionChange:
    return SessionChange(version=0, at=datetime(2026, 1, 1, tzinfo=UTC))


def locale(name: str) -> str:
    with use_locale(name) as chosen:
        return chosen


def policy_file() -> str:
    path = os.path.join(FOLDER, "policy.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"mode": "audit"}')
    return path


EntryPoint = tuple[str, Callable[..., Any], dict[str, Any]]


def store_calls(factory: Callable[[], Any], name: str) -> list[EntryPoint]:
    """The five methods of a store, each on a store with one session in it."""

    def opened() -> Any:
        store = factory()
        store.append("s", stored())
        return store

    return [
        (f"{name}.read", lambda **k: opened().read(**k), {"session_id": "s", "since": None}),
        (f"{name}.append", lambda **k: opened().append(**k),
         {"session_id": "s", "items": stored(), "idempotency": IdempotencyKey("k", "d")}),
        (f"{name}.commit", lambda **k: opened().commit(**k),
         {"session_id": "s", "change": change()}),
        (f"{name}.archive", lambda **k: opened().archive(**k), {"session_id": "s"}),
        (f"{name}.change_items", lambda **k: opened().change_items(**k),
         {"session_id": "s", "change_id": 1}),
        (f"{name}.load_conversation", lambda **k: opened().load_conversation(**k),
         {"key": "c", "ttl": 60.0}),
        (f"{name}.save_conversation", lambda **k: opened().save_conversation(**k),
         {"key": "c", "value": {"kept": [1, 2]}, "version": 0, "ttl": 60.0}),
        (f"{name}.add_usage", lambda **k: opened().add_usage(**k),
         {"session_id": "s", "record": {"kind": "model", "input_tokens": 3}}),
        (f"{name}.usage", lambda **k: opened().usage(**k), {"session_id": "s"}),
        (f"{name}.save_state", lambda **k: opened().save_state(**k),
         {"name": "calibration", "state": {"ratio": 1.5}}),
        (f"{name}.load_state", lambda **k: opened().load_state(**k), {"name": "calibration"}),
    ]


VALID_CALLS: list[EntryPoint] = [
    # budget and tokens
    ("ContextBudget", ContextBudget,
     {"window": 8000, "output": 100, "reasoning": 0, "safety": None, "locale": None}),
    ("ContextBudget.fits", lambda **k: ContextBudget(8000, 100).fits(**k), {"tokens": 10}),
    ("ContextBudget.assert_fits", lambda **k: ContextBudget(8000, 100).assert_fits(**k),
     {"tokens": 10}),
    ("ContextBudget.plan", lambda **k: ContextBudget(8000, 100).plan(**k),
     {"segments": [{"id": "a", "tokens": 10}], "strategy": "greedy"}),
    ("BudgetSegment", BudgetSegment, {"id": "a", "tokens": 10, "priority": 0, "required": True}),
    ("estimate_tokens", estimate_tokens, {"text": "hello"}),
    ("count_tokens", count_tokens, {"text": "hello", "counter": None}),
    ("as_token_counter", as_token_counter, {"obj": len}),
    ("CallableCounter", CallableCounter, {"func": len, "id": "x"}),
    ("CallableCounter.count", lambda **k: CallableCounter(len).count(**k), {"text": "hi"}),
    ("TokenizerCounter", TokenizerCounter,
     {"tokenizer": Words(), "id": "x", "encode_kwargs": None}),
    ("TokenizerCounter.count", lambda **k: TokenizerCounter(Words()).count(**k), {"text": "a b"}),
    ("EstimateCounter.count", lambda **k: EstimateCounter().count(**k), {"text": "hi"}),
    # effort
    ("Effort", Effort, {"value": "low"}),
    ("is_effort", is_effort, {"value": "low"}),
    ("compare_effort", compare_effort, {"a": "low", "b": "high"}),
    ("clamp_effort", clamp_effort, {"requested": "low", "supported": ["low"]}),
    # messages and shapes
    ("message_chars", message_chars, {"message": MESSAGES[1], "part_estimate": None}),
    ("messages_chars", messages_chars, {"messages": MESSAGES, "part_estimate": None}),
    ("message_text", message_text, {"message": MESSAGES[1]}),
    ("is_pinned", is_pinned, {"message": MESSAGES[0]}),
    ("tool_call_ids", tool_call_ids, {"message": MESSAGES[2]}),
    ("tool_result_ids", tool_result_ids, {"message": MESSAGES[2]}),
    ("tool_units", tool_units, {"messages": MESSAGES}),
    ("find_orphan_results", find_orphan_results, {"messages": MESSAGES}),
    ("group_messages", group_messages, {"messages": MESSAGES, "grouping": "user-turn"}),
    ("layout_messages", layout_messages,
     {"messages": MESSAGES, "grouping": "user-turn", "part_estimate": None}),
    ("message_shape", message_shape, {"message": MESSAGES[1]}),
    ("read_message", read_message,
     {"message": MESSAGES[1], "index": 0, "part_estimate": None, "sink": None,
      "unknown_items": "error"}),
    ("summary_message", summary_message, {"text": "sum", "role": "user", "like": None}),
    ("PartEstimate", PartEstimate,
     {"image_tokens": 1600, "audio_tokens": 1920, "video_tokens": 100, "file_tokens": 3000,
      "encrypted_ratio": 0.75, "chars_per_token": 4.0, "image_rules": True}),
    # policies
    ("ContextPolicy.model_validate", ContextPolicy.model_validate, {"obj": POLICY}),
    ("ContextPolicy.from_json", ContextPolicy.from_json, {"text": '{"mode": "audit"}'}),
    ("ContextPolicy.from_toml", ContextPolicy.from_toml, {"text": 'mode = "audit"'}),
    ("ContextPolicy.from_file", ContextPolicy.from_file, {"path": policy_file()}),
    ("validate_context_policy", validate_context_policy,
     {"policy": POLICY, "compressors": (), "apps": (), "counter": None, "fragments": None}),
    ("process_context", process_context,
     {"policy": POLICY, "fragments": fragments(), "counter": None, "compressors": {},
      "apps": {}, "part_estimate": PartEstimate()}),
    ("aprocess_context", lambda **k: run(aprocess_context(**k)),
     {"policy": POLICY, "fragments": fragments(), "budget": None, "decision_provider": None}),
    ("TextFragment", TextFragment, {"id": "notes", "text": "t", "role": "system"}),
    ("MessagesFragment", MessagesFragment, {"id": "history", "messages": MESSAGES}),
    ("MessagesFragment.with_messages", lambda **k: MessagesFragment("h", []).with_messages(**k),
     {"messages": MESSAGES}),
    ("TextFragment.with_text", lambda **k: TextFragment("h", "").with_text(**k), {"text": "x"}),
    ("ContextPolicy.bind", lambda **k: ContextPolicy.model_validate(POLICY).bind(**k),
     {"counter": len}),
    ("PolicyRunner", PolicyRunner, {"policy": POLICY}),
    ("PolicyRunner.replace", lambda **k: PolicyRunner(POLICY).replace(**k), {"counter": len}),
    ("PolicyRunner.process", lambda **k: PolicyRunner(POLICY).process(**k),
     {"fragments": fragments()}),
    ("PolicyRunner.aprocess", lambda **k: run(PolicyRunner(POLICY).aprocess(**k)),
     {"fragments": fragments()}),
    ("ContextResult.fragment", lambda **k: process_context(POLICY, fragments()).fragment(**k),
     {"fragment_id": "history"}),
    # decisions and routing
    ("ChoiceQuestion", ChoiceQuestion, {"instructions": "x", "criteria": {"a": "A", "b": "B"}}),
    ("TextQuestion", TextQuestion, {"instructions": "x"}),
    ("Decision", Decision, {"questions": {"q": QUESTION}}),
    ("DecisionRequest", DecisionRequest, {"model": "m", "questions": {"q": QUESTION}, "state": {}}),
    ("DecisionResponse.model_validate", DecisionResponse.model_validate,
     {"obj": {"model": "m", "answers": {"q": {"choice": "a", "confidence": 0.5}}}}),
    ("decide_choice", decide_choice,
     {"provider": Provider(), "model": "m", "question": QUESTION, "state": {},
      "min_confidence": 0.5, "key": "choice", "timeout": None}),
    ("adecide_choice", lambda **k: run(adecide_choice(**k)),
     {"provider": Provider(), "model": "m", "question": QUESTION, "state": {},
      "min_confidence": 0.5, "key": "choice", "timeout": 5}),
    ("check_json_state", check_json_state, {"state": {}, "field": "state"}),
    ("is_provider_unavailable", is_provider_unavailable,
     {"error": OSError(), "fallback_on": None}),
    ("OpenAIDecisionProvider", OpenAIDecisionProvider,
     {"client": None, "name": "o", "base_url": "http://127.0.0.1:9/v1", "api_key": "k",
      "timeout": None, "max_retries": None, "instructions": "x", "temperature": None,
      "strict": True, "extra_body": None}),
    ("OpenAIDecisionProvider.request",
     lambda **k: run(
         OpenAIDecisionProvider(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0)
         .request(**k)
     ),
     {"request": DecisionRequest(model="m", questions={"q": QUESTION}, state={})}),
    ("ModelSpec", ModelSpec,
     {"name": "m", "effort": None, "max_output_tokens": 100, "window": 1000,
      "supported_efforts": None, "api": None, "effort_names": None, "reasoning_tokens": None}),
    ("ModelSpec.thinking_budget", lambda **k: SPEC.thinking_budget(**k), {"effort": "low"}),
    ("ModelRouting", ModelRouting,
     {**ROUTING, "min_confidence": 0.85, "on_error": "fallback", "state": None, "timeout": None,
      "fallback_on": None, "effort_question": None}),
    ("ModelRouter", ModelRouter, {"routing": ModelRouting(**ROUTING), "on_event": None}),
    ("ModelRouter.route", lambda **k: ModelRouter(ModelRouting(**ROUTING)).route(**k),
     {"context": CONTEXT}),
    ("ModelRouter.aroute", lambda **k: run(ModelRouter(ModelRouting(**ROUTING)).aroute(**k)),
     {"context": CONTEXT}),
    ("RoutingContext", RoutingContext,
     {"step": 1, "model": "m1", "system": "", "messages": MESSAGES, "tools": ()}),
    ("RoutingRule", RoutingRule,
     {"id": "r", "model": "m1", "min_tokens": 10, "min_step": None, "has_tools": None,
      "when": None, "effort": None}),
    ("RuleRouter", RuleRouter, {**RULES, "counter": None, "on_event": None}),
    ("RuleRouter.route", lambda **k: RuleRouter(**RULES).route(**k), {"context": CONTEXT}),
    ("RuleRouter.aroute", lambda **k: run(RuleRouter(**RULES).aroute(**k)), {"context": CONTEXT}),
    ("RuleRouter.single", RuleRouter.single, {"model": "m", "on_event": None}),
    ("default_state", default_state, {"context": CONTEXT}),
    ("provider_options", provider_options, {"model": SPEC, "effort": "low"}),
    ("model_budget", model_budget,
     {"spec": SPEC, "window": None, "output": 0, "reasoning": 0, "safety": None}),
    ("prepare_step", prepare_step,
     {"policy": POLICY, "fragments": fragments(), "router": None, "model": SPEC, "step": 1,
      "active": None, "system": "", "tools": (), "window": None, "output": 0, "reasoning": 0}),
    ("aprepare_step", lambda **k: run(aprepare_step(**k)),
     {"policy": POLICY, "fragments": fragments(), "model": SPEC, "step": 1}),
    ("PreparedStep.fragment",
     lambda **k: prepare_step(POLICY, fragments(), model=SPEC, step=1).fragment(**k),
     {"fragment_id": "history"}),
    # locales and errors
    ("normalize_locale", normalize_locale, {"value": "fr"}),
    ("get_locale", get_locale, {}),
    ("context_policy_json_schema", context_policy_json_schema, {}),
    ("set_locale", lambda **k: (set_locale(**k), set_locale("en")), {"locale": "en"}),
    ("use_locale", locale, {"name": "fr"}),
    ("ContextOverflowError", lambda **k: str(ContextOverflowError("context_overflow", **k)),
     {"tokens": 5, "context_budget": 4}),
    ("ContextwiseError.render",
     lambda **k: ContextOverflowError("context_overflow", tokens=5, context_budget=4).render(**k),
     {"locale": "zh"}),
    # sessions and stores
    ("ContextSession", session,
     {"policy": POLICY, "store": MemoryStore(), "session_id": "s", "fragment_id": "history"}),
    ("ContextSession.add", lambda **k: session().add(**k),
     {"messages": MESSAGES, "idempotency_key": "turn-1"}),
    ("ContextSession.aadd", lambda **k: run(session().aadd(**k)),
     {"messages": MESSAGES, "idempotency_key": None}),
    ("ContextSession.restore", lambda **k: filled_session().restore(**k),
     {"change_id": 1}),
    ("ContextSession.arestore", lambda **k: run(filled_session().arestore(**k)),
     {"change_id": 1}),
    ("MemoryStore", MemoryStore, {"idempotency_window": 60}),
    ("SQLiteStore", lambda **k: SQLiteStore(**k).close(),
     {"path": os.path.join(FOLDER, "s.db"), "timeout": 5.0, "idempotency_window": 60}),
    ("SQLAlchemyStore", lambda **k: SQLAlchemyStore(**k).read("s"),
     {"url": "sqlite://", "timeout": 5.0, "idempotency_window": 60}),
    *store_calls(MemoryStore, "MemoryStore"),
    *store_calls(sqlite_store, "SQLiteStore"),
    # usage, prices and calibration
    ("Usage", Usage, {"input_tokens": 10, "cached_input_tokens": 2, "output_tokens": 3}),
    ("usage_from", usage_from,
     {"response": {"usage": {"prompt_tokens": 12, "completion_tokens": 3}}, "source": None}),
    ("cost", cost,
     {"usage": Usage(input_tokens=10), "model": "m", "prices": PRICES, "provider": None,
      "at": None}),
    ("price_usage", price_usage,
     {"usage": Usage(input_tokens=10), "model": "m", "kind": "model", "step": 1,
      "prices": PRICES}),
    ("ModelPrices", ModelPrices, {"input": 3, "output": 15, "cached_input": 0.3}),
    ("UsageLedger.record", lambda **k: UsageLedger().record(**k),
     {"usage": Usage(input_tokens=10), "model": "m", "kind": "router", "step": 2}),
    ("summarize_usage", summarize_usage,
     {"records": [price_usage(Usage(input_tokens=5), model="m", prices=PRICES)]}),
    ("WithUsage", WithUsage, {"value": "Summary.", "usage": Usage(input_tokens=5), "model": "m"}),
    ("CalibratedCounter", CalibratedCounter, {"base": None, "state": None}),
    ("CalibratedCounter.observe", lambda **k: CalibratedCounter().observe(**k),
     {"request": REQUEST, "usage": Usage(input_tokens=30), "model": "m"}),
    ("CalibratedCounter.for_model", lambda **k: CalibratedCounter().for_model(**k),
     {"name": "m"}),
    ("counter_key", counter_key, {"counter": EstimateCounter()}),
    ("estimate_by_script", estimate_by_script, {"text": "Total: 42 个"}),
    ("ContextSession.record_usage", lambda **k: session().record_usage(**k),
     {"usage": Usage(input_tokens=10), "model": "m", "kind": "model", "step": 1,
      "request": None}),
    # tool loops
    ("recall", recall,
     {"ref": "call_7", "history": TOOL_HISTORY, "archive": None, "offset": 0, "limit": 100}),
    ("arecall", lambda **k: run(arecall(**k)),
     {"ref": "call_7", "history": TOOL_HISTORY, "offset": 0, "limit": 100}),
    ("recall_tool", recall_tool,
     {"history": TOOL_HISTORY, "archive": None, "limit": 4000, "name": "recall"}),
    ("RecallTool.handle", lambda **k: recall_tool(history=TOOL_HISTORY).handle(**k),
     {"arguments": {"ref": "call_7", "offset": 0, "limit": 100}}),
    ("anthropic_context_management", anthropic_context_management,
     {"policy": CLEAR_POLICY, "steps": None, "compaction": False}),
    ("openai_context_management", openai_context_management,
     {"policy": COMPACT_POLICY, "steps": None}),
]
"""Public callables, each with the keyword arguments of a call that succeeds."""

COMMAND_LINE: EntryPoint = (
    "cli.main", contextwise.cli.main, {"argv": ["policy", "check", policy_file()]}
)
"""The command line's entry point, with a call that succeeds."""

ENTRY_POINTS_IN_RUNNER: list[EntryPoint] = [
    ("process_context(step_timeout)", process_context,
     {"policy": POLICY, "fragments": fragments(), "step_timeout": 5}),
    ("process_context(unknown_items)", process_context,
     {"policy": POLICY, "fragments": fragments(), "unknown_items": "error"}),
    ("ContextPolicy.bind(step_timeout)",
     lambda **k: ContextPolicy.model_validate(POLICY).bind(**k), {"step_timeout": 3}),
]
"""The runner options checked in ``policy/runner.py``: a broken ``repr`` or ``10**400`` there
still escapes (its fix belongs to that module's owner), so the fuzz expects those to fail."""

APPLICATION_CODE = frozenset({"counter", "func", "obj", "tokenizer", "on_event", "fallback_on",
                              "state", "when"})
"""Arguments that take the application's own functions: a hostile callable there is application
code, whose own errors propagate as documented (a tokenizer's error, an event handler's error),
so only hostile values that are not callable are tried."""
