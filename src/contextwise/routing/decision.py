"""Decisions: questions for a separate decision model, its answers, and the shared decision core.

A :class:`Decision` declares named questions. A :class:`ChoiceQuestion` offers 2 to 255 labelled
options; a :class:`DecisionProvider` answers it with a :class:`ChoiceAnswer` that names one option
and a confidence. Model routing (:class:`~contextwise.routing.ModelRouter`) and the ``model``
selection mode of a context policy both ask their questions through :func:`decide_choice`, so a
provider behaves the same way everywhere: the same validation, the same errors, the same timeout
and cancellation rules.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from time import perf_counter
from typing import Annotated, Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from contextwise.errors import (
    DecisionResponseError,
    DecisionTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
)

MIN_CHOICES = 2
"""The smallest number of options a choice question accepts."""

MAX_CHOICES = 255
"""The largest number of options a choice question accepts."""

PROBABILITY_TOLERANCE = 1e-6
"""How far from 1 the sum of an answer's probabilities may be, to absorb rounding."""

CAUSE_CHAIN_DEPTH = 8
"""How many levels down the ``__cause__`` chain :func:`is_provider_unavailable` looks."""

STATE_MAX_DEPTH = 200
"""The deepest nesting of lists and dicts that a decision state may have."""

ChoiceReason: TypeAlias = Literal["selected", "confidence"]
"""Why a choice was accepted (``selected``) or not (``confidence``: below the threshold)."""


class ChoiceQuestion(BaseModel):
    """A question whose answer is one of 2 to 255 labelled options.

    The ``criteria`` mapping ties each option's label to a description that tells the decision
    model when to pick it. The labels are the only answers the router accepts. Constructing a
    question with fewer than 2 or more than 255 options, or with a blank label, raises a pydantic
    ``ValidationError`` whose underlying error is a
    :class:`~contextwise.errors.RoutingConfigurationError`.

    Examples:
        >>> question = ChoiceQuestion(
        ...     instructions="Pick the model for the next step.",
        ...     criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ... )
        >>> question.labels
        ('fast', 'deep')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["choice"] = "choice"
    """The question kind, always ``choice``."""

    instructions: str
    """What the decision model is asked, in plain words."""

    criteria: dict[str, str]
    """Each option's label mapped to the description of when to choose it, in order."""

    @field_validator("criteria")
    @classmethod
    def _check_criteria(cls, criteria: dict[str, str]) -> dict[str, str]:
        count = len(criteria)
        if count < MIN_CHOICES:
            raise RoutingConfigurationError("too_few_choices", minimum=MIN_CHOICES, count=count)
        if count > MAX_CHOICES:
            raise RoutingConfigurationError("too_many_choices", maximum=MAX_CHOICES, count=count)
        for label in criteria:
            if not label.strip():
                raise RoutingConfigurationError("blank_choice_label", value=repr(label))
        return criteria

    @property
    def labels(self) -> tuple[str, ...]:
        """The option labels, in declaration order."""
        return tuple(self.criteria)


class TextQuestion(BaseModel):
    """A question answered with free text, for decisions that ask more than a choice.

    The router never asks it; it lets one :class:`Decision` hold every question an application
    asks its decision model, with the routing question among them.

    Examples:
        >>> TextQuestion(instructions="Summarize the user's goal in one sentence.").kind
        'text'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["text"] = "text"
    """The question kind, always ``text``."""

    instructions: str
    """What the decision model is asked, in plain words."""


def _question_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("kind", "choice"))
    return str(getattr(value, "kind", "choice"))


Question: TypeAlias = Annotated[
    Annotated[ChoiceQuestion, Tag("choice")] | Annotated[TextQuestion, Tag("text")],
    Discriminator(_question_kind),
]
"""Any question a :class:`Decision` may declare, told apart by its ``kind`` (``choice`` when
omitted)."""


class Decision(BaseModel):
    """A frozen declaration of named questions.

    The keys name the questions; :class:`~contextwise.routing.ModelRouting` picks one of them, a
    choice question whose labels are the candidate models. The declaration is frozen: its fields
    cannot be reassigned after construction.

    Examples:
        >>> decision = Decision(
        ...     questions={
        ...         "model": ChoiceQuestion(
        ...             instructions="Pick the model for the next step.",
        ...             criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ...         )
        ...     }
        ... )
        >>> list(decision.questions)
        ['model']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    questions: dict[str, Question]
    """The questions, each under the key its answer is returned with."""

    @field_validator("questions")
    @classmethod
    def _check_questions(cls, questions: dict[str, Any]) -> dict[str, Any]:
        if not questions:
            raise RoutingConfigurationError("empty_decision")
        for key in questions:
            if not key.strip():
                raise RoutingConfigurationError("blank_question_key", value=repr(key))
        return questions


