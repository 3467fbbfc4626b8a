"""The context policy: a pydantic model that policy files (JSON or TOML) validate against.

Every model accepts its fields in snake_case (``trigger_chars``) and in the camelCase of the seed
(``triggerChars``), forbids unknown keys, and is frozen. Every validation failure raises a
:class:`~contextwise.errors.PolicyConfigurationError` with a stable code, the field path and the
offending value: an unknown key, one key written in both spellings, a wrong type (numbers are
never read from strings), a value out of range, invalid JSON or TOML, or a broken rule of the
policy (two steps with one id, a trigger not above its target...).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, Unpack

from pydantic import ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from contextwise._checks import MAX_DEPTH
from contextwise._translation import short_repr, short_text
from contextwise._validation import CodedModel
from contextwise.errors import InvalidTypeError, PolicyConfigurationError
from contextwise.messages import GroupingKind

if TYPE_CHECKING:
    from contextwise.policy import PolicyRunner, RunnerOptions

PolicyMode: TypeAlias = Literal["reduce", "validate", "audit"]
"""What a policy does: change the context, check it, or report what it would change."""

SelectionMode: TypeAlias = Literal["sequence", "fixed", "auto", "model"]
"""How the steps to apply are chosen."""

StepKind: TypeAlias = Literal["trim", "compress", "app", "clear", "clip"]
"""The kinds of steps."""

DEFAULT_TRIM_MARKER = "\n[...]\n"
"""The marker that a text trim puts where it cut the text."""

CLEARED_PLACEHOLDER = '[cleared: {n} characters; recall("{ref}")]'
"""What a ``clear`` step puts in place of a tool result: ``n`` is the length of the result's text
and ``ref`` the id of the tool call it answers, which :func:`~contextwise.recall` takes. It is
never translated: the model reads it."""

CLIP_MARKER = '\n[clipped: {n} characters; recall("{ref}")]\n'
"""What a ``clip`` step puts between the head and the tail of a tool result: ``n`` is the number of
characters cut out and ``ref`` the id of the tool call, which :func:`~contextwise.recall` takes.
It is never translated: the model reads it."""

_CLIP_ROOM = len(CLIP_MARKER.format(n=10**6, ref="call_" + "x" * 24))
"""The fewest characters a clip step may keep: its marker, for a cut of a million characters and
an OpenAI tool call id; a smaller ``max_chars`` would be exceeded by the marker alone."""

_DEFAULT_MIN_CONFIDENCE = 0.85

_Size = Annotated[int, Field(ge=0, strict=True)]
_Name = Annotated[str, Field(min_length=1, pattern=r"\S", strict=True)]
_Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
_Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=True)]

SCHEMA_KEY = "$schema"
"""The key of a policy file that names its JSON Schema, for editors; it is accepted and ignored."""


class PolicyBase(CodedModel):
    """The base of the policy models: snake_case or camelCase keys, no unknown key, frozen.

    A validation failure raises a :class:`~contextwise.errors.PolicyConfigurationError`.
    """

    _error_class = PolicyConfigurationError

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        use_attribute_docstrings=True,
    )


class Grouping(PolicyBase):
    """How a step groups the messages it keeps or removes as a whole.

    ``user-turn`` groups a user message with everything that answers it; ``message`` takes each
    message on its own; ``tool-unit`` takes each message or tool unit on its own too, and keeps
    the task, the user message that starts the latest turn, so that a long tool loop inside one
    turn is trimmed without losing what the user asked. All of them keep a tool call with its
    results. See :func:`~contextwise.messages.group_messages`.

    Examples:
        >>> from contextwise import Grouping
        >>> Grouping().kind
        'user-turn'
        >>> Grouping(kind="tool-unit").keep_task
        True
    """

    kind: GroupingKind = "user-turn"
    """``user-turn`` (the default), ``message`` or ``tool-unit``."""

    keep_task: Annotated[bool, Field(strict=True)] = True
    """With ``tool-unit``: keep the user message that starts the latest turn (the task); True by
    default. Only ``tool-unit`` can turn it off."""


class TrimStep(PolicyBase):
    """Remove the oldest groups of messages, or cut a text to a size.

    On messages, the step removes the oldest unpinned groups one at a time, never the newest
    ``keep_groups`` ones, and stops as soon as the field is at or below ``target_chars`` and
    ``target_tokens``. Without a target it removes every group but the newest ``keep_groups``.
    System and developer messages are never removed, and a tool call always stays with its
    results.

    On text, the step needs a target. It keeps the ``head`` (the beginning) or the ``tail`` of the
    text and puts ``marker`` where it cut; the marker counts in the size. The removed span is
    reported in :attr:`ContextResult.removed <contextwise.policy.ContextResult.removed>`.

    Examples:
        >>> from contextwise import TrimStep
        >>> step = TrimStep.model_validate({"id": "recent-history", "kind": "trim",
        ...     "fragmentId": "history", "keepGroups": 2, "targetChars": 1000})
        >>> step.keep_groups, step.grouping.kind
        (2, 'user-turn')
    """

    kind: Literal["trim"] = "trim"
    """The step kind, always ``trim``."""

    id: _Name
    """The step's id, unique in the policy."""

    fragment_id: _Name
    """The id of the fragment the step works on."""

    field: Literal["messages", "text"] = "messages"
    """The field of the fragment the step trims: ``messages`` (the default) or ``text``."""

    grouping: Grouping = Grouping()
    """How messages are grouped; ``user-turn`` by default."""

    keep_groups: _Size = 1
    """How many of the newest groups are never removed; 1 by default."""

    target_chars: _Size | None = None
    """The size in characters at or below which the step stops removing."""

    target_tokens: _Size | None = None
    """The size in tokens at or below which the step stops removing; needs a token counter."""

    keep: Literal["head", "tail"] = "head"
    """For text: keep the beginning (``head``, the default) or the end (``tail``)."""

    marker: str = DEFAULT_TRIM_MARKER
    """For text: the marker put where the text was cut, ``"\\n[...]\\n"`` by default."""


