"""Real tokenizers, found offline in installed packages, and the estimate measured against them.

The tokenizer files come from one wheel, litellm's, which ships OpenAI's o200k and cl100k files
(in tiktoken's cache layout), DeepSeek's ``tokenizer.json`` and the legacy Claude tokenizer. The
package itself (200 MB with its dependencies) is never installed: ``python -m tools.tokenizers
fetch`` (a step of ``make test`` and ``make bench``) downloads the pinned wheel alone
(``pip download --no-deps``) and unpacks its tokenizer folder into :data:`CACHE`, once.
``CONTEXTWISE_TOKENIZERS_DIR`` may name another folder with the same files. Nothing is downloaded
when the files are read: a missing file is an error that names it and the command that fetches it.

:func:`measure` counts every document (the corpus of ``benchmarks/corpus``, the guides of each
language and the package's source) with the four tokenizers and
:func:`contextwise.estimate_tokens`, and :func:`goals` checks the estimate's bounds;
``benchmarks/bench_tokens.py`` prints both and ``tests/test_tokens.py`` asserts them.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextwise import estimate_tokens

ROOT = Path(__file__).resolve().parents[1]

WHEEL = ("litellm", "1.110.2")
"""The wheel that ships the tokenizer files, pinned: its name and version."""

WHEEL_FOLDER = "litellm/litellm_core_utils/tokenizers/"
"""The tokenizer folder inside the wheel."""

CACHE = ROOT / ".cache" / "tokenizers" / f"{WHEEL[0]}-{WHEEL[1]}"
"""Where ``fetch`` unpacks the tokenizer files (ignored by git, removed by ``make clean``)."""
TIKTOKEN_URLS = {
    "o200k": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
"""Where tiktoken would fetch each encoding: its cache file is named by the URL's SHA-1."""

JSON_FILES = {"deepseek": "deepseek_tokenizer.json", "claude": "anthropic_tokenizer.json"}
"""The Hugging Face tokenizer files, by tokenizer."""

TOKENIZERS = ("o200k", "cl100k", "deepseek", "claude")
"""The tokenizers the estimate is measured against, in the order of the table."""

GOAL_UNDER_LARGEST = 0.95
"""The estimate is never under this share of the largest count."""

GOAL_OVER_LARGEST = 1.6
"""The estimate is never over this many times the largest count."""

GROUPS = (
    ("Corpus", "benchmarks/corpus", "*.txt"),
    ("English guides", "docs/en/guides", "*.md"),
    ("French guides", "docs/fr/guides", "*.md"),
    ("Chinese guides", "docs/zh/guides", "*.md"),
    ("Python source", "src/contextwise", "**/*.py"),
)
"""The documents, by group: the title, the folder and the pattern of its files. A corpus
document's kind is the start of its name (``prose-fr.txt``: ``prose``); a guide's is ``guide``,
a module's ``source``."""


class TokenizerFilesMissing(FileNotFoundError):
    """A tokenizer file is missing: ``make tokenizers`` (``python -m tools.tokenizers fetch``)
    brings them."""


def folder() -> Path:
    """The folder that holds the tokenizer files: ``CONTEXTWISE_TOKENIZERS_DIR``, or :data:`CACHE`.

    Raises:
        TokenizerFilesMissing: The cache was never fetched.
    """
    override = os.environ.get("CONTEXTWISE_TOKENIZERS_DIR")
    if override:
        return Path(override)
    if not CACHE.is_dir():
        raise TokenizerFilesMissing(
            f"{CACHE} is missing: run `make tokenizers` (`python -m tools.tokenizers fetch`)"
        )
    return CACHE


def files(path: Path) -> dict[str, Path]:
    """Where each tokenizer's file is in a folder, by tokenizer, in the order of the table."""
    found = {
        name: path / hashlib.sha1(url.encode()).hexdigest() for name, url in TIKTOKEN_URLS.items()
    }
    found.update((name, path / filename) for name, filename in JSON_FILES.items())
    return {name: found[name] for name in TOKENIZERS}


def check() -> Path:
    """The folder that holds the tokenizer files, once every file is found in it.

    Raises:
        TokenizerFilesMissing: The cache was never fetched, or a file is missing from the folder;
            the message names it and ``make tokenizers``.
    """
    path = folder()
    for name, file in files(path).items():
        if not file.is_file():
            raise TokenizerFilesMissing(
                f"{file} ({name}) is missing: run `make tokenizers` "
                "(`python -m tools.tokenizers fetch`)"
            )
    return path


