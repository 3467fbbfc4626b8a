"""The "Performance" page of the site, produced from the output of ``make bench``, never typed.

``make bench`` first prints the machine and the versions (``environment``), then runs every
``benchmarks/bench_*.py`` after a ``== benchmarks/bench_x.py`` line. ``make perf-page`` keeps that
output in ``benchmarks/results.txt`` and renders from it, in every language of the site:

- ``docs/<lang>/performance.md``: the machine and the versions, the trim chart and table, then
  each benchmark's output as printed;
- ``docs/<lang>/assets/trim-time.svg``: trim time against history size, log-log, for contextwise
  and LangChain (one pair of lines per table that ``bench_trim.py`` prints);
- ``docs/<lang>/assets/cost.svg``: total billed input against mean prompt, one line per row of
  ``bench_cost.py``'s target sweep, one point per target.

Every text a page or a picture shows is a label of the ``site`` catalog (tools/docs/site_labels.py),
translated, or a name (contextwise, LangChain, a class) or a number formatted for the language.

The page shows whatever benchmarks the output holds: a benchmark that is missing or whose tables
cannot be read is shown as printed, without a chart. ``render --check`` changes nothing and exits 1
when a committed file differs from what ``benchmarks/results.txt`` gives.

    python -m tools.docs.perf_page environment
    python -m tools.docs.perf_page render [--check] [RESULTS]
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from xml.sax.saxutils import escape

from babel.numbers import format_decimal

from tools import generated
from tools.docs import site_labels
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results.txt"
PACKAGES = ("contextwise", "pydantic", "babel", "langchain-core", "sqlalchemy")
SECTION = re.compile(r"^== (?P<script>\S+)\s*$")
ENVIRONMENT = re.compile(r"^(?P<key>[a-z][\w -]*): (?P<value>.+)$")
TABLE = re.compile(r"^(?:(?P<mode>\w+): )?times in ms\b")
ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+[\d.]+ / (?P<ours>[\d.]+)\s+[\d.]+ / (?P<theirs>[\d.]+)\s+[\d.]+x"
)
SESSION_TABLE = re.compile(r"^(?P<title>[A-Za-z][\w -]*time[\w -]*):\s*$")
SESSION_ROW = re.compile(
    r"^(?P<name>\S.*?)\s{2,}(?P<total>[\d.]+)\s+(?P<ratio>[\d.]+)x\s+(?P<first>[\d.]+)\s+"
    r"(?P<last>[\d.]+)\s+[\d.]+x\s*$"
)
TOKENS_SUMMARY = re.compile(
    r"^summary (?P<group>[^:]+): (?P<count>\d+) documents, (?P<low>[\d.]+) (?P<high>[\d.]+), "
    r"quarter (?P<old_low>[\d.]+) (?P<old_high>[\d.]+)\s*$"
)
TOKENS_GOAL = re.compile(
    r"^(?:met|MISSED):\s+(?P<group>[^:]+): highest .*\(goal <= (?P<goal>[\d.]+)\)"
)
FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif"
COST_TITLE = re.compile(r"^billed input against mean prompt, by target\b")
COST_ROW = re.compile(
    r"^(?P<name>\S.*?)\s{2,}(?P<limit>[\d,]+)\s+(?P<target>[\d,]+)\s+(?P<mean>[\d,]+)\s+"
    r"(?P<billed>[\d,]+)\s*$"
)
COLOURS = ("#3f51b5", "#e65100", "#2e7d32", "#ad1457")

@dataclass
class TrimTable:
    """A table of ``bench_trim.py``: its mode, if any, and (size, contextwise ms, LangChain ms)."""

    mode: str
    rows: list[tuple[int, float, float]] = field(default_factory=list)


@dataclass
class SessionTable:
    """A table of ``bench_session.py``: its title (which clock) and, per contender, the total
    seconds, the ratio to LangChain and the milliseconds per step in the first and last tenth."""

    title: str
    rows: list[tuple[str, float, float, float, float]] = field(default_factory=list)


@dataclass
class TokensRow:
    """A group of ``bench_tokens.py``: its documents, the estimate's extreme ratios, its goal,
    and what version 1 of the estimate (a quarter of the characters) gave."""

    group: str
    count: int
    low: float
    high: float
    goal: float
    old_low: float
    old_high: float


@dataclass(frozen=True)
class CostPoint:
    """A row of ``bench_cost.py``'s target sweep at one target: its mean prompt and its bill."""

    name: str
    limit: int
    target: int
    mean_prompt: int
    billed: int


