"""Generated files, written only when their content changed, or checked without writing: the one
helper behind every generator's ``render`` and ``--check`` (reference, catalogs, schema, diagrams,
Performance page)."""

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


def sync(files: Mapping[Path, str], *, check: bool = False) -> list[Path]:
    """Write the files whose content changed (nothing when ``check``); return those files.

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> page = folder / "page.md"
        >>> sync({page: "# Page\\n"}, check=True) == [page], page.exists()
        (True, False)
        >>> sync({page: "# Page\\n"}) == [page], sync({page: "# Page\\n"})
        (True, [])
    """
    found = stale(files)
    if not check:
        for path in found:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files[path], encoding="utf-8")
    return found
