"""The ``contextwise`` command: check policy files, audit a policy on a history, print the schema.

    contextwise policy check FILE... [--lang fr|zh] [--format text|json]
    contextwise policy audit FILE --history HISTORY.json [--lang fr|zh] [--format text|json]
    contextwise schema
    contextwise --version

``policy check`` prints one line per problem, each with its stable code, and exits with 1 when
any file has a problem: a CI job runs it on every policy file. ``policy audit`` runs the policy in
``audit`` mode on the fragments of a history file (a framework's saved history or a session
export included) and prints what ``reduce`` would change.
``schema`` prints the JSON Schema of policy files. The command needs nothing beyond the library.

It speaks the language that ``--lang`` names or, without it, the environment's locale
(``LC_ALL``, ``LC_MESSAGES`` or ``LANG``, the first one set; English for any other language): its
messages, its help, its usage line and argparse's usage errors, all from the catalog.

It never prints a traceback: a problem is a line with its code. The exit status is 0 when every
file is valid, 1 when a file has a problem, 2 when the command cannot run as asked (a wrong
command line, as argparse reports it, or an output it cannot write: closed, or on a full disk),
130 after a Ctrl-C, at any moment, and 3 only for an internal error, a bug to report. It reads
only regular files of at most :data:`FILE_SIZE_LIMIT` bytes (a FIFO or a device is a coded
problem, never a wait), and prints file names with control characters or bytes that are not
UTF-8 escaped. Characters that the output's encoding cannot show (French or Chinese on an ASCII
terminal) are written as escapes (``\\xe9``, ``\\u4e0a``), and JSON output is then ASCII JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final, NoReturn, TextIO

from contextwise import __version__
from contextwise._checks import MAX_DEPTH, too_deep
from contextwise._translation import N_, Message, match_locale, short_text
from contextwise.counting import EstimateCounter
from contextwise.errors import (
    ContextwiseError,
    InvalidTypeError,
    PolicyConfigurationError,
    with_problems,
)
from contextwise.i18n import SUPPORTED_LOCALES, Locale, normalize_locale, translate
from contextwise.policy import (
    ClearStep,
    ClipStep,
    ContextPolicy,
    ContextProcessingReport,
    Fragment,
    MessagesFragment,
    TrimStep,
    context_policy_json_schema,
    process_context,
)
from contextwise.policy._api import coerce_fragments, token_limits

EXIT_OK = 0
"""The exit status when every file is valid."""

EXIT_PROBLEMS = 1
"""The exit status when a file has a problem."""

EXIT_USAGE = 2
"""The exit status when the command cannot run as asked: the command line is wrong (argparse's
own status), or the output cannot be written (closed, or on a full disk)."""

EXIT_INTERNAL = 3
"""The exit status when the command failed by a fault of its own: a bug to report."""

EXIT_INTERRUPTED = 130
"""The exit status after a Ctrl-C (128 + SIGINT, as a shell reports it)."""

FILE_SIZE_LIMIT = 16 * 1024 * 1024
"""The largest policy or history file the command reads, in bytes (16 MiB)."""

_NOT_STRINGS = N_("The command's arguments must be strings.")
_INTERNAL = N_(
    "contextwise stopped on an internal error ({error_type}); this is a bug, please report it."
)
_OUTPUT_FAILED = N_("The command could not write its output to the standard output.")
_INTERRUPTED = N_("The command was stopped (Ctrl-C).")

_NO_PROBLEM = N_("{path}: no problem found.")
_SKIPPED = N_("Skipped steps, which need the application's compressors or apps: {steps}.")
_ESTIMATED = N_("Tokens are estimated with the built-in estimate counter.")
_SUMMARY = N_("Policy {path}: {before} characters before, {after} after; target met: {met}.")
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


# The command line's own words: its help, and argparse's usage line, section titles and errors.
_DESCRIPTION = N_("Check and audit contextwise policy files.")
_HELP_POLICY = N_("check or audit policy files")
_HELP_CHECK = N_("report every problem of policy files")
_HELP_AUDIT = N_("report what the policy would change on a history")
_HELP_FILE = N_("a .json or .toml policy file")
_HELP_HISTORY = N_(
    "a JSON list of fragments, an object with a 'fragments' list, a list of messages, or a session "
    "export (an object with a 'messages' list)"
)
_HELP_LANG = N_("the language of messages")
_HELP_SCHEMA = N_("print the JSON Schema of policy files")
_HELP_HELP = N_("show this help message and exit")
_HELP_VERSION = N_("show program's version number and exit")
_USAGE = N_("usage: ")
_POSITIONALS = N_("positional arguments")
_OPTIONALS = N_("options")
_HEADING = N_("{title}:")
_ERROR = N_("{prog}: error: {message}")
# argparse's error messages, in the English that argparse writes: each is read back from
# argparse's text and said again in the command's language (``{message}`` read recursively)
_ARGPARSE_ERRORS: Final = (
    N_("argument {argument}: {message}"),
    N_("the following arguments are required: {arguments}"),
    N_("unrecognized arguments: {arguments}"),
    N_("invalid choice: {value} (choose from {choices})"),
    N_("ambiguous option: {option} could match {matches}"),
    N_("expected one argument"),
    N_("expected at least one argument"),
    N_("expected at most one argument"),
    N_("one of the arguments {arguments} is required"),
    N_("not allowed with argument {argument}"),
    N_("ignored explicit argument {value}"),
)
_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``contextwise`` command.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when omitted.

    Returns:
        The exit status: 0 when everything is valid, 1 when a file has a problem, 2 when the
        command cannot run as asked (a wrong command line, an output it cannot write), 130
        after a Ctrl-C, 3 on an internal error.

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
    locale: Locale = "en"
    try:
        try:
            locale = requested_locale(sys.argv[1:] if argv is None else argv, os.environ)
            args = _parser(locale).parse_args(argv)
        except SystemExit as stop:  # argparse printed the usage error (or the help) itself
            status = stop.code if isinstance(stop.code, int) else EXIT_USAGE
            return _finish(sys.stdout, status, locale)
        except (TypeError, ValueError, AttributeError):  # main() called with arguments not strings
            _say("usage_error", translate(_NOT_STRINGS, {}, locale))
            return EXIT_USAGE
        locale = normalize_locale(getattr(args, "lang", locale))
        stream = sys.stdout
        if stream is None:  # started with its standard output closed (``>&-``)
            raise _OutputFailed(None, "closed")
        return _finish(stream, _run(args, locale, _Output(stream)), locale)
    except _OutputFailed as failed:
        return _output_failed(failed, locale)
    except KeyboardInterrupt:
        _say("interrupted", translate(_INTERRUPTED, {}, locale))
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the command's promise: a coded line, no traceback
        line = translate(_INTERNAL, {"error_type": type(exc).__name__}, locale)
        _say("internal_error", f"{line} ({short_text(exc)})")
        return EXIT_INTERNAL


def _finish(stream: TextIO | None, status: int, locale: Locale) -> int:
    """Flush what the command wrote, so that a full or closed output is reported here, coded,
    rather than by Python's last flush at exit."""
    if stream is not None:
        _Output(stream).flush()
    return status