@dataclass
class Results:
    """A ``make bench`` output, read: the environment, each script's output, the trim tables."""

    environment: dict[str, str]
    outputs: dict[str, str]
    trim: list[TrimTable]
    session: list[SessionTable] = field(default_factory=list)
    tokens: list[TokensRow] = field(default_factory=list)
    cost: list[CostPoint] = field(default_factory=list)


def environment() -> dict[str, str]:
    """The machine and the versions the benchmarks run on."""
    cpu = "unknown"
    memory = "unknown"
    if Path("/proc/cpuinfo").is_file():
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = found.group(1).strip() if found else cpu
    if Path("/proc/meminfo").is_file():
        found = re.search(r"^MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
        memory = f"{int(found.group(1)) / 1024 / 1024:.1f} GiB" if found else memory
    facts = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    for package in PACKAGES:
        try:
            facts[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return facts


def parse(text: str) -> Results:
    """Read a ``make bench`` output."""
    facts: dict[str, str] = {}
    outputs: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if section := SECTION.match(line):
            current = outputs.setdefault(Path(section.group("script")).name, [])
        elif current is not None:
            current.append(line)
        elif found := ENVIRONMENT.match(line):
            facts[found.group("key")] = found.group("value").strip()
    trim: list[TrimTable] = []
    for line in outputs.get("bench_trim.py", []):
        if table := TABLE.match(line):
            trim.append(TrimTable(table.group("mode") or ""))
        elif (row := ROW.match(line)) and trim:
            size, ours, theirs = row.group("size", "ours", "theirs")
            trim[-1].rows.append((int(size), float(ours), float(theirs)))
    session: list[SessionTable] = []
    for line in outputs.get("bench_session.py", []):
        if table := SESSION_TABLE.match(line):
            session.append(SessionTable(table.group("title")))
        elif (row := SESSION_ROW.match(line)) and session:
            name, total, ratio, first, last = row.group("name", "total", "ratio", "first", "last")
            session[-1].rows.append((name, float(total), float(ratio), float(first), float(last)))
    return Results(
        facts,
        {name: "\n".join(lines).strip("\n") for name, lines in outputs.items()},
        [table for table in trim if table.rows],
        [table for table in session if table.rows],
        _tokens(outputs.get("bench_tokens.py", [])),
        _cost(outputs.get("bench_cost.py", [])),
    )


def _cost(lines: list[str]) -> list[CostPoint]:
    """The rows of ``bench_cost.py``'s target sweep, the table after its title line."""
    points: list[CostPoint] = []
    started = False
    for line in lines:
        started = started or bool(COST_TITLE.match(line))
        if started and (row := COST_ROW.match(line)):
            keys = ("limit", "target", "mean", "billed")
            limit, target, mean, billed = (int(row.group(key).replace(",", "")) for key in keys)
            points.append(CostPoint(row.group("name").strip(), limit, target, mean, billed))
    return points


def label(language: str, key: str, default: str) -> str:
    """The translated label ``key`` when the catalog has it, else ``default`` (a name)."""
    return site_labels.translator(language)(key) if key in site_labels.LABELS else default


def mode_label(mode: str, language: str) -> str:
    """A trim table's mode (``dicts``, ``objects``) in ``language``."""
    return label(language, f"perf:mode:{mode}", mode)


def _tokens(lines: list[str]) -> list[TokensRow]:
    """The groups of ``bench_tokens.py``'s summary, with the goal each one's last line states."""
    goals = {
        found.group("group"): float(found.group("goal"))
        for line in lines
        if (found := TOKENS_GOAL.match(line))
    }
    rows: list[TokensRow] = []
    for line in lines:
        if found := TOKENS_SUMMARY.match(line):
            group = found.group("group")
            rows.append(
                TokensRow(
                    group,
                    int(found.group("count")),
                    float(found.group("low")),
                    float(found.group("high")),
                    goals.get(group, 0.0),
                    float(found.group("old_low")),
                    float(found.group("old_high")),
                )
            )
    return rows


def _number(value: float, language: str, digits: int = 2) -> str:
    pattern = "#,##0" + ("." + "0" * digits if digits else "")
    return format_decimal(value, format=pattern, locale=languages.babel_locale(language))


def _series(results: Results, language: str) -> list[tuple[str, list[tuple[int, float]]]]:
    text = site_labels.translator(language)
    series: list[tuple[str, list[tuple[int, float]]]] = []
    for table in results.trim:
        names = ["contextwise", "LangChain"]
        if table.mode:
            mode = mode_label(table.mode, language)
            names = [text("perf:series-mode").format(name=name, mode=mode) for name in names]
        series.append((names[0], [(s, ours) for s, ours, _ in table.rows]))
        series.append((names[1], [(s, theirs) for s, _, theirs in table.rows]))
    return series


def chart(results: Results, language: str) -> str:
    """The trim chart: median time against history size, log-log, one line per series."""
    text = site_labels.translator(language)
    series = _series(results, language)
    points = [point for _, line in series for point in line]
    left, top, width, height = 70, 40, 520, 300
    x_low, x_high = (math.log10(v) for v in (min(p[0] for p in points), max(p[0] for p in points)))
    y_low = math.floor(math.log10(min(p[1] for p in points)))
    y_high = math.ceil(math.log10(max(p[1] for p in points)))
    x_high = x_high if x_high > x_low else x_low + 1
    y_high = y_high if y_high > y_low else y_low + 1

    def at(size: int, ms: float) -> tuple[float, float]:
        x = left + (math.log10(size) - x_low) / (x_high - x_low) * width
        y = top + height - (math.log10(ms) - y_low) / (y_high - y_low) * height
        return x, y

    body = [
        f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" '
        'stroke="#9e9e9e"/>'
    ]
    for power in range(y_low, y_high + 1):
        y = top + height - (power - y_low) / (y_high - y_low) * height
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width}" y2="{y:.1f}" '
                    'stroke="#eeeeee"/>')
        label = _number(10.0**power, language, max(0, -power))
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">'
                    f"{escape(label)}</text>")
    for size in sorted({p[0] for p in points}):
        x, _ = at(size, 10.0**y_low)
        body.append(f'<text x="{x:.1f}" y="{top + height + 18}" font-size="12" '
                    f'text-anchor="middle">{escape(_number(size, language, 0))}</text>')
    body.append(f'<text x="{left + width / 2}" y="{top + height + 40}" font-size="13" '
                f'text-anchor="middle">{escape(text("perf:x-axis"))}</text>')
    y_axis = escape(text("perf:y-axis"))
    body.append(f'<text x="{left}" y="{top - 12}" font-size="13">{y_axis}</text>')
    for index, (name, line) in enumerate(series):
        colour = COLOURS[index // 2 % len(COLOURS)]  # one colour per table; LangChain dashed
        dash = ' stroke-dasharray="6 4"' if name.startswith("LangChain") else ""
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (at(s, ms) for s, ms in line))
        body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"{dash}/>')
        for x, y in (at(s, ms) for s, ms in line):
            body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        legend_y = top + 16 + index * 20
        body.append(f'<line x1="{left + width + 20}" y1="{legend_y - 4}" '
                    f'x2="{left + width + 44}" y2="{legend_y - 4}" stroke="{colour}" '
                    f'stroke-width="2"{dash}/>')
        body.append(f'<text x="{left + width + 50}" y="{legend_y}" font-size="12">'
                    f"{escape(name)}</text>")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="820" height="{top + height + 56}" '
        f'viewBox="0 0 820 {top + height + 56}" font-family="{FONT}" role="img" fill="#1f2937">\n'
        f"<title>{escape(text('perf:chart-alt'))}</title>\n"
        f'<rect width="820" height="{top + height + 56}" fill="#ffffff"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def session_chart(table: SessionTable, language: str) -> str:
    """Milliseconds per step in the first and the last tenth of the loop, per contender."""
    text = site_labels.translator(language)
    left, top, bar, gap, width = 230, 56, 16, 18, 460
    longest = max(max(first, last) for _, _, _, first, last in table.rows) or 1.0
    body: list[str] = []
    y = float(top)
    for name, _, _, first, last in table.rows:
        body.append(f'<text x="{left - 10}" y="{y + bar + 4:.1f}" font-size="13" '
                    f'text-anchor="end">{escape(name)}</text>')
        for offset, value, colour in ((0, first, COLOURS[0]), (bar + 2, last, COLOURS[1])):
            span = value / longest * width
            body.append(f'<rect x="{left}" y="{y + offset:.1f}" width="{span:.1f}" '
                        f'height="{bar}" fill="{colour}"/>')
            label = _number(value, language, 3)
            body.append(f'<text x="{left + span + 6:.1f}" y="{y + offset + 12:.1f}" '
                        f'font-size="12">{escape(label)}</text>')
        y += 2 * bar + 2 + gap
    legend = [(text("perf:session-first"), COLOURS[0]), (text("perf:session-last"), COLOURS[1])]
    for index, (label, colour) in enumerate(legend):
        x = left + index * 240
        body.append(f'<rect x="{x}" y="18" width="14" height="14" fill="{colour}"/>')
        body.append(f'<text x="{x + 20}" y="30" font-size="13">{escape(label)}</text>')
    height = int(y) + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="820" height="{height}" '
        f'viewBox="0 0 820 {height}" font-family="{FONT}" role="img" fill="#1f2937">\n'
        f"<title>{escape(text('perf:session-alt'))}</title>\n"
        f'<rect width="820" height="{height}" fill="#ffffff"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def _cost_rows(points: list[CostPoint]) -> dict[str, list[CostPoint]]:
    rows: dict[str, list[CostPoint]] = {}
    for point in points:
        rows.setdefault(point.name, []).append(point)
    return rows


