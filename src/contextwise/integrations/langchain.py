"""LangChain 1.x: an agent middleware that fits what the model sees and keeps the agent state whole.

Install with ``pip install 'contextwise[langchain]'``. Importing this module imports LangChain; it
raises :class:`~contextwise.MissingDependencyError` when LangChain is not installed.
"""

import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, Unpack

from contextwise import (
    DEFAULT_RECALL_LIMIT,
    ContextPolicy,
    MissingDependencyError,
    PolicyRunner,
    RouteOutcome,
    Router,
    RoutingConfigurationError,
    RoutingContext,
)
from contextwise import recall_tool as make_recall_tool
from contextwise._checks import require_instance, require_string
from contextwise.accounting import Usage, UsageSummary, WithUsage, usage_from
from contextwise.integrations import IntegrationOptions
from contextwise.integrations._breakpoints import SYSTEM, check_flag, choose
from contextwise.integrations._conversation import conversation_of
from contextwise.integrations._editing import Editing, ProviderEditing, editing_of
from contextwise.integrations._overflow import Overflow, attach, read_refusal, too_long
from contextwise.integrations._routing import (
    ROUTE_KEY,
    StepRouting,
    effort_options,
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
from contextwise.recalling import answer, answer_sync

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain_core.exceptions import ContextOverflowError
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.tools import BaseTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.config import get_config
    from langgraph.constants import TAG_NOSTREAM
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="langchain", extra="langchain"
    ) from error

__all__ = ["SUMMARY_PROMPT", "ContextPolicyMiddleware", "recall_tool", "summarizer"]


class ContextPolicyMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """A LangChain agent middleware that shows the model the policy's context.

    Before each model call, the request's messages (the conversation) go through the policy as
    the fragment ``fragment_id``, and the model receives the messages that the policy keeps. The
    agent state is not touched: it keeps every message. A compressor that fails leaves the
    conversation as it was, and the report says so.

    The policy measures the whole prompt: the system message, the tools (as
    ``convert_to_openai_tool`` writes them) and the schemas of the response format are pinned
    parts, which count against its triggers and targets and which no step removes (the report's
    ``pinned_chars``). Put the middleware last in ``create_agent(middleware=[...])``: it is then
    the innermost one and sees the final request, after the other middleware changed it. When
    the newest AI message carries ``usage_metadata``, the token measure is the provider's count
    of the previous prompt plus the estimate of what was added since.

    In a run with a thread id (an agent with a checkpointer, invoked with
    ``{"configurable": {"thread_id": ...}}``), the middleware remembers its reductions for that
    thread: the model receives the last reduced context plus the messages new since, and the
    policy reduces again only when that crosses its trigger. Between two reductions the prompt
    only grows at its end, so the provider's prompt cache holds, and a summary is made once.
    Above the trigger, the trim, clear and clip steps run at every call; after a reduction that
    missed its target, a compress or app step runs again only when the others cannot bring the
    prompt under the trigger, or once the context has grown by the difference between trigger
    and target. A call that stays above its target says so: ``target_met`` is false, with the
    shortfall. The history must extend what the middleware saw (decided by the messages' ids);
    otherwise, after an edit or a rewind, it starts again from the whole history (``resynced``
    in the report's ``conversation``). Without a thread id every call starts from the whole
    history. With ``store``, the memory survives a restart and is shared by workers; a store
    that fails never ends the run: the call falls back to the whole history, and the report
    says so.

    ``wrap_model_call`` serves ``invoke`` and ``stream``; ``awrap_model_call`` serves ``ainvoke``
    and ``astream`` and awaits async compressors, apps and callbacks. Compressors receive and
    return LangChain messages (or text, made into a message). The options are bound once, here;
    a message of a type contextwise does not know is kept as an opaque unit unless
    ``unknown_items="error"`` is given.

    With ``router`` and ``models``, each model call is also routed, after the policy, on the
    messages the model will receive, the system message and the tools: the call goes to the
    chat model of the chosen label (``request.override(model=...)``), with the route's effort
    in the request's model settings, the keyword arguments
    :func:`~contextwise.provider_options` builds for the label's
    :class:`~contextwise.ModelSpec` (``reasoning_effort`` for ``openai-chat``, ``thinking``
    for ``anthropic``; nothing when the spec declares no ``api``). The model's answer records
    its route in its ``response_metadata["contextwise_route"]``, and the next call gives it to
    the router as the previous call's ``choice`` and ``effort``: a sticky router keeps them,
    across a restart too, with no memory of its own. The step is the number of AI messages in
    the history, plus one.

    With ``provider_editing="anthropic"``, the policy's ``clear`` steps are sent as Anthropic's
    context management instead (:func:`~contextwise.anthropic_context_management`): the
    request's model settings carry ``context_management`` and ``betas``, which ``ChatAnthropic``
    sends as they are, added to those the chat model already has. With ``"openai"``, its
    ``compress`` steps are sent as the Responses API's compaction
    (:func:`~contextwise.openai_context_management`), and ``ChatOpenAI`` then calls the
    Responses API. The delegated steps no longer run here (except in the retry after a refusal,
    which runs every step), and the report's ``conversation.delegated_steps`` names them.

    Args:
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.
        router: The router that picks the model of each call (a
            :class:`~contextwise.ModelRouter`, a :class:`~contextwise.RuleRouter` or any
            :class:`~contextwise.Router`); with ``models``.
        models: The LangChain chat model of each of the router's labels.
        cache_breakpoints: Whether to add the prompt-cache markers that the request misses, when
            the chat model is langchain-anthropic's ``ChatAnthropic``: Anthropic's
            ``cache_control`` on the system message's last block (on the last tool when there
            is no system message), on the last message that the previous call of the thread
            sent, and on the newest message. The markers already there count (those of
            ``AnthropicPromptCachingMiddleware``, a ``cache_control`` in the model settings), so
            that the request never carries more than Anthropic's four. They are on the request
            only: neither the agent state nor the memory of the thread holds them. ``False`` by
            default.
        provider_editing: ``"anthropic"`` or ``"openai"``: the provider that applies the
            policy's ``clear`` (or ``compress``) steps on its side; ``None``, the default, runs
            every step here.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``); with ``provider_editing``,
            when the policy has no token limits (codes ``provider_char_limits``,
            ``provider_trigger_required``) or runs no step of the provider's kind (code
            ``provider_editing_nothing``).
        InvalidValueError: When ``provider_editing`` names no provider (code
            ``invalid_choice``).
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable, or
            ``cache_breakpoints`` is not a bool (code ``not_a_bool``).
        RoutingConfigurationError: When only one of ``router`` and ``models`` is given (code
            ``router_needs_models``), ``router`` is not a router (code ``invalid_router``), or
            ``models`` is not a mapping with one chat model per label of the router (codes
            ``framework_models_not_mapping``, ``framework_models_mismatch``), or an
            ``anthropic`` spec that a route may send with an effort declares no
            ``max_output_tokens`` and its chat model no ``max_tokens`` (code
            ``missing_output_limit``): otherwise the chat model's own ``max_tokens`` is the
            output limit of the route's thinking settings.

    Examples:
        >>> from contextwise.integrations.langchain import ContextPolicyMiddleware
        >>> middleware = ContextPolicyMiddleware({
        ...     "mode": "reduce", "trigger_chars": 4000, "target_input_chars": 3000,
        ...     "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history",
        ...                "target_chars": 3000}]})
        >>> middleware.name
        'ContextPolicyMiddleware'
    """

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        *,
        router: Router | None = None,
        models: Mapping[str, BaseChatModel] | None = None,
        cache_breakpoints: bool = False,
        provider_editing: ProviderEditing | None = None,
        **options: Unpack[IntegrationOptions],
    ) -> None:
        super().__init__()
        self._cache_breakpoints = check_flag(cache_breakpoints)
        self._warned_stateless = False
        self._routing: StepRouting[BaseChatModel] | None = step_routing(
            router, models, "LangChain", BaseChatModel
        )
        self._output_limits = _output_limits(self._routing)
        self._conversation = conversation_of(policy, options)
        self._editing = editing_of(provider_editing, self._conversation.runner.policy)
        if self._editing is not None:
            self._conversation.delegate(self._editing.kind, self._editing.step_ids)
        # The summaries a reduction paid for go into the thread's ledger before on_result runs.
        self._usage = UsageBook(
            options.get("store"), self.name, self._conversation.max_memory_bytes
        )
        self._conversation.on_result = self._usage.recording(self._conversation.on_result)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Call the model with the policy's context instead of the whole conversation.

        It behaves like :meth:`~ContextPolicyMiddleware.awrap_model_call`; async compressors, apps
        and callbacks are awaited on a private event loop.
        """
        key, pinned = self._key(request), _pinned_parts(request)
        usage = _last_input_tokens(request.messages)
        token = current(_thread_id(request))
        try:
            messages, previous = self._conversation.fit(
                request.messages, key, pinned=pinned, usage=usage
            )
        finally:
            reset(token)
        if key is None:
            self._stateless(request.messages, messages)
        fitted = request.override(messages=messages)
        outcome: RouteOutcome | None = None
        if self._routing is not None:
            outcome, model = self._routing.route(_routing_context(self._routing, request, fitted))
            outcome = _sent(self._routing, outcome)
            fitted = _routed(fitted, outcome, model, self._output_limits)
        fitted = _edited(fitted, self._editing)
        try:
            response = handler(self._marked(fitted, previous))
        except Exception as error:
            if not too_long(error, _OVERFLOW):
                raise
            overflow = _overflow(error, fitted)
            messages, previous = self._conversation.fit(
                request.messages, key, pinned=pinned, overflow=overflow
            )
            if not overflow.reduced:
                raise attach(error, overflow) from None
            try:
                response = handler(self._marked(fitted.override(messages=messages), previous))
            except Exception as again:
                if too_long(again, _OVERFLOW):
                    attach(again, overflow)
                raise
        for thread_id, spent, model in self._usages(request, fitted, response, outcome):
            self._usage.record(thread_id, spent, model=model)
        return response if outcome is None else _recorded(response, outcome)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Call the model with the policy's context, awaiting async compressors, apps and callbacks.

        When the provider refuses the call as longer than its context window (a LangChain
        ``ContextOverflowError``, which the chat models of langchain-openai, langchain-anthropic and
        langchain-google-genai raise, or an error with OpenAI's code ``context_length_exceeded``),
        the messages are reduced again, to the window that the refusal reports less the system
        message, the tools, the output reserve and a 5 percent margin (or else to 10 percent under
        what was sent), and the call is sent once more; the report says so
        (``conversation.overflow``). A second refusal raises the chat model's own error, with the
        report of the retry's reduction as its ``contextwise_report`` attribute.

        Args:
            request: The model request; its messages are the conversation.
            handler: The next step of the chain, which calls the model.

        Returns:
            The model's response; with a router, its AI message records the route.
        """
        key, pinned = self._key(request), _pinned_parts(request)
        usage = _last_input_tokens(request.messages)
        token = current(_thread_id(request))
        try:
            messages, previous = await self._conversation.afit(
                request.messages, key, pinned=pinned, usage=usage
            )
        finally:
            reset(token)
        if key is None:
            self._stateless(request.messages, messages)
        fitted = request.override(messages=messages)
        outcome: RouteOutcome | None = None
        if self._routing is not None:
            context = _routing_context(self._routing, request, fitted)
            outcome, model = await self._routing.aroute(context)
            outcome = _sent(self._routing, outcome)
            fitted = _routed(fitted, outcome, model, self._output_limits)
        fitted = _edited(fitted, self._editing)
        try:
            response = await handler(self._marked(fitted, previous))
        except Exception as error:
            if not too_long(error, _OVERFLOW):
                raise
            overflow = _overflow(error, fitted)
            messages, previous = await self._conversation.afit(
                request.messages, key, pinned=pinned, overflow=overflow
            )
            if not overflow.reduced:
                raise attach(error, overflow) from None
            try:
                response = await handler(self._marked(fitted.override(messages=messages), previous))
            except Exception as again:
                if too_long(again, _OVERFLOW):
                    attach(again, overflow)
                raise
        for thread_id, spent, model in self._usages(request, fitted, response, outcome):
            # The store's write in a worker thread: the event loop never waits for it.
            await self._usage.arecord(thread_id, spent, model=model)
        return response if outcome is None else _recorded(response, outcome)

    def _marked(self, request: ModelRequest[Any], previous: int | None) -> ModelRequest[Any]:
        """The request with the cache markers it misses, when asked for and the chat model is
        Anthropic's; the request alone carries them (the agent state keeps its messages)."""
        if not self._cache_breakpoints or not _is_anthropic(request.model):
            return request
        return _with_breakpoints(request, previous)

    def _stateless(self, history: Sequence[Any], sent: Sequence[Any]) -> None:
        """Warn once when a run without a thread id is reduced: nothing remembers the reduction,
        so the next call reduces the whole conversation again (and buys its summary again)."""
        if self._warned_stateless or (
            len(sent) == len(history) and all(a is b for a, b in zip(sent, history, strict=True))
        ):
            return
        self._warned_stateless = True
        warnings.warn(
            "contextwise: ContextPolicyMiddleware reduced a conversation that has no thread id, "
            "so the reduction is not remembered and the next call reduces (and summarizes) the "
            "whole conversation again. Run the agent with "
            "config={'configurable': {'thread_id': ...}}; no checkpointer is needed.",
            UserWarning,
            stacklevel=3,
        )
    def usage(self, thread_id: str | None = None) -> UsageSummary:
        """The usage and cost of a thread: its model calls and the summaries its policy paid for.

        Each model call's ``usage_metadata`` is recorded with the chat model's name, and each
        summary that a compressor returned with its usage (a :func:`summarizer`), in the
        ledger of the run's thread id: in ``store`` when one was given (it survives a restart),
        else in this process. A call is priced by :func:`~contextwise.cost`: the prices of the
        route's :class:`~contextwise.ModelSpec`, else genai-prices' table for the model's name
        (with the ``prices`` extra); a call with no known price is counted in
        ``unpriced_calls``.

        Args:
            thread_id: The thread id of the runs; ``None`` for the calls made without one.

        Returns:
            The totals: all the calls, per model and per kind (``model``, ``summarizer``).

        Raises:
            InvalidTypeError: When ``thread_id`` is not a string (code ``not_a_string``).
        """
        if thread_id is not None:
            require_string(thread_id, "thread_id")
        return self._usage.summary(thread_id)

    def _usages(
        self,
        request: ModelRequest[Any],
        sent: ModelRequest[Any],
        response: ModelResponse[Any],
        outcome: RouteOutcome | None,
    ) -> Iterator[tuple[str | None, Usage, Any]]:
        """The usage of each AI message of the response, for its thread's ledger: with the
        route's model spec (and its prices), else the model's name."""
        thread_id = _thread_id(request)
        for message in response.result:
            if isinstance(message, AIMessage) and message.usage_metadata is not None:
                usage = usage_from(message.usage_metadata, source="langchain")
                model = outcome.model if outcome is not None else _model_name(sent.model, message)
                yield thread_id, usage, model

    def _key(self, request: ModelRequest[Any]) -> str | None:
        """The conversation's key: the middleware's name and the run's thread id, if any."""
        thread_id = _thread_id(request)
        return None if thread_id is None else f"{self.name}:{thread_id}"


