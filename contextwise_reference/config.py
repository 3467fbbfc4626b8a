"""The project's settings: ``[tool.contextwise-reference]`` in its ``pyproject.toml``, then flags.

Every key is optional but ``package``; a command-line flag overrides the key of the same name::

    [tool.contextwise-reference]
    package = "samplepkg"                       # the package to document (import name)
    source = "src"                              # the folder that holds it
    languages = ["en", "fr", "zh"]              # the source language first
    catalogs = "locales"                        # reference.pot, <lang>/LC_MESSAGES/reference.po
    output = "docs/{language}/reference"        # where the pages of each language go
    source-link = "https://example.org/blob/main/{path}"  # links each page's source line
    title = "API reference"                     # the index page's title, translated in the catalog
    version = "0.1"                             # written in the catalogs' header
    bugs-address = "https://example.org/issues"  # likewise
    labels = { notice = "..." }                 # the project's own text for a page label
    generated = ["performance.md"]              # other generated pages, not translated by hand

A wrong setting raises :class:`ConfigError`, whose message names the file and the key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextwise_reference.labels import LABELS

SECTION = "contextwise-reference"
TEXT_KEYS = (
    "package",
    "source",
    "catalogs",
    "output",
    "source-link",
    "title",
    "version",
    "bugs-address",
)
KEYS = (*TEXT_KEYS, "languages", "labels", "generated")


class ConfigError(ValueError):
    """A setting of ``[tool.contextwise-reference]`` (or a flag) that the generator cannot use."""


def read(root: Path) -> dict[str, Any]:
    """The section of ``root/pyproject.toml`` (empty when the file or the section is absent)."""
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error
    section = data.get("tool", {}).get(SECTION, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    return section


def settings(root: Path, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The checked settings: the pyproject section, then the flags that are not None.

    The result has every key of :data:`KEYS` that is set, with ``labels`` a ``dict`` of label key
    to English text (``title`` becomes the ``index:title`` label).
    """
    found = read(root)
    where = f"{root / 'pyproject.toml'}: [tool.{SECTION}]"
    merged = {**found, **{key: value for key, value in overrides.items() if value is not None}}
    for key in merged:
        if key not in KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(KEYS)})")
    for key in TEXT_KEYS:
        if key in merged and (not isinstance(merged[key], str) or not merged[key].strip()):
            raise ConfigError(f"{where} {key}: expected a non-empty string, got {merged[key]!r}")
    if "package" not in merged:
        raise ConfigError(f"{where} package: not set (set it there or pass --package NAME)")
    _check_languages(where, merged)
    generated = merged.get("generated", [])
    if not isinstance(generated, list) or not all(isinstance(p, str) and p for p in generated):
        raise ConfigError(f"{where} generated: expected a list of page names, got {generated!r}")
    if "generated" in merged:
        merged["generated"] = tuple(generated)
    _check_output(where, merged)
    merged["labels"] = _labels(where, merged)
    return merged


def _check_languages(where: str, merged: dict[str, Any]) -> None:
    value = merged.get("languages")
    if value is None:
        return
    if isinstance(value, str):
        value = [code.strip() for code in value.split(",")]
    ok = isinstance(value, list) and value and all(isinstance(c, str) and c for c in value)
    if not ok or len(set(value)) != len(value):
        raise ConfigError(
            f"{where} languages: expected a list of distinct language codes, source first, "
            f"got {merged['languages']!r}"
        )
    merged["languages"] = tuple(value)


def _check_output(where: str, merged: dict[str, Any]) -> None:
    if "output" in merged and "{language}" not in merged["output"]:
        raise ConfigError(f"{where} output: must contain {{language}}, got {merged['output']!r}")
    link = merged.get("source-link")
    if link is not None and "{path}" not in link:
        raise ConfigError(f"{where} source-link: must contain {{path}}, got {link!r}")


def _labels(where: str, merged: dict[str, Any]) -> dict[str, str]:
    value = merged.get("labels", {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where} labels: expected a table of label texts, got {value!r}")
    for key, text in value.items():
        if key not in LABELS:
            raise ConfigError(f"{where} labels: unknown label {key!r}")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{where} labels.{key}: expected a non-empty string, got {text!r}")
    labels = dict(value)
    if "title" in merged:
        labels["index:title"] = merged["title"]
    return labels
