"""Translations that cannot go stale in silence: each translated page records its English version.

Every hand-written page of a translated language (``docs/fr/...``, ``docs/zh/...``, all but the
generated ``reference/`` folder) starts with front matter naming the version of the English page it
translates: the Git blob id of ``docs/en/<same path>``, which is the SHA-1 that ``git hash-object``
prints. When the English page changes, its blob id changes, the translation is stale, and the test
suite fails naming it. Because the id is a Git blob id, ``git diff <recorded> <current>`` shows
exactly what changed in English since the translation was made.

Commands (run from the repository's root)::

    python -m tools.docs.freshness check          # list the stale translations; exit 1 if any
    python -m tools.docs.freshness stamp PAGE...  # after updating PAGE, record the English version

``stamp`` is the last step of a translation: update the French or Chinese page first, then stamp it.
It refuses (exit status 2, one line per paragraph) while a paragraph of the page holds other numbers
or other inline code than its English paragraph (tools/docs/numbers.py): a sentence left behind
when the English changed is caught before the stamp says the page is up to date.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from contextwise_reference import freshness as pages
from contextwise_reference.freshness import (
    KEY,
    Translation,
    blob_id,
    recorded_version,
    stamp_text,
)
from tools.docs.numbers import page_differences
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCE_LANGUAGE = languages.source()
GENERATED = ("reference", "performance.md")  # written by gen_sdk_reference and perf_page
def translations(docs: Path = DOCS) -> Iterator[Translation]:
    """Every hand-written translated page that has an English counterpart, in path order."""
    return pages.translations(docs, SOURCE_LANGUAGE, GENERATED)


def table(docs: Path = DOCS) -> list[tuple[str, dict[str, bool]]]:
    """Each translated page (its path under the language's folder): language -> up to date."""
    return pages.table(docs, SOURCE_LANGUAGE, GENERATED)


def stale(docs: Path = DOCS) -> list[Translation]:
    """The translated pages whose English page changed since they were translated."""
    return [translation for translation in translations(docs) if not translation.fresh]


class NumbersDiffer(ValueError):
    """A page to stamp has a paragraph whose numbers or code differ from its English paragraph's:
    the translation is not up to date, whatever its stamp would say."""


def stamp(pages: list[Path], docs: Path = DOCS) -> list[Path]:
    """Record the current English version in each page; return the pages that changed.

    Nothing is stamped while a paragraph of one of the pages holds other numbers or other code
    than its English paragraph (tools/docs/numbers.py): :class:`NumbersDiffer` names each one.
    """
    known = {t.page.resolve(): t for t in translations(docs)}
    found: list[Translation] = []
    for page in pages:
        translation = known.get(page.resolve())
        if translation is None:
            raise ValueError(f"{page} is not a translated page with an English counterpart")
        found.append(translation)
    differences = [
        differs.describe()
        for translation in found
        for differs in page_differences(
            translation.page, translation.english,
            translation.page.resolve().relative_to(docs.resolve()).parts[0],
        )
    ]
    if differences:
        raise NumbersDiffer("\n".join(
            f"not stamped: {line} (update the translation, then stamp)" for line in differences
        ))
    changed: list[Path] = []
    for page, translation in zip(pages, found, strict=True):
        text = page.read_text(encoding="utf-8")
        updated = stamp_text(text, translation.current)
        if updated != text:
            page.write_text(updated, encoding="utf-8")
            changed.append(page)
    return changed


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="list the stale translations; exit 1 if any")
    stamp_parser = commands.add_parser("stamp", help="record the English version in PAGE")
    stamp_parser.add_argument("pages", nargs="+", type=Path, metavar="PAGE")
    args = parser.parse_args(argv)
    if args.command == "stamp":
        try:
            changed = stamp(args.pages, DOCS)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        for page in changed:
            print(f"stamped {page}")
        return 0
    found = stale()
    for translation in found:
        print(translation.describe(ROOT))
    if not found:
        print("every translation is up to date with its English page")
    return 1 if found else 0


__all__ = [
    "KEY",
    "NumbersDiffer",
    "Translation",
    "blob_id",
    "recorded_version",
    "stamp_text",
    "table",
    "translations",
]


if __name__ == "__main__":
    sys.exit(main())
