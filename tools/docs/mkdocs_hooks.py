"""MkDocs hooks: the navigation of every language in reading order, and Mermaid where it is used.

The navigation is built by MkDocs from the folders, so a new guide or a new reference page needs
no edit of ``mkdocs.yml``; the i18n plugin then translates the section titles. This hook, run after
the i18n plugin, merges and reorders: a page that falls back to English (a guide not translated
yet) sits in an English folder and would form a second "Guides" section, so the sections of the
same folder are merged; then come the home page, the guides (getting started first), the reference
(its index first, the translation status last), the contributing pages and the rest (glossary).
Items are recognized by their file path, never by their title, which is translated.

A page with a Mermaid diagram gets the vendored Mermaid library (``docs/assets/javascripts``)
right before Material's own script, which then draws the diagram with it instead of fetching the
library from a CDN. The other pages do not load it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page

SECTIONS = ("guides", "reference", "contributing")
GUIDES = (
    "getting-started",
    "budgeting",
    "tokens",
    "effort",
    "messages",
    "message-shapes",
    "context-policies",
    "model-routing",
    "harness-step",
    "langchain",
    "pydantic-ai",
    "openai-agents",
    "errors-and-languages",
)
LAST_IN_REFERENCE = ("translation-status",)
MERMAID = "mermaid.min.js"
_BUNDLE = re.compile(r'<script src="([^"]*assets/javascripts/)bundle\.[0-9a-f]+\.min\.js"')


def _path(item: Any) -> PurePosixPath | None:
    file = getattr(item, "file", None)
    if file is None:
        return None
    parts = PurePosixPath(file.src_uri).parts
    return PurePosixPath(*parts[1:])  # drop the language folder (en/, fr/, zh/)


def _folder(item: Any) -> str:
    if getattr(item, "children", None):
        folders = {_folder(child) for child in item.children}
        return folders.pop() if len(folders) == 1 else ""
    path = _path(item)
    return path.parts[0] if path is not None and len(path.parts) > 1 else ""


def _top_key(item: Any) -> tuple[int, str]:
    path = _path(item)
    if path is not None and path.as_posix() == "index.md":
        return 0, ""
    folder = _folder(item)
    if folder in SECTIONS:
        return 1 + SECTIONS.index(folder), ""
    return 1 + len(SECTIONS), path.stem if path is not None else ""


def _page_key(item: Any) -> tuple[int, int, str]:
    path = _path(item)
    stem = path.stem if path is not None else ""
    if stem == "index":
        return 0, 0, ""
    if stem in LAST_IN_REFERENCE:
        return 2, 0, stem
    if stem in GUIDES and _folder(item) == "guides":
        return 1, GUIDES.index(stem), stem
    return 1, len(GUIDES), stem


def _merge_sections(items: list[Any]) -> list[Any]:
    merged: list[Any] = []
    by_folder: dict[str, Any] = {}
    for item in items:
        folder = _folder(item) if getattr(item, "children", None) else ""
        if folder and folder in by_folder:
            first = by_folder[folder]
            for child in item.children:
                child.parent = first
            first.children.extend(item.children)
            continue
        if folder:
            by_folder[folder] = item
        merged.append(item)
    return merged


@event_priority(-200)  # after mkdocs-static-i18n (-100), which rebuilds the navigation per language
def on_nav(nav: Any, config: Any, files: Any) -> Any:
    nav.items[:] = _merge_sections(nav.items)
    nav.items.sort(key=_top_key)
    for item in nav.items:
        if getattr(item, "children", None):
            item.children.sort(key=_page_key)
    # The previous/next links of the footer follow the new order.
    nav.pages = [page for page in _walk(nav.items) if isinstance(page, Page)]
    for before, after in zip([None, *nav.pages], [*nav.pages, None], strict=True):
        if before is not None:
            before.next_page = after
        if after is not None:
            after.previous_page = before
    return nav


def _walk(items: list[Any]) -> Any:
    for item in items:
        yield item
        yield from _walk(getattr(item, "children", None) or [])


def with_mermaid(html: str) -> str:
    """Load the vendored Mermaid library before Material's bundle when the page has a diagram."""
    bundle = _BUNDLE.search(html)
    if 'class="mermaid"' not in html or bundle is None:
        return html
    tag = f'<script src="{bundle.group(1)}{MERMAID}"></script>'
    return html[: bundle.start()] + tag + html[bundle.start() :]


def on_post_page(output: str, page: Page, config: Any) -> str:
    return with_mermaid(output)
