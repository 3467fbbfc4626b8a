"""Sessions: a conversation that compacts itself, never loses a message and survives a crash.

:class:`ContextSession` applies a context policy to a stored conversation and stores each
reduction; the stores are :class:`MemoryStore`, :class:`SQLiteStore` (the embedded default) and
:class:`SQLAlchemyStore` (PostgreSQL, for a fleet of workers). A store implements the small
:class:`SessionStore` protocol, and the usage ledger of :class:`UsageStore`; the calibration
states of :class:`StateStore` and the integrations' memory of :class:`ConversationStore` are
protocols of their own.
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
    ConversationStore,
    IdempotencyKey,
    SessionChange,
    SessionSnapshot,
    SessionStore,
    StateStore,
    StoredArchiveItem,
    StoredMessage,
    UsageStore,
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
    "ConversationStore",
    "IdempotencyKey",
    "MemoryStore",
    "SQLAlchemyStore",
    "SQLiteStore",
    "SessionChange",
    "SessionSnapshot",
    "SessionStore",
    "StateStore",
    "StoredArchiveItem",
    "StoredMessage",
    "UsageStore",
]