def cost_chart(points: list[CostPoint], language: str) -> str:
    """Total billed input against mean prompt: one line per row, one point per target."""
    text = site_labels.translator(language)
    left, top, width, height = 80, 40, 400, 300
    x_high = max(p.mean_prompt for p in points) * 1.05
    y_high = max(p.billed for p in points) / 1e6 * 1.05

    def at(point: CostPoint) -> tuple[float, float]:
        return (left + point.mean_prompt / x_high * width,
                top + height - point.billed / 1e6 / y_high * height)

    body = [f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" '
            'stroke="#9e9e9e"/>']
    for step in range(int(y_high) + 1):
        y = top + height - step / y_high * height
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width}" y2="{y:.1f}" '
                    'stroke="#eeeeee"/>')
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">'
                    f"{escape(_number(step, language, 0))}</text>")
    for tick in range(0, int(x_high) + 1, 10_000):
        x = left + tick / x_high * width
        body.append(f'<text x="{x:.1f}" y="{top + height + 18}" font-size="12" '
                    f'text-anchor="middle">{escape(_number(tick, language, 0))}</text>')
    body.append(f'<text x="{left + width / 2}" y="{top + height + 40}" font-size="13" '
                f'text-anchor="middle">{escape(text("perf:cost-x-axis"))}</text>')
    body.append(f'<text x="{left}" y="{top - 12}" font-size="13">'
                f'{escape(text("perf:cost-y-axis"))}</text>')
    for index, (name, line) in enumerate(_cost_rows(points).items()):
        colour = COLOURS[index % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if not name.startswith("Context") else ""
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(at, line))
        body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"{dash}/>')
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'
                 for x, y in map(at, line)]
        legend_y = top + 16 + index * 20
        body.append(f'<line x1="{left + width + 20}" y1="{legend_y - 4}" '
                    f'x2="{left + width + 44}" y2="{legend_y - 4}" stroke="{colour}" '
                    f'stroke-width="2"{dash}/>')
        shown = label(language, f"perf:cost-row:{name}", name)
        body.append(f'<text x="{left + width + 50}" y="{legend_y}" font-size="12">'
                    f"{escape(shown)}</text>")
    total = top + height + 56
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="820" height="{total}" '
        f'viewBox="0 0 820 {total}" font-family="{FONT}" role="img" fill="#1f2937">\n'
        f"<title>{escape(text('perf:cost-alt'))}</title>\n"
        f'<rect width="820" height="{total}" fill="#ffffff"/>\n'
        + "\n".join(body)
        + "\n</svg>\n"
    )


