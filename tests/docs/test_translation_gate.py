"""The translation gate: complete catalogs, every page in every language, no English left.

It fails when a catalog (error messages or reference) is below 100 % in French or Chinese or has a
fuzzy entry, when a hand-written page exists in English but not in French or Chinese, or when a
French or Chinese page is still the English text outside its code blocks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.i18n import catalogs, languages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LOCALES = languages.translated()
DOMAINS = ("contextwise", "reference", "site")


def hand_written_pages() -> list[Path]:
    """English pages written by people (the generated reference is checked through its catalog)."""
    return sorted(
        path.relative_to(DOCS / "en")
        for path in (DOCS / "en").rglob("*.md")
        if "reference" not in path.relative_to(DOCS / "en").parts
    )


def prose(markdown: str) -> str:
    """The text of a page outside fenced code blocks, inline code and link targets."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return " ".join(text.split())


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("locale", LOCALES)
def test_catalog_is_complete(domain: str, locale: str) -> None:
    found = catalogs.catalog_problems(domain, locales=[locale])
    assert not found, f"{domain}/{locale}: {len(found)} problems, first: {found[:5]}"


def test_there_are_hand_written_pages() -> None:
    names = {path.as_posix() for path in hand_written_pages()}
    for required in (
        "index.md",
        "guides/getting-started.md",
        "guides/budgeting.md",
        "guides/effort.md",
        "guides/context-policies.md",
        "guides/model-routing.md",
        "guides/harness-step.md",
        "guides/errors-and-languages.md",
        "contributing/regenerating-the-reference.md",
        "contributing/architecture.md",
        "glossary.md",
    ):
        assert required in names, f"docs/en/{required} is missing"


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page_exists_and_is_translated(locale: str) -> None:
    missing, untranslated = [], []
    for page in hand_written_pages():
        english = DOCS / "en" / page
        translated = DOCS / locale / page
        if not translated.is_file():
            missing.append(page.as_posix())
        elif prose(translated.read_text(encoding="utf-8")) == prose(
            english.read_text(encoding="utf-8")
        ):
            untranslated.append(page.as_posix())
    assert not missing, f"pages missing in {locale}: {missing}"
    assert not untranslated, f"pages still in English in {locale}: {untranslated}"


@pytest.mark.parametrize("locale", LOCALES)
def test_translated_pages_keep_the_same_code(locale: str) -> None:
    """A translation changes the prose, never the examples: the Python blocks stay the same."""
    for page in hand_written_pages():
        translated = DOCS / locale / page
        if not translated.is_file():
            continue
        blocks = re.compile(r"```python\n(.*?)```", re.S)
        english_code = blocks.findall((DOCS / "en" / page).read_text(encoding="utf-8"))
        translated_code = blocks.findall(translated.read_text(encoding="utf-8"))
        assert len(translated_code) == len(english_code), f"{locale}/{page}: code blocks differ"


def test_prose_ignores_code_and_links() -> None:
    english = "Use `plan`.\n\n```python\nx = 1\n```\n[Budget](budget.md)"
    french = "Utilisez `plan`.\n\n```python\nx = 1\n```\n[Budget](budget.md)"
    assert prose(english) != prose(french)
    assert prose("[Budget](a.md)") == prose("[Budget](b.md)")


@pytest.mark.parametrize("locale", ["en", *LOCALES])
def test_every_guide_links_into_the_reference(locale: str) -> None:
    guides = sorted((DOCS / locale / "guides").glob("*.md"))
    assert guides
    for guide in guides:
        text = guide.read_text(encoding="utf-8")
        # by identifier ([`ContextBudget`][contextwise.ContextBudget]): mkdocs-autorefs resolves it
        # to the reference page of the guide's own language
        assert "][contextwise." in text, f"{locale}/guides/{guide.name}: no reference link"


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("locale", LOCALES)
def test_babel_finds_no_format_error_in_the_catalogs(domain: str, locale: str) -> None:
    """No false python-format flag: "2 % of the window" is prose, not a %-format."""
    path = ROOT / "locales" / locale / "LC_MESSAGES" / f"{domain}.po"
    errors = [
        f"{message.context or message.id}: {found}"
        for message, found in catalogs.read_catalog(path, locale).check()
    ]
    assert errors == []
    assert "python-format" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("locale", LOCALES)
def test_no_catalog_keeps_obsolete_entries(domain: str, locale: str) -> None:
    """A ``#~`` entry is a translation of nothing: ``python -m tools.i18n.catalogs purge``."""
    path = ROOT / "locales" / locale / "LC_MESSAGES" / f"{domain}.po"
    obsolete = catalogs.read_catalog(path, locale).obsolete
    assert not obsolete, f"{path.relative_to(ROOT)}: {len(obsolete)} obsolete entries"


def test_purge_drops_obsolete_entries_and_keeps_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "locales" / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    path = folder / "site.po"
    catalog = catalogs.new_catalog("fr", "site")
    catalog.add("kept", "gardé")
    catalog.obsolete["gone"] = catalog["kept"].__class__("gone", "parti")
    path.write_text(catalogs.render_po(catalog), encoding="utf-8")
    assert "#~ msgid" in path.read_text(encoding="utf-8")
    assert catalogs.purge(tmp_path) == [path]
    purged = catalogs.read_catalog(path, "fr")
    assert not purged.obsolete and purged["kept"].string == "gardé"
    assert catalogs.purge(tmp_path) == []
