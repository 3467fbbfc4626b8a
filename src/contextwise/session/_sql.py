"""The SQL shared by the SQLite and the SQLAlchemy stores: one layout, one set of statements.

A store gives a transaction (:class:`Transaction`); everything else is here, so the two stores
cannot drift apart. Every method is one transaction.
"""

from __future__ import annotations

import abc
import contextlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple, NoReturn, Protocol

from contextwise.errors import (
    ContextwiseError,
    InvalidValueError,
    SessionConflictError,
    SessionStoreError,
)
from contextwise.session import _conversations as conversations
from contextwise.session._planner import LOWEST_POSITION
from contextwise.session._records import (
    MAX_ID,
    POSITION_GAP,
    SESSION_SCHEMA_VERSION,
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
    check_items,
    check_session_id,
    check_since,
    check_state_name,
    json_text,
)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS contextwise_schema "
    "(name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS contextwise_sessions (session_id TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL, last_item BIGINT NOT NULL, last_change BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS contextwise_messages (session_id TEXT NOT NULL, "
    "item_id BIGINT NOT NULL, position BIGINT NOT NULL, data TEXT NOT NULL, "
    "chars BIGINT NOT NULL, tokens BIGINT, counter_id TEXT, created_by BIGINT, change_id BIGINT, "
    "step TEXT, archived_at TEXT, PRIMARY KEY (session_id, item_id))",
    "CREATE TABLE IF NOT EXISTS contextwise_idempotency (session_id TEXT NOT NULL, "
    "idempotency_key TEXT NOT NULL, digest TEXT NOT NULL, first_item BIGINT NOT NULL, "
    "item_count BIGINT NOT NULL, version BIGINT NOT NULL, stored_at DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (session_id, idempotency_key))",
    conversations.TABLE,
    # The usage ledger and the named states (calibrations): read and written apart from the
    # messages, by record_usage and usage.
    "CREATE TABLE IF NOT EXISTS contextwise_usage (session_id TEXT NOT NULL, "
    "seq BIGINT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE TABLE IF NOT EXISTS contextwise_states (name TEXT PRIMARY KEY, state TEXT NOT NULL)",
)

INDEXES = (
    "CREATE INDEX IF NOT EXISTS contextwise_messages_by_change "
    "ON contextwise_messages (session_id, change_id, position)",
)

LAYOUT = (
    "SELECT session_id, version, last_item, last_change FROM contextwise_sessions WHERE 1 = 0",
    "SELECT session_id, item_id, position, data, chars, tokens, counter_id, created_by, "
    "change_id, step, archived_at FROM contextwise_messages WHERE 1 = 0",
    "SELECT session_id, idempotency_key, digest, first_item, item_count, version, stored_at "
    "FROM contextwise_idempotency WHERE 1 = 0",
    "SELECT conversation_key, version, data, updated_at FROM contextwise_conversations "
    "WHERE 1 = 0",
    "SELECT session_id, seq, record FROM contextwise_usage WHERE 1 = 0",
    "SELECT name, state FROM contextwise_states WHERE 1 = 0",
)
"""Statements that read every column of the layout, to tell an older layout before using it."""

MAX_ITEM = MAX_ID // POSITION_GAP - 1
"""The highest ``last_item`` of a session: every position, up to ``(last_item + 1) *
POSITION_GAP``, stays a signed 64-bit integer. A counter above it is a damaged row."""

_COMMIT = (
    "UPDATE contextwise_sessions SET version = version + 1, "
    "last_item = last_item + :n, last_change = last_change + :m "
    "WHERE session_id = :s AND version = :v AND version < :top "
    "AND last_item >= 0 AND last_item <= :item_room "
    "AND last_change >= 0 AND last_change <= :change_room "
    "RETURNING version, last_item, last_change"
)
"""A change's update of the session's counters, guarded so that none can pass 2**63."""

_FINAL = frozenset({"store_locked", "store_closed", "store_cannot_open"})
"""The failures of the layout's read that a write would only repeat (after the same wait)."""

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


