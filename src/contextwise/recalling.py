"""Recall: the model reads back, page by page, a tool result that a ``clear`` or ``clip`` step
took out of its context.

A cleared result says ``[cleared: 48213 characters; recall("call_7")]`` and a clipped one holds
``[clipped: 40213 characters; recall("call_7")]``: ``call_7`` is the id of the tool call, the
**ref**. :func:`~contextwise.recall` finds the original result with that ref, first in the
framework's own history (which keeps every message: contextwise only fits what the model sees),
then in the archive of a :class:`~contextwise.session.ContextSession`, and returns one page of its
text. :func:`~contextwise.recall_tool` offers the same as a tool the model calls, in the OpenAI
function format; each integration offers it in its framework's own form.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final, Literal, TypeAlias
from weakref import WeakKeyDictionary, finalize

from contextwise._checks import MAX_DEPTH, whole_number
from contextwise._effects import Effects, call, run_async, run_sync
from contextwise._translation import short_repr
from contextwise.errors import ContextwiseError, InvalidTypeError, InvalidValueError
from contextwise.messages import ChatMessage
from contextwise.policy._api import is_reduced
from contextwise.shapes import read_message
from contextwise.shapes._api import tool_results

DEFAULT_RECALL_LIMIT: Final = 8_000
"""The most characters that one page of :func:`~contextwise.recall` holds, by default."""

RecallSource: TypeAlias = Literal["history", "archive"]
"""Where :func:`~contextwise.recall` found the original: the framework's history, or the session's
archive."""

@dataclass(frozen=True, slots=True)
class RecallPage:
    """One page of a recalled tool result.

    Examples:
        >>> from contextwise import RecallPage
        >>> page = RecallPage("call_7", "Hello", offset=0, total_chars=12, source="history")
        >>> page.next_offset, page.for_model()
        (5, 'Hello\\n[recall("call_7"): characters 0 to 5 of 12; more from offset 5]')
    """

    ref: str
    """The ref that was recalled: the id of the tool call."""

    text: str
    """The page: the original text from ``offset``, at most ``limit`` characters."""

    offset: int
    """Where the page starts in the original text, in characters."""

    total_chars: int
    """The length of the whole original text."""

    source: RecallSource
    """Where the original was found: ``history`` or ``archive``."""

    def __post_init__(self) -> None:
        _checked_ref(self.ref)
        if not isinstance(self.text, str):
            raise InvalidTypeError(
                "not_a_string", name="text", type_name=type(self.text).__name__
            )
        whole_number(self.offset, "offset")
        whole_number(self.total_chars, "total_chars")
        if self.source not in ("history", "archive"):
            raise InvalidValueError(
                "invalid_choice", field="source", expected=["history", "archive"],
                value=short_repr(self.source),
            )

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts, or ``None`` when this page reaches the end."""
        end = self.offset + len(self.text)
        return end if end < self.total_chars else None

    def for_model(self) -> str:
        """The page as the model reads it: the text, then a line saying which characters it
        holds and where the next page starts. The line is not translated: the model reads it.
        """
        end = self.offset + len(self.text)
        more = "end" if self.next_offset is None else f"more from offset {end}"
        return (
            f'{self.text}\n[recall("{self.ref}"): characters {self.offset} to {end} of '
            f"{self.total_chars}; {more}]"
        )


def recall(
    ref: str,
    *,
    history: Sequence[ChatMessage] | Callable[[], Any] | None = None,
    archive: object = None,
    offset: int = 0,
    limit: int = DEFAULT_RECALL_LIMIT,
) -> RecallPage:
    """Return a page of the original text of a cleared or clipped tool result.

    Examples:
        >>> from contextwise import recall
        >>> history = [{"role": "tool", "tool_call_id": "call_7", "content": "x" * 20_000}]
        >>> page = recall("call_7", history=history, offset=8_000)
        >>> len(page.text), page.next_offset, page.total_chars
        (8000, 16000, 20000)
    """
    return run_sync(_recall(ref, history, archive, offset, limit))


