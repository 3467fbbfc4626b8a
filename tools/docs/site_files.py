"""MkDocs hook: the files published beside each language's pages, for tools rather than readers.

mkdocs-static-i18n builds the site once per language (English at the root, then ``fr/`` and
``zh/``), running every hook each time. On each build, once all pages are rendered, this hook writes
into the language's folder:

- ``objects.inv``: a Sphinx inventory (written by mkdocstrings' own ``Inventory`` code) of every
  identifier the generated reference pages register with an explicit anchor
  (``[](){#contextwise.ContextBudget}`` right before the heading it names), with the page of the
  same language as its URI. Sphinx's intersphinx and mkdocstrings' ``inventories`` read it, so other
  projects can link into contextwise in any of its languages.
- ``llms.txt`` and ``llms-full.txt``, in the llms.txt convention: the first lists the pages in
  reading order with their full URLs; the second holds the Markdown of the guides, the reference
  and the other pages, with every link made absolute. mkdocs-llmstxt writes both files at the site's
  root on every language's build, so the last language would overwrite the others; hence this hook.

Everything is computed from the pages of the build at hand: the hook keeps no state between builds.
"""

from __future__ import annotations

import importlib
import inspect
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page
from mkdocstrings import Inventory

PACKAGE = "contextwise"
EXPLICIT_ANCHOR = re.compile(r"^\[\]\(\)\{#(?P<identifier>[\w.]+)\}\s*$")
HEADING_ID = re.compile(r"^#{1,6} .*\{#(?P<anchor>[\w.-]+)\}\s*$")
HEADING_ATTRIBUTES = re.compile(r"^(?P<heading>#{1,6} .*?)\s*\{#[\w.-]+\}\s*$", re.M)
AUTOREF = re.compile(r"\[(?P<text>[^\]]*)\]\[(?P<identifier>[\w.]+)\]")
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")

OPTIONAL = "Optional"  # the llms.txt convention gives this section name its meaning: skippable


def explicit_anchors(markdown: str) -> Iterator[tuple[str, str]]:
    """The (identifier, heading id) pairs that a page registers with explicit anchors.

    An explicit anchor stands alone in its paragraph, right before the heading it names (blank lines
    between them); mkdocs-autorefs then makes the identifier point at the heading's id.
    """
    pending: list[str] = []
    for line in markdown.splitlines():
        if found := EXPLICIT_ANCHOR.match(line):
            pending.append(found.group("identifier"))
        elif heading := HEADING_ID.match(line):
            yield from ((identifier, heading.group("anchor")) for identifier in pending)
            pending = []
        elif line.strip():
            pending = []


def role_of(identifier: str) -> str:
    """The Sphinx role of a public object of the package: class, exception, function, method...

    The identifier's module is the longest prefix that names a module (``contextwise`` or
    ``contextwise.integrations.langchain``); the rest is looked up statically from it.
    """
    parts = identifier.split(".")
    count, target = _module_of(parts)
    parent: Any = None
    for part in parts[count:]:
        try:
            parent, target = target, inspect.getattr_static(target, part)
        except AttributeError:  # a pydantic field lives in model_fields, not on the class
            return "attribute"
    if inspect.isclass(target):
        return "exception" if issubclass(target, BaseException) else "class"
    if isinstance(target, staticmethod | classmethod):
        return "method"
    if inspect.isfunction(target) or inspect.isbuiltin(target):
        return "method" if inspect.isclass(parent) else "function"
    if isinstance(target, property) or inspect.isclass(parent):
        return "attribute"
    return "data"


def _module_of(parts: list[str]) -> tuple[int, Any]:
    """The longest dotted prefix of ``parts`` that is a module, imported, and its length."""
    for count in range(len(parts) - 1, 1, -1):
        try:
            return count, importlib.import_module(".".join(parts[:count]))
        except ModuleNotFoundError:
            continue
    return 1, importlib.import_module(parts[0])


def build_inventory(anchors: list[tuple[str, str]], *, project: str, version: str) -> Inventory:
    """A Sphinx inventory of (identifier, URI relative to the language's root) pairs."""
    inventory = Inventory(project=project, version=version)
    for identifier, uri in anchors:
        inventory.register(identifier, "py", role_of(identifier), uri)
    return inventory


def reading_order(pages: list[Page]) -> list[Page]:
    """The pages of the navigation in reading order, following the previous/next links."""
    in_nav = [page for page in pages if page.previous_page is not None or page.next_page]
    first = [page for page in in_nav if page.previous_page is None]
    ordered: list[Page] = []
    current: Page | None = first[0] if first else None
    while current is not None and current not in ordered:
        ordered.append(current)
        current = current.next_page
    return ordered


def section_of(page: Page) -> str | None:
    """The translated title of the page's navigation section, or None for a top-level page."""
    in_folder = page.file.src_uri.count("/") > 1  # "fr/guides/x.md", not "fr/glossary.md"
    return str(page.parent.title) if in_folder and page.parent is not None else None


