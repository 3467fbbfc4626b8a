"""The site builds with ``mkdocs build --strict`` in three languages, and its pages fit together.

A strict build fails on any warning: a broken link or anchor (type links in the reference
included), a missing page in the navigation, a bad configuration. The checks below read the built
HTML: English at the root, French under ``fr/``, Chinese under ``zh/``, each reference page in
every language with a language switcher that points at the same page.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from mkdocstrings import Inventory

from conftest import ROOT, BuiltSite
from tools.docs import site_config
from tools.i18n import languages

# English at the root, every other language under its code.
LANGUAGES = {code: "" if code == languages.source() else f"{code}/" for code in languages.codes()}
REFERENCE_PAGES = sorted(path.stem for path in (ROOT / "docs/en/reference").glob("*.md"))


def site_prefix_url() -> str:
    """The site's published URL, ending with a slash."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    found = re.search(r"^site_url:\s*(\S+)", config, flags=re.M)
    assert found is not None
    return found.group(1).rstrip("/") + "/"


def _html(site: BuiltSite, path: str) -> str:
    target = site.path / path / "index.html"
    assert target.is_file(), f"{path or '/'} was not built"
    return target.read_text(encoding="utf-8")


def test_the_site_languages_are_the_i18n_languages() -> None:
    assert site_config.problems() == []


def test_the_site_check_catches_a_renamed_or_missing_language(tmp_path: Path) -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    renamed = tmp_path / "mkdocs.yml"
    renamed.write_text(config.replace("name: 简体中文", "name: Chinese"), encoding="utf-8")
    assert site_config.problems(renamed) == [
        "mkdocs.yml: language 'zh' is named 'Chinese', LANGUAGES says '简体中文'"
    ]
    without = tmp_path / "mkdocs.yml"
    without.write_text(config.replace("locale: zh", "locale: cn"), encoding="utf-8")
    found = site_config.problems(without)
    assert "mkdocs.yml: no i18n language 'zh' (简体中文)" in found


def test_strict_build_succeeds(built_site: BuiltSite) -> None:
    assert built_site.returncode == 0, built_site.output


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_each_language_has_its_home_page(built_site: BuiltSite, lang: str, prefix: str) -> None:
    html = _html(built_site, prefix)
    assert f'<html lang="{lang}"' in html


@pytest.mark.parametrize("page", REFERENCE_PAGES)
@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_reference_pages_switch_to_the_same_page(
    built_site: BuiltSite, lang: str, prefix: str, page: str
) -> None:
    path = f"{prefix}reference/" + ("" if page == "index" else f"{page}/")
    html = _html(built_site, path)
    links = dict(re.findall(r'<a href="([^"]+)" hreflang="(\w+)" class="md-select__link"', html))
    targets = {language: href for href, language in links.items()}
    assert set(targets) == set(LANGUAGES)
    for language, other in LANGUAGES.items():
        expected = f"{other}reference/" + ("" if page == "index" else f"{page}/")
        resolved = (Path("/") / path / targets[language]).resolve().as_posix().strip("/") + "/"
        assert resolved == expected, f"{lang} {page}: the {language} link goes to {resolved}"


def test_navigation_is_translated(built_site: BuiltSite) -> None:
    assert "Référence" in _html(built_site, "fr/")
    assert "参考" in _html(built_site, "zh/")


def test_chinese_is_segmented_for_search(built_site: BuiltSite) -> None:
    index = json.loads((built_site.path / "search/search_index.json").read_text(encoding="utf-8"))
    chinese = [doc for doc in index["docs"] if doc["location"].startswith("zh/")]
    assert chinese, "the Chinese pages are not in the search index"
    # jieba joins the words it finds with zero-width spaces, which the separator splits on.
    assert any("\u200b预算\u200b" in doc["text"] for doc in chinese)
    assert "\\u200b" in index["config"]["separator"]