class CompressStep(PolicyBase):
    """Replace the older groups of messages with one summary made by a compressor.

    The compressor is a function that the application supplies at run time under the name
    ``compressor``; it may be sync or async. For messages it receives a copy of the messages to
    replace (every group but the newest ``keep_groups``, without the pinned system and developer
    messages, which stay in place) and returns the summary, as a message or as a string that
    becomes a message with the role ``summary_role``. For text it receives the text and returns a
    shorter string.

    A compressor that raises, times out, or returns something that is not smaller leaves the
    fragment untouched; the report records a failed change with the error.

    Examples:
        >>> from contextwise import CompressStep
        >>> CompressStep(id="summary", fragment_id="history", compressor="summarize").keep_groups
        1
    """

    kind: Literal["compress"] = "compress"
    """The step kind, always ``compress``."""

    id: _Name
    """The step's id, unique in the policy."""

    fragment_id: _Name
    """The id of the fragment the step works on."""

    compressor: _Name
    """The name of the compressor, among those the application supplies."""

    field: Literal["messages", "text"] = "messages"
    """The field of the fragment the step compresses: ``messages`` (the default) or ``text``."""

    grouping: Grouping = Grouping()
    """How messages are grouped; ``user-turn`` by default."""

    keep_groups: _Size = 1
    """How many of the newest groups are kept as they are; 1 by default."""

    summary_role: Literal["user", "assistant", "system", "developer"] = "user"
    """The role of the summary message when the compressor returns a string."""

    timeout: _Seconds | None = None
    """The maximum number of seconds the compressor may take; the ``step_timeout`` of the
    run when omitted."""


class AppStep(PolicyBase):
    """Apply a mutation that the application supplies: a function from a fragment to a fragment.

    The function is supplied at run time under the name ``app``; it may be sync or async. It
    receives a copy of the fragment and returns the changed fragment (or just its new list of
    messages, or its new text). The change is recorded with the kind ``app``. A function that
    raises, times out, returns something else, or separates a tool call from its results leaves
    the fragment untouched and is recorded as a failed change.

    Examples:
        >>> from contextwise import AppStep
        >>> AppStep(id="redact", fragment_id="history", app="redact_secrets").kind
        'app'
    """

    kind: Literal["app"] = "app"
    """The step kind, always ``app``."""

    id: _Name
    """The step's id, unique in the policy."""

    fragment_id: _Name
    """The id of the fragment the step works on."""

    app: _Name
    """The name of the mutation, among those the application supplies."""

    timeout: _Seconds | None = None
    """The maximum number of seconds the mutation may take; the ``step_timeout`` of the
    run when omitted."""


