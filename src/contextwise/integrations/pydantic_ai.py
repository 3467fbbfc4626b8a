"""pydantic-ai 2.x: a capability that fits each model request and keeps the run's history whole.

Install with ``pip install 'contextwise[pydantic-ai]'``. Importing this module imports pydantic-ai;
it raises :class:`~contextwise.MissingDependencyError` when pydantic-ai is not installed.
"""

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final, TypeVar, Unpack, cast

from contextwise import (
    DEFAULT_RECALL_LIMIT,
    ContextPolicy,
    ContextResult,
    MissingDependencyError,
    PolicyRunner,
    RouteOutcome,
    Router,
    RoutingContext,
    RunnerOptions,
)
from contextwise import recall_tool as make_recall_tool
from contextwise._checks import require_string
from contextwise.accounting import UsageSummary, WithUsage, usage_from
from contextwise.effort import Effort
from contextwise.errors import InvalidTypeError
from contextwise.integrations import IntegrationOptions
from contextwise.integrations._breakpoints import MAX_BREAKPOINTS, SYSTEM, check_flag, choose
from contextwise.integrations._conversation import Conversation, conversation_of, fingerprint
from contextwise.integrations._editing import Editing, ProviderEditing, editing_of, unsupported
from contextwise.integrations._overflow import Overflow, attach, read_refusal, too_long
from contextwise.integrations._routing import (
    ROUTE_KEY,
    StepRouting,
    effort_word,
    route_record,
    step_routing,
)
from contextwise.integrations._usage import (
    DEFAULT_SUMMARY_TOKENS,
    SUMMARY_PROMPT,
    UsageBook,
    current,
    reset,
    shrunk,
    summary_prompt,
    summary_tokens,
    transcript,
)
from contextwise.recalling import answer

try:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import ModelContextWindowExceededError, RetryModelRequest
    from pydantic_ai.messages import (
        CachePoint,
        ModelMessage,
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import Model, ModelRequestContext, ModelRequestParameters
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.usage import RunUsage
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="pydantic-ai", extra="pydantic-ai"
    ) from error

__all__ = [
    "SUMMARY_PROMPT",
    "ContextPolicyCapability",
    "history_processor",
    "recall_tool",
    "summarizer",
]

_RUN_USAGE: ContextVar[RunUsage | None] = ContextVar("contextwise_run_usage", default=None)
"""The usage of the run whose request is being prepared: a summary's usage is added to it."""

_FRAMEWORK_PARTS: Final = frozenset(
    {
        "model-settings-delta",
        "instruction-delta",
        "instruction-baseline",
        "tool-availability-delta",
        "capability-load-delta",
    }
)
"""The part kinds that pydantic-ai adds to a request of the history, some after the request was
fitted: they never change a message's fingerprint, and the newest of each kind outlives a
reduction."""

HistoryFunction = Callable[[list[ModelMessage]], Awaitable[list[ModelMessage]]]
"""The function that :func:`history_processor` returns, the shape pydantic-ai's
``ProcessHistory`` takes."""


