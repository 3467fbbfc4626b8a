"""Context policies: the model, files, validation, trimming, modes and the report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from contextwise import (
    CallableCounter,
    ContextBudget,
    ContextOverflowError,
    ContextPolicy,
    ContextProcessingReport,
    Fragment,
    InvalidTypeError,
    InvalidValueError,
    MessagesFragment,
    PolicyConfigurationError,
    TextFragment,
    TrimStep,
    message_chars,
    process_context,
    validate_context_policy,
)
from support.errors import assert_translated


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def chat(turns: int, system: str | None = "You are terse.") -> list[dict[str, Any]]:
    """A system prompt, then ``turns`` user/assistant pairs of 10 + 10 characters."""
    history: list[dict[str, Any]] = (
        [] if system is None else [{"role": "system", "content": system}]
    )
    for number in range(turns):
        history += [user(f"question{number:02d}"), assistant(f"answer--{number:02d}")]
    return history


def contents(fragment: Fragment) -> list[Any]:
    return [message.get("content") for message in fragment.messages]


# --- the seed's two examples ------------------------------------------------------------------


def test_seed_example_validate_only(capsys: pytest.CaptureFixture[str]) -> None:
    policy = ContextPolicy.model_validate({"mode": "validate"})
    validate_context_policy(policy, [], [])
    print(policy.mode)
    assert capsys.readouterr().out == "validate\n"


def test_seed_example_reduce_order_from_business_fragments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 1800,
            "targetInputChars": 1500,
            "selection": {"mode": "sequence"},
            "steps": [
                {
                    "id": "recent-history",
                    "kind": "trim",
                    "fragmentId": "history",
                    "field": "messages",
                    "grouping": {"kind": "user-turn"},
                    "keepGroups": 2,
                    "targetChars": 1000,
                }
            ],
        }
    )
    validate_context_policy(policy, [], [])
    print(policy.steps)
    out = capsys.readouterr().out
    assert "recent-history" in out and "keep_groups=2" in out and "target_chars=1000" in out
    step = policy.steps[0]
    assert isinstance(step, TrimStep)
    assert (step.fragment_id, step.keep_groups, step.target_chars) == ("history", 2, 1000)


# --- the model and policy files ----------------------------------------------------------------


def test_snake_and_camel_case_keys_are_equivalent() -> None:
    snake = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "trigger_chars": 10,
            "target_input_chars": 5,
            "steps": [{"id": "t", "kind": "trim", "fragment_id": "h", "keep_groups": 3}],
        }
    )
    camel = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 10,
            "targetInputChars": 5,
            "steps": [{"id": "t", "kind": "trim", "fragmentId": "h", "keepGroups": 3}],
        }
    )
    assert snake == camel
    dumped = camel.model_dump(by_alias=True)
    assert dumped["triggerChars"] == 10 and dumped["steps"][0]["fragmentId"] == "h"
    assert ContextPolicy.model_validate(dumped) == camel
    assert ContextPolicy.model_validate(camel.model_dump()) == camel


def test_unknown_keys_are_errors_with_their_path() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "triggerChar": 10})
    assert caught.value.code == "unknown_key"
    assert caught.value.params["field"] == "triggerChar"
    assert "trigger_chars" in caught.value.params["known"]
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(
            {
                "mode": "reduce",
                "steps": [{"id": "t", "kind": "trim", "fragmentId": "h", "keep": 2, "x": 1}],
            }
        )
    fields = {problem.params["field"]: problem.code for problem in caught.value.problems}
    assert fields == {"steps[0].keep": "invalid_choice", "steps[0].x": "unknown_key"}


def test_policies_are_frozen() -> None:
    policy = ContextPolicy(mode="audit")
    with pytest.raises(ValidationError):
        policy.mode = "reduce"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (
            {
                "mode": "reduce",
                "steps": [
                    {"id": "a", "kind": "trim", "fragmentId": "h"},
                    {"id": "a", "kind": "trim", "fragmentId": "h"},
                ],
            },
            "duplicate_step_id",
        ),
        (
            {"mode": "reduce", "triggerChars": 100, "targetInputChars": 100},
            "trigger_not_above_target",
        ),
        (
            {"mode": "reduce", "triggerTokens": 10, "targetInputTokens": 20},
            "trigger_not_above_target",
        ),
        (
            {
                "mode": "reduce",
                "selection": {"mode": "fixed", "steps": ["nope"]},
                "steps": [{"id": "a", "kind": "trim", "fragmentId": "h"}],
            },
            "unknown_fixed_step",
        ),
        (
            {
                "mode": "reduce",
                "selection": {"mode": "fixed", "steps": ["a", "a"]},
                "steps": [{"id": "a", "kind": "trim", "fragmentId": "h"}],
            },
            "duplicate_fixed_step",
        ),
        (
            {
                "mode": "reduce",
                "steps": [{"id": "a", "kind": "trim", "fragmentId": "d", "field": "text"}],
            },
            "text_trim_without_target",
        ),
        (
            {
                "mode": "reduce",
                "steps": [
                    {
                        "id": "a",
                        "kind": "trim",
                        "fragmentId": "d",
                        "field": "text",
                        "targetChars": 3,
                    }
                ],
            },
            "text_target_below_marker",
        ),
    ],
)
def test_broken_rules_fail_construction_and_validation_with_stable_codes(
    data: dict[str, Any], code: str
) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(data)
    assert caught.value.code == code
    with pytest.raises(PolicyConfigurationError) as direct:
        validate_context_policy(data)
    assert direct.value.code == code
    assert isinstance(direct.value, ValueError)
    with pytest.raises(PolicyConfigurationError) as processing:
        process_context(data, [])
    assert processing.value.code == code


def test_trigger_rule_names_both_limits() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy({"mode": "reduce", "triggerChars": 100, "targetInputChars": 120})
    assert caught.value.params == {
        "trigger_name": "trigger_chars",
        "trigger": 100,
        "target_name": "target_input_chars",
        "target": 120,
    }
    assert "100" in str(caught.value) and "120" in str(caught.value)
    assert_translated(caught.value)


def test_a_mapping_with_several_problems_lists_them_all() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy({"mode": "shrink", "triggerChars": -1})
    problems = [(p.code, p.params["field"], p.params["value"]) for p in caught.value.problems]
    assert problems == [
        ("invalid_choice", "mode", "'shrink'"),
        ("out_of_range", "triggerChars", "-1"),
    ]
    assert caught.value is caught.value.problems[0]
    assert "1 more problem" in str(caught.value)


def test_a_policy_must_be_a_policy_or_a_mapping() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        validate_context_policy("reduce")  # type: ignore[arg-type]
    assert caught.value.code == "not_a_policy"


def test_sizes_are_whole_numbers_of_zero_or_more() -> None:
    for bad, code in ((-1, "out_of_range"), (1.5, "wrong_type"), ("10", "wrong_type"),
                      (True, "wrong_type"), (float("nan"), "wrong_type")):
        with pytest.raises(PolicyConfigurationError) as caught:
            ContextPolicy.model_validate({"mode": "reduce", "triggerChars": bad})
        assert (caught.value.code, caught.value.params["field"]) == (code, "triggerChars")


POLICY_TOML = """
mode = "reduce"
triggerChars = 1800
target_input_chars = 1500