class DecisionUsage(BaseModel):
    """The tokens a decision model spent answering one request.

    Examples:
        >>> DecisionUsage(input_tokens=120, output_tokens=8).total_tokens
        128
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    """The tokens of the prompt sent to the decision model."""

    output_tokens: int = Field(default=0, ge=0)
    """The tokens the decision model generated, reasoning included."""

    @property
    def total_tokens(self) -> int:
        """The input and output tokens together."""
        return self.input_tokens + self.output_tokens


class ChoiceAnswer(BaseModel):
    """The answer to a :class:`ChoiceQuestion`: one label, a confidence, optional probabilities.

    ``confidence`` is a number from 0 to 1. ``probabilities``, when given, map labels to numbers
    from 0 to 1 that sum to 1 (within :data:`PROBABILITY_TOLERANCE`), and the chosen label is the
    most probable one (ties allowed). Constructing an answer that breaks these rules raises a
    pydantic ``ValidationError`` whose underlying error is a
    :class:`~contextwise.errors.DecisionResponseError`; the router raises that
    ``DecisionResponseError`` itself when a provider returns the answer as a dict.

    Examples:
        >>> answer = ChoiceAnswer(
        ...     choice="deep", confidence=0.9, probabilities={"deep": 0.9, "fast": 0.1}
        ... )
        >>> answer.choice, answer.confidence
        ('deep', 0.9)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    choice: str
    """The label of the chosen option."""

    confidence: float
    """How sure the decision model is of its choice, from 0 to 1."""

    probabilities: dict[str, float] | None = None
    """The probability of each option, when the provider knows them."""

    rationale: str | None = None
    """A short explanation of the choice, for logs."""

    @model_validator(mode="after")
    def _check_values(self) -> ChoiceAnswer:
        check_answer_values(self)
        return self


class TextAnswer(BaseModel):
    """The answer to a :class:`TextQuestion`.

    Examples:
        >>> TextAnswer(text="Fix the failing test.").text
        'Fix the failing test.'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The answer's text."""

    rationale: str | None = None
    """A short explanation of the answer, for logs."""


Answer: TypeAlias = ChoiceAnswer | TextAnswer
"""Any answer a :class:`DecisionResponse` may hold."""


class DecisionRequest(BaseModel):
    """What a decision provider receives: the decision model, the questions and the state.

    The router sends only the question it needs, under its key in the :class:`Decision`. The state
    is lossless JSON (see :func:`check_json_state`): a provider can serialize it as it is.

    Examples:
        >>> request = DecisionRequest(
        ...     model="router-mini",
        ...     questions={
        ...         "model": ChoiceQuestion(instructions="Pick.", criteria={"a": "A", "b": "B"})
        ...     },
        ...     state={"step": 1},
        ... )
        >>> request.state
        {'step': 1}
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """The name of the decision model that should answer."""

    questions: dict[str, Question]
    """The questions to answer, by key."""

    state: Any
    """The JSON state the decision is made from: instructions, history, tools, step, model."""


class DecisionResponse(BaseModel):
    """What a decision provider returns: an answer per question key, and the tokens spent.

    A provider may return an instance of this class or the equivalent dict; the router validates
    the dict.

    Examples:
        >>> response = DecisionResponse.model_validate(
        ...     {"model": "router-mini", "answers": {"model": {"choice": "a", "confidence": 0.97}}}
        ... )
        >>> response.answers["model"].confidence
        0.97
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """The name of the decision model that answered."""

    answers: dict[str, Answer]
    """The answer to each question, under the question's key."""

    usage: DecisionUsage | None = None
    """The tokens the decision model spent, when the provider reports them."""


DecisionResult: TypeAlias = DecisionResponse | Mapping[str, Any]
"""What a provider's ``request`` may return: a :class:`DecisionResponse` or the equivalent dict."""


