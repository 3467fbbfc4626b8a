"""A translation says the numbers and the code of its English text: a stale sentence shows.

A translated paragraph (a block of a hand-written page, aligned with its English page as
tools/docs/blocks.py aligns them) or a catalog entry (the ``msgstr`` beside its ``msgid``) must
hold the same numbers in its prose and the same inline code spans as its English text. Numbers are
read in each language's forms first: ``2,000`` and ``1.5`` in English and Chinese, ``2 000``
(U+202F, U+00A0 or a space) and ``12,5`` in French, ``1.5 万`` (15 000) and ``3 亿`` in Chinese; a
percent sign or an ordinal suffix (``21st``, ``21ᵉ``, ``第 21``) does not change the number. A
number inside code, a link target, a heading id or a placeholder (``{limit}``) is not prose. Code
blocks are compared line by line elsewhere (tests/docs/test_parity.py).

This is what catches a sentence left behind when the English changed: the English says "500
one-token words" and the translation still says "2 000 caractères". The freshness stamp runs it
(``python -m tools.docs.freshness stamp``) and refuses to stamp such a page.

    python -m tools.docs.numbers PAGE...   # list the paragraphs that differ; exit 1 if any
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

from babel.numbers import get_decimal_symbol, get_group_symbol

from tools.docs.blocks import FENCE, blocks
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# a code span as Markdown reads it: a run of backticks up to the next run of the same length
# (```` ``a `b` c`` ````), or a reST role (``:class:`X```) in a catalog
SPAN = re.compile(r"(?::\w+:)?(?<!`)(?P<ticks>`+)(?!`)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)", re.S)
NOT_PROSE = re.compile(
    r"\]\([^)\s]*\)|\]\[[^\]\n]*\]|\{#[^}\n]*\}|\{[\w.]*(?:![rsa])?(?::[^}\n]*)?\}"  # targets, ids
    r"|%\(\w+\)[sdr]|<[^>\n]+>|https?://\S+|&\w+;",  # %-placeholders, tags, URLs, entities
)
# a number, possibly grouped by thousands (the language's group symbol: ``,`` in English and
# Chinese, U+202F in French, where U+00A0 and a space are read too), possibly with decimals, and a
# Chinese 万 or 亿 after it; what follows it decides whether it is part of a name (_suffix)
SPACES = "\u202f\u00a0 "
ORDINAL_SUFFIX = re.compile(r"st|nd|rd|th|e|er|re|ᵉ|ʳᵉ|ᵉʳ")
MULTIPLIER = {"万": Decimal(10_000), "亿": Decimal(100_000_000)}


@lru_cache(maxsize=8)
def _symbols(language: str) -> tuple[str, str]:
    """The (group, decimal) symbols of a language, as CLDR gives them (Babel)."""
    locale = languages.babel_locale(language)
    return get_group_symbol(locale), get_decimal_symbol(locale)


@lru_cache(maxsize=8)
def _number_pattern(language: str) -> re.Pattern[str]:
    group, decimal = _symbols(language)
    groups = re.escape(SPACES if group in SPACES else group)
    grouped = rf"\d{{1,3}}(?:[{groups}]\d{{3}})+(?:{re.escape(decimal)}\d+)?(?!\d)"
    return re.compile(rf"(?<![\w.\-/#])(?P<number>{grouped}|\d+(?:[.,]\d+)*)(?P<unit>\s?[万亿])?")


@dataclass(frozen=True)
class Allowance:
    """Numbers or code spans that a translation rightly says differently from its English."""

    where: str  # a page under docs/ (zh/guides/budgeting.md) or <language>/<msgctxt>
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    reason: str


UNALIGNED = ("glossary.md",)
"""Pages that do not follow their English page block by block: a translated glossary adds its
tables of retired terms and of terms checked against the English."""

ALLOWED = (
    Allowance(
        "zh/guides/budgeting.md",
        ("5",),
        ("95",),
        "“从不低于最大计数的 95%” says “never more than 5 % under the largest count” as Chinese "
        "says it",
    ),
    Allowance(
        "zh/contributing/regenerating-the-reference.md",
        (
            "## Router une étape {#routing-a-step}",
            'print(err.render("fr")) # le message en français',
        ),
        ("## 为步骤路由模型 {#routing-a-step}", 'print(err.render("zh")) # 中文消息'),
        "the example of a translated heading and comment is shown in the page's own language",
    ),
    Allowance(
        "zh/contextwise.PartEstimate:paragraph:2:item:2",
        ("1.2",),
        ("1200000",),
        "about 1.2 megapixels is 约 120 万像素, as Chinese counts pixels",
    ),
    Allowance(
        "fr/guides/effort.md",
        (),
        ("ModelSpec",),
        "« the spec » is named by its class, which French cannot leave implicit",
    ),
    Allowance(
        "zh/guides/effort.md",
        (),
        ("ModelSpec",),
        "“the spec” is named by its class, which Chinese cannot leave implicit",
    ),
)
"""The short list of texts whose numbers or code rightly differ, each with its reason."""


@dataclass(frozen=True)
class Difference:
    """A translated text whose numbers or code spans differ from its English text's."""

    where: str
    missing: tuple[str, ...]
    extra: tuple[str, ...]

    def describe(self) -> str:
        """One line: where, and what the translation lacks and adds."""
        parts = []
        if self.missing:
            parts.append(f"the English has {', '.join(self.missing)}")
        if self.extra:
            parts.append(f"the translation has {', '.join(self.extra)}")
        return f"{self.where}: {'; '.join(parts)}"


