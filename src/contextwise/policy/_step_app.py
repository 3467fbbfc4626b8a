"""The app step: the application's own function rewrites the fragment, and the step checks what
it returns.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import NoReturn

from contextwise._align import align
from contextwise._effects import Effects
from contextwise.messages import ChatMessage, find_orphan_results, tool_call_ids, tool_result_ids
from contextwise.policy._edits import Remap
from contextwise.policy._fragments import MessagesFragment, TextFragment
from contextwise.policy._measure import FragState
from contextwise.policy._model import AppStep
from contextwise.policy._step_core import (
    Candidate,
    StepContext,
    call_step,
    measure_new,
    step_failed,
    step_params,
    with_change,
)


def app_text(
    step: AppStep, state: FragState, fragment: TextFragment, context: StepContext
) -> Effects[Candidate]:
    old_text = fragment.text
    reply = yield from call_step(step, context, fragment.with_text(old_text))
    result = reply.value
    if isinstance(result, TextFragment) and result.id == fragment.id:
        new_text = result.text
    elif isinstance(result, str):
        new_text = result
    else:
        _app_invalid_result(step, state, result)
    assert new_text is not None
    if new_text == old_text:
        return Candidate(step, None, None)
    measure = context.measure
    tokens = None if measure.counter is None else measure.text_tokens(new_text)
    prefix, suffix = _common_ends(old_text, new_text)
    span = old_text[prefix : len(old_text) - suffix]
    new_state, change = with_change(
        step,
        "app",
        state,
        fragment.with_text(new_text),
        len(new_text),
        tokens,
        removed_chars=len(span),
        added_chars=len(new_text) - prefix - suffix,
    )
    return Candidate(step, new_state, change, (old_text,) if span else ())


def app_messages(
    step: AppStep, state: FragState, fragment: MessagesFragment, context: StepContext
) -> Effects[Candidate]:
    old_messages = fragment.messages
    given = MessagesFragment(fragment.id, messages=copy.deepcopy(list(old_messages)))
    reply = yield from call_step(step, context, given)
    result = reply.value
    if isinstance(result, MessagesFragment) and result.id == fragment.id:
        new_messages = tuple(result.messages)
    elif isinstance(result, list | tuple):
        new_messages = tuple(result)
    else:
        _app_invalid_result(step, state, result)
    if new_messages == tuple(old_messages):
        return Candidate(step, None, None)
    measure = context.measure
    new_profile, new_token_sizes = measure_new(
        step, lambda: (measure.profile(new_messages), measure.tokens_per_message(new_messages))
    )
    if _breaks_pairing(old_messages, new_messages):
        step_failed("app_broke_tool_pairing", **step_params(step))
    chars = sum(new_profile.sizes)
    tokens = None if new_token_sizes is None else sum(new_token_sizes)
    # An exact ledger: the messages removed are those outside a longest common subsequence of the
    # old and new lists (moved messages paired), so a rewrite in the middle removes that message
    # only.
    alignment = align(old_messages, new_messages)
    removed_indices, source = alignment.removed, alignment.source
    # The app worked on copies: a message it kept unchanged is the caller's own object again.
    new_messages = tuple(
        message if index is None else old_messages[index]
        for message, index in zip(new_messages, source, strict=True)
    )
    removed = tuple(old_messages[index] for index in removed_indices)
    removed_chars = sum(state.sizes[index] for index in removed_indices)
    new_state, change = with_change(
        step,
        "app",
        state,
        MessagesFragment(fragment.id, messages=new_messages),
        chars,
        tokens,
        profile=new_profile,
        token_sizes=new_token_sizes,
        removed_messages=len(removed),
        removed_chars=removed_chars,
        added_messages=len(new_messages) - (len(old_messages) - len(removed)),
        added_chars=chars - (state.chars - removed_chars),
    )
    return Candidate(step, new_state, change, removed, Remap(source, removed_indices))


def _app_invalid_result(step: AppStep, state: FragState, result: object) -> NoReturn:
    fragment = state.fragment
    step_failed(
        "app_invalid_result",
        type_name=type(result).__name__,
        fragment_id=fragment.id,
        field=fragment.field,
        **step_params(step),
    )


def _common_ends(before: str, after: str) -> tuple[int, int]:
    """The lengths of the common prefix and of the common suffix, not overlapping."""
    limit = min(len(before), len(after))
    prefix = 0
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def _breaks_pairing(before: Sequence[ChatMessage], after: Sequence[ChatMessage]) -> bool:
    """Whether ``after`` has more orphan results than ``before``, or a call lost a result."""
    if len(find_orphan_results(list(after))) > len(find_orphan_results(list(before))):
        return True
    answered_before = _result_counts(before)
    answered_after = _result_counts(after)
    for message in after:
        for call in tool_call_ids(message):
            if answered_after.get(call, 0) < answered_before.get(call, 0):
                return True
    return False


def _result_counts(messages: Sequence[ChatMessage]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for message in messages:
        for result in tool_result_ids(message):
            counts[result] = counts.get(result, 0) + 1
    return counts