async def arecall(
    ref: str,
    *,
    history: Sequence[ChatMessage] | Callable[[], Any] | None = None,
    archive: object = None,
    offset: int = 0,
    limit: int = DEFAULT_RECALL_LIMIT,
) -> RecallPage:
    """Return a page of the original text of a cleared or clipped tool result.

    The original is the tool result whose call id is ``ref`` (a Gemini result without an id is
    named ``name@digest``, as its placeholder says). It is looked for in ``history`` first, the
    framework's own messages, which keep every original; then in ``archive``, where a
    :class:`~contextwise.session.ContextSession` keeps what its policy took out. A result that
    was itself cleared or clipped is not an original and is passed over. A long original is read
    in pages, so that recalling it never fills the context at once.

    Args:
        ref: The ref that the placeholder names: the id of the tool call.
        history: The framework's messages, in any supported shape, or a function (sync or
            async) that returns them.
        archive: A :class:`~contextwise.session.ContextSession`, a list of its
            :class:`~contextwise.session.ArchivedMessage` records or of messages, or a function
            (sync or async) that returns such a list.
        offset: Where the page starts, in characters of the original text; 0 by default.
        limit: The most characters the page holds; 8,000 by default.

    Returns:
        The page, with the original's length and where the next page starts.

    Raises:
        InvalidValueError: When no original has that ref (code ``unknown_recall_ref``), the
            offset is negative (``negative_size``), the limit is below 1
            (``invalid_recall_limit``), or either is above 2⁶³ − 1 (``out_of_range``).
        InvalidTypeError: When the ref is not a string, the offset or the limit is not a whole
            number (``not_a_whole_number``), or ``history`` or ``archive`` gives something other
            than a list.

    Examples:
        >>> import asyncio
        >>> from contextwise import arecall
        >>> history = [{"role": "tool", "tool_call_id": "call_7", "content": "Sunny, 21 degrees."}]
        >>> asyncio.run(arecall("call_7", history=history, limit=5)).text
        'Sunny'
    """
    return await run_async(_recall(ref, history, archive, offset, limit))


def _recall(
    ref: object,
    history: object,
    archive: object,
    offset: object,
    limit: object,
    indexes: tuple[RecallIndex, RecallIndex] | None = None,
) -> Effects[RecallPage]:
    name = _checked_ref(ref)
    start = _whole(offset, "offset", 0)
    size = _whole(limit, "limit", 1)
    messages = yield from _read(history, "history")
    text = _find(name, messages, indexes[0] if indexes else None)
    source: RecallSource = "history"
    if text is None:
        archived = yield from _read(_archive_source(archive), "archive")
        index = _archive_index(archive) or (indexes[1] if indexes else None)
        text = _find(name, [getattr(item, "message", item) for item in archived], index)
        source = "archive"
    if text is None:
        raise InvalidValueError("unknown_recall_ref", ref=name)
    return RecallPage(name, text[start : start + size], start, len(text), source)


def original_text(ref: str, messages: Sequence[ChatMessage]) -> str | None:
    """The text of the original tool result named ``ref`` among messages, newest first, or
    ``None``; a message that no shape knows is passed over."""
    for message in reversed(messages):
        for found, text in _originals(message):
            if found == ref:
                return text
    return None


def _originals(message: object) -> list[tuple[str, str]]:
    """The refs and texts of the original tool results that one message holds."""
    try:
        facts = read_message(message, unknown_items="opaque")
    except ContextwiseError:
        return []
    if not facts.has_results:
        return []
    return [
        (result.ref, result.text)
        for result in tool_results(message, facts.shape)
        if not is_reduced(result.text)
    ]


def _same(first: object, second: object) -> bool:
    """Whether two messages are the same one: the same object, or equal (a framework that reads
    its history again builds new objects); a message whose ``==`` fails is not the same."""
    if first is second:
        return True
    try:
        return bool(first == second)
    except Exception:  # noqa: BLE001 - a strange message only costs a rebuilt index
        return False


class _Conversation:
    """The index of one conversation: where the newest original of each ref is, for the
    messages indexed so far, and a few of those messages to tell that they did not change."""

    __slots__ = ("count", "first", "refs", "samples")

    def __init__(self, first: object) -> None:
        self.first = first
        self.count = 0
        self.refs: dict[str, int] = {}
        self.samples: list[tuple[int, object]] = []

    def follows(self, messages: Sequence[object]) -> bool:
        """Whether ``messages`` extends what was indexed: as long, and the same message at each
        sampled position (the last one indexed, and every power of two before it)."""
        return self.count <= len(messages) and all(
            _same(messages[position], message) for position, message in self.samples
        )

    def extend(self, messages: Sequence[object]) -> None:
        for position in range(self.count, len(messages)):
            for ref, _ in _originals(messages[position]):
                self.refs[ref] = position
        self.count = len(messages)
        positions = {self.count - 1} | {
            (1 << power) - 1 for power in range(self.count.bit_length())
        }
        self.samples = [
            (position, messages[position]) for position in sorted(positions) if position >= 0
        ]


