"""Checking a context policy against its own rules and against what the application supplies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError, PolicyConfigurationError
from contextwise.policy._fragments import Fragment, coerce_fragments
from contextwise.policy._model import (
    AppStep,
    CompressStep,
    ContextPolicy,
    coerce_policy,
    token_limits,
)


def validate_context_policy(
    policy: ContextPolicy | Mapping[str, Any],
    compressors: Iterable[str] = (),
    apps: Iterable[str] = (),
    *,
    counter: object | None = None,
    fragments: Sequence[Fragment] | None = None,
) -> ContextPolicy:
    """Check a policy against its rules and against the compressors and apps the application has.

    The checks run in this order and the first failure is raised: the policy's own rules (unique
    step ids, each trigger above its target, fixed selection ids that exist and appear once, a
    ``target_chars`` on every text trim at least as long as its marker, a limit on every clip
    step, ``keep_task`` turned off only with ``tool-unit``); every compressor and app
    that a step names is among ``compressors`` and ``apps``; a policy with token limits has a
    ``counter``; and, when ``fragments`` are given, every step names one of them and the field it
    holds. Nothing is changed, and no compressor or app is called.

    Args:
        policy: The policy, or a mapping in the shape of a policy file (snake_case or camelCase
            keys).
        compressors: The names of the compressors the application supplies; a mapping from names
            to functions works too.
        apps: The names of the app mutations the application supplies; a mapping works too.
        counter: The token counter that will be used, if any; only its presence is checked.
        fragments: The fragments that will be processed, if known.

    Returns:
        The policy, validated (built from the mapping when a mapping was given).

    Raises:
        PolicyConfigurationError: On the first problem, with a stable code: a field-validation
            code of a mapping (``unknown_key``, ``wrong_type``..., with ``problems`` listing them
            all), ``duplicate_step_id``, ``trigger_not_above_target``, ``unknown_fixed_step``,
            ``duplicate_fixed_step``, ``text_trim_without_target``, ``text_target_below_marker``,
            ``clip_without_limit``, ``keep_task_without_tool_unit``, ``unknown_compressor``,
            ``unknown_app``, ``counter_required``, ``unknown_fragment`` or ``field_mismatch``.
        InvalidTypeError: When the policy is neither a policy nor a mapping, ``compressors`` or
            ``apps`` is not a collection of names (codes ``not_a_collection``, ``not_a_string``:
            a list of functions is refused), or ``fragments`` is not a list of fragments.

    Examples:
        >>> from contextwise import PolicyConfigurationError, validate_context_policy
        >>> validate_context_policy({"mode": "validate"}, [], []).mode
        'validate'
        >>> policy = {"mode": "reduce", "triggerChars": 100, "steps": [
        ...     {"id": "s", "kind": "compress", "fragmentId": "h", "compressor": "llm"}]}
        >>> try:
        ...     validate_context_policy(policy, compressors=["summarize"])
        ... except PolicyConfigurationError as err:
        ...     print(err.code, err.params["compressor"])
        unknown_compressor llm
    """
    checked = coerce_policy(policy)  # a policy's own rules ran when it was built
    compressor_names = _names(compressors, "compressors")
    app_names = _names(apps, "apps")
    for step in checked.steps:
        if isinstance(step, CompressStep) and step.compressor not in compressor_names:
            raise PolicyConfigurationError(
                "unknown_compressor",
                step_id=step.id,
                compressor=step.compressor,
                provided=sorted(compressor_names),
            )
        if isinstance(step, AppStep) and step.app not in app_names:
            raise PolicyConfigurationError(
                "unknown_app", step_id=step.id, app=step.app, provided=sorted(app_names)
            )
    if counter is None:
        limits = token_limits(checked)
        if limits:
            raise PolicyConfigurationError("counter_required", limits=limits, count=len(limits))
    if fragments is not None:
        check_fragments(checked, coerce_fragments(fragments))
    return checked


def check_fragments(policy: ContextPolicy, fragments: Sequence[Fragment]) -> None:
    """Check that every step of a validated policy names one of the fragments and the field it
    holds (a step on an absent optional fragment is skipped).

    Raises:
        PolicyConfigurationError: With the code ``unknown_fragment`` or ``field_mismatch``.
    """
    fields = {fragment.id: fragment.field for fragment in fragments}
    for step in policy.steps:
        actual = fields.get(step.fragment_id)
        if actual is None and step.fragment_id in policy.optional_fragments:
            continue
        if actual is None:
            raise PolicyConfigurationError(
                "unknown_fragment",
                step_id=step.id,
                fragment_id=step.fragment_id,
                fragment_ids=list(fields),
            )
        wanted = getattr(step, "field", actual)
        if wanted != actual:
            raise PolicyConfigurationError(
                "field_mismatch",
                step_id=step.id,
                field=wanted,
                fragment_id=step.fragment_id,
                actual=actual,
            )


def _names(provided: object, argument: str) -> set[str]:
    """The names a caller provides: one name, or a collection (or mapping) of names.

    Anything else is an error: a list of functions where names (or a mapping of names to
    functions) are expected must not pass as "no name at all".
    """
    if isinstance(provided, str):
        return {provided}
    if isinstance(provided, bytes) or not isinstance(provided, Iterable):
        raise InvalidTypeError("not_a_collection", name=argument, type_name=type(provided).__name__)
    names: set[str] = set()
    for index, name in enumerate(provided):
        if not isinstance(name, str):
            raise InvalidTypeError(
                "not_a_string", name=f"{argument}[{index}]", type_name=type(name).__name__
            )
        names.add(name)
    return names
