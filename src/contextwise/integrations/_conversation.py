"""What the three integrations share: a runner applied to a conversation held as one fragment."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

from contextwise import ContextPolicy, ContextResult, Fragment, PolicyRunner
from contextwise._effects import await_blocking
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.policy.runner import as_runner
from contextwise.policy.validation import check_fragments

MessageT = TypeVar("MessageT")

INTEGRATION_DEFAULTS: Final[Mapping[str, Any]] = {"unknown_items": "opaque"}
"""The runner options that an integration binds unless told otherwise: a framework stores item
types that contextwise does not know, and they must never crash an agent's run."""

ResultCallback = Callable[[ContextResult], object]


class Conversation:
    """A runner applied to a conversation: the fragment ``fragment_id`` of the framework's own
    message objects, which come back the same objects, in order.

    Raises:
        PolicyConfigurationError: When the options do not bind, or a step works on another
            fragment (``unknown_fragment``) or on a text field (``field_mismatch``).
        InvalidValueError: When ``fragment_id`` is blank.
        InvalidTypeError: When ``on_result`` is not callable.
    """

    __slots__ = ("fragment_id", "on_result", "runner")

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        fragment_id: str,
        on_result: ResultCallback | None,
        options: Mapping[str, Any],
    ) -> None:
        if not isinstance(fragment_id, str):
            raise InvalidTypeError(
                "not_a_string", name="fragment_id", type_name=type(fragment_id).__name__
            )
        if not fragment_id.strip():
            raise InvalidValueError("blank_fragment_id", value=repr(fragment_id))
        if on_result is not None and not callable(on_result):
            raise InvalidTypeError(
                "not_callable", name="on_result", type_name=type(on_result).__name__
            )
        self.runner = as_runner(policy, options, defaults=INTEGRATION_DEFAULTS)
        check_fragments(self.runner.policy, [Fragment(fragment_id, messages=[])])
        self.fragment_id = fragment_id
        self.on_result = on_result

    def fit(self, messages: Sequence[MessageT]) -> list[MessageT]:
        """Apply the policy to a conversation and return the messages the model should see.

        An async ``on_result`` is awaited on a private event loop, like an async compressor.
        """
        result = self.runner.process(self._fragments(messages))
        if self.on_result is not None:
            reply = self.on_result(result)
            if inspect.isawaitable(reply):
                await_blocking(reply)
        return self._messages(result)

    async def afit(self, messages: Sequence[MessageT]) -> list[MessageT]:
        """Apply the policy to a conversation, awaiting async compressors, apps and callbacks."""
        result = await self.runner.aprocess(self._fragments(messages))
        if self.on_result is not None:
            reply = self.on_result(result)
            if inspect.isawaitable(reply):
                await reply
        return self._messages(result)

    def _fragments(self, messages: Sequence[object]) -> list[Fragment]:
        return [Fragment(self.fragment_id, messages=list(messages))]

    def _messages(self, result: ContextResult) -> list[MessageT]:
        return cast(list[MessageT], list(result.fragment(self.fragment_id).messages or ()))

