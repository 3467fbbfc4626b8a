"""The real tokenizers' files: one wheel's folder in a cache, never an installed 200 MB package."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.tokenizers import REQUIRED_VARIABLE, tokenizer_folder
from tools import tokenizers

ROOT = Path(__file__).resolve().parents[2]


def test_the_test_extra_does_not_install_the_wheel_that_ships_the_files() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    test_extra = project["optional-dependencies"]["test"]
    assert not [pin for pin in test_extra if pin.startswith(tokenizers.WHEEL[0])]
    assert "tiktoken==0.14.0" in test_extra


def test_make_test_fetches_the_files_and_the_tests_find_them() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "test: $(STAMP) catalogs tokenizers" in makefile
    assert "-m tools.tokenizers fetch" in makefile
    found = tokenizer_folder()
    for name in ("anthropic_tokenizer.json", "deepseek_tokenizer.json"):
        assert (found / name).is_file()


def test_fetch_leaves_a_filled_cache_alone(tmp_path: Path) -> None:
    (tmp_path / "anthropic_tokenizer.json").write_text("{}", encoding="utf-8")
    assert tokenizers.fetch(tmp_path) == tmp_path  # no download: the folder is there
    assert [p.name for p in tmp_path.iterdir()] == ["anthropic_tokenizer.json"]


def test_a_missing_cache_names_the_command_that_fills_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CONTEXTWISE_TOKENIZERS_DIR", raising=False)
    monkeypatch.setattr(tokenizers, "CACHE", tmp_path / "absent")
    with pytest.raises(tokenizers.TokenizerFilesMissing, match=r"tools\.tokenizers fetch"):
        tokenizers.folder()


def test_ci_and_make_test_make_the_tokenizer_files_required() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"{REQUIRED_VARIABLE}=1 $(VENV)/bin/pytest" in makefile
    assert f"export {REQUIRED_VARIABLE}=1" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_without_the_files_a_test_skips_naming_make_tokenizers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CONTEXTWISE_TOKENIZERS_DIR", str(tmp_path))
    monkeypatch.delenv(REQUIRED_VARIABLE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="run `make tokenizers`"):
        tokenizer_folder()
    monkeypatch.setenv(REQUIRED_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRED_VARIABLE}=1.*make tokenizers"):
        tokenizer_folder()


def test_one_missing_file_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CONTEXTWISE_TOKENIZERS_DIR", str(tmp_path))
    for name, file in tokenizers.files(tmp_path).items():
        if name != "claude":
            file.write_text("", encoding="utf-8")
    missing = r"anthropic_tokenizer\.json \(claude\) is missing: run `make tokenizers`"
    with pytest.raises(tokenizers.TokenizerFilesMissing, match=missing):
        tokenizers.check()


@pytest.mark.parametrize("required", ["", "1"])
def test_the_tests_that_need_the_files_skip_on_a_fresh_clone(
    tmp_path: Path, required: str
) -> None:
    """A fresh clone has no tokenizer cache: its fast tests pass, the ones that need the files
    skipped with the command that fetches them; where the files are required (CI), they fail."""
    env = {**os.environ, "CONTEXTWISE_TOKENIZERS_DIR": str(tmp_path), REQUIRED_VARIABLE: required}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_tokens.py", "-q", "-rs", "-p",
         "no:cacheprovider", "-k", "bounds or packaged_vocabulary or prices_each_script"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    if required:
        assert result.returncode == 1, result.stdout
        assert "2 failed" in result.stdout and "make tokenizers" in result.stdout
    else:
        assert result.returncode == 0, result.stdout
        assert "2 skipped" in result.stdout and "run `make tokenizers`" in result.stdout
