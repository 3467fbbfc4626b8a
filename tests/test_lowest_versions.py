"""The framework integration tests at the lowest releases the extras allow
(``tools/lowest_versions.py``): the current releases are the ``test`` extra's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import lowest_versions


def test_each_environment_pins_the_extras_lower_bounds() -> None:
    langchain, frameworks = lowest_versions.GROUPS
    assert lowest_versions.requirements(langchain)[:2] == [
        "langchain==1.2.9",
        "langchain-core==1.2.10",
    ]
    assert lowest_versions.requirements(frameworks)[:2] == [
        "pydantic-ai-slim==2.64",
        "openai-agents==0.24",
    ]
    assert lowest_versions.lowest("pydantic-ai-slim[openai] >= 2.64, <3") == (
        "pydantic-ai-slim[openai]==2.64"
    )
    with pytest.raises(ValueError, match="no lower bound"):
        lowest_versions.lowest("langchain==1.5.0")


@pytest.mark.slow
def test_the_integration_tests_pass_at_the_lowest_releases(tmp_path: Path) -> None:
    # Two throwaway environments from PyPI (about a minute each), then the integration tests.
    assert lowest_versions.main(["--dir", str(tmp_path)]) == 0
