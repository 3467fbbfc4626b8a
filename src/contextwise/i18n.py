"""Locales: normalization, the process default, the gettext catalogs and locale-aware formatting.

contextwise speaks three languages: English (``en``, the default), French (``fr``) and Simplified
Chinese (``zh``). The process default lives in a :class:`~contextvars.ContextVar`, so one server can
answer users in different languages from different tasks.
"""

from __future__ import annotations

import gettext as _gettext
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias

from babel.lists import format_list
from babel.numbers import format_decimal

Locale: TypeAlias = Literal["en", "fr", "zh"]
"""One of the three supported locales."""

SUPPORTED_LOCALES: tuple[Locale, ...] = ("en", "fr", "zh")
"""The supported locales, English first."""

DOMAIN = "contextwise"
"""The gettext domain of the error messages."""

_BABEL_LOCALES: Mapping[Locale, str] = {"en": "en", "fr": "fr", "zh": "zh_Hans_CN"}
_SEPARATORS = re.compile(r"[-_.@\s]+")
_current: ContextVar[Locale] = ContextVar("contextwise_locale", default="en")


class Message(NamedTuple):
    """A translatable message: a gettext msgid, or a singular/plural pair chosen by a count.

    Attributes:
        singular: The msgid, with named placeholders such as ``{tokens}``.
        plural: The plural msgid, or ``None`` for a message without plural forms.
        count_by: The name of the parameter whose value chooses the plural form.
    """

    singular: str
    plural: str | None = None
    count_by: str | None = None


def N_(message: str) -> Message:
    """Mark a message for extraction into the catalog without translating it yet."""
    return Message(message)


def NP_(singular: str, plural: str, count: str) -> Message:
    """Mark a singular/plural pair for extraction; ``count`` names the deciding parameter."""
    return Message(singular, plural, count)


def normalize_locale(value: object) -> Locale:
    """Return the supported locale that a locale name designates.

    Accepts the usual spellings: ``fr_FR``, ``fr-CA``, ``zh_CN``, ``zh-Hans``, ``zh_Hans_CN``,
    ``ZH``, ``en_US``... Only the language subtag decides; Chinese means Simplified Chinese.

    Args:
        value: A locale name such as ``"fr_FR"`` or ``"zh-Hans"``.

    Returns:
        ``"en"``, ``"fr"`` or ``"zh"``.

    Raises:
        UnsupportedLocaleError: When the value is not a string naming English, French or Chinese.

    Examples:
        >>> normalize_locale("fr-CA")
        'fr'
        >>> normalize_locale("zh_Hans_CN")
        'zh'
    """
    if isinstance(value, str):
        language = _SEPARATORS.split(value.strip(), maxsplit=1)[0].lower()
        for supported in SUPPORTED_LOCALES:
            if language == supported:
                return supported
    from contextwise.errors import UnsupportedLocaleError

    raise UnsupportedLocaleError(
        "unsupported_locale",
        locale_name=repr(value),
        supported=list(SUPPORTED_LOCALES),
    )


def resolve_locale(locale: object | None) -> Locale:
    """Return ``locale`` normalized, or the current default when it is ``None``."""
    return _current.get() if locale is None else normalize_locale(locale)


def get_locale() -> Locale:
    """Return the current default locale (``"en"`` until :func:`set_locale` changes it).

    Examples:
        >>> get_locale() in ("en", "fr", "zh")
        True
    """
    return _current.get()


def set_locale(locale: str) -> Locale:
    """Set the default locale for the current context and return it, normalized.

    The default is held in a context variable: a task or thread started afterwards inherits it, and
    a change made inside an ``asyncio`` task does not leak into the others.

    Args:
        locale: A locale name such as ``"fr"`` or ``"zh_CN"``.

    Returns:
        The normalized locale now in force.

    Raises:
        UnsupportedLocaleError: When the locale is not English, French or Chinese.

    Examples:
        >>> previous = get_locale()
        >>> set_locale("fr_FR")
        'fr'
        >>> _ = set_locale(previous)
    """
    normalized = normalize_locale(locale)
    _current.set(normalized)
    return normalized


@contextmanager
def use_locale(locale: str) -> Iterator[Locale]:
    """Use a default locale inside a ``with`` block, restoring the previous one afterwards.

    Args:
        locale: A locale name such as ``"zh"``.

    Yields:
        The normalized locale in force inside the block.

    Raises:
        UnsupportedLocaleError: When the locale is not English, French or Chinese.

    Examples:
        >>> with use_locale("zh-Hans") as active:
        ...     print(active)
        zh
    """
    token = _current.set(normalize_locale(locale))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def locales_dir() -> Path:
    """Return the folder holding the catalogs: inside an installed wheel, or the source checkout."""
    packaged = Path(str(resources.files("contextwise"))) / "locales"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "locales"


@lru_cache(maxsize=16)
def translations(locale: Locale, domain: str = DOMAIN) -> _gettext.NullTranslations:
    """Return the gettext translations of a domain in a locale.

    A compiled ``.mo`` file is preferred; in a source checkout without one, the ``.po`` file is read
    with Babel. A missing or broken catalog gives English, never an exception.
    """
    if locale == "en":
        return _gettext.NullTranslations()
    folder = locales_dir() / locale / "LC_MESSAGES"
    try:
        mo = folder / f"{domain}.mo"
        if mo.is_file():
            with mo.open("rb") as handle:
                return _gettext.GNUTranslations(handle)
        po = folder / f"{domain}.po"
        if po.is_file():
            return _po_translations(po, locale)
    except Exception:  # noqa: BLE001 - a broken catalog must never turn into a crash
        pass
    return _gettext.NullTranslations()


def _po_translations(path: Path, locale: Locale) -> _gettext.NullTranslations:
    import io

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        catalog = read_po(handle, locale=_BABEL_LOCALES[locale])
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def format_value(value: object, locale: Locale) -> str:
    """Format one message parameter for a locale: numbers with its separators, lists joined."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        try:
            return format_decimal(value, locale=_BABEL_LOCALES[locale])
        except ArithmeticError:  # Babel's decimal context stops at 28 digits; keep the number
            return str(value)
    if isinstance(value, list | tuple) and not isinstance(value, str):
        items = [format_value(item, locale) for item in value]
        if not items:
            return "-"
        if locale == "zh":
            # Babel (CLDR) ends a Chinese list with 和 ("en、fr和zh"); Chinese technical writing
            # enumerates values with the enumeration comma alone.
            return "、".join(items)
        return format_list(items, locale=_BABEL_LOCALES[locale])
    return str(value)


def translate(message: Message, params: Mapping[str, object], locale: Locale) -> str:
    """Translate and fill a message; any catalog fault falls back to the English text."""
    english = _fill(_choose(message, params, _gettext.NullTranslations()), params, "en")
    if locale == "en":
        return english
    try:
        return _fill(_choose(message, params, translations(locale)), params, locale)
    except Exception:  # noqa: BLE001 - a broken translation falls back to English
        return english


def _choose(
    message: Message, params: Mapping[str, object], catalog: _gettext.NullTranslations
) -> str:
    if message.plural is None:
        return catalog.gettext(message.singular)
    count = params.get(message.count_by or "", 0)
    if isinstance(count, Sequence) and not isinstance(count, str):
        count = len(count)
    number = int(count) if isinstance(count, int | float) else 0
    return catalog.ngettext(message.singular, message.plural, number)


def _fill(template: str, params: Mapping[str, object], locale: Locale) -> str:
    return template.format_map({key: format_value(value, locale) for key, value in params.items()})