def _output_failed(failed: _OutputFailed, locale: Locale) -> int:
    """Report an output that cannot be written: nothing to say when the reader went away
    (``| head``), one line on standard error otherwise (a full disk)."""
    if failed.stream is not None:
        _silence(failed.stream)
    if isinstance(failed.__cause__, BrokenPipeError):
        return EXIT_OK
    _say("output_failed", f"{translate(_OUTPUT_FAILED, {}, locale)} ({failed.detail})")
    return EXIT_USAGE


def _say(code: str, message: str) -> None:
    """Write one coded line on standard error, if there is one to write to."""
    try:
        sys.stderr.write(f"contextwise: {code}: {message}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # no standard error: the status says it
        pass


class _OutputFailed(Exception):
    """The command's output cannot be written: a condition of the environment, not a bug."""

    def __init__(self, stream: TextIO | None, error: OSError | ValueError | str) -> None:
        super().__init__(error)
        self.stream = stream
        self.detail = getattr(error, "strerror", None) or short_text(error)


class _Output:
    """The command's standard output: text it cannot encode is escaped (JSON written as ASCII
    JSON), and a failure to write is an :class:`_OutputFailed`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> None:
        """Write text; characters the output cannot encode are written as escapes."""
        try:
            self._write(text)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "utf-8"
            self._write(text.encode(encoding, "backslashreplace").decode(encoding))

    def json(self, payload: object, **options: Any) -> None:
        """Write a JSON document; as ASCII JSON when the output cannot encode the text."""
        try:
            self._write(json.dumps(payload, ensure_ascii=False, indent=2, **options) + "\n")
        except UnicodeEncodeError:
            self._write(json.dumps(payload, ensure_ascii=True, indent=2, **options) + "\n")

    def flush(self) -> None:
        """Push what was written to the output."""
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise _OutputFailed(self._stream, exc) from exc

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
        except UnicodeEncodeError:
            raise
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            raise _OutputFailed(self._stream, exc) from exc


def _run(args: argparse.Namespace, locale: Locale, out: _Output) -> int:
    if args.command == "schema":
        out.json(context_policy_json_schema())
        return EXIT_OK
    if args.policy_command == "check":
        return _check(args.files, locale, args.format, out)
    return _audit(args.file, args.history, locale, args.format, out)


def _silence(out: TextIO) -> None:
    """Point the closed output at nothing, so that Python's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def requested_locale(argv: Sequence[object], environ: Mapping[str, str]) -> Locale:
    """Return the language the command speaks: ``--lang`` when the command line gives a supported
    one, else the environment's locale (``LC_ALL``, then ``LC_MESSAGES``, then ``LANG``, the
    first one set, as POSIX reads them), else English.

    Examples:
        >>> requested_locale(["policy", "check", "p.json", "--lang", "zh"], {"LANG": "fr_FR.UTF-8"})
        'zh'
        >>> requested_locale(["policy", "check", "p.json"], {"LANG": "fr_FR.UTF-8"})
        'fr'
        >>> requested_locale(["schema"], {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"})
        'en'
    """
    words = [word for word in argv if isinstance(word, str)]
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if len(name) > 3 and "--lang".startswith(name):  # argparse takes --lan, --la too
            given = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            if (found := match_locale(given)) is not None:
                return found
    for variable in _LOCALE_VARIABLES:
        if environ.get(variable):
            return match_locale(environ[variable]) or "en"
    return "en"


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, whose usage line starts with the catalog's "usage: " and whose
    section headings end with the language's colon (``options :``, ``选项：``)."""

    def __init__(self, prog: str, locale: Locale = "en") -> None:
        super().__init__(prog)
        self.locale = locale
        self._headings: list[str] = []

    def start_section(self, heading: str | None) -> None:
        """Start a section of the help; its heading is said with the language's colon."""
        if heading:
            self._headings.append(heading)
        super().start_section(heading)

    def format_help(self) -> str:
        """The help text, each section heading followed by the language's colon."""
        lines = super().format_help().split("\n")
        for index, line in enumerate(lines):
            if line.endswith(":") and line[:-1] in self._headings:
                lines[index] = translate(_HEADING, {"title": line[:-1]}, self.locale)
        return "\n".join(lines)

    def add_usage(
        self,
        usage: str | None,
        actions: Any,
        groups: Any,
        prefix: str | None = None,
    ) -> None:
        """Add the usage line, prefixed with "usage: " in the command's language."""
        if prefix is None:
            prefix = translate(_USAGE, {}, self.locale)
        super().add_usage(usage, actions, groups, prefix)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, speaking the command's language, whose help, version and usage errors
    are written like the rest of the output: a failure to write them is reported, where argparse
    would ignore it.

    Its help, section titles, usage line and errors come from the catalog: the errors that
    argparse writes in English are read back against their English messages
    (:data:`_ARGPARSE_ERRORS`) and said again in the command's language.
    """

    def __init__(self, prog: str | None = None, *, locale: Locale = "en", **kwargs: Any) -> None:
        kwargs["add_help"] = False  # the help option is added below, its help translated
        super().__init__(prog, **kwargs)
        self.locale = locale
        titles = {_POSITIONALS.singular: _POSITIONALS, _OPTIONALS.singular: _OPTIONALS}
        for group in self._action_groups:
            if group.title in titles:
                group.title = translate(titles[group.title], {}, locale)
        self.add_argument(
            "-h",
            "--help",
            action="help",
            default=argparse.SUPPRESS,
            help=translate(_HELP_HELP, {}, locale),
        )

    def _get_formatter(self) -> argparse.HelpFormatter:
        return _Formatter(self.prog, self.locale)

    def error(self, message: str) -> NoReturn:
        """Print the usage and the error in the command's language, and exit with status 2."""
        self.print_usage(sys.stderr)
        said = translate(
            _ERROR,
            {"prog": self.prog, "message": argparse_message(message, self.locale)},
            self.locale,
        )
        self.exit(EXIT_USAGE, said + "\n")

    def _print_message(self, message: str, file: Any = None) -> None:
        if file is None and sys.stdout is None:  # the help or the version, to a closed output
            raise _OutputFailed(None, "closed")
        stream = file or sys.stderr
        if message and stream is not None:
            _Output(stream).write(message)


def argparse_message(message: str, locale: Locale) -> str:
    """Return one of argparse's English error messages in a locale (as it is when the catalog
    does not know it).

    Examples:
        >>> argparse_message("the following arguments are required: FILE", "fr")
        'les arguments suivants sont obligatoires\xa0: FILE'
        >>> argparse_message("argument --lang: invalid choice: 'de' (choose from 'en')", "zh")
        "参数 --lang：无效的取值：'de'（可选值：'en'）"
    """
    for template in _ARGPARSE_ERRORS:
        found = _english_pattern(template.singular).fullmatch(message)
        if found is not None:
            params = dict(found.groupdict())
            if "message" in params:
                params["message"] = argparse_message(params["message"], locale)
            return translate(template, params, locale)
    return message


def _english_pattern(english: str) -> re.Pattern[str]:
    """The regular expression that reads a message back: each ``{name}`` is a named group."""
    parts = re.split(r"\{(\w+)\}", english)
    pattern = "".join(
        re.escape(part) if index % 2 == 0 else f"(?P<{part}>.+?)"
        for index, part in enumerate(parts)
    )
    return re.compile(pattern, re.S)


def _parser(locale: Locale = "en") -> argparse.ArgumentParser:
    def say(message: Message) -> str:
        return translate(message, {}, locale)

    parser = _Parser(prog="contextwise", description=say(_DESCRIPTION), locale=locale)
    parser.add_argument(
        "--version",
        action="version",
        version=f"contextwise {__version__}",
        help=say(_HELP_VERSION),
    )
    commands = parser.add_subparsers(dest="command", required=True)
    policy = commands.add_parser("policy", help=say(_HELP_POLICY), locale=locale)
    policy_commands = policy.add_subparsers(dest="policy_command", required=True)
    check = policy_commands.add_parser("check", help=say(_HELP_CHECK), locale=locale)
    check.add_argument("files", nargs="+", metavar="FILE", help=say(_HELP_FILE))
    audit = policy_commands.add_parser("audit", help=say(_HELP_AUDIT), locale=locale)
    audit.add_argument("file", metavar="FILE", help=say(_HELP_FILE))
    audit.add_argument("--history", required=True, metavar="HISTORY.json", help=say(_HELP_HISTORY))
    for sub in (check, audit):
        sub.add_argument("--lang", default=locale, choices=SUPPORTED_LOCALES, help=say(_HELP_LANG))
        sub.add_argument("--format", default="text", choices=("text", "json"))
    commands.add_parser("schema", help=say(_HELP_SCHEMA), locale=locale)
    return parser


def shown_path(path: str) -> str:
    """A file name as the command prints it: control characters, bytes that are not UTF-8 and
    other invisible characters escaped, so that a name can neither break a line nor a terminal.

    Args:
        path: The name, as the command line gave it (undecodable bytes as surrogates).

    Returns:
        The name, with ``\\xNN``-style escapes for those characters.

    Examples:
        >>> shown_path("policy\\n.json"), shown_path("caf\\udce9.json"), shown_path("café.json")
        ('policy\\\\n.json', 'caf\\\\xe9.json', 'café.json')
    """
    shown: list[str] = []
    for char in path:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            shown.append(char.encode("unicode_escape").decode("ascii"))
        else:
            shown.append(char)
    return "".join(shown)


def read_file(path: str, limit: int = FILE_SIZE_LIMIT) -> bytes:
    """Read a regular file of at most ``limit`` bytes, without waiting on anything else.

    The file is opened without blocking and checked once open, so a FIFO, a device or a
    directory is refused at once, and a file that grows past the limit is not read whole.

    Args:
        path: The file.
        limit: The largest size read, in bytes.

    Returns:
        The file's bytes.

    Raises:
        PolicyConfigurationError: When the file cannot be opened (code ``unreadable_file``),
            is not a regular file (code ``not_a_regular_file``) or is larger than ``limit``
            (code ``file_too_large``).
    """
    shown = shown_path(path)
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError) as exc:
        detail = getattr(exc, "strerror", None) or type(exc).__name__
        raise PolicyConfigurationError("unreadable_file", path=shown, detail=detail) from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise PolicyConfigurationError("not_a_regular_file", path=shown)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(handle, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise PolicyConfigurationError("file_too_large", path=shown, limit=limit)
        return b"".join(chunks)
    except OSError as exc:
        detail = exc.strerror or type(exc).__name__
        raise PolicyConfigurationError("unreadable_file", path=shown, detail=detail) from None
    finally:
        os.close(handle)


def load_policy(path: str) -> ContextPolicy:
    """Read a policy file, turning an unreadable file into a coded error.

    Args:
        path: The path of a ``.json`` or ``.toml`` policy file.

    Returns:
        The validated policy.

    Raises:
        PolicyConfigurationError: When the file cannot be read (codes ``unreadable_file``,
            ``not_a_regular_file``, ``file_too_large``), has another suffix (code
            ``unsupported_policy_file``) or does not hold a valid policy.
    """
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".json", ".toml"):
        raise PolicyConfigurationError(
            "unsupported_policy_file", path=shown_path(path), suffix=shown_path(suffix)
        )
    data = read_file(path)
    if suffix == ".json":
        return ContextPolicy.from_json(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyConfigurationError("invalid_toml", detail=str(exc)) from None
    return ContextPolicy.from_toml(text)


def _problem_record(path: str, problem: ContextwiseError, locale: Locale) -> dict[str, Any]:
    return {
        "file": shown_path(path),
        "code": problem.code,
        "field": problem.params.get("field"),
        "message": _own_message(problem, locale),
        "params": {name: _json_param(value) for name, value in problem.params.items()},
    }


def _json_param(value: object) -> object:
    """A parameter as JSON shows it: scalars and lists as they are, anything else as text."""
    if value is None or isinstance(value, bool | int | float):
        return value if not isinstance(value, int) or abs(value) < 2**63 else short_text(value)
    if isinstance(value, list | tuple):
        return [_json_param(item) for item in value[:100]]
    return shown_path(short_text(value))


def _check(files: Sequence[str], locale: Locale, form: str, out: _Output) -> int:
    records: list[dict[str, Any]] = []
    lines: list[str] = []
    for path in files:
        try:
            load_policy(path)
        except ContextwiseError as err:
            for problem in err.problems:
                records.append(_problem_record(path, problem, locale))
                lines.append(f"{shown_path(path)}: {problem.code}: {_own_message(problem, locale)}")
        else:
            lines.append(translate(_NO_PROBLEM, {"path": shown_path(path)}, locale))
    if form == "json":
        shown = [shown_path(path) for path in files]
        payload = {"ok": not records, "files": shown, "problems": records}
        out.json(payload, default=str)
    else:
        out.write("".join(f"{line}\n" for line in lines))
    return EXIT_PROBLEMS if records else EXIT_OK


def _own_message(problem: ContextwiseError, locale: Locale) -> str:
    # The line lists every problem, so each one's message is shown without the "N more" note;
    # the message is one line, whatever its detail holds.
    return shown_path(with_problems(copy.copy(problem), ()).render(locale))


def load_history(path: str, policy: ContextPolicy) -> list[Fragment]:
    """Read the fragments of a history file.

    The file holds a JSON list of fragments (``{"id": ..., "messages": [...]}`` or ``"text"``),
    an object with such a ``fragments`` list, a plain list of chat messages, or a session export
    (an object with a ``messages`` list, each message as a session's store keeps it); the
    messages become the one fragment the policy's steps name (``history`` when they name none or
    several).

    Args:
        path: The path of the JSON history file.
        policy: The policy, whose steps name the fragments.

    Returns:
        The fragments.

    A list whose entries are not all fragments (an ``id`` with ``messages`` or ``text``) is a
    list of messages: OpenAI Chat, Anthropic, Gemini or Responses items, read as
    :func:`~contextwise.policy.process_context` reads them.

    Raises:
        PolicyConfigurationError: When the file cannot be read (codes ``unreadable_file``,
            ``not_a_regular_file``, ``file_too_large``) or is not valid JSON (code
            ``invalid_json``), or nested too deep (code ``too_deep``).
        InvalidTypeError: When the file holds something else (code ``not_a_history``).
    """
    text = read_file(path)
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", 0)
        raise PolicyConfigurationError(
            "invalid_json", line=line, column=column, detail=str(exc)
        ) from None
    except RecursionError:
        raise PolicyConfigurationError("too_deep", field="history", limit=MAX_DEPTH) from None
    if too_deep(data):
        raise PolicyConfigurationError("too_deep", field="history", limit=MAX_DEPTH)
    if isinstance(data, dict) and isinstance(data.get("fragments"), list):
        data = data["fragments"]
    elif isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]  # a session export: its id, its messages
    if not isinstance(data, list):
        raise InvalidTypeError(
            "not_a_history", path=shown_path(path), type_name=type(data).__name__
        )
    if data and not all(_is_fragment(item) for item in data):
        named = {step.fragment_id for step in policy.steps}
        fragment_id = named.pop() if len(named) == 1 else "history"
        return [MessagesFragment(fragment_id, messages=framework_messages(data))]
    return coerce_fragments(data)


