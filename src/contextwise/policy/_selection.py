"""The selection of steps: sequence, fixed, auto and model. Internal to the policy engine.

A :class:`PolicyRun` holds the fragment states of one run, the limits, and the changes and
decisions recorded so far (a :class:`~contextwise.policy.PolicyRunner` holds a policy and its
options, and starts a run at each call). The selection functions are generators over
:class:`~contextwise._effects.Invoke` requests, like the steps themselves, so one implementation
serves the sync and the async entry points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextwise._effects import Effects
from contextwise.decision import (
    ChoiceOutcome,
    ChoiceQuestion,
    DecisionProvider,
    is_provider_unavailable,
)
from contextwise.decision._api import choice_effects
from contextwise.policy._edits import Remap, Splice, in_input_order
from contextwise.policy._fragments import MessagesFragment, RemovedItem
from contextwise.policy._measure import FragState
from contextwise.policy._model import (
    AppStep,
    ClearStep,
    ClipStep,
    CompressStep,
    ContextStep,
    ModelSelection,
    SelectionMode,
)
from contextwise.policy._pinned import NOTHING_PINNED, Pinned
from contextwise.policy._report import ContextChange, ContextDecision
from contextwise.policy._step_core import Candidate, StepContext
from contextwise.policy._steps import apply_step

DEFAULT_INSTRUCTIONS = (
    "The context of the next model call is too large. Choose the step to apply next: the one that "
    "brings the context closest to its targets while keeping what the next call needs most."
)
"""The question put to the decision model when a ``model`` selection gives no instructions."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The effective limits of a run: triggers and targets in characters and tokens."""

    trigger_chars: int | None
    trigger_chars_name: str
    target_chars: int | None
    trigger_tokens: int | None
    trigger_tokens_name: str
    target_tokens: int | None

    def chars_over(self, chars: int) -> bool:
        """Whether the characters exceed their trigger."""
        return self.trigger_chars is not None and chars > self.trigger_chars

    def tokens_over(self, tokens: int | None) -> bool:
        """Whether the tokens exceed their trigger."""
        return (
            self.trigger_tokens is not None and tokens is not None and tokens > self.trigger_tokens
        )

    def met(self, chars: int, tokens: int | None) -> bool:
        """Whether both targets are met."""
        if self.target_chars is not None and chars > self.target_chars:
            return False
        return not (
            self.target_tokens is not None and tokens is not None and tokens > self.target_tokens
        )


def effective_limits(
    trigger_chars: int | None,
    target_chars: int | None,
    trigger_tokens: int | None,
    target_tokens: int | None,
    budget: int | None,
) -> Limits:
    """Combine a policy's limits and the context budget: a missing trigger or target stands in for
    the other, and the budget caps both token limits."""
    char_trigger = trigger_chars if trigger_chars is not None else target_chars
    char_trigger_name = "trigger_chars" if trigger_chars is not None else "target_input_chars"
    char_target = target_chars if target_chars is not None else trigger_chars
    token_trigger = trigger_tokens if trigger_tokens is not None else target_tokens
    token_trigger_name = "trigger_tokens" if trigger_tokens is not None else "target_input_tokens"
    token_target = target_tokens if target_tokens is not None else trigger_tokens
    if budget is not None:
        if token_trigger is None or budget < token_trigger:
            token_trigger, token_trigger_name = budget, "budget"
        if token_target is None or budget < token_target:
            token_target = budget
    return Limits(
        char_trigger,
        char_trigger_name,
        char_target,
        token_trigger,
        token_trigger_name,
        token_target,
    )


