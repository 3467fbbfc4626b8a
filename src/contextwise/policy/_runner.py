"""The runner: a policy bound once to what runs it, and the ``process_context`` shortcut.

A harness runs one policy hundreds of times with the same counter, budget, compressors and apps.
:meth:`ContextPolicy.bind <contextwise.policy.ContextPolicy.bind>` checks them against the policy
once and returns a :class:`PolicyRunner`; sessions, integrations and
:func:`~contextwise.prepare_step` take the runner (or a policy and the same options, bound once
when they are built).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, TypedDict, Unpack, cast

from contextwise._checks import finite_float
from contextwise._effects import Effects, run_async, run_sync
from contextwise._translation import short_repr
from contextwise.budget import ContextBudget
from contextwise.counting import TokenCounter, as_token_counter
from contextwise.decision import DecisionProvider
from contextwise.errors import InvalidTypeError, PolicyConfigurationError
from contextwise.policy._engine import AppMutation, Compressor, run_policy
from contextwise.policy._fragments import ContextResult, Fragment, coerce_fragments
from contextwise.policy._measure import KnownSizes, Measure
from contextwise.policy._model import ContextPolicy, ModelSelection, coerce_policy, register_runner
from contextwise.policy._pinned import PinnedPart, measure_pinned
from contextwise.policy._selection import Limits, effective_limits
from contextwise.policy._step_core import StepContext
from contextwise.policy._validation import check_fragments, validate_context_policy
from contextwise.shapes import PartEstimate

UnknownItems: TypeAlias = Literal["error", "opaque"]
"""What a run does with an item that no supported message shape recognises: ``error`` raises
:class:`~contextwise.errors.InvalidValueError`; ``opaque`` keeps it as one unit, measured by its
JSON, never split or changed (it may still be removed whole)."""


class RunnerOptions(TypedDict, total=False):
    """The options that run a policy, each of which may be omitted.

    :meth:`ContextPolicy.bind <contextwise.policy.ContextPolicy.bind>`,
    :func:`process_context`, :class:`~contextwise.session.ContextSession`, the integrations and
    :func:`~contextwise.prepare_step` take them as keyword arguments, with the same names and
    meanings everywhere. Any other name is an error (code ``unknown_runner_option``).
    """

    counter: object
    """A token counter, or a tokenizer or function that :func:`~contextwise.as_token_counter`
    accepts; needed for token limits and recorded in the report."""

    budget: ContextBudget
    """A :class:`~contextwise.ContextBudget` whose ``context_budget()`` caps the token trigger
    and target; needs a counter."""

    compressors: Mapping[str, Compressor]
    """The compressors by name, as the policy's compress steps name them."""

    apps: Mapping[str, AppMutation]
    """The app mutations by name, as the policy's app steps name them."""

    decision_provider: DecisionProvider
    """The decision provider of a ``model`` selection."""

    step_timeout: float
    """The default maximum number of seconds that a compressor or app may take, for steps
    without their own ``timeout``; no limit when omitted."""

    part_estimate: PartEstimate
    """How the parts of messages that have no text (images, audio, files, encrypted reasoning)
    are measured; :class:`~contextwise.PartEstimate` by default."""

    unknown_items: UnknownItems
    """What to do with an item that no supported shape recognises: ``"error"`` (the default)
    raises; ``"opaque"`` keeps it as one unit measured by its JSON, never split or changed (the
    integrations' default)."""


OPTION_NAMES: Final[tuple[str, ...]] = tuple(RunnerOptions.__annotations__)
"""The names of the runner options, in the order :class:`RunnerOptions` declares them."""


@dataclass(frozen=True, slots=True)
class _Bound:
    """The checked options of a runner."""

    counter: TokenCounter | None
    budget_limit: int | None
    decision_provider: DecisionProvider | None
    context: StepContext


