"""Run the framework integration tests against the lowest releases the extras allow.

The lower bounds of the ``langchain``, ``pydantic-ai`` and ``openai-agents`` extras in
``pyproject.toml`` are the first releases with every hook the integrations use (langchain 1.2.9:
middleware generic in its response; langchain-core 1.2.10: ``ContextOverflowError``;
pydantic-ai-slim 2.64: ``prepare_model_request`` and ``RetryModelRequest``). This tool installs
exactly those releases into throwaway virtual environments (from PyPI, nothing else) and runs the
integration test files there; the current releases are the ``test`` extra's, which every other
test runs against. The frameworks' dependencies cannot all share one environment at their lowest
(langchain-openai of langchain-core 1.2 takes openai <3, the Agents SDK openai 3), so LangChain has
an environment of its own. Only the integration test files run: an environment takes about a
minute to install and its tests a few seconds.

Usage::

    python -m tools.lowest_versions [--dir DIR]

``tests/test_lowest_versions.py`` runs it (marked ``slow``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMON = (
    "pytest==8.4.2",
    "pytest-asyncio==1.2.0",
    "hypothesis==6.140.3",
    "babel>=2.12",
)
"""What every environment needs beside the frameworks: the test runner and contextwise's own
run-time dependencies (contextwise itself runs from the source tree)."""


@dataclass(frozen=True)
class Group:
    """One throwaway environment: the extras installed at their lowest, the other packages, and
    the tests run there."""

    name: str
    extras: tuple[str, ...]
    others: tuple[str, ...]
    tests: tuple[str, ...]
    select: str


GROUPS = (
    Group(
        "langchain",
        extras=("langchain",),
        others=(
            # langgraph 1.0.10 (the last that langchain 1.2.9 takes) breaks with the
            # langgraph-prebuilt releases after 1.0.8, which pip would otherwise choose.
            "langgraph-prebuilt==1.0.8",
            "langchain-openai",
            "langchain-anthropic",
            "langchain-google-genai",
        ),
        tests=(
            "tests/test_integrations_langchain.py",
            "tests/test_integrations_overflow.py",
            "tests/test_integrations_usage_langchain.py",
            "tests/test_integrations_breakpoints_langchain.py",
            "tests/test_integrations_provider_editing.py",
        ),
        select="langchain or refusal_texts",
    ),
    Group(
        "pydantic-ai and the Agents SDK",
        extras=("pydantic-ai", "openai-agents"),
        others=("openai", "anthropic"),
        tests=(
            "tests/test_integrations_pydantic_ai.py",
            "tests/test_integrations_openai_agents.py",
            "tests/test_integrations_overflow.py",
            "tests/test_integrations_usage_pydantic_ai.py",
            "tests/test_integrations_usage_openai_agents.py",
            "tests/test_integrations_breakpoints_pydantic_ai.py",
            "tests/test_integrations_breakpoints_openai_agents.py",
            "tests/test_integrations_provider_editing.py",
            "tests/test_integrations_usage_async.py",
        ),
        select="not langchain",
    ),
)


def lowest(requirement: str) -> str:
    """A requirement pinned to its lower bound: ``langchain>=1.2.9,<2`` -> ``langchain==1.2.9``.

    Args:
        requirement: A requirement with a ``>=`` bound.

    Returns:
        The requirement pinned with ``==``.

    Raises:
        ValueError: When it has no ``>=`` bound.
    """
    match = re.fullmatch(r"([A-Za-z0-9_.\-\[\],]+)\s*>=\s*([^,;\s]+).*", requirement.strip())
    if match is None:
        raise ValueError(f"no lower bound in {requirement!r}")
    return f"{match.group(1)}=={match.group(2)}"


def requirements(group: Group, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """What a group's environment installs: each of its extras' requirements at the lower bound,
    then the other packages and the common ones.

    Args:
        group: The group.
        pyproject: The project file whose extras give the lower bounds.

    Returns:
        The requirements, for ``pip install``.
    """
    extras = tomllib.loads(pyproject.read_text("utf-8"))["project"]["optional-dependencies"]
    pinned = [lowest(item) for extra in group.extras for item in extras[extra]]
    return [*pinned, *group.others, *COMMON]


def run_group(group: Group, where: Path) -> int:
    """Install a group's environment under ``where`` and run its tests there.

    Args:
        group: The group.
        where: A directory for the environment.

    Returns:
        The exit status of pip or pytest (0 when both pass).
    """
    venv = where / re.sub(r"\W+", "-", group.name)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    wanted = requirements(group)
    print(f"== {group.name}: {' '.join(wanted)}", flush=True)
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wanted]
    )
    if installed.returncode:
        return installed.returncode
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", group.select]
    return subprocess.run([*command, *group.tests], cwd=ROOT, env=environment).returncode


def main(argv: Sequence[str] | None = None) -> int:
    """Run every group; the worst exit status.

    Args:
        argv: The command-line arguments (``--dir DIR``).

    Returns:
        0 when every group's tests pass.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, help="where to make the environments")
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="contextwise-lowest-") as scratch:
        where = arguments.dir or Path(scratch)
        statuses = [run_group(group, where) for group in GROUPS]
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())
