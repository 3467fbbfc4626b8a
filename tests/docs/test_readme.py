"""The README's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_blocks_run(capsys: object) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README shows a Python example"
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)


def test_readme_shows_the_two_commands_first() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S)
    assert first_block is not None
    assert "make docs" in first_block.group(1) and "make test" in first_block.group(1)
