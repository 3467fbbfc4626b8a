"""The translation machinery under ``errors.py`` and ``i18n.py``: languages, messages, catalogs.

This module imports nothing from contextwise, so that both the errors (which render their
messages through it) and the public locale functions of :mod:`contextwise.i18n` (which raise
those errors) can build on it without importing each other. Its public names are re-exported and
documented by :mod:`contextwise.i18n`.
"""

from __future__ import annotations

import gettext as _gettext
import math
import re
import reprlib
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal, NamedTuple, TypeAlias

from babel.lists import format_list
from babel.numbers import format_decimal

# The type of a language code. A type checker cannot read a tuple's values, so a new language is
# added here and to LANGUAGES below; ``Language.code`` is typed with it, so mypy keeps them in step.
Locale: TypeAlias = Literal["en", "fr", "zh"]
"""One of the three supported locales."""


class Language(NamedTuple):
    """One language contextwise speaks: its messages, its reference pages and its site.

    Attributes:
        code: The short code used in catalogs, folders and URLs, such as ``"fr"``.
        babel_locale: The Babel (CLDR) locale that formats numbers and lists, such as
            ``"zh_Hans_CN"``.
        native_name: The language's name in itself, as the site's language switcher shows it.
    """

    code: Locale
    babel_locale: str
    native_name: str


LANGUAGES: tuple[Language, ...] = (
    Language("en", "en", "English"),
    Language("fr", "fr", "Français"),
    Language("zh", "zh_Hans_CN", "简体中文"),
)
"""The languages of contextwise, English (the source language) first.

The one list the project reads: the error catalogs, the reference generator, the translation gate
and the site configuration's check all follow it.

Examples:
    >>> from contextwise.i18n import LANGUAGES
    >>> [language.code for language in LANGUAGES]
    ['en', 'fr', 'zh']
"""

SUPPORTED_LOCALES: tuple[Locale, ...] = tuple(language.code for language in LANGUAGES)
"""The supported locales, English first."""

DOMAIN = "contextwise"
"""The gettext domain of the error messages."""

current_locale: ContextVar[Locale] = ContextVar("contextwise_locale", default="en")
"""The default locale of the current context (the only module-level mutable state)."""

_SEPARATORS = re.compile(r"[-_.@\s]+")


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


# Translators: an empty list of values in an error message ("it provides none").
_EMPTY_LIST = N_("none")


def match_locale(value: object) -> Locale | None:
    """Return the supported locale that a locale name designates, or ``None``.

    Only the language subtag decides (``fr_FR``, ``zh-Hans``, ``EN``...); Chinese means Simplified
    Chinese.
    """
    if isinstance(value, str):
        language = _SEPARATORS.split(value.strip(), maxsplit=1)[0].lower()
        for supported in SUPPORTED_LOCALES:
            if language == supported:
                return supported
    return None


def babel_locale(locale: str) -> str:
    """Return the Babel locale of a language code (the code itself for an unknown one)."""
    for language in LANGUAGES:
        if language.code == locale:
            return language.babel_locale
    return locale


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
        catalog = read_po(handle, locale=babel_locale(locale))
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


TEXT_PARAM_LIMIT = 500
"""The longest text parameter a message shows, in characters; a longer one is cut with ``…``."""

LIST_PARAM_LIMIT = 20
"""The most items of a list parameter that a message shows; the rest is summarized as ``…``."""

_HUGE_INT_BITS = 100
"""Integers above about 10**30 are shown as a power of ten: Babel's decimal context stops at 28
digits, and ``str()`` refuses integers over 4,300 digits."""


