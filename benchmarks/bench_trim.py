"""Trimming long chat histories: contextwise against langchain_core.messages.trim_messages.

Both trim a history of 1k, 10k and 100k messages to half its size in characters, keeping whole
user turns from the newest side and the system message:

- contextwise: ``process_context`` with one ``trim`` step, ``user-turn`` grouping and a
  ``target_chars`` of half the history;
- LangChain (langchain-core 1.x, the version a LangChain user has today):
  ``trim_messages(strategy="last", start_on="human", include_system=True)`` with a character
  counter (``sum(len(m.content) for m in messages)``) and the same budget.

Two modes run on the same history:

- ``dicts``: contextwise trims the dict history; LangChain trims the history converted to its
  message objects (the conversion is not timed);
- ``objects``: both trim the same list of LangChain ``BaseMessage`` objects; contextwise reads
  them natively, without converting them.

The script checks that both keep exactly the same messages (in ``objects`` mode, the very same
objects). Setup is not timed, and the contextwise policy is built once per size, as an
application builds it once. The libraries run in turns, each run after a garbage collection and
with the collector paused, so that a noisy machine slows both alike; a run of a small history
times several calls in a row (100 at 1k messages, 10 at 10k, 1 at 100k), as ``timeit`` does. The
script prints the minimum and the median time of each, the ratio of the medians, the time per
message, and the growth per 10x more messages. It also times the bare pass that only reads the
length of every message's content, which any exact character count must do.

The bare pass reads dict contents in ``dicts`` mode and the ``content`` attribute of the LangChain
objects in ``objects`` mode; LangChain's time divided by it is the most any exact character count
can gain, and the script prints it (for information: it is not a goal). Goals, checked on the
medians:

- contextwise at least 4x faster than LangChain at 100k messages on dicts, and at least 2.5x on
  LangChain objects;
- contextwise's time per message at 100k messages within 2x of its time per message at 1k, in
  both modes.

Exit status: 0 when every goal is met, 1 when the two libraries keep different messages, 2 when
a goal is missed.

    python -m benchmarks.bench_trim [--repeat 7]   (or: python benchmarks/bench_trim.py)
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
from statistics import median
from typing import Any

from contextwise import ContextPolicy, MessagesFragment, TrimStep, messages_chars, process_context

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

SPEEDUP_GOALS = {"dicts": 4.0, "objects": 2.5}
"""The least speed-up over LangChain at the largest size, in each mode."""


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
    return sum(len(message.content) for message in messages)


def trim_policy(target: int) -> ContextPolicy:
    """The contextwise policy: one user-turn trim step down to ``target`` characters."""
    return ContextPolicy(
        mode="reduce",
        trigger_chars=target + 1,
        target_input_chars=target,
        steps=(TrimStep(id="history", fragment_id="history", keep_groups=1, target_chars=target),),
    )


def trim_contextwise(history: Sequence[Any], policy: ContextPolicy) -> Sequence[Any]:
    """Trim with contextwise: wrap the history in a fragment and process it with the policy."""
    result = process_context(policy, [MessagesFragment("history", messages=history)])
    return result.fragments[0].messages or ()


def trim_langchain(history: list[BaseMessage], target: int) -> list[BaseMessage]:
    """Trim with LangChain: the newest messages, starting on a human message, system kept."""
    kept: list[BaseMessage] = trim_messages(
        history,
        max_tokens=target,
        strategy="last",
        token_counter=char_counter,
        start_on="human",
        include_system=True,
        allow_partial=False,
    )
    return kept


def read_lengths(history: list[dict[str, Any]]) -> list[int]:
    """The reference pass: read the length of every message's content once, and nothing else."""
    return [len(message["content"]) for message in history]


def read_object_lengths(history: list[BaseMessage]) -> list[int]:
    """The same pass over LangChain messages: read every ``content`` attribute's length."""
    return [len(message.content) for message in history]


def one_run(func: Callable[[], object], number: int) -> float:
    """The mean wall time of ``number`` back-to-back calls, in seconds, with the collector paused.

    Small histories are timed over several calls in a row, as ``timeit`` does, so that a sample
    measures the steady state of a harness loop rather than the cold caches left by the
    collection that precedes it.
    """
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(number):
            func()
        return (time.perf_counter() - start) / number
    finally:
        gc.enable()


def time_in_turns(
    funcs: Sequence[Callable[[], object]], repeat: int, number: int
) -> list[list[float]]:
    """Run the functions in turns, ``repeat`` rounds; return the times of each function."""
    times: list[list[float]] = [[] for _ in funcs]
    for _ in range(repeat):
        for func, samples in zip(funcs, times, strict=True):
            samples.append(one_run(func, number))
    return times