def code_spans(text: str) -> Counter[str]:
    """The inline code spans of a text (``x``, ````x````, ``:class:`X```), as written."""
    spans: Counter[str] = Counter()
    for found in SPAN.finditer(FENCE.sub(" ", text)):
        spans[" ".join(found.group("code").split())] += 1
    return spans


def numbers(text: str, language: str) -> Counter[str]:
    """The numbers of a text's prose, each in one canonical form (``2000``, ``12.5``).

    Examples:
        >>> sorted(numbers("2,000 characters, 12.5 %, the 21st call", "en"))
        ['12.5', '2000', '21']
        >>> numbers("2\\u202f000 caractères, 12,5\\u202f%", "fr") == numbers("2,000, 12.5%", "en")
        True
        >>> sorted(numbers("约 1.5 万个词元，共 2,000 个字符", "zh"))
        ['15000', '2000']
    """
    prose = NOT_PROSE.sub(" ", SPAN.sub(" ", FENCE.sub(" ", text)))
    found: Counter[str] = Counter()
    for match in _number_pattern(language).finditer(prose):
        suffix = _suffix(prose, match.end())
        value = _value(match.group("number"), language)
        if value is None or (suffix and suffix != "k" and not ORDINAL_SUFFIX.fullmatch(suffix)):
            continue  # a version, or part of a name (gpt-4o, 5xx)
        if suffix == "k":  # 50k tokens
            value *= 1000
        unit = (match.group("unit") or "").strip()
        if unit:  # 1.5 万
            value *= MULTIPLIER[unit]
        found[_canonical(value)] += 1
    return found


def _suffix(prose: str, end: int) -> str:
    """The letters right after a number: an ordinal (``21st``, ``21e``, ``21ᵉ``), ``k``
    (thousands), or the rest of a name (``4o``, ``5xx``)."""
    following = re.match(r"[A-Za-z_\u1d49\u02b3]+", prose[end:])
    return "" if following is None else following.group(0)


def _value(written: str, language: str) -> Decimal | None:
    """The value of a number as a language writes it, or ``None`` (a version such as 3.11.7)."""
    group, decimal = _symbols(language)
    if group in SPACES:
        plain = re.sub(f"[{SPACES}]", "", written)
    else:
        plain = re.sub(rf"{re.escape(group)}(?=\d{{3}}(?!\d))", "", written)
    plain = plain.replace(decimal, ".")
    if plain.count(".") > 1:
        return None
    try:
        return Decimal(plain)
    except InvalidOperation:
        return None


def _canonical(value: Decimal) -> str:
    return format(value.normalize(), "f")


