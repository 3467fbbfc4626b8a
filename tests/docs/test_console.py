"""Console output shown in a guide, in any language, is what the command prints.

Every ```console block of a page is a shell session: each ``$ command`` line is run with the
installed ``contextwise`` command in a scratch folder that holds the files the guides name
(tests/fixtures/console: ``policies/agent.json``, ``policies/draft.json``, ``history.json``, and
the small project of tests/fixtures/inkwell that the reference generator's guide documents), and
the lines that follow it, up to the next ``$``, must be exactly what it printed. ``$ echo $?``
prints the exit status of the command before. A French or Chinese page runs ``contextwise`` with
``--lang``, so its block shows the messages in its language, produced by the catalogs;
``contextwise-reference`` (the reference generator, ``python -m contextwise_reference``) prints in
English on every page.

    python tests/docs/test_console.py PAGE...   # rewrite the console blocks of PAGE with the output
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FILES = ROOT / "tests" / "fixtures" / "console"
PROJECT = ROOT / "tests" / "fixtures" / "inkwell"
GENERATOR = "contextwise-reference"
BLOCK = re.compile(r"^```console\n(?P<body>.*?)^```$", re.M | re.S)
COMMAND = shutil.which("contextwise", path=str(Path(sys.executable).parent)) or "contextwise"


@dataclass(frozen=True)
class Step:
    command: str
    shown: str


def steps(body: str) -> list[Step]:
    """The commands of a console block, each with the output the page shows for it."""
    found: list[Step] = []
    for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
        command, _, shown = chunk.partition("\n")
        found.append(Step(command, shown.rstrip("\n")))
    return found


def run(block: str, folder: Path) -> str:
    """The session as it happens: each command followed by what it prints."""
    status = 0
    lines: list[str] = []
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    for step in steps(block):
        if step.command == "echo $?":
            printed = f"{status}\n"
        else:
            argv = step.command.replace("contextwise", f'"{COMMAND}"', 1)
            if step.command.startswith(GENERATOR):
                generator = f'"{sys.executable}" -m contextwise_reference'
                argv = step.command.replace(GENERATOR, generator, 1)
            done = subprocess.run(  # the page's own command line, globs included
                argv,
                shell=True,
                cwd=folder,
                capture_output=True,
                text=True,
                env=environment,
                check=False,
            )
            status, printed = done.returncode, done.stdout + done.stderr
        lines += [f"$ {step.command}", *printed.rstrip("\n").splitlines()]
    return "\n".join(lines) + "\n"


def console_pages() -> list[Path]:
    return sorted(page for page in DOCS.rglob("*.md") if "```console" in page.read_text("utf-8"))


def scratch(folder: Path) -> Path:
    """The files the console blocks name, copied into ``folder``."""
    shutil.copytree(FILES, folder)
    shutil.copytree(PROJECT, folder, dirs_exist_ok=True)
    return folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return scratch(tmp_path / "work")


@pytest.mark.parametrize("page", console_pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_a_console_block_shows_what_the_command_prints(page: Path, folder: Path) -> None:
    for block in BLOCK.finditer(page.read_text(encoding="utf-8")):
        body = block.group("body")
        assert run(body, folder) == body, (
            f"{page.relative_to(ROOT)}: run tests/docs/test_console.py"
        )


def test_every_language_shows_the_cli_and_translated_pages_ask_for_their_language() -> None:
    pages = {page.relative_to(DOCS).parts[0] for page in console_pages()}
    assert pages == {"en", "fr", "zh"}
    for page in console_pages():
        language = page.relative_to(DOCS).parts[0]
        for block in BLOCK.finditer(page.read_text(encoding="utf-8")):
            for step in steps(block.group("body")):
                if step.command.startswith("contextwise ") and language != "en":
                    assert f"--lang {language}" in step.command, (page, step.command)


def test_a_stale_console_block_is_found(folder: Path) -> None:
    stale = "$ contextwise policy check policies/agent.json\npolicies/agent.json: all good.\n"
    assert run(stale, folder) != stale
    assert run("$ contextwise policy check policies/draft.json\n$ echo $?\n1\n", folder).endswith(
        "$ echo $?\n1\n"
    )


def rewrite(page: Path, folder: Path) -> None:
    """Replace every console block of ``page`` with what its commands print now."""
    text = page.read_text(encoding="utf-8")
    page.write_text(
        BLOCK.sub(lambda m: "```console\n" + run(m.group("body"), folder) + "```", text),
        encoding="utf-8",
    )


if __name__ == "__main__":
    import tempfile

    for name in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as folder:
            rewrite(Path(name).resolve(), scratch(Path(folder) / "work"))