def same_messages(ours: Sequence[Any], theirs: Sequence[BaseMessage]) -> bool:
    """Whether both results hold the same messages in the same order: the same objects when
    contextwise trimmed LangChain messages, the same roles and texts when it trimmed dicts."""
    if all(isinstance(message, BaseMessage) for message in ours):
        return len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs, strict=True))
    kinds = {"system": "system", "user": "human", "assistant": "ai"}
    return [(kinds[message["role"]], message["content"]) for message in ours] == [
        (message.type, message.content) for message in theirs
    ]


Row = tuple[int, list[float], list[float], list[float]]


def run_mode(mode: str, repeat: int) -> list[Row] | None:
    """Time one mode at every size; ``None`` when the libraries keep different messages."""
    rows: list[Row] = []
    for size in SIZES:
        history = make_history(size)
        target = messages_chars(history) // 2
        lc_history = to_langchain(history)
        ours_input: Sequence[Any] = history if mode == "dicts" else lc_history

        policy = trim_policy(target)
        ours = trim_contextwise(ours_input, policy)
        theirs = trim_langchain(lc_history, target)
        if not same_messages(ours, theirs):
            print(
                f"MISMATCH in {mode} mode at {size} messages: the libraries keep different messages"
            )
            return None
        print(
            f"{mode:>7} {size:>7} messages: both keep the same {len(ours)} messages "
            f"({messages_chars(ours)} of {messages_chars(history)} chars, target {target})"
        )
        ours_times, theirs_times, read_times = time_in_turns(
            [
                partial(trim_contextwise, ours_input, policy),
                partial(trim_langchain, lc_history, target),
                partial(read_lengths, history)
                if mode == "dicts"
                else partial(read_object_lengths, lc_history),
            ],
            repeat,
            number=max(1, SIZES[-1] // size),
        )
        rows.append((size, ours_times, theirs_times, read_times))
    return rows


def report_mode(mode: str, rows: list[Row]) -> list[tuple[str, bool]]:
    """Print one mode's table and return its goals, each with whether it is met."""
    print()
    print(f"{mode}: times in ms, min / median; ratio = langchain / contextwise")
    print(
        f"{'messages':>9} {'contextwise':>15} {'langchain':>17} {'ratio':>6} "
        f"{'us/msg (cw)':>12} {'bare pass':>15} {'cw/bare':>8}"
    )
    for size, ours_times, theirs_times, read_times in rows:
        print(
            f"{size:>9} {_pair(ours_times):>15} {_pair(theirs_times):>17} "
            f"{median(theirs_times) / median(ours_times):>5.1f}x "
            f"{median(ours_times) / size * 1e6:>12.3f} {_pair(read_times):>15} "
            f"{median(ours_times) / median(read_times):>7.2f}x"
        )
    print("growth of the median per 10x more messages (10.0 is linear):")
    for (small, ours_small, theirs_small, _), (large, ours_large, theirs_large, _) in pairwise(
        rows
    ):
        print(
            f"  {small:>6} -> {large:>7}: "
            f"contextwise {median(ours_large) / median(ours_small):5.1f}x, "
            f"langchain {median(theirs_large) / median(theirs_small):5.1f}x"
        )
    small_size, small_times = rows[0][0], rows[0][1]
    size, ours_times, theirs_times, read_times = rows[-1]
    growth = (median(ours_times) / size) / (median(small_times) / small_size)
    speedup = median(theirs_times) / median(ours_times)
    ceiling = median(theirs_times) / median(read_times)
    print(
        f"  LangChain against the bare pass at {size} messages: {ceiling:.1f}x "
        "(no exact count can beat LangChain by more than this)"
    )
    wanted = SPEEDUP_GOALS[mode]
    goals = [
        (
            f"{mode}: speed-up at {size} messages {speedup:.1f}x (goal >= {wanted}x)",
            speedup >= wanted,
        ),
        (
            f"{mode}: time per message at {size} / at {small_size} messages {growth:.2f}x "
            "(goal <= 2x)",
            growth <= 2,
        ),
    ]
    return goals


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(description="contextwise vs LangChain trim_messages")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each per size")
    args = parser.parse_args(argv)
    repeat = max(1, args.repeat)

    results: dict[str, list[Row]] = {}
    for mode in ("dicts", "objects"):
        rows = run_mode(mode, repeat)
        if rows is None:
            return 1
        results[mode] = rows
    goals = [goal for mode, rows in results.items() for goal in report_mode(mode, rows)]
    print()
    for text, met in goals:
        print(f"{text}: {'met' if met else 'MISSED'}")
    return 0 if all(met for _, met in goals) else 2


def _pair(times: list[float]) -> str:
    return f"{min(times) * 1e3:.2f} / {median(times) * 1e3:.2f}"


if __name__ == "__main__":
    sys.exit(main())
