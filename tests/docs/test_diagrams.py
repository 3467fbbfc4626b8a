"""The guides' pictures (tools/docs/diagrams.py): committed as drawn, valid SVG, in every language.

The budget split and the harness step are SVG drawn by a script, with their text in the page's
language; the budgeting and harness-step guides of each language show their own language's picture.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest

from conftest import ROOT
from tools.docs.diagrams import generate, main
from tools.docs.typography import french_faults

SVG = "{http://www.w3.org/2000/svg}"
PICTURES = {"budget-split.svg": "budgeting.md", "harness-step.svg": "harness-step.md"}


def test_the_committed_pictures_are_the_drawn_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0, capsys.readouterr().out


def _texts(svg: str) -> list[str]:
    root = ElementTree.fromstring(svg)
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


@pytest.mark.parametrize("language", ["en", "fr", "zh"])
def test_each_language_has_its_pictures_in_its_guides(language: str) -> None:
    pictures = {path.name: svg for path, svg in generate([language]).items()}
    assert set(pictures) == set(PICTURES)
    for name, guide in PICTURES.items():
        texts = _texts(pictures[name])
        assert texts, name
        page = (ROOT / "docs" / language / "guides" / guide).read_text(encoding="utf-8")
        assert f"](../assets/{name})" in page, f"{language}/guides/{guide} does not show {name}"
    english = {path.name: _texts(svg) for path, svg in generate(["en"]).items()}
    if language != "en":
        for name in PICTURES:
            assert _texts(pictures[name]) != english[name], f"{name} is not translated"


def test_the_budget_split_is_drawn_to_scale() -> None:
    svg = generate(["en"])[ROOT / "docs/en/assets/budget-split.svg"]
    root = ElementTree.fromstring(svg)
    widths = [float(rect.get("width", 0)) for rect in root.iter(f"{SVG}rect")][1:]  # no backdrop
    context, output, reasoning, safety = widths
    assert context / output == pytest.approx(172_000 / 8_000)
    assert reasoning / output == pytest.approx(2)
    assert safety / output == pytest.approx(0.5)
    assert "172,000 tokens" in " ".join(_texts(svg))


def test_french_pictures_follow_french_typography() -> None:
    for svg in generate(["fr"]).values():
        assert french_faults("\n".join(_texts(svg))) == []
