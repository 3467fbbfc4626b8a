"""The decision core: ask choice questions, validate the answers, and check the arguments.

Model routing (:class:`~contextwise.routing.ModelRouter`) and the ``model`` selection mode of a
context policy both ask their questions through :func:`decide_choice` (or its async twin
:func:`adecide_choice`), so a provider behaves the same way everywhere: the same validation, the
same errors, the same timeout and cancellation rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from contextwise._checks import finite_float
from contextwise._effects import Effects, Invoke, run_async, run_sync
from contextwise._translation import short_repr
from contextwise.accounting import Usage
from contextwise.decision._schema import (
    ChoiceAnswer,
    ChoiceQuestion,
    ChoiceReason,
    DecisionProvider,
    DecisionRequest,
    DecisionResponse,
    check_answer_values,
)
from contextwise.decision._state import check_json_state
from contextwise.errors import (
    DecisionResponseError,
    DecisionTimeoutError,
    RoutingConfigurationError,
)


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
    request = DecisionRequest.model_construct(
        model=model, questions=dict(questions), state=state
    )
    start = perf_counter()
    reply = yield Invoke(provider.request, (request,), timeout=timeout)
    duration_ms = (perf_counter() - start) * 1000.0
    if reply.timed_out:
        assert timeout is not None
        raise DecisionTimeoutError(timeout=timeout)
    reply.get()
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
