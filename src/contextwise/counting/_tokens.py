"""Token counting: a rough estimate, the TokenCounter protocol and adapters for real tokenizers.

The package :mod:`contextwise.counting` documents it and re-exports its public names.
"""

import math
import re
from collections.abc import Callable, Iterator, Mapping
from operator import index as _as_index
from typing import Any, Literal, Protocol, SupportsIndex, TypeAlias, runtime_checkable

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "ESTIMATE_VERSION",
    "SCRIPTS",
    "CallableCounter",
    "EstimateCounter",
    "Script",
    "TokenCounter",
    "TokenizerCounter",
    "as_token_counter",
    "count_tokens",
    "estimate_by_script",
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


Script: TypeAlias = Literal[
    "latin",
    "cyrillic",
    "greek",
    "arabic",
    "hebrew",
    "indic",
    "thai",
    "letters",
    "han",
    "kana",
    "hangul",
    "digits",
    "encoded",
    "symbols",
    "code",
]
"""A kind of text that tokenizers cut differently: words in the Latin alphabet (``latin``), in
the Cyrillic, Greek, Arabic and Hebrew alphabets, in the scripts of India (``indic``:
Devanagari, Bengali, Tamil and the others), in Thai or Lao (``thai``), in any other alphabet
(``letters``); CJK ideographs (``han``), Japanese kana (``kana``), Korean syllables
(``hangul``); numbers (``digits``); long runs of letters and digits mixed such as base64,
hexadecimal hashes and generated ids (``encoded``); emoji, and punctuation and symbols outside
ASCII (``symbols``); and ASCII punctuation, spaces and line structure (``code``)."""

SCRIPTS: tuple[Script, ...] = (
    "latin",
    "cyrillic",
    "greek",
    "arabic",
    "hebrew",
    "indic",
    "thai",
    "letters",
    "han",
    "kana",
    "hangul",
    "digits",
    "encoded",
    "symbols",
    "code",
)
"""Every :data:`Script`, in the order :func:`estimate_by_script` reports them."""

ESTIMATE_VERSION = 3
"""The version of :func:`estimate_tokens`'s rules. Version 1 was four characters a token,
version 2 knew Latin text, CJK, numbers and code only; a count stored with the estimate's ``id``
and an older version is measured again."""

(_LATIN, _CYRILLIC, _GREEK, _ARABIC, _HEBREW, _INDIC, _THAI, _LETTERS, _HAN, _KANA, _HANGUL,
 _DIGITS, _ENCODED, _SYMBOLS, _CODE) = range(len(SCRIPTS))

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# The alphabets that are not Latin, each with its combining marks, by the name of its group.
_ALPHABETS = {
    "cyrillic": "\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f",
    "greek": "\u0370-\u03ff\u1f00-\u1fff",
    "arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefe",
    "hebrew": "\u0591-\u05f4\ufb1d-\ufb4f",
    "indic": "\u0900-\u0dff",
    "thai": "\u0e00-\u0eff",
}
_NOT_LETTERS = "".join(_ALPHABETS.values()) + _CJK
# The pieces a tokenizer's pre-tokenizer cuts a text into, close to the GPT-4 pattern that most
# tokenizers share: a long run of letters, digits and the signs of base64 (a candidate for an
# encoded string), runs of CJK, words of each alphabet (with the space before them), numbers of
# up to three digits, a line break with the indentation after it, punctuation and symbol runs,
# other whitespace. The same pattern without the first group cuts a run that is not encoded.
_REST = (
    rf"(?P<cjk>[{_CJK}]+)"
    + "".join(rf"|(?P<{name}> ?[{chars}]+)" for name, chars in _ALPHABETS.items())
    + rf"|(?P<word> ?[^\W\d_{_NOT_LETTERS}]+)"
    r"|(?P<num>\d{1,3})"
    r"|(?P<nl>\n[ \t]*)"
    rf"|(?P<punct> ?[^\s\w{_NOT_LETTERS}]+|_+)"
    r"|(?P<ws>[ \t]+|\s)"
)
_PIECES = re.compile(r"(?P<run> ?[A-Za-z0-9+/=_\-]{16,})|" + _REST, re.S)
_PLAIN = re.compile(_REST, re.S)
# The parts of a word that tokenizers keep apart: camelCase humps and capitalised runs.
_WORD_PARTS = re.compile(
    r"[A-Z]?[a-z\u00df-\u00ff\u0100-\u024f]+|[A-Z\u00c0-\u00de]+(?![a-z])|[^\W\d_]+"
)
# Where a run changes between lower case, upper case and digits the way encoded data does (a
# capital after a small letter, a letter after a digit, a digit after a letter).
_CHANGES = re.compile(r"[a-z](?=[A-Z0-9])|[A-Z](?=[0-9])|[0-9](?=[A-Za-z])")
_NOT_LATIN = re.compile(r"[^\x00-\u024f\u1e00-\u1eff]")
# Tenths of a token, measured on benchmarks/corpus (prose in fifteen languages, code, data, logs,
# ids, base64, URLs and emoji), on the guides in three languages and on the source against the
# o200k, cl100k, DeepSeek and legacy Claude tokenizers (benchmarks/bench_tokens.py).
_PART, _LONG_CHAR, _CAPS_CHAR, _LATIN1_LETTER, _EXTENDED_LETTER = 10, 4, 1, 12, 15
_VERY_LONG_PART, _VERY_LONG_CHAR, _FOREIGN_CHAR = 8, 3, 4
_HAN_PRICE, _KANA_PRICE, _HANGUL_PRICE, _NUMBER = 12, 13, 14, 12
_LINE, _PUNCT, _PUNCT_EXTRA, _NON_ASCII_SYMBOL, _SPACE = 8, 10, 2, 16, 10
_ASTRAL_SYMBOL, _ENCODED_CHAR = 30, 7.5
_LONG_PART = 6
# Each alphabet that is not Latin: its index in SCRIPTS, tenths a word and tenths a character.
_ALPHABET_PRICES = {
    "cyrillic": (_CYRILLIC, 4, 7),
    "greek": (_GREEK, 4, 13),
    "arabic": (_ARABIC, 4, 11),
    "hebrew": (_HEBREW, 4, 11),
    "indic": (_INDIC, 4, 13),
    "thai": (_THAI, 4, 19),
}
_OTHER_LETTER = (_LETTERS, 4, 15)