@dataclass(init=False)
class ContextPolicyCapability(AbstractCapability[Any]):
    """A pydantic-ai capability that sends the model the policy's context.

    Before each model request (once per step, before any retry or fallback), the messages of the
    request go through the policy as the fragment ``fragment_id``, and the request carries the
    messages that the policy keeps. The run's history is not touched: ``result.all_messages()``
    keeps every message, and the next request starts again from all of them. pydantic-ai's own
    ``ProcessHistory`` replaces the history with what it returns; this capability does not.

    Within a conversation (pydantic-ai's ``conversation_id``, which a run takes from the
    ``message_history`` it continues), the capability remembers its reductions: each request
    carries the last reduced context plus the messages new since, and the policy reduces again
    only when that crosses its trigger. Between two reductions the prompt only grows at its end,
    so the provider's prompt cache holds, and a summary is made once. A history that does not
    extend what the capability saw (edited, rewound) starts again from the whole history
    (``resynced`` in the report's ``conversation``). With ``store``, the memory survives a
    restart and is shared by workers; a store that fails never ends the run.

    The policy measures the whole prompt. The system prompt parts (``system_prompt=``) are
    pinned messages of the history; the instructions (the request parameters'
    ``instruction_parts``, measured once and not with each request that records them) and the
    function and output tools are pinned parts of the prompt. All count against the triggers and
    targets, and none is ever removed. When the newest response reports its ``usage``, the token
    measure is the provider's count of the previous prompt plus the estimate of what was added
    since. Above the trigger, the trim, clear and clip steps run at every request; after a
    reduction that missed its target, a compress or app step runs again only when the others
    cannot bring the prompt under the trigger, or once the context has grown by the difference
    between trigger and target.

    The user prompt that pydantic-ai
    sends in the same first request is an ordinary turn, which the policy may remove. A request
    of system parts alone is merged with the request that follows it, so the model never receives
    two requests side by side. A compressor that fails leaves the request
    as it was, and the report says so. Compressors receive and return pydantic-ai messages (or
    text, made into a message). The options are bound once, here; a message of a type
    contextwise does not know is kept as an opaque unit unless ``unknown_items="error"`` is
    given.

    With ``router`` and ``models``, each model request is also routed, after the policy, on the
    messages the model will receive, the system prompt and the tools. pydantic-ai lets a
    ``before_model_request`` hook change the model and the settings of its step: the request
    goes to the model of the chosen label, with the route's effort as pydantic-ai's own
    ``thinking`` setting (``False`` for ``none``, else the level, or the spec's
    ``effort_names`` word). The capability's ``get_model()`` selection is not used: it runs
    before the policy, so the router would see the whole history. The response records its
    route in its ``metadata["contextwise_route"]``, and the next request gives it to the
    router as the previous call's ``choice`` and ``effort``: a sticky router keeps them, also
    in a later run that continues the history. A streamed response keeps no record
    (pydantic-ai has already handed it over); the next request then takes the label whose
    model has the response's ``model_name``, at that model's own effort. The step is the number
    of responses in the history, plus one.

    With ``provider_editing="anthropic"``, the policy's ``clear`` steps are sent as Anthropic's
    context management instead (:func:`~contextwise.anthropic_context_management`), through the
    request's ``anthropic_betas`` and ``anthropic_context_management`` settings, which an
    ``AnthropicModel`` sends. With ``"openai"``, its ``compress`` steps are sent as the
    Responses API's compaction (:func:`~contextwise.openai_context_management`), through the
    ``openai_context_management`` setting, which an ``OpenAIResponsesModel`` sends (the Chat
    Completions API has no compaction). Both are added to the betas and edits the settings
    already have. The delegated steps no longer run here (except in the retry after a refusal,
    which runs every step), and the report's ``conversation.delegated_steps`` names them.

    Args:
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.
        router: The router that picks the model of each request (a
            :class:`~contextwise.ModelRouter`, a :class:`~contextwise.RuleRouter` or any
            :class:`~contextwise.Router`); with ``models``.
        models: The pydantic-ai model of each of the router's labels.
        cache_breakpoints: Whether to add the prompt-cache breakpoints that the request misses,
            through pydantic-ai's own means: its ``cache`` setting, with which pydantic-ai marks
            the instructions, the tools and the newest message for each provider that takes
            breakpoints (Anthropic, Bedrock, OpenRouter, OpenAI from ``gpt-5.6`` on), and a
            ``CachePoint`` at the end of what the previous request of the conversation sent. A
            cache setting already in force (the ``Caching`` capability's, a provider's own) is
            left as it is and counts, as do the messages' ``CachePoint`` parts, so that a
            request never carries more than four. They are on the request only: the run's
            history never holds them. ``False`` by default.
        provider_editing: ``"anthropic"`` or ``"openai"``: the provider that applies the
            policy's ``clear`` (or ``compress``) steps on its side; ``None``, the default, runs
            every step here.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``); with ``provider_editing``,
            when the policy has no token limits (codes ``provider_char_limits``,
            ``provider_trigger_required``), runs no step of the provider's kind (code
            ``provider_editing_nothing``), or when a model of ``models`` would drop the editing
            (code ``provider_editing_unsupported``; the agent's own model is checked at its first
            request, before anything is sent).
        InvalidValueError: When ``provider_editing`` names no provider (code
            ``invalid_choice``).
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable, ``store``
            cannot keep conversations, or ``cache_breakpoints`` is not a bool (code
            ``not_a_bool``).
        RoutingConfigurationError: When only one of ``router`` and ``models`` is given (code
            ``router_needs_models``), ``router`` is not a router (code ``invalid_router``), or
            ``models`` is not a mapping with one model per label of the router (codes
            ``framework_models_not_mapping``, ``framework_models_mismatch``).

    Examples:
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from contextwise.integrations.pydantic_ai import ContextPolicyCapability
        >>> capability = ContextPolicyCapability({
        ...     "mode": "reduce", "trigger_chars": 4000, "target_input_chars": 3000,
        ...     "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history",
        ...                "target_chars": 3000}]})
        >>> agent = Agent(TestModel(), capabilities=[capability])
        >>> agent.run_sync("Hello").output
        'success (no tool calls)'
    """

    _conversation: Conversation
    _routing: StepRouting[Model] | None
    _pending: dict[tuple[str | None, int], RouteOutcome]
    _steps: dict[tuple[str | None, int], "_Step"]
    _cache_breakpoints: bool

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        *,
        router: Router | None = None,
        models: Mapping[str, Model] | None = None,
        cache_breakpoints: bool = False,
        provider_editing: ProviderEditing | None = None,
        **options: Unpack[IntegrationOptions],
    ) -> None:
        self._cache_breakpoints = check_flag(cache_breakpoints)
        self._routing = step_routing(router, models, "pydantic-ai", Model)
        self._pending = {}
        self._steps = {}
        self._conversation = conversation_of(policy, options, _fingerprint)
        self._editing = editing_of(provider_editing, self._conversation.runner.policy)
        if self._editing is not None:
            self._conversation.delegate(self._editing.kind, self._editing.step_ids)
            for routed in () if self._routing is None else self._routing.models.values():
                _check_carries(routed, self._editing)
        # The summaries a reduction paid for go into the conversation's ledger first.
        self._usage = UsageBook(
            options.get("store"),
            "ContextPolicyCapability",
            self._conversation.max_memory_bytes,
        )
        self._conversation.on_result = self._usage.recording(self._conversation.on_result)

    async def before_model_request(
        self,
        ctx: RunContext[Any],
        request_context: ModelRequestContext,
    ) -> ModelRequestContext:
        """Give the request the policy's context; the run's history keeps every message.

        Args:
            ctx: The run context; its messages are left as they are.
            request_context: The request about to be sent.

        Returns:
            The request, with the messages that the policy keeps; with a router, on the chosen
            model with the route's ``thinking`` setting.
        """
        found = getattr(ctx, "conversation_id", None)
        history, originals = _measured_messages(request_context)
        halves: dict[int, ModelMessage] = {}
        step = _Step(
            _split_system_parts(history, halves),
            None if found is None else str(found),
            _pinned_parts(request_context),
            originals,
            halves,
        )
        tokens = current(step.key), _RUN_USAGE.set(ctx.usage)
        try:
            messages, previous = await self._conversation.afit(
                step.history,
                step.key,
                pinned=step.pinned,
                usage=_last_input_tokens(request_context.messages),
            )
        finally:
            reset(tokens[0])
            _RUN_USAGE.reset(tokens[1])
        _bounded(self._steps, (ctx.run_id, ctx.run_step), step)
        messages = _carried_parts(request_context.messages, step.restored(messages), step)
        fitted = replace(request_context, messages=_join_system_parts(messages))
        if self._cache_breakpoints:
            end = None if previous is None else _joined_positions(messages)[previous - 1] + 1
            fitted = _with_breakpoints(fitted, end)
        if self._routing is None:
            return _edited(fitted, self._editing)
        outcome, model = await self._routing.aroute(_routing_context(self._routing, fitted))
        outcome = _sent(self._routing, outcome, model)
        _bounded(self._pending, (ctx.run_id, ctx.run_step), outcome)
        settings: dict[str, Any] = dict(fitted.model_settings or {})
        if outcome.effort is not None:
            effort = outcome.effort
            settings["thinking"] = (
                False if effort is Effort.NONE else effort_word(outcome.model, effort)
            )
        routed = replace(fitted, model=model, model_settings=cast(ModelSettings, settings))
        return _edited(routed, self._editing)

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        """Record the response's usage in its conversation's ledger, and the route in its
        ``metadata`` when the routed model answered.

        Args:
            ctx: The run context.
            request_context: The request that was sent.
            response: The model's response.

        Returns:
            The response; with a router, its ``metadata`` records the route.
        """
        step = self._steps.pop((ctx.run_id, ctx.run_step), None)
        outcome = None
        if self._routing is not None:
            outcome = self._pending.pop((ctx.run_id, ctx.run_step), None)
            if outcome is not None and request_context.model is not self._routing.models.get(
                outcome.choice
            ):
                outcome = None  # another capability (a fallback) changed the model after the route
        key = step.key if step is not None else _conversation_key(ctx)
        await self._record(key, response, outcome)
        if outcome is None:
            return response
        metadata = {**(response.metadata or {}), ROUTE_KEY: route_record(outcome)}
        return replace(response, metadata=metadata)

    async def on_model_request_error(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        error: Exception,
    ) -> ModelResponse:
        """Reduce again and retry once when the provider refuses the request as too long.

        On a ``ModelContextWindowExceededError`` (or an error with OpenAI's code
        ``context_length_exceeded``), the messages are reduced again, to the window that the
        refusal reports less the instructions, the tool definitions, the output reserve
        (``max_tokens``) and a 5 percent margin, or else to 10 percent under what was sent, and the
        request is attempted once more (``RetryModelRequest``): the next attempt's
        :meth:`prepare_model_request` sends the reduced messages. The run's history is not
        touched. The report says so (``conversation.overflow``).

        Args:
            ctx: The run context.
            request_context: The request that was refused.
            error: The error of the attempt.

        Returns:
            Never: it raises.

        Raises:
            RetryModelRequest: After the reduction, for the one retry.
            Exception: ``error`` itself otherwise; after a second refusal (or when nothing
                more can be removed), with the report of the retry's reduction as its
                ``contextwise_report`` attribute.
        """
        step = self._steps.get((ctx.run_id, ctx.run_step))
        if step is None or not too_long(error, _OVERFLOW):
            raise error
        if step.overflow is not None:
            raise attach(error, step.overflow)
        settings = request_context.model_settings or {}
        reserve = settings.get("max_tokens")
        overflow = Overflow(read_refusal(error), reserve=reserve)
        tokens = current(step.key), _RUN_USAGE.set(ctx.usage)
        try:
            messages = (
                await self._conversation.afit(
                    step.history, step.key, pinned=step.pinned, overflow=overflow
                )
            ).messages
        finally:
            reset(tokens[0])
            _RUN_USAGE.reset(tokens[1])
        step.overflow = overflow
        if not overflow.reduced:
            raise attach(error, overflow)
        step.retry = _join_system_parts(step.restored(messages))
        raise RetryModelRequest()

    async def prepare_model_request(
        self,
        ctx: RunContext[Any],
        request_context: ModelRequestContext,
    ) -> ModelRequestContext:
        """Give the retry of a request that the provider refused as too long the messages
        reduced for it; any other attempt is left as it is.

        Args:
            ctx: The run context.
            request_context: The attempt about to be sent.

        Returns:
            The attempt, with the reduced messages when it is the retry.
        """
        step = self._steps.get((ctx.run_id, ctx.run_step))
        if step is None or step.retry is None:
            return request_context
        return replace(request_context, messages=step.retry)

    def usage(self, conversation_id: str | None = None) -> UsageSummary:
        """The usage and cost of a conversation: its model calls and the summaries its policy paid
        for.

        Each model response's ``usage`` is recorded with its model's name, and each summary that a
        compressor returned with its usage (a :func:`summarizer`), in the ledger of the run's
        ``conversation_id``: in ``store`` when one was given (it survives a restart), else in this
        process. A call is priced by :func:`~contextwise.cost`: the prices of the route's
        :class:`~contextwise.ModelSpec`, else genai-prices' table for the model's name (the table
        pydantic-ai's own ``ModelResponse.cost()`` reads); a call with no known price is counted in
        ``unpriced_calls``.

        Args:
            conversation_id: The conversation id of the runs (``result.conversation_id``).

        Returns:
            The totals: all the calls, per model and per kind (``model``, ``summarizer``).

        Raises:
            InvalidTypeError: When ``conversation_id`` is not a string (code ``not_a_string``).
        """
        if conversation_id is not None:
            require_string(conversation_id, "conversation_id")
        return self._usage.summary(conversation_id)

    async def _record(
        self, key: str | None, response: ModelResponse, outcome: RouteOutcome | None
    ) -> None:
        """Record a response's usage in its conversation's ledger (the store's write in a
        worker thread)."""
        model: Any = outcome.model if outcome is not None else response.model_name
        usage = usage_from(response.usage, source="pydantic-ai")
        await self._usage.arecord(key, usage, model=model)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """Tell pydantic-ai that agent specs cannot name this capability (it takes callables).

        Returns:
            ``None``.
        """
        return None