_Message = TypeVar("_Message", bound=BaseMessage)

_EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""The cache marker that ``cache_breakpoints`` puts on a content block."""

_MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result", "search_result"})
"""The content blocks that Anthropic takes a cache marker on (never a thinking block)."""


def _is_anthropic(model: object) -> bool:
    """Whether the chat model is langchain-anthropic's ``ChatAnthropic`` (or a subclass)."""
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError:
        return False
    return isinstance(model, ChatAnthropic)


def _with_breakpoints(request: ModelRequest[Any], previous: int | None) -> ModelRequest[Any]:
    """The request with the markers that :func:`~._breakpoints.choose` finds missing: on the
    system message's last block (else the last tool's extras), on the last message that the
    previous call sent and on the newest message; those already present count (another
    middleware's, a top-level ``cache_control`` in the model settings)."""
    messages = list(request.messages)
    # Anthropic wants longer-lived markers before shorter ones: ours take the top-level one's.
    top = request.model_settings.get("cache_control")
    marker = dict(top) if isinstance(top, Mapping) else dict(_EPHEMERAL)
    marked = {index for index, message in enumerate(messages) if _markers(message)}
    present = sum(_markers(message) for message in messages)
    system = request.system_message
    if system is not None and _markers(system):
        marked.add(SYSTEM)
        present += _markers(system)
    present += sum(1 for tool in request.tools if _tool_marked(tool))
    if request.model_settings.get("cache_control") and messages:
        # Automatic caching: Anthropic puts it on the last block, the newest message.
        marked.add(len(messages) - 1)
        present += 1
    last_tool = request.tools[-1] if request.tools else None
    pinned = (system is not None and bool(system.content)) or isinstance(last_tool, BaseTool)
    overrides: dict[str, Any] = {}
    for position in choose(
        len(messages), pinned=pinned, previous=previous, marked=marked, present=present
    ):
        if position != SYSTEM:
            messages[position] = _mark(messages[position], marker)
        elif system is not None and system.content:
            overrides["system_message"] = _mark(system, marker)
        elif isinstance(last_tool, BaseTool):
            extras = {**(last_tool.extras or {}), "cache_control": marker}
            tagged = last_tool.model_copy(update={"extras": extras})
            overrides["tools"] = [*request.tools[:-1], tagged]
    return request.override(messages=messages, **overrides)


