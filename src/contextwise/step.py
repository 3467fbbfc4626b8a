"""One harness step: compaction, then routing, then the budget check, in one call.

Before each model call an agent harness compacts its context, picks the model that runs the step
and checks that the context fits that model. :func:`prepare_step` does the three in that order and
returns everything the harness needs to make the call and to log it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Unpack

from contextwise._checks import require_instance
from contextwise._effects import Effects, call_faces, run_async, run_sync
from contextwise._translation import short_text
from contextwise.budget import BudgetPlan, BudgetSegment, ContextBudget
from contextwise.counting import EstimateCounter
from contextwise.effort import Effort, EffortLevel
from contextwise.errors import RoutingConfigurationError
from contextwise.messages import ChatMessage
from contextwise.policy import (
    ContextPolicy,
    ContextProcessingReport,
    ContextResult,
    Fragment,
    MessagesFragment,
    PolicyRunner,
    RemovedItem,
    RunnerOptions,
    TextFragment,
)
from contextwise.policy._api import as_runner, measure_of, runner_core
from contextwise.routing import (
    ModelSpec,
    RouteOutcome,
    Router,
    RoutingContext,
    RuleRouter,
    provider_options,
)
from contextwise.routing._api import check_router


@dataclass(frozen=True, slots=True)
class PreparedStep:
    """Everything one harness step needs: the context to send, the model, and how both were chosen.

    :func:`prepare_step` returns it. ``messages``, ``model`` and ``effort`` are what the harness
    sends to its model provider; the report, the removed items, the route and the plan are for
    archives and logs.

    Examples:
        >>> from contextwise import (
        ...     ChoiceQuestion, ContextPolicy, Decision, MessagesFragment,
        ...     ModelRouter, ModelRouting, ModelSpec, prepare_step,
        ... )
        >>> class Sure:
        ...     name = "sure"
        ...
        ...     def request(self, request):
        ...         answer = {"choice": "fast", "confidence": 1.0}
        ...         return {"model": request.model, "answers": {"model": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
        ... )
        >>> routing = ModelRouting(
        ...     provider=Sure(),
        ...     model="router-mini",
        ...     decision=Decision(questions={"model": question}),
        ...     question="model",
        ...     models={
        ...         "fast": ModelSpec(name="small", window=8_000, effort="low"),
        ...         "deep": ModelSpec(name="large", window=64_000),
        ...     },
        ...     fallback="fast",
        ... )
        >>> prepared = prepare_step(
        ...     ContextPolicy(mode="reduce"),
        ...     [MessagesFragment("history", messages=[{"role": "user", "content": "Hi"}])],
        ...     router=ModelRouter(routing),
        ...     step=1,
        ... )
        >>> prepared.model.name, prepared.effort, prepared.messages
        ('small', <Effort.LOW: 'low'>, [{'role': 'user', 'content': 'Hi'}])
    """

    fragments: tuple[Fragment, ...]
    """The fragments after compaction, in input order: the context to send."""

    report: ContextProcessingReport
    """The policy's report of the compaction that produced ``fragments``."""

    removed: dict[str, list[RemovedItem]]
    """For each fragment id, the messages or text spans the compaction took out, to archive."""

    route: RouteOutcome
    """The routing decision: the chosen model, why, and the effort to send."""

    budget: ContextBudget
    """The chosen model's context budget."""

    plan: BudgetPlan
    """The budget check of ``fragments`` against ``budget``: one required segment per fragment."""

    recompacted: bool
    """Whether the policy ran a second time, for the chosen model's smaller context budget."""

    @property
    def model(self) -> ModelSpec:
        """The chosen model, as ``route.model``."""
        return self.route.model

    @property
    def effort(self) -> Effort | None:
        """The effort of this step for the chosen model, as ``route.effort``."""
        return self.route.effort

    @property
    def messages(self) -> list[ChatMessage]:
        """The messages to send, in fragment order: the messages of each message fragment, and
        each text fragment as one message of its ``role`` (``user`` by default)."""
        messages: list[ChatMessage] = []
        for fragment in self.fragments:
            if isinstance(fragment, MessagesFragment):
                messages.extend(fragment.messages)
            else:
                messages.append({"role": fragment.role, "content": fragment.text})
        return messages

    def request_options(self) -> dict[str, Any]:
        """Return the provider SDK's keyword arguments for the step's model and effort.

        They are :func:`~contextwise.provider_options` of ``model`` and ``effort``: the model
        name, the output limit and the reasoning or thinking parameters. The budget's reasoning
        reserve is the thinking budget of the same effort, so what is sent and what is reserved
        agree.

        Returns:
            A new dictionary to pass to the provider SDK's call with the messages.

        Raises:
            RoutingConfigurationError: When the model declares no ``api`` (code
                ``missing_api``), or the Anthropic API lacks an output limit (code
                ``missing_output_limit``).

        Examples:
            >>> from contextwise import ContextPolicy, MessagesFragment, ModelSpec, prepare_step
            >>> prepared = prepare_step(
            ...     ContextPolicy(mode="reduce"),
            ...     [MessagesFragment("history", messages=[{"role": "user", "content": "Hi"}])],
            ...     model=ModelSpec(
            ...         name="gpt-5", api="openai-chat", effort="low", window=128_000
            ...     ),
            ...     step=1,
            ... )
            >>> prepared.request_options()
            {'model': 'gpt-5', 'reasoning_effort': 'low'}
            >>> prepared.budget.reasoning
            1024
        """
        return provider_options(self.model, self.effort)

    def fragment(self, fragment_id: str) -> Fragment:
        """Return the fragment with an id.

        Args:
            fragment_id: The id of the fragment.

        Returns:
            The fragment after compaction.

        Raises:
            InvalidValueError: When no fragment has that id (code ``fragment_not_found``).
        """
        return ContextResult(self.fragments, self.report, self.removed).fragment(fragment_id)


def model_budget(
    spec: ModelSpec,
    *,
    window: int | None = None,
    output: int = 0,
    reasoning: int = 0,
    safety: int | None = None,
) -> ContextBudget:
    """Build a model's context budget from its spec, with defaults for what the spec leaves out.

    The spec's ``window`` wins over the ``window`` argument, and its ``max_output_tokens`` over the
    ``output`` argument.

    Args:
        spec: The model.
        window: The context window of models whose spec declares none.
        output: The output reserve of models whose spec declares no ``max_output_tokens``.
        reasoning: The reasoning reserve.
        safety: The safety margin; 2 percent of the window when omitted.

    Returns:
        The model's context budget.

    Raises:
        RoutingConfigurationError: When neither the spec nor ``window`` gives a window (code
            ``missing_window``).
        ContextOverflowError: When the reserves exceed the window.
        InvalidTypeError: When ``spec`` is not a :class:`ModelSpec` (code ``not_an_instance``).

    Examples:
        >>> from contextwise import ModelSpec, model_budget
        >>> spec = ModelSpec(name="big", window=200_000, max_output_tokens=16_000)
        >>> model_budget(spec, reasoning=8_000).context_budget()
        172000
    """
    require_instance(spec, ModelSpec, "spec", "ModelSpec")
    size = spec.window if spec.window is not None else window
    if size is None:
        raise RoutingConfigurationError("missing_window", field="window", model=spec.name)
    reserve = spec.max_output_tokens if spec.max_output_tokens is not None else output
    return ContextBudget(size, reserve, reasoning, safety)


class StepOptions(RunnerOptions, total=False):
    """The options of one harness step besides its number, each of which may be omitted: the
    model (``router`` or ``model``), what the router sees, and the budget of a model whose spec
    leaves it out; the runner options (:class:`~contextwise.RunnerOptions`) come with them.

    :func:`prepare_step` and :func:`aprepare_step` take them as keyword arguments. Omitted,
    ``system`` is empty, ``tools`` and ``pinned`` hold nothing, and ``output`` and
    ``reasoning`` are 0.
    """

    router: Router | None
    """The router that picks the model: a :class:`~contextwise.routing.ModelRouter`, a
    :class:`~contextwise.routing.RuleRouter` or any :class:`~contextwise.Router`; its
    ``on_event`` receives the routing events. Give either ``router`` or ``model``."""

    model: ModelSpec | str | None
    """The one model that runs every step, instead of a router; the route then has the reason
    ``default``."""

    active: str | None
    """The label of the model that ran the previous step; the router's ``default`` when omitted,
    for the first step. The router sees it as the context's ``choice`` (what a sticky router
    keeps)."""

    active_effort: EffortLevel | None
    """The effort the previous step was sent (its ``PreparedStep.effort``), or ``None`` for the
    active model's own; the router sees it as the context's ``effort``, and the first compaction
    reserves its thinking budget."""

    system: str
    """The conversation model's instructions, shown to the decision model."""

    tools: Sequence[Mapping[str, Any]]
    """The tool specifications offered to the conversation model, shown to the decision model."""

    pinned: Sequence[str | Mapping[str, Any]]
    """The parts of the prompt besides the fragments, measured with them and never removed: a
    text (a system prompt, instructions), a message (a mapping with a ``role``), or a tool or
    schema definition (any other mapping, measured by its canonical JSON)."""

    window: int | None
    """The context window of models whose spec declares none."""

    output: int
    """The output reserve of models whose spec declares no ``max_output_tokens``."""

    reasoning: int
    """The reasoning reserve of a model run without an effort. With an effort, the reserve is
    that effort's thinking budget (:meth:`ModelSpec.thinking_budget`), the one
    :meth:`PreparedStep.request_options` sends."""


_STEP_KEYS: Final = frozenset(StepOptions.__annotations__) - frozenset(
    RunnerOptions.__annotations__
)
"""The step's own options; the others are the runner's."""


def prepare_step(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    *,
    step: int,
    **options: Unpack[StepOptions],
) -> PreparedStep:
    """Prepare one harness step: compact the context, route the step, check the budget.

    It behaves exactly like :func:`aprepare_step` and shares its implementation. Async
    compressors, apps and providers are awaited on a private event loop in a worker thread when
    an event loop is already running here, so this function also works inside Jupyter or an async
    web handler.

    Examples:
        >>> from contextwise import prepare_step
        >>> from contextwise import (
        ...     ChoiceQuestion, ContextPolicy, Decision, MessagesFragment,
        ...     ModelRouter, ModelRouting, ModelSpec,
        ... )
        >>> class Router:
        ...     name = "router"
        ...
        ...     def request(self, request):
        ...         answer = {"choice": "deep", "confidence": 0.9}
        ...         return {"model": request.model, "answers": {"model": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
        ... )
        >>> routing = ModelRouting(
        ...     provider=Router(),
        ...     model="router-mini",
        ...     decision=Decision(questions={"model": question}),
        ...     question="model",
        ...     models={
        ...         "fast": ModelSpec(name="small", window=8_000),
        ...         "deep": ModelSpec(name="large", window=64_000),
        ...     },
        ...     fallback="fast",
        ... )
        >>> history = [{"role": "user", "content": "Fix the bug."}]
        >>> prepared = prepare_step(
        ...     ContextPolicy(mode="reduce"),
        ...     [MessagesFragment("history", messages=history)],
        ...     router=ModelRouter(routing),
        ...     step=1,
        ...     output=1_000,
        ... )
        >>> prepared.model.name, prepared.plan.used, prepared.budget.context_budget()
        ('large', 4, 61720)
    """
    return run_sync(_core(*_step_arguments(policy, fragments, step, options)))


async def aprepare_step(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    *,
    step: int,
    **options: Unpack[StepOptions],
) -> PreparedStep:
    """Prepare one harness step: compact the context, route the step, check the budget.

    In this order:

    1. the policy processes the fragments with the context budget of the previously active model
       (``active``);
    2. the router picks the model for the step from the compacted messages (all the messages of
       the fragments that hold messages, in input order), ``system`` and ``tools``;
    3. the compacted fragments are checked against the chosen model's context budget, one
       required segment per fragment. When they do not fit and the chosen model's budget is
       smaller than the active one's, the policy runs again on the original fragments with the
       smaller budget (``recompacted`` is then ``True``); if they still do not fit,
       :class:`~contextwise.errors.ContextOverflowError` names the fragments and the shortfall.

    The runner options (or those of the runner given) serve the whole step: the counter (the
    estimate counter when there is none) and the part estimate measure the budget check too, and
    a ``budget`` caps every model's budget (the policy runs with the smaller of the two). Token
    counts use the counter the same way as the policy: a text through the counter, a list of
    messages as the sum of its messages' texts. What the prompt holds besides the fragments (the
    instructions, the tool specifications) goes in ``pinned``: it counts against the policy's
    triggers and targets and the budget, and no step removes it.

    The example of :func:`prepare_step` shows one step; the guide page "One harness step" runs a
    full harness loop.

    Args:
        policy: The policy's runner, or the context policy (or a mapping in the shape of a
            policy file) to bind with ``options``. The step gives the runner each model's budget
            (:meth:`~contextwise.policy.PolicyRunner.replace`), and the estimate counter when it
            has no counter.
        fragments: The fragments of the context before compaction.
        step: The number of the harness step.

    Returns:
        The compacted fragments, the policy's report, what was removed, the route outcome, the
        chosen model's budget and the budget plan.

    Raises:
        RoutingConfigurationError: When both or neither of ``router`` and ``model`` are given
            (code ``router_or_model``), ``router`` is not a router (code ``invalid_router``),
            ``active`` is not a candidate (code ``unknown_active_model``), a model has no window
            (code ``missing_window``), or the routing state is not lossless JSON.
        RoutingRuleError: When a rule of a rule router raises.
        ContextOverflowError: When the compacted context does not fit the chosen model.
        PolicyConfigurationError: When the policy does not match the fragments or what is
            supplied.
        DecisionResponseError: When the decision provider's answer is malformed.
        QuotaExceededError: When the decision provider's quota is exhausted.
        InvalidValueError: When ``active_effort`` is not an effort level (code
            ``invalid_effort``).

    Examples:
        >>> from contextwise import aprepare_step
        >>> import asyncio
        >>> from contextwise import (
        ...     ChoiceQuestion, ContextPolicy, Decision, MessagesFragment,
        ...     ModelRouter, ModelRouting, ModelSpec,
        ... )
        >>> class Router:
        ...     name = "router"
        ...
        ...     async def request(self, request):
        ...         answer = {"choice": "deep", "confidence": 0.5}
        ...         return {"model": request.model, "answers": {"model": answer}}
        >>> question = ChoiceQuestion(
        ...     instructions="Pick.", criteria={"fast": "Routine.", "deep": "Hard."}
        ... )
        >>> routing = ModelRouting(
        ...     provider=Router(),
        ...     model="router-mini",
        ...     decision=Decision(questions={"model": question}),
        ...     question="model",
        ...     models={
        ...         "fast": ModelSpec(name="small", window=8_000),
        ...         "deep": ModelSpec(name="large", window=64_000),
        ...     },
        ...     fallback="fast",
        ... )
        >>> prepared = asyncio.run(aprepare_step(
        ...     ContextPolicy(mode="reduce"),
        ...     [MessagesFragment("history", [{"role": "user", "content": "Fix the bug."}])],
        ...     router=ModelRouter(routing),
        ...     step=1,
        ... ))
        >>> prepared.model.name, prepared.route.reason
        ('small', 'confidence')
    """
    return await run_async(_core(*_step_arguments(policy, fragments, step, options)))


def _step_arguments(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    step: int,
    options: Mapping[str, Any],
) -> tuple[PolicyRunner, Sequence[Fragment | Mapping[str, Any]], _StepSetup]:
    """What :func:`_core` takes, from the arguments of either face: the step's own options are
    taken out, and the others bind the runner."""
    own = {key: value for key, value in options.items() if key in _STEP_KEYS}
    runner = as_runner(
        policy,
        {key: value for key, value in options.items() if key not in _STEP_KEYS},
        defaults=_STEP_DEFAULTS,
        can_idle=True,
    )
    return (
        runner,
        fragments,
        _StepSetup(
            _step_router(own.get("router"), own.get("model")),
            step,
            own.get("active"),
            own.get("system", ""),
            own.get("tools", ()),
            own.get("window"),
            own.get("output", 0),
            own.get("reasoning", 0),
            active_effort=own.get("active_effort"),
            pinned=tuple(own.get("pinned", ())),
        ),
    )


_STEP_DEFAULTS: Mapping[str, Any] = {"counter": EstimateCounter()}
"""A step counts tokens for its budget check: the estimate counter unless told otherwise."""


@dataclass(frozen=True, slots=True)
class _StepSetup:
    """What one step needs besides the policy, the fragments and the policy's functions."""

    router: Router
    step: int
    active: str | None
    system: str
    tools: Sequence[Mapping[str, Any]]
    window: int | None
    output: int
    reasoning: int
    active_effort: EffortLevel | None = None
    pinned: Sequence[str | Mapping[str, Any]] = ()

    def budget(self, spec: ModelSpec, effort: EffortLevel | None) -> ContextBudget:
        """A model's context budget with this step's defaults; an effort reserves its thinking."""
        reasoning = self.reasoning if effort is None else spec.thinking_budget(effort)
        return model_budget(spec, window=self.window, output=self.output, reasoning=reasoning)

    def route(self, context: RoutingContext) -> Effects[RouteOutcome]:
        """Route the step: the router's ``route``, or its ``aroute`` under the async driver."""
        router = self.router
        outcome: RouteOutcome = yield from call_faces(router.route, router.aroute, context)
        return outcome


_ESTIMATE: Final = EstimateCounter()
"""The counter of a step whose runner has none: one instance, so that the runner derived with it
is reused from step to step."""


def _step_router(router: Router | None, model: ModelSpec | str | None) -> Router:
    """The step's router: the one given, or a single-model router for ``model``."""
    if (router is None) == (model is None):
        raise RoutingConfigurationError("router_or_model", field="router")
    if router is None:
        assert model is not None
        return RuleRouter.single(model)
    return check_router(router)


def _core(
    runner: PolicyRunner,
    fragments: Sequence[Fragment | Mapping[str, Any]],
    options: _StepSetup,
) -> Effects[PreparedStep]:
    """The core of :func:`prepare_step` and :func:`aprepare_step`, for any driver."""
    models = options.router.models
    label = options.router.default if options.active is None else options.active
    if not isinstance(label, str) or label not in models:
        raise RoutingConfigurationError(
            "unknown_active_model", field="active", model=short_text(label), known=list(models)
        )
    if runner.counter is None:
        runner = runner.replace(counter=_ESTIMATE)
    cap = runner.options.get("budget")
    active_spec = models[label]
    active_effort = options.active_effort
    if active_effort is None:
        active_effort = active_spec.effort_sent
    active_budget = options.budget(active_spec, active_effort)
    result: ContextResult = yield from runner_core(
        runner.replace(budget=_capped(active_budget, cap)), fragments, pinned=options.pinned
    )
    context = RoutingContext(
        step=options.step,
        model=active_spec.name,
        system=options.system,
        messages=_messages(result.fragments),
        tools=options.tools,
        choice=options.active,
        effort=options.active_effort,
    )
    route = yield from options.route(context)
    budget = options.budget(route.model, route.effort)
    pinned_tokens = result.report.pinned_tokens or 0
    segments = _segments(result.fragments, runner, pinned_tokens)
    recompacted = False
    if (
        sum(segment.tokens for segment in segments) > budget.context_budget()
        and budget.context_budget() < active_budget.context_budget()
    ):
        result = yield from runner_core(
            runner.replace(budget=_capped(budget, cap)), fragments, pinned=options.pinned
        )
        segments = _segments(result.fragments, runner, pinned_tokens)
        recompacted = True
    return PreparedStep(
        fragments=result.fragments,
        report=result.report,
        removed=result.removed,
        route=route,
        budget=budget,
        plan=budget.plan(segments),
        recompacted=recompacted,
    )


def _capped(budget: ContextBudget, cap: ContextBudget | None) -> ContextBudget:
    """The budget the policy runs with: the model's, or the bound one when it is smaller."""
    if cap is not None and cap.context_budget() < budget.context_budget():
        return cap
    return budget


def _messages(fragments: Sequence[Fragment]) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for fragment in fragments:
        if isinstance(fragment, MessagesFragment):
            messages.extend(fragment.messages)
    return messages


_PINNED_SEGMENT = "pinned"
"""The budget segment of the pinned parts, when a step has some."""


def _segments(
    fragments: Sequence[Fragment], runner: PolicyRunner, pinned: int = 0
) -> list[BudgetSegment]:
    measure = measure_of(runner)
    segments: list[BudgetSegment] = []
    if pinned:
        segments.append(BudgetSegment(_PINNED_SEGMENT, pinned))
    for fragment in fragments:
        if isinstance(fragment, TextFragment):
            tokens = measure.text_tokens(fragment.text)
        else:
            tokens = sum(measure.one_message_tokens(message) for message in fragment.messages)
        segments.append(BudgetSegment(fragment.id, tokens))
    return segments