class PolicyRunner:
    """A policy bound to what runs it: the counter, the budget, the compressors and apps...

    :meth:`ContextPolicy.bind <contextwise.policy.ContextPolicy.bind>` builds it. Every option
    is checked against the policy once, when it is built, so a missing compressor or app, a
    budget without a counter, a value that is not callable or a misspelt option name fails there,
    never at the first model call. A runner is immutable and safe to share between threads and
    tasks; :meth:`replace` returns a runner with other options (another model's budget).

    Args:
        policy: The policy, or a mapping in the shape of a policy file.

    Raises:
        PolicyConfigurationError: When the policy is invalid or does not match the options: an
            unknown option name (code ``unknown_runner_option``), a step's compressor or app that
            is not given (``unknown_compressor``, ``unknown_app``), a function that is not
            callable (``invalid_compressor``, ``invalid_app``), a token limit or a budget without
            a counter (``counter_required``), a ``model`` selection without a decision provider
            (``decision_provider_required``, ``invalid_decision_provider``), a bad
            ``step_timeout`` (``invalid_step_timeout``) or ``unknown_items``
            (``invalid_unknown_items``), or a ``reduce`` policy with no trigger, no target and
            no budget, which would never act (``reduce_never_acts``).
        InvalidTypeError: When an option has the wrong type (a budget that is not a
            :class:`~contextwise.ContextBudget`, a part estimate that is not a
            :class:`~contextwise.PartEstimate`, a mapping that is not a mapping).

    Examples:
        >>> from contextwise import ContextPolicy, MessagesFragment
        >>> policy = ContextPolicy(mode="reduce", target_input_chars=20, steps=[
        ...     {"id": "turns", "kind": "trim", "fragment_id": "history"}])
        >>> runner = policy.bind()
        >>> history = [{"role": "user", "content": "What is the capital of France?"},
        ...            {"role": "assistant", "content": "Paris."},
        ...            {"role": "user", "content": "And of Italy?"}]
        >>> result = runner.process([MessagesFragment("history", messages=history)])
        >>> [m["content"] for m in result.fragment("history").messages]
        ['And of Italy?']
    """

    __slots__ = ("_bound", "_can_idle", "_derived", "_options", "_policy")

    def __init__(
        self, policy: ContextPolicy | Mapping[str, Any], **options: Unpack[RunnerOptions]
    ) -> None:
        self._init(policy, options, can_idle=False)

    def _init(
        self,
        policy: ContextPolicy | Mapping[str, Any],
        options: Mapping[str, Any],
        *,
        can_idle: bool,
    ) -> None:
        checked_policy = coerce_policy(policy)
        given = _known_options(options)
        bound = _bind(checked_policy, given)
        validate_context_policy(
            checked_policy,
            bound.context.compressors,
            bound.context.apps,
            counter=bound.counter,
        )
        if not can_idle:
            _require_a_limit(checked_policy, bound.budget_limit)
        self._policy = checked_policy
        self._options = given
        self._bound = bound
        # An integration's or a step's runner may have no limit of its own (it acts on an
        # overflow, or on each model's budget); a runner replaced from it may too.
        self._can_idle = can_idle
        self._derived: dict[tuple[tuple[str, type, Any], ...], PolicyRunner] = {}

    @property
    def policy(self) -> ContextPolicy:
        """The validated policy."""
        return self._policy

    @property
    def options(self) -> RunnerOptions:
        """The options the runner was bound with, as given (a new dictionary each time)."""
        return cast(RunnerOptions, dict(self._options))

    @property
    def counter(self) -> TokenCounter | None:
        """The token counter, or ``None`` without one."""
        return self._bound.counter

    def replace(self, **changes: Unpack[RunnerOptions]) -> PolicyRunner:
        """Return a runner with some options changed, for the same policy.

        A routed step needs the chosen model's budget (and maybe its counter). The new options
        go through the same checks as the constructor's, against the same policy: removing a
        compressor or an app that a step names, or the counter of a token limit, is refused
        here, never at the first model call. An option given as ``None`` is removed.

        Returns:
            A new runner; this one is unchanged.

        Raises:
            PolicyConfigurationError: As for the constructor.
            InvalidTypeError: As for the constructor.

        Examples:
            >>> from contextwise import ContextBudget, ContextPolicy, EstimateCounter
            >>> runner = ContextPolicy(mode="reduce", trigger_tokens=7_000).bind(
            ...     counter=EstimateCounter())
            >>> small = runner.replace(budget=ContextBudget(8_000, 1_000))
            >>> small.options["budget"].context_budget(), "budget" in runner.options
            (6840, False)
        """
        _known_options(changes)
        key = _derived_key(changes)
        found = None if key is None else self._derived.get(key)
        if found is not None:
            return found
        runner = PolicyRunner.__new__(PolicyRunner)
        runner._init(self._policy, {**self._options, **changes}, can_idle=self._can_idle)
        if key is not None:
            # A harness replaces the budget at every step, with a few models' budgets: each
            # derived runner is checked once. The cache is small, and a lost race builds twice.
            if len(self._derived) >= _DERIVED_LIMIT:
                self._derived.clear()
            self._derived[key] = runner
        return runner

    def process(self, fragments: Sequence[Fragment | Mapping[str, Any]]) -> ContextResult:
        """Fit fragments of a context to the policy: trim, compress or mutate them, and report it.

        It behaves exactly like :meth:`aprocess` and shares its implementation. A sync
        compressor or app runs inline; with a timeout it runs in a worker thread, and when the
        timeout expires its result is discarded (the thread cannot be stopped and finishes in
        the background). An async one is awaited, on a private event loop in a worker thread
        when an event loop is already running here, so this method also works inside Jupyter or
        an async web handler.

        Examples:
            >>> from contextwise import ContextPolicy, TextFragment
            >>> runner = ContextPolicy(mode="audit", trigger_chars=5).bind()
            >>> runner.process([TextFragment("doc", text="Too long a text.")]).report.before_chars
            16
        """
        return run_sync(runner_core(self, fragments))

    async def aprocess(self, fragments: Sequence[Fragment | Mapping[str, Any]]) -> ContextResult:
        """Fit fragments of a context to the policy: trim, compress or mutate them, and report it.

        The fragments are measured once. In ``reduce`` mode, when a trigger is exceeded
        (characters, tokens, or the budget's context budget), the policy's selection applies
        steps until the targets are met. ``validate`` mode changes nothing and raises when
        ``reduce`` would have acted. ``audit`` mode changes nothing and reports exactly what
        ``reduce`` would change, calling the compressors and apps on copies to know it.

        With a counter, a text is counted as a whole and a list of messages message by message,
        each through :func:`~contextwise.messages.message_text`.

        The input is never mutated: the result holds new fragments, which share the unchanged
        message objects. A compressor or app that raises, times out, or returns something
        unusable leaves its fragment untouched and is reported as a failed change. Async
        compressors and apps are awaited (and cancelled when their timeout expires); sync ones
        run inline, or in a worker thread when they have a timeout. Cancelling the task cancels
        the call in progress.

        Args:
            fragments: The fragments, as :class:`Fragment` objects or mappings with ``id`` and
                ``text`` or ``messages``; their ids are unique.

        Returns:
            The fragments in input order, the report, and what was removed from each fragment.

        Raises:
            PolicyConfigurationError: When the fragments do not match the policy's steps (codes
                ``unknown_fragment`` and ``field_mismatch``) or two fragments share an id
                (``duplicate_fragment_id``).
            ContextOverflowError: In ``validate`` mode, when a trigger or the token limit is
                exceeded (codes ``policy_validation_overflow`` and
                ``policy_validation_token_overflow``).
            InvalidTypeError: When an argument or a message has the wrong type.
            InvalidValueError: When a fragment is malformed, a message has no supported shape
                (unless ``unknown_items`` is ``"opaque"``), or the counter returns a bad count.

        Examples:
            >>> import asyncio
            >>> from contextwise import ContextPolicy, TextFragment
            >>> async def shorten(text: str) -> str:
            ...     return text[:10]
            >>> policy = ContextPolicy(mode="reduce", trigger_chars=20, steps=[
            ...     {"id": "sum", "kind": "compress", "fragment_id": "doc", "field": "text",
            ...      "compressor": "shorten"}])
            >>> runner = policy.bind(compressors={"shorten": shorten})
            >>> result = asyncio.run(runner.aprocess(
            ...     [TextFragment("doc", text="A long document about nothing.")]))
            >>> result.fragment("doc").text
            'A long doc'
        """
        return await run_async(runner_core(self, fragments))

    def __repr__(self) -> str:
        return f"PolicyRunner(mode={self._policy.mode!r}, options={sorted(self._options)!r})"


