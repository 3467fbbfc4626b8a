"""Every code example of the documentation runs, in every language.

Hand-written pages (home pages, guides, contributing pages, glossary in ``docs/en``, ``docs/fr``
and ``docs/zh``): every fenced ``python`` block runs, in order, in one namespace per page, so a
block may use what an earlier block of the same page defined. When a block is followed directly by
a ``text`` block, that block is the output the page promises, and the printed output must equal
it. Top-level ``await`` is allowed, as in an asyncio REPL.

Generated reference pages: their examples are the docstrings' doctests, shown as ``pycon`` blocks.
Each runs alone, as a reader copies it, in tests/docs/test_examples.py; ``gen_sdk_reference render
--check`` (tests/docs/test_reference.py) proves the pages show exactly the current docstrings.
What a reference page adds is its import line, and that is run below for every page in every
language.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import contextvars
import inspect
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT
from tools.i18n import languages

DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})(?P<lang>[\w+-]*)\s*$")


@dataclass(frozen=True)
class CodeBlock:
    language: str
    code: str
    line: int
    follows_previous: bool
    """Only blank lines separate this block from the previous one."""


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of a page, in order, with their (dedented) code."""
    blocks: list[CodeBlock] = []
    lines = markdown.splitlines()
    index = 0
    last_end = -2
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening.group("indent"), opening.group("fence")
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and lines[index].strip() != fence:
            body.append(
                lines[index][len(indent) :] if lines[index].startswith(indent) else lines[index]
            )
            index += 1
        between = lines[last_end + 1 : start] if last_end >= 0 else ["x"]
        blocks.append(
            CodeBlock(
                opening.group("lang").lower(),
                "\n".join(body) + "\n",
                start + 1,
                all(not line.strip() for line in between),
            )
        )
        last_end = index
        index += 1
    return blocks


def _pages() -> list[Path]:
    return sorted(
        path
        for path in DOCS.rglob("*.md")
        if len(path.relative_to(DOCS).parts) < 3 or path.relative_to(DOCS).parts[1] != "reference"
    )


def _with_python(pages: list[Path]) -> list[Path]:
    return [
        page
        for page in pages
        if any(b.language == "python" for b in code_blocks(page.read_text("utf-8")))
    ]


def _run(code: str, filename: str, namespace: dict[str, object]) -> str:
    compiled = compile(code, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        result = eval(compiled, namespace)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    return output.getvalue()


def _run_page(page: Path) -> None:
    namespace: dict[str, object] = {"__name__": "__docs__"}
    blocks = code_blocks(page.read_text(encoding="utf-8"))
    relative = page.relative_to(ROOT)
    for position, block in enumerate(blocks):
        if block.language != "python":
            continue
        printed = _run(block.code, f"{relative}:{block.line}", namespace)
        following = blocks[position + 1] if position + 1 < len(blocks) else None
        if following is not None and following.language == "text" and following.follows_previous:
            assert printed.rstrip() == following.code.rstrip(), (
                f"{relative}:{block.line}: the output differs from the text block at line "
                f"{following.line}"
            )


@pytest.mark.parametrize(
    "page", _with_python(_pages()), ids=lambda page: page.relative_to(DOCS).as_posix()
)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # A page may change the default locale: keep it inside the page's own context.
    contextvars.copy_context().run(_run_page, page)


def test_the_home_pages_have_a_quick_start_that_runs() -> None:
    for language in languages.codes():
        home = DOCS / language / "index.md"
        assert home in _with_python(_pages()), f"{home.relative_to(ROOT)} has no Python example"


def test_block_parser_pairs_code_and_output() -> None:
    blocks = code_blocks("```python\nprint(1)\n```\n\n```text\n1\n```\n\ntext\n\n```text\nx\n```\n")
    assert [(b.language, b.follows_previous) for b in blocks] == [
        ("python", False),
        ("text", True),
        ("text", False),
    ]


REFERENCE_PAGES = sorted(
    path
    for path in DOCS.glob("*/reference/*.md")
    if path.stem not in ("index", "translation-status")
)


@pytest.mark.parametrize(
    "page", REFERENCE_PAGES, ids=lambda page: page.relative_to(DOCS).as_posix()
)
def test_reference_import_line_runs(page: Path) -> None:
    imports = [b for b in code_blocks(page.read_text(encoding="utf-8")) if b.language == "python"]
    assert imports, f"{page.relative_to(ROOT)} has no import line"
    # The package root, the integrations' package (their shared options), or (on an
    # integration's page) the integration's own module.
    assert re.match(r"from contextwise(\.integrations(\.\w+)?)? import ", imports[0].code)
    _run(imports[0].code, str(page.relative_to(ROOT)), {})
