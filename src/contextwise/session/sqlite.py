"""The embedded store: one SQLite file, on the standard library's ``sqlite3``."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError
from contextwise.session.sql import SqlStore, Transaction


class SQLiteStore(SqlStore):
    """Sessions in one SQLite file: the embedded default, safe for several processes at once.

    The file is in WAL mode with ``synchronous=FULL``: an ``add`` that returned is on disk, and a
    process killed at any instant loses nothing it was told was stored. Every write is one
    ``BEGIN IMMEDIATE`` transaction, so writers from several processes queue (for up to
    ``timeout`` seconds) instead of failing. The tables are created on first use.

    Args:
        path: The database file; it is created when missing.
        timeout: How many seconds a write waits for another process's write to finish.

    Raises:
        InvalidTypeError: When ``path`` is not a string or a path.

    Examples:
        >>> import tempfile, os
        >>> from contextwise.session import SQLiteStore
        >>> folder = tempfile.mkdtemp()
        >>> store = SQLiteStore(os.path.join(folder, "sessions.db"))
        >>> store.read("chat-1").version
        0
        >>> store.close()
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        if not isinstance(path, str | os.PathLike):
            raise InvalidTypeError("not_a_string", name="path", type_name=type(path).__name__)
        self._path = os.fspath(path)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(
            self._path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("PRAGMA synchronous=FULL")

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
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")


class SQLiteTransaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return list(self._connection.execute(sql, dict(params)).fetchall())

    def run_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if params:
            self._connection.executemany(sql, [dict(entry) for entry in params])
