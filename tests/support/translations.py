"""English texts beside their translations: catalog entries and page blocks, and their prose.

A catalog entry pairs its ``msgid`` with its ``msgstr``. A hand-written page pairs block by block
with its English page: a translated page keeps the English structure (one paragraph, list, table
or code block for each), so the n-th block of ``docs/fr/x.md`` translates the n-th of
``docs/en/x.md``. The front matter (the freshness stamp) is not a block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import read_po

from tools.docs.blocks import FENCE, blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DOMAINS = ("contextwise", "reference", "site")
GENERATED = ("reference", "performance.md")  # written by gen_sdk_reference and perf_page
CODE = re.compile(
    r":\w+:`[^`\n]*`|``.+?``|`[^`\n]*`"  # roles and inline code
    r"|\]\([^)\s]*\)|\]\[[^\]\n]*\]|\{#[^}\n]*\}|\{\w*\}"  # link targets, ids, placeholders
    r"|<[^>\n]+>|https?://\S+",  # tags, URLs
    re.S,
)


@dataclass(frozen=True)
class Pair:
    """An English text and its translation, and where the translation lives."""

    where: str
    english: str
    translation: str


def prose(text: str) -> str:
    """The text without code (fenced or inline), link targets, heading ids, placeholders, tags."""
    return CODE.sub(" ", FENCE.sub(" ", text))


def catalog_pairs(language: str, domains: tuple[str, ...] = DOMAINS) -> Iterator[Pair]:
    """Every translated entry of a language's catalogs (each plural form beside its msgid)."""
    for domain in domains:
        path = ROOT / "locales" / language / "LC_MESSAGES" / f"{domain}.po"
        with path.open("rb") as handle:
            catalog = read_po(handle)
        for message in catalog:
            if not message.id:
                continue
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            label = message.context or ids[0]
            for number, string in enumerate(strings):
                english = ids[min(number, len(ids) - 1)]
                if string:
                    yield Pair(f"{path.relative_to(ROOT)} [{label}]", english, string)


def hand_written_pages() -> list[Path]:
    """The English pages written by people, relative to ``docs/en``."""
    return sorted(
        path.relative_to(DOCS / "en")
        for path in (DOCS / "en").rglob("*.md")
        if path.relative_to(DOCS / "en").parts[0] not in GENERATED
    )


def page_pairs(language: str, pages: list[Path] | None = None) -> Iterator[Pair]:
    """Every block of every translated hand-written page, beside its English block.

    A page whose block count differs from its English page yields one pair whose english text
    is ``""``: its structure must be fixed before its words can be compared.
    """
    for page in hand_written_pages() if pages is None else pages:
        translated = DOCS / language / page
        if not translated.is_file():
            continue
        english = blocks((DOCS / "en" / page).read_text(encoding="utf-8"))
        ours = blocks(translated.read_text(encoding="utf-8"))
        where = translated.relative_to(ROOT).as_posix()
        if len(english) != len(ours):
            yield Pair(f"{where} ({len(ours)} blocks, English {len(english)})", "", "")
            continue
        for number, (source, target) in enumerate(zip(english, ours, strict=True), 1):
            yield Pair(f"{where} (block {number})", source, target)
