"""A translation holds the numbers and the code of its English text (tools/docs/numbers.py).

Each paragraph of a translated hand-written page, aligned with its English page block by block as
the parity test aligns them, and each catalog translation beside its msgid, has the same numbers in
its prose (read in the language's forms: ``2 000``, ``12,5 %``, ``1.5 万``) and the same inline code
spans. This catches the sentence left behind when the English changed ("500 one-token words" in
English, « 2 000 caractères » in French). The freshness stamp runs the same check and refuses to
stamp such a page. The few paragraphs that rightly differ are listed, each with its reason, in
``tools.docs.numbers.ALLOWED``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from support.translations import catalog_pairs, hand_written_pages
from tools.docs import freshness
from tools.docs.numbers import (
    ALLOWED,
    Difference,
    allowed,
    code_spans,
    difference,
    numbers,
    page_differences,
)

LANGUAGES = ("fr", "zh")
PAGES = [(language, page) for language in LANGUAGES for page in hand_written_pages()]
NNBSP, NBSP = "\u202f", "\u00a0"


@pytest.mark.parametrize(
    "item", PAGES, ids=[f"{language}/{page.as_posix()}" for language, page in PAGES]
)
def test_a_translated_paragraph_has_the_numbers_and_code_of_its_english_paragraph(
    item: tuple[str, Path],
) -> None:
    language, page = item
    found = page_differences(ROOT / "docs" / language / page, ROOT / "docs/en" / page, language)
    assert not found, "\n".join(differs.describe() for differs in found)


@pytest.mark.parametrize("domain", ["contextwise", "reference", "site"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_catalog_translation_has_the_numbers_and_code_of_its_msgid(
    language: str, domain: str
) -> None:
    found: list[str] = []
    for pair in catalog_pairs(language, (domain,)):
        differs = difference(pair.where, pair.english, pair.translation, language)
        label = pair.where.split(" [", 1)[1][:-1]
        if differs is not None and (differs := allowed(differs, f"{language}/{label}")) is not None:
            found.append(differs.describe())
    assert not found, f"{len(found)} found:\n" + "\n".join(found)


def test_numbers_are_read_in_each_languages_forms() -> None:
    english = numbers("2,000 characters, 12.5 %, 128,000 tokens, 1.5 million, the 21st call", "en")
    assert sorted(english.elements()) == sorted(["2000", "12.5", "128000", "1.5", "21"])
    for spaced in (f"2{NNBSP}000", f"2{NBSP}000", "2 000"):
        assert numbers(f"{spaced} caractères", "fr") == numbers("2,000 characters", "en")
    assert numbers(f"12,5{NNBSP}%, le 21ᵉ appel", "fr") == numbers("12.5 %, the 21st call", "en")
    assert numbers("约 1.5 万个词元，3 亿，2,000 个字符", "zh") == numbers(
        "about 15,000 tokens, 300,000,000, 2,000 characters", "en"
    )
    assert numbers("over 50k tokens", "en") == numbers("au-delà de 50 000 jetons", "fr")
    # names, versions, placeholders and code are not numbers of the prose
    assert not numbers("gpt-4o, H100, a 5xx status, Python 3.11.7, {limit}, `x = 2`", "en")


def test_a_stale_sentence_and_a_changed_code_span_are_found() -> None:
    stale = difference(
        "harness-step.md",
        "a fake HTTP transport that answers 500 one-token words (500 tokens by the default "
        "estimate)",
        f"un faux transport HTTP qui répond 2{NNBSP}000 caractères (500 jetons selon l'estimation "
        "par défaut)",
        "fr",
    )
    assert stale == Difference("harness-step.md", ("500",), ("2000",))
    renamed = difference("x", "Call `reduce_context()`.", "调用 `reduce()`。", "zh")
    assert renamed == Difference("x", ("`reduce_context()`",), ("`reduce()`",))
    # the code form of a word the English says in prose is no difference
    assert (
        difference("x", "It yields an `Invoke`.", "Il produit (`yield`) un `Invoke`.", "fr") is None
    )
    # a zero the English writes as a word may be a digit
    assert difference("x", "zero or more", "大于或等于 0", "zh") is None
    assert code_spans("``a `b` c`` and :class:`X`") == {"a `b` c": 1, "X": 1}


def test_every_allowance_has_a_reason() -> None:
    assert len(ALLOWED) <= 6, "the allow-list is for the few texts that rightly differ"
    for allowance in ALLOWED:
        assert allowance.reason and (allowance.missing or allowance.extra)


def test_the_freshness_stamp_refuses_a_page_whose_numbers_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    english = "# Step\n\nThe transport answers 500 one-token words.\n\nIt is `fake`.\n"
    french = "# Étape\n\nLe transport répond 2\u202f000 caractères.\n\nIl est `fake`.\n"
    for language, text in (("en", english), ("fr", french)):
        (docs / language / "guides").mkdir(parents=True)
        (docs / language / "guides" / "step.md").write_text(text, encoding="utf-8")
    page = docs / "fr" / "guides" / "step.md"
    monkeypatch.setattr(freshness, "DOCS", docs)

    assert freshness.main(["stamp", str(page)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert "step.md:3 (paragraph 2)" in lines[0] and "500" in lines[0] and "2000" in lines[0]
    assert page.read_text(encoding="utf-8") == french  # not stamped

    page.write_text(french.replace("2\u202f000 caractères", "500 mots"), encoding="utf-8")
    assert freshness.main(["stamp", str(page)]) == 0
    assert freshness.recorded_version(page.read_text(encoding="utf-8")) is not None
