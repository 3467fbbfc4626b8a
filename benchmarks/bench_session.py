"""A growing agent loop: a ContextSession against LangChain's trim_messages re-run on the history.

Each of ``--steps`` steps (400 by default) adds 50 messages (user, assistant and tool-less turns of
random length) and asks for the context of the next model call, with a fixed target of
``--target`` characters:

- contextwise: ``session.add(batch)`` then ``session.context()``, with one ``trim`` step
  (``message`` grouping, ``target_input_chars`` and ``target_chars`` of the target); the session
  stores each reduction and starts the next step from it;
- LangChain: the documented way, ``trim_messages(history, strategy="last", include_system=True,
  max_tokens=target, token_counter=chars)`` on the whole history at every step, where ``chars``
  sums the lengths of the messages' contents.

The script checks that both end every step with the same context, then prints the total time of
each, their ratio, and contextwise's time per step in the first and the last tenth of the loop,
for the MemoryStore and, beside it, the SQLiteStore (a file in a temporary folder, WAL,
``synchronous=FULL``: every add and every reduction is on disk before the step returns). Each step
is timed twice: in CPU time of the process, which other processes on a busy machine do not
inflate and which the goals use, and in wall-clock time, which includes the SQLite store's waits
for the disk.

Goals: with the MemoryStore, at least 50x less total time than LangChain, and a last tenth within
2x of the first tenth. Exit status: 0 when both are met, 1 when the contexts differ, 2 when a
goal is missed.

    python benchmarks/bench_session.py [--steps 400] [--target 20000]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

from contextwise import ContextSession, MemoryStore, SessionStore, SQLiteStore

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

BATCH = 50


def make_batches(steps: int, seed: int = 14) -> list[list[dict[str, str]]]:
    """The messages of each step: a system message first, then turns with unique texts."""
    rng = random.Random(seed)
    batches: list[list[dict[str, str]]] = []
    number = 0
    for step in range(steps):
        batch: list[dict[str, str]] = []
        if step == 0:
            batch.append({"role": "system", "content": "You are a helpful assistant."})
        while len(batch) < BATCH:
            role = "user" if number % 2 == 0 else "assistant"
            text = f"{role} message {number}: " + "word " * rng.randint(5, 80)
            batch.append({"role": role, "content": text})
            number += 1
        batches.append(batch)
    return batches


def to_langchain(message: dict[str, str]) -> BaseMessage:
    kind = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return kind[message["role"]](message["content"])


def chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(message.content) for message in messages)


def run_langchain(
    batches: list[list[BaseMessage]], target: int
) -> tuple[list[tuple[float, float]], list[Any]]:
    history: list[BaseMessage] = []
    times: list[tuple[float, float]] = []
    contexts: list[Any] = []
    for batch in batches:
        start, wall = time.process_time(), time.perf_counter()
        history.extend(batch)
        context = trim_messages(
            history,
            strategy="last",
            include_system=True,
            max_tokens=target,
            token_counter=chars,
        )
        times.append((time.process_time() - start, time.perf_counter() - wall))
        contexts.append([message.content for message in context])
    return times, contexts


def run_contextwise(
    batches: list[list[dict[str, str]]], target: int, store: SessionStore
) -> tuple[list[tuple[float, float]], list[Any]]:
    policy = {
        "mode": "reduce",
        "target_input_chars": target,
        "steps": [
            {
                "id": "trim",
                "kind": "trim",
                "fragment_id": "history",
                "grouping": {"kind": "message"},
                "target_chars": target,
            }
        ],
    }
    session = ContextSession(policy, store, "bench")
    times: list[tuple[float, float]] = []
    contexts: list[Any] = []
    for batch in batches:
        start, wall = time.process_time(), time.perf_counter()
        session.add(batch)
        result = session.context()
        times.append((time.process_time() - start, time.perf_counter() - wall))
        messages = result.fragment("history").messages or ()
        contexts.append([message["content"] for message in messages])
    return times, contexts


def timed(
    run: Callable[[], tuple[list[tuple[float, float]], list[Any]]],
) -> tuple[list[tuple[float, float]], list[Any]]:
    gc.collect()
    gc.disable()
    try:
        return run()
    finally:
        gc.enable()


def tenths(times: Sequence[float]) -> tuple[float, float]:
    """The median time per step of the first and of the last tenth of the loop."""
    tenth = max(1, len(times) // 10)
    return median(times[:tenth]), median(times[-tenth:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--target", type=int, default=20_000)
    args = parser.parse_args()
    batches = make_batches(args.steps)
    chains = [[to_langchain(message) for message in batch] for batch in batches]
    lc_times, lc_contexts = timed(lambda: run_langchain(chains, args.target))
    memory_times, memory_contexts = timed(
        lambda: run_contextwise(batches, args.target, MemoryStore())
    )
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "bench.db")
        sqlite_times, sqlite_contexts = timed(lambda: run_contextwise(batches, args.target, store))
        store.close()
    if not memory_contexts == sqlite_contexts == lc_contexts:
        print("FAIL: contextwise and LangChain keep different contexts")
        return 1
    total_messages = args.steps * BATCH
    print(
        f"{args.steps} steps of {BATCH} messages ({total_messages} in all), target "
        f"{args.target} characters; the final context holds {len(lc_contexts[-1])} messages, "
        "the same in both (checked at every step)"
    )
    rows = [
        ("LangChain trim_messages", lc_times),
        ("contextwise MemoryStore", memory_times),
        ("contextwise SQLiteStore", sqlite_times),
    ]
    for clock, label in ((0, "CPU time of the process"), (1, "wall-clock time")):
        print(f"\n{label}:")
        print(
            f"{'':<26}{'total s':>10}{'vs LangChain':>14}{'first tenth ms':>16}"
            f"{'last tenth ms':>15}{'last/first':>12}"
        )
        lc_total = sum(step[clock] for step in lc_times)
        for name, times in rows:
            series = [step[clock] for step in times]
            first, last = tenths(series)
            print(
                f"{name:<26}{sum(series):>10.3f}{lc_total / sum(series):>13.1f}x"
                f"{first * 1e3:>16.3f}{last * 1e3:>15.3f}{last / first:>11.2f}x"
            )
    cpu = [step[0] for step in memory_times]
    ratio = sum(step[0] for step in lc_times) / sum(cpu)
    first, last = tenths(cpu)
    print()
    goals = [
        (f"MemoryStore at least 50x less CPU time than LangChain: {ratio:.1f}x", ratio >= 50),
        (f"MemoryStore last tenth within 2x of the first: {last / first:.2f}x", last <= 2 * first),
    ]
    for text, met in goals:
        print(("met:    " if met else "MISSED: ") + text)
    return 0 if all(met for _, met in goals) else 2


if __name__ == "__main__":
    sys.exit(main())
