"""What a session store holds and exchanges: stored messages, snapshots, changes, the protocol."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

SESSION_SCHEMA_VERSION = 1
"""The version of the stores' layout, recorded in every store and checked when it is opened."""


@dataclass(slots=True)
class StoredMessage:
    """One message as a store holds it: its JSON, its place, and its sizes measured once.

    Once stored, it never changes. It is not frozen, because a frozen dataclass is three times
    slower to create and a session makes one per message added; a store may fill in the
    ``item_id`` and ``position`` of the placeholder it is given.

    Examples:
        >>> StoredMessage(1, 1.0, {"role": "user", "content": "Hi"}, 2, None, None).chars
        2
    """

    item_id: int
    """The message's number in its session, from 1, in the order the store received it."""

    position: float
    """Where the message sits in the context: messages are ordered by position, then item id."""

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

    moved: list[tuple[int, float]] = field(default_factory=list)
    """Messages that stay in the context at a new position: item id and position."""

    restored: int | None = None
    """The change whose archived messages go back into the context, for a restore."""


@dataclass(frozen=True, slots=True)
class StoredArchiveItem:
    """One archived message as a store returns it.

    Examples:
        >>> from datetime import datetime, timezone
        >>> item = StoredArchiveItem(StoredMessage(1, 1.0, {}, 0, None, None), 1, "trim",
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

    def append(self, session_id: str, items: Sequence[StoredMessage]) -> list[StoredMessage]:
        """Add messages at the end of a session's context, in one transaction.

        Args:
            session_id: The session, created when it does not exist yet.
            items: The messages; their ``item_id`` and ``position`` are placeholders, which the
                store may fill in.

        Returns:
            The stored messages, with their item ids and positions.
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