class PolicyRun:
    """The mutable state of one run: fragment states, changes, decisions and removals."""

    def __init__(
        self,
        states: dict[str, FragState],
        limits: Limits,
        context: StepContext,
        pinned: Pinned = NOTHING_PINNED,
    ) -> None:
        self.states = states
        self.pinned = pinned
        self.limits = limits
        self.context = context
        self.changes: list[ContextChange] = []
        self.decisions: list[ContextDecision] = []
        self.removed: dict[str, list[RemovedItem]] = {key: [] for key in states}
        # What each step removed, in commit order (sessions read who removed each item).
        self.removals: list[tuple[str, Sequence[RemovedItem]]] = []
        self._cache: dict[str, tuple[int, Candidate]] = {}
        # For each fragment with edited messages: its input message count, and the edits made.
        self._edits: dict[str, tuple[int, list[tuple[Splice | Remap, Sequence[RemovedItem]]]]] = {}

    @property
    def chars(self) -> int:
        """The characters of the whole prompt now: all fragments and the pinned parts."""
        return self.pinned.chars + sum(state.chars for state in self.states.values())

    @property
    def tokens(self) -> int | None:
        """The tokens of the whole prompt now (all fragments, the pinned parts and the
        provider's correction), or ``None`` without a counter."""
        if self.context.measure.counter is None:
            return None
        fragments = sum(state.tokens or 0 for state in self.states.values())
        return max(0, fragments + (self.pinned.tokens or 0) + self.pinned.offset_tokens)

    def met(self) -> bool:
        """Whether the targets are met."""
        return self.limits.met(self.chars, self.tokens)

    def evaluate(self, step: ContextStep) -> Effects[Candidate]:
        """Compute what a step would do now; a result is reused while its fragment is unchanged."""
        state = self.states[step.fragment_id]
        cached = self._cache.get(step.id)
        if cached is not None and cached[0] == state.version:
            return cached[1]
        candidate = yield from apply_step(step, state, self.context)
        self._cache[step.id] = (state.version, candidate)
        return candidate

    def commit(self, candidate: Candidate) -> None:
        """Record a candidate's change and, when it applied, make its state current.

        Removed messages stay in the order of the input, even when several steps removed them.
        """
        if candidate.change is not None:
            self.changes.append(candidate.change)
        if candidate.state is not None:
            fragment_id = candidate.state.fragment.id
            if candidate.edit is not None and fragment_id not in self._edits:
                fragment = self.states[fragment_id].fragment
                count = len(fragment.messages) if isinstance(fragment, MessagesFragment) else 0
                self._edits[fragment_id] = (count, [])
            self.states[fragment_id] = candidate.state
            removed = self.removed[fragment_id]
            earlier = bool(removed)
            removed.extend(candidate.removed)
            self.removals.append((candidate.step.id, candidate.removed))
            if candidate.edit is not None:
                count, edits = self._edits[fragment_id]
                edits.append((candidate.edit, candidate.removed))
                if earlier and candidate.removed:
                    removed[:] = in_input_order(edits, count)

    def decide(self, mode: SelectionMode, step_ids: Sequence[str], reason: str) -> None:
        """Record a selection decision."""
        self.decisions.append(ContextDecision(mode=mode, step_ids=tuple(step_ids), reason=reason))

    def saving_unit(self) -> str:
        """``chars`` while the character target is not met, else ``tokens``."""
        target = self.limits.target_chars
        if target is not None and self.chars > target:
            return "chars"
        if self.limits.target_tokens is not None and self.context.measure.counter is not None:
            return "tokens"
        return "chars"

    def saving(self, candidate: Candidate, unit: str) -> int:
        """What a candidate saves, in characters or tokens."""
        change = candidate.change
        if change is None or candidate.state is None:
            return 0
        if unit == "tokens":
            return (change.before_tokens or 0) - (change.after_tokens or 0)
        return change.before_chars - change.after_chars

    def reaches(self, candidate: Candidate) -> bool:
        """Whether applying the candidate alone would meet the targets."""
        change = candidate.change
        if change is None or candidate.state is None:
            return self.met()
        chars = self.chars - (change.before_chars - change.after_chars)
        tokens = self.tokens
        if tokens is not None:
            tokens -= (change.before_tokens or 0) - (change.after_tokens or 0)
        return self.limits.met(chars, tokens)


def run_sequence(runner: PolicyRun, steps: Sequence[ContextStep]) -> Effects[list[str]]:
    """Apply steps in order until the targets are met; return the ids of the steps that ran."""
    ran: list[str] = []
    for step in steps:
        if runner.met():
            break
        candidate = yield from runner.evaluate(step)
        runner.commit(candidate)
        ran.append(step.id)
    return ran


def run_auto(runner: PolicyRun, steps: Sequence[ContextStep]) -> Effects[None]:
    """Apply the step that reaches the targets with the least removal, or the largest saving."""
    remaining = list(steps)
    while remaining and not runner.met():
        unit = runner.saving_unit()
        usable: list[tuple[ContextStep, Candidate, int]] = []
        for step in list(remaining):
            candidate = yield from runner.evaluate(step)
            if candidate.failed:
                runner.commit(candidate)
                remaining.remove(step)
                continue
            saving = runner.saving(candidate, unit)
            if saving > 0:
                usable.append((step, candidate, saving))
        if not usable:
            runner.decide("auto", [], "no remaining step reduces the context")
            return
        reaching = [entry for entry in usable if runner.reaches(entry[1])]
        if reaching:
            step, candidate, saving = min(reaching, key=lambda entry: entry[2])
            reason = (
                f"reaches the targets alone with the smallest saving ({saving} {unit}) among "
                f"{len(reaching)} step(s) that do"
            )
        else:
            step, candidate, saving = max(usable, key=lambda entry: entry[2])
            reason = (
                f"no step reaches the targets alone; largest saving ({saving} {unit}) among "
                f"{len(usable)} step(s)"
            )
        runner.decide("auto", [step.id], reason)
        runner.commit(candidate)
        remaining.remove(step)