class SqlStore(SessionStore, UsageStore, StateStore, ConversationStore, abc.ABC):
    """A session store over SQL; subclasses give the transactions and name their errors."""

    _schema_checked = False
    _idempotency_window: float

    @abc.abstractmethod
    def transaction(self, write: bool) -> contextlib.AbstractContextManager[Transaction]:
        """Open a transaction that commits when the block ends and rolls back on an error."""

    @abc.abstractmethod
    def _store_error(self, error: Exception) -> SessionStoreError | None:
        """The coded error for a failure of the database, or ``None`` for a failure of code."""

    def _lock_schema(self, tx: Transaction) -> None:
        """Keep two processes from creating the tables at once (PostgreSQL needs it)."""

    @contextlib.contextmanager
    def _open(self, write: bool) -> Iterator[Transaction]:
        """A transaction, after the layout was checked once; the database's failures are
        raised as :class:`SessionStoreError`, with the original as ``__cause__``."""
        try:
            if not self._schema_checked:
                self._check_schema()
                self._schema_checked = True
            with self.transaction(write) as tx:
                yield tx
        except ContextwiseError:
            raise
        except Exception as exc:
            error = self._store_error(exc)
            if error is None:
                raise
            raise error from exc

    def _check_schema(self) -> None:
        """Check the layout by reading it, so that a reader never waits for a writer and a
        read-only database can be read; only a database without the layout is written to, in
        a write transaction of its own that creates the tables."""
        try:
            with self.transaction(False) as tx:
                found = schema_version(tx)
        except ContextwiseError:
            raise
        except Exception as exc:
            error = self._store_error(exc)
            if error is None:
                raise
            if error.code in _FINAL:
                raise error from exc
            found = None  # no layout table yet: the write below creates it, or says why not
        if found is not None:
            return
        with self.transaction(True) as tx:
            self._lock_schema(tx)
            check_schema(tx)

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> SessionSnapshot:
        """Read a session's context."""
        check_session_id(session_id)
        check_since(since)
        with self._open(False) as tx:
            head = tx.rows(
                "SELECT version, last_item FROM contextwise_sessions WHERE session_id = :s",
                {"s": session_id},
            )
            if not head:
                return SessionSnapshot(0, 0, [])
            version = _counter(head[0][0], session_id, "contextwise_sessions.version")
            last_item = _counter(head[0][1], session_id, "contextwise_sessions.last_item")
            if since is not None and since[0] == version:
                rows = tx.rows(
                    f"{_CONTEXT} AND created_by IS NULL AND item_id > :after "
                    "ORDER BY position, item_id",
                    {"s": session_id, "after": since[1]},
                )
                return SessionSnapshot(
                    version, last_item, _context(rows, session_id, last_item), complete=False
                )
            rows = tx.rows(f"{_CONTEXT} ORDER BY position, item_id", {"s": session_id})
            return SessionSnapshot(version, last_item, _context(rows, session_id, last_item))

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
        with self._open(True) as tx:
            tx.rows(
                "INSERT INTO contextwise_sessions (session_id, version, last_item, last_change) "
                "VALUES (:s, 0, 0, 0) ON CONFLICT (session_id) DO NOTHING",
                {"s": session_id},
            )
            now = time.time()
            if idempotency is not None:
                found = _known(
                    tx, session_id, idempotency, now - self._idempotency_window, len(items)
                )
                if found is not None:
                    return found
            # The guard keeps every item id and position a signed 64-bit integer; a row that
            # fails it (a counter near 2**63, or not a number) is damaged.
            head = tx.rows(
                "UPDATE contextwise_sessions SET last_item = last_item + :n "
                "WHERE session_id = :s AND last_item >= 0 AND last_item <= :room "
                "RETURNING last_item, version",
                {"s": session_id, "n": len(items), "room": MAX_ITEM - len(items)},
            )
            if not head:
                raise _damaged(session_id, "contextwise_sessions.last_item")
            last = _counter(head[0][0], session_id, "contextwise_sessions.last_item")
            version = _counter(head[0][1], session_id, "contextwise_sessions.version")
            first = last - len(items) + 1
            for offset, item in enumerate(items):
                item.item_id = first + offset
                item.position = item.item_id * POSITION_GAP
                item.created_by = None
            tx.run_many(_INSERT, [_insert_params(session_id, item) for item in items])
            result = AddResult(tuple(range(first, last + 1)), version)
            if idempotency is not None:
                tx.rows(
                    "INSERT INTO contextwise_idempotency (session_id, idempotency_key, digest, "
                    "first_item, item_count, version, stored_at) "
                    "VALUES (:s, :k, :d, :f, :n, :v, :t)",
                    {
                        "s": session_id,
                        "k": idempotency.key,
                        "d": idempotency.digest,
                        "f": first,
                        "n": len(items),
                        "v": version,
                        "t": now,
                    },
                )
            return result

    def commit(self, session_id: str, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Store a change of a session's context, in one transaction."""
        check_session_id(session_id)
        check_change(change)
        created_count = sum(len(entry.created) for entry in change.entries)
        with self._open(True) as tx:
            head = tx.rows(_COMMIT, _commit_params(session_id, change, created_count))
            if not head:
                _not_committed(tx, session_id, change.version)
            version = _counter(head[0][0], session_id, "contextwise_sessions.version")
            last_item = _counter(head[0][1], session_id, "contextwise_sessions.last_item")
            last_change = _counter(head[0][2], session_id, "contextwise_sessions.last_change")
            return version, _write_change(
                tx,
                session_id,
                change,
                next_item=last_item - created_count + 1,
                next_change=last_change - len(change.entries) + 1,
            )

    def archive(self, session_id: str) -> list[StoredArchiveItem]:
        """Read a session's archived messages, by change, then in context order."""
        check_session_id(session_id)
        with self._open(False) as tx:
            rows = tx.rows(
                f"SELECT {_COLUMNS}, change_id, step, archived_at FROM contextwise_messages "
                "WHERE session_id = :s AND change_id IS NOT NULL "
                "ORDER BY change_id, position, item_id",
                {"s": session_id},
            )
        return [_archive_item(row, session_id) for row in rows]

    def change_items(self, session_id: str, change_id: int) -> tuple[list[int], list[int]]:
        """Find what a change did that is still in force."""
        check_session_id(session_id)
        check_change_id(change_id)
        if not 0 < change_id <= MAX_ID:
            return [], []
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
        column = "contextwise_messages.item_id"
        return (
            [_counter(row[0], session_id, column) for row in archived],
            [_counter(row[0], session_id, column) for row in created],
        )

    def load_conversation(self, key: str, *, ttl: float | None = None) -> tuple[int, Any] | None:
        """Read what an integration remembers of a conversation.

        Args:
            key: The conversation's key.
            ttl: The retention in seconds: a value written longer ago is not returned.

        Returns:
            The value's version and the value (JSON data), or ``None`` when there is none.
        """
        key = conversations.check_key(key)
        ttl = conversations.check_ttl(ttl)
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
        key = conversations.check_key(key)
        version = conversations.check_version(version)
        ttl = conversations.check_ttl(ttl)
        conversations.encode(key, value)
        with self._open(True) as tx:
            return conversations.save(tx, key, value, version, ttl)
    # --- the usage ledger and the calibration states ------------------------------------------

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        """Add a record to a session's usage ledger (JSON data), in one transaction."""
        check_session_id(session_id)
        text = json_text(record, "record")
        with self._open(True) as tx:
            found = tx.rows(
                "SELECT COALESCE(MAX(seq), 0) FROM contextwise_usage WHERE session_id = :s",
                {"s": session_id},
            )
            last = _counter(found[0][0], session_id, "contextwise_usage.seq", MAX_ID - 1)
            tx.rows(
                "INSERT INTO contextwise_usage (session_id, seq, record) VALUES (:s, :n, :r)",
                {"s": session_id, "n": last + 1, "r": text},
            )

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Read a session's usage ledger, in the order recorded."""
        check_session_id(session_id)
        with self._open(False) as tx:
            rows = tx.rows(
                "SELECT record FROM contextwise_usage WHERE session_id = :s ORDER BY seq",
                {"s": session_id},
            )
        return [_loaded(row[0], session_id) for row in rows]

    def load_state(self, name: str) -> dict[str, Any] | None:
        """Read a named state (a calibration), or ``None``."""
        name = check_state_name(name)
        with self._open(False) as tx:
            rows = tx.rows("SELECT state FROM contextwise_states WHERE name = :n", {"n": name})
        return _loaded(rows[0][0], name) if rows else None

    def save_state(self, name: str, state: dict[str, Any]) -> None:
        """Keep a named state (JSON data), replacing the previous one, in one transaction."""
        name = check_state_name(name)
        text = json_text(state, "state")
        with self._open(True) as tx:
            tx.rows(
                "INSERT INTO contextwise_states (name, state) VALUES (:n, :v) "
                "ON CONFLICT (name) DO UPDATE SET state = excluded.state",
                {"n": name, "v": text},
            )


def _loaded(text: object, owner: str) -> dict[str, Any]:
    """A record or state read back; one that does not decode to a JSON object is a damaged
    row."""
    try:
        value = json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionStoreError(
            "store_row_unreadable", session_id=owner, detail=str(exc)[:200]
        ) from exc
    if not isinstance(value, dict):
        raise SessionStoreError(
            "store_row_unreadable",
            session_id=owner,
            detail=f"a JSON {type(value).__name__} where an object was stored",
        )
    return value


def _counter(value: object, session_id: str, column: str, limit: int = MAX_ID) -> int:
    """A counter or an id read back: an integer from 0 to ``limit``; anything else (text, a
    float, a number out of range) is a damaged row."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit:
        return value
    raise _damaged(session_id, column)


def _damaged(session_id: str, column: str) -> SessionStoreError:
    return SessionStoreError(
        "store_row_unreadable",
        session_id=session_id,
        detail=f"{column} is not a number this store can use",
    )


def _commit_params(session_id: str, change: SessionChange, created: int) -> dict[str, Any]:
    return {
        "s": session_id,
        "v": change.version,
        "top": MAX_ID,
        "n": created,
        "m": len(change.entries),
        "item_room": MAX_ITEM - created,
        "change_room": MAX_ID - len(change.entries),
    }


def _not_committed(tx: Transaction, session_id: str, version: int) -> NoReturn:
    """Raise why a change's guarded update found no row: another writer changed the version (a
    conflict), or the session's counters are damaged."""
    found = tx.rows(
        "SELECT version FROM contextwise_sessions WHERE session_id = :s", {"s": session_id}
    )
    current = _counter(found[0][0], session_id, "contextwise_sessions.version") if found else 0
    if found and current == version:
        raise _damaged(session_id, "contextwise_sessions counters")
    raise SessionConflictError(
        "session_conflict", session_id=session_id, expected=version, found=current
    )


