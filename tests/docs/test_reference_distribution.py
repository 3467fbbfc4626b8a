"""The generator installs as its own distribution and runs with nothing of contextwise (issue 33).

A fresh virtual environment gets ``contextwise_reference/`` (its own ``pyproject.toml``) with its
``mkdocs`` extra, and the fixture project's one dependency, pydantic, from the package index; then
its ``contextwise-reference`` command renders the fixture project in three languages, and
``mkdocs build`` regenerates the reference through the plugin's entry point before building.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "fixtures" / "inkwell"


def _run(*argv: str | Path, cwd: Path) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    done = subprocess.run(
        [str(arg) for arg in argv], cwd=cwd, env=clean, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_distribution_renders_a_project_without_contextwise(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    source = tmp_path / "source"  # a copy, so that the build leaves nothing in the repository
    shutil.copytree(
        ROOT / "contextwise_reference", source, ignore=shutil.ignore_patterns("__pycache__")
    )
    _run(
        bin_dir / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        f"{source}[mkdocs]",
        "pydantic>=2",
        cwd=tmp_path,
    )
    project = Path(shutil.copytree(PROJECT, tmp_path / "inkwell"))

    found = _run(
        bin_dir / "python",
        "-c",
        "import importlib.util as u; print(u.find_spec('contextwise'))",
        cwd=project,
    )
    assert found.strip() == "None", "the fresh environment must not hold contextwise"
    for command in ("extract", "update", "render"):
        _run(bin_dir / "contextwise-reference", command, cwd=project)
    french = (project / "docs/fr/reference/notes.md").read_text(encoding="utf-8")
    assert "## Classe de données `Note` {#Note}" in french
    assert "## 类型化字典 `NoteOptions` {#NoteOptions}" in (
        project / "docs/zh/reference/notes.md"
    ).read_text(encoding="utf-8")

    for language in ("en", "fr", "zh"):
        shutil.rmtree(project / "docs" / language / "reference")
    out = _run(bin_dir / "mkdocs", "build", "--site-dir", tmp_path / "site", cwd=project)
    assert (project / "docs/fr/reference/notes.md").read_text(encoding="utf-8") == french, out
    assert (tmp_path / "site/fr/reference/notes/index.html").is_file()