def _cost_lines(results: Results, language: str) -> list[str]:
    if not results.cost:
        return []
    text = site_labels.translator(language)
    heads = ("cost-row", "cost-limit", "cost-target", "cost-mean", "cost-billed")
    lines = [f"## {text('perf:cost')} {{#cost}}", "", text("perf:cost-text"), "",
             f"![{text('perf:cost-alt')}](assets/cost.svg)", "",
             "| " + " | ".join(text(f"perf:{head}") for head in heads) + " |",
             "|---" * len(heads) + "|"]
    for point in results.cost:
        shown = label(language, f"perf:cost-row:{point.name}", point.name)
        cells = (shown, *(_number(value, language, 0) for value in
                          (point.limit, point.target, point.mean_prompt, point.billed)))
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _session_lines(results: Results, language: str) -> list[str]:
    if not results.session:
        return []
    text = site_labels.translator(language)
    lines = [f"## {text('perf:session')} {{#session}}", "", text("perf:session-text"), "",
             f"![{text('perf:session-alt')}](assets/session-loop.svg)", ""]
    for table in results.session:
        title = table.title.strip()
        key = f"perf:clock:{title}"
        lines += [f"**{text(key) if key in site_labels.LABELS else title}**", ""]
        lines += [
            f"| {text('perf:contender')} | {text('perf:session-total')} | "
            f"{text('perf:session-ratio')} | {text('perf:session-first')} | "
            f"{text('perf:session-last')} |",
            "|---|---|---|---|---|",
            *(
                f"| {name} | {_number(total, language, 3)} | {_number(ratio, language, 1)} | "
                f"{_number(first, language, 3)} | {_number(last, language, 3)} |"
                for name, total, ratio, first, last in table.rows
            ),
            "",
        ]
    return lines


