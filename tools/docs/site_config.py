"""Check that the site's languages (``mkdocs.yml``) are the project's languages.

The i18n plugin's ``languages`` must list :data:`contextwise.i18n.LANGUAGES` in the same order,
with the source language as the default, each under its native name, with a translated navigation
for every language but the source. Run ``python -m tools.docs.site_config`` (exit 1 on a mismatch);
the site tests call :func:`problems`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.utils.yaml import yaml_load

from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "mkdocs.yml"


def site_languages(config: Path = CONFIG) -> list[dict[str, Any]]:
    """The ``languages`` entries of the i18n plugin in a MkDocs configuration."""
    with config.open(encoding="utf-8") as handle:
        loaded = yaml_load(handle)
    for plugin in loaded.get("plugins", []):
        if isinstance(plugin, dict) and "i18n" in plugin:
            found = plugin["i18n"].get("languages", [])
            return [entry for entry in found if isinstance(entry, dict)]
    return []


def problems(config: Path = CONFIG) -> list[str]:
    """How the site's languages differ from ``LANGUAGES``; empty when they agree."""
    entries = site_languages(config)
    found: list[str] = []
    by_code = {str(entry.get("locale")): entry for entry in entries}
    expected = languages.codes()
    if [str(entry.get("locale")) for entry in entries] != list(expected):
        found.append(
            f"{config.name}: the i18n languages are {[e.get('locale') for e in entries]}, "
            f"LANGUAGES says {list(expected)}"
        )
    for code in expected:
        entry = by_code.get(code)
        if entry is None:
            name = languages.native_name(code)
            found.append(f"{config.name}: no i18n language {code!r} ({name})")
            continue
        if entry.get("name") != languages.native_name(code):
            found.append(
                f"{config.name}: language {code!r} is named {entry.get('name')!r}, "
                f"LANGUAGES says {languages.native_name(code)!r}"
            )
        if bool(entry.get("default")) != (code == languages.source()):
            found.append(f"{config.name}: the default language must be {languages.source()!r}")
        if code != languages.source() and not entry.get("nav_translations"):
            found.append(f"{config.name}: language {code!r} has no nav_translations")
    return found


def main() -> int:
    found = problems()
    print("\n".join(found) if found else f"{CONFIG.name}: the site's languages are LANGUAGES")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
