"""OpenAI Agents SDK: a session that hands the runner the policy's context and stores everything.

Install with ``pip install 'contextwise[openai-agents]'``. Importing this module imports the Agents
SDK; it raises :class:`~contextwise.MissingDependencyError` when the SDK is not installed.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Unpack

from contextwise import (
    DEFAULT_RECALL_LIMIT,
    ContextPolicy,
    MissingDependencyError,
    ModelSpec,
    PolicyRunner,
    RouteOutcome,
    Router,
    RoutingContext,
)
from contextwise import recall_tool as make_recall_tool
from contextwise._checks import require_instance
from contextwise._effects import call_blocking, run_async
from contextwise.accounting import Usage, UsageSource, UsageSummary, WithUsage, usage_from
from contextwise.errors import InvalidTypeError
from contextwise.integrations import IntegrationOptions
from contextwise.integrations._breakpoints import check_flag, choose
from contextwise.integrations._conversation import conversation_of, fingerprint
from contextwise.integrations._editing import Editing, ProviderEditing, editing_of, unsupported
from contextwise.integrations._overflow import Overflow, attach, read_refusal, too_long
from contextwise.integrations._routing import (
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
from contextwise.session import ConversationStore
from contextwise.session._api import check_store, check_ttl

try:
    from agents import (
        FunctionTool,
        Model,
        ModelResponse,
        ModelSettings,
        ModelTracing,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        RunHooks,
    )
    from agents.memory import Session
    from agents.run_config import CallModelData, ModelInputData, RunConfig
    from openai import BadRequestError
    from openai.types.shared import Reasoning
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="openai-agents", extra="openai-agents"
    ) from error

if TYPE_CHECKING:
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.items import TResponseInputItem, TResponseStreamEvent
    from agents.memory import SessionSettings
    from agents.tool import Tool
    from agents.tool_context import ToolContext
    from openai.types.responses.response_prompt_param import ResponsePromptParam

__all__ = [
    "SUMMARY_PROMPT",
    "PolicyModel",
    "PolicySession",
    "RoutedModel",
    "recall_tool",
    "summarizer",
]

logger = logging.getLogger("contextwise.integrations")
"""Where the integrations log their warnings, in English for operators."""

_FITTED = [0]
"""How many calls the policy models of this process have fitted: a :class:`PolicySession` that
sees it unchanged between two runs' items knows that no model applied a policy."""


