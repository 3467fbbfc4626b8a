"""The compress step: replace older messages (or a text) with the summary a compressor writes."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from contextwise._effects import Effects
from contextwise._layout import older_groups, pinned_between, profile_messages, splice
from contextwise.accounting import WithUsage
from contextwise.errors import ContextwiseError
from contextwise.messages import (
    ChatMessage,
    message_chars,
    message_text,
    tool_call_ids,
    tool_result_ids,
)
from contextwise.policy._edits import Splice
from contextwise.policy._fragments import MessagesFragment, TextFragment
from contextwise.policy._measure import FragState
from contextwise.policy._model import CompressStep, layout_grouping
from contextwise.policy._step_core import (
    Candidate,
    StepContext,
    call_step,
    measure_new,
    spending,
    step_failed,
    step_params,
    with_change,
    with_spent,
)
from contextwise.shapes import read_message, summary_message


def compress_text(
    step: CompressStep, state: FragState, fragment: TextFragment, context: StepContext
) -> Effects[Candidate]:
    if not fragment.text:
        return Candidate(step, None, None)
    reply = yield from call_step(step, context, fragment.text)
    with spending(reply.value):
        return with_spent(_text_summary(step, state, context, fragment, reply.value), reply.value)


def _text_summary(
    step: CompressStep,
    state: FragState,
    context: StepContext,
    fragment: TextFragment,
    summary: object,
) -> Candidate:
    """The candidate of a text compressed to ``summary``, or the failed step."""
    text = fragment.text
    if isinstance(summary, WithUsage):
        summary = summary.value
    params = step_params(step)
    if not isinstance(summary, str):
        step_failed("compressor_invalid_result", type_name=type(summary).__name__, **params)
    if len(summary) >= len(text):
        step_failed(
            "compressor_not_smaller",
            result_chars=len(summary),
            replaced_chars=len(text),
            **params,
        )
    measure = context.measure
    new_state, change = with_change(
        step,
        "compress",
        state,
        fragment.with_text(summary),
        len(summary),
        None if measure.counter is None else measure.text_tokens(summary),
        removed_chars=len(text),
        added_chars=len(summary),
    )
    return Candidate(step, new_state, change, (text,))


def compress_messages(
    step: CompressStep, state: FragState, messages: tuple[ChatMessage, ...], context: StepContext
) -> Effects[Candidate]:
    profile = state.profile
    assert profile is not None
    grouping = layout_grouping(step.grouping)
    firsts, ends, pinned = older_groups(messages, grouping, step.keep_groups, profile)
    if not ends:
        return Candidate(step, None, None)
    start, stop = firsts[0], ends[-1]
    stay = pinned_between(pinned, start, stop)
    kept = set(stay)
    gone = [index for index in range(start, stop) if index not in kept]
    replaced = [messages[index] for index in gone]
    replaced_chars = sum(profile.sizes[index] for index in gone)
    reply = yield from call_step(step, context, copy.deepcopy(replaced))
    result = reply.value.value if isinstance(reply.value, WithUsage) else reply.value
    with spending(reply.value):
        summary, summary_chars, summary_tokens = _checked_summary(
            step, _summary_message(step, result, replaced[0]), replaced_chars, context
        )
    new_profile = profile.splice(start, stop, stay, profile_messages([summary], [summary_chars]))
    new_token_sizes: list[int] | None = None
    if state.token_sizes is not None and summary_tokens is not None:
        new_token_sizes = splice(state.token_sizes, start, stop, stay, [summary_tokens])
    new_state, change = with_change(
        step,
        "compress",
        state,
        MessagesFragment(state.fragment.id, tuple(splice(messages, start, stop, stay, [summary]))),
        state.chars - replaced_chars + summary_chars,
        None if new_token_sizes is None else sum(new_token_sizes),
        profile=new_profile,
        token_sizes=new_token_sizes,
        made=summary,
        removed_messages=len(replaced),
        removed_chars=replaced_chars,
        added_messages=1,
        added_chars=summary_chars,
    )
    candidate = Candidate(step, new_state, change, tuple(replaced), Splice(start, stop, stay, 1))
    return with_spent(candidate, reply.value)


def _checked_summary(
    step: CompressStep, summary: object, replaced_chars: int, context: StepContext
) -> tuple[ChatMessage, int, int | None]:
    """The summary a compressor returned, with its characters and tokens; a summary that is not
    usable fails the step."""
    params = step_params(step)
    measure = context.measure
    if isinstance(summary, _NotAMessage):
        step_failed("compressor_invalid_result", type_name=summary.type_name, **params)
    summary_chars, summary_tokens = measure_new(
        step,
        lambda: (
            message_chars(summary, part_estimate=measure.part_estimate),
            None if measure.counter is None else measure.one_message_tokens(summary),
        ),
    )
    if tool_call_ids(summary) or tool_result_ids(summary):
        step_failed("compressor_summary_has_tools", **params)
    if not message_text(summary).strip():
        step_failed("compressor_empty_summary", **params)
    if summary_chars >= replaced_chars:
        step_failed(
            "compressor_not_smaller",
            result_chars=summary_chars,
            replaced_chars=replaced_chars,
            **params,
        )
    return summary, summary_chars, summary_tokens


@dataclass(frozen=True, slots=True)
class _NotAMessage:
    """What a compressor returned when it is neither text nor a message."""

    type_name: str


def _summary_message(step: CompressStep, result: object, like: ChatMessage) -> object:
    """The summary message a compressor returned: a string becomes a message in the shape of the
    first message it replaces; a mapping is copied; a message object is kept as it is."""
    if isinstance(result, str):
        return summary_message(result, step.summary_role, like)
    if isinstance(result, Mapping):
        return dict(result)
    try:
        read_message(result)
    except ContextwiseError:
        return _NotAMessage(type(result).__name__)
    return result
