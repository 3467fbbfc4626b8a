"""Typography holds everywhere French and Chinese are written: pages, catalogs, generated pages.

French wants a no-break space before ``: ; ? ! »`` and after ``«``, a decimal comma, U+202F
between thousands, a no-break space before ``%``, ``×`` between numbers and ``…``; its reference
summaries begin with a third-person verb (« Renvoie… »). Chinese prose never breaks a line between
two Chinese characters, its messages quote with “…” and its generated lists join with 、. The
checker (tools/docs/typography.py) reads prose only: code, tags, links and ids are left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from conftest import ROOT
from tools.docs.typography import (
    NBSP,
    NNBSP,
    chinese_faults,
    chinese_punctuation_faults,
    fix_french_spaces,
    french_faults,
    join_chinese_lines,
    prose_pieces,
)

FRENCH_PAGES = sorted((ROOT / "docs/fr").rglob("*.md"))  # hand-written and generated


@pytest.mark.parametrize(
    "page", FRENCH_PAGES, ids=lambda page: page.relative_to(ROOT / "docs").as_posix()
)
def test_french_pages_use_no_break_spaces_and_decimal_commas(page: Path) -> None:
    faults = french_faults(page.read_text(encoding="utf-8"))
    assert not faults, "\n".join(f"{page.relative_to(ROOT)}:{line}: {f}" for line, f in faults)


@pytest.mark.parametrize("domain", ["contextwise", "reference"])
def test_french_translations_use_no_break_spaces_and_decimal_commas(domain: str) -> None:
    with (ROOT / f"locales/fr/LC_MESSAGES/{domain}.po").open("rb") as handle:
        catalog = read_po(handle)
    found: list[str] = []
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for string in strings:
            if message.id and string:
                where = message.context or message.id
                found += [f"[{where}] {fault}" for _, fault in french_faults(string)]
    assert not found, "\n".join(found)


def test_the_checker_finds_plain_spaces_and_decimal_points() -> None:
    faults = french_faults("Le seuil : 0.85 ; « oui » ?\n")
    assert [line for line, _ in faults] == [1] * 6
    assert sum("decimal point in 0.85" in fault for _, fault in faults) == 1


def test_the_checker_leaves_code_versions_and_quoted_literals_alone() -> None:
    text = (
        "Voir `a : b` et ``c ; d`` et :class:`X` et [lien](http://x.org/a?b=1) {#id}\n\n"
        "```python\nprint(x ? 1 : 2)\n```\n\n"
        f"Python 3.11 et MkDocs 1.6{NBSP}; la valeur JSON «{NBSP}-0.0{NBSP}» reste.\n"
    )
    assert french_faults(text) == []


def test_the_fixer_puts_no_break_spaces_in_prose_only() -> None:
    text = "Attention : `a : b` ; « oui » ?"
    fixed = fix_french_spaces(text)
    assert fixed == f"Attention{NBSP}: `a : b`{NBSP}; «{NBSP}oui{NBSP}»{NBSP}?"
    assert french_faults(fixed) == []


# -- numbers, ellipses and the Chinese checks (issue 24) ------------------------------------------

CHINESE_PAGES = sorted((ROOT / "docs/zh").rglob("*.md"))
CHINESE = "\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
ASCII_QUOTE = re.compile(
    rf"[{CHINESE}] ?['\"]|['\"] ?[{CHINESE}]|(?<![(=\w])(['\"])[\w{{}}.-]+\1(?![,)])"
)
ASCII_LIST = re.compile(r"(?:`[^`\n]+`|\[[^\]\n]+\]\([^)\n]+\)), (?=`|\[)")
INFINITIVE = re.compile(
    r"^\w*(?:er|ir|prendre|mettre|faire|lire|écrire|construire|dire|rendre|suivre|produire"
    r"|réduire|traduire|inclure|exclure|extraire)$",
    re.I,
)


def _strings(language: str, domain: str) -> list[tuple[str, str]]:
    with (ROOT / f"locales/{language}/LC_MESSAGES/{domain}.po").open("rb") as handle:
        catalog = read_po(handle)
    found: list[tuple[str, str]] = []
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        found += [(message.context or str(message.id), s) for s in strings if message.id and s]
    return found


def test_the_checker_finds_french_numbers_written_the_english_way() -> None:
    text = "Une fenêtre de 128 000 jetons, 2 % de marge, 2048 x 2048 pixels, 0,1 x, etc...\n"
    faults = " ".join(fault for _, fault in french_faults(text))
    for expected in ("U+202F", "before %", "write ×", "write …"):
        assert expected in faults
    assert french_faults("Voir `[...]`, `f(x=...)` et <code>tuple[str, ...]</code>.\n") == []
    fixed = fix_french_spaces("128 000 jetons, 2 % et ainsi de suite...")
    assert fixed == f"128{NNBSP}000 jetons, 2{NNBSP}% et ainsi de suite…"


@pytest.mark.parametrize(
    "page", CHINESE_PAGES, ids=lambda page: page.relative_to(ROOT / "docs").as_posix()
)
def test_chinese_prose_never_breaks_a_line_between_two_chinese_characters(page: Path) -> None:
    faults = chinese_faults(page.read_text(encoding="utf-8"))
    assert not faults, "\n".join(f"{page.relative_to(ROOT)}:{line}: {f}" for line, f in faults)


def test_the_chinese_checker_finds_a_hard_wrapped_paragraph_and_the_joiner_mends_it() -> None:
    text = "上下文策略\n裁剪历史。\n\n- 列表\n- 项目\n\n```text\n代码\n行\n```\n"
    assert [line for line, _ in chinese_faults(text)] == [1]
    assert join_chinese_lines(text).startswith("上下文策略裁剪历史。\n\n- 列表\n- 项目")
    assert "代码\n行" in join_chinese_lines(text)


def test_the_checker_finds_french_percent_quote_and_line_start_faults() -> None:
    """Issue 32: U+202F before %, a no-break space (U+00A0) inside « » and before : ; ! ? »,
    and no line of prose that starts with the punctuation its space should have kept back."""
    for text, fault in (
        (f"2{NBSP}% de la fenêtre", "U+202F) before %"),
        (f"le mot{NNBSP}: suite", "not U+202F"),
        (f"«{NNBSP}oui{NBSP}»", "not U+202F"),
        (f"«oui{NBSP}»", "inside « »"),
        (f"«{NBSP}oui»", "inside « »"),
        ("la fenêtre\n: la suite", "a line starts with ':'"),
        (f"«{NBSP}oui\n» dit-il", "a line starts with '»'"),
    ):
        assert any(fault in found for _, found in french_faults(text)), (text, fault)
    right = f"2{NNBSP}% de la fenêtre{NBSP}: «{NBSP}oui{NBSP}»{NBSP}!\n\n![Figure](a.svg)\n"
    assert french_faults(right) == []
    assert fix_french_spaces(f"2{NBSP}% et{NNBSP}: «{NNBSP}x") == f"2{NNBSP}% et{NBSP}: «{NBSP}x"


@pytest.mark.parametrize(
    "page", CHINESE_PAGES, ids=lambda page: page.relative_to(ROOT / "docs").as_posix()
)
def test_chinese_pages_punctuate_full_width(page: Path) -> None:
    faults = chinese_punctuation_faults(page.read_text(encoding="utf-8"))
    assert not faults, "\n".join(f"{page.relative_to(ROOT)}:{line}: {f}" for line, f in faults)


@pytest.mark.parametrize("domain", ["contextwise", "reference", "site"])
def test_chinese_messages_punctuate_full_width(domain: str) -> None:
    found = [
        f"[{where}] {fault}"
        for where, string in _strings("zh", domain)
        for _, fault in chinese_punctuation_faults(string)
    ]
    assert not found, "\n".join(found)


def test_the_chinese_punctuation_checker_finds_each_fault() -> None:
    for text, fault in (
        ("误差在 1.2 % 以内", "before %"),
        ("必须是 “error” 或 “opaque”", "outside “ ”"),
        ("修改上下文、只做检查、或报告", "、 before a conjunction"),
        ("图例 LangChain (字典)", "ASCII parentheses"),
        ("注意: 这里", "ASCII punctuation"),
        ('条目（"reasoning was provided"）', "ASCII quotes"),
    ):
        assert any(fault in found for _, found in chinese_punctuation_faults(text)), (text, fault)
    right = "误差在 1.2% 以内，必须是“error”或“opaque”（字典）：修改、检查或报告。`f(x) = 1 %`"
    assert chinese_punctuation_faults(right) == []
    assert chinese_punctuation_faults("| “{value}”不是 |") == []  # a cell starts with a quote


def test_the_chinese_checker_finds_a_soft_break_next_to_code_latin_or_a_link() -> None:
    """A break inside a Chinese paragraph shows as a stray space whatever stands beside it
    (issue 32: message-shapes.md rendered “`group_messages`、 `tool_units`”, “JPEG、 GIF”)."""
    for text in (
        "把 `group_messages`、\n`tool_units` 用于分组。\n",
        "图像数据（PNG、JPEG、\nGIF、WebP）。\n",
        "返回的对象。\ncontextwise 在所有地方都接受它们。\n",
        "- [`Usage`][contextwise.Usage]、\n  [`WithUsage`][contextwise.WithUsage]\n",
        "见 [术语表](glossary.md)\n和指南。\n",
    ):
        assert [line for line, _ in chinese_faults(text)] == [1], text
    for text in (
        "- 列表\n- 项目\n1. 第一\n2. 第二\n",  # list items
        "| 术语 | 含义 |\n|---|---|\n| 词元 | token |\n",  # a table
        "## 标题\n正文。\n",  # a heading, then its paragraph
        "An English\nparagraph.\n",  # not Chinese prose
        "---\nenglish_version: abc\n---\n\n正文。\n",  # front matter
        "```text\n代码\n行\n```\n",  # a code block
        "第一行。  \n第二行。\n",  # a hard break Markdown keeps
    ):
        assert chinese_faults(text) == [], text


@pytest.mark.parametrize("domain", ["contextwise", "reference", "site"])
def test_chinese_messages_quote_with_full_width_quotes(domain: str) -> None:
    found = [
        f"[{where}] {string}"
        for where, string in _strings("zh", domain)
        if any(ASCII_QUOTE.search(piece) for _, piece in prose_pieces(string))
    ]
    assert not found, "\n".join(found)
    assert ASCII_QUOTE.search("例如 'medium'") and ASCII_QUOTE.search("键 '{field}'")
    assert not ASCII_QUOTE.search('Fragment("history", messages=[...])')


def test_generated_chinese_lists_use_the_enumeration_comma() -> None:
    found: list[str] = []
    for page in sorted((ROOT / "docs/zh/reference").glob("*.md")):
        for _, piece in prose_pieces(page.read_text(encoding="utf-8"), keep_inline=True):
            found += [f"{page.name}: {m.group(0)}" for m in ASCII_LIST.finditer(piece)]
    assert not found, found[:10]


def test_french_reference_summaries_begin_with_a_third_person_verb() -> None:
    found = [
        f"[{where}] {string}"
        for where, string in _strings("fr", "reference")
        if where.endswith(":summary") and INFINITIVE.match(string.split()[0].rstrip(",:"))
    ]
    assert not found, "\n".join(found)
    assert INFINITIVE.match("Renvoyer") and INFINITIVE.match("Apprendre")
    assert not INFINITIVE.match("Renvoie") and not INFINITIVE.match("Prépare")


@pytest.mark.parametrize("domain", ["contextwise", "reference", "site"])
def test_french_messages_quote_with_guillemets(domain: str) -> None:
    # a shell command keeps its quotes: pip install 'contextwise[langchain]'
    quoted = re.compile(r"(?<![\w(=])(?<!install )'[^'\s]+'(?![\w)])")
    found = [
        f"[{where}] {string}"
        for where, string in _strings("fr", domain)
        if any(quoted.search(piece) for _, piece in prose_pieces(string))
    ]
    assert not found, "\n".join(found)
    assert quoted.search("la session '{key}' ") and not quoted.search("l'indice d'un 'x(")


def test_chinese_pages_space_links_as_they_space_code() -> None:
    """A link reads like its text: a Chinese link text touches the Chinese around it, a link whose
    text is code or Latin is set off by a space, like inline code (用 `x` 这个). Hand-written pages;
    the reference shows its roles (:class:`X`) as its catalog spaces them."""
    target = r"(?:\([^)\s]+\)|\[[^\]\s]+\])"
    wrong = re.compile(
        rf"\[[^\]\n]*[{CHINESE}]\]{target} (?=[{CHINESE}])"  # Chinese text, then a space
        rf"|(?<=[{CHINESE}]) \[[{CHINESE}][^\]\n]*\][(\[]"  # a space, then Chinese text
        rf"|\[[^\]\n]*[`A-Za-z0-9)]\]{target}(?=[\u4e00-\u9fff])"  # code or Latin, no space
        rf"|(?<=[\u4e00-\u9fff])\[[`A-Za-z0-9][^\]\n]*\][(\[]"  # no space, then code or Latin
    )
    found = [
        f"{page.relative_to(ROOT)}: {match.group(0)!r}"
        for page in CHINESE_PAGES
        if "reference" not in page.relative_to(ROOT / "docs/zh").parts
        for _, piece in prose_pieces(page.read_text(encoding="utf-8"), keep_inline=True)
        for match in wrong.finditer(piece)
    ]
    assert not found, "\n".join(found)
    assert wrong.search("见 [术语表](glossary.md)") and wrong.search("[入门](a.md) 用")
    assert wrong.search("[`clear`](#clear)步骤") and not wrong.search("[`clear`](#clear) 步骤")


def test_chinese_counts_take_their_measure_word() -> None:
    """128,000 个词元, never 128,000 词元: a number of tokens takes 个, in pages and catalogs."""
    bare = re.compile(r"(?<![\w.])[\d,]*\d ?词元")
    texts = [
        (page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8"))
        for page in CHINESE_PAGES
    ]
    texts += [
        (where, s)
        for domain in ("contextwise", "reference", "site")
        for where, s in _strings("zh", domain)
    ]
    found = [
        f"{where}: {match.group(0)!r}"
        for where, text in texts
        for _, piece in prose_pieces(text)
        for match in bare.finditer(piece)
    ]
    assert not found, "\n".join(found)
    assert bare.search("128,000 词元") and not bare.search("128,000 个词元")
