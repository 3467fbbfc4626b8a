"""Benchmark: ContextBudget.plan over 100,000 segments against one sort of the same keys.

Planning must check every segment, sort the optional ones by descending priority (ties in input
order) and scan them once, so its floor is one ``sorted()`` of the ``(-priority, index)`` keys of
the same segments. This script times both, best of several runs, and prints the ratio for each
strategy and each input shape (mappings and BudgetSegment objects). It sets no goal: like the
trim's ratio to a bare loop and the routing's microseconds, a ratio to a bare sort bought
hand-inlined twins of the checked path that no user could feel (DESIGN.md §12.7); a mapping is
checked by the same checks as a BudgetSegment, so it costs more than an object checked when built.

Run it with ``make bench`` or ``python benchmarks/bench_plan.py [--segments N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from contextwise import BudgetSegment, ContextBudget


def best_of(repeat: int, func: Callable[[], Any]) -> float:
    """Return the shortest wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def make_segments(count: int, seed: int = 20240601) -> list[dict[str, Any]]:
    """Build segments with many priority ties, a few float priorities and 5 % required ones."""
    rng = random.Random(seed)
    segments: list[dict[str, Any]] = []
    for index in range(count):
        segment: dict[str, Any] = {
            "id": f"segment-{index}",
            "tokens": rng.randint(1, 400),
            "priority": rng.randint(0, 50) if index % 7 else rng.random() * 50,
        }
        if index % 20:
            segment["required"] = False
        segments.append(segment)
    return segments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    mappings = make_segments(args.segments)
    objects = [BudgetSegment(**segment) for segment in mappings]
    total = sum(segment["tokens"] for segment in mappings)
    required = sum(segment["tokens"] for segment in mappings if segment.get("required", True))
    # The required segments fit, and about half of the optional tokens do.
    window = required + (total - required) // 2
    budget = ContextBudget(window=window, output=0, safety=0)

    keys = [(-segment["priority"], index) for index, segment in enumerate(mappings)]
    floor = best_of(args.repeat, lambda: sorted(keys))

    print(f"plan over {args.segments:,} segments, best of {args.repeat} runs")
    print(f"  sorted() of the (-priority, index) keys: {floor * 1000:8.1f} ms")
    worst = 0.0
    for shape, segments in (("mappings", mappings), ("BudgetSegment", objects)):
        for strategy in ("greedy", "cutoff"):
            elapsed = best_of(
                args.repeat,
                lambda segments=segments, strategy=strategy: budget.plan(
                    segments, strategy=strategy
                ),
            )
            ratio = elapsed / floor
            worst = max(worst, ratio)
            print(
                f"  plan({shape}, strategy={strategy!r}): {elapsed * 1000:8.1f} ms"
                f"  ratio {ratio:4.2f}x"
            )
    print(f"worst ratio {worst:.2f}x (no goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