class ClearStep(PolicyBase):
    """Clear the content of older tool results, keeping each call paired with its result.

    The result of every tool call but the newest ``keep_recent`` becomes the fixed placeholder
    ``[cleared: {n} characters; recall("{ref}")]`` (see :data:`CLEARED_PLACEHOLDER`), where
    ``ref`` is the call's id: the model can read the original back with
    :func:`~contextwise.recall`. A result is cleared only when the placeholder is shorter, a
    result already cleared stays as it is, and a clipped one counts the length of its original.
    The calls of ``exclude_tools`` are left whole.

    With ``inputs``, the cleared calls' arguments are emptied too, to ``"{}"`` where the shape
    holds a string and to ``{}`` where it holds an object. With ``reasoning``, the thinking of
    the turns before the latest one is dropped: Responses ``reasoning`` items, Anthropic
    thinking blocks, Gemini thought parts, pydantic-ai thinking parts; a reasoning item whose
    following item needs it stays, and so does the thinking of the latest turn, which a tool
    loop must send back signed.

    The step clears nothing unless it frees at least ``min_gain_chars`` characters and
    ``min_gain_tokens`` tokens: each clearing rewrites the prompt from the first cleared result
    on, so the provider's prompt cache must be worth rebuilding. Every message it rewrites is in
    the result's :attr:`~contextwise.ContextResult.removed` as it was, and its copy takes its
    place. Results of hosted tools (which the provider answers in the call's own
    item) and a computer's screenshots are never cleared.

    Examples:
        >>> from contextwise import ClearStep
        >>> step = ClearStep.model_validate({"id": "old-results", "kind": "clear",
        ...     "fragmentId": "history", "keepRecent": 2, "excludeTools": ["recall"]})
        >>> step.keep_recent, step.exclude_tools, step.inputs
        (2, ('recall',), False)
    """

    kind: Literal["clear"] = "clear"
    """The step kind, always ``clear``."""

    id: _Name
    """The step's id, unique in the policy."""

    fragment_id: _Name
    """The id of the fragment the step works on."""

    field: Literal["messages"] = "messages"
    """The field of the fragment the step works on: always ``messages``."""

    keep_recent: _Size = 3
    """How many of the newest tool calls keep their results whole; 3 by default."""

    exclude_tools: tuple[_Name, ...] = ()
    """The names of the tools whose calls and results are never cleared."""

    inputs: Annotated[bool, Field(strict=True)] = False
    """Also empty the arguments of the cleared calls; False by default."""

    reasoning: Annotated[bool, Field(strict=True)] = False
    """Also drop the thinking of the turns before the latest one; False by default."""

    min_gain_chars: _Size | None = None
    """Clear nothing unless at least this many characters are freed."""

    min_gain_tokens: _Size | None = None
    """Clear nothing unless at least this many tokens are freed; needs a token counter."""


class ClipStep(PolicyBase):
    """Cut each tool result that is too long to its head and its tail.

    A tool result whose text is longer than ``max_chars`` characters (or ``max_tokens`` tokens)
    keeps its beginning and its end, about half each, around the fixed marker
    ``[clipped: {n} characters; recall("{ref}")]`` (see :data:`CLIP_MARKER`), where ``n`` is
    the number of characters cut out and ``ref`` the call's id; the marker counts in the size.
    The model can read the whole original with :func:`~contextwise.recall`. Every message it
    rewrites is in the result's :attr:`~contextwise.ContextResult.removed` as it was, and its
    copy takes its place.

    Examples:
        >>> from contextwise import ClipStep
        >>> ClipStep(id="huge-results", fragment_id="history", max_chars=4000).max_chars
        4000
    """

    kind: Literal["clip"] = "clip"
    """The step kind, always ``clip``."""

    id: _Name
    """The step's id, unique in the policy."""

    fragment_id: _Name
    """The id of the fragment the step works on."""

    field: Literal["messages"] = "messages"
    """The field of the fragment the step works on: always ``messages``."""

    max_chars: _Size | None = None
    """The longest a tool result's text may be, in characters, marker included."""

    max_tokens: _Size | None = None
    """The longest a tool result's text may be, in tokens, marker included; needs a token
    counter."""


