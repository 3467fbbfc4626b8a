"""What the three integrations share: a runner applied to a conversation, with a memory of the
reductions it made, so that the prompt only grows at its end between two reductions.

At each model call the framework hands over its whole history. Without a conversation key the
policy runs on all of it (stateless). With a key, the context sent is the last reduced context plus
the messages new since; the policy runs on that, and reduces again only when it crosses the
trigger. Whether the history extends what was seen is decided by per-message fingerprints (the
message's own id where its shape has one, else a hash of its canonical JSON), never by object
identity. What is remembered is fingerprints and indices into the framework's own history, plus
the messages contextwise made (summaries): not a second copy of the conversation.

The measure is the whole prompt: the pinned parts (system prompt, instructions, tool definitions)
count against the triggers and targets, and a provider's count of the previous prompt replaces its
estimate. Above the trigger, the steps that cost nothing (trim, clear, clip) run at every call;
after a reduction that missed its target, the paid steps (compress, app) wait until the context
grew by the difference between trigger and target, unless the others cannot meet the trigger.
"""

from __future__ import annotations

import hashlib
import json
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, NamedTuple, TypeVar, cast

from contextwise import (
    ContextPolicy,
    ContextProcessingReport,
    ContextResult,
    ConversationReport,
    ConversationStatus,
    MessagesFragment,
    PolicyRunner,
    RunnerOptions,
)
from contextwise._effects import Effects, call, call_blocking, run_async, run_sync
from contextwise._translation import short_repr
from contextwise.errors import ContextwiseError, InvalidTypeError, InvalidValueError
from contextwise.integrations import IntegrationOptions
from contextwise.integrations._overflow import Overflow
from contextwise.policy._api import as_runner, check_fragments, limits_of, runner_core
from contextwise.session import ConversationStore
from contextwise.session._api import check_store, check_ttl, decode_message, encode_messages

MessageT = TypeVar("MessageT")

INTEGRATION_DEFAULTS: Final[Mapping[str, Any]] = {"unknown_items": "opaque"}
"""The runner options that an integration binds unless told otherwise: a framework stores item
types that contextwise does not know, and they must never crash an agent's run."""

DEFAULT_MAX_MEMORY_BYTES: Final = 64 * 1024 * 1024
"""How many bytes the in-process memory of one integration object may hold by default."""

PAID_KINDS: Final = frozenset({"compress", "app"})
"""The step kinds that cost a call of application code (a summarizer, a mutation): after a
reduction that missed its target they wait, so a reduction storm never buys them again and again."""


class Fitted(NamedTuple, Generic[MessageT]):
    """The messages a call sends, and how many of the first are what the previous call sent."""

    messages: list[MessageT]
    """The messages the model should see."""
    previous: int | None
    """How many of the first messages are, unchanged, all that the previous call of this
    conversation sent: where its prompt cache ends (``None`` without a previous call, after a
    re-sync or when this call changed what the previous one sent)."""


ResultCallback = Callable[[ContextResult], object]
Fingerprint = Callable[[object], str]


def _slid(before: Sequence[str], now: Sequence[str]) -> bool:
    """Whether a history is the previous one less some messages at its start, with new ones at
    its end: the mark of a sliding window kept in front of the policy."""
    if not before or not now or now[0] not in before:
        return False
    start = before.index(now[0])
    kept = len(before) - start
    return start > 0 and len(now) > kept and list(now[:kept]) == list(before[start:])


