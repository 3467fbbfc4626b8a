"""An installed wheel carries compiled catalogs and speaks French and Chinese."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import contextwise, pathlib
from contextwise import ContextOverflowError
err = ContextOverflowError("context_overflow", tokens=12345, context_budget=8000)
print(pathlib.Path(contextwise.__file__).parent)
print(err.render("fr"))
print(err.render("zh"))
"""


@pytest.mark.slow
def test_installed_wheel_renders_french_and_chinese(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("contextwise-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
    )
    clean_env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    result = subprocess.run(
        [str(python), "-c", SCRIPT],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env,
    )
    package_dir, french, chinese = result.stdout.strip().splitlines()
    assert Path(package_dir).is_relative_to(env_dir), "the test must import the installed wheel"
    assert (Path(package_dir) / "locales/fr/LC_MESSAGES/contextwise.mo").is_file()
    assert (Path(package_dir) / "locales/zh/LC_MESSAGES/contextwise.mo").is_file()
    assert not list(Path(package_dir).glob("locales/**/*.po")), "only compiled catalogs ship"
    assert french.replace("\u202f", " ").replace("\xa0", " ") == (
        "Le contexte ne tient pas : 12 345 jetons pour un budget de contexte de 8 000 jetons."
    )
    assert chinese == "上下文放不下：12,345 个词元，而上下文预算为 8,000 个词元。"
    # The command's entry point ships beside the package, and the console script runs it.
    assert (Path(package_dir).parent / "contextwise_cli.py").is_file()
    command = subprocess.run(
        [str(env_dir / "bin" / "contextwise"), "--version"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env,
    )
    assert command.returncode == 0 and command.stdout.startswith("contextwise "), command.stderr