ContextStep: TypeAlias = Annotated[
    TrimStep | CompressStep | AppStep | ClearStep | ClipStep, Field(discriminator="kind")
]
"""Any step of a policy, told apart by its ``kind``."""


class SequenceSelection(PolicyBase):
    """Apply the steps in order until the targets are met.

    Examples:
        >>> from contextwise import SequenceSelection
        >>> SequenceSelection().mode
        'sequence'
    """

    mode: Literal["sequence"] = "sequence"
    """The selection mode, always ``sequence``."""


class FixedSelection(PolicyBase):
    """Apply exactly the listed steps, in the listed order, until the targets are met.

    Examples:
        >>> from contextwise import FixedSelection
        >>> FixedSelection(steps=["summary", "recent-history"]).steps
        ('summary', 'recent-history')
    """

    mode: Literal["fixed"] = "fixed"
    """The selection mode, always ``fixed``."""

    steps: tuple[_Name, ...] = Field(min_length=1)
    """The ids of the steps to apply, in order; each must be a step of the policy."""


class AutoSelection(PolicyBase):
    """Choose the steps deterministically, recording the reason of each choice.

    Among the steps that reach the targets on their own, the one that removes the least is
    applied. When none does, the step with the largest saving is applied and the choice starts
    again. The saving is counted in characters while the character target is not met, in tokens
    otherwise; ties go to the step that comes first in the policy. Compressors and apps run to
    measure their saving, so each may be called even when its result is not chosen.

    Examples:
        >>> from contextwise import AutoSelection
        >>> AutoSelection().mode
        'auto'
    """

    mode: Literal["auto"] = "auto"
    """The selection mode, always ``auto``."""


class ModelSelection(PolicyBase):
    """Let a decision model choose the next step, falling back to ``sequence`` when unsure.

    At each round, a :class:`~contextwise.decision.DecisionProvider` (the ``decision_provider`` of
    :func:`~contextwise.policy.process_context`) answers a choice question whose options are the
    ids of the steps not applied yet, through the same decision core as model routing. A
    confidence below ``min_confidence``, or a provider that is unavailable or times out, makes the
    remaining steps run as ``sequence``. Any other provider error propagates.

    Examples:
        >>> from contextwise import ModelSelection
        >>> ModelSelection(model="router-mini").min_confidence
        0.85
    """

    mode: Literal["model"] = "model"
    """The selection mode, always ``model``."""

    model: _Name
    """The name of the decision model that the provider should use."""

    min_confidence: _Confidence = _DEFAULT_MIN_CONFIDENCE
    """The confidence from 0 to 1 that an answer must reach to be followed; 0.85 by default."""

    instructions: str | None = None
    """The question put to the decision model; a built-in question when omitted."""

    timeout: _Seconds | None = None
    """The maximum number of seconds to wait for each answer; no limit when omitted."""


ContextSelection: TypeAlias = Annotated[
    SequenceSelection | FixedSelection | AutoSelection | ModelSelection,
    Field(discriminator="mode"),
]
"""Any selection, told apart by its ``mode``."""