def history_processor(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    *,
    fragment_id: str = "history",
    on_result: Callable[[ContextResult], object] | None = None,
    **options: Unpack[RunnerOptions],
) -> HistoryFunction:
    """Return the policy as a plain history processor, for pydantic-ai's ``ProcessHistory``.

    ``ProcessHistory`` writes what the processor returns back into the run's history, so the
    messages that the policy removes leave the history too; ``on_result`` receives them in
    ``removed``. Use :class:`ContextPolicyCapability` to keep the history whole.

    Args:
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``.
        fragment_id: The id of the fragment that holds the conversation.
        on_result: A function, sync or async, called with each
            :class:`~contextwise.ContextResult`.

    Returns:
        An async function from the messages to the messages that the policy keeps.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``).
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable; the
            returned function raises it (code ``not_a_message_list``) when given no list.

    Examples:
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.capabilities import ProcessHistory
        >>> from pydantic_ai.models.test import TestModel
        >>> from contextwise.integrations.pydantic_ai import history_processor
        >>> process = history_processor({"mode": "audit", "trigger_chars": 4000})
        >>> agent = Agent(TestModel(), capabilities=[ProcessHistory(process)])
        >>> agent.run_sync("Hello").output
        'success (no tool calls)'
    """
    conversation = Conversation(policy, fragment_id, on_result, options)

    async def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        if not isinstance(messages, list | tuple):
            raise InvalidTypeError(
                "not_a_message_list", name="messages", type_name=type(messages).__name__
            )
        return _join_system_parts(
        (await conversation.afit(_split_system_parts(messages))).messages
    )

    return process