def _markers(message: BaseMessage) -> int:
    """How many cache markers a message's content blocks carry."""
    content = message.content
    if not isinstance(content, list):
        return 0
    return sum(1 for block in content if isinstance(block, dict) and "cache_control" in block)


def _tool_marked(tool: object) -> bool:
    """Whether a tool carries a cache marker (in a LangChain tool's extras, or a dict tool)."""
    if isinstance(tool, BaseTool):
        return "cache_control" in (tool.extras or {})
    return isinstance(tool, dict) and "cache_control" in tool


def _mark(message: _Message, marker: Mapping[str, Any]) -> _Message:
    """A copy of the message with ``marker`` on its last block that takes one (a text content
    becomes one text block); the message itself when no block takes one."""
    content = message.content
    if isinstance(content, str):
        if not content.strip():
            return message
        blocks: list[Any] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return message.model_copy(update={"content": blocks})
    blocks = list(content)
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        if isinstance(block, str) and block.strip():
            blocks[index] = {"type": "text", "text": block, "cache_control": dict(marker)}
            return message.model_copy(update={"content": blocks})
        if isinstance(block, dict) and block.get("type") in _MARKABLE:
            blocks[index] = {**block, "cache_control": dict(marker)}
            return message.model_copy(update={"content": blocks})
    return message


