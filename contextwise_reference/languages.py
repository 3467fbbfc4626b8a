"""The generator's own table of languages: the Babel locale of a language code, and its name.

A project names its languages by code in its configuration (``languages = ["en", "fr", "zh"]``,
the source language first); this table says which Babel locale formats the numbers, lists and
percentages of each, and which codes the generator's label catalog translates. A code that is not
in the table is its own Babel locale (``"de"``, ``"pt_BR"``).
"""

from __future__ import annotations

from babel import Locale

LOCALES: dict[str, str] = {"en": "en", "fr": "fr", "zh": "zh_Hans_CN"}
"""Language code -> Babel locale, for the languages the generator's labels are translated into
(Chinese is Simplified Chinese)."""


def babel_locale(code: str) -> str:
    """The Babel locale of a language code; the code itself when it is not in the table."""
    return LOCALES.get(code, code)


def english_name(code: str, source: str = "en") -> str:
    """The language's name in the source language from CLDR, with its script if any.

    ``"fr"`` gives ``"French"``, ``"zh"`` (``zh_Hans_CN``) ``"Chinese (Simplified)"``.
    """
    parsed = Locale.parse(babel_locale(code))
    shown = Locale(parsed.language, script=parsed.script)
    return str(shown.get_display_name(babel_locale(source)))