_MAX_PENDING = 1_024
"""How many routed requests may wait for their response (a request that failed never gets one)."""

_OVERFLOW = (ModelContextWindowExceededError,)
"""pydantic-ai's error for a request that a provider refuses as too long."""

_T = TypeVar("_T")


@dataclass(slots=True)
class _Step:
    """What the capability keeps of a request step until its response: the history it fitted,
    and after a refusal as too long, the retry's reduction."""

    history: list[ModelMessage]
    key: str | None
    pinned: list[Any]
    originals: dict[int, ModelMessage]
    """The original of each copy the policy measured (see :func:`_measured_messages`)."""
    halves: dict[int, ModelMessage] = field(default_factory=dict)
    """The message each half of a split request comes from (see :func:`_split_system_parts`)."""
    overflow: Overflow | None = None
    retry: list[ModelMessage] | None = None

    def restored(self, messages: Sequence[ModelMessage]) -> list[ModelMessage]:
        """The messages the policy kept, each copy replaced by its original."""
        return [self.originals.get(id(message), message) for message in messages]

    def origin(self, message: ModelMessage) -> ModelMessage:
        """The message of the history that a kept message comes from."""
        message = self.halves.get(id(message), message)
        return self.originals.get(id(message), message)


_StepKey = tuple[str | None, int]


