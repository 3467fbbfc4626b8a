"""Every public callable, found by introspection, raises nothing but a ContextwiseError.

The test walks ``contextwise.__all__`` and the ``__all__`` of every public module under it (the
subpackages and the integrations), so that a name added tomorrow is fuzzed without editing this
file: each function, each class's constructor, and each public method and property that
contextwise defines on a class (on an instance built from plausible values). Each is called with
one argument at a time replaced by a hostile value (wrong types, huge numbers, NaN and infinity,
deep nesting, long strings, lone surrogates and NUL, subclasses of ``str``, ``int`` and ``dict``,
objects whose ``__eq__``, ``__hash__`` or ``__iter__`` raise), a bounded, seeded sample of them per
callable. Async results are awaited. Anything that comes out other than a
:class:`~contextwise.ContextwiseError` fails the test, apart from the allow-list ``ALLOWED``
below, where each exception class has its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import math
import pkgutil
import random
import re
import signal
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pytest

import contextwise
from contextwise import ContextwiseError
from support.entry_points import VALID_CALLS
from support.hostile import HOSTILE, deep_dict, deep_list

SEED = 20261204
CALLS_PER_CALLABLE = 48
"""How many hostile calls each callable gets in the fast suite (seeded, so always the same)."""

EXTRA_KEYWORD = "fuzz_option"
"""The unknown keyword given to a callable that takes ``**options``."""

CALL_SECONDS = 20
"""A call that takes longer than this is reported as a hang (a failure, never a timing claim)."""


class Boom(Exception):
    """What a hostile value's own methods raise: the caller's code, which contextwise lets
    through."""


class RaisingEq:
    """An object whose ``__eq__`` raises."""

    def __eq__(self, other: object) -> bool:
        raise Boom("__eq__")

    __hash__ = object.__hash__


class RaisingHash:
    """An object whose ``__hash__`` raises."""

    def __hash__(self) -> int:
        raise Boom("__hash__")


class RaisingIter(list[Any]):
    """A list whose ``__iter__`` raises."""

    def __iter__(self) -> Iterator[Any]:
        raise Boom("__iter__")


class RaisingGetDict(dict[str, Any]):
    """A dict whose ``get`` and ``__getitem__`` raise."""

    def get(self, *args: object, **kwargs: object) -> Any:
        raise Boom("get")

    def __getitem__(self, key: object) -> Any:
        raise Boom("__getitem__")


class Text(str):
    """A str subclass."""


class Number(int):
    """An int subclass."""


class Mapping(dict[str, Any]):
    """A dict subclass."""


def raising_callable(*args: object, **kwargs: object) -> Any:
    """A callback of the caller's own that fails."""
    raise Boom("callback")


FAST_HOSTILE: dict[str, Any] = {
    **{label: value for label, value in HOSTILE.items() if label != "megabyte string"},
    "2**1100": 2**1100,
    "10**5 string": "x" * 100_000,
    "10**5 surrogates": "\ud800" * 100_000,
    "deep list 10**5": deep_list(100_000),
    "deep dict 10**5": deep_dict(100_000),
    "float str": "1e400",
    "str subclass": Text("fr"),
    "int subclass": Number(3),
    "dict subclass": Mapping(role="user", content="Hi"),
    "raising __eq__": RaisingEq(),
    "raising __hash__": RaisingHash(),
    "raising __iter__": RaisingIter([1]),
    "raising get": RaisingGetDict(role="user"),
    "raising callable": raising_callable,
    "list of hostile": [math.nan, 10**5000, "\ud800", None],
    "messages of hostile": [{"role": "user", "content": 10**5000}, {"role": math.nan}],
}
"""The hostile values of the fast suite; the slow variant adds strings of 10**7 characters."""

SLOW_HOSTILE: dict[str, Any] = {
    "10**7 string": "x" * 10_000_000,
    "10**7 CJK string": "字" * 10_000_000,
}


APPLICATION_CODE = frozenset({
    "counter", "func", "obj", "tokenizer", "on_event", "fallback_on", "state", "when",
    "compressor", "compressors", "apps", "on_result", "handler", "tokens", "call_next",
})
"""Arguments that take the application's own functions. Any object is callable as far as Python
knows, and what a callable of the caller's does when called is the caller's code: there the
callable hostile values (a class, a lambda) are not tried, only ``raising callable``, whose own
exception must come through unchanged, and the values that are not callable."""

CALLABLE_VALUES = frozenset({"class", "lambda"})



