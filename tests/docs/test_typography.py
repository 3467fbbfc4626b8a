"""French typography holds everywhere French is written: pages, catalogs, generated reference.

French wants a no-break space before ``: ; ? ! »`` and after ``«``, and a decimal comma. The
checker (tools/docs/typography.py) reads prose only: code, tags, links and ids are left alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from conftest import ROOT
from tools.docs.typography import NBSP, fix_french_spaces, french_faults

FRENCH_PAGES = sorted((ROOT / "docs/fr").rglob("*.md"))  # hand-written and generated


@pytest.mark.parametrize(
    "page", FRENCH_PAGES, ids=lambda page: page.relative_to(ROOT / "docs").as_posix()
)
def test_french_pages_use_no_break_spaces_and_decimal_commas(page: Path) -> None:
    faults = french_faults(page.read_text(encoding="utf-8"))
    assert not faults, "\n".join(f"{page.relative_to(ROOT)}:{line}: {f}" for line, f in faults)


@pytest.mark.parametrize("domain", ["contextwise", "reference"])
def test_french_translations_use_no_break_spaces_and_decimal_commas(domain: str) -> None:
    with (ROOT / f"locales/fr/LC_MESSAGES/{domain}.po").open("rb") as handle:
        catalog = read_po(handle)
    found: list[str] = []
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for string in strings:
            if message.id and string:
                where = message.context or message.id
                found += [f"[{where}] {fault}" for _, fault in french_faults(string)]
    assert not found, "\n".join(found)


def test_the_checker_finds_plain_spaces_and_decimal_points() -> None:
    faults = french_faults("Le seuil : 0.85 ; « oui » ?\n")
    assert [line for line, _ in faults] == [1] * 6
    assert sum("decimal point in 0.85" in fault for _, fault in faults) == 1


def test_the_checker_leaves_code_versions_and_quoted_literals_alone() -> None:
    text = (
        "Voir `a : b` et ``c ; d`` et :class:`X` et [lien](http://x.org/a?b=1) {#id}\n\n"
        "```python\nprint(x ? 1 : 2)\n```\n\n"
        f"Python 3.11 et MkDocs 1.6{NBSP}; la valeur JSON «{NBSP}-0.0{NBSP}» reste.\n"
    )
    assert french_faults(text) == []


def test_the_fixer_puts_no_break_spaces_in_prose_only() -> None:
    text = "Attention : `a : b` ; « oui » ?"
    fixed = fix_french_spaces(text)
    assert fixed == f"Attention{NBSP}: `a : b`{NBSP}; «{NBSP}oui{NBSP}»{NBSP}?"
    assert french_faults(fixed) == []
