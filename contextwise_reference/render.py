"""Render the reference model as Markdown pages in one language.

Pure functions of the model, a translator and the catalog statistics: same input, same text.
A :class:`Renderer` is frozen: rendering a page never changes it, so pages can be rendered in any
order (or in parallel) and each comes out the same.
The pages are plain Markdown with two additions that MkDocs understands without plugins: heading
ids written ``{#id}`` (``attr_list``) and ``<code>`` cells whose links are Markdown links, so that
``mkdocs build --strict`` validates every one of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from babel import Locale
from babel.numbers import format_decimal, format_percent

from contextwise_reference import labels, languages
from contextwise_reference.model import (
    AttributeDoc,
    Block,
    ClassDoc,
    Example,
    Function,
    Item,
    Msg,
    Page,
    Reference,
    Target,
    TypeExpr,
)
from contextwise_reference.stats import Coverage

Translate = Callable[[Msg], tuple[str, bool]]
"""Return a message's text in the page's language and whether it is the English fallback."""

MARKER = "*(EN)*"
"""Shown before a text that falls back to English on a French or Chinese page."""


Freshness = Sequence[tuple[str, Mapping[str, bool]]]
"""Per hand-written page (path under its language's folder): language code -> up to date."""


_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|exc|mod|obj|const|type):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")
_BLANKS = re.compile(r"[ \t\r\n]+")
_CODE = re.compile(r"<code>.*?</code>|(`+).+?\1")
_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "|": "&#124;",
        "[": "&#91;",
        "]": "&#93;",
        "*": "&#42;",
        "_": "&#95;",
        "`": "&#96;",
        "\\": "&#92;",
    }
)


def english(msg: Msg) -> tuple[str, bool]:
    """The translator of the English pages."""
    return msg.text, False