@runtime_checkable
class DecisionProvider(Protocol):
    """Anything that answers decision requests: a ``name`` and a ``request`` method.

    ``request`` is normally a coroutine function. A plain function is accepted too; it then runs
    inline on the event loop, where the router's ``timeout`` cannot interrupt it, so keep sync
    providers for quick local decisions. To report a failure a provider raises
    :class:`~contextwise.errors.DecisionTimeoutError`,
    :class:`~contextwise.errors.ProviderUnavailableError` or
    :class:`~contextwise.errors.QuotaExceededError`, directly or with the original error as their
    ``__cause__``.

    Examples:
        >>> class AlwaysFast:
        ...     name = "always-fast"
        ...
        ...     async def request(self, request: DecisionRequest) -> DecisionResponse:
        ...         answer = ChoiceAnswer(choice="fast", confidence=1.0)
        ...         answers = {key: answer for key in request.questions}
        ...         return DecisionResponse(model=request.model, answers=answers)
        >>> isinstance(AlwaysFast(), DecisionProvider)
        True
    """

    @property
    def name(self) -> str:
        """The provider's name, recorded in events and logs."""
        ...

    def request(self, request: DecisionRequest, /) -> DecisionResult | Awaitable[DecisionResult]:
        """Answer a decision request.

        Args:
            request: The decision model, the questions and the state.

        Returns:
            The answers, as a :class:`DecisionResponse` or the equivalent dict, or an awaitable of
            them.
        """
        ...


@dataclass(frozen=True, slots=True)
class ChoiceOutcome:
    """The validated result of one choice question asked through :func:`decide_choice`.

    The caller applies its own fallback when ``reason`` is ``confidence``: the router selects its
    fallback model, a context policy falls back to its ``sequence`` selection.

    Examples:
        >>> class Sure:
        ...     name = "sure"
        ...
        ...     def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "b", "confidence": 0.9}
        ...         return {"model": request.model, "answers": {"choice": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"a": "First.", "b": "Second."}
        ... )
        >>> outcome = decide_choice_sync(
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

    usage: DecisionUsage | None
    """The tokens the decision model spent, when the provider reports them."""

    duration_ms: float
    """The time the provider took to answer, in milliseconds."""

    response_model: str
    """The name of the decision model that answered, as the provider reports it."""

    @property
    def accepted(self) -> bool:
        """Whether the confidence reached the threshold (``reason == "selected"``)."""
        return self.reason == "selected"


async def decide_choice(
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
    propagates. A sync provider runs inline and cannot be interrupted by ``timeout``.

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
        RoutingConfigurationError: When the state is not lossless JSON, or ``min_confidence`` or
            ``timeout`` is invalid; nothing is sent then.
        DecisionTimeoutError: When ``timeout`` expires, or the provider raises it.
        DecisionResponseError: When the answer is malformed or missing.
        ProviderUnavailableError: When the provider raises it.
        QuotaExceededError: When the provider raises it.

    Examples:
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
        ...     decide_choice(
        ...         Confident(), model="mini", question=question, state={}, min_confidence=0.85
        ...     )
        ... )
        >>> outcome.choice, outcome.reason
        ('b', 'selected')
    """
    check_min_confidence(min_confidence)
    check_timeout(timeout)
    check_json_state(state)
    request = DecisionRequest.model_construct(model=model, questions={key: question}, state=state)
    start = perf_counter()
    raw = await call_provider(provider, request, timeout)
    duration_ms = (perf_counter() - start) * 1000.0
    response = coerce_response(raw, provider)
    answer = response.answers.get(key)
    if answer is None:
        raise DecisionResponseError("missing_answer", provider=provider.name, question=key)
    if not isinstance(answer, ChoiceAnswer):
        raise DecisionResponseError("not_a_choice_answer", question=key)
    check_choice_answer(answer, question, key=key)
    confidence = answer.confidence
    reason: ChoiceReason = "confidence" if confidence < min_confidence else "selected"
    return ChoiceOutcome(
        choice=answer.choice,
        confidence=confidence,
        reason=reason,
        answer=answer,
        usage=response.usage,
        duration_ms=duration_ms,
        response_model=response.model,
    )


