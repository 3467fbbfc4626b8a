"""Applying one step to one fragment: trim, compress, app. Internal to the policy engine.

Each step is computed on an immutable fragment state and returns a candidate (the new state, the
change record and what was removed) without committing it, so that ``auto`` can compare steps and
``audit`` can report them. Calls to application code (compressors, apps, decision providers) are
not made here: the step yields an :class:`Invoke` request and receives a :class:`Reply`, so the
sync and the async entry points share this one implementation.
"""

from __future__ import annotations

import copy
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter
from typing import Any, TypeAlias, TypeVar

from contextwise.errors import ContextwiseError, InvalidValueError, PolicyStepError
from contextwise.messages import (
    ChatMessage,
    _group_bounds,
    _indices,
    _pinned_indices,
    _Profile,
    _profile,
    find_orphan_results,
    message_chars,
    message_text,
    tool_call_ids,
    tool_result_ids,
)
from contextwise.policy.fragments import Fragment, RemovedItem
from contextwise.policy.model import AppStep, CompressStep, ContextStep, StepKind, TrimStep
from contextwise.policy.report import ChangeError, ContextChange
from contextwise.tokens import TokenCounter, _check_count

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Invoke:
    """A request to call application code: a function, its arguments and a timeout."""

    func: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """The outcome of an :class:`Invoke`: a value, an error, or an expired timeout."""

    value: Any = None
    error: Exception | None = None
    timed_out: bool = False


Effects: TypeAlias = Generator[Invoke, Reply, T]
"""A computation that may ask its driver to call application code."""


@dataclass(frozen=True, slots=True)
class Measure:
    """How sizes are measured: characters always, tokens when a counter is given."""

    counter: TokenCounter | None

    def text_tokens(self, text: str) -> int:
        """Count the tokens of a text with the counter, checking the result."""
        assert self.counter is not None
        return _check_count(self.counter.count(text), str(getattr(self.counter, "id", "?")))

    def message_tokens(self, messages: Sequence[ChatMessage]) -> list[int] | None:
        """Count the tokens of each message through its text, or ``None`` without a counter."""
        if self.counter is None:
            return None
        return [self.text_tokens(message_text(message)) for message in messages]


@dataclass(frozen=True, slots=True)
class FragState:
    """A fragment with its measured sizes; ``version`` changes with every committed change."""

    fragment: Fragment
    chars: int
    tokens: int | None
    profile: _Profile | None
    token_sizes: list[int] | None
    version: int

    @property
    def sizes(self) -> list[int]:
        """The characters of each message (empty for a text)."""
        return [] if self.profile is None else self.profile.sizes


@dataclass(frozen=True, slots=True)
class KnownSizes:
    """The sizes of a fragment's messages, measured before (by a session, when they were added),
    so that a run does not measure them again."""

    chars: Sequence[int]
    tokens: Sequence[int] | None


def measure_fragment(
    fragment: Fragment, measure: Measure, version: int, known: KnownSizes | None = None
) -> FragState:
    """Measure a fragment once: each message's characters (and tokens, with a counter)."""
    if fragment.text is not None:
        tokens = None if measure.counter is None else measure.text_tokens(fragment.text)
        return FragState(fragment, len(fragment.text), tokens, None, None, version)
    messages = fragment.messages or ()
    profile = _profile(messages, None if known is None else known.chars)
    token_sizes = (
        list(known.tokens)
        if known is not None and known.tokens is not None and measure.counter is not None
        else measure.message_tokens(messages)
    )
    return FragState(
        fragment,
        sum(profile.sizes),
        None if token_sizes is None else sum(token_sizes),
        profile,
        token_sizes,
        version,
    )


@dataclass(frozen=True, slots=True)
class Splice:
    """How a trim or a compression changes a list of messages: the messages from ``start`` to
    ``stop`` leave, except the pinned ones at ``stay``, and ``added`` new ones take their place."""

    start: int
    stop: int
    stay: list[int]
    added: int = 0

    def removed_origins(self, origin: list[int]) -> list[int]:
        """The input positions of the messages that leave, given those of the messages before."""
        kept = set(self.stay)
        return [origin[index] for index in range(self.start, self.stop) if index not in kept]

    def apply(self, origin: list[int]) -> list[int]:
        """The input positions of the messages after the change; a new message takes the position
        of the first message it replaces."""
        return [
            *origin[: self.start],
            *[origin[self.start]] * self.added,
            *(origin[index] for index in self.stay),
            *origin[self.stop :],
        ]