def describe_step(step: ContextStep) -> str:
    """A one-line description of a step, for the decision model."""
    if isinstance(step, CompressStep):
        return (
            f"Compress the fragment '{step.fragment_id}' with '{step.compressor}': replace all but "
            f"the newest {step.keep_groups} {step.grouping.kind} group(s) with one summary."
        )
    if isinstance(step, AppStep):
        return (
            f"Apply the application's mutation '{step.app}' to the fragment '{step.fragment_id}'."
        )
    if isinstance(step, ClearStep):
        return (
            f"Clear the results of the older tool calls of the fragment '{step.fragment_id}', "
            f"keeping the newest {step.keep_recent} whole; the model can recall them."
        )
    if isinstance(step, ClipStep):
        limit = (
            f"{step.max_chars} characters"
            if step.max_chars is not None
            else f"{step.max_tokens} tokens"
        )
        return (
            f"Cut each tool result of the fragment '{step.fragment_id}' longer than {limit} to "
            f"its head and tail; the model can recall the whole."
        )
    if step.field == "text":
        target = step.target_chars if step.target_chars is not None else step.target_tokens
        unit = "characters" if step.target_chars is not None else "tokens"
        return (
            f"Cut the text of the fragment '{step.fragment_id}' to {target} {unit}, keeping its "
            f"{step.keep}."
        )
    limit = ""
    if step.target_chars is not None:
        limit = f", down to {step.target_chars} characters"
    elif step.target_tokens is not None:
        limit = f", down to {step.target_tokens} tokens"
    return (
        f"Remove the oldest {step.grouping.kind} groups of the fragment '{step.fragment_id}', "
        f"keeping the newest {step.keep_groups}{limit}."
    )


def decision_state(runner: PolicyRun, remaining: Sequence[ContextStep]) -> dict[str, Any]:
    """The JSON state a decision model chooses from: sizes, targets, fragments and steps."""
    return {
        "chars": runner.chars,
        "target_chars": runner.limits.target_chars,
        "tokens": runner.tokens,
        "target_tokens": runner.limits.target_tokens,
        "fragments": [
            {
                "id": state.fragment.id,
                "field": state.fragment.field,
                "chars": state.chars,
                "tokens": state.tokens,
                "messages": len(state.fragment.messages)
                if isinstance(state.fragment, MessagesFragment)
                else None,
            }
            for state in runner.states.values()
        ],
        "steps": [step.model_dump(mode="json", exclude_none=True) for step in remaining],
        "changes": [change.model_dump(mode="json", exclude_none=True) for change in runner.changes],
    }


def run_model(
    runner: PolicyRun,
    steps: Sequence[ContextStep],
    selection: ModelSelection,
    decision_provider: DecisionProvider,
) -> Effects[None]:
    """Ask the decision provider for each next step; fall back to ``sequence`` when unsure."""
    remaining = list(steps)
    by_id = {step.id: step for step in steps}
    while remaining and not runner.met():
        if len(remaining) == 1:
            step = remaining[0]
            runner.decide("sequence", [step.id], "only one step remains, so no question was asked")
        else:
            outcome, fallback = yield from _ask(runner, remaining, selection, decision_provider)
            if fallback is not None:
                ran = yield from run_sequence(runner, remaining)
                runner.decide("sequence", ran, f"fallback from model selection: {fallback}")
                return
            assert outcome is not None
            step = by_id[outcome.choice]
            reason = f"chosen by '{decision_provider.name}' with confidence {outcome.confidence:g}"
            if outcome.answer.rationale:
                reason = f"{reason}: {outcome.answer.rationale}"
            runner.decide("model", [step.id], reason)
        candidate = yield from runner.evaluate(step)
        runner.commit(candidate)
        remaining.remove(step)


def _ask(
    runner: PolicyRun,
    remaining: Sequence[ContextStep],
    selection: ModelSelection,
    decision_provider: DecisionProvider,
) -> Effects[tuple[ChoiceOutcome | None, str | None]]:
    """Ask which step comes next: the accepted outcome, or why the selection falls back."""
    question = ChoiceQuestion(
        instructions=selection.instructions or DEFAULT_INSTRUCTIONS,
        criteria={item.id: describe_step(item) for item in remaining},
    )
    try:
        outcome: ChoiceOutcome = yield from choice_effects(
            decision_provider,
            selection.model,
            question,
            decision_state(runner, remaining),
            selection.min_confidence,
            key="step",
            timeout=selection.timeout,
        )
    except Exception as error:
        if not is_provider_unavailable(error):
            raise
        return None, f"the decision provider is unavailable ({type(error).__name__})"
    if not outcome.accepted:
        return None, (
            f"the confidence {outcome.confidence:g} in '{outcome.choice}' is below "
            f"min_confidence {selection.min_confidence:g}"
        )
    return outcome, None
