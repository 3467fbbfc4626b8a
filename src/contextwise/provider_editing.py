"""Provider-side context editing: the steps of a policy that a provider applies on its side.

Anthropic clears old tool results and old thinking on its servers (the beta context management
of the Messages API), and the OpenAI Responses API compacts a long conversation itself. When a
policy's steps have such an equivalent, the request can carry them instead of contextwise
running them: the prompt sent stays append-only, and the provider edits what it reads.

- :func:`anthropic_context_management` maps ``clear`` steps to ``clear_tool_uses_20250919``
  (and their ``reasoning`` to ``clear_thinking_20251015``), and, when asked, ``compress`` steps
  to ``compact_20260112``;
- :func:`openai_context_management` maps a ``compress`` step to the Responses API's
  ``compaction``.

Both providers count in input tokens, and both apply every edit as soon as the trigger is
passed; a policy with character limits, a step with no equivalent, or a policy that is not in
``reduce`` mode is a coded error that names what does not map. Give ``steps=`` to map only some
steps and run the others with contextwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from contextwise._checks import whole_number
from contextwise._translation import short_text
from contextwise.errors import InvalidTypeError, PolicyConfigurationError
from contextwise.policy import (
    ClearStep,
    CompressStep,
    ContextPolicy,
    ContextStep,
    FixedSelection,
)
from contextwise.policy._api import coerce_policy

ANTHROPIC_CONTEXT_MANAGEMENT_BETA: Final = "context-management-2025-06-27"
"""The Anthropic beta that clears tool uses and thinking on the server."""

ANTHROPIC_COMPACTION_BETA: Final = "compact-2026-01-12"
"""The Anthropic beta that compacts a conversation on the server."""

_ANTHROPIC: Final = "Anthropic"
_OPENAI: Final = "OpenAI Responses"


def anthropic_context_management(
    policy: ContextPolicy | Mapping[str, Any],
    *,
    steps: Iterable[str] | None = None,
    compaction: bool = False,
) -> dict[str, Any]:
    """Return the keyword arguments that make Anthropic apply a policy's steps on its servers.

    The result goes into the beta Messages call as it is:
    ``client.beta.messages.create(model=..., messages=..., **kwargs)``. It holds ``betas`` and
    ``context_management``, whose ``edits`` are, in the order Anthropic requires:

    - for each ``clear`` step with ``reasoning``, a ``clear_thinking_20251015`` edit that keeps
      the thinking of the latest turn (``keep`` counts thinking turns); Anthropic drops thinking
      only when the request enables it;
    - for each ``clear`` step, a ``clear_tool_uses_20250919`` edit: the policy's token trigger,
      ``keep`` from ``keep_recent``, ``clear_at_least`` from ``min_gain_tokens``,
      ``exclude_tools``, and ``clear_tool_inputs`` from ``inputs``;
    - with ``compaction``, for each ``compress`` step, a ``compact_20260112`` edit at the
      policy's token trigger: Anthropic writes the summary, not the step's compressor.

    The trigger is ``trigger_tokens``, or ``target_input_tokens`` without it. Anthropic's
    placeholder for a cleared result is its own, so the model cannot recall it.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        steps: The ids of the steps to map; by default the steps that the policy's selection
            runs (all of them, or those of a ``fixed`` selection).
        compaction: Map ``compress`` steps to Anthropic's compaction; False by default, which
            makes a ``compress`` step an error.

    Returns:
        The keyword arguments, or an empty dict when no step is to be mapped.

    Raises:
        PolicyConfigurationError: When the policy is not in ``reduce`` mode (code
            ``provider_editing_mode``), has a character limit (``provider_char_limits``,
            naming each), has no token trigger (``provider_trigger_required``), or a step has
            no equivalent (``no_provider_equivalent``) or is not in the policy
            (``unknown_step``).
        InvalidTypeError: When the policy is neither a policy nor a mapping, or ``steps`` is not
            a collection of ids.

    Examples:
        >>> from contextwise import anthropic_context_management
        >>> kwargs = anthropic_context_management({
        ...     "mode": "reduce", "trigger_tokens": 100_000, "target_input_tokens": 60_000,
        ...     "steps": [{"id": "old-results", "kind": "clear", "fragment_id": "history",
        ...                "keep_recent": 3, "min_gain_tokens": 5_000}]})
        >>> kwargs["betas"]
        ['context-management-2025-06-27']
        >>> kwargs["context_management"]["edits"][0]["keep"]
        {'type': 'tool_uses', 'value': 3}
    """
    _, trigger, chosen = _mapped(policy, steps, _ANTHROPIC)
    thinking = False
    edits: list[dict[str, Any]] = []
    betas = [ANTHROPIC_CONTEXT_MANAGEMENT_BETA]
    for step in chosen:
        if isinstance(step, ClearStep):
            thinking = thinking or step.reasoning
            edits.append(_clear_tool_uses(step, trigger))
        elif isinstance(step, CompressStep) and compaction:
            edits.append(
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
            )
            if ANTHROPIC_COMPACTION_BETA not in betas:
                betas.append(ANTHROPIC_COMPACTION_BETA)
        else:
            raise _no_equivalent(step, _ANTHROPIC)
    if not edits:
        return {}
    if thinking:
        # Anthropic requires the thinking edit before the tool-use edits.
        keep = {"type": "thinking_turns", "value": 1}
        edits.insert(0, {"type": "clear_thinking_20251015", "keep": keep})
    return {"betas": betas, "context_management": {"edits": edits}}


def _clear_tool_uses(step: ClearStep, trigger: int) -> dict[str, Any]:
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": trigger},
        "keep": {"type": "tool_uses", "value": step.keep_recent},
    }
    whole_number(step.keep_recent, "keep_recent")
    if step.min_gain_tokens is not None:
        whole_number(step.min_gain_tokens, "min_gain_tokens")
        edit["clear_at_least"] = {"type": "input_tokens", "value": step.min_gain_tokens}
    if step.exclude_tools:
        edit["exclude_tools"] = list(step.exclude_tools)
    if step.inputs:
        edit["clear_tool_inputs"] = True
    return edit


def openai_context_management(
    policy: ContextPolicy | Mapping[str, Any], *, steps: Iterable[str] | None = None
) -> dict[str, Any]:
    """Return the keyword arguments that make the OpenAI Responses API compact a conversation.

    A ``compress`` step becomes the Responses API's own compaction, at the policy's token
    trigger: ``{"context_management": [{"type": "compaction", "compact_threshold": n}]}``, for
    ``client.responses.create(model=..., input=..., **kwargs)``. OpenAI writes the compacted
    item, not the step's compressor. The Responses API has no equivalent of ``clear``, ``clip``
    or ``trim``: run those with contextwise, and name the compress step in ``steps``.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        steps: The ids of the steps to map; by default the steps that the policy's selection
            runs.

    Returns:
        The keyword arguments, or an empty dict when no step is to be mapped.

    Raises:
        PolicyConfigurationError: As for :func:`anthropic_context_management`: a mode other
            than ``reduce``, a character limit, no token trigger, or a step with no equivalent
            (code ``no_provider_equivalent``) or not in the policy.
        InvalidTypeError: When the policy is neither a policy nor a mapping, or ``steps`` is not
            a collection of ids.

    Examples:
        >>> from contextwise import openai_context_management
        >>> openai_context_management({
        ...     "mode": "reduce", "trigger_tokens": 200_000,
        ...     "steps": [{"id": "summary", "kind": "compress", "fragment_id": "history",
        ...                "compressor": "summarize"}]})
        {'context_management': [{'type': 'compaction', 'compact_threshold': 200000}]}
    """
    _, trigger, chosen = _mapped(policy, steps, _OPENAI)
    entries: list[dict[str, Any]] = []
    for step in chosen:
        if not isinstance(step, CompressStep):
            raise _no_equivalent(step, _OPENAI)
        if not entries:
            entries.append({"type": "compaction", "compact_threshold": trigger})
    return {"context_management": entries} if entries else {}


def _mapped(
    policy: ContextPolicy | Mapping[str, Any], steps: Iterable[str] | None, provider: str
) -> tuple[ContextPolicy, int, list[ContextStep]]:
    """The policy, its token trigger, and the steps to map, checked for the provider."""
    checked = coerce_policy(policy)
    if checked.mode != "reduce":
        raise PolicyConfigurationError(
            "provider_editing_mode", mode=checked.mode, provider=provider
        )
    limits = [
        name
        for name in ("trigger_chars", "target_input_chars")
        if getattr(checked, name) is not None
    ]
    limits += [
        f"{step.id}.min_gain_chars"
        for step in checked.steps
        if isinstance(step, ClearStep) and step.min_gain_chars is not None
    ]
    if limits:
        raise PolicyConfigurationError(
            "provider_char_limits", limits=limits, count=len(limits), provider=provider
        )
    trigger = checked.trigger_tokens
    if trigger is None:
        trigger = checked.target_input_tokens
    if trigger is None:
        raise PolicyConfigurationError("provider_trigger_required", provider=provider)
    # A provider's request is JSON: a count that JSON or the provider cannot take is refused
    # here, not when the request is sent.
    whole_number(trigger, "trigger_tokens")
    return checked, trigger, _chosen(checked, steps)


def _chosen(policy: ContextPolicy, steps: Iterable[str] | None) -> list[ContextStep]:
    by_id = {step.id: step for step in policy.steps}
    if steps is None:
        selection = policy.selection
        if isinstance(selection, FixedSelection):
            return [by_id[step_id] for step_id in selection.steps]
        return list(policy.steps)
    if isinstance(steps, str) or not isinstance(steps, Iterable):
        raise InvalidTypeError("not_a_collection", name="steps", type_name=type(steps).__name__)
    chosen: list[ContextStep] = []
    for step_id in steps:
        if not isinstance(step_id, str) or step_id not in by_id:
            raise PolicyConfigurationError(
                "unknown_step", step_id=short_text(step_id), step_ids=list(by_id)
            )
        chosen.append(by_id[step_id])
    return chosen


def _no_equivalent(step: ContextStep, provider: str) -> PolicyConfigurationError:
    return PolicyConfigurationError(
        "no_provider_equivalent", step_id=step.id, kind=step.kind, provider=provider
    )
