"""What every router returns and reports: the outcome, the events, the log records, the protocol."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeAlias

from contextwise.accounting import Usage
from contextwise.effort import Effort
from contextwise.errors import ContextwiseError, RoutingConfigurationError
from contextwise.routing._model import ModelSpec, RoutingContext

LOGGER_NAME = "contextwise.routing"
"""The name of the logger that records every routing decision."""

logger = logging.getLogger(LOGGER_NAME)
# The usual library practice: records go nowhere until the application configures logging, instead
# of reaching the "last resort" handler that prints warnings to stderr.
logger.addHandler(logging.NullHandler())

RouteReason: TypeAlias = str
"""Why a model was chosen. A :class:`~contextwise.routing.ModelRouter` says ``selected`` (the
provider's confident choice), ``confidence`` (a low confidence, fallback) or ``unavailable`` (an
outage, fallback); a :class:`~contextwise.routing.RuleRouter` says ``rule:<id>`` (the first rule
that matched) or ``default``; a sticky router says ``sticky`` when it kept the previous call's
model and effort instead of a lower route."""


@dataclass(frozen=True, slots=True)
class RouteOutcome:
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
        ...     effort=None,
        ... )
        >>> outcome.model.name
        'big-model'
    """

    step: int
    """The harness step that was routed."""

    choice: str
    """The label of the chosen candidate: the provider's choice, the rule's, or the fallback."""

    model: ModelSpec
    """The chosen candidate model."""

    reason: RouteReason
    """Why this candidate: ``selected``, ``confidence``, ``unavailable``, ``rule:<id>``,
    ``default`` or ``sticky`` (see :data:`RouteReason`)."""

    confidence: float | None
    """The provider's confidence, or ``None`` when it did not answer (and for a rule router)."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    effort: Effort | None
    """The effort of this step, clamped to the chosen model's supported levels: the level the
    effort question chose, or the matching rule's, and otherwise the model's own."""

    proposed: str | None = None
    """The label the provider chose, kept even when a low confidence replaced it by the
    fallback; ``None`` when the provider did not answer."""

    routed: str | None = None
    """With ``sticky=True``, the label the router chose before it kept the previous call's model
    (the reason is then ``sticky``); ``None`` when nothing was kept."""


@dataclass(frozen=True, slots=True)
class DecisionStartedEvent:
    """Sent when a model router starts a decision, before the state is built.

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
class RuleFailedEvent:
    """Sent when a rule of a :class:`~contextwise.routing.RuleRouter` raised; nothing is routed.

    Examples:
        >>> from contextwise import RoutingRuleError, RuleFailedEvent
        >>> error = RoutingRuleError(
        ...     "rule_failed", rule="late", step=3, error_type="KeyError", detail=None
        ... )
        >>> event = RuleFailedEvent(step=3, rule="late", error=error, duration_ms=0.2)
        >>> event.kind, event.rule
        ('rule_failed', 'late')
    """

    step: int
    """The harness step being routed."""

    rule: str
    """The id of the rule that raised."""

    error: BaseException
    """The :class:`~contextwise.errors.RoutingRuleError` that the router raises; the rule's own
    error is its ``__cause__``."""

    duration_ms: float
    """The time from the start of the routing to the failure, in milliseconds."""

    kind: Literal["rule_failed"] = field(default="rule_failed", init=False)
    """The event kind, always ``rule_failed``."""


@dataclass(frozen=True, slots=True)
class RouteEvent:
    """Sent last by every router, when it has chosen a model for the step.

    Examples:
        >>> from contextwise import RouteEvent
        >>> event = RouteEvent(
        ...     step=3, choice="fast", model="small", reason="unavailable", confidence=None,
        ...     effort=None, usage=None, duration_ms=12.3,
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
    """Why this model was chosen (see :data:`RouteReason`)."""

    confidence: float | None
    """The provider's confidence, or ``None`` when it did not answer."""

    effort: Effort | None
    """The effort that will be sent to the chosen model."""

    usage: Usage | None
    """The tokens the decision model spent, when the provider reports them."""

    duration_ms: float
    """The whole routing time, state building included, in milliseconds."""

    kind: Literal["route"] = field(default="route", init=False)
    """The event kind, always ``route``."""


RoutingEvent: TypeAlias = (
    DecisionStartedEvent
    | DecisionFinishedEvent
    | DecisionFailedEvent
    | RuleFailedEvent
    | RouteEvent
)
"""Any event a router sends to ``on_event``; match on its ``kind``."""

EventHandler: TypeAlias = Callable[[RoutingEvent], object]
"""A plain function that receives the router's events."""


