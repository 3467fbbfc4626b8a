"""The glossary settles each term once: the variants it retires appear nowhere, per language.

Each translated glossary (``docs/<lang>/glossary.md``) ends with a table of retired terms under the
heading id ``retired-terms``: the retired variant, the term to use instead, and the exceptions,
expressions in which the variant stays right (日志级别, "log level", keeps 级别). Every page of the
language, generated reference included, and every translation of its catalogs is searched, with
backticks removed so that `` `greedy` 策略 `` is read as ``greedy 策略``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from conftest import ROOT

TRANSLATED = ("fr", "zh")


def retired_terms(glossary: str) -> list[tuple[str, str, list[str]]]:
    """The (retired, preferred, exceptions) rows of a glossary's retired-terms table."""
    section = glossary.split("{#retired-terms}", 1)
    if len(section) < 2:
        return []
    rows: list[tuple[str, str, list[str]]] = []
    for line in section[1].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[0]) <= {"-"}:
            continue
        exceptions = [item.strip() for item in re.split(r"[,、]", cells[2]) if item.strip()]
        rows.append((cells[0], cells[1], exceptions))
    return rows[1:]  # the first row is the header


def occurrences(text: str, term: str, exceptions: list[str]) -> list[int]:
    """The offsets of ``term`` in ``text`` that no exception covers."""
    covered: set[int] = set()
    for exception in exceptions:
        inner = exception.find(term)
        for found in re.finditer(re.escape(exception), text):
            covered.add(found.start() + inner)
    return [m.start() for m in re.finditer(re.escape(term), text) if m.start() not in covered]


def _texts(language: str) -> list[tuple[str, str]]:
    """(where, text) for every page and every catalog translation of a language."""
    texts = [
        (page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8"))
        for page in sorted((ROOT / "docs" / language).rglob("*.md"))
        if page.name != "glossary.md"
    ]
    # the site's description and navigation in this language (mkdocs.yml)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block = re.search(rf"- locale: {language}\n(.*?)(?=\n\s*- locale:|\n\S|\Z)", config, re.S)
    if block:
        texts.append((f"mkdocs.yml ({language})", block.group(1)))
    for catalog_path in sorted((ROOT / "locales" / language / "LC_MESSAGES").glob("*.po")):
        with catalog_path.open("rb") as handle:
            catalog = read_po(handle)
        for message in catalog:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            for string in strings:
                if message.id and string:
                    where = f"{catalog_path.relative_to(ROOT)} [{message.context or message.id}]"
                    texts.append((where, string))
    return texts


def _glossary(language: str) -> str:
    return (ROOT / "docs" / language / "glossary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_glossary_retires_variant_terms(language: str) -> None:
    rows = retired_terms(_glossary(language))
    assert len(rows) >= 3, f"docs/{language}/glossary.md has no retired-terms table"
    for retired, preferred, exceptions in rows:
        assert retired and preferred and retired != preferred
        assert all(retired in exception for exception in exceptions)


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_page_or_translation_uses_a_retired_term(language: str) -> None:
    rows = retired_terms(_glossary(language))
    found: list[str] = []
    for where, text in _texts(language):
        plain = text.replace("`", "")
        for retired, preferred, exceptions in rows:
            for offset in occurrences(plain, retired, exceptions):
                context = plain[max(0, offset - 12) : offset + len(retired) + 12]
                found.append(f"{where}: {retired!r} (write {preferred!r}) in {context!r}")
    assert not found, "\n".join(found)


def test_the_settled_chinese_terms_are_in_the_glossary() -> None:
    glossary = _glossary("zh")
    for term in ("推理强度等级", "错误码", "精简", "校验", "构造", "选择模式", "提供方", "法文"):
        assert f"| {term} |" in glossary, term


def test_exceptions_cover_only_their_own_expression() -> None:
    text = "日志级别为 INFO；推理强度级别为 high"
    assert occurrences(text, "级别", ["日志级别"]) == [text.rindex("级别")]
    assert occurrences("greedy 策略", "greedy 策略", []) == [0]


def test_the_table_parser_reads_rows_and_exceptions() -> None:
    glossary = (
        "# G\n\n## Retired {#retired-terms}\n\n| Retired | Use | Exceptions |\n|---|---|---|\n"
        "| 级别 | 等级 | 日志级别、日志级别表 |\n| Défaut | Valeur par défaut | |\n"
    )
    assert retired_terms(glossary) == [
        ("级别", "等级", ["日志级别", "日志级别表"]),
        ("Défaut", "Valeur par défaut", []),
    ]
    assert retired_terms("# G\n") == []


def test_a_retired_term_is_found(tmp_path: Path) -> None:
    rows = retired_terms(_glossary("zh"))
    assert any(occurrences("服务商的 API".replace("`", ""), r, e) for r, _, e in rows)
