"""pydantic-ai 2.x: a capability that fits each model request and keeps the run's history whole.

Install with ``pip install 'contextwise[pydantic-ai]'``. Importing this module imports pydantic-ai;
it raises :class:`~contextwise.MissingDependencyError` when pydantic-ai is not installed.
"""

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Unpack

from contextwise import (
    DEFAULT_RECALL_LIMIT,
    ContextPolicy,
    ContextResult,
    MissingDependencyError,
    PolicyRunner,
    RunnerOptions,
)
from contextwise import recall_tool as make_recall_tool
from contextwise.integrations._conversation import Conversation

try:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import ModelRequestContext
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="pydantic-ai", extra="pydantic-ai"
    ) from error

__all__ = ["ContextPolicyCapability", "history_processor", "recall_tool"]

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

    A request that carries the system prompt is pinned by the policy, and the instructions travel
    outside the messages, so neither is ever removed. A compressor that fails leaves the request
    as it was, and the report says so. Compressors receive and return pydantic-ai messages (or
    text, made into a message). The options are bound once, here; a message of a type
    contextwise does not know is kept as an opaque unit unless ``unknown_items="error"`` is
    given.

    Args:
        policy: The policy's runner, or the policy (or a mapping in the shape of a policy file)
            to bind with ``options``; its steps work on the fragment ``fragment_id``.
        fragment_id: The id of the fragment that holds the conversation.
        on_result: A function, sync or async, called with each
            :class:`~contextwise.ContextResult`.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the options or
            ``fragment_id``; when an option is unknown (code ``unknown_runner_option``); when
            options come with a runner (code ``runner_with_options``).
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable.

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

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        *,
        fragment_id: str = "history",
        on_result: Callable[[ContextResult], object] | None = None,
        **options: Unpack[RunnerOptions],
    ) -> None:
        self._conversation = Conversation(policy, fragment_id, on_result, options)

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
            The request, with the messages that the policy keeps.
        """
        messages = await self._conversation.afit(request_context.messages)
        return replace(request_context, messages=messages)

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
        InvalidTypeError: When ``on_result`` or a compressor or app is not callable.

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
        return await conversation.afit(messages)

    return process


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
        InvalidValueError: When the limit is below 1 or the name is blank.
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
        tool = replace(base, history=list(ctx.messages))
        return await tool.ahandle({"ref": ref, "offset": offset, "limit": limit})

    return Tool(recall, takes_ctx=True, name=name, description=base.description)
