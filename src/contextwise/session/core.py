"""ContextSession: a conversation that compacts itself, stores every reduction and archives what
left the context.

Each face (``add`` / ``aadd``, ``context`` / ``acontext``...) drives one generator core. The core
asks for the store's calls and the policy's calls (compressors, apps, a decision provider) as
effects; the sync driver runs them on the caller's thread, the async driver awaits them and runs
the store's blocking calls in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from operator import is_
from typing import Any

from contextwise._effects import Effects, call, run_async, run_sync
from contextwise.decision.schema import DecisionProvider
from contextwise.errors import InvalidTypeError, InvalidValueError
from contextwise.messages import layout_messages, message_text
from contextwise.policy.engine import AppMutation, Compressor, context_effects
from contextwise.policy.fragments import ContextResult, Fragment
from contextwise.policy.model import ContextPolicy, coerce_policy
from contextwise.policy.steps import KnownSizes, Measure
from contextwise.policy.validation import validate_context_policy
from contextwise.session.codec import decode_message, encode_messages
from contextwise.session.records import (
    ChangeEntry,
    SessionChange,
    SessionSnapshot,
    SessionStore,
    StoredMessage,
)
from contextwise.tokens import TokenCounter, as_token_counter


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    """A message that a step of the session's policy took out of the context.

    Examples:
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