[selection]
mode = "sequence"

[[steps]]
id = "recent-history"
kind = "trim"
fragmentId = "history"
grouping = { kind = "user-turn" }
keep_groups = 2
targetChars = 1000
"""


def test_loading_from_json_and_toml_files(tmp_path: Path) -> None:
    from_toml = ContextPolicy.from_toml(POLICY_TOML)
    json_file = tmp_path / "policy.json"
    json_file.write_text(json.dumps(from_toml.model_dump(by_alias=True)), encoding="utf-8")
    toml_file = tmp_path / "policy.TOML"
    toml_file.write_text(POLICY_TOML, encoding="utf-8")
    assert ContextPolicy.from_file(json_file) == from_toml
    assert ContextPolicy.from_file(str(toml_file)) == from_toml
    assert ContextPolicy.from_json(json_file.read_text()) == from_toml
    assert from_toml.target_input_chars == 1500


def test_file_errors(tmp_path: Path) -> None:
    yaml_file = tmp_path / "policy.yaml"
    yaml_file.write_text("mode: reduce")
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_file(yaml_file)
    assert caught.value.code == "unsupported_policy_file"
    assert caught.value.params["suffix"] == ".yaml"
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_toml("mode = ")
    assert caught.value.code == "invalid_toml" and caught.value.detail
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_json('{"mode": "reduce", "extra": 1}')
    assert caught.value.code == "unknown_key"
    with pytest.raises(PolicyConfigurationError) as missing:
        ContextPolicy.from_file(tmp_path / "missing.json")
    assert missing.value.code == "unreadable_file"
    assert isinstance(missing.value.__cause__, FileNotFoundError)


# --- validation against what the application supplies ----------------------------------------

STEPS = {
    "mode": "reduce",
    "triggerChars": 100,
    "steps": [
        {"id": "summary", "kind": "compress", "fragmentId": "history", "compressor": "summarize"},
        {"id": "redact", "kind": "app", "fragmentId": "history", "app": "redact"},
        {"id": "cut", "kind": "trim", "fragmentId": "doc", "field": "text", "targetChars": 50},
    ],
}


def test_validation_names_the_missing_compressor_and_app() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy(STEPS, ["other"], ["redact"])
    assert caught.value.code == "unknown_compressor"
    assert caught.value.params == {
        "step_id": "summary",
        "compressor": "summarize",
        "provided": ["other"],
    }
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy(STEPS, {"summarize": len}, {})
    assert caught.value.code == "unknown_app"
    assert caught.value.params["app"] == "redact"
    assert_translated(caught.value)
    assert validate_context_policy(STEPS, ["summarize"], ["redact"]).steps[2].id == "cut"


def test_validation_checks_fragments_when_given() -> None:
    history = MessagesFragment("history", messages=[user("hi")])
    doc = TextFragment("doc", text="text")
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy(STEPS, ["summarize"], ["redact"], fragments=[history])
    assert caught.value.code == "unknown_fragment"
    assert caught.value.params == {
        "step_id": "cut",
        "fragment_id": "doc",
        "fragment_ids": ["history"],
    }
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy(
            STEPS, ["summarize"], ["redact"], fragments=[history, MessagesFragment("doc", [])]
        )
    assert caught.value.code == "field_mismatch"
    assert caught.value.params["actual"] == "messages"
    validate_context_policy(STEPS, ["summarize"], ["redact"], fragments=[history, doc])


def test_token_limits_need_a_counter() -> None:
    policy = {
        "mode": "reduce",
        "triggerTokens": 100,
        "steps": [{"id": "t", "kind": "trim", "fragmentId": "h", "targetTokens": 50}],
    }
    with pytest.raises(PolicyConfigurationError) as caught:
        validate_context_policy(policy)
    assert caught.value.code == "counter_required"
    assert caught.value.params["limits"] == ["trigger_tokens", "t.target_tokens"]
    validate_context_policy(policy, counter=CallableCounter(len))
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(
            {"mode": "reduce", "triggerChars": 5}, [], budget=ContextBudget(window=100, output=10)
        )
    assert caught.value.code == "counter_required" and caught.value.params["limits"] == ["budget"]


def test_validate_changes_nothing() -> None:
    policy = ContextPolicy.model_validate(STEPS)
    before = policy.model_dump()
    assert validate_context_policy(policy, ["summarize"], ["redact"]) is policy
    assert policy.model_dump() == before


# --- fragments -----------------------------------------------------------------------------------


def test_fragments_hold_exactly_one_field() -> None:
    with pytest.raises(InvalidValueError) as caught:
        process_context(ContextPolicy(mode="validate"), [{"id": "x"}])
    assert caught.value.code == "invalid_fragment"
    with pytest.raises(InvalidValueError) as caught:
        process_context(ContextPolicy(mode="validate"), [{"id": "x", "text": "a", "messages": []}])
    assert caught.value.code == "invalid_fragment"
    with pytest.raises(InvalidValueError) as caught:
        TextFragment("x", None)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_fragment"
    with pytest.raises(InvalidValueError) as caught:
        MessagesFragment("x", None)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_fragment"
    with pytest.raises(InvalidValueError) as caught:
        TextFragment("  ", text="a")
    assert caught.value.code == "blank_fragment_id"
    with pytest.raises(InvalidTypeError) as type_error:
        TextFragment("x", text=3)  # type: ignore[arg-type]
    assert type_error.value.code == "not_a_string"
    with pytest.raises(InvalidTypeError) as type_error:
        MessagesFragment("x", messages="hello")  # type: ignore[arg-type]
    assert type_error.value.code == "fragment_messages_not_a_list"


def test_fragments_are_two_plain_frozen_dataclasses() -> None:
    assert get_args(Fragment) == (TextFragment, MessagesFragment)
    for kind in (TextFragment, MessagesFragment):
        assert dataclasses.is_dataclass(kind) and type(kind) is type  # no metaclass
        assert kind.__mro__ == (kind, object)  # no common base that answers for the other
    given = [{"role": "user", "content": "Hi"}]
    history = MessagesFragment("history", given)
    notes = TextFragment("notes", "Remember the milk.")
    assert isinstance(history, Fragment) and isinstance(notes, Fragment)
    assert history.messages == tuple(given) and given == [{"role": "user", "content": "Hi"}]
    # Neither kind answers the other's fields, with None or anything else.
    assert [field.name for field in dataclasses.fields(notes)] == ["id", "text", "role"]
    assert [field.name for field in dataclasses.fields(history)] == ["id", "messages"]
    assert not hasattr(history, "text") and not hasattr(history, "role")
    assert not hasattr(notes, "messages")
    with pytest.raises(dataclasses.FrozenInstanceError):
        notes.text = "x"  # type: ignore[misc]
    seen = []
    for fragment in (notes, history):
        match fragment:
            case TextFragment(text=text):
                seen.append(text)
            case MessagesFragment(messages=messages):
                seen.append(len(messages))
    assert seen == ["Remember the milk.", 1]
    # A copy made with dataclasses.replace is checked as the constructor checks.
    assert dataclasses.replace(notes, role="system").role == "system"
    with pytest.raises(InvalidValueError) as caught:
        dataclasses.replace(notes, role="assistant")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_fragment_role"
    with pytest.raises(InvalidValueError) as caught:
        dataclasses.replace(history, id=" ")
    assert caught.value.code == "blank_fragment_id"
    with pytest.raises(InvalidTypeError) as type_error:
        TextFragment(3, "x")  # type: ignore[arg-type]
    assert type_error.value.code == "not_a_string"
    with pytest.raises(InvalidValueError) as caught:
        process_context(
            ContextPolicy(mode="validate"), [{"id": "h", "messages": [], "role": "user"}]
        )
    assert caught.value.code == "invalid_fragment_role"


def test_process_context_checks_its_fragments() -> None:
    policy = ContextPolicy(mode="validate")
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(policy, [TextFragment("a", text="x"), {"id": "a", "text": "y"}])
    assert caught.value.code == "duplicate_fragment_id"
    with pytest.raises(InvalidTypeError) as type_error:
        process_context(policy, ["a"])  # type: ignore[list-item]
    assert type_error.value.code == "invalid_fragment_type"
    with pytest.raises(InvalidTypeError) as type_error:
        process_context(policy, "abc")  # type: ignore[arg-type]
    assert type_error.value.code == "not_a_fragment_list"
    result = process_context(policy, [{"id": "doc", "text": "hello"}])
    assert result.fragment("doc") == TextFragment("doc", text="hello")
    with pytest.raises(InvalidValueError) as missing:
        result.fragment("nope")
    assert missing.value.code == "fragment_not_found"


def test_a_malformed_message_is_reported_with_its_index() -> None:
    policy = {"mode": "reduce", "triggerChars": 1}
    with pytest.raises(InvalidTypeError) as caught:
        process_context(
            policy, [MessagesFragment("h", messages=[user("a"), {"role": "user", "content": 5}])]
        )
    assert caught.value.code == "invalid_message_field"
    assert caught.value.params["index"] == 1


# --- trimming messages ---------------------------------------------------------------------------


def trim_policy(**step: Any) -> dict[str, Any]:
    limits = step.pop("limits", {"triggerChars": 60, "targetInputChars": 50})
    return {
        "mode": "reduce",
        **limits,
        "steps": [{"id": "trim", "kind": "trim", "fragmentId": "h", **step}],
    }


def test_trim_by_user_turns_stops_at_the_step_target() -> None:
    history = chat(5)  # 14 + 5 * 20 = 114 characters
    result = process_context(
        trim_policy(keepGroups=1, targetChars=60), [MessagesFragment("h", messages=history)]
    )
    fragment = result.fragment("h")
    assert contents(fragment) == [
        "You are terse.",
        "question03",
        "answer--03",
        "question04",
        "answer--04",
    ]
    assert result.removed["h"] == history[1:7]
    report = result.report
    assert (report.before_chars, report.after_chars) == (114, 54)
    (change,) = report.changes
    assert (change.id, change.kind, change.fragment_id, change.status) == (
        "trim",
        "trim",
        "h",
        "applied",
    )
    assert (change.removed_messages, change.removed_chars, change.saved_chars) == (6, 60, 60)


def test_trim_without_target_keeps_exactly_keep_groups() -> None:
    history = chat(5)
    result = process_context(trim_policy(keepGroups=2), [MessagesFragment("h", messages=history)])
    assert contents(result.fragment("h")) == [
        "You are terse.",
        "question03",
        "answer--03",
        "question04",
        "answer--04",
    ]


def test_trim_never_removes_the_newest_keep_groups_even_when_over_target() -> None:
    history = chat(3)
    result = process_context(
        trim_policy(keepGroups=3, targetChars=0), [MessagesFragment("h", messages=history)]
    )
    assert result.fragment("h").messages == tuple(history)
    assert result.report.changes == ()
    assert result.report.selection == "sequence"


def test_trim_keeps_system_and_developer_messages_inside_removed_turns() -> None:
    history = [
        user("old question"),
        {"role": "developer", "content": "Use metric units."},
        assistant("old answer"),
        user("new question"),
        assistant("new answer"),
    ]
    result = process_context(
        trim_policy(limits={"triggerChars": 1}), [MessagesFragment("h", messages=history)]
    )
    assert contents(result.fragment("h")) == [
        "Use metric units.",
        "new question",
        "new answer",
    ]
    assert result.removed["h"] == [history[0], history[2]]


def test_trim_keeps_tool_units_whole_in_both_shapes() -> None:
    openai = [
        user("Weather?"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny and warm"},
        assistant("Sunny."),
        user("Thanks"),
        assistant("Bye"),
    ]
    result = process_context(
        trim_policy(grouping={"kind": "message"}, keepGroups=3, limits={"triggerChars": 1}),
        [MessagesFragment("h", messages=openai)],
    )
    assert [message["role"] for message in result.fragment("h").messages] == [
        "assistant",
        "user",
        "assistant",
    ]
    result = process_context(
        trim_policy(grouping={"kind": "message"}, keepGroups=4, limits={"triggerChars": 1}),
        [MessagesFragment("h", messages=openai)],
    )
    assert result.fragment("h").messages == tuple(openai[1:])


def test_trim_by_tokens_with_a_counter() -> None:
    words = CallableCounter(lambda text: len(text.split()), id="words")
    history = [user("one two three"), assistant("four five"), user("six"), assistant("seven eight")]
    result = process_context(
        trim_policy(targetTokens=3, limits={"triggerTokens": 4}),
        [MessagesFragment("h", messages=history)],
        counter=words,
    )
    assert result.fragment("h").messages == tuple(history[2:])
    tokens = result.report.tokens
    assert tokens is not None
    assert (tokens.counter_id, tokens.before, tokens.after, tokens.input_limit) == (
        "words",
        8,
        3,
        4,
    )
    change = result.report.changes[0]
    assert (change.before_tokens, change.after_tokens) == (8, 3)


def test_budget_sets_the_token_input_limit() -> None:
    counter = CallableCounter(len, id="chars")
    budget = ContextBudget(window=100, output=60, safety=0)  # context budget 40
    history = chat(3, None)  # 60 characters
    result = process_context(
        trim_policy(limits={}), [MessagesFragment("h", history)], counter=counter, budget=budget
    )
    assert result.report.tokens is not None
    assert result.report.tokens.input_limit == 40
    assert result.fragment("h").messages == tuple(history[4:])


def test_a_policy_below_its_trigger_changes_nothing() -> None:
    history = chat(2)
    result = process_context(
        trim_policy(limits={"triggerChars": 1000, "targetInputChars": 10}),
        [MessagesFragment("h", messages=history)],
    )
    assert result.fragment("h").messages == tuple(history)
    assert result.report.selection is None and result.report.changes == ()
    assert result.report.before_chars == result.report.after_chars == message_chars(history[0]) + 40


def test_a_missing_target_equals_the_trigger_and_vice_versa() -> None:
    history = chat(5)  # 114
    only_trigger = process_context(
        trim_policy(limits={"triggerChars": 100}, targetChars=None),
        [MessagesFragment("h", messages=history)],
    )
    assert only_trigger.report.after_chars == 14 + 20  # keep_groups=1 without a step target
    stepwise = {
        "mode": "reduce",
        "targetInputChars": 100,
        "steps": [
            {"id": "a", "kind": "trim", "fragmentId": "h", "targetChars": 100},
            {"id": "b", "kind": "trim", "fragmentId": "h", "targetChars": 10},
        ],
    }
    result = process_context(stepwise, [MessagesFragment("h", messages=history)])
    assert result.report.after_chars == 94
    assert [change.id for change in result.report.changes] == ["a"]


# --- trimming text -------------------------------------------------------------------------------


def test_text_trim_keeps_the_head_with_a_visible_marker() -> None:
    text = "".join(f"{n:04d}" for n in range(50))  # 200 characters
    policy = {
        "mode": "reduce",
        "triggerChars": 100,
        "steps": [
            {"id": "cut", "kind": "trim", "fragmentId": "doc", "field": "text", "targetChars": 57}
        ],
    }
    result = process_context(policy, [TextFragment("doc", text=text)])
    kept = result.fragment("doc").text
    assert kept == text[:50] + "\n[...]\n"
    assert len(kept) == 57 == result.report.after_chars
    assert result.removed["doc"] == [text[50:]]
    change = result.report.changes[0]
    assert (change.removed_chars, change.added_chars, change.removed_messages) == (150, 7, 0)
    assert kept[: -len("\n[...]\n")] + result.removed["doc"][0] == text


def test_text_trim_can_keep_the_tail_with_a_custom_marker() -> None:
    policy = {
        "mode": "reduce",
        "triggerChars": 10,
        "steps": [
            {
                "id": "cut",
                "kind": "trim",
                "fragmentId": "log",
                "field": "text",
                "keep": "tail",
                "marker": "…",
                "targetChars": 5,
            }
        ],
    }
    result = process_context(policy, [TextFragment("log", text="line1\nline2\nline3")])
    assert result.fragment("log").text == "…ine3"
    assert result.removed["log"] == ["line1\nline2\nl"]


def test_text_trim_by_tokens() -> None:
    words = CallableCounter(lambda text: len(text.split()), id="words")
    text = " ".join(f"w{n}" for n in range(20))
    policy = {
        "mode": "reduce",
        "triggerTokens": 10,
        "steps": [
            {"id": "cut", "kind": "trim", "fragmentId": "doc", "field": "text", "targetTokens": 6}
        ],
    }
    result = process_context(policy, [TextFragment("doc", text=text)], counter=words)
    kept = result.fragment("doc").text
    assert words.count(kept) <= 6
    assert kept.startswith("w0 w1 w2 w3 w4") and kept.endswith("\n[...]\n")


# --- modes ---------------------------------------------------------------------------------------


def test_validate_mode_raises_when_reduce_would_act() -> None:
    history = chat(5)
    policy = trim_policy()
    policy["mode"] = "validate"
    with pytest.raises(ContextOverflowError) as caught:
        process_context(policy, [MessagesFragment("h", messages=history)])
    err = caught.value
    assert err.code == "policy_validation_overflow"
    assert err.params == {"chars": 114, "limit": 60, "limit_name": "trigger_chars"}
    assert "114" in str(err) and "60" in str(err)
    assert_translated(err)
    assert not isinstance(err, ValueError)


def test_validate_mode_raises_on_the_token_limit_and_otherwise_reports() -> None:
    counter = CallableCounter(len, id="chars")
    budget = ContextBudget(window=100, output=50, safety=0)
    policy = {"mode": "validate"}
    with pytest.raises(ContextOverflowError) as caught:
        process_context(policy, [TextFragment("d", text="x" * 51)], counter=counter, budget=budget)
    assert caught.value.code == "policy_validation_token_overflow"
    assert caught.value.params == {"tokens": 51, "limit": 50, "limit_name": "budget"}
    result = process_context(policy, [TextFragment("d", "x" * 50)], counter=counter, budget=budget)
    assert result.report.mode == "validate" and result.report.changes == ()
    assert result.report.tokens is not None and result.report.tokens.before == 50


def test_audit_mode_reports_what_reduce_does_and_changes_nothing() -> None:
    history = chat(5)
    reduce_policy = trim_policy(targetChars=60)
    audit_policy = {**reduce_policy, "mode": "audit"}
    reduced = process_context(reduce_policy, [MessagesFragment("h", messages=history)])
    audited = process_context(audit_policy, [MessagesFragment("h", messages=history)])
    assert audited.fragments == (MessagesFragment("h", messages=history),)
    assert audited.removed == {"h": []}
    assert audited.report.changes == reduced.report.changes
    assert audited.report.after_chars == reduced.report.after_chars
    assert audited.report.model_dump(exclude={"mode"}) == reduced.report.model_dump(
        exclude={"mode"}
    )


def test_the_input_list_and_messages_are_not_mutated() -> None:
    history = chat(5)
    snapshot = json.dumps(history)
    fragments = [MessagesFragment("h", messages=history)]
    process_context(trim_policy(), fragments)
    assert json.dumps(history) == snapshot
    assert fragments[0].messages == tuple(history)


# --- the report ----------------------------------------------------------------------------------


def test_the_report_round_trips_through_json_in_both_spellings() -> None:
    result = process_context(
        trim_policy(targetChars=60), [MessagesFragment("h", chat(5))], counter=CallableCounter(len)
    )
    report = result.report
    camel = report.model_dump_json(by_alias=True)
    assert '"beforeChars":114' in camel and '"fragmentId":"h"' in camel and '"counterId"' in camel
    assert ContextProcessingReport.model_validate_json(camel) == report
    assert ContextProcessingReport.model_validate_json(report.model_dump_json()) == report
    assert set(json.loads(camel)) == {
        "mode",
        "selection",
        "decisions",
        "beforeChars",
        "afterChars",
        "tokens",
        "estimatedParts",
        "changes",
        "targetMet",
        "shortfallChars",
        "shortfallTokens",
        "skippedSteps",
        "pinnedChars",
        "pinnedTokens",
        "conversation",
    }


def test_removed_stays_in_input_order_when_two_steps_remove_from_one_fragment() -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for turn in range(6):
        history += [
            {"role": "user", "content": f"u{turn} " * 20},
            {"role": "assistant", "content": f"a{turn} " * 20},
        ]
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "trigger_chars": 100,
            "target_input_chars": 90,
            "selection": {"mode": "fixed", "steps": ["drop-last", "trim"]},
            "steps": [
                {"id": "drop-last", "kind": "app", "fragment_id": "h", "app": "drop"},
                {
                    "id": "trim",
                    "kind": "trim",
                    "fragment_id": "h",
                    "field": "messages",
                    "grouping": {"kind": "user-turn"},
                    "keep_groups": 1,
                },
            ],
        }
    )
    result = process_context(
        policy, [MessagesFragment("h", messages=history)], apps={"drop": lambda f: f.messages[:-1]}
    )
    removed = result.removed["h"]
    kept = result.fragments[0].messages
    assert removed[-1] is history[-1], "the app's removal comes last: it is the newest message"
    assert sorted([*kept, *removed], key=lambda m: history.index(m)) == history
    assert [history.index(m) for m in removed] == sorted(history.index(m) for m in removed)


def test_a_text_fragment_and_a_messages_fragment_are_two_types() -> None:
    from dataclasses import FrozenInstanceError

    from contextwise import MessagesFragment, TextFragment

    history = [user("Hi"), assistant("Hello")]
    messages = MessagesFragment("history", messages=history)
    text = TextFragment("notes", text="Remember the milk.", role="system")
    assert isinstance(messages, MessagesFragment) and isinstance(messages, Fragment)
    assert isinstance(text, TextFragment) and isinstance(text, Fragment)
    assert messages.messages == tuple(history) and not hasattr(messages, "text")
    assert (text.text, text.role) == ("Remember the milk.", "system")
    assert not hasattr(text, "messages")
    # Built directly, by keyword or by position, with the same checks and the same values.
    assert MessagesFragment("history", history) == messages
    assert TextFragment("notes", text="Remember the milk.", role="system") == text
    assert TextFragment("notes", "Remember the milk.").role == "user"
    # Two types never compare equal, and neither can be changed.
    assert TextFragment("x", text="") != MessagesFragment("x", messages=[])
    with pytest.raises(FrozenInstanceError):
        text.text = "changed"  # type: ignore[misc]
    history.append(user("later"))  # the fragment keeps its own tuple
    assert len(messages.messages) == 2
    with pytest.raises(TypeError):
        MessagesFragment("history", text="not messages")  # type: ignore[call-arg]
    with pytest.raises(InvalidValueError) as caught:
        MessagesFragment("history", None)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_fragment"
    assert_translated(caught.value)
    with pytest.raises(InvalidTypeError) as wrong:
        MessagesFragment("history", "not a list")  # type: ignore[arg-type]
    assert wrong.value.code == "fragment_messages_not_a_list"
