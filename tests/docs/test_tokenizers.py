"""The real tokenizers' files: one wheel's folder in a cache, never an installed 200 MB package."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

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
    found = tokenizers.folder()
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