def _model_name(model: object, message: AIMessage) -> str | None:
    """The name of the model that answered: the response's, else the chat model's."""
    for name in (
        message.response_metadata.get("model_name"),
        message.response_metadata.get("model"),
        getattr(model, "model_name", None),
        getattr(model, "model", None),
    ):
        if isinstance(name, str) and name:
            return name
    return None


def _pinned_parts(request: ModelRequest[Any]) -> list[Any]:
    """What the model receives besides the conversation, which counts against the policy's
    limits: the system message, each tool as the OpenAI tool format writes it, and the response
    format's schemas."""
    parts: list[Any] = []
    if request.system_message is not None:
        parts.append(request.system_message)
    parts.extend(convert_to_openai_tool(tool) for tool in request.tools)
    parts.extend(_format_schemas(request.response_format))
    return parts


def _format_schemas(response_format: object) -> list[dict[str, Any]]:
    """The JSON schemas of a response format: a tool or provider strategy's, or a schema's."""
    if response_format is None:
        return []
    specs = list(getattr(response_format, "schema_specs", None) or ())
    single = getattr(response_format, "schema_spec", None)
    if single is not None:
        specs.append(single)
    schemas = [spec.json_schema for spec in specs if isinstance(spec.json_schema, dict)]
    if schemas:
        return schemas
    # A strategy without specs (AutoStrategy) holds its schema; a schema is given as it is.
    schema = response_format
    if not isinstance(response_format, type | dict):
        schema = getattr(response_format, "schema", response_format)
    if isinstance(schema, dict):
        return [schema]
    to_json = getattr(schema, "model_json_schema", None)
    return [to_json()] if callable(to_json) else []