def schema_version(tx: Transaction) -> int | None:
    """The recorded layout version, checked, or ``None`` when none is recorded yet.

    Raises:
        SessionStoreError: When the version is another one (code ``session_schema_mismatch``).
    """
    rows = tx.rows("SELECT version FROM contextwise_schema WHERE name = :n", {"n": "sessions"})
    if not rows:
        return None
    found = rows[0][0]
    if not isinstance(found, int) or found != SESSION_SCHEMA_VERSION:
        raise SessionStoreError(
            "session_schema_mismatch", found=found, expected=SESSION_SCHEMA_VERSION
        )
    return found


def check_schema(tx: Transaction) -> None:
    """Create the tables when missing and check the recorded layout version.

    Tables of an older layout, written before the version was recorded, are refused rather than
    completed: their columns are not this version's.
    """
    tx.rows(SCHEMA[0], {})
    if schema_version(tx) is not None:
        return
    for statement in SCHEMA[1:]:
        tx.rows(statement, {})
    for statement in (*LAYOUT, *INDEXES):
        try:
            tx.rows(statement, {})
        except Exception as exc:
            # A missing column: tables of an older layout (the transaction is given up).
            raise SessionStoreError(
                "session_layout_mismatch", expected=SESSION_SCHEMA_VERSION, detail=str(exc)
            ) from exc
    if tx.rows("SELECT session_id FROM contextwise_sessions LIMIT 1", {}):
        raise SessionStoreError("session_layout_mismatch", expected=SESSION_SCHEMA_VERSION)
    tx.rows(
        "INSERT INTO contextwise_schema (name, version) VALUES (:n, :v)",
        {"n": "sessions", "v": SESSION_SCHEMA_VERSION},
    )


