"""Trimming long chat histories: contextwise against langchain_core.messages.trim_messages.

Both trim a history of 1k, 10k and 100k messages to half its size in characters, keeping whole
user turns from the newest side and the system message:

- contextwise: ``process_context`` with one ``trim`` step, ``user-turn`` grouping and a
  ``target_chars`` of half the history;
- LangChain: ``trim_messages(strategy="last", start_on="human", include_system=True)`` with a
  character counter and the same budget.

The script checks that both keep exactly the same messages, then prints the time of each, the
ratio, the time per message, and the growth of each time per 10x more messages. The histories are
converted to LangChain messages before timing starts. Goal: contextwise at least 10x faster at
100k messages, and its time per message flat within 2x from 1k to 100k.

    python benchmarks/bench_trim.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from itertools import pairwise
from typing import Any

from contextwise import ContextPolicy, Fragment, TrimStep, messages_chars, process_context

try:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        trim_messages,
    )
except ImportError:  # pragma: no cover - the bench extra is missing
    sys.exit("langchain-core is missing: pip install 'contextwise[bench]'")

SIZES = (1_000, 10_000, 100_000)


def make_history(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """A system message then alternating user and assistant messages, each with unique text."""
    rng = random.Random(seed)
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    for index in range(1, count):
        role = "user" if index % 2 else "assistant"
        filler = "lorem ipsum " * rng.randint(1, 30)
        history.append({"role": role, "content": f"#{index} {filler}"})
    return history


def to_langchain(history: Sequence[dict[str, Any]]) -> list[BaseMessage]:
    """Convert the dict messages to LangChain messages (outside the timed region)."""
    kinds: dict[str, Callable[..., BaseMessage]] = {
        "system": SystemMessage,
        "user": HumanMessage,
        "assistant": AIMessage,
    }
    return [kinds[message["role"]](content=message["content"]) for message in history]


def char_counter(messages: list[BaseMessage]) -> int:
    """LangChain token counter that counts characters, like contextwise's message_chars."""
    return sum(len(message.content) for message in messages)  # type: ignore[arg-type]


def trim_contextwise(history: list[dict[str, Any]], target: int) -> list[dict[str, Any]]:
    """Trim with a contextwise policy: one user-turn trim step down to ``target`` characters."""
    policy = ContextPolicy(
        mode="reduce",
        trigger_chars=target + 1,
        target_input_chars=target,
        steps=(TrimStep(id="history", fragment_id="history", keep_groups=1, target_chars=target),),
    )
    result = process_context(policy, [Fragment("history", messages=history)])
    return list(result.fragments[0].messages or ())


def trim_langchain(history: list[BaseMessage], target: int) -> list[BaseMessage]:
    """Trim with LangChain: the newest messages, starting on a human message, system kept."""
    return trim_messages(
        history,
        max_tokens=target,
        strategy="last",
        token_counter=char_counter,
        start_on="human",
        include_system=True,
        allow_partial=False,
    )


def best_time(func: Callable[[], object], repeat: int) -> float:
    """The best wall time of ``repeat`` runs, in seconds, with the garbage collector paused."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            func()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; exit 1 when the two keep different messages."""
    parser = argparse.ArgumentParser(description="contextwise vs LangChain trim_messages")
    parser.add_argument("--repeat", type=int, default=5, help="runs per size; the best is kept")
    args = parser.parse_args(argv)

    rows: list[tuple[int, float, float]] = []
    for size in SIZES:
        history = make_history(size)
        target = messages_chars(history) // 2
        lc_history = to_langchain(history)

        ours = trim_contextwise(history, target)
        theirs = trim_langchain(lc_history, target)
        if [message["content"] for message in ours] != [message.content for message in theirs]:
            print(f"MISMATCH at {size} messages: the two libraries keep different messages")
            return 1
        kept_chars = messages_chars(ours)
        print(
            f"{size:>7} messages: both keep the same {len(ours)} messages "
            f"({kept_chars} of {messages_chars(history)} chars, target {target})"
        )
        repeat = max(1, args.repeat if size < 100_000 else min(args.repeat, 3))
        ours_time = best_time(partial(trim_contextwise, history, target), repeat)
        theirs_time = best_time(partial(trim_langchain, lc_history, target), repeat)
        rows.append((size, ours_time, theirs_time))

    print()
    print(f"{'messages':>9} {'contextwise':>12} {'langchain':>11} {'ratio':>7} {'us/msg (cw)':>12}")
    for size, ours_time, theirs_time in rows:
        print(
            f"{size:>9} {ours_time * 1e3:>10.2f}ms {theirs_time * 1e3:>9.2f}ms "
            f"{theirs_time / ours_time:>6.1f}x {ours_time / size * 1e6:>12.3f}"
        )
    print()
    print("growth per 10x more messages (time ratio; 10.0 is linear):")
    for (small, ours_small, theirs_small), (large, ours_large, theirs_large) in pairwise(rows):
        print(
            f"  {small:>6} -> {large:>7}: contextwise {ours_large / ours_small:5.1f}x, "
            f"langchain {theirs_large / theirs_small:5.1f}x"
        )
    per_message = [ours_time / size for size, ours_time, _ in rows]
    flatness = max(per_message) / min(per_message)
    speedup = rows[-1][2] / rows[-1][1]
    print()
    print(f"contextwise time per message, max/min from 1k to 100k: {flatness:.2f}x (goal <= 2x)")
    print(f"speed-up at {rows[-1][0]} messages: {speedup:.1f}x (goal >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
