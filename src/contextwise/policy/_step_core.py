"""What every step kind shares: the candidate a step returns, its context, the change it records,
and how a failed call to application code becomes a failed candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from contextwise._effects import Effects, Invoke, Reply, is_async_callable
from contextwise._layout import Profile
from contextwise._translation import short_text
from contextwise.accounting import WithUsage
from contextwise.errors import ContextwiseError, InvalidValueError, PolicyStepError
from contextwise.messages import ChatMessage
from contextwise.policy._edits import Remap, Splice
from contextwise.policy._fragments import Fragment, RemovedItem
from contextwise.policy._measure import FragState, Measure
from contextwise.policy._model import AppStep, CompressStep, ContextStep, StepKind
from contextwise.policy._report import ChangeError, ContextChange

T = TypeVar("T")


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


def _new_version(state: FragState) -> int:
    return state.version + 1


def with_change(
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


def failed_candidate(step: ContextStep, state: FragState, error: ContextwiseError) -> Candidate:
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


class StepFailed(Exception):
    """A compressor or an app failed: the step's error, and what the call spent (its result)."""

    def __init__(self, error: PolicyStepError, spent: object = None) -> None:
        super().__init__(error)
        self.error = error
        self.spent = spent


def step_failed(code: str, **params: Any) -> NoReturn:
    """Fail the step with the :class:`PolicyStepError` ``code``."""
    raise StepFailed(PolicyStepError(code, **params))


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


def call_step(step: CompressStep | AppStep, context: StepContext, argument: Any) -> Effects[Reply]:
    """Call a step's compressor or app; a failed call fails the step."""
    if isinstance(step, CompressStep):
        func = context.compressors[step.compressor]
        prefix, params = "compressor", step_params(step)
    else:
        func = context.apps[step.app]
        prefix, params = "app", step_params(step)
    timeout = step.timeout if step.timeout is not None else context.default_timeout
    reply = yield Invoke(func, (argument,), timeout=timeout, blocking=not is_async_callable(func))
    failure = _reply_error(reply, prefix, params, timeout)
    if failure is not None:
        raise StepFailed(failure)
    return reply


def step_params(step: CompressStep | AppStep) -> dict[str, Any]:
    """The parameters that name a step in its errors."""
    if isinstance(step, CompressStep):
        return {"compressor": step.compressor, "step_id": step.id}
    return {"app": step.app, "step_id": step.id}


def measure_new(step: CompressStep | AppStep, measure: Callable[[], T]) -> T:
    """Measure what a compressor or an app returned; an unreadable message fails the step.

    A counter that returns a bad count is a configuration error, not a failed step: it raises.
    """
    try:
        return measure()
    except ContextwiseError as exc:
        if isinstance(exc, InvalidValueError) and exc.code == "invalid_counter_result":
            raise
        kind = "compressor" if isinstance(step, CompressStep) else "app"
        step_failed(f"{kind}_invalid_message", detail=short_text(exc), **step_params(step))


@contextmanager
def spending(result: object) -> Iterator[None]:
    """Record what a compressor or an app spent (its result) on a failure raised in the block."""
    try:
        yield
    except StepFailed as failed:
        failed.spent = result
        raise


def with_spent(candidate: Candidate, result: object) -> Candidate:
    """The candidate, with what the compressor spent recorded on its change."""
    if not isinstance(result, WithUsage) or candidate.change is None:
        return candidate
    update = {"usage": result.usage, "usage_model": result.model}
    change = candidate.change.model_copy(update=update)
    return Candidate(candidate.step, candidate.state, change, candidate.removed, candidate.edit)