def _sent(routing: StepRouting[Model], outcome: RouteOutcome, model: Model) -> RouteOutcome:
    """The outcome as it is sent: pydantic-ai drops the ``thinking`` setting of a model whose
    profile does not support thinking, so the route records no effort, with a warning (the
    level ``none``, which turns thinking off, holds for every model)."""
    if outcome.effort is None or outcome.effort is Effort.NONE:
        return outcome
    profile = getattr(model, "profile", None)
    if profile is None:
        return outcome
    read = profile.get if isinstance(profile, Mapping) else partial(getattr, profile)
    if read("supports_thinking", True) or read("thinking_always_enabled", False):
        return outcome
    name = getattr(model, "model_name", type(model).__name__)
    return routing.unsent(outcome, f"the model {name!r} does not support thinking")


def _edited(request: ModelRequestContext, editing: Editing | None) -> ModelRequestContext:
    """The request with the provider's context editing in its model settings (pydantic-ai's
    ``anthropic_betas`` and ``anthropic_context_management``, or ``openai_context_management``),
    added to the betas and edits already there."""
    if editing is None:
        return request
    _check_carries(request.model, editing)
    settings: dict[str, Any] = dict(request.model_settings or {})
    if editing.provider == "anthropic":
        settings["anthropic_betas"] = editing.merged_betas(settings.get("anthropic_betas"))
        name = "anthropic_context_management"
    else:
        name = "openai_context_management"
    settings[name] = editing.merged(settings.get(name))
    return replace(request, model_settings=cast(ModelSettings, settings))


_CARRIERS: Final[Mapping[str, str]] = {
    "anthropic": "AnthropicModel",
    "openai": "OpenAIResponsesModel",
}
"""The pydantic-ai model that sends each provider's context editing from its model settings."""


def _check_carries(model: object, editing: Editing) -> None:
    """Refuse a model that would drop the provider's context editing: pydantic-ai ignores another
    provider's settings, so the delegated steps would run nowhere. A wrapper model is judged by
    what it wraps, a fallback model by each of its models; the offline test and function models
    take any settings."""
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.wrapper import WrapperModel

    while isinstance(model, WrapperModel):
        model = model.wrapped
    if isinstance(model, FallbackModel):
        for each in model.models:
            _check_carries(each, editing)
        return
    if getattr(model, "system", None) in ("test", "function"):
        return
    expected = _CARRIERS[editing.provider]
    if not any(kind.__name__ == expected for kind in type(model).__mro__):
        raise unsupported(model, editing.provider, expected)


def _bounded(table: dict[_StepKey, _T], key: _StepKey, value: _T) -> None:
    """Keep a value per request step, the oldest dropped past ``_MAX_PENDING`` (a request that
    failed never gets its response)."""
    table[key] = value
    while len(table) > _MAX_PENDING:
        del table[next(iter(table))]


def _conversation_key(ctx: RunContext[Any]) -> str | None:
    found = getattr(ctx, "conversation_id", None)
    return None if found is None else str(found)


def _routing_context(routing: StepRouting[Model], request: ModelRequestContext) -> RoutingContext:
    """The routing context of a request: its messages, system prompt and tools, and the route
    of the last response."""
    responses = [message for message in request.messages if isinstance(message, ModelResponse)]
    previous = _previous_route(routing, responses[-1]) if responses else None
    system = [
        part.content
        for message in request.messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    ]
    tools = [
        {"type": "function", "function": {"name": tool.name, "description": tool.description}}
        for tool in request.model_request_parameters.function_tools
    ]
    return routing.context(
        len(responses) + 1, request.messages, previous, system="\n\n".join(system), tools=tools
    )


