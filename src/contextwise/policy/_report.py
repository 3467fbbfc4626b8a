"""The context processing report: what a policy measured, chose and changed, in JSON-ready models.

The fields are snake_case; ``model_dump(by_alias=True)`` and ``model_dump_json(by_alias=True)``
write the seed's camelCase keys, and both spellings validate back. The numbers always add up:
``before_chars - after_chars`` equals the sum of the changes' ``saved_chars``, failed changes
included (they save nothing). ``target_met`` says whether the policy reached its targets, and the
shortfalls say by how much it missed them.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from contextwise.accounting import Usage
from contextwise.policy._model import PolicyBase, PolicyMode, SelectionMode, StepKind

ChangeStatus: TypeAlias = Literal["applied", "failed"]
"""Whether a change was made, or its step failed and left the fragment untouched."""

_Count: TypeAlias = Annotated[int, Field(ge=0)]


class ContextDecision(PolicyBase):
    """One selection decision: which steps were chosen, by which mode, and why.

    The ``auto`` and ``model`` selections record one decision per choice; a ``model`` selection
    that falls back records a ``sequence`` decision listing the steps it then ran.

    Examples:
        >>> from contextwise import ContextDecision
        >>> ContextDecision(mode="auto", step_ids=["trim-history"], reason="reaches the targets")
        ContextDecision(mode='auto', step_ids=('trim-history',), reason='reaches the targets')
    """

    mode: SelectionMode
    """The selection mode that made the decision."""

    step_ids: tuple[str, ...]
    """The ids of the chosen steps, in the order they ran; empty when no step was chosen."""

    reason: str
    """Why these steps were chosen, in English, for logs and audits."""


class TokenReport(PolicyBase):
    """The token measurement of a run, present only when a token counter was given.

    Examples:
        >>> from contextwise import TokenReport
        >>> TokenReport(counter_id="estimate", before=900, after=400, input_limit=500).after
        400
    """

    counter_id: str
    """The ``id`` of the token counter that measured."""

    before: _Count
    """The tokens of the fragments before processing, pinned parts included; after a model
    call that the provider counted, its count of that prompt plus the estimate of what was
    added since."""

    after: _Count
    """The tokens of the fragments after processing, pinned parts included (for ``audit``:
    after the changes it reports)."""

    input_limit: int | None = None
    """The token target that applied: the smaller of ``target_input_tokens`` and the context budget
    (with ``trigger_tokens`` standing in for a missing target); ``None`` without a token limit."""


class ChangeError(PolicyBase):
    """Why a change failed: the stable code and the message of a
    :class:`~contextwise.errors.PolicyStepError`.

    Examples:
        >>> from contextwise import ChangeError
        >>> ChangeError(code="compressor_failed", message="The compressor failed.").code
        'compressor_failed'
    """

    code: str
    """The stable machine code, such as ``compressor_timeout``."""

    message: str
    """The message, in the locale of the run."""


class ContextChange(PolicyBase):
    """One change a step made to one fragment, or tried to make and failed.

    For an applied change, ``before_chars - removed_chars + added_chars == after_chars``. A failed
    change has ``after_chars == before_chars``, removes and adds nothing, and carries its
    ``error``.

    Examples:
        >>> from contextwise import ContextChange
        >>> change = ContextChange(id="trim-history", kind="trim", fragment_id="history",
        ...     before_chars=1800, after_chars=900, removed_messages=6, removed_chars=900)
        >>> change.saved_chars, change.status
        (900, 'applied')
    """

    id: str
    """The id of the step that made the change."""

    kind: StepKind
    """``trim``, ``compress``, or ``app`` for a mutation the application supplied."""

    fragment_id: str
    """The id of the fragment that changed."""

    before_chars: _Count
    """The characters of the fragment before the change."""

    after_chars: _Count
    """The characters of the fragment after the change."""

    status: ChangeStatus = "applied"
    """``applied``, or ``failed`` when the step failed and left the fragment untouched."""

    error: ChangeError | None = None
    """Why the step failed; ``None`` for an applied change."""

    removed_messages: _Count = 0
    """How many messages the change removed (for text: 0)."""

    removed_chars: _Count = 0
    """How many characters the change removed: removed messages, or a cut span of text."""

    added_messages: _Count = 0
    """How many messages the change added, such as a summary."""

    added_chars: _Count = 0
    """How many characters the change added: a summary, or the marker of a text trim."""

    before_tokens: int | None = None
    """The tokens of the fragment before the change, when a counter was given."""

    after_tokens: int | None = None
    """The tokens of the fragment after the change, when a counter was given."""

    usage: Usage | None = None
    """What the step's compressor spent, when it returned a :class:`~contextwise.WithUsage`."""

    usage_model: str | None = None
    """The model the compressor used, when it said."""

    @property
    def saved_chars(self) -> int:
        """The characters the change saved: ``before_chars - after_chars`` (0 when it failed)."""
        return self.before_chars - self.after_chars


ConversationStatus: TypeAlias = Literal["stateless", "extended", "resynced", "fallback"]
"""How an integration built the context of a model call:

- ``stateless``: from the whole history, with nothing remembered (no conversation key);
- ``extended``: from the context it sent last time, plus the messages new since;
- ``resynced``: from the whole history, because the history does not extend what it saw last
  time (a first call, an edited, rewound or forked history, or a memory that was lost);
- ``fallback``: from the whole history, with nothing remembered, because its store failed.
"""


