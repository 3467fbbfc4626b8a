"""Benchmark: a recall of an unknown ref does not read the whole history again at each call.

The attack of 2026-12-04 timed a recall of a ref that no message holds at 5.8 s over 10**6
messages: each call read every message. A recall tool now keeps an index by ref per conversation,
extended with the messages added since its last call. This script builds a history of tool turns
(10**4, 10**5 and 10**6 messages), then times, for each size: a plain ``recall()`` (no index: one
full read, as before), the tool's first call (which builds the index), and a later call after one
more tool turn was added (which reads only that turn). It prints the three times and the ratio of
the full read to the later call; the goal is a later call at least 100 times faster than a full
read at 10**6 messages, and the script exits with status 1 when it misses it.

Run it with ``make bench`` or ``python benchmarks/bench_recall.py [--sizes 10000 100000]``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from typing import Any

from contextwise import InvalidValueError, recall, recall_tool

GOAL = 100.0
"""How many times faster a later call must be than a full read, at the largest size."""

SIZES = (10_000, 100_000, 1_000_000)


def seconds(func: Callable[[], Any]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def turn(n: int) -> list[dict[str, Any]]:
    """One tool turn: the call, then its result."""
    call = {"id": f"call_{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": f"result {n}"},
    ]


def history(count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    while len(messages) < count:
        messages += turn(len(messages))
    return messages


def full_read(messages: list[dict[str, Any]]) -> None:
    with contextlib.suppress(InvalidValueError):
        recall("missing", history=messages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    sizes = parser.parse_args(argv).sizes
    print("recall of an unknown ref: a full read, the index built, then one turn later")
    print(f"{'messages':>10} {'full read s':>12} {'first call s':>13} {'later call ms':>14} "
          f"{'full / later':>13}")
    ratio = 0.0
    for size in sizes:
        messages = history(size)
        tool = recall_tool(history=lambda messages=messages: messages)
        full = seconds(lambda messages=messages: full_read(messages))
        first = seconds(lambda tool=tool: tool.handle({"ref": "missing"}))
        messages += turn(size)
        later = seconds(lambda tool=tool: tool.handle({"ref": "missing"}))
        ratio = full / later
        print(f"{size:>10,} {full:>12.3f} {first:>13.3f} {later * 1000:>14.3f} {ratio:>12.0f}x")
    verdict = "ok" if ratio >= GOAL else "MISSED"
    print(f"goal: a later call at least {GOAL:g} x faster than a full read at {sizes[-1]:,} "
          f"messages: {verdict}")
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
