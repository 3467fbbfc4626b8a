"""Generated files, written only when their content changed, or checked without writing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def stale(files: Mapping[Path, str]) -> list[Path]:
    """The files whose content on disk differs from the given text (missing ones included)."""
    return [
        path
        for path, text in files.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]


def sync(files: Mapping[Path, str]) -> list[Path]:
    """Write the files whose content changed; return those files."""
    found = stale(files)
    for path in found:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
    return found


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` unless it already holds it; return whether it was written."""
    return bool(sync({path: text}))