class Router(Protocol):
    """What :func:`~contextwise.prepare_step` and the integrations need from a router.

    :class:`~contextwise.routing.ModelRouter` and :class:`~contextwise.routing.RuleRouter` are
    routers; so is any class of yours with these members, without inheriting from anything.

    Examples:
        >>> from contextwise import ModelSpec, RouteOutcome, Router, RoutingContext
        >>> class Always:
        ...     models = {"fast": ModelSpec(name="small-model")}
        ...     default = "fast"
        ...
        ...     def route(self, context: RoutingContext) -> RouteOutcome:
        ...         model = self.models["fast"]
        ...         return RouteOutcome(
        ...             step=context.step, choice="fast", model=model, reason="always",
        ...             confidence=None, usage=None, effort=model.effort_sent,
        ...         )
        ...
        ...     async def aroute(self, context: RoutingContext) -> RouteOutcome:
        ...         return self.route(context)
        >>> router: Router = Always()
        >>> router.route(RoutingContext(step=1, model="small-model")).reason
        'always'
    """

    @property
    def models(self) -> Mapping[str, ModelSpec]:
        """The candidate models by label, in order: a later one counts as an escalation."""
        ...

    @property
    def default(self) -> str:
        """The label of the model that runs before any route: the first call's model."""
        ...

    def route(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step, from synchronous code."""
        ...

    async def aroute(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step, from asynchronous code."""
        ...


def check_router(router: object) -> Router:
    """Check that a value can route: ``route`` and ``aroute`` callables, a ``models`` mapping and
    a ``default`` label, as :class:`Router` says (the protocol is not runtime-checkable).

    Raises:
        RoutingConfigurationError: When it cannot (code ``invalid_router``).
    """
    if not (
        all(callable(getattr(router, name, None)) for name in ("route", "aroute"))
        and isinstance(getattr(router, "models", None), Mapping)
        and isinstance(getattr(router, "default", None), str)
    ):
        raise RoutingConfigurationError(
            "invalid_router", field="router", type_name=type(router).__name__
        )
    return router  # type: ignore[return-value]


def check_sticky(sticky: object) -> bool:
    """Check a router's ``sticky`` flag: a bool."""
    if not isinstance(sticky, bool):
        raise RoutingConfigurationError(
            "sticky_not_bool", field="sticky", type_name=type(sticky).__name__
        )
    return sticky


def previous_choice(context: RoutingContext, models: Mapping[str, ModelSpec]) -> str | None:
    """The label of the previous call's model: the context's ``choice``, else the first candidate
    with the context's model name; ``None`` when neither names a candidate."""
    if context.choice is not None:
        return context.choice if context.choice in models else None
    for label, spec in models.items():
        if spec.name == context.model:
            return label
    return None


def hold(
    outcome: RouteOutcome, context: RoutingContext, models: Mapping[str, ModelSpec]
) -> RouteOutcome:
    """The route a sticky router returns: the previous call's model and effort, unless the
    outcome escalates (a candidate later in ``models``' order, or a higher effort)."""
    before = previous_choice(context, models)
    if before is None:
        return outcome
    effort = models[before].effort_sent if context.effort is None else Effort(context.effort)
    if before == outcome.choice and effort == outcome.effort:
        return outcome
    labels = list(models)
    if labels.index(outcome.choice) > labels.index(before):
        return outcome
    if outcome.effort is not None and (effort is None or outcome.effort > effort):
        return outcome
    return replace(
        outcome, choice=before, model=models[before], reason="sticky", effort=effort,
        routed=outcome.choice,
    )


class RouteReporter:
    """The events and log records of one router: the same records for every kind of router.

    ``identity`` holds the fields every log record of the router carries (``provider`` always).
    """

    __slots__ = ("identity", "on_event")

    def __init__(self, on_event: EventHandler | None, identity: Mapping[str, Any]) -> None:
        self.on_event = on_event
        self.identity = dict(identity)

    def emit(self, event: RoutingEvent) -> None:
        """Send an event to ``on_event``, when there is one."""
        if self.on_event is not None:
            self.on_event(event)

    def routed(
        self,
        outcome: RouteOutcome,
        duration_ms: float,
        *,
        error: BaseException | None = None,
        decision_ms: float | None = None,
    ) -> None:
        """Report a chosen model: the ``route`` event, then one record (``WARNING`` when a
        fallback replaced a failed decision, ``INFO`` otherwise)."""
        self.emit(
            RouteEvent(
                outcome.step,
                outcome.choice,
                outcome.model.name,
                outcome.reason,
                outcome.confidence,
                outcome.effort,
                outcome.usage,
                duration_ms,
            )
        )
        level = logging.WARNING if error is not None else logging.INFO
        if not logger.isEnabledFor(level):
            return
        usage = outcome.usage
        extra = self.extra(outcome.step, duration_ms, error)
        extra.update(
            choice=outcome.choice,
            model=outcome.model.name,
            reason=outcome.reason,
            confidence=outcome.confidence,
            effort=None if outcome.effort is None else outcome.effort.value,
            decision_ms=decision_ms,
            input_tokens=None if usage is None else usage.input_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
        )
        logger.log(
            level,
            "step %s routed to %s (%s, reason %s, confidence %s)",
            outcome.step,
            outcome.choice,
            outcome.model.name,
            outcome.reason,
            outcome.confidence,
            extra=extra,
        )

    def failed(self, step: int, error: BaseException, duration_ms: float, **more: Any) -> None:
        """Record a failure that propagates: ``INFO`` for a cancellation, ``WARNING`` otherwise."""
        cancelled = isinstance(error, asyncio.CancelledError)
        level = logging.INFO if cancelled else logging.WARNING
        if logger.isEnabledFor(level):
            extra = self.extra(step, duration_ms, error)
            extra.update(more)
            logger.log(
                level,
                "step %s routing %s: %s: %s",
                step,
                "cancelled" if cancelled else "failed",
                type(error).__name__,
                error,
                extra=extra,
            )

    def extra(self, step: int, duration_ms: float, error: BaseException | None) -> dict[str, Any]:
        """The ``extra`` attributes every record carries."""
        return {
            "step": step,
            **self.identity,
            "duration_ms": duration_ms,
            "error_type": None if error is None else type(error).__name__,
            "error_code": error.code if isinstance(error, ContextwiseError) else None,
        }