def fingerprint(message: object) -> str:
    """A message's fingerprint: its own id where its shape has one (a LangChain message, a
    Responses item), else a hash of its canonical JSON (framework objects through their own JSON).
    """
    own = message.get("id") if isinstance(message, Mapping) else getattr(message, "id", None)
    if isinstance(own, str) and own:
        return f"id:{own}"
    data = message if isinstance(message, Mapping) else encode_messages([message])[0][0]
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return "h:" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(slots=True)
class Remembered:
    """What an integration remembers of one conversation."""

    seen: list[str]
    """The fingerprints of the history at the last call, in order."""
    refs: list[int | str]
    """The context sent at the last call: an index into the history, or the key of a made one."""
    made: dict[str, Any]
    """The messages contextwise made that are still in the context, by key."""
    wait_chars: int | None = None
    """After a reduction that missed its target: the characters to reach before reducing again."""
    wait_tokens: int | None = None
    """The same, in tokens."""
    sent_tokens: int | None = None
    """The estimated tokens of the whole prompt sent at the last call (with a counter)."""
    version: int = 0
    """The store's version of this value (0 when it was never stored)."""
    size: int = 0
    """An estimate of the bytes it holds in memory."""

    def to_json(self) -> dict[str, Any]:
        """The value a store keeps."""
        keys = list(self.made)
        values, _ = encode_messages([self.made[key] for key in keys]) if keys else ([], [])
        return {
            "seen": self.seen,
            "refs": self.refs,
            "made": dict(zip(keys, values, strict=True)),
            "wait_chars": self.wait_chars,
            "wait_tokens": self.wait_tokens,
            "sent_tokens": self.sent_tokens,
        }

    @classmethod
    def from_json(cls, data: Any, version: int) -> Remembered:
        """Read a value a store kept."""
        made = {str(key): decode_message(value) for key, value in data["made"].items()}
        remembered = cls(
            seen=[str(item) for item in data["seen"]],
            refs=[item if isinstance(item, int) else str(item) for item in data["refs"]],
            made=made,
            wait_chars=data.get("wait_chars"),
            wait_tokens=data.get("wait_tokens"),
            sent_tokens=data.get("sent_tokens"),
            version=version,
        )
        remembered.size = remembered.estimate_size()
        return remembered

    def estimate_size(self) -> int:
        """The bytes held: the fingerprints, the references and the made messages' JSON."""
        made = len(json.dumps(self.to_json()["made"])) if self.made else 0
        return 200 + sum(len(item) + 50 for item in self.seen) + 30 * len(self.refs) + made


@dataclass(slots=True)
class _Plan:
    """What one call sends the policy, and where each of its messages comes from."""

    key: str | None
    status: ConversationStatus
    history: Sequence[Any]
    seen: list[str] = field(default_factory=list)
    candidate: list[Any] = field(default_factory=list)
    sources: list[int | str] = field(default_factory=list)
    previous: Remembered | None = None
    error_code: str | None = None
    pinned: Sequence[Any] = ()
    offset_tokens: int = 0
    """The provider's count of the previous prompt minus its estimate (0 when unknown)."""
    waiting: bool = False
    """Whether the paid steps wait: the last reduction missed its target."""
    held_back: bool = False
    """Whether the result comes from a run without the paid steps."""
    overflow: Overflow | None = None
    """The provider's refusal that this call reduces again for (reactive compaction)."""
    runner: PolicyRunner | None = None
    """The runner of this call when it is not the bound one (the retry after a refusal)."""
    deferred: bool = False
    forced: bool = False


OWN_OPTIONS: Final = frozenset(IntegrationOptions.__annotations__) - frozenset(
    RunnerOptions.__annotations__
)
"""The options of :class:`~contextwise.integrations.IntegrationOptions` that are not the
runner's."""


def conversation_of(
    policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
    options: Mapping[str, Any],
    fingerprint: Fingerprint = fingerprint,
) -> Conversation:
    """The conversation of an integration built with ``options``: its own options are taken
    out, and the others bind the runner; ``fingerprint`` is the framework's, where it differs."""
    own = {key: value for key, value in options.items() if key in OWN_OPTIONS}
    return Conversation(
        policy,
        own.get("fragment_id", "history"),
        own.get("on_result"),
        {key: value for key, value in options.items() if key not in OWN_OPTIONS},
        store=own.get("store"),
        ttl=own.get("ttl"),
        max_memory_bytes=own.get("max_memory_bytes", DEFAULT_MAX_MEMORY_BYTES),
        fingerprint=fingerprint,
    )