class PolicySession:
    """An Agents SDK session that wraps another one, and the policy applied at every model call.

    It implements the SDK's ``Session`` protocol, so ``Runner.run(agent, prompt,
    session=policy_session, run_config=policy_session.run_config())`` takes it like any session.
    The wrapped session (an ``SQLiteSession``, for example) stores every item: ``get_items``,
    ``add_items``, ``pop_item`` and ``clear_session`` go to it unchanged. The SDK calls
    ``get_items`` for the history a run starts from, but also to check what it saved and to
    rewind, and a session cannot tell these calls apart: so the items come back as they were
    stored.

    The policy runs at every model call instead, inside a run too (its tool calls and their
    outputs included), through :meth:`model_input_filter`, the SDK's
    ``call_model_input_filter``; :meth:`run_config` returns a ``RunConfig`` that sets it (and
    keeps a filter the caller already has). A ``SessionSettings(limit=...)`` then only limits
    what the runner reads: the policy still bounds what the model receives. The items are
    Responses items, each ``reasoning`` item kept with the item that follows it and each
    ``function_call`` with its output. The instructions are not items: they are a pinned part,
    which counts against the triggers and targets and which no step removes (the filter cannot
    see the tools). With the run hooks of :meth:`hooks`, the token measure is the provider's
    count of the previous call plus the estimate of the items added since. A compressor that
    fails leaves the input as it was, and the report says so.

    A session passed to ``Runner.run`` without its ``run_config`` applies nothing. So when a run
    stores a model's output (``add_items``) and neither :meth:`model_input_filter` nor a
    :class:`PolicyModel` fitted a model call since the previous output was stored, the session
    logs one warning, once per session, on the ``contextwise.integrations`` logger (a logged
    warning, not a ``warnings.warn``, so that it reaches the application's logs).

    The filter remembers its reductions per session (the session's id): the model receives the
    last reduced context plus the items new since, and the policy reduces again only when that
    crosses its trigger, so the provider's prompt cache holds and a summary is made once. Above
    the trigger, the trim, clear and clip steps run at every call; after a reduction that missed
    its target, a compress or app step runs again only when the others cannot bring the prompt
    under the trigger, or once the context has grown by the difference between trigger and
    target. An
    input that does not extend what it saw starts again from the whole input (``resynced`` in
    the report's ``conversation``). With ``store``, the memory survives a restart and is shared
    by workers; a store that fails never ends the run.

    Compressors receive Responses items and return an item (or text, made into an item). The
    options are bound once, here; an item of a type contextwise does not know (the SDK stores
    new item types before contextwise learns them) is kept as an opaque unit unless
    ``unknown_items="error"`` is given.

    Args:
        session: The session that stores the items.
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``).
        InvalidTypeError: When ``session`` is not an Agents SDK session (code
            ``not_an_instance``), or ``on_result`` or a compressor or app is not callable.

    Examples:
        >>> import asyncio
        >>> from agents import SQLiteSession
        >>> from agents.run_config import CallModelData, ModelInputData
        >>> from contextwise.integrations.openai_agents import PolicySession
        >>> session = PolicySession(SQLiteSession("demo"), {
        ...     "mode": "reduce", "trigger_chars": 30, "target_input_chars": 20,
        ...     "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}]})
        >>> async def demo():
        ...     for n in range(3):
        ...         await session.add_items([
        ...             {"role": "user", "content": f"Question {n}?"},
        ...             {"role": "assistant", "content": f"Answer {n}."}])
        ...     stored = await session.get_items()
        ...     model_input = ModelInputData(input=stored, instructions="Be brief.")
        ...     data = CallModelData(model_data=model_input, agent=None, context=None)
        ...     return (await session.model_input_filter(data)).input, stored
        >>> context, stored = asyncio.run(demo())
        >>> [item["content"] for item in context], len(stored)
        (['Question 2?', 'Answer 2.'], 6)
    """

    session: Session
    """The wrapped session, which stores every item."""

    session_id: str
    """The wrapped session's id."""

    session_settings: SessionSettings | None
    """The wrapped session's settings."""

    def __init__(
        self,
        session: Session,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        **options: Unpack[IntegrationOptions],
    ) -> None:
        _check_session(session)
        self.session = session
        self.session_id = session.session_id
        self.session_settings = getattr(session, "session_settings", None)
        self._input_tokens: int | None = None
        self._applied = False
        self._warned = False
        self._model_calls = _FITTED[0]
        self._conversation = conversation_of(policy, options)
        # The summaries a reduction paid for go into the session's ledger first.
        self._book = UsageBook(
            options.get("store"), "PolicySession", self._conversation.max_memory_bytes
        )
        self._conversation.on_result = self._book.recording(self._conversation.on_result)

    async def model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """Apply the policy to the input of a model call: the SDK's ``call_model_input_filter``.

        Args:
            data: The agent, the context and the model input (instructions and items).

        Returns:
            The model input, with the items that the policy keeps and the same instructions.
        """
        model_data = data.model_data
        instructions = model_data.instructions
        self._applied = True
        token = current(str(self.session_id))
        try:
            fitted = await self._conversation.afit(
                list(model_data.input),
                str(self.session_id),
                pinned=[] if not instructions else [instructions],
                usage=self._input_tokens,
            )
            items = fitted.messages
        finally:
            reset(token)
        return ModelInputData(input=items, instructions=instructions)

    def hooks(self, base: RunHooks[Any] | None = None) -> RunHooks[Any]:
        """Return run hooks that give the policy the provider's count of each model call.

        Pass them to ``Runner.run(..., hooks=...)``: after each model call they keep the
        response's ``usage.input_tokens``, and the next call's token measure is that count plus
        the estimate of the items added since (the estimate alone without them).

        Args:
            base: Run hooks of your own, which the returned hooks call first.

        Returns:
            Run hooks that record the usage, then call ``base``'s.
        """
        return _UsageHooks(self, base if base is not None else RunHooks())

    async def _observe(self, response: ModelResponse, model: object = None) -> None:
        """Keep the input tokens the provider counted for the last model call, and record its
        usage in the session's ledger."""
        count = response.usage.input_tokens
        self._input_tokens = count if isinstance(count, int) and count > 0 else None
        name = model if isinstance(model, str) else getattr(model, "model", None)
        usage = usage_from(response.usage, source="openai-agents")
        await self._book.arecord(
            str(self.session_id), usage, model=name if isinstance(name, str) else None
        )

    def usage(self) -> UsageSummary:
        """The usage and cost of the session: its model calls and the summaries its policy paid
        for.

        The summaries that a compressor returned with their usage (a :func:`summarizer`) are
        recorded when the policy runs; each model call's usage is recorded by the run hooks of
        :meth:`hooks` (pass them to ``Runner.run``), with the agent's model name. They go in the
        ledger of the session's id: in ``store`` when one was given, else in this process. A
        call is priced by :func:`~contextwise.cost`, from genai-prices' table for the model's
        name; a call with no known price is counted in ``unpriced_calls``.

        Returns:
            The totals: all the calls, per model and per kind (``model``, ``summarizer``).
        """
        return self._book.summary(str(self.session_id))

    def run_config(self, base: RunConfig | None = None) -> RunConfig:
        """Return a ``RunConfig`` that applies the policy at every model call.

        Args:
            base: The run configuration to start from; its own ``call_model_input_filter``, if
                any, runs after the policy, on what the policy keeps.

        Returns:
            A copy of ``base`` (or a new ``RunConfig``) whose ``call_model_input_filter`` is
            :meth:`model_input_filter`, composed with the one ``base`` had.
        """
        if base is not None:
            require_instance(base, RunConfig, "base", "RunConfig")
        config = base if base is not None else RunConfig()
        existing = config.call_model_input_filter
        if existing is None:
            plain: RunConfig = dataclasses.replace(
                config, call_model_input_filter=self.model_input_filter
            )
            return plain

        async def composed(data: CallModelData[Any]) -> ModelInputData:
            kept = await self.model_input_filter(data)
            reply = existing(dataclasses.replace(data, model_data=kept))
            result: ModelInputData = await reply if inspect.isawaitable(reply) else reply
            return result

        replaced: RunConfig = dataclasses.replace(config, call_model_input_filter=composed)
        return replaced

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """Return the wrapped session's items, unchanged.

        Args:
            limit: When given, the number of latest items to return.

        Returns:
            The stored items, oldest first.
        """
        return await self.session.get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add items to the wrapped session.

        Args:
            items: The items to store.
        """
        self._check_applied(items)
        await self.session.add_items(items)

    def _check_applied(self, items: Sequence[Any]) -> None:
        """Warn once when a model's output is stored and nothing applied the policy to the calls
        that made it (since the previous output was stored)."""
        if not isinstance(items, list | tuple) or not any(_from_model(item) for item in items):
            return
        calls = _FITTED[0]
        applied, self._applied = self._applied or calls != self._model_calls, False
        self._model_calls = calls
        if applied or self._warned:
            return
        self._warned = True
        logger.warning(
            "PolicySession %r stores items, but nothing applied its policy in that run: pass "
            "run_config=session.run_config() to Runner.run, or give the agent a PolicyModel",
            str(self.session_id),
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the wrapped session's latest item.

        Returns:
            The item, or ``None`` when the session is empty.
        """
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        """Remove every item from the wrapped session."""
        await self.session.clear_session()


