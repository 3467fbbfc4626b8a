"""The guides' pictures, drawn as SVG by this script in every language of the site.

Two figures, written to ``docs/<lang>/assets/``:

- ``budget-split.svg``: the context window shared as ``B_context = W - B_out - B_reasoning -
  B_safety``, drawn to scale for the budgeting guide's example (a 200,000-token window);
- ``harness-step.svg``: the harness step as a flow: context policy, model router, budget check
  (with its second pass and its error), then the request.

The pictures are plain SVG with their text in the page's language (the ``site`` catalog, see
tools/docs/site_labels.py), so they need no script in the browser and no network. Like the
reference, they are generated and committed: ``--check`` changes nothing and exits 1 when a
committed picture differs from what this script draws.

    python -m tools.docs.diagrams [--check]
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from xml.sax.saxutils import escape

from babel.numbers import format_decimal

from tools import generated
from tools.docs import site_labels
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
FONT = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', sans-serif"
INK, MUTED, ACCENT, LIGHT = "#1f2937", "#4b5563", "#3f51b5", "#e8eaf6"

# The budgeting guide's example: ContextBudget(window=200_000, output=8_000, reasoning=16_000).
WINDOW, OUTPUT, REASONING = 200_000, 8_000, 16_000
SAFETY = WINDOW * 2 // 100
CONTEXT = WINDOW - OUTPUT - REASONING - SAFETY


def _text(x: float, y: float, content: str, *, size: int = 14, weight: str = "normal",
          anchor: str = "start", fill: str = INK) -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" font-weight="{weight}" '
        f'text-anchor="{anchor}" fill="{fill}">{escape(content)}</text>'
    )


def _svg(width: int, height: int, title: str, body: Iterable[str]) -> str:
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{FONT}" role="img">',
        f"<title>{escape(title)}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="{MUTED}"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        *body,
        "</svg>",
    ]
    return "\n".join(lines) + "\n"


def budget_split(language: str) -> str:
    """The budget split, drawn to scale, labelled in ``language``."""
    text = site_labels.translator(language)

    def tokens(n: int) -> str:
        number = format_decimal(n, locale=languages.babel_locale(language))
        return text("budget:tokens").format(n=number)

    left, width, top, height = 40, 760, 84, 56
    scale = width / WINDOW
    shares = [
        ("context", CONTEXT, ACCENT),
        ("out", OUTPUT, "#26a69a"),
        ("reasoning", REASONING, "#ffa726"),
        ("safety", SAFETY, "#ef5350"),
    ]
    body = [_text(left, 30, text("budget:title"), size=17, weight="bold")]
    # the window, above the bar
    body += [
        f'<line x1="{left}" y1="64" x2="{left + width}" y2="64" stroke="{MUTED}" '
        'marker-start="url(#arrow)" marker-end="url(#arrow)"/>',
        _text(left + width / 2, 56, f"{text('budget:window')} = {tokens(WINDOW)}", anchor="middle"),
    ]
    x = float(left)
    label_y = top + height + 34
    for index, (key, size, colour) in enumerate(shares):
        span = size * scale
        body.append(
            f'<rect x="{x:g}" y="{top}" width="{span:g}" height="{height}" fill="{colour}" '
            'stroke="#ffffff" stroke-width="1"/>'
        )
        if key == "context":
            body.append(_text(x + span / 2, top + 24, text("budget:context"), anchor="middle",
                              fill="#ffffff", weight="bold"))
            body.append(_text(x + span / 2, top + 44, tokens(size), anchor="middle",
                              fill="#ffffff"))
        else:
            # the small shares are labelled below the bar, one line each, right-aligned
            y = label_y + (index - 1) * 40
            centre = x + span / 2
            body.append(
                f'<line x1="{centre:g}" y1="{top + height}" x2="{centre:g}" y2="{y - 14}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
            share = f"{text('budget:' + key)} = {tokens(size)}"
            body.append(_text(centre + 6, y, share, anchor="end"))
        x += span
    formula = "B_context = W − B_out − B_reasoning − B_safety"
    body.append(_text(left, label_y + 130, formula, size=15, fill=MUTED))
    return _svg(840, label_y + 150, text("budget:title"), body)


def _box(x: float, y: float, w: float, h: float, lines: tuple[str, str], *,
         fill: str = LIGHT, stroke: str = ACCENT) -> list[str]:
    return [
        f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="8" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="1.5"/>',
        _text(x + w / 2, y + 24, lines[0], anchor="middle", weight="bold"),
        _text(x + w / 2, y + 44, lines[1], anchor="middle", size=13, fill=MUTED),
    ]


def _arrow(x1: float, y1: float, x2: float, y2: float, *, dashed: bool = False) -> str:
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    return (
        f'<path d="M{x1:g},{y1:g} L{x2:g},{y2:g}" stroke="{MUTED}" stroke-width="1.5" '
        f'fill="none" marker-end="url(#arrow)"{dash}/>'
    )


def harness_step(language: str) -> str:
    """The harness step as a flow, labelled in ``language``."""
    text = site_labels.translator(language)

    def lines(key: str) -> tuple[str, str]:
        return text(f"step:{key}"), text(f"step:{key}:detail")
    x, w, h, gap = 40, 380, 58, 34
    ys = [20 + i * (h + gap) for i in range(5)]
    body: list[str] = []
    body += _box(x, ys[0], w, h, lines("input"), fill="#f5f5f5", stroke=MUTED)
    for key, y in zip(("policy", "router", "check", "request"), ys[1:], strict=True):
        body += _box(x, y, w, h, lines(key))
    for upper, lower in pairwise(ys):
        body.append(_arrow(x + w / 2, upper + h, x + w / 2, lower - 2))
    body.append(_text(x + w / 2 + 8, ys[4] - 12, text("step:fits"), size=13, fill=MUTED))
    # the second pass: from the check back to the policy, on the right
    check_mid, policy_mid, side = ys[3] + h / 2, ys[1] + h / 2, x + w + 60
    body.append(
        f'<path d="M{x + w:g},{check_mid - 10:g} H{side:g} V{policy_mid:g} H{x + w + 2:g}" '
        f'stroke="{MUTED}" stroke-width="1.5" fill="none" stroke-dasharray="5 4" '
        'marker-end="url(#arrow)"/>'
    )
    again = lines("again")
    body.append(_text(side + 10, (check_mid + policy_mid) / 2 - 8, again[0], size=13))
    body.append(_text(side + 10, (check_mid + policy_mid) / 2 + 10, again[1], size=13))
    # the error, to the right of the check
    error_x = side + 30
    body.append(_arrow(x + w, check_mid + 12, error_x - 2, check_mid + 12 + 40, dashed=True))
    error = (text("step:error"), "ContextOverflowError")
    body += _box(error_x, check_mid + 30, 260, h, error, fill="#fdecea",
                 stroke="#c62828")
    return _svg(error_x + 280, ys[4] + h + 20, text("step:policy"), body)


def generate(codes: Iterable[str] | None = None) -> dict[Path, str]:
    """Every picture of every language (or of ``codes``): path -> SVG text."""
    pictures: dict[Path, str] = {}
    for language in languages.codes() if codes is None else codes:
        assets = ROOT / "docs" / language / "assets"
        pictures[assets / "budget-split.svg"] = budget_split(language)
        pictures[assets / "harness-step.svg"] = harness_step(language)
    return pictures


def main(argv: list[str] | None = None) -> int:
    """Write the pictures, or with ``--check`` list those that differ and exit 1."""
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    changed = generated.sync(generate(), check=check)
    for path in changed:
        if check:
            print(f"stale: {path.relative_to(ROOT)} (run python -m tools.docs.diagrams)")
        else:
            print(f"written: {path.relative_to(ROOT)}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