def _word_tenths(word: str) -> int:
    tenths = 0
    for part in _WORD_PARTS.findall(word) or (word,):
        size = len(part)
        tenths += _PART
        if size > 1 and part.isupper():
            tenths += _CAPS_CHAR * size
        elif size > _LONG_PART:
            tenths += _LONG_CHAR * (size - _LONG_PART)
            if size > _VERY_LONG_PART:
                tenths += _VERY_LONG_CHAR * (size - _VERY_LONG_PART)
    if word.isascii():
        return tenths
    latin1 = sum(1 for char in word if "\x7f" < char <= "\xff")
    extended = sum(1 for char in word if char > "\xff")
    tenths += _LATIN1_LETTER * latin1 + _EXTENDED_LETTER * extended
    return tenths + (_FOREIGN_CHAR * len(word.lstrip(" ")) if extended else 0)


def _cjk_tenths(run: str, tenths: list[int]) -> None:
    for char in run:
        if char <= "\u30ff":
            tenths[_KANA] += _KANA_PRICE
        elif char >= "\uac00":
            tenths[_HANGUL] += _HANGUL_PRICE
        else:
            tenths[_HAN] += _HAN_PRICE


def _punct_tenths(piece: str, tenths: list[int]) -> None:
    core = piece.lstrip(" ")
    if core.isascii():
        tenths[_CODE] += _PUNCT + _PUNCT_EXTRA * (len(core) - 1)
        return
    plain = sum(1 for char in core if char <= "\x7f")
    astral = sum(1 for char in core if char > "\uffff")
    tenths[_CODE] += _PUNCT + _PUNCT_EXTRA * max(plain - 1, 0) if plain else 0
    tenths[_SYMBOLS] += _NON_ASCII_SYMBOL * (len(core) - plain - astral) + _ASTRAL_SYMBOL * astral
    if not plain:
        tenths[_SYMBOLS] += _PUNCT


def _run_tenths(run: str, tenths: list[int]) -> None:
    """A long run of letters, digits and base64 signs: encoded data, or words cut as usual."""
    core = run.lstrip(" ")
    if 4 * len(_CHANGES.findall(core)) >= len(core):
        tenths[_ENCODED] += math.ceil(_ENCODED_CHAR * len(core)) + _SPACE * (len(run) - len(core))
    else:
        _plain_tenths(_PLAIN.finditer(run), tenths)


def _plain_tenths(matches: Iterator[re.Match[str]], tenths: list[int]) -> None:
    for match in matches:
        kind, piece = match.lastgroup, match.group()
        if kind == "word":
            if piece.isascii() or _NOT_LATIN.search(piece) is None:
                tenths[_LATIN] += _word_tenths(piece)
            else:
                _alphabet_tenths(piece, _OTHER_LETTER, tenths)
        elif kind == "ws":
            tenths[_CODE] += _SPACE
        elif kind == "punct":
            _punct_tenths(piece, tenths)
        elif kind == "num":
            tenths[_DIGITS] += _NUMBER
        elif kind == "nl":
            tenths[_CODE] += _LINE
        elif kind == "cjk":
            _cjk_tenths(piece, tenths)
        elif kind == "run":
            _run_tenths(piece, tenths)
        else:
            _alphabet_tenths(piece, _ALPHABET_PRICES[str(kind)], tenths)


def _alphabet_tenths(word: str, price: tuple[int, int, int], tenths: list[int]) -> None:
    index, per_word, per_char = price
    tenths[index] += per_word + per_char * len(word.lstrip(" "))


def _script_tenths(text: str) -> list[int]:
    """Tenths of a token per script, in the order of :data:`SCRIPTS`."""
    tenths = [0] * len(SCRIPTS)
    _plain_tenths(_PIECES.finditer(text), tenths)
    return tenths


