"""The project's languages, read from :data:`contextwise.i18n.LANGUAGES` on every call.

The tools never keep their own list: the catalogs tool, the site configuration's check, the
freshness of translated pages and the tests all ask here, so adding a language to ``LANGUAGES`` is
enough for them to ask for its catalogs and pages. The reference generator, a distribution of its
own (``contextwise_reference``), reads the languages from ``[tool.contextwise-reference]`` in
``pyproject.toml`` instead; a test checks that they are these.
"""

from __future__ import annotations

from babel import Locale

from contextwise import i18n


def codes() -> tuple[str, ...]:
    """Every language code, the source language (English) first."""
    return tuple(language.code for language in i18n.LANGUAGES)


def source() -> str:
    """The language the docstrings and messages are written in."""
    return i18n.LANGUAGES[0].code


def translated() -> tuple[str, ...]:
    """The languages that have catalogs to translate: every language but the source."""
    return codes()[1:]


def babel_locale(code: str) -> str:
    """The Babel locale of a language code; the code itself when it is not in the list."""
    for language in i18n.LANGUAGES:
        if language.code == code:
            return language.babel_locale
    return code


def english_name(code: str) -> str:
    """The language's name in the source language (English) from CLDR, with its script if any.

    ``"fr"`` gives ``"French"``, ``"zh"`` (``zh_Hans_CN``) ``"Chinese (Simplified)"``.
    """
    parsed = Locale.parse(babel_locale(code))
    shown = Locale(parsed.language, script=parsed.script)
    return str(shown.get_display_name(babel_locale(source())))


def native_name(code: str) -> str:
    """The language's name in itself (``"Français"``), as the site's language switcher shows it."""
    for language in i18n.LANGUAGES:
        if language.code == code:
            return language.native_name
    return code
