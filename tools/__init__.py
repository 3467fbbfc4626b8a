"""The project's own tools, run from the repository root with ``python -m``.

- ``python -m tools.docs.gen_sdk_reference``: the three-language API reference;
- ``python -m tools.i18n.catalogs``: the error-message catalogs;
- ``python -m tools.schema.gen_policy_schema``: the context policy's JSON Schema.

The layers and function sizes are checked by import-linter and ruff (``make lint``).
"""