def _nav_links(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"\s+class="md-nav__link', html)


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_navigation_order(built_site: BuiltSite, lang: str, prefix: str) -> None:
    links = [link.rstrip("/") for link in _nav_links(_html(built_site, f"{prefix}reference/"))]
    html = _html(built_site, f"{prefix}reference/")
    labels = re.findall(
        r'<label class="md-nav__link" for="__nav_\d+" id="__nav_\d+_label".*?</label>', html, re.S
    )
    titles = [" ".join(re.sub(r"<[^>]+>", " ", label).split()) for label in labels]
    # one section per folder, even when some guides fall back to English pages
    assert (
        titles
        == {
            "en": ["Guides", "Reference", "Contributing"],
            "fr": ["Guides", "Référence", "Contribuer"],
            "zh": ["指南", "参考", "参与贡献"],
        }[lang]
    ), titles
    assert links.index("../guides/getting-started") < links.index("../guides/budgeting")
    reference = [link for link in links if "/" not in link and link not in ("..", "../glossary")]
    assert reference[0] == "." and reference[-1] == "translation-status"
    assert reference[1:-1] == sorted(reference[1:-1])


# -- identifiers, objects.inv and llms.txt (tools/docs/site_files.py) ---------------------------


def _inventory(site: BuiltSite, prefix: str) -> Inventory:
    path = site.path / prefix / "objects.inv"
    assert path.is_file(), f"/{prefix}objects.inv was not written"
    with path.open("rb") as handle:
        return Inventory.parse_sphinx(handle)


def _public_names() -> list[str]:
    import contextwise

    return [name for name in contextwise.__all__ if not name.startswith("_")]


INTEGRATIONS = ("langchain", "pydantic_ai", "openai_agents")
"""The modules of contextwise.integrations, whose names the package root does not export."""


def _integration_names() -> list[str]:
    """``integrations.<module>.<name>`` for each public name of each integration module."""
    names: list[str] = []
    for module in INTEGRATIONS:
        imported = importlib.import_module(f"contextwise.integrations.{module}")
        names += [f"integrations.{module}.{name}" for name in imported.__all__]
    return names


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_each_language_publishes_an_inventory_of_the_public_api(
    built_site: BuiltSite, lang: str, prefix: str
) -> None:
    inventory = _inventory(built_site, prefix)
    for name in _public_names() + _integration_names():
        assert f"contextwise.{name}" in inventory, f"{lang}: contextwise.{name} is not listed"
    assert inventory["contextwise.integrations.langchain.ContextPolicyMiddleware"].role == "class"
    assert inventory["contextwise.integrations.pydantic_ai.history_processor"].role == "function"
    assert inventory["contextwise.integrations.openai_agents.PolicySession.get_items"].role == (
        "method"
    )
    assert inventory["contextwise.ContextBudget"].role == "class"
    assert inventory["contextwise.ContextBudget.plan"].role == "method"
    assert inventory["contextwise.ContextOverflowError"].role == "exception"
    assert inventory["contextwise.estimate_tokens"].role == "function"


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_every_inventory_uri_exists_in_the_same_language(
    built_site: BuiltSite, lang: str, prefix: str
) -> None:
    for item in _inventory(built_site, prefix).values():
        path, _, anchor = item.uri.partition("#")
        html = _html(built_site, prefix + path.rstrip("/"))
        assert f'<html lang="{lang}"' in html
        assert f'id="{anchor}"' in html, f"{lang}: {item.name} -> {item.uri}: no such anchor"


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_guides_link_to_the_api_in_their_own_language(
    built_site: BuiltSite, lang: str, prefix: str
) -> None:
    html = _html(built_site, f"{prefix}guides/budgeting/")
    links = re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="([^"]+)"', html)
    assert links, "no identifier link on the budgeting guide"
    for href in links:
        resolved = (Path("/") / f"{prefix}guides/budgeting/" / href).resolve().as_posix()
        assert resolved.startswith(f"/{prefix}reference/"), f"{lang}: {href} leaves the language"
    assert "../../reference/budget/#ContextBudget" in links
    assert "Multiple primary URLs" not in built_site.output
    assert "Could not find closest" not in built_site.output


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_llms_txt_lists_the_pages_of_its_language(
    built_site: BuiltSite, lang: str, prefix: str
) -> None:
    text = (built_site.path / prefix / "llms.txt").read_text(encoding="utf-8")
    base = site_prefix_url() + prefix
    assert text.startswith("# contextwise\n\n> ")
    assert f"]({base}llms-full.txt)" in text
    for page in sorted((ROOT / "docs" / lang).rglob("*.md")):
        relative = page.relative_to(ROOT / "docs" / lang).with_suffix("").as_posix()
        if relative == "index":
            continue
        url = base + relative.removesuffix("index") + ("" if relative.endswith("index") else "/")
        assert f"]({url})" in text, f"{lang}: {url} is not listed"
    assert all(link.startswith(base) for link in re.findall(r"\]\(([^)]+)\)", text))


@pytest.mark.parametrize(("lang", "prefix"), LANGUAGES.items())
def test_llms_full_txt_holds_the_guides_and_the_whole_api(
    built_site: BuiltSite, lang: str, prefix: str
) -> None:
    text = (built_site.path / prefix / "llms-full.txt").read_text(encoding="utf-8")
    for name in _public_names() + [path.rpartition(".")[2] for path in _integration_names()]:
        assert f"`{name}`" in text, f"{lang}: {name} is missing"
    assert "[](){#" not in text and "{#section-import}" not in text
    assert not re.search(r"\]\((?!https?://)[^)]*\.md[#)]", text), "a relative link is left"
    base = site_prefix_url() + prefix
    assert f"[`ContextBudget`]({base}reference/budget/#ContextBudget)" in text
    assert f"]({base}reference/integrations-langchain/#ContextPolicyMiddleware)" in text
