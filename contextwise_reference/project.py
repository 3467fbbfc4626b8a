"""A project's generated files, computed in memory: ``render`` writes them, ``--check`` compares.

Generate and verify are one function (:func:`generate`) called two ways, so the check can never
disagree with what ``render`` would write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog

from contextwise_reference import catalog, config, files, freshness, labels
from contextwise_reference.collect import collect
from contextwise_reference.model import Msg, Reference
from contextwise_reference.render import Renderer, Translate, english
from contextwise_reference.stats import Count, Coverage, coverage, status


@dataclass(frozen=True)
class Project:
    """Where a package's sources, catalogs and pages live, and what its pages say of their own.

    The defaults are the layout of a ``src`` project: ``src/<package>``, ``locales/`` and
    ``docs/<language>/reference/``, in English, French and Chinese.
    """

    root: Path
    package: str
    languages: tuple[str, ...] = ("en", "fr", "zh")
    source_root: str = "src"
    catalogs: str = "locales"
    output: str = "docs/{language}/reference"
    source_link: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """The project's own English text of some page labels, translated in its catalog."""
    version: str = "0.1"
    bugs_address: str = "EMAIL@ADDRESS"
    generated: tuple[str, ...] = ()
    """Other generated pages under each language's folder, never listed as translated by hand."""

    @classmethod
    def configured(cls, root: Path, **overrides: Any) -> Project:
        """The project of ``root/pyproject.toml``'s ``[tool.contextwise-reference]``, with the
        flags that are not None over its keys (raises :class:`config.ConfigError`)."""
        found = config.settings(root, overrides)
        names = {
            "package": "package",
            "languages": "languages",
            "source": "source_root",
            "catalogs": "catalogs",
            "output": "output",
            "source-link": "source_link",
            "labels": "labels",
            "version": "version",
            "bugs-address": "bugs_address",
            "generated": "generated",
        }
        return cls(root=root, **{names[key]: value for key, value in found.items() if key in names})

    @property
    def source(self) -> str:
        """The source language: the first of :attr:`languages`."""
        return self.languages[0]

    @property
    def translated(self) -> tuple[str, ...]:
        return self.languages[1:]

    @property
    def src(self) -> Path:
        return self.root / self.source_root

    @property
    def pot(self) -> Path:
        return self.root / self.catalogs / f"{catalog.DOMAIN}.pot"

    def po(self, locale: str, domain: str = catalog.DOMAIN) -> Path:
        return self.root / self.catalogs / locale / "LC_MESSAGES" / f"{domain}.po"

    def reference_dir(self, language: str) -> Path:
        return self.root / self.output.format(language=language)

    @property
    def docs(self) -> Path | None:
        """The folder that holds one folder per language (``docs``), when the output is in it."""
        head, _, _ = self.output.partition("{language}")
        return self.root / head if head.endswith("/") else None

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    @property
    def header(self) -> dict[str, str]:
        """The header fields of the project's catalogs."""
        return {"project": self.package, "version": self.version, "bugs_address": self.bugs_address}


@dataclass
class State:
    """One run's reference, its messages and the coverage of each locale."""

    reference: Reference
    messages: list[tuple[str, Msg]]
    catalogs: dict[str, Catalog | None]
    coverage: list[Coverage]


def label_messages(project: Project) -> list[tuple[str, Msg]]:
    """The page labels the generator's catalog translates (those the project does not own)."""
    return [
        ("label", Msg(f"label:{key}", text))
        for key, text in labels.labels().items()
        if key not in project.labels
        and not (key.startswith("lang:") and key.removeprefix("lang:") not in project.translated)
    ]


def load(project: Project) -> State:
    """Collect the package and read the translated catalogs."""
    reference = collect(project.package, project.src, project.root)
    found = catalog.messages(reference, project.labels)
    read = {locale: catalog.read(project.po(locale), locale) for locale in project.translated}
    counted = [_with_labels(project, coverage(found, read[loc], loc)) for loc in read]
    return State(reference, found, read, counted)


def _with_labels(project: Project, counted: Coverage) -> Coverage:
    """Add to a locale's coverage the page labels that the generator's catalog translates."""
    for page, msg in label_messages(project):
        state = status(labels.catalog(counted.locale), msg)
        counted.total.add(state)
        counted.pages.setdefault(page, Count()).add(state)
    return counted


def renderer(project: Project, state: State, language: str) -> Renderer:
    """The renderer of one language's pages."""
    translate: Translate = english
    errors: Translate = english
    label_translate: Translate = english
    if language != project.source:
        translate = catalog.translator(state.catalogs[language])
        errors = catalog.translator(catalog.read(project.po(language, project.package), language))
        label_translate = catalog.translator(labels.catalog(language))
    return Renderer(
        state.reference,
        language,
        translate,
        errors,
        label_translate=label_translate,
        own=project.labels,
        languages=project.languages,
        catalog=project.relative(project.pot),
        source_link=project.source_link,
    )


def generate(project: Project) -> tuple[State, dict[Path, str]]:
    """Every file the generator owns, with its expected content."""
    state = load(project)
    text = catalog.render_template(state.reference, state.messages, project.header)
    found: dict[Path, str] = {project.pot: text}
    docs = project.docs
    skip = (project.output.partition("{language}")[2].strip("/").split("/")[0], *project.generated)
    pages = freshness.table(docs, project.source, skip) if docs is not None else []
    for language in project.languages:
        render = renderer(project, state, language)
        folder = project.reference_dir(language)
        for page in state.reference.pages:
            found[folder / f"{page.slug}.md"] = render.page(page)
        found[folder / "index.md"] = render.index()
        found[folder / "translation-status.md"] = render.status(state.coverage, pages)
    return state, found


def orphans(project: Project, found: dict[Path, str]) -> list[Path]:
    """Pages in the generated folders that the current sources no longer produce."""
    result: list[Path] = []
    for language in project.languages:
        folder = project.reference_dir(language)
        if folder.is_dir():
            result += sorted(path for path in folder.rglob("*.md") if path not in found)
    return result


def fuzzy(project: Project, state: State) -> list[str]:
    """The fuzzy entries of the project's catalogs: never published, so ``--check`` names them."""
    result: list[str] = []
    for locale, messages in state.catalogs.items():
        if messages is None:
            continue
        for message in messages:
            if message.id and message.fuzzy:
                where = project.relative(project.po(locale))
                result.append(f"fuzzy: {where}: {message.context or ''} {message.id!r}".strip())
    return result


def check(project: Project, found: dict[Path, str], state: State | None = None) -> list[str]:
    """What ``render`` would change (stale or missing files, orphan pages), and fuzzy entries."""
    problems = [
        f"{'stale' if path.is_file() else 'missing'}: {project.relative(path)}"
        for path in files.stale(found)
    ]
    problems += [f"orphan: {project.relative(path)}" for path in orphans(project, found)]
    return problems + (fuzzy(project, state) if state is not None else [])


def write(project: Project, found: dict[Path, str]) -> list[str]:
    """Write the files whose content changed and remove the orphan pages; report what changed."""
    changed = [f"written: {project.relative(path)}" for path in files.sync(found)]
    for path in orphans(project, found):
        path.unlink()
        changed.append(f"removed: {project.relative(path)}")
    return changed