def runner_core(
    runner: PolicyRunner,
    fragments: object,
    known_sizes: Mapping[str, KnownSizes] | None = None,
    removed_by: dict[int, str] | None = None,
    *,
    pinned: Sequence[PinnedPart] = (),
    offset_tokens: int = 0,
    held_back: frozenset[str] = frozenset(),
) -> Effects[ContextResult]:
    """The core of a runner's ``process`` and ``aprocess``, for any driver.

    Two hooks serve sessions, which measure each message once, when it is added:
    ``known_sizes`` gives, by fragment id, sizes measured earlier, and ``removed_by``, when
    given, is filled with the id of the step that removed each removed item, keyed by the item's
    ``id()``. ``pinned`` holds the parts of the prompt that count against the limits and that no
    step removes (see :func:`~contextwise.policy._pinned.measure_pinned`); ``offset_tokens``
    corrects the token measure by the provider's own count; ``held_back`` names step kinds that
    do not run this time.
    """
    items = coerce_fragments(fragments)
    check_fragments(runner.policy, items)
    bound = runner._bound
    measured = measure_pinned(pinned, bound.context.measure, offset_tokens)
    result: ContextResult = yield from run_policy(
        runner.policy,
        items,
        bound.context,
        bound.budget_limit,
        bound.decision_provider,
        known_sizes or {},
        removed_by,
        measured,
        held_back,
    )
    return result