def _tokens_lines(results: Results, language: str) -> list[str]:
    if not results.tokens:
        return []
    text = site_labels.translator(language)

    def group(name: str) -> str:
        key = f"perf:tokens-group:{name}"
        return text(key) if key in site_labels.LABELS else name

    heads = ("tokens-group", "tokens-count", "tokens-low", "tokens-low-goal", "tokens-high",
             "tokens-high-goal", "tokens-quarter-low", "tokens-quarter-high")
    lines = [
        f"## {text('perf:tokens')} {{#token-estimate}}",
        "",
        text("perf:tokens-text"),
        "",
        "| " + " | ".join(text(f"perf:{head}") for head in heads) + " |",
        "|---" * len(heads) + "|",
    ]
    for row in results.tokens:
        cells = (
            group(row.group),
            str(row.count),
            _number(row.low, language, 3),
            "≥ " + _number(0.95, language),
            _number(row.high, language, 3),
            "≤ " + _number(row.goal, language),
            _number(row.old_low, language, 3),
            _number(row.old_high, language, 3),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def page(results: Results, language: str) -> str:
    """The Performance page in ``language``."""
    text = site_labels.translator(language)
    lines = [
        f"# {text('perf:title')}",
        "",
        f"> {text('perf:notice')}",
        "",
        text("perf:intro"),
        "",
        f"## {text('perf:machine')} {{#machine}}",
        "",
        f"| {text('perf:what')} | {text('perf:value')} |",
        "|---|---|",
        *(
            f"| {text('perf:fact:' + key) if 'perf:fact:' + key in site_labels.LABELS else key} "
            f"| `{value}` |"
            for key, value in results.environment.items()
        ),
        "",
        f"## {text('perf:trim')} {{#trim}}",
        "",
    ]
    if results.trim:
        picture = f"![{text('perf:chart-alt')}](assets/trim-time.svg)"
        lines += [text("perf:trim-text"), "", picture, ""]
        for table in results.trim:
            if table.mode:
                lines += [f"**{mode_label(table.mode, language)}**", ""]
            lines += [
                f"| {text('perf:size')} | {text('perf:ms').format(name='contextwise')} | "
                f"{text('perf:ms').format(name='LangChain')} | {text('perf:ratio')} |",
                "|---|---|---|---|",
                *(
                    f"| {_number(size, language, 0)} | {_number(ours, language)} | "
                    f"{_number(theirs, language)} | {_number(theirs / ours, language, 1)} |"
                    for size, ours, theirs in table.rows
                ),
                "",
            ]
    else:
        lines += [text("perf:absent"), ""]
    lines += _session_lines(results, language)
    lines += _cost_lines(results, language)
    lines += _tokens_lines(results, language)
    lines += [f"## {text('perf:outputs')} {{#outputs}}", ""]
    for script, output in results.outputs.items():
        key = f"perf:bench:{script}"
        title = text(key) if key in site_labels.LABELS else script
        anchor = script.removesuffix(".py").replace("_", "-")
        lines += [f"### {title} {{#{anchor}}}", "", f"`benchmarks/{script}`", "", "```text",
                  output, "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def generate(results: Results) -> dict[Path, str]:
    """Every file of the Performance page, in every language: path -> text."""
    files: dict[Path, str] = {}
    for language in languages.codes():
        folder = ROOT / "docs" / language
        files[folder / "performance.md"] = page(results, language)
        if results.trim:
            files[folder / "assets" / "trim-time.svg"] = chart(results, language)
        if results.session:
            files[folder / "assets" / "session-loop.svg"] = session_chart(
                results.session[0], language
            )
        if results.cost:
            files[folder / "assets" / "cost.svg"] = cost_chart(results.cost, language)
    return files


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module docstring."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["environment"]:
        for key, value in environment().items():
            print(f"{key}: {value}")
        return 0
    if args[:1] != ["render"]:
        print(__doc__, file=sys.stderr)
        return 2
    check = "--check" in args
    paths = [Path(arg) for arg in args[1:] if arg != "--check"]
    results = parse((paths[0] if paths else RESULTS).read_text(encoding="utf-8"))
    changed = generated.sync(generate(results), check=check)
    for path in changed:
        if check:
            print(f"stale: {path.relative_to(ROOT)} (run make perf-page, or perf_page.py render)")
        else:
            print(f"written: {path.relative_to(ROOT)}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
