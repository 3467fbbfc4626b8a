"""The JSON Schema of policy files, so that editors can check and complete them.

Policy files accept every key in snake_case and in camelCase. The schema says so: each property
that has a camelCase spelling is listed under both names, and a required property may be given
under either. A policy file may name this schema in a top-level ``$schema`` key, for editors.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic.alias_generators import to_camel

from contextwise.policy._model import SCHEMA_KEY, ContextPolicy

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect of the generated schema."""


def context_policy_json_schema() -> dict[str, Any]:
    """Return the JSON Schema of a :class:`~contextwise.policy.ContextPolicy` file.

    The schema is pydantic's, with both spellings of each key allowed, and a top-level
    ``$schema`` string that points editors at the schema. It rejects unknown keys, as the model
    does. The rules that involve several fields (unique step ids, a trigger above its
    target...) are not expressed in the schema; :func:`~contextwise.policy.validate_context_policy`
    checks them.

    Returns:
        The schema, a JSON-compatible dict.

    Examples:
        >>> from contextwise import context_policy_json_schema
        >>> schema = context_policy_json_schema()
        >>> schema["title"], "triggerChars" in schema["properties"]
        ('ContextPolicy', True)
    """
    schema = copy.deepcopy(ContextPolicy.model_json_schema(by_alias=False, mode="validation"))
    _allow_camel_case(schema)
    for definition in schema.get("$defs", {}).values():
        _allow_camel_case(definition)
    schema["properties"] = {
        SCHEMA_KEY: {
            "type": "string",
            "description": "The address of this JSON Schema, for editors; ignored by contextwise.",
        },
        **schema["properties"],
    }
    return {"$schema": SCHEMA_DIALECT, **schema}


def _allow_camel_case(schema: dict[str, Any]) -> None:
    description = schema.get("description")
    if isinstance(description, str):
        # The docstring's examples are Python; a policy file's editor has no use for them.
        schema["description"] = description.split("\n\nExamples:", 1)[0].strip()
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name in list(properties):
        camel = to_camel(name)
        if camel != name:
            properties[camel] = properties[name]
    required = schema.get("required")
    if not required:
        return
    plain = [name for name in required if to_camel(name) == name]
    either = [name for name in required if to_camel(name) != name]
    if either:
        schema["required"] = plain
        if not plain:
            del schema["required"]
        schema["allOf"] = [
            {"anyOf": [{"required": [name]}, {"required": [to_camel(name)]}]} for name in either
        ]