def _known(
    tx: Transaction, session_id: str, idempotency: IdempotencyKey, expired: float, count: int
) -> AddResult | None:
    """The result of the add that stored this key, or ``None``; expired keys are dropped first.
    The add stored ``count`` messages, as the digest matches: another count is a damaged row.

    The caller holds the session's row lock (its insert), so two adds with one key queue and
    the second finds the first's key.
    """
    tx.rows(
        "UPDATE contextwise_sessions SET last_item = last_item WHERE session_id = :s",
        {"s": session_id},
    )
    tx.rows(
        "DELETE FROM contextwise_idempotency WHERE session_id = :s AND stored_at <= :t",
        {"s": session_id, "t": expired},
    )
    rows = tx.rows(
        "SELECT digest, first_item, item_count, version FROM contextwise_idempotency "
        "WHERE session_id = :s AND idempotency_key = :k",
        {"s": session_id, "k": idempotency.key},
    )
    if not rows:
        return None
    digest, first, stored, version = rows[0]
    if digest != idempotency.digest:
        raise InvalidValueError(
            "idempotency_key_reused", session_id=session_id, key=idempotency.key
        )
    first = _counter(first, session_id, "contextwise_idempotency.first_item", MAX_ITEM)
    if stored != count or first + count - 1 > MAX_ITEM:
        raise _damaged(session_id, "contextwise_idempotency.item_count")
    version = _counter(version, session_id, "contextwise_idempotency.version")
    return AddResult(tuple(range(first, first + count)), version, duplicate=True)