def _measured_messages(
    request: ModelRequestContext,
) -> tuple[list[ModelMessage], dict[int, ModelMessage]]:
    """The messages as the policy measures them, and the original of each copy it made.

    Each request of the history records the run's ``instructions``, but the model receives them
    once, from the request parameters' ``instruction_parts``, which the policy pins: the copies
    leave them out, so they are measured once. Without ``instruction_parts`` (a direct model
    call) the model reads them from the history, and the messages are measured as they are."""
    if getattr(request.model_request_parameters, "instruction_parts", None) is None:
        return list(request.messages), {}
    messages: list[ModelMessage] = []
    originals: dict[int, ModelMessage] = {}
    for message in request.messages:
        if isinstance(message, ModelRequest) and message.instructions is not None:
            copy = replace(message, instructions=None)
            originals[id(copy)] = message
            message = copy
        messages.append(message)
    return messages, originals


def _fingerprint(message: object) -> str:
    """A message's fingerprint, without the parts that pydantic-ai adds to a request after it
    was fitted (:data:`_FRAMEWORK_PARTS`): the ``model-settings-delta`` of an effort change
    must not make the next run's history look different."""
    if isinstance(message, ModelRequest):
        parts = [part for part in message.parts if part.part_kind not in _FRAMEWORK_PARTS]
        if len(parts) < len(message.parts):
            message = replace(message, parts=parts)
    return fingerprint(message)


def _carried_parts(
    history: Sequence[ModelMessage], kept: list[ModelMessage], step: _Step
) -> list[ModelMessage]:
    """The kept messages, with the newest part of each kind that pydantic-ai adds to its requests
    (:data:`_FRAMEWORK_PARTS`) that the reduction removed and that no kept request holds, carried
    into the first kept request: pydantic-ai reads the settings, instructions and tools in force
    from them."""
    kept_ids = {id(step.origin(message)) for message in kept}
    held = {
        part.part_kind
        for message in kept
        if isinstance(message, ModelRequest)
        for part in message.parts
    }
    newest: dict[str, Any] = {}
    for message in history:
        if isinstance(message, ModelRequest) and id(message) not in kept_ids:
            for part in message.parts:
                if part.part_kind in _FRAMEWORK_PARTS and part.part_kind not in held:
                    newest[part.part_kind] = part
    first = next((i for i, message in enumerate(kept) if isinstance(message, ModelRequest)), None)
    if not newest or first is None:
        return kept
    carrier = cast(ModelRequest, kept[first])
    result = list(kept)
    result[first] = replace(carrier, parts=[*newest.values(), *carrier.parts])
    return result


def _pinned_parts(request: ModelRequestContext) -> list[Any]:
    """What the request carries besides its messages, which counts against the policy's limits:
    the instructions and the function and output tools (the system prompt parts are pinned
    messages of the history)."""
    parameters = request.model_request_parameters
    parts: list[Any] = [
        str(part.content) for part in getattr(parameters, "instruction_parts", None) or ()
    ]
    tools = [*parameters.function_tools, *getattr(parameters, "output_tools", ())]
    parts.extend(
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description or "",
                "parameters": tool.parameters_json_schema,
            },
        }
        for tool in tools
    )
    return parts