class Conversation:
    """A runner applied to a conversation held as the fragment ``fragment_id``, remembering its
    reductions per conversation key.

    Raises:
        PolicyConfigurationError: When the options do not bind, or a step works on another
            fragment (``unknown_fragment``) or on a text field (``field_mismatch``).
        InvalidValueError: When ``fragment_id`` is blank, or ``ttl`` or ``max_memory_bytes`` is
            not a positive number.
        InvalidTypeError: When ``on_result`` is not callable, or ``store`` cannot keep
            conversations.
    """

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        fragment_id: str,
        on_result: ResultCallback | None,
        options: Mapping[str, Any],
        *,
        store: ConversationStore | None = None,
        ttl: object | None = None,
        max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
        fingerprint: Fingerprint = fingerprint,
    ) -> None:
        _check_fragment_id(fragment_id)
        if on_result is not None and not callable(on_result):
            raise InvalidTypeError(
                "not_callable", name="on_result", type_name=type(on_result).__name__
            )
        if store is not None:
            check_store(store, [ConversationStore], "invalid_conversation_store")
        if (
            isinstance(max_memory_bytes, bool)
            or not isinstance(max_memory_bytes, int)
            or max_memory_bytes <= 0
        ):
            raise InvalidValueError(
                "out_of_range",
                field="max_memory_bytes",
                constraint="an integer above 0",
                value=short_repr(max_memory_bytes),
            )
        # A reduce policy without limits is accepted here: it acts on a provider's overflow.
        self.runner = as_runner(policy, options, defaults=INTEGRATION_DEFAULTS, can_idle=True)
        check_fragments(self.runner.policy, [MessagesFragment(fragment_id, messages=[])])
        self.fragment_id = fragment_id
        self.on_result = on_result
        self.store = store
        self.ttl = check_ttl(ttl)
        self.max_memory_bytes = max_memory_bytes
        self._fingerprint = fingerprint
        self._warned_window = False
        self._memory: OrderedDict[str, Remembered] = OrderedDict()
        # The sync face may run in several threads at once (LangChain's ``batch`` runs a thread
        # pool), and the async face on several event loops: the memory is shared between them.
        self._lock = threading.Lock()
        self._memory_bytes = 0
        policy_ = self.runner.policy
        self._gap_chars = _gap(policy_.trigger_chars, policy_.target_input_chars)
        self._gap_tokens = _gap(policy_.trigger_tokens, policy_.target_input_tokens)
        self._paid = any(step.kind in PAID_KINDS for step in policy_.steps)
        self._delegated: frozenset[str] = frozenset()
        self._delegated_steps: tuple[str, ...] = ()

    def delegate(self, kind: str, step_ids: Sequence[str]) -> None:
        """Leave the steps of a kind to the provider (provider-side editing): they no longer run
        here, except in the retry after a refusal, and the report names them."""
        self._delegated = frozenset({kind})
        self._delegated_steps = tuple(step_ids)
        kinds = PAID_KINDS - self._delegated
        self._paid = any(step.kind in kinds for step in self.runner.policy.steps)

    @property
    def memory_bytes(self) -> int:
        """An estimate of the bytes the in-process memory holds."""
        return self._memory_bytes

    # --- the two faces ---------------------------------------------------------------------------

    def fit(
        self,
        messages: Sequence[MessageT],
        key: str | None = None,
        *,
        pinned: Sequence[str | Mapping[str, Any]] = (),
        usage: int | None = None,
        overflow: Overflow | None = None,
    ) -> Fitted[MessageT]:
        """Return the messages the model should see, and where the previous call's prompt ends
        (for cache breakpoints); an async ``on_result`` is awaited on a private event loop, like
        an async compressor.

        ``pinned`` holds what the prompt holds besides the messages, which counts against the
        limits and which no step removes: a text (a system prompt, instructions), a message (a
        mapping with a ``role``, or a framework message object), or a tool or schema definition
        (any other mapping, measured by its canonical JSON). ``usage`` is the provider's count of
        the input tokens of this conversation's previous call, when the framework reports it.
        With ``overflow`` (the provider refused the last attempt as too long), the policy reduces
        to the refusal's target whatever its own limits, and ``overflow.report`` receives the
        report.
        """
        return run_sync(self._fit(messages, key, pinned, usage, overflow))

    async def afit(
        self,
        messages: Sequence[MessageT],
        key: str | None = None,
        *,
        pinned: Sequence[str | Mapping[str, Any]] = (),
        usage: int | None = None,
        overflow: Overflow | None = None,
    ) -> Fitted[MessageT]:
        """:meth:`fit`, awaiting async compressors and callbacks; the store's calls run in a worker
        thread."""
        return await run_async(self._fit(messages, key, pinned, usage, overflow))

    # --- one call --------------------------------------------------------------------------------

    def _fit(
        self,
        messages: Sequence[MessageT],
        key: str | None,
        pinned: Sequence[Any],
        usage: int | None,
        overflow: Overflow | None,
    ) -> Effects[Fitted[MessageT]]:
        """One call, whichever face drives it: the store's calls are blocking effects, and
        ``on_result`` an effect whose awaitable the driver awaits."""
        loaded = yield from self._load(key)
        plan = self._plan(messages, key, loaded, pinned, usage)
        self._force(plan, overflow)
        result = yield from self._run(plan)
        remembered = self._remembered(plan, result)
        error_code = plan.error_code
        if remembered is not None and plan.key is not None:
            error_code = yield from self._save(plan.key, remembered)
        result = self._reported(plan, result, error_code)
        if self.on_result is not None:
            yield from call(self.on_result, result)
        return Fitted(self._messages(result), _kept(plan, remembered, error_code))

    def _force(self, plan: _Plan, overflow: Overflow | None) -> None:
        """After a refusal: the call runs every step, with the refusal's target."""
        if overflow is not None:
            plan.overflow, plan.waiting = overflow, False
            plan.runner = overflow.runner(self.runner, plan.candidate, plan.pinned)

    def _load(self, key: str | None) -> Effects[Remembered | str | None]:
        """What is remembered under a key: from this process, else from the store (``None``
        when nothing); a store error's code when the store failed."""
        if key is None:
            return None
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
        if found is not None or self.store is None:
            return found
        try:
            stored = yield from call_blocking(self.store.load_conversation, key, ttl=self.ttl)
            return None if stored is None else Remembered.from_json(stored[1], stored[0])
        except ContextwiseError as error:
            return error.code
        except Exception:  # noqa: BLE001 - a broken store never ends the agent's run
            return "session_store_failed"

    def _plan(
        self,
        history: Sequence[Any],
        key: str | None,
        loaded: Remembered | str | None,
        pinned: Sequence[Any] = (),
        usage: int | None = None,
    ) -> _Plan:
        if not isinstance(history, Sequence) or isinstance(history, str):
            raise InvalidTypeError(
                "not_a_message_list", name="messages", type_name=type(history).__name__
            )
        if key is None or isinstance(loaded, str):
            status: ConversationStatus = "stateless" if key is None else "fallback"
            plan = _Plan(
                key,
                status,
                history,
                error_code=loaded if isinstance(loaded, str) else None,
                pinned=pinned,
            )
            plan.candidate = list(history)
            return plan
        seen = [self._fingerprint(message) for message in history]
        previous = loaded
        plan = _Plan(key, "resynced", history, seen=seen, previous=previous, pinned=pinned)
        if previous is not None and seen[: len(previous.seen)] == previous.seen:
            plan.status = "extended"
            plan.candidate = [
                previous.made[ref] if isinstance(ref, str) else history[ref]
                for ref in previous.refs
            ] + list(history[len(previous.seen) :])
            plan.sources = [*previous.refs, *range(len(previous.seen), len(history))]
            plan.waiting = previous.wait_chars is not None or previous.wait_tokens is not None
            if usage is not None and previous.sent_tokens is not None:
                plan.offset_tokens = _input_tokens(usage) - previous.sent_tokens
        else:
            plan.candidate = list(history)
            plan.sources = list(range(len(history)))
            if previous is not None and _slid(previous.seen, seen):
                self._warn_window()
        return plan

    def _warn_window(self) -> None:
        """Warn once that something in front of the policy keeps a sliding window of the
        history: each call then starts again from the whole (windowed) history."""
        if self._warned_window:
            return
        self._warned_window = True
        warnings.warn(
            "contextwise: the history lost messages at its start since the last call while its "
            "end grew: a sliding window in front of the policy (pydantic-ai's ProcessHistory "
            "keep-last, the Agents SDK's SessionSettings(limit), a trimmed message list) makes "
            "every call start again from the whole history, so reductions are not remembered "
            "and the prompt cache breaks. Let the policy do the trimming instead.",
            UserWarning,
            stacklevel=4,
        )

    def _run(self, plan: _Plan) -> Effects[ContextResult]:
        """Run the policy on the plan's candidate. While the paid steps wait, the others run
        first; the paid steps run too when the context grew by the gap since the reduction that
        missed its target, or when the others cannot bring the prompt under the trigger."""
        if not plan.waiting:
            return (yield from self._core(plan, frozenset()))
        result: ContextResult = yield from self._core(plan, PAID_KINDS)
        report = result.report
        if not self._grown(plan, report) and not self._over_trigger(report):
            plan.held_back = True
            plan.deferred = report.selection is not None
            return result
        plan.forced = not self._grown(plan, report)
        return (yield from self._core(plan, frozenset()))

    def _core(self, plan: _Plan, held_back: frozenset[str]) -> Effects[ContextResult]:
        if plan.overflow is None:
            # The provider applies the delegated steps; after its refusal, every step runs here.
            held_back |= self._delegated
        return runner_core(
            plan.runner or self.runner,
            [MessagesFragment(self.fragment_id, messages=plan.candidate)],
            pinned=plan.pinned,
            offset_tokens=plan.offset_tokens,
            held_back=held_back,
        )

    def _grown(self, plan: _Plan, report: ContextProcessingReport) -> bool:
        """Whether the prompt grew by the gap between trigger and target since the reduction
        that missed its target."""
        previous = plan.previous
        assert previous is not None
        if previous.wait_chars is not None and report.before_chars >= previous.wait_chars:
            return True
        tokens = report.tokens
        return (
            previous.wait_tokens is not None
            and tokens is not None
            and tokens.before >= previous.wait_tokens
        )

    def _over_trigger(self, report: ContextProcessingReport) -> bool:
        """Whether the prompt stays above a trigger (or the budget) after the run."""
        limits = limits_of(self.runner)
        tokens = None if report.tokens is None else report.tokens.after
        return limits.chars_over(report.after_chars) or limits.tokens_over(tokens)

    def _remembered(self, plan: _Plan, result: ContextResult) -> Remembered | None:
        """What to remember after a call (``None`` without a key or after a fallback)."""
        if plan.key is None or plan.status == "fallback":
            return None
        fragment = result.fragment(self.fragment_id)
        sent = fragment.messages if isinstance(fragment, MessagesFragment) else ()
        where = dict(zip(map(id, plan.candidate), plan.sources, strict=True))
        previous_made = plan.previous.made if plan.previous is not None else {}
        refs: list[int | str] = []
        made: dict[str, Any] = {}
        counter = 0
        for message in sent:
            source = where.get(id(message))
            if source is None:
                while f"m{counter}" in previous_made or f"m{counter}" in made:
                    counter += 1
                source = f"m{counter}"
            if isinstance(source, str):
                made[source] = previous_made.get(source, message)
            refs.append(source)
        remembered = Remembered(plan.seen, refs, made)
        if plan.previous is not None:
            remembered.version = plan.previous.version
        if result.report.tokens is not None:
            remembered.sent_tokens = result.report.tokens.after - plan.offset_tokens
        self._set_wait(remembered, result, plan)
        remembered.size = remembered.estimate_size()
        return remembered

    def _set_wait(self, remembered: Remembered, result: ContextResult, plan: _Plan) -> None:
        report = result.report
        acted = any(change.status == "applied" for change in report.changes)
        if not self._paid:
            return
        if plan.held_back and plan.previous is not None:
            # The paid steps were held back: the wait goes on.
            remembered.wait_chars = plan.previous.wait_chars
            remembered.wait_tokens = plan.previous.wait_tokens
        elif acted and not report.target_met:
            if self._gap_chars is not None:
                remembered.wait_chars = report.after_chars + self._gap_chars
            if report.tokens is not None and self._gap_tokens is not None:
                remembered.wait_tokens = report.tokens.after + self._gap_tokens

    def _reported(
        self, plan: _Plan, result: ContextResult, error_code: str | None
    ) -> ContextResult:
        """The result with the conversation's report (given to ``overflow.report`` too)."""
        conversation = ConversationReport(
            key=plan.key,
            status="fallback" if error_code is not None else plan.status,
            deferred=plan.deferred,
            forced=plan.forced,
            error_code=error_code,
            overflow=plan.overflow is not None,
            overflow_limit=None if plan.overflow is None else plan.overflow.refusal.limit,
            overflow_sent=None if plan.overflow is None else plan.overflow.refusal.sent,
            delegated_steps=() if plan.overflow is not None else self._delegated_steps,
        )
        report = result.report.model_copy(update={"conversation": conversation})
        if plan.overflow is not None:
            plan.overflow.report = report
        return ContextResult(result.fragments, report, result.removed)

    def _save(self, key: str, remembered: Remembered) -> Effects[str | None]:
        """Keep a conversation's memory in the store and in this process; a store error's code
        when the store failed (the process forgets the key, so the next call re-syncs)."""
        if self.store is not None:
            try:
                remembered.version = yield from call_blocking(
                    self.store.save_conversation,
                    key,
                    remembered.to_json(),
                    remembered.version,
                    ttl=self.ttl,
                )
            except ContextwiseError as error:
                self._forget(key)
                return error.code
            except Exception:  # noqa: BLE001 - a broken store never ends the agent's run
                self._forget(key)
                return "session_store_failed"
        with self._lock:
            self._drop(key)
            self._memory[key] = remembered
            self._memory_bytes += remembered.size
            while self._memory_bytes > self.max_memory_bytes and len(self._memory) > 1:
                _, oldest = self._memory.popitem(last=False)
                self._memory_bytes -= oldest.size
        return None

    def _forget(self, key: str) -> None:
        """Drop a key from this process's memory."""
        with self._lock:
            self._drop(key)

    def _drop(self, key: str) -> None:
        """Drop a key from this process's memory; the caller holds the lock."""
        old = self._memory.pop(key, None)
        if old is not None:
            self._memory_bytes -= old.size

    def _messages(self, result: ContextResult) -> list[MessageT]:
        fragment = result.fragment(self.fragment_id)
        messages = fragment.messages if isinstance(fragment, MessagesFragment) else ()
        return cast(list[MessageT], list(messages))