def renumber(
    items: Sequence[StoredMessage], first: int, created_by: int | None
) -> list[StoredMessage]:
    """Give created messages their item ids from ``first``; they keep their planned positions."""
    return [
        StoredMessage(
            first + offset,
            item.position,
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
        new = renumber(entry.created, next_item, change_id)
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


class _MessageRow(NamedTuple):
    """The columns of :data:`_COLUMNS`, in order, as a row gives them."""

    item_id: Any
    position: Any
    data: Any
    chars: Any
    tokens: Any
    counter_id: Any
    created_by: Any


class _ArchiveRow(NamedTuple):
    """The columns an archive read adds after :data:`_COLUMNS`."""

    change_id: Any
    step: Any
    archived_at: Any


def _message(row: Sequence[Any], session_id: str) -> StoredMessage:
    """A stored message from its row; a row that does not decode is a coded error."""
    try:
        read = _MessageRow._make(row)
        return StoredMessage(
            int(read.item_id),
            int(read.position),
            json.loads(read.data),
            int(read.chars),
            None if read.tokens is None else int(read.tokens),
            None if read.counter_id is None else str(read.counter_id),
            None if read.created_by is None else int(read.created_by),
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionStoreError(
            "store_row_unreadable", session_id=session_id, detail=str(exc)[:200]
        ) from exc


def _messages(rows: Sequence[Sequence[Any]], session_id: str) -> list[StoredMessage]:
    return [_message(row, session_id) for row in rows]


def _context(
    rows: Sequence[Sequence[Any]], session_id: str, last_item: int
) -> list[StoredMessage]:
    """The messages of a context; one whose item id or position no store writes (an id past
    ``last_item``, a position out of the planner's range, such as one near 2**63) is a damaged
    row, which a change would otherwise carry on."""
    items = _messages(rows, session_id)
    ceiling = (last_item + 1) * POSITION_GAP
    for item in items:
        if not (0 < item.item_id <= last_item and LOWEST_POSITION <= item.position < ceiling):
            raise SessionStoreError(
                "store_row_unreadable",
                session_id=session_id,
                detail=f"item {item.item_id} at position {item.position}: out of range",
            )
    return items


def _archive_item(row: Sequence[Any], session_id: str) -> StoredArchiveItem:
    width = len(_MessageRow._fields)
    item = _message(row[:width], session_id)
    try:
        archived = _ArchiveRow._make(row[width:])
        return StoredArchiveItem(
            item,
            int(archived.change_id),
            str(archived.step),
            datetime.fromisoformat(archived.archived_at),
        )
    except (TypeError, ValueError) as exc:
        raise SessionStoreError(
            "store_row_unreadable", session_id=session_id, detail=str(exc)[:200]
        ) from exc
