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
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCE_LANGUAGE = languages.source()
GENERATED = ("reference", "performance.md")  # written by gen_sdk_reference and perf_page
KEY = "english_version"
FRONT_MATTER = re.compile(r"\A---\n(?P<body>.*?\n)---\n", re.S)
RECORD = re.compile(rf'^{KEY}:[ \t]*"?(?P<version>[0-9a-f]{{40}})"?[ \t]*$', re.M)


@dataclass(frozen=True)
class Translation:
    """A translated page, the English page it translates, and the versions at stake."""

    page: Path
    english: Path
    recorded: str | None
    """The English version the page records, or None when it records none."""
    current: str
    """The English page's version now."""

    @property
    def fresh(self) -> bool:
        """Whether the page translates the English page as it is now."""
        return self.recorded == self.current

    def describe(self, root: Path = ROOT) -> str:
        """One line for a person: which page is stale and how to see what changed."""
        page, english = self.page.relative_to(root), self.english.relative_to(root)
        if self.recorded is None:
            return f"{page}: records no version of {english} (run `stamp` once it is translated)"
        return (
            f"{page}: translates an older {english}; to see what changed in English: "
            f"git diff {self.recorded[:12]} {self.current[:12]}"
        )


def blob_id(data: bytes) -> str:
    """The Git blob id of a file's content (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def recorded_version(text: str) -> str | None:
    """The English version recorded in a page's front matter, if any."""
    front = FRONT_MATTER.match(text)
    found = RECORD.search(front.group("body")) if front else None
    return found.group("version") if found else None


def stamp_text(text: str, version: str) -> str:
    """The page with ``version`` recorded in its front matter; the rest is left as it is."""
    line = f'{KEY}: "{version}"\n'
    front = FRONT_MATTER.match(text)
    if front is None:
        return f"---\n{line}---\n\n{text}"
    body = front.group("body")
    body = RECORD.sub(line.rstrip("\n"), body) if RECORD.search(body) else body + line
    return f"---\n{body}---\n{text[front.end():]}"


def translations(docs: Path = DOCS) -> Iterator[Translation]:
    """Every hand-written translated page that has an English counterpart, in path order."""
    source = docs / SOURCE_LANGUAGE
    for language in sorted(p for p in docs.iterdir() if p.is_dir() and p.name != SOURCE_LANGUAGE):
        for page in sorted(language.rglob("*.md")):
            relative = page.relative_to(language)
            english = source / relative
            if relative.parts[0] in GENERATED or not english.is_file():
                continue
            yield Translation(
                page,
                english,
                recorded_version(page.read_text(encoding="utf-8")),
                blob_id(english.read_bytes()),
            )


def stale(docs: Path = DOCS) -> list[Translation]:
    """The translated pages whose English page changed since they were translated."""
    return [translation for translation in translations(docs) if not translation.fresh]


def table(docs: Path = DOCS) -> list[tuple[str, dict[str, bool]]]:
    """Each translated page (its path under the language's folder): language -> up to date."""
    if not (docs / SOURCE_LANGUAGE).is_dir():
        return []
    rows: dict[str, dict[str, bool]] = {}
    for translation in translations(docs):
        language, *parts = translation.page.relative_to(docs).parts
        rows.setdefault("/".join(parts), {})[language] = translation.fresh
    return sorted(rows.items())


def stamp(pages: list[Path], docs: Path = DOCS) -> list[Path]:
    """Record the current English version in each page; return the pages that changed."""
    known = {t.page.resolve(): t for t in translations(docs)}
    changed: list[Path] = []
    for page in pages:
        translation = known.get(page.resolve())
        if translation is None:
            raise ValueError(f"{page} is not a translated page with an English counterpart")
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
            changed = stamp(args.pages)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        for page in changed:
            print(f"stamped {page}")
        return 0
    found = stale()
    for translation in found:
        print(translation.describe())
    if not found:
        print("every translation is up to date with its English page")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
