"""What a session store holds and exchanges: stored messages, snapshots, changes, the protocols."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from contextwise._checks import MAX_DEPTH, finite_float, too_deep
from contextwise._translation import short_repr, short_text
from contextwise.errors import InvalidTypeError, InvalidValueError

SESSION_SCHEMA_VERSION = 2
"""The version of the stores' layout, recorded in every store and checked when it is opened.

Version 2 holds integer positions and the idempotency keys of adds."""

POSITION_GAP = 1 << 20
"""The distance between the positions of two messages added one after the other: an added
message takes the position ``item_id * POSITION_GAP``, which leaves room for new messages (a
summary, an app's message) between any two."""

SESSION_ID_LIMIT = 255
"""The longest session id or idempotency key, in characters; every store accepts exactly these."""

IDEMPOTENCY_WINDOW = 86_400.0
"""How long a store keeps the idempotency key of an add, in seconds, by default: one day."""


@dataclass(slots=True)
class StoredMessage:
    """One message as a store holds it: its JSON, its place, and its sizes measured once.

    Once stored, it never changes. It is not frozen, because a frozen dataclass is three times
    slower to create and a session makes one per message added; a store may fill in the
    ``item_id`` and ``position`` of the placeholder it is given.

    Examples:
        >>> from contextwise import StoredMessage
        >>> StoredMessage(1, 1 << 20, {"role": "user", "content": "Hi"}, 2, None, None).chars
        2
    """

    item_id: int
    """The message's number in its session, from 1, in the order the store received it."""

    position: int
    """Where the message sits in the context: messages are ordered by position, then item id.
    An added message takes ``item_id * POSITION_GAP``; a message a step creates takes an integer
    between its neighbours'."""

    data: Any
    """The message as JSON data (what ``json.loads`` returns); a framework message is an
    envelope that names its framework."""

    chars: int
    """The message's characters, measured when it was added."""

    tokens: int | None
    """The message's tokens, measured when it was added, or ``None`` without a counter."""

    counter_id: str | None
    """The ``id`` of the counter that measured ``tokens``."""

    created_by: int | None = None
    """The change that created the message (a summary, for example); ``None`` when it was added."""


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """The context of a session as a store read it.

    Examples:
        >>> from contextwise import SessionSnapshot
        >>> SessionSnapshot(version=0, last_item=0, items=[]).complete
        True
    """

    version: int
    """The session's version: the number of changes stored so far."""

    last_item: int
    """The highest item id the session has given."""

    items: list[StoredMessage]
    """The messages of the context in order, or only the newly added ones when ``complete`` is
    false."""

    complete: bool = True
    """Whether ``items`` is the whole context, or only what was added since the caller's read."""


@dataclass(frozen=True, slots=True)
class ChangeEntry:
    """What one step does in a change: the messages it takes out and the ones it puts in.

    Each entry of a stored change gets its own change id, which :meth:`ContextSession.restore`
    takes.

    Examples:
        >>> from contextwise import ChangeEntry
        >>> ChangeEntry(step="trim-history", archived=[1, 2]).created
        []
    """

    step: str
    """The id of the policy step."""

    archived: list[int] = field(default_factory=list)
    """The item ids of the messages leaving the context, in context order."""

    created: list[StoredMessage] = field(default_factory=list)
    """New messages entering the context (a summary, for example); their ``item_id`` is a
    placeholder that the store replaces with the next free ones, in order."""


@dataclass(frozen=True, slots=True)
class SessionChange:
    """A change of a session's context, stored in one transaction: an optimistic write.

    The store applies it only when the session's version is still ``version``, and gives each
    entry a new change id, in order.

    Examples:
        >>> from contextwise import ChangeEntry, SessionChange
        >>> from datetime import datetime, timezone
        >>> change = SessionChange(version=3, at=datetime(2026, 1, 1, tzinfo=timezone.utc),
        ...     entries=[ChangeEntry("trim", archived=[4, 5])])
        >>> change.restored, change.moved
        (None, [])
    """

    version: int
    """The version the change was computed from."""

    at: datetime
    """When the change was made."""

    entries: list[ChangeEntry] = field(default_factory=list)
    """What each step does, in order."""

    moved: list[tuple[int, int]] = field(default_factory=list)
    """Messages that stay in the context at a new position: item id and position."""

    restored: int | None = None
    """The change whose archived messages go back into the context, for a restore."""


@dataclass(frozen=True, slots=True)
class StoredArchiveItem:
    """One archived message as a store returns it.

    Examples:
        >>> from contextwise import StoredArchiveItem, StoredMessage
        >>> from datetime import datetime, timezone
        >>> item = StoredArchiveItem(StoredMessage(1, 1 << 20, {}, 0, None, None), 1, "trim",
        ...     datetime(2026, 1, 1, tzinfo=timezone.utc))
        >>> item.change_id
        1
    """

    item: StoredMessage
    """The message."""

    change_id: int
    """The change that archived it."""

    step: str
    """The id of the policy step that took it out."""

    at: datetime
    """When it was archived."""


@dataclass(frozen=True, slots=True)
class AddResult:
    """What an add stored: where the messages stand, the session's version, and whether it was
    a retry.

    Examples:
        >>> from contextwise import AddResult
        >>> result = AddResult(positions=(4, 5), version=2)
        >>> result.positions, result.duplicate
        ((4, 5), False)
    """

    positions: tuple[int, ...]
    """The number of each message in the session (its item id, from 1, in the order the session
    received its messages), in the order given; empty for an empty add."""

    version: int
    """The session's version when the messages were stored: the number of changes (reductions
    and restores) stored before them."""

    duplicate: bool = False
    """Whether an add with the same idempotency key had already stored these messages, so this
    one stored nothing and returns the first one's result."""


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """The idempotency key of an add and the digest of its messages, as a store receives them.

    Examples:
        >>> from contextwise import IdempotencyKey
        >>> IdempotencyKey("turn-7", "9f86d081").key
        'turn-7'
    """

    key: str
    """The caller's key, unique within the session."""

    digest: str
    """The SHA-256 of the messages' JSON, which tells a retry from another add with the key."""


def check_session_id(session_id: object) -> str:
    """Check a session id as every store does, before anything is read or written.

    Raises:
        InvalidTypeError: When it is not a string (code ``not_a_string``).
        InvalidValueError: When it is blank (code ``blank_session_id``), longer than
            :data:`SESSION_ID_LIMIT` characters, or holds a NUL character or a lone surrogate
            (code ``invalid_session_id``).
    """
    return check_text_id(session_id, "session_id", "invalid_session_id", "blank_session_id")


def check_idempotency_key(key: object) -> str:
    """Check an idempotency key as every store does.

    Raises:
        InvalidTypeError: When it is not a string (code ``not_a_string``).
        InvalidValueError: When it is blank, longer than :data:`SESSION_ID_LIMIT` characters, or
            holds a NUL character or a lone surrogate (code ``invalid_idempotency_key``).
    """
    return check_text_id(key, "idempotency_key", "invalid_idempotency_key")


def check_change_id(change_id: object) -> int:
    """Check a change id: an int (not a bool). One outside the 64-bit range exists nowhere.

    Raises:
        InvalidTypeError: When it is not an integer (code ``not_a_number``).
    """
    if isinstance(change_id, bool) or not isinstance(change_id, int):
        raise InvalidTypeError(
            "not_a_number", name="change_id", type_name=type(change_id).__name__
        )
    return change_id


def check_text_id(value: object, name: str, code: str, blank_code: str | None = None) -> str:
    """Check an id that every store keeps as text: a string of at most
    :data:`SESSION_ID_LIMIT` characters that a database can hold (no NUL, no lone surrogate),
    and not blank.

    Raises:
        InvalidTypeError: When it is not a string (code ``not_a_string``).
        InvalidValueError: When it is too long or holds such a character (code ``code``), or
            blank (code ``blank_code``, ``code`` when not given).
    """
    if not isinstance(value, str):
        raise InvalidTypeError("not_a_string", name=name, type_name=type(value).__name__)
    if len(value) > SESSION_ID_LIMIT or "\x00" in value or not (value.isascii() or _encodes(value)):
        raise InvalidValueError(code, value=short_repr(value), limit=SESSION_ID_LIMIT)
    if not value.strip():
        raise InvalidValueError(blank_code or code, value=short_repr(value), limit=SESSION_ID_LIMIT)
    return value


def check_idempotency_window(window: object) -> float:
    """Check a store's idempotency window: a finite number of seconds, zero or more.

    Raises:
        InvalidTypeError: When it is not a number (code ``not_a_number``).
        InvalidValueError: When it is negative (code ``out_of_range``) or not finite (code
            ``not_finite``).
    """
    return check_seconds(window, "idempotency_window")


def check_seconds(value: object, name: str) -> float:
    """Check a store's duration setting: a finite number of seconds, zero or more."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTypeError("not_a_number", name=name, type_name=type(value).__name__)
    number = finite_float(value)
    if number is None:
        raise InvalidValueError("not_finite", field=name, value=short_repr(value))
    if number < 0:
        raise InvalidValueError(
            "out_of_range", field=name, constraint="≥ 0", value=short_repr(value)
        )
    return number


def check_items(items: object) -> Sequence[StoredMessage]:
    """Check the messages given to a store's ``append``: a list of :class:`StoredMessage`.

    Raises:
        InvalidTypeError: When it is not (code ``not_an_instance``).
    """
    if not isinstance(items, list | tuple) or not all(
        isinstance(item, StoredMessage) for item in items
    ):
        raise InvalidTypeError(
            "not_an_instance",
            name="items",
            expected="list of StoredMessage",
            type_name=type(items).__name__,
        )
    return items


def check_since(since: object) -> None:
    """Check the ``since`` of a store's ``read``: ``None`` or ``(version, last_item)``.

    Raises:
        InvalidTypeError: When it is neither (code ``not_an_instance``).
    """
    if since is not None and not (
        isinstance(since, tuple)
        and len(since) == 2
        and all(isinstance(part, int) and not isinstance(part, bool) for part in since)
    ):
        raise InvalidTypeError(
            "not_an_instance",
            name="since",
            expected="(version, last_item)",
            type_name=type(since).__name__,
        )


def check_change(change: object) -> None:
    """Check the change given to a store's ``commit``.

    Raises:
        InvalidTypeError: When it is not a :class:`SessionChange` (code ``not_an_instance``).
    """
    if not isinstance(change, SessionChange):
        raise InvalidTypeError(
            "not_an_instance",
            name="change",
            expected="SessionChange",
            type_name=type(change).__name__,
        )


def check_idempotency(idempotency: object) -> None:
    """Check the idempotency of a store's ``append``: ``None`` or an :class:`IdempotencyKey`.

    Raises:
        InvalidTypeError: When it is neither (code ``not_an_instance``).
    """
    if idempotency is not None and not isinstance(idempotency, IdempotencyKey):
        raise InvalidTypeError(
            "not_an_instance",
            name="idempotency",
            expected="IdempotencyKey",
            type_name=type(idempotency).__name__,
        )


def check_storable(value: str, field: str) -> None:
    """Check a text a store keeps beside the messages (a step id, a counter id): no NUL
    character and no lone surrogate, which PostgreSQL and SQLite refuse and memory would keep.

    Raises:
        InvalidValueError: When it holds one (code ``unstorable_text``).
    """
    if "\x00" in value or not (value.isascii() or _encodes(value)):
        raise InvalidValueError("unstorable_text", field=field, value=short_repr(value))


def _encodes(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_state_name(name: object) -> str:
    """Check the name of a state a store keeps (a calibration), as every store does.

    Raises:
        InvalidTypeError: When it is not a string (code ``not_a_string``).
        InvalidValueError: When it is blank, too long or holds a NUL character or a lone
            surrogate (code ``invalid_state_name``).
    """
    return check_text_id(name, "name", "invalid_state_name")


def json_text(value: object, field: str) -> str:
    """The JSON text a store keeps for a record or a state: a mapping that JSON encodes.

    Raises:
        InvalidTypeError: When the value is not a mapping (code ``not_a_mapping``).
        InvalidValueError: When JSON cannot encode it, or it is nested too deep (code
            ``store_value_not_json``).
    """
    if not isinstance(value, Mapping):
        raise InvalidTypeError("not_a_mapping", name=field, type_name=type(value).__name__)
    if too_deep(value):
        raise InvalidValueError(
            "store_value_not_json", field=field, reason=f"nested over {MAX_DEPTH} levels"
        )
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidValueError(
            "store_value_not_json", field=field, reason=short_text(exc)
        ) from exc
    if not (text.isascii() or _encodes(text)):
        raise InvalidValueError("store_value_not_json", field=field, reason="a lone surrogate")
    return text


MAX_ID = 2**63 - 1
"""The highest item or change id a store holds (a signed 64-bit integer in a database)."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live: the small protocol that every store implements.

    Every method is one transaction. A store serialises the writes to one session, so that item
    ids and change ids follow the order of the commits.
    """

    def read(self, session_id: str, since: tuple[int, int] | None = None) -> SessionSnapshot:
        """Read a session's context.

        Args:
            session_id: The session.
            since: The ``(version, last_item)`` of the caller's previous read; when the version
                is unchanged, only the messages added after ``last_item`` are returned.

        Returns:
            The snapshot; an unknown session is empty, at version 0.
        """
        ...

    def append(
        self,
        session_id: str,
        items: Sequence[StoredMessage],
        idempotency: IdempotencyKey | None = None,
    ) -> AddResult:
        """Add messages at the end of a session's context, in one transaction.

        With an idempotency key, the key is stored in the same transaction as the messages, and
        an add with a key the session already holds stores nothing: it returns the first add's
        result, marked as a duplicate, or raises when its messages differ.

        Args:
            session_id: The session, created when it does not exist yet.
            items: The messages; the store fills in their ``item_id`` and ``position``.
            idempotency: The add's key and the digest of its messages, or ``None``.

        Returns:
            The item ids the messages took, the session's version, and whether it was a retry.

        Raises:
            InvalidValueError: When the key was used for other messages (code
                ``idempotency_key_reused``).
        """
        ...

    def commit(self, session_id: str, change: SessionChange) -> tuple[int, list[StoredMessage]]:
        """Store a change of a session's context, in one transaction.

        Args:
            session_id: The session.
            change: The change.

        Returns:
            The new version, and the created messages with their item ids.

        Raises:
            SessionConflictError: When the session's version is no longer ``change.version``
                (code ``session_conflict``).
        """
        ...

    def archive(self, session_id: str) -> list[StoredArchiveItem]:
        """Read a session's archived messages, by change, then in context order.

        Args:
            session_id: The session.

        Returns:
            The archived messages.
        """
        ...

    def change_items(self, session_id: str, change_id: int) -> tuple[list[int], list[int]]:
        """Find what a change did that is still in force.

        Args:
            session_id: The session.
            change_id: The change.

        Returns:
            The item ids the change archived that are still archived, and the item ids it
            created that are still in the context.
        """
        ...


@runtime_checkable
class UsageStore(Protocol):
    """Where a session's usage ledger lives: what each model call spent.

    :class:`ContextSession` needs it beside :class:`SessionStore`: it records the calls of
    :meth:`~ContextSession.record_usage` and the summaries its compressors paid for, and
    :meth:`~ContextSession.usage` reads them back. :class:`MemoryStore`, :class:`SQLiteStore`
    and :class:`SQLAlchemyStore` implement it.
    """

    def add_usage(self, session_id: str, record: dict[str, Any]) -> None:
        """Add a record to a session's usage ledger, in one transaction.

        Args:
            session_id: The session.
            record: The record, JSON data.
        """
        ...

    def usage(self, session_id: str) -> list[dict[str, Any]]:
        """Read a session's usage ledger.

        Args:
            session_id: The session.

        Returns:
            The records, in the order they were added.
        """
        ...


@runtime_checkable
class StateStore(Protocol):
    """Where named states live, such as what a calibrated counter has learned.

    :class:`ContextSession` needs it when it counts with a calibrated counter, so that the next
    process starts from what this one learned.
    """

    def load_state(self, name: str) -> dict[str, Any] | None:
        """Read a named state.

        Args:
            name: The state's name.

        Returns:
            The state (JSON data), or ``None`` when there is none.
        """
        ...

    def save_state(self, name: str, state: dict[str, Any]) -> None:
        """Keep a named state, replacing the previous one, in one transaction.

        Args:
            name: The state's name.
            state: The state, JSON data.
        """
        ...


@runtime_checkable
class ConversationStore(Protocol):
    """Where the integrations keep what they remember of each conversation.

    The LangChain middleware, the pydantic-ai capability and the OpenAI Agents SDK's session take
    one as ``store``, so that a conversation's memory survives a restart and is shared by workers.
    """

    def load_conversation(self, key: str, *, ttl: float | None = None) -> tuple[int, Any] | None:
        """Read what an integration remembers of a conversation.

        Args:
            key: The conversation's key.
            ttl: The retention in seconds: a value written longer ago is not returned.

        Returns:
            The value's version and the value (JSON data), or ``None`` when there is none.
        """
        ...

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
        ...


def check_store(store: object, needs: Sequence[type], not_a_store: str) -> None:
    """Check once that a store has every method that its user will call.

    Args:
        store: The store.
        needs: The store protocols it must implement; the first is what makes it a store.
        not_a_store: The error code for a value that has none of the first protocol's methods.

    Raises:
        InvalidTypeError: When the value is not a store at all (code ``not_a_store``), or when
            it lacks some of the methods (code ``incomplete_store``, naming them).
    """
    missing = {
        protocol.__name__: [name for name in _methods(protocol) if not _has(store, name)]
        for protocol in needs
    }
    type_name = type(store).__name__
    if len(missing[needs[0].__name__]) == len(_methods(needs[0])):
        raise InvalidTypeError(not_a_store, type_name=type_name)
    names = [name for found in missing.values() for name in found]
    if names:
        protocols = [protocol for protocol, found in missing.items() if found]
        raise InvalidTypeError(
            "incomplete_store",
            type_name=type_name,
            names=names,
            count=len(names),
            protocols=protocols,
        )


def _methods(protocol: type) -> list[str]:
    """The methods a store protocol declares."""
    return [
        name for name, value in vars(protocol).items() if callable(value) and name[0] != "_"
    ]


def _has(store: object, name: str) -> bool:
    return callable(getattr(store, name, None))