def limits_of(runner: PolicyRunner) -> Limits:
    """The effective triggers and targets of a runner: the policy's, capped by the budget."""
    policy = runner.policy
    return effective_limits(
        policy.trigger_chars,
        policy.target_input_chars,
        policy.trigger_tokens,
        policy.target_input_tokens,
        runner._bound.budget_limit,
    )


def measure_of(runner: PolicyRunner) -> Measure:
    """How a runner measures messages (its counter, part estimate and unknown items), for a
    session that measures each message once, when it is added."""
    return runner._bound.context.measure


def as_runner(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    options: Mapping[str, Any],
    *,
    defaults: Mapping[str, Any] | None = None,
    can_idle: bool = False,
) -> PolicyRunner:
    """The runner that a session, an integration or a step was given, or the policy bound with
    the options (and ``defaults`` for the options not given).

    ``can_idle`` accepts a ``reduce`` policy without a trigger, a target or a budget: an
    integration reduces it on a provider's overflow, and a step gives it each model's budget.

    Raises:
        PolicyConfigurationError: When both a runner and options are given (code
            ``runner_with_options``), or the options do not bind.
    """
    if isinstance(policy, PolicyRunner):
        if options:
            raise PolicyConfigurationError(
                "runner_with_options", names=sorted(options), count=len(options)
            )
        return policy
    runner = PolicyRunner.__new__(PolicyRunner)
    runner._init(policy, {**(defaults or {}), **options}, can_idle=can_idle)
    return runner


def process_context(
    policy: ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    **options: Unpack[RunnerOptions],
) -> ContextResult:
    """Fit fragments of a context to a policy: trim, compress or mutate them, and report it all.

    The shortcut of ``ContextPolicy.bind(**options).process(fragments)``: it binds the policy
    and runs it once. A harness that runs a policy at every model call binds it once and keeps
    the :class:`PolicyRunner`.

    Examples:
        >>> from contextwise import ContextPolicy, MessagesFragment, process_context
        >>> history = [{"role": "system", "content": "Be brief."}]
        >>> for n in range(4):
        ...     history += [{"role": "user", "content": f"Question {n}?"},
        ...                 {"role": "assistant", "content": f"Answer {n}."}]
        >>> policy = ContextPolicy(mode="reduce", trigger_chars=60, target_input_chars=50,
        ...     steps=[{"id": "turns", "kind": "trim", "fragment_id": "history", "keep_groups": 1}])
        >>> result = process_context(policy, [MessagesFragment("history", messages=history)])
        >>> [m["content"] for m in result.fragment("history").messages]
        ['Be brief.', 'Question 3?', 'Answer 3.']
        >>> result.report.before_chars, result.report.after_chars, len(result.removed["history"])
        (89, 29, 6)
    """
    return PolicyRunner(policy, **options).process(fragments)


async def aprocess_context(
    policy: ContextPolicy | Mapping[str, Any],
    fragments: Sequence[Fragment | Mapping[str, Any]],
    **options: Unpack[RunnerOptions],
) -> ContextResult:
    """Fit fragments of a context to a policy: trim, compress or mutate them, and report it all.

    The shortcut of ``await ContextPolicy.bind(**options).aprocess(fragments)``: see
    :meth:`PolicyRunner.aprocess` for what a run does.

    Args:
        policy: The policy, or a mapping in the shape of a policy file.
        fragments: The fragments, as :class:`Fragment` objects or mappings with ``id`` and
            ``text`` or ``messages``; their ids are unique.

    Returns:
        The fragments in input order, the report, and what was removed from each fragment.

    Raises:
        PolicyConfigurationError: When the policy is invalid or does not match the options or
            the fragments (see :class:`PolicyRunner` and :func:`validate_context_policy`).
        ContextOverflowError: In ``validate`` mode, when a trigger or the token limit is
            exceeded (codes ``policy_validation_overflow`` and
            ``policy_validation_token_overflow``).
        InvalidTypeError: When an argument or a message has the wrong type.
        InvalidValueError: When a fragment is malformed, or the counter returns a bad count.

    Examples:
        >>> import asyncio
        >>> from contextwise import ContextPolicy, TextFragment, aprocess_context
        >>> async def shorten(text: str) -> str:
        ...     return text[:10]
        >>> policy = ContextPolicy(mode="reduce", trigger_chars=20, steps=[
        ...     {"id": "sum", "kind": "compress", "fragment_id": "doc", "field": "text",
        ...      "compressor": "shorten"}])
        >>> result = asyncio.run(aprocess_context(
        ...     policy, [TextFragment("doc", text="A long document about nothing.")],
        ...     compressors={"shorten": shorten}))
        >>> result.fragment("doc").text
        'A long doc'
    """
    return await PolicyRunner(policy, **options).aprocess(fragments)