class RecallIndex:
    """Where each ref's original is, per conversation, so that a recall does not read the whole
    history again: each call reads only the messages added since the last one.

    A conversation is told apart by its first message; one whose indexed messages changed (an
    edited or another history) is indexed again from the start. A found original is read again
    from its message, so the index never answers with a stale text. Internal: the recall tools
    and the sessions keep one.
    """

    CONVERSATIONS: Final = 32
    """How many conversations one index remembers; the least recently used is dropped."""

    def __init__(self) -> None:
        self._conversations: list[_Conversation] = []
        self._lock = threading.Lock()  # a framework may run a sync tool in several threads
        self.reads = 0
        """How many messages were read to index them (for the tests and the benchmark)."""

    def find(self, ref: str, messages: Sequence[object]) -> str | None:
        """The text of the newest original named ``ref`` among ``messages``, or ``None``."""
        if not messages:
            return None
        with self._lock:
            conversation = self._conversation(messages)
            before = conversation.count
            conversation.extend(messages)
            self.reads += conversation.count - before
            position = conversation.refs.get(ref)
        if position is None:
            return None
        for found, text in _originals(messages[position]):
            if found == ref:
                return text
        return original_text(ref, messages)  # not reached while the history only grows

    def _conversation(self, messages: Sequence[object]) -> _Conversation:
        first = messages[0]
        for index, conversation in enumerate(self._conversations):
            if _same(conversation.first, first):
                del self._conversations[index]
                if not conversation.follows(messages):
                    conversation = _Conversation(first)
                break
        else:
            conversation = _Conversation(first)
            if len(self._conversations) >= self.CONVERSATIONS:
                self._conversations.pop()
        self._conversations.insert(0, conversation)
        return conversation


_TOOL_INDEXES: dict[int, tuple[RecallIndex, RecallIndex]] = {}
"""Each recall tool's indexes (of its history, and of an archive given as a list), by the
tool's id, dropped when the tool is."""


def _tool_indexes(tool: object) -> tuple[RecallIndex, RecallIndex]:
    key = id(tool)
    found = _TOOL_INDEXES.get(key)
    if found is None:
        found = _TOOL_INDEXES[key] = (RecallIndex(), RecallIndex())
        finalize(tool, _TOOL_INDEXES.pop, key, None)
    return found


_SESSION_INDEXES: WeakKeyDictionary[object, RecallIndex] = WeakKeyDictionary()
"""The index of each session's archive, kept as long as the session lives."""


def _archive_index(archive: object) -> RecallIndex | None:
    """The index kept for a session given as the archive, or ``None`` for another source."""
    if not callable(getattr(archive, "aarchive", None)):
        return None
    try:
        return _SESSION_INDEXES.setdefault(archive, RecallIndex())
    except TypeError:  # an object that cannot be weakly referenced
        return None


def _find(ref: str, messages: Sequence[Any], index: RecallIndex | None) -> str | None:
    return original_text(ref, messages) if index is None else index.find(ref, messages)


def _read(source: object, name: str) -> Effects[Sequence[Any]]:
    """The messages of a source: a list, or what a function (sync or async) returns."""
    if source is None:
        return []
    if callable(source):
        source = yield from call(source)
    if not isinstance(source, list | tuple):
        raise InvalidTypeError("not_a_message_list", name=name, type_name=type(source).__name__)
    return source


def _archive_source(archive: object) -> object:
    """A session reads its archive through its async face (the drivers run it either way)."""
    reader = getattr(archive, "aarchive", None)
    return reader if callable(reader) and inspect.iscoroutinefunction(reader) else archive


def _checked_ref(ref: object) -> str:
    if not isinstance(ref, str):
        raise InvalidTypeError("not_a_string", name="ref", type_name=type(ref).__name__)
    return ref


def _whole(value: object, name: str, minimum: int) -> int:
    if minimum == 1 and isinstance(value, int) and not isinstance(value, bool) and value < 1:
        raise InvalidValueError("invalid_recall_limit", value=value)
    return whole_number(value, name, minimum)


