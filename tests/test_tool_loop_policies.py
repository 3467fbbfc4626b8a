"""Policy files with the tool-loop steps: the JSON Schema, ``contextwise policy check`` and
``policy audit`` know clear, clip and the tool-unit grouping, and every bad value is a coded,
translated error with its field path."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextwise import context_policy_json_schema

SCRIPT = shutil.which("contextwise", path=str(Path(sys.executable).parent))

GOOD: dict[str, Any] = {
    "mode": "reduce",
    "triggerChars": 20_000,
    "targetInputChars": 12_000,
    "steps": [
        {"id": "huge", "kind": "clip", "fragmentId": "history", "maxChars": 8_000},
        {
            "id": "old",
            "kind": "clear",
            "fragmentId": "history",
            "keepRecent": 2,
            "excludeTools": ["recall"],
            "inputs": True,
            "reasoning": True,
            "minGainChars": 2_000,
        },
        {
            "id": "units",
            "kind": "trim",
            "fragmentId": "history",
            "grouping": {"kind": "tool-unit", "keepTask": True},
            "targetChars": 12_000,
        },
    ],
}
BAD: dict[str, Any] = {
    "mode": "reduce",
    "steps": [
        {"id": "old", "kind": "clear", "fragmentId": "history", "keepRecent": -1, "keepOld": 3},
        {"id": "huge", "kind": "clip", "fragmentId": "history", "field": "text", "maxChars": 100},
    ],
}
NO_LIMIT: dict[str, Any] = {
    "mode": "reduce",
    "steps": [{"id": "huge", "kind": "clip", "fragmentId": "history"}],
}


def test_the_schema_describes_the_new_steps_in_both_spellings() -> None:
    schema = context_policy_json_schema()
    definitions = schema["$defs"]
    clear, clip = definitions["ClearStep"]["properties"], definitions["ClipStep"]["properties"]
    assert {
        "keep_recent",
        "keepRecent",
        "exclude_tools",
        "excludeTools",
        "min_gain_tokens",
        "minGainTokens",
        "inputs",
        "reasoning",
    } <= set(clear)
    assert clear["keep_recent"]["minimum"] == 0 and clear["keep_recent"]["default"] == 3
    assert {"max_chars", "maxChars", "max_tokens", "maxTokens"} <= set(clip)
    assert definitions["Grouping"]["properties"]["kind"]["enum"] == [
        "user-turn",
        "message",
        "tool-unit",
    ]
    assert "keepTask" in definitions["Grouping"]["properties"]
    kinds = schema["properties"]["steps"]["items"]["discriminator"]["mapping"]
    assert {"clear", "clip"} <= set(kinds)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if SCRIPT is None:
        pytest.skip("the console script is installed by `pip install -e .` (make test)")
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", check=False
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, policy in (("good", GOOD), ("bad", BAD), ("no-limit", NO_LIMIT)):
        (tmp_path / f"{name}.json").write_text(json.dumps(policy), encoding="utf-8")
    return tmp_path


def test_policy_check_accepts_the_tool_loop_steps(folder: Path) -> None:
    result = run("policy", "check", "good.json", cwd=folder)
    assert (result.returncode, result.stdout) == (0, "good.json: no problem found.\n")


def test_policy_check_names_each_bad_value_with_its_code_and_field_path(folder: Path) -> None:
    result = run("policy", "check", "bad.json", "no-limit.json", "--format", "json", cwd=folder)
    assert result.returncode == 1
    problems = [(p["file"], p["code"], p["field"]) for p in json.loads(result.stdout)["problems"]]
    assert problems == [
        ("bad.json", "out_of_range", "steps[0].keepRecent"),
        ("bad.json", "unknown_key", "steps[0].keepOld"),
        ("bad.json", "invalid_choice", "steps[1].field"),
        ("no-limit.json", "clip_without_limit", None),
    ]


def test_policy_check_speaks_french_and_chinese(folder: Path) -> None:
    french = run("policy", "check", "no-limit.json", "--lang", "fr", cwd=folder).stdout
    assert french == (
        "no-limit.json: clip_without_limit: L'étape «\u00a0huge\u00a0» écourte des résultats "
        "d'outils\u00a0: elle a donc besoin de max_chars ou de max_tokens.\n"
    )
    chinese = run("policy", "check", "no-limit.json", "--lang", "zh", cwd=folder).stdout
    assert chinese == (
        "no-limit.json: clip_without_limit: 步骤“huge”截断工具结果，因此需要 max_chars 或 "
        "max_tokens。\n"
    )


def test_policy_audit_runs_clear_and_clip_which_need_nothing_from_the_application(
    folder: Path,
) -> None:
    history = [{"role": "user", "content": "Read both pages."}]
    for number in range(4):
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{number}",
                        "type": "function",
                        "function": {"name": "read", "arguments": "{}"},
                    }
                ],
            }
        )
        history.append({"role": "tool", "tool_call_id": f"c{number}", "content": "x" * 9_000})
    (folder / "history.json").write_text(json.dumps(history), encoding="utf-8")
    result = run(
        "policy", "audit", "good.json", "--history", "history.json", "--format", "json", cwd=folder
    )
    payload = json.loads(result.stdout)
    assert payload["skipped_steps"] == []
    changes = payload["report"]["changes"]
    assert [(change["id"], change["kind"]) for change in changes] == [
        ("huge", "clip"),
        ("old", "clear"),
        ("units", "trim"),
    ]
    assert payload["report"]["target_met"] is True
