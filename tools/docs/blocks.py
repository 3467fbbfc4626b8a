"""The blocks of a Markdown page, the unit in which a translated page follows its English page.

A translated page keeps the English structure: one paragraph, list, table, heading or code block
for each, so the n-th block of ``docs/fr/x.md`` translates the n-th of ``docs/en/x.md``. The front
matter (the freshness stamp) is not a block. The parity tests (tests/docs/test_parity.py), the
terminology tests and the numbers check (tools/docs/numbers.py) all align pages this way.
"""

from __future__ import annotations

import re

FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S
)


def blocks(markdown: str) -> list[str]:
    """The blocks of a page: paragraphs, lists, tables, headings, code blocks (kept whole).

    Examples:
        >>> blocks("# T\\n\\ntext\\n\\n```python\\nx\\n\\ny\\n```\\n")
        ['# T', 'text', '```python\\nx\\n\\ny\\n```']
    """
    body = FRONT_MATTER.sub("", markdown)
    found: list[str] = []
    start = 0
    for fence in FENCE.finditer(body):
        found += _paragraphs(body[start : fence.start()])
        found.append(fence.group(0))
        start = fence.end()
    return found + _paragraphs(body[start:])


def _paragraphs(text: str) -> list[str]:
    return [block.strip("\n") for block in re.split(r"\n[ \t]*\n", text) if block.strip()]
