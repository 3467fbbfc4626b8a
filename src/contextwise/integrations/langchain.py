"""LangChain 1.x: an agent middleware that fits what the model sees and keeps the agent state whole.

Install with ``pip install 'contextwise[langchain]'``. Importing this module imports LangChain; it
raises :class:`~contextwise.MissingDependencyError` when LangChain is not installed.
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Unpack

from contextwise import ContextPolicy, MissingDependencyError
from contextwise.integrations._conversation import ConversationPolicy, PolicyOptions

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
except ImportError as error:
    raise MissingDependencyError(
        "missing_extra", module=__name__, package="langchain", extra="langchain"
    ) from error

__all__ = ["ContextPolicyMiddleware"]


class ContextPolicyMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """A LangChain agent middleware that shows the model the policy's context.

    Before each model call, the request's messages (the conversation, without the system
    message, which stays outside the policy's reach) go through the policy as the fragment
    ``fragment_id``, and the model receives the messages that the policy keeps. The agent state
    is not touched: it keeps every message, and the next call starts again from all of them. A
    compressor that fails leaves the conversation as it was, and the report says so.

    ``wrap_model_call`` serves ``invoke`` and ``stream``; ``awrap_model_call`` serves ``ainvoke``
    and ``astream`` and awaits async compressors, apps and callbacks.

    Args:
        policy: The policy, or a mapping in the shape of a policy file; its steps work on the
            fragment ``fragment_id``.
        fragment_id: The id of the fragment that holds the conversation; ``"history"`` when
            omitted.
        counter: A token counter, tokenizer or counting function, for token limits.
        budget: A :class:`~contextwise.ContextBudget` that caps the token limits.
        compressors: The compressors by name; they receive and return LangChain messages (or
            text, made into a message).
        apps: The app mutations by name.
        decision_provider: The decision provider of a ``model`` selection.
        step_timeout: The default maximum number of seconds that a compressor or app may take.
        on_result: A function called with each :class:`~contextwise.ContextResult`: the report
            and the messages the model did not see.

    Raises:
        PolicyConfigurationError: When the policy is invalid, or does not match the compressors,
            apps, counter or ``fragment_id``.

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
        policy: ContextPolicy | Mapping[str, Any],
        **options: Unpack[PolicyOptions],
    ) -> None:
        super().__init__()
        self._conversation = ConversationPolicy(policy, **options)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Call the model with the policy's context instead of the whole conversation.

        It behaves like :meth:`~ContextPolicyMiddleware.awrap_model_call`, with sync compressors,
        apps and callbacks.
        """
        messages = self._conversation.fit(request.messages)
        return handler(request.override(messages=messages))

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
            The model's response, unchanged.
        """
        messages = await self._conversation.afit(request.messages)
        return await handler(request.override(messages=messages))
