"""Hand-translated pages that record the version of the source-language page they translate.

Every hand-written page of a translated language (``docs/fr/...``) may start with front matter
naming the version of the source page it translates: the Git blob id of ``docs/en/<same path>``
(what ``git hash-object`` prints). When the source page changes, the translation is stale. The
translation-status page of the reference lists each page with its state.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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

    def describe(self, root: Path | None = None) -> str:
        """One line for a person: which page is stale and how to see what changed.

        Paths are shown relative to ``root`` (the current folder when None).
        """
        base = (root or Path.cwd()).resolve()

        def shown(path: Path) -> str:
            resolved = path.resolve()
            return str(resolved.relative_to(base)) if resolved.is_relative_to(base) else str(path)

        page, english = shown(self.page), shown(self.english)
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


def translations(
    docs: Path, source_language: str = "en", generated: tuple[str, ...] = ("reference",)
) -> Iterator[Translation]:
    """Every hand-written translated page that has an English counterpart, in path order.

    ``generated`` names the folders and files under each language's folder that are generated
    (the reference), never translated by hand.
    """
    source = docs / source_language
    for language in sorted(p for p in docs.iterdir() if p.is_dir() and p.name != source_language):
        for page in sorted(language.rglob("*.md")):
            relative = page.relative_to(language)
            english = source / relative
            if relative.parts[0] in generated or not english.is_file():
                continue
            yield Translation(
                page,
                english,
                recorded_version(page.read_text(encoding="utf-8")),
                blob_id(english.read_bytes()),
            )


def table(
    docs: Path, source_language: str = "en", generated: tuple[str, ...] = ("reference",)
) -> list[tuple[str, dict[str, bool]]]:
    """Each translated page (its path under the language's folder): language -> up to date."""
    if not (docs / source_language).is_dir():
        return []
    rows: dict[str, dict[str, bool]] = {}
    for translation in translations(docs, source_language, generated):
        language, *parts = translation.page.relative_to(docs).parts
        rows.setdefault("/".join(parts), {})[language] = translation.fresh
    return sorted(rows.items())
