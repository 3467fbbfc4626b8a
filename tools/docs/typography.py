"""French typography, checked and fixed in prose (never inside code).

French puts a no-break space (U+00A0) before ``:`` ``;`` ``?`` ``!`` and ``»`` and after ``«``, so
that a line never starts with the punctuation, and writes decimals with a comma (``0,85``). It
groups thousands with a narrow no-break space (U+202F: ``128 000``), puts a no-break space before
``%`` (``2 %``), writes ``×`` between numbers (``2 048 × 2 048``, ``0,1 ×``) and an ellipsis as one
character (``…``). Chinese prose never breaks a line inside a paragraph, whatever stands on either
side of the break (a browser shows the line break as a space). Code is
left alone: fenced blocks, inline code (single or double backticks), HTML tags, link targets, URLs
and heading ids. A version number after a name (``Python 3.11``) and a literal quoted in « » are
not decimals of the text.

    python -m tools.docs.typography check FILE...   # list the faults; exit 1 if any
    python -m tools.docs.typography fix FILE...     # put the no-break spaces in
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

NBSP = "\u00a0"
NNBSP = "\u202f"
CODE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)(?P=fence)[ \t]*$"  # fenced block
    r"|:\w+:`[^`\n]+`|``.+?``|`[^`\n]+`"  # cross-reference roles, inline code
    r"|<code>.*?</code>|<[^>\n]+>"  # code in HTML (reference tables), tags
    r"|\]\([^)\s]*\)|https?://\S+|\{#[^}\n]*\}",  # link targets, URLs, ids
    re.M | re.S,
)
FENCED = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)(?P=fence)[ \t]*$",
                    re.M | re.S)
SPACE_BEFORE = re.compile(r" (?=[:;?!»])")
SPACE_AFTER = re.compile(r"(?<=«) ")
DECIMAL = re.compile(r"(?<![\w.,])(?P<number>-?\d+\.\d+)(?![\w.])")
VERSION_BEFORE = re.compile(r"[A-Z][\w.+-]*\s$")
THOUSANDS = re.compile(r"(?<![\d,.\u202f])\d{1,3}(?:[ \u00a0]\d{3})+(?!\d)")
PERCENT = re.compile(r"(?<=\d)[ \u00a0]?%")
NARROW_SPACE = re.compile(r"\u202f(?=[:;!?»])|(?<=«)\u202f")
TIGHT_QUOTE = re.compile(r"«(?=[^\s\u00a0\u202f])|(?<=[^\s\u00a0\u202f])»")
LINE_START = re.compile(r"^[ \t]*(?:[;:?»]|!(?!\[))", re.M)  # ![image] is no punctuation
TIMES = re.compile(r"(?<=\d) ?x(?!\w)")
DOTS = re.compile(r"(?<![\[(=])\.\.\.(?!\])")  # not in code: [...], (..., x=...
CHINESE = "\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
CJK = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
# a line that starts a block of its own: a blank line, a heading, a list item, a table row, a
# quote, HTML, a rule or a link definition
BLOCK_START = re.compile(r"\s*$|\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\||>|<|---|\[[^\]]+\]:\s)")
ONE_LINE_BLOCK = re.compile(r"\s*(?:#{1,6}\s|\||<|---)")
FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)
CHINESE_BREAK = re.compile(rf"(?<=[{CHINESE}])[ \t]*\n[ \t]*(?=[{CHINESE}])")


def _prose(text: str) -> Iterator[tuple[int, str]]:
    """The (offset, text) pieces of ``text`` that are prose, in order."""
    start = 0
    for code in CODE.finditer(text):
        yield start, text[start : code.start()]
        start = code.end()
    yield start, text[start:]


def prose_pieces(text: str, *, keep_inline: bool = False) -> list[tuple[int, str]]:
    """The (offset, text) pieces of ``text`` that are prose; with ``keep_inline``, inline code
    and links stay in the pieces (only fenced blocks are cut out)."""
    if not keep_inline:
        return list(_prose(text))
    pieces: list[tuple[int, str]] = []
    start = 0
    for fence in FENCED.finditer(text):
        pieces.append((start, text[start : fence.start()]))
        start = fence.end()
    return [*pieces, (start, text[start:])]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _quoted(piece: str, position: int) -> bool:
    return piece.rfind("«", 0, position) > piece.rfind("»", 0, position)


def french_faults(text: str) -> list[tuple[int, str]]:
    """The (line, fault) pairs of a French text: plain spaces where French wants no-break ones,
    and decimal points."""
    faults: list[tuple[int, str]] = []
    for offset, piece in _prose(text):
        for found in (*SPACE_BEFORE.finditer(piece), *SPACE_AFTER.finditer(piece)):
            context = piece[max(0, found.start() - 20) : found.end() + 2].replace("\n", " ")
            faults.append((_line(text, offset + found.start()), f"plain space in {context!r}"))
        for found in DECIMAL.finditer(piece):
            before = piece[max(0, found.start() - 30) : found.start()]
            if VERSION_BEFORE.search(before) or _quoted(piece, found.start()):
                continue
            number = found.group("number")
            faults.append(
                (_line(text, offset + found.start()), f"decimal point in {number}, write a comma")
            )
        faults += _number_faults(text, offset, piece)
    return sorted(faults)


def _number_faults(text: str, offset: int, piece: str) -> list[tuple[int, str]]:
    """Thousands separators, ``%``, ``×`` and ``…`` in one piece of French prose."""
    checks = (
        (THOUSANDS, "thousands separated by a plain or no-break space, write U+202F"),
        (PERCENT, "write a narrow no-break space (U+202F) before %"),
        (NARROW_SPACE, "write a no-break space (U+00A0), not U+202F, before : ; ! ? » and after «"),
        (TIGHT_QUOTE, "write a no-break space inside « »"),
        (TIMES, "x after a number, write ×"),
        (DOTS, "three dots, write …"),
    )
    faults: list[tuple[int, str]] = []
    for pattern, fault in checks:
        for found in pattern.finditer(piece):
            context = piece[max(0, found.start() - 20) : found.end() + 8].replace("\n", " ")
            faults.append((_line(text, offset + found.start()), f"{fault}: {context!r}"))
    for found in LINE_START.finditer(piece):
        start = offset + found.start()
        if start == 0 or text[start - 1] == "\n":  # a line of the text, not a piece, starts so
            context = piece[found.start() : found.end() + 20].replace("\n", " ")
            faults.append((_line(text, start), f"a line starts with {found.group(0).strip()!r}, "
                           f"which its no-break space should keep on the line before: {context!r}"))
    return faults


def chinese_faults(text: str) -> list[tuple[int, str]]:
    """The (line, fault) pairs of a Chinese text: a line break inside a paragraph of Chinese
    prose, whatever stands on either side (a Chinese character, Latin text, inline code or a
    link), which a browser shows as a stray space. A Chinese paragraph, list item or table row is
    one line; a code block, front matter or HTML block is not prose."""
    faults: list[tuple[int, str]] = []
    lines = _without_code_blocks(text).split("\n")
    for index in range(len(lines) - 1):
        line, following = lines[index], lines[index + 1]
        if not line.strip() or BLOCK_START.match(following) or ONE_LINE_BLOCK.match(line):
            continue  # the next line starts a block, or this one is a block of its own
        if not (CJK.search(line) or CJK.search(following)) or line.endswith("  "):
            continue  # not Chinese prose, or a hard break (two spaces) that Markdown keeps
        context = f"{line[-12:]}⏎{following.strip()[:12]}"
        faults.append((index + 1, f"line break in {context!r}"))
    return faults


CHINESE_PUNCTUATION = (
    (re.compile(r"\d[ \u00a0\u202f]%"), "a space before %, Chinese writes 95%"),
    (
        re.compile(rf"(?<=[{CHINESE}])[ ]?[,;:?!](?=\s|$|[{CHINESE}])"),
        "ASCII punctuation in Chinese prose, write ，；：？！",
    ),
    (re.compile(r"(?<=[^\s|])[ \u00a0]“|”[ \u00a0](?=[^\s|])"), "a space outside “ ”"),
    (
        re.compile(rf"(?<=[{CHINESE}])[ ]?[\"']|[\"'][ ]?(?=[{CHINESE}])"),
        "ASCII quotes in Chinese prose, write “ ”",
    ),
    (re.compile(r"、(?:或者|或|和|以及|及|与)"), "、 before a conjunction, write it alone"),
    (
        re.compile(r"\([^()\n]*[\u4e00-\u9fff][^()\n]*\)"),
        "ASCII parentheses around Chinese, write （…）",
    ),
)


def chinese_punctuation_faults(text: str) -> list[tuple[int, str]]:
    """The (line, fault) pairs of a Chinese text's punctuation: no space before ``%``, full-width
    ``，；：？！``, quotes and parentheses around Chinese, no space outside “ ”, no 、 before 或
    or 和."""
    faults: list[tuple[int, str]] = []
    body = FRONT.sub(lambda found: "\n" * found.group(0).count("\n"), text)
    for offset, piece in _prose(body):
        for pattern, fault in CHINESE_PUNCTUATION:
            for found in pattern.finditer(piece):
                context = piece[max(0, found.start() - 12) : found.end() + 8].replace("\n", "⏎")
                faults.append((_line(body, offset + found.start()), f"{fault}: {context!r}"))
    return sorted(faults)


def _without_code_blocks(text: str) -> str:
    """The text with its fenced code blocks and front matter blanked (their lines kept empty)."""

    def blank(found: re.Match[str]) -> str:
        return "\n" * found.group(0).count("\n")

    return FRONT.sub(blank, FENCED.sub(blank, text))


def fix_french_spaces(text: str) -> str:
    """The text with no-break spaces before ``: ; ? ! »`` and after ``«`` in its prose."""
    pieces: list[str] = []
    start = 0
    for code in CODE.finditer(text):
        pieces.append(_fix(text[start : code.start()]))
        pieces.append(code.group(0))
        start = code.end()
    pieces.append(_fix(text[start:]))
    return "".join(pieces)


def _fix(prose: str) -> str:
    prose = THOUSANDS.sub(lambda found: re.sub(r"[ \u00a0]", NNBSP, found.group(0)), prose)
    prose = DOTS.sub("…", PERCENT.sub(NNBSP + "%", NARROW_SPACE.sub(NBSP, prose)))
    return SPACE_AFTER.sub(NBSP, SPACE_BEFORE.sub(NBSP, prose))


def join_chinese_lines(text: str) -> str:
    """The text with the line breaks between two Chinese characters of its prose removed."""
    pieces: list[str] = []
    start = 0
    for code in CODE.finditer(text):
        pieces.append(CHINESE_BREAK.sub("", text[start : code.start()]))
        pieces.append(code.group(0))
        start = code.end()
    pieces.append(CHINESE_BREAK.sub("", text[start:]))
    return "".join(pieces)


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in ("check", "fix"):
        print(__doc__, file=sys.stderr)
        return 2
    command: Callable[[Path], bool] = _fix_file if args[0] == "fix" else _check_file
    results = [command(Path(name)) for name in args[1:]]
    return 0 if all(results) else 1


def _check_file(path: Path) -> bool:
    faults = french_faults(path.read_text(encoding="utf-8"))
    for line, fault in faults:
        print(f"{path}:{line}: {fault}")
    return not faults


def _fix_file(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    fixed = fix_french_spaces(text)
    if fixed != text:
        path.write_text(fixed, encoding="utf-8")
        print(f"fixed {path}")
    return True


if __name__ == "__main__":
    sys.exit(main())