@dataclass(frozen=True, slots=True)
class Remap:
    """How an app changes a list of messages: for each new message, the index of the message it
    keeps (``None`` for a new one), and the indices of the messages that leave."""

    source: list[int | None]
    removed: list[int]

    def removed_origins(self, origin: list[int]) -> list[int]:
        """The input positions of the messages that leave, given those of the messages before."""
        return [origin[index] for index in self.removed]

    def apply(self, origin: list[int]) -> list[int]:
        """The input positions of the messages after the change; a new message takes the position
        of the message before it."""
        result: list[int] = []
        previous = -1
        for index in self.source:
            if index is not None:
                previous = origin[index]
            result.append(previous)
        return result


def in_input_order(
    edits: Sequence[tuple[Splice | Remap, Sequence[RemovedItem]]], count: int
) -> list[RemovedItem]:
    """Put the messages that successive edits removed from a list of ``count`` messages in the
    order of that list.

    Each edit comes with the messages it removed, in order. A message that one edit added and a
    later one removed sorts at the position it took.
    """
    origin = list(range(count))
    keyed: list[tuple[int, RemovedItem]] = []
    for edit, removed in edits:
        keyed += zip(edit.removed_origins(origin), removed, strict=True)
        origin = edit.apply(origin)
    keyed.sort(key=itemgetter(0))
    return [item for _, item in keyed]


@dataclass(frozen=True, slots=True)
class Candidate:
    """What a step would do: its new state (``None`` when it changes nothing), change, removals,
    and, for messages, the edit that turns the old list into the new one."""

    step: ContextStep
    state: FragState | None
    change: ContextChange | None
    removed: tuple[RemovedItem, ...] = ()
    edit: Splice | Remap | None = None

    @property
    def failed(self) -> bool:
        """Whether the step failed (its change is recorded, the fragment is untouched)."""
        return self.change is not None and self.change.status == "failed"


@dataclass(frozen=True, slots=True)
class StepContext:
    """What steps need from the run: the measure, the functions and the default timeout."""

    measure: Measure
    compressors: Mapping[str, Callable[..., Any]]
    apps: Mapping[str, Callable[..., Any]]
    default_timeout: float | None


