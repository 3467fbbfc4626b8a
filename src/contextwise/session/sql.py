"""The SQL shared by the SQLite and the SQLAlchemy stores: one layout, one set of statements.

A store gives a transaction (:class:`Transaction`); everything else is here, so the two stores
cannot drift apart. Every method is one transaction.
"""

from __future__ import annotations

import abc
import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from contextwise.errors import SessionConflictError, SessionStoreError
from contextwise.session import conversations
from contextwise.session.records import (
    SESSION_SCHEMA_VERSION,
    SessionChange,
    SessionSnapshot,
    StoredArchiveItem,
    StoredMessage,
)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS contextwise_schema "
    "(name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS contextwise_sessions (session_id TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL, last_item BIGINT NOT NULL, last_change BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS contextwise_messages (session_id TEXT NOT NULL, "
    "item_id BIGINT NOT NULL, position DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, "
    "chars BIGINT NOT NULL, tokens BIGINT, counter_id TEXT, created_by BIGINT, change_id BIGINT, "
    "step TEXT, archived_at TEXT, PRIMARY KEY (session_id, item_id))",
    "CREATE INDEX IF NOT EXISTS contextwise_messages_by_change "
    "ON contextwise_messages (session_id, change_id, position)",
    conversations.TABLE,
    # The usage ledger and the named states (calibrations): read and written apart from the
    # messages, by record_usage and usage.
    "CREATE TABLE IF NOT EXISTS contextwise_usage (session_id TEXT NOT NULL, "
    "seq BIGINT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE TABLE IF NOT EXISTS contextwise_states (name TEXT PRIMARY KEY, state TEXT NOT NULL)",
)

_COLUMNS = "item_id, position, data, chars, tokens, counter_id, created_by"
_CONTEXT = (
    f"SELECT {_COLUMNS} FROM contextwise_messages WHERE session_id = :s AND change_id IS NULL"
)
_INSERT = (
    "INSERT INTO contextwise_messages (session_id, item_id, position, data, chars, tokens, "
    "counter_id, created_by) VALUES (:s, :i, :p, :d, :c, :t, :k, :b)"
)
_ARCHIVE = (
    "UPDATE contextwise_messages SET change_id = :c, step = :st, archived_at = :at "
    "WHERE session_id = :s AND item_id = :i AND change_id IS NULL"
)


