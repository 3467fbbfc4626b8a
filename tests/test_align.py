"""The exact ledger: an app step's removals are the complement of a longest common subsequence."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwise import (
    ContextPolicy,
    Fragment,
    MessagesFragment,
    TextFragment,
    process_context,
    tool_call_ids,
    tool_result_ids,
)
from contextwise._align import align, common_subsequence
from support.histories import histories


def lcs_length(old: list[Any], new: list[Any]) -> int:
    """The textbook dynamic programme, as the reference."""
    table = [[0] * (len(new) + 1) for _ in range(len(old) + 1)]
    for i in range(len(old) - 1, -1, -1):
        for j in range(len(new) - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1
                if old[i] == new[j]
                else max(table[i + 1][j], table[i][j + 1])
            )
    return table[0][0]


tokens = st.lists(st.integers(0, 5), max_size=25)


@given(tokens, tokens)
def test_the_common_subsequence_is_a_longest_one(old: list[int], new: list[int]) -> None:
    pairs = common_subsequence(old, new)
    assert all(old[i] == new[j] for i, j in pairs)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(pairs))
    assert len(pairs) == lcs_length(old, new)


@given(st.lists(st.integers(0, 60), unique=True, max_size=30), st.data())
def test_lists_without_repeats_take_the_fast_path_and_stay_longest(
    old: list[int], data: st.DataObject
) -> None:
    new = data.draw(st.permutations(old + [100 + n for n in range(data.draw(st.integers(0, 5)))]))
    new = new[: data.draw(st.integers(0, len(new)))]
    pairs = common_subsequence(old, new)
    assert all(old[i] == new[j] for i, j in pairs)
    assert len(pairs) == lcs_length(old, new)


@given(tokens, tokens)
def test_an_alignment_removes_exactly_the_items_the_new_list_lost(
    old: list[int], new: list[int]
) -> None:
    result = align(old, new)
    kept = [index for index in result.source if index is not None]
    assert sorted(kept + result.removed) == list(range(len(old)))  # each old item once
    assert all(new[j] == old[i] for j, i in enumerate(result.source) if i is not None)
    assert Counter(old[i] for i in result.removed) == Counter(old) - Counter(new)
    assert result.removed == sorted(result.removed)
    # Everything but the moves follows a longest common subsequence: the kept items, in new
    # order, hold an increasing run as long as the longest common subsequence.
    runs = [1] * len(kept)
    for j in range(len(kept)):
        for i in range(j):
            if kept[i] < kept[j]:
                runs[j] = max(runs[j], runs[i] + 1)
    assert max(runs, default=0) == lcs_length(old, new)


def test_messages_compare_by_equality_whatever_their_key_order_or_hashability() -> None:
    first = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    same = {"content": [{"text": "hi", "type": "text"}], "role": "user"}
    odd = {"role": "user", "content": "x", "meta": {1, 2}}  # a set: no frozen form
    result = align([first, odd, {"role": "user", "content": "gone"}], [same, dict(odd)])
    assert (result.source, result.removed) == ([0, 1], [2])
    assert align([[1], (1,)], [(1,)]).removed == [0]  # a list is not a tuple


def test_a_rewrite_in_the_middle_removes_that_message_only() -> None:
    history = [{"role": "system", "content": "Be brief."}]
    for n in range(5):
        history += [
            {"role": "user", "content": f"Question {n}?"},
            {"role": "assistant", "content": f"Answer {n}."},
        ]

    def redact(fragment: Fragment) -> list[dict[str, Any]]:
        messages = list(fragment.messages)
        messages[3] = {"role": "user", "content": "[redacted]"}
        return messages

    policy = ContextPolicy(
        mode="reduce",
        trigger_chars=1,
        steps=[{"id": "redact", "kind": "app", "fragment_id": "h", "app": "redact"}],
    )
    result = process_context(policy, [MessagesFragment("h", history)], apps={"redact": redact})
    assert result.removed["h"] == [history[3]]
    change = result.report.changes[0]
    assert (change.removed_messages, change.added_messages) == (1, 1)


# --- the ledger of app steps, over random histories in both shapes ---------------------------


def _plain(message: dict[str, Any]) -> bool:
    return not tool_call_ids(message) and not tool_result_ids(message)


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A history and the same history after random rewrites, drops and insertions.

    Only messages without tool calls or results are touched, so the pairing stays intact and the
    app's result is accepted. Rewritten and inserted contents are new; a copy is inserted right
    after its original.
    """
    history = draw(histories)
    output: list[dict[str, Any]] = []
    serial = 0
    for message in history:
        action = draw(st.sampled_from(["keep", "keep", "rewrite", "drop", "insert", "copy"]))
        if action == "insert":
            serial += 1
            output.append({"role": "user", "content": f"new {serial}"})
        if not _plain(message) or action in ("keep", "insert"):
            output.append(message)
        elif action == "rewrite":
            serial += 1
            output.append({**message, "content": f"rewritten {serial}"})
        elif action == "copy":
            output += [message, json.loads(json.dumps(message))]
    return history, output


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(edited())
def test_an_app_step_removes_exactly_the_messages_no_longer_in_the_output(
    case: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    history, output = case
    policy = ContextPolicy(
        mode="reduce",
        trigger_chars=0,
        steps=[{"id": "edit", "kind": "app", "fragment_id": "h", "app": "edit"}],
    )
    # The padding puts the context above its trigger of 0 even when the history is empty.
    fragments = [MessagesFragment("h", messages=history), TextFragment("pad", text="x")]
    result = process_context(policy, fragments, apps={"edit": lambda fragment: output})
    removed = result.removed["h"]
    kept_output = list(result.fragment("h").messages)
    assert kept_output == output
    before = Counter(json.dumps(m, sort_keys=True) for m in history)
    after = Counter(json.dumps(m, sort_keys=True) for m in output)
    gone = Counter(json.dumps(m, sort_keys=True) for m in removed)
    # Kept + removed = input: what was not removed is all in the output.
    kept = before - gone
    assert kept + gone == before and not kept - after
    # Nothing kept is listed as removed: a message is removed only as often as it disappeared.
    assert gone == before - after
    # In input order.
    positions = iter(range(len(history)))
    for message in removed:
        assert any(history[index] == message for index in positions)
    if result.report.changes:
        change = result.report.changes[0]
        assert change.removed_messages == len(removed)
        assert change.added_messages == len(output) - (len(history) - len(removed))
    else:
        assert output == history