def estimate_tokens(text: str) -> int:
    """Estimate the number of tokens of a text without a tokenizer, script by script.

    The text is cut into the pieces that tokenizers cut it into (words, runs of CJK characters,
    numbers, punctuation, line breaks, long runs of letters and digits), and each piece is priced
    by its kind: a word of the Latin alphabet about one token a part, more for a long or
    capitalised one or for letters outside ASCII (accents); a word of another alphabet (Cyrillic,
    Greek, Arabic, Hebrew, the scripts of India, Thai) by its number of letters, at that
    alphabet's own rate; about 1.2 tokens a CJK ideograph, 1.3 a kana, 1.4 a hangul syllable, 1.2
    a number of up to three digits, 0.75 a character of encoded data (base64, hexadecimal hashes,
    generated ids), 3 an emoji. Each rate follows the largest count of four real tokenizers
    (OpenAI's o200k and cl100k, DeepSeek's and the legacy Claude tokenizer), which disagree by up
    to 4.7 times on Thai: measured per document on ``benchmarks/corpus`` (prose in fifteen
    languages across ten scripts, code, JSON, logs, ids and hashes, base64, URLs, emoji), on the
    guides in English, French and Chinese and on contextwise's source, the estimate is at least
    0.95 times and at most 1.6 times the largest count, so it is well over the smallest on some
    scripts (``benchmarks/bench_tokens.py`` prints the table). Use a real tokenizer through
    :class:`TokenizerCounter`, or calibrate the estimate against what the provider reports with
    :class:`~contextwise.CalibratedCounter`, when the numbers must be exact.

    Args:
        text: The text to measure.

    Returns:
        The estimated number of tokens, 0 for an empty text.

    Raises:
        InvalidTypeError: When the text is not a string (code ``not_a_string``).

    Examples:
        >>> from contextwise import estimate_tokens
        >>> estimate_tokens("Summarize the meeting notes.")
        7
        >>> estimate_tokens("总结会议记录。")
        10
        >>> estimate_tokens("")
        0
    """
    return (sum(_script_tenths(_check_text(text))) + 9) // 10


def estimate_by_script(text: str) -> dict[Script, int]:
    """Split :func:`estimate_tokens` by script: the estimated tokens of each kind of text.

    Each count is rounded up on its own, so the counts may add up to a little more than
    :func:`estimate_tokens`. :class:`~contextwise.CalibratedCounter` fits one ratio per script
    from these counts.

    Args:
        text: The text to measure.

    Returns:
        The estimated tokens of each :data:`Script` that the text holds (a script it does not
        hold is left out).

    Raises:
        InvalidTypeError: When the text is not a string (code ``not_a_string``).

    Examples:
        >>> from contextwise import estimate_by_script
        >>> estimate_by_script("Total: 42 个")
        {'latin': 1, 'han': 2, 'digits': 2, 'code': 3}
        >>> estimate_by_script("Привет, мир 🎉")
        {'cyrillic': 8, 'symbols': 4, 'code': 1}
    """
    tenths = _script_tenths(_check_text(text))
    return {
        script: (value + 9) // 10 for script, value in zip(SCRIPTS, tenths, strict=True) if value
    }


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that counts the tokens of a text: an ``id`` and a ``count(text)`` method.

    Implement it to plug any tokenizer into contextwise, or use one of the built-in counters:
    :class:`EstimateCounter`, :class:`TokenizerCounter` and :class:`CallableCounter`. The protocol
    can be checked at run time with ``isinstance``; :func:`as_token_counter` turns a tokenizer or a
    function into a counter.

    Examples:
        >>> from contextwise import TokenCounter
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
    """The token counter of :func:`estimate_tokens`, script by script.

    Its ``id`` is ``"estimate"`` and its ``version`` is :data:`ESTIMATE_VERSION`: a session
    stores each count with both, and measures again a count that an older version made. It is
    the counter to use when no tokenizer is available; the numbers are conservative, as
    described in :func:`estimate_tokens`.

    Examples:
        >>> from contextwise import EstimateCounter
        >>> counter = EstimateCounter()
        >>> counter.id, counter.version, counter.count("Summarize the meeting notes.")
        ('estimate', 3, 7)
    """

    __slots__ = ()

    @property
    def id(self) -> str:
        """The counter's name: ``"estimate"``."""
        return "estimate"

    @property
    def version(self) -> int:
        """The version of the estimate's rules: :data:`ESTIMATE_VERSION`."""
        return ESTIMATE_VERSION

    def count(self, text: str) -> int:
        """Estimate the tokens of a text with :func:`estimate_tokens`.

        Args:
            text: The text to measure.

        Returns:
            The estimated number of tokens.

        Raises:
            InvalidTypeError: When the text is not a string (code ``not_a_string``).

        Examples:
            >>> from contextwise import EstimateCounter
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
        >>> from contextwise import TokenizerCounter
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
            >>> from contextwise import TokenizerCounter
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
        >>> from contextwise import CallableCounter
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
            >>> from contextwise import CallableCounter
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
        >>> from contextwise import EstimateCounter, as_token_counter
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
        >>> from contextwise import count_tokens
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
