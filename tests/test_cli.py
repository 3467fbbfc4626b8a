"""The ``contextwise`` command, run as the installed console script in a subprocess."""

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

pytestmark = pytest.mark.skipif(
    SCRIPT is None, reason="the console script is installed by `pip install -e .` (make test)"
)

GOOD = {
    "$schema": "https://example.org/context-policy.schema.json",
    "mode": "reduce",
    "triggerChars": 60,
    "targetInputChars": 50,
    "steps": [
        {"id": "turns", "kind": "trim", "fragmentId": "history", "keepGroups": 1},
        {"id": "summary", "kind": "compress", "fragmentId": "history", "compressor": "sum"},
    ],
}
BAD = {"mode": "reduce", "triggerChars": "60", "colour": "blue"}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", check=False
    )


def history() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for n in range(4):
        messages += [
            {"role": "user", "content": f"Question {n}?"},
            {"role": "assistant", "content": f"Answer {n}."},
        ]
    return messages


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "bad.json").write_text(json.dumps(BAD), encoding="utf-8")
    (tmp_path / "broken.toml").write_text('mode = "reduce"\ntrigger_chars = \n', encoding="utf-8")
    (tmp_path / "history.json").write_text(json.dumps(history()), encoding="utf-8")
    return tmp_path


def test_check_prints_one_line_per_problem_with_its_code_and_exits_1(folder: Path) -> None:
    result = run("policy", "check", "good.json", "bad.json", "broken.toml", "none.json", cwd=folder)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines == [
        "good.json: no problem found.",
        "bad.json: wrong_type: triggerChars must be of type integer, got '60'.",
        "bad.json: unknown_key: colour is not a known key; the known keys here are mode, "
        "trigger_chars, target_input_chars, trigger_tokens, target_input_tokens, selection, "
        "steps, and optional_fragments.",
        "broken.toml: invalid_toml: The policy text is not valid TOML. Detail: Invalid value "
        "(at line 2, column 17)",
        "none.json: unreadable_file: The file 'none.json' cannot be read. Detail: No such file "
        "or directory",
    ]


def test_check_exits_0_when_every_file_is_valid(folder: Path) -> None:
    result = run("policy", "check", "good.json", cwd=folder)
    assert (result.returncode, result.stdout) == (0, "good.json: no problem found.\n")


@pytest.mark.parametrize("lang", ["fr", "zh"])
def test_check_speaks_french_and_chinese(folder: Path, lang: str) -> None:
    english = run("policy", "check", "bad.json", cwd=folder).stdout.splitlines()
    translated = run("policy", "check", "bad.json", "--lang", lang, cwd=folder).stdout.splitlines()
    assert len(translated) == len(english) == 2
    for line, original in zip(translated, english, strict=True):
        assert line != original
        assert line.split(": ")[:2] == original.split(": ")[:2]  # the file and the code stay


def test_check_writes_json_for_ci(folder: Path) -> None:
    result = run("policy", "check", "bad.json", "good.json", "--format", "json", cwd=folder)
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload["files"] == ["bad.json", "good.json"]
    assert [(p["file"], p["code"], p["field"]) for p in payload["problems"]] == [
        ("bad.json", "wrong_type", "triggerChars"),
        ("bad.json", "unknown_key", "colour"),
    ]
    assert payload["problems"][0]["params"]["value"] == "'60'"


def test_audit_prints_a_table_of_what_reduce_would_change(folder: Path) -> None:
    result = run("policy", "audit", "good.json", "--history", "history.json", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Policy good.json: 89 characters before, 29 after; target met: yes."
    assert "summary" in lines[1]  # the compress step needs the application's compressor
    header, row = lines[-2].split(), lines[-1].split()
    assert header[:4] == ["Step", "Kind", "Fragment", "Status"]
    assert row == ["turns", "trim", "history", "applied", "89", "29", "6", "60", "0"]


def test_audit_writes_the_report_as_json(folder: Path) -> None:
    result = run(
        "policy", "audit", "good.json", "--history", "history.json", "--format", "json",
        cwd=folder,
    )
    payload = json.loads(result.stdout)
    assert payload["skipped_steps"] == ["summary"]
    report = payload["report"]
    assert (report["mode"], report["before_chars"], report["after_chars"]) == ("audit", 89, 29)
    assert report["target_met"] is True and report["shortfall_chars"] == 0


def test_audit_of_an_invalid_policy_lists_its_problems_and_exits_1(folder: Path) -> None:
    result = run("policy", "audit", "bad.json", "--history", "history.json", cwd=folder)
    assert result.returncode == 1
    assert [line.split(": ")[1] for line in result.stdout.splitlines()] == [
        "wrong_type",
        "unknown_key",
    ]


def test_schema_prints_the_policy_json_schema(folder: Path) -> None:
    result = run("schema", cwd=folder)
    assert result.returncode == 0
    assert json.loads(result.stdout) == context_policy_json_schema()


def test_usage_errors_exit_2(folder: Path) -> None:
    assert run("policy", "check", cwd=folder).returncode == 2
    assert run("policy", "audit", "good.json", cwd=folder).returncode == 2
