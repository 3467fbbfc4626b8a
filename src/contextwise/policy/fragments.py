"""Fragments, the named pieces of a context that a policy fits, and the result of processing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError, PolicyConfigurationError
from contextwise.messages import ChatMessage, messages_chars
from contextwise.policy.report import ContextProcessingReport

FragmentField: TypeAlias = Literal["messages", "text"]
"""The field a fragment holds: a list of chat messages, or a text."""

RemovedItem: TypeAlias = ChatMessage | str
"""Something a policy took out of a fragment: a message, or a span of text."""

FragmentRole: TypeAlias = Literal["system", "user"]
"""Where a text fragment goes among the messages to send: a system or a user message."""

FRAGMENT_ROLES: tuple[FragmentRole, ...] = ("system", "user")
"""The accepted values of a text fragment's ``role``."""

DEFAULT_FRAGMENT_ROLE: FragmentRole = "user"
"""The role of a text fragment that declares none: every provider accepts user messages, while
some (Anthropic, Gemini) take system text apart from the messages."""


class Fragment:
    """A named piece of the context: a list of chat messages, or a text.

    A fragment holds exactly one of the two. The messages are kept in a tuple, so the list given
    is never changed; the message objects themselves are shared, not copied, and contextwise
    never mutates them. The attributes are read-only, and two fragments are equal when their ids,
    contents and roles are equal.

    A text fragment says where it goes among the messages to send
    (:attr:`~contextwise.PreparedStep.messages`): ``role="system"`` makes it a system message,
    ``role="user"`` (the default) a user message, at the fragment's place in the fragment order.

    Args:
        id: The fragment's id, which steps name in their ``fragment_id``.
        text: The fragment's text, for a document, a memory or a tool output.
        messages: The fragment's chat messages, in the OpenAI or the Anthropic shape.
        role: For a text fragment, the role of the message it becomes: ``"system"`` or
            ``"user"``; ``"user"`` when omitted. A message fragment takes no role.

    Raises:
        InvalidValueError: When the id is blank (code ``blank_fragment_id``), the fragment has
            both or neither of ``text`` and ``messages`` (code ``invalid_fragment``), or the role
            is not a role of a text fragment (code ``invalid_fragment_role``).
        InvalidTypeError: When the id or the text is not a string, or the messages are not a list
            or a tuple.

    Examples:
        >>> from contextwise import Fragment
        >>> history = Fragment("history", messages=[{"role": "user", "content": "Hi"}])
        >>> history.field, history.chars
        ('messages', 2)
        >>> Fragment(id="notes", text="Remember the milk.").chars
        18
        >>> Fragment("rules", text="Answer in French.", role="system").role
        'system'
    """

    __slots__ = ("_id", "_messages", "_role", "_text")

    def __init__(
        self,
        id: str,
        *,
        text: str | None = None,
        messages: Sequence[ChatMessage] | None = None,
        role: FragmentRole | None = None,
    ) -> None:
        if not isinstance(id, str):
            raise InvalidTypeError("not_a_string", name="id", type_name=type(id).__name__)
        if not id.strip():
            raise InvalidValueError("blank_fragment_id", value=short_repr(id))
        if (text is None) == (messages is None):
            raise InvalidValueError("invalid_fragment", fragment_id=id)
        if text is not None and not isinstance(text, str):
            raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
        held: tuple[ChatMessage, ...] | None = None
        if messages is not None:
            if not isinstance(messages, list | tuple):
                raise InvalidTypeError(
                    "fragment_messages_not_a_list",
                    fragment_id=id,
                    type_name=type(messages).__name__,
                )
            held = tuple(messages)
        if role is not None and (text is None or role not in FRAGMENT_ROLES):
            raise InvalidValueError(
                "invalid_fragment_role",
                fragment_id=id,
                value=short_repr(role),
                supported=list(FRAGMENT_ROLES),
            )
        self._role: FragmentRole | None = None
        if text is not None:
            self._role = DEFAULT_FRAGMENT_ROLE if role is None else role
        self._id = id
        self._text = text
        self._messages = held

    @property
    def id(self) -> str:
        """The fragment's id, unique among the fragments of one run."""
        return self._id

    @property
    def text(self) -> str | None:
        """The fragment's text, or ``None`` when it holds messages."""
        return self._text

    @property
    def messages(self) -> tuple[ChatMessage, ...] | None:
        """The fragment's messages, or ``None`` when it holds a text."""
        return self._messages

    @property
    def role(self) -> FragmentRole | None:
        """The role of the message a text fragment becomes, or ``None`` for messages."""
        return self._role

    def __repr__(self) -> str:
        if self._text is not None:
            return f"Fragment({self._id!r}, text={self._text!r}, role={self._role!r})"
        return f"Fragment({self._id!r}, messages={list(self._messages or ())!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fragment):
            return NotImplemented
        mine = (self._id, self._text, self._messages, self._role)
        return mine == (other._id, other._text, other._messages, other._role)

    __hash__ = None  # type: ignore[assignment]  # messages are dicts, which cannot be hashed

    @property
    def field(self) -> FragmentField:
        """``messages`` or ``text``: the field the fragment holds."""
        return "text" if self.text is not None else "messages"

    @property
    def chars(self) -> int:
        """The fragment's size in characters: its text's length, or the sum of its messages'."""
        if self.text is not None:
            return len(self.text)
        return messages_chars(self.messages or ())

    def with_messages(self, messages: Sequence[ChatMessage]) -> Fragment:
        """Return a fragment with the same id and other messages.

        Args:
            messages: The new messages.

        Returns:
            The new fragment.

        Examples:
            >>> from contextwise import Fragment
            >>> Fragment("h", messages=[]).with_messages([{"role": "user", "content": "x"}]).chars
            1
        """
        return Fragment(self.id, messages=messages)

    def with_text(self, text: str) -> Fragment:
        """Return a fragment with the same id and role and another text.

        Args:
            text: The new text.

        Returns:
            The new fragment.

        Examples:
            >>> from contextwise import Fragment
            >>> Fragment("doc", text="long text").with_text("short").text
            'short'
        """
        return Fragment(self.id, text=text, role=self._role)


