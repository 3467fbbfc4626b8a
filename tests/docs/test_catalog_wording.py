"""The error catalogs say one thing one way: one translation per English pattern.

The English messages share patterns ("…, got {value}.", "…, got a value of type {type_name}.",
"Message {index} …" where the index counts from 0); each translated catalog renders each pattern
with one template, so that a reader (and a program grepping logs) meets the same words for the
same thing. An index is 0-based: French says « d'indice {index} », Chinese 索引为 {index} (never
第 {index}, which counts from 1).
"""

from __future__ import annotations

import re

import pytest

from support.translations import Pair, catalog_pairs

NBSP = "\u00a0"
# (English pattern, {language: the template its translation contains})
TEMPLATES: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (
        re.compile(r", got a value of type \{type_name\}\.$"),
        {
            "fr": ", mais la valeur reçue est de type {type_name}.",
            "zh": "，实际为 {type_name} 类型的值。",
        },
    ),
    (
        re.compile(r", got \{value\}\.$"),
        {"fr": f" (valeur reçue{NBSP}: {{value}}).", "zh": "，实际为 {value}。"},
    ),
    (re.compile(r"\{index\}"), {"fr": "indice", "zh": "索引"}),
    (re.compile(r"\bnon-blank\b"), {"fr": "non vide", "zh": "非空白"}),
)


def off_template(pair: Pair, language: str) -> list[str]:
    """The templates an English message's pattern asks for and its translation lacks."""
    return [
        template[language]
        for pattern, template in TEMPLATES
        if pattern.search(pair.english) and template[language] not in pair.translation
    ]


@pytest.mark.parametrize("language", ["fr", "zh"])
def test_each_english_pattern_has_one_translation(language: str) -> None:
    found = [
        f"{pair.where}: wants {missing!r}: {pair.translation}"
        for pair in catalog_pairs(language, ("contextwise",))
        for missing in off_template(pair, language)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("language", ["fr", "zh"])
def test_an_index_is_never_counted_from_one(language: str) -> None:
    ordinal = re.compile(r"第 ?\{index\}|\{index\}(?:e|ème|er)\b")
    found = [
        f"{pair.where}: {pair.translation}"
        for pair in catalog_pairs(language)
        if ordinal.search(pair.translation)
    ]
    assert not found, "\n".join(found)


def test_a_message_off_its_template_is_found() -> None:
    english = "Message {index} must be a mapping, got a value of type {type_name}."
    old = Pair("x", english, "第 {index} 条消息必须是映射，实际收到的值类型为 {type_name}。")
    assert off_template(old, "zh") == ["，实际为 {type_name} 类型的值。", "索引"]
    new = Pair("x", english, "索引为 {index} 的消息必须是映射，实际为 {type_name} 类型的值。")
    assert off_template(new, "zh") == []
