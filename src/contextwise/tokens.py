"""Token counting: a rough estimate, the TokenCounter protocol and adapters for real tokenizers.

contextwise never downloads a tokenizer. It counts with the rough estimate of
:func:`estimate_tokens` unless the application hands it a tokenizer it already has: any object
with an ``encode`` method (a tiktoken ``Encoding``, a Hugging Face ``tokenizers.Tokenizer``, a
``transformers`` tokenizer) or any function that returns a number of tokens.
"""

from collections.abc import Callable, Mapping
from operator import index as _as_index
from typing import Any, Protocol, SupportsIndex, runtime_checkable

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "CallableCounter",
    "EstimateCounter",
    "TokenCounter",
    "TokenizerCounter",
    "as_token_counter",
    "count_tokens",
    "estimate_tokens",
]


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidTypeError("not_a_string", name="text", type_name=type(text).__name__)
    return text


def check_count(result: object, counter_id: str) -> int:
    """Return a counter's result when it is a whole number of zero or more, else raise."""
    if type(result) is int and result >= 0:
        return result
    # ``__index__`` admits NumPy integers and refuses floats and strings.
    if not isinstance(result, bool) and isinstance(result, SupportsIndex):
        number = _as_index(result)
        if number >= 0:
            return number
    raise InvalidValueError(
        "invalid_counter_result", counter_id=counter_id, value=short_repr(result)
    )


def estimate_tokens(text: str) -> int:
    """Estimate the number of tokens of a text without a tokenizer: about four characters a token.

    The estimate is ``ceil(len(text) / 4)``, and 0 for an empty text. It is rough: it overcounts
    English prose and code, whose tokens are often longer than four characters, and it undercounts
    JSON and Chinese, Japanese or Korean text, whose tokens are often shorter. Use a real tokenizer
    through :class:`TokenizerCounter` when the numbers must be exact.

    Args:
        text: The text to measure.

    Returns:
        The estimated number of tokens.

    Raises:
        InvalidTypeError: When the text is not a string (code ``not_a_string``).

    Examples:
        >>> estimate_tokens("Summarize the meeting notes.")
        7
        >>> estimate_tokens("")
        0
    """
    return (len(_check_text(text)) + 3) // 4


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a text: an ``id`` and a ``count(text)`` method.

    Implement it to plug any tokenizer into contextwise, or use one of the built-in counters:
    :class:`EstimateCounter`, :class:`TokenizerCounter` and :class:`CallableCounter`. The protocol
    can be checked at run time with ``isinstance``; :func:`as_token_counter` turns a tokenizer or a
    function into a counter.

    Examples:
        >>> class WordCounter:
        ...     id = "words"
        ...     def count(self, text: str) -> int:
        ...         return len(text.split())
        >>> isinstance(WordCounter(), TokenCounter)
        True
        >>> WordCounter().count("three short words")
        3
    """

    @property
    def id(self) -> str:
        """The counter's name, recorded in reports next to the numbers it produced."""
        ...

    def count(self, text: str) -> int:
        """Count the tokens of a text.

        Args:
            text: The text to measure.

        Returns:
            The number of tokens, a whole number of zero or more.
        """
        ...


class EstimateCounter:
    """The token counter of :func:`estimate_tokens`: about four characters a token.

    Its ``id`` is ``"estimate"``. It is the counter to use when no tokenizer is available; the
    numbers are rough, as described in :func:`estimate_tokens`.

    Examples:
        >>> counter = EstimateCounter()
        >>> counter.id, counter.count("Summarize the meeting notes.")
        ('estimate', 7)
    """

    __slots__ = ()

    @property
    def id(self) -> str:
        """The counter's name: ``"estimate"``."""
        return "estimate"

    def count(self, text: str) -> int:
        """Estimate the tokens of a text with :func:`estimate_tokens`.

        Args:
            text: The text to measure.

        Returns:
            The estimated number of tokens.

        Raises:
            InvalidTypeError: When the text is not a string (code ``not_a_string``).

        Examples:
            >>> EstimateCounter().count("abcdefgh")
            2
        """
        return estimate_tokens(text)

    def __repr__(self) -> str:
        return "EstimateCounter()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EstimateCounter)

    def __hash__(self) -> int:
        return hash(EstimateCounter)