_LANGCHAIN_ROLES: Final[Mapping[str, str]] = {
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "system": "system",
}


def framework_messages(items: list[Any]) -> list[Any]:
    """A list of messages as the frameworks save them, in OpenAI Chat shape; other lists as they
    are.

    LangChain's ``messages_to_dict`` output (``{"type": ..., "data": {...}}`` entries) and
    pydantic-ai's ``ModelMessagesTypeAdapter`` JSON (``{"kind": "request" | "response",
    "parts": [...]}`` entries) are read without importing either framework. So are the messages
    of a session export, as a session's store keeps them: plain dicts, and framework messages in
    an envelope (``{"__contextwise__": "langchain" | "pydantic-ai", "message": ...}``) that holds
    the framework's own JSON; they may be mixed.
    """
    if any(_is_envelope(item) for item in items):
        return [message for item in items for message in _from_session(item)]
    if all(isinstance(item, dict) and set(item) == {"type", "data"} for item in items):
        return [_from_langchain(item["type"], item["data"]) for item in items]
    if all(
        isinstance(item, dict) and item.get("kind") in ("request", "response") for item in items
    ):
        return [message for item in items for message in _from_pydantic_ai(item)]
    return items


_ENVELOPE: Final = "__contextwise__"
"""The key of the envelope in which a session's store keeps a framework message."""