@dataclass(frozen=True)
class Renderer:
    """Renders the pages of one language; ``errors`` translates the error-code messages.

    ``translate`` reads the project's catalog (its docstrings, and the labels it gives a text of
    its own in ``own``), ``label_translate`` the generator's catalog of the other page labels.

    ``slug`` is the page being written (links to its own anchors stay on the page); the page
    methods render from a copy that carries it, never by changing this renderer.
    """

    reference: Reference
    language: str
    translate: Translate = english
    errors: Translate = english
    slug: str = ""
    namespace: str = ""
    """The module the page's names are imported from (the package root when empty)."""
    label_translate: Translate = english
    own: Mapping[str, str] = field(default_factory=dict)
    """The project's own English text of some labels (translated by ``translate``)."""
    languages: tuple[str, ...] = ("en", "fr", "zh")
    """The project's languages, the source language first."""
    catalog: str = "locales/reference.pot"
    """The project's template, as the translation-status page names it."""
    source_link: str | None = None
    """A URL with ``{path}``: the source line of each page links the file there."""

    # -- text ----------------------------------------------------------------------------------

    def text(self, msg: Msg) -> str:
        value, fallback = self.translate(msg)
        value = self.markdown(_collapse(value))
        return f"{MARKER} {value}" if fallback else value

    def _label(self, key: str) -> tuple[str, str, bool]:
        """A label's English text, its text in the page's language, and whether it fell back."""
        if key in self.own:
            english_text = self.own[key]
            value, fallback = self.translate(Msg(f"label:{key}", english_text))
        else:
            english_text = labels.english(key)
            value, fallback = self.label_translate(Msg(f"label:{key}", english_text))
            if fallback and key.startswith("lang:"):  # a language the labels do not name: CLDR
                value, fallback = self._language_name(key.removeprefix("lang:")), False
        return english_text, value, fallback

    def _language_name(self, code: str) -> str:
        """A language's name in the page's language, from CLDR, capitalized as a table cell."""
        parsed = Locale.parse(languages.babel_locale(code))
        name = str(
            Locale(parsed.language, script=parsed.script).get_display_name(
                languages.babel_locale(self.language)
            )
        )
        return name[:1].upper() + name[1:]

    def label(self, key: str, **params: str) -> str:
        """A page label; a translation that breaks its placeholders falls back to English."""
        english_text, value, fallback = self._label(key)
        try:
            text = value.format(**params)
        except (KeyError, IndexError, ValueError):
            text, fallback = english_text.format(**params), True
        return f"{MARKER} {text}" if fallback else text

    def bold(self, key: str) -> str:
        english_text, value, fallback = self._label(key)
        return f"{MARKER} **{english_text}**" if fallback else f"**{value}**"

    def link(self, target: Target) -> str:
        page = "" if target.slug == self.slug else f"{target.slug}.md"
        return f"{page}#{target.anchor}"

    def markdown(self, text: str) -> str:
        """Turn the reStructuredText habits of docstrings into Markdown, linking known names."""
        text = _LITERAL.sub(r"`\1`", text)

        def role(match: re.Match[str]) -> str:
            short, name = match.group(1), match.group(2)
            shown = name.rsplit(".", 1)[-1] if short else name
            target = self._resolve(name)
            return f"[`{shown}`]({self.link(target)})" if target else f"`{shown}`"

        return _ROLE.sub(role, text)

    def _resolve(self, name: str) -> Target | None:
        targets = self.reference.targets
        for candidate in (name, name.removeprefix(f"{self.reference.package}.")):
            if candidate in targets:
                return targets[candidate]
        return None

    def type(self, expr: TypeExpr | None) -> str:
        """A type as ``<code>`` with its documented names linked, safe in a table cell."""
        if expr is None:
            return ""
        out: list[str] = []
        for part in expr.parts:
            if isinstance(part, str):
                out.append(part.translate(_ESCAPES))
                continue
            name, path = part
            target = self.reference.targets.get(path)
            shown = name.translate(_ESCAPES)
            out.append(f"[{shown}]({self.link(target)})" if target else shown)
        return f"<code>{''.join(out)}</code>"

    def exception(self, expr: TypeExpr | None) -> str:
        if expr is None:
            return ""
        target = next(
            (
                self.reference.targets[p[1]]
                for p in expr.parts
                if not isinstance(p, str) and p[1] in self.reference.targets
            ),
            None,
        )
        return f"[`{expr.text}`]({self.link(target)})" if target else f"`{expr.text}`"

    # -- blocks --------------------------------------------------------------------------------

    def blocks(self, blocks: Iterable[Block]) -> list[str]:
        out: list[str] = []
        for block in blocks:
            if block.kind == "paragraph":
                out += [self.text(block.msgs[0]), ""]
            elif block.kind == "list":
                out += [f"- {self.text(msg)}" for msg in block.msgs] + [""]
            else:
                out += [f"```{block.language}", block.code, "```", ""]
        return out

    def table(self, header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
        head = [self.label(f"col:{key}") for key in header]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
        return [*lines, ""]

    def yes_no(self, value: bool) -> str:
        return self.label("yes" if value else "no")

    def heading(self, level: int, text: str, anchor: str) -> list[str]:
        return [f"{'#' * level} {text} {{#{anchor}}}", ""]

    def identifier(self, name: str) -> list[str]:
        """An explicit anchor that registers ``package.name`` for the heading that follows.

        mkdocs-autorefs reads it (``[](){#contextwise.ContextBudget}``), so that guides link to the
        API by identifier, and the site's ``objects.inv`` lists it with this page's URL.
        """
        return [f"[](){{#{self.namespace or self.reference.package}.{name}}}", ""]

    # -- pages ---------------------------------------------------------------------------------

    def page(self, page: Page) -> str:
        return replace(self, slug=page.slug, namespace=page.namespace)._page(page)

    def _page(self, page: Page) -> str:
        out = [f"# {page.title}", ""]
        path = f"`{page.source}`"
        if self.source_link is not None:
            path = f"[{path}]({self.source_link.format(path=page.source)})"
        out += [self.label("source", path=path), ""]
        out += [f"> {self.label('notice')}", ""]
        out += self.blocks(page.description)
        out += self.heading(2, self.label("import"), "section-import")
        out += ["```python", *_import_lines(page.namespace or page.package, page.names), "```", ""]
        for cls in page.classes:
            out += self.cls(cls)
        if page.functions:
            out += self.heading(2, self.label("functions"), "section-functions")
            for function in page.functions:
                out += self.function(function, level=3)
        if page.attributes:
            out += self.heading(2, self.label("constants"), "section-constants")
            for attribute in page.attributes:
                out += self.attribute(attribute)
        out += self.examples(page)
        return _finish(out)

    def cls(self, cls: ClassDoc) -> list[str]:
        out = self.identifier(cls.name)
        out += self.heading(2, self.label(f"kind:{cls.kind}", name=f"`{cls.name}`"), cls.anchor)
        out += self.blocks(cls.description)
        if cls.bases:
            bases = self.separator.join(self.exception(b) for b in cls.bases)
            out += [f"{self.bold('bases')} {bases}", ""]
        if cls.members:
            out += [self.bold("members"), ""]
            out += self.table(
                ("name", "value", "description"),
                ((f"`{m.name}`", f"`{m.value}`", self._desc(m.description)) for m in cls.members),
            )
        if cls.fields:
            out += [self.bold("attributes" if cls.fields_are_attributes else "fields"), ""]
            out += self.table(
                ("name", "type", "required", "description"),
                (
                    (
                        f"`{f.name}`",
                        self.type(f.annotation),
                        self.yes_no(f.required),
                        self._desc(f.description),
                    )
                    for f in cls.fields
                ),
            )
        if cls.properties:
            out += [self.bold("properties"), ""]
            out += self.table(
                ("name", "type", "description"),
                (
                    (f"`{p.name}`", self.type(p.annotation), self._desc(p.description))
                    for p in cls.properties
                ),
            )
        if cls.error_codes:
            out += [self.bold("error-codes"), ""]
            rows = []
            for code in cls.error_codes:
                value, fallback = self.errors(Msg("", code.message))
                rows.append((f"`{code.code}`", (f"{MARKER} " if fallback else "") + value))
            out += self.table(("code", "message"), rows)
        if cls.constructor is not None:
            out += self.function(cls.constructor, level=3, title=self.label("constructor"))
        for method in cls.methods:
            out += self.function(method, level=3)
        return out

    def function(self, fn: Function, *, level: int, title: str | None = None) -> list[str]:
        out = self.identifier(fn.heading or fn.name) if title is None else []
        out += self.heading(level, title or f"`{fn.heading or fn.name}`", fn.anchor)
        out += ["```python", fn.signature, "```", ""]
        out += self.blocks(fn.description)
        if fn.params:
            out += [self.bold("parameters"), ""]
            out += self.table(
                ("name", "type", "default", "required", "description"),
                (
                    (
                        f"`{p.name}`",
                        self.type(p.annotation),
                        f"`{p.default}`" if p.default is not None else "",
                        self.yes_no(p.required),
                        self._desc(p.description),
                    )
                    for p in fn.params
                ),
            )
        else:
            out += [self.label("no-parameters"), ""]
        for key, item in (("returns", fn.returns), ("yields", fn.yields)):
            if item is not None:
                out += [self._item(self.bold(key), item, self.type(item.annotation)), ""]
        if fn.raises:
            out += [self.bold("raises"), ""]
            out += [self._item("-", item, self.exception(item.annotation)) for item in fn.raises]
            out += [""]
        return out

    def _item(self, lead: str, item: Item, shown: str) -> str:
        parts = [lead, shown] if shown else [lead]
        line = " ".join(parts)
        if item.description is not None:
            line = self.label("described", item=line, description=self.text(item.description))
        return line

    def _desc(self, msg: Msg | None) -> str:
        return self.text(msg) if msg is not None else ""

    def attribute(self, attribute: AttributeDoc) -> list[str]:
        out = self.identifier(attribute.name)
        out += self.heading(3, f"`{attribute.name}`", attribute.anchor)
        out += ["```python", attribute.signature, "```", ""]
        out += self.blocks(attribute.description)
        return out

    def examples(self, page: Page) -> list[str]:
        found: list[tuple[str, str, list[Example]]] = []
        for cls in page.classes:
            found.append((cls.name, cls.anchor, cls.examples))
            found += [(m.heading, m.anchor, m.examples) for m in cls.methods]
        found += [(f.name, f.anchor, f.examples) for f in page.functions]
        found += [(a.name, a.anchor, a.examples) for a in page.attributes]
        found = [entry for entry in found if entry[2]]
        if not found:
            return []
        out = self.heading(2, self.label("examples"), "section-examples")
        for name, anchor, examples in found:
            out += self.heading(3, f"[`{name}`](#{anchor})", f"examples-{anchor}")
            for example in examples:
                if example.text is not None:
                    out += [self.text(example.text), ""]
                else:
                    out += ["```pycon", example.code, "```", ""]
        return out

    def index(self) -> str:
        return replace(self, slug="index")._index()

    def _index(self) -> str:
        out = [f"# {self.label('index:title')}", ""]
        out += [f"> {self.label('notice')}", ""]
        out += [self.label("index:intro"), ""]
        rows = []
        for page in self.reference.pages:
            names = self.separator.join(f"[`{name}`]({page.slug}.md#{name})" for name in page.names)
            summary = self.text(page.summary) if page.summary else ""
            rows.append((f"[{page.title}]({page.slug}.md)", summary, names))
        out += self.table(("module", "summary", "names"), rows)
        out += [self.label("index:status"), ""]
        return _finish(out)

    def status(self, coverage: Sequence[Coverage], freshness: Freshness = ()) -> str:
        """The translation-status page: catalog coverage, then the freshness of hand-made pages.

        ``freshness`` lists each translated page written by hand (its path under the language's
        folder) with, per language, whether it translates the current English page.
        """
        text = replace(self, slug="translation-status")._status(coverage)
        return _finish([text, *self._freshness(freshness)])

    def _freshness(self, freshness: Freshness) -> list[str]:
        if not freshness:
            return []
        codes = [code for code in self.languages[1:] if any(code in f for _, f in freshness)]
        out = self.heading(2, self.label("status:pages"), "section-pages")
        out += [self.label("status:pages-intro"), ""]
        header = [self.label("col:page")] + [self.label(f"lang:{code}") for code in codes]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for page, fresh in freshness:
            cells = [
                self.label("status:fresh" if fresh[code] else "status:stale")
                if code in fresh
                else ""
                for code in codes
            ]
            out.append("| " + " | ".join([f"`{page}`", *cells]) + " |")
        out.append("")
        return out

    def _status(self, coverage: Sequence[Coverage]) -> str:
        out = [f"# {self.label('status:title')}", ""]
        out += [f"> {self.label('notice')}", ""]
        out += [self.label("status:intro", catalog=self.catalog), ""]
        out += [self.label("status:marker", marker=MARKER), ""]
        out += [self.label("status:release"), ""]
        out += self.heading(2, self.label("status:by-locale"), "section-by-locale")
        out += self.table(
            ("language", "messages", "translated", "fuzzy", "untranslated", "coverage"),
            (
                (
                    self.label(f"lang:{c.locale}"),
                    self.number(c.total.total),
                    self.number(c.total.translated),
                    self.number(c.total.fuzzy),
                    self.number(c.total.untranslated),
                    self.percent(c.total.ratio),
                )
                for c in coverage
            ),
        )
        out += self.heading(2, self.label("status:by-page"), "section-by-page")
        titles = {page.slug: f"[{page.title}]({page.slug}.md)" for page in self.reference.pages}
        titles["label"] = self.label("status:labels")
        header = [self.label("col:page")] + [self.label(f"lang:{c.locale}") for c in coverage]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for key, title in titles.items():
            cells = [self.percent(c.pages[key].ratio) if key in c.pages else "" for c in coverage]
            out.append("| " + " | ".join([title, *cells]) + " |")
        out.append("")
        return _finish(out)

    @property
    def separator(self) -> str:
        """What joins the items of a list in the language: ``", "``, or ``"、"`` in Chinese."""
        locale = Locale.parse(languages.babel_locale(self.language))
        return str(locale.list_patterns["standard"]["middle"]).replace("{0}", "").replace("{1}", "")

    def number(self, value: int) -> str:
        return format_decimal(value, locale=languages.babel_locale(self.language))

    def percent(self, ratio: float) -> str:
        """A percentage with one decimal, spaced and signed as the language writes it."""
        locale = Locale.parse(languages.babel_locale(self.language))
        pattern = locale.percent_formats[None].pattern.replace("#,##0", "#,##0.0")
        # a narrow no-break space before the sign, as French typography sets it (CLDR has both)
        return format_percent(ratio, pattern, locale=locale).replace("\u00a0%", "\u202f%")


def _cell(text: str) -> str:
    """One line, with the pipes escaped outside code spans and ``<code>`` elements."""
    text = _collapse(text)
    out: list[str] = []
    last = 0
    for code in _CODE.finditer(text):
        out += [text[last : code.start()].replace("|", "\\|"), code.group(0)]
        last = code.end()
    out.append(text[last:].replace("|", "\\|"))
    return "".join(out)


def _collapse(text: str) -> str:
    """One line with single spaces, keeping the no-break spaces French puts before ``: ; ? !``.

    ``str.split()`` would split on U+00A0 and U+202F too, and lose them.
    """
    if text.startswith("|"):  # a Markdown table keeps its rows
        return "\n".join(_BLANKS.sub(" ", row).strip(" ") for row in text.split("\n"))
    return _BLANKS.sub(" ", text).strip(" ")


def _import_lines(package: str, names: Sequence[str]) -> list[str]:
    line = f"from {package} import {', '.join(names)}"
    if len(line) <= 88:
        return [line]
    return [f"from {package} import (", *(f"    {name}," for name in names), ")"]


def _finish(lines: list[str]) -> str:
    text = "\n".join(lines).rstrip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)
