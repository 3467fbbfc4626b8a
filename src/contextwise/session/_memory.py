"""The in-memory store: sessions that live as long as the process, for tests and short runs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

from contextwise.errors import InvalidValueError, SessionConflictError
from contextwise.session import _conversations as conversations
from contextwise.session._records import (
    IDEMPOTENCY_WINDOW,
    MAX_ID,
    POSITION_GAP,
    AddResult,
    ConversationStore,
    IdempotencyKey,
    SessionChange,
    SessionSnapshot,
    SessionStore,
    StateStore,
    StoredArchiveItem,
    StoredMessage,
    UsageStore,
    check_change,
    check_change_id,
    check_idempotency,
    check_idempotency_window,
    check_items,
    check_session_id,
    check_since,
    check_state_name,
    json_text,
)


class _Archived(NamedTuple):
    """The messages one change took out of a context."""

    step: str
    """The step that took them out."""

    at: datetime
    """When the change was committed."""

    items: dict[int, StoredMessage]
    """The messages, by item id."""


class _Conversation(NamedTuple):
    """What an integration remembers of one conversation."""

    version: int
    text: str
    """The value, as JSON text."""

    written_at: str
    """When it was written, as ISO text (compared with the retention cutoff)."""


class _Key(NamedTuple):
    """An idempotency key of an add: what it covered, its result, and when it was stored."""

    digest: str
    result: AddResult
    at: float


@dataclass
class _Session:
    version: int = 0
    last_item: int = 0
    last_change: int = 0
    context: dict[int, StoredMessage] = field(default_factory=dict)
    """The context by item id, in context order: a trim removes only its own messages."""
    archived: dict[int, _Archived] = field(default_factory=dict)
    """The archived messages by change id: the step, the time, and the messages by item id."""
    keys: dict[str, _Key] = field(default_factory=dict)
    """The idempotency keys of the adds: the digest, the result and when it was stored."""


class MemoryStore(SessionStore, UsageStore, StateStore, ConversationStore):
    """Sessions held in memory by this process: nothing survives the process.

    It keeps the promises of the other stores (item and change ids, the optimistic version,
    the archive, conflicts between two sessions on one id), so a harness tested on it behaves
    the same on :class:`SQLiteStore` or :class:`SQLAlchemyStore`; the test suite runs on all
    three. Several sessions and threads may share one. The messages are held as they were
    read back from their JSON, not copied again: treat what a session returns as read-only.

    Args:
        idempotency_window: How many seconds the idempotency key of an add is kept; a retry
            after that stores its messages again.

    Raises:
        InvalidValueError: When ``idempotency_window`` is negative or not finite.

    Examples:
        >>> from contextwise.session import MemoryStore
        >>> MemoryStore().read("chat-1").items
        []
    """

    def __init__(self, *, idempotency_window: float = IDEMPOTENCY_WINDOW) -> None:
        self._window = check_idempotency_window(idempotency_window)
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._conversations: dict[str, _Conversation] = {}
        self._usage: dict[str, list[dict[str, Any]]] = {}
        self._states: dict[str, dict[str, Any]] = {}

    def close(self) -> None:
        """Forget every session."""
        with self._lock:
            self._sessions.clear()
            self._conversations.clear()
            self._usage.clear()
            self._states.clear()

    def load_conversation(self, key: str, *, ttl: float | None = None) -> tuple[int, Any] | None:
        """Read what an integration remembers of a conversation.

        Args:
            key: The conversation's key.
            ttl: The retention in seconds: a value written longer ago is not returned.

        Returns:
            The value's version and the value (JSON data), or ``None`` when there is none.
        """
        key = conversations.check_key(key)
        cutoff = conversations.cutoff_text(conversations.check_ttl(ttl))
        with self._lock:
            found = self._conversations.get(key)
        if found is None or (cutoff is not None and found.written_at < cutoff):
            return None
        return found.version, conversations.decode(key, found.text)

    def save_conversation(
        self, key: str, value: Any, version: int, *, ttl: float | None = None
    ) -> int:
        """Store what an integration remembers of a conversation, if nobody wrote it since.

        Args:
            key: The conversation's key.
            value: The value, JSON data (kept as JSON text, as the SQL stores keep it).
            version: The version read with :meth:`load_conversation` (0 for a new key).
            ttl: The retention in seconds: values of any key written longer ago are deleted.

        Returns:
            The new version.

        Raises:
            SessionConflictError: When another writer stored the key since (code
                ``conversation_conflict``).
        """
        key = conversations.check_key(key)
        version = conversations.check_version(version)
        text = conversations.encode(key, value)
        cutoff = conversations.cutoff_text(conversations.check_ttl(ttl))
        with self._lock:
            if cutoff is not None:
                expired = self._conversations.items()
                for other in [k for k, v in expired if v.written_at < cutoff]:
                    if other != key:
                        del self._conversations[other]
            stored = self._conversations.get(key)
            found = 0
            if stored is not None and (cutoff is None or stored.written_at >= cutoff):
                found = stored.version
            if found != version:
                raise SessionConflictError(
                    "conversation_conflict", key=key, expected=version, found=found
                )
            new = (0 if stored is None else stored.version) + 1
            self._conversations[key] = _Conversation(new, text, conversations.now_text())
            return new

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> SessionSnapshot:
        """Read a session's context."""
        check_session_id(session_id)
        check_since(since)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return SessionSnapshot(0, 0, [])
            if since is None or since[0] != session.version:
                items = list(session.context.values())
                return SessionSnapshot(session.version, session.last_item, items)
            added: list[StoredMessage] = []
            for item in reversed(session.context.values()):
                if item.created_by is not None:
                    continue
                if item.item_id <= since[1]:
                    break
                added.append(item)
            added.reverse()
            return SessionSnapshot(session.version, session.last_item, added, complete=False)

    def append(
        self,
        session_id: str,
        items: Sequence[StoredMessage],
        idempotency: IdempotencyKey | None = None,
    ) -> AddResult:
        """Add messages at the end of a session's context, in one transaction."""
        check_session_id(session_id)
        check_items(items)
        check_idempotency(idempotency)
        with self._lock:
            session = self._sessions.setdefault(session_id, _Session())
            now = time.time()
            if idempotency is not None:
                found = self._known(session, session_id, idempotency, now)
                if found is not None:
                    return found
            first = session.last_item + 1
            stored = list(items)
            ids = range(first, first + len(stored))
            for item_id, item in zip(ids, stored, strict=True):
                item.item_id = item_id
                item.position = item_id * POSITION_GAP
                item.created_by = None
            session.context.update(zip(ids, stored, strict=True))
            session.last_item += len(stored)
            result = AddResult(tuple(ids), session.version)
            if idempotency is not None:
                session.keys[idempotency.key] = _Key(idempotency.digest, result, now)
            return result

    def _known(
        self, session: _Session, session_id: str, idempotency: IdempotencyKey, now: float
    ) -> AddResult | None:
        """The result of the add that stored this key, or ``None``; expired keys are dropped."""
        expired = [key for key, kept in session.keys.items() if kept.at + self._window <= now]
        for key in expired:
            del session.keys[key]
        found = session.keys.get(idempotency.key)
        if found is None:
            return None
        digest, result, _ = found
        if digest != idempotency.digest:
            raise InvalidValueError(
                "idempotency_key_reused", session_id=session_id, key=idempotency.key
            )
        return AddResult(result.positions, result.version, duplicate=True)

    def commit(self, session_id: str, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Store a change of a session's context, in one transaction."""
        check_session_id(session_id)
        check_change(change)
        with self._lock:
            session = self._sessions.setdefault(session_id, _Session())
            if session.version != change.version:
                raise SessionConflictError(
                    "session_conflict",
                    session_id=session_id,
                    expected=change.version,
                    found=session.version,
                )
            if (
                change.restored is None
                and not change.moved
                and not any(entry.created for entry in change.entries)
            ):
                return self._archive_only(session, change)
            return self._apply(session, change)

    @staticmethod
    def _apply(session: _Session, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Apply any change: nothing is stored until every part of it is known to apply."""
        context = dict(session.context)
        restored = None if change.restored is None else session.archived.get(change.restored)
        if restored is not None:
            context.update(restored.items)
        last_change, last_item = session.last_change, session.last_item
        archived: dict[int, _Archived] = {}
        created: list[StoredMessage] = []
        for entry in change.entries:
            last_change += 1
            items = {item_id: context.pop(item_id) for item_id in entry.archived}
            if items:
                archived[last_change] = _Archived(entry.step, change.at, items)
            for item in entry.created:
                last_item += 1
                new = replace(item, item_id=last_item, created_by=last_change)
                context[new.item_id] = new
                created.append(new)
        for item_id, position in change.moved:
            context[item_id] = replace(context[item_id], position=position)
        ordered = sorted(context.values(), key=lambda item: (item.position, item.item_id))
        if change.restored is not None:
            session.archived.pop(change.restored, None)
        session.archived.update(archived)
        session.context = {item.item_id: item for item in ordered}
        session.last_change, session.last_item = last_change, last_item
        session.version += 1
        return session.version, created

    @staticmethod
    def _archive_only(session: _Session, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """A change that only takes messages out (a trim): the context keeps its order, and only
        the messages that leave are touched."""
        context = session.context
        for entry in change.entries:
            session.last_change += 1
            # An id that is not in the context (any more) is passed over.
            items = {
                item_id: context.pop(item_id) for item_id in entry.archived if item_id in context
            }
            if items:
                session.archived[session.last_change] = _Archived(entry.step, change.at, items)
        session.version += 1
        return session.version, []

    def archive(self, session_id: str) -> list[StoredArchiveItem]:
        """Read a session's archived messages, by change, then in context order."""
        check_session_id(session_id)
        with self._lock:
            session = self._sessions.get(session_id)
            changes = [] if session is None else sorted(session.archived.items())
        return [
            StoredArchiveItem(item, change_id, step, at)
            for change_id, (step, at, items) in changes
            for item in _in_order(items)
        ]

    def change_items(self, session_id: str, change_id: int) -> tuple[list[int], list[int]]:
        """Find what a change did that is still in force."""
        check_session_id(session_id)
        check_change_id(change_id)
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or not 0 < change_id <= MAX_ID:
                return [], []
            found = session.archived.get(change_id)
            archived = [] if found is None else _in_order(found.items)
            created = [
                item.item_id for item in session.context.values() if item.created_by == change_id
            ]
        return [item.item_id for item in archived], created

    # --- the usage ledger and the calibration states ------------------------------------------

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        """Add a record to a session's usage ledger (JSON data)."""
        check_session_id(session_id)
        text = json_text(record, "record")
        with self._lock:
            self._usage.setdefault(session_id, []).append(json.loads(text))

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Read a session's usage ledger, in the order recorded."""
        check_session_id(session_id)
        with self._lock:
            return list(self._usage.get(session_id, ()))

    def load_state(self, name: str) -> dict[str, Any] | None:
        """Read a named state (a calibration), or ``None``."""
        name = check_state_name(name)
        with self._lock:
            return self._states.get(name)

    def save_state(self, name: str, state: dict[str, Any]) -> None:
        """Keep a named state (JSON data), replacing the previous one."""
        name = check_state_name(name)
        text = json_text(state, "state")
        with self._lock:
            self._states[name] = json.loads(text)


def _in_order(items: dict[int, StoredMessage]) -> list[StoredMessage]:
    """Archived messages in their context order."""
    return sorted(items.values(), key=lambda item: (item.position, item.item_id))
