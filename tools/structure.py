"""The structure of a package, from its own imports and definitions: what the next engineer meets.

    python -m tools.structure                      # src/contextwise
    python -m tools.structure --root src --package contextwise

It prints every finding, then a one-line verdict, and exits 1 when anything is found:

- an import cycle between modules (imports inside functions count: they still tie the modules);
- an import between sibling packages that must stay apart (``policy`` and ``routing``);
- a module that imports an underscore name from another module (private stays private);
- a function with more than 60 lines of logic (docstrings, comments and blank lines not counted).

An import of a package's ``__init__`` from inside that package is not an edge: it is the package's
face, not a dependency.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60
"""The most lines of logic a function may have."""

SIBLINGS = (("policy", "routing"),)
"""Subpackages that must not import each other (both build on the layers below them)."""


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


@dataclass
class Structure:
    """A package's modules, the imports between them and what is wrong with them."""

    modules: dict[str, Module]
    imports: dict[str, set[str]] = field(default_factory=dict)
    private_imports: list[str] = field(default_factory=list)
    long_functions: list[str] = field(default_factory=list)

    def cycles(self) -> list[list[str]]:
        return import_cycles(self.imports, self.modules)

    def sibling_imports(self, package: str) -> list[str]:
        found: list[str] = []
        for first, second in SIBLINGS:
            for source, other in ((first, second), (second, first)):
                for module in sorted(self.imports):
                    if not _inside(module, f"{package}.{source}"):
                        continue
                    target = f"{package}.{other}"
                    bad = sorted(t for t in self.imports[module] if _inside(t, target))
                    if bad:
                        found.append(f"sibling import: {module} imports {', '.join(bad)}")
        return found


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def modules_of(root: Path, package: str) -> dict[str, Module]:
    """Every module of ``package`` under ``root``, by dotted name."""
    found: dict[str, Module] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path)
    return found


def resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def logic_lines(function: ast.FunctionDef | ast.AsyncFunctionDef, source: list[str]) -> int:
    """The lines of a function that are code: not blank, not a comment, not its docstring."""
    skipped: set[int] = set()
    first = function.body[0] if function.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        skipped = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    end = function.end_lineno or function.lineno
    return sum(
        1
        for number in range(function.lineno, end + 1)
        if number not in skipped
        and (text := source[number - 1].strip())
        and not text.startswith("#")
    )


def _imported(module: Module, node: ast.AST, modules: dict[str, Module]) -> Iterator[str]:
    """The package's modules an import statement reads, and ``!name`` for each private name."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in modules)
    elif isinstance(node, ast.ImportFrom):
        base = resolve(module, node)
        for alias in node.names:
            if f"{base}.{alias.name}" in modules:
                yield f"{base}.{alias.name}"
            elif base in modules:
                yield base
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and base != module.name:
                    yield f"!{alias.name}"


def analyse(root: Path, package: str) -> Structure:
    """Read every module of the package: its imports, private names taken, long functions."""
    structure = Structure(modules_of(root, package))
    for name, module in structure.modules.items():
        source = module.path.read_text(encoding="utf-8")
        lines = source.splitlines()
        targets: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            for target in _imported(module, node, structure.modules):
                if target.startswith("!"):
                    base = resolve(module, node) if isinstance(node, ast.ImportFrom) else ""
                    structure.private_imports.append(
                        f"private import: {name} takes {target[1:]} from {base}"
                    )
                elif target != name:
                    targets.add(target)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count = logic_lines(node, lines)
                if count > LIMIT:
                    structure.long_functions.append(
                        f"long function: {name}.{node.name} has {count} lines of logic (> {LIMIT})"
                    )
        structure.imports[name] = targets
    return structure


def import_cycles(imports: dict[str, set[str]], modules: dict[str, Module]) -> list[list[str]]:
    """One cycle per group of modules that import each other (Tarjan's strongly connected
    components), each written as a path that comes back to its start."""

    def edges(module: str) -> list[str]:
        return sorted(
            target
            for target in imports.get(module, ())
            if not (modules[target].is_package and module.startswith(target + "."))
        )

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in edges(module):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return [_cycle_path(group, edges) for group in sorted(groups)]


def _cycle_path(group: list[str], edges: Callable[[str], list[str]]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    members = set(group)
    start = group[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        current = queue.pop(0)
        for target in edges(current):
            if target == start:
                return [*paths[current], start]
            if target in members and target not in paths:
                paths[target] = [*paths[current], target]
                queue.append(target)
    return [*group, start]


def findings(root: Path, package: str) -> list[str]:
    """Every finding, cycles first."""
    structure = analyse(root, package)
    found = ["import cycle: " + " -> ".join(cycle) for cycle in structure.cycles()]
    found += structure.sibling_imports(package)
    found += structure.private_imports
    found += structure.long_functions
    return found


def verdict(found: list[str]) -> str:
    """The last line: how many findings of each kind."""

    def count(kind: str) -> int:
        return sum(line.startswith(kind) for line in found)

    return (
        f"structure: {len(found)} findings ({count('import cycle')} cycles, "
        f"{count('sibling import')} sibling imports, {count('private import')} private imports, "
        f"{count('long function')} long functions)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT / "src", help="the folder of the package")
    parser.add_argument("--package", default="contextwise", help="the package to read")
    args = parser.parse_args(argv)
    found = findings(args.root, args.package)
    print("\n".join([*found, verdict(found)]))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
