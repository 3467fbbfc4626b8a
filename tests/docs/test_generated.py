"""One helper writes generated files only when they changed, or lists them for ``--check``."""

from __future__ import annotations

from pathlib import Path

from tools import generated


def test_sync_writes_only_what_changed_and_check_writes_nothing(tmp_path: Path) -> None:
    same, changed, missing = tmp_path / "same.md", tmp_path / "changed.md", tmp_path / "new/a.md"
    same.write_text("same\n", encoding="utf-8")
    changed.write_text("old\n", encoding="utf-8")
    files = {same: "same\n", changed: "new\n", missing: "made\n"}
    before = same.stat().st_mtime_ns

    assert generated.sync(files, check=True) == [changed, missing]
    assert changed.read_text(encoding="utf-8") == "old\n" and not missing.exists()

    assert generated.sync(files) == [changed, missing]
    assert changed.read_text(encoding="utf-8") == "new\n"
    assert missing.read_text(encoding="utf-8") == "made\n"
    assert same.stat().st_mtime_ns == before
    assert generated.sync(files) == [] == generated.stale(files)
