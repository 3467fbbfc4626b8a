"""The glossary settles each term once: the variants it retires appear nowhere, per language, and
where the English says a glossary term, the translation says the glossary's rendering.

Each translated glossary (``docs/<lang>/glossary.md``) ends with a table of retired terms under the
heading id ``retired-terms``: the retired variant, the term to use instead, and the exceptions,
expressions in which the variant stays right (日志级别, "log level", keeps 级别). Every page of the
language, generated reference included, and every translation of its catalogs is searched, with
backticks removed so that `` `greedy` 策略 `` is read as ``greedy 策略``.

The check is also source-aware: each translated glossary has a table of terms checked against the
English (heading id ``source-terms``): the English term, its renderings, and the English expressions
in which the word means something else. Wherever an English text (a catalog msgid, a block of an
English page) has the term outside code, its translation (the msgstr, the same block of the
translated page) has one of the renderings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from conftest import ROOT
from support.translations import Pair, catalog_pairs, hand_written_pages, page_pairs, prose

TRANSLATED = ("fr", "zh")


def retired_terms(glossary: str) -> list[tuple[str, str, list[str]]]:
    """The (retired, preferred, exceptions) rows of a glossary's retired-terms table."""
    section = glossary.split("{#retired-terms}", 1)
    if len(section) < 2:
        return []
    rows: list[tuple[str, str, list[str]]] = []
    for line in section[1].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[0]) <= {"-"}:
            continue
        exceptions = [item.strip() for item in re.split(r"[,、]", cells[2]) if item.strip()]
        rows.append((cells[0], cells[1], exceptions))
    return rows[1:]  # the first row is the header


def occurrences(text: str, term: str, exceptions: list[str]) -> list[int]:
    """The offsets of ``term`` in ``text`` that no exception covers.

    A term is retired however a sentence or a message capitalizes it: « l'app » is found in
    « L'app « {app} » a échoué », « la raison » in « La raison du choix ». Past its first letter,
    a term is matched as the glossary writes it, since a capital there carries a meaning: the SDK's
    « Runner » is not contextwise's runner, and « Défaut » is only the column header.
    """
    covered: set[int] = set()
    for exception in exceptions:
        inner = exception.lower().find(term.lower())
        for found in any_case(exception).finditer(text):
            covered.add(found.start() + inner)
    return [m.start() for m in any_case(term).finditer(text) if m.start() not in covered]


def any_case(term: str) -> re.Pattern[str]:
    """A term written in lower case with its first letter in either case (``[lL]'app``); a term
    that starts with a capital (« Défaut », the header) as written."""
    first = term[:1]
    head = f"[{re.escape(first)}{re.escape(first.upper())}]" if first.islower() else ""
    return re.compile(head + re.escape(term[1:] if head else term))


def _texts(language: str) -> list[tuple[str, str]]:
    """(where, text) for every page and every catalog translation of a language."""
    texts = [
        (page.relative_to(ROOT).as_posix(), page.read_text(encoding="utf-8"))
        for page in sorted((ROOT / "docs" / language).rglob("*.md"))
        if page.name != "glossary.md"
    ]
    # the site's description and navigation in this language (mkdocs.yml)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block = re.search(rf"- locale: {language}\n(.*?)(?=\n\s*- locale:|\n\S|\Z)", config, re.S)
    if block:
        texts.append((f"mkdocs.yml ({language})", block.group(1)))
    for catalog_path in sorted((ROOT / "locales" / language / "LC_MESSAGES").glob("*.po")):
        with catalog_path.open("rb") as handle:
            catalog = read_po(handle)
        for message in catalog:
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            for string in strings:
                if message.id and string:
                    where = f"{catalog_path.relative_to(ROOT)} [{message.context or message.id}]"
                    texts.append((where, string))
    return texts