def check_tool_name(name: object) -> str:
    """A recall tool's name: a non-blank string that every framework takes (no NUL, no lone
    surrogate, since a framework encodes it in UTF-8 or hands it to C)."""
    if not isinstance(name, str):
        raise InvalidTypeError("not_a_string", name="name", type_name=type(name).__name__)
    if not name.strip() or "\x00" in name or not name.isprintable():
        raise InvalidValueError("blank_value" if not name.strip() else "invalid_value",
                                field="name", value=short_repr(name))
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError("invalid_value", field="name", value=short_repr(name)) from None
    return name


@dataclass(frozen=True, slots=True, weakref_slot=True)
class RecallTool:
    """Recall as a tool that the model calls: a name, a description, the JSON Schema of its
    arguments, and a handler (see :func:`~contextwise.recall`).

    :meth:`definition` gives the tool in the OpenAI function format; :meth:`handle` (or
    :meth:`ahandle`) answers a call with the page as text. A bad call (an unknown ref, a
    negative offset) is answered with the error's message, for the model to read, rather than
    raised: a tool call must not end the agent's run.

    Examples:
        >>> from contextwise import recall_tool
        >>> history = [{"role": "tool", "tool_call_id": "call_7", "content": "Sunny, 21 degrees."}]
        >>> tool = recall_tool(history=history)
        >>> tool.definition()["function"]["name"]
        'recall'
        >>> print(tool.handle('{"ref": "call_7", "limit": 5}'))
        Sunny
        [recall("call_7"): characters 0 to 5 of 18; more from offset 5]
    """

    history: Sequence[ChatMessage] | Callable[[], Any] | None = None
    """The framework's messages, or a function (sync or async) that returns them."""

    archive: object = None
    """A session, its archive, or a function that returns it; see :func:`~contextwise.recall`."""

    limit: int = DEFAULT_RECALL_LIMIT
    """The most characters that one page holds; a call may ask for fewer."""

    name: str = "recall"
    """The tool's name, which the placeholders name too."""

    def __post_init__(self) -> None:
        _whole(self.limit, "limit", 1)
        check_tool_name(self.name)

    @property
    def description(self) -> str:
        """What the tool does, for the model (never translated: the model reads it)."""
        return (
            "Read back the original of a tool result that was cleared or clipped from the "
            "context, one page at a time. Pass the ref that the placeholder names, as in "
            f'{self.name}("call_7"); a page ends by saying where the next one starts.'
        )

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments: ``ref``, and optional ``offset`` and
        ``limit``."""
        return {
            "type": "object",
            "properties": {
                "ref": {
                    "type": "string",
                    "description": "The ref that the placeholder names: a tool call's id.",
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Where to start reading, in characters; 0 by default.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.limit,
                    "description": f"The most characters to read; {self.limit} by default.",
                },
            },
            "required": ["ref"],
            "additionalProperties": False,
        }

    def definition(
        self, api: Literal["openai-chat", "openai-responses"] = "openai-chat"
    ) -> dict[str, Any]:
        """The tool in the OpenAI function format.

        Args:
            api: ``openai-chat`` (the default) for Chat Completions' ``tools``, or
                ``openai-responses`` for the Responses API's flatter form.

        Returns:
            The tool definition, ready to pass in the request's ``tools``.

        Raises:
            InvalidValueError: When ``api`` is neither of the two (code ``invalid_choice``).

        Examples:
            >>> from contextwise import recall_tool
            >>> sorted(recall_tool().definition("openai-responses"))
            ['description', 'name', 'parameters', 'type']
        """
        if api not in ("openai-chat", "openai-responses"):
            raise InvalidValueError(
                "invalid_choice", field="api", expected=["openai-chat", "openai-responses"],
                value=short_repr(api),
            )
        function = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if api == "openai-responses":
            return {"type": "function", **function}
        return {"type": "function", "function": function}

    def handle(self, arguments: str | Mapping[str, Any]) -> str:
        """Answer a call of the tool with the page it asks for.

        Examples:
            >>> from contextwise import recall_tool
            >>> recall_tool().handle({"ref": "call_1"}).startswith("Nothing named 'call_1'")
            True
        """
        return run_sync(self._handle(arguments))

    async def ahandle(self, arguments: str | Mapping[str, Any]) -> str:
        """Answer a call of the tool with the page it asks for.

        Args:
            arguments: The call's arguments, as the JSON text the model wrote or as a mapping.

        Returns:
            The page as the model reads it (see :meth:`RecallPage.for_model`), or the message
            of the error that made the call fail.

        Examples:
            >>> import asyncio
            >>> from contextwise import recall_tool
            >>> asyncio.run(recall_tool().ahandle("not json")).startswith("The text is not")
            True
        """
        return await run_async(self._handle(arguments))

    def _handle(
        self, arguments: str | Mapping[str, Any], history: object = None
    ) -> Effects[str]:
        try:
            values = _arguments(arguments)
            limit = values.get("limit", self.limit)
            if isinstance(limit, int) and not isinstance(limit, bool):
                limit = min(limit, self.limit)
            page: RecallPage = yield from _recall(
                values.get("ref"),
                self.history if history is None else history,
                self.archive,
                values.get("offset", 0),
                limit,
                _tool_indexes(self),
            )
        except ContextwiseError as error:
            return str(error)
        return page.for_model()


async def answer(tool: RecallTool, history: object, arguments: object) -> str:
    """Answer a call of a recall tool with the framework's current messages, keeping the tool's
    index between calls (the integrations build one tool and call this at each call)."""
    return await run_async(tool._handle(arguments, history))  # type: ignore[arg-type]


def answer_sync(tool: RecallTool, history: object, arguments: object) -> str:
    """:func:`answer`, for a framework's sync tool face."""
    return run_sync(tool._handle(arguments, history))  # type: ignore[arg-type]