def _last_input_tokens(messages: Sequence[ModelMessage]) -> int | None:
    """The input tokens the provider reported for the last model call: the newest response's
    ``usage``, when it counted any."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            count = message.usage.input_tokens
            return count if count > 0 else None
    return None


def _previous_route(routing: StepRouting[Model], response: ModelResponse) -> object:
    """The route of the last response: its record, or else (a streamed final response, which
    keeps no record, or a history from before the router) the one label whose model has the
    response's model name, at that model's own effort."""
    record = (response.metadata or {}).get(ROUTE_KEY)
    if record is not None:
        return record
    labels = [
        label
        for label, model in routing.models.items()
        if getattr(model, "model_name", None) == response.model_name
    ]
    return {"choice": labels[0]} if len(labels) == 1 else None


_CACHE_SETTINGS: Final = ("_cache_instructions", "_cache_tool_definitions", "_cache_messages")
"""The endings of the provider-specific cache settings (``anthropic_cache_instructions``,
``bedrock_cache_messages``...), which take precedence over the unified ``cache`` setting."""


def _with_breakpoints(request: ModelRequestContext, previous: int | None) -> ModelRequestContext:
    """The request with the cache breakpoints it misses, through pydantic-ai's own means: the
    unified ``cache`` setting for the instructions, the tools and the newest message (pydantic-ai
    places them for each provider that takes them), and a ``CachePoint`` at the end of what the
    previous call sent. The markers already there count: a ``cache`` setting or a provider's own
    cache settings in force (the ``Caching`` capability's), and the ``CachePoint`` parts."""
    settings: dict[str, Any] = dict(request.model_settings or {})
    messages = list(request.messages)
    parameters = request.model_request_parameters
    has_instructions = bool(getattr(parameters, "instruction_parts", None)) or any(
        isinstance(message, ModelRequest) and message.instructions for message in messages
    )
    has_tools = bool([*parameters.function_tools, *getattr(parameters, "output_tools", ())])
    marked = {index for index, message in enumerate(messages) if _cache_points(message)}
    present = sum(_cache_points(message) for message in messages)
    own = [key for key in settings if key.endswith(_CACHE_SETTINGS) or key == "anthropic_cache"]
    configured = "cache" in settings or bool(own)
    if settings.get("cache") or own:
        # Caching is configured already (its markers count, wherever they go): nothing is added
        # to the settings, only the end of the previous call.
        marked.update({SYSTEM, len(messages) - 1})
        present += int(has_instructions) + int(has_tools) + 1
    # With both instructions and tools, the pinned prefix takes two markers.
    limit = MAX_BREAKPOINTS - int(has_instructions and has_tools and not configured)
    chosen = choose(
        len(messages),
        pinned=has_instructions or has_tools,
        previous=previous,
        marked=marked,
        present=present,
        limit=limit,
    )
    if not configured and (SYSTEM in chosen or len(messages) - 1 in chosen):
        newest = len(messages) - 1 in chosen
        settings["cache"] = True if newest else {"messages": False}
    for position in chosen:
        message = messages[position] if 0 <= position < len(messages) - 1 else None
        if isinstance(message, ModelRequest):
            messages[position] = replace(
                message, parts=[*message.parts, UserPromptPart([CachePoint()])]
            )
    return replace(request, messages=messages, model_settings=cast(ModelSettings, settings))


def _cache_points(message: ModelMessage) -> int:
    """How many ``CachePoint`` parts a message's user prompts hold."""
    if not isinstance(message, ModelRequest):
        return 0
    return sum(
        1
        for part in message.parts
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str)
        for item in part.content
        if isinstance(item, CachePoint)
    )


def _joined_positions(messages: Sequence[ModelMessage]) -> list[int]:
    """Where each message lands once :func:`_join_system_parts` merged the requests of system
    parts alone into the request that follows them."""
    positions: list[int] = []
    system_only: list[bool] = []
    for message in messages:
        alone = isinstance(message, ModelRequest) and all(
            isinstance(part, SystemPromptPart) for part in message.parts
        )
        if isinstance(message, ModelRequest) and system_only and system_only[-1]:
            system_only[-1] = alone
        else:
            system_only.append(alone and bool(getattr(message, "parts", ())))
        positions.append(len(system_only) - 1)
    return positions


def _split_system_parts(
    messages: Sequence[ModelMessage], halves: dict[int, ModelMessage] | None = None
) -> list[ModelMessage]:
    """The messages, with the system prompt parts of a request that also holds other parts (the
    first request of a run with ``system_prompt=``) in a request of their own, which the policy
    pins, so that the user prompt beside them is an ordinary turn; ``halves`` records the
    message each half comes from."""
    result: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            system = [part for part in message.parts if isinstance(part, SystemPromptPart)]
            others = [part for part in message.parts if not isinstance(part, SystemPromptPart)]
            if system and others:
                split = [replace(message, parts=system), replace(message, parts=others)]
                if halves is not None:
                    halves.update((id(half), message) for half in split)
                result += split
                continue
        result.append(message)
    return result


