"""The reference generator's fixture project: its paths, its golden pages, its command line."""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.docs import gen_sdk_reference

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "refpkg"


def golden(language: str, page: str) -> str:
    """A committed page of the fixture project."""
    return (FIXTURE / "docs" / language / "reference" / f"{page}.md").read_text(encoding="utf-8")


def cli(root: Path, *args: str) -> int:
    """Run the generator's command line on a copy of the fixture project (``samplepkg``)."""
    return gen_sdk_reference.main(["--root", str(root), "--package", "samplepkg", *args])


def copy_fixture(target: Path) -> Path:
    """A scratch copy of the fixture project under ``target``, free to change."""
    copy = target / "refpkg"
    shutil.copytree(FIXTURE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy
