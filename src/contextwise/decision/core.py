"""The decision core: ask one choice question, validate the answer, check the state.

Model routing (:class:`~contextwise.routing.ModelRouter`) and the ``model`` selection mode of a
context policy both ask their questions through :func:`decide_choice` (or its async twin
:func:`adecide_choice`), so a provider behaves the same way everywhere: the same validation, the
same errors, the same timeout and cancellation rules.
"""

from __future__ import annotations

import errno
import math
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import Any, TypeAlias

from contextwise._checks import MAX_DEPTH, finite_float, require_instance
from contextwise._effects import Effects, Invoke, run_async, run_sync
from contextwise._translation import short_repr, short_text
from contextwise._validation import construct
from contextwise.decision.schema import (
    ChoiceAnswer,
    ChoiceQuestion,
    ChoiceReason,
    DecisionProvider,
    DecisionRequest,
    DecisionResponse,
    check_answer_values,
)
from contextwise.errors import (
    DecisionResponseError,
    DecisionTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
)
from contextwise.usage import Usage

CAUSE_CHAIN_DEPTH = 8
"""How many levels down the ``__cause__`` chain :func:`is_provider_unavailable` looks."""

STATE_MAX_DEPTH = MAX_DEPTH
"""The deepest nesting of lists and dicts that a decision state may have: 100, the nesting limit
that every input of contextwise shares."""