def coerce_fragments(fragments: object) -> list[Fragment]:
    """Turn the ``fragments`` argument into a list of fragments with unique ids.

    Args:
        fragments: A list or tuple of :class:`Fragment` objects or mappings with the keys ``id``
            and ``text`` (with an optional ``role``) or ``messages``.

    Returns:
        The fragments, in order.

    Raises:
        InvalidTypeError: When the argument or one entry has the wrong type; a chat message where
            a fragment is expected has the code ``messages_not_fragments``.
        InvalidValueError: When an entry is not a valid fragment.
        PolicyConfigurationError: When two fragments share an id (code ``duplicate_fragment_id``).
    """
    if not isinstance(fragments, list | tuple) and (
        isinstance(fragments, str | bytes | Mapping) or not isinstance(fragments, Iterable)
    ):
        raise InvalidTypeError("not_a_fragment_list", type_name=type(fragments).__name__)
    result: list[Fragment] = []
    seen: set[str] = set()
    for index, entry in enumerate(fragments):
        if isinstance(entry, Fragment):
            fragment = entry
        elif isinstance(entry, Mapping) and "id" not in entry and _looks_like_message(entry):
            raise InvalidTypeError("messages_not_fragments", index=index)
        elif isinstance(entry, Mapping):
            fragment = Fragment(
                entry.get("id"),  # type: ignore[arg-type]
                text=entry.get("text"),
                messages=entry.get("messages"),
                role=entry.get("role"),
            )
        else:
            raise InvalidTypeError(
                "invalid_fragment_type", index=index, type_name=type(entry).__name__
            )
        if fragment.id in seen:
            raise PolicyConfigurationError("duplicate_fragment_id", fragment_id=fragment.id)
        seen.add(fragment.id)
        result.append(fragment)
    return result


def _looks_like_message(entry: Mapping[object, object]) -> bool:
    """Whether a mapping given as a fragment is a chat message: a role, or a typed item."""
    return "role" in entry or ("type" in entry and "text" not in entry and "messages" not in entry)


@dataclass(frozen=True, slots=True)
class ContextResult:
    """What :func:`~contextwise.policy.process_context` returns: the fragments, the report and
    everything it removed.

    ``removed`` has an entry for every fragment, so the caller can archive what left the context:
    nothing is lost silently. For messages, the entry lists the removed (or summarized) messages
    in their original order; kept and removed messages together are the input. For a text, it
    lists the spans cut by trims (each taken from the text as it was when the step ran; the
    fragment's text holds the marker where the span was) and, for a compression or an app, the
    whole text that was replaced.

    Examples:
        >>> from contextwise import ContextPolicy, Fragment, process_context
        >>> result = process_context(ContextPolicy(mode="validate"), [Fragment("doc", text="Hi")])
        >>> result.fragment("doc").text, result.removed
        ('Hi', {'doc': []})
    """

    fragments: tuple[Fragment, ...]
    """The fragments after processing, in the input order."""

    report: ContextProcessingReport
    """What was measured, chosen and changed."""

    removed: dict[str, list[RemovedItem]]
    """For each fragment id, the messages or text spans taken out of it, in order."""

    def fragment(self, fragment_id: str) -> Fragment:
        """Return the fragment with an id.

        Args:
            fragment_id: The id of the fragment.

        Returns:
            The fragment after processing.

        Raises:
            InvalidValueError: When no fragment has that id (code ``fragment_not_found``).
        """
        for fragment in self.fragments:
            if fragment.id == fragment_id:
                return fragment
        raise InvalidValueError(
            "fragment_not_found",
            fragment_id=fragment_id,
            fragment_ids=[fragment.id for fragment in self.fragments],
        )