def fetch(cache: Path = CACHE) -> Path:
    """Download the pinned wheel without its dependencies and unpack its tokenizer folder.

    Does nothing when ``cache`` already holds the files; the folder appears whole or not at all
    (unpacked beside it, then renamed).

    Args:
        cache: The folder to fill.

    Returns:
        ``cache``.
    """
    if cache.is_dir():
        return cache
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.parent) as work:
        name, version = WHEEL
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--only-binary=:all:", f"{name}=={version}", "--dest", work],
            check=True,
        )
        wheel = next(Path(work).glob(f"{name}-{version}-*.whl"))
        unpacked = Path(work) / "unpacked"
        unpacked.mkdir()
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.startswith(WHEEL_FOLDER) and not member.endswith((".py", "/")):
                    target = unpacked / member.removeprefix(WHEEL_FOLDER)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(member) as source, target.open("wb") as out:
                        shutil.copyfileobj(source, out)
        unpacked.rename(cache)
    return cache


@contextlib.contextmanager
def _tiktoken_cache(path: Path) -> Iterator[None]:
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def load() -> dict[str, Callable[[str], int]]:
    """The four tokenizers, each as a function from a text to its number of tokens."""
    import tiktoken
    from tokenizers import Tokenizer  # type: ignore[import-untyped]

    path = check()
    counters: dict[str, Callable[[str], int]] = {}
    for name in TIKTOKEN_URLS:
        with _tiktoken_cache(path):
            encoding = tiktoken.get_encoding(f"{name}_base")
        counters[name] = _tiktoken_count(encoding)
    for name, filename in JSON_FILES.items():
        counters[name] = _hf_count(Tokenizer.from_file(str(path / filename)))
    return {name: counters[name] for name in TOKENIZERS}


def _tiktoken_count(encoding: Any) -> Callable[[str], int]:
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def _hf_count(tokenizer: Any) -> Callable[[str], int]:
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def documents(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """Every measured document: its group, its path from the root and its kind."""
    found: list[tuple[str, str, str]] = []
    for title, where, pattern in GROUPS:
        for path in sorted((root / where).glob(pattern)):
            if title == "Corpus":
                kind = path.name.split("-", 1)[0]
            else:
                kind = "source" if path.suffix == ".py" else "guide"
            found.append((title, path.relative_to(root).as_posix(), kind))
    return found


@dataclass(frozen=True)
class Row:
    """One document's counts: the estimate's and each tokenizer's."""

    group: str
    path: str
    kind: str
    chars: int
    estimate: int
    counts: dict[str, int]

    @property
    def to_largest(self) -> float:
        """The estimate over the largest count."""
        return self.estimate / max(self.counts.values())

    @property
    def to_smallest(self) -> float:
        """The estimate over the smallest count."""
        return self.estimate / min(self.counts.values())

    @property
    def to_o200k(self) -> float:
        """The estimate over o200k's count (the tokenizer of OpenAI's current models)."""
        return self.estimate / self.counts["o200k"]

    @property
    def quarter(self) -> int:
        """What the estimate of version 1, a quarter of the characters, gave."""
        return math.ceil(self.chars / 4)

    def met(self) -> bool:
        """Whether the document is within both bounds."""
        return GOAL_UNDER_LARGEST <= self.to_largest <= GOAL_OVER_LARGEST


def measure(root: Path = ROOT, groups: tuple[str, ...] | None = None) -> list[Row]:
    """Count every document (of the given groups) with the estimate and the four tokenizers."""
    counters = load()
    rows: list[Row] = []
    for group, path, kind in documents(root):
        if groups is not None and group not in groups:
            continue
        text = (root / path).read_text(encoding="utf-8")
        counts = {name: count(text) for name, count in counters.items()}
        rows.append(Row(group, path, kind, len(text), estimate_tokens(text), counts))
    return rows


def goals(rows: list[Row]) -> list[tuple[str, float, float, bool]]:
    """Each goal of each group: its text, the measured figure, the limit, and whether it is met."""
    found: list[tuple[str, float, float, bool]] = []
    for title, _, _ in GROUPS:
        mine = [row for row in rows if row.group == title]
        if not mine:
            continue
        low = min(row.to_largest for row in mine)
        high = max(row.to_largest for row in mine)
        found.append((f"{title}: lowest estimate / largest count", low, GOAL_UNDER_LARGEST,
                      low >= GOAL_UNDER_LARGEST))
        found.append((f"{title}: highest estimate / largest count", high, GOAL_OVER_LARGEST,
                      high <= GOAL_OVER_LARGEST))
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.tokenizers fetch``: fill the cache; prints where the files are."""
    parser = argparse.ArgumentParser(prog="python -m tools.tokenizers")
    parser.add_argument("command", choices=("fetch",))
    parser.parse_args(argv)
    print(fetch())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