class Transaction(Protocol):
    """What the shared SQL needs from a database: statements run in one open transaction."""

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run a statement and return its rows (none for a statement without results)."""
        ...

    def run_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        """Run a statement once per parameter set."""
        ...


class SqlStore(abc.ABC):
    """A session store over SQL; subclasses give the transactions."""

    _schema_checked = False

    @abc.abstractmethod
    def transaction(self, write: bool) -> contextlib.AbstractContextManager[Transaction]:
        """Open a transaction that commits when the block ends and rolls back on an error."""

    def _lock_schema(self, tx: Transaction) -> None:  # noqa: B027 - most databases need nothing
        """Keep two processes from creating the tables at once (PostgreSQL needs it)."""

    @contextlib.contextmanager
    def _open(self, write: bool) -> Iterator[Transaction]:
        if not self._schema_checked:
            with self.transaction(True) as tx:
                self._lock_schema(tx)
                check_schema(tx)
            self._schema_checked = True
        with self.transaction(write) as tx:
            yield tx

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> SessionSnapshot:
        """Read a session's context."""
        with self._open(False) as tx:
            head = tx.rows(
                "SELECT version, last_item FROM contextwise_sessions WHERE session_id = :s",
                {"s": session_id},
            )
            if not head:
                return SessionSnapshot(0, 0, [])
            version, last_item = int(head[0][0]), int(head[0][1])
            if since is not None and since[0] == version:
                rows = tx.rows(
                    f"{_CONTEXT} AND created_by IS NULL AND item_id > :after "
                    "ORDER BY position, item_id",
                    {"s": session_id, "after": since[1]},
                )
                return SessionSnapshot(version, last_item, _messages(rows), complete=False)
            rows = tx.rows(f"{_CONTEXT} ORDER BY position, item_id", {"s": session_id})
            return SessionSnapshot(version, last_item, _messages(rows))

    def append(self, session_id: str, items: Sequence[StoredMessage]) -> list[StoredMessage]:
        """Add messages at the end of a session's context, in one transaction."""
        with self._open(True) as tx:
            tx.rows(
                "INSERT INTO contextwise_sessions (session_id, version, last_item, last_change) "
                "VALUES (:s, 0, 0, 0) ON CONFLICT (session_id) DO NOTHING",
                {"s": session_id},
            )
            last = int(
                tx.rows(
                    "UPDATE contextwise_sessions SET last_item = last_item + :n "
                    "WHERE session_id = :s RETURNING last_item",
                    {"s": session_id, "n": len(items)},
                )[0][0]
            )
            stored = renumber(items, last - len(items) + 1, None, as_added=True)
            tx.run_many(_INSERT, [_insert_params(session_id, item) for item in stored])
            return stored

    def commit(self, session_id: str, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Store a change of a session's context, in one transaction."""
        created_count = sum(len(entry.created) for entry in change.entries)
        with self._open(True) as tx:
            head = tx.rows(
                "UPDATE contextwise_sessions SET version = version + 1, "
                "last_item = last_item + :n, last_change = last_change + :m "
                "WHERE session_id = :s AND version = :v RETURNING version, last_item, last_change",
                {
                    "s": session_id,
                    "v": change.version,
                    "n": created_count,
                    "m": len(change.entries),
                },
            )
            if not head:
                found = tx.rows(
                    "SELECT version FROM contextwise_sessions WHERE session_id = :s",
                    {"s": session_id},
                )
                raise SessionConflictError(
                    "session_conflict",
                    session_id=session_id,
                    expected=change.version,
                    found=int(found[0][0]) if found else 0,
                )
            version, last_item, last_change = (int(value) for value in head[0])
            return version, _write_change(
                tx,
                session_id,
                change,
                next_item=last_item - created_count + 1,
                next_change=last_change - len(change.entries) + 1,
            )

    def archive(self, session_id: str) -> list[StoredArchiveItem]:
        """Read a session's archived messages, by change, then in context order."""
        with self._open(False) as tx:
            rows = tx.rows(
                f"SELECT {_COLUMNS}, change_id, step, archived_at FROM contextwise_messages "
                "WHERE session_id = :s AND change_id IS NOT NULL "
                "ORDER BY change_id, position, item_id",
                {"s": session_id},
            )
        return [
            StoredArchiveItem(
                _message(row[:7]), int(row[7]), str(row[8]), datetime.fromisoformat(row[9])
            )
            for row in rows
        ]

    def change_items(self, session_id: str, change_id: int) -> tuple[list[int], list[int]]:
        """Find what a change did that is still in force."""
        with self._open(False) as tx:
            archived = tx.rows(
                "SELECT item_id FROM contextwise_messages WHERE session_id = :s AND change_id = :c "
                "ORDER BY position, item_id",
                {"s": session_id, "c": change_id},
            )
            created = tx.rows(
                "SELECT item_id FROM contextwise_messages WHERE session_id = :s "
                "AND created_by = :c AND change_id IS NULL ORDER BY position, item_id",
                {"s": session_id, "c": change_id},
            )
        return [int(row[0]) for row in archived], [int(row[0]) for row in created]

    def load_conversation(self, key: str, *, ttl: float | None = None) -> tuple[int, Any] | None:
        """Read what an integration remembers of a conversation.

        Args:
            key: The conversation's key.
            ttl: The retention in seconds: a value written longer ago is not returned.

        Returns:
            The value's version and the value (JSON data), or ``None`` when there is none.
        """
        with self._open(False) as tx:
            return conversations.load(tx, key, ttl)

    def save_conversation(
        self, key: str, value: Any, version: int, *, ttl: float | None = None
    ) -> int:
        """Store what an integration remembers of a conversation, if nobody wrote it since.

        Args:
            key: The conversation's key.
            value: The value, JSON data.
            version: The version read with :meth:`load_conversation` (0 for a new key).
            ttl: The retention in seconds: values of any key written longer ago are deleted.

        Returns:
            The new version.

        Raises:
            SessionConflictError: When another writer stored the key since (code
                ``conversation_conflict``).
        """
        with self._open(True) as tx:
            return conversations.save(tx, key, value, version, ttl)
    # --- the usage ledger and the calibration states ------------------------------------------

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        """Add a record to a session's usage ledger (JSON data), in one transaction."""
        with self._open(True) as tx:
            found = tx.rows(
                "SELECT COALESCE(MAX(seq), 0) FROM contextwise_usage WHERE session_id = :s",
                {"s": session_id},
            )
            tx.rows(
                "INSERT INTO contextwise_usage (session_id, seq, record) VALUES (:s, :n, :r)",
                {"s": session_id, "n": int(found[0][0]) + 1, "r": _json(record)},
            )

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Read a session's usage ledger, in the order recorded."""
        with self._open(False) as tx:
            rows = tx.rows(
                "SELECT record FROM contextwise_usage WHERE session_id = :s ORDER BY seq",
                {"s": session_id},
            )
        return [json.loads(row[0]) for row in rows]

    def load_state(self, name: str) -> dict[str, Any] | None:
        """Read a named state (a calibration), or ``None``."""
        with self._open(False) as tx:
            rows = tx.rows("SELECT state FROM contextwise_states WHERE name = :n", {"n": name})
        return json.loads(rows[0][0]) if rows else None

    def save_state(self, name: str, state: dict[str, Any]) -> None:
        """Keep a named state (JSON data), replacing the previous one, in one transaction."""
        with self._open(True) as tx:
            tx.rows(
                "INSERT INTO contextwise_states (name, state) VALUES (:n, :v) "
                "ON CONFLICT (name) DO UPDATE SET state = excluded.state",
                {"n": name, "v": _json(state)},
            )


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def check_schema(tx: Transaction) -> None:
    """Create the tables when missing and check the recorded layout version."""
    for statement in SCHEMA:
        tx.rows(statement, {})
    rows = tx.rows("SELECT version FROM contextwise_schema WHERE name = :n", {"n": "sessions"})
    if not rows:
        tx.rows(
            "INSERT INTO contextwise_schema (name, version) VALUES (:n, :v)",
            {"n": "sessions", "v": SESSION_SCHEMA_VERSION},
        )
    elif int(rows[0][0]) != SESSION_SCHEMA_VERSION:
        raise SessionStoreError(
            "session_schema_mismatch", found=int(rows[0][0]), expected=SESSION_SCHEMA_VERSION
        )


def renumber(
    items: Sequence[StoredMessage], first: int, created_by: int | None, *, as_added: bool
) -> list[StoredMessage]:
    """Give messages their item ids from ``first``; added messages are placed by their id."""
    return [
        StoredMessage(
            first + offset,
            float(first + offset) if as_added else item.position,
            item.data,
            item.chars,
            item.tokens,
            item.counter_id,
            created_by,
        )
        for offset, item in enumerate(items)
    ]


def _write_change(
    tx: Transaction, session_id: str, change: SessionChange, next_item: int, next_change: int
) -> list[StoredMessage]:
    at = change.at.isoformat()
    if change.restored is not None:
        tx.rows(
            "UPDATE contextwise_messages SET change_id = NULL, step = NULL, archived_at = NULL "
            "WHERE session_id = :s AND change_id = :c",
            {"s": session_id, "c": change.restored},
        )
    created: list[StoredMessage] = []
    for offset, entry in enumerate(change.entries):
        change_id = next_change + offset
        tx.run_many(
            _ARCHIVE,
            [
                {"s": session_id, "i": item_id, "c": change_id, "st": entry.step, "at": at}
                for item_id in entry.archived
            ],
        )
        new = renumber(entry.created, next_item, change_id, as_added=False)
        next_item += len(new)
        tx.run_many(_INSERT, [_insert_params(session_id, item) for item in new])
        created += new
    tx.run_many(
        "UPDATE contextwise_messages SET position = :p WHERE session_id = :s AND item_id = :i",
        [{"s": session_id, "i": item_id, "p": position} for item_id, position in change.moved],
    )
    return created


def _insert_params(session_id: str, item: StoredMessage) -> dict[str, Any]:
    return {
        "s": session_id,
        "i": item.item_id,
        "p": item.position,
        "d": json.dumps(item.data, ensure_ascii=False, separators=(",", ":")),
        "c": item.chars,
        "t": item.tokens,
        "k": item.counter_id,
        "b": item.created_by,
    }


def _message(row: Sequence[Any]) -> StoredMessage:
    return StoredMessage(
        int(row[0]),
        float(row[1]),
        json.loads(row[2]),
        int(row[3]),
        None if row[4] is None else int(row[4]),
        None if row[5] is None else str(row[5]),
        None if row[6] is None else int(row[6]),
    )


def _messages(rows: Sequence[Sequence[Any]]) -> list[StoredMessage]:
    return [_message(row) for row in rows]