def _counter_id(explicit: object, source: object, attribute: str) -> str:
    """The id of an adapter: the explicit one, else the source's name attribute, else its type."""
    if explicit is None:
        name = getattr(source, attribute, None)
        return name if isinstance(name, str) and name else type(source).__name__
    if not isinstance(explicit, str):
        raise InvalidTypeError("not_a_string", name="id", type_name=type(explicit).__name__)
    return explicit


class TokenizerCounter:
    """A token counter that wraps a tokenizer object with an ``encode`` method.

    It counts the token ids that ``tokenizer.encode(text)`` returns. It understands both usual
    shapes of the result: a list of ids (tiktoken ``Encoding``, ``transformers`` tokenizers,
    SentencePiece) and an object with an ``ids`` attribute (the ``Encoding`` of the Hugging Face
    ``tokenizers`` library). contextwise never imports or downloads a tokenizer itself: the
    application builds it and hands it over.

    An exception raised by the tokenizer's ``encode`` method propagates unchanged, since it comes
    from the tokenizer and not from contextwise.

    Args:
        tokenizer: The tokenizer, any object with an ``encode`` method.
        id: The counter's name recorded in reports. By default it is the tokenizer's ``name``
            attribute when it is a string (tiktoken encodings have one, such as
            ``"cl100k_base"``), otherwise the tokenizer's class name. Pass a precise name, such as
            the model's, to make reports clear.
        encode_kwargs: Keyword arguments passed to every ``encode`` call, for example
            ``{"add_special_tokens": False}`` for a Hugging Face tokenizer or
            ``{"disallowed_special": ()}`` for tiktoken, which otherwise refuses texts that contain
            special-token markers.

    Raises:
        InvalidTypeError: When the tokenizer has no callable ``encode`` (code
            ``invalid_tokenizer``), when ``id`` is not a string (code ``not_a_string``), or
            ``encode_kwargs`` is not a mapping of names (code ``not_a_mapping``).

    Examples:
        >>> class Characters:
        ...     name = "characters"
        ...     def encode(self, text: str) -> list[int]:
        ...         return [ord(char) for char in text]
        >>> counter = TokenizerCounter(Characters())
        >>> counter.id, counter.count("hello")
        ('characters', 5)
    """

    __slots__ = ("_encode", "_id", "_kwargs", "_tokenizer")

    def __init__(
        self,
        tokenizer: Any,
        *,
        id: str | None = None,
        encode_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        encode = getattr(tokenizer, "encode", None)
        # ``str.encode`` and ``bytes`` do not tokenize: a string is a mistake, not a tokenizer.
        if not callable(encode) or isinstance(tokenizer, str | bytes):
            raise InvalidTypeError("invalid_tokenizer", type_name=type(tokenizer).__name__)
        self._id = _counter_id(id, tokenizer, "name")
        self._tokenizer = tokenizer
        self._encode: Callable[..., Any] = encode
        if encode_kwargs is not None and (
            not isinstance(encode_kwargs, Mapping)
            or not all(isinstance(key, str) for key in encode_kwargs)
        ):
            raise InvalidTypeError(
                "not_a_mapping", name="encode_kwargs", type_name=type(encode_kwargs).__name__
            )
        self._kwargs = dict(encode_kwargs or {})

    @property
    def id(self) -> str:
        """The counter's name, recorded in reports."""
        return self._id

    @property
    def tokenizer(self) -> Any:
        """The wrapped tokenizer."""
        return self._tokenizer

    def count(self, text: str) -> int:
        """Count the tokens of a text with the wrapped tokenizer.

        Args:
            text: The text to measure.

        Returns:
            The number of token ids that the tokenizer's ``encode`` returns.

        Raises:
            InvalidTypeError: When the text is not a string (code ``not_a_string``).
            InvalidTypeError: When ``encode`` returns something that is neither a sequence of
                ids nor an object with ``ids`` (code ``invalid_encode_result``).

        Examples:
            >>> class Words:
            ...     def encode(self, text: str) -> list[int]:
            ...         return [len(word) for word in text.split()]
            >>> TokenizerCounter(Words(), id="words").count("count these three")
            3
        """
        result = self._encode(_check_text(text), **self._kwargs)
        ids = getattr(result, "ids", result)
        if isinstance(ids, str | bytes) or not hasattr(ids, "__len__"):
            raise InvalidTypeError(
                "invalid_encode_result", counter_id=self._id, type_name=type(result).__name__
            )
        return len(ids)

    def __repr__(self) -> str:
        return f"TokenizerCounter({self._tokenizer!r}, id={self._id!r})"


class CallableCounter:
    """A token counter that wraps a function from a text to its number of tokens.

    Each result is checked: it must be a whole number of zero or more (an ``int``, or an integer
    type such as NumPy's); anything else, a float or a bool included, raises
    :class:`InvalidValueError` with the code ``invalid_counter_result``.

    Args:
        func: The function, which takes a string and returns a number of tokens.
        id: The counter's name recorded in reports; the function's ``__name__`` by default.

    Raises:
        InvalidTypeError: When ``func`` is not callable (code ``invalid_tokenizer``) or when ``id``
            is not a string (code ``not_a_string``).

    Examples:
        >>> words = CallableCounter(lambda text: len(text.split()), id="words")
        >>> words.id, words.count("Summarize the meeting notes.")
        ('words', 4)
    """

    __slots__ = ("_func", "_id")

    def __init__(self, func: Callable[[str], int], *, id: str | None = None) -> None:
        if not callable(func):
            raise InvalidTypeError("invalid_tokenizer", type_name=type(func).__name__)
        self._id = _counter_id(id, func, "__name__")
        self._func = func

    @property
    def id(self) -> str:
        """The counter's name, recorded in reports."""
        return self._id

    def count(self, text: str) -> int:
        """Count the tokens of a text with the wrapped function.

        Args:
            text: The text to measure.

        Returns:
            The function's result, checked to be a whole number of zero or more.

        Raises:
            InvalidTypeError: When the text is not a string (code ``not_a_string``).
            InvalidValueError: When the function returns something other than a whole number of
                zero or more (code ``invalid_counter_result``).

        Examples:
            >>> CallableCounter(len, id="characters").count("hello")
            5
        """
        return check_count(self._func(_check_text(text)), self._id)

    def __repr__(self) -> str:
        return f"CallableCounter({self._func!r}, id={self._id!r})"


def as_token_counter(obj: object) -> TokenCounter:
    """Turn a tokenizer, a function or a counter into a :class:`TokenCounter`.

    The adapter is chosen in this order: an object that already is a token counter (it has an
    ``id`` and a ``count`` method) is returned as it is; an object with an ``encode`` method is
    wrapped in a :class:`TokenizerCounter`; a callable is wrapped in a :class:`CallableCounter`.
    The ``encode`` method wins over calling, because ``transformers`` tokenizers are also callable
    but return a batch rather than a count. To choose the counter's ``id``, build the adapter
    directly.

    Args:
        obj: A token counter, a tokenizer with ``encode``, or a function from a text to a number
            of tokens.

    Returns:
        A token counter.

    Raises:
        InvalidTypeError: When the object is none of these (code ``invalid_tokenizer``).

    Examples:
        >>> words = as_token_counter(lambda text: len(text.split()))
        >>> words.count("Summarize the meeting notes.")
        4
        >>> as_token_counter(EstimateCounter()).id
        'estimate'
    """
    if isinstance(obj, TokenCounter):
        return obj
    if isinstance(obj, str | bytes):
        raise InvalidTypeError("invalid_tokenizer", type_name=type(obj).__name__)
    if callable(getattr(obj, "encode", None)):
        return TokenizerCounter(obj)
    if callable(obj):
        return CallableCounter(obj)
    raise InvalidTypeError("invalid_tokenizer", type_name=type(obj).__name__)


def count_tokens(text: str, counter: object | None = None) -> int:
    """Count the tokens of a text with a counter, and check the result.

    This is the checked way to call any counter: whatever the counter returns is verified to be a
    whole number of zero or more before it is used, so a faulty counter raises a clear error
    instead of producing wrong numbers later.

    Args:
        text: The text to measure.
        counter: A token counter, a tokenizer with ``encode`` or a function, as accepted by
            :func:`as_token_counter`; the rough estimate of :func:`estimate_tokens` when omitted.

    Returns:
        The number of tokens.

    Raises:
        InvalidTypeError: When the text is not a string (code ``not_a_string``) or when the
            counter cannot count (code ``invalid_tokenizer``).
        InvalidValueError: When the counter returns something other than a whole number of zero
            or more (code ``invalid_counter_result``).

    Examples:
        >>> count_tokens("Summarize the meeting notes.")
        7
        >>> count_tokens("Summarize the meeting notes.", lambda text: len(text.split()))
        4
    """
    _check_text(text)
    if counter is None:
        return estimate_tokens(text)
    adapted = as_token_counter(counter)
    return check_count(adapted.count(text), str(getattr(adapted, "id", "?")))
