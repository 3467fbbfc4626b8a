"""The fleet store: sessions in PostgreSQL, or any database SQLAlchemy reaches, for many workers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError, MissingDependencyError, SessionStoreError
from contextwise.session._records import (
    IDEMPOTENCY_WINDOW,
    check_idempotency_window,
    check_seconds,
)
from contextwise.session._sql import SqlStore, Transaction
from contextwise.session._sqlite import sqlite_error

# PostgreSQL's SQLSTATE codes (and classes, by their first two characters) and what they mean.
_SQLSTATES = {
    "53100": "store_full",  # disk_full
    "53200": "store_full",  # out_of_memory
    "25006": "store_read_only",  # read_only_sql_transaction
    "42501": "store_read_only",  # insufficient_privilege: a role that may only read
    "55P03": "store_locked",  # lock_not_available (lock_timeout)
    "57014": "store_locked",  # query_canceled (statement_timeout)
    "40P01": "store_locked",  # deadlock_detected
    "3D000": "store_cannot_open",  # invalid_catalog_name: no such database
    "08": "store_cannot_open",  # connection exceptions
    "28": "store_cannot_open",  # invalid authorization
    "42": "store_not_a_database",  # syntax errors and missing tables or columns
}


class SQLAlchemyStore(SqlStore):
    """Sessions in a database that SQLAlchemy reaches: PostgreSQL for a fleet of harness workers.

    Several processes, on several machines, may share the sessions: each write is one
    transaction, the adds to one session queue on its row, and two reductions computed from the
    same version cannot both be stored (the second raises
    :class:`~contextwise.errors.SessionConflictError`). Reads see one consistent snapshot
    (``REPEATABLE READ`` on PostgreSQL) and never wait for a writer: the layout is checked by
    reading it, and the tables are created, in a write of their own, only in a database that has
    none. A read-only database (``default_transaction_read_only``) or a role that may only read
    can be read; its writes raise ``store_read_only``.

    Every failure of the database is a :class:`~contextwise.errors.SessionStoreError` with a
    code: a server that cannot be reached, a read-only or full database, a lock held longer
    than ``timeout`` (on PostgreSQL, each write sets ``lock_timeout``).

    It needs the ``postgresql`` extra (SQLAlchemy and psycopg 3):
    ``pip install 'contextwise[postgresql]'``.

    Args:
        url: A SQLAlchemy database URL, such as
            ``postgresql+psycopg://user:password@host:5432/dbname``.
        timeout: How many seconds a write waits for another writer's lock on PostgreSQL.
        idempotency_window: How many seconds the idempotency key of an add is kept; a retry
            after that stores its messages again.
        **engine_options: Options for ``sqlalchemy.create_engine``, such as ``pool_size``.

    Raises:
        MissingDependencyError: When SQLAlchemy or the URL's database driver is not installed
            (code ``missing_extra``).
        SessionStoreError: When the URL cannot be used (code ``invalid_store_url``).
        InvalidTypeError: When ``url`` is not a string, or ``timeout`` is not a number.
        InvalidValueError: When ``timeout`` or ``idempotency_window`` is negative or not finite
            (codes ``out_of_range``, ``not_finite``).

    Examples:
        >>> from contextwise.session import SQLAlchemyStore
        >>> store = SQLAlchemyStore("sqlite://")
        >>> store.read("chat-1").version
        0
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        idempotency_window: float = IDEMPOTENCY_WINDOW,
        **engine_options: Any,
    ) -> None:
        if not isinstance(url, str):
            raise InvalidTypeError("not_a_string", name="url", type_name=type(url).__name__)
        self._timeout = check_seconds(timeout, "timeout")
        self._idempotency_window = check_idempotency_window(idempotency_window)
        self._location = _hide_password(url)
        try:
            import sqlalchemy
        except ImportError:
            raise MissingDependencyError(
                "missing_extra",
                module="contextwise.session.SQLAlchemyStore",
                package="sqlalchemy",
                extra="postgresql",
            ) from None
        try:
            self._engine = sqlalchemy.create_engine(url, **engine_options)
        except ImportError as exc:
            raise MissingDependencyError(
                "missing_extra",
                module="contextwise.session.SQLAlchemyStore",
                package=exc.name or "psycopg",
                extra="postgresql",
            ) from None
        except (sqlalchemy.exc.ArgumentError, ValueError, TypeError) as exc:
            raise SessionStoreError(
                "invalid_store_url", url=self._location, reason=str(exc)[:200]
            ) from None
        self._text = sqlalchemy.text
        self._postgresql = self._engine.dialect.name == "postgresql"

    def close(self) -> None:
        """Close the pooled connections; the store cannot be used afterwards."""
        self._engine.dispose()

    def _lock_schema(self, tx: Transaction) -> None:
        """On PostgreSQL, take a transaction lock so that two processes never create the tables
        at once."""
        if self._postgresql:
            tx.rows("SELECT pg_advisory_xact_lock(7305671234)", {})

    @contextlib.contextmanager
    def transaction(self, write: bool) -> Iterator[Transaction]:
        """Open a transaction; a read on PostgreSQL sees one snapshot (``REPEATABLE READ``)."""
        with self._engine.connect() as connection:
            if not write and self._postgresql:
                connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                tx = _SQLAlchemyTransaction(connection, self._text)
                if write and self._postgresql:
                    milliseconds = max(1, round(self._timeout * 1000))
                    tx.rows(f"SET LOCAL lock_timeout = {milliseconds}", {})
                yield tx

    def _store_error(self, error: Exception) -> SessionStoreError | None:
        """The coded error for a failure of the database, or ``None`` for another error."""
        import sqlalchemy

        if not isinstance(error, sqlalchemy.exc.SQLAlchemyError):
            return None
        original = getattr(error, "orig", None)
        if original is not None:
            found = sqlite_error(original, self._location, self._timeout)
            if found is not None:
                return found
        state = str(getattr(original, "sqlstate", "") or "")
        code = _SQLSTATES.get(state) or _SQLSTATES.get(state[:2])
        if code is None and isinstance(error, sqlalchemy.exc.OperationalError):
            code = "store_cannot_open"
        detail = str(original if original is not None else error).strip()[:300]
        params: dict[str, Any] = {"location": self._location, "detail": detail}
        if code == "store_locked":
            params["timeout"] = self._timeout
        if code is None:
            code = "store_failed"
            params["error_type"] = type(original if original is not None else error).__name__
        return SessionStoreError(code, **params)


class _SQLAlchemyTransaction:
    def __init__(self, connection: Any, text: Any) -> None:
        self._connection = connection
        self._text = text

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        result = self._connection.execute(self._text(sql), dict(params))
        if not result.returns_rows:
            return []
        return [tuple(row) for row in result.fetchall()]

    def run_many(self, sql: str, params: Sequence[Mapping[str, Any]]) -> None:
        if params:
            self._connection.execute(self._text(sql), [dict(entry) for entry in params])


def _hide_password(url: str) -> str:
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, credentials = head.partition("//")
    user = credentials.split(":", 1)[0]
    return f"{scheme}//{user}:***@{tail}"
