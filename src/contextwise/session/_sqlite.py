"""The embedded store: one SQLite file, on the standard library's ``sqlite3``."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError, SessionStoreError
from contextwise.session._records import (
    IDEMPOTENCY_WINDOW,
    check_idempotency_window,
    check_seconds,
)
from contextwise.session._sql import SqlStore, Transaction

# The primary result codes of SQLite (the low byte of an extended code) and what they mean here.
_SQLITE_CODES = {
    5: "store_locked",  # SQLITE_BUSY
    6: "store_locked",  # SQLITE_LOCKED
    8: "store_read_only",  # SQLITE_READONLY
    11: "store_not_a_database",  # SQLITE_CORRUPT
    13: "store_full",  # SQLITE_FULL
    14: "store_cannot_open",  # SQLITE_CANTOPEN
    23: "store_read_only",  # SQLITE_AUTH
    26: "store_not_a_database",  # SQLITE_NOTADB
}


class SQLiteStore(SqlStore):
    """Sessions in one SQLite file: the embedded default, safe for several processes at once.

    The file is in WAL mode with ``synchronous=FULL``: an ``add`` that returned is on disk, and a
    process killed at any instant loses nothing it was told was stored. Every write is one
    ``BEGIN IMMEDIATE`` transaction, so writers from several processes queue (for up to
    ``timeout`` seconds) instead of failing, and readers never wait for them: the layout is
    checked by reading it, and the tables are created, in a write of their own, only in a file
    that has none.

    A file that the process cannot write is opened to be read: its sessions can be read, and
    every write raises ``store_read_only``. On a read-only medium (a folder the process cannot
    write, where SQLite cannot create the ``-shm`` file that WAL readers share), the file is read
    as immutable, so nobody may write it meanwhile.

    Every failure of the file is a :class:`~contextwise.errors.SessionStoreError` with a code:
    a path that cannot be opened (a directory, a missing folder), a file that is not a database,
    a read-only file or filesystem, a full disk, a lock held longer than ``timeout``.

    Args:
        path: The database file; it is created when missing.
        timeout: How many seconds a write waits for another process's write to finish.
        idempotency_window: How many seconds the idempotency key of an add is kept; a retry
            after that stores its messages again.

    Raises:
        InvalidTypeError: When ``path`` is not a string or a path, or ``timeout`` is not a
            number.
        InvalidValueError: When ``timeout`` or ``idempotency_window`` is negative or not finite
            (codes ``out_of_range``, ``not_finite``).
        SessionStoreError: When the file cannot be opened (codes ``store_cannot_open``,
            ``store_not_a_database``, ``store_read_only``...).

    Examples:
        >>> import tempfile, os
        >>> from contextwise.session import SQLiteStore
        >>> folder = tempfile.mkdtemp()
        >>> store = SQLiteStore(os.path.join(folder, "sessions.db"))
        >>> store.read("chat-1").version
        0
        >>> store.close()
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        idempotency_window: float = IDEMPOTENCY_WINDOW,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise InvalidTypeError("not_a_string", name="path", type_name=type(path).__name__)
        self._timeout = check_seconds(timeout, "timeout")
        self._idempotency_window = check_idempotency_window(idempotency_window)
        try:
            self._path = os.fspath(path)
        except TypeError as exc:  # a PathLike whose __fspath__ does not give a string
            raise InvalidTypeError(
                "not_a_string", name="path", type_name=type(path).__name__
            ) from exc
        self._lock = threading.Lock()
        try:
            self._connection = self._connect()
        except (sqlite3.Error, ValueError, OSError, OverflowError) as exc:
            raise self._opening_error(exc) from exc

    def _connect(self) -> sqlite3.Connection:
        """Open the file to read and write, in WAL mode; a file that cannot be written is
        opened to read only."""
        connection = self._connection_to(self._path, uri=False)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
        except sqlite3.OperationalError as exc:
            connection.close()
            if _primary_code(exc) not in _READ_ONLY_CODES or not os.path.isfile(self._path):
                raise
            return self._connect_read_only(exc)
        return connection

    def _connect_read_only(self, cause: sqlite3.OperationalError) -> sqlite3.Connection:
        """Open a file that cannot be written, to read it: ``mode=ro``, and on a read-only
        medium, where SQLite cannot create the ``-shm`` file that WAL readers share, as an
        immutable file (when no ``-wal`` file holds writes that are not in the file yet)."""
        uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(self._path)))
        queries = ["mode=ro"]
        if not os.path.exists(f"{self._path}-wal"):
            queries.append("mode=ro&immutable=1")
        for query in queries:
            connection = self._connection_to(f"{uri}?{query}", uri=True)
            try:
                connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
            except sqlite3.OperationalError as exc:
                connection.close()
                if _primary_code(exc) not in _READ_ONLY_CODES:
                    raise
                cause = exc
            else:
                return connection
        raise cause

    def _connection_to(self, target: str, *, uri: bool) -> sqlite3.Connection:
        return sqlite3.connect(
            target,
            timeout=self._timeout,
            isolation_level=None,
            check_same_thread=False,
            uri=uri,
        )

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        with self._lock:
            self._connection.close()

    @contextlib.contextmanager
    def transaction(self, write: bool) -> Iterator[Transaction]:
        """Open a transaction: ``BEGIN IMMEDIATE`` to write, ``BEGIN`` to read a snapshot."""
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield SQLiteTransaction(connection)
            except BaseException:
                # SQLite has already rolled back after some failures (a full disk): then there
                # is nothing to roll back, and the original error is the one to raise.
                if connection.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                raise
            try:
                connection.execute("COMMIT")
            except sqlite3.Error:
                if connection.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                raise

    def _store_error(self, error: Exception) -> SessionStoreError | None:
        """The coded error for a failure of ``sqlite3``, or ``None`` for another error."""
        return sqlite_error(error, self._path, self._timeout)

    def _opening_error(self, error: Exception) -> SessionStoreError:
        found = sqlite_error(error, self._path, self._timeout)
        if found is not None and found.code != "store_failed":
            return found
        return SessionStoreError("store_cannot_open", location=self._path, detail=str(error))


_READ_ONLY_CODES = frozenset({8, 14})
"""SQLITE_READONLY and SQLITE_CANTOPEN: what opening a file that cannot be written gives."""


def _primary_code(error: sqlite3.Error) -> int:
    return int(getattr(error, "sqlite_errorcode", -1)) & 0xFF


def sqlite_error(error: BaseException, location: str, timeout: float) -> SessionStoreError | None:
    """The coded error of a ``sqlite3`` failure, by SQLite's result code.

    Args:
        error: What ``sqlite3`` raised.
        location: The database, named in the message.
        timeout: The store's lock timeout, named when the database stayed locked.

    Returns:
        The coded error, or ``None`` when ``error`` is not a ``sqlite3`` error.
    """
    if isinstance(error, sqlite3.ProgrammingError) and "closed" in str(error):
        return SessionStoreError("store_closed", location=location, detail=str(error))
    if not isinstance(error, sqlite3.Error):
        return None
    code = _SQLITE_CODES.get(getattr(error, "sqlite_errorcode", -1) & 0xFF, "store_failed")
    params: dict[str, Any] = {"location": location, "detail": str(error)}
    if code == "store_locked":
        params["timeout"] = timeout
    if code == "store_failed":
        params["error_type"] = type(error).__name__
    return SessionStoreError(code, **params)


class SQLiteTransaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return list(self._connection.execute(sql, dict(params)).fetchall())

    def run_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if params:
            self._connection.executemany(sql, [dict(entry) for entry in params])