# --- the allow-list --------------------------------------------------------------------------

@dataclass(frozen=True)
class Allowed:
    """An exception that may come out of a public call, and why."""

    name: str
    reason: str
    where: Callable[[str], bool] = lambda qualname: True
    says: Callable[[str], bool] = lambda message: True


def _framework_control_flow() -> tuple[str, ...]:
    return (
        "ModelRetry", "RetryModelRequest", "SkipModelRequest",  # pydantic-ai
        "GraphInterrupt", "NodeInterrupt", "Interrupt",  # LangGraph
    )


ALLOWED: tuple[Allowed, ...] = (
    Allowed("Boom", "raised by the caller's own code: a hostile value's own __eq__, __hash__, "
            "__iter__ or get, or a callback, counter or compressor the caller passed; "
            "contextwise lets the caller's exceptions through unchanged, as documented"),
    *(Allowed(name, "a framework's control-flow exception, which must reach the framework")
      for name in _framework_control_flow()),
    Allowed("CancelledError", "cancellation is never turned into an error"),
    Allowed("MemoryError", "the machine ran out of memory: not an input error"),
    Allowed("KeyboardInterrupt", "the user stopped the program"),
    Allowed("KeyError", "an error class given a code it does not have: documented as a "
            "programming error (ContextwiseError's Raises section)",
            lambda qualname: qualname.endswith("Error") or qualname.endswith("Error.__init__")),
    Allowed("TypeError", "Python's own refusal of an unknown keyword, before any code of "
            "contextwise runs: a signature that shows **kwargs (a pydantic or enum classmethod) "
            "but takes none", says=lambda message: f"unexpected keyword argument '{EXTRA_KEYWORD}'"
            in message),
)
"""Every exception other than a ContextwiseError that a public call may raise, with its reason
(and, for some, the callables it is allowed from)."""


def allowed(exc: BaseException, qualname: str) -> bool:
    names = {klass.__name__ for klass in type(exc).__mro__}
    return any(
        rule.name in names and rule.where(qualname) and rule.says(str(exc)) for rule in ALLOWED
    )


# --- discovery -------------------------------------------------------------------------------

SKIPPED_MODULES = frozenset({"contextwise.cli"})
"""Public modules not walked: the command line is fuzzed through its own entry point
(``tests/test_fuzz.py``, ``cli.main``), since it reads files and standard input."""