class ConversationReport(PolicyBase):
    """How an integration that remembers its reductions built the context of one model call.

    Between two reductions the context sent is the last reduced context plus the new messages,
    so the prompt only grows at its end and the provider's prompt cache holds.

    Examples:
        >>> from contextwise import ConversationReport
        >>> ConversationReport(key="thread-1", status="extended").resynced
        False
    """

    key: str | None = None
    """The conversation's key (a thread or conversation id), or ``None`` without one."""

    status: ConversationStatus
    """How the context was built: ``stateless``, ``extended``, ``resynced`` or ``fallback``."""

    deferred: bool = False
    """Whether the paid steps (``compress``, ``app``) were held back: the last reduction could
    not reach its target, the context has not grown by the difference between trigger and
    target since, and the other steps brought the prompt under the trigger."""

    forced: bool = False
    """Whether the paid steps ran during such a wait because the other steps could not bring
    the prompt under a trigger or the budget's context budget."""

    error_code: str | None = None
    """The code of the store error that made the integration fall back, or did not let it
    remember this call."""

    overflow: bool = False
    """Whether the provider refused this call's first attempt as longer than its context
    window, so that the context was reduced again, to the window less the pinned parts, the
    output reserve and a margin (or to 10 percent under what was sent), for the one retry of that
    call."""

    overflow_limit: int | None = None
    """The context window, in tokens, that the provider's refusal reported; ``None`` when it
    reported none, or without a refusal."""

    overflow_sent: int | None = None
    """The tokens that the refused prompt came to, by the provider's count; ``None`` when the
    refusal did not say, or without a refusal."""

    delegated_steps: tuple[str, ...] = ()
    """The ids of the steps that the provider applies on its side (the integrations'
    ``provider_editing``): the request carries them, and they did not run here. Empty in the
    retry after a refusal, where every step runs here."""

    @property
    def resynced(self) -> bool:
        """Whether the context was rebuilt from the whole history."""
        return self.status == "resynced"


class ContextProcessingReport(PolicyBase):
    """Facts recorded for one processing run: sizes, the selection and every change.

    ``before_chars - after_chars`` always equals the sum of the changes' savings, and
    ``after_chars`` is the measured size of the returned fragments (for ``audit``: of the
    fragments ``reduce`` would return). The report round-trips through JSON in both key
    spellings.

    ``target_met`` is False only when the policy acted and its steps could not bring the context
    down to a target: every step ran, or a floor such as ``keep_groups`` or the pinned system
    messages stopped them. ``shortfall_chars`` and ``shortfall_tokens`` then say how far above
    the targets the context stayed; the policy also logs a warning on the
    ``contextwise.policy`` logger.

    Examples:
        >>> from contextwise import ContextProcessingReport
        >>> report = ContextProcessingReport(mode="validate", before_chars=120, after_chars=120)
        >>> report.model_dump(by_alias=True)["beforeChars"]
        120
        >>> report.target_met, report.shortfall_chars
        (True, 0)
        >>> ContextProcessingReport.model_validate_json(report.model_dump_json()) == report
        True
    """

    mode: PolicyMode
    """The policy mode that ran."""

    selection: SelectionMode | None = None
    """The policy's selection mode, when the policy acted (a trigger was exceeded)."""

    decisions: tuple[ContextDecision, ...] = ()
    """The selection decisions, kept for auditing the ``auto`` and ``model`` choices."""

    before_chars: _Count
    """The characters of all fragments before processing, pinned parts included."""

    after_chars: _Count
    """The characters of all fragments after processing, pinned parts included."""

    tokens: TokenReport | None = None
    """The token measurement, present only when a token counter was given."""

    estimated_parts: _Count = 0
    """How many parts of the input messages (images, audio, video, files, encrypted reasoning)
    were measured by an estimate rather than exactly; see :class:`~contextwise.PartEstimate`."""

    changes: tuple[ContextChange, ...] = ()
    """The changes in the order they were made, failed ones included."""

    skipped_steps: tuple[str, ...] = ()
    """The ids of the steps skipped because their optional fragment was absent, in policy
    order."""

    target_met: bool = True
    """Whether the context ends at or below the targets, or never needed the policy to act."""

    shortfall_chars: _Count = 0
    """How many characters above the character target the context stayed; 0 when it is met."""

    shortfall_tokens: _Count = 0
    """How many tokens above the token target the context stayed; 0 when it is met or there is
    no token target."""

    pinned_chars: _Count = 0
    """The characters of the pinned parts: what the prompt holds besides the fragments (a
    system prompt, instructions, tool definitions), which counts against the triggers and
    targets and which no step removes; 0 without them."""

    pinned_tokens: int | None = None
    """The tokens of the pinned parts, when a token counter was given."""

    conversation: ConversationReport | None = None
    """How an integration built the context from what it remembered; ``None`` outside the
    integrations."""


def shortfalls(
    target_chars: int | None,
    target_tokens: int | None,
    chars: int,
    tokens: int | None,
) -> tuple[int, int]:
    """How far a size stays above its targets, in characters and in tokens.

    Args:
        target_chars: The character target, or ``None`` without one.
        target_tokens: The token target, or ``None`` without one.
        chars: The size in characters.
        tokens: The size in tokens, or ``None`` without a counter.

    Returns:
        The characters and the tokens above the targets, each 0 when its target is met.

    Examples:
        >>> shortfalls(1000, None, 1250, 300)
        (250, 0)
    """
    over_chars = 0 if target_chars is None else max(0, chars - target_chars)
    over_tokens = 0 if target_tokens is None or tokens is None else max(0, tokens - target_tokens)
    return over_chars, over_tokens
