"""The routing declaration: candidate models, the question, the threshold and the fallback."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from pydantic import ConfigDict, Field, field_validator, model_validator

from contextwise._translation import short_repr, short_text
from contextwise._validation import CodedModel
from contextwise.accounting import ModelPrices
from contextwise.decision import ChoiceQuestion, Decision, DecisionProvider
from contextwise.decision._api import (
    FallbackPredicate,
    check_min_confidence,
    check_provider,
    check_timeout,
)
from contextwise.effort import Effort, EffortLevel, clamp_effort, is_effort
from contextwise.errors import (
    InvalidTypeError,
    InvalidValueError,
    RoutingConfigurationError,
)

OnError: TypeAlias = Literal["fallback", "fail"]
"""What the router does when the provider times out or is unavailable."""

ON_ERROR_CHOICES: tuple[OnError, ...] = ("fallback", "fail")
"""The accepted values of ``on_error``."""

DEFAULT_MIN_CONFIDENCE = 0.85
"""The default confidence threshold of a routing declaration."""


Api: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]
"""A provider API whose request options :func:`~contextwise.provider_options` knows how to build."""

APIS: tuple[Api, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")
"""The accepted values of ``ModelSpec.api``."""

EFFORT_WORDS: Mapping[Api, tuple[str, ...]] = MappingProxyType(
    {
        "openai-chat": ("none", "minimal", "low", "medium", "high", "xhigh", "max"),
        "openai-responses": ("none", "minimal", "low", "medium", "high", "xhigh", "max"),
        "anthropic": ("low", "medium", "high", "xhigh", "max"),
        "gemini": ("minimal", "low", "medium", "high", "xhigh"),
    }
)
"""The effort words each API accepts: OpenAI's ``reasoning_effort``, Anthropic's
``output_config.effort`` and Gemini's ``thinking_level``."""

DEFAULT_REASONING_TOKENS: Mapping[Effort, int] = MappingProxyType(
    {
        Effort.NONE: 0,
        Effort.LOW: 1_024,
        Effort.MEDIUM: 4_096,
        Effort.HIGH: 16_384,
        Effort.MAX: 32_768,
    }
)
"""The thinking budget of a level that ``ModelSpec.reasoning_tokens`` does not list."""

MIN_ANTHROPIC_THINKING_TOKENS = 1_024
"""The smallest thinking budget the Anthropic API accepts (``budget_tokens``)."""