class _ModelCalls(Model):
    """The call path of :class:`PolicyModel` and :class:`RoutedModel`: fit the items (the
    policy), choose the model that serves them (the route), send, count and record the usage,
    and reduce again once after a refusal as too long. Without a policy the items go as they are
    and a refusal is the provider's own error."""

    _editing: Editing | None = None

    def __init__(self) -> None:
        self._counted: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    async def _respond(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        """One call: the items fitted, the serving model chosen, the response recorded; a refusal
        as too long reduced and sent once more."""
        call = _Call(system_instructions, input, tools, output_schema, handoffs, model_settings)
        key = None if previous_response_id or conversation_id else call.key()
        book = conversation_id or key
        fitted = await self._fit(call, key, book)
        served = await self._serve(call, fitted, _edited_settings(model_settings, self._editing))

        async def send(items: list[Any]) -> ModelResponse:
            response = await served.model.get_response(
                system_instructions,
                items,
                served.settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                previous_response_id=previous_response_id,
                conversation_id=conversation_id,
                prompt=prompt,
            )
            self._count(key, response.usage)
            await self._record(book, response.usage, "openai-agents", served.priced)
            return response

        try:
            response = await send(fitted)
        except BadRequestError as error:
            overflow = await self._refit(error, call, key, book)
            try:
                response = await send(overflow[1])
            except BadRequestError as again:
                raise (attach(again, overflow[0]) if _too_long(again) else again) from None
        await served.answered(response.output)
        return response

    async def _stream(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """One streamed call, as :meth:`_respond`; retried only before its first event."""
        call = _Call(system_instructions, input, tools, output_schema, handoffs, model_settings)
        key = None if previous_response_id or conversation_id else call.key()
        book = conversation_id or key
        fitted = await self._fit(call, key, book)
        served = await self._serve(call, fitted, _edited_settings(model_settings, self._editing))

        def send(items: list[Any]) -> AsyncIterator[TResponseStreamEvent]:
            return served.model.stream_response(
                system_instructions,
                items,
                served.settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                previous_response_id=previous_response_id,
                conversation_id=conversation_id,
                prompt=prompt,
            )

        started = False
        try:
            async for event in send(fitted):
                started = True
                await self._counted_event(key, book, event, served)
                yield event
        except BadRequestError as error:
            if started:
                raise
            overflow = await self._refit(error, call, key, book)
            try:
                async for event in send(overflow[1]):
                    await self._counted_event(key, book, event, served)
                    yield event
            except BadRequestError as again:
                raise (attach(again, overflow[0]) if _too_long(again) else again) from None

    def _usage(self, key: str | None) -> int | None:
        """The provider's count of the input tokens of the conversation's last call."""
        if key is None:
            return None
        with self._lock:
            return self._counted.get(key)

    def _count(self, key: str | None, usage: object) -> None:
        """Keep the provider's count of a call's input tokens (a bounded table)."""
        count = getattr(usage, "input_tokens", None)
        if key is None or not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            return
        with self._lock:
            self._counted[key] = count
            self._counted.move_to_end(key)
            while len(self._counted) > _MAX_REMEMBERED:
                self._counted.popitem(last=False)

    async def _counted_event(
        self, key: str | None, book: str | None, event: object, served: _Served
    ) -> None:
        """Keep the input tokens of a stream's completed response, record its usage, and tell
        the router what it produced."""
        if getattr(event, "type", None) != "response.completed":
            return
        response = getattr(event, "response", None)
        usage = getattr(response, "usage", None)
        self._count(key, usage)
        if usage is not None:
            name = getattr(response, "model", None)
            model: ModelSpec | str | None = served.priced
            if served.outcome is None and isinstance(name, str) and name:
                model = name
            await self._record(book, usage, "openai-responses", model)
        await served.answered(getattr(response, "output", []))

    async def _record(
        self,
        book: str | None,
        usage: Any,
        source: UsageSource,
        model: ModelSpec | str | None,
    ) -> None:
        """Record a call's usage: no ledger without a policy (a :class:`PolicyModel` around
        this one records it, under the chosen model's name)."""

    async def _serve(self, call: _Call, items: list[Any], settings: ModelSettings) -> _Served:
        """The model that serves a call, with its settings."""
        raise NotImplementedError

    async def _fit(self, call: _Call, key: str | None, book: str | None) -> list[Any]:
        """No policy: the call's items as they are."""
        return call.items

    async def _refit(
        self, error: BadRequestError, call: _Call, key: str | None, book: str | None
    ) -> tuple[Overflow, list[Any]]:
        """No policy: a refusal is the provider's own error."""
        raise error


class PolicyModel(_ModelCalls):
    """An Agents SDK ``Model`` that applies the policy to the input of each call of another one.

    Give it as an agent's model, ``Agent(model=PolicyModel(model, policy))``: no ``run_config``
    is needed. At each call (``get_response`` or ``stream_response``) the input items go through
    the policy as the fragment ``fragment_id``, and the wrapped model receives the items that
    the policy keeps, with the same instructions, tools, handoffs and output schema. The items
    are Responses items, each ``reasoning`` item kept with the item that follows it and each
    ``function_call`` with its output. A compressor that fails leaves the input as it was, and
    the report says so.

    The instructions, the tool and handoff definitions and the output schema are the call's
    pinned parts: no step removes them. The model remembers its reductions per conversation,
    keyed by the fingerprint of the call's first input item (the run's first message): the
    model receives the last reduced context plus the items new since, and the policy reduces
    again only when that crosses its trigger, so the provider's prompt cache holds and a
    summary is made once. An input that does not extend what it saw starts again from the
    whole input (``resynced`` in the report's ``conversation``). A call with a
    ``previous_response_id`` or a ``conversation_id`` sends only the new items (the provider
    keeps the rest): the policy then applies to them alone, with no memory. With ``store``,
    the memory survives a restart and is shared by workers; a store that fails never ends the
    run. Each call's usage is recorded per conversation: see :meth:`usage`.

    When the provider refuses a call as longer than its context window (an
    ``openai.BadRequestError`` with the code ``context_length_exceeded``), the items are reduced
    again, to the window that the refusal reports less the pinned parts, the output reserve
    (``max_tokens``) and a 5 percent margin, or else to 10 percent under what was sent, and the call
    is sent once more; the report says so (``conversation.overflow``). A second refusal raises the
    SDK's own error, with the report of the retry's reduction as its ``contextwise_report``
    attribute. A stream is retried only when the refusal comes before its first event.

    After each call, the model keeps the provider's count of its input tokens (the response's
    ``usage``): with a counter, the next call of the conversation measures its tokens as that
    count plus the estimate of the items added since.

    With ``provider_editing="anthropic"``, the policy's ``clear`` steps are sent as Anthropic's
    context management instead (:func:`~contextwise.anthropic_context_management`): the model
    settings' ``extra_body`` carries ``context_management`` and their ``extra_headers`` the
    ``anthropic-beta`` header, which a Chat Completions model sends as they are (a
    ``LitellmModel`` that reaches Anthropic); an ``OpenAIResponsesModel`` cannot send them. With
    ``"openai"``, its ``compress`` steps are sent as the Responses API's compaction
    (:func:`~contextwise.openai_context_management`), in the settings' ``extra_args`` of an
    ``OpenAIResponsesModel``; an ``OpenAIChatCompletionsModel`` cannot send it (the Chat
    Completions API has no compaction). Both are added to the edits and betas the settings
    already have. The delegated steps no longer run here (except in the retry after a refusal,
    which runs every step), and the report's ``conversation.delegated_steps`` names them.

    Args:
        model: The Agents SDK model that serves the calls (an ``OpenAIResponsesModel``, an
            ``OpenAIChatCompletionsModel``, a :class:`RoutedModel`...).
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.
        cache_breakpoints: Whether to add OpenAI's explicit prompt-cache breakpoints
            (``prompt_cache_breakpoint``) that the input misses, when the wrapped model is an
            ``OpenAIResponsesModel`` or an ``OpenAIChatCompletionsModel`` (or a
            :class:`RoutedModel` of them): on the last item that the previous call of the
            conversation sent, and on the newest item, counting the breakpoints already there so
            that a request never carries more than four. The instructions and the tools are
            passed on as they are, with no breakpoint of their own: they are the start of every
            cached prefix. A LiteLLM model receives none, as the Agents SDK passes no Anthropic
            ``cache_control`` through. They are on the request only: neither the session nor the
            run's items hold them. ``False`` by default.
        provider_editing: ``"anthropic"`` or ``"openai"``: the provider that applies the
            policy's ``clear`` (or ``compress``) steps on its side; ``None``, the default, runs
            every step here.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``); with ``provider_editing``,
            when the policy has no token limits (codes ``provider_char_limits``,
            ``provider_trigger_required``) or runs no step of the provider's kind (code
            ``provider_editing_nothing``), or the model cannot send it (code
            ``provider_editing_unsupported``).
        InvalidValueError: When ``provider_editing`` names no provider (code
            ``invalid_choice``).
        InvalidTypeError: When ``model`` is not an Agents SDK ``Model`` (code
            ``not_an_instance``), ``on_result`` or a compressor or app is not callable, or
            ``cache_breakpoints`` is not a bool (code ``not_a_bool``).

    Examples:
        >>> from agents import OpenAIResponsesModel
        >>> from openai import AsyncOpenAI
        >>> from contextwise.integrations.openai_agents import PolicyModel
        >>> model = PolicyModel(OpenAIResponsesModel("gpt-5-mini", AsyncOpenAI(api_key="sk-test")),
        ...     {"mode": "reduce", "trigger_chars": 4000, "target_input_chars": 3000,
        ...      "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}]})
        >>> type(model.model).__name__
        'OpenAIResponsesModel'
    """

    def __init__(
        self,
        model: Model,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        *,
        cache_breakpoints: bool = False,
        provider_editing: ProviderEditing | None = None,
        **options: Unpack[IntegrationOptions],
    ) -> None:
        require_instance(model, Model, "model", "Model")
        super().__init__()
        self._cache_breakpoints = check_flag(cache_breakpoints)
        self._model = model
        self._conversation = conversation_of(policy, options)
        self._editing = _agents_editing(provider_editing, model, self._conversation.runner.policy)
        if self._editing is not None:
            self._conversation.delegate(self._editing.kind, self._editing.step_ids)
        # The summaries a reduction paid for go into the conversation's ledger first.
        self._book = UsageBook(
            options.get("store"), "PolicyModel", self._conversation.max_memory_bytes
        )
        self._conversation.on_result = self._book.recording(self._conversation.on_result)

    @property
    def model(self) -> Model:
        """The wrapped model, which serves the calls."""
        return self._model

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        """Apply the policy to the input, then get the wrapped model's response.

        Args:
            system_instructions: The agent's instructions, pinned and passed on.
            input: The input items, which the policy fits.
            model_settings: Passed on; their ``max_tokens`` is the output reserve.
            tools: The tools, pinned and passed on.
            output_schema: The output schema, pinned and passed on.
            handoffs: The handoffs, pinned and passed on.
            tracing: Passed on.
            previous_response_id: Passed on; with it, the policy has no memory.
            conversation_id: Passed on; with it, the policy has no memory.
            prompt: Passed on.

        Returns:
            The wrapped model's response.

        Raises:
            openai.BadRequestError: When the provider refuses the retry as too long too, with
                the retry's report as ``contextwise_report``.
        """
        return await self._respond(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        )

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """Apply the policy to the input, then stream the wrapped model's response.

        Args:
            system_instructions: The agent's instructions, pinned and passed on.
            input: The input items, which the policy fits.
            model_settings: Passed on; their ``max_tokens`` is the output reserve.
            tools: The tools, pinned and passed on.
            output_schema: The output schema, pinned and passed on.
            handoffs: The handoffs, pinned and passed on.
            tracing: Passed on.
            previous_response_id: Passed on; with it, the policy has no memory.
            conversation_id: Passed on; with it, the policy has no memory.
            prompt: Passed on.

        Yields:
            The wrapped model's stream events.

        Raises:
            openai.BadRequestError: When the provider refuses the retry as too long too, with
                the retry's report as ``contextwise_report``.
        """
        async for event in self._stream(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        ):
            yield event

    async def close(self) -> None:
        """Close the wrapped model."""
        await self._model.close()

    async def _record(
        self,
        book: str | None,
        usage: Any,
        source: UsageSource,
        model: ModelSpec | str | None,
    ) -> None:
        """Record a call's usage in the conversation's ledger (the store's write in a worker
        thread)."""
        await self._book.arecord(book, usage_from(usage, source=source), model=model)

    async def _serve(self, call: _Call, items: list[Any], settings: ModelSettings) -> _Served:
        """The model that serves a call, with its settings: the wrapped model, or the model that
        a wrapped :class:`RoutedModel` chooses for the fitted items (one call path: the policy,
        the overflow, the usage under the chosen model's name)."""
        if isinstance(self._model, RoutedModel):
            return await self._model._serve(call, items, settings)
        return _Served(self._model, settings)

    async def _fit(self, call: _Call, key: str | None, book: str | None) -> list[Any]:
        """The call's items fitted, its summaries recorded in the ledger ``book``."""
        _FITTED[0] += 1
        token = current(book)
        try:
            items, previous = await self._conversation.afit(
                call.items, key, pinned=call.pinned, usage=self._usage(key)
            )
        finally:
            reset(token)
        return self._marked(items, previous)

    def _marked(self, items: list[Any], previous: int | None) -> list[Any]:
        """The items with the OpenAI cache breakpoints they miss, when asked for and the wrapped
        model sends Responses or Chat Completions requests; the items themselves are not changed
        (the session and the run keep them as they were)."""
        if not self._cache_breakpoints or not _takes_breakpoints(self._model):
            return items
        return _with_breakpoints(items, previous)

    def usage(self, conversation: object = None) -> UsageSummary:
        """The usage and cost of a conversation: its model calls and the summaries its policy paid
        for.

        Each call's ``usage`` is recorded with the wrapped model's name (a stream's, from its
        completed response), or, when the wrapped model is a :class:`RoutedModel`, with the
        model spec of the call's route; each summary that a compressor returned with its usage
        (a :func:`summarizer`) is recorded too, in the ledger of the conversation: in ``store``
        when one was given (it survives a restart), else in this process. A conversation is
        named by what its runs started from: the first input given to ``Runner.run`` (its text,
        or its first item), or the ``conversation_id`` of a conversation that the provider
        keeps. A call is priced by :func:`~contextwise.cost`: with the prices of its route's
        :class:`~contextwise.ModelSpec`, else from genai-prices' table for the model's name; a
        call with no known price is counted in ``unpriced_calls``.

        Args:
            conversation: The first input of the conversation's runs (a text or an item), or
                its ``conversation_id``; ``None`` for the calls sent with a
                ``previous_response_id`` alone.

        Returns:
            The totals: all the calls, per model and per kind (``model``, ``summarizer``).

        Raises:
            InvalidTypeError: When ``conversation`` is neither a text nor an item.
        """
        if conversation is None:
            return self._book.summary(None)
        if not isinstance(conversation, str | Mapping):
            raise InvalidTypeError(
                "not_an_instance",
                name="conversation",
                expected="str | Mapping",
                type_name=type(conversation).__name__,
            )
        if isinstance(conversation, str) and conversation.startswith("conv_"):
            return self._book.summary(conversation)
        first = (
            {"role": "user", "content": conversation}
            if isinstance(conversation, str)
            else conversation
        )
        return self._book.summary(f"agents:{fingerprint(first)}")

    async def _refit(
        self, error: BadRequestError, call: _Call, key: str | None, book: str | None
    ) -> tuple[Overflow, list[Any]]:
        """After a refusal: the items reduced to its target, or the error raised again when it
        is not an overflow or nothing more can be removed."""
        if not _too_long(error):
            raise error
        overflow = Overflow(read_refusal(error), reserve=call.settings.max_tokens)
        token = current(book)
        try:
            items, previous = await self._conversation.afit(
                call.items, key, pinned=call.pinned, overflow=overflow
            )
        finally:
            reset(token)
        if not overflow.reduced:
            raise attach(error, overflow)
        return overflow, self._marked(items, previous)


_BREAKPOINT: Final[Mapping[str, str]] = {"mode": "explicit"}
"""OpenAI's explicit cache breakpoint, on an input content part."""

_MARKABLE = frozenset({"input_text", "input_image", "input_file"})
"""The input content parts that take a ``prompt_cache_breakpoint``."""

_INPUT_ROLES = frozenset({"user", "system", "developer"})
"""The roles of the messages whose content is input content (an assistant's is output)."""


def _takes_breakpoints(model: Model) -> bool:
    """Whether the model sends OpenAI requests, which take ``prompt_cache_breakpoint``: the Agents
    SDK's Responses and Chat Completions models (the Chat Completions converter carries the field
    over), or a :class:`RoutedModel` whose models all do."""
    from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel

    if isinstance(model, RoutedModel):
        return all(_takes_breakpoints(each) for each in model.models.values())
    return isinstance(model, OpenAIResponsesModel | OpenAIChatCompletionsModel)


def _with_breakpoints(items: list[Any], previous: int | None) -> list[Any]:
    """Copies of the items, with a breakpoint where :func:`~._breakpoints.choose` finds one
    missing: at the end of what the previous call sent and on the newest item that takes one. The
    instructions and tools are passed as they are, with no place for a breakpoint."""
    marked = {index for index, item in enumerate(items) if _breakpoints(item)}
    present = sum(_breakpoints(item) for item in items)
    newest = next(
        (index for index in range(len(items) - 1, -1, -1) if _content_of(items[index])), None
    )
    count = 0 if newest is None else newest + 1
    end = None if previous is None else min(previous, count)
    result = list(items)
    for position in choose(count, pinned=False, previous=end, marked=marked, present=present):
        result[position] = _mark(result[position])
    return result


def _content_of(item: object) -> str | list[Any] | None:
    """The input content of an item that may take a breakpoint: a message of an input role's
    content, a function call output's output; ``None`` otherwise."""
    if not isinstance(item, Mapping):
        return None
    if item.get("type") == "function_call_output":
        content = item.get("output")
    elif item.get("type", "message") == "message" and item.get("role") in _INPUT_ROLES:
        content = item.get("content")
    else:
        return None
    if isinstance(content, str):
        return content or None
    if isinstance(content, list) and any(_markable(part) for part in content):
        return content
    return None


def _markable(part: object) -> bool:
    return isinstance(part, Mapping) and part.get("type") in _MARKABLE


def _breakpoints(item: object) -> int:
    """How many breakpoints an item's input content already carries."""
    content = _content_of(item)
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if _markable(part) and "prompt_cache_breakpoint" in part)


def _mark(item: Any) -> Any:
    """A copy of the item with a breakpoint on its last input part (a text becomes one
    ``input_text`` part); the item itself when nothing takes one."""
    field = "output" if item.get("type") == "function_call_output" else "content"
    content = _content_of(item)
    if isinstance(content, str):
        parts: list[Any] = [
            {"type": "input_text", "text": content, "prompt_cache_breakpoint": dict(_BREAKPOINT)}
        ]
        return {**item, field: parts}
    if content is None:
        return item
    parts = list(content)
    last = max(index for index, part in enumerate(parts) if _markable(part))
    parts[last] = {**parts[last], "prompt_cache_breakpoint": dict(_BREAKPOINT)}
    return {**item, field: parts}


def _agents_editing(
    provider_editing: object, model: Model, policy: ContextPolicy
) -> Editing | None:
    """The provider's context editing, checked against the model that must send it: OpenAI's
    compaction only through the Responses API, Anthropic's edits not to OpenAI's."""
    editing = editing_of(provider_editing, policy)
    if editing is None:
        return None
    if editing.provider == "openai" and isinstance(model, OpenAIChatCompletionsModel):
        raise unsupported(model, "openai", "OpenAIResponsesModel")
    if editing.provider == "anthropic" and isinstance(model, OpenAIResponsesModel):
        raise unsupported(model, "anthropic", "LitellmModel")
    return editing


def _edited_settings(settings: ModelSettings, editing: Editing | None) -> ModelSettings:
    """The model settings with the provider's context editing: Anthropic's in the extra body
    and the ``anthropic-beta`` header, OpenAI's compaction in the extra arguments of the
    Responses call; added to the edits and betas the settings already have."""
    if editing is None:
        return settings
    if editing.provider == "openai":
        arguments = dict(settings.extra_args or {})
        arguments["context_management"] = editing.merged(arguments.get("context_management"))
        with_arguments: ModelSettings = dataclasses.replace(settings, extra_args=arguments)
        return with_arguments
    headers = dict(settings.extra_headers or {})
    found = headers.get("anthropic-beta")
    betas = [beta.strip() for beta in found.split(",")] if isinstance(found, str) else None
    headers["anthropic-beta"] = ",".join(editing.merged_betas(betas))
    extra = settings.extra_body
    body = dict(extra) if isinstance(extra, Mapping) else {}
    body["context_management"] = editing.merged(body.get("context_management"))
    edited: ModelSettings = dataclasses.replace(settings, extra_headers=headers, extra_body=body)
    return edited


@dataclasses.dataclass(slots=True)
class _Served:
    """The model that serves a call, its settings, and the route that chose it (if any)."""

    model: Model
    settings: ModelSettings
    outcome: RouteOutcome | None = None
    router: RoutedModel | None = None

    @property
    def name(self) -> str | None:
        """The serving model's name, when it says one (``OpenAIResponsesModel.model``)."""
        name = getattr(self.model, "model", None)
        return name if isinstance(name, str) and name else None

    @property
    def priced(self) -> ModelSpec | str | None:
        """What the call is priced as: the route's model spec (with its prices) when a route chose
        the model, else the serving model's name."""
        return self.outcome.model if self.outcome is not None else self.name

    async def answered(self, output: Sequence[Any]) -> None:
        """Tell the router which items its route produced (nothing without a route)."""
        if self.router is not None and self.outcome is not None:
            await self.router._remember(output, self.outcome)


class _Call:
    """What one model call sends: its items, and the parts the policy must pin."""

    def __init__(
        self,
        system: str | None,
        input: str | list[TResponseInputItem],
        tools: Sequence[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: Sequence[Handoff],
        settings: ModelSettings,
    ) -> None:
        self.items: list[Any] = (
            [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        self.system = system
        self.tools = tools
        self.settings = settings
        pinned: list[str | Mapping[str, Any]] = [system] if system else []
        pinned += [_tool_definition(tool) for tool in tools]
        pinned += [
            {
                "name": handoff.tool_name,
                "description": handoff.tool_description,
                "parameters": handoff.input_json_schema,
            }
            for handoff in handoffs
        ]
        if output_schema is not None and not output_schema.is_plain_text():
            pinned.append({"output_schema": output_schema.json_schema()})
        self.pinned = pinned

    def key(self) -> str | None:
        """The conversation's key: the fingerprint of its first item."""
        return f"agents:{fingerprint(self.items[0])}" if self.items else None


def _tool_definition(tool: object) -> dict[str, Any]:
    """A tool as the model receives its definition: a function tool's name, description and
    parameters; another tool's name and type."""
    if isinstance(tool, FunctionTool):
        return {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.params_json_schema,
        }
    return {"name": getattr(tool, "name", ""), "type": type(tool).__name__}


def _from_model(item: object) -> bool:
    """Whether an item is a model's output: an assistant message, a tool call, a reasoning."""
    if isinstance(item, Mapping):
        role, kind = item.get("role"), item.get("type")
    else:
        role, kind = getattr(item, "role", None), getattr(item, "type", None)
    return role == "assistant" or kind in ("function_call", "reasoning")


def _too_long(error: BaseException) -> bool:
    """Whether the provider refused a call as longer than the model's context window."""
    return isinstance(error, BadRequestError) and too_long(error, ())


class _UsageHooks(RunHooks[Any]):
    """Run hooks that record each model call's usage for a policy session, then call others."""

    def __init__(self, session: PolicySession, base: RunHooks[Any]) -> None:
        self._session = session
        self._base = base

    async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_llm_start(*args, **kwargs)

    async def on_llm_end(
        self, context: Any, agent: Any, response: ModelResponse, *args: Any, **kwargs: Any
    ) -> None:
        await self._session._observe(response, getattr(agent, "model", None))
        await self._base.on_llm_end(context, agent, response, *args, **kwargs)

    async def on_agent_start(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_agent_start(*args, **kwargs)

    async def on_agent_end(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_agent_end(*args, **kwargs)

    async def on_handoff(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_handoff(*args, **kwargs)

    async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_tool_start(*args, **kwargs)

    async def on_tool_end(self, *args: Any, **kwargs: Any) -> None:
        await self._base.on_tool_end(*args, **kwargs)


_MAX_REMEMBERED = 10_000
"""How many output items' routes a :class:`RoutedModel` remembers (least recent first out)."""


class RoutedModel(_ModelCalls):
    """An Agents SDK ``Model`` that routes each call to the model of the label a router chooses.

    Give it as an agent's model, ``Agent(model=RoutedModel(router, models={...}))``. At each
    call (``get_response`` or ``stream_response``) it asks the router, with the call's input
    items, instructions and tools, and the call goes to the chosen label's own ``Model`` (an
    ``OpenAIResponsesModel``, ``OpenAIChatCompletionsModel``, a LiteLLM model...), with the
    route's effort in the model settings: ``ModelSettings(reasoning=Reasoning(effort=...))``,
    the level's word (or the spec's ``effort_names`` word), keeping the rest of the agent's
    settings and reasoning options. Give it after the policy (:class:`PolicySession`'s
    ``run_config``): the router then sees what the model receives.

    The route of a call is remembered under the ids of the items its response produced (the
    answer, the tool calls, the reasoning), in a bounded table: the next call, whose input
    holds those items, gives it to the router as the previous call's ``choice`` and
    ``effort``, so a sticky router keeps the model and effort of the same conversation, however
    many runs share this object. Items without an id (a test model's) leave the next call
    without a previous route. The step is the previous route's step plus one, or 1. With
    ``store``, the route is also kept in the store, under the id of the response's last item
    with one: a sticky route survives a restart and is shared by workers; a store that fails
    never ends the run.

    Args:
        router: The router that picks the model of each call (a
            :class:`~contextwise.ModelRouter`, a :class:`~contextwise.RuleRouter` or any
            :class:`~contextwise.Router`).
        models: The Agents SDK ``Model`` of each of the router's labels.
        store: Where the routes are kept across restarts and workers: a
            :class:`~contextwise.session.SQLiteStore` or
            :class:`~contextwise.session.SQLAlchemyStore` (or a
            :class:`~contextwise.session.MemoryStore`); in this process only when omitted.
        ttl: How many seconds (or a ``timedelta``) a route is kept in ``store``; forever when
            omitted.

    Raises:
        RoutingConfigurationError: When ``router`` is not a router (code ``invalid_router``), or
            ``models`` is not a mapping with one model per label of the router (codes
            ``framework_models_not_mapping``, ``framework_models_mismatch``).
        InvalidTypeError: When ``store`` cannot keep conversations.

    Examples:
        >>> from contextwise import ModelSpec, RuleRouter, RoutingRule
        >>> from contextwise.integrations.openai_agents import RoutedModel
        >>> router = RuleRouter(
        ...     [RoutingRule(id="late", model="deep", min_step=5, effort="high")],
        ...     default="fast",
        ...     models={"fast": ModelSpec(name="gpt-5-mini"), "deep": ModelSpec(name="gpt-5")},
        ... )
        >>> from agents import OpenAIResponsesModel
        >>> from openai import AsyncOpenAI
        >>> client = AsyncOpenAI(api_key="sk-test")
        >>> model = RoutedModel(router, models={
        ...     "fast": OpenAIResponsesModel("gpt-5-mini", client),
        ...     "deep": OpenAIResponsesModel("gpt-5", client),
        ... })
        >>> sorted(model.models)
        ['deep', 'fast']
    """

    def __init__(
        self,
        router: Router,
        models: Mapping[str, Model],
        *,
        store: ConversationStore | None = None,
        ttl: float | timedelta | None = None,
    ) -> None:
        if models is None:
            models = {}  # reported as a mismatch with the router's labels
        routing = step_routing(router, models, "Agents SDK", Model)
        assert routing is not None
        self._routing: StepRouting[Model] = routing
        super().__init__()
        self._routes: OrderedDict[str, tuple[int, dict[str, Any]]] = OrderedDict()
        if store is not None:
            check_store(store, [ConversationStore], "invalid_conversation_store")
        self._store = store
        self._ttl = check_ttl(ttl)

    @property
    def router(self) -> Router:
        """The router that picks the model of each call."""
        return self._routing.router

    @property
    def models(self) -> Mapping[str, Model]:
        """The Agents SDK model of each of the router's labels."""
        return self._routing.models

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        """Route the call, then get the response of the chosen model.

        Args:
            system_instructions: The agent's instructions, shown to the router.
            input: The input items, shown to the router and sent to the chosen model.
            model_settings: The agent's model settings; the route's effort replaces their
                reasoning effort.
            tools: The tools, shown to the router by name.
            output_schema: The output schema, passed on.
            handoffs: The handoffs, passed on.
            tracing: The tracing configuration, passed on.
            previous_response_id: Passed on.
            conversation_id: Passed on.
            prompt: Passed on.

        Returns:
            The chosen model's response.
        """
        return await self._respond(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        )

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """Route the call, then stream the response of the chosen model.

        Args:
            system_instructions: The agent's instructions, shown to the router.
            input: The input items, shown to the router and sent to the chosen model.
            model_settings: The agent's model settings; the route's effort replaces their
                reasoning effort.
            tools: The tools, shown to the router by name.
            output_schema: The output schema, passed on.
            handoffs: The handoffs, passed on.
            tracing: The tracing configuration, passed on.
            previous_response_id: Passed on.
            conversation_id: Passed on.
            prompt: Passed on.

        Yields:
            The chosen model's stream events.
        """
        async for event in self._stream(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        ):
            yield event

    async def close(self) -> None:
        """Close every model of the router's labels."""
        for model in self._routing.models.values():
            await model.close()

    async def _serve(self, call: _Call, items: list[Any], settings: ModelSettings) -> _Served:
        """The chosen label's model, with the route's effort in the settings."""
        outcome, model = await self._route(call.system, items, call.tools)
        return _Served(model, _with_effort(settings, outcome), outcome, self)

    async def _route(
        self, system: str | None, input: str | list[TResponseInputItem], tools: Sequence[Tool]
    ) -> tuple[RouteOutcome, Model]:
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        previous = await self._previous(items)
        context: RoutingContext = self._routing.context(
            1 if previous is None else previous[0] + 1,
            items,
            None if previous is None else previous[1],
            system=system or "",
            tools=[
                {"type": "function", "function": {"name": getattr(tool, "name", "")}}
                for tool in tools
            ],
        )
        return await self._routing.aroute(context)

    async def _previous(self, items: Sequence[Any]) -> tuple[int, dict[str, Any]] | None:
        """The step and route record of the call that produced the newest item with an id: from
        this object's table, else from the store."""
        with self._lock:
            for item in reversed(items):
                found = _item_id(item)
                if found is not None and found in self._routes:
                    return self._routes[found]
        newest = next((found for item in reversed(items) if (found := _item_id(item))), None)
        if self._store is None or newest is None:
            return None
        load = partial(self._store.load_conversation, _ROUTE_KEY_PREFIX + newest, ttl=self._ttl)
        try:
            stored = await run_async(call_blocking(load))
        except Exception:  # noqa: BLE001 - a broken store never ends the agent's run
            return None
        value = None if stored is None else stored[1]
        if not isinstance(value, Mapping):
            return None
        step, record = value.get("step"), value.get("route")
        if isinstance(step, bool) or not isinstance(step, int) or not isinstance(record, Mapping):
            return None
        return step, dict(record)

    async def _remember(self, output: Sequence[Any], outcome: RouteOutcome) -> None:
        remembered = (outcome.step, route_record(outcome))
        last: str | None = None
        with self._lock:
            for item in output:
                found = _item_id(item)
                if found is not None:
                    last = found
                    self._routes[found] = remembered
                    self._routes.move_to_end(found)
            while len(self._routes) > _MAX_REMEMBERED:
                self._routes.popitem(last=False)
        if self._store is None or last is None:
            return
        value = {"step": remembered[0], "route": remembered[1]}
        save = partial(
            self._store.save_conversation, _ROUTE_KEY_PREFIX + last, value, 0, ttl=self._ttl
        )
        try:
            await run_async(call_blocking(save))
        except Exception:  # noqa: BLE001 - a broken store never ends the agent's run
            return



_ROUTE_KEY_PREFIX = "agents-route:"
"""The prefix of the store key of a route: the id of the last item of the response it produced."""


def _item_id(item: Any) -> str | None:
    """The id of an input or output item, where it has one."""
    found = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
    return found if isinstance(found, str) and found else None


def _with_effort(settings: ModelSettings, outcome: RouteOutcome) -> ModelSettings:
    """The agent's settings with the route's effort as the reasoning effort."""
    if outcome.effort is None:
        return settings
    word: Any = effort_word(outcome.model, outcome.effort)
    reasoning = settings.reasoning
    chosen = (
        Reasoning(effort=word)
        if reasoning is None
        else reasoning.model_copy(update={"effort": word})
    )
    return dataclasses.replace(settings, reasoning=chosen)


_SESSION_METHODS = ("get_items", "add_items", "pop_item", "clear_session")


def _check_session(session: object) -> None:
    """An Agents SDK session: a ``session_id`` and the four methods of the ``Session`` protocol
    (the SDK's protocol is not checkable at run time, so its members are)."""
    if not hasattr(session, "session_id") or not all(
        callable(getattr(session, name, None)) for name in _SESSION_METHODS
    ):
        raise InvalidTypeError(
            "not_an_instance", name="session", expected="Session",
            type_name=type(session).__name__,
        )


def recall_tool(
    session: Session | None = None,
    *,
    archive: object = None,
    limit: int = DEFAULT_RECALL_LIMIT,
    name: str = "recall",
) -> FunctionTool:
    """Return :func:`contextwise.recall` as an Agents SDK tool, reading the session's items.

    The tool reads the originals from the items that ``session`` stores (for a
    :class:`PolicySession`, the session it wraps, which keeps every item; the runner saves a
    run's items turn by turn), then from ``archive``. Give it to ``Agent(tools=[...])`` and name
    it in the ``clear`` step's ``exclude_tools``.

    Args:
        session: The session whose items hold the originals; ``None`` to read only
            ``archive``.
        archive: A :class:`~contextwise.session.ContextSession`, its archive, or a function
            that returns it; see :func:`contextwise.recall`.
        limit: The most characters that one page holds; 8,000 by default.
        name: The tool's name; ``recall`` by default, the name the placeholders use.

    Returns:
        An Agents SDK ``FunctionTool``.

    Raises:
        InvalidValueError: When the limit is below 1 or the name is blank or holds a character
            that a framework cannot take (NUL, a line break, a lone surrogate).
        InvalidTypeError: When the limit is not a whole number or the name not a string.

    Examples:
        >>> from agents import SQLiteSession
        >>> from contextwise.integrations.openai_agents import recall_tool
        >>> recall_tool(SQLiteSession("demo")).name
        'recall'
    """
    base = make_recall_tool(archive=archive, limit=limit, name=name)
    store = getattr(session, "session", session)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        history = [] if store is None else list(await store.get_items())
        return await answer(base, history, arguments)

    return FunctionTool(
        name=name,
        description=base.description,
        params_json_schema=base.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def summarizer(
    model: Model,
    *,
    prompt: str | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
) -> Callable[[list[Any]], Awaitable[WithUsage]]:
    """Make a compressor that summarises Responses items with an Agents SDK model.

    Give it to the policy as a compressor (``compressors={"summary": summarizer(model)}``) and
    name it in a ``compress`` step. It sends the model ``prompt`` as the instructions and the
    items to summarise as one transcript, with no tools and tracing disabled, and returns the
    summary with the response's usage (:class:`~contextwise.WithUsage`), which the report keeps
    on the step's change and :meth:`PolicyModel.usage` (or :meth:`PolicySession.usage`)
    records as a ``summarizer`` call. When the provider refuses the transcript as too long (an
    ``openai.BadRequestError`` with the code ``context_length_exceeded``), the middle of the
    transcript is left out and the call is sent once more.

    Args:
        model: The Agents SDK model that writes the summaries (an ``OpenAIResponsesModel``, an
            ``OpenAIChatCompletionsModel``...); a small, cheap one does.
        prompt: The instructions of the summary; :data:`SUMMARY_PROMPT` when omitted.
        max_tokens: The most tokens that a summary may take (the model settings'
            ``max_tokens``).

    Returns:
        The compressor, async: it takes Responses items and returns the summary's text with its
        usage.

    Raises:
        InvalidTypeError: When ``model`` is not an Agents SDK ``Model``, ``prompt`` not a string
            or ``max_tokens`` not a whole number.
        InvalidValueError: When ``max_tokens`` is below 1 or ``prompt`` is blank.

    Examples:
        >>> from agents import OpenAIResponsesModel
        >>> from openai import AsyncOpenAI
        >>> from contextwise.integrations.openai_agents import summarizer
        >>> small = OpenAIResponsesModel("gpt-5-nano", AsyncOpenAI(api_key="sk-test"))
        >>> callable(summarizer(small))
        True
    """
    require_instance(model, Model, "model", "Model")
    instructions = summary_prompt(prompt)
    settings = ModelSettings(max_tokens=summary_tokens(max_tokens))

    async def ask(text: str) -> ModelResponse:
        return await model.get_response(
            instructions,
            [{"role": "user", "content": text}],
            settings,
            [],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )

    async def summarize(items: list[Any]) -> WithUsage:
        text = transcript(_transcript_lines(items))
        try:
            response = await ask(text)
        except BadRequestError as error:
            if not _too_long(error):
                raise
            response = await ask(shrunk(text))
        found = response.usage
        usage = Usage() if found is None else usage_from(found, source="openai-agents")
        name = getattr(model, "model", None)
        summary = "\n".join(_output_texts(response.output)).strip()
        return WithUsage(summary, usage, name if isinstance(name, str) and name else None)

    return summarize


def _plain(item: object) -> dict[str, Any]:
    """An item as a dict: itself, or its ``model_dump``."""
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    found = dump(exclude_unset=True) if callable(dump) else {}
    return found if isinstance(found, dict) else {}


def _content_text(content: object) -> str:
    """A message's content as text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(_plain(part).get("text") or "") for part in content)
    return ""


def _transcript_lines(items: Sequence[Any]) -> Iterator[tuple[str, str]]:
    """The items as the summary's transcript shows them: the messages, the tool calls and the
    tools' outputs (reasoning items are left out)."""
    for raw in items:
        item = _plain(raw)
        kind = item.get("type")
        if kind == "function_call":
            yield "assistant", f"[tool call: {item.get('name')}({item.get('arguments')})]"
        elif kind == "function_call_output":
            output = item.get("output")
            yield "tool", output if isinstance(output, str) else json.dumps(output, default=str)
        elif "role" in item:
            yield str(item["role"]), _content_text(item.get("content"))


def _output_texts(output: Sequence[Any]) -> Iterator[str]:
    """The texts of a response's output messages."""
    for raw in output:
        item = _plain(raw)
        if item.get("type") == "message":
            yield _content_text(item.get("content"))