def page_url(src_path: str) -> str:
    """The site URL of a Markdown file of one language's tree (``a/b.md`` -> ``a/b/``)."""
    stem = src_path.removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def absolute_links(markdown: str, src_path: str, base: str, refs: dict[str, str]) -> str:
    """The page's Markdown with relative links and identifier cross-references made absolute.

    ``src_path`` is the page's path inside its language's tree; ``base`` the language's full URL;
    ``refs`` maps each identifier to its URI under ``base``.
    """

    def link(found: re.Match[str]) -> str:
        target = found.group("target")
        if re.match(r"^[a-z][\w+.-]*:", target):
            return found.group(0)
        path, _, anchor = target.partition("#")
        if path:
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(src_path), path))
            url = page_url(joined) if joined.endswith(".md") else joined
        else:
            url = page_url(src_path)
        return f"]({base}{url}{'#' + anchor if anchor else ''})"

    def autoref(found: re.Match[str]) -> str:
        identifier = found.group("identifier")
        if identifier not in refs:
            return found.group(0)
        return f"[{found.group('text') or identifier}]({base}{refs[identifier]})"

    lines = [line for line in markdown.splitlines() if not EXPLICIT_ANCHOR.match(line)]
    text = HEADING_ATTRIBUTES.sub(r"\g<heading>", "\n".join(lines))
    return AUTOREF.sub(autoref, LINK.sub(link, text)).strip() + "\n"


def first_paragraph(markdown: str, base: str) -> str:
    """The first paragraph after a page's title, links made absolute: the home page's summary."""
    for block in re.split(r"\n\s*\n", absolute_links(markdown, "index.md", base, {})):
        if block.strip() and not block.lstrip().startswith(("#", "```", ">", "-", "|", "![")):
            return " ".join(block.split())
    return ""


def llms_txt(
    *, name: str, description: str, intro: str, base: str, pages: list[tuple[str | None, str, str]]
) -> str:
    """The ``llms.txt`` of one language: (section, title, URL under ``base``) in reading order."""
    full = f"- [llms-full.txt]({base}llms-full.txt)"
    lines = [f"# {name}", "", f"> {description}", "", intro, "", full, ""]
    sections: dict[str, list[str]] = {}
    for section, title, url in pages:
        sections.setdefault(section or OPTIONAL, []).append(f"- [{title}]({base}{url})")
    optional = sections.pop(OPTIONAL, [])
    for section, links in [*sections.items(), *([(OPTIONAL, optional)] if optional else [])]:
        lines += [f"## {section}", "", *links, ""]
    return "\n".join(lines)


def _language_prefix(pages: list[Page]) -> str:
    """The URL of the language's home page: "" for the default language, "fr/" for French."""
    home = next(
        (
            page
            for page in pages
            if page.file.src_uri.endswith("/index.md") and page.file.src_uri.count("/") == 1
        ),
        None,
    )
    return home.url if home is not None else ""


@event_priority(-150)  # after the i18n plugin (-100) set the build's language and pages
def on_env(env: Any, config: Any, files: Any) -> Any:
    pages = [file.page for file in files.documentation_pages() if file.page is not None]
    prefix = _language_prefix(pages)
    site = Path(config.site_dir) / prefix
    site.mkdir(parents=True, exist_ok=True)
    base = (config.site_url or "/").rstrip("/") + "/" + prefix

    anchors: list[tuple[str, str]] = []
    for page in pages:
        if "/reference/" in page.file.src_uri and page.markdown:
            relative = page.url.removeprefix(prefix)
            anchors += [
                (ident, f"{relative}#{anchor}")
                for ident, anchor in explicit_anchors(page.markdown)
                if ident.startswith(PACKAGE + ".")
            ]
    version = str(getattr(importlib.import_module(PACKAGE), "__version__", "0.0.0"))
    inventory = build_inventory(anchors, project=config.site_name, version=version)
    (site / "objects.inv").write_bytes(inventory.format_sphinx())

    ordered = reading_order(pages)
    refs = dict(anchors)
    listed = [
        (section_of(page), str(page.title), page.url.removeprefix(prefix))
        for page in ordered
        if page.url != prefix
    ]
    home = next((page for page in ordered if page.url == prefix), None)
    intro = first_paragraph(home.markdown or "", base) if home is not None else ""
    head = dict(name=config.site_name, description=config.site_description or "", base=base)
    (site / "llms.txt").write_text(llms_txt(**head, intro=intro, pages=listed), encoding="utf-8")
    full = [f"# {config.site_name}\n\n> {head['description']}\n"]
    for page in ordered:
        src_path = page.file.src_uri.split("/", 1)[1]
        full.append(
            f"<!-- {base}{page.url.removeprefix(prefix)} -->\n\n"
            + absolute_links(page.markdown or "", src_path, base, refs)
        )
    (site / "llms-full.txt").write_text("\n\n".join(full), encoding="utf-8")
    return env
