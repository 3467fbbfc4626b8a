"""The trim step: drop the oldest messages (or the start of a text) until the fragment fits."""

from __future__ import annotations

from contextwise._layout import Profile, reach, removable_span, splice
from contextwise.messages import ChatMessage
from contextwise.policy._clearing import longest_fit
from contextwise.policy._edits import Splice
from contextwise.policy._fragments import MessagesFragment, TextFragment
from contextwise.policy._measure import FragState, Measure
from contextwise.policy._model import TrimStep, layout_grouping
from contextwise.policy._step_core import Candidate, with_change


def _remove_region(
    state: FragState, messages: tuple[ChatMessage, ...], start: int, stop: int, stay: list[int]
) -> tuple[tuple[ChatMessage, ...], tuple[ChatMessage, ...], Profile, list[int] | None]:
    """Remove the messages from ``start`` to ``stop``, except the pinned ones in ``stay``.

    Returns the new messages, the removed ones, the new profile and the new token sizes.
    """
    profile = state.profile
    assert profile is not None
    token_sizes = state.token_sizes
    if not stay:
        new_tokens = None if token_sizes is None else token_sizes[:start] + token_sizes[stop:]
        return (
            messages[:start] + messages[stop:],
            messages[start:stop],
            profile.slice(start, stop),
            new_tokens,
        )
    kept = set(stay)
    return (
        tuple(splice(messages, start, stop, stay)),
        tuple(messages[index] for index in range(start, stop) if index not in kept),
        profile.splice(start, stop, stay),
        None if token_sizes is None else splice(token_sizes, start, stop, stay),
    )


def trim_messages(step: TrimStep, state: FragState, messages: tuple[ChatMessage, ...]) -> Candidate:
    profile = state.profile
    assert profile is not None
    target_chars, target_tokens = step.target_chars, step.target_tokens
    excess_chars = 0 if target_chars is None else state.chars - target_chars
    excess_tokens = 0
    if target_tokens is not None and state.tokens is not None:
        excess_tokens = state.tokens - target_tokens
    untargeted = target_chars is None and target_tokens is None
    if not untargeted and excess_chars <= 0 and excess_tokens <= 0:
        return Candidate(step, None, None)
    span = removable_span(messages, layout_grouping(step.grouping), step.keep_groups, profile)
    if span is None:
        return Candidate(step, None, None)
    first, end, group_end, stay_all = span
    if state.made:
        # What a step of this run made (a summary) survives the run, like a pinned message.
        made = [index for index in range(first, end) if id(messages[index]) in state.made]
        stay_all = sorted({*stay_all, *made})
    if untargeted:
        stop = end
    else:
        stop = group_end(first)
        for values, excess in ((profile.sizes, excess_chars), (state.token_sizes, excess_tokens)):
            if excess > 0 and values is not None:
                position = reach(values, first, end, excess, stay_all)
                stop = max(stop, end if position is None else group_end(position))
    stay = [index for index in stay_all if index < stop]
    if len(stay) >= stop - first:
        return Candidate(step, None, None)  # everything in reach stays: nothing to trim
    new_messages, removed, new_profile, new_token_sizes = _remove_region(
        state, messages, first, stop, stay
    )
    removed_chars = sum(profile.sizes[first:stop]) - sum(profile.sizes[index] for index in stay)
    chars = state.chars - removed_chars
    tokens = None if new_token_sizes is None else sum(new_token_sizes)
    new_state, change = with_change(
        step,
        "trim",
        state,
        MessagesFragment(state.fragment.id, messages=new_messages),
        chars,
        tokens,
        profile=new_profile,
        token_sizes=new_token_sizes,
        removed_messages=len(removed),
        removed_chars=removed_chars,
    )
    return Candidate(step, new_state, change, removed, Splice(first, stop, stay))


def trim_text(
    step: TrimStep, state: FragState, fragment: TextFragment, measure: Measure
) -> Candidate:
    text = fragment.text
    length = len(text)
    marker = step.marker
    target_chars, target_tokens = step.target_chars, step.target_tokens

    def fits(candidate: str) -> bool:
        if target_chars is not None and len(candidate) > target_chars:
            return False
        return target_tokens is None or measure.text_tokens(candidate) <= target_tokens

    def cut(keep: int) -> str:
        if step.keep == "head":
            return text[:keep] + marker
        return marker + text[length - keep :]

    if fits(text):
        return Candidate(step, None, None)
    high = length - 1
    if target_chars is not None:
        high = min(high, target_chars - len(marker))
    high = max(high, 0)
    if target_tokens is not None and measure.counter is not None:
        high = longest_fit(lambda keep: fits(cut(keep)), high)
    keep = high
    new_text = cut(keep)
    if len(new_text) >= length:
        return Candidate(step, None, None)
    span = text[keep:] if step.keep == "head" else text[: length - keep]
    tokens = None if measure.counter is None else measure.text_tokens(new_text)
    new_state, change = with_change(
        step,
        "trim",
        state,
        fragment.with_text(new_text),
        len(new_text),
        tokens,
        removed_chars=len(span),
        added_chars=len(marker),
    )
    return Candidate(step, new_state, change, (span,))
