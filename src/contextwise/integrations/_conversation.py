"""What the three integrations share: a policy with its options, applied to a conversation."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

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

ResultCallback = Callable[[ContextResult], object]
"""A function that receives each :class:`~contextwise.ContextResult`; an async one is awaited by
the async hooks."""


class ConversationPolicy:
    """A policy and the options of every call, applied to a conversation held as one fragment.

    The conversation is the fragment ``fragment_id``; the messages are passed to
    :func:`~contextwise.process_context` as they are (the framework's own objects), and the
    fragment's messages come back, the same objects, in order.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        fragment_id: The id of the fragment that holds the conversation; every step of the
            policy works on it.
        counter: A token counter, tokenizer or counting function, for token limits.
        budget: A :class:`~contextwise.ContextBudget` that caps the token limits.
        compressors: The compressors by name, as the policy's compress steps name them.
        apps: The app mutations by name, as the policy's app steps name them.
        decision_provider: The decision provider of a ``model`` selection.
        step_timeout: The default maximum number of seconds that a compressor or app may take.
        on_result: A function called with each :class:`~contextwise.ContextResult`, to log the
            report or archive what was removed.

    Raises:
        PolicyConfigurationError: When the policy is invalid, names a compressor or app that is
            not supplied, needs a counter that is missing, or has a step on another fragment
            (code ``unknown_fragment``) or on a text field (code ``field_mismatch``).
        InvalidValueError: When ``fragment_id`` is blank.
    """

    def __init__(
        self,
        policy: ContextPolicy | Mapping[str, Any],
        *,
        fragment_id: str = "history",
        counter: object | None = None,
        budget: object | None = None,
        compressors: Mapping[str, Compressor] | None = None,
        apps: Mapping[str, AppMutation] | None = None,
        decision_provider: DecisionProvider | None = None,
        step_timeout: float | None = None,
        on_result: ResultCallback | None = None,
    ) -> None:
        self.policy = validate_context_policy(
            policy,
            compressors or {},
            apps or {},
            counter=counter,
            fragments=[Fragment(fragment_id, messages=[])],
        )
        self.fragment_id = fragment_id
        self.on_result = on_result
        self.options: dict[str, Any] = {
            "counter": counter,
            "budget": budget,
            "compressors": compressors,
            "apps": apps,
            "decision_provider": decision_provider,
            "step_timeout": step_timeout,
        }
        """The keyword arguments of every :func:`~contextwise.process_context` call."""

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