def _is_envelope(item: object) -> bool:
    return isinstance(item, dict) and set(item) == {_ENVELOPE, "message"}


def _from_session(item: Any) -> list[Any]:
    """A message of a session export in OpenAI Chat shape; an envelope of an unknown framework,
    or one that does not hold its framework's JSON, is left for the shapes to refuse."""
    if not _is_envelope(item):
        return [item]
    framework, message = item[_ENVELOPE], item["message"]
    if framework == "langchain" and isinstance(message, dict) and set(message) == {"type", "data"}:
        return [_from_langchain(message["type"], message["data"])]
    if (
        framework == "pydantic-ai"
        and isinstance(message, dict)
        and message.get("kind") in ("request", "response")
    ):
        return _from_pydantic_ai(message)
    return [item]


def _from_langchain(kind: object, data: object) -> Any:
    if not isinstance(data, dict):
        return {"type": kind, "data": data}  # left for the shapes to refuse, with its index
    role = data.get("role") if kind == "chat" else _LANGCHAIN_ROLES.get(str(kind))
    message: dict[str, Any] = {"role": role, "content": data.get("content") or ""}
    if kind == "ai" and data.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": call.get("id"),
                "type": "function",
                "function": {
                    "name": call.get("name"),
                    "arguments": json.dumps(call.get("args", {}), ensure_ascii=False),
                },
            }
            for call in data["tool_calls"]
            if isinstance(call, dict)
        ]
    if kind == "tool":
        message["tool_call_id"] = data.get("tool_call_id")
    return message


