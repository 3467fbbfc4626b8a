"""The token estimate against four real tokenizers, document by document.

Every guide of each language (docs/en, fr and zh guides) and every module of the package's source
is counted with ``estimate_tokens`` and with the tokenizers one wheel ships offline: OpenAI's
o200k and cl100k, DeepSeek's and the legacy Claude tokenizer (see tools/tokenizers.py). The
script prints one row per document, then one line per group: the lowest estimate / largest count
and the highest estimate / smallest count, beside what the estimate of version 1 (a quarter of
the characters) gave.

Goals: the estimate is never more than 5 % under the largest count (>= 0.95), and over the
smallest by at most 25 % for Latin text and code (<= 1.25) and 70 % for Chinese (<= 1.70).
Exit status: 0 when every goal is met, 2 when one is missed.

    python benchmarks/bench_tokens.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.tokenizers import TOKENIZERS, goals, measure


def main() -> int:
    rows = measure()
    names = "".join(f"{name:>9}" for name in TOKENIZERS)
    print(f"{'document':46} {'chars':>7} {'estimate':>9}{names} {'est/max':>8} {'est/min':>8}")
    for row in rows:
        counts = "".join(f"{row.counts[name]:>9}" for name in TOKENIZERS)
        print(
            f"{row.path:46} {row.chars:>7} {row.estimate:>9}{counts} "
            f"{row.under_largest:>8.3f} {row.over_smallest:>8.3f}"
        )
    print()
    print("group: documents, estimate / largest count (lowest), estimate / smallest count "
          "(highest), the same for a quarter of the characters (version 1)")
    for group in dict.fromkeys(row.group for row in rows):
        mine = [row for row in rows if row.group == group]
        low = min(row.under_largest for row in mine)
        high = max(row.over_smallest for row in mine)
        old_low = min(row.quarter / max(row.counts.values()) for row in mine)
        old_high = max(row.quarter / min(row.counts.values()) for row in mine)
        print(f"summary {group}: {len(mine)} documents, {low:.3f} {high:.3f}, "
              f"quarter {old_low:.3f} {old_high:.3f}")
    print()
    missed = 0
    for text, figure, limit, met in goals(rows):
        sign = ">=" if "lowest" in text else "<="
        print(f"{'met:   ' if met else 'MISSED:'} {text} {figure:.3f} (goal {sign} {limit:.2f})")
        missed += not met
    return 2 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
