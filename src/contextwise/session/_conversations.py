"""What the integrations remember of a conversation, kept by a store: one JSON value per key.

An integration that remembers its reductions keeps, per conversation, fingerprints into the
framework's own history and the messages it made (summaries). A store keeps that value under an
optimistic version, so two workers never overwrite each other in silence, and forgets the values
not written for longer than a retention (``ttl``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from contextwise._checks import MAX_DEPTH, finite_float, too_deep
from contextwise._translation import short_repr, short_text
from contextwise.errors import (
    InvalidTypeError,
    InvalidValueError,
    SessionConflictError,
    SessionStoreError,
)
from contextwise.session._records import MAX_ID, check_text_id

TABLE = (
    "CREATE TABLE IF NOT EXISTS contextwise_conversations (conversation_key TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL)"
)
"""The table that the SQL stores create beside the sessions' tables."""


class Rows(Protocol):
    """A statement runner inside one open transaction (what the SQL stores give)."""

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run a statement and return its rows."""
        ...


def check_ttl(ttl: object) -> float | None:
    """A retention in seconds, checked: ``None`` keeps values forever.

    Raises:
        InvalidValueError: When ``ttl`` is not a finite number of seconds above 0 (code
            ``invalid_ttl``).
    """
    if ttl is None:
        return None
    if isinstance(ttl, timedelta):
        ttl = ttl.total_seconds()
    seconds = finite_float(ttl)
    if seconds is None or not 0 < seconds < math.inf:
        raise InvalidValueError("invalid_ttl", value=short_repr(ttl))
    return seconds


def check_key(key: object) -> str:
    """A conversation key, checked as every store checks it.

    Raises:
        InvalidTypeError: When it is not a string (code ``not_a_string``).
        InvalidValueError: When it is blank, too long or holds a NUL character or a lone
            surrogate (code ``invalid_conversation_key``).
    """
    return check_text_id(key, "key", "invalid_conversation_key")


def check_version(version: object) -> int:
    """A version read with ``load_conversation``: a whole number of zero or more.

    Raises:
        InvalidTypeError: When it is not an integer (code ``not_a_number``).
        InvalidValueError: When it is negative (code ``out_of_range``).
    """
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidTypeError("not_a_number", name="version", type_name=type(version).__name__)
    if not 0 <= version < 2**63:
        raise InvalidValueError(
            "out_of_range", field="version", constraint="≥ 0", value=short_repr(version)
        )
    return version


def encode(key: str, value: object) -> str:
    """The JSON text a store keeps for a conversation's value.

    Raises:
        InvalidValueError: When JSON cannot encode the value, or it is nested too deep (code
            ``conversation_value_not_json``).
    """
    if too_deep(value):
        raise InvalidValueError(
            "conversation_value_not_json", key=key, reason=f"nested over {MAX_DEPTH} levels"
        )
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidValueError(
            "conversation_value_not_json", key=key, reason=short_text(exc)
        ) from exc
    return text


def decode(key: str, text: object) -> Any:
    """The value a store kept; JSON text that does not decode is a damaged row."""
    try:
        return json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionStoreError(
            "store_row_unreadable", session_id=key, detail=str(exc)[:200]
        ) from exc


def stored_version(key: str, value: object) -> int:
    """The version a store kept: an integer below 2**63 - 1 (so that it can still grow);
    anything else is a damaged row."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_ID:
        return value
    raise SessionStoreError(
        "store_row_unreadable",
        session_id=key,
        detail=f"contextwise_conversations.version is {short_repr(value)}",
    )


def now_text() -> str:
    """The current time as stored: ISO 8601 in UTC, which sorts as text."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def cutoff_text(ttl: float | None) -> str | None:
    """The oldest time a value may have been written at to be kept, or ``None`` for no limit."""
    if ttl is None:
        return None
    try:
        return (datetime.now(UTC) - timedelta(seconds=ttl)).isoformat(timespec="microseconds")
    except OverflowError:  # a retention longer than the calendar keeps everything
        return None


def load(tx: Rows, key: str, ttl: float | None) -> tuple[int, Any] | None:
    """The version and value kept under a key, or ``None`` (never written, or expired)."""
    rows = tx.rows(
        "SELECT version, data, updated_at FROM contextwise_conversations "
        "WHERE conversation_key = :k",
        {"k": key},
    )
    if not rows:
        return None
    version, data, updated_at = rows[0]
    cutoff = cutoff_text(ttl)
    if cutoff is not None and str(updated_at) < cutoff:
        return None
    return stored_version(key, version), decode(key, data)


def save(tx: Rows, key: str, value: Any, version: int, ttl: float | None) -> int:
    """Write a value under a key if its version is still ``version``; return the new version.

    Expired values of every key are deleted in the same transaction, so the table does not grow
    forever.

    Raises:
        SessionConflictError: When another writer wrote the key since ``version`` was read
            (code ``conversation_conflict``).
    """
    cutoff = cutoff_text(ttl)
    if cutoff is not None:
        tx.rows(
            "DELETE FROM contextwise_conversations WHERE updated_at < :cutoff AND "
            "conversation_key <> :k",
            {"cutoff": cutoff, "k": key},
        )
    rows = tx.rows(
        "SELECT version, updated_at FROM contextwise_conversations WHERE conversation_key = :k",
        {"k": key},
    )
    stored = stored_version(key, rows[0][0]) if rows else 0
    found = stored if rows and (cutoff is None or str(rows[0][1]) >= cutoff) else 0
    if found != version:
        raise SessionConflictError(
            "conversation_conflict", key=key, expected=version, found=found
        )
    new = stored + 1
    params = {"k": key, "old": stored, "v": new, "d": encode(key, value), "t": now_text()}
    # Conditional writes: a writer that got in between makes this one write nothing.
    if rows:
        written = tx.rows(
            "UPDATE contextwise_conversations SET version = :v, data = :d, updated_at = :t "
            "WHERE conversation_key = :k AND version = :old RETURNING version",
            params,
        )
    else:
        written = tx.rows(
            "INSERT INTO contextwise_conversations (conversation_key, version, data, updated_at) "
            "VALUES (:k, :v, :d, :t) ON CONFLICT (conversation_key) DO NOTHING RETURNING version",
            params,
        )
    if not written:
        raise SessionConflictError(
            "conversation_conflict", key=key, expected=version, found=version + 1
        )
    return new
