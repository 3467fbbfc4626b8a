"""The ``contextwise`` command, run as the installed console script in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contextwise import context_policy_json_schema
from contextwise.cli import FILE_SIZE_LIMIT

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


LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")


def run(
    *args: str, cwd: Path, locale: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command in an environment without a locale (English), or with ``locale``'s
    variables (``{"LANG": "fr_FR.UTF-8"}``)."""
    assert SCRIPT is not None
    env = {key: value for key, value in os.environ.items() if key not in LOCALE_VARIABLES}
    return subprocess.run(
        [SCRIPT, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", check=False,
        env={**env, **(locale or {})},
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


# what argparse writes (help, usage line, usage errors) in the command's language (issue 32)
SAID = {
    "en": {
        "usage": "usage: contextwise policy check",
        "help": "show this help message and exit",
        "file": "a .json or .toml policy file",
        "heading": "\noptions:\n",
        "missing": "contextwise policy check: error: the following arguments are required: FILE",
        "unknown": "contextwise: error: unrecognized arguments: --colour",
        "choice": "argument --lang: invalid choice: 'de'",
    },
    "fr": {
        "usage": "utilisation\u00a0: contextwise policy check",
        "help": "afficher ce message d'aide et quitter",
        "file": "un fichier de politique .json ou .toml",
        "heading": "\noptions\u00a0:\n",
        "missing": "contextwise policy check\u00a0: erreur\u00a0: les arguments suivants sont "
        "obligatoires\u00a0: FILE",
        "unknown": "contextwise\u00a0: erreur\u00a0: arguments non reconnus\u00a0: --colour",
        "choice": "argument --lang\u00a0: choix non valide\u00a0: 'de'",
    },
    "zh": {
        "usage": "用法：contextwise policy check",
        "help": "显示此帮助信息并退出",
        "file": ".json 或 .toml 策略文件",
        "heading": "\n选项：\n",
        "missing": "contextwise policy check：错误：缺少以下必需参数：FILE",
        "unknown": "contextwise：错误：无法识别的参数：--colour",
        "choice": "参数 --lang：无效的取值：'de'",
    },
}


def said(folder: Path, *args: str, locale: dict[str, str] | None = None) -> dict[str, str]:
    """What the command writes, in one language, for help, a missing argument, an unknown option
    and a wrong choice (``args`` choose the language: ``--lang fr`` or nothing)."""
    help_text = run("policy", "check", *args, "--help", cwd=folder, locale=locale)
    missing = run("policy", "check", *args, cwd=folder, locale=locale)
    unknown = run("policy", "check", "good.json", *args, "--colour", cwd=folder, locale=locale)
    assert help_text.returncode == 0 and {missing.returncode, unknown.returncode} == {2}
    found = {"help": help_text.stdout, "missing": missing.stderr, "unknown": unknown.stderr}
    if not args:  # an unsupported --lang: the environment's language says so
        wrong = run("policy", "check", "good.json", "--lang", "de", cwd=folder, locale=locale)
        found["choice"] = wrong.stderr
    return found


def assert_says(output: dict[str, str], lang: str) -> None:
    words = SAID[lang]
    assert output["help"].startswith(words["usage"])
    for key in ("help", "file", "heading"):
        assert words[key] in output["help"], (key, output["help"])
    assert output["missing"].startswith(words["usage"])
    assert output["missing"].rstrip("\n").endswith(words["missing"])
    assert words["unknown"] in output["unknown"]
    assert words["choice"] in output.get("choice", words["choice"])
    if lang != "en":  # nothing of argparse's English is left
        for key in ("help", "file", "missing", "unknown"):
            assert SAID["en"][key] not in " ".join(output.values())


@pytest.mark.parametrize("lang", ["fr", "zh"])
def test_help_usage_and_usage_errors_speak_the_lang_option(folder: Path, lang: str) -> None:
    assert_says(said(folder, "--lang", lang), lang)
    # the language is read wherever --lang stands, in any spelling of it
    late = run("policy", "check", "--help", f"--lang={lang}_FR", cwd=folder)
    assert late.stdout.startswith(SAID[lang]["usage"])


@pytest.mark.parametrize(
    ("lang", "locale"),
    [
        ("fr", {"LANG": "fr_FR.UTF-8"}),
        ("zh", {"LC_ALL": "zh_CN.UTF-8", "LANG": "fr_FR.UTF-8"}),  # LC_ALL wins, as in POSIX
        ("fr", {"LC_MESSAGES": "fr_CA.UTF-8", "LANG": "zh_CN.UTF-8"}),
    ],
)
def test_help_usage_errors_and_problems_speak_the_environments_locale(
    folder: Path, lang: str, locale: dict[str, str]
) -> None:
    assert_says(said(folder, locale=locale), lang)
    problems = run("policy", "check", "bad.json", cwd=folder, locale=locale).stdout
    assert problems == run("policy", "check", "bad.json", "--lang", lang, cwd=folder).stdout
    # --lang wins over the environment
    english = run("policy", "check", "bad.json", "--lang", "en", cwd=folder, locale=locale)
    assert english.stdout == run("policy", "check", "bad.json", cwd=folder).stdout


@pytest.mark.parametrize("locale", [None, {"LANG": "C.UTF-8"}, {"LC_ALL": "de_DE.UTF-8"}])
def test_help_and_usage_errors_stay_english_without_a_supported_locale(
    folder: Path, locale: dict[str, str] | None
) -> None:
    assert_says(said(folder, locale=locale), "en")


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
        "policy",
        "audit",
        "good.json",
        "--history",
        "history.json",
        "--format",
        "json",
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


def run_bytes(*args: bytes | str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the command with arguments that may not be UTF-8, and keep its output as bytes."""
    assert SCRIPT is not None
    return subprocess.run([SCRIPT, *args], cwd=cwd, capture_output=True, check=False, timeout=120)


def test_a_fifo_a_device_or_a_directory_is_a_coded_problem_never_a_wait(folder: Path) -> None:
    os.mkfifo(folder / "pipe.json")
    (folder / "dir.json").mkdir()
    (folder / "zero.toml").symlink_to("/dev/zero")
    result = run("policy", "check", "pipe.json", "zero.toml", "dir.json", cwd=folder)
    assert result.returncode == 1
    assert [line.split(": ")[:2] for line in result.stdout.splitlines()] == [
        ["pipe.json", "not_a_regular_file"],
        ["zero.toml", "not_a_regular_file"],
        ["dir.json", "not_a_regular_file"],
    ]
    audit = run("policy", "audit", "good.json", "--history", "pipe.json", cwd=folder)
    assert (audit.returncode, audit.stdout.split(": ")[1]) == (1, "not_a_regular_file")
    assert "Traceback" not in result.stderr + audit.stderr


def test_a_file_over_the_size_limit_is_not_read(folder: Path) -> None:
    with (folder / "huge.json").open("wb") as handle:
        handle.truncate(FILE_SIZE_LIMIT + 1)
    result = run("policy", "check", "huge.json", cwd=folder)
    assert result.returncode == 1
    assert result.stdout.split(": ")[:2] == ["huge.json", "file_too_large"]
    assert f"{FILE_SIZE_LIMIT:,}" in result.stdout


def test_file_names_that_are_not_utf8_or_hold_control_characters_are_printed_escaped(
    folder: Path,
) -> None:
    names = [b"caf\xe9.json", b"red\x1b[31m.json", b"line\nbreak.json"]
    for name in names:
        (folder / os.fsdecode(name)).write_text(json.dumps(BAD), encoding="utf-8")
    result = run_bytes("policy", "check", *names, cwd=folder)
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    files = [line.split(b": ")[0] for line in result.stdout.splitlines()]
    assert files == [b"caf\\xe9.json"] * 2 + [b"red\\x1b[31m.json"] * 2 + [b"line\\nbreak.json"] * 2
    as_json = run_bytes("policy", "check", *names, "--format", "json", cwd=folder)
    payload = json.loads(as_json.stdout)
    assert payload["files"] == ["caf\\xe9.json", "red\\x1b[31m.json", "line\\nbreak.json"]


def test_a_history_of_responses_items_is_audited_and_unknown_items_are_problems(
    folder: Path,
) -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": "Look up the weather in Paris."},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "Sunny, " + "warm " * 20},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is sunny."}],
        },
        {"type": "message", "role": "user", "content": "And tomorrow?"},
    ]
    (folder / "items.json").write_text(json.dumps(items), encoding="utf-8")
    result = run("policy", "audit", "good.json", "--history", "items.json", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].split()[:4] == ["turns", "trim", "history", "applied"]
    (folder / "odd.json").write_text(
        json.dumps([*items, {"type": "tool_search_call", "id": "t1"}]), encoding="utf-8"
    )
    odd = run("policy", "audit", "good.json", "--history", "odd.json", cwd=folder)
    assert odd.returncode == 1
    assert odd.stdout.split(": ")[1] == "unknown_message_type"


def test_a_history_nested_too_deep_is_a_coded_problem(folder: Path) -> None:
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = run("policy", "audit", "good.json", "--history", "deep.json", cwd=folder)
    assert (result.returncode, result.stdout.split(": ")[1]) == (1, "too_deep")
    assert "Traceback" not in result.stderr


def test_an_internal_error_exits_3_with_a_coded_line_and_no_traceback(folder: Path) -> None:
    code = (
        "import sys, contextwise.cli as cli\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('a bug')\n"
        "cli.render_table = broken\n"
        "sys.exit(cli.main(['policy', 'audit', 'good.json', '--history', 'history.json']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, check=False
    )
    assert result.returncode == 3
    assert result.stderr.startswith("contextwise: internal_error: ")
    assert "RuntimeError" in result.stderr and "Traceback" not in result.stderr


def test_a_reader_that_goes_away_gets_no_traceback(folder: Path) -> None:
    assert SCRIPT is not None
    with subprocess.Popen(
        [SCRIPT, "schema"], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(10)
        process.stdout.close()
        errors = process.stderr.read()
        status = process.wait(timeout=120)
    assert status == 0 and b"Traceback" not in errors


def test_audit_reads_the_histories_the_frameworks_save(folder: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, messages_to_dict
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    langchain: list[Any] = []
    pydantic_ai: list[Any] = []
    for n in range(4):
        call = {"name": "weather", "args": {"city": f"City {n}"}, "id": f"c{n}"}
        langchain += [
            HumanMessage(f"Question {n}?"),
            AIMessage("", tool_calls=[call]),
            ToolMessage("Sunny. " * 5, tool_call_id=f"c{n}"),
            AIMessage(f"Answer {n}."),
        ]
        pydantic_ai += [
            ModelRequest(parts=[UserPromptPart(f"Question {n}?")]),
            ModelResponse(
                parts=[ToolCallPart("weather", {"city": f"City {n}"}, tool_call_id=f"c{n}")]
            ),
            ModelRequest(parts=[ToolReturnPart("weather", "Sunny. " * 5, tool_call_id=f"c{n}")]),
            ModelResponse(parts=[TextPart(f"Answer {n}.")]),
        ]
    (folder / "langchain.json").write_text(json.dumps(messages_to_dict(langchain)), "utf-8")
    (folder / "pydantic_ai.json").write_bytes(ModelMessagesTypeAdapter.dump_json(pydantic_ai))
    for name in ("langchain.json", "pydantic_ai.json"):
        result = run(
            "policy", "audit", "good.json", "--history", name, "--format", "json", cwd=folder
        )
        assert result.returncode == 0, result.stdout + result.stderr
        report = json.loads(result.stdout)["report"]
        assert report["before_chars"] > report["after_chars"] > 0, name
        assert report["changes"][0]["status"] == "applied", name


def test_a_problem_in_the_history_names_the_history_file(folder: Path) -> None:
    (folder / "wrong.json").write_text(json.dumps([{"role": "critic", "content": "x"}]), "utf-8")
    result = run("policy", "audit", "good.json", "--history", "wrong.json", cwd=folder)
    assert result.returncode == 1
    assert result.stdout.startswith("wrong.json: unknown_message_role"), result.stdout


def test_version_prints_the_installed_release(folder: Path) -> None:
    from importlib.metadata import version

    import contextwise

    result = run("--version", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"contextwise {version('contextwise')}"
    assert contextwise.__version__ == version("contextwise")
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{contextwise.__version__}"' in pyproject
    # One source: the package reads the metadata, it never spells the release itself.
    init = (Path(__file__).parents[1] / "src/contextwise/__init__.py").read_text(encoding="utf-8")
    assert f'"{contextwise.__version__}"' not in init


def _session_export(folder: Path, messages: list[Any]) -> dict[str, Any]:
    """A session's messages as its SQLite store keeps them (the ``data`` column), exported as
    ``{"session_id": ..., "messages": [...]}``."""
    import sqlite3

    from contextwise import ContextSession, SQLiteStore

    store = SQLiteStore(str(folder / "sessions.db"))
    ContextSession({"mode": "audit"}, store, "chat-1").add(messages)
    store.close()
    with sqlite3.connect(folder / "sessions.db") as db:
        rows = db.execute(
            "SELECT data FROM contextwise_messages WHERE session_id = ? AND change_id IS NULL "
            "ORDER BY position, item_id",
            ("chat-1",),
        ).fetchall()
    return {"session_id": "chat-1", "messages": [json.loads(data) for (data,) in rows]}


def test_audit_reads_a_session_export_with_framework_messages(folder: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    messages: list[Any] = [{"role": "system", "content": "Be brief."}]
    for n in range(3):
        messages += [
            HumanMessage(f"Question {n}?"),
            AIMessage(f"Answer {n}. " * 5),
            ModelRequest(parts=[UserPromptPart(f"Again {n}?")]),
            ModelResponse(parts=[TextPart(f"Again answered {n}. " * 5)]),
            {"role": "user", "content": f"Plain {n}."},
        ]
    export = _session_export(folder, messages)
    envelopes = [m for m in export["messages"] if "__contextwise__" in m]
    assert len(envelopes) == 12  # the store keeps each framework message in an envelope
    (folder / "export.json").write_text(json.dumps(export), "utf-8")
    result = run(
        "policy", "audit", "good.json", "--history", "export.json", "--format", "json",
        cwd=folder,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)["report"]
    assert report["before_chars"] > report["after_chars"] > 0
    assert report["changes"][0]["status"] == "applied"


def test_a_bad_message_in_a_session_export_names_the_export_file(folder: Path) -> None:
    export = _session_export(folder, history())
    export["messages"].insert(1, {"__contextwise__": "crewai", "message": {"text": "?"}})
    (folder / "export.json").write_text(json.dumps(export), "utf-8")
    for lang in ("en", "fr"):
        result = run(
            "policy", "audit", "good.json", "--history", "export.json", "--lang", lang,
            cwd=folder,
        )
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.startswith("export.json: missing_message_role: "), result.stdout
        assert "1" in result.stdout.split(": ", 2)[2]  # the message's index in the export
        assert "good.json" not in result.stdout


# --- every environment: huge numbers, ASCII terminals, closed or full outputs, Ctrl-C ----------


def test_a_toml_integer_too_long_to_convert_is_a_coded_problem(folder: Path) -> None:
    (folder / "huge.toml").write_text(
        f'mode = "reduce"\ntrigger_chars = {"9" * 5001}\n', encoding="utf-8"
    )
    check = run("policy", "check", "huge.toml", cwd=folder)
    assert (check.returncode, check.stdout.split(": ")[:2]) == (1, ["huge.toml", "invalid_toml"])
    audit = run("policy", "audit", "huge.toml", "--history", "history.json", cwd=folder)
    assert (audit.returncode, audit.stdout.split(": ")[:2]) == (1, ["huge.toml", "invalid_toml"])
    assert check.stderr == audit.stderr == ""


def run_ascii(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the command with an output that can only encode ASCII."""
    assert SCRIPT is not None
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    return subprocess.run([SCRIPT, *args], cwd=cwd, env=env, capture_output=True, check=False)


@pytest.mark.parametrize("lang", ["fr", "zh"])
def test_french_or_chinese_on_an_ascii_output_is_escaped(folder: Path, lang: str) -> None:
    text = run_ascii("policy", "check", "bad.json", "--lang", lang, cwd=folder)
    assert (text.returncode, text.stderr) == (1, b"")
    assert text.stdout.isascii()
    readable = run("policy", "check", "bad.json", "--lang", lang, cwd=folder).stdout
    assert text.stdout.decode("ascii") == readable.encode("ascii", "backslashreplace").decode()
    as_json = run_ascii(
        "policy", "check", "bad.json", "--lang", lang, "--format", "json", cwd=folder
    )
    assert as_json.returncode == 1 and as_json.stdout.isascii()
    readable_json = run(
        "policy", "check", "bad.json", "--lang", lang, "--format", "json", cwd=folder
    )
    assert json.loads(as_json.stdout) == json.loads(readable_json.stdout)  # ASCII JSON, same data
    table = run_ascii(
        "policy", "audit", "good.json", "--history", "history.json", "--lang", lang, cwd=folder
    )
    assert (table.returncode, table.stderr) == (0, b"") and table.stdout.isascii()


OUTPUT_FAILED = "contextwise: output_failed: "


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
@pytest.mark.parametrize(
    "command",
    ["schema", "policy check good.json", "policy check bad.json", "--version", "--help"],
)
def test_a_closed_or_full_output_exits_2_with_one_line(
    folder: Path, redirect: str, command: str
) -> None:
    if redirect == "> /dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    assert SCRIPT is not None
    result = subprocess.run(
        f"'{SCRIPT}' {command} {redirect}",
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(OUTPUT_FAILED), result.stderr
    assert ("closed" if redirect == ">&-" else "No space left on device") in lines[0]


def test_a_closed_output_and_error_output_exit_2_silently(folder: Path) -> None:
    assert SCRIPT is not None
    result = subprocess.run(
        f"'{SCRIPT}' schema >&- 2>&-", shell=True, cwd=folder, capture_output=True, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (2, b"", b"")


PAUSE_HOOK = '''
"""Pause the process at one moment (an import, or the opening of a file), so that a test sends a
signal exactly then: CONTEXTWISE_TEST_PAUSE is "import:<module>" or "open:<end of a path>", and
"paused" is written to the file descriptor CONTEXTWISE_TEST_PAUSE_FD when the moment comes."""

import os
import sys
import time

EVENT, _, TARGET = os.environ.get("CONTEXTWISE_TEST_PAUSE", "").partition(":")
paused = []


def pause(event, args):
    if paused or event != EVENT:
        return
    if event == "import" and args[0] != TARGET:
        return
    if event == "open" and not (isinstance(args[0], str) and args[0].endswith(TARGET)):
        return
    paused.append(True)
    os.write(int(os.environ["CONTEXTWISE_TEST_PAUSE_FD"]), b"paused\\n")
    deadline = time.monotonic() + 60  # a bound, should the signal never come
    while time.monotonic() < deadline:
        time.sleep(0.01)


if EVENT:
    sys.addaudithook(pause)
'''


def interrupted_at(moment: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the command, pause it at a moment, send it SIGINT there, and let it finish."""
    assert SCRIPT is not None
    hooks = folder / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(PAUSE_HOOK, encoding="utf-8")
    read, write = os.pipe()
    env = {
        **os.environ,
        "PYTHONPATH": str(hooks),
        "CONTEXTWISE_TEST_PAUSE": moment,
        "CONTEXTWISE_TEST_PAUSE_FD": str(write),
    }
    command = [SCRIPT, *args]
    with subprocess.Popen(
        command,
        cwd=folder,
        env=env,
        pass_fds=(write,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        os.close(write)
        with os.fdopen(read, "rb") as said:
            paused = said.readline()  # returns once paused, or empty if the moment never came
        if paused == b"paused\n":
            process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert paused == b"paused\n", f"the command never reached {moment}: {stderr}"
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


AUDIT = ("policy", "audit", "good.json", "--history", "history.json")


@pytest.mark.parametrize(
    "moment",
    [
        "import:contextwise",  # the package starts to load
        "import:contextwise.session._sql",  # in the middle of the package's import
        "import:contextwise.cli",  # the package loaded, the command's module next
        "open:good.json",  # the command runs: it opens the policy file
        "open:history.json",  # and then the history
    ],
)
def test_ctrl_c_at_any_moment_exits_130_with_one_line(folder: Path, moment: str) -> None:
    result = interrupted_at(moment, folder, *AUDIT)
    assert result.returncode == 130
    assert result.stderr.splitlines() == [
        "contextwise: interrupted: The command was stopped (Ctrl-C)."
    ]
    assert result.stdout == ""


def test_ctrl_c_speaks_the_commands_language_once_it_runs(folder: Path) -> None:
    result = interrupted_at("open:good.json", folder, *AUDIT, "--lang", "fr")
    assert result.returncode == 130
    assert result.stderr == "contextwise: interrupted: La commande a été interrompue (Ctrl-C).\n"
