"""Validation failures are coded contextwise errors: a code per kind, the field path, the value."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from contextwise import (
    ContextPolicy,
    ContextwiseError,
    InvalidTypeError,
    ModelSpec,
    PolicyConfigurationError,
    RoutingConfigurationError,
    RoutingContext,
    process_context,
)
from support.errors import assert_translated


def _problems(data: Any) -> list[tuple[str, str | None]]:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(data)
    return [(problem.code, problem.params.get("field")) for problem in caught.value.problems]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"mode": "reduce", "colour": "blue"}, [("unknown_key", "colour")]),
        ({"mode": "reduce", "triggerChars": "2000"}, [("wrong_type", "triggerChars")]),
        ({"mode": "reduce", "trigger_chars": -1}, [("out_of_range", "trigger_chars")]),
        ({}, [("missing_key", "mode")]),
        ({"mode": "shrink"}, [("invalid_choice", "mode")]),
        ({"mode": "reduce", "steps": [{"id": "a"}]}, [("missing_key", "steps[0].kind")]),
        (
            {"mode": "reduce", "steps": [{"kind": "cut", "id": "a"}]},
            [("invalid_choice", "steps[0].kind")],
        ),
        (
            {"mode": "reduce", "steps": [{"kind": "trim", "id": " ", "fragmentId": "h"}]},
            [("blank_value", "steps[0].id")],
        ),
        (
            {"mode": "reduce", "selection": {"mode": "fixed", "steps": []}},
            [("too_few_items", "selection.steps")],
        ),
        (
            {"mode": "reduce", "selection": {"mode": "model", "model": "m", "timeout": "inf"}},
            [("wrong_type", "selection.timeout")],
        ),
        (
            {"mode": "reduce", "selection": {"mode": "model", "model": "m", "timeout": 1e999}},
            [("not_finite", "selection.timeout")],
        ),
        ("reduce", [("wrong_type", "ContextPolicy")]),
        ({"mode": "reduce", "steps": [7]}, [("wrong_type", "steps[0]")]),
    ],
)
def test_each_kind_of_failure_has_its_code_and_the_path_as_written(
    data: Any, expected: list[tuple[str, str]]
) -> None:
    assert _problems(data) == expected


def test_the_path_follows_the_spelling_of_the_file_and_leaves_out_union_tags() -> None:
    data = {
        "mode": "reduce",
        "steps": [
            {"kind": "trim", "id": "a", "fragmentId": "h"},
            {"kind": "trim", "id": "b", "fragmentId": "h", "keepGroups": "2"},
        ],
        "selection": {"mode": "model", "model": "m", "minConfidence": 2},
    }
    assert _problems(data) == [
        ("out_of_range", "selection.minConfidence"),
        ("wrong_type", "steps[1].keepGroups"),
    ]


def test_one_key_written_both_ways_names_both_spellings_beside_the_other_problems() -> None:
    data = {"mode": "reduce", "triggerChars": 10, "trigger_chars": 10, "colour": 1}
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(data)
    duplicate, unknown = caught.value.problems
    assert duplicate.code == "duplicate_key"
    assert duplicate.params == {"field": "trigger_chars", "name": "trigger_chars",
                                "alias": "triggerChars"}
    assert "'trigger_chars'" in str(duplicate) and "'triggerChars'" in str(duplicate)
    assert unknown.code == "unknown_key" and unknown.params["field"] == "colour"
    nested = {"mode": "reduce", "steps": [
        {"kind": "trim", "id": "a", "fragmentId": "h", "keepGroups": 1, "keep_groups": 2}]}
    assert _problems(nested) == [("duplicate_key", "steps[0].keep_groups")]


def test_an_unknown_key_lists_the_keys_accepted_where_it_stands() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate(
            {"mode": "reduce", "steps": [{"kind": "app", "id": "a", "fragmentId": "h",
                                          "app": "x", "timout": 3}]}
        )
    assert caught.value.params["known"] == ["kind", "id", "fragment_id", "app", "timeout"]


def test_numbers_are_never_read_from_strings_or_booleans() -> None:
    for bad in ("0.9", True, float("nan")):
        problems = _problems(
            {"mode": "reduce", "selection": {"mode": "model", "model": "m", "minConfidence": bad}}
        )
        assert problems[0][1] == "selection.minConfidence"
        assert problems[0][0] in {"wrong_type", "not_finite"}


def test_a_schema_key_at_the_top_is_accepted_and_must_be_a_string() -> None:
    policy = ContextPolicy.from_json('{"$schema": "./context-policy.schema.json", "mode": "audit"}')
    assert policy.mode == "audit" and "$schema" not in policy.model_dump()
    assert _problems({"$schema": 3, "mode": "audit"}) == [("wrong_type", "$schema")]
    assert _problems({"mode": "audit", "steps": [{"$schema": "x"}]})[0][0] == "missing_key"


def test_invalid_json_gives_the_line_and_the_column() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_json('{\n  "mode": "reduce",\n  "triggerChars": ,\n}')
    assert caught.value.code == "invalid_json"
    assert (caught.value.params["line"], caught.value.params["column"]) == (3, 19)


def test_files_report_every_problem_in_both_formats(tmp_path: Path) -> None:
    toml = tmp_path / "policy.toml"
    toml.write_text('mode = "reduce"\ntriggerChars = "100"\n', encoding="utf-8")
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_file(toml)
    assert (caught.value.code, caught.value.params["field"]) == ("wrong_type", "triggerChars")
    broken = tmp_path / "broken.toml"
    broken.write_bytes(b"mode = \xff")
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_file(broken)
    assert caught.value.code == "invalid_toml"
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_toml(b"mode = 'reduce'")  # type: ignore[arg-type]
    assert caught.value.code == "wrong_type"


def test_constructor_and_every_validate_method_raise_coded_errors() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy(mode="reduce", trigger_chars="5")  # type: ignore[arg-type]
    assert caught.value.code == "wrong_type"
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate_json(b'{"mode": 1}')
    assert caught.value.code == "invalid_choice"
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate_strings({"mode": "reduce", "trigger_chars": "x"})
    assert caught.value.code == "wrong_type"


def test_several_problems_render_with_a_count_in_three_languages() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.model_validate({"mode": "reduce", "colour": 1, "triggerChars": "9"})
    err = caught.value
    assert len(err.problems) == 2
    english = err.render("en")
    assert english.endswith("There is 1 more problem in the same input.")
    for locale in ("fr", "zh"):
        rendered = err.render(locale)
        assert rendered != english and "triggerChars" in rendered
    copy = pickle.loads(pickle.dumps(err))
    assert [p.code for p in copy.problems] == [p.code for p in err.problems]
    assert str(copy) == str(err)


def test_every_field_code_renders_its_path_in_french_and_chinese() -> None:
    cases = [
        ({"mode": "reduce", "colour": 1}, "colour"),
        ({"mode": "reduce", "triggerChars": "9"}, "triggerChars"),
        ({"mode": "reduce", "trigger_chars": -1}, "trigger_chars"),
        ({"mode": "shrink"}, "mode"),
        ({}, "mode"),
    ]
    for data, field in cases:
        with pytest.raises(PolicyConfigurationError) as caught:
            ContextPolicy.model_validate(data)
        english = caught.value.render("en")
        for locale in ("fr", "zh"):
            rendered = caught.value.render(locale)
            assert rendered != english and field in rendered, (caught.value.code, locale)


def test_every_field_code_is_translated_with_its_parameters() -> None:
    cases: list[Any] = [
        {"mode": "reduce", "colour": 1},
        {"mode": "reduce", "triggerChars": 1, "trigger_chars": 1},
        {},
        {"mode": "reduce", "triggerChars": "9"},
        {"mode": "reduce", "trigger_chars": -1},
        {"mode": "reduce", "selection": {"mode": "model", "model": "m", "timeout": 1e999}},
        {"mode": "reduce", "steps": [{"kind": "trim", "id": " ", "fragmentId": "h"}]},
        {"mode": "reduce", "selection": {"mode": "fixed", "steps": []}},
        {"mode": "shrink"},
    ]
    seen = set()
    for data in cases:
        with pytest.raises(PolicyConfigurationError) as caught:
            ContextPolicy.model_validate(data)
        assert_translated(caught.value.problems[0])
        seen.add(caught.value.code)
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_json("{")
    assert_translated(caught.value)
    seen.add(caught.value.code)
    assert seen == {
        "unknown_key", "duplicate_key", "missing_key", "wrong_type", "out_of_range",
        "not_finite", "blank_value", "too_few_items", "invalid_choice", "invalid_json",
    }


def test_model_specs_are_strict_and_coded() -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"name": "m", "window": "32000"}, "wrong_type", "window"),
        ({"name": "m", "window": True}, "wrong_type", "window"),
        ({"name": "m", "window": 0}, "out_of_range", "window"),
        ({"name": "m", "max_output_tokens": 1.5}, "wrong_type", "max_output_tokens"),
        ({"name": ""}, "blank_value", "name"),
        ({"name": "m", "effort": "huge"}, "invalid_choice", "effort"),
        ({"name": "m", "colour": 1}, "unknown_key", "colour"),
        ({}, "missing_key", "name"),
    ]
    for data, code, field in cases:
        with pytest.raises(RoutingConfigurationError) as caught:
            ModelSpec(**data)
        assert (caught.value.code, caught.value.params["field"]) == (code, field)
        with pytest.raises(RoutingConfigurationError):
            ModelSpec.model_validate(data)


def test_a_message_list_where_fragments_are_expected_says_so() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        process_context(
            ContextPolicy(mode="validate"), [{"role": "user", "content": "Hi"}]  # type: ignore[list-item]
        )
    assert caught.value.code == "messages_not_fragments"
    assert "Fragment(" in str(caught.value)


@pytest.mark.parametrize("field", ["messages", "tools"])
def test_a_routing_context_rejects_none_for_its_lists(field: str) -> None:
    with pytest.raises(InvalidTypeError) as caught:
        RoutingContext(step=1, model="m", **{field: None})
    assert (caught.value.code, caught.value.params["name"]) == ("not_a_collection", field)
    if field == "tools":
        with pytest.raises(InvalidTypeError):
            RoutingContext(step=1, model="m", tools=["not a mapping"])  # type: ignore[list-item]


def test_openai_provider_settings_are_checked() -> None:
    from contextwise import OpenAIDecisionProvider

    for settings, code in (
        ({"timeout": -1}, "invalid_timeout"),
        ({"timeout": float("nan")}, "invalid_timeout"),
        ({"max_retries": -1}, "out_of_range"),
        ({"max_retries": "2"}, "wrong_type"),
        ({"temperature": 3}, "out_of_range"),
        ({"name": " "}, "blank_value"),
    ):
        with pytest.raises(RoutingConfigurationError) as caught:
            OpenAIDecisionProvider(api_key="test", **settings)  # type: ignore[arg-type]
        assert caught.value.code == code


def test_validation_errors_are_contextwise_errors_and_value_errors() -> None:
    with pytest.raises(ContextwiseError) as caught:
        ContextPolicy.model_validate({"mode": 3})
    assert isinstance(caught.value, ValueError)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
