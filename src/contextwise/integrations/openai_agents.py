"""OpenAI Agents SDK: a session that hands the runner the policy's context and stores everything.

Install with ``pip install 'contextwise[openai-agents]'``. Importing this module imports the Agents
SDK; it raises :class:`~contextwise.MissingDependencyError` when the SDK is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

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
    from agents import FunctionTool
    from agents.memory import Session
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="openai-agents", extra="openai-agents"
    ) from error

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.tool_context import ToolContext

__all__ = ["PolicySession", "recall_tool"]


class PolicySession:
    """An Agents SDK session that wraps another one and gives the runner the policy's context.

    It implements the SDK's ``Session`` protocol, so ``Runner.run(agent, prompt,
    session=PolicySession(...))`` takes it like any session.

    The wrapped session (an ``SQLiteSession``, for example) stores every item: ``add_items``,
    ``pop_item`` and ``clear_session`` go to it unchanged. ``get_items()`` reads all its items and
    returns the ones the policy keeps, as the fragment ``fragment_id``: Responses items, with each
    ``reasoning`` item kept with the item that follows it and each ``function_call`` with its
    output. The instructions are not session items, so the policy never sees them. A compressor
    that fails leaves the history as it was, and the report says so.

    The runner reads the session once when a run starts; the items of the run itself (its tool
    calls and their outputs) are added to what it read, so the policy bounds the history that
    each run starts from. ``get_items(limit=n)`` returns the wrapped session's latest ``n`` items
    unchanged: the runner asks for them to check what it has saved.

    Compressors receive Responses items and return an item (or text, made into an item). The
    options are bound once, here; an item of a type contextwise does not know (the SDK stores
    new item types before contextwise learns them) is kept as an opaque unit unless
    ``unknown_items="error"`` is given.

    Args:
        session: The session that stores the items.
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
        >>> import asyncio
        >>> from agents import SQLiteSession
        >>> from contextwise.integrations.openai_agents import PolicySession
        >>> session = PolicySession(SQLiteSession("demo"), {
        ...     "mode": "reduce", "trigger_chars": 30, "target_input_chars": 20,
        ...     "steps": [{"id": "turns", "kind": "trim", "fragment_id": "history"}]})
        >>> async def demo():
        ...     for n in range(3):
        ...         await session.add_items([
        ...             {"role": "user", "content": f"Question {n}?"},
        ...             {"role": "assistant", "content": f"Answer {n}."}])
        ...     return await session.get_items(), await session.session.get_items()
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
        *,
        fragment_id: str = "history",
        on_result: Callable[[ContextResult], object] | None = None,
        **options: Unpack[RunnerOptions],
    ) -> None:
        self.session = session
        self.session_id = session.session_id
        self.session_settings = getattr(session, "session_settings", None)
        self._conversation = Conversation(policy, fragment_id, on_result, options)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """Return the policy's context, or the latest stored items when a limit is given.

        Args:
            limit: When given, the number of latest items to return from the wrapped session,
                unchanged.

        Returns:
            The items that the policy keeps, oldest first.
        """
        if limit is not None:
            return await self.session.get_items(limit)
        return await self._conversation.afit(await self.session.get_items())

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add items to the wrapped session.

        Args:
            items: The items to store.
        """
        await self.session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the wrapped session's latest item.

        Returns:
            The item, or ``None`` when the session is empty.
        """
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        """Remove every item from the wrapped session."""
        await self.session.clear_session()


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
        InvalidValueError: When the limit is below 1 or the name is blank.
        InvalidTypeError: When the limit is not a whole number or the name not a string.

    Examples:
        >>> from agents import SQLiteSession
        >>> from contextwise.integrations.openai_agents import recall_tool
        >>> recall_tool(SQLiteSession("demo")).name
        'recall'
    """
    from dataclasses import replace

    base = make_recall_tool(archive=archive, limit=limit, name=name)
    store = getattr(session, "session", session)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        history = [] if store is None else list(await store.get_items())
        return await replace(base, history=history).ahandle(arguments)

    return FunctionTool(
        name=name,
        description=base.description,
        params_json_schema=base.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
