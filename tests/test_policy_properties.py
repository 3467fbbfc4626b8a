"""The invariants of process_context, checked over random histories in both shapes with tools."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextwise import (
    DEFAULT_TRIM_MARKER,
    CallableCounter,
    ContextOverflowError,
    ContextPolicy,
    Fragment,
    MessagesFragment,
    TextFragment,
    is_pinned,
    message_chars,
    message_text,
    process_context,
    validate_context_policy,
)
from support.histories import histories, pairing_problems

COMPRESSORS = {
    "short": lambda messages: "S",
    "broken": lambda messages: (_ for _ in ()).throw(RuntimeError("boom")),
    "large": lambda messages: "L" * 10_000,
    "text": lambda text: text[: len(text) // 2],
}


@dataclass(frozen=True)
class Case:
    history: list[dict[str, Any]]
    text: str
    policy: dict[str, Any]
    counted: bool


trim_steps = st.fixed_dictionaries(
    {
        "kind": st.just("trim"),
        "fragmentId": st.just("history"),
        "grouping": st.fixed_dictionaries({"kind": st.sampled_from(["user-turn", "message"])}),
        "keepGroups": st.integers(0, 3),
    },
    optional={"targetChars": st.integers(0, 400)},
)
compress_steps = st.fixed_dictionaries(
    {
        "kind": st.just("compress"),
        "fragmentId": st.just("history"),
        "compressor": st.sampled_from(["short", "broken", "large"]),
        "grouping": st.fixed_dictionaries({"kind": st.sampled_from(["user-turn", "message"])}),
        "keepGroups": st.integers(0, 3),
    }
)
text_steps = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("trim"),
            "fragmentId": st.just("doc"),
            "field": st.just("text"),
            "keep": st.sampled_from(["head", "tail"]),
            "targetChars": st.integers(7, 60),
        }
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("compress"),
            "fragmentId": st.just("doc"),
            "field": st.just("text"),
            "compressor": st.just("text"),
        }
    ),
)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    history = draw(histories)
    # Half of the texts are long enough for the text steps (target 7 to 60) to cut them.
    text = draw(
        st.text(alphabet="abc xyz.", max_size=120)
        | st.text(alphabet="abc xyz.", min_size=61, max_size=120)
    )
    steps = draw(st.lists(st.one_of(trim_steps, compress_steps, text_steps), max_size=4))
    for number, step in enumerate(steps):
        step["id"] = f"step-{number}"
    counted = draw(st.booleans())
    trigger = draw(st.integers(0, 500))
    target = draw(st.none() | st.integers(0, max(0, trigger - 1)))
    limits: dict[str, Any] = {"triggerChars": trigger}
    if target is not None and target < trigger:
        limits["targetInputChars"] = target
    if counted and draw(st.booleans()):
        limits = {"triggerTokens": trigger}
    selection = draw(st.sampled_from([{"mode": "sequence"}, {"mode": "auto"}]))
    policy = {"mode": "reduce", **limits, "selection": selection, "steps": steps}
    return Case(history, text, policy, counted)


def run(case: Case, mode: str) -> Any:
    fragments = [MessagesFragment("history", case.history), TextFragment("doc", case.text)]
    return process_context(
        {**case.policy, "mode": mode},
        fragments,
        compressors=COMPRESSORS,
        counter=CallableCounter(len, id="len") if case.counted else None,
    )


def measured(fragment: Fragment) -> int:
    if isinstance(fragment, TextFragment):
        return len(fragment.text)
    return sum(message_chars(message) for message in fragment.messages)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_reduce_keeps_every_invariant(case: Case) -> None:
    snapshot = json.dumps(case.history)
    result = run(case, "reduce")
    # The input is never mutated.
    assert json.dumps(case.history) == snapshot
    output = list(result.fragment("history").messages)
    # No output splits a tool call from its results or leaves an orphan result.
    assert pairing_problems(case.history, output) == []
    # System and developer messages are kept, in order.
    assert [m for m in output if is_pinned(m)] == [m for m in case.history if is_pinned(m)]
    # Kept plus removed is the input, each message once, in order.
    positions = {id(message): index for index, message in enumerate(case.history)}
    kept = [positions[id(m)] for m in output if id(m) in positions]
    removed = [positions[id(m)] for m in result.removed["history"] if id(m) in positions]
    assert kept == sorted(kept) and removed == sorted(removed)
    assert sorted(kept + removed) == list(range(len(case.history)))
    # The numbers add up, and after_chars is what the output measures.
    report = result.report
    assert report.before_chars - report.after_chars == sum(c.saved_chars for c in report.changes)
    assert report.after_chars == sum(measured(fragment) for fragment in result.fragments)
    assert report.before_chars == len(case.text) + sum(message_chars(m) for m in case.history)
    for change in report.changes:
        if change.status == "applied":
            assert (
                change.before_chars - change.removed_chars + change.added_chars
                == change.after_chars
            )
        else:
            assert change.error is not None and change.after_chars == change.before_chars
    if case.counted:
        assert report.tokens is not None
        assert report.tokens.after == sum(
            len(fragment.text)
            if isinstance(fragment, TextFragment)
            else sum(len(text) for text in map(_text, fragment.messages))
            for fragment in result.fragments
        )
    # The text can be rebuilt from what was kept and removed when only trims cut it.
    doc_changes = [c for c in report.changes if c.fragment_id == "doc" and c.status == "applied"]
    if all(change.kind == "trim" for change in doc_changes):
        assert rebuild_text(case.policy, doc_changes, result) == case.text


def rebuild_text(policy: dict[str, Any], changes: list[Any], result: Any) -> str:
    """Undo the text trims, last first: put each removed span back where its marker stands."""
    steps = {step["id"]: step for step in policy["steps"]}
    spans = list(result.removed["doc"])
    assert len(spans) == len(changes), "one removed span per applied trim"
    text = result.fragment("doc").text
    for change, span in zip(reversed(changes), reversed(spans), strict=True):
        step = steps[change.id]
        marker = step.get("marker", DEFAULT_TRIM_MARKER)
        assert isinstance(span, str) and len(span) == change.removed_chars
        if step["keep"] == "head":
            assert text.endswith(marker)
            text = text[: len(text) - len(marker)] + span
        else:
            assert text.startswith(marker)
            text = span + text[len(marker) :]
    return text


def _text(message: Any) -> str:
    return message_text(message)


@SETTINGS
@given(cases())
def test_audit_reports_exactly_what_reduce_does_and_changes_nothing(case: Case) -> None:
    reduced = run(case, "reduce")
    audited = run(case, "audit")
    assert audited.fragments == (
        MessagesFragment("history", messages=case.history),
        TextFragment("doc", text=case.text),
    )
    assert all(not items for items in audited.removed.values())
    assert audited.report.model_dump(exclude={"mode"}) == reduced.report.model_dump(
        exclude={"mode"}
    )
    assert audited.report.mode == "audit"


@SETTINGS
@given(cases())
def test_validate_changes_nothing_and_raises_exactly_when_reduce_would_act(case: Case) -> None:
    policy = ContextPolicy.model_validate(case.policy)
    dumped = policy.model_dump()
    validate_context_policy(policy, COMPRESSORS, counter=CallableCounter(len))
    assert policy.model_dump() == dumped
    reduced = run(case, "reduce")
    snapshot = json.dumps(case.history)
    if reduced.report.selection is not None:
        with pytest.raises(ContextOverflowError):
            run(case, "validate")
    else:
        result = run(case, "validate")
        assert result.fragments == (
            MessagesFragment("history", messages=case.history),
            TextFragment("doc", text=case.text),
        )
        assert result.report.changes == ()
    assert json.dumps(case.history) == snapshot
