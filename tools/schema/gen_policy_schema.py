"""Generate docs/en/schema/context-policy.schema.json, or check that it is fresh.

python -m tools.schema.gen_policy_schema           # write the schema when it changed
python -m tools.schema.gen_policy_schema --check   # exit 1 when the file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from contextwise.policy import context_policy_json_schema
from tools import generated
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "docs" / languages.source() / "schema" / "context-policy.schema.json"


def render() -> str:
    """Return the schema file's text: sorted keys, two-space indent, a trailing newline."""
    return (
        json.dumps(context_policy_json_schema(), indent=2, sort_keys=True, ensure_ascii=False)
        + "\n"
    )


def is_fresh(path: Path = SCHEMA_PATH) -> bool:
    """Whether the file on disk holds exactly what :func:`render` returns."""
    return path.is_file() and path.read_text(encoding="utf-8") == render()


def main(argv: list[str] | None = None) -> int:
    """Write the schema (only when it changed), or check it with ``--check``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    changed = generated.sync({SCHEMA_PATH: render()}, check=args.check)
    if args.check:
        if not changed:
            return 0
        stale = SCHEMA_PATH.relative_to(ROOT)
        print(f"stale: {stale}; run python -m tools.schema.gen_policy_schema", file=sys.stderr)
        return 1
    if changed:
        print(f"wrote {SCHEMA_PATH.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