def difference(where: str, english: str, translation: str, language: str) -> Difference | None:
    """How a translation's numbers and code spans differ from its English text's, if they do.

    A translation may set in code a word that its English text says in prose (``trim`` for "the
    trim step", ``thread_id`` for "thread id"): the code form of what the English names. Every
    English code span must be in the translation, and every number on both sides.

    Examples:
        >>> stale = difference("x", "Answers 500 words.", "Répond 2 000 caractères.", "fr")
        >>> print(stale.describe())
        x: the English has 500; the translation has 2000
        >>> difference("x", "the trim step of `reduce`", "l'étape `trim` de `reduce`", "fr") is None
        True
    """
    source, target = numbers(english, languages.source()), numbers(translation, language)
    source_spans, target_spans = code_spans(english), code_spans(translation)
    said = _plain_words(SPAN.sub(" ", english))
    extra_spans = Counter(
        {
            span: count
            for span, count in (target_spans - source_spans).items()
            if not _said(span, said)
        }
    )
    missing = (source - target) + _tagged(source_spans - target_spans)
    # "zero or more" may be 大于或等于 0: an English zero said as a word may be a digit
    zeros = len(re.findall(r"\bzero\b", NOT_PROSE.sub(" ", SPAN.sub(" ", english)), re.I))
    extra = (target - source - Counter({"0": zeros})) + _tagged(extra_spans)
    if not missing and not extra:
        return None
    return Difference(where, tuple(sorted(missing.elements())), tuple(sorted(extra.elements())))


def _said(span: str, said: str) -> bool:
    """Whether the English prose says the span's words (``yield`` in "yields", ``thread_id`` in
    "thread id")."""
    words = _plain_words(span).strip()
    return bool(words) and re.search(rf" {re.escape(words)}(?:s|es|ed|d|ing)? ", said) is not None


def _plain_words(text: str) -> str:
    """A text as words: lower case, ``_`` and punctuation read as spaces, padded with spaces."""
    return " " + " ".join(re.sub(r"[\W_]+", " ", text.lower()).split()) + " "


def _tagged(spans: Counter[str]) -> Counter[str]:
    return Counter({f"`{span}`": count for span, count in spans.items()})


def allowed(differs: Difference, where: str) -> Difference | None:
    """The difference less what :data:`ALLOWED` accepts there (``zh/guides/budgeting.md``, or
    ``zh/<msgctxt>`` for a catalog entry); ``None`` when nothing is left."""
    missing, extra = Counter(differs.missing), Counter(differs.extra)
    for allowance in ALLOWED:
        if allowance.where == where:
            missing -= Counter(_spans_tagged(allowance.missing))
            extra -= Counter(_spans_tagged(allowance.extra))
    if not missing and not extra:
        return None
    return Difference(
        differs.where, tuple(sorted(missing.elements())), tuple(sorted(extra.elements()))
    )


def _spans_tagged(items: tuple[str, ...]) -> list[str]:
    return [item if re.fullmatch(r"[\d.]+", item) else f"`{item}`" for item in items]


def page_differences(page: Path, english: Path, language: str) -> list[Difference]:
    """The paragraphs of a translated page whose numbers or code differ from the English page's.

    The pages are aligned block by block; a page whose block count differs is one difference
    (its structure must be fixed first). Code blocks are left to the parity test.
    """
    if english.name in UNALIGNED:
        return []
    english_root = _english_root(english)
    ours = blocks(page.read_text(encoding="utf-8"))
    theirs = blocks(english.read_text(encoding="utf-8"))
    if len(ours) != len(theirs):
        return [Difference(f"{_shown(page)} ({len(ours)} blocks, English {len(theirs)})", (), ())]
    found: list[Difference] = []
    for number, (source, target) in enumerate(zip(theirs, ours, strict=True), 1):
        if FENCE.fullmatch(source.strip()):
            continue
        line = _first_line(page, target)
        where = f"{_shown(page)}:{line} (paragraph {number})"
        differs = difference(where, source, target, language)
        if differs is not None:
            relative = english.resolve().relative_to(english_root).as_posix()
            differs = allowed(differs, f"{language}/{relative}")
        if differs is not None:
            found.append(differs)
    return found


def _shown(page: Path) -> str:
    """A page's path as a person reads it: from the repository's root when it is inside."""
    resolved = page.resolve()
    return resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(page)


def _english_root(english: Path) -> Path:
    """The ``docs/en`` folder an English page lives in."""
    for parent in english.resolve().parents:
        if parent.name == languages.source():
            return parent
    return english.resolve().parent


def _first_line(page: Path, block: str) -> int:
    text = page.read_text(encoding="utf-8")
    return text.count("\n", 0, max(text.find(block), 0)) + 1


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    found: list[Difference] = []
    for name in args:
        page = Path(name).resolve()
        language, relative = page.relative_to(DOCS).parts[0], page.relative_to(DOCS).parts[1:]
        english = DOCS / languages.source() / Path(*relative)
        found += page_differences(Path(name), english, language)
    for differs in found:
        print(differs.describe())
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
