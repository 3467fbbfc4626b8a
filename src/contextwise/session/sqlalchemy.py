"""The fleet store: sessions in PostgreSQL, or any database SQLAlchemy reaches, for many workers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from contextwise.errors import InvalidTypeError, SessionStoreError
from contextwise.session.sql import SqlStore, Transaction


class SQLAlchemyStore(SqlStore):
    """Sessions in a database that SQLAlchemy reaches: PostgreSQL for a fleet of harness workers.

    Several processes, on several machines, may share the sessions: each write is one
    transaction, the adds to one session queue on its row, and two reductions computed from the
    same version cannot both be stored (the second raises
    :class:`~contextwise.errors.SessionConflictError`). Reads see one consistent snapshot
    (``REPEATABLE READ`` on PostgreSQL). The tables are created on first use.

    It needs the ``postgresql`` extra (SQLAlchemy and psycopg 3):
    ``pip install 'contextwise[postgresql]'``.

    Args:
        url: A SQLAlchemy database URL, such as
            ``postgresql+psycopg://user:password@host:5432/dbname``.
        **engine_options: Options for ``sqlalchemy.create_engine``, such as ``pool_size``.

    Raises:
        SessionStoreError: When SQLAlchemy is not installed (code ``store_dependency_missing``)
            or the URL cannot be used (code ``invalid_store_url``).
        InvalidTypeError: When ``url`` is not a string.

    Examples:
        >>> from contextwise.session import SQLAlchemyStore
        >>> store = SQLAlchemyStore("sqlite://")
        >>> store.read("chat-1").version
        0
    """

    def __init__(self, url: str, **engine_options: Any) -> None:
        if not isinstance(url, str):
            raise InvalidTypeError("not_a_string", name="url", type_name=type(url).__name__)
        try:
            import sqlalchemy
        except ImportError:
            raise SessionStoreError(
                "store_dependency_missing",
                store="SQLAlchemyStore",
                package="sqlalchemy",
                extra="postgresql",
            ) from None
        try:
            self._engine = sqlalchemy.create_engine(url, **engine_options)
        except ImportError as exc:
            raise SessionStoreError(
                "store_dependency_missing",
                store="SQLAlchemyStore",
                package=exc.name or "psycopg",
                extra="postgresql",
            ) from None
        except (sqlalchemy.exc.ArgumentError, ValueError) as exc:
            raise SessionStoreError(
                "invalid_store_url", url=_hide_password(url), reason=str(exc)
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
                yield _SQLAlchemyTransaction(connection, self._text)


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