def _kept(plan: _Plan, remembered: Remembered | None, error_code: str | None) -> int | None:
    """How many of the first messages sent are all that the previous call sent, unchanged."""
    previous = plan.previous
    if (
        previous is None
        or remembered is None
        or error_code is not None
        or plan.status != "extended"
        or remembered.refs[: len(previous.refs)] != previous.refs
    ):
        return None
    return len(previous.refs)


def _gap(trigger: int | None, target: int | None) -> int | None:
    """How much a context must grow after a reduction that missed its target before the next:
    the difference between trigger and target (at least 1); ``None`` without such limits (a
    budget alone is a hard limit: nothing waits)."""
    if trigger is None and target is None:
        return None
    if trigger is None or target is None:
        return 1
    return max(1, trigger - target)


def _input_tokens(usage: object) -> int:
    """The input tokens of a provider's count: a number, or a usage with ``input_tokens``."""
    if isinstance(usage, int) and not isinstance(usage, bool):
        return usage
    count = getattr(usage, "input_tokens", None)
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    raise InvalidTypeError("not_a_number", name="usage", type_name=type(usage).__name__)


def _check_fragment_id(fragment_id: object) -> None:
    if not isinstance(fragment_id, str):
        raise InvalidTypeError(
            "not_a_string", name="fragment_id", type_name=type(fragment_id).__name__
        )
    if not fragment_id.strip():
        raise InvalidValueError("blank_fragment_id", value=repr(fragment_id))
