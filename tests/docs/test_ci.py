"""CI declares what it tests: the Python versions of pyproject.toml, the workflow's matrix, and
the fast tests on every other declared interpreter (``.ci/other-pythons``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "Programming Language :: Python :: "


def declared_versions() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [c.removeprefix(PREFIX) for c in project["classifiers"] if c.startswith(PREFIX + "3.")]


def test_the_package_declares_python_3_11_to_3_13() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert declared_versions() == ["3.11", "3.12", "3.13"]
    # The classifiers say what is tested; requires-python has no upper cap, so a newer Python is
    # never refused an install (nor made to backtrack to an older release), as pydantic does.
    assert project["requires-python"] == ">=3.11"


def test_the_tests_workflow_runs_make_test_on_pull_requests_over_every_declared_version() -> None:
    workflow = yaml.safe_load((ROOT / ".github/workflows/tests.yml").read_text(encoding="utf-8"))
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the key ``on`` as true
    job = workflow["jobs"]["test"]
    assert job["strategy"]["matrix"]["python-version"] == declared_versions()
    commands = [step.get("run", "") for step in job["steps"]]
    assert any(command.startswith("make test") for command in commands)
    assert any("chromium" in command and "postgresql" in command for command in commands)


def test_ci_runs_the_fast_tests_on_the_other_interpreters() -> None:
    run = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert '.ci/other-pythons -m "not slow"' in run
    assert run.index("make test") < run.index(".ci/other-pythons")


def test_other_pythons_skips_with_a_line_when_no_other_interpreter_is_present(
    tmp_path: Path,
) -> None:
    # A PATH with bash and dirname only, a HOME without pyenv: no other interpreter to find.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "python3").symlink_to(sys.executable)  # used when the repository has no .venv
    main_python = ROOT / ".venv/bin/python"
    version_of = main_python if main_python.exists() else Path(sys.executable)
    main = subprocess.run(
        [str(version_of), "-c", 'import sys; print("%d.%d" % sys.version_info[:2])'],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    env = {**os.environ, "HOME": str(tmp_path), "PATH": str(bin_dir)}
    result = subprocess.run(
        [str(ROOT / ".ci/other-pythons")], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for version in declared_versions():
        skipped = f"other-pythons: Python {version} is declared but not present here; skipped."
        assert (skipped in lines) is (version != main)
    assert lines[-1] == (
        f"other-pythons: no other declared Python (besides {main}) on this machine; skipped."
    )


def test_the_slow_tests_are_marked_and_the_rest_run_without_them() -> None:
    from conftest import FRAMEWORK_END_TO_END

    for name in FRAMEWORK_END_TO_END:
        assert (ROOT / "tests" / name).is_file(), name
    files = ["tests/test_session.py", "tests/test_wheel.py", "tests/docs/test_browser.py",
             "tests/test_integrations_langchain.py", "tests/test_tokens.py"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
         "-m", "slow", *files],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    collected = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    # The crash tests (SIGKILL), the wheel, the browser and a framework end to end; the token
    # tests (which read the cached tokenizer files) stay among the fast ones.
    assert collected == set(files) - {"tests/test_tokens.py"}, result.stdout
    killed = [line for line in result.stdout.splitlines() if "test_session.py::" in line]
    assert killed and all("killed" in line for line in killed)
