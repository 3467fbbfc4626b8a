"""What the three integrations share: a policy with its options, applied to a conversation."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar, Unpack, cast

from contextwise import (
    AppMutation,
    Compressor,
    ContextPolicy,
    ContextResult,
    DecisionProvider,
    Fragment,
    aprocess_context,
    process_context,
    validate_context_policy,
)

MessageT = TypeVar("MessageT")

class PolicyOptions(TypedDict, total=False):
    """The options of every integration, each of which may be omitted.

    The three integrations take them as keyword arguments (``**options``) and document them.
    """

    fragment_id: str
    """The id of the fragment that holds the conversation; ``"history"`` when omitted."""
    counter: object | None
    """A token counter, tokenizer or counting function, for token limits."""
    budget: object | None
    """A :class:`~contextwise.ContextBudget` that caps the token limits."""
    compressors: Mapping[str, Compressor] | None
    """The compressors by name."""
    apps: Mapping[str, AppMutation] | None
    """The app mutations by name."""
    decision_provider: DecisionProvider | None
    """The decision provider of a ``model`` selection."""
    step_timeout: float | None
    """The default maximum number of seconds that a compressor or app may take."""
    on_result: Callable[[ContextResult], object] | None
    """A function, sync or async, called with each :class:`~contextwise.ContextResult`."""


class ConversationPolicy:
    """A policy and the options of every call, applied to a conversation held as one fragment.

    The conversation is the fragment ``fragment_id``; the messages are passed to
    :func:`~contextwise.process_context` as they are (the framework's own objects), and the
    fragment's messages come back, the same objects, in order. The other options go to every
    call as they are.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        **options: The options (:class:`PolicyOptions`).

    Raises:
        PolicyConfigurationError: When the policy is invalid, names a compressor or app that is
            not supplied, needs a counter that is missing, or has a step on another fragment
            (code ``unknown_fragment``) or on a text field (code ``field_mismatch``).
        InvalidValueError: When ``fragment_id`` is blank.
    """

    def __init__(
        self, policy: ContextPolicy | Mapping[str, Any], **options: Unpack[PolicyOptions]
    ) -> None:
        self.fragment_id = options.pop("fragment_id", "history")
        self.on_result = options.pop("on_result", None)
        self.options: dict[str, Any] = dict(options)
        """The keyword arguments of every :func:`~contextwise.process_context` call."""
        self.policy = validate_context_policy(
            policy,
            options.get("compressors") or {},
            options.get("apps") or {},
            counter=options.get("counter"),
            fragments=[Fragment(self.fragment_id, messages=[])],
        )

    def fit(self, messages: Sequence[MessageT]) -> list[MessageT]:
        """Apply the policy to a conversation and return the messages the model should see.

        Args:
            messages: The conversation, oldest first.

        Returns:
            The fragment's messages after the policy, the caller's own objects.
        """
        result = process_context(self.policy, self._fragments(messages), **self.options)
        if self.on_result is not None:
            self.on_result(result)
        return self._messages(result)

    async def afit(self, messages: Sequence[MessageT]) -> list[MessageT]:
        """Apply the policy to a conversation, awaiting async compressors, apps and callbacks.

        Args:
            messages: The conversation, oldest first.

        Returns:
            The fragment's messages after the policy, the caller's own objects.
        """
        result = await aprocess_context(self.policy, self._fragments(messages), **self.options)
        if self.on_result is not None:
            reply = self.on_result(result)
            if inspect.isawaitable(reply):
                await reply
        return self._messages(result)

    def _fragments(self, messages: Sequence[object]) -> list[Fragment]:
        return [Fragment(self.fragment_id, messages=list(messages))]

    def _messages(self, result: ContextResult) -> list[MessageT]:
        return cast(list[MessageT], list(result.fragment(self.fragment_id).messages or ()))