def _last_input_tokens(messages: Sequence[Any]) -> int | None:
    """The input tokens the provider reported for the last model call: the newest AI message's
    ``usage_metadata``, if it has one."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            usage = message.usage_metadata
            count = None if usage is None else usage.get("input_tokens")
            return count if isinstance(count, int) and count > 0 else None
    return None


def _routing_context(
    routing: StepRouting[BaseChatModel], request: ModelRequest[Any], fitted: ModelRequest[Any]
) -> RoutingContext:
    """The routing context of a call: the fitted messages, and the last AI message's route."""
    answers = [message for message in request.messages if isinstance(message, AIMessage)]
    previous = answers[-1].response_metadata.get(ROUTE_KEY) if answers else None
    system = fitted.system_message
    return routing.context(
        len(answers) + 1,
        fitted.messages,
        previous,
        system="" if system is None else str(system.text),
        tools=[_tool_spec(tool) for tool in fitted.tools],
    )


_OVERFLOW = (ContextOverflowError,)
"""LangChain's error for a prompt that a provider refuses as too long."""


def _overflow(error: BaseException, request: ModelRequest[Any]) -> Overflow:
    """The retry of a refused call: the refusal's sizes, and the chat model's output limit."""
    settings = request.model_settings
    reserve = settings.get("max_tokens") or getattr(request.model, "max_tokens", None)
    return Overflow(read_refusal(error), reserve=reserve if isinstance(reserve, int) else None)


def _tool_spec(tool: BaseTool | dict[str, Any]) -> dict[str, Any]:
    """A tool as the router sees it: a dict tool as it is, a LangChain tool by name and
    description."""
    if isinstance(tool, dict):
        return tool
    return {"type": "function", "function": {"name": tool.name, "description": tool.description}}


def _output_limits(routing: StepRouting[BaseChatModel] | None) -> dict[str, int]:
    """The output limit of each Anthropic label whose spec declares none: its chat model's own
    ``max_tokens``. A label that may be routed with an effort and has neither is refused here,
    not at its first model call."""
    if routing is None:
        return {}
    limits: dict[str, int] = {}
    rules = getattr(routing.router, "rules", ())
    for label, spec in routing.router.models.items():
        if spec.api != "anthropic" or spec.max_output_tokens is not None:
            continue
        own = getattr(routing.models[label], "max_tokens", None)
        if isinstance(own, int) and not isinstance(own, bool) and own > 0:
            limits[label] = own
            continue
        efforts = [spec.effort] + [
            getattr(rule, "effort", None) for rule in rules if getattr(rule, "model", None) == label
        ]
        if any(effort is not None for effort in efforts):
            raise RoutingConfigurationError(
                "missing_output_limit", field="max_output_tokens", model=spec.name, api="anthropic"
            )
    return limits


