"""The reference catalog: the model's messages, the ``.pot`` template, translators from ``.po``.

A project's catalog holds its docstrings, and the page labels it gives a text of its own (its
``labels`` setting); every other label is translated by the generator's own catalog
(:mod:`contextwise_reference.labels`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from babel.messages.catalog import Catalog

from contextwise_reference import po
from contextwise_reference.model import (
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
from contextwise_reference.render import Translate, english
from contextwise_reference.stats import status

DOMAIN = "reference"
HEADER = (
    "# Translations of the API reference: docstring paragraphs, descriptions and page labels.\n#"
)
LABELS_SOURCE = "pyproject.toml"


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


def messages(
    reference: Reference, labels: Mapping[str, str] | None = None
) -> list[tuple[str, Msg]]:
    """Every message of the reference once, with the page it belongs to, then the project's own
    ``labels`` (key -> English text), on the page ``label``."""
    found: dict[tuple[str, str], tuple[str, Msg]] = {}
    for page in reference.pages:
        for msg in page_messages(page):
            found.setdefault((msg.context, msg.text), (page.slug, msg))
    for key, text in (labels or {}).items():
        msg = Msg(f"label:{key}", text)
        found.setdefault((msg.context, msg.text), ("label", msg))
    return list(found.values())


def template(
    reference: Reference, found: list[tuple[str, Msg]], header: Mapping[str, str] | None = None
) -> Catalog:
    """The ``.pot`` catalog: one entry per message, located in its source file (no line numbers).

    ``header`` gives the ``project``, ``version`` and ``bugs_address`` of the catalog's header.
    """
    sources = {page.slug: page.source for page in reference.pages}
    catalog = po.new_catalog(DOMAIN, header=HEADER, **(header or {}))
    for page, msg in found:
        location = sources.get(page, LABELS_SOURCE)
        # Babel writes a location without a line number; its annotation asks for one.
        message = catalog.add(msg.text, context=msg.context, locations=[(location, None)])  # type: ignore[list-item]
        # Babel flags any text with "% o" as python-format ("2 % of the window"), and its check
        # then reports false errors: no reference text is %-formatted.
        message.flags.discard("python-format")
    return catalog


def render_template(
    reference: Reference, found: list[tuple[str, Msg]], header: Mapping[str, str] | None = None
) -> str:
    return po.render_po(template(reference, found, header))


def read(path: Path, locale: str) -> Catalog | None:
    return po.read(path, locale)


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
    catalog = po.merge(template_catalog, existing, locale)
    if existing is None:
        catalog.header_comment = HEADER
    return catalog


__all__ = ["english", "merge", "messages", "read", "render_template", "template", "translator"]
