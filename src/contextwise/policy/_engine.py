"""The core that runs a policy on fragments, for the runner's sync and async faces.

The core is a generator that yields a request each time it needs application code (a compressor,
an app, a decision provider); the async driver awaits those calls and the sync driver runs them to
completion, so the logic exists once. :mod:`contextwise.policy._runner` checks what a run needs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from contextwise._effects import Effects
from contextwise.decision import DecisionProvider
from contextwise.errors import ContextOverflowError
from contextwise.policy._fragments import ContextResult, Fragment
from contextwise.policy._measure import FragState, KnownSizes, Measure, measure_fragment
from contextwise.policy._model import (
    AutoSelection,
    ContextPolicy,
    FixedSelection,
    SequenceSelection,
)
from contextwise.policy._pinned import NOTHING_PINNED, Pinned
from contextwise.policy._report import ContextProcessingReport, TokenReport, shortfalls
from contextwise.policy._selection import (
    Limits,
    PolicyRun,
    effective_limits,
    run_auto,
    run_model,
    run_sequence,
)
from contextwise.policy._step_core import StepContext

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


# --- the core --------------------------------------------------------------------------------


def run_policy(
    policy: ContextPolicy,
    fragments: list[Fragment],
    context: StepContext,
    budget_limit: int | None,
    decision_provider: DecisionProvider | None,
    known_sizes: Mapping[str, KnownSizes],
    removed_by: dict[int, str] | None,
    pinned: Pinned = NOTHING_PINNED,
    held_back: frozenset[str] = frozenset(),
) -> Effects[ContextResult]:
    """Run a policy, checked against its options and fragments, on the fragments.

    ``known_sizes`` gives, by fragment id, sizes measured earlier; ``removed_by``, when given,
    is filled with the id of the step that removed each removed item, keyed by its ``id()``.
    ``pinned`` is the size of what the prompt holds besides the fragments, which counts against
    the limits; ``held_back`` names the step kinds that do not run this time.
    """
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
    # The parts of the input that were estimated, counted before any step replaces a profile.
    estimated_parts = sum(
        state.profile.estimated_parts for state in states.values() if state.profile
    )
    runner = PolicyRun(states, limits, context, pinned)
    before_chars, before_tokens = runner.chars, runner.tokens
    over = limits.chars_over(before_chars) or limits.tokens_over(before_tokens)
    if policy.mode == "validate":
        _check_validate(limits, before_chars, before_tokens)
    acted = policy.mode != "validate" and over
    present = {fragment.id for fragment in fragments}
    skipped = tuple(step.id for step in policy.steps if step.fragment_id not in present)
    held: set[str] = set()
    if acted:
        held = {step.id for step in policy.steps if step.kind in held_back}
        yield from _select(runner, policy, decision_provider, {*skipped, *held})
    report = _report(
        policy,
        runner,
        limits,
        before_chars,
        before_tokens,
        acted=acted,
        estimated_parts=estimated_parts,
        skipped_steps=skipped,
    )
    if not report.target_met and not held:
        # A run with steps held back (left to a later call, or to the provider) is not the
        # policy's last word: its shortfall is in the report, not in the log.
        _warn_shortfall(report, limits)
    return _result(policy, fragments, runner, report, removed_by)


def _result(
    policy: ContextPolicy,
    fragments: list[Fragment],
    runner: PolicyRun,
    report: ContextProcessingReport,
    removed_by: dict[int, str] | None,
) -> ContextResult:
    """The result of a run: the reduced fragments in ``reduce`` mode, the input otherwise."""
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
    runner: PolicyRun,
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
        pinned_chars=runner.pinned.chars,
        pinned_tokens=runner.pinned.tokens,
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
    runner: PolicyRun,
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
