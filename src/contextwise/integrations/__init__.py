"""contextwise inside the agent frameworks: one module per framework, each behind its own extra.

- :mod:`contextwise.integrations.langchain`: ``ContextPolicyMiddleware``, a LangChain 1.x agent
  middleware (``pip install 'contextwise[langchain]'``);
- :mod:`contextwise.integrations.pydantic_ai`: ``ContextPolicyCapability`` and
  ``history_processor``, for pydantic-ai 2.x agents (``pip install 'contextwise[pydantic-ai]'``);
- :mod:`contextwise.integrations.openai_agents`: ``PolicySession``, a session of the OpenAI Agents
  SDK (``pip install 'contextwise[openai-agents]'``).

In each, the conversation is the policy's fragment ``fragment_id`` (``"history"`` by default), the
framework's own message objects go through the policy as they are, and the framework's history
keeps every message: only the model's view is fitted. This package imports no framework; each
module imports its own when it is imported.
"""

from collections.abc import Callable
from datetime import timedelta

from contextwise import ContextResult, RunnerOptions
from contextwise.session import ConversationStore

__all__ = ["IntegrationOptions"]


class IntegrationOptions(RunnerOptions, total=False):
    """The options that every integration takes besides its policy, each of which may be
    omitted: where the conversation is, who receives each result, and how the memory of each
    conversation is kept; the runner options (:class:`~contextwise.RunnerOptions`) come with
    them.

    ``ContextPolicyMiddleware`` (LangChain), ``ContextPolicyCapability`` (pydantic-ai),
    ``PolicySession`` and ``PolicyModel`` (the OpenAI Agents SDK) take them as keyword
    arguments, with the same names and meanings.
    """

    fragment_id: str
    """The id of the fragment that holds the conversation, ``"history"`` when omitted; the
    policy's steps work on it."""

    on_result: Callable[[ContextResult], object] | None
    """A function, sync or async, called with each :class:`~contextwise.ContextResult`: the
    report and the messages the model did not see."""

    store: ConversationStore | None
    """Where the memory of each conversation is kept across restarts and workers: a
    :class:`~contextwise.session.SQLiteStore` or :class:`~contextwise.session.SQLAlchemyStore`
    (or a :class:`~contextwise.session.MemoryStore`); in this process only when omitted."""

    ttl: float | timedelta | None
    """How many seconds (or a ``timedelta``) a conversation's memory is kept in ``store`` after
    its last call; forever when omitted."""

    max_memory_bytes: int
    """How many bytes this process may hold for the conversations' memory, 64 MiB when omitted;
    the least recently used conversations are forgotten first (they start again from the whole
    history). The usage ledgers kept in this process (without a ``store`` that keeps usage) have
    the same bound of their own: the least recently used conversations' ledgers are forgotten
    first, then the oldest calls of the last one."""
