"""Locales: normalization, the process default, the gettext catalogs and locale-aware formatting.

contextwise speaks three languages: English (``en``, the default), French (``fr``) and Simplified
Chinese (``zh``). The process default lives in a :class:`~contextvars.ContextVar`, so one server can
answer users in different languages from different tasks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from contextwise._translation import (
    DOMAIN,
    LANGUAGES,
    N_,
    NP_,
    SUPPORTED_LOCALES,
    Language,
    Locale,
    Message,
    babel_locale,
    current_locale,
    format_value,
    locales_dir,
    match_locale,
    translate,
    translations,
)
from contextwise.errors import checked_locale

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "NP_",
    "N_",
    "SUPPORTED_LOCALES",
    "Language",
    "Locale",
    "Message",
    "babel_locale",
    "format_value",
    "get_locale",
    "locales_dir",
    "match_locale",
    "normalize_locale",
    "resolve_locale",
    "set_locale",
    "translate",
    "translations",
    "use_locale",
]


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
        >>> from contextwise import normalize_locale
        >>> normalize_locale("fr-CA")
        'fr'
        >>> normalize_locale("zh_Hans_CN")
        'zh'
    """
    return checked_locale(value)


def resolve_locale(locale: object | None) -> Locale:
    """Return ``locale`` normalized, or the current default when it is ``None``."""
    return current_locale.get() if locale is None else normalize_locale(locale)


def get_locale() -> Locale:
    """Return the current default locale (``"en"`` until :func:`set_locale` changes it).

    Examples:
        >>> from contextwise import get_locale
        >>> get_locale() in ("en", "fr", "zh")
        True
    """
    return current_locale.get()


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
        >>> from contextwise import get_locale, set_locale
        >>> previous = get_locale()
        >>> set_locale("fr_FR")
        'fr'
        >>> _ = set_locale(previous)
    """
    normalized = normalize_locale(locale)
    current_locale.set(normalized)
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
        >>> from contextwise import use_locale
        >>> with use_locale("zh-Hans") as active:
        ...     print(active)
        zh
    """
    token = current_locale.set(normalize_locale(locale))
    try:
        yield current_locale.get()
    finally:
        current_locale.reset(token)
