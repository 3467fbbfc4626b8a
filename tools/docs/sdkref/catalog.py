"""The reference catalog: the model's messages, the ``.pot`` template, translators from ``.po``.

The ``.po`` helpers (writing without dates, merging with Babel, reading) are shared with the error
catalogs in ``tools/i18n/catalogs.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog

from tools.docs.sdkref.labels import labels
from tools.docs.sdkref.model import (
    Block,
    ClassDoc,
    Example,
    FieldDoc,
    Function,
    Member,
    Msg,
    Page,
    PropertyDoc,
    Reference,
)
from tools.docs.sdkref.render import Translate, english
from tools.docs.sdkref.stats import status
from tools.i18n import catalogs

DOMAIN = "reference"
HEADER = (
    "# Translations of the API reference: docstring paragraphs, descriptions and page labels.\n#"
)
LABELS_SOURCE = "tools/docs/sdkref/labels.py"


def _blocks(blocks: list[Block]) -> Iterator[Msg]:
    for block in blocks:
        yield from block.msgs


def _examples(examples: list[Example]) -> Iterator[Msg]:
    for example in examples:
        if example.text is not None:
            yield example.text


def _function(fn: Function) -> Iterator[Msg]:
    yield from _blocks(fn.description)
    for param in fn.params:
        if param.description is not None:
            yield param.description
    for item in (fn.returns, fn.yields, *fn.raises):
        if item is not None and item.description is not None:
            yield item.description
    yield from _examples(fn.examples)


def _class(cls: ClassDoc) -> Iterator[Msg]:
    yield from _blocks(cls.description)
    entries: list[Member | FieldDoc | PropertyDoc] = [*cls.members, *cls.fields, *cls.properties]
    for entry in entries:
        if entry.description is not None:
            yield entry.description
    if cls.constructor is not None:
        yield from _function(cls.constructor)
    for method in cls.methods:
        yield from _function(method)
    yield from _examples(cls.examples)


def page_messages(page: Page) -> Iterator[Msg]:
    yield from _blocks(page.description)
    for cls in page.classes:
        yield from _class(cls)
    for fn in page.functions:
        yield from _function(fn)
    for attribute in page.attributes:
        yield from _blocks(attribute.description)
        yield from _examples(attribute.examples)


def messages(reference: Reference) -> list[tuple[str, Msg]]:
    """Every message of the reference once, with the page it belongs to (``label`` for labels)."""
    found: dict[tuple[str, str], tuple[str, Msg]] = {}
    for page in reference.pages:
        for msg in page_messages(page):
            found.setdefault((msg.context, msg.text), (page.slug, msg))
    for key, text in labels().items():
        msg = Msg(f"label:{key}", text)
        found.setdefault((msg.context, msg.text), ("label", msg))
    return list(found.values())


def template(reference: Reference, found: list[tuple[str, Msg]]) -> Catalog:
    """The ``.pot`` catalog: one entry per message, located in its source file (no line numbers)."""
    sources = {page.slug: page.source for page in reference.pages}
    catalog = catalogs.new_catalog(domain=DOMAIN)
    catalog.header_comment = HEADER
    for page, msg in found:
        location = sources.get(page, LABELS_SOURCE)
        # Babel writes a location without a line number; its annotation asks for one.
        message = catalog.add(msg.text, context=msg.context, locations=[(location, None)])  # type: ignore[list-item]
        # Babel flags any text with "% o" as python-format ("2 % of the window"), and its check
        # then reports false errors: no reference text is %-formatted.
        message.flags.discard("python-format")
    return catalog


def render_template(reference: Reference, found: list[tuple[str, Msg]]) -> str:
    return catalogs.render_po(template(reference, found))


def read(path: Path, locale: str) -> Catalog | None:
    return catalogs.read_catalog(path, locale) if path.is_file() else None


def translator(catalog: Catalog | None) -> Translate:
    """Translate from a catalog; what is not fully translated falls back to English."""
    if catalog is None:
        return lambda msg: (msg.text, True)

    def translate(msg: Msg) -> tuple[str, bool]:
        if status(catalog, msg) != "translated":
            return msg.text, True
        entry = catalog.get(msg.text, context=msg.context or None)
        string = entry.string if entry is not None else None
        text = string[0] if isinstance(string, list | tuple) else string
        return (text, False) if isinstance(text, str) else (msg.text, True)

    return translate


def merge(template_catalog: Catalog, existing: Catalog | None, locale: str) -> Catalog:
    """Merge the template into a locale's catalog: new entries added, changed fuzzy, old kept."""
    catalog = catalogs.merge(template_catalog, existing, locale)
    for message in catalog:  # an old python-format flag is kept by Babel's merge: drop it too
        message.flags.discard("python-format")
    if existing is None:
        catalog.header_comment = HEADER
    return catalog


__all__ = ["english", "merge", "messages", "read", "render_template", "template", "translator"]
