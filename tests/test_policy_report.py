"""The report says whether the policy reached its targets, and a shortfall is logged."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from contextwise import (
    CallableCounter,
    ContextPolicy,
    ContextProcessingReport,
    MessagesFragment,
    process_context,
)


def conversation(turns: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "S" * 40}]
    for number in range(turns):
        history += [
            {"role": "user", "content": f"question{number:02d}"},
            {"role": "assistant", "content": f"answer--{number:02d}"},
        ]
    return history


def trim_policy(mode: str = "reduce", **limits: int) -> ContextPolicy:
    return ContextPolicy.model_validate(
        {
            "mode": mode,
            **limits,
            "steps": [{"id": "turns", "kind": "trim", "fragmentId": "h", "keepGroups": 2}],
        }
    )


def test_a_policy_that_reaches_its_target_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="contextwise.policy")
    result = process_context(
        trim_policy(trigger_chars=150, target_input_chars=120),
        [MessagesFragment("h", messages=conversation(6))],
    )
    report = result.report
    assert report.after_chars <= 120
    assert (report.target_met, report.shortfall_chars, report.shortfall_tokens) == (True, 0, 0)
    assert not caplog.records


@pytest.mark.parametrize("mode", ["reduce", "audit"])
def test_a_floor_that_stops_above_the_target_is_a_shortfall_and_a_warning(
    caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    caplog.set_level(logging.WARNING, logger="contextwise.policy")
    # The system message (40) and the two kept turns (2 x 20) stay: 80 characters, target 50.
    result = process_context(
        trim_policy(mode, trigger_chars=100, target_input_chars=50),
        [MessagesFragment("h", messages=conversation(6))],
    )
    report = result.report
    assert report.after_chars == 80
    assert (report.target_met, report.shortfall_chars) == (False, 30)
    [record] = caplog.records
    assert record.name == "contextwise.policy" and record.levelno == logging.WARNING
    assert record.shortfall_chars == 30  # type: ignore[attr-defined]
    assert record.getMessage() == (
        f"context policy ({mode}) stopped above its target: 80 characters for a target of 50 "
        "(30 over)"
    )


def test_a_token_shortfall_is_reported_in_tokens() -> None:
    counter = CallableCounter(lambda text: len(text.split()) + 1, id="words")
    result = process_context(
        trim_policy(trigger_tokens=10, target_input_tokens=3),
        [MessagesFragment("h", messages=conversation(6))],
        counter=counter,
    )
    report = result.report
    assert report.tokens is not None
    assert report.target_met is False
    assert report.shortfall_tokens == report.tokens.after - 3 > 0
    assert report.shortfall_chars == 0


def test_a_context_below_its_trigger_needs_nothing_and_meets_its_target() -> None:
    # Between target and trigger the policy does not act, by design: nothing was required.
    result = process_context(
        trim_policy(trigger_chars=10_000, target_input_chars=10),
        [MessagesFragment("h", messages=conversation(6))],
    )
    assert result.report.changes == ()
    assert (result.report.target_met, result.report.shortfall_chars) == (True, 0)


def test_the_new_fields_are_in_the_json_and_the_schema() -> None:
    report = ContextProcessingReport(
        mode="reduce", before_chars=10, after_chars=8, target_met=False, shortfall_chars=3
    )
    camel = json.loads(report.model_dump_json(by_alias=True))
    assert (camel["targetMet"], camel["shortfallChars"], camel["shortfallTokens"]) == (
        False,
        3,
        0,
    )
    assert ContextProcessingReport.model_validate(camel) == report
    properties = ContextProcessingReport.model_json_schema(by_alias=False)["properties"]
    assert {"target_met", "shortfall_chars", "shortfall_tokens"} <= set(properties)
    assert properties["target_met"]["description"].startswith("Whether the context ends")
