"""Sessions: a conversation that compacts itself, never loses a message and survives a crash.

:class:`ContextSession` applies a context policy to a stored conversation and stores each
reduction; the stores are :class:`MemoryStore`, :class:`SQLiteStore` (the embedded default) and
:class:`SQLAlchemyStore` (PostgreSQL, for a fleet of workers). A store implements the small
:class:`SessionStore` protocol.
"""

from contextwise.session._core import ArchivedMessage, ContextSession
from contextwise.session._memory import MemoryStore
from contextwise.session._records import (
    IDEMPOTENCY_WINDOW,
    POSITION_GAP,
    SESSION_ID_LIMIT,
    SESSION_SCHEMA_VERSION,
    AddResult,
    ChangeEntry,
    IdempotencyKey,
    SessionChange,
    SessionSnapshot,
    SessionStore,
    StoredArchiveItem,
    StoredMessage,
)
from contextwise.session._sqlalchemy import SQLAlchemyStore
from contextwise.session._sqlite import SQLiteStore

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "POSITION_GAP",
    "SESSION_ID_LIMIT",
    "SESSION_SCHEMA_VERSION",
    "AddResult",
    "ArchivedMessage",
    "ChangeEntry",
    "ContextSession",
    "IdempotencyKey",
    "MemoryStore",
    "SQLAlchemyStore",
    "SQLiteStore",
    "SessionChange",
    "SessionSnapshot",
    "SessionStore",
    "StoredArchiveItem",
    "StoredMessage",
]