@dataclass(frozen=True, slots=True)
class ChoiceOutcome:
    """The validated result of one choice question asked through :func:`decide_choice`.

    The caller applies its own fallback when ``reason`` is ``confidence``: the router selects its
    fallback model, a context policy falls back to its ``sequence`` selection.

    Examples:
        >>> from contextwise import ChoiceQuestion, DecisionRequest, decide_choice
        >>> class Sure:
        ...     name = "sure"
        ...
        ...     def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "b", "confidence": 0.9}
        ...         return {"model": request.model, "answers": {"choice": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"a": "First.", "b": "Second."}
        ... )
        >>> outcome = decide_choice(
        ...     Sure(), model="mini", question=question, state={}, min_confidence=0.85
        ... )
        >>> outcome.choice, outcome.reason, outcome.accepted
        ('b', 'selected', True)
    """

    choice: str
    """The label the provider chose, one of the question's labels."""

    confidence: float
    """The provider's confidence in its choice, from 0 to 1."""

    reason: ChoiceReason
    """``selected`` when the confidence reaches ``min_confidence``, otherwise ``confidence``."""

    answer: ChoiceAnswer
    """The full validated answer, probabilities and rationale included."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    duration_ms: float
    """The time the provider took to answer, in milliseconds."""

    response_model: str
    """The name of the decision model that answered, as the provider reports it."""

    @property
    def accepted(self) -> bool:
        """Whether the confidence reached the threshold (``reason == "selected"``)."""
        return self.reason == "selected"


def decide_choice(
    provider: DecisionProvider,
    *,
    model: str,
    question: ChoiceQuestion,
    state: Any,
    min_confidence: float,
    key: str = "choice",
    timeout: float | None = None,
) -> ChoiceOutcome:
    """Ask a provider one choice question and validate its answer, from synchronous code.

    It behaves exactly like :func:`adecide_choice` and shares its implementation. An async
    provider is awaited on a private event loop in a worker thread when an event loop is already
    running here, so this function also works inside Jupyter or an async web handler.

    Examples:
        >>> from contextwise import ChoiceQuestion, DecisionRequest, decide_choice
        >>> class Unsure:
        ...     name = "unsure"
        ...
        ...     def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "a", "confidence": 0.5}
        ...         return {"model": request.model, "answers": {"choice": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"a": "First.", "b": "Second."}
        ... )
        >>> outcome = decide_choice(
        ...     Unsure(), model="mini", question=question, state={}, min_confidence=0.85
        ... )
        >>> outcome.choice, outcome.reason
        ('a', 'confidence')
    """
    return run_sync(choice_effects(provider, model, question, state, min_confidence, key, timeout))


async def adecide_choice(
    provider: DecisionProvider,
    *,
    model: str,
    question: ChoiceQuestion,
    state: Any,
    min_confidence: float,
    key: str = "choice",
    timeout: float | None = None,
) -> ChoiceOutcome:
    """Ask a provider one choice question and validate its answer.

    This is the one decision core shared by model routing and the ``model`` selection of context
    policies. In order, it checks that ``state`` is lossless JSON (before anything is sent), sends
    a :class:`DecisionRequest` holding only ``question`` under ``key``, waits at most ``timeout``
    seconds, and validates the answer: it must exist, be a choice among the question's labels,
    have a confidence from 0 to 1 and, when given, probabilities over the labels that sum to 1 and
    peak at the choice. A confidence strictly below ``min_confidence`` gives the reason
    ``confidence``; otherwise ``selected``.

    The function never chooses a fallback and never swallows an error: the caller decides what a
    low confidence or a provider error means (see :func:`is_provider_unavailable`). If the task
    awaiting it is cancelled, the provider's request is cancelled too and ``CancelledError``
    propagates. A sync provider runs inline and cannot be interrupted by ``timeout``. The sync
    twin :func:`decide_choice` behaves the same way.

    Args:
        provider: The decision provider to ask.
        model: The name of the decision model the provider should use.
        question: The choice question; its labels are the only accepted answers.
        state: The JSON state the decision is made from.
        min_confidence: The threshold from 0 to 1 that the confidence must reach to be selected.
        key: The key the question is sent under, and the answer is read from.
        timeout: The maximum number of seconds to wait for an async provider; ``None`` waits as
            long as it takes.

    Returns:
        The validated choice, its confidence, the reason, the usage and the duration.

    Raises:
        RoutingConfigurationError: When an argument is invalid, and nothing is sent: the
            provider is not one (code ``invalid_provider``), ``model`` is blank, ``question`` is
            not a :class:`ChoiceQuestion` (code ``wrong_type``), the state is not lossless JSON,
            or ``min_confidence`` or ``timeout`` is invalid.
        DecisionTimeoutError: When ``timeout`` expires, or the provider raises it.
        DecisionResponseError: When the answer is malformed or missing.
        ProviderUnavailableError: When the provider raises it.
        QuotaExceededError: When the provider raises it.

    Examples:
        >>> from contextwise import ChoiceQuestion, DecisionRequest, adecide_choice
        >>> import asyncio
        >>> class Confident:
        ...     name = "confident"
        ...
        ...     async def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "b", "confidence": 0.9}
        ...         return {"model": request.model, "answers": {"choice": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"a": "First.", "b": "Second."}
        ... )
        >>> outcome = asyncio.run(
        ...     adecide_choice(
        ...         Confident(), model="mini", question=question, state={}, min_confidence=0.85
        ...     )
        ... )
        >>> outcome.choice, outcome.reason
        ('b', 'selected')
    """
    return await run_async(
        choice_effects(provider, model, question, state, min_confidence, key, timeout)
    )


def choice_effects(
    provider: DecisionProvider,
    model: str,
    question: ChoiceQuestion,
    state: Any,
    min_confidence: float,
    key: str = "choice",
    timeout: float | None = None,
) -> Effects[ChoiceOutcome]:
    """The core of :func:`decide_choice` and :func:`adecide_choice`, for any driver."""
    if not isinstance(key, str) or not key.strip():
        raise RoutingConfigurationError("blank_question_key", value=short_repr(key))
    outcomes = yield from choices_effects(
        provider, model, {key: question}, state, min_confidence, timeout=timeout
    )
    return outcomes[key]


def choices_effects(
    provider: DecisionProvider,
    model: str,
    questions: Mapping[str, ChoiceQuestion],
    state: Any,
    min_confidence: float,
    timeout: float | None = None,
) -> Effects[dict[str, ChoiceOutcome]]:
    """Ask several choice questions in one request and validate every answer, for any driver.

    Each answer is checked against its question and gets its own reason from its confidence; the
    usage and duration are those of the one request.
    """
    check_provider(provider)
    if not isinstance(model, str) or not model.strip():
        raise RoutingConfigurationError(
            "blank_router_model", field="model", value=short_repr(model)
        )
    for key, question in questions.items():
        if not isinstance(key, str) or not key.strip():
            raise RoutingConfigurationError("blank_question_key", value=short_repr(key))
        if not isinstance(question, ChoiceQuestion):
            raise RoutingConfigurationError(
                "wrong_type",
                field="question",
                expected="ChoiceQuestion",
                value=short_repr(question),
            )
    check_min_confidence(min_confidence)
    check_timeout(timeout)
    check_json_state(state)
    request = construct(
        DecisionRequest, {"model": model, "questions": dict(questions), "state": state}
    )
    start = perf_counter()
    reply = yield Invoke(provider.request, (request,), timeout=timeout, inline=True)
    duration_ms = (perf_counter() - start) * 1000.0
    if reply.timed_out:
        assert timeout is not None
        raise DecisionTimeoutError(timeout=timeout)
    if reply.error is not None:
        raise reply.error
    response = coerce_response(reply.value, provider)
    outcomes: dict[str, ChoiceOutcome] = {}
    for key, question in questions.items():
        answer = response.answers.get(key)
        if answer is None:
            raise DecisionResponseError("missing_answer", provider=provider.name, question=key)
        if not isinstance(answer, ChoiceAnswer):
            raise DecisionResponseError("not_a_choice_answer", question=key)
        check_choice_answer(answer, question, key=key)
        confidence = answer.confidence
        reason: ChoiceReason = "confidence" if confidence < min_confidence else "selected"
        outcomes[key] = ChoiceOutcome(
            choice=answer.choice,
            confidence=confidence,
            reason=reason,
            answer=answer,
            usage=response.usage,
            duration_ms=duration_ms,
            response_model=response.model,
        )
    return outcomes


def coerce_response(raw: object, provider: DecisionProvider) -> DecisionResponse:
    """Turn what a provider returned into a :class:`DecisionResponse`.

    Args:
        raw: A :class:`DecisionResponse` or the equivalent mapping.
        provider: The provider that returned it, named in errors.

    Returns:
        The validated response.

    Raises:
        DecisionResponseError: When ``raw`` is neither (code ``invalid_response``), or does not
            validate: the code of the first problem (``missing_key``, ``wrong_type``...), with
            the field path such as ``answers.model.confidence``; ``problems`` lists them all.
    """
    if isinstance(raw, DecisionResponse):
        return raw
    if not isinstance(raw, Mapping):
        raise DecisionResponseError(
            "invalid_response", provider=provider.name, type_name=type(raw).__name__
        )
    return DecisionResponse.model_validate(dict(raw))


def check_choice_answer(answer: ChoiceAnswer, question: ChoiceQuestion, *, key: str) -> None:
    """Check an answer against its question: a known choice and known probability labels.

    The value rules of :func:`check_answer_values` are checked again, so an answer built with
    ``model_construct`` cannot slip through.

    Args:
        answer: The answer to check.
        question: The question it answers.
        key: The question's key, named in errors.

    Raises:
        DecisionResponseError: When the choice or a probability label is not one of the question's
            labels, or a value rule is broken.
    """
    criteria = question.criteria
    if answer.choice not in criteria:
        raise DecisionResponseError(
            "unknown_choice", question=key, choice=answer.choice, allowed=list(criteria)
        )
    if answer.probabilities is not None:
        for label in answer.probabilities:
            if label not in criteria:
                raise DecisionResponseError(
                    "unknown_probability_label", label=label, allowed=list(criteria)
                )
    check_answer_values(answer)


FallbackPredicate: TypeAlias = Callable[[BaseException], bool]
"""A user-defined test: ``True`` when an error means the provider is unavailable."""

NETWORK_ERRNOS: frozenset[int] = frozenset(
    code
    for name in (
        "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH",
        "EHOSTDOWN", "ENETUNREACH", "ENETDOWN", "ENETRESET", "ENOTCONN", "ESHUTDOWN",
    )
    if (code := getattr(errno, name, None)) is not None
)
"""The ``errno`` codes of an ``OSError`` that mean the network failed, not the local machine."""

TRANSPORT_ERRORS: frozenset[tuple[str, str]] = frozenset(
    {
        ("httpx", "TransportError"),
        ("httpcore", "NetworkError"),
        ("httpcore", "TimeoutException"),
        ("openai", "APIConnectionError"),
        ("openai", "APITimeoutError"),
        ("anthropic", "APIConnectionError"),
        ("anthropic", "APITimeoutError"),
    }
)
"""The (top-level package, class name) of the HTTP clients' errors that mean an outage; they are
recognized by name, so none of these packages is imported."""


def is_provider_unavailable(
    error: BaseException, fallback_on: FallbackPredicate | None = None
) -> bool:
    """Tell whether an error means the decision provider is unavailable, so a fallback may answer.

    The rule: look at the error and up to :data:`CAUSE_CHAIN_DEPTH` (8) levels down its
    ``__cause__`` chain, and only that chain (``__context__`` is ignored, since an error raised
    while handling another is not caused by it). If any of these errors is a
    :class:`~contextwise.errors.QuotaExceededError`, the answer is ``False``, wherever it sits: a
    spent quota is never treated as an outage. Otherwise the answer is ``True`` when one of them
    is the face of a timeout or an outage, or ``fallback_on`` returns ``True`` for it. Anything
    else, a foreign exception included, is ``False``.

    The faces of a timeout: :class:`~contextwise.errors.DecisionTimeoutError` and the builtin
    ``TimeoutError`` (``asyncio.TimeoutError`` is the same class). The faces of an outage:
    :class:`~contextwise.errors.ProviderUnavailableError`, ``ConnectionError`` and its subclasses
    (refused, reset, aborted, broken pipe), an ``OSError`` of the network (host or network
    unreachable, a host name that does not resolve...), ``httpx.TransportError``, and
    ``openai.APIConnectionError`` and ``openai.APITimeoutError``. The HTTP clients' errors are
    recognized by name, so neither package needs to be installed.

    Args:
        error: The error a provider raised.
        fallback_on: A user-defined test applied to each error of the chain, for outages that
            contextwise does not know, such as an SDK's own exception.

    Returns:
        Whether the error, or one of its first 8 causes, reports a timeout or an outage, with no
        quota error among them.

    Raises:
        InvalidTypeError: When ``error`` is not an exception (code ``not_an_instance``).
        RoutingConfigurationError: When ``fallback_on`` is not callable (code
            ``fallback_on_not_callable``), or raises (code ``fallback_on_failed``, with its
            error as ``__cause__``).

    Examples:
        >>> from contextwise import (
        ...     ProviderUnavailableError,
        ...     QuotaExceededError,
        ...     is_provider_unavailable,
        ... )
        >>> try:
        ...     raise RuntimeError("request failed") from ProviderUnavailableError("503")
        ... except RuntimeError as exc:
        ...     is_provider_unavailable(exc)
        True
        >>> is_provider_unavailable(ConnectionResetError("peer reset"))
        True
        >>> is_provider_unavailable(QuotaExceededError("429"))
        False
        >>> is_provider_unavailable(KeyError("x"), fallback_on=lambda e: isinstance(e, KeyError))
        True
    """
    require_instance(error, BaseException, "error", "exception")
    if fallback_on is not None and not callable(fallback_on):
        raise RoutingConfigurationError(
            "fallback_on_not_callable", field="fallback_on", type_name=type(fallback_on).__name__
        )
    found = False
    current: BaseException | None = error
    for _ in range(CAUSE_CHAIN_DEPTH + 1):
        if current is None:
            break
        if isinstance(current, QuotaExceededError):
            return False
        if is_ordinary_fault(current) or (
            fallback_on is not None and _user_fault(fallback_on, current)
        ):
            found = True
        current = current.__cause__
    return found


def is_ordinary_fault(error: BaseException) -> bool:
    """Tell whether one error, on its own, is the face of a timeout or an outage.

    Timeouts: contextwise's :class:`~contextwise.errors.DecisionTimeoutError` and the builtin
    ``TimeoutError`` (``asyncio.TimeoutError`` and ``socket.timeout`` are the same class).
    Outages: :class:`~contextwise.errors.ProviderUnavailableError`, ``ConnectionError`` and its
    subclasses (refused, reset, aborted, broken pipe), an ``OSError`` whose ``errno`` is one of
    :data:`NETWORK_ERRNOS` or that failed to resolve a host name (``socket.gaierror``), and the
    HTTP clients' transport errors of :data:`TRANSPORT_ERRORS` (``httpx.TransportError``,
    ``openai.APIConnectionError`` and ``openai.APITimeoutError``, and their subclasses).

    Args:
        error: One error, without looking at its causes.

    Returns:
        Whether it reports a timeout or an outage. A quota error is never one.

    Examples:
        >>> is_ordinary_fault(TimeoutError()), is_ordinary_fault(FileNotFoundError("x.json"))
        (True, False)
    """
    if isinstance(error, QuotaExceededError):
        return False
    if isinstance(
        error, TimeoutError | ConnectionError | ProviderUnavailableError | socket.gaierror
    ):
        return True
    if isinstance(error, OSError) and error.errno in NETWORK_ERRNOS:
        return True
    return any(
        (cls.__module__.partition(".")[0], cls.__name__) in TRANSPORT_ERRORS
        for cls in type(error).__mro__
    )


def _user_fault(fallback_on: FallbackPredicate, error: BaseException) -> bool:
    """Ask a user's ``fallback_on`` about an error; a predicate that raises is a coded error."""
    try:
        return bool(fallback_on(error))
    except Exception as exc:
        raise RoutingConfigurationError(
            "fallback_on_failed",
            field="fallback_on",
            error_type=type(exc).__name__,
            detail=short_text(exc) or None,
        ) from exc