class _ShortRepr(reprlib.Repr):
    """A ``repr`` that never raises and stays short: levels, items and long texts are elided."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxstring = 120
        self.maxother = 120
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = 8

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _HUGE_INT_BITS:
            return huge_int_text(x)
        return super().repr_int(x, level)

    def repr_instance(self, x: object, level: int) -> str:
        try:
            text = repr(x)
        except Exception:  # noqa: BLE001 - a broken __repr__ must not break an error message
            return f"<{type(x).__name__}>"
        if len(text) > self.maxother:
            half = max(0, (self.maxother - 3) // 2)
            text = text[:half] + "..." + text[len(text) - half :]
        return text


_SHORT_REPR = _ShortRepr()


def short_repr(value: object, limit: int = 80) -> str:
    """The ``repr`` of a value as an error message quotes it: at most ``limit`` characters.

    It never raises: an object whose ``repr`` raises is shown by its type name, deep or large
    containers are elided, huge integers are shown as a power of ten.
    """
    try:
        text = _SHORT_REPR.repr(value)
    except Exception:  # noqa: BLE001 - RecursionError and any other fault of a strange value
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_text(value: object, limit: int = TEXT_PARAM_LIMIT) -> str:
    """The ``str`` of a value as an error message shows it: at most ``limit`` characters.

    It never raises: a value whose ``str`` fails is shown by :func:`short_repr`.
    """
    try:
        text = value if isinstance(value, str) else _format(value, "en", nested=True)
    except Exception:  # noqa: BLE001 - a broken __str__ must not break an error message
        text = short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def huge_int_text(value: int) -> str:
    """An integer too large to print, as the power of ten it is near: ``≈10^400``."""
    exponent = int(math.log10(abs(value)))
    return f"{'-' if value < 0 else ''}≈10^{exponent}"


def format_value(value: object, locale: Locale) -> str:
    """Format one message parameter for a locale: numbers with its separators, lists joined.

    It never raises and keeps the message short: a long text is cut, a long list shows its first
    items, a huge number is summarized, and a value whose ``str`` fails is shown by its type.
    """
    try:
        return _format(value, locale, nested=False)
    except Exception:  # noqa: BLE001 - a strange parameter must not break its own error
        return short_repr(value)


def _format(value: object, locale: Locale, nested: bool) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) and value.bit_length() > _HUGE_INT_BITS:
        return huge_int_text(value)
    if isinstance(value, float) and (not math.isfinite(value) or abs(value) >= 1e21):
        return repr(value)
    if isinstance(value, int | float):
        try:
            return format_decimal(value, locale=babel_locale(locale))
        except ArithmeticError:  # Babel's decimal context stops at 28 digits; keep the number
            return str(value)
    if isinstance(value, list | tuple) and not nested:
        items = [_format(item, locale, nested=True) for item in value[:LIST_PARAM_LIMIT]]
        if len(value) > LIST_PARAM_LIMIT:
            items.append("…")
        if not items:
            return _EMPTY_LIST.singular if locale == "en" else translations(locale).gettext(
                _EMPTY_LIST.singular
            )
        if locale == "zh":
            # Babel (CLDR) ends a Chinese list with 和 ("en、fr和zh"); Chinese technical writing
            # enumerates values with the enumeration comma alone.
            return "、".join(items)
        return _joined(tuple(items), babel_locale(locale))
    if isinstance(value, list | tuple | dict | set | frozenset | bytes | bytearray):
        text = short_repr(value, TEXT_PARAM_LIMIT)
    else:
        text = str(value)
    return text if len(text) <= TEXT_PARAM_LIMIT else text[: TEXT_PARAM_LIMIT - 1] + "…"


@lru_cache(maxsize=256)
def _joined(items: tuple[str, ...], locale: str) -> str:
    """A list joined as the locale writes it; the same lists come back in many errors."""
    return format_list(list(items), locale=locale)


def translate(message: Message, params: Mapping[str, object], locale: Locale) -> str:
    """Translate and fill a message; any catalog fault falls back to the English text."""
    english = _fill(
        _choose(message, params, _gettext.NullTranslations()), params, "en", strict=False
    )
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
    number = 0
    if isinstance(count, int | float) and math.isfinite(count):
        number = int(min(max(count, -(2**31)), 2**31))
    return catalog.ngettext(message.singular, message.plural, number)


class _Values(dict[str, str]):
    """A message's formatted parameters; one it names but was not given shows as its
    placeholder, so that rendering an error never raises."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fill(
    template: str, params: Mapping[str, object], locale: Locale, *, strict: bool = True
) -> str:
    values = {key: format_value(value, locale) for key, value in params.items()}
    # A translation that names a parameter the English does not is broken: it raises, and the
    # English is shown. The English itself shows a parameter it was not given as a placeholder.
    return template.format_map(values if strict else _Values(values))
