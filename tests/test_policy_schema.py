"""The JSON Schema of policy files: fresh on disk, and accepting both key spellings."""

from __future__ import annotations

import json
from pathlib import Path

from contextwise import ContextPolicy, context_policy_json_schema
from tools.schema import gen_policy_schema as generator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = ROOT / "docs" / "en" / "schema" / "context-policy.schema.json"


def test_the_committed_schema_is_fresh() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == generator.render(), (
        "docs/en/schema/context-policy.schema.json is stale: "
        "run python -m tools.schema.gen_policy_schema"
    )
    assert generator.main(["--check"]) == 0


def test_the_schema_file_is_sorted_json_with_a_trailing_newline() -> None:
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n" == text


def test_the_schema_accepts_both_spellings_and_forbids_unknown_keys() -> None:
    schema = context_policy_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["additionalProperties"] is False
    assert {"trigger_chars", "triggerChars", "target_input_tokens", "targetInputTokens"} <= set(
        schema["properties"]
    )
    trim = schema["$defs"]["TrimStep"]
    assert trim["additionalProperties"] is False
    assert trim["required"] == ["id"]
    assert {"anyOf": [{"required": ["fragment_id"]}, {"required": ["fragmentId"]}]} in trim["allOf"]
    assert trim["properties"]["keepGroups"] == trim["properties"]["keep_groups"]
    assert trim["properties"]["keep_groups"]["description"].startswith("How many of the newest")
    assert "Examples" not in trim["description"]


def test_every_policy_field_is_described_in_the_schema() -> None:
    schema = context_policy_json_schema()
    for name in ContextPolicy.model_fields:
        assert schema["properties"][name].get("description"), name
    for definition in schema["$defs"].values():
        for name, field in definition.get("properties", {}).items():
            assert field.get("description"), (definition["title"], name)
