"""ContextSession: a conversation that compacts itself, stores every reduction and archives what
left the context.

Each face (``add`` / ``aadd``, ``context`` / ``acontext``...) drives one generator core. The core
asks for the store's calls and the policy's calls (compressors, apps, a decision provider) as
effects; the sync driver runs them on the caller's thread, the async driver awaits them and runs
the store's blocking calls in a worker thread.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Unpack

from contextwise._effects import Effects, call_blocking, run_async, run_sync
from contextwise._translation import short_text
from contextwise.accounting import (
    UsageKind,
    UsageRecord,
    UsageSummary,
    price_usage,
    summarize_usage,
)
from contextwise.counting import ModelCounter, counter_key
from contextwise.errors import (
    ContextwiseError,
    InvalidTypeError,
    InvalidValueError,
    SessionStoreError,
)
from contextwise.policy import (
    ContextPolicy,
    ContextResult,
    MessagesFragment,
    PolicyRunner,
    RunnerOptions,
)
from contextwise.policy._api import (
    KnownSizes,
    Measure,
    as_runner,
    check_fragments,
    measure_of,
    runner_core,
)
from contextwise.session._codec import decode_message, encode_messages
from contextwise.session._planner import (
    Cache,
    plain_roles,
    plan_change,
    restored_positions,
)
from contextwise.session._records import (
    MAX_ID,
    AddResult,
    ChangeEntry,
    IdempotencyKey,
    SessionChange,
    SessionSnapshot,
    SessionStore,
    StateStore,
    StoredArchiveItem,
    StoredMessage,
    UsageStore,
    check_change_id,
    check_idempotency_key,
    check_session_id,
    check_storable,
    check_store,
)


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    """A message that a step of the session's policy took out of the context.

    Examples:
        >>> from contextwise import ArchivedMessage
        >>> from datetime import datetime, timezone
        >>> item = ArchivedMessage({"role": "user", "content": "Hi"}, 1, "trim-history",
        ...     datetime(2026, 1, 1, tzinfo=timezone.utc))
        >>> item.change_id, item.step
        (1, 'trim-history')
    """

    message: Any
    """The message, as it was added (a dict, or a LangChain or pydantic-ai message)."""

    change_id: int
    """The change that took it out; :meth:`ContextSession.restore` takes this id."""

    step: str
    """The id of the policy step that took it out (``restore`` for a summary that a restore
    took out)."""

    at: datetime
    """When it was taken out, in UTC."""


class ContextSession:
    """A conversation that compacts itself: the policy keeps its context small, the store keeps
    everything.

    The session's messages are the policy's fragment ``fragment_id``. :meth:`add` appends
    messages; :meth:`context` applies the policy and stores its reduction, so the next call
    starts from the reduced context; what a step took out goes to the archive, where
    :meth:`archive` reads it and :meth:`restore` puts it back. Each message is measured once,
    when it is added, and a call never reads the whole history: the session keeps the context it
    last read and asks the store only for what changed since, so a call costs the new messages,
    the removed ones and the current context, which the policy keeps small.

    Every write is one transaction. A reduction is stored only if no other writer stored one
    since the session read the context; otherwise :meth:`context` raises
    :class:`~contextwise.errors.SessionConflictError` and stores nothing. A compressor or app
    that fails leaves the session unchanged (the report records the failure).

    The policy runs through a :class:`~contextwise.policy.PolicyRunner`: give one, or give the
    policy and the runner options, which are bound once, here.

    Args:
        policy: The policy's runner, or the context policy (or a mapping in the shape of a
            policy file) to bind with ``options``.
        store: Where the session lives: :class:`MemoryStore`, :class:`SQLiteStore` or
            :class:`SQLAlchemyStore`, or a store of your own that implements
            :class:`SessionStore` and :class:`UsageStore` (and :class:`StateStore` with a
            calibrated counter).
        session_id: The session's id in the store.
        fragment_id: The id of the fragment that the policy's steps name for the conversation.

    Raises:
        InvalidTypeError: When the store is not a session store (code
            ``invalid_session_store``), when it lacks the methods of a usage ledger
            (:class:`UsageStore`) or, with a calibrated counter, of a state store
            (:class:`StateStore`) (code ``incomplete_store``, naming them), or when an argument
            has the wrong type.
        InvalidValueError: When the session id is blank (code ``blank_session_id``), longer
            than 255 characters or holds a NUL character or a lone surrogate (code
            ``invalid_session_id``): every store refuses the same ids. A step id or the counter's
            id with such a character is refused too (code ``unstorable_text``).
        PolicyConfigurationError: When the policy does not fit the session: a step names
            another fragment, a compressor or app is missing, a token limit or a budget has no
            counter, an option is unknown (code ``unknown_runner_option``), or options come with
            a runner (code ``runner_with_options``).

    Examples:
        >>> from contextwise.session import ContextSession, MemoryStore
        >>> policy = {"mode": "reduce", "target_input_chars": 12, "steps": [
        ...     {"id": "trim", "kind": "trim", "fragment_id": "history",
        ...      "grouping": {"kind": "message"}}]}
        >>> session = ContextSession(policy, MemoryStore(), "chat-1")
        >>> _ = session.add([{"role": "user", "content": "Hello!"},
        ...                  {"role": "assistant", "content": "Hi there."}])
        >>> [m["content"] for m in session.context().fragment("history").messages]
        ['Hi there.']
        >>> [(item.message["content"], item.step) for item in session.archive()]
        [('Hello!', 'trim')]
    """

    def __init__(
        self,
        policy: PolicyRunner | ContextPolicy | Mapping[str, Any],
        store: SessionStore,
        session_id: str,
        *,
        fragment_id: str = "history",
        **options: Unpack[RunnerOptions],
    ) -> None:
        check_session_id(session_id)
        self._runner = as_runner(policy, options)
        needs: list[type] = [SessionStore, UsageStore]
        if isinstance(self._runner.counter, ModelCounter):
            needs.append(StateStore)
        check_store(store, needs, "invalid_session_store")
        check_fragments(self._runner.policy, [MessagesFragment(fragment_id, messages=[])])
        # What the stores keep as text beside the messages: every store must take it alike.
        for index, step in enumerate(self._runner.policy.steps):
            check_storable(step.id, f"steps[{index}].id")
        if self._runner.counter is not None:
            check_storable(str(self._runner.counter.id), "counter.id")
        self._measure_with: Measure = measure_of(self._runner)
        self._init_counts()
        self._store = store
        self._session_id = session_id
        self._fragment_id = fragment_id
        self._version: int | None = None
        self._last_item = 0
        self._cache = self._empty()

    @property
    def runner(self) -> PolicyRunner:
        """The runner of the session's policy."""
        return self._runner

    @property
    def session_id(self) -> str:
        """The session's id in the store."""
        return self._session_id

    @property
    def store(self) -> SessionStore:
        """The store the session lives in."""
        return self._store

    # --- faces ----------------------------------------------------------------------------------

    def add(self, messages: Sequence[Any], *, idempotency_key: str | None = None) -> AddResult:
        """Append messages to the session, in one transaction.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> session.add([{"role": "user", "content": "Hello!"}], idempotency_key="turn-1")
            AddResult(positions=(1,), version=0, duplicate=False)
            >>> session.add([{"role": "user", "content": "Hello!"}], idempotency_key="turn-1")
            AddResult(positions=(1,), version=0, duplicate=True)
            >>> len(session.messages())
            1
        """
        return run_sync(self._add(messages, idempotency_key, self._store))

    async def aadd(
        self, messages: Sequence[Any], *, idempotency_key: str | None = None
    ) -> AddResult:
        """Append messages to the session, in one transaction.

        Each message is encoded as JSON and measured (characters, and tokens with a counter)
        once, here. When this returns, the messages are stored: a process killed afterwards
        loses none of them.

        An add that failed midway (a timeout, a lost connection, a killed process) may or may
        not have stored its messages. Give each add an ``idempotency_key`` and retry with the
        same key: the key is stored in the same transaction as the messages, so a retry of an
        add that was stored stores nothing and returns the first add's result, marked
        ``duplicate``, even after a reduction archived those messages or another writer
        changed the session. A store keeps a key for its ``idempotency_window`` (one day by
        default).

        A cancelled ``aadd`` whose write has begun lets the write finish in its worker thread
        (a transaction cannot be stopped midway), waits for it, then raises
        ``CancelledError``: the messages may be stored, and a retry with the same key stores
        them once.

        Args:
            messages: Dicts that JSON can encode (OpenAI or Anthropic shape), LangChain
                messages or pydantic-ai messages; framework messages are stored through their
                framework's own JSON.
            idempotency_key: A key unique to this add within the session, such as the id of the
                turn or request that produced the messages; ``None`` stores them every time.

        Returns:
            The numbers the messages took in the session, the session's version, and whether
            the add was a retry of one already stored.

        Raises:
            InvalidTypeError: When ``messages`` is not a list, or a message is none of those
                (code ``unsupported_message_object``).
            InvalidValueError: When JSON cannot encode a message (code ``message_not_json``),
                a message is nested too deep (code ``message_too_deep``) or malformed, the key
                is invalid (code ``invalid_idempotency_key``), or the key was used for other
                messages (code ``idempotency_key_reused``).
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> result = asyncio.run(session.aadd([{"role": "user", "content": "Hello!"}]))
            >>> result.positions, result.duplicate
            ((1,), False)
        """
        return await run_async(self._add(messages, idempotency_key, self._store))

    def context(self, *, pinned: Sequence[str | Mapping[str, Any]] = ()) -> ContextResult:
        """Apply the policy to the session's context and store the reduction.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> _ = session.add([{"role": "user", "content": "Hello!"}])
            >>> session.context().report.before_chars
            6
        """
        return run_sync(self._context(self._store, pinned))

    async def acontext(self, *, pinned: Sequence[str | Mapping[str, Any]] = ()) -> ContextResult:
        """Apply the policy to the session's context and store the reduction.

        The policy runs on the context as the last stored reduction left it, plus the messages
        added since. When it changes the context (``reduce`` mode), the new context and the
        archive entries are stored in one transaction, so the next call starts from them.

        The pinned parts are what the model call holds besides the session's messages: they
        are given at each call, since a system prompt or a tool list may change between calls,
        count against the triggers and targets, are never stored and are never removed.

        Args:
            pinned: The parts of the prompt besides the messages: a text (a system prompt,
                instructions), a message (a mapping with a ``role``), or a tool or schema
                definition (any other mapping, measured by its canonical JSON).

        Returns:
            The result of the policy: the context for the next model call in the fragment
            ``fragment_id``, the report, and what was removed.

        Raises:
            SessionConflictError: When another writer stored a change of this session since it
                was read (code ``session_conflict``); nothing was stored, and the next call
                reads the session again.
            ContextOverflowError: In ``validate`` mode, when the context is over a trigger.
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> _ = session.add([{"role": "user", "content": "Hello!"}])
            >>> asyncio.run(session.acontext()).report.before_chars
            6
        """
        return await run_async(self._context(self._store, pinned))

    def messages(self) -> list[Any]:
        """Return the messages of the session's current context.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> session.messages()
            []
        """
        return run_sync(self._messages(self._store))

    async def amessages(self) -> list[Any]:
        """Return the messages of the session's current context.

        They are the messages of the last stored reduction, followed by those added since, in
        order; the policy is not applied.

        Returns:
            The messages, as they were added (dicts, or LangChain or pydantic-ai messages).

        Raises:
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> asyncio.run(session.amessages())
            []
        """
        return await run_async(self._messages(self._store))

    def archive(self) -> list[ArchivedMessage]:
        """Return every message that a step took out of the context, in order.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> ContextSession({"mode": "audit"}, MemoryStore(), "chat-1").archive()
            []
        """
        return run_sync(self._archive(self._store))

    async def aarchive(self) -> list[ArchivedMessage]:
        """Return every message that a step took out of the context, in order.

        The messages come change by change, and within a change in their context order.
        Messages that :meth:`restore` put back are no longer in the archive.

        Returns:
            The archived messages, each with its change id, its step and its time.

        Raises:
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> asyncio.run(ContextSession({"mode": "audit"}, MemoryStore(), "c").aarchive())
            []
        """
        return await run_async(self._archive(self._store))

    def restore(self, change_id: int) -> list[Any]:
        """Put the messages that a change took out back into the context.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> policy = {"mode": "reduce", "target_input_chars": 5, "steps": [
            ...     {"id": "trim", "kind": "trim", "fragment_id": "history",
            ...      "grouping": {"kind": "message"}}]}
            >>> session = ContextSession(policy, MemoryStore(), "chat-1")
            >>> _ = session.add([{"role": "user", "content": "Hello"},
            ...                  {"role": "assistant", "content": "Hi"}])
            >>> _ = session.context()
            >>> session.restore(session.archive()[0].change_id)
            [{'role': 'user', 'content': 'Hello'}]
            >>> len(session.messages()), session.archive()
            (2, [])
        """
        return run_sync(self._restore(change_id, self._store))

    async def arestore(self, change_id: int) -> list[Any]:
        """Put the messages that a change took out back into the context.

        The messages return to their places. Messages that the change created and that are
        still in the context (a summary) leave it for the archive, with the step ``restore``.
        The next :meth:`context` applies the policy again, so a context over its trigger is
        reduced again.

        Args:
            change_id: The ``change_id`` of an :class:`ArchivedMessage`.

        Returns:
            The messages put back, in context order.

        Raises:
            InvalidValueError: When the session has no such change with archived messages
                (code ``unknown_change``).
            SessionConflictError: When another writer changed the session meanwhile.
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> from contextwise import InvalidValueError
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> try:
            ...     asyncio.run(session.arestore(7))
            ... except InvalidValueError as err:
            ...     print(err.code)
            unknown_change
        """
        return await run_async(self._restore(change_id, self._store))

    # --- usage and calibration ----------------------------------------------------------------

    def record_usage(
        self,
        usage: Any,
        *,
        model: Any = None,
        kind: UsageKind = "model",
        step: int | None = None,
        request: Any = None,
    ) -> None:
        """Record what a model call spent in the session's ledger.

        Examples:
            >>> from contextwise import Usage
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> session.record_usage(Usage(input_tokens=1200, output_tokens=80), model="gpt-5")
            >>> session.usage().by_model["gpt-5"].usage.input_tokens
            1200
        """
        run_sync(self._record_usage(usage, model, kind, step, request, self._store))

    async def arecord_usage(
        self,
        usage: Any,
        *,
        model: Any = None,
        kind: UsageKind = "model",
        step: int | None = None,
        request: Any = None,
    ) -> None:
        """Record what a model call spent in the session's ledger.

        The usage is priced (:func:`~contextwise.price_usage`) and stored with the session.
        When the session counts with a calibrated counter
        (:meth:`~contextwise.CalibratedCounter.for_model`) and ``request`` is given, the counter
        also learns from the call, and its state is kept in the store for the next process.
        The summaries that the policy's compressors paid for are recorded by :meth:`context`
        themselves, as ``summarizer`` calls.

        Args:
            usage: The call's usage, or the provider's response
                (:func:`~contextwise.usage_from` reads it).
            model: The model: its name or a :class:`~contextwise.routing.ModelSpec`; the
                calibrated counter's model when omitted.
            kind: Who spent the tokens: ``model``, ``summarizer`` or ``router``.
            step: The harness step, when the harness counts them.
            request: The whole request that was sent (system, tools, messages), for the
                calibrated counter to learn from.

        Raises:
            InvalidTypeError: When the usage cannot be read (code ``unknown_usage_shape``).
            InvalidValueError: When ``kind`` is not a usage kind (code ``invalid_choice``).
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise import Usage
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> asyncio.run(session.arecord_usage(Usage(input_tokens=90), kind="router"))
            >>> asyncio.run(session.ausage()).by_kind["router"].calls
            1
        """
        await run_async(self._record_usage(usage, model, kind, step, request, self._store))

    def usage(self) -> UsageSummary:
        """Return the session's ledger: every call recorded, and the totals.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> ContextSession({"mode": "audit"}, MemoryStore(), "chat-1").usage().total.calls
            0
        """
        return run_sync(self._usage(self._store))

    async def ausage(self) -> UsageSummary:
        """Return the session's ledger: every call recorded, and the totals.

        Returns:
            The summary: the records in order, the total, and the totals per model and per
            kind (``model``, ``summarizer``, ``router``), with their prices.

        Raises:
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> asyncio.run(session.ausage()).total.calls
            0
        """
        return await run_async(self._usage(self._store))

    def _init_counts(self) -> None:
        """How stored counts are kept: a calibrated counter's session stores its base counter's
        counts (id and version) and calibrates them when reading, so they never go stale."""
        counter = self._runner.counter
        self._calibrated: ModelCounter | None = (
            counter if isinstance(counter, ModelCounter) else None
        )
        self._state_loaded = self._calibrated is None
        if self._calibrated is None:
            self._count_key = None if counter is None else counter_key(counter)
            self._count_with = self._measure_with
            return
        base = self._calibrated.base
        self._count_key = counter_key(base)
        self._count_with = measure_of(self._runner.replace(counter=base))

    def _calibrated_tokens(self, cache: Cache) -> list[int] | None:
        if self._calibrated is None or cache.tokens is None:
            return cache.tokens
        return list(map(self._calibrated.scale, cache.tokens))

    def _state_name(self) -> str:
        assert self._calibrated is not None
        return f"calibration:{self._calibrated.calibrated.base_key}"

    def _load_calibration(self, store: Any) -> Effects[None]:
        model = self._calibrated
        if model is not None:
            state = yield from call_blocking(store.load_state, self._state_name())
            found = (state or {}).get("models", {}).get(model.model, {})
            if found.get("observations", 0) > model.calibrated.observations(model.model):
                model.calibrated.load_state(state, models=[model.model])
        self._state_loaded = True

    def _record_usage(
        self, usage: Any, model: Any, kind: UsageKind, step: int | None, request: Any, store: Any
    ) -> Effects[None]:
        calibrated = self._calibrated
        if model is None and calibrated is not None:
            model = calibrated.model
        record = price_usage(usage, model=model, kind=kind, step=step)
        yield from call_blocking(store.add_usage, self._session_id, record.to_json())
        if request is not None and calibrated is not None and kind == "model":
            calibrated.observe(request, record.usage)
            state = calibrated.calibrated.state()
            yield from call_blocking(store.save_state, self._state_name(), state)

    def _record_spent(self, result: ContextResult, store: Any) -> Effects[None]:
        """Record what the compressors of a run paid for, as summarizer calls."""
        for change in result.report.changes:
            if change.usage is not None:
                record = price_usage(change.usage, model=change.usage_model, kind="summarizer")
                yield from call_blocking(store.add_usage, self._session_id, record.to_json())

    def _usage(self, store: Any) -> Effects[UsageSummary]:
        rows = yield from call_blocking(store.usage, self._session_id)
        return summarize_usage([_usage_record(row, self._session_id) for row in rows])

    # --- cores ----------------------------------------------------------------------------------

    def _add(
        self, messages: Sequence[Any], idempotency_key: str | None, store: Any
    ) -> Effects[AddResult]:
        if not isinstance(messages, list | tuple):
            raise InvalidTypeError(
                "not_a_message_list", name="messages", type_name=type(messages).__name__
            )
        key = None if idempotency_key is None else check_idempotency_key(idempotency_key)
        if not messages:
            yield from self._refresh(store)
            return AddResult((), self._version or 0)
        added = self._measure(messages)
        idempotency = None if key is None else IdempotencyKey(key, _digest(added.stored))
        result: AddResult = yield from call_blocking(
            store.append, self._session_id, added.stored, idempotency
        )
        if result.duplicate:
            return result
        if self._version is not None and result.positions[0] == self._last_item + 1:
            self._cache += added
            self._last_item = result.positions[-1]
        return result

    def _empty(self) -> Cache:
        return Cache([], [], [], None if self._runner.counter is None else [], [])

    def _measure(self, messages: Sequence[Any]) -> Cache:
        """Encode messages for the store and measure each once: characters, and tokens."""
        values, decoded = encode_messages(messages)
        profile = self._measure_with.profile(decoded)
        sizes = profile.sizes
        roles = profile.roles if profile.plain else None
        counter = self._runner.counter
        if counter is None:
            stored = [
                StoredMessage(0, 0, value, chars, None, None)
                for value, chars in zip(values, sizes, strict=True)
            ]
            return Cache(stored, decoded, sizes, None, roles)
        counter_id = self._count_key
        tokens = [self._count_with.one_message_tokens(message) for message in decoded]
        stored = [
            StoredMessage(0, 0, value, chars, count, counter_id)
            for value, chars, count in zip(values, sizes, tokens, strict=True)
        ]
        return Cache(stored, decoded, sizes, tokens, roles)

    def _refresh(self, store: Any) -> Effects[None]:
        if not self._state_loaded:
            yield from self._load_calibration(store)
        since = None if self._version is None else (self._version, self._last_item)
        snapshot: SessionSnapshot = yield from call_blocking(store.read, self._session_id, since)
        if snapshot.items or snapshot.complete:
            read = self._read(snapshot.items)
            self._cache = read if snapshot.complete else self._cache + read
        self._version, self._last_item = snapshot.version, snapshot.last_item

    def _read(self, items: list[StoredMessage]) -> Cache:
        """The cache of stored messages: decoded, with their tokens for this counter."""
        messages = [self._decode(item.data) for item in items]
        counter = self._runner.counter
        tokens: list[int] | None = None
        if counter is not None:
            counter_id = self._count_key
            tokens = [
                item.tokens
                if item.tokens is not None and item.counter_id == counter_id
                else self._count_with.one_message_tokens(message)
                for item, message in zip(items, messages, strict=True)
            ]
        roles = plain_roles(messages)
        return Cache(list(items), messages, [item.chars for item in items], tokens, roles)

    def _decode(self, data: Any) -> Any:
        """A stored message as it was added; one that its framework cannot read back is a
        damaged row."""
        try:
            return decode_message(data)
        except Exception as exc:
            raise SessionStoreError(
                "store_row_unreadable", session_id=self._session_id, detail=str(exc)[:200]
            ) from exc

    def _messages(self, store: Any) -> Effects[list[Any]]:
        yield from self._refresh(store)
        return list(self._cache.messages)

    def _context(
        self, store: Any, pinned: Sequence[str | Mapping[str, Any]] = ()
    ) -> Effects[ContextResult]:
        yield from self._refresh(store)
        cache = self._cache
        fragment = MessagesFragment(self._fragment_id, messages=cache.messages)
        tokens = self._calibrated_tokens(cache)
        known = KnownSizes(chars=cache.chars, tokens=tokens, roles=cache.roles)
        removed_by: dict[int, str] = {}
        result = yield from runner_core(
            self._runner, [fragment], {self._fragment_id: known}, removed_by, pinned=pinned
        )
        yield from self._record_spent(result, store)
        if self._runner.policy.mode != "reduce" or not any(
            change.status == "applied" for change in result.report.changes
        ):
            return result
        after = result.fragment(self._fragment_id)
        new_messages = after.messages if isinstance(after, MessagesFragment) else ()
        applied = [change.id for change in result.report.changes if change.status == "applied"]
        plan = plan_change(
            cache,
            new_messages,
            applied,
            removed_by,
            version=self._version or 0,
            last_item=self._last_item,
            measure=self._measure,
            at=datetime.now(UTC),
        )
        try:
            version, created = yield from call_blocking(store.commit, self._session_id, plan.change)
        except BaseException:
            self._version = None
            raise
        context = plan.context
        if created:
            placeholders = [item for entry in plan.change.entries for item in entry.created]
            stored_as = {id(item): new for item, new in zip(placeholders, created, strict=True)}
            stored = [stored_as.get(id(item), item) for item in context.stored]
            context = context.with_stored(stored)
        self._cache = context
        self._version = version
        return result

    def _archive(self, store: Any) -> Effects[list[ArchivedMessage]]:
        items = yield from call_blocking(store.archive, self._session_id)
        return [
            ArchivedMessage(self._decode(item.item.data), item.change_id, item.step, item.at)
            for item in items
        ]

    def _restore(self, change_id: int, store: Any) -> Effects[list[Any]]:
        check_change_id(change_id)
        yield from self._refresh(store)
        archived: list[int] = []
        created: list[int] = []
        if 0 < change_id <= MAX_ID:  # no store holds another id
            archived, created = yield from call_blocking(
                store.change_items, self._session_id, change_id
            )
        if not archived:
            raise InvalidValueError(
                "unknown_change", session_id=self._session_id, change_id=change_id
            )
        assert self._version is not None
        items: list[StoredArchiveItem] = yield from call_blocking(store.archive, self._session_id)
        back = [item.item for item in items if item.change_id == change_id]
        change = SessionChange(
            version=self._version,
            at=datetime.now(UTC),
            entries=[ChangeEntry("restore", archived=created)] if created else [],
            moved=restored_positions(self._cache.stored, back, set(created), self._last_item),
            restored=change_id,
        )
        try:
            yield from call_blocking(store.commit, self._session_id, change)
        finally:
            self._version = None
        yield from self._refresh(store)
        wanted = set(archived)
        cache = self._cache
        return [
            message
            for item, message in zip(cache.stored, cache.messages, strict=True)
            if item.item_id in wanted
        ]


def _digest(stored: Sequence[StoredMessage]) -> str:
    """The SHA-256 of the messages' JSON, keys sorted: what tells a retry from another add."""
    text = json.dumps(
        [item.data for item in stored], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _usage_record(row: Any, session_id: str) -> UsageRecord:
    """A usage record the store gave back; one that is not a record is a damaged row."""
    try:
        return UsageRecord.from_json(row)
    except (
        ContextwiseError,
        LookupError,
        TypeError,
        ValueError,
        AttributeError,
        ArithmeticError,  # decimal.InvalidOperation: a price that is not a number
        RecursionError,
    ) as exc:
        raise SessionStoreError(
            "store_row_unreadable",
            session_id=session_id,
            detail=f"{type(exc).__name__}: {short_text(exc)}",
        ) from exc
