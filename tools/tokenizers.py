"""Real tokenizers, found offline in installed packages, and the estimate measured against them.

The tokenizer files come from one wheel, litellm's, which ships OpenAI's o200k and cl100k files
(in tiktoken's cache layout), DeepSeek's ``tokenizer.json`` and the legacy Claude tokenizer. The
package itself (200 MB with its dependencies) is never installed: ``python -m tools.tokenizers
fetch`` (a step of ``make test`` and ``make bench``) downloads the pinned wheel alone
(``pip download --no-deps``) and unpacks its tokenizer folder into :data:`CACHE`, once.
``CONTEXTWISE_TOKENIZERS_DIR`` may name another folder with the same files. Nothing is downloaded
when the files are read: a missing file is an error that names it and the command that fetches it.

:func:`measure` counts every document (the guides of each language and the package's source)
with the four tokenizers and :func:`contextwise.estimate_tokens`, and :func:`goals` checks the
estimate's goals; ``benchmarks/bench_tokens.py`` prints both and ``tests/test_tokens.py`` asserts
them.
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

GOAL_OVER_SMALLEST = {"latin": 1.25, "cjk": 1.70}
"""The estimate is at most this many times the smallest count, for Latin text and code, and for
CJK text."""

GROUPS = (
    ("English guides", "docs/en/guides", "latin"),
    ("French guides", "docs/fr/guides", "latin"),
    ("Chinese guides", "docs/zh/guides", "cjk"),
    ("Python source", "src/contextwise", "latin"),
)
"""The documents, by group: the title, the folder and the script family of its goal."""


class TokenizerFilesMissing(FileNotFoundError):
    """A tokenizer file is missing: ``python -m tools.tokenizers fetch`` (``make test``) brings
    them."""


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
            f"{CACHE} is missing: run `make test`, or `python -m tools.tokenizers fetch`"
        )
    return CACHE


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

    path = folder()
    counters: dict[str, Callable[[str], int]] = {}
    for name, url in TIKTOKEN_URLS.items():
        cached = path / hashlib.sha1(url.encode()).hexdigest()
        if not cached.is_file():
            raise TokenizerFilesMissing(f"{cached} ({name}) is missing")
        with _tiktoken_cache(path):
            encoding = tiktoken.get_encoding(f"{name}_base")
        counters[name] = _tiktoken_count(encoding)
    for name, filename in JSON_FILES.items():
        if not (path / filename).is_file():
            raise TokenizerFilesMissing(f"{path / filename} ({name}) is missing")
        counters[name] = _hf_count(Tokenizer.from_file(str(path / filename)))
    return {name: counters[name] for name in TOKENIZERS}


def _tiktoken_count(encoding: Any) -> Callable[[str], int]:
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def _hf_count(tokenizer: Any) -> Callable[[str], int]:
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def documents(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """Every measured document: its group, its path from the root and its script family."""
    found: list[tuple[str, str, str]] = []
    for title, where, family in GROUPS:
        pattern = "**/*.py" if where.startswith("src") else "*.md"
        for path in sorted((root / where).glob(pattern)):
            found.append((title, path.relative_to(root).as_posix(), family))
    return found


@dataclass(frozen=True)
class Row:
    """One document's counts: the estimate's and each tokenizer's."""

    group: str
    path: str
    family: str
    chars: int
    estimate: int
    counts: dict[str, int]

    @property
    def under_largest(self) -> float:
        """The estimate over the largest count."""
        return self.estimate / max(self.counts.values())

    @property
    def over_smallest(self) -> float:
        """The estimate over the smallest count."""
        return self.estimate / min(self.counts.values())

    @property
    def quarter(self) -> int:
        """What the estimate of version 1, a quarter of the characters, gave."""
        return math.ceil(self.chars / 4)

    def met(self) -> bool:
        """Whether the document meets both goals."""
        return (
            self.under_largest >= GOAL_UNDER_LARGEST
            and self.over_smallest <= GOAL_OVER_SMALLEST[self.family]
        )


def measure(root: Path = ROOT) -> list[Row]:
    """Count every document with the estimate and the four tokenizers."""
    counters = load()
    rows: list[Row] = []
    for group, path, family in documents(root):
        text = (root / path).read_text(encoding="utf-8")
        counts = {name: count(text) for name, count in counters.items()}
        rows.append(Row(group, path, family, len(text), estimate_tokens(text), counts))
    return rows


def goals(rows: list[Row]) -> list[tuple[str, float, float, bool]]:
    """Each goal of each group: its text, the measured figure, the limit, and whether it is met."""
    found: list[tuple[str, float, float, bool]] = []
    for title, _, family in GROUPS:
        mine = [row for row in rows if row.group == title]
        if not mine:
            continue
        low = min(row.under_largest for row in mine)
        high = max(row.over_smallest for row in mine)
        limit = GOAL_OVER_SMALLEST[family]
        found.append((f"{title}: lowest estimate / largest count", low, GOAL_UNDER_LARGEST,
                      low >= GOAL_UNDER_LARGEST))
        found.append((f"{title}: highest estimate / smallest count", high, limit, high <= limit))
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
