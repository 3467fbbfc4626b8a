"""Locales: normalization, the process default, the gettext catalogs and locale-aware formatting.

contextwise speaks three languages: English (``en``, the default), French (``fr``) and Simplified
Chinese (``zh``). The process default lives in a :class:`~contextvars.ContextVar`, so one server can
answer users in different languages from different tasks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from gettext import NullTranslations

from contextwise._translation import (
    DOMAIN,
    LANGUAGES,
    SUPPORTED_LOCALES,
    Language,
    Locale,
    Message,
    current_locale,
    short_repr,
)
from contextwise._translation import translate as _translate
from contextwise._translation import translations as _translations
from contextwise.errors import InvalidTypeError, InvalidValueError, checked_locale

__all__ = [
    "LANGUAGES",
    "SUPPORTED_LOCALES",
    "Language",
    "Locale",
    "get_locale",
    "normalize_locale",
    "resolve_locale",
    "set_locale",
    "translate",
    "translations",
    "use_locale",
]


def translate(message: Message, params: Mapping[str, object], locale: str) -> str:
    """Translate a message into a locale and fill in its named parameters.

    Args:
        message: The message, as :func:`N_` or :func:`NP_` made it.
        params: The values of its placeholders, by name.
        locale: ``"en"``, ``"fr"`` or ``"zh"``, or any spelling of them; never a path.

    Returns:
        The message in that locale (in English when the catalog lacks it).

    Raises:
        UnsupportedLocaleError: When the locale is not English, French or Chinese.
        InvalidTypeError: When the message is not a :class:`Message` or the parameters are not a
            mapping.
        InvalidValueError: When the message names a parameter that ``params`` lacks.

    Examples:
        >>> from contextwise._translation import N_
        >>> from contextwise.i18n import translate
        >>> translate(N_("{name} must be a string."), {"name": "ref"}, "en")
        'ref must be a string.'
    """
    target = checked_locale(locale)
    if not isinstance(message, Message) or not all(
        isinstance(part, str | None) for part in message
    ):
        raise InvalidTypeError(
            "not_an_instance", name="message", expected="Message",
            type_name=type(message).__name__,
        )
    if not isinstance(params, Mapping):
        raise InvalidTypeError("not_a_mapping", name="params", type_name=type(params).__name__)
    try:
        return _translate(message, params, target)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as exc:
        raise InvalidValueError("invalid_value", field="message", value=short_repr(
            message.singular)) from exc


def translations(locale: str, domain: str = DOMAIN) -> NullTranslations:
    """Return the gettext translations of a domain (``contextwise``, ``reference``, ``site``) in
    a locale; English (no translation) for a domain without a catalog.

    Raises:
        UnsupportedLocaleError: When the locale is not English, French or Chinese (a path
            included: no file outside the package's catalogs is ever opened).
        InvalidValueError: When the domain is not a plain name (``contextwise``).
    """
    target = checked_locale(locale)
    if not isinstance(domain, str):
        raise InvalidTypeError("not_a_string", name="domain", type_name=type(domain).__name__)
    if not domain.isidentifier() or not domain.isascii():
        raise InvalidValueError("invalid_value", field="domain", value=short_repr(domain))
    return _translations(target, domain)


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
