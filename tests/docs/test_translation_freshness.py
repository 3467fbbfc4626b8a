"""Hand-translated pages cannot go stale in silence (tools/docs/freshness.py).

Each French and Chinese page written by hand records the Git blob id of the English page it
translates; the suite fails, naming the page, as soon as the English page changes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from tools.docs.freshness import (
    blob_id,
    main,
    recorded_version,
    stale,
    stamp,
    stamp_text,
    translations,
)

ENGLISH = "# Budgeting\n\nThe budget is shared.\n"


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for language, text in (("en", ENGLISH), ("fr", "# Budget\n\nLe budget est partagé.\n")):
        (docs / language / "guides").mkdir(parents=True)
        (docs / language / "guides" / "budgeting.md").write_text(text, encoding="utf-8")
    (docs / "fr" / "reference").mkdir()
    (docs / "fr" / "reference" / "budget.md").write_text("# budget.py\n", encoding="utf-8")
    (docs / "en" / "reference").mkdir()
    (docs / "en" / "reference" / "budget.md").write_text("# budget.py\n", encoding="utf-8")
    return docs


def test_every_translated_page_translates_the_current_english_page() -> None:
    found = stale()
    assert not found, "stale translations (update them, then run `stamp`):\n" + "\n".join(
        translation.describe() for translation in found
    )


def test_every_hand_written_page_is_checked_in_every_language() -> None:
    checked = {t.page.relative_to(ROOT / "docs").as_posix() for t in translations()}
    for english in (ROOT / "docs/en").rglob("*.md"):
        relative = english.relative_to(ROOT / "docs/en")
        if relative.parts[0] in ("reference", "performance.md"):  # generated pages
            continue
        for language in ("fr", "zh"):
            assert f"{language}/{relative.as_posix()}" in checked


def test_the_version_is_the_git_blob_id() -> None:
    page = ROOT / "docs/en/index.md"
    printed = subprocess.run(
        ["git", "hash-object", str(page)], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    assert blob_id(page.read_bytes()) == printed


def test_a_page_without_a_record_is_stale_and_named(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    [translation] = stale(docs)
    assert translation.page == docs / "fr/guides/budgeting.md"
    assert translation.recorded is None
    assert "records no version of" in translation.describe(tmp_path)
    assert "fr/guides/budgeting.md" in translation.describe(tmp_path)


def test_stamping_records_the_english_version_and_keeps_the_text(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    page = docs / "fr/guides/budgeting.md"
    assert stamp([page], docs) == [page]
    text = page.read_text(encoding="utf-8")
    assert recorded_version(text) == blob_id(ENGLISH.encode())
    assert text.endswith("# Budget\n\nLe budget est partagé.\n")
    assert stale(docs) == []
    assert stamp([page], docs) == []  # stamping again changes nothing


def test_an_english_edit_makes_the_translation_stale(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    page = docs / "fr/guides/budgeting.md"
    stamp([page], docs)
    old = blob_id(ENGLISH.encode())
    (docs / "en/guides/budgeting.md").write_text(ENGLISH + "\nA new note.\n", encoding="utf-8")
    [translation] = stale(docs)
    assert translation.recorded == old
    assert f"git diff {old[:12]} " in translation.describe(tmp_path)


def test_stamping_keeps_other_front_matter() -> None:
    text = '---\ntitle: Budget\nenglish_version: "' + "0" * 40 + '"\n---\n\n# Budget\n'
    stamped = stamp_text(text, "a" * 40)
    assert stamped == '---\ntitle: Budget\nenglish_version: "' + "a" * 40 + '"\n---\n\n# Budget\n'


def test_stamping_refuses_an_untranslated_path(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    with pytest.raises(ValueError, match="not a translated page"):
        stamp([docs / "en/guides/budgeting.md"], docs)
    with pytest.raises(ValueError, match="not a translated page"):
        stamp([docs / "fr/reference/budget.md"], docs)


def test_the_check_command_lists_the_stale_pages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    assert "up to date" in capsys.readouterr().out
