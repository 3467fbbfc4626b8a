"""Compile the gettext catalogs into the wheel, so an installed contextwise speaks three languages.

The ``.po`` files are the source of truth in the repository; the wheel carries their compiled
``.mo`` twins under ``contextwise/locales/<lang>/LC_MESSAGES/`` (fuzzy entries are never compiled).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CatalogBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "catalogs"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        self._tmp = tempfile.TemporaryDirectory()
        out = Path(self._tmp.name)
        for po in sorted((root / "locales").glob("*/LC_MESSAGES/*.po")):
            relative = po.relative_to(root / "locales").with_suffix(".mo")
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with po.open("rb") as handle:
                catalog = read_po(handle)
            with target.open("wb") as handle:
                write_mo(handle, catalog, use_fuzzy=False)
            build_data["force_include"][str(target)] = f"contextwise/locales/{relative.as_posix()}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()