def source_terms(glossary: str) -> list[tuple[str, list[str], list[str]]]:
    """The (English term, renderings, English exceptions) rows of the ``source-terms`` table."""
    section = glossary.split("{#source-terms}", 1)
    if len(section) < 2:
        return []
    rows: list[tuple[str, list[str], list[str]]] = []
    for line in section[1].split("\n## ", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or set(cells[0]) <= {"-"}:
            continue
        renderings = [item.strip() for item in cells[1].split(" / ") if item.strip()]
        exceptions = [item.strip() for item in cells[2].split(",") if item.strip()]
        rows.append((cells[0], renderings, exceptions))
    return rows[1:]  # the first row is the header


def english_pattern(term: str) -> re.Pattern[str]:
    """A whole word, singular or plural (``tool unit``, ``harnesses``), or a prefix
    (``compact*``)."""
    if term.endswith("*"):
        return re.compile(rf"\b{re.escape(term[:-1])}", re.I)
    return re.compile(rf"\b{re.escape(term)}(?:s|es)?\b", re.I)


def missing_renderings(pair: Pair, rows: list[tuple[str, list[str], list[str]]]) -> list[str]:
    """The terms the English of a pair has (outside code) and its translation does not render."""
    english = " ".join(prose(pair.english).split())
    translation = " ".join(prose(pair.translation).split()).lower()
    missing: list[str] = []
    for term, renderings, exceptions in rows:
        text = english
        for exception in exceptions:
            text = re.sub(re.escape(exception), " ", text, flags=re.I)
        found = english_pattern(term).search(text)
        if found and not any(" ".join(r.split()).lower() in translation for r in renderings):
            missing.append(f"{term!r} (write {' / '.join(renderings)!r})")
    return missing


def _glossary(language: str) -> str:
    return (ROOT / "docs" / language / "glossary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_glossary_retires_variant_terms(language: str) -> None:
    rows = retired_terms(_glossary(language))
    assert len(rows) >= 3, f"docs/{language}/glossary.md has no retired-terms table"
    for retired, preferred, exceptions in rows:
        assert retired and preferred and retired != preferred
        assert all(retired.lower() in exception.lower() for exception in exceptions)


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_page_or_translation_uses_a_retired_term(language: str) -> None:
    rows = retired_terms(_glossary(language))
    found: list[str] = []
    for where, text in _texts(language):
        plain = text.replace("`", "")
        for retired, preferred, exceptions in rows:
            for offset in occurrences(plain, retired, exceptions):
                context = plain[max(0, offset - 12) : offset + len(retired) + 12]
                found.append(f"{where}: {retired!r} (write {preferred!r}) in {context!r}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("language", TRANSLATED)
def test_where_the_english_has_a_glossary_term_the_translation_renders_it(language: str) -> None:
    rows = source_terms(_glossary(language))
    assert len(rows) >= 20, f"docs/{language}/glossary.md has no source-terms table"
    found: list[str] = []
    pages = [page for page in hand_written_pages() if page.name != "glossary.md"]
    for pair in (*catalog_pairs(language), *page_pairs(language, pages)):
        if not pair.english and not pair.translation:
            found.append(f"{pair.where}: not aligned with its English page")
        for missing in missing_renderings(pair, rows):
            found.append(f"{pair.where}: {missing} in {pair.translation[:90]!r}")
    assert not found, f"{len(found)} found:\n" + "\n".join(found)


def test_a_translation_that_drops_the_glossary_rendering_is_found() -> None:
    rows = source_terms(_glossary("zh"))
    compaction = Pair("x", "The messages after compaction.", "压缩后的消息。")
    assert missing_renderings(compaction, rows) == ["'compact*' (write '精简')"]
    compacted = Pair("x", "The messages after compaction.", "精简后的消息。")
    assert missing_renderings(compacted, rows) == []
    blank = Pair("x", "{field} must be a non-blank string.", "{field} 必须是非空字符串。")
    assert missing_renderings(blank, rows) == ["'blank' (write '空白')"]
    # code is not English prose: ``strategy="last"`` asks for no rendering of "strategy"
    assert missing_renderings(Pair("x", 'Use ``strategy="last"``.', "使用 x。"), rows) == []
    # an exception is another sense of the word
    assert missing_renderings(Pair("x", "Its compact JSON.", "其紧凑 JSON。"), rows) == []


# The terms that drifted before a glossary decided them (issue 32), each with the English spellings
# that decide it: every glossary has a row whose English term is one of them. Case matters only
# where it carries the meaning (the SDK's Runner, contextwise's runner).
DECIDED = {
    "prompt cache": r"prompt cache",
    "prompt (invite)": r"prompts?",
    "worker": r"workers?(?: process(?:es)?)?",
    "item": r"items?",
    "chat message": r"chat messages?",
    "capability": r"capabilit(?:y|ies)",
    "sync face": r"sync(?: / async)? (?:face|variant)s?",
    "script": r"scripts?",
    "session id": r"session id",
    "schema": r"(?:JSON )?schema",
    "mode (not a schema)": r"(?:policy )?modes?",
    "the Agents SDK's Runner": r"(?-i:.*\bRunner\b.*)",
    "our runner": r"(?-i:runner)",
    "sticky": r"sticky(?: routing| router)?",
    "mapping / dict": r"mapping|dict|mapping / dict|dict / mapping",
    "fallback": r"fallback(?: model)?",
    "rewind": r"rewind",
}


def english_terms(glossary: str) -> list[str]:
    """The English terms of a glossary's main table: its first column in English, its
    ``English`` column in a translation; a cell may hold several, separated by commas."""
    table = glossary.split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("|")
    ]
    column = rows[0].index("English") if "English" in rows[0] else 0
    return [
        part.strip()
        for row in rows[2:]
        if len(row) > column
        for part in re.sub(r"\s*\([^)]*\)", "", row[column]).split(",")
        if part.strip()
    ] + [row[column] for row in rows[2:] if len(row) > column]


def undecided(glossary: str) -> list[str]:
    """The drifting terms of :data:`DECIDED` that a glossary has no row for."""
    terms = english_terms(glossary)
    return [
        name
        for name, spelling in DECIDED.items()
        if not any(re.fullmatch(spelling, term, re.I) for term in terms)
    ]


@pytest.mark.parametrize("language", ("en", *TRANSLATED))
def test_the_glossary_decides_every_term_that_drifted(language: str) -> None:
    missing = undecided(_glossary(language))
    assert not missing, f"docs/{language}/glossary.md decides none of: {missing}"


def test_a_glossary_without_a_drifting_term_is_found() -> None:
    glossary = (
        "# G\n\n| Term | Meaning | Français | 简体中文 |\n|---|---|---|---|\n"
        "| runner | A bound policy. | exécuteur | 运行器 |\n"
        "| worker thread | A thread. | thread de travail | 工作线程 |\n"
    )
    missing = undecided(glossary)
    assert "our runner" not in missing
    assert "worker" in missing  # a worker thread is not a worker
    assert "the Agents SDK's Runner" in missing  # case carries the meaning
    translated = (
        "# G\n\n| 术语 | 含义 | English | Français |\n|---|---|---|---|\n"
        "| SDK 的 Runner | x | Runner (OpenAI Agents SDK) | Runner du SDK |\n"
        "| 映射 | x | mapping, dict | dictionnaire |\n"
    )
    assert {"the Agents SDK's Runner", "mapping / dict"}.isdisjoint(undecided(translated))


# One meaning per Chinese term (issue 32: 回退 said both fallback and rewind): where a page or a
# catalog says the term, its English text (the aligned paragraph, or the msgid and its context)
# says what the term means here, and nothing else.
CHINESE_MEANINGS = {
    "回退": r"fall(?:s|ing)? back|fell back|fallback",  # rewind is 回滚
    "回滚": r"rewind|rewound|roll(?:s|ed)? back|rollback",
    "模式": r"\bmodes?\b|\bpatterns?\b|\bselection",  # a schema is a Schema
    "运行器": r"(?-i:\brunners?\b)",  # the SDK's Runner stays Runner
    "条目": r"\bitems?\b|\bentr(?:y|ies)\b",  # an element of a list
    "工作进程": r"\bworkers?\b",
    "工作线程": r"\bthreads?\b",
    "提示词": r"\bprompt",
    "计价": r"\bpric|\bcost|\bbill",  # money; tokens are 折算
    "映射": r"\bmap",
    "粘性": r"\bsticky",
    "能力": r"\bcapabilit",
    "会话 ID": r"\bsession(?:'s)? id",
    "文字系统": r"\bscripts?\b",
}


def other_meanings(pair: Pair) -> list[str]:
    """The terms of :data:`CHINESE_MEANINGS` that a translation says where its English text does
    not say their meaning."""
    english = f"{prose(pair.english)} {pair.where}"
    translation = prose(pair.translation)
    return [
        term
        for term, meaning in CHINESE_MEANINGS.items()
        if term in translation and not re.search(meaning, english, re.I)
    ]


def test_one_chinese_term_has_one_meaning() -> None:
    pages = [page for page in hand_written_pages() if page.name != "glossary.md"]
    found = [
        f"{pair.where}: {term} ({CHINESE_MEANINGS[term]}) in {pair.translation[:80]!r}"
        for pair in (*catalog_pairs("zh"), *page_pairs("zh", pages))
        for term in other_meanings(pair)
    ]
    assert not found, f"{len(found)} found:\n" + "\n".join(found)


def test_a_chinese_term_in_another_meaning_is_found() -> None:
    rewind = Pair("x", "after an edit or a rewind", "在编辑或回退之后")
    assert other_meanings(rewind) == ["回退"]
    assert other_meanings(Pair("x", "after an edit or a rewind", "在编辑或回滚之后")) == []
    schema = Pair("x", "The output schema, passed on.", "输出模式，原样传递。")
    assert other_meanings(schema) == ["模式"]
    sdk = Pair("x", "the SDK's Runner saves the items", "SDK 的运行器会保存条目")
    assert other_meanings(sdk) == ["运行器"]


def test_the_settled_chinese_terms_are_in_the_glossary() -> None:
    glossary = _glossary("zh")
    for term in (
        "推理强度等级",
        "错误码",
        "精简",
        "校验",
        "构造",
        "选择模式",
        "提供方",
        "法文",
        "空白",
        "形态",
        "算法",
        "分词器",
        "摘要器",
        "工作线程",
        "端点",
        "路由结果",
    ):
        assert f"| {term} |" in glossary, term


def test_exceptions_cover_only_their_own_expression() -> None:
    text = "日志级别为 INFO；推理强度级别为 high"
    assert occurrences(text, "级别", ["日志级别"]) == [text.rindex("级别")]
    assert occurrences("greedy 策略", "greedy 策略", []) == [0]


def test_retired_terms_are_found_in_any_case() -> None:
    """Issue 32: « L'app » in six error messages escaped a check that read « l'app » only."""
    text = "L'app « x » a échoué. La raison du choix. Voir l'app."
    assert occurrences(text, "l'app", []) == [0, text.rindex("l'app")]
    assert occurrences(text, "la raison", []) == [text.index("La raison")]
    assert occurrences("Le dictionnaire", "dictionnaire", ["le dictionnaire"]) == []
    # a capital of the glossary's own is meant
    assert occurrences("lit le Runner du SDK", "lit le runner", []) == []
    assert occurrences("par défaut", "Défaut", []) == []


def test_the_table_parser_reads_rows_and_exceptions() -> None:
    glossary = (
        "# G\n\n## Retired {#retired-terms}\n\n| Retired | Use | Exceptions |\n|---|---|---|\n"
        "| 级别 | 等级 | 日志级别、日志级别表 |\n| Défaut | Valeur par défaut | |\n"
    )
    assert retired_terms(glossary) == [
        ("级别", "等级", ["日志级别", "日志级别表"]),
        ("Défaut", "Valeur par défaut", []),
    ]
    assert retired_terms("# G\n") == []


def test_a_retired_term_is_found(tmp_path: Path) -> None:
    rows = retired_terms(_glossary("zh"))
    assert any(occurrences("服务商的 API".replace("`", ""), r, e) for r, _, e in rows)
