"""Generate the three-language API reference of contextwise from its sources.

    python -m tools.docs.gen_sdk_reference extract         # messages -> locales/reference.pot
    python -m tools.docs.gen_sdk_reference update          # merge the .pot into the .po files
    python -m tools.docs.gen_sdk_reference stats           # translated / fuzzy / untranslated
    python -m tools.docs.gen_sdk_reference render          # docs/<lang>/reference/*.md, the .pot
    python -m tools.docs.gen_sdk_reference render --check  # exit 1 listing stale/orphan/fuzzy
    python -m tools.docs.gen_sdk_reference migrate         # old contexts -> public paths

The generator is its own distribution, ``contextwise-reference`` (the ``contextwise_reference``
folder at the repository's root); this is its command line with contextwise's repository as the
default ``--root``, configured by ``[tool.contextwise-reference]`` in ``pyproject.toml``. ``--root``
and ``--package`` point it at another project (the golden tests' fixture package).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from contextwise_reference import cli

ROOT = Path(__file__).resolve().parents[2]
COMMAND = "python -m tools.docs.gen_sdk_reference"


def main(argv: Sequence[str] | None = None) -> int:
    """The generator's command line, run on contextwise's repository unless ``--root`` says."""
    return cli.main(argv, root=ROOT, command=COMMAND)


if __name__ == "__main__":
    sys.exit(main())
