"""Collect the reference model of a package: griffe reads the source, pydantic answers at run time.

The work is split by what is read: :mod:`annotations` (types and signatures),
:mod:`docstrings`, :mod:`functions` and :mod:`classes`, sharing one
:class:`~contextwise_reference.loaded.Loaded`; this module loads the package and builds its pages.

griffe loads the package statically (Google docstrings), so signatures, annotations and
docstrings are read exactly as written. The package is also imported, but only to ask what static
analysis cannot know for sure: the kind of a class (pydantic model, dataclass, enum...), which
fields are required and their defaults (``model_fields``, ``dataclasses.fields``), and the error
codes of an exception class. Any griffe warning, such as a documented parameter that is missing
from the signature, fails the run.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import griffe

from contextwise_reference.annotations import Types
from contextwise_reference.classes import Classes
from contextwise_reference.docstrings import DOCSTRING_OPTIONS, Docstrings
from contextwise_reference.functions import Functions
from contextwise_reference.loaded import Loaded, final_object
from contextwise_reference.model import AttributeDoc, Page, Reference, Target


class GriffeWarningsError(RuntimeError):
    """griffe warned, or a docstring has a section the generator cannot show: the reference would
    be wrong or incomplete."""

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings
        super().__init__("problems in the docstrings:\n" + "\n".join(warnings))


@contextmanager
def griffe_warnings() -> Iterator[list[str]]:
    """Collect the warnings that griffe logs inside the block instead of printing them."""
    found: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    logger = logging.getLogger("griffe")
    handler = Collect(level=logging.WARNING)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield found
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class Collector:
    """Builds the :class:`Reference` of one package."""

    def __init__(self, package: str, src: Path, root: Path) -> None:
        self.package = package
        self.src = src
        self.root = root
        self._modules: dict[str, Any] = {}
        """The module of each page, by slug."""

    def collect(self) -> Reference:
        with griffe_warnings() as warnings:
            module = griffe.load(
                self.package,
                search_paths=[str(self.src)],
                docstring_parser="google",
                docstring_options=DOCSTRING_OPTIONS,
            )
            self.loaded = Loaded(self.package, module)
            self.types = Types(self.loaded)
            self.docs = Docstrings(self.loaded, self.types)
            self.functions = Functions(self.loaded, self.types, self.docs)
            self.classes = Classes(self.loaded, self.types, self.docs, self.functions)
            self._import()
            pages = self._pages()
        if warnings or self.loaded.problems:
            raise GriffeWarningsError(sorted(set(warnings)) + self.loaded.problems)
        return Reference(self.package, pages, self.loaded.targets)

    def _import(self) -> Any:
        """Import the package from ``src``, even if a same-named one was imported from elsewhere.

        The package is loaded from its own folder by file location, so ``sys.path`` is left as
        it is: the fixture package of the tests is imported without being installed.
        """
        loaded = sys.modules.get(self.package)
        if loaded is not None and Path(loaded.__file__ or "").is_relative_to(self.src):
            return loaded
        for name in [n for n in sys.modules if n.split(".")[0] == self.package]:
            del sys.modules[name]
        init = self.src / self.package / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            self.package, init, submodule_search_locations=[str(init.parent)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {self.package} from {init}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.package] = module
        spec.loader.exec_module(module)
        return module

    # -- pages ---------------------------------------------------------------------------------

    def _pages(self) -> list[Page]:
        grouped: dict[str, list[tuple[str, Any]]] = {}
        roots: dict[str, str] = {}
        for export in self.loaded.module.exports or ():
            name = str(export)
            if name.startswith("_"):
                continue
            exported = self.loaded.module[name]
            target = exported.final_target if exported.is_alias else exported
            parts = target.path.split(".")
            if len(parts) < 3 or parts[0] != self.package:
                continue
            module = self._module_of(exported, parts[1])
            slug = page_slug(module)
            grouped.setdefault(slug, []).append((name, target))
            self._modules[slug] = self.loaded.module.members[module]
            roots[slug] = self.package
        exported_paths = {target.path for members in grouped.values() for _, target in members}
        for module in self._standalone(self.loaded.module, exported_paths):
            slug = "-".join(module.path.split(".")[1:]).replace("_", "-")
            names = [str(name) for name in module.exports]
            grouped[slug] = [(name, final_object(module[name])) for name in names]
            self._modules[slug] = module
            self.loaded.static.add(slug)
            roots[slug] = module.path
        # Every documented name is known before any page is built, so that links and inherited
        # descriptions can point to a page built later.
        for slug, members in grouped.items():
            for name, target in members:
                aliases = (target.path, f"{self.package}.{slug}.{name}", f"{roots[slug]}.{name}")
                for alias in aliases:
                    self.loaded.targets[alias] = Target(slug, name)
                self.loaded.targets[name] = Target(slug, name)
                self.loaded.public[target.path] = f"{roots[slug]}.{name}"
        return [self._page(slug, members, roots[slug]) for slug, members in sorted(grouped.items())]

    def _standalone(self, package: Any, exported: set[str]) -> Iterator[Any]:
        """The public modules under ``package`` that declare ``__all__`` and whose names the
        package root does not export: each is documented on a page of its own."""
        for name, module in sorted(package.modules.items()):
            if name.startswith("_") or module.is_alias:
                continue
            names = [str(n) for n in module.exports or () if not str(n).startswith("_")]
            if names and not any(final_object(module[n]).path in exported for n in names):
                yield module
            yield from self._standalone(module, exported)

    def _module_of(self, exported: Any, module: str) -> str:
        """The module whose page documents an exported name: the top module that defines it.

        A name defined in a private module (``_translation``) is documented on the page of the
        public module that the package root imports it from (``i18n``), where readers look.
        """
        if not module.startswith("_") or not exported.is_alias:
            return module
        parts = str(exported.target_path).split(".")
        return parts[1] if len(parts) > 2 and not parts[1].startswith("_") else module

    def _page(self, slug: str, members: list[tuple[str, Any]], namespace: str) -> Page:
        module = self._modules[slug]
        filepath = module.filepath
        if not isinstance(filepath, Path):
            raise GriffeWarningsError([f"{module.path}: a namespace package has no page"])
        is_package = filepath.name == "__init__.py"
        folder = filepath.parent if is_package else filepath
        source = folder.relative_to(self.root).as_posix() + ("/" if is_package else "")
        title = "/".join(module.path.split(".")[1:])
        page = Page(
            slug=slug,
            title=f"{title}/" if is_package else f"{title}.py",
            source=source,
            module_path=self._public_module(slug, namespace),
            package=self.package,
            namespace=namespace,
            names=sorted((name for name, _ in members), key=_import_order),
        )
        page.description = self.docs.doc(module, page.module_path).description
        members.sort(key=lambda item: (str(item[1].filepath), item[1].lineno or 0))
        for name, target in members:
            path = f"{namespace}.{name}"  # the public path: the page's texts are keyed by it
            if target.kind is griffe.Kind.CLASS:
                page.classes.append(self.classes.document(target, path, name, slug))
            elif target.kind is griffe.Kind.FUNCTION:
                page.functions.append(self.functions.function(target, path, name, name))
            elif target.kind is griffe.Kind.ATTRIBUTE:
                page.attributes.append(self._attribute(target, path, name))
        return page

    def _public_module(self, slug: str, namespace: str) -> str:
        """The public path a page's texts are keyed by: ``package.slug`` for a page of the
        package root's names (whatever the module that defines them is called), or the module of
        a page that stands alone (an integration)."""
        return f"{self.package}.{slug}" if namespace == self.package else namespace

    # -- module attributes ---------------------------------------------------------------------

    def _attribute(self, attribute: Any, path: str, name: str) -> AttributeDoc:
        doc = self.docs.doc(attribute, path)
        text = name
        if attribute.annotation is not None:
            text += f": {attribute.annotation}"
        if attribute.value is not None:
            text += f" = {attribute.value}"
        return AttributeDoc(
            path=path,
            name=name,
            anchor=name,
            signature=text,
            description=doc.description,
            examples=doc.examples,
        )


def page_slug(module: str) -> str:
    """The page of a top module of the package: its name without a leading underscore, so that
    making a module private (``budget`` -> ``_budget``) moves no page."""
    return module.lstrip("_")


def _import_order(name: str) -> tuple[int, str]:
    """The order of ruff's isort: constants, then classes, then functions and variables."""
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name



def collect(package: str, src: Path, root: Path) -> Reference:
    """Load ``package`` from ``src`` and return its reference model."""
    return Collector(package, src, root).collect()
