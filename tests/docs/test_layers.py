"""The layers of the package are import-linter contracts (pyproject.toml, run by ``make lint``):
modules import downwards only, no cycle between modules, and the tools use the public face. A
small package written here shows each contract type catching what it forbids."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def _run(
    config: Path | None, cwd: Path, extra_path: Path | None = None
) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS is not None, "import-linter is not installed"
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = f"{extra_path}{os.pathsep}{env.get('PYTHONPATH', '')}"
    command = [LINT_IMPORTS, "--no-cache"]
    if config is not None:
        command += ["--config", str(config)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_the_package_keeps_its_layers() -> None:
    result = _run(None, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout
    assert "The reference generator stands on its own" in result.stdout


def test_a_layer_that_imports_upwards_or_a_cycle_breaks_a_contract(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/top.py": "import pkg.bottom\n",
        "pkg/bottom.py": "import pkg.top\n",  # upwards, and a cycle
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    config = tmp_path / "importlinter.toml"
    config.write_text(
        textwrap.dedent(
            """
            [tool.importlinter]
            root_packages = ["pkg"]

            [[tool.importlinter.contracts]]
            name = "layers"
            type = "layers"
            layers = ["pkg.top", "pkg.bottom"]

            [[tool.importlinter.contracts]]
            name = "acyclic"
            type = "acyclic_siblings"
            ancestors = ["pkg"]
            """
        ),
        encoding="utf-8",
    )
    result = _run(config, tmp_path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 kept, 2 broken" in result.stdout


def test_ruff_refuses_long_complex_functions_and_private_names(tmp_path: Path) -> None:
    branches = "\n".join(f"    if value == {n}:\n        return {n}" for n in range(14))
    statements = "\n".join(f"    total += {n}" for n in range(52))
    source = tmp_path / "module.py"
    source.write_text(
        "from contextwise._effects import _in_thread\n\n\n"
        f"def tangled(value: int) -> int:\n{branches}\n    return -1\n\n\n"
        f"def long(total: int) -> int:\n{statements}\n    return total\n",
        encoding="utf-8",
    )
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None
    result = subprocess.run(
        [ruff, "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    for code in ("C901", "PLR0915", "PLC2701"):
        assert code in result.stdout, result.stdout


PUBLIC_MODULES = {
    # A subpackage's public face is its __init__; only the integrations are imported by path.
    "integrations": {"langchain", "pydantic_ai", "openai_agents"},
}


def test_implementation_modules_are_private_by_layout() -> None:
    """Inside a subpackage, a module a user does not import by name starts with ``_``; its public
    names are re-exported by the package (and the root), which is where the reference finds them."""
    import importlib

    source = ROOT / "src" / "contextwise"
    public = []
    for package in sorted(p for p in source.iterdir() if (p / "__init__.py").exists()):
        allowed = PUBLIC_MODULES.get(package.name, set())
        for module in sorted(package.glob("*.py")):
            name = module.stem
            if name != "__init__" and not name.startswith("_") and name not in allowed:
                public.append(f"{package.name}/{module.name}")
        exported = importlib.import_module(f"contextwise.{package.name}")
        for name in getattr(exported, "__all__", []):
            assert hasattr(exported, name), f"contextwise.{package.name} lacks {name}"
    assert public == []


def _imported_modules(tree: ast.Module) -> list[tuple[int, str]]:
    """Every module a file imports, at any depth: the top, a function, a ``TYPE_CHECKING`` block."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _crossings(source: Path) -> list[str]:
    """The imports of another subpackage's private module, other than its declared ``_api``."""
    crossings = []
    for path in sorted(source.rglob("*.py")):
        parts = path.relative_to(source.parent).with_suffix("").parts
        own = parts[1] if len(parts) > 2 else None  # the subpackage the file belongs to
        for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            names = module.split(".")
            if len(names) < 3 or names[0] != source.name or names[1] == own:
                continue
            if (source / names[1] / "__init__.py").exists() and names[2].startswith("_"):
                found = f"{path.relative_to(source.parent)}:{line} {'.'.join(names[:3])}"
                if names[2] != "_api" and found not in crossings:
                    crossings.append(found)
    return crossings