class ContextPolicy(PolicyBase):
    """How named fragments of the context are fitted into a size: limits, steps and selection.

    In ``reduce`` mode the policy acts when the context exceeds a trigger (``trigger_chars``,
    ``trigger_tokens``, or the context budget given at run time) and applies steps until the
    targets are met. A missing target equals its trigger and a missing trigger equals its target;
    a policy without any limit never acts. ``validate`` mode changes nothing and raises
    :class:`~contextwise.errors.ContextOverflowError` when ``reduce`` would have acted. ``audit``
    mode changes nothing and reports exactly what ``reduce`` would change.

    Keys may be written in snake_case or in camelCase, but not both ways at once, and an unknown
    key is an error; a ``$schema`` key at the top, for editors, is accepted and ignored. Every
    validation failure raises a :class:`~contextwise.errors.PolicyConfigurationError` with a
    stable code, the field path and the offending value; its ``problems`` list every problem
    found. Numbers are never read from strings. The rules of the policy itself are unique step
    ids, each trigger strictly greater than its target, fixed selection ids that exist and appear
    once, on every text trim a ``target_chars`` at least as long as its marker, a limit on every
    ``clip`` step, and ``keep_task`` turned off only with the ``tool-unit`` grouping.

    Examples:
        >>> from contextwise import ContextPolicy
        >>> policy = ContextPolicy.model_validate({
        ...     "mode": "reduce", "triggerChars": 1800, "targetInputChars": 1500,
        ...     "selection": {"mode": "sequence"},
        ...     "steps": [{"id": "recent-history", "kind": "trim", "fragmentId": "history",
        ...                "field": "messages", "grouping": {"kind": "user-turn"},
        ...                "keepGroups": 2, "targetChars": 1000}],
        ... })
        >>> policy.trigger_chars, policy.steps[0].fragment_id
        (1800, 'history')
        >>> policy.model_dump(by_alias=True, exclude_defaults=True)["targetInputChars"]
        1500
    """

    mode: PolicyMode
    """``reduce``, ``validate`` or ``audit``."""

    trigger_chars: _Size | None = None
    """The size in characters above which the policy acts."""

    target_input_chars: _Size | None = None
    """The size in characters that the steps bring the context down to."""

    trigger_tokens: _Size | None = None
    """The size in tokens above which the policy acts; needs a token counter."""

    target_input_tokens: _Size | None = None
    """The size in tokens that the steps bring the context down to; needs a token counter."""

    selection: ContextSelection = SequenceSelection()
    """How the steps are chosen; ``sequence`` by default."""

    steps: tuple[ContextStep, ...] = ()
    """The steps the policy may apply, each with a unique id."""

    optional_fragments: tuple[_Name, ...] = ()
    """The ids of fragments that may be absent on a step; the steps on an absent one are skipped
    and listed in the report's ``skipped_steps``, instead of failing with ``unknown_fragment``."""

    @model_validator(mode="before")
    @classmethod
    def _drop_schema_key(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and SCHEMA_KEY in data:
            if not isinstance(data[SCHEMA_KEY], str):
                raise PolicyConfigurationError(
                    "wrong_type",
                    field=SCHEMA_KEY,
                    expected="string",
                    value=short_repr(data[SCHEMA_KEY]),
                )
            data = {key: value for key, value in data.items() if key != SCHEMA_KEY}
        return data

    @model_validator(mode="after")
    def _check_rules(self) -> ContextPolicy:
        check_policy_rules(self)
        return self

    @classmethod
    def from_json(cls, text: str | bytes) -> ContextPolicy:
        """Read a policy from JSON text.

        Args:
            text: The JSON text of the policy.

        Returns:
            The validated policy.

        Raises:
            PolicyConfigurationError: When the text is not valid JSON (code ``invalid_json``, with
                the line and the column) or not a valid policy (the code of the first problem;
                ``problems`` lists them all).

        Examples:
            >>> from contextwise import ContextPolicy
            >>> ContextPolicy.from_json('{"mode": "audit", "triggerChars": 100}').trigger_chars
            100
        """
        return cls.model_validate_json(text)

    @classmethod
    def from_toml(cls, text: str) -> ContextPolicy:
        """Read a policy from TOML text.

        Args:
            text: The TOML text of the policy.

        Returns:
            The validated policy.

        Raises:
            PolicyConfigurationError: When the text is not valid TOML (code ``invalid_toml``, with
                the parser's message as detail) or not a valid policy (the code of the first
                problem; ``problems`` lists them all).

        Examples:
            >>> from contextwise import ContextPolicy
            >>> policy = ContextPolicy.from_toml('''
            ... mode = "reduce"
            ... trigger_chars = 1800
            ... target_input_chars = 1500
            ... [[steps]]
            ... id = "recent-history"
            ... kind = "trim"
            ... fragment_id = "history"
            ... keep_groups = 2
            ... ''')
            >>> policy.steps[0].id
            'recent-history'
        """
        if not isinstance(text, str):
            raise PolicyConfigurationError(
                "wrong_type", field="text", expected="string", value=short_repr(type(text).__name__)
            )
        try:
            data = tomllib.loads(text)
        except ValueError as exc:  # TOMLDecodeError, or an integer too long to convert
            raise PolicyConfigurationError("invalid_toml", detail=str(exc)) from None
        except RecursionError:
            raise PolicyConfigurationError(
                "too_deep", field="ContextPolicy", limit=MAX_DEPTH
            ) from None
        return cls.model_validate(data)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ContextPolicy:
        """Read a policy from a ``.json`` or ``.toml`` file, chosen by the file's suffix.

        Args:
            path: The path of the policy file, read as UTF-8.

        Returns:
            The validated policy.

        Raises:
            PolicyConfigurationError: When the suffix is neither ``.json`` nor ``.toml`` (code
                ``unsupported_policy_file``), the file cannot be read (code
                ``unreadable_file``, with the system's error as ``__cause__``), is not valid JSON
                or TOML (codes ``invalid_json``, ``invalid_toml``), or it does not hold a valid
                policy.
            InvalidTypeError: When ``path`` is neither a string nor a path.

        Examples:
            >>> from contextwise import ContextPolicy
            >>> import pathlib, tempfile
            >>> folder = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (folder / "policy.json").write_text('{"mode": "validate"}')
            >>> ContextPolicy.from_file(folder / "policy.json").mode
            'validate'
        """
        if not isinstance(path, str | os.PathLike):
            raise InvalidTypeError("not_a_string", name="path", type_name=type(path).__name__)
        file = Path(path)
        suffix = file.suffix.lower()
        if suffix not in (".json", ".toml"):
            raise PolicyConfigurationError(
                "unsupported_policy_file", path=str(file), suffix=file.suffix
            )
        try:
            data = file.read_bytes()
        except (OSError, ValueError) as exc:
            detail = getattr(exc, "strerror", None) or type(exc).__name__
            raise PolicyConfigurationError(
                "unreadable_file", path=short_text(file), detail=detail
            ) from exc
        if suffix == ".json":
            return cls.from_json(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PolicyConfigurationError("invalid_toml", detail=str(exc)) from None
        return cls.from_toml(text)

    def bind(self, **options: Unpack[RunnerOptions]) -> PolicyRunner:
        """Bind the policy to what runs it, checked once: the runner that a harness keeps.

        Every option is checked against the policy here, not at the first model call: a step
        whose compressor or app is not given, a budget or a token limit without a counter, a
        function that is not callable, an option name that does not exist.

        Returns:
            The runner, immutable and safe to share between threads and tasks.

        Raises:
            PolicyConfigurationError: When an option is unknown or does not fit the policy (see
                :class:`~contextwise.policy.PolicyRunner`).
            InvalidTypeError: When an option has the wrong type.

        Examples:
            >>> from contextwise import ContextPolicy, PolicyConfigurationError
            >>> policy = ContextPolicy(mode="reduce", trigger_chars=100, steps=[
            ...     {"id": "sum", "kind": "compress", "fragment_id": "history",
            ...      "compressor": "summarize"}])
            >>> try:
            ...     policy.bind(compresors={"summarize": print})
            ... except PolicyConfigurationError as err:
            ...     print(err.code, err.params["names"])
            unknown_runner_option ['compresors']
            >>> policy.bind(compressors={"summarize": print}).policy is policy
            True
        """
        return _RUNNER[0](self, **options)


_RUNNER: list[Callable[..., PolicyRunner]] = []
"""The runner's constructor. The runner builds on this module, so this module names it only as a
type; ``policy/_runner.py`` registers it here when it is imported, and ``contextwise.policy``
(which any import of this module runs first) imports it: no import goes back up from the value
to what runs it."""


def register_runner(runner: Callable[..., PolicyRunner]) -> None:
    """Register the constructor that :meth:`ContextPolicy.bind` calls (the runner's module does,
    once)."""
    _RUNNER[:] = [runner]


def check_policy_rules(policy: ContextPolicy) -> None:
    """Check the rules of a policy that involve more than one field.

    The rules, in order: every step id is unique; each trigger (characters and tokens) is strictly
    greater than its target when both are set; the ids of a fixed selection are steps of the
    policy and appear once; every text trim has a target, and its ``target_chars`` holds its
    marker; every clip step has a limit; ``keep_task`` is turned off only with ``tool-unit``.

    Args:
        policy: The policy to check.

    Raises:
        PolicyConfigurationError: On the first broken rule, with its code.
    """
    seen: set[str] = set()
    for step in policy.steps:
        if step.id in seen:
            raise PolicyConfigurationError("duplicate_step_id", step_id=step.id)
        seen.add(step.id)
    pairs = (
        ("trigger_chars", policy.trigger_chars, "target_input_chars", policy.target_input_chars),
        (
            "trigger_tokens",
            policy.trigger_tokens,
            "target_input_tokens",
            policy.target_input_tokens,
        ),
    )
    for trigger_name, trigger, target_name, target in pairs:
        if trigger is not None and target is not None and trigger <= target:
            raise PolicyConfigurationError(
                "trigger_not_above_target",
                trigger_name=trigger_name,
                trigger=trigger,
                target_name=target_name,
                target=target,
            )
    selection = policy.selection
    if isinstance(selection, FixedSelection):
        listed: set[str] = set()
        for step_id in selection.steps:
            if step_id not in seen:
                raise PolicyConfigurationError(
                    "unknown_fixed_step",
                    step_id=step_id,
                    step_ids=[step.id for step in policy.steps],
                )
            if step_id in listed:
                raise PolicyConfigurationError("duplicate_fixed_step", step_id=step_id)
            listed.add(step_id)
    for step in policy.steps:
        _check_step(step)


def _check_step(step: ContextStep) -> None:
    """The rules of one step that involve more than one of its fields."""
    grouping = getattr(step, "grouping", None)
    if isinstance(grouping, Grouping) and not grouping.keep_task and grouping.kind != "tool-unit":
        raise PolicyConfigurationError(
            "keep_task_without_tool_unit", step_id=step.id, grouping=grouping.kind
        )
    if isinstance(step, ClipStep) and step.max_chars is None and step.max_tokens is None:
        raise PolicyConfigurationError("clip_without_limit", step_id=step.id)
    if isinstance(step, ClipStep) and step.max_chars is not None and step.max_chars < _CLIP_ROOM:
        raise PolicyConfigurationError(
            "clip_below_marker", step_id=step.id, max_chars=step.max_chars, marker_chars=_CLIP_ROOM
        )
    if isinstance(step, TrimStep) and step.field == "text":
        if step.target_chars is None and step.target_tokens is None:
            raise PolicyConfigurationError("text_trim_without_target", step_id=step.id)
        if step.target_chars is not None and step.target_chars < len(step.marker):
            raise PolicyConfigurationError(
                "text_target_below_marker",
                step_id=step.id,
                target_chars=step.target_chars,
                marker_chars=len(step.marker),
            )


def layout_grouping(grouping: Grouping) -> GroupingKind:
    """The grouping that the layout engine applies: ``tool-unit`` without its task is
    ``message``."""
    if grouping.kind == "tool-unit" and not grouping.keep_task:
        return "message"
    return grouping.kind


def token_limits(policy: ContextPolicy) -> list[str]:
    """Name the limits of a policy that count tokens, in order: policy fields, then step fields.

    Args:
        policy: The policy to inspect.

    Returns:
        Names such as ``trigger_tokens`` or ``recent-history.target_tokens``.
    """
    names = [
        name
        for name in ("trigger_tokens", "target_input_tokens")
        if getattr(policy, name) is not None
    ]
    for step in policy.steps:
        for name in ("target_tokens", "min_gain_tokens", "max_tokens"):
            if getattr(step, name, None) is not None:
                names.append(f"{step.id}.{name}")
    return names


def coerce_policy(policy: object, *, name: str = "policy") -> ContextPolicy:
    """Return a :class:`ContextPolicy` from a policy or a mapping, raising contextwise errors.

    Args:
        policy: A policy, or a mapping in the shape of a policy file.
        name: The name of the argument, used in errors.

    Returns:
        The policy.

    Raises:
        PolicyConfigurationError: When the mapping is not a valid policy, with the code of the
            first problem; its ``problems`` list them all.
        InvalidTypeError: When the value is neither a policy nor a mapping.
    """
    if isinstance(policy, ContextPolicy):
        return policy
    if not isinstance(policy, Mapping):
        raise InvalidTypeError("not_a_policy", name=name, type_name=type(policy).__name__)
    return ContextPolicy.model_validate(dict(policy))