def decide_choice_sync(
    provider: DecisionProvider,
    *,
    model: str,
    question: ChoiceQuestion,
    state: Any,
    min_confidence: float,
    key: str = "choice",
    timeout: float | None = None,
) -> ChoiceOutcome:
    """Run :func:`decide_choice` to completion from synchronous code.

    It starts an event loop with ``asyncio.run``, so it cannot be called from inside a running
    loop; async code awaits :func:`decide_choice` instead.

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
        RoutingConfigurationError: When the state is not lossless JSON, or ``min_confidence`` or
            ``timeout`` is invalid; nothing is sent then.
        DecisionTimeoutError: When ``timeout`` expires, or the provider raises it.
        DecisionResponseError: When the answer is malformed or missing.
        ProviderUnavailableError: When the provider raises it.
        QuotaExceededError: When the provider raises it.

    Examples:
        >>> class Unsure:
        ...     name = "unsure"
        ...
        ...     def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "a", "confidence": 0.5}
        ...         return {"model": request.model, "answers": {"choice": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"a": "First.", "b": "Second."}
        ... )
        >>> outcome = decide_choice_sync(
        ...     Unsure(), model="mini", question=question, state={}, min_confidence=0.85
        ... )
        >>> outcome.choice, outcome.reason
        ('a', 'confidence')
    """
    return asyncio.run(
        decide_choice(
            provider,
            model=model,
            question=question,
            state=state,
            min_confidence=min_confidence,
            key=key,
            timeout=timeout,
        )
    )


async def call_provider(
    provider: DecisionProvider, request: DecisionRequest, timeout: float | None
) -> object:
    """Send a request to a provider, awaiting an async answer for at most ``timeout`` seconds.

    Args:
        provider: The decision provider to ask.
        request: The request to send.
        timeout: The maximum number of seconds to wait for an async answer; ``None`` waits
            without limit.

    Returns:
        Whatever the provider returned, not yet validated.

    Raises:
        DecisionTimeoutError: When ``timeout`` expires; the provider's request is cancelled.
    """
    result = provider.request(request)
    if not inspect.isawaitable(result):
        return result
    if timeout is None:
        return await result
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await result
    except TimeoutError as exc:
        # A TimeoutError the provider raised by itself is its own business, not our deadline.
        if scope.expired():
            raise DecisionTimeoutError(timeout=timeout) from exc
        raise


def coerce_response(raw: object, provider: DecisionProvider) -> DecisionResponse:
    """Turn what a provider returned into a :class:`DecisionResponse`.

    Args:
        raw: A :class:`DecisionResponse` or the equivalent mapping.
        provider: The provider that returned it, named in errors.

    Returns:
        The validated response.

    Raises:
        DecisionResponseError: When ``raw`` is neither, or does not validate.
    """
    if isinstance(raw, DecisionResponse):
        return raw
    if not isinstance(raw, Mapping):
        raise DecisionResponseError(
            "invalid_response", provider=provider.name, type_name=type(raw).__name__
        )
    try:
        return DecisionResponse.model_validate(dict(raw))
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            inner = (error.get("ctx") or {}).get("error")
            if isinstance(inner, DecisionResponseError):
                raise inner from exc
        detail = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise DecisionResponseError(
            "malformed_response", provider=provider.name, detail=detail
        ) from exc


def check_answer_values(answer: ChoiceAnswer) -> None:
    """Check an answer's confidence and probabilities, without knowing the question.

    Args:
        answer: The answer to check.

    Raises:
        DecisionResponseError: When the confidence or a probability is outside 0 to 1 (NaN
            included), or the probabilities do not sum to 1 or do not peak at the choice.
    """
    confidence = answer.confidence
    if not 0.0 <= confidence <= 1.0:
        raise DecisionResponseError(
            "confidence_out_of_range", field="confidence", value=repr(confidence)
        )
    probabilities = answer.probabilities
    if probabilities is None:
        return
    total = 0.0
    top_label, top_value = "", -1.0
    for label, value in probabilities.items():
        if not 0.0 <= value <= 1.0:
            raise DecisionResponseError("probability_out_of_range", label=label, value=repr(value))
        total += value
        if value > top_value:
            top_label, top_value = label, value
    if not math.isclose(total, 1.0, rel_tol=0.0, abs_tol=PROBABILITY_TOLERANCE):
        raise DecisionResponseError("probabilities_not_normalized", total=total)
    chosen = probabilities.get(answer.choice, 0.0)
    if chosen < top_value:
        raise DecisionResponseError(
            "probabilities_not_peaked",
            choice=answer.choice,
            probability=chosen,
            top=top_label,
            top_probability=top_value,
        )


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


