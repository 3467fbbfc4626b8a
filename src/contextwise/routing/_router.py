"""The model router: one routing decision per harness step, observable, with a safe fallback."""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any

from contextwise._checks import require_instance
from contextwise._effects import Effects, call, run_async, run_sync
from contextwise.decision import ChoiceOutcome, ChoiceQuestion, is_provider_unavailable
from contextwise.decision._api import choices_effects
from contextwise.effort import Effort, clamp_effort
from contextwise.errors import ContextwiseError, RoutingConfigurationError
from contextwise.routing._model import ModelRouting, ModelSpec, RoutingContext
from contextwise.routing._outcome import (
    DecisionFailedEvent,
    DecisionFinishedEvent,
    DecisionStartedEvent,
    EventHandler,
    RouteOutcome,
    RouteReason,
    RouteReporter,
    check_sticky,
    hold,
)
from contextwise.shapes import plain_message

REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
"""The content block and item types that the default state leaves out."""

REASONING_MESSAGE_KEYS = frozenset(
    {"reasoning", "reasoning_content", "reasoning_details", "thinking", "thinking_blocks"}
)
"""The message keys holding reasoning text that the default state leaves out."""


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
    ``model``, ``reason``, ``confidence``, ``effort``, ``provider``, ``router_model``,
    ``question``, ``duration_ms``, ``decision_ms``, ``input_tokens``, ``output_tokens``,
    ``error_type``, ``error_code``), and the events ``started``, then ``finished`` or ``failed``,
    then ``route`` when a model is chosen, sent to ``on_event``. ``on_event`` is a plain function
    called synchronously; an exception it raises propagates like any bug of the caller.

    A model switch, and on Anthropic a change of thinking settings, costs the prompt cache. With
    ``sticky=True`` the router keeps the previous call's model and effort (``choice`` and
    ``effort`` of the :class:`RoutingContext`, or the candidate named ``model``) unless the route
    escalates: a candidate later in ``models``' order, or a higher effort. A kept route has the
    reason ``sticky`` and names the label it replaced in ``routed``.

    Args:
        routing: The routing declaration.
        on_event: A function that receives every :data:`RoutingEvent`, or ``None``.
        sticky: Whether to keep the previous call's model and effort unless the route escalates.

    Raises:
        RoutingConfigurationError: When ``routing`` is not a :class:`ModelRouting` (code
            ``invalid_routing``), ``on_event`` is not callable (code ``on_event_not_callable``)
            or ``sticky`` is not a bool (code ``sticky_not_bool``).

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

    __slots__ = ("_questions", "_reporter", "routing", "sticky")

    routing: ModelRouting
    """The routing declaration."""

    sticky: bool
    """Whether the router keeps the previous call's model and effort unless the route
    escalates."""

    def __init__(
        self, routing: ModelRouting, on_event: EventHandler | None = None, *, sticky: bool = False
    ) -> None:
        if not isinstance(routing, ModelRouting):
            raise RoutingConfigurationError(
                "invalid_routing", field="routing", type_name=type(routing).__name__
            )
        if on_event is not None and not callable(on_event):
            raise RoutingConfigurationError(
                "on_event_not_callable", field="on_event", type_name=type(on_event).__name__
            )
        self.routing = routing
        self.sticky = check_sticky(sticky)
        self._reporter = RouteReporter(
            on_event,
            {
                "provider": routing.provider.name,
                "router_model": routing.model,
                "question": routing.question,
            },
        )
        # The declaration is immutable: its questions are gathered once, not at every decision.
        questions = {routing.question: routing.routing_question}
        if routing.effort_question is not None and routing.effort_choice_question is not None:
            questions[routing.effort_question] = routing.effort_choice_question
        self._questions: Mapping[str, ChoiceQuestion] = questions

    @property
    def on_event(self) -> EventHandler | None:
        """The function that receives every event, or ``None``."""
        return self._reporter.on_event

    @property
    def models(self) -> Mapping[str, ModelSpec]:
        """The candidate models by label, as ``routing.models``."""
        return self.routing.models

    @property
    def default(self) -> str:
        """The label of the first call's model: the fallback, as ``routing.fallback``."""
        return self.routing.fallback

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
        step = context.step
        start = perf_counter()
        self._reporter.emit(
            DecisionStartedEvent(step, routing.provider.name, routing.model, routing.question)
        )
        try:
            outcome, effort_outcome = yield from self._decide(context)
        except GeneratorExit:
            raise
        except BaseException as error:  # noqa: BLE001 - reported, then re-raised or replaced
            return self._failed(context, error, start)
        self._reporter.emit(
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
        return self._finish(context, choice, outcome.reason, outcome, start, effort=effort)

    def _failed(self, context: RoutingContext, error: BaseException, start: float) -> RouteOutcome:
        """Report a failed decision; return the fallback's outcome or re-raise the error."""
        routing = self.routing
        elapsed_ms = (perf_counter() - start) * 1000.0
        fallback = (
            isinstance(error, Exception)
            and routing.on_error == "fallback"
            and is_provider_unavailable(error, routing.fallback_on)
        )
        self._reporter.emit(
            DecisionFailedEvent(
                context.step,
                routing.provider.name,
                routing.model,
                routing.question,
                error,
                fallback,
                elapsed_ms,
            )
        )
        if not fallback:
            self._reporter.failed(context.step, error, elapsed_ms)
            raise error
        return self._finish(context, routing.fallback, "unavailable", None, start, error=error)

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
        context: RoutingContext,
        choice: str,
        reason: RouteReason,
        outcome: ChoiceOutcome | None,
        start: float,
        *,
        error: BaseException | None = None,
        effort: ChoiceOutcome | None = None,
    ) -> RouteOutcome:
        spec = self.routing.models[choice]
        chosen = spec.effort_sent
        if effort is not None and effort.accepted:
            chosen = clamp_effort(Effort(effort.choice), spec.supported_efforts)
        result = RouteOutcome(
            step=context.step,
            choice=choice,
            model=spec,
            reason=reason,
            confidence=None if outcome is None else outcome.confidence,
            usage=None if outcome is None else outcome.usage,
            effort=chosen,
            proposed=None if outcome is None else outcome.choice,
        )
        if self.sticky:
            result = hold(result, context, self.routing.models)
        self._reporter.routed(
            result,
            (perf_counter() - start) * 1000.0,
            error=error,
            decision_ms=None if outcome is None else outcome.duration_ms,
        )
        return result
