"""Applying one step to one fragment: trim, compress, app, clear, clip. Internal to the policy
engine.

Each step is computed on an immutable fragment state and returns a candidate (the new state, the
change record and what was removed) without committing it, so that ``auto`` can compare steps and
``audit`` can report them. Calls to application code (compressors, apps, decision providers) are
not made here: the step yields an :class:`Invoke` request and receives a :class:`Reply`, so the
sync and the async entry points share this one implementation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NoReturn, TypeVar

from contextwise._align import align
from contextwise._effects import Effects, Invoke, Reply, is_async_callable
from contextwise._layout import (
    Profile,
    message_tokens,
    older_groups,
    pinned_between,
    profile_messages,
    reach,
    read_all,
    removable_span,
    splice,
)
from contextwise._translation import short_text
from contextwise.errors import ContextwiseError, InvalidValueError, PolicyStepError
from contextwise.messages import (
    ChatMessage,
    find_orphan_results,
    message_chars,
    message_text,
    tool_call_ids,
    tool_result_ids,
)
from contextwise.policy._clearing import Rewrite, longest_fit, plan_clear, plan_clip
from contextwise.policy._fragments import Fragment, MessagesFragment, RemovedItem, TextFragment
from contextwise.policy._model import (
    AppStep,
    ClearStep,
    ClipStep,
    CompressStep,
    ContextStep,
    StepKind,
    TrimStep,
    layout_grouping,
)
from contextwise.policy._report import ChangeError, ContextChange
from contextwise.shapes import MessageFacts, PartEstimate, read_message, summary_message
from contextwise.tokens import TokenCounter, check_count
from contextwise.usage import WithUsage

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Measure:
    """How sizes are measured: characters always, tokens when a counter is given; parts without
    text by the part estimate; with ``opaque``, an item that no shape knows as one unit."""

    counter: TokenCounter | None
    part_estimate: PartEstimate | None = None
    opaque: bool = False

    def text_tokens(self, text: str) -> int:
        """Count the tokens of a text with the counter, checking the result."""
        assert self.counter is not None
        return check_count(self.counter.count(text), str(getattr(self.counter, "id", "?")))

    def tokens_per_message(self, messages: Sequence[ChatMessage]) -> list[int] | None:
        """Count the tokens of each message, or ``None`` without a counter: its text through the
        counter, plus its estimated parts at the estimate's characters per token."""
        if self.counter is None:
            return None
        return [self.one_message_tokens(message) for message in messages]

    def one_message_tokens(self, message: ChatMessage) -> int:
        """Count the tokens of one message (with a counter)."""
        return message_tokens(message, self.text_tokens, self.part_estimate, self.opaque)

    def profile(
        self, messages: Sequence[ChatMessage], sizes: Sequence[int] | None = None
    ) -> Profile:
        """Measure each message's characters and role once (or take ``sizes``, measured
        earlier)."""
        return profile_messages(messages, sizes, self.part_estimate, self.opaque)


@dataclass(frozen=True, slots=True)
class FragState:
    """A fragment with its measured sizes; ``version`` changes with every committed change."""

    fragment: Fragment
    chars: int
    tokens: int | None
    profile: Profile | None
    token_sizes: list[int] | None
    version: int
    made: frozenset[int] = frozenset()
    """The ``id()`` of the messages that a step of this run made (summaries): a later step of the
    same run keeps them, as it keeps pinned messages."""

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
    roles: Sequence[object] | None = None
    """The messages' roles when every message is a plain ``{role, content: str}`` dict with one
    of the plain roles (as found when they were added): nothing is read of the messages."""