def _json_int(digits: str) -> int:
    """A JSON integer of any length (``int()`` refuses more than 4,300 digits; the checks of
    offset and limit then refuse it with a coded error)."""
    return int(Decimal(digits))


def _arguments(arguments: object) -> Mapping[str, Any]:
    if isinstance(arguments, str | bytes | bytearray):
        try:
            arguments = json.loads(arguments, parse_int=_json_int)
        except json.JSONDecodeError as exc:
            raise InvalidValueError("invalid_json", line=exc.lineno, column=exc.colno) from None
        except RecursionError:
            raise InvalidValueError("too_deep", field="arguments", limit=MAX_DEPTH) from None
        except ValueError:  # undecodable bytes
            raise InvalidValueError("invalid_json", line=1, column=1) from None
    if not isinstance(arguments, Mapping):
        raise InvalidTypeError(
            "not_a_mapping", name="arguments", type_name=type(arguments).__name__
        )
    return arguments


def recall_tool(
    *,
    history: Sequence[ChatMessage] | Callable[[], Any] | None = None,
    archive: object = None,
    limit: int = DEFAULT_RECALL_LIMIT,
    name: str = "recall",
) -> RecallTool:
    """Return :func:`~contextwise.recall` as a tool for the model, in the OpenAI function format.

    Give it where the originals are: the conversation's messages (or a function that returns
    the current ones) and, with a :class:`~contextwise.session.ContextSession`, the session.
    Add ``tool.definition()`` to the request's ``tools``; when the model calls the tool, answer
    with ``tool.handle(arguments)``. List the tool's name in the ``exclude_tools`` of the
    ``clear`` step, so that a page the model just read is not cleared again at once.

    Args:
        history: The framework's messages, or a function (sync or async) that returns them.
        archive: A :class:`~contextwise.session.ContextSession`, its archive, or a function
            that returns it.
        limit: The most characters that one page holds; 8,000 by default.
        name: The tool's name; ``recall`` by default, the name the placeholders use.

    Returns:
        The tool.

    Raises:
        InvalidValueError: When the limit is below 1 (code ``invalid_recall_limit``) or above
            2⁶³ − 1 (``out_of_range``), or the name is blank (``blank_value``) or holds a
            character that a framework cannot take, such as NUL, a line break or a lone
            surrogate (``invalid_value``).
        InvalidTypeError: When the limit is not a whole number or the name not a string.

    Examples:
        >>> from contextwise import recall_tool
        >>> tool = recall_tool(limit=4_000)
        >>> tool.definition()["function"]["parameters"]["properties"]["limit"]["maximum"]
        4000
    """
    _whole(limit, "limit", 1)
    check_tool_name(name)
    return RecallTool(history, archive, limit, name)
