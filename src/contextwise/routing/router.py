"""The model router: one routing decision per harness step, observable, with a safe fallback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, model_validator

from contextwise._checks import require_instance
from contextwise._effects import Effects, call, run_async, run_sync
from contextwise._validation import construct
from contextwise.decision.core import ChoiceOutcome, choices_effects, is_provider_unavailable
from contextwise.decision.schema import ChoiceQuestion
from contextwise.effort import Effort, clamp_effort
from contextwise.errors import ContextwiseError, RoutingConfigurationError
from contextwise.routing.model import ModelRouting, ModelSpec, RoutingContext
from contextwise.shapes import plain_message
from contextwise.usage import Usage

LOGGER_NAME = "contextwise.routing"
"""The name of the logger that records every routing decision."""

logger = logging.getLogger(LOGGER_NAME)
# The usual library practice: records go nowhere until the application configures logging, instead
# of reaching the "last resort" handler that prints warnings to stderr.
logger.addHandler(logging.NullHandler())

RouteReason: TypeAlias = str
"""Why a model was chosen. A :class:`ModelRouter` says ``selected`` (the provider's confident
choice), ``confidence`` (a low confidence, fallback) or ``unavailable`` (an outage, fallback); a
:class:`~contextwise.routing.RuleRouter` says ``rule:<id>`` (the first rule that matched) or
``default``."""

REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
"""The content block and item types that the default state leaves out."""

REASONING_MESSAGE_KEYS = frozenset(
    {"reasoning", "reasoning_content", "reasoning_details", "thinking", "thinking_blocks"}
)
"""The message keys holding reasoning text that the default state leaves out."""


class RouteOutcome(BaseModel):
    """The result of one routing decision: the chosen candidate, why, and what it cost.

    Examples:
        >>> from contextwise import ModelSpec, RouteOutcome
        >>> outcome = RouteOutcome(
        ...     step=2,
        ...     choice="deep",
        ...     model=ModelSpec(name="big-model"),
        ...     reason="unavailable",
        ...     confidence=None,
        ...     usage=None,
        ...     effort_sent=None,
        ... )
        >>> outcome.model.name
        'big-model'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: int
    """The harness step that was routed."""

    choice: str
    """The label of the chosen candidate: the provider's choice or the fallback."""

    model: ModelSpec
    """The chosen candidate model."""

    reason: RouteReason
    """``selected`` (confident answer), ``confidence`` (below the threshold, fallback) or
    ``unavailable`` (timeout or outage of the provider, fallback)."""

    confidence: float | None
    """The provider's confidence, or ``None`` when it did not answer."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    effort_sent: Effort | None
    """The chosen model's effort after ``clamp_effort`` against its supported levels."""

    effort: Effort | None = None
    """The effort of this step, clamped to the chosen model's supported levels: the level the
    effort question chose, or the matching rule's, and otherwise ``effort_sent`` (also when it is
    not given)."""

    proposed: str | None = None
    """The label the provider chose, kept even when a low confidence replaced it by the
    fallback; ``None`` when the provider did not answer."""

    @model_validator(mode="before")
    @classmethod
    def _default_effort(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "effort" not in data:
            return {**data, "effort": data.get("effort_sent")}
        return data


@dataclass(frozen=True, slots=True)
class DecisionStartedEvent:
    """Sent when the router starts a decision, before the state is built.

    Examples:
        >>> from contextwise import DecisionStartedEvent
        >>> event = DecisionStartedEvent(
        ...     step=3, provider="openai", router_model="router-mini", question="model"
        ... )
        >>> event.kind, event.step
        ('started', 3)
    """

    step: int
    """The harness step being routed."""

    provider: str
    """The name of the decision provider."""

    router_model: str
    """The name of the router's decision model."""

    question: str
    """The key of the routing question."""

    kind: Literal["started"] = field(default="started", init=False)
    """The event kind, always ``started``."""


@dataclass(frozen=True, slots=True)
class DecisionFinishedEvent:
    """Sent when the provider answered with a valid choice.

    Examples:
        >>> from contextwise import DecisionFinishedEvent
        >>> event = DecisionFinishedEvent(
        ...     step=3, provider="openai", router_model="router-mini", question="model",
        ...     choice="deep", confidence=0.92, duration_ms=41.5, usage=None,
        ... )
        >>> event.kind, event.choice, event.confidence
        ('finished', 'deep', 0.92)
    """

    step: int
    """The harness step being routed."""

    provider: str
    """The name of the decision provider."""

    router_model: str
    """The name of the router's decision model."""

    question: str
    """The key of the routing question."""

    choice: str
    """The label the provider chose."""

    confidence: float
    """The provider's confidence in its choice."""

    duration_ms: float
    """The time the provider took to answer, in milliseconds."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    kind: Literal["finished"] = field(default="finished", init=False)
    """The event kind, always ``finished``."""


@dataclass(frozen=True, slots=True)
class DecisionFailedEvent:
    """Sent when a decision failed: a provider error, a bad answer or state, a cancellation.

    Examples:
        >>> from contextwise import DecisionFailedEvent, ProviderUnavailableError
        >>> event = DecisionFailedEvent(
        ...     step=3, provider="openai", router_model="router-mini", question="model",
        ...     error=ProviderUnavailableError("503 from upstream"), fallback=True,
        ...     duration_ms=12.0,
        ... )
        >>> event.kind, event.error.code, event.fallback
        ('failed', 'provider_unavailable', True)
    """

    step: int
    """The harness step being routed."""

    provider: str
    """The name of the decision provider."""

    router_model: str
    """The name of the router's decision model."""

    question: str
    """The key of the routing question."""

    error: BaseException
    """The error that ended the decision."""

    fallback: bool
    """Whether the router replaces the decision by the fallback (``True``) or lets the error
    propagate (``False``)."""

    duration_ms: float
    """The time from the start of the decision to the failure, in milliseconds."""

    kind: Literal["failed"] = field(default="failed", init=False)
    """The event kind, always ``failed``."""


@dataclass(frozen=True, slots=True)
class RouteEvent:
    """Sent last, when the router has chosen a model for the step.

    Examples:
        >>> from contextwise import RouteEvent
        >>> event = RouteEvent(
        ...     step=3, choice="fast", model="small", reason="unavailable", confidence=None,
        ...     effort_sent=None, usage=None, duration_ms=12.3,
        ... )
        >>> event.kind, event.model, event.reason
        ('route', 'small', 'unavailable')
    """

    step: int
    """The harness step that was routed."""

    choice: str
    """The label of the chosen candidate."""

    model: str
    """The name of the chosen model."""

    reason: RouteReason
    """Why this model was chosen: ``selected``, ``confidence`` or ``unavailable``."""

    confidence: float | None
    """The provider's confidence, or ``None`` when it did not answer."""

    effort_sent: Effort | None
    """The effort that will be sent to the chosen model."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    duration_ms: float
    """The whole routing time, state building included, in milliseconds."""

    kind: Literal["route"] = field(default="route", init=False)
    """The event kind, always ``route``."""


RoutingEvent: TypeAlias = (
    DecisionStartedEvent | DecisionFinishedEvent | DecisionFailedEvent | RouteEvent
)
"""Any event the router sends to ``on_event``; match on its ``kind``."""

EventHandler: TypeAlias = Callable[[RoutingEvent], object]
"""A plain function that receives the router's events."""


def default_state(context: RoutingContext) -> dict[str, Any]:
    """Build the default decision state: instructions, step, active model, tools and messages.

    Reasoning is left out, since it is opaque to another model and often large: Anthropic
    ``thinking`` and ``redacted_thinking`` content blocks, ``reasoning`` parts and items, and the
    ``reasoning``, ``reasoning_content``, ``reasoning_details``, ``thinking`` and
    ``thinking_blocks`` keys of a message. The messages given are never mutated; a message that
    holds no reasoning is shared as it is.

    Args:
        context: The routing context of the step.

    Returns:
        The mapping ``{"system", "step", "model", "tools", "messages"}``.

    Raises:
        InvalidTypeError: When ``context`` is not a :class:`RoutingContext` (code
            ``not_an_instance``).

    Examples:
        >>> from contextwise import RoutingContext, default_state
        >>> context = RoutingContext(
        ...     step=1,
        ...     model="fast",
        ...     messages=[
        ...         {
        ...             "role": "assistant",
        ...             "content": [
        ...                 {"type": "thinking", "thinking": "Let me think..."},
        ...                 {"type": "text", "text": "Done."},
        ...             ],
        ...         }
        ...     ],
        ... )
        >>> default_state(context)["messages"]
        [{'role': 'assistant', 'content': [{'type': 'text', 'text': 'Done.'}]}]
    """
    require_instance(context, RoutingContext, "context", "RoutingContext")
    messages: list[Any] = []
    for message in context.messages:
        cleaned = _without_reasoning(message)
        if cleaned is not None:
            messages.append(cleaned)
    return {
        "system": context.system,
        "step": context.step,
        "model": context.model,
        "tools": [
            dict(tool) if isinstance(tool, Mapping) and not isinstance(tool, dict) else tool
            for tool in context.tools
        ],
        "messages": messages,
    }


def _without_reasoning(message: Mapping[str, Any]) -> Any:
    # Exact dicts are tested first: they are the common case, and an ABC check is slow.
    if type(message) is not dict and not isinstance(message, Mapping):
        try:
            message = plain_message(message)  # a LangChain or pydantic-ai message
        except ContextwiseError:
            return message  # not a message: the JSON check reports it with its path
    if _reasoning_type(message.get("type")):
        return None
    content = message.get("content")
    strip_content = False
    if isinstance(content, list):
        for part in content:
            if (type(part) is dict or isinstance(part, Mapping)) and _reasoning_type(
                part.get("type")
            ):
                strip_content = True
                break
    strip_keys = not REASONING_MESSAGE_KEYS.isdisjoint(message)
    if not strip_content and not strip_keys:
        return message if isinstance(message, dict) else dict(message)
    cleaned = {key: value for key, value in message.items() if key not in REASONING_MESSAGE_KEYS}
    if strip_content and isinstance(content, list):
        cleaned["content"] = [
            part
            for part in content
            if not (isinstance(part, Mapping) and _reasoning_type(part.get("type")))
        ]
    return cleaned


def _reasoning_type(kind: object) -> bool:
    """Whether a ``type`` names a reasoning block; a type that is not a string names none."""
    return isinstance(kind, str) and kind in REASONING_BLOCK_TYPES


class ModelRouter:
    """Route each harness step to a candidate model, asking a separate decision model.

    For each step the router builds the decision state (the default state, or the ``state``
    function of the declaration), checks that it is lossless JSON, asks the routing question
    through :func:`~contextwise.decision.decide_choice` and returns a :class:`RouteOutcome`:

    - a confidence at or above ``min_confidence`` selects the provider's choice (reason
      ``selected``); a confidence strictly below it selects the fallback (reason ``confidence``);
    - a timeout or an outage, found on the error or up to 8 levels down its ``__cause__`` chain
      and with no quota error there, selects the fallback (reason ``unavailable``) when
      ``on_error`` is ``"fallback"``. A timeout is a
      :class:`~contextwise.errors.DecisionTimeoutError` (the router's own ``timeout`` included)
      or the builtin ``TimeoutError``; an outage is a
      :class:`~contextwise.errors.ProviderUnavailableError`, a ``ConnectionError``, a network
      ``OSError``, ``httpx.TransportError``, ``openai.APIConnectionError`` or
      ``openai.APITimeoutError``, or an error for which the declaration's ``fallback_on``
      returns ``True``;
    - everything else propagates: a quota error, a malformed or missing answer, a bad state, any
      other exception, every error with ``on_error="fail"``, and cancellation, which also cancels
      the provider's request.

    Every decision is observable: one ``logging`` record on the ``contextwise.routing`` logger
    (``INFO`` when a model is chosen, ``WARNING`` when the fallback replaces a failed decision or
    an error propagates) with the details in its ``extra`` attributes (``step``, ``choice``,
    ``model``, ``reason``, ``confidence``, ``provider``, ``router_model``, ``question``,
    ``duration_ms``, ``decision_ms``, ``input_tokens``, ``output_tokens``, ``error_type``,
    ``error_code``), and the events ``started``, then ``finished`` or ``failed``, then ``route``
    when a model is chosen, sent to ``on_event``. ``on_event`` is a plain function called
    synchronously; an exception it raises propagates like any bug of the caller.

    Args:
        routing: The routing declaration.
        on_event: A function that receives every :data:`RoutingEvent`, or ``None``.

    Raises:
        RoutingConfigurationError: When ``routing`` is not a :class:`ModelRouting` (code
            ``invalid_routing``) or ``on_event`` is not callable (code ``on_event_not_callable``).

    Examples:
        >>> from contextwise import (
        ...     ChoiceQuestion,
        ...     Decision,
        ...     DecisionRequest,
        ...     ModelRouter,
        ...     ModelRouting,
        ...     RoutingContext,
        ... )
        >>> class Router:
        ...     name = "scripted"
        ...
        ...     async def request(self, request: DecisionRequest) -> dict[str, object]:
        ...         answer = {"choice": "deep", "confidence": 0.92}
        ...         return {"model": request.model, "answers": {"model": answer}}
        >>> routing = ModelRouting(
        ...     provider=Router(),
        ...     model="router-mini",
        ...     decision=Decision(
        ...         questions={
        ...             "model": ChoiceQuestion(
        ...                 instructions="Pick the model for the next step.",
        ...                 criteria={"fast": "Routine edits.", "deep": "Hard debugging."},
        ...             )
        ...         }
        ...     ),
        ...     question="model",
        ...     models={"fast": "small-model", "deep": "big-model"},
        ...     fallback="fast",
        ... )
        >>> outcome = ModelRouter(routing).route(RoutingContext(step=1, model="small-model"))
        >>> outcome.choice, outcome.model.name, outcome.reason
        ('deep', 'big-model', 'selected')
    """

    __slots__ = ("_questions", "on_event", "routing")

    routing: ModelRouting
    """The routing declaration."""

    on_event: EventHandler | None
    """The function that receives every event, or ``None``."""

    def __init__(self, routing: ModelRouting, on_event: EventHandler | None = None) -> None:
        if not isinstance(routing, ModelRouting):
            raise RoutingConfigurationError(
                "invalid_routing", field="routing", type_name=type(routing).__name__
            )
        if on_event is not None and not callable(on_event):
            raise RoutingConfigurationError(
                "on_event_not_callable", field="on_event", type_name=type(on_event).__name__
            )
        self.routing = routing
        self.on_event = on_event
        # The declaration is immutable: its questions are gathered once, not at every decision.
        questions = {routing.question: routing.routing_question}
        if routing.effort_question is not None and routing.effort_choice_question is not None:
            questions[routing.effort_question] = routing.effort_choice_question
        self._questions: Mapping[str, ChoiceQuestion] = questions

    def route(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step, from synchronous code.

        It behaves exactly like :meth:`aroute` and shares its implementation. An async provider
        or state function is awaited on a private event loop in a worker thread when an event
        loop is already running here, so this method also works inside Jupyter or an async web
        handler.

        Examples:
            >>> from contextwise import (
            ...     ChoiceQuestion,
            ...     Decision,
            ...     ModelRouter,
            ...     ModelRouting,
            ...     RoutingContext,
            ... )
            >>> class Unsure:
            ...     name = "unsure"
            ...
            ...     def request(self, request):
            ...         answer = {"choice": "deep", "confidence": 0.4}
            ...         return {"model": request.model, "answers": {"model": answer}}
            >>> question = ChoiceQuestion(
            ...     instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
            ... )
            >>> routing = ModelRouting(
            ...     provider=Unsure(),
            ...     model="router-mini",
            ...     decision=Decision(questions={"model": question}),
            ...     question="model",
            ...     models={"fast": "small-model", "deep": "big-model"},
            ...     fallback="fast",
            ... )
            >>> outcome = ModelRouter(routing).route(RoutingContext(step=4, model="big-model"))
            >>> outcome.model.name, outcome.reason, outcome.proposed
            ('small-model', 'confidence', 'deep')
        """
        return run_sync(self._core(context))

    async def aroute(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step.

        Args:
            context: The step number, the active model, the instructions, the messages after
                compaction and the tool specifications.

        Returns:
            The chosen candidate, the reason, the confidence, the usage and the effort to send.

        Raises:
            InvalidTypeError: When ``context`` is not a :class:`RoutingContext` (code
                ``not_an_instance``); nothing is sent.
            RoutingConfigurationError: When the state is not lossless JSON (nothing is sent).
            DecisionResponseError: When the provider's answer is malformed or missing.
            QuotaExceededError: When the provider's quota is exhausted, whatever ``on_error``.
            DecisionTimeoutError: When the provider times out and ``on_error`` is ``"fail"``.
            ProviderUnavailableError: When the provider is unavailable and ``on_error`` is
                ``"fail"``.

        Examples:
            >>> import asyncio
            >>> from contextwise import (
            ...     ChoiceQuestion,
            ...     Decision,
            ...     ModelRouter,
            ...     ModelRouting,
            ...     RoutingContext,
            ... )
            >>> class Down:
            ...     name = "down"
            ...
            ...     async def request(self, request):
            ...         raise ProviderUnavailableError("503 from upstream")
            >>> from contextwise import ProviderUnavailableError
            >>> question = ChoiceQuestion(
            ...     instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
            ... )
            >>> routing = ModelRouting(
            ...     provider=Down(),
            ...     model="router-mini",
            ...     decision=Decision(questions={"model": question}),
            ...     question="model",
            ...     models={"fast": "small-model", "deep": "big-model"},
            ...     fallback="fast",
            ... )
            >>> router = ModelRouter(routing)
            >>> outcome = asyncio.run(router.aroute(RoutingContext(step=1, model="small-model")))
            >>> outcome.model.name, outcome.reason
            ('small-model', 'unavailable')
        """
        return await run_async(self._core(context))

    def _core(self, context: RoutingContext) -> Effects[RouteOutcome]:
        require_instance(context, RoutingContext, "context", "RoutingContext")
        routing = self.routing
        emit = self.on_event
        step = context.step
        start = perf_counter()
        if emit is not None:
            emit(DecisionStartedEvent(step, routing.provider.name, routing.model, routing.question))
        try:
            outcome, effort_outcome = yield from self._decide(context)
        except GeneratorExit:
            raise
        except BaseException as error:  # noqa: BLE001 - reported, then re-raised or replaced
            return self._failed(step, error, start)
        if emit is not None:
            emit(
                DecisionFinishedEvent(
                    step,
                    routing.provider.name,
                    routing.model,
                    routing.question,
                    outcome.choice,
                    outcome.confidence,
                    outcome.duration_ms,
                    outcome.usage,
                )
            )
        choice = outcome.choice if outcome.reason == "selected" else routing.fallback
        # A low confidence in the model also drops the effort chosen with it.
        effort = effort_outcome if outcome.accepted else None
        return self._finish(step, choice, outcome.reason, outcome, start, effort=effort)

    def _failed(self, step: int, error: BaseException, start: float) -> RouteOutcome:
        """Report a failed decision; return the fallback's outcome or re-raise the error."""
        routing = self.routing
        elapsed_ms = (perf_counter() - start) * 1000.0
        fallback = (
            isinstance(error, Exception)
            and routing.on_error == "fallback"
            and is_provider_unavailable(error, routing.fallback_on)
        )
        if self.on_event is not None:
            self.on_event(
                DecisionFailedEvent(
                    step,
                    routing.provider.name,
                    routing.model,
                    routing.question,
                    error,
                    fallback,
                    elapsed_ms,
                )
            )
        if not fallback:
            self._log_failure(step, error, elapsed_ms)
            raise error
        return self._finish(step, routing.fallback, "unavailable", None, start, error=error)

    def _decide(
        self, context: RoutingContext
    ) -> Effects[tuple[ChoiceOutcome, ChoiceOutcome | None]]:
        """Ask the routing question, and the effort question when there is one, in one request."""
        routing = self.routing
        if routing.state is None:
            state: Any = default_state(context)
        else:
            state = yield from call(routing.state, context)
        outcomes = yield from choices_effects(
            routing.provider,
            routing.model,
            self._questions,
            state,
            routing.min_confidence,
            timeout=routing.timeout,
        )
        effort = None if routing.effort_question is None else outcomes[routing.effort_question]
        return outcomes[routing.question], effort

    def _finish(
        self,
        step: int,
        choice: str,
        reason: RouteReason,
        outcome: ChoiceOutcome | None,
        start: float,
        *,
        error: BaseException | None = None,
        effort: ChoiceOutcome | None = None,
    ) -> RouteOutcome:
        routing = self.routing
        spec = routing.models[choice]
        effort_sent = routing.effort_sent(choice)
        chosen = effort_sent
        if effort is not None and effort.accepted:
            chosen = clamp_effort(Effort(effort.choice), spec.supported_efforts)
        confidence = None if outcome is None else outcome.confidence
        usage = None if outcome is None else outcome.usage
        result = construct(
            RouteOutcome,
            {
                "step": step,
                "choice": choice,
                "model": spec,
                "reason": reason,
                "confidence": confidence,
                "usage": usage,
                "effort_sent": effort_sent,
                "effort": chosen,
                "proposed": None if outcome is None else outcome.choice,
            },
        )
        duration_ms = (perf_counter() - start) * 1000.0
        if self.on_event is not None:
            self.on_event(
                RouteEvent(step, choice, spec.name, reason, confidence, chosen, usage, duration_ms)
            )
        level = logging.WARNING if error is not None else logging.INFO
        if logger.isEnabledFor(level):
            self._log_route(level, result, outcome, duration_ms, error)
        return result

    def _log_route(
        self,
        level: int,
        result: RouteOutcome,
        outcome: ChoiceOutcome | None,
        duration_ms: float,
        error: BaseException | None,
    ) -> None:
        usage = result.usage
        extra = self._log_extra(result.step, duration_ms, error)
        extra.update(
            choice=result.choice,
            model=result.model.name,
            reason=result.reason,
            confidence=result.confidence,
            decision_ms=None if outcome is None else outcome.duration_ms,
            input_tokens=None if usage is None else usage.input_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
        )
        logger.log(
            level,
            "step %s routed to %s (%s, reason %s, confidence %s)",
            result.step,
            result.choice,
            result.model.name,
            result.reason,
            result.confidence,
            extra=extra,
        )

    def _log_failure(self, step: int, error: BaseException, duration_ms: float) -> None:
        cancelled = isinstance(error, asyncio.CancelledError)
        level = logging.INFO if cancelled else logging.WARNING
        if logger.isEnabledFor(level):
            logger.log(
                level,
                "step %s routing %s: %s: %s",
                step,
                "cancelled" if cancelled else "failed",
                type(error).__name__,
                error,
                extra=self._log_extra(step, duration_ms, error),
            )

    def _log_extra(
        self, step: int, duration_ms: float, error: BaseException | None
    ) -> dict[str, Any]:
        routing = self.routing
        return {
            "step": step,
            "provider": routing.provider.name,
            "router_model": routing.model,
            "question": routing.question,
            "duration_ms": duration_ms,
            "error_type": None if error is None else type(error).__name__,
            "error_code": error.code if isinstance(error, ContextwiseError) else None,
        }


def route_effects(router: ModelRouter, context: RoutingContext) -> Effects[RouteOutcome]:
    """The core of :meth:`ModelRouter.route` and :meth:`ModelRouter.aroute`, for any driver.

    ``prepare_step`` runs it inside its own core, so one step has one driver from end to end.
    """
    return router._core(context)
