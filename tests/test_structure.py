"""The house rules of src/contextwise, read from its code by ``python -m tools.structure``.

No import cycle, policy and routing never import each other, no module takes an underscore name
from another, no function over 60 lines of logic. The script is also run on small packages written
here, so that each rule is shown to catch what it forbids.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tools import structure

ROOT = Path(__file__).resolve().parents[1]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return tmp_path


def test_src_contextwise_keeps_the_house_rules() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tools.structure"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    print(result.stdout)
    assert result.stdout.splitlines()[-1] == (
        "structure: 0 findings (0 cycles, 0 sibling imports, 0 private imports, 0 long functions)"
    ), result.stdout
    assert result.returncode == 0


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "from pkg.a import f\n",
            "a.py": "from pkg.b import g\n\ndef f():\n    return g()\n",
            "b.py": "def g():\n    from pkg import a\n    return a\n",
            "c.py": "from pkg.a import f\n",
        },
    )
    assert structure.findings(root, "pkg") == ["import cycle: pkg.a -> pkg.b -> pkg.a"]


def test_importing_the_package_face_from_inside_is_not_a_cycle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {"__init__.py": "from pkg.a import f\n", "a.py": "import pkg\n\ndef f():\n    return 1\n"},
    )
    assert structure.findings(root, "pkg") == []


def test_policy_and_routing_are_siblings(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "policy/__init__.py": "from pkg.routing.core import choose\n",
            "routing/__init__.py": "",
            "routing/core.py": "def choose():\n    return 1\n",
        },
    )
    assert structure.findings(root, "pkg") == [
        "sibling import: pkg.policy imports pkg.routing.core"
    ]


def test_a_private_name_taken_from_another_module_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "_layout.py": "def bounds():\n    return 1\n\ndef _inner():\n    return 2\n",
            "a.py": "from pkg._layout import bounds\nfrom pkg import _layout\n",
            "b.py": "from ._layout import _inner\n",
        },
    )
    assert structure.findings(root, "pkg") == [
        "private import: pkg.b takes _inner from pkg._layout"
    ]


def test_a_function_over_sixty_lines_of_logic_is_found(tmp_path: Path) -> None:
    def function(name: str, statements: int) -> str:
        body = "".join(f"    x{n} = {n}\n    # a comment\n\n" for n in range(statements - 2))
        return f'def {name}():\n    """A docstring\n\n    on three lines."""\n{body}    return 0\n'

    root = _package(
        tmp_path, {"__init__.py": "", "a.py": function("fits", 60) + function("long", 61)}
    )
    assert structure.findings(root, "pkg") == [
        "long function: pkg.a.long has 61 lines of logic (> 60)"
    ]
    assert structure.verdict(structure.findings(root, "pkg")).startswith("structure: 1 findings")