def measure_fragment(
    fragment: Fragment, measure: Measure, version: int, known: KnownSizes | None = None
) -> FragState:
    """Measure a fragment once: each message's characters (and tokens, with a counter), or take
    the sizes it already has."""
    if isinstance(fragment, TextFragment):
        tokens = None if measure.counter is None else measure.text_tokens(fragment.text)
        return FragState(fragment, len(fragment.text), tokens, None, None, version)
    messages = fragment.messages
    if known is not None and known.roles is not None and len(known.roles) == len(messages):
        profile = Profile(list(known.chars), list(known.roles), True)
    else:
        profile = measure.profile(messages, None if known is None else known.chars)
    token_sizes = (
        list(known.tokens)
        if known is not None and known.tokens is not None and measure.counter is not None
        else measure.tokens_per_message(messages)
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
        return splice(origin, self.start, self.stop, self.stay, [origin[self.start]] * self.added)


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
    """Compute what a step does to a fragment state, without committing it; a step that fails
    gives a failed candidate."""
    try:
        return (yield from _apply(step, state, context))
    except _StepFailed as failed:
        return _spent(_failed(step, state, failed.error), failed.spent)


def _apply(step: ContextStep, state: FragState, context: StepContext) -> Effects[Candidate]:
    fragment = state.fragment
    if isinstance(fragment, TextFragment):
        if isinstance(step, TrimStep):
            return _trim_text(step, state, fragment, context.measure)
        if isinstance(step, CompressStep):
            return (yield from _compress_text(step, state, fragment, context))
        if isinstance(step, AppStep):
            return (yield from _app_text(step, state, fragment, context))
        return Candidate(step, None, None)  # no tool use in a text
    assert isinstance(fragment, MessagesFragment)
    messages = tuple(fragment.messages)  # a tuple already: no copy
    if isinstance(step, ClearStep | ClipStep):
        return _clear_or_clip(step, state, messages, context.measure)
    if isinstance(step, TrimStep):
        return _trim_messages(step, state, messages)
    if isinstance(step, CompressStep):
        return (yield from _compress_messages(step, state, messages, context))
    return (yield from _app_messages(step, state, fragment, context))


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
    profile: Profile | None = None,
    token_sizes: list[int] | None = None,
    made: ChatMessage | None = None,
    **counts: int,
) -> tuple[FragState, ContextChange]:
    """The state a step leaves its fragment in, and the change that records it in the report;
    ``made`` is the message the step made, which the later steps of the run keep."""
    made_ids = state.made if made is None else state.made | {id(made)}
    new_state = FragState(
        fragment, chars, tokens, profile, token_sizes, _new_version(state), made_ids
    )
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