def apply_step(step: ContextStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    """Compute what a step does to a fragment state, without committing it."""
    if isinstance(step, TrimStep):
        if state.fragment.text is not None:
            return _trim_text(step, state, context.measure)
        return _trim_messages(step, state, context.measure)
    if isinstance(step, CompressStep):
        return (yield from _compress(step, state, context))
    return (yield from _app(step, state, context))


def _new_version(state: FragState) -> int:
    return state.version + 1


def _changed(
    step: ContextStep,
    kind: StepKind,
    state: FragState,
    fragment: Fragment,
    chars: int,
    tokens: int | None,
    *,
    profile: _Profile | None = None,
    token_sizes: list[int] | None = None,
    **counts: int,
) -> tuple[FragState, ContextChange]:
    """The state a step leaves its fragment in, and the change that records it in the report."""
    new_state = FragState(fragment, chars, tokens, profile, token_sizes, _new_version(state))
    change = ContextChange(
        id=step.id,
        kind=kind,
        fragment_id=state.fragment.id,
        before_chars=state.chars,
        after_chars=chars,
        before_tokens=state.tokens,
        after_tokens=tokens,
        **counts,
    )
    return new_state, change


# --- trim ------------------------------------------------------------------------------------


def _older_groups(
    messages: Sequence[ChatMessage], grouping: Any, keep_groups: int, profile: _Profile
) -> tuple[list[int], list[int], list[int]]:
    """Return the starts and the ends of the removable groups (oldest first), and pinned indices.

    The removable groups are the unpinned groups but the newest ``keep_groups``.
    """
    starts, pinned_groups, pinned = _group_bounds(messages, grouping, profile)
    ends = [*starts[1:], len(messages)]
    if True in pinned_groups[1:]:
        firsts = [start for start, flag in zip(starts, pinned_groups, strict=True) if not flag]
        ends = [end for end, flag in zip(ends, pinned_groups, strict=True) if not flag]
    else:
        offset = 1 if pinned_groups and pinned_groups[0] else 0
        firsts, ends = starts[offset:], ends[offset:]
    removable = max(0, len(firsts) - keep_groups)
    return firsts[:removable], ends[:removable], pinned


def _pinned_between(pinned: list[int], start: int, stop: int) -> list[int]:
    """The pinned indices from ``start`` to ``stop`` (excluded)."""
    return pinned[bisect_left(pinned, start) : bisect_left(pinned, stop)]


_CHUNK = 4096
"""How many values :func:`_reach` adds up at C speed before it checks the running sum."""

_Span: TypeAlias = tuple[int, int, Callable[[int], int], list[int]]


def _removable_span(
    messages: Sequence[ChatMessage], grouping: Any, keep_groups: int, profile: _Profile
) -> _Span | None:
    """Locate the removable groups: all unpinned groups but the newest ``keep_groups``.

    Returns ``None`` when there is none, else the first index of the oldest removable group, the
    end of the newest one, a function from an index in that span to the end of its group, and the
    pinned indices in the span (which stay). A plain conversation grouped by user turn is read
    from its roles without listing every group.
    """
    if profile.plain and grouping == "user-turn":
        return _plain_turn_span(profile.roles, keep_groups, profile.pinned_roles)
    firsts, ends, pinned = _older_groups(messages, grouping, keep_groups, profile)
    if not ends:
        return None

    def group_end(index: int) -> int:
        return ends[bisect_right(ends, index)]

    first, end = firsts[0], ends[-1]
    return first, end, group_end, _pinned_between(pinned, first, end)


def _plain_turn_span(
    roles: list[object], keep_groups: int, pinned_roles: tuple[str, ...]
) -> _Span | None:
    """:func:`_removable_span` for messages without tool calls: each user message starts a group."""
    try:
        first = roles.index("user")
    except ValueError:
        return None
    if keep_groups:
        end = _nth_last(roles, "user", keep_groups, first + 1)
        if end is None:
            return None
    else:
        end = len(roles)

    def group_end(index: int) -> int:
        try:
            return roles.index("user", index + 1, end)
        except ValueError:
            return end

    return first, end, group_end, _pinned_indices(roles, first, end, pinned_roles)


def _nth_last(values: list[object], wanted: object, count: int, start: int) -> int | None:
    """The index of the ``count``-th last ``wanted`` in ``values[start:]``, or ``None``.

    The search goes backwards in slices that double in size, so it reads little more than the
    values it passes.
    """
    stop = len(values)
    size = 64
    while stop > start:
        low = max(start, stop - size)
        part = values[low:stop]
        hits = part.count(wanted)
        if hits >= count:
            return low + _indices(part, wanted)[hits - count]
        count -= hits
        stop = low
        size *= 2
    return None


def _reach(values: list[int], start: int, stop: int, excess: int, stay: list[int]) -> int | None:
    """The first index from ``start`` at which the values add up to ``excess``, or ``None``.

    The values at the ``stay`` indices (pinned messages, which are not removed) count zero. The
    sum runs over slices at C speed and stops at the slice that reaches ``excess``.
    """
    offset = 0
    if stay:
        values = values[start:stop]
        for index in stay:
            values[index - start] = 0
        offset, start, stop = start, 0, stop - start
    running = 0
    while start < stop:
        chunk = values[start : min(start + _CHUNK, stop)]
        total = sum(chunk)
        if running + total >= excess:
            sums = list(accumulate(chunk, initial=running))
            return offset + start + bisect_left(sums, excess, 1) - 1
        running += total
        start += _CHUNK
    return None


def _remove_region(
    state: FragState, start: int, stop: int, stay: list[int]
) -> tuple[tuple[ChatMessage, ...], tuple[ChatMessage, ...], _Profile, list[int] | None]:
    """Remove the messages from ``start`` to ``stop``, except the pinned ones in ``stay``.

    Returns the new messages, the removed ones, the new profile and the new token sizes.
    """
    messages = state.fragment.messages or ()
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
    gone = [index for index in range(start, stop) if index not in kept]
    keep = [*range(start), *stay, *range(stop, len(messages))]
    new_profile = _Profile(
        [profile.sizes[index] for index in keep],
        [profile.roles[index] for index in keep],
        profile.plain,
        profile.pinned_roles,
    )
    return (
        tuple(messages[index] for index in keep),
        tuple(messages[index] for index in gone),
        new_profile,
        None if token_sizes is None else [token_sizes[index] for index in keep],
    )


def _trim_messages(step: TrimStep, state: FragState, measure: Measure) -> Candidate:
    messages = state.fragment.messages or ()
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
    span = _removable_span(messages, step.grouping.kind, step.keep_groups, profile)
    if span is None:
        return Candidate(step, None, None)
    first, end, group_end, stay_all = span
    if untargeted:
        stop = end
    else:
        stop = group_end(first)
        for values, excess in ((profile.sizes, excess_chars), (state.token_sizes, excess_tokens)):
            if excess > 0 and values is not None:
                position = _reach(values, first, end, excess, stay_all)
                stop = max(stop, end if position is None else group_end(position))
    stay = [index for index in stay_all if index < stop]
    new_messages, removed, new_profile, new_token_sizes = _remove_region(state, first, stop, stay)
    removed_chars = sum(profile.sizes[first:stop]) - sum(profile.sizes[index] for index in stay)
    chars = state.chars - removed_chars
    tokens = None if new_token_sizes is None else sum(new_token_sizes)
    new_state, change = _changed(
        step,
        "trim",
        state,
        Fragment(state.fragment.id, messages=new_messages),
        chars,
        tokens,
        profile=new_profile,
        token_sizes=new_token_sizes,
        removed_messages=len(removed),
        removed_chars=removed_chars,
    )
    return Candidate(step, new_state, change, removed, Splice(first, stop, stay))


def _trim_text(step: TrimStep, state: FragState, measure: Measure) -> Candidate:
    text = state.fragment.text or ""
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
        low = 0
        while low < high:
            middle = (low + high + 1) // 2
            if fits(cut(middle)):
                low = middle
            else:
                high = middle - 1
    keep = high
    new_text = cut(keep)
    if len(new_text) >= length:
        return Candidate(step, None, None)
    span = text[keep:] if step.keep == "head" else text[: length - keep]
    tokens = None if measure.counter is None else measure.text_tokens(new_text)
    new_state, change = _changed(
        step,
        "trim",
        state,
        Fragment(state.fragment.id, text=new_text),
        len(new_text),
        tokens,
        removed_chars=len(span),
        added_chars=len(marker),
    )
    return Candidate(step, new_state, change, (span,))


# --- failures --------------------------------------------------------------------------------


def _failed(step: ContextStep, state: FragState, error: ContextwiseError) -> Candidate:
    change = ContextChange(
        id=step.id,
        kind=step.kind,
        fragment_id=state.fragment.id,
        before_chars=state.chars,
        after_chars=state.chars,
        status="failed",
        error=ChangeError(code=error.code, message=str(error)),
        before_tokens=state.tokens,
        after_tokens=state.tokens,
    )
    return Candidate(step, None, change)


def _reply_error(
    reply: Reply, prefix: str, params: dict[str, Any], timeout: float | None
) -> PolicyStepError | None:
    """Turn a failed reply into the step error to record, or ``None`` when the call succeeded."""
    if reply.timed_out:
        return PolicyStepError(f"{prefix}_timeout", timeout=timeout, **params)
    if reply.error is not None:
        error = reply.error
        return PolicyStepError(
            f"{prefix}_failed",
            error_type=type(error).__name__,
            detail=str(error) or None,
            **params,
        )
    return None


# --- compress --------------------------------------------------------------------------------


def _compress(step: CompressStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    func = context.compressors[step.compressor]
    timeout = step.timeout if step.timeout is not None else context.default_timeout
    params = {"compressor": step.compressor, "step_id": step.id}
    measure = context.measure
    if state.fragment.text is not None:
        text = state.fragment.text
        if not text:
            return Candidate(step, None, None)
        reply = yield Invoke(func, (text,), timeout=timeout)
        failure = _reply_error(reply, "compressor", params, timeout)
        if failure is not None:
            return _failed(step, state, failure)
        summary_text = reply.value
        if not isinstance(summary_text, str):
            return _failed(
                step,
                state,
                PolicyStepError(
                    "compressor_invalid_result", type_name=type(summary_text).__name__, **params
                ),
            )
        if len(summary_text) >= len(text):
            return _failed(
                step,
                state,
                PolicyStepError(
                    "compressor_not_smaller",
                    result_chars=len(summary_text),
                    replaced_chars=len(text),
                    **params,
                ),
            )
        summary_tokens = None if measure.counter is None else measure.text_tokens(summary_text)
        new_state, change = _changed(
            step,
            "compress",
            state,
            Fragment(state.fragment.id, text=summary_text),
            len(summary_text),
            summary_tokens,
            removed_chars=len(text),
            added_chars=len(summary_text),
        )
        return Candidate(step, new_state, change, (text,))

    messages = state.fragment.messages or ()
    profile = state.profile
    assert profile is not None
    sizes = profile.sizes
    firsts, ends, pinned = _older_groups(messages, step.grouping.kind, step.keep_groups, profile)
    if not ends:
        return Candidate(step, None, None)
    start, stop = firsts[0], ends[-1]
    stay = _pinned_between(pinned, start, stop)
    kept = set(stay)
    gone = [index for index in range(start, stop) if index not in kept]
    replaced = [messages[index] for index in gone]
    replaced_chars = sum(sizes[index] for index in gone)
    reply = yield Invoke(func, (copy.deepcopy(replaced),), timeout=timeout)
    failure = _reply_error(reply, "compressor", params, timeout)
    if failure is not None:
        return _failed(step, state, failure)
    result = reply.value
    if isinstance(result, str):
        summary: ChatMessage = {"role": step.summary_role, "content": result}
    elif isinstance(result, Mapping):
        summary = dict(result)
    else:
        return _failed(
            step,
            state,
            PolicyStepError("compressor_invalid_result", type_name=type(result).__name__, **params),
        )
    try:
        summary_chars = message_chars(summary)
        summary_tokens = (
            None if measure.counter is None else measure.text_tokens(message_text(summary))
        )
    except ContextwiseError as exc:
        if isinstance(exc, InvalidValueError) and exc.code == "invalid_counter_result":
            raise
        return _failed(
            step, state, PolicyStepError("compressor_invalid_message", detail=str(exc), **params)
        )
    if tool_call_ids(summary) or tool_result_ids(summary):
        return _failed(step, state, PolicyStepError("compressor_summary_has_tools", **params))
    if summary_chars >= replaced_chars:
        return _failed(
            step,
            state,
            PolicyStepError(
                "compressor_not_smaller",
                result_chars=summary_chars,
                replaced_chars=replaced_chars,
                **params,
            ),
        )
    token_sizes = state.token_sizes
    new_messages = (
        *messages[:start],
        summary,
        *(messages[index] for index in stay),
        *messages[stop:],
    )
    new_profile = _Profile(
        [*sizes[:start], summary_chars, *(sizes[index] for index in stay), *sizes[stop:]],
        [
            *profile.roles[:start],
            summary.get("role"),
            *(profile.roles[index] for index in stay),
            *profile.roles[stop:],
        ],
        profile.plain and _profile([summary]).plain,
    )
    new_token_sizes: list[int] | None = None
    tokens: int | None = None
    if token_sizes is not None and summary_tokens is not None:
        new_token_sizes = [
            *token_sizes[:start],
            summary_tokens,
            *(token_sizes[index] for index in stay),
            *token_sizes[stop:],
        ]
        tokens = sum(new_token_sizes)
    chars = state.chars - replaced_chars + summary_chars
    new_state, change = _changed(
        step,
        "compress",
        state,
        Fragment(state.fragment.id, messages=new_messages),
        chars,
        tokens,
        profile=new_profile,
        token_sizes=new_token_sizes,
        removed_messages=len(replaced),
        removed_chars=replaced_chars,
        added_messages=1,
        added_chars=summary_chars,
    )
    return Candidate(step, new_state, change, tuple(replaced), Splice(start, stop, stay, 1))


# --- app -------------------------------------------------------------------------------------


def _app(step: AppStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    func = context.apps[step.app]
    timeout = step.timeout if step.timeout is not None else context.default_timeout
    fragment = state.fragment
    params = {"app": step.app, "step_id": step.id}
    if fragment.text is not None:
        given = Fragment(fragment.id, text=fragment.text)
    else:
        given = Fragment(fragment.id, messages=copy.deepcopy(list(fragment.messages or ())))
    reply = yield Invoke(func, (given,), timeout=timeout)
    failure = _reply_error(reply, "app", params, timeout)
    if failure is not None:
        return _failed(step, state, failure)
    result = reply.value
    new_text: str | None = None
    new_messages: Sequence[ChatMessage] | None = None
    if isinstance(result, Fragment) and result.id == fragment.id and result.field == fragment.field:
        new_text, new_messages = result.text, result.messages
    elif fragment.text is not None and isinstance(result, str):
        new_text = result
    elif fragment.messages is not None and isinstance(result, list | tuple):
        new_messages = tuple(result)
    else:
        return _failed(
            step,
            state,
            PolicyStepError(
                "app_invalid_result",
                type_name=type(result).__name__,
                fragment_id=fragment.id,
                field=fragment.field,
                **params,
            ),
        )
    measure = context.measure
    if new_text is not None:
        old_text = fragment.text or ""
        if new_text == old_text:
            return Candidate(step, None, None)
        tokens = None if measure.counter is None else measure.text_tokens(new_text)
        prefix, suffix = _common_ends(old_text, new_text)
        span = old_text[prefix : len(old_text) - suffix]
        new_state, change = _changed(
            step,
            "app",
            state,
            Fragment(fragment.id, text=new_text),
            len(new_text),
            tokens,
            removed_chars=len(span),
            added_chars=len(new_text) - prefix - suffix,
        )
        return Candidate(step, new_state, change, (old_text,) if span else ())
    old_messages = fragment.messages or ()
    assert new_messages is not None
    if tuple(new_messages) == tuple(old_messages):
        return Candidate(step, None, None)
    try:
        new_profile = _profile(tuple(new_messages))
        new_token_sizes = measure.message_tokens(new_messages)
    except ContextwiseError as exc:
        if isinstance(exc, InvalidValueError) and exc.code == "invalid_counter_result":
            raise
        return _failed(
            step, state, PolicyStepError("app_invalid_message", detail=str(exc), **params)
        )
    if _breaks_pairing(old_messages, new_messages):
        return _failed(step, state, PolicyStepError("app_broke_tool_pairing", **params))
    removed_indices, source = _match(old_messages, new_messages)
    removed = tuple(old_messages[index] for index in removed_indices)
    sizes = state.sizes
    removed_chars = sum(sizes[index] for index in removed_indices)
    chars = sum(new_profile.sizes)
    kept = len(old_messages) - len(removed)
    new_state, change = _changed(
        step,
        "app",
        state,
        Fragment(fragment.id, messages=tuple(new_messages)),
        chars,
        None if new_token_sizes is None else sum(new_token_sizes),
        profile=new_profile,
        token_sizes=new_token_sizes,
        removed_messages=len(removed),
        removed_chars=removed_chars,
        added_messages=len(new_messages) - kept,
        added_chars=chars - (state.chars - removed_chars),
    )
    return Candidate(step, new_state, change, removed, Remap(source, removed_indices))


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


def _match(
    before: Sequence[ChatMessage], after: Sequence[ChatMessage]
) -> tuple[list[int], list[int | None]]:
    """Match ``before`` in order against equal messages of ``after``.

    Returns the indices of ``before`` left unmatched, and for each message of ``after`` the index
    of its match in ``before`` (``None`` when it has none).
    """
    removed: list[int] = []
    source: list[int | None] = [None] * len(after)
    position = 0
    for index, message in enumerate(before):
        if position < len(after) and after[position] == message:
            source[position] = index
            position += 1
        else:
            removed.append(index)
    return removed, source


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
