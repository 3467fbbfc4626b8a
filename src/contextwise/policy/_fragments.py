"""Fragments, the named pieces of a context that a policy fits, and the result of processing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias, cast

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError, PolicyConfigurationError
from contextwise.messages import ChatMessage, messages_chars
from contextwise.policy._report import ContextProcessingReport

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


def _check_id(id: object) -> str:
    """Return a fragment id, refusing one that is not a string or is blank with a coded error."""
    if not isinstance(id, str):
        raise InvalidTypeError("not_a_string", name="id", type_name=type(id).__name__)
    if not id.strip():
        raise InvalidValueError("blank_fragment_id", value=short_repr(id))
    return id


def _bad_role(fragment_id: str, role: object) -> InvalidValueError:
    """The error for a role that a fragment does not take."""
    return InvalidValueError(
        "invalid_fragment_role",
        fragment_id=fragment_id,
        value=short_repr(role),
        supported=list(FRAGMENT_ROLES),
    )


@dataclass(frozen=True, slots=True)
class TextFragment:
    """A fragment that holds a text: a document, a memory or a tool output.

    It goes among the messages to send (:attr:`~contextwise.PreparedStep.messages`) as a message
    of its :attr:`role`, at the fragment's place in the fragment order: ``role="system"`` makes
    it a system message, ``role="user"`` (the default) a user message. The fields are read-only,
    and two text fragments are equal when their ids, texts and roles are equal.

    Raises:
        InvalidValueError: When the id is blank (code ``blank_fragment_id``), the text is
            ``None`` (code ``invalid_fragment``), or the role is not ``"system"`` or ``"user"``
            (code ``invalid_fragment_role``).
        InvalidTypeError: When the id or the text is not a string (code ``not_a_string``).

    Examples:
        >>> from contextwise import TextFragment
        >>> notes = TextFragment("notes", "Remember the milk.")
        >>> notes, notes.chars
        (TextFragment(id='notes', text='Remember the milk.', role='user'), 18)
        >>> TextFragment("rules", text="Answer in French.", role="system").role
        'system'
    """

    id: str
    """The fragment's id, which steps name in their ``fragment_id``; unique among the fragments
    of one run."""

    text: str
    """The fragment's text."""

    role: FragmentRole = DEFAULT_FRAGMENT_ROLE
    """The role of the message it becomes: ``"system"`` or ``"user"``."""

    def __post_init__(self) -> None:
        _check_id(self.id)
        if self.text is None:
            raise InvalidValueError("invalid_fragment", fragment_id=self.id)
        if not isinstance(self.text, str):
            raise InvalidTypeError("not_a_string", name="text", type_name=type(self.text).__name__)
        if self.role not in FRAGMENT_ROLES:
            raise _bad_role(self.id, self.role)

    @property
    def field(self) -> Literal["text"]:
        """``"text"``: the field the fragment holds."""
        return "text"

    @property
    def chars(self) -> int:
        """The fragment's size in characters: its text's length."""
        return len(self.text)

    def with_text(self, text: str) -> TextFragment:
        """Return a fragment with the same id and role and another text.

        Args:
            text: The new text.

        Returns:
            The new fragment.

        Examples:
            >>> from contextwise import TextFragment
            >>> TextFragment("doc", "long text").with_text("short").text
            'short'
        """
        return TextFragment(self.id, text, self.role)


@dataclass(frozen=True, slots=True)
class MessagesFragment:
    """A fragment that holds chat messages, in any shape contextwise reads.

    The messages are kept in a tuple, so the list given is never changed; the message objects
    themselves are shared, not copied, and contextwise never mutates them. The fields are
    read-only, and two messages fragments are equal when their ids and messages are equal.

    Raises:
        InvalidValueError: When the id is blank (code ``blank_fragment_id``) or the messages are
            ``None`` (code ``invalid_fragment``).
        InvalidTypeError: When the id is not a string (code ``not_a_string``), or the messages
            are not a list or a tuple (code ``fragment_messages_not_a_list``).

    Examples:
        >>> from contextwise import MessagesFragment
        >>> history = MessagesFragment("history", [{"role": "user", "content": "Hi"}])
        >>> history.messages, history.chars
        (({'role': 'user', 'content': 'Hi'},), 2)
    """

    id: str
    """The fragment's id, which steps name in their ``fragment_id``; unique among the fragments
    of one run."""

    messages: Sequence[ChatMessage]
    """The fragment's chat messages, in order, in the OpenAI or the Anthropic shape; a list given
    is kept as a tuple."""

    def __post_init__(self) -> None:
        _check_id(self.id)
        if self.messages is None:
            raise InvalidValueError("invalid_fragment", fragment_id=self.id)
        if not isinstance(self.messages, list | tuple):
            raise InvalidTypeError(
                "fragment_messages_not_a_list",
                fragment_id=self.id,
                type_name=type(self.messages).__name__,
            )
        if isinstance(self.messages, list):
            # The one write of a frozen dataclass: the list given is kept as a tuple.
            object.__setattr__(self, "messages", tuple(self.messages))

    @property
    def field(self) -> Literal["messages"]:
        """``"messages"``: the field the fragment holds."""
        return "messages"

    @property
    def chars(self) -> int:
        """The fragment's size in characters: the sum of its messages' sizes."""
        return messages_chars(self.messages)

    def with_messages(self, messages: Sequence[ChatMessage]) -> MessagesFragment:
        """Return a fragment with the same id and other messages.

        Args:
            messages: The new messages.

        Returns:
            The new fragment.

        Examples:
            >>> from contextwise import MessagesFragment
            >>> MessagesFragment("h", []).with_messages([{"role": "user", "content": "x"}]).chars
            1
        """
        return MessagesFragment(self.id, messages)


Fragment: TypeAlias = TextFragment | MessagesFragment
"""A named piece of the context: a :class:`TextFragment` or a :class:`MessagesFragment`.

A policy fits fragments; each step names the fragment it changes by its id. Build a fragment
with ``TextFragment(id, text)`` or ``MessagesFragment(id, messages)``; ``isinstance(fragment,
Fragment)`` holds for both, and code that reads one tells the two apart by their type
(``match fragment: case TextFragment(text=text): ...``). Where fragments are given as a list, a
mapping with the keys ``id`` and ``text`` (and an optional ``role``) or ``id`` and ``messages``
is also accepted."""


def fragment_of(entry: Mapping[str, object]) -> Fragment:
    """Build a fragment from a mapping with the keys ``id`` and ``text`` (and an optional
    ``role``) or ``id`` and ``messages``: exactly one of ``text`` and ``messages``."""
    id = _check_id(entry.get("id"))
    text, messages, role = entry.get("text"), entry.get("messages"), entry.get("role")
    if (text is None) == (messages is None):
        raise InvalidValueError("invalid_fragment", fragment_id=id)
    if messages is None:
        # The dataclass checks the values' types; cast only tells the type checker so.
        return TextFragment(
            id, cast(str, text), cast(FragmentRole, DEFAULT_FRAGMENT_ROLE if role is None else role)
        )
    if role is not None:
        raise _bad_role(id, role)
    return MessagesFragment(id, cast(Sequence[ChatMessage], messages))


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
            fragment = fragment_of(entry)
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
        >>> from contextwise import ContextPolicy, TextFragment, process_context
        >>> result = process_context(ContextPolicy(mode="validate"), [TextFragment("doc", "Hi")])
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