def _trim_messages(
    step: TrimStep, state: FragState, messages: tuple[ChatMessage, ...]
) -> Candidate:
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
    new_state, change = _changed(
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


def _trim_text(
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
    new_state, change = _changed(
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


# --- clear and clip --------------------------------------------------------------------------


def _clear_or_clip(
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
    new_state, change = _changed(
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


class _StepFailed(Exception):
    """A compressor or an app failed: the step's error, and what the call spent (its result)."""

    def __init__(self, error: PolicyStepError, spent: object = None) -> None:
        super().__init__(error)
        self.error = error
        self.spent = spent


def _step_failed(code: str, **params: Any) -> NoReturn:
    """Fail the step with the :class:`PolicyStepError` ``code``."""
    raise _StepFailed(PolicyStepError(code, **params))


def _reply_error(
    reply: Reply, prefix: str, params: dict[str, Any], timeout: float | None
) -> PolicyStepError | None:
    """Turn a failed reply into the step error to record, or ``None`` when the call succeeded."""
    if reply.timed_out:
        return PolicyStepError(f"{prefix}_timeout", timeout=timeout, **params)
    error = reply.failure()
    if error is not None:
        return PolicyStepError(
            f"{prefix}_failed",
            error_type=type(error).__name__,
            detail=short_text(error) or None,
            **params,
        )
    return None


def _call_step(
    step: CompressStep | AppStep, context: StepContext, argument: Any
) -> Effects[Reply]:
    """Call a step's compressor or app; a failed call fails the step."""
    if isinstance(step, CompressStep):
        func = context.compressors[step.compressor]
        prefix, params = "compressor", _params(step)
    else:
        func = context.apps[step.app]
        prefix, params = "app", _params(step)
    timeout = step.timeout if step.timeout is not None else context.default_timeout
    reply = yield Invoke(func, (argument,), timeout=timeout, blocking=not is_async_callable(func))
    failure = _reply_error(reply, prefix, params, timeout)
    if failure is not None:
        raise _StepFailed(failure)
    return reply


def _params(step: CompressStep | AppStep) -> dict[str, Any]:
    """The parameters that name a step in its errors."""
    if isinstance(step, CompressStep):
        return {"compressor": step.compressor, "step_id": step.id}
    return {"app": step.app, "step_id": step.id}


def _measure_new(step: CompressStep | AppStep, measure: Callable[[], T]) -> T:
    """Measure what a compressor or an app returned; an unreadable message fails the step.

    A counter that returns a bad count is a configuration error, not a failed step: it raises.
    """
    try:
        return measure()
    except ContextwiseError as exc:
        if isinstance(exc, InvalidValueError) and exc.code == "invalid_counter_result":
            raise
        kind = "compressor" if isinstance(step, CompressStep) else "app"
        _step_failed(f"{kind}_invalid_message", detail=short_text(exc), **_params(step))


# --- compress --------------------------------------------------------------------------------


def _compress_text(
    step: CompressStep, state: FragState, fragment: TextFragment, context: StepContext
) -> Effects[Candidate]:
    if not fragment.text:
        return Candidate(step, None, None)
    reply = yield from _call_step(step, context, fragment.text)
    with _spending(reply.value):
        return _spent(_text_summary(step, state, context, fragment, reply.value), reply.value)


@contextmanager
def _spending(result: object) -> Iterator[None]:
    """Record what a compressor or an app spent (its result) on a failure raised in the block."""
    try:
        yield
    except _StepFailed as failed:
        failed.spent = result
        raise


def _spent(candidate: Candidate, result: object) -> Candidate:
    """The candidate, with what the compressor spent recorded on its change."""
    if not isinstance(result, WithUsage) or candidate.change is None:
        return candidate
    update = {"usage": result.usage, "usage_model": result.model}
    change = candidate.change.model_copy(update=update)
    return Candidate(candidate.step, candidate.state, change, candidate.removed, candidate.edit)


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
    params = _params(step)
    if not isinstance(summary, str):
        _step_failed("compressor_invalid_result", type_name=type(summary).__name__, **params)
    if len(summary) >= len(text):
        _step_failed(
            "compressor_not_smaller",
            result_chars=len(summary),
            replaced_chars=len(text),
            **params,
        )
    measure = context.measure
    new_state, change = _changed(
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


def _compress_messages(
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
    reply = yield from _call_step(step, context, copy.deepcopy(replaced))
    result = reply.value.value if isinstance(reply.value, WithUsage) else reply.value
    with _spending(reply.value):
        summary, summary_chars, summary_tokens = _checked_summary(
            step, _summary_message(step, result, replaced[0]), replaced_chars, context
        )
    new_profile = profile.splice(start, stop, stay, profile_messages([summary], [summary_chars]))
    new_token_sizes: list[int] | None = None
    if state.token_sizes is not None and summary_tokens is not None:
        new_token_sizes = splice(state.token_sizes, start, stop, stay, [summary_tokens])
    new_state, change = _changed(
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
    return _spent(candidate, reply.value)


def _checked_summary(
    step: CompressStep, summary: object, replaced_chars: int, context: StepContext
) -> tuple[ChatMessage, int, int | None]:
    """The summary a compressor returned, with its characters and tokens; a summary that is not
    usable fails the step."""
    params = _params(step)
    measure = context.measure
    if isinstance(summary, _NotAMessage):
        _step_failed("compressor_invalid_result", type_name=summary.type_name, **params)
    summary_chars, summary_tokens = _measure_new(
        step,
        lambda: (
            message_chars(summary, part_estimate=measure.part_estimate),
            None if measure.counter is None else measure.one_message_tokens(summary),
        ),
    )
    if tool_call_ids(summary) or tool_result_ids(summary):
        _step_failed("compressor_summary_has_tools", **params)
    if not message_text(summary).strip():
        _step_failed("compressor_empty_summary", **params)
    if summary_chars >= replaced_chars:
        _step_failed(
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


# --- app -------------------------------------------------------------------------------------


def _app_text(
    step: AppStep, state: FragState, fragment: TextFragment, context: StepContext
) -> Effects[Candidate]:
    old_text = fragment.text
    reply = yield from _call_step(step, context, fragment.with_text(old_text))
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
    new_state, change = _changed(
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


def _app_messages(
    step: AppStep, state: FragState, fragment: MessagesFragment, context: StepContext
) -> Effects[Candidate]:
    old_messages = fragment.messages
    given = MessagesFragment(fragment.id, messages=copy.deepcopy(list(old_messages)))
    reply = yield from _call_step(step, context, given)
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
    new_profile, new_token_sizes = _measure_new(
        step, lambda: (measure.profile(new_messages), measure.tokens_per_message(new_messages))
    )
    if _breaks_pairing(old_messages, new_messages):
        _step_failed("app_broke_tool_pairing", **_params(step))
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
    new_state, change = _changed(
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
    _step_failed(
        "app_invalid_result",
        type_name=type(result).__name__,
        fragment_id=fragment.id,
        field=fragment.field,
        **_params(step),
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