def public_modules() -> list[ModuleType]:
    """``contextwise`` and every module under it that declares ``__all__`` and whose dotted
    name has no private part."""
    found = [contextwise]
    for info in pkgutil.walk_packages(contextwise.__path__, "contextwise."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if info.name in SKIPPED_MODULES:
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            found.append(module)
    return found


def skip_reason(value: object) -> str | None:
    """Why a public name is not called, or ``None`` when it is fuzzed."""
    if isinstance(value, types.UnionType):
        return "a type alias: a union of classes, each fuzzed on its own"
    if not callable(value):
        return "a constant"
    if inspect.isclass(value) and getattr(value, "_is_protocol", False):
        return "a Protocol: a structural type that the caller's objects implement"
    if inspect.isclass(value) and hasattr(value, "__total__"):
        return "a TypedDict: a plain dict at run time"
    if typing.get_origin(value) is not None or type(value).__module__ == "typing":
        return "a typing alias: nothing of contextwise runs when it is subscripted"
    if isinstance(value, typing.TypeAliasType) if hasattr(typing, "TypeAliasType") else False:
        return "a type alias"
    if getattr(value, "__module__", "") in ("typing", "typing_extensions", "builtins"):
        return "a typing construct"
    return None


FRAMEWORK_HOOKS: dict[str, str] = {
    "ContextPolicyMiddleware.wrap_model_call": "LangChain calls it with its ModelRequest",
    "ContextPolicyMiddleware.awrap_model_call": "LangChain calls it with its ModelRequest",
    "ContextPolicyCapability.before_model_request":
        "pydantic-ai calls it with its RunContext and ModelRequestContext",
    "ContextPolicyCapability.after_model_request":
        "pydantic-ai calls it with its RunContext and ModelResponse",
    "PolicySession.model_input_filter": "the Agents SDK calls it with its CallModelData",
    "RoutedModel.get_response": "the Agents SDK calls it with its own items, settings and tools",
    "RoutedModel.stream_response": "the Agents SDK calls it with its own items, settings and tools",
}
"""Methods that a framework calls, never the application: their arguments are the framework's
own objects, built and typed by the framework, so hostile values there would test the
framework's contract, not contextwise's. The integration tests run each of them with the
framework's own test model (``tests/test_integrations_*.py``). A method that overrides a method
of a framework's base class is such a hook too (:func:`overrides_framework_hook`); this table
names the others, and the hooks of the classes that implement a framework's protocol."""


def public_names() -> dict[str, object]:
    """Every public callable by qualified name, each object once."""
    seen: dict[int, str] = {}
    names: dict[str, object] = {}
    for module in public_modules():
        for name in module.__all__:
            value = getattr(module, name)
            if id(value) in seen or skip_reason(value) is not None:
                continue
            seen[id(value)] = name
            names[f"{module.__name__}.{name}"] = value
    return names


def skipped_names() -> dict[str, str]:
    """Every public name that is not called, with the reason (constants, typing aliases,
    Protocols, TypedDicts)."""
    return {
        f"{module.__name__}.{name}": reason
        for module in public_modules()
        for name in module.__all__
        if (reason := skip_reason(getattr(module, name))) is not None
    }


def own_members(klass: type) -> dict[str, object]:
    """The public methods and properties that contextwise defines on a class (inherited from a
    contextwise base included, a framework's or pydantic's own excluded)."""
    members: dict[str, object] = {}
    for base in reversed(klass.__mro__):
        if not base.__module__.startswith("contextwise"):
            continue
        for name, raw in vars(base).items():
            if name.startswith("_"):
                continue
            members[name] = raw
    return {
        name: raw for name, raw in members.items()
        if (isinstance(raw, property | staticmethod | classmethod) or inspect.isfunction(raw))
        and not overrides_framework_hook(klass, name)
    }


FRAMEWORKS = ("langchain", "langgraph", "pydantic_ai", "agents")
"""The frameworks whose base classes the integrations extend."""


def overrides_framework_hook(klass: type, name: str) -> bool:
    """Whether a method overrides one that a framework's base class declares: a hook that the
    framework calls with its own objects (see ``FRAMEWORK_HOOKS``), found without a table so
    that a hook added tomorrow is recognised too."""
    return any(
        base.__module__.split(".")[0] in FRAMEWORKS and name in vars(base)
        for base in klass.__mro__
    )


# --- plausible values ------------------------------------------------------------------------

def _plausible_from_entry_points() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for _, _, base in VALID_CALLS:
        for key, value in base.items():
            if value is not None and key not in values:
                values[key] = value
    return values


PLAUSIBLE: dict[str, Any] = {
    **_plausible_from_entry_points(),
    "arguments": {"ref": "call_7"},
    "ref": "call_7",
    "code": "not_a_string",
    "locale": "fr",
    "message": {"role": "user", "content": "Hello"},
    "msg": {"role": "user", "content": "Hello"},
    "params": {},
    "value": "low",
}
"""A value that fits each argument name, taken from the valid calls of ``support.entry_points``
first: a required argument that is not being fuzzed gets it."""


def signature(func: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def base_arguments(sig: inspect.Signature, strict: bool = True) -> dict[str, Any] | None:
    """Plausible values for the required arguments. One that has none is ``None`` (a hostile
    value like the others), or, when ``strict``, makes the answer ``None``."""
    arguments: dict[str, Any] = {}
    for name, parameter in sig.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is not parameter.empty:
            continue
        if name not in PLAUSIBLE and strict:
            return None
        arguments[name] = PLAUSIBLE.get(name)
    return arguments


def invoke(func: Callable[..., Any], sig: inspect.Signature, arguments: dict[str, Any]) -> Any:
    """Call with the arguments bound to the signature (positional-only ones by position);
    await what an async callable returns."""
    positional = [
        arguments[name] for name, parameter in sig.parameters.items()
        if parameter.kind is parameter.POSITIONAL_ONLY and name in arguments
    ]
    keywords = {
        name: value for name, value in arguments.items()
        if name not in sig.parameters
        or sig.parameters[name].kind is not sig.parameters[name].POSITIONAL_ONLY
    }
    result = func(*positional, **keywords)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


class Hang(BaseException):
    """Raised in a call that takes longer than CALL_SECONDS."""


@contextlib.contextmanager
def deadline() -> Iterator[None]:
    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CALL_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def attempt(qualname: str, call: Callable[[], Any], label: str, found: list[str]) -> Any:
    """Make one call; note anything that escapes. Returns the call's result, or None."""
    try:
        with deadline():
            return call()
    except ContextwiseError as error:
        str(error)  # the message renders
        return None
    except Hang:
        found.append(f"{qualname}[{label}]: took over {CALL_SECONDS} s")
    except BaseException as exc:  # noqa: BLE001 - the test reports every escape
        if not allowed(exc, qualname):
            found.append(f"{qualname}[{label}]: {type(exc).__name__}: {str(exc)[:100]!r}")
    return None


# --- the targets -----------------------------------------------------------------------------

RESULTS_AND_RECORDS = frozenset({
    "AddResult", "ArchivedMessage", "BudgetPlan", "ChangeEntry", "ChoiceOutcome", "Cost",
    "DecisionFailedEvent", "DecisionFinishedEvent", "DecisionStartedEvent", "IdempotencyKey",
    "Language", "MessageFacts", "MessageGroup", "MessageLayout", "ModelCounter", "PreparedStep",
    "RecallPage", "RecallTool", "RouteEvent", "RuleFailedEvent", "SessionChange", "SessionSnapshot",
    "StoredArchiveItem", "StoredMessage", "UsageRecord", "UsageSummary", "UsageTotals",
    "ContextResult", "RouteOutcome",
})
"""Values that contextwise builds and hands back (results, events, records of a store): their
fields are not checked again when a caller builds one by hand."""


@dataclass
class Target:
    """A callable to fuzz: its qualified name, the function, and how to build a receiver."""

    qualname: str
    func: Callable[..., Any]


class CallerSession:
    """An Agents SDK session of the caller's own: it keeps items in a list, and refuses what it
    does not take with its own exception (the caller's code, let through)."""

    session_id = "s"
    session_settings = None

    def __init__(self) -> None:
        self.items: list[Any] = [{"role": "user", "content": "Hi"}]

    async def get_items(self, limit: int | None = None) -> list[Any]:
        if limit is not None and type(limit) is not int:
            raise Boom("limit")
        return list(self.items)

    async def add_items(self, items: list[Any]) -> None:
        if type(items) is not list:
            raise Boom("items")
        self.items.extend(items)

    async def pop_item(self) -> Any:
        return self.items.pop() if self.items else None

    async def clear_session(self) -> None:
        self.items.clear()


def _error(klass: type[ContextwiseError]) -> ContextwiseError:
    if not klass.messages:  # the base class: any coded error has its methods
        return contextwise.ContextOverflowError("context_overflow", tokens=5, context_budget=4)
    code, message = next(iter(klass.messages.items()))
    names = re.findall(r"{(\w+)", message.singular + (message.plural or ""))
    return klass(code, **dict.fromkeys(names, 1))


def _routed_model() -> object:
    from agents.models.interface import Model

    from contextwise.integrations.openai_agents import RoutedModel
    from support.entry_points import RULES

    class Echo(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            raise Boom("the caller's model")

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise Boom("the caller's model")

    return RoutedModel(contextwise.RuleRouter(**RULES), {"a": Echo(), "b": Echo()})


def _factories() -> dict[str, Callable[[], object]]:
    from contextwise import (
        CalibratedCounter,
        RecallPage,
        Usage,
        cost,
        decide_choice,
        layout_messages,
        prepare_step,
        price_usage,
        process_context,
        read_message,
        summarize_usage,
    )
    from contextwise.integrations.openai_agents import PolicySession
    from support import entry_points as ep

    return {
        "ContextPolicy": lambda: contextwise.ContextPolicy.model_validate(ep.POLICY),
        "ContextResult": lambda: process_context(ep.POLICY, ep.fragments()),
        "RecallPage": lambda: RecallPage("call_7", "Hello", 0, 12, "history"),
        "SQLiteStore": ep.sqlite_store,
        "UsageRecord": lambda: price_usage(Usage(input_tokens=5), model="m", prices=ep.PRICES),
        "UsageTotals": lambda: summarize_usage(
            [price_usage(Usage(input_tokens=5), model="m", prices=ep.PRICES)]).total,
        "Cost": lambda: cost(Usage(input_tokens=10), "m", prices=ep.PRICES),
        "ModelCounter": lambda: CalibratedCounter().for_model("m"),
        "PreparedStep": lambda: prepare_step(ep.POLICY, ep.fragments(), model=ep.SPEC, step=1),
        "MessageFacts": lambda: read_message(ep.MESSAGES[1]),
        "MessageLayout": lambda: layout_messages(ep.MESSAGES),
        "ChoiceOutcome": lambda: decide_choice(
            ep.Provider(), model="m", question=ep.QUESTION, state={}, min_confidence=0.5),
        "PolicySession": lambda: PolicySession(CallerSession(), ep.POLICY),  # type: ignore[arg-type]
        "RoutedModel": _routed_model,
        "ConversationReport": lambda: contextwise.ConversationReport(
            key="thread-1", status="extended"),
        "ContextChange": lambda: contextwise.ContextChange(
            id="trim-history", kind="trim", fragment_id="history", before_chars=1800,
            after_chars=900, removed_messages=6, removed_chars=900),
    }


FACTORIES = _factories()
"""How to build an instance of the public classes that plausible values alone do not build."""


def instance(klass: type) -> object | None:
    """A plausible instance of a public class, or ``None`` when none can be built."""
    if klass.__name__ in FACTORIES:
        return FACTORIES[klass.__name__]()
    if issubclass(klass, ContextwiseError):
        return _error(klass)
    for _, func, base in VALID_CALLS:
        if func is klass:
            with contextlib.suppress(Exception):
                return klass(**base)
    sig = signature(klass)
    if sig is None:
        return None
    arguments = base_arguments(sig)
    if arguments is None:
        return None
    with contextlib.suppress(Exception):
        return invoke(klass, sig, arguments)
    return None


def reader(receiver: object, name: str) -> Callable[[], Any]:
    """A property's getter as a callable without arguments."""

    def read() -> Any:
        return getattr(receiver, name)

    return read


def targets() -> tuple[list[Target], list[str]]:
    """Every callable to fuzz, and the classes whose methods are not reached (no instance)."""
    found: list[Target] = []
    no_instance: list[str] = []
    for qualname, value in public_names().items():
        found.append(Target(qualname, value))  # type: ignore[arg-type]
        if not inspect.isclass(value):
            continue
        members = own_members(value)
        if not members:
            continue
        receiver = instance(value)
        for name, raw in members.items():
            if f"{value.__name__}.{name}" in FRAMEWORK_HOOKS:
                continue
            if isinstance(raw, staticmethod | classmethod):
                found.append(Target(f"{qualname}.{name}", getattr(value, name)))
            elif receiver is None:
                no_instance.append(f"{qualname}.{name}")
            elif isinstance(raw, property):
                found.append(Target(f"{qualname}.{name}", reader(receiver, name)))
            else:
                found.append(Target(f"{qualname}.{name}", getattr(receiver, name)))
    return found, no_instance


def hostile_calls(
    target: Target, values: dict[str, Any], budget: int, rng: random.Random
) -> list[tuple[str, Callable[[], Any]]]:
    sig = signature(target.func)
    if sig is None:
        return []
    base = base_arguments(sig, strict=False) or {}
    names = [
        name for name, parameter in sig.parameters.items()
        if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    ]
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in sig.parameters.values()):
        names.append(EXTRA_KEYWORD)  # **options: an unknown keyword, with each hostile value
    pairs = [
        (name, label) for name in names for label in values
        if not (name in APPLICATION_CODE and label in CALLABLE_VALUES)
    ]
    if not pairs:
        return [("()", lambda: invoke(target.func, sig, base))]
    chosen = rng.sample(pairs, min(budget, len(pairs)))
    return [
        (f"{name}={label}",
         lambda n=name, label=label: invoke(target.func, sig, {**base, n: values[label]}))
        for name, label in chosen
    ]


TARGETS, NO_INSTANCE = targets()


def _fuzz(target: Target, values: dict[str, Any], budget: int) -> list[str]:
    rng = random.Random(f"{SEED}:{target.qualname}")
    found: list[str] = []
    uses = object_uses(target.func)
    for label, call in hostile_calls(target, values, budget, rng):
        built = attempt(target.qualname, call, label, found)
        if built is not None and uses:
            use(target.qualname, built, uses, label, found)
    return found


def object_uses(func: object) -> list[str]:
    """The methods without required arguments and the properties of a class that the fuzz
    calls on an object built from a hostile value: what the caller does next with it. Records
    that contextwise builds and hands back are not checked again when built by hand
    (``RESULTS_AND_RECORDS``), so their uses are not tried."""
    if not inspect.isclass(func) or func.__name__ in RESULTS_AND_RECORDS:
        return []
    return [
        name for name, raw in own_members(func).items()
        if isinstance(raw, property) or (inspect.isfunction(raw) and takes_no_argument(raw))
    ]


def takes_no_argument(method: Callable[..., Any]) -> bool:
    """Whether a method can be called with no argument but its receiver."""
    sig = signature(method)
    return sig is not None and all(
        parameter.default is not parameter.empty
        or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        for parameter in list(sig.parameters.values())[1:]
    )


def use(qualname: str, built: object, uses: list[str], label: str, found: list[str]) -> None:
    """Read each property and call each method of ``uses`` on an object built by the fuzz."""
    for name in uses:
        def call(name: str = name) -> Any:
            value = getattr(built, name)
            if inspect.ismethod(value):
                value = value()
            return asyncio.run(_await(value)) if inspect.isawaitable(value) else value

        attempt(f"{qualname}(…).{name}", call, label, found)


@pytest.mark.parametrize("target", TARGETS, ids=[target.qualname for target in TARGETS])
def test_a_public_callable_raises_only_coded_errors(
    target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a hostile text given as a path names a file here
    found = _fuzz(target, FAST_HOSTILE, CALLS_PER_CALLABLE)
    assert not found, f"{len(found)} escaped:\n" + "\n".join(found[:20])


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS, ids=[target.qualname for target in TARGETS])
def test_a_public_callable_takes_strings_of_ten_million_characters(
    target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _fuzz(target, SLOW_HOSTILE, 8)
    assert not found, f"{len(found)} escaped:\n" + "\n".join(found[:20])


def test_discovery_finds_every_public_module_and_class_method() -> None:
    qualnames = {target.qualname for target in TARGETS}
    modules = {module.__name__ for module in public_modules()}
    assert {"contextwise.integrations.langchain", "contextwise.integrations.pydantic_ai",
            "contextwise.integrations.openai_agents", "contextwise.session",
            "contextwise.i18n"} <= modules
    # Constructors, methods, properties, async methods and classmethods are all reached.
    assert {"contextwise.recall", "contextwise.RecallTool", "contextwise.RecallTool.handle",
            "contextwise.RecallTool.ahandle", "contextwise.RecallTool.parameters",
            "contextwise.RecallPage.for_model", "contextwise.i18n.translate"} <= qualnames
    assert len(TARGETS) > 250
    # What is not called, and why: every skipped name is a constant, an alias, a Protocol or a
    # TypedDict, never a function or a class whose code runs.
    skipped = skipped_names()
    assert skipped["contextwise.Locale"].startswith("a typing alias")
    assert skipped["contextwise.TokenCounter"].startswith("a Protocol")
    assert skipped["contextwise.DEFAULT_RECALL_LIMIT"] == "a constant"
    assert skipped["contextwise.Fragment"].startswith("a type alias")
    assert {"contextwise.TextFragment", "contextwise.MessagesFragment"} <= qualnames
    for qualname, reason in skipped.items():
        assert reason.startswith(("a constant", "a typing", "a type alias", "a Protocol",
                                  "a TypedDict")), qualname


def test_the_fuzz_reports_a_raw_error_and_lets_only_the_allow_list_through() -> None:
    def careless(value: object) -> object:
        return len(value)  # type: ignore[arg-type]

    def calls_back(counter: object) -> object:
        return counter("text")  # type: ignore[operator]

    def awaited(value: object) -> object:
        async def inner() -> object:
            raise RuntimeError("late")

        return inner()

    found = _fuzz(Target("contextwise.careless", careless), FAST_HOSTILE, 200)
    assert any("TypeError" in line for line in found)
    assert _fuzz(Target("contextwise.awaited", awaited), {"one": 1}, 1) == [
        "contextwise.awaited[value=one]: RuntimeError: 'late'"
    ]
    # The caller's own callback fails: its exception passes, as the allow-list says.
    assert _fuzz(Target("contextwise.calls_back", calls_back),
                 {"raising callable": raising_callable}, 1) == []
    # An object built from a hostile value is then used: its properties and plain methods.
    class Fragile:
        def __init__(self, value: object) -> None:
            self.value = value

        @property
        def size(self) -> int:
            return len(self.value)  # type: ignore[arg-type]

    Fragile.__module__ = "contextwise.fragile"
    assert _fuzz(Target("contextwise.Fragile", Fragile), {"one": 1}, 1) == [
        "contextwise.Fragile(…).size[value=one]: TypeError: \"object of type 'int' has no len()\""
    ]
    assert allowed(KeyError("x"), "contextwise.InvalidValueError")
    assert not allowed(KeyError("x"), "contextwise.recall")
