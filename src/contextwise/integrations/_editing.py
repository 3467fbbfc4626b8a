"""Provider-side editing from the integrations: the policy's steps that the provider applies.

With ``provider_editing="anthropic"``, the policy's ``clear`` steps go on each request as
Anthropic's context management (:func:`~contextwise.anthropic_context_management`); with
``"openai"``, its ``compress`` steps as the Responses API's compaction
(:func:`~contextwise.openai_context_management`). Either way the delegated steps no longer run
client-side (except in the retry after a refusal, which runs every step), and the report's
``conversation.delegated_steps`` names them. Each integration puts the arguments where its
framework passes them on to the provider's client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from contextwise._translation import short_repr
from contextwise.errors import InvalidValueError, PolicyConfigurationError
from contextwise.policy import ContextPolicy, FixedSelection
from contextwise.provider_editing import (
    anthropic_context_management,
    openai_context_management,
)

ProviderEditing = Literal["anthropic", "openai"]
"""The providers whose context editing an integration can send."""

PROVIDERS: Final = ("anthropic", "openai")

_KINDS: Final[Mapping[str, str]] = {"anthropic": "clear", "openai": "compress"}
"""The step kind that each provider applies on its side."""

_NAMES: Final[Mapping[str, str]] = {"anthropic": "Anthropic", "openai": "OpenAI Responses"}


@dataclass(frozen=True, slots=True)
class Editing:
    """What a provider applies on its side, and the arguments that make it do so."""

    provider: str
    """``anthropic`` or ``openai``."""
    kind: str
    """The step kind delegated to the provider."""
    step_ids: tuple[str, ...]
    """The ids of the delegated steps, in policy order."""
    arguments: Mapping[str, Any]
    """What :func:`~contextwise.anthropic_context_management` or
    :func:`~contextwise.openai_context_management` returned."""

    @property
    def betas(self) -> list[str]:
        """The Anthropic betas the request needs (none for OpenAI)."""
        return list(self.arguments.get("betas", ()))

    @property
    def context_management(self) -> Any:
        """The request's ``context_management``: Anthropic's mapping, or OpenAI's list."""
        return self.arguments["context_management"]

    def merged(self, existing: object) -> Any:
        """The request's ``context_management`` with the edits another part of the application
        already put there: theirs kept, ours added where no edit of the same type is present."""
        ours = self.context_management
        if self.provider == "openai":
            theirs = list(existing) if isinstance(existing, list | tuple) else []
            types = {_edit_type(edit) for edit in theirs}
            return theirs + [edit for edit in ours if edit["type"] not in types]
        if not isinstance(existing, Mapping) or not isinstance(existing.get("edits"), list):
            return ours
        edits = list(existing["edits"])
        types = {_edit_type(edit) for edit in edits}
        edits += [edit for edit in ours["edits"] if edit["type"] not in types]
        # Anthropic requires the thinking edit before the others.
        edits.sort(key=lambda edit: _edit_type(edit) != "clear_thinking_20251015")
        return {**existing, "edits": edits}

    def merged_betas(self, existing: object) -> list[str]:
        """The betas already asked for, with the ones this editing needs added."""
        found = [existing] if isinstance(existing, str) else existing
        betas = [str(beta) for beta in found] if isinstance(found, list | tuple) else []
        return betas + [beta for beta in self.betas if beta not in betas]


def _edit_type(edit: object) -> object:
    return edit.get("type") if isinstance(edit, Mapping) else None


def editing_of(provider_editing: object, policy: ContextPolicy) -> Editing | None:
    """The editing that ``provider_editing`` asks of the policy, checked at construction.

    Raises:
        InvalidValueError: When ``provider_editing`` is neither ``None`` nor a provider (code
            ``invalid_choice``).
        PolicyConfigurationError: When the policy does not map (the codes of
            :func:`~contextwise.anthropic_context_management`: token limits are required), or
            runs no step of the provider's kind (code ``provider_editing_nothing``).
    """
    if provider_editing is None:
        return None
    if not isinstance(provider_editing, str) or provider_editing not in PROVIDERS:
        raise InvalidValueError(
            "invalid_choice",
            field="provider_editing",
            expected=list(PROVIDERS),
            value=short_repr(provider_editing),
        )
    kind = _KINDS[provider_editing]
    selected = list(policy.steps)
    if isinstance(policy.selection, FixedSelection):
        chosen = set(policy.selection.steps)
        selected = [step for step in selected if step.id in chosen]
    step_ids = tuple(step.id for step in selected if step.kind == kind)
    if provider_editing == "anthropic":
        arguments = anthropic_context_management(policy, steps=step_ids)
    else:
        arguments = openai_context_management(policy, steps=step_ids)
    if not arguments:
        raise PolicyConfigurationError(
            "provider_editing_nothing", provider=provider_editing, kind=kind
        )
    return Editing(provider_editing, kind, step_ids, arguments)


def unsupported(model: object, provider: str, expected: str) -> PolicyConfigurationError:
    """The error of a model that cannot carry the provider's context editing."""
    return PolicyConfigurationError(
        "provider_editing_unsupported",
        model=type(model).__name__,
        provider=_NAMES[provider],
        expected=expected,
    )