@dataclass(slots=True)
class _Entry:
    """A message of the cached context: as stored, decoded, and its tokens for this counter."""

    stored: StoredMessage
    message: Any
    tokens: int | None


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

    Args:
        policy: The context policy, or a mapping in the shape of a policy file.
        store: Where the session lives: :class:`MemoryStore`, :class:`SQLiteStore` or
            :class:`SQLAlchemyStore`.
        session_id: The session's id in the store.
        fragment_id: The id of the fragment that the policy's steps name for the conversation.
        counter: A token counter, tokenizer or counting function, for token limits.
        compressors: The compressors by name, as the policy's compress steps name them.
        apps: The app mutations by name, as the policy's app steps name them.
        decision_provider: The decision provider of a ``model`` selection.
        step_timeout: The default maximum number of seconds that a compressor or app may take.

    Raises:
        InvalidTypeError: When the store is not a session store (code
            ``invalid_session_store``) or an argument has the wrong type.
        InvalidValueError: When the session id is blank (code ``blank_session_id``).
        PolicyConfigurationError: When the policy does not fit the session: a step names
            another fragment, a compressor or app is missing, or a token limit has no counter.

    Examples:
        >>> from contextwise.session import ContextSession, MemoryStore
        >>> policy = {"mode": "reduce", "target_input_chars": 12, "steps": [
        ...     {"id": "trim", "kind": "trim", "fragment_id": "history",
        ...      "grouping": {"kind": "message"}}]}
        >>> session = ContextSession(policy, MemoryStore(), "chat-1")
        >>> session.add([{"role": "user", "content": "Hello!"},
        ...              {"role": "assistant", "content": "Hi there."}])
        >>> [m["content"] for m in session.context().fragment("history").messages]
        ['Hi there.']
        >>> [(item.message["content"], item.step) for item in session.archive()]
        [('Hello!', 'trim')]
    """

    def __init__(
        self,
        policy: ContextPolicy | Mapping[str, Any],
        store: SessionStore,
        session_id: str,
        *,
        fragment_id: str = "history",
        counter: object | None = None,
        compressors: Mapping[str, Compressor] | None = None,
        apps: Mapping[str, AppMutation] | None = None,
        decision_provider: DecisionProvider | None = None,
        step_timeout: float | None = None,
    ) -> None:
        if not isinstance(session_id, str):
            raise InvalidTypeError(
                "not_a_string", name="session_id", type_name=type(session_id).__name__
            )
        if not session_id.strip():
            raise InvalidValueError("blank_session_id", value=repr(session_id))
        if not isinstance(store, SessionStore):
            raise InvalidTypeError("invalid_session_store", type_name=type(store).__name__)
        self._counter: TokenCounter | None = None if counter is None else as_token_counter(counter)
        self._policy = validate_context_policy(
            coerce_policy(policy),
            compressors or {},
            apps or {},
            counter=self._counter,
            fragments=[Fragment(fragment_id, messages=[])],
        )
        self._store = store
        self._session_id = session_id
        self._fragment_id = fragment_id
        self._options: dict[str, Any] = {
            "counter": self._counter,
            "compressors": compressors,
            "apps": apps,
            "decision_provider": decision_provider,
            "step_timeout": step_timeout,
        }
        self._version: int | None = None
        self._last_item = 0
        self._entries: list[_Entry] = []

    @property
    def session_id(self) -> str:
        """The session's id in the store."""
        return self._session_id

    @property
    def store(self) -> SessionStore:
        """The store the session lives in."""
        return self._store

    # --- faces ----------------------------------------------------------------------------------

    def add(self, messages: Sequence[Any]) -> None:
        """Append messages to the session, in one transaction.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> session.add([{"role": "user", "content": "Hello!"}])
            >>> len(session.messages())
            1
        """
        run_sync(self._add(messages, self._store))

    async def aadd(self, messages: Sequence[Any]) -> None:
        """Append messages to the session, in one transaction.

        Each message is encoded as JSON and measured (characters, and tokens with a counter)
        once, here. When this returns, the messages are stored: a process killed afterwards
        loses none of them.

        Args:
            messages: Dicts that JSON can encode (OpenAI or Anthropic shape), LangChain
                messages or pydantic-ai messages; framework messages are stored through their
                framework's own JSON.

        Raises:
            InvalidTypeError: When ``messages`` is not a list, or a message is none of those
                (code ``unsupported_message_object``).
            InvalidValueError: When JSON cannot encode a message (code ``message_not_json``) or
                a message is malformed.
            SessionStoreError: When the store cannot be used.

        Examples:
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> asyncio.run(session.aadd([{"role": "user", "content": "Hello!"}]))
            >>> len(session.messages())
            1
        """
        await run_async(self._add(messages, _Threaded(self._store)))

    def context(self) -> ContextResult:
        """Apply the policy to the session's context and store the reduction.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> session.add([{"role": "user", "content": "Hello!"}])
            >>> session.context().report.before_chars
            6
        """
        return run_sync(self._context(self._store))

    async def acontext(self) -> ContextResult:
        """Apply the policy to the session's context and store the reduction.

        The policy runs on the context as the last stored reduction left it, plus the messages
        added since. When it changes the context (``reduce`` mode), the new context and the
        archive entries are stored in one transaction, so the next call starts from them.

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
            >>> session.add([{"role": "user", "content": "Hello!"}])
            >>> asyncio.run(session.acontext()).report.before_chars
            6
        """
        return await run_async(self._context(_Threaded(self._store)))

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
        return await run_async(self._messages(_Threaded(self._store)))

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
        return await run_async(self._archive(_Threaded(self._store)))

    def restore(self, change_id: int) -> list[Any]:
        """Put the messages that a change took out back into the context.

        Examples:
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> policy = {"mode": "reduce", "target_input_chars": 5, "steps": [
            ...     {"id": "trim", "kind": "trim", "fragment_id": "history",
            ...      "grouping": {"kind": "message"}}]}
            >>> session = ContextSession(policy, MemoryStore(), "chat-1")
            >>> session.add([{"role": "user", "content": "Hello"},
            ...              {"role": "assistant", "content": "Hi"}])
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
            >>> import asyncio
            >>> from contextwise.session import ContextSession, MemoryStore
            >>> session = ContextSession({"mode": "audit"}, MemoryStore(), "chat-1")
            >>> try:
            ...     asyncio.run(session.arestore(7))
            ... except InvalidValueError as err:
            ...     print(err.code)
            unknown_change
        """
        return await run_async(self._restore(change_id, _Threaded(self._store)))

    # --- cores ----------------------------------------------------------------------------------

    def _add(self, messages: Sequence[Any], store: Any) -> Effects[None]:
        if not isinstance(messages, list | tuple):
            raise InvalidTypeError(
                "not_a_message_list", name="messages", type_name=type(messages).__name__
            )
        if not messages:
            return
        entries = self._measure(messages)
        stored: list[StoredMessage] = yield from call(
            store.append, self._session_id, [entry.stored for entry in entries]
        )
        if self._version is not None and stored[0].item_id == self._last_item + 1:
            for entry, item in zip(entries, stored, strict=True):
                entry.stored = item
            self._entries.extend(entries)
            self._last_item = stored[-1].item_id

    def _measure(self, messages: Sequence[Any]) -> list[_Entry]:
        """Encode messages for the store and measure each once: characters, and tokens."""
        values, decoded = encode_messages(messages)
        sizes = layout_messages(decoded, "message").sizes
        counter = self._counter
        counter_id = None if counter is None else str(counter.id)
        entries: list[_Entry] = []
        for value, message, chars in zip(values, decoded, sizes, strict=True):
            tokens = None if counter is None else _count(counter, message)
            stored = StoredMessage(0, 0.0, value, chars, tokens, counter_id)
            entries.append(_Entry(stored, message, tokens))
        return entries

    def _refresh(self, store: Any) -> Effects[None]:
        since = None if self._version is None else (self._version, self._last_item)
        snapshot: SessionSnapshot = yield from call(store.read, self._session_id, since)
        entries = [self._entry(item) for item in snapshot.items]
        if snapshot.complete:
            self._entries = entries
        else:
            self._entries.extend(entries)
        self._version, self._last_item = snapshot.version, snapshot.last_item

    def _entry(self, item: StoredMessage) -> _Entry:
        message = decode_message(item.data)
        counter = self._counter
        if counter is None:
            return _Entry(item, message, None)
        if item.tokens is not None and item.counter_id == str(counter.id):
            return _Entry(item, message, item.tokens)
        return _Entry(item, message, _count(counter, message))

    def _messages(self, store: Any) -> Effects[list[Any]]:
        yield from self._refresh(store)
        return [entry.message for entry in self._entries]

    def _context(self, store: Any) -> Effects[ContextResult]:
        yield from self._refresh(store)
        entries = list(self._entries)
        fragment = Fragment(self._fragment_id, messages=[entry.message for entry in entries])
        counted = self._counter is not None
        known = KnownSizes(
            chars=[entry.stored.chars for entry in entries],
            tokens=[entry.tokens or 0 for entry in entries] if counted else None,
        )
        removed_by: dict[int, str] = {}
        result = yield from context_effects(
            self._policy,
            [fragment],
            known_sizes={self._fragment_id: known},
            removed_by=removed_by,
            **self._options,
        )
        if self._policy.mode != "reduce" or not any(
            change.status == "applied" for change in result.report.changes
        ):
            return result
        plan = _plan_change(self, entries, result, removed_by)
        try:
            version, created = yield from call(store.commit, self._session_id, plan.change)
        except BaseException:
            self._version = None
            raise
        if created:
            placeholders = [item for entry in plan.change.entries for item in entry.created]
            stored_as = {id(item): new for item, new in zip(placeholders, created, strict=True)}
            for entry in plan.context:
                entry.stored = stored_as.get(id(entry.stored), entry.stored)
        self._entries = plan.context
        self._version = version
        return result

    def _archive(self, store: Any) -> Effects[list[ArchivedMessage]]:
        items = yield from call(store.archive, self._session_id)
        return [
            ArchivedMessage(decode_message(item.item.data), item.change_id, item.step, item.at)
            for item in items
        ]

    def _restore(self, change_id: int, store: Any) -> Effects[list[Any]]:
        if isinstance(change_id, bool) or not isinstance(change_id, int):
            raise InvalidTypeError(
                "not_a_number", name="change_id", type_name=type(change_id).__name__
            )
        yield from self._refresh(store)
        archived, created = yield from call(store.change_items, self._session_id, change_id)
        if not archived:
            raise InvalidValueError(
                "unknown_change", session_id=self._session_id, change_id=change_id
            )
        assert self._version is not None
        change = SessionChange(
            version=self._version,
            at=datetime.now(UTC),
            entries=[ChangeEntry("restore", archived=created)] if created else [],
            restored=change_id,
        )
        try:
            yield from call(store.commit, self._session_id, change)
        finally:
            self._version = None
        yield from self._refresh(store)
        wanted = set(archived)
        return [entry.message for entry in self._entries if entry.stored.item_id in wanted]