class ModelSpec(CodedModel):
    """A candidate model and its own settings.

    Every candidate runs on the harness's model provider; the spec carries what the harness needs
    to call it: the name, the effort to request, the output reserve and the context window. A bare
    string given to :class:`ModelRouting` means ``ModelSpec(name=...)``.

    ``api``, ``effort_names`` and ``reasoning_tokens`` say how an effort level reaches the
    provider: :func:`~contextwise.provider_options` turns them into the keyword arguments of the
    provider's own SDK. Each is checked at construction, and a failure raises a
    :class:`~contextwise.errors.RoutingConfigurationError` whose ``field`` parameter names the
    field: an unknown API (``unknown_api``), an effort word that no provider accepts
    (``unknown_effort_name``) or that the declared API does not accept
    (``effort_name_not_in_api``), a thinking budget that leaves no room for the answer in the
    output limit (``reasoning_tokens_over_output``) or exceeds the context window
    (``reasoning_tokens_over_window``), or, for the ``anthropic`` API, a budget between 1 and
    1,023 tokens, below the provider's minimum (``thinking_budget_below_minimum``). An unknown
    effort level raises
    :class:`~contextwise.errors.InvalidValueError` (code ``invalid_effort``).

    Sizes are whole numbers, never read from strings: ``ModelSpec(name="m", window="32000")`` is
    an error. Every validation failure raises a
    :class:`~contextwise.errors.RoutingConfigurationError` with a stable code (``wrong_type``,
    ``out_of_range``, ``unknown_key``...), the field and the offending value.

    Raises:
        RoutingConfigurationError: When a field is missing, unknown, of the wrong type or out of
            range, or the name is blank.

    Examples:
        >>> from contextwise import ModelSpec, RoutingConfigurationError
        >>> spec = ModelSpec(name="big-thinker", effort="medium", supported_efforts=["low", "high"])
        >>> spec.effort_sent
        <Effort.HIGH: 'high'>
        >>> try:
        ...     ModelSpec(name="small", window="32000")
        ... except RoutingConfigurationError as err:
        ...     print(err.code, err.params["field"])
        wrong_type window
        >>> spec = ModelSpec(
        ...     name="claude-sonnet-4-6",
        ...     api="anthropic",
        ...     max_output_tokens=32_000,
        ...     reasoning_tokens={"high": 24_000},
        ... )
        >>> spec.thinking_budget("high"), spec.thinking_budget("low"), spec.thinking_budget("none")
        (24000, 1024, 0)
    """

    _error_class = RoutingConfigurationError

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, strict=True)
    """The model's name, as the harness's model provider knows it."""

    effort: Effort | None = None
    """The effort level to request from the model, or ``None`` to send none."""

    max_output_tokens: int | None = Field(default=None, gt=0, strict=True)
    """The most tokens the model may generate in one call: the output reserve of its budget."""

    window: int | None = Field(default=None, gt=0, strict=True)
    """The model's context window in tokens, when it differs from the harness's default."""

    supported_efforts: tuple[Effort, ...] | None = Field(default=None, min_length=1)
    """The effort levels the model accepts, or ``None`` when it accepts them all."""

    api: Api | None = None
    """The provider API that serves the model, or ``None`` when contextwise need not know it."""

    effort_names: dict[Effort, str] | None = None
    """The provider's word for some effort levels, such as ``{"low": "minimal"}``; a level
    without an entry is sent under its own name, or as a thinking budget where the API takes one."""

    reasoning_tokens: dict[Effort, int] | None = None
    """The thinking budget in tokens of some effort levels, for the APIs that take a budget; a
    level without an entry takes :data:`DEFAULT_REASONING_TOKENS`."""

    prices: ModelPrices | None = None
    """The model's prices, which :func:`~contextwise.cost` uses instead of genai-prices' table;
    ``None`` to look the model's name up in the table."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name.strip():
            raise RoutingConfigurationError(
                "blank_model_name", field="name", value=short_repr(name)
            )
        return name

    @field_validator("api", mode="before")
    @classmethod
    def _check_api(cls, api: object) -> object:
        if api is not None and api not in APIS:
            raise RoutingConfigurationError(
                "unknown_api", field="api", supported=list(APIS), value=short_repr(api)
            )
        return api

    @field_validator("effort_names", mode="before")
    @classmethod
    def _check_effort_names(cls, names: object) -> object:
        for name, word in _effort_entries(names, "effort_names"):
            if not isinstance(word, str):
                raise InvalidTypeError("not_a_string", name=name, type_name=type(word).__name__)
        return names

    @field_validator("reasoning_tokens", mode="before")
    @classmethod
    def _check_reasoning_tokens(cls, budgets: object) -> object:
        for name, tokens in _effort_entries(budgets, "reasoning_tokens"):
            if isinstance(tokens, bool) or not isinstance(tokens, int):
                raise InvalidTypeError(
                    "not_a_number", name=name, type_name=type(tokens).__name__
                )
            if tokens < 0:
                raise InvalidValueError("negative_size", name=name, value=tokens)
        return budgets

    @model_validator(mode="after")
    def _check_effort_settings(self) -> ModelSpec:
        _check_effort_words(self.effort_names or {}, self.api)
        for level, tokens in (self.reasoning_tokens or {}).items():
            if self.api == "anthropic" and 0 < tokens < MIN_ANTHROPIC_THINKING_TOKENS:
                raise RoutingConfigurationError(
                    "thinking_budget_below_minimum",
                    field="reasoning_tokens",
                    level=level.value,
                    tokens=tokens,
                    minimum=MIN_ANTHROPIC_THINKING_TOKENS,
                    api=self.api,
                )
            if self.max_output_tokens is not None and tokens >= self.max_output_tokens:
                raise RoutingConfigurationError(
                    "reasoning_tokens_over_output",
                    field="reasoning_tokens",
                    level=level.value,
                    tokens=tokens,
                    limit=self.max_output_tokens,
                )
            if self.window is not None and tokens > self.window:
                raise RoutingConfigurationError(
                    "reasoning_tokens_over_window",
                    field="reasoning_tokens",
                    level=level.value,
                    tokens=tokens,
                    limit=self.window,
                )
        return self

    @property
    def effort_sent(self) -> Effort | None:
        """The effort to send: ``effort`` clamped to ``supported_efforts`` with ``clamp_effort``."""
        if self.effort is None:
            return None
        return clamp_effort(self.effort, self.supported_efforts)

    def thinking_budget(self, effort: EffortLevel | None) -> int:
        """Return the thinking budget in tokens of an effort level for this model.

        The budget is the level's entry in ``reasoning_tokens``, otherwise its entry in
        :data:`DEFAULT_REASONING_TOKENS`, lowered to half the output limit when it would leave no
        room for the answer. No effort, or the level ``none``, has a budget of 0.

        Args:
            effort: The effort level, as it is sent (already clamped), or ``None``.

        Returns:
            The number of tokens the model may spend thinking at that level.

        Raises:
            InvalidValueError: When the effort is not an effort level (code ``invalid_effort``).

        Examples:
            >>> from contextwise import ModelSpec
            >>> ModelSpec(name="m", max_output_tokens=8_000).thinking_budget("high")
            4000
        """
        if effort is None:
            return 0
        level = Effort(effort)
        if level is Effort.NONE:
            return 0
        explicit = (self.reasoning_tokens or {}).get(level)
        if explicit is not None:
            return explicit
        budget = DEFAULT_REASONING_TOKENS[level]
        if self.max_output_tokens is not None and budget >= self.max_output_tokens:
            budget = self.max_output_tokens // 2
        return budget


def _effort_entries(entries: object, field: str) -> list[tuple[str, object]]:
    """The entries of a mapping keyed by effort level, each named for error messages."""
    if entries is None:
        return []
    if not isinstance(entries, Mapping):
        raise InvalidTypeError("not_a_mapping", name=field, type_name=type(entries).__name__)
    named: list[tuple[str, object]] = []
    for level, value in entries.items():
        if not is_effort(level):
            raise InvalidValueError(
                "invalid_effort",
                name=field,
                value=short_text(level),
                supported=[member.value for member in Effort],
            )
        named.append((f"{field}[{Effort(level).value}]", value))
    return named


def _check_effort_words(names: Mapping[Effort, str], api: Api | None) -> None:
    accepted = EFFORT_WORDS[api] if api is not None else _ALL_EFFORT_WORDS
    for level, word in names.items():
        if word in accepted:
            continue
        code = "unknown_effort_name" if word not in _ALL_EFFORT_WORDS else "effort_name_not_in_api"
        raise RoutingConfigurationError(
            code,
            field="effort_names",
            level=level.value,
            value=word,
            api=api or "",
            accepted=list(accepted if code == "effort_name_not_in_api" else _ALL_EFFORT_WORDS),
        )


_ALL_EFFORT_WORDS: tuple[str, ...] = tuple(
    dict.fromkeys(word for words in EFFORT_WORDS.values() for word in words)
)


@dataclass(frozen=True, slots=True)
class RoutingContext:
    """What the router knows about the harness step it routes.

    Raises:
        InvalidTypeError: When ``step`` is not an integer (code ``not_a_number``), ``model`` or
            ``system`` is not a string (code ``not_a_string``), ``messages`` or ``tools`` is not a
            list or a tuple (code ``not_a_collection``; ``None`` included), or a tool is not a
            mapping (code ``not_a_mapping``), or ``choice`` is neither ``None`` nor a string
            (code ``not_a_string``).
        InvalidValueError: When ``step`` is negative (code ``negative_size``), or ``effort`` is
            not an effort level (code ``invalid_effort``).

    Examples:
        >>> from contextwise import RoutingContext
        >>> context = RoutingContext(
        ...     step=3, model="fast", messages=[{"role": "user", "content": "Fix the test."}]
        ... )
        >>> context.step, context.model
        (3, 'fast')
        >>> RoutingContext(step=4, model="big-model", choice="deep", effort="high").effort
        'high'
    """

    step: int
    """The number of the harness step, counted from 0 or 1 as the harness likes."""

    model: str
    """The name of the model that ran the previous step, the active model."""

    system: str = ""
    """The instructions (system prompt) of the conversation model."""

    messages: Sequence[Mapping[str, Any]] = ()
    """The conversation messages after compaction, in OpenAI or Anthropic shape."""

    tools: Sequence[Mapping[str, Any]] = ()
    """The tool specifications offered to the conversation model."""

    choice: str | None = None
    """The label of the candidate that ran the previous call (its ``RouteOutcome.choice``), or
    ``None``: a sticky router then looks the candidate up by ``model``."""

    effort: EffortLevel | None = None
    """The effort the previous call was sent (its ``RouteOutcome.effort``), or ``None`` for that
    model's own effort."""

    def __post_init__(self) -> None:
        if self.choice is not None and not isinstance(self.choice, str):
            raise InvalidTypeError(
                "not_a_string", name="choice", type_name=type(self.choice).__name__
            )
        if self.effort is not None and not is_effort(self.effort):
            raise InvalidValueError(
                "invalid_effort",
                name="effort",
                value=short_text(self.effort),
                supported=[member.value for member in Effort],
            )
        if isinstance(self.step, bool) or not isinstance(self.step, int):
            raise InvalidTypeError("not_a_number", name="step", type_name=type(self.step).__name__)
        if self.step < 0:
            raise InvalidValueError("negative_size", name="step", value=self.step)
        for name in ("model", "system"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InvalidTypeError("not_a_string", name=name, type_name=type(value).__name__)
        for name in ("messages", "tools"):
            entries = getattr(self, name)
            if not isinstance(entries, list | tuple):
                raise InvalidTypeError(
                    "not_a_collection", name=name, type_name=type(entries).__name__
                )
        # The messages may be framework objects, which the message shapes read later; a tool
        # specification is always a mapping.
        for index, tool in enumerate(self.tools):
            if not isinstance(tool, Mapping):
                raise InvalidTypeError(
                    "not_a_mapping", name=f"tools[{index}]", type_name=type(tool).__name__
                )


StateFunction: TypeAlias = Callable[[RoutingContext], Any | Awaitable[Any]]
"""A function building the decision state from the routing context, sync or async."""


@dataclass(frozen=True, init=False, eq=False)
class ModelRouting:
    r"""The declaration of model routing: who decides, which question, which models, what fallback.

    A separate decision provider answers, once per harness step after compaction, a choice
    question whose labels are the candidate models. An answer whose confidence is strictly below
    ``min_confidence`` selects ``fallback``; so does a timeout or an outage of the provider when
    ``on_error`` is ``"fallback"``.

    The declaration is checked at construction, in this order, and the first failure raises a
    :class:`~contextwise.errors.RoutingConfigurationError` whose ``field`` parameter names the
    field: the provider's shape (``invalid_provider``), a non-blank router model
    (``blank_router_model``), the decision and its question (``invalid_decision``,
    ``unknown_question``, ``question_not_choice``), the models (``models_not_mapping``,
    ``models_do_not_match_criteria``, ``invalid_model_spec``), the fallback
    (``unknown_fallback``), ``min_confidence`` (``invalid_min_confidence``), ``on_error``
    (``invalid_on_error``), ``state`` (``state_not_callable``), ``timeout``
    (``invalid_timeout``), ``fallback_on`` (``fallback_on_not_callable``) and the effort question
    (``unknown_question``, ``question_not_choice``, ``effort_question_is_routing_question``,
    ``effort_question_labels``). The declaration is immutable.

    With ``effort_question``, the decision also chooses the effort of the step: a second choice
    question whose labels are effort levels, asked in the same request. The chosen level, clamped
    to the chosen model's supported levels, is the route's ``effort``; when either answer is
    under the confidence threshold, or on an outage, the route keeps the model's own effort.

    Args:
        provider: The decision provider that answers the routing question.
        model: The name of the router's own decision model, independent of the candidates.
        decision: The frozen declaration of questions that holds the routing question.
        question: The key of the choice question whose labels are exactly the keys of ``models``.
        models: One candidate per label: a :class:`ModelSpec`, or a model name as a shorthand.
        fallback: The label of the candidate used on low confidence, or on a timeout or an
            outage when ``on_error`` is ``"fallback"``.
        min_confidence: The confidence threshold from 0 to 1; a lower confidence selects the
            fallback.
        on_error: ``"fallback"`` selects the fallback on a timeout or an outage of the provider;
            ``"fail"`` lets those errors propagate. Every other error always propagates.
        state: A function (sync or async) that builds the decision state from the
            :class:`RoutingContext`; by default the state holds the instructions, the step, the
            active model, the tools and the messages without reasoning blocks.
        timeout: The maximum number of seconds to wait for the provider's answer; ``None``
            waits as long as it takes. A timeout counts as an outage of the provider.
        fallback_on: A function that receives an error the provider raised (and each of its
            causes) and returns ``True`` when it means an outage, for failures contextwise does
            not recognize by itself. Timeouts, connection errors, network errors and the
            transport errors of ``httpx`` and ``openai`` are recognized already (see
            :func:`~contextwise.decision.is_provider_unavailable`); a quota error never falls
            back.
        effort_question: The key of a second choice question of ``decision`` whose labels are
            effort levels, or ``None`` to send each model's own effort.

    Raises:
        RoutingConfigurationError: When a field is invalid, as listed above.

    Examples:
        >>> from contextwise import ChoiceQuestion, Decision, ModelRouting, ModelSpec
        >>> class Router:
        ...     name = "router"
        ...
        ...     async def request(self, request):
        ...         raise NotImplementedError
        >>> decision = Decision(
        ...     questions={
        ...         "model": ChoiceQuestion(
        ...             instructions="Pick the model for the next step.",
        ...             criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ...         )
        ...     }
        ... )
        >>> routing = ModelRouting(
        ...     provider=Router(),
        ...     model="router-mini",
        ...     decision=decision,
        ...     question="model",
        ...     models={"fast": "small-model", "deep": ModelSpec(name="big-model", effort="high")},
        ...     fallback="deep",
        ... )
        >>> routing.models["fast"].name, routing.min_confidence
        ('small-model', 0.85)
    """

    provider: DecisionProvider
    """The decision provider that answers the routing question."""

    model: str
    """The name of the router's own decision model."""

    decision: Decision
    """The frozen declaration of questions that holds the routing question."""

    question: str
    """The key of the routing question in ``decision``."""

    routing_question: ChoiceQuestion
    """The routing question itself."""

    models: Mapping[str, ModelSpec]
    """The candidate models by label, in the order of the question's criteria (read-only)."""

    fallback: str
    """The label of the fallback model."""

    min_confidence: float
    """The confidence threshold from 0 to 1."""

    on_error: OnError
    """What a timeout or an outage of the provider does: ``fallback`` or ``fail``."""

    state: StateFunction | None = None
    """The function that builds the decision state, or ``None`` for the default state."""

    timeout: float | None = None
    """The maximum number of seconds to wait for the provider's answer, or ``None``."""

    fallback_on: FallbackPredicate | None = None
    """The user-defined test of an outage, or ``None``."""

    effort_question: str | None = None
    """The key of the effort question in ``decision``, or ``None``."""

    effort_choice_question: ChoiceQuestion | None = None
    """The effort question itself, or ``None``."""

    def __init__(
        self,
        provider: DecisionProvider,
        model: str,
        decision: Decision,
        question: str,
        models: Mapping[str, ModelSpec | str],
        fallback: str,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE,
        on_error: OnError = "fallback",
        state: StateFunction | None = None,
        timeout: float | None = None,
        fallback_on: FallbackPredicate | None = None,
        effort_question: str | None = None,
    ) -> None:
        check_provider(provider)
        if not isinstance(model, str) or not model.strip():
            raise RoutingConfigurationError(
                "blank_router_model", field="model", value=short_repr(model)
            )
        routing_question = _routing_question(decision, question)
        specs = _model_specs(models, routing_question, question)
        if not isinstance(fallback, str) or fallback not in specs:
            raise RoutingConfigurationError(
                "unknown_fallback",
                field="fallback",
                fallback=short_text(fallback),
                known=list(specs),
            )
        threshold = check_min_confidence(min_confidence)
        _check_on_error_and_state(on_error, state, fallback_on)
        seconds = check_timeout(timeout)
        effort_choices = _effort_question(decision, effort_question, question)
        checked = (
            provider, model, decision, question, routing_question, MappingProxyType(specs),
            fallback, threshold, on_error, state, seconds, fallback_on, effort_question,
            effort_choices,
        )
        # The dataclass's own __init__ would take the values unchecked: this one sets the
        # checked values as it would, through object.__setattr__ on the frozen instance.
        for spec, value in zip(fields(ModelRouting), checked, strict=True):
            object.__setattr__(self, spec.name, value)

    def __repr__(self) -> str:
        return (
            f"ModelRouting(provider={self.provider.name!r}, model={self.model!r}, "
            f"question={self.question!r}, models={list(self.models)!r}, "
            f"fallback={self.fallback!r}, min_confidence={self.min_confidence!r}, "
            f"on_error={self.on_error!r}, timeout={self.timeout!r})"
        )


def _check_on_error_and_state(on_error: object, state: object, fallback_on: object) -> None:
    if not isinstance(on_error, str) or on_error not in ON_ERROR_CHOICES:
        raise RoutingConfigurationError(
            "invalid_on_error",
            field="on_error",
            supported=list(ON_ERROR_CHOICES),
            value=short_repr(on_error),
        )
    if state is not None and not callable(state):
        raise RoutingConfigurationError(
            "state_not_callable", field="state", type_name=type(state).__name__
        )
    if fallback_on is not None and not callable(fallback_on):
        raise RoutingConfigurationError(
            "fallback_on_not_callable", field="fallback_on", type_name=type(fallback_on).__name__
        )


def _routing_question(
    decision: object, question: object, field: str = "question"
) -> ChoiceQuestion:
    if not isinstance(decision, Decision):
        raise RoutingConfigurationError(
            "invalid_decision", field="decision", type_name=type(decision).__name__
        )
    if not isinstance(question, str) or question not in decision.questions:
        raise RoutingConfigurationError(
            "unknown_question",
            field=field,
            question=short_text(question),
            known=list(decision.questions),
        )
    found = decision.questions[question]
    if not isinstance(found, ChoiceQuestion):
        raise RoutingConfigurationError(
            "question_not_choice", field=field, question=question, kind=found.kind
        )
    return found


def _effort_question(
    decision: Decision, effort_question: object, question: str
) -> ChoiceQuestion | None:
    if effort_question is None:
        return None
    if effort_question == question:
        raise RoutingConfigurationError(
            "effort_question_is_routing_question", field="effort_question", question=question
        )
    found = _routing_question(decision, effort_question, "effort_question")
    wrong = [label for label in found.criteria if not is_effort(label)]
    if wrong:
        raise RoutingConfigurationError(
            "effort_question_labels",
            field="effort_question",
            question=short_text(effort_question),
            labels=wrong,
            supported=[level.value for level in Effort],
        )
    return found


def _model_specs(
    models: object, routing_question: ChoiceQuestion, question: str
) -> dict[str, ModelSpec]:
    if not isinstance(models, Mapping):
        raise RoutingConfigurationError(
            "models_not_mapping", field="models", type_name=type(models).__name__
        )
    labels = routing_question.criteria
    missing = [label for label in labels if label not in models]
    unexpected = [str(key) for key in models if key not in labels]
    if missing or unexpected:
        raise RoutingConfigurationError(
            "models_do_not_match_criteria",
            field="models",
            question=question,
            missing=missing,
            unexpected=unexpected,
        )
    specs: dict[str, ModelSpec] = {}
    for label in labels:
        spec = models[label]
        if isinstance(spec, str) and spec.strip():
            spec = ModelSpec(name=spec)
        if not isinstance(spec, ModelSpec):
            raise RoutingConfigurationError(
                "invalid_model_spec", field="models", label=label, value=short_repr(spec)
            )
        specs[label] = spec
    return specs