def test_no_module_imports_another_subpackages_private_module() -> None:
    """What two packages share is declared in one place, the package's ``_api`` module: outside
    ``policy/`` a module imports ``contextwise.policy`` or ``contextwise.policy._api``, never
    ``contextwise.policy._runner``. import-linter cannot say "a module whose name starts with
    ``_``", so this walks every import, function-level and ``TYPE_CHECKING`` ones included."""
    assert _crossings(ROOT / "src" / "contextwise") == []


def test_a_crossing_into_a_private_module_is_found_even_inside_a_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for folder in ("a", "b"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "b" / "_api.py").write_text("")
    (package / "b" / "_impl.py").write_text("")
    (package / "a" / "_user.py").write_text(
        "from pkg.b._api import x\n"
        "def f():\n"
        "    from pkg.b._impl import y\n"
        "    import pkg.b._impl\n"
    )
    assert _crossings(package) == ["pkg/a/_user.py:3 pkg.b._impl", "pkg/a/_user.py:4 pkg.b._impl"]


def _top_level_modules(tree: ast.Module) -> set[str]:
    """The modules a file always imports at its top level (not those of a ``try`` block: an
    optional dependency)."""
    found: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module:
            found.add(statement.module)
        elif isinstance(statement, ast.Import):
            found.update(alias.name for alias in statement.names)
    return found


def test_no_function_imports_again_a_module_its_file_imports_at_the_top() -> None:
    """A function-level import is for an optional dependency or a cycle, never a second import
    of a module the file already has."""
    again = []
    for path in sorted((ROOT / "src" / "contextwise").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = _top_level_modules(tree)
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                names = (
                    [node.module]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                again += [f"{where} {name}" for name in names if name in top]
    assert again == []


# Two internal names that still mean two things, left for the layout move (issue 29, item 5):
# a gettext message template (_translation) and a chat message (_layout); the integrations'
# conversation memory and the memory store's stored row.
NAMES_OF_TWO_MEANINGS = {"Message", "Conversation"}


def test_a_class_or_type_alias_name_means_one_thing_in_the_package() -> None:
    """Two ``Measure`` (a dataclass and a callable) and ``Plan`` beside ``_Plan`` made a reader
    ask which one is meant: a capitalized name is defined once (a leading underscore is not a
    second name; type variables are excluded)."""
    where: dict[str, list[str]] = {}
    for path in sorted((ROOT / "src" / "contextwise").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            elif isinstance(node, ast.Assign) and not (
                isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "TypeVar"
            ):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            else:
                continue
            for name in names:
                bare = name.lstrip("_")
                if bare[:1].isupper() and not bare.isupper():
                    where.setdefault(bare, []).append(f"{path.relative_to(ROOT)}:{name}")
    twice = {name: found for name, found in where.items() if len(found) > 1}
    assert set(twice) == NAMES_OF_TWO_MEANINGS, twice


def _cycles(package: str) -> list[list[str]]:
    """The import cycles of a package, function-level imports and package faces included (grimp
    reads every import of a file; only ``TYPE_CHECKING`` blocks, which never run, are left out)."""
    import grimp

    graph = grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycle_even_through_a_function_level_import_or_a_package_face() -> None:
    """``acyclic_siblings`` does not see an import of a package's own face from inside a
    function; this does. (``ContextPolicy.bind`` calls the runner that ``policy/_runner.py``
    registers, rather than importing it back: the one cycle there was.)"""
    assert _cycles("contextwise") == []


def test_a_policy_binds_to_the_runner_the_package_registered() -> None:
    from contextwise import ContextPolicy, PolicyRunner

    policy = ContextPolicy(mode="audit", steps=[])
    assert type(policy.bind()) is PolicyRunner


@pytest.mark.parametrize("package", ["accounting", "counting"])
def test_a_subpackage_of_the_root_re_exports_the_same_names_as_the_root(package: str) -> None:
    """Usage, prices and the ledger live in ``accounting/``, tokens and calibration in
    ``counting/``: each public name is imported from the root or from its subpackage, alike."""
    import importlib

    import contextwise

    face = importlib.import_module(f"contextwise.{package}")
    assert face.__all__
    for name in face.__all__:
        assert name in contextwise.__all__, name
        assert getattr(contextwise, name) is getattr(face, name), name
