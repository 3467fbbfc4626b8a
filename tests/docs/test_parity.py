"""A translated page is its English page in another language: same links, same anchors, same code.

For every hand-written page of ``docs/fr`` and ``docs/zh`` (block by block against ``docs/en``):

- it links to the same targets, anchors included, and by the same identifiers
  (``[Name][contextwise.Name]``);
- each heading keeps the English anchor: a translated heading whose text gives another anchor
  carries the English one explicitly (``## Router une étape {#routing-a-step}``), so that a link
  into the page works in every language;
- its code blocks are the English ones, line for line, except the lines marked as localized: a
  line that ends with a comment (``# …``) may differ, its comment written in the page's language
  (docs/en/contributing/regenerating-the-reference.md, "Translating a page"). Output blocks (a
  ``text`` block right after a Python block, a ``console`` block) are what the code prints in the
  page's language and are checked by running it (tests/docs/test_guides.py,
  tests/docs/test_console.py); diagrams (``mermaid``) are translated pictures.
- its comments are translated: a comment of an English example is never left in English.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify
from test_guides import CodeBlock, code_blocks

from support.translations import DOCS, blocks, hand_written_pages, page_pairs

LANGUAGES = ("fr", "zh")
LINK = re.compile(r"\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)|\]\[(?P<ref>[^\]\s]+)\]")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)(?:\s*\{#(?P<id>[^}\s]+)\})?\s*$")
# a comment, or a one-line docstring
COMMENT = re.compile(r"(?:^|\s)#\s.*$|^\s*\"\"\"[^\"]*\"\"\"\s*$")
COMMENTED = frozenset({"python", "py", "bash", "sh", "shell", "toml", "yaml"})
UNCOMPARED = frozenset({"mermaid", "console"})


def links(markdown: str) -> Counter[str]:
    """Every link target (URL, page, anchor) and autorefs identifier of a page, counted."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return Counter(m.group("target") or m.group("ref") for m in LINK.finditer(text))


def anchor(heading: str) -> str | None:
    """The anchor a Markdown heading gets: its explicit ``{#id}``, or its text slugified."""
    found = HEADING.match(heading)
    if found is None:
        return None
    if found.group("id"):
        return found.group("id")
    text = re.sub(r"`([^`]*)`", r"\1", found.group("text"))
    return str(slugify(text, "-"))


def code_differences(english: CodeBlock, translated: CodeBlock) -> list[str]:
    """The lines of a translated block that differ from the English one without being localized."""
    if english.language != translated.language:
        return [f"language {translated.language!r} instead of {english.language!r}"]
    ours, theirs = translated.code.splitlines(), english.code.splitlines()
    if len(ours) != len(theirs):
        return [f"{len(ours)} lines instead of {len(theirs)}"]
    marked = english.language in COMMENTED
    return [
        f"line {number}: {line!r} (English {source!r})"
        for number, (source, line) in enumerate(zip(theirs, ours, strict=True), 1)
        if line != source and not (marked and COMMENT.search(line))
    ]


def untranslated_comments(english: CodeBlock, translated: CodeBlock) -> list[str]:
    """The comments of an English example left in English in the translated block."""
    if english.language not in COMMENTED:
        return []
    found = []
    for source, line in zip(english.code.splitlines(), translated.code.splitlines(), strict=False):
        comment = COMMENT.search(source)
        if comment and comment.group(0).strip() in line and re.search(r"[a-z]{3}", comment[0]):
            found.append(line.strip())
    return found


def compared_pairs(english: list[CodeBlock], translated: list[CodeBlock]) -> list[int]:
    """The indexes of the blocks the parity compares (outputs and diagrams are not compared)."""
    return [
        index
        for index, block in enumerate(english)
        if block.language not in UNCOMPARED
        and not (
            block.language == "text"
            and block.follows_previous
            and index > 0
            and english[index - 1].language == "python"
        )
    ]


PAGES = [(language, page) for language in LANGUAGES for page in hand_written_pages()]


def _ids(item: tuple[str, Path]) -> str:
    return f"{item[0]}/{item[1].as_posix()}"


@pytest.mark.parametrize("item", PAGES, ids=[_ids(item) for item in PAGES])
def test_a_translated_page_links_to_the_same_targets(item: tuple[str, Path]) -> None:
    language, page = item
    english = links((DOCS / "en" / page).read_text(encoding="utf-8"))
    translated = links((DOCS / language / page).read_text(encoding="utf-8"))
    assert translated == english, (
        f"missing: {sorted((english - translated).elements())}; "
        f"extra: {sorted((translated - english).elements())}"
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_translated_heading_keeps_the_english_anchor(language: str) -> None:
    found = []
    pages = [page for page in hand_written_pages() if page.name != "glossary.md"]
    for pair in page_pairs(language, pages):  # a translated glossary adds its own tables
        english = anchor(pair.english)
        if english is not None and anchor(pair.translation) != english:
            found.append(f"{pair.where}: {pair.translation!r} needs {{#{english}}}")
        if not pair.english:
            found.append(f"{pair.where}: not aligned with its English page")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("item", PAGES, ids=[_ids(item) for item in PAGES])
def test_a_translated_page_carries_the_english_code(item: tuple[str, Path]) -> None:
    language, page = item
    english = code_blocks((DOCS / "en" / page).read_text(encoding="utf-8"))
    translated = code_blocks((DOCS / language / page).read_text(encoding="utf-8"))
    assert len(translated) == len(english), "not the same number of code blocks"
    found: list[str] = []
    for index in compared_pairs(english, translated):
        for difference in code_differences(english[index], translated[index]):
            found.append(f"block at line {translated[index].line}: {difference}")
        for comment in untranslated_comments(english[index], translated[index]):
            found.append(f"block at line {translated[index].line}: comment in English: {comment}")
    assert not found, "\n".join(found)


def test_the_parity_checks_find_what_they_look_for() -> None:
    english = CodeBlock("python", "x = 1  # the count\nprint(x)\n", 1, False)
    assert (
        code_differences(english, CodeBlock("python", "x = 1  # le compte\nprint(x)\n", 1, False))
        == []
    )
    assert code_differences(english, CodeBlock("python", "x = 2\nprint(x)\n", 1, False)) != []
    assert untranslated_comments(english, english) == ["x = 1  # the count"]
    assert anchor("## Router une étape {#routing-a-step}") == anchor("## Routing a step")
    assert anchor("## 为步骤路由模型") != "routing-a-step"
    assert links("[a](b.md#c) [`X`][contextwise.X]") == Counter({"b.md#c": 1, "contextwise.X": 1})
    assert [len(blocks("# T\n\ntext\n\n```python\nx\n\ny\n```\n"))] == [3]
