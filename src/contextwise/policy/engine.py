"""Processing a context with a policy: ``process_context`` and its async twin ``aprocess_context``.

Both entry points drive one core. The core is a generator that yields a request each time it needs
application code (a compressor, an app, a decision provider); the async driver awaits those calls
and the sync driver runs them to completion, so the logic exists once.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from contextwise._effects import Effects, run_async, run_sync
from contextwise.decision.schema import DecisionProvider
from contextwise.errors import ContextOverflowError, InvalidTypeError, PolicyConfigurationError
from contextwise.policy.fragments import ContextResult, Fragment, coerce_fragments
from contextwise.policy.model import (
    AutoSelection,
    ContextPolicy,
    FixedSelection,
    ModelSelection,
    SequenceSelection,
    coerce_policy,
)
from contextwise.policy.report import ContextProcessingReport, TokenReport, shortfalls
from contextwise.policy.selection import (
    Limits,
    Runner,
    effective_limits,
    run_auto,
    run_model,
    run_sequence,
)
from contextwise.policy.steps import FragState, KnownSizes, Measure, StepContext, measure_fragment
from contextwise.policy.validation import validate_context_policy
from contextwise.shapes import PartEstimate
from contextwise.tokens import TokenCounter, as_token_counter

Compressor: TypeAlias = Callable[[Any], Any]
"""A compressor: a sync or async function that takes the messages (or the text) to replace and
returns the summary, as a message or a string."""

AppMutation: TypeAlias = Callable[[Fragment], Any]
"""An app mutation: a sync or async function that takes a copy of a fragment and returns the
changed fragment, or just its new messages or text."""

LOGGER_NAME = "contextwise.policy"
"""The logger that warns when a policy stops above its targets."""

logger = logging.getLogger(LOGGER_NAME)
# Records go nowhere until the application configures logging, as for every library.
logger.addHandler(logging.NullHandler())


def process_context(
    policy: ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    *,
    counter: object | None = None,
    budget: object | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    apps: Mapping[str, AppMutation] | None = None,
    decision_provider: DecisionProvider | None = None,
    step_timeout: float | None = None,
    part_estimate: PartEstimate | None = None,
) -> ContextResult:
    """Fit fragments of a context to a policy: trim, compress or mutate them, and report it all.

    It behaves exactly like :func:`aprocess_context` and shares its implementation. A sync
    compressor or app runs inline; with a timeout it runs in a worker thread, and when the
    timeout expires its result is discarded (the thread cannot be stopped and finishes in the
    background). An async one is awaited, on a private event loop in a worker thread when an
    event loop is already running here, so this function also works inside Jupyter or an async
    web handler.

    Examples:
        >>> from contextwise import ContextPolicy, Fragment, process_context
        >>> history = [{"role": "system", "content": "Be brief."}]
        >>> for n in range(4):
        ...     history += [{"role": "user", "content": f"Question {n}?"},
        ...                 {"role": "assistant", "content": f"Answer {n}."}]
        >>> policy = ContextPolicy(mode="reduce", trigger_chars=60, target_input_chars=50,
        ...     steps=[{"id": "turns", "kind": "trim", "fragment_id": "history", "keep_groups": 1}])
        >>> result = process_context(policy, [Fragment("history", messages=history)])
        >>> [m["content"] for m in result.fragment("history").messages]
        ['Be brief.', 'Question 3?', 'Answer 3.']
        >>> result.report.before_chars, result.report.after_chars, len(result.removed["history"])
        (89, 29, 6)
    """
    return run_sync(
        context_effects(
            policy,
            fragments,
            counter=counter,
            budget=budget,
            compressors=compressors,
            apps=apps,
            decision_provider=decision_provider,
            step_timeout=step_timeout,
            part_estimate=part_estimate,
        )
    )


async def aprocess_context(
    policy: ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    *,
    counter: object | None = None,
    budget: object | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    apps: Mapping[str, AppMutation] | None = None,
    decision_provider: DecisionProvider | None = None,
    step_timeout: float | None = None,
    part_estimate: PartEstimate | None = None,
) -> ContextResult:
    """Fit fragments of a context to a policy: trim, compress or mutate them, and report it all.

    The fragments are measured once. In ``reduce`` mode, when a trigger is exceeded (characters,
    tokens, or the ``budget``'s context budget), the policy's selection applies steps until the
    targets are met. ``validate`` mode changes nothing and raises when ``reduce`` would have
    acted. ``audit`` mode changes nothing and reports exactly what ``reduce`` would change,
    calling the compressors and apps on copies to know it.

    With a counter, a text is counted as a whole and a list of messages message by message, each
    through :func:`~contextwise.messages.message_text`.

    The input is never mutated: the result holds new fragments, which share the unchanged message
    objects. A compressor or app that raises, times out, or returns something unusable leaves its
    fragment untouched and is reported as a failed change. Async compressors and apps are
    awaited (and cancelled when their timeout expires); sync ones run inline, or in a worker
    thread when they have a timeout. Cancelling the task cancels the call in progress.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        fragments: The fragments, as :class:`Fragment` objects or mappings with ``id`` and
            ``text`` or ``messages``; their ids are unique.
        counter: A token counter, or a tokenizer or function that
            :func:`~contextwise.tokens.as_token_counter` accepts; needed for token limits and
            recorded in the report.
        budget: A :class:`~contextwise.budget.ContextBudget` whose ``context_budget()`` caps the
            token trigger and target; needs a counter.
        compressors: The compressors by name, as the policy's compress steps name them.
        apps: The app mutations by name, as the policy's app steps name them.
        decision_provider: The decision provider of a ``model`` selection.
        step_timeout: The default maximum number of seconds that a compressor or app may take,
            for steps without their own ``timeout``; no limit when omitted.
        part_estimate: How the parts of messages that have no text (images, audio, files,
            encrypted reasoning) are measured; :class:`~contextwise.PartEstimate` by default.
            The report counts the parts it measured in ``estimated_parts``.

    Returns:
        The fragments in input order, the report, and what was removed from each fragment.

    Raises:
        PolicyConfigurationError: When the policy is invalid or does not match the fragments,
            compressors, apps, counter or decision provider (see
            :func:`validate_context_policy`; also ``decision_provider_required``,
            ``invalid_decision_provider``, ``invalid_compressor``, ``invalid_app``,
            ``duplicate_fragment_id`` and ``invalid_step_timeout``).
        ContextOverflowError: In ``validate`` mode, when a trigger or the token limit is
            exceeded (codes ``policy_validation_overflow`` and
            ``policy_validation_token_overflow``).
        InvalidTypeError: When an argument or a message has the wrong type.
        InvalidValueError: When a fragment is malformed, or the counter returns a bad count.

    Examples:
        >>> import asyncio
        >>> from contextwise import ContextPolicy, Fragment, aprocess_context
        >>> async def shorten(text: str) -> str:
        ...     return text[:10]
        >>> policy = ContextPolicy(mode="reduce", trigger_chars=20, steps=[
        ...     {"id": "sum", "kind": "compress", "fragment_id": "doc", "field": "text",
        ...      "compressor": "shorten"}])
        >>> result = asyncio.run(aprocess_context(
        ...     policy, [Fragment("doc", text="A long document about nothing.")],
        ...     compressors={"shorten": shorten}))
        >>> result.fragment("doc").text
        'A long doc'
    """
    return await run_async(
        context_effects(
            policy,
            fragments,
            counter=counter,
            budget=budget,
            compressors=compressors,
            apps=apps,
            decision_provider=decision_provider,
            step_timeout=step_timeout,
            part_estimate=part_estimate,
        )
    )


def context_effects(
    policy: object,
    fragments: object,
    *,
    counter: object | None = None,
    budget: object | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    apps: Mapping[str, AppMutation] | None = None,
    decision_provider: DecisionProvider | None = None,
    step_timeout: float | None = None,
    part_estimate: PartEstimate | None = None,
    known_sizes: Mapping[str, KnownSizes] | None = None,
    removed_by: dict[int, str] | None = None,
) -> Effects[ContextResult]:
    """The core of :func:`process_context` and :func:`aprocess_context`, for any driver.

    Every argument is checked before the first fragment is measured. Two hooks serve sessions,
    which measure each message once, when it is added: ``known_sizes`` gives, by fragment id,
    sizes measured earlier, and ``removed_by``, when given, is filled with the id of the step
    that removed each removed item, keyed by the item's ``id()``.
    """
    checked_policy = coerce_policy(policy)
    items = coerce_fragments(fragments)
    setup = prepare_run(
        checked_policy,
        items,
        counter=counter,
        budget=budget,
        compressors=compressors,
        apps=apps,
        decision_provider=decision_provider,
        step_timeout=step_timeout,
        part_estimate=part_estimate,
    )
    result: ContextResult = yield from run_effects(setup, items, known_sizes, removed_by)
    return result


@dataclass(frozen=True, slots=True)
class RunSetup:
    """Everything a run needs besides its fragments, checked: what :func:`prepare_run` returns.

    A caller that runs one policy many times with the same functions (a session) prepares it
    once and gives it to :func:`run_effects` on each run.
    """

    policy: ContextPolicy
    context: StepContext
    budget_limit: int | None
    decision_provider: DecisionProvider | None


def prepare_run(
    policy: ContextPolicy,
    fragments: Sequence[Fragment],
    *,
    counter: object | None = None,
    budget: object | None = None,
    compressors: Mapping[str, Compressor] | None = None,
    apps: Mapping[str, AppMutation] | None = None,
    decision_provider: DecisionProvider | None = None,
    step_timeout: float | None = None,
    part_estimate: PartEstimate | None = None,
) -> RunSetup:
    """Check a run's arguments against the policy and the fragments, in the order
    :func:`context_effects` documents, and keep what the run needs.

    The fragments are only matched against the steps (ids and fields); runs with other
    fragments of the same ids and fields may share the setup.
    """
    token_counter: TokenCounter | None = None if counter is None else as_token_counter(counter)
    budget_limit = _budget_limit(budget, token_counter)
    compressor_map = _functions(compressors, "invalid_compressor", "compressor")
    app_map = _functions(apps, "invalid_app", "app")
    if step_timeout is not None and (
        isinstance(step_timeout, bool)
        or not isinstance(step_timeout, int | float)
        or not 0 < step_timeout < math.inf
    ):
        raise PolicyConfigurationError("invalid_step_timeout", value=repr(step_timeout))
    validate_context_policy(
        policy, compressor_map, app_map, counter=token_counter, fragments=fragments
    )
    if isinstance(policy.selection, ModelSelection):
        if decision_provider is None:
            raise PolicyConfigurationError("decision_provider_required")
        if not isinstance(decision_provider, DecisionProvider):
            raise PolicyConfigurationError(
                "invalid_decision_provider", type_name=type(decision_provider).__name__
            )
    context = StepContext(
        measure=Measure(token_counter, _part_estimate(part_estimate)),
        compressors=compressor_map,
        apps=app_map,
        default_timeout=None if step_timeout is None else float(step_timeout),
    )
    return RunSetup(policy, context, budget_limit, decision_provider)


def run_effects(
    setup: RunSetup,
    fragments: list[Fragment],
    known_sizes: Mapping[str, KnownSizes] | None = None,
    removed_by: dict[int, str] | None = None,
) -> Effects[ContextResult]:
    """Run a prepared policy on fragments that :func:`prepare_run` checked (or that have the same
    ids and fields): see :func:`context_effects` for ``known_sizes`` and ``removed_by``."""
    result: ContextResult = yield from _core(
        setup.policy,
        fragments,
        setup.context,
        setup.budget_limit,
        setup.decision_provider,
        known_sizes or {},
        removed_by,
    )
    return result


# --- preparation -----------------------------------------------------------------------------


def _part_estimate(value: object) -> PartEstimate | None:
    if value is None or isinstance(value, PartEstimate):
        return value
    raise InvalidTypeError("invalid_part_estimate_type", type_name=type(value).__name__)


def _budget_limit(budget: object | None, counter: TokenCounter | None) -> int | None:
    if budget is None:
        return None
    method = getattr(budget, "context_budget", None)
    if not callable(method):
        raise InvalidTypeError("invalid_budget", type_name=type(budget).__name__)
    limit = int(method())
    if counter is None:
        raise PolicyConfigurationError("counter_required", limits=["budget"], count=1)
    return limit


def _functions(
    given: Mapping[str, Callable[..., Any]] | None, code: str, key: str
) -> dict[str, Callable[..., Any]]:
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise InvalidTypeError("not_a_mapping", name=f"{key}s", type_name=type(given).__name__)
    for name, func in given.items():
        if not callable(func):
            raise PolicyConfigurationError(code, **{key: name, "type_name": type(func).__name__})
    return dict(given)


# --- the core --------------------------------------------------------------------------------


def _core(
    policy: ContextPolicy,
    fragments: list[Fragment],
    context: StepContext,
    budget_limit: int | None,
    decision_provider: DecisionProvider | None,
    known_sizes: Mapping[str, KnownSizes],
    removed_by: dict[int, str] | None,
) -> Effects[ContextResult]:
    measure = context.measure
    states: dict[str, FragState] = {
        fragment.id: measure_fragment(fragment, measure, 0, known_sizes.get(fragment.id))
        for fragment in fragments
    }
    limits = effective_limits(
        policy.trigger_chars,
        policy.target_input_chars,
        policy.trigger_tokens,
        policy.target_input_tokens,
        budget_limit,
    )
    runner = Runner(states, limits, context)
    before_chars, before_tokens = runner.chars, runner.tokens
    over = limits.chars_over(before_chars) or limits.tokens_over(before_tokens)
    if policy.mode == "validate":
        _check_validate(limits, before_chars, before_tokens)
    acted = policy.mode != "validate" and over
    present = {fragment.id for fragment in fragments}
    skipped = tuple(step.id for step in policy.steps if step.fragment_id not in present)
    if acted:
        yield from _select(runner, policy, decision_provider, set(skipped))
    report = _report(
        policy,
        runner,
        limits,
        before_chars,
        before_tokens,
        acted=acted,
        estimated_parts=sum(
            state.profile.estimated_parts for state in states.values() if state.profile
        ),
        skipped_steps=skipped,
    )
    if not report.target_met:
        _warn_shortfall(report, limits)
    if removed_by is not None:
        # Built only when asked: a trim of a long history removes many messages.
        for step_id, removed in runner.removals:
            removed_by.update(dict.fromkeys(map(id, removed), step_id))
    if policy.mode == "reduce":
        return ContextResult(
            fragments=tuple(runner.states[fragment.id].fragment for fragment in fragments),
            report=report,
            removed=runner.removed,
        )
    return ContextResult(
        fragments=tuple(fragments),
        report=report,
        removed={fragment.id: [] for fragment in fragments},
    )


def _report(
    policy: ContextPolicy,
    runner: Runner,
    limits: Limits,
    before_chars: int,
    before_tokens: int | None,
    *,
    acted: bool,
    estimated_parts: int,
    skipped_steps: tuple[str, ...],
) -> ContextProcessingReport:
    """The report of a run, with whether the targets were met when the policy acted."""
    short_chars, short_tokens = (
        shortfalls(limits.target_chars, limits.target_tokens, runner.chars, runner.tokens)
        if acted
        else (0, 0)
    )
    return ContextProcessingReport(
        mode=policy.mode,
        estimated_parts=estimated_parts,
        selection=policy.selection.mode if acted else None,
        decisions=tuple(runner.decisions),
        before_chars=before_chars,
        after_chars=runner.chars,
        tokens=_token_report(runner.context.measure, before_tokens, runner.tokens, limits),
        changes=tuple(runner.changes),
        skipped_steps=skipped_steps,
        target_met=not (short_chars or short_tokens),
        shortfall_chars=short_chars,
        shortfall_tokens=short_tokens,
    )


def _warn_shortfall(report: ContextProcessingReport, limits: Limits) -> None:
    # The log is in English for operators, like the routing records; the report holds the numbers.
    missed = []
    if report.shortfall_chars:
        missed.append(
            f"{report.after_chars} characters for a target of {limits.target_chars} "
            f"({report.shortfall_chars} over)"
        )
    if report.shortfall_tokens and report.tokens is not None:
        missed.append(
            f"{report.tokens.after} tokens for a target of {limits.target_tokens} "
            f"({report.shortfall_tokens} over)"
        )
    logger.warning(
        "context policy (%s) stopped above its target: %s",
        report.mode,
        "; ".join(missed),
        extra={
            "shortfall_chars": report.shortfall_chars,
            "shortfall_tokens": report.shortfall_tokens,
        },
    )


def _check_validate(limits: Limits, chars: int, tokens: int | None) -> None:
    """In ``validate`` mode: raise when a trigger is exceeded, characters first."""
    if limits.chars_over(chars):
        assert limits.trigger_chars is not None
        raise ContextOverflowError(
            "policy_validation_overflow",
            chars=chars,
            limit=limits.trigger_chars,
            limit_name=limits.trigger_chars_name,
        )
    if limits.tokens_over(tokens):
        assert limits.trigger_tokens is not None
        raise ContextOverflowError(
            "policy_validation_token_overflow",
            tokens=tokens,
            limit=limits.trigger_tokens,
            limit_name=limits.trigger_tokens_name,
        )


def _select(
    runner: Runner,
    policy: ContextPolicy,
    decision_provider: DecisionProvider | None,
    skipped: set[str],
) -> Effects[None]:
    """Apply the policy's selection of steps until the targets are met.

    The steps on an absent optional fragment are left out of every selection.
    """
    selection = policy.selection
    steps = [step for step in policy.steps if step.id not in skipped]
    if isinstance(selection, SequenceSelection):
        yield from run_sequence(runner, steps)
    elif isinstance(selection, FixedSelection):
        by_id = {step.id: step for step in steps}
        fixed = [by_id[step_id] for step_id in selection.steps if step_id in by_id]
        yield from run_sequence(runner, fixed)
    elif isinstance(selection, AutoSelection):
        yield from run_auto(runner, steps)
    else:
        assert decision_provider is not None
        yield from run_model(runner, steps, selection, decision_provider)


def _token_report(
    measure: Measure, before: int | None, after: int | None, limits: Limits
) -> TokenReport | None:
    if measure.counter is None or before is None or after is None:
        return None
    return TokenReport(
        counter_id=str(measure.counter.id),
        before=before,
        after=after,
        input_limit=limits.target_tokens,
    )
