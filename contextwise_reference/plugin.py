"""The MkDocs plugin: the reference regenerated (or only checked) before each build.

In ``mkdocs.yml``, with the distribution installed with its ``mkdocs`` extra::

    plugins:
      - contextwise-reference          # render: write the pages that changed, then build
      - contextwise-reference:
          check: true                  # change nothing; fail the build if a page is stale

The project is the folder of ``mkdocs.yml`` (or ``root``, relative to it), configured by its
``[tool.contextwise-reference]`` section as the command line is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger

from contextwise_reference import project
from contextwise_reference.collect import GriffeWarningsError
from contextwise_reference.config import ConfigError

log = get_plugin_logger(__name__)


class ReferenceConfig(Config):  # type: ignore[no-untyped-call]  # mkdocs is untyped there
    """The plugin's options."""

    check = config_options.Type(bool, default=False)
    """Check only: fail the build when a page is stale or an entry fuzzy, write nothing."""
    root = config_options.Type(str, default=".")
    """The project's folder, relative to ``mkdocs.yml``."""


class ReferencePlugin(BasePlugin[ReferenceConfig]):  # type: ignore[no-untyped-call]
    """Regenerates the reference before the build, or checks it (``check: true``)."""

    def on_pre_build(self, *, config: Any) -> None:
        """Render the reference's pages (or check them) before MkDocs reads the docs folder."""
        base = Path(config.config_file_path or "mkdocs.yml").resolve().parent
        try:
            target = project.Project.configured((base / self.config.root).resolve())
            state, found = project.generate(target)
        except (ConfigError, GriffeWarningsError) as error:
            raise PluginError(str(error)) from error
        if self.config.check:
            problems = project.check(target, found, state)
            if problems:
                raise PluginError("the reference is not up to date: " + "; ".join(problems))
            return
        for line in project.write(target, found):
            log.info(line)
