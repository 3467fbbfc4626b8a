"""The in-memory store: sessions that live as long as the process, for tests and short runs."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator

from contextwise.session.sql import SqlStore, Transaction
from contextwise.session.sqlite import SQLiteTransaction


class MemoryStore(SqlStore):
    """Sessions held in memory by this process: nothing survives the process.

    It behaves exactly like the other stores (same layout, same checks, same errors; it is an
    in-memory SQLite database), so a harness tested on it behaves the same on
    :class:`SQLiteStore` or :class:`SQLAlchemyStore`. Several sessions and threads may share one.

    Examples:
        >>> from contextwise.session import MemoryStore
        >>> MemoryStore().read("chat-1").items
        []
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(
            ":memory:", isolation_level=None, check_same_thread=False
        )

    @contextlib.contextmanager
    def transaction(self, write: bool) -> Iterator[Transaction]:
        """Open a transaction on the in-memory database."""
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN")
            try:
                yield SQLiteTransaction(connection)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
