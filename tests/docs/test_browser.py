"""The built site in a real browser: Debian's Chromium driven by Playwright, on 127.0.0.1.

Checked: the three home pages, the language switcher from an English reference page to the same
page in French and in Chinese, a Chinese search that returns results (jieba segmentation), a
guide's identifier link landing on the reference entry of the same language, the guides' pictures
loaded in each language, the Mermaid diagram of the architecture page drawn in every language with
the site's own copy of Mermaid, and no JavaScript error on any page visited.

Playwright's own browser is never downloaded: the test drives the system Chromium at its path.
When Chromium or Playwright is missing the test is skipped, unless CONTEXTWISE_REQUIRE_BROWSER=1
(set by ``.ci/run``), in which case it fails: in CI this test is mandatory.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CONTEXTWISE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the browser test is required (CONTEXTWISE_REQUIRE_BROWSER=1): {reason}")
    pytest.skip(reason)


def _chromium() -> str | None:
    for path in (os.environ.get("CONTEXTWISE_CHROMIUM", ""), *CHROMIUM_PATHS):
        if path and Path(path).is_file():
            return path
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        _unavailable("Chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            yield instance
        finally:
            instance.close()


class Visit:
    """A browser page that records every JavaScript error and every failed local resource."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on("console", self._console)

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        # The sandbox is offline: requests to other hosts (the GitHub API for the repository
        # facts) fail there and say nothing about the site. Material also probes for a
        # sitemap.xml next to each alternate-language link; a missing one is expected.
        if url and urlsplit(url).hostname != "127.0.0.1":
            return
        if "Failed to load resource" in message.text and url.endswith("/sitemap.xml"):
            return
        self.errors.append(f"console error: {message.text} ({url})")

    def open(self, path: str) -> Any:
        response = self.page.goto(self.base + path)
        assert response is not None and response.ok, f"{path}: HTTP {response and response.status}"
        self.page.wait_for_load_state("load")
        return self.page


@pytest.fixture
def visit(browser: Any, site_url: str) -> Iterator[Visit]:
    current = Visit(browser, site_url)
    yield current
    current.page.close()
    assert not current.errors, "\n".join(current.errors)


@pytest.mark.parametrize(
    ("path", "lang", "heading"),
    [("", "en", "Quick start"), ("fr/", "fr", "Démarrage rapide"), ("zh/", "zh", "快速上手")],
)
def test_home_pages(visit: Visit, path: str, lang: str, heading: str) -> None:
    page = visit.open(path)
    assert page.locator("html").get_attribute("lang") == lang
    assert page.locator("h1").first.inner_text().strip().rstrip("¶") == "contextwise"
    assert page.get_by_role("heading", name=heading).count() == 1


@pytest.mark.parametrize(("lang", "title"), [("fr", "Importation"), ("zh", "导入")])
def test_switcher_keeps_the_page(visit: Visit, lang: str, title: str) -> None:
    page = visit.open("reference/budget/")
    assert page.locator("h1").first.inner_text().strip().rstrip("¶") == "budget.py"
    page.locator(".md-header__option .md-select").hover()
    link = page.locator(f"a.md-select__link[hreflang={lang}]")
    link.click()
    page.wait_for_url(f"**/{lang}/reference/budget/")
    assert page.locator("html").get_attribute("lang") == lang
    assert page.locator("h1").first.inner_text().strip().rstrip("¶") == "budget.py"
    assert page.locator("#section-import").inner_text().strip().rstrip("¶") == title


@pytest.mark.parametrize(
    ("prefix", "lang", "heading"),
    [("", "en", "Dataclass"), ("fr/", "fr", "Classe de données"), ("zh/", "zh", "数据类")],
)
def test_a_guide_identifier_link_lands_on_the_same_language_entry(
    visit: Visit, prefix: str, lang: str, heading: str
) -> None:
    page = visit.open(f"{prefix}guides/budgeting/")
    link = page.locator("article a.autorefs", has_text="ContextBudget").first
    link.scroll_into_view_if_needed()
    link.click()
    page.wait_for_url(f"**/{prefix}reference/budget/#ContextBudget")
    assert page.locator("html").get_attribute("lang") == lang
    entry = page.locator("h2#ContextBudget")
    assert entry.inner_text().strip().rstrip("¶").startswith(heading)
    assert "ContextBudget" in entry.inner_text()


@pytest.mark.parametrize("prefix", ["", "fr/", "zh/"])
@pytest.mark.parametrize(
    ("guide", "picture"),
    [("budgeting", "budget-split.svg"), ("harness-step", "harness-step.svg")],
)
def test_guide_pictures_are_shown(visit: Visit, prefix: str, guide: str, picture: str) -> None:
    page = visit.open(f"{prefix}guides/{guide}/")
    image = page.locator(f'article img[src$="assets/{picture}"]')
    assert image.count() == 1
    image.scroll_into_view_if_needed()
    src = image.get_attribute("src") or ""
    loaded = image.evaluate("img => img.complete && img.naturalWidth > 0")
    assert loaded, f"{prefix}guides/{guide}: {src} did not load"
    # the picture is the page's language's own, not the English one
    resolved = image.evaluate("img => img.currentSrc")
    assert f"/{prefix}assets/{picture}" in resolved


def test_chinese_search_finds_pages(visit: Visit) -> None:
    page = visit.open("zh/reference/")
    search = page.locator("input.md-search__input")
    search.click()
    results = page.locator(".md-search-result__item")
    # The index loads in a web worker; a query typed before it is ready is typed again.
    for _ in range(6):
        search.fill("")
        search.fill("预算")
        try:
            results.first.wait_for(state="visible", timeout=5_000)
            break
        except PlaywrightTimeoutError:
            continue
    assert results.count() >= 1
    assert any(
        "/zh/" in (a.get_attribute("href") or "")
        for a in page.locator(".md-search-result__item a").all()
    )


@pytest.mark.parametrize("prefix", ["", "fr/", "zh/"])
def test_the_architecture_diagram_is_drawn_from_the_site_itself(visit: Visit, prefix: str) -> None:
    requested: list[str] = []
    visit.page.on("request", lambda request: requested.append(request.url))
    page = visit.open(f"{prefix}contributing/architecture/")
    # Material replaces each diagram's source block with a drawing in a closed shadow root: the
    # layers, then the runner and what takes it.
    diagrams = page.locator("div.mermaid")
    diagrams.first.wait_for(state="visible", timeout=20_000)
    diagrams.last.wait_for(state="visible", timeout=20_000)
    assert diagrams.count() == 2
    assert page.locator("pre.mermaid").count() == 0
    for index in range(2):
        box = diagrams.nth(index).bounding_box()
        assert box is not None and box["height"] > 100, box
    mermaid = [url for url in requested if "mermaid" in url]
    assert mermaid and all(urlsplit(url).hostname == "127.0.0.1" for url in mermaid), mermaid


@pytest.mark.parametrize(
    ("required", "outcome"), [("1", pytest.fail.Exception), ("", pytest.skip.Exception)]
)
def test_a_missing_browser_fails_when_required(
    monkeypatch: pytest.MonkeyPatch, required: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CONTEXTWISE_REQUIRE_BROWSER", required)
    with pytest.raises(outcome):
        _unavailable("Chromium is not installed")
