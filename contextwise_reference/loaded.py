"""What the parts of the collection share: the package griffe loaded, and what they found.

Each part of :mod:`collect` (types, docstrings, functions, classes) reads griffe objects
through one :class:`Loaded`: the link targets are filled as pages are read, so that a later page
can point to an earlier one, and every problem lands in one list that fails the run.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from contextwise_reference.model import Target


@dataclasses.dataclass
class Loaded:
    """The loaded package and what reading it found so far."""

    package: str
    module: Any
    """The package, as griffe loaded it."""
    targets: dict[str, Target] = dataclasses.field(default_factory=dict)
    """Documented object paths (canonical and public) to their page and anchor."""
    problems: list[str] = dataclasses.field(default_factory=list)
    """What the docstrings get wrong: the run fails with them."""
    static: set[str] = dataclasses.field(default_factory=set)
    """The slugs of the pages whose module is read statically, never imported."""
    public: dict[str, str] = dataclasses.field(default_factory=dict)
    """The public path of each documented object, by canonical path: ``pkg.Name`` for a name of
    the package root, ``pkg.integrations.x.Name`` for a page that stands alone."""
    _final_paths: dict[str, str] = dataclasses.field(default_factory=dict)

    def member(self, path: str) -> Any:
        """The griffe object at ``path`` (``KeyError`` when there is none)."""
        return self.module.modules_collection.get_member(path)

    def final(self, path: str) -> str:
        """The path an alias finally points to (``pkg.Name`` -> ``pkg.module.Name``)."""
        if path not in self._final_paths:
            try:
                obj = self.member(path)
                self._final_paths[path] = obj.final_target.path if obj.is_alias else obj.path
            except Exception:  # noqa: BLE001 - a name outside the package (str, Sequence...)
                self._final_paths[path] = path
        return self._final_paths[path]


    def public_path(self, obj_path: str, fallback: str) -> str:
        """The public path of the documented object at ``obj_path``, or ``fallback``."""
        return self.public.get(obj_path, fallback)


def final_object(obj: Any) -> Any:
    """The object an alias finally points to, or ``obj`` itself."""
    return obj.final_target if obj.is_alias else obj


def runtime(path: str) -> Any:
    """The run-time object at ``path`` (``module.Name``), imported."""
    module_path, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module_path), name)


def in_source_order(members: dict[str, Any]) -> list[tuple[str, Any]]:
    """A griffe object's members, sorted by their line in the source."""
    return sorted(members.items(), key=lambda m: m[1].lineno or 0)
