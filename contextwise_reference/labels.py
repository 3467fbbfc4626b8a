"""The generator's page labels, in English, and their translations in the generator's own catalog.

Each label is a message with context ``label:<key>``; placeholders in braces are filled by the
renderer, and a translation must keep them as they are. The names of the languages
(``lang:<code>``) are added for each language of :data:`languages.LOCALES`, in English from CLDR.

The French and Chinese translations ship with the generator, in
``contextwise_reference/locales/<lang>/LC_MESSAGES/labels.po``: a project translates only its
docstrings. A project may still give a label a text of its own (``labels`` in its settings): that
label then goes into the project's reference catalog, to be translated there. After changing a
label here::

    python -m contextwise_reference.labels update   # labels.pot, merged into each labels.po
    python -m contextwise_reference.labels check    # exit 1 if a label is untranslated or fuzzy
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from babel.messages.catalog import Catalog

from contextwise_reference import files, languages, po

DOMAIN = "labels"
FOLDER = Path(__file__).resolve().parent / "locales"
HEADER = "# The page labels of contextwise-reference, the multilingual API reference generator.\n#"

LABELS: dict[str, str] = {
    # Every page
    "source": "Source: {path}. Back to the [reference index](index.md).",
    "notice": (
        "This page is generated from the package's sources. "
        "Do not edit it by hand: change the source and regenerate."
    ),
    "import": "Import",
    "functions": "Functions",
    "constants": "Constants and type aliases",
    "examples": "Examples",
    # Kinds of class
    "kind:class": "Class {name}",
    "kind:model": "Pydantic model {name}",
    "kind:dataclass": "Dataclass {name}",
    "kind:enum": "Enum {name}",
    "kind:protocol": "Protocol {name}",
    "kind:exception": "Exception {name}",
    "kind:namedtuple": "Named tuple {name}",
    "kind:typeddict": "Typed dictionary {name}",
    # Sections of a class or a function
    "bases": "Bases:",
    "fields": "Fields:",
    "attributes": "Attributes:",
    "properties": "Properties:",
    "members": "Members:",
    "error-codes": "Error codes:",
    "constructor": "Constructor",
    "parameters": "Parameters:",
    "no-parameters": "This element takes no parameters.",
    "returns": "Returns:",
    "yields": "Yields:",
    "raises": "Raises:",
    # a returned value, a yielded value or an exception, and what it means
    "described": "{item} — {description}",
    # Table columns and cells
    "col:name": "Name",
    "col:type": "Type",
    "col:default": "Default",
    "col:required": "Required",
    "col:description": "Description",
    "col:value": "Value",
    "col:code": "Code",
    "col:message": "Message",
    "yes": "yes",
    "no": "no",
    # The index page
    "index:title": "API reference",
    "index:intro": (
        "One page per module of the public API. Each page's import line shows where its names are "
        "imported from."
    ),
    "index:status": (
        "How much of this reference is translated: [translation status](translation-status.md)."
    ),
    "col:module": "Module",
    "col:names": "Public names",
    "col:summary": "Summary",
    # The translation status page
    "status:title": "Translation status",
    "status:intro": (
        "This page counts the messages of the reference catalog `{catalog}`: every "
        "docstring paragraph, list item, field, parameter, return and error description, and every "
        "page label. A message is translated when its translation is filled in and not marked "
        "fuzzy; a fuzzy translation or a plural with an empty form counts as untranslated."
    ),
    "status:marker": (
        "On the translated pages, a text that is not translated yet is shown in English after the "
        "marker {marker}."
    ),
    "status:release": (
        "The release rule: every message of every catalog translated (100 %), none fuzzy."
    ),
    "status:by-locale": "Coverage by language",
    "status:by-page": "Coverage by page",
    "status:labels": "Page labels",
    "status:pages": "Pages translated by hand",
    "status:pages-intro": (
        "Each page written by hand in another language records the version of the English page it "
        "translates. A page is stale when the English page changed since."
    ),
    "status:fresh": "up to date",
    "status:stale": "stale",
    "col:language": "Language",
    "col:page": "Page",
    "col:messages": "Messages",
    "col:translated": "Translated",
    "col:fuzzy": "Fuzzy",
    "col:untranslated": "Untranslated",
    "col:coverage": "Coverage",
}


def labels() -> dict[str, str]:
    """Every page label: the fixed ones, then the name of each language of the table."""
    names = {f"lang:{code}": languages.english_name(code) for code in languages.LOCALES}
    return LABELS | names


def english(key: str) -> str:
    """The English text of one label."""
    if key.startswith("lang:"):
        return languages.english_name(key.removeprefix("lang:"))
    return LABELS[key]


def po_path(locale: str) -> Path:
    """The generator's catalog of the labels in ``locale``."""
    return FOLDER / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def catalog(locale: str) -> Catalog | None:
    """The labels' catalog of ``locale``, or None when the generator has none for it."""
    return po.read(po_path(locale), locale)


def template() -> Catalog:
    """The template of the labels' catalog: one entry per label."""
    found = po.new_catalog(DOMAIN, project="contextwise-reference", version="0.1", header=HEADER)
    for key, text in labels().items():
        message = found.add(text, context=f"label:{key}")
        message.flags.discard("python-format")
    return found


def translated() -> list[str]:
    """The locales the generator's labels are translated into (its source language excepted)."""
    return sorted(path.name for path in FOLDER.iterdir() if path.is_dir())


def update() -> list[str]:
    """Write ``labels.pot`` and merge it into each locale's ``labels.po``; report what changed."""
    pot = template()
    lines = []
    written = files.write_if_changed(FOLDER / f"{DOMAIN}.pot", po.render_po(pot))
    lines.append(f"{DOMAIN}.pot: {'written' if written else 'unchanged'}")
    for locale in translated():
        merged = po.merge(pot, po.read(po_path(locale), locale), locale)
        written = files.write_if_changed(po_path(locale), po.render_po(merged))
        lines.append(f"{locale}/{DOMAIN}.po: {'written' if written else 'unchanged'}")
    return lines


def problems() -> list[str]:
    """Each label that a locale of the generator leaves untranslated or fuzzy, and stale files."""
    found: list[str] = []
    if po.render_po(template()) != (FOLDER / f"{DOMAIN}.pot").read_text(encoding="utf-8"):
        found.append(f"stale: {DOMAIN}.pot (run `python -m contextwise_reference.labels update`)")
    for locale in translated():
        messages = po.read(po_path(locale), locale)
        for key, text in labels().items():
            entry = messages.get(text, context=f"label:{key}") if messages else None
            if entry is None or not entry.string:
                found.append(f"{locale}: untranslated: label:{key}")
            elif entry.fuzzy:
                found.append(f"{locale}: fuzzy: label:{key}")
        if messages is not None and messages.obsolete:
            found.append(f"{locale}: {len(messages.obsolete)} obsolete entries")
    return found


def main(argv: list[str] | None = None) -> int:
    """``update`` or ``check`` the generator's labels catalogs."""
    parser = argparse.ArgumentParser(description="The generator's own catalog of page labels.")
    parser.add_argument("command", choices=("update", "check"))
    args = parser.parse_args(argv)
    if args.command == "update":
        print("\n".join(update()))
        return 0
    found = problems()
    print("\n".join(found or ["every label is translated"]))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