def _join_system_parts(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The messages, with each request of system parts alone merged into the request that
    follows it: pydantic-ai would merge two requests side by side itself, into a request that
    the policy would then pin whole."""
    result: list[ModelMessage] = []
    for message in messages:
        previous = result[-1] if result else None
        if (
            isinstance(message, ModelRequest)
            and isinstance(previous, ModelRequest)
            and previous.parts
            and all(isinstance(part, SystemPromptPart) for part in previous.parts)
        ):
            result[-1] = replace(message, parts=[*previous.parts, *message.parts])
            continue
        result.append(message)
    return result


def recall_tool(
    *, archive: object = None, limit: int = DEFAULT_RECALL_LIMIT, name: str = "recall"
) -> Tool[Any]:
    """Return :func:`contextwise.recall` as a pydantic-ai tool, reading the run's own messages.

    The tool reads the originals from the run's messages (``ctx.messages``, which the
    capability leaves whole), then from ``archive``. Give it to ``Agent(tools=[...])`` beside
    the :class:`ContextPolicyCapability` whose policy clears or clips tool results, and name it
    in the ``clear`` step's ``exclude_tools``.

    Args:
        archive: A :class:`~contextwise.session.ContextSession`, its archive, or a function
            that returns it; see :func:`contextwise.recall`.
        limit: The most characters that one page holds; 8,000 by default.
        name: The tool's name; ``recall`` by default, the name the placeholders use.

    Returns:
        A pydantic-ai ``Tool`` that takes the run context.

    Raises:
        InvalidValueError: When the limit is below 1 or the name is blank or holds a character
            that a framework cannot take (NUL, a line break, a lone surrogate).
        InvalidTypeError: When the limit is not a whole number or the name not a string.

    Examples:
        >>> from contextwise.integrations.pydantic_ai import recall_tool
        >>> recall_tool().name
        'recall'
    """
    base = make_recall_tool(archive=archive, limit=limit, name=name)

    async def recall(ctx: RunContext[Any], ref: str, offset: int = 0, limit: int = limit) -> str:
        """Read back a page of a cleared or clipped tool result.

        Args:
            ctx: The run context.
            ref: The ref that the placeholder names: a tool call's id.
            offset: Where to start reading, in characters.
            limit: The most characters to read.
        """
        return await answer(base, ctx.messages, {"ref": ref, "offset": offset, "limit": limit})

    return Tool(recall, takes_ctx=True, name=name, description=base.description)


def summarizer(
    model: Model,
    *,
    prompt: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
) -> Callable[[list[ModelMessage]], Awaitable[WithUsage]]:
    """Make a compressor that summarises messages with a pydantic-ai model.

    Give it to the policy as a compressor (``compressors={"summary": summarizer(model)}``) and
    name it in a ``compress`` step. It sends the model ``prompt`` as the system prompt and the
    messages to summarise as one transcript, and returns the summary with the response's usage
    (:class:`~contextwise.WithUsage`), which the report keeps on the step's change and
    :meth:`ContextPolicyCapability.usage` records as a ``summarizer`` call. Inside a run of an
    agent with a :class:`ContextPolicyCapability`, the response's usage (and its cost, when
    pydantic-ai knows it) is also added to the run's usage, so the run's ``UsageLimits`` count
    the summaries too. When the model refuses the transcript as too long
    (``ModelContextWindowExceededError``), the middle of the transcript is left out and the
    request is sent once more.

    Args:
        model: The pydantic-ai model that writes the summaries; a small, cheap one does.
        prompt: The instructions of the summary; :data:`SUMMARY_PROMPT` when omitted.
        max_tokens: The most tokens that a summary may take (the ``max_tokens`` setting).

    Returns:
        The compressor, async: it takes pydantic-ai messages and returns the summary's text with
        its usage.

    Raises:
        InvalidTypeError: When ``model`` is not a pydantic-ai model, ``prompt`` not a string or
            ``max_tokens`` not a whole number.
        InvalidValueError: When ``max_tokens`` is below 1 or ``prompt`` is blank.

    Examples:
        >>> import asyncio
        >>> from pydantic_ai.messages import ModelRequest
        >>> from pydantic_ai.models.test import TestModel
        >>> from contextwise.integrations.pydantic_ai import summarizer
        >>> summarize = summarizer(TestModel(custom_output_text="A budget."))
        >>> asyncio.run(summarize([ModelRequest.user_text_prompt("Plan my budget.")])).value
        'A budget.'
    """
    if not isinstance(model, Model):
        raise InvalidTypeError(
            "not_an_instance", name="model", expected="Model", type_name=type(model).__name__
        )
    instructions = summary_prompt(prompt)
    settings = cast(ModelSettings, {"max_tokens": summary_tokens(max_tokens)})

    async def ask(text: str) -> ModelResponse:
        request = ModelRequest(parts=[SystemPromptPart(instructions), UserPromptPart(text)])
        return await model.request([request], settings, ModelRequestParameters())

    async def summarize(messages: list[ModelMessage]) -> WithUsage:
        text = transcript(_transcript_lines(messages))
        try:
            response = await ask(text)
        except ModelContextWindowExceededError:
            response = await ask(shrunk(text))
        run_usage = _RUN_USAGE.get()
        if run_usage is not None:
            run_usage.incr(response.usage)
        usage = usage_from(response.usage, source="pydantic-ai")
        return WithUsage((response.text or "").strip(), usage, response.model_name or None)

    return summarize


def _transcript_lines(messages: Sequence[ModelMessage]) -> Iterator[tuple[str, str]]:
    """The messages as the summary's transcript shows them: the user's prompts, the model's text
    and tool calls, the tools' returns."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                content = part.content
                yield "user", content if isinstance(content, str) else str(content)
            elif isinstance(part, TextPart):
                yield "assistant", part.content
            elif isinstance(part, ToolCallPart):
                yield "assistant", f"[tool call: {part.tool_name}({part.args_as_json_str()})]"
            elif isinstance(part, ToolReturnPart):
                yield f"tool ({part.tool_name})", part.model_response_str()
