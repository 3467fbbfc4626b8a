"""Fragments, the named pieces of a context that a policy fits, and the result of processing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

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


class _FragmentType(type):
    """Builds fragments: ``Fragment(...)`` picks the type from its arguments, and every fragment
    is checked, with its messages held in a tuple, before its fields are set."""

    def __call__(cls, id: str, *args: Any, **kwargs: Any) -> Any:
        if args:
            # A text or messages fragment also takes its fields by position, as a dataclass does.
            names = {TextFragment: ("text", "role"), MessagesFragment: ("messages",)}.get(cls, ())
            if len(args) > len(names) or any(name in kwargs for name in names[: len(args)]):
                raise TypeError(f"{cls.__name__}() takes the id and its fields in order")
            kwargs.update(zip(names, args, strict=False))
        return cls._build(id, **kwargs)

    def _build(
        cls,
        id: str,
        *,
        text: str | None = None,
        messages: Sequence[ChatMessage] | None = None,
        role: FragmentRole | None = None,
    ) -> Any:
        if not isinstance(id, str):
            raise InvalidTypeError("not_a_string", name="id", type_name=type(id).__name__)
        if not id.strip():
            raise InvalidValueError("blank_fragment_id", value=short_repr(id))
        wanted = cls
        if cls is Fragment:
            wanted = TextFragment if text is not None else MessagesFragment
        if (text is None) == (messages is None) or (
            (wanted is TextFragment) != (text is not None)
        ):
            raise InvalidValueError("invalid_fragment", fragment_id=id)
        if wanted is TextFragment:
            if not isinstance(text, str):
                raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
            if role is not None and role not in FRAGMENT_ROLES:
                raise InvalidValueError(
                    "invalid_fragment_role",
                    fragment_id=id,
                    value=short_repr(role),
                    supported=list(FRAGMENT_ROLES),
                )
            return type.__call__(wanted, id, text=text, role=role or DEFAULT_FRAGMENT_ROLE)
        if not isinstance(messages, list | tuple):
            raise InvalidTypeError(
                "fragment_messages_not_a_list", fragment_id=id, type_name=type(messages).__name__
            )
        if role is not None:
            raise InvalidValueError(
                "invalid_fragment_role",
                fragment_id=id,
                value=short_repr(role),
                supported=list(FRAGMENT_ROLES),
            )
        return type.__call__(wanted, id, messages=tuple(messages))


class Fragment(metaclass=_FragmentType):
    """A named piece of the context: a list of chat messages, or a text.

    ``Fragment(id, text=...)`` builds a :class:`TextFragment` and ``Fragment(id, messages=...)``
    a :class:`MessagesFragment`; both are fragments (``isinstance(fragment, Fragment)``), and a
    step or an application tells them apart by their type. A fragment holds exactly one of the
    two. The messages are kept in a tuple, so the list given is never changed; the message
    objects themselves are shared, not copied, and contextwise never mutates them. The attributes
    are read-only, and two fragments are equal when they are of the same type and their ids,
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
        >>> type(history).__name__, history.field, history.chars
        ('MessagesFragment', 'messages', 2)
        >>> Fragment(id="notes", text="Remember the milk.").chars
        18
        >>> Fragment("rules", text="Answer in French.", role="system").role
        'system'
    """

    __slots__ = ()

    def __init__(
        self,
        id: str,
        *,
        text: str | None = None,
        messages: Sequence[ChatMessage] | None = None,
        role: FragmentRole | None = None,
    ) -> None:  # never runs: the type of Fragment builds a TextFragment or a MessagesFragment
        pass

    id: str
    """The fragment's id, unique among the fragments of one run."""

    text: str | None
    """The fragment's text, or ``None`` when it holds messages."""

    messages: tuple[ChatMessage, ...] | None
    """The fragment's messages, or ``None`` when it holds a text."""

    role: FragmentRole | None
    """The role of the message a text fragment becomes, or ``None`` for messages."""

    @property
    def field(self) -> FragmentField:
        """``messages`` or ``text``: the field the fragment holds."""
        return "text" if isinstance(self, TextFragment) else "messages"

    @property
    def chars(self) -> int:
        """The fragment's size in characters: its text's length, or the sum of its messages'."""
        if isinstance(self, TextFragment):
            return len(self.text)
        return messages_chars(self.messages or ())

    def with_messages(self, messages: Sequence[ChatMessage]) -> MessagesFragment:
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
        fragment = Fragment(self.id, messages=messages)
        assert isinstance(fragment, MessagesFragment)
        return fragment

    def with_text(self, text: str) -> TextFragment:
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
        fragment = Fragment(self.id, text=text, role=self.role)
        assert isinstance(fragment, TextFragment)
        return fragment


@dataclass(frozen=True, slots=True)
class TextFragment(Fragment):
    """A fragment that holds a text: a document, a memory or a tool output.

    ``Fragment(id, text=...)`` builds one; ``TextFragment(id, text=..., role=...)`` is the same.
    It goes among the messages to send as a message of its :attr:`role`.

    Examples:
        >>> from contextwise import Fragment, TextFragment
        >>> notes = Fragment("notes", text="Remember the milk.")
        >>> isinstance(notes, TextFragment), notes
        (True, TextFragment(id='notes', text='Remember the milk.', role='user'))
    """

    id: str
    """The fragment's id, unique among the fragments of one run."""

    text: str
    """The fragment's text."""

    role: FragmentRole = DEFAULT_FRAGMENT_ROLE
    """The role of the message it becomes: ``"system"`` or ``"user"``."""

    @property
    def messages(self) -> None:  # type: ignore[override]
        """``None``: a text fragment holds no messages."""
        return None


@dataclass(frozen=True, slots=True)
class MessagesFragment(Fragment):
    """A fragment that holds chat messages, in any shape contextwise reads.

    ``Fragment(id, messages=...)`` builds one; ``MessagesFragment(id, messages=...)`` is the
    same. The messages are held in a tuple.

    Examples:
        >>> from contextwise import Fragment, MessagesFragment
        >>> history = Fragment("history", messages=[{"role": "user", "content": "Hi"}])
        >>> isinstance(history, MessagesFragment), history.messages
        (True, ({'role': 'user', 'content': 'Hi'},))
    """

    id: str
    """The fragment's id, unique among the fragments of one run."""

    messages: tuple[ChatMessage, ...]
    """The fragment's messages, in order."""

    @property
    def text(self) -> None:  # type: ignore[override]
        """``None``: a messages fragment holds no text."""
        return None

    @property
    def role(self) -> None:  # type: ignore[override]
        """``None``: a messages fragment becomes no message of its own."""
        return None


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
