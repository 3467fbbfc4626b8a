"""The decision schema: questions, answers, requests, responses and the provider protocol.

A :class:`Decision` declares named questions. A :class:`ChoiceQuestion` offers 2 to 255 labelled
options; a :class:`DecisionProvider` answers it with a :class:`ChoiceAnswer` that names one option
and a confidence. All of them are pydantic models, so a provider may return plain dicts.

Every validation failure is a coded contextwise error, never pydantic's ``ValidationError``: a
:class:`~contextwise.errors.RoutingConfigurationError` for the questions, the decision and the
request, a :class:`~contextwise.errors.DecisionResponseError` for the answers, the usage and the
response. Numbers are never read from strings: a confidence of ``"0.9"`` or ``True`` is an error.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Mapping
from typing import Annotated, Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from contextwise._translation import short_repr
from contextwise._validation import CodedModel
from contextwise.accounting import Usage
from contextwise.errors import DecisionResponseError, RoutingConfigurationError

MIN_CHOICES = 2
"""The smallest number of options a choice question accepts."""

MAX_CHOICES = 255
"""The largest number of options a choice question accepts."""

PROBABILITY_TOLERANCE = 1e-6
"""How far from 1 the sum of an answer's probabilities may be, to absorb rounding."""

ChoiceReason: TypeAlias = Literal["selected", "confidence"]
"""Why a choice was accepted (``selected``) or not (``confidence``: below the threshold)."""


class ChoiceQuestion(CodedModel):
    """A question whose answer is one of 2 to 255 labelled options.

    The ``criteria`` mapping ties each option's label to a description that tells the decision
    model when to pick it. The labels are the only answers the router accepts. Constructing a
    question with fewer than 2 or more than 255 options, or with a blank label, raises a
    :class:`~contextwise.errors.RoutingConfigurationError`, as does any other invalid field.

    Examples:
        >>> from contextwise import ChoiceQuestion
        >>> question = ChoiceQuestion(
        ...     instructions="Pick the model for the next step.",
        ...     criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ... )
        >>> question.labels
        ('fast', 'deep')
    """

    _error_class = RoutingConfigurationError

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
                raise RoutingConfigurationError("blank_choice_label", value=short_repr(label))
        return criteria

    @property
    def labels(self) -> tuple[str, ...]:
        """The option labels, in declaration order."""
        return tuple(self.criteria)


class TextQuestion(CodedModel):
    """A question answered with free text, for decisions that ask more than a choice.

    The router never asks it; it lets one :class:`Decision` hold every question an application
    asks its decision model, with the routing question among them.

    Examples:
        >>> from contextwise import TextQuestion
        >>> TextQuestion(instructions="Summarize the user's goal in one sentence.").kind
        'text'
    """

    _error_class = RoutingConfigurationError

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


class Decision(CodedModel):
    """A frozen declaration of named questions.

    The keys name the questions; :class:`~contextwise.routing.ModelRouting` picks one of them, a
    choice question whose labels are the candidate models. The declaration is frozen: its fields
    cannot be reassigned after construction.

    Examples:
        >>> from contextwise import ChoiceQuestion, Decision
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

    _error_class = RoutingConfigurationError

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
                raise RoutingConfigurationError("blank_question_key", value=short_repr(key))
        return questions


class ChoiceAnswer(CodedModel):
    """The answer to a :class:`ChoiceQuestion`: one label, a confidence, optional probabilities.

    ``confidence`` is a number from 0 to 1. ``probabilities``, when given, map labels to numbers
    from 0 to 1 that sum to 1 (within :data:`PROBABILITY_TOLERANCE`), and the chosen label is the
    most probable one (ties allowed). Numbers are never read from strings or booleans.
    Constructing an answer that breaks these rules raises a
    :class:`~contextwise.errors.DecisionResponseError`, also when a provider returns the answer
    as a dict.

    Examples:
        >>> from contextwise import ChoiceAnswer
        >>> answer = ChoiceAnswer(
        ...     choice="deep", confidence=0.9, probabilities={"deep": 0.9, "fast": 0.1}
        ... )
        >>> answer.choice, answer.confidence
        ('deep', 0.9)
    """

    _error_class = DecisionResponseError

    model_config = ConfigDict(extra="forbid", frozen=True)

    choice: str
    """The label of the chosen option."""

    confidence: Annotated[float, Field(strict=True)]
    """How sure the decision model is of its choice, from 0 to 1."""

    probabilities: dict[str, Annotated[float, Field(strict=True)]] | None = None
    """The probability of each option, when the provider knows them."""

    rationale: str | None = None
    """A short explanation of the choice, for logs."""

    @model_validator(mode="after")
    def _check_values(self) -> ChoiceAnswer:
        check_answer_values(self)
        return self


class TextAnswer(CodedModel):
    """The answer to a :class:`TextQuestion`.

    Examples:
        >>> from contextwise import TextAnswer
        >>> TextAnswer(text="Fix the failing test.").text
        'Fix the failing test.'
    """

    _error_class = DecisionResponseError

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The answer's text."""

    rationale: str | None = None
    """A short explanation of the answer, for logs."""


def _answer_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "text" if "text" in value and "choice" not in value else "choice"
    return "text" if isinstance(value, TextAnswer) else "choice"


Answer: TypeAlias = Annotated[
    Annotated[ChoiceAnswer, Tag("choice")] | Annotated[TextAnswer, Tag("text")],
    Discriminator(_answer_kind),
]
"""Any answer a :class:`DecisionResponse` may hold: a :class:`TextAnswer` when it has a ``text``
and no ``choice``, otherwise a :class:`ChoiceAnswer`."""


class DecisionRequest(CodedModel):
    """What a decision provider receives: the decision model, the questions and the state.

    The router sends only the question it needs, under its key in the :class:`Decision`. The state
    is lossless JSON (see :func:`check_json_state`): a provider can serialize it as it is.

    Examples:
        >>> from contextwise import ChoiceQuestion, DecisionRequest
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

    _error_class = RoutingConfigurationError

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """The name of the decision model that should answer."""

    questions: dict[str, Question]
    """The questions to answer, by key."""

    state: Any
    """The JSON state the decision is made from: instructions, history, tools, step, model."""


class DecisionResponse(CodedModel):
    """What a decision provider returns: an answer per question key, and the tokens spent.

    A provider may return an instance of this class or the equivalent dict; the router validates
    the dict.

    Examples:
        >>> from contextwise import DecisionResponse
        >>> response = DecisionResponse.model_validate(
        ...     {"model": "router-mini", "answers": {"model": {"choice": "a", "confidence": 0.97}}}
        ... )
        >>> response.answers["model"].confidence
        0.97
    """

    _error_class = DecisionResponseError

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """The name of the decision model that answered."""

    answers: dict[str, Answer]
    """The answer to each question, under the question's key."""

    usage: Usage | None = None
    """The tokens the decision model spent, when the provider reports them; the router records
    them, and a session's ledger prices them as the router's spend."""


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
        >>> from contextwise import DecisionProvider, DecisionRequest, DecisionResponse
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
            "confidence_out_of_range", field="confidence", value=short_repr(confidence)
        )
    probabilities = answer.probabilities
    if probabilities is None:
        return
    total = 0.0
    top_label, top_value = "", -1.0
    for label, value in probabilities.items():
        if not 0.0 <= value <= 1.0:
            raise DecisionResponseError(
                "probability_out_of_range", label=label, value=short_repr(value)
            )
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