# --- planning a stored change -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    change: SessionChange
    context: list[_Entry]


def _plan_change(
    session: ContextSession,
    entries: list[_Entry],
    result: ContextResult,
    removed_by: Mapping[int, str],
) -> _Plan:
    """Turn a run's result into a stored change: what leaves, what is new, and where it goes."""
    new_messages = result.fragment(session._fragment_id).messages or ()
    applied = [change.id for change in result.report.changes if change.status == "applied"]
    creator = applied[-1]
    matched = _match_in_order(entries, new_messages)
    if matched is None:
        by_identity = {id(entry.message): entry for entry in entries}
        context = [
            by_identity.get(id(message)) or session._measure([message])[0]
            for message in new_messages
        ]
        kept = {id(entry.message) for entry in context}
        removed = [entry for entry in entries if id(entry.message) not in kept]
        moved = _place_new(context, session._last_item)
    else:
        context, removed = matched
        moved = []
    steps: dict[str, ChangeEntry] = {}
    # A message that one step of this run made and a later one took out (a summary trimmed at
    # once) was never in a context: it is not kept.
    for entry in removed:
        step = removed_by.get(id(entry.message), creator)
        change_entry = steps.get(step)
        if change_entry is None:
            change_entry = steps[step] = ChangeEntry(step)
        change_entry.archived.append(entry.stored.item_id)
    created = [entry.stored for entry in context if entry.stored.item_id == 0]
    if created:
        steps.setdefault(creator, ChangeEntry(creator)).created.extend(created)
    ordered = [steps[step] for step in dict.fromkeys([*applied, *steps]) if step in steps]
    change = SessionChange(
        version=session._version or 0,
        at=datetime.now(UTC),
        entries=ordered,
        moved=moved,
    )
    return _Plan(change, context)


