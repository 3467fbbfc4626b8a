"""Benchmark: the exact ledger's alignment stays linear when an app edits a few messages.

After an app step, contextwise aligns the old and the new list of messages to know exactly which
messages left (a longest common subsequence, then moves). Its floor is one pass that compares the
two lists element by element (``old == new``, which Python does in C). This script times the
alignment of histories of 1,000, 10,000 and 100,000 messages in which an app rewrote, dropped and
inserted a few messages, in the two cases the alignment distinguishes: every message distinct (the
usual case) and many equal messages (short replies such as "ok"). It prints, for each size, the
ratio to the floor and the time per message; the goal is a time per message that does not grow
with the history (at most 10 times the smallest size's, where a quadratic alignment would reach
100), and the script exits with status 1 when a size misses it.

Run it with ``make bench`` or ``python benchmarks/bench_align.py [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from contextwise._align import align

# A quadratic alignment would take 100 times longer per message at 100,000 messages than at 1,000;
# a linear one takes about as long. The goal leaves room for cache effects and a busy machine.
GOAL = 10.0
SIZES = (1_000, 10_000, 100_000)
EDITS = 5


def best_of(repeat: int, func: Callable[[], Any]) -> float:
    """Return the shortest wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def history(count: int, repeats: bool) -> list[dict[str, Any]]:
    """A chat of ``count`` messages; with ``repeats``, one in four says just "ok"."""
    messages: list[dict[str, Any]] = []
    for index in range(count):
        role = "user" if index % 2 == 0 else "assistant"
        text = "ok" if repeats and index % 4 == 3 else f"message {index} about the task"
        messages.append({"role": role, "content": text})
    return messages


def edited(messages: list[dict[str, Any]], seed: int = 20261130) -> list[dict[str, Any]]:
    """The history after an app rewrote, dropped and inserted ``EDITS`` messages each."""
    rng = random.Random(seed)
    result = [dict(message) for message in messages]
    for edit in range(EDITS):
        result[rng.randrange(len(result))] = {"role": "user", "content": f"[redacted {edit}]"}
        del result[rng.randrange(len(result))]
        result.insert(rng.randrange(len(result)), {"role": "user", "content": f"note {edit}"})
    return result


def comparison_pass(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> int:
    """The floor: compare every message of one list with the message at the same place."""
    return sum(1 for first, second in zip(old, new, strict=False) if first == second)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    failed = False
    for repeats in (False, True):
        label = "many equal messages" if repeats else "distinct messages"
        per_message: list[float] = []
        for size in SIZES:
            old = history(size, repeats)
            new = edited(old)
            result = align(old, new)
            assert len(result.removed) <= 2 * EDITS, len(result.removed)
            seconds = best_of(args.repeat, lambda old=old, new=new: align(old, new))
            floor = best_of(args.repeat, lambda old=old, new=new: comparison_pass(old, new))
            per_message.append(seconds / size)
            growth = per_message[-1] / per_message[0]
            verdict = "ok" if growth <= GOAL else "MISSED"
            failed = failed or growth > GOAL
            print(
                f"{label:20} {size:>7} messages: {seconds * 1000:8.2f} ms, "
                f"{seconds / floor:6.1f} x one comparison pass, "
                f"{per_message[-1] * 1e6:5.2f} µs per message "
                f"({growth:.2f} x the smallest size's, goal <= {GOAL:g}: {verdict})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
