"""Rule-based routing: ordered, deterministic rules pick the model, without a decision model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from time import perf_counter
from types import MappingProxyType

from contextwise._checks import require_callable, require_instance
from contextwise._translation import short_repr, short_text
from contextwise.counting import EstimateCounter, TokenCounter, as_token_counter
from contextwise.effort import Effort, EffortLevel, clamp_effort, is_effort
from contextwise.errors import (
    InvalidTypeError,
    InvalidValueError,
    RoutingConfigurationError,
    RoutingRuleError,
)
from contextwise.messages import message_text
from contextwise.routing._model import ModelSpec, RoutingContext
from contextwise.routing._outcome import (
    EventHandler,
    RouteOutcome,
    RouteReporter,
    RuleFailedEvent,
    check_sticky,
    hold,
)

RULES_PROVIDER = "rules"
"""The provider name that the log records of a :class:`RuleRouter` carry."""

RulePredicate = Callable[[RoutingContext], bool]
"""A plain function of the routing context that tells whether a rule applies."""


@dataclass(frozen=True, slots=True)
class RoutingRule:
    """One routing rule: when every condition it sets holds, the step runs on its model.

    A rule sets at least one condition: a minimum number of tokens in the context (the
    instructions and the messages, counted by the router's counter), a minimum step number, the
    presence or absence of tools, or a predicate ``when``. A predicate is a plain function of the
    :class:`RoutingContext` that returns a bool; it must be deterministic, since a rule router
    gives the same answer for the same step.

    Raises:
        RoutingConfigurationError: When the id or the model is blank (code ``blank_rule_id`` or
            ``blank_model_name``), the rule sets no condition (code ``rule_without_condition``),
            or ``when`` is not callable (code ``rule_not_callable``).
        InvalidTypeError: When ``min_tokens`` or ``min_step`` is not an integer (code
            ``not_a_number``) or ``has_tools`` or ``sticky`` is not a bool (code ``not_a_bool``).
        InvalidValueError: When ``min_tokens`` or ``min_step`` is negative (code
            ``negative_size``), or ``effort`` is not an effort level (code ``invalid_effort``).

    Examples:
        >>> from contextwise import RoutingRule
        >>> rule = RoutingRule(id="long-context", model="deep", min_tokens=50_000)
        >>> rule.id, rule.model, rule.effort
        ('long-context', 'deep', None)
    """

    id: str
    """The rule's id, unique in its router; the route's reason is ``rule:<id>``."""

    model: str
    """The label of the candidate model that runs the steps this rule matches."""

    min_tokens: int | None = None
    """The rule applies when the context holds at least this many tokens."""

    min_step: int | None = None
    """The rule applies from this step number on."""

    has_tools: bool | None = None
    """``True``: the rule applies when tools are offered; ``False``: when none are."""

    when: RulePredicate | None = None
    """A plain function of the routing context; the rule applies when it returns ``True``."""

    effort: EffortLevel | None = None
    """The effort of the steps this rule matches, clamped to the model's supported levels; the
    model's own effort when ``None``."""

    sticky: bool = True
    """Whether a sticky router may keep the previous call's model instead of this rule's lower
    one; ``False``: this rule's model and effort always run the steps it matches."""

    def __post_init__(self) -> None:
        for field, value in (("id", self.id), ("model", self.model)):
            if not isinstance(value, str) or not value.strip():
                code = "blank_rule_id" if field == "id" else "blank_model_name"
                raise RoutingConfigurationError(code, field=field, value=short_repr(value))
        for field in ("min_tokens", "min_step"):
            _check_count(getattr(self, field), f"{field}")
        if self.has_tools is not None and not isinstance(self.has_tools, bool):
            raise InvalidTypeError(
                "not_a_bool", name="has_tools", type_name=type(self.has_tools).__name__
            )
        if self.when is not None and not callable(self.when):
            raise RoutingConfigurationError(
                "rule_not_callable", field="when", rule=self.id, type_name=type(self.when).__name__
            )
        conditions = (self.min_tokens, self.min_step, self.has_tools, self.when)
        if all(condition is None for condition in conditions):
            raise RoutingConfigurationError("rule_without_condition", field="rules", rule=self.id)
        if self.effort is not None and not is_effort(self.effort):
            raise InvalidValueError(
                "invalid_effort",
                name="effort",
                value=short_text(self.effort),
                supported=[member.value for member in Effort],
            )
        if not isinstance(self.sticky, bool):
            raise InvalidTypeError(
                "not_a_bool", name="sticky", type_name=type(self.sticky).__name__
            )

    def matches(self, context: RoutingContext, tokens: Callable[[], int]) -> bool:
        """Tell whether the rule applies to a step.

        Args:
            context: The routing context of the step.
            tokens: A function that returns the number of tokens of the context; it is called
                only when the rule sets ``min_tokens``.

        Returns:
            ``True`` when every condition the rule sets holds.

        Raises:
            InvalidTypeError: When ``when`` returns something other than a bool (code
                ``not_a_bool``).
        """
        require_instance(context, RoutingContext, "context", "RoutingContext")
        require_callable(tokens, "tokens")
        if self.min_step is not None and context.step < self.min_step:
            return False
        if self.has_tools is not None and bool(context.tools) != self.has_tools:
            return False
        if self.min_tokens is not None and tokens() < self.min_tokens:
            return False
        if self.when is not None:
            answer = self.when(context)
            if not isinstance(answer, bool):
                if hasattr(answer, "close"):
                    answer.close()  # an unawaited coroutine: close it, rules are plain functions
                raise InvalidTypeError(
                    "not_a_bool", name=f"when ({self.id})", type_name=type(answer).__name__
                )
            return answer
        return True


def _check_count(value: object, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError("not_a_number", name=name, type_name=type(value).__name__)
    if value < 0:
        raise InvalidValueError("negative_size", name=name, value=value)


class RuleRouter:
    """Route each harness step with ordered, deterministic rules, without a decision model.

    The rules are tried in order and the first that applies picks the model, with the reason
    ``rule:<id>``; when none applies, the ``default`` model runs the step, with the reason
    ``default``. The outcome is a :class:`RouteOutcome` like :class:`ModelRouter`'s, with no
    confidence and no usage, and its ``effort`` is the rule's effort, or the model's own, clamped
    to the levels the model supports.

    Routing is observable as with :class:`ModelRouter`, with events of its own: ``route`` when a
    model is chosen, ``rule_failed`` when a rule raised, sent to ``on_event``; one record goes to
    the ``contextwise.routing`` logger, with the provider name ``rules`` and the ``rule`` that
    raised. A rule that raises is reported as a :class:`~contextwise.errors.RoutingRuleError`
    naming the rule (code ``rule_failed``), whose ``__cause__`` is the original error.

    With ``sticky=True`` the router keeps the previous call's model and effort (``choice`` and
    ``effort`` of the :class:`RoutingContext`, or the candidate named ``model``) unless the route
    escalates, a candidate later in ``models``' order or a higher effort, or the matching rule
    sets ``sticky=False``. A kept route has the reason ``sticky`` and names the label it replaced
    in ``routed``.

    Args:
        rules: The rules, in the order they are tried.
        default: The label of the model for the steps no rule matches; required.
        models: One candidate per label: a :class:`ModelSpec`, or a model name as a shorthand.
        counter: The token counter of the ``min_tokens`` conditions (or a tokenizer or counting
            function); the estimate counter when omitted.
        on_event: A function that receives every routing event, or ``None``.
        sticky: Whether to keep the previous call's model and effort unless the route escalates.

    Raises:
        RoutingConfigurationError: When ``default`` is missing (code ``missing_default``) or not
            a candidate (code ``unknown_fallback``), ``models`` is not a non-empty mapping of
            specs (codes ``models_not_mapping``, ``empty_models``, ``invalid_model_spec``), a
            rule is not a :class:`RoutingRule` (code ``invalid_rule``), two rules share an id
            (code ``duplicate_rule_id``), a rule names an unknown model (code
            ``unknown_rule_model``), ``on_event`` is not callable (code
            ``on_event_not_callable``), or ``sticky`` is not a bool (code ``sticky_not_bool``).

    Examples:
        >>> from contextwise import ModelSpec, RoutingContext, RoutingRule, RuleRouter
        >>> router = RuleRouter(
        ...     [RoutingRule(id="long", model="deep", min_tokens=1_000, effort="high")],
        ...     default="fast",
        ...     models={"fast": "small-model", "deep": ModelSpec(name="big-model")},
        ... )
        >>> outcome = router.route(RoutingContext(step=1, model="small-model"))
        >>> outcome.model.name, outcome.reason
        ('small-model', 'default')
        >>> long = [{"role": "user", "content": "x" * 8_000}]
        >>> outcome = router.route(RoutingContext(step=2, model="small-model", messages=long))
        >>> outcome.model.name, outcome.reason, outcome.effort
        ('big-model', 'rule:long', <Effort.HIGH: 'high'>)
    """

    __slots__ = ("_reporter", "counter", "default", "models", "rules", "sticky")

    rules: tuple[RoutingRule, ...]
    """The rules, in the order they are tried."""

    default: str
    """The label of the model for the steps no rule matches."""

    models: Mapping[str, ModelSpec]
    """The candidate models by label (read-only)."""

    counter: TokenCounter
    """The token counter of the ``min_tokens`` conditions."""

    sticky: bool
    """Whether the router keeps the previous call's model and effort unless the route
    escalates."""

    def __init__(
        self,
        rules: Sequence[RoutingRule],
        default: str | None = None,
        models: Mapping[str, ModelSpec | str] | None = None,
        *,
        counter: object | None = None,
        on_event: EventHandler | None = None,
        sticky: bool = False,
    ) -> None:
        specs = _candidate_specs(models)
        if default is None:
            raise RoutingConfigurationError("missing_default", field="default", known=list(specs))
        if not isinstance(default, str) or default not in specs:
            raise RoutingConfigurationError(
                "unknown_fallback", field="default", fallback=short_text(default), known=list(specs)
            )
        self.rules = _checked_rules(rules, specs)
        if on_event is not None and not callable(on_event):
            raise RoutingConfigurationError(
                "on_event_not_callable", field="on_event", type_name=type(on_event).__name__
            )
        self.default = default
        self.models = MappingProxyType(specs)
        self.counter = EstimateCounter() if counter is None else as_token_counter(counter)
        self.sticky = check_sticky(sticky)
        self._reporter = RouteReporter(on_event, {"provider": RULES_PROVIDER})

    @property
    def on_event(self) -> EventHandler | None:
        """The function that receives every event, or ``None``."""
        return self._reporter.on_event

    @classmethod
    def single(cls, model: ModelSpec | str, on_event: EventHandler | None = None) -> RuleRouter:
        """Return a router that runs every step on one model, with the reason ``default``.

        Args:
            model: The model, as a :class:`ModelSpec` or a model name; its label is its name.
            on_event: A function that receives every routing event, or ``None``.

        Returns:
            A rule router without rules whose default is the model.

        Raises:
            RoutingConfigurationError: When the model is neither a spec nor a non-blank name
                (code ``invalid_model_spec``).

        Examples:
            >>> from contextwise import ModelSpec, RoutingContext, RuleRouter
            >>> router = RuleRouter.single(ModelSpec(name="gpt-5", effort="low"))
            >>> outcome = router.route(RoutingContext(step=1, model="gpt-5"))
            >>> outcome.choice, outcome.reason, outcome.effort
            ('gpt-5', 'default', <Effort.LOW: 'low'>)
        """
        spec = _candidate_specs({"model": model})["model"]
        return cls((), default=spec.name, models={spec.name: spec}, on_event=on_event)

    def route(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step, from synchronous code.

        Rules are plain functions, so this method and :meth:`aroute` run the same code, inside
        or outside an event loop.

        Examples:
            >>> from contextwise import RoutingContext, RoutingRule, RuleRouter
            >>> router = RuleRouter(
            ...     [RoutingRule(id="tools", model="deep", has_tools=True)],
            ...     default="fast",
            ...     models={"fast": "small-model", "deep": "big-model"},
            ... )
            >>> tools = [{"type": "function", "function": {"name": "run_tests"}}]
            >>> router.route(RoutingContext(step=1, model="small-model", tools=tools)).reason
            'rule:tools'
        """
        return self._route(context)

    async def aroute(self, context: RoutingContext) -> RouteOutcome:
        """Choose the model for one harness step.

        Args:
            context: The step number, the active model, the instructions, the messages after
                compaction and the tool specifications.

        Returns:
            The chosen candidate, the reason (``rule:<id>``, ``default`` or ``sticky``) and the
            effort.

        Raises:
            RoutingRuleError: When a rule raises (code ``rule_failed``); the rule's own error is
                its ``__cause__``.
            InvalidTypeError: When ``context`` is not a :class:`RoutingContext` (code
                ``not_an_instance``).

        Examples:
            >>> from contextwise import RoutingContext, RoutingRule, RuleRouter
            >>> import asyncio
            >>> router = RuleRouter(
            ...     [RoutingRule(id="late", model="deep", min_step=10)],
            ...     default="fast",
            ...     models={"fast": "small-model", "deep": "big-model"},
            ... )
            >>> outcome = asyncio.run(router.aroute(RoutingContext(step=12, model="small-model")))
            >>> outcome.choice, outcome.reason
            ('deep', 'rule:late')
        """
        return self._route(context)

    def _route(self, context: RoutingContext) -> RouteOutcome:
        require_instance(context, RoutingContext, "context", "RoutingContext")
        start = perf_counter()
        measured: list[int] = []

        def tokens() -> int:
            if not measured:
                counted = self.counter.count(context.system) + sum(
                    self.counter.count(message_text(message)) for message in context.messages
                )
                measured.append(counted)
            return measured[0]

        for rule in self.rules:
            try:
                matched = rule.matches(context, tokens)
            except Exception as error:
                raise self._failed(context.step, rule, error, start) from error
            if matched:
                return self._finish(context, rule.model, f"rule:{rule.id}", rule, start)
        return self._finish(context, self.default, "default", None, start)

    def _failed(
        self, step: int, rule: RoutingRule, error: Exception, start: float
    ) -> RoutingRuleError:
        failure = RoutingRuleError(
            "rule_failed", rule=rule.id, step=step, error_type=type(error).__name__,
            detail=short_text(error) or None,
        )
        elapsed_ms = (perf_counter() - start) * 1000.0
        self._reporter.emit(RuleFailedEvent(step, rule.id, failure, elapsed_ms))
        self._reporter.failed(step, error, elapsed_ms, rule=rule.id)
        return failure

    def _finish(
        self,
        context: RoutingContext,
        choice: str,
        reason: str,
        rule: RoutingRule | None,
        start: float,
    ) -> RouteOutcome:
        spec = self.models[choice]
        effort = spec.effort_sent
        if rule is not None and rule.effort is not None:
            effort = clamp_effort(rule.effort, spec.supported_efforts)
        outcome = RouteOutcome(
            step=context.step,
            choice=choice,
            model=spec,
            reason=reason,
            confidence=None,
            usage=None,
            effort=effort,
        )
        if self.sticky and (rule is None or rule.sticky):
            outcome = hold(outcome, context, self.models)
        self._reporter.routed(outcome, (perf_counter() - start) * 1000.0)
        return outcome


def _candidate_specs(models: object) -> dict[str, ModelSpec]:
    if not isinstance(models, Mapping):
        raise RoutingConfigurationError(
            "models_not_mapping", field="models", type_name=type(models).__name__
        )
    if not models:
        raise RoutingConfigurationError("empty_models", field="models")
    specs: dict[str, ModelSpec] = {}
    for label, spec in models.items():
        if isinstance(spec, str) and spec.strip():
            spec = ModelSpec(name=spec)
        if not isinstance(label, str) or not isinstance(spec, ModelSpec):
            raise RoutingConfigurationError(
                "invalid_model_spec",
                field="models",
                label=short_text(label),
                value=short_repr(spec),
            )
        specs[label] = spec
    return specs


def _checked_rules(rules: object, specs: Mapping[str, ModelSpec]) -> tuple[RoutingRule, ...]:
    if isinstance(rules, str | bytes | Mapping) or not isinstance(rules, Sequence):
        raise InvalidTypeError("not_a_collection", name="rules", type_name=type(rules).__name__)
    seen: set[str] = set()
    for index, rule in enumerate(rules):
        if not isinstance(rule, RoutingRule):
            raise RoutingConfigurationError(
                "invalid_rule", field="rules", index=index, type_name=type(rule).__name__
            )
        if rule.id in seen:
            raise RoutingConfigurationError("duplicate_rule_id", field="rules", rule=rule.id)
        seen.add(rule.id)
        if rule.model not in specs:
            raise RoutingConfigurationError(
                "unknown_rule_model", field="rules", rule=rule.id, model=rule.model,
                known=list(specs),
            )
    return tuple(rules)