# --- binding ---------------------------------------------------------------------------------


_DERIVED_LIMIT = 16
"""How many runners derived by :meth:`PolicyRunner.replace` a runner keeps for reuse."""


def _derived_key(changes: Mapping[str, Any]) -> tuple[tuple[str, type, Any], ...] | None:
    """The key of a replacement in a runner's cache, or ``None`` when a value cannot be hashed
    (a mapping of functions). The type is part of the key: ``True`` must not find ``1``'s
    runner, which was checked for another value."""
    key = tuple(sorted((name, type(value), value) for name, value in changes.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _known_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options, with every name checked; an option given as ``None`` is left out."""
    unknown = sorted(name for name in options if name not in OPTION_NAMES)
    if unknown:
        raise PolicyConfigurationError(
            "unknown_runner_option",
            names=unknown,
            count=len(unknown),
            known=list(OPTION_NAMES),
        )
    return {name: value for name, value in options.items() if value is not None}


def _bind(policy: ContextPolicy, options: Mapping[str, Any]) -> _Bound:
    """Check every option's type and value, and what the policy needs of them."""
    counter = options.get("counter")
    token_counter: TokenCounter | None = None if counter is None else as_token_counter(counter)
    budget_limit = _budget_limit(options.get("budget"), token_counter)
    compressors = _functions(options.get("compressors"), "invalid_compressor", "compressor")
    apps = _functions(options.get("apps"), "invalid_app", "app")
    timeout = _step_timeout(options.get("step_timeout"))
    estimate = _part_estimate(options.get("part_estimate"))
    unknown_items = options.get("unknown_items", "error")
    if unknown_items not in ("error", "opaque"):
        raise PolicyConfigurationError("invalid_unknown_items", value=short_repr(unknown_items))
    provider = options.get("decision_provider")
    if provider is not None and not isinstance(provider, DecisionProvider):
        raise PolicyConfigurationError(
            "invalid_decision_provider", type_name=type(provider).__name__
        )
    if isinstance(policy.selection, ModelSelection) and provider is None:
        raise PolicyConfigurationError("decision_provider_required")
    context = StepContext(
        measure=Measure(token_counter, estimate, opaque=unknown_items == "opaque"),
        compressors=compressors,
        apps=apps,
        default_timeout=timeout,
    )
    return _Bound(token_counter, budget_limit, provider, context)


def _has_limit(policy: ContextPolicy) -> bool:
    """Whether the policy has a trigger or a target of its own."""
    limits = (
        policy.trigger_chars,
        policy.target_input_chars,
        policy.trigger_tokens,
        policy.target_input_tokens,
    )
    return any(limit is not None for limit in limits)


def _require_a_limit(policy: ContextPolicy, budget_limit: int | None) -> None:
    """A ``reduce`` policy that can never act (no trigger, no target, no budget) is an error."""
    if policy.mode == "reduce" and budget_limit is None and not _has_limit(policy):
        raise PolicyConfigurationError("reduce_never_acts")


def _step_timeout(value: object) -> float | None:
    if value is None:
        return None
    seconds = finite_float(value)
    if seconds is None or not seconds > 0:
        raise PolicyConfigurationError("invalid_step_timeout", value=short_repr(value))
    return seconds


def _part_estimate(value: object) -> PartEstimate | None:
    if value is None or isinstance(value, PartEstimate):
        return value
    raise InvalidTypeError("invalid_part_estimate_type", type_name=type(value).__name__)


def _budget_limit(budget: object | None, counter: TokenCounter | None) -> int | None:
    if budget is None:
        return None
    method = getattr(budget, "context_budget", None)
    if not callable(method):
        raise InvalidTypeError("invalid_budget", type_name=type(budget).__name__)
    if counter is None:
        raise PolicyConfigurationError("counter_required", limits=["budget"], count=1)
    return int(method())


def _functions(given: object, code: str, key: str) -> dict[str, Any]:
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise InvalidTypeError("not_a_mapping", name=f"{key}s", type_name=type(given).__name__)
    for name, func in given.items():
        if not callable(func):
            raise PolicyConfigurationError(code, **{key: name, "type_name": type(func).__name__})
    return dict(given)


register_runner(PolicyRunner)
