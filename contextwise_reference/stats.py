"""Translation coverage, counted honestly from the catalogs (not Babel's own percentages).

A message is *translated* when its entry exists, is not fuzzy and every plural form the language
needs is filled in. A fuzzy entry is counted as *fuzzy*, whatever its text; everything else
(missing from the catalog, empty, a plural with an empty or missing form) is *untranslated*.
Only translated messages are published; the others show the English text with a marker.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from babel.messages.catalog import Catalog

from contextwise_reference.model import Msg

Status = Literal["translated", "fuzzy", "untranslated"]


def status(catalog: Catalog | None, msg: Msg) -> Status:
    """The state of one message in a catalog."""
    if catalog is None:
        return "untranslated"
    entry = catalog.get(msg.text, context=msg.context or None)
    if entry is None:
        return "untranslated"
    if entry.fuzzy:
        return "fuzzy"
    strings = entry.string if isinstance(entry.string, list | tuple) else (entry.string,)
    if entry.pluralizable and len(strings) < catalog.num_plurals:
        return "untranslated"
    return "translated" if all(strings) else "untranslated"


@dataclass
class Count:
    translated: int = 0
    fuzzy: int = 0
    untranslated: int = 0

    @property
    def total(self) -> int:
        return self.translated + self.fuzzy + self.untranslated

    @property
    def ratio(self) -> float:
        return self.translated / self.total if self.total else 1.0

    def add(self, state: Status) -> None:
        setattr(self, state, getattr(self, state) + 1)


@dataclass
class Coverage:
    """The coverage of one locale, in total and per page (``label`` for the page labels)."""

    locale: str
    total: Count = field(default_factory=Count)
    pages: dict[str, Count] = field(default_factory=dict)

    @property
    def releasable(self) -> bool:
        return self.total.translated == self.total.total


def coverage(messages: Iterable[tuple[str, Msg]], catalog: Catalog | None, locale: str) -> Coverage:
    """Count the messages of the template, grouped by the page they appear on."""
    result = Coverage(locale)
    for page, msg in messages:
        state = status(catalog, msg)
        result.total.add(state)
        result.pages.setdefault(page, Count()).add(state)
    return result
