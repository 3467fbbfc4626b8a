"""The in-memory store: sessions that live as long as the process, for tests and short runs."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from contextwise.errors import SessionConflictError
from contextwise.session.records import (
    SessionChange,
    SessionSnapshot,
    StoredArchiveItem,
    StoredMessage,
)


@dataclass
class _Session:
    version: int = 0
    last_item: int = 0
    last_change: int = 0
    context: list[StoredMessage] = field(default_factory=list)
    archived: dict[int, tuple[StoredMessage, int, str, datetime]] = field(default_factory=dict)


class MemoryStore:
    """Sessions held in memory by this process: nothing survives the process.

    It keeps the promises of the other stores (item and change ids, the optimistic version,
    the archive, conflicts between two sessions on one id), so a harness tested on it behaves
    the same on :class:`SQLiteStore` or :class:`SQLAlchemyStore`; the test suite runs on all
    three. Several sessions and threads may share one. The messages are held as they were
    read back from their JSON, not copied again: treat what a session returns as read-only.

    Examples:
        >>> from contextwise.session import MemoryStore
        >>> MemoryStore().read("chat-1").items
        []
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}

    def close(self) -> None:
        """Forget every session."""
        with self._lock:
            self._sessions.clear()

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> SessionSnapshot:
        """Read a session's context."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return SessionSnapshot(0, 0, [])
            if since is None or since[0] != session.version:
                return SessionSnapshot(session.version, session.last_item, list(session.context))
            added: list[StoredMessage] = []
            for item in reversed(session.context):
                if item.created_by is not None:
                    continue
                if item.item_id <= since[1]:
                    break
                added.append(item)
            added.reverse()
            return SessionSnapshot(session.version, session.last_item, added, complete=False)

    def append(self, session_id: str, items: Sequence[StoredMessage]) -> list[StoredMessage]:
        """Add messages at the end of a session's context, in one transaction."""
        with self._lock:
            session = self._sessions.setdefault(session_id, _Session())
            first = session.last_item + 1
            stored = list(items)
            for offset, item in enumerate(stored):
                item.item_id = item_id = first + offset
                item.position = float(item_id)
                item.created_by = None
            session.context.extend(stored)
            session.last_item += len(stored)
            return stored

    def commit(self, session_id: str, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Store a change of a session's context, in one transaction."""
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
            context = {item.item_id: item for item in session.context}
            if change.restored is not None:
                for item_id, (item, change_id, _, _) in list(session.archived.items()):
                    if change_id == change.restored:
                        context[item_id] = item
                        del session.archived[item_id]
            created: list[StoredMessage] = []
            for entry in change.entries:
                session.last_change += 1
                for item_id in entry.archived:
                    item = context.pop(item_id)
                    session.archived[item_id] = (item, session.last_change, entry.step, change.at)
                for item in entry.created:
                    session.last_item += 1
                    new = replace(item, item_id=session.last_item, created_by=session.last_change)
                    context[new.item_id] = new
                    created.append(new)
            for item_id, position in change.moved:
                context[item_id] = replace(context[item_id], position=position)
            session.context = sorted(
                context.values(), key=lambda item: (item.position, item.item_id)
            )
            session.version += 1
            return session.version, created

    @staticmethod
    def _archive_only(session: _Session, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """A change that only takes messages out (a trim): the context keeps its order."""
        owner: dict[int, tuple[int, str]] = {}
        for entry in change.entries:
            session.last_change += 1
            owner.update(dict.fromkeys(entry.archived, (session.last_change, entry.step)))
        kept: list[StoredMessage] = []
        for item in session.context:
            found = owner.get(item.item_id)
            if found is None:
                kept.append(item)
            else:
                session.archived[item.item_id] = (item, found[0], found[1], change.at)
        session.context = kept
        session.version += 1
        return session.version, []

    def archive(self, session_id: str) -> list[StoredArchiveItem]:
        """Read a session's archived messages, by change, then in context order."""
        with self._lock:
            session = self._sessions.get(session_id)
            entries = [] if session is None else list(session.archived.values())
        entries.sort(key=lambda entry: (entry[1], entry[0].position, entry[0].item_id))
        return [
            StoredArchiveItem(item, change_id, step, at) for item, change_id, step, at in entries
        ]

    def change_items(self, session_id: str, change_id: int) -> tuple[list[int], list[int]]:
        """Find what a change did that is still in force."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return [], []
            archived = sorted(
                (item for item, owner, _, _ in session.archived.values() if owner == change_id),
                key=lambda item: (item.position, item.item_id),
            )
            created = [item.item_id for item in session.context if item.created_by == change_id]
        return [item.item_id for item in archived], created
