"""Applying one step to one fragment: trim, compress, app, clear, clip. Internal to the policy
engine.

Each step is computed on an immutable fragment state and returns a candidate (the new state, the
change record and what was removed) without committing it, so that ``auto`` can compare steps and
``audit`` can report them. Calls to application code (compressors, apps, decision providers) are
not made here: the step yields an :class:`Invoke` request and receives a :class:`Reply`, so the
sync and the async entry points share this one implementation.

This module picks the kind; each kind lives in its own module (``_step_trim``, ``_step_clear``,
``_step_compress``, ``_step_app``), on what they share (``_step_core``).
"""

from __future__ import annotations

from contextwise._effects import Effects
from contextwise.policy._fragments import MessagesFragment, TextFragment
from contextwise.policy._measure import FragState
from contextwise.policy._model import (
    AppStep,
    ClearStep,
    ClipStep,
    CompressStep,
    ContextStep,
    TrimStep,
)
from contextwise.policy._step_app import app_messages, app_text
from contextwise.policy._step_clear import clear_or_clip
from contextwise.policy._step_compress import compress_messages, compress_text
from contextwise.policy._step_core import (
    Candidate,
    StepContext,
    StepFailed,
    failed_candidate,
    with_spent,
)
from contextwise.policy._step_trim import trim_messages, trim_text


def apply_step(step: ContextStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    """Compute what a step does to a fragment state, without committing it; a step that fails
    gives a failed candidate."""
    try:
        return (yield from _apply(step, state, context))
    except StepFailed as failed:
        return with_spent(failed_candidate(step, state, failed.error), failed.spent)


def _apply(step: ContextStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    fragment = state.fragment
    if isinstance(fragment, TextFragment):
        if isinstance(step, TrimStep):
            return trim_text(step, state, fragment, context.measure)
        if isinstance(step, CompressStep):
            return (yield from compress_text(step, state, fragment, context))
        if isinstance(step, AppStep):
            return (yield from app_text(step, state, fragment, context))
        return Candidate(step, None, None)  # no tool use in a text
    assert isinstance(fragment, MessagesFragment)
    messages = tuple(fragment.messages)  # a tuple already: no copy
    if isinstance(step, ClearStep | ClipStep):
        return clear_or_clip(step, state, messages, context.measure)
    if isinstance(step, TrimStep):
        return trim_messages(step, state, messages)
    if isinstance(step, CompressStep):
        return (yield from compress_messages(step, state, messages, context))
    return (yield from app_messages(step, state, fragment, context))