def is_provider_unavailable(error: BaseException) -> bool:
    """Tell whether an error means the decision provider is unavailable, so a fallback may answer.

    The rule: look at the error and up to :data:`CAUSE_CHAIN_DEPTH` (8) levels down its
    ``__cause__`` chain, and only that chain (``__context__`` is ignored, since an error raised
    while handling another is not caused by it). If any of these errors is a
    :class:`~contextwise.errors.QuotaExceededError`, the answer is ``False``, wherever it sits: a
    spent quota is never treated as an outage. Otherwise the answer is ``True`` when one of them is
    a :class:`~contextwise.errors.DecisionTimeoutError` or a
    :class:`~contextwise.errors.ProviderUnavailableError`.

    Args:
        error: The error a provider raised.

    Returns:
        Whether the error, or one of its first 8 causes, reports a timeout or an outage, with no
        quota error among them.

    Examples:
        >>> from contextwise import ProviderUnavailableError, QuotaExceededError
        >>> try:
        ...     raise RuntimeError("request failed") from ProviderUnavailableError("503")
        ... except RuntimeError as exc:
        ...     is_provider_unavailable(exc)
        True
        >>> is_provider_unavailable(QuotaExceededError("429"))
        False
    """
    found = False
    current: BaseException | None = error
    for _ in range(CAUSE_CHAIN_DEPTH + 1):
        if current is None:
            break
        if isinstance(current, QuotaExceededError):
            return False
        if isinstance(current, DecisionTimeoutError | ProviderUnavailableError):
            found = True
        current = current.__cause__
    return found


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
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0.0 <= float(value) <= 1.0
    ):
        raise RoutingConfigurationError("invalid_min_confidence", field=field, value=repr(value))
    return float(value)


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
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0.0 < float(value) < math.inf
    ):
        raise RoutingConfigurationError("invalid_timeout", field=field, value=repr(value))
    return float(value)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Path: TypeAlias = tuple[Any, ...] | None


def check_json_state(state: object, *, field: str = "state") -> None:
    """Check that a decision state is lossless JSON, before anything is sent.

    Lossless means that a JSON reader in any language gets back exactly the same value. Allowed:
    ``None``, booleans, strings, integers, finite floats other than ``-0.0``, lists, and dicts with
    string keys, nested at most :data:`STATE_MAX_DEPTH` levels. Rejected: NaN and the infinities,
    ``-0.0`` (read back as ``0``), containers that contain themselves, non-string keys, and every
    other type. Tuples and sets are rejected too: JSON reads an array back as a list, so use lists.
    Subclasses of ``str`` and ``int`` (such as enum members) are accepted, since they equal their
    JSON value.

    Args:
        state: The state to check.
        field: The name of the state in errors.

    Raises:
        RoutingConfigurationError: When the state is not lossless JSON; the ``path`` parameter
            locates the faulty value, such as ``$.messages[2].content``.

    Examples:
        >>> check_json_state({"step": 3, "messages": [{"role": "user", "content": "hi"}]})
        >>> from contextwise import RoutingConfigurationError
        >>> try:
        ...     check_json_state({"scores": [0.5, float("nan")]})
        ... except RoutingConfigurationError as err:
        ...     print(err.code, err.params["path"])
        state_non_finite $.scores[1]
    """
    _check_json(state, None, set(), 0, field)


_PLAIN_SCALARS = frozenset({str, int, bool, type(None)})


def _check_json(value: object, path: _Path, active: set[int], depth: int, field: str) -> None:
    # The hot path: the exact scalar types are accepted without a call, and a path is only
    # built when a container is entered or an error is reported.
    if type(value) in _PLAIN_SCALARS or isinstance(value, (str, int)):
        return
    if isinstance(value, float):
        _check_float(value, path, field)
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
    scalars = _PLAIN_SCALARS
    if isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str and not isinstance(key, str):
                raise RoutingConfigurationError(
                    "state_non_string_key",
                    field=field,
                    path=_format_path(path),
                    value=repr(key),
                    type_name=type(key).__name__,
                )
            if type(item) not in scalars:
                _check_json(item, (path, key), active, depth + 1, field)
    else:
        for index, item in enumerate(value):
            if type(item) not in scalars:
                _check_json(item, (path, index), active, depth + 1, field)
    active.discard(ident)


def _check_float(value: float, path: _Path, field: str) -> None:
    if not math.isfinite(value):
        raise RoutingConfigurationError(
            "state_non_finite", field=field, path=_format_path(path), value=repr(value)
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