def _sent(routing: StepRouting[BaseChatModel], outcome: RouteOutcome) -> RouteOutcome:
    """The outcome as it is sent: a spec without ``api`` sends no effort (the chat model's own
    keyword arguments depend on the provider), so the route records none, with a warning."""
    if outcome.model.api is None:
        return routing.unsent(outcome, f"the model spec {outcome.model.name!r} declares no api")
    return outcome


def _routed(
    request: ModelRequest[Any],
    outcome: RouteOutcome,
    model: BaseChatModel,
    limits: Mapping[str, int],
) -> ModelRequest[Any]:
    """The request on the chosen chat model, with the route's effort in its model settings (an
    Anthropic spec without an output limit takes its chat model's own)."""
    spec = outcome.model
    if spec.max_output_tokens is None and outcome.choice in limits:
        spec = spec.model_copy(update={"max_output_tokens": limits[outcome.choice]})
    settings = {**request.model_settings, **effort_options(spec, outcome.effort)}
    return request.override(model=model, model_settings=settings)


def _edited(request: ModelRequest[Any], editing: Editing | None) -> ModelRequest[Any]:
    """The request with the provider's context editing in its model settings (the chat model's
    keyword arguments), added to the betas and edits the settings or the chat model have."""
    if editing is None:
        return request
    settings = dict(request.model_settings)
    model = request.model
    if editing.provider == "anthropic":
        betas = settings.get("betas", getattr(model, "betas", None))
        settings["betas"] = editing.merged_betas(betas)
    existing = settings.get("context_management", getattr(model, "context_management", None))
    settings["context_management"] = editing.merged(existing)
    return request.override(model_settings=settings)


def _recorded(response: ModelResponse[Any], outcome: RouteOutcome) -> ModelResponse[Any]:
    """The response, its AI messages recording the route (what the next call keeps if sticky)."""
    for message in response.result:
        if isinstance(message, AIMessage):
            message.response_metadata[ROUTE_KEY] = route_record(outcome)
    return response


def _thread_id(request: ModelRequest[Any]) -> str | None:
    """The thread id of the run: the runtime's execution info, else the run's config."""
    info = getattr(getattr(request, "runtime", None), "execution_info", None)
    thread_id = getattr(info, "thread_id", None)
    if thread_id is None:
        try:
            configurable = get_config().get("configurable") or {}
        except RuntimeError:  # not inside a runnable: no config
            configurable = {}
        thread_id = configurable.get("thread_id")
    return None if thread_id is None else str(thread_id)


def recall_tool(
    *, archive: object = None, limit: int = DEFAULT_RECALL_LIMIT, name: str = "recall"
) -> BaseTool:
    """Return :func:`contextwise.recall` as a LangChain tool, reading the agent's own messages.

    The tool reads the originals from the agent state's ``messages`` (LangChain injects the
    state: the model does not see that argument), then from ``archive``. Give it to
    ``create_agent(tools=[...])`` beside the :class:`ContextPolicyMiddleware` whose policy
    clears or clips tool results, and name it in the ``clear`` step's ``exclude_tools``.

    Args:
        archive: A :class:`~contextwise.session.ContextSession`, its archive, or a function
            that returns it; see :func:`contextwise.recall`.
        limit: The most characters that one page holds; 8,000 by default.
        name: The tool's name; ``recall`` by default, the name the placeholders use.

    Returns:
        A LangChain ``StructuredTool`` with a sync and an async face.

    Raises:
        InvalidValueError: When the limit is below 1 or the name is blank or holds a character
            that a framework cannot take (NUL, a line break, a lone surrogate).
        InvalidTypeError: When the limit is not a whole number or the name not a string.

    Examples:
        >>> from contextwise.integrations.langchain import recall_tool
        >>> tool = recall_tool()
        >>> tool.name, sorted(tool.args)
        ('recall', ['limit', 'offset', 'ref'])
    """
    from langchain.tools import ToolRuntime
    from langchain_core.tools import StructuredTool

    base = make_recall_tool(archive=archive, limit=limit, name=name)

    def arguments(ref: str, offset: int, size: int) -> dict[str, Any]:
        return {"ref": ref, "offset": offset, "limit": size}

    # One tool, whose index of each thread's messages is kept between calls.
    def run(ref: str, runtime: ToolRuntime, offset: int = 0, limit: int = limit) -> str:
        return answer_sync(base, runtime.state["messages"], arguments(ref, offset, limit))

    async def arun(ref: str, runtime: ToolRuntime, offset: int = 0, limit: int = limit) -> str:
        return await answer(base, runtime.state["messages"], arguments(ref, offset, limit))

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=base.description
    )