def _from_pydantic_ai(item: dict[str, Any]) -> list[Any]:
    parts = item.get("parts")
    if not isinstance(parts, list):
        return [item]
    if item["kind"] == "response":
        texts = [p.get("content") for p in parts if p.get("part_kind") == "text"]
        calls = [p for p in parts if p.get("part_kind") == "tool-call"]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(map(str, texts))}
        if calls:
            message["tool_calls"] = [_pydantic_ai_call(call) for call in calls]
        return [message]
    found: list[Any] = []
    for part in parts:
        kind = part.get("part_kind")
        if kind == "system-prompt":
            found.append({"role": "system", "content": part.get("content", "")})
        elif kind == "user-prompt":
            content = part.get("content", "")
            found.append({"role": "user", "content": content if isinstance(content, str) else ""})
        elif kind in ("tool-return", "retry-prompt"):
            content = part.get("content", "")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            found.append(
                {"role": "tool", "tool_call_id": part.get("tool_call_id"), "content": text}
            )
    return found


def _pydantic_ai_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("args", {})
    return {
        "id": call.get("tool_call_id"),
        "type": "function",
        "function": {
            "name": call.get("tool_name"),
            "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
        },
    }


def _is_fragment(item: object) -> bool:
    return isinstance(item, dict) and "id" in item and ("messages" in item or "text" in item)


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


