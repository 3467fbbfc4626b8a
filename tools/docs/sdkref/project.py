"""A project's generated files, computed in memory: ``render`` writes them, ``--check`` compares.

Generate and verify are one function (:func:`generate`) called two ways, so the check can never
disagree with what ``render`` would write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from babel.messages.catalog import Catalog

from tools import generated
from tools.docs import freshness
from tools.docs.sdkref import catalog
from tools.docs.sdkref.collect import collect
from tools.docs.sdkref.model import Msg, Reference
from tools.docs.sdkref.render import Renderer, Translate, english
from tools.docs.sdkref.stats import Coverage, coverage
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Project:
    """Where a package's sources, catalogs and docs live (the repository layout).

    ``languages`` defaults to the codes of :data:`contextwise.i18n.LANGUAGES` when the project is
    created, the source language first.
    """

    root: Path = ROOT
    package: str = "contextwise"
    languages: tuple[str, ...] = field(default_factory=languages.codes)

    @property
    def source(self) -> str:
        return self.languages[0]

    @property
    def translated(self) -> tuple[str, ...]:
        return self.languages[1:]

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def pot(self) -> Path:
        return self.root / "locales" / f"{catalog.DOMAIN}.pot"

    def po(self, locale: str, domain: str = catalog.DOMAIN) -> Path:
        return self.root / "locales" / locale / "LC_MESSAGES" / f"{domain}.po"

    def reference_dir(self, language: str) -> Path:
        return self.root / "docs" / language / "reference"

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


@dataclass
class State:
    """One run's reference, its messages and the coverage of each locale."""

    reference: Reference
    messages: list[tuple[str, Msg]]
    catalogs: dict[str, Catalog | None]
    coverage: list[Coverage]


def load(project: Project) -> State:
    """Collect the package and read the translated catalogs."""
    reference = collect(project.package, project.src, project.root)
    found = catalog.messages(reference)
    read = {locale: catalog.read(project.po(locale), locale) for locale in project.translated}
    return State(reference, found, read, [coverage(found, read[loc], loc) for loc in read])


def generate(project: Project) -> tuple[State, dict[Path, str]]:
    """Every file the generator owns, with its expected content."""
    state = load(project)
    files: dict[Path, str] = {project.pot: catalog.render_template(state.reference, state.messages)}
    pages = freshness.table(project.root / "docs")
    for language in project.languages:
        translate: Translate = english
        errors: Translate = english
        if language != project.source:
            translate = catalog.translator(state.catalogs[language])
            errors = catalog.translator(
                catalog.read(project.po(language, project.package), language)
            )
        renderer = Renderer(state.reference, language, translate, errors)
        folder = project.reference_dir(language)
        for page in state.reference.pages:
            files[folder / f"{page.slug}.md"] = renderer.page(page)
        files[folder / "index.md"] = renderer.index()
        files[folder / "translation-status.md"] = renderer.status(state.coverage, pages)
    return state, files


def orphans(project: Project, files: dict[Path, str]) -> list[Path]:
    """Pages in the generated folders that the current sources no longer produce."""
    found: list[Path] = []
    for language in project.languages:
        folder = project.reference_dir(language)
        if folder.is_dir():
            found += sorted(path for path in folder.rglob("*.md") if path not in files)
    return found


def check(project: Project, files: dict[Path, str]) -> list[str]:
    """What ``render`` would change: stale or missing files and orphan pages."""
    problems = [
        f"{'stale' if path.is_file() else 'missing'}: {project.relative(path)}"
        for path in generated.stale(files)
    ]
    problems += [f"orphan: {project.relative(path)}" for path in orphans(project, files)]
    return problems


def write(project: Project, files: dict[Path, str]) -> list[str]:
    """Write the files whose content changed and remove the orphan pages; report what changed."""
    changed = [f"written: {project.relative(path)}" for path in generated.sync(files)]
    for path in orphans(project, files):
        path.unlink()
        changed.append(f"removed: {project.relative(path)}")
    return changed
