"""The Performance page is produced from ``make bench`` output by tools/docs/perf_page.py.

The committed pages and chart are exactly what the committed output (benchmarks/results.txt)
gives; the reader copes with whichever benchmarks the output holds.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import ROOT
from tools.docs import site_labels
from tools.docs.perf_page import (
    chart,
    cost_chart,
    environment,
    generate,
    main,
    page,
    parse,
    session_chart,
)

OLD_TRIM = """\
   1000 messages: both keep the same 500 messages

times in ms over 7 runs each, min / median; ratio = langchain / contextwise
 messages     contextwise         langchain  ratio  us/msg (cw)    read lengths
     1000     0.10 / 0.12       1.00 / 1.20  10.0x        0.120     0.01 / 0.01
    10000     1.00 / 1.10     11.00 / 12.10  11.0x        0.110     0.10 / 0.10
"""
NEW_TRIM = """\
dicts: times in ms, min / median; ratio = langchain / contextwise
 messages     contextwise         langchain  ratio  us/msg (cw)       bare pass  cw/bare
     1000     0.05 / 0.06       1.00 / 1.20  20.0x        0.060     0.03 / 0.03    2.00x
   100000     5.00 / 6.00   100.00 / 120.00  20.0x        0.060     3.00 / 3.00    2.00x
growth of the median per 10x more messages (10.0 is linear):
objects: times in ms, min / median; ratio = langchain / contextwise
 messages     contextwise         langchain  ratio  us/msg (cw)       bare pass  cw/bare
     1000     0.08 / 0.09       1.00 / 1.20  13.3x        0.090     0.03 / 0.03    3.00x
"""
SESSION = "memory store: 400 steps, contextwise 0.51 s, LangChain 60.2 s, ratio 118x"


def _output(trim: str | None, session: bool = True) -> str:
    parts = [
        "date: 2026-12-01",
        "cpu: Test CPU",
        "cores: 2",
        "python: 3.11.7",
        "contextwise: 0.1.0",
        "langchain-core: 1.0.0",
    ]
    if trim is not None:
        parts += ["== benchmarks/bench_trim.py", trim]
    if session:
        parts += ["== benchmarks/bench_session.py", SESSION]
    return "\n".join(parts) + "\n"


def test_the_committed_page_is_rendered_from_the_committed_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (ROOT / "benchmarks/results.txt").is_file()
    assert main(["render", "--check"]) == 0, capsys.readouterr().out


def test_both_trim_formats_are_read() -> None:
    old = parse(_output(OLD_TRIM))
    assert [(t.mode, t.rows) for t in old.trim] == [("", [(1000, 0.12, 1.2), (10000, 1.1, 12.1)])]
    new = parse(_output(NEW_TRIM))
    assert [t.mode for t in new.trim] == ["dicts", "objects"]
    assert new.trim[0].rows == [(1000, 0.06, 1.2), (100000, 6.0, 120.0)]


@pytest.mark.parametrize("language", ["en", "fr", "zh"])
def test_the_page_names_the_machine_versions_and_every_benchmark(language: str) -> None:
    text = page(parse(_output(NEW_TRIM)), language)
    for fact in ("`Test CPU`", "`3.11.7`", "| contextwise | `0.1.0` |", "| langchain-core |"):
        assert fact in text
    assert "](assets/trim-time.svg)" in text
    assert SESSION in text and "`benchmarks/bench_trim.py`" in text
    assert text.count("| 1") >= 2  # one row per size and mode


def test_the_chart_draws_contextwise_and_langchain_for_each_table() -> None:
    svg = chart(parse(_output(NEW_TRIM)), "fr")
    root = ElementTree.fromstring(svg)
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == 4
    labels = "".join(root.itertext())
    # the trim modes are catalog labels too: no English word in a French legend
    assert "contextwise (dictionnaires)" in labels and "LangChain (objets)" in labels
    assert "dicts" not in labels and "objects" not in labels
    assert "100\u202f000" in labels  # French thousands separator on the size axis


def test_an_output_without_trim_table_gives_a_page_without_chart() -> None:
    results = parse(_output(None))
    assert results.trim == []
    text = page(results, "en")
    assert "trim-time.svg" not in text and "no trim table" in text
    assert SESSION in text


def test_the_environment_names_the_machine_and_the_versions() -> None:
    facts = environment()
    assert {"cpu", "cores", "python", "contextwise", "pydantic"} <= set(facts)


SESSION_TABLES = """\
400 steps of 50 messages (20000 in all), target 20000 characters

CPU time of the process:
                             total s  vs LangChain  first tenth ms  last tenth ms  last/first
LangChain trim_messages        2.610          1.0x           0.716          7.535      10.52x
contextwise MemoryStore        0.114         22.9x           0.290          0.286       0.99x

wall-clock time:
                             total s  vs LangChain  first tenth ms  last tenth ms  last/first
