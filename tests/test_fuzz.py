"""Careless input never escapes as anything but a ContextwiseError.

Thousands of JSON-like values, as a new user or a hurried script would write them (unknown keys,
numbers as strings, NaN, both spellings of a key, nested garbage, broken JSON and TOML), go through
the public entry points that read configuration and answers. Every call must either succeed or
raise a :class:`ContextwiseError`. Python's own ``TypeError`` for arguments that do not fit a
signature is exempt: the value is checked against the signature first and not sent when it does
not bind.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextwise import (
    BudgetSegment,
    ChoiceAnswer,
    ChoiceQuestion,
    ContextBudget,
    ContextPolicy,
    ContextProcessingReport,
    ContextSession,
    ContextwiseError,
    Decision,
    DecisionResponse,
    EstimateCounter,
    MemoryStore,
    MessagesFragment,
    ModelRouting,
    ModelSpec,
    OpenAIDecisionProvider,
    PolicyRunner,
    RoutingConfigurationError,
    RoutingContext,
    RoutingRule,
    RuleRouter,
    check_json_state,
    decide_choice,
    default_state,
    find_orphan_results,
    group_messages,
    is_pinned,
    layout_messages,
    message_chars,
    message_shape,
    message_text,
    messages_chars,
    process_context,
    read_message,
    summary_message,
    tool_call_ids,
    tool_result_ids,
    tool_units,
    validate_context_policy,
)
from support.entry_points import (
    APPLICATION_CODE,
    COMMAND_LINE,
    ENTRY_POINTS_IN_RUNNER,
    EntryPoint,
)
from support.hostile import HOSTILE
from support.malformed import malformed

SEED = 20261130
VALUES = 2500

KEYS = [
    "mode", "trigger_chars", "triggerChars", "target_input_chars", "targetInputChars",
    "trigger_tokens", "targetInputTokens", "selection", "steps", "id", "kind", "fragment_id",
    "fragmentId", "field", "grouping", "keep_groups", "keepGroups", "target_chars",
    "targetTokens", "keep", "marker", "compressor", "app", "timeout", "summary_role",
    "min_confidence", "minConfidence", "model", "instructions", "$schema", "name", "effort",
    "window", "max_output_tokens", "supported_efforts", "criteria", "questions", "answers",
    "choice", "confidence", "probabilities", "rationale", "usage", "input_tokens", "text",
    "messages", "role", "content", "tools", "system", "step", "colour", "triger_chars", "",
    "tokens", "priority", "required", "priorty",
]
WORDS = [
    "reduce", "validate", "audit", "shrink", "trim", "compress", "app", "sequence", "fixed",
    "auto", "model", "messages", "text", "user-turn", "message", "head", "tail", "low", "high",
    "medium", "huge", "user", "assistant", "system", "robot", "history", "a", "b", " ", "",
    "10", "0.9", "-1", "NaN", "true", "null", "{", "[1, 2]",
]


def careless_scalar(rng: random.Random) -> Any:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.choice([0, 1, 2, -1, 10, 1800, 2**63, -(2**70)])
    if choice == 3:
        return rng.choice([0.5, 1.5, -0.0, math.nan, math.inf, -math.inf, 1e308, 0.85])
    return rng.choice(WORDS)


def careless_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        return careless_scalar(rng)
    if roll < 0.65:
        return [careless_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        rng.choice(KEYS): careless_value(rng, depth + 1) for _ in range(rng.randrange(5))
    }


POLICY = {
    "mode": "reduce",
    "triggerChars": 1800,
    "targetInputChars": 1500,
    "selection": {"mode": "sequence"},
    "steps": [
        {"id": "recent", "kind": "trim", "fragmentId": "history", "keepGroups": 2,
         "targetChars": 1000, "grouping": {"kind": "user-turn"}},
        {"id": "summary", "kind": "compress", "fragmentId": "history", "compressor": "sum"},
        {"id": "redact", "kind": "app", "fragmentId": "history", "app": "redact", "timeout": 2},
    ],
}
SPEC = {"name": "big", "effort": "high", "max_output_tokens": 4000, "window": 32000,
        "supported_efforts": ["low", "high"]}
QUESTION = {"instructions": "Pick.", "criteria": {"a": "First.", "b": "Second."}}
SEGMENT = {"id": "history", "tokens": 900, "priority": 1, "required": False}
SEGMENTS = [{"id": "instructions", "tokens": 200}, SEGMENT, {"id": "examples", "tokens": 1.5}]
RESPONSE = {"model": "mini", "answers": {"model": {"choice": "a", "confidence": 0.9,
            "probabilities": {"a": 0.9, "b": 0.1}}}, "usage": {"input_tokens": 3}}


def mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """Change a valid document the way a hurried user would: one edit somewhere inside."""
    if isinstance(value, dict) and value and depth < 4:
        data = dict(value)
        key = rng.choice(list(data))
        edit = rng.randrange(6)
        if edit == 0:
            del data[key]
        elif edit == 1:
            data[rng.choice(KEYS)] = careless_value(rng)
        elif edit == 2:
            data[key] = careless_value(rng)
        elif edit == 3 and isinstance(data[key], int | float) and not isinstance(data[key], bool):
            data[key] = str(data[key])
        elif edit == 4:
            data[key.lower().replace("_", "")] = data[key]
        else:
            data[key] = mutate(rng, data[key], depth + 1)
        return data
    if isinstance(value, list) and value and depth < 4:
        items = list(value)
        index = rng.randrange(len(items))
        items[index] = mutate(rng, items[index], depth + 1)
        if rng.random() < 0.2:
            items.append(careless_value(rng))
        return items
    return careless_value(rng)


def toml_text(rng: random.Random, value: Any) -> str:
    """A TOML rendering of a JSON-like value, sometimes broken on purpose."""

    def render(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int | float):
            return {math.inf: "inf", -math.inf: "-inf"}.get(item, repr(item)).replace(
                "nan", "nan"
            )
        if isinstance(item, str):
            return json.dumps(item)
        if isinstance(item, list):
            return "[" + ", ".join(render(x) for x in item if x is not None) + "]"
        if isinstance(item, dict):
            return "{" + ", ".join(
                f"{json.dumps(str(k))} = {render(v)}" for k, v in item.items() if v is not None
            ) + "}"
        return '""'

    if not isinstance(value, dict):
        return render(value)
    lines = [f"{json.dumps(str(k))} = {render(v)}" for k, v in value.items() if v is not None]
    text = "\n".join(lines)
    if rng.random() < 0.15 and text:
        text = text[: rng.randrange(len(text))]
    return text


def json_text(rng: random.Random, value: Any) -> str:
    text = json.dumps(value)
    if rng.random() < 0.15:
        text = text[: rng.randrange(len(text) + 1)]
    return text


class Provider:
    name = "fuzz"

    async def request(self, request: object) -> object:
        raise NotImplementedError


FRAGMENT = MessagesFragment("history", messages=[{"role": "user", "content": "Hi"}] * 3)


def _routing(value: Any) -> object:
    models = value if isinstance(value, dict) else {"a": value, "b": "small"}
    return ModelRouting(
        provider=Provider(),
        model="router",
        decision=Decision(questions={"model": ChoiceQuestion(**QUESTION)}),
        question="model",
        models=models,
        fallback="a",
    )


class Answering:
    """A provider that returns a careless value as its response."""

    name = "careless"

    def __init__(self, value: Any) -> None:
        self.value = value

    def request(self, request: object) -> Any:
        return self.value


def _decide(value: Any) -> object:
    return decide_choice(
        Answering(value),
        model="mini",
        question=ChoiceQuestion(**QUESTION),
        state={},
        min_confidence=0.5,
        key="model",
    )


BUDGET = ContextBudget(window=2000, output=100)

CLIENT = object()  # building a real client takes 30 ms; its settings are checked first anyway


def _openai(value: Any) -> object:
    settings = value if isinstance(value, dict) else {"timeout": value}
    chosen = {
        key: settings[key]
        for key in ("timeout", "max_retries", "temperature", "name")
        if key in settings
    }
    # With a client, any valid setting then raises client_conflict: a coded error too.
    return OpenAIDecisionProvider(CLIENT, **chosen)  # type: ignore[arg-type]


ENTRY_POINTS: list[tuple[str, Callable[..., object], str]] = [
    ("ContextPolicy.model_validate", ContextPolicy.model_validate, "value"),
    ("ContextPolicy(**)", ContextPolicy, "kwargs"),
    ("ContextPolicy.from_json", ContextPolicy.from_json, "json"),
    ("ContextPolicy.from_toml", ContextPolicy.from_toml, "toml"),
    ("validate_context_policy", validate_context_policy, "value"),
    ("process_context", lambda value: process_context(value, [FRAGMENT]), "value"),
    ("process_context(fragments)", lambda value: process_context(POLICY, value), "value"),
    ("ModelSpec(**)", ModelSpec, "kwargs"),
    ("ModelSpec.model_validate", ModelSpec.model_validate, "value"),
    ("ChoiceQuestion(**)", ChoiceQuestion, "kwargs"),
    ("Decision.model_validate", Decision.model_validate, "value"),
    ("ChoiceAnswer.model_validate", ChoiceAnswer.model_validate, "value"),
    ("DecisionResponse.model_validate", DecisionResponse.model_validate, "value"),
    ("ContextProcessingReport.model_validate", ContextProcessingReport.model_validate, "value"),
    ("ModelRouting(models=)", _routing, "value"),
    ("RoutingContext(**)", RoutingContext, "kwargs"),
    ("DecisionResponse via decide_choice", _decide, "value"),
    ("OpenAIDecisionProvider", _openai, "value"),
    ("BudgetSegment.model_validate", BudgetSegment.model_validate, "value"),
    ("BudgetSegment.model_validate_json", BudgetSegment.model_validate_json, "json"),
    ("BudgetSegment.model_validate_strings", BudgetSegment.model_validate_strings, "value"),
    ("ContextBudget.plan", BUDGET.plan, "value"),
]
TEMPLATES = {
    "ContextPolicy": POLICY, "process_context": POLICY, "validate": POLICY, "ModelSpec": SPEC,
    "ChoiceQuestion": QUESTION, "Decision": {"questions": {"model": QUESTION}},
    "ChoiceAnswer": RESPONSE["answers"]["model"],  # type: ignore[index]
    "DecisionResponse": RESPONSE, "ModelRouting": {"a": SPEC, "b": "small"},
    "RoutingContext": {"step": 1, "model": "m", "messages": [], "tools": []},
    "ContextProcessingReport": {"mode": "audit", "before_chars": 1, "after_chars": 1},
    "BudgetSegment": SEGMENT, "ContextBudget": SEGMENTS,
    "OpenAIDecisionProvider": {"timeout": 5, "max_retries": 1, "temperature": 0.2, "name": "x"},
}


def _template(name: str) -> Any:
    matches = [prefix for prefix in TEMPLATES if name.startswith(prefix)]
    return TEMPLATES[max(matches, key=len)] if matches else POLICY


def _binds(func: Callable[..., object], kwargs: dict[str, Any]) -> bool:
    try:
        inspect.signature(func).bind(**kwargs)
    except TypeError:
        return False
    return True


def _call(rng: random.Random, name: str, func: Callable[..., object], style: str) -> None:
    value = mutate(rng, _template(name)) if rng.random() < 0.7 else careless_value(rng)
    if style == "kwargs":
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            return
        if not _binds(func, value):
            return  # Python's own argument error, exempt
        func(**value)
    elif style == "json":
        func(json_text(rng, value))
    elif style == "toml":
        func(toml_text(rng, value))
    else:
        func(value)


def test_careless_values_raise_only_contextwise_errors() -> None:
    rng = random.Random(SEED)
    escaped: list[str] = []
    calls = 0
    for _ in range(VALUES):
        for name, func, style in ENTRY_POINTS:
            calls += 1
            try:
                _call(rng, name, func, style)
            except ContextwiseError:
                pass
            except Exception as exc:  # noqa: BLE001 - the test reports every escape
                escaped.append(f"{name}: {type(exc).__name__}: {str(exc)[:120]}")
    assert calls >= 55_000
    assert not escaped, f"{len(escaped)} escapes, first: " + "\n".join(escaped[:10])


# --- hostile values, one argument at a time, where the introspecting fuzz does not reach ------
# Every public callable is fuzzed by tests/test_fuzz_public.py, found by introspection. Here,
# every hostile value for every argument: the command line (not walked there) and the runner
# options given through ``**options`` (given only an unknown keyword there).


def hostile_calls(entry: EntryPoint) -> list[tuple[str, str, Callable[[], object]]]:
    """Every call of an entry point with one argument replaced by one hostile value."""
    _, func, base = entry
    calls = []
    for argument in base:
        for label, value in HOSTILE.items():
            if argument in APPLICATION_CODE and callable(value):
                continue
            arguments = {**base, argument: value}
            calls.append((argument, label, lambda a=arguments: func(**a)))
    return calls


def escapes(entry: EntryPoint) -> tuple[int, list[str]]:
    """How many hostile calls an entry point took, and each one that raised anything but a
    ContextwiseError (or returned a non-zero exit status with a traceback, for the command)."""
    found: list[str] = []
    calls = hostile_calls(entry)
    for argument, label, call in calls:
        try:
            call()
        except ContextwiseError as err:
            err.render("fr")  # an error also renders in another language
        except Exception as exc:  # noqa: BLE001 - the test reports every escape
            found.append(f"{entry[0]}({argument}={label}): {type(exc).__name__}: {exc!s:.100}")
    return len(calls), found


def test_hostile_values_at_the_command_line_raise_only_coded_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a hostile text given as a path names a file here
    _, func, base = COMMAND_LINE
    with contextlib.suppress(ContextwiseError):
        func(**base)  # the valid call: succeeds, or fails with a coded error
    calls, found = escapes(COMMAND_LINE)
    assert calls >= len(base) * 30
    assert not found, f"{len(found)} of {calls} escaped:\n" + "\n".join(found[:20])


@pytest.mark.parametrize(
    "entry", ENTRY_POINTS_IN_RUNNER, ids=[entry[0] for entry in ENTRY_POINTS_IN_RUNNER]
)
def test_hostile_runner_options_raise_only_coded_errors(entry: EntryPoint) -> None:
    _, found = escapes(entry)
    assert not found, "\n".join(found[:20])


def test_a_million_problems_are_reported_as_the_first_few_and_a_count() -> None:
    started = time.process_time()
    with pytest.raises(RoutingConfigurationError) as caught:
        ModelSpec.model_validate({"name": "m", "supported_efforts": ["huge"] * 1_000_000})
    assert len(caught.value.problems) == 20
    assert "1,000,000 more problems" in str(caught.value)
    # Linear, not quadratic: a bound no machine gets near (the quadratic path took 236 s).
    assert time.process_time() - started < 120


DEEP_JSON = '{"mode": "audit", "x": ' + "[" * 5_000 + "]" * 5_000 + "}"


def test_nesting_beyond_the_limit_is_a_coded_error_never_a_recursion_error() -> None:
    deep: Any = {}
    for _ in range(5_000):
        deep = {"x": deep}
    results: Any = "x"
    for _ in range(5_000):
        results = [{"type": "tool_result", "tool_use_id": "t", "content": results}]
    for call in (
        lambda: message_chars({"role": "user", "content": results}),
        lambda: layout_messages([{"role": "user", "content": results}]),
        lambda: ContextPolicy.model_validate({"mode": "audit", "x": deep}),
        lambda: ContextPolicy.from_json(DEEP_JSON),
        lambda: ContextPolicy.from_toml('mode = "audit"\nx = ' + "[" * 5_000 + "]" * 5_000),
        lambda: DecisionResponse.model_validate({"model": "m", "answers": deep}),
        lambda: check_json_state(deep),
        lambda: message_chars({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": deep}]}),
        lambda: process_context({"mode": "audit"}, [MessagesFragment("history", messages=[
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": deep}}]}])]),
    ):
        with pytest.raises(ContextwiseError) as caught:
            call()
        assert caught.value.code in {"too_deep", "message_too_deep", "state_too_deep"}, caught.value


def test_values_json_cannot_encode_in_tool_arguments_are_coded_errors() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    for arguments in (cycle, {(1, 2): "tuple key"}, {"n": 10**5000}):
        message = {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "f", "input": arguments}]}
        with pytest.raises(ContextwiseError) as caught:
            message_chars(message)
        assert caught.value.code == "message_value_not_json"


# --- malformed messages of every shape, at every entry point that reads messages ---------------

TRIM_POLICY = {
    "mode": "reduce",
    "trigger_chars": 20,
    "steps": [{"id": "trim", "kind": "trim", "fragment_id": "history",
               "grouping": {"kind": "message"}, "keep_groups": 1}],
}
TRIM_RUNNER = PolicyRunner(TRIM_POLICY, counter=EstimateCounter())
RULE_ROUTER = RuleRouter(
    [RoutingRule(id="long", model="big", min_tokens=5)],
    default="small",
    models={"small": "small-model", "big": "big-model"},
)


def _session_round(messages: list[Any]) -> object:
    session = ContextSession(TRIM_POLICY, MemoryStore(), "fuzz")
    session.add(messages)
    return session.context()


def _routed(messages: list[Any]) -> object:
    return RULE_ROUTER.route(RoutingContext(step=1, model="small-model", messages=messages))


MESSAGE_ENTRY_POINTS: list[tuple[str, Callable[[list[Any], Any], object]]] = [
    ("message_chars", lambda messages, one: message_chars(one)),
    ("message_text", lambda messages, one: message_text(one)),
    ("is_pinned", lambda messages, one: is_pinned(one)),
    ("tool_call_ids", lambda messages, one: tool_call_ids(one)),
    ("tool_result_ids", lambda messages, one: tool_result_ids(one)),
    ("message_shape", lambda messages, one: message_shape(one)),
    ("read_message", lambda messages, one: read_message(one, unknown_items="opaque")),
    ("summary_message", lambda messages, one: summary_message("Earlier.", like=one)),
    ("messages_chars", lambda messages, one: messages_chars(messages)),
    ("tool_units", lambda messages, one: tool_units(messages)),
    ("find_orphan_results", lambda messages, one: find_orphan_results(messages)),
    ("group_messages", lambda messages, one: group_messages(messages)),
    ("layout_messages", lambda messages, one: layout_messages(messages, "message")),
    ("process_context", lambda messages, one: process_context(
        TRIM_POLICY, [MessagesFragment("history", messages=messages)])),
    ("PolicyRunner.process(opaque)", lambda messages, one: TRIM_RUNNER.replace(
        unknown_items="opaque").process([MessagesFragment("history", messages=messages)])),
    ("ContextSession", lambda messages, one: _session_round(messages)),
    ("default_state", lambda messages, one: default_state(
        RoutingContext(step=1, model="m", messages=messages))),
    ("RuleRouter.route", lambda messages, one: _routed(messages)),
]
"""Every entry point that reads messages: one message, or the conversation it belongs to."""


@pytest.mark.parametrize("shape", ["openai-chat", "anthropic", "openai-responses", "gemini",
                                   "langchain", "pydantic-ai"])
def test_malformed_messages_of_every_shape_raise_only_coded_errors(shape: str) -> None:
    variants = [entry for entry in MALFORMED if entry[0] == shape]
    escaped: list[str] = []
    for _, label, messages in variants:
        index = int(label.split("[", 1)[1].split("]", 1)[0])
        for name, call in MESSAGE_ENTRY_POINTS:
            try:
                call(messages, messages[index])
            except ContextwiseError:
                pass
            except Exception as exc:  # noqa: BLE001 - the test reports every escape
                escaped.append(f"{name} on {label}: {type(exc).__name__}: {exc!s:.100}")
    assert len(variants) == 150
    assert not escaped, f"{len(escaped)} escaped:\n" + "\n".join(escaped[:20])


MALFORMED = malformed(900)
