"""The languages live in one place, ``i18n.LANGUAGES``: the tools and the gate follow it.

Adding a fourth language to that list (monkeypatched here: German) is enough for the translation
gate and the site configuration's check to ask for its catalogs and its site language. The tools
hold no language code of their own. The reference generator is a distribution of its own: it
takes a project's languages from its settings (``languages`` in ``[tool.contextwise-reference]``,
which ``test_reference.py`` compares with ``LANGUAGES``), and a fourth language there is enough
for it to ask for its pages and catalog, and for ``stats`` to count it.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from contextwise import i18n
from support.reference import cli, copy_fixture
from tools.docs import site_config
from tools.i18n import catalogs, languages

ROOT = Path(__file__).resolve().parents[2]
GERMAN = i18n.Language("de", "de", "Deutsch")  # type: ignore[arg-type]  # not a Locale yet


@pytest.fixture
def four_languages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(i18n, "LANGUAGES", (*i18n.LANGUAGES, GERMAN))


def test_the_sdk_and_the_tools_agree_on_the_languages() -> None:
    codes = tuple(language.code for language in i18n.LANGUAGES)
    assert languages.codes() == codes == i18n.SUPPORTED_LOCALES
    assert typing.get_args(i18n.Locale) == codes
    assert languages.source() == "en"
    assert languages.translated() == codes[1:]


FOUR = ("--languages", "en,fr,zh,de")


def test_a_new_language_makes_the_generator_ask_for_its_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = copy_fixture(tmp_path)
    assert cli(sample, *FOUR, "render", "--check") == 1
    out = capsys.readouterr().out
    for page in ("index", "shapes", "tools", "errors", "translation-status"):
        assert f"missing: docs/de/reference/{page}.md" in out
    # The other languages' pages change only where they count the languages.
    stale = {line for line in out.splitlines() if line.startswith("stale: docs/")}
    assert stale == {
        f"stale: docs/{code}/reference/translation-status.md" for code in ["en", "fr", "zh"]
    }
    assert cli(sample, *FOUR, "update") == 0
    assert (sample / "locales/de/LC_MESSAGES/reference.po").is_file()
    assert cli(sample, *FOUR, "render") == 0
    german = (sample / "docs/de/reference/shapes.md").read_text(encoding="utf-8")
    assert "*(EN)* Return the area of a square." in german  # English until translated
    assert "## *(EN)* Import {#section-import}" in german  # no German labels in the generator yet
    status = (sample / "docs/en/reference/translation-status.md").read_text(encoding="utf-8")
    assert "| German | 151 | 0 | 0 | 151 | 0.0% |" in status  # its name, from CLDR
    french = (sample / "docs/fr/reference/translation-status.md").read_text(encoding="utf-8")
    assert "| Allemand |" in french  # named in French by CLDR


def test_a_new_language_appears_in_stats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(copy_fixture(tmp_path), *FOUR, "stats", "--strict") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[1:] == ["fr", "zh", "de"]
    assert lines[-2].split() == ["de", "0", "0", "151", "151", "0.0%"]
    assert lines[-1] == "release rule (100 % translated, 0 fuzzy): not met"


def test_a_new_language_makes_the_gate_ask_for_its_catalogs(four_languages: None) -> None:
    for domain in ("contextwise", "reference"):
        missing = f"locales/de/LC_MESSAGES/{domain}.po is missing"
        assert catalogs.catalog_problems(domain) == [missing]
    assert site_config.problems() == [
        "mkdocs.yml: the i18n languages are ['en', 'fr', 'zh'], "
        "LANGUAGES says ['en', 'fr', 'zh', 'de']",
        "mkdocs.yml: no i18n language 'de' (Deutsch)",
    ]


def test_the_tools_name_no_language() -> None:
    """No language code is written in tools/: each one comes from LANGUAGES."""
    codes = {language.code for language in i18n.LANGUAGES}
    found = []
    for path in sorted((ROOT / "tools").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in codes:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []
