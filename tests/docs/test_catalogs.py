"""The error-message catalogs: the template matches the code; fr and zh are complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from tools.i18n import catalogs, languages

ROOT = Path(__file__).resolve().parents[2]


def test_the_template_is_fresh() -> None:
    pot = ROOT / "locales" / "contextwise.pot"
    assert pot.read_text(encoding="utf-8") == catalogs.render_po(catalogs.extract_catalog()), (
        "locales/contextwise.pot is stale: run python -m tools.i18n.catalogs extract, then update"
    )


@pytest.mark.parametrize("locale", languages.translated())
def test_each_catalog_is_complete(locale: str) -> None:
    template = catalogs.read_catalog(ROOT / "locales" / "contextwise.pot")
    catalog = catalogs.read_catalog(catalogs.po_path(locale), locale)
    missing = {m.id for m in template if m.id} - {m.id for m in catalog if m.id}
    assert not missing, f"{locale}: not merged yet: {sorted(map(str, missing))}"
    assert catalogs.problems(catalog, locale) == []


def test_the_check_catches_fuzzy_untranslated_and_half_filled_plurals() -> None:
    catalog = Catalog(locale="fr")
    catalog.add("done", "fait")
    catalog.add("fuzzy one", "approximatif", flags=["fuzzy"])
    catalog.add("left empty", "")
    catalog.add(("one item", "{count} items"), ("un élément", "", "{count} éléments"))
    found = catalogs.problems(catalog, "fr")
    assert catalog.num_plurals == 3
    assert found == [
        "fr: fuzzy: 'fuzzy one'",
        "fr: untranslated: 'left empty'",
        "fr: untranslated: 'one item'",
    ]


def test_french_has_three_plural_forms_all_filled() -> None:
    catalog = catalogs.read_catalog(catalogs.po_path("fr"), "fr")
    assert catalog.num_plurals == 3
    plurals = [m for m in catalog if m.id and m.pluralizable]
    assert plurals, "the catalog has plural messages"
    for message in plurals:
        assert len(message.string) == 3 and all(message.string), message.id
