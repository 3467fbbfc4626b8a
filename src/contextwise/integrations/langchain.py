"""LangChain 1.x: an agent middleware that fits what the model sees and keeps the agent state whole.

Install with ``pip install 'contextwise[langchain]'``. Importing this module imports LangChain; it
raises :class:`~contextwise.MissingDependencyError` when LangChain is not installed.
"""

from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any, Unpack

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
from contextwise.integrations._conversation import DEFAULT_MAX_MEMORY_BYTES, Conversation
from contextwise.integrations._routing import (
    ROUTE_KEY,
    StepRouting,
    effort_options,
    route_record,
    step_routing,
)
from contextwise.recalling import answer, answer_sync
from contextwise.session import SessionStore

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import BaseTool
    from langgraph.config import get_config
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="langchain", extra="langchain"
    ) from error

__all__ = ["ContextPolicyMiddleware", "recall_tool"]


class ContextPolicyMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """A LangChain agent middleware that shows the model the policy's context.

    Before each model call, the request's messages (the conversation, without the system
    message, which stays outside the policy's reach) go through the policy as the fragment
    ``fragment_id``, and the model receives the messages that the policy keeps. The agent state
    is not touched: it keeps every message. A compressor that fails leaves the conversation as it
    was, and the report says so.

    In a run with a thread id (an agent with a checkpointer, invoked with
    ``{"configurable": {"thread_id": ...}}``), the middleware remembers its reductions for that
    thread: the model receives the last reduced context plus the messages new since, and the
    policy reduces again only when that crosses its trigger. Between two reductions the prompt
    only grows at its end, so the provider's prompt cache holds, and a summary is made once. The
    history must extend what the middleware saw (decided by the messages' ids); otherwise, after
    an edit or a rewind, it starts again from the whole history (``resynced`` in the report's
    ``conversation``). Without a thread id every call starts from the whole history. With
    ``store``, the memory survives a restart and is shared by workers; a store that fails never
    ends the run: the call falls back to the whole history, and the report says so.

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

    Args:
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.
        fragment_id: The id of the fragment that holds the conversation.
        on_result: A function, sync or async, called with each
            :class:`~contextwise.ContextResult`: the report and the messages the model did not
            see.
        store: Where the memory of each thread is kept across restarts and workers: a
            :class:`~contextwise.session.SQLiteStore` or
            :class:`~contextwise.session.SQLAlchemyStore` (or a
            :class:`~contextwise.session.MemoryStore`); in this process only when omitted.
        ttl: How many seconds (or a ``timedelta``) a thread's memory is kept in ``store`` after
            its last call; forever when omitted.
        max_memory_bytes: How many bytes this process may hold for the threads' memory; the
            least recently used threads are forgotten first (they start again from the whole
            history).
        router: The router that picks the model of each call (a
            :class:`~contextwise.ModelRouter`, a :class:`~contextwise.RuleRouter` or any
            :class:`~contextwise.Router`); with ``models``.
        models: The LangChain chat model of each of the router's labels.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``).
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable.
        RoutingConfigurationError: When only one of ``router`` and ``models`` is given (code
            ``router_needs_models``), ``router`` is not a router (code ``invalid_router``), or
            ``models`` is not a mapping with one chat model per label of the router (codes
            ``framework_models_not_mapping``, ``framework_models_mismatch``).

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
        fragment_id: str = "history",
        on_result: Callable[[ContextResult], object] | None = None,
        store: SessionStore | None = None,
        ttl: float | timedelta | None = None,
        max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
        router: Router | None = None,
        models: Mapping[str, BaseChatModel] | None = None,
        **options: Unpack[RunnerOptions],
    ) -> None:
        super().__init__()
        self._routing: StepRouting[BaseChatModel] | None = step_routing(router, models, "LangChain")
        self._conversation = Conversation(
            policy,
            fragment_id,
            on_result,
            options,
            store=store,
            ttl=ttl,
            max_memory_bytes=max_memory_bytes,
        )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Call the model with the policy's context instead of the whole conversation.

        It behaves like :meth:`~ContextPolicyMiddleware.awrap_model_call`; async compressors, apps
        and callbacks are awaited on a private event loop.
        """
        messages = self._conversation.fit(request.messages, self._key(request))
        fitted = request.override(messages=messages)
        if self._routing is None:
            return handler(fitted)
        outcome, model = self._routing.route(_routing_context(self._routing, request, fitted))
        return _recorded(handler(_routed(fitted, outcome, model)), outcome)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Call the model with the policy's context, awaiting async compressors, apps and callbacks.

        Args:
            request: The model request; its messages are the conversation.
            handler: The next step of the chain, which calls the model.

        Returns:
            The model's response; with a router, its AI message records the route.
        """
        messages = await self._conversation.afit(request.messages, self._key(request))
        fitted = request.override(messages=messages)
        if self._routing is None:
            return await handler(fitted)
        context = _routing_context(self._routing, request, fitted)
        outcome, model = await self._routing.aroute(context)
        return _recorded(await handler(_routed(fitted, outcome, model)), outcome)

    def _key(self, request: ModelRequest[Any]) -> str | None:
        """The conversation's key: the middleware's name and the run's thread id, if any."""
        thread_id = _thread_id(request)
        return None if thread_id is None else f"{self.name}:{thread_id}"


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


def _tool_spec(tool: BaseTool | dict[str, Any]) -> dict[str, Any]:
    """A tool as the router sees it: a dict tool as it is, a LangChain tool by name and
    description."""
    if isinstance(tool, dict):
        return tool
    return {"type": "function", "function": {"name": tool.name, "description": tool.description}}


def _routed(
    request: ModelRequest[Any], outcome: RouteOutcome, model: BaseChatModel
) -> ModelRequest[Any]:
    """The request on the chosen chat model, with the route's effort in its model settings."""
    settings = {**request.model_settings, **effort_options(outcome.model, outcome.effort)}
    return request.override(model=model, model_settings=settings)


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