def _audit(path: str, history: str, locale: Locale, form: str, out: _Output) -> int:
    try:
        policy = load_policy(path)
    except ContextwiseError as err:
        return _check_failed(path, err, locale, form, out)
    # What goes wrong from here is the history's fault: the problem names the history file.
    try:
        fragments = load_history(history, policy)
        audited, skipped = runnable(policy)
        counter = EstimateCounter() if token_limits(audited) else None
        report = process_context(audited, fragments, counter=counter, unknown_items="error").report
    except ContextwiseError as err:
        return _check_failed(history, err, locale, form, out)
    if form == "json":
        payload = {
            "file": shown_path(path),
            "skipped_steps": skipped,
            "estimated_tokens": counter is not None,
            "report": report.model_dump(mode="json"),
        }
        out.json(payload)
    else:
        out.write(render_table(path, report, skipped, counter is not None, locale))
    return EXIT_OK


def _check_failed(path: str, err: ContextwiseError, locale: Locale, form: str, out: _Output) -> int:
    if form == "json":
        records = [_problem_record(path, problem, locale) for problem in err.problems]
        payload = {"ok": False, "files": [shown_path(path)], "problems": records}
        out.json(payload, default=str)
    else:
        out.write(
            "".join(
                f"{shown_path(path)}: {problem.code}: {_own_message(problem, locale)}\n"
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
            {
                "path": shown_path(path),
                "before": report.before_chars,
                "after": report.after_chars,
                "met": met,
            },
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
        "  ".join(
            cell + " " * (widths[index] - _width(cell)) for index, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


def _width(text: str) -> int:
    # Chinese characters take two columns in a terminal.
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