def check_provider(provider: object, *, field: str = "provider") -> None:
    """Check that a value is a decision provider: a string ``name`` and a callable ``request``.

    Raises:
        RoutingConfigurationError: When it is not (code ``invalid_provider``).
    """
    if not isinstance(getattr(provider, "name", None), str) or not callable(
        getattr(provider, "request", None)
    ):
        raise RoutingConfigurationError(
            "invalid_provider", field=field, type_name=type(provider).__name__
        )


def check_min_confidence(value: object, *, field: str = "min_confidence") -> float:
    """Check a confidence threshold: a finite number from 0 to 1, not a boolean.

    Args:
        value: The threshold to check.
        field: The field named in the error.

    Returns:
        The threshold as a float.

    Raises:
        RoutingConfigurationError: When the value is not a number from 0 to 1.
    """
    number = finite_float(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise RoutingConfigurationError(
            "invalid_min_confidence", field=field, value=short_repr(value)
        )
    return number


def check_timeout(value: object, *, field: str = "timeout") -> float | None:
    """Check a timeout: ``None``, or a finite number of seconds greater than 0.

    Args:
        value: The timeout to check.
        field: The field named in the error.

    Returns:
        The timeout as a float, or ``None``.

    Raises:
        RoutingConfigurationError: When the value is not ``None`` or a positive finite number.
    """
    if value is None:
        return None
    number = finite_float(value)
    if number is None or not number > 0.0:
        raise RoutingConfigurationError("invalid_timeout", field=field, value=short_repr(value))
    return number


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Path: TypeAlias = tuple[Any, ...] | None


def check_json_state(state: object, *, field: str = "state") -> None:
    """Check that a decision state is lossless JSON, before anything is sent.

    Lossless means that a JSON reader in any language gets back exactly the same value. Allowed:
    ``None``, booleans, strings, integers of at most 4,300 digits, finite floats other than
    ``-0.0``, lists, and dicts with string keys, nested at most :data:`STATE_MAX_DEPTH` (100)
    levels. Rejected: NaN and the infinities, ``-0.0`` (read back as ``0``), containers that
    contain themselves, non-string keys, and every other type. Tuples and sets are rejected too:
    JSON reads an array back as a list, so use lists.
    Subclasses of ``str`` and ``int`` (such as enum members) are accepted, since they equal their
    JSON value.

    Args:
        state: The state to check.
        field: The name of the state in errors.

    Raises:
        RoutingConfigurationError: When the state is not lossless JSON; the ``path`` parameter
            locates the faulty value, such as ``$.messages[2].content``.

    Examples:
        >>> from contextwise import RoutingConfigurationError, check_json_state
        >>> check_json_state({"step": 3, "messages": [{"role": "user", "content": "hi"}]})
        >>> try:
        ...     check_json_state({"scores": [0.5, float("nan")]})
        ... except RoutingConfigurationError as err:
        ...     print(err.code, err.params["path"])
        state_non_finite $.scores[1]
    """
    # The common case, plain dicts, lists and scalars, is accepted by a lean walk; anything it
    # does not accept at once (a subclass, a bad value, a cycle, which never ends before the depth
    # limit) goes through the full check, which has the last word and locates the fault.
    if not _plain_json(state, 0):
        _check_json(state, None, set(), 0, field)


def _plain_json(value: object, depth: int) -> bool:
    """Whether ``value`` is lossless JSON made of the exact builtin types only.

    ``False`` does not mean that the value is rejected, only that the full check must decide.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return _plain_scalar(value)
    if depth >= STATE_MAX_DEPTH:
        return False
    if kind is dict:
        for key in value:  # type: ignore[attr-defined]
            if type(key) is not str:
                return False
        value = value.values()  # type: ignore[attr-defined]
    scalars = _PLAIN_SCALARS
    for item in value:  # type: ignore[attr-defined]
        kind = type(item)
        if kind in scalars:
            continue
        if kind is dict or kind is list:
            if not _plain_json(item, depth + 1):
                return False
        elif not _plain_scalar(item):
            return False
    return True


def _plain_scalar(value: object) -> bool:
    """Whether a value that is not a dict or a list is a lossless JSON scalar of an exact type."""
    kind = type(value)
    if isinstance(value, int) and kind is int:
        return bool(-_JSON_INT_BOUND < value < _JSON_INT_BOUND)
    if isinstance(value, float) and kind is float:
        return _plain_float(value)
    return kind in _PLAIN_SCALARS


def _plain_float(value: float) -> bool:
    return math.isfinite(value) and (value != 0.0 or math.copysign(1.0, value) > 0.0)


_PLAIN_SCALARS = frozenset({str, bool, type(None)})
"""The scalar types accepted as they are; an int is checked against :data:`_JSON_INT_BOUND`."""

JSON_INT_DIGITS = 4300
"""The most digits of an integer in a state: Python writes no longer one as JSON text."""

_JSON_INT_BOUND = 10**JSON_INT_DIGITS


def _check_json(value: object, path: _Path, active: set[int], depth: int, field: str) -> None:
    # The hot path: the exact scalar types are accepted without a call, and a path is only
    # built when a container is entered or an error is reported.
    if _checked_scalar(value, path, field):
        return
    if not isinstance(value, (dict, list)):
        raise RoutingConfigurationError(
            "state_not_json", field=field, path=_format_path(path), type_name=type(value).__name__
        )
    if depth >= STATE_MAX_DEPTH:
        raise RoutingConfigurationError(
            "state_too_deep", field=field, path=_format_path(path), limit=STATE_MAX_DEPTH
        )
    ident = id(value)
    if ident in active:
        raise RoutingConfigurationError("state_cycle", field=field, path=_format_path(path))
    active.add(ident)
    if isinstance(value, dict):
        _check_object(value, path, active, depth, field)
    else:
        scalars = _PLAIN_SCALARS
        for index, item in enumerate(value):
            if type(item) not in scalars:
                _check_json(item, (path, index), active, depth + 1, field)
    active.discard(ident)


def _checked_scalar(value: object, path: _Path, field: str) -> bool:
    """Whether a value is a JSON scalar that the state may hold; a scalar it may not (a huge
    int, a NaN, ``-0.0``) raises. ``False`` for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not -_JSON_INT_BOUND < value < _JSON_INT_BOUND:
            raise RoutingConfigurationError(
                "state_huge_int", field=field, path=_format_path(path), limit=JSON_INT_DIGITS
            )
        return True
    if type(value) in _PLAIN_SCALARS or isinstance(value, str):
        return True
    if isinstance(value, float):
        _check_float(value, path, field)
        return True
    return False


def _check_object(
    value: dict[Any, Any], path: _Path, active: set[int], depth: int, field: str
) -> None:
    scalars = _PLAIN_SCALARS
    for key, item in value.items():
        if type(key) is not str and not isinstance(key, str):
            raise RoutingConfigurationError(
                "state_non_string_key",
                field=field,
                path=_format_path(path),
                value=short_repr(key),
                type_name=type(key).__name__,
            )
        if type(item) not in scalars:
            _check_json(item, (path, key), active, depth + 1, field)


def _check_float(value: float, path: _Path, field: str) -> None:
    if not math.isfinite(value):
        raise RoutingConfigurationError(
            "state_non_finite", field=field, path=_format_path(path), value=short_repr(value)
        )
    if value == 0.0 and math.copysign(1.0, value) < 0.0:
        raise RoutingConfigurationError("state_negative_zero", field=field, path=_format_path(path))


def _format_path(path: _Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _IDENTIFIER.match(key):
            parts.append(f".{key}")
        else:
            escaped = key.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'["{escaped}"]')
    return "$" + "".join(reversed(parts))