def _match_in_order(
    entries: list[_Entry], new_messages: Sequence[Any]
) -> tuple[list[_Entry], list[_Entry]] | None:
    """The kept and the removed entries when the new messages are entries kept in order (trims
    only remove); ``None`` when a message is new or moved."""
    count, size = len(entries), len(new_messages)
    prefix = 0
    while prefix < size and prefix < count and entries[prefix].message is new_messages[prefix]:
        prefix += 1
    tail = size - prefix
    # The usual trim: the pinned head stays, then the newest messages; checked at C speed.
    if tail <= count - prefix and all(
        map(is_, new_messages[prefix:], (entry.message for entry in entries[count - tail :]))
    ):
        return entries[:prefix] + entries[count - tail :], entries[prefix : count - tail]
    kept: list[_Entry] = []
    removed: list[_Entry] = []
    index = 0
    for message in new_messages:
        while index < count and entries[index].message is not message:
            removed.append(entries[index])
            index += 1
        if index == count:
            return None
        kept.append(entries[index])
        index += 1
    removed.extend(entries[index:])
    return kept, removed


def _place_new(context: list[_Entry], last_item: int) -> list[tuple[int, float]]:
    """Give the new messages of a context positions between their neighbours.

    When an app reordered the kept messages, every message gets a new position instead, and the
    kept ones are returned as moved.
    """
    kept = [entry.stored for entry in context if entry.stored.item_id]
    keys = [(item.position, item.item_id) for item in kept]
    if keys != sorted(keys):
        low = min(position for position, _ in keys) - 1.0
        step = (last_item + 1.0 - low) / (len(context) + 1)
        moved: list[tuple[int, float]] = []
        for index, entry in enumerate(context):
            position = low + step * (index + 1)
            if entry.stored.item_id:
                moved.append((entry.stored.item_id, position))
            entry.stored = _with_position(entry.stored, position)
        return moved
    previous: float | None = None
    for index, entry in enumerate(context):
        if entry.stored.item_id:
            previous = entry.stored.position
            continue
        following = next(
            (other.stored.position for other in context[index + 1 :] if other.stored.item_id),
            None,
        )
        high = float(last_item + 1) if following is None else following
        low = high - 1.0 if previous is None else previous
        previous = (low + high) / 2
        entry.stored = _with_position(entry.stored, previous)
    return []


def _with_position(item: StoredMessage, position: float) -> StoredMessage:
    return StoredMessage(
        item.item_id,
        position,
        item.data,
        item.chars,
        item.tokens,
        item.counter_id,
        item.created_by,
    )


def _count(counter: TokenCounter, message: Any) -> int:
    return Measure(counter).text_tokens(message_text(message))


class _Threaded:
    """A store whose calls run in a worker thread: what the async faces give to the cores."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._store, name)

        async def threaded(*args: Any) -> Any:
            return await asyncio.to_thread(partial(method, *args))

        return threaded