def summarizer(
    model: BaseChatModel,
    *,
    prompt: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
) -> Callable[[list[BaseMessage]], WithUsage]:
    """Make a compressor that summarises messages with a LangChain chat model.

    Give it to the policy as a compressor (``compressors={"summary": summarizer(model)}``) and
    name it in a ``compress`` step. It sends the chat model ``prompt`` as the system message and
    the messages to summarise as one transcript, and returns the summary with the call's usage
    (:class:`~contextwise.WithUsage`), which the report keeps on the step's change and
    :meth:`ContextPolicyMiddleware.usage` records as a ``summarizer`` call. The call is internal:
    it is tagged ``nostream`` as LangChain's own ``SummarizationMiddleware`` tags its calls, so
    an agent streamed with ``stream_mode="messages"`` shows none of the summary's tokens. When
    the chat model refuses the transcript as too long (``ContextOverflowError``), the middle of
    the transcript is left out and the call is sent once more.

    Args:
        model: The chat model that writes the summaries; a small, cheap one does.
        prompt: The instructions of the summary; :data:`SUMMARY_PROMPT` when omitted.
        max_tokens: The most tokens that a summary may take (the chat model's ``max_tokens``).

    Returns:
        The compressor: it takes LangChain messages and returns the summary's text with its
        usage.

    Raises:
        InvalidTypeError: When ``model`` is not a LangChain chat model, ``prompt`` not a string
            or ``max_tokens`` not a whole number.
        InvalidValueError: When ``max_tokens`` is below 1 or ``prompt`` is blank.

    Examples:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from contextwise.integrations.langchain import summarizer
        >>> summarize = summarizer(GenericFakeChatModel(messages=iter([AIMessage("A budget.")])))
        >>> summarize([HumanMessage("Plan my budget for the trip.")]).value
        'A budget.'
    """
    require_instance(model, BaseChatModel, "model", "BaseChatModel")
    instructions = summary_prompt(prompt)
    limit = summary_tokens(max_tokens)
    config: Any = {"tags": [TAG_NOSTREAM], "metadata": {"lc_source": "contextwise-summary"}}

    def summarize(messages: list[BaseMessage]) -> WithUsage:
        text = transcript((message.type, _message_text(message)) for message in messages)
        try:
            reply = model.invoke(_summary_request(instructions, text), config, max_tokens=limit)
        except ContextOverflowError:
            reply = model.invoke(
                _summary_request(instructions, shrunk(text)), config, max_tokens=limit
            )
        usage = getattr(reply, "usage_metadata", None)
        found = Usage() if usage is None else usage_from(usage, source="langchain")
        answered = _model_name(model, reply) if isinstance(reply, AIMessage) else None
        return WithUsage(str(reply.text).strip(), found, answered)

    return summarize


def _summary_request(prompt: str, text: str) -> list[BaseMessage]:
    return [SystemMessage(prompt), HumanMessage(text)]


def _message_text(message: BaseMessage) -> str:
    """A message as the transcript shows it: its text, and the tool calls of an AI message."""
    text = str(message.text)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = "; ".join(f"{call['name']}({call['args']})" for call in message.tool_calls)
        text = f"{text}\n[tool calls: {calls}]".strip()
    name = getattr(message, "name", None)
    return f"({name}) {text}" if message.type == "tool" and name else text
