"""The ``contextwise`` command: check policy files, audit a policy on a history, print the schema.

    contextwise policy check FILE... [--lang fr|zh] [--format text|json]
    contextwise policy audit FILE --history HISTORY.json [--lang fr|zh] [--format text|json]
    contextwise schema

``policy check`` prints one line per problem, each with its stable code, and exits with 1 when
any file has a problem: a CI job runs it on every policy file. ``policy audit`` runs the policy in
``audit`` mode on the fragments of a history file and prints what ``reduce`` would change.
``schema`` prints the JSON Schema of policy files. The command needs nothing beyond the library.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from contextwise.errors import ContextwiseError, InvalidTypeError, PolicyConfigurationError
from contextwise.i18n import N_, SUPPORTED_LOCALES, Locale, Message, normalize_locale, translate
from contextwise.policy import (
    ClearStep,
    ClipStep,
    ContextPolicy,
    ContextProcessingReport,
    Fragment,
    TrimStep,
    context_policy_json_schema,
    process_context,
)
from contextwise.policy.fragments import coerce_fragments
from contextwise.policy.model import token_limits
from contextwise.tokens import EstimateCounter

EXIT_OK = 0
"""The exit status when every file is valid."""

EXIT_PROBLEMS = 1
"""The exit status when a file has a problem."""

_NO_PROBLEM = N_("{path}: no problem found.")
_SKIPPED = N_(
    "Skipped steps, which need the application's compressors or apps: {steps}."
)
_ESTIMATED = N_("Tokens are estimated with the built-in estimate counter.")
_SUMMARY = N_(
    "Policy {path}: {before} characters before, {after} after; target met: {met}."
)
_SHORTFALL = N_("Shortfall: {chars} characters, {tokens} tokens above the targets.")
_YES = N_("yes")
_NO = N_("no")
_NO_CHANGE = N_("No change: the context is within the policy's triggers.")
_HEADERS: tuple[Message, ...] = (
    N_("Step"),
    N_("Kind"),
    N_("Fragment"),
    N_("Status"),
    N_("Before"),
    N_("After"),
    N_("Removed messages"),
    N_("Removed characters"),
    N_("Added messages"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``contextwise`` command.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when omitted.

    Returns:
        The exit status: 0 when everything is valid, 1 when a file has a problem.

    Examples:
        >>> import json, pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> policy = {"mode": "reduce", "triggerChar": 1}
        >>> _ = (folder / "policy.json").write_text(json.dumps(policy))
        >>> import contextlib, io
        >>> printed = io.StringIO()
        >>> with contextlib.redirect_stdout(printed):
        ...     status = main(["policy", "check", str(folder / "policy.json")])
        >>> status, printed.getvalue().split(": ")[1]
        (1, 'unknown_key')
    """
    args = _parser().parse_args(argv)
    out: TextIO = sys.stdout
    if args.command == "schema":
        out.write(json.dumps(context_policy_json_schema(), indent=2, ensure_ascii=False) + "\n")
        return EXIT_OK
    locale = normalize_locale(args.lang)
    if args.policy_command == "check":
        return _check(args.files, locale, args.format, out)
    return _audit(args.file, args.history, locale, args.format, out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contextwise", description="Check and audit contextwise policy files."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    policy = commands.add_parser("policy", help="check or audit policy files")
    policy_commands = policy.add_subparsers(dest="policy_command", required=True)
    check = policy_commands.add_parser("check", help="report every problem of policy files")
    check.add_argument("files", nargs="+", metavar="FILE", help="a .json or .toml policy file")
    audit = policy_commands.add_parser(
        "audit", help="report what the policy would change on a history"
    )
    audit.add_argument("file", metavar="FILE", help="a .json or .toml policy file")
    audit.add_argument(
        "--history",
        required=True,
        metavar="HISTORY.json",
        help="a JSON list of fragments, an object with a 'fragments' list, or a list of messages",
    )
    for sub in (check, audit):
        sub.add_argument(
            "--lang", default="en", choices=SUPPORTED_LOCALES, help="the language of messages"
        )
        sub.add_argument("--format", default="text", choices=("text", "json"))
    commands.add_parser("schema", help="print the JSON Schema of policy files")
    return parser


def load_policy(path: str) -> ContextPolicy:
    """Read a policy file, turning an unreadable file into a coded error.

    Args:
        path: The path of a ``.json`` or ``.toml`` policy file.

    Returns:
        The validated policy.

    Raises:
        PolicyConfigurationError: When the file cannot be read (code ``unreadable_file``) or
            does not hold a valid policy.
    """
    try:
        return ContextPolicy.from_file(path)
    except OSError as exc:
        raise PolicyConfigurationError(
            "unreadable_file", path=path, detail=exc.strerror or type(exc).__name__
        ) from None


def _problem_record(path: str, problem: ContextwiseError, locale: Locale) -> dict[str, Any]:
    return {
        "file": path,
        "code": problem.code,
        "field": problem.params.get("field"),
        "message": problem.render(locale),
        "params": problem.params,
    }


def _check(files: Sequence[str], locale: Locale, form: str, out: TextIO) -> int:
    records: list[dict[str, Any]] = []
    lines: list[str] = []
    for path in files:
        try:
            load_policy(path)
        except ContextwiseError as err:
            for problem in err.problems:
                records.append(_problem_record(path, problem, locale))
                lines.append(f"{path}: {problem.code}: {_own_message(problem, locale)}")
        else:
            lines.append(translate(_NO_PROBLEM, {"path": path}, locale))
    if form == "json":
        payload = {"ok": not records, "files": list(files), "problems": records}
        out.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        out.write("".join(f"{line}\n" for line in lines))
    return EXIT_PROBLEMS if records else EXIT_OK


def _own_message(problem: ContextwiseError, locale: Locale) -> str:
    # The line lists every problem, so each one's message is shown without the "N more" note.
    single = type(problem)(
        problem.code, locale=locale, detail=problem.detail, **problem.params
    )
    return single.render(locale)


def load_history(path: str, policy: ContextPolicy) -> list[Fragment]:
    """Read the fragments of a history file.

    The file holds a JSON list of fragments (``{"id": ..., "messages": [...]}`` or ``"text"``),
    an object with such a ``fragments`` list, or a plain list of chat messages, which becomes the
    one fragment the policy's steps name (``history`` when they name none or several).

    Args:
        path: The path of the JSON history file.
        policy: The policy, whose steps name the fragments.

    Returns:
        The fragments.

    Raises:
        PolicyConfigurationError: When the file cannot be read (code ``unreadable_file``) or is
            not valid JSON (code ``invalid_json``).
        InvalidTypeError: When the file holds something else (code ``not_a_history``).
    """
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyConfigurationError(
            "unreadable_file", path=path, detail=exc.strerror or type(exc).__name__
        ) from None
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", 0)
        raise PolicyConfigurationError(
            "invalid_json", line=line, column=column, detail=str(exc)
        ) from None
    if isinstance(data, dict) and isinstance(data.get("fragments"), list):
        data = data["fragments"]
    if not isinstance(data, list):
        raise InvalidTypeError("not_a_history", path=path, type_name=type(data).__name__)
    if data and all(isinstance(item, dict) and "role" in item for item in data):
        named = {step.fragment_id for step in policy.steps}
        fragment_id = named.pop() if len(named) == 1 else "history"
        return [Fragment(fragment_id, messages=data)]
    return coerce_fragments(data)


_RUNNABLE = (TrimStep, ClearStep, ClipStep)
"""The steps that need nothing from the application, which the command runs."""


def runnable(policy: ContextPolicy) -> tuple[ContextPolicy, list[str]]:
    """The policy in ``audit`` mode with only the steps the command can run, and those it skips.

    Compress and app steps call functions that only the application has, so the command leaves
    them out (and a fixed selection skips their ids); a ``model`` selection, which needs a
    decision provider, runs as ``sequence``.

    Args:
        policy: The policy read from the file.

    Returns:
        The policy to run, and the ids of the skipped steps.
    """
    kept = [step for step in policy.steps if isinstance(step, _RUNNABLE)]
    skipped = [step.id for step in policy.steps if not isinstance(step, _RUNNABLE)]
    selection: dict[str, Any] = policy.selection.model_dump()
    if selection["mode"] == "fixed":
        ids = [step_id for step_id in selection["steps"] if step_id not in skipped]
        selection = {"mode": "fixed", "steps": ids} if ids else {"mode": "sequence"}
    elif selection["mode"] == "model":
        selection = {"mode": "sequence"}
    data = policy.model_dump(exclude={"steps", "selection"})
    data.update(mode="audit", selection=selection, steps=[step.model_dump() for step in kept])
    return ContextPolicy.model_validate(data), skipped


def _audit(path: str, history: str, locale: Locale, form: str, out: TextIO) -> int:
    try:
        policy = load_policy(path)
        fragments = load_history(history, policy)
        audited, skipped = runnable(policy)
        counter = EstimateCounter() if token_limits(audited) else None
        report = process_context(audited, fragments, counter=counter).report
    except ContextwiseError as err:
        return _check_failed(path, err, locale, form, out)
    if form == "json":
        payload = {
            "file": path,
            "skipped_steps": skipped,
            "estimated_tokens": counter is not None,
            "report": report.model_dump(mode="json"),
        }
        out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(render_table(path, report, skipped, counter is not None, locale))
    return EXIT_OK


def _check_failed(path: str, err: ContextwiseError, locale: Locale, form: str, out: TextIO) -> int:
    if form == "json":
        records = [_problem_record(path, problem, locale) for problem in err.problems]
        payload = {"ok": False, "files": [path], "problems": records}
        out.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        out.write(
            "".join(
                f"{path}: {problem.code}: {_own_message(problem, locale)}\n"
                for problem in err.problems
            )
        )
    return EXIT_PROBLEMS


def render_table(
    path: str,
    report: ContextProcessingReport,
    skipped: Sequence[str],
    estimated: bool,
    locale: Locale,
) -> str:
    """Render an audit report as a readable text table in a locale.

    Args:
        path: The policy file, named in the summary line.
        report: The audit report.
        skipped: The ids of the steps the command could not run.
        estimated: Whether tokens were counted with the estimate counter.
        locale: The language of the labels.

    Returns:
        The summary lines and one row per change, ending with a newline.
    """
    met = translate(_YES if report.target_met else _NO, {}, locale)
    lines = [
        translate(
            _SUMMARY,
            {"path": path, "before": report.before_chars, "after": report.after_chars, "met": met},
            locale,
        )
    ]
    if not report.target_met:
        lines.append(
            translate(
                _SHORTFALL,
                {"chars": report.shortfall_chars, "tokens": report.shortfall_tokens},
                locale,
            )
        )
    if skipped:
        lines.append(translate(_SKIPPED, {"steps": list(skipped)}, locale))
    if estimated:
        lines.append(translate(_ESTIMATED, {}, locale))
    if not report.changes:
        lines.append(translate(_NO_CHANGE, {}, locale))
        return "".join(f"{line}\n" for line in lines)
    rows = [[translate(header, {}, locale) for header in _HEADERS]]
    for change in report.changes:
        rows.append(
            [
                change.id,
                change.kind,
                change.fragment_id,
                change.status,
                str(change.before_chars),
                str(change.after_chars),
                str(change.removed_messages),
                str(change.removed_chars),
                str(change.added_messages),
            ]
        )
    lines.append("")
    lines.extend(_align_columns(rows))
    return "".join(f"{line}\n" for line in lines)


def _align_columns(rows: list[list[str]]) -> list[str]:
    widths = [max(_width(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  ".join(cell + " " * (widths[index] - _width(cell)) for index, cell in enumerate(row))
        .rstrip()
        for row in rows
    ]


def _width(text: str) -> int:
    # Chinese characters take two columns in a terminal.
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
