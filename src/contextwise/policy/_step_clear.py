"""The clear and clip steps: replace old tool results (and inputs) with a placeholder, or cut them
to a limit, as :mod:`contextwise.policy._clearing` plans.
"""

from __future__ import annotations

from contextwise._layout import Profile, read_all
from contextwise.messages import ChatMessage
from contextwise.policy._clearing import Rewrite, plan_clear, plan_clip
from contextwise.policy._edits import Remap
from contextwise.policy._fragments import MessagesFragment
from contextwise.policy._measure import FragState, Measure
from contextwise.policy._model import ClearStep, ClipStep
from contextwise.policy._step_core import Candidate, with_change
from contextwise.shapes import MessageFacts


def clear_or_clip(
    step: ClearStep | ClipStep,
    state: FragState,
    messages: tuple[ChatMessage, ...],
    measure: Measure,
) -> Candidate:
    """Rewrite tool results (and, for ``clear``, inputs and thinking) in place."""
    profile = state.profile
    if profile is None or profile.plain:
        return Candidate(step, None, None)  # no message of a plain list holds a tool use
    facts = profile.facts
    if facts is None or len(facts) != len(messages):
        facts = read_all(messages, measure.part_estimate, measure.opaque)
    if isinstance(step, ClearStep):
        rewrite = plan_clear(step, messages, facts)
    else:
        counter = None if measure.counter is None else measure.text_tokens
        rewrite = plan_clip(step, messages, facts, counter)
    if rewrite is None:
        return Candidate(step, None, None)
    return _rewritten(step, state, messages, measure, rewrite, facts)


def _rewritten(
    step: ClearStep | ClipStep,
    state: FragState,
    messages: tuple[ChatMessage, ...],
    measure: Measure,
    rewrite: Rewrite,
    facts: list[MessageFacts],
) -> Candidate:
    """The candidate of a rewrite: copies measured (and read, for the next step), the others
    keep their sizes."""
    copies = [
        message
        for message, index in zip(rewrite.messages, rewrite.source, strict=True)
        if index is None
    ]
    measured = measure.profile(copies)
    copy_facts = measured.facts or read_all(copies, measure.part_estimate, measure.opaque)
    copy_tokens = measure.tokens_per_message(copies)
    old_profile = state.profile
    assert old_profile is not None
    sizes: list[int] = []
    roles: list[object] = []
    new_facts: list[MessageFacts] = []
    tokens: list[int] | None = None if copy_tokens is None else []
    copy_number = 0
    for index in rewrite.source:
        if index is None:
            sizes.append(measured.sizes[copy_number])
            roles.append(measured.roles[copy_number])
            new_facts.append(copy_facts[copy_number])
            if tokens is not None and copy_tokens is not None:
                tokens.append(copy_tokens[copy_number])
            copy_number += 1
        else:
            sizes.append(old_profile.sizes[index])
            roles.append(old_profile.roles[index])
            new_facts.append(facts[index])
            if tokens is not None and state.token_sizes is not None:
                tokens.append(state.token_sizes[index])
    removed_chars = sum(old_profile.sizes[index] for index in rewrite.removed)
    added_chars = sum(measured.sizes)
    chars = state.chars - removed_chars + added_chars
    new_tokens = None if tokens is None else sum(tokens)
    if isinstance(step, ClearStep) and not _worth_it(step, state, chars, new_tokens):
        return Candidate(step, None, None)
    profile = Profile(sizes, roles, False, facts=new_facts)
    new_state, change = with_change(
        step,
        step.kind,
        state,
        MessagesFragment(state.fragment.id, messages=rewrite.messages),
        chars,
        new_tokens,
        profile=profile,
        token_sizes=tokens,
        removed_messages=len(rewrite.removed),
        removed_chars=removed_chars,
        added_messages=len(copies),
        added_chars=added_chars,
    )
    removed = tuple(messages[index] for index in rewrite.removed)
    return Candidate(step, new_state, change, removed, Remap(rewrite.source, rewrite.removed))


def _worth_it(step: ClearStep, state: FragState, chars: int, tokens: int | None) -> bool:
    """Whether a clearing frees at least the step's minimum gains."""
    if step.min_gain_chars is not None and state.chars - chars < step.min_gain_chars:
        return False
    return not (
        step.min_gain_tokens is not None
        and (tokens is None or state.tokens is None or state.tokens - tokens < step.min_gain_tokens)
    )