LangChain trim_messages        5.453          1.0x           0.780          7.851      10.07x
contextwise MemoryStore        0.115         47.4x           0.290          0.287       0.99x
"""


def test_the_session_loop_is_read_tabled_and_drawn() -> None:
    output = _output(NEW_TRIM, session=False) + "== benchmarks/bench_session.py\n" + SESSION_TABLES
    results = parse(output)
    titles = [table.title for table in results.session]
    assert titles == ["CPU time of the process", "wall-clock time"]
    assert results.session[0].rows == [
        ("LangChain trim_messages", 2.61, 1.0, 0.716, 7.535),
        ("contextwise MemoryStore", 0.114, 22.9, 0.29, 0.286),
    ]
    text = page(results, "fr")
    assert "](assets/session-loop.svg)" in text
    assert "| contextwise MemoryStore | 0,114 | 22,9 | 0,290 | 0,286 |" in text
    assert "**Temps processeur du processus**" in text
    svg = session_chart(results.session[0], "zh")
    root = ElementTree.fromstring(svg)
    bars = root.findall("{http://www.w3.org/2000/svg}rect")[1:-2]  # no backdrop, no legend keys
    widths = [float(bar.get("width", 0)) for bar in bars]
    assert widths[1] == max(widths) and widths[1] / widths[0] == pytest.approx(7.535 / 0.716, 0.01)
    assert "每步毫秒数" in "".join(root.itertext())


def test_an_output_without_session_tables_has_no_session_section() -> None:
    text = page(parse(_output(NEW_TRIM)), "en")
    assert "session-loop.svg" not in text and SESSION in text


COST = """\
met     PolicySession: summarizer calls < SummarizationMiddleware's (15 < 30)

billed input against mean prompt, by target (characters):
row                           limit   target  mean prompt  billed (Anthropic)
trim_messages                60,000   36,000       11,047           1,488,868
trim_messages               120,000   72,000       25,206           3,075,102
ContextSession               60,000   36,000        9,156           1,414,211
ContextSession              120,000   72,000       16,348           1,601,814
ContextSession, clear+trim   60,000   36,000       10,878           1,293,751
ContextSession, clear+trim  120,000   72,000       18,587           1,430,609
"""


def test_the_cost_sweep_is_read_tabled_and_drawn_in_every_language() -> None:
    results = parse(_output(NEW_TRIM) + "== benchmarks/bench_cost.py\n" + COST)
    assert [(p.name, p.target, p.mean_prompt, p.billed) for p in results.cost[:2]] == [
        ("trim_messages", 36_000, 11_047, 1_488_868),
        ("trim_messages", 72_000, 25_206, 3_075_102),
    ]
    assert len(results.cost) == 6
    french = page(results, "fr")
    assert "](assets/cost.svg)" in french and "{#cost}" in french
    assert "| ContextSession, effacement puis élagage | 60\u202f000 | 36\u202f000 |" in french
    svg = ElementTree.fromstring(cost_chart(results.cost, "zh"))
    assert len(svg.findall("{http://www.w3.org/2000/svg}polyline")) == 3  # one line per row
    texts = "".join(svg.itertext())
    assert "平均提示词（词元）" in texts and "ContextSession，先清除再裁剪" in texts
    assert "clear+trim" not in texts
    assert "cost.svg" not in page(parse(_output(NEW_TRIM)), "en")  # no sweep, no chart


NAMES = {  # names of code and products, the same in every language
    "contextwise",
    "LangChain",
    "trim_messages",
    "SummarizationMiddleware",
    "ContextSession",
    "MemoryStore",
    "SQLiteStore",
    "SQLAlchemyStore",
}


def _words_outside_catalogs(text: str, language: str) -> list[str]:
    """The pieces of a drawn text that are neither a catalog label, a name nor a number."""
    translate = site_labels.translator(language)
    labels = {translate(key) for key in site_labels.LABELS}
    if text in labels:
        return []
    found = []
    # a piece between spaces, commas or parentheses, half-width or full-width ("LangChain（字典）")
    for piece in re.split(r"[\s,()（）]+", text):
        known = piece in NAMES or any(piece in label for label in labels)
        if piece and not known and not piece.replace("\u202f", "").replace(".", "").isdigit():
            found.append(piece)
    return found


@pytest.mark.parametrize("language", ["en", "fr", "zh"])
def test_every_text_of_the_committed_charts_is_a_catalog_label_a_name_or_a_number(
    language: str,
) -> None:
    results = parse((ROOT / "benchmarks" / "results.txt").read_text(encoding="utf-8"))
    assert results.cost, "benchmarks/results.txt holds the cost sweep"
    found: list[str] = []
    for path, content in generate(results).items():
        if path.suffix != ".svg" or path.parent.parent.name != language:
            continue
        for element in ElementTree.fromstring(content).iter():
            if element.text and element.text.strip():
                found += [
                    f"{path.name}: {w}" for w in _words_outside_catalogs(element.text, language)
                ]
    assert not found, found


def test_the_chinese_legend_puts_the_mode_in_full_width_parentheses() -> None:
    results = parse((ROOT / "benchmarks" / "results.txt").read_text(encoding="utf-8"))
    charts = {path.relative_to(ROOT).as_posix(): text for path, text in generate(results).items()}
    chinese, french = charts["docs/zh/assets/trim-time.svg"], charts["docs/fr/assets/trim-time.svg"]
    assert "LangChain（字典）" in chinese and "(字典)" not in chinese
    assert "LangChain (dictionnaires)" in french


def test_a_legend_word_outside_the_catalogs_is_found() -> None:
    assert _words_outside_catalogs("contextwise (dicts)", "fr") == ["dicts"]
    assert _words_outside_catalogs("contextwise (dictionnaires)", "fr") == []
    assert _words_outside_catalogs("12\u202f000", "fr") == []


@pytest.mark.parametrize("language", ["fr", "zh"])
def test_the_committed_page_shows_no_english_label(language: str) -> None:
    text = (ROOT / "docs" / language / "performance.md").read_text(encoding="utf-8")
    outputs = text.split("{#outputs}")[0]  # the benchmarks' own output is shown as printed
    for english in ("**dicts**", "**objects**", "clear+trim", "Trimmed by", "Mean prompt"):
        assert english not in outputs, english
