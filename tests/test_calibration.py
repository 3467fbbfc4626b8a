"""CalibratedCounter: per-model, per-script ratios and overheads fitted on what was billed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextwise import (
    CalibratedCounter,
    EstimateCounter,
    InvalidTypeError,
    InvalidValueError,
    ModelCounter,
    TokenCounter,
    Usage,
    counter_key,
    estimate_tokens,
)

FIXTURE = Path(__file__).parent / "fixtures" / "recorded_conversation.json"


def _replay(counter: CalibratedCounter) -> list[float]:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    errors = []
    for count, billed in zip(recorded["calls"], recorded["input_tokens"], strict=True):
        request = {"system": recorded["system"], "tools": recorded["tools"],
                   "messages": recorded["messages"][:count]}
        errors.append(counter.observe(request, {"input_tokens": billed}, model="gpt-5"))
    return errors


def test_the_prediction_of_each_next_call_is_within_3_percent_from_call_21() -> None:
    errors = _replay(CalibratedCounter())
    assert len(errors) > 100
    assert max(abs(error) for error in errors[20:]) <= 0.03


def test_the_state_is_plain_json_and_goes_on_where_it_stopped() -> None:
    counter = CalibratedCounter()
    _replay(counter)
    state = json.loads(json.dumps(counter.state()))
    again = CalibratedCounter(state=state)
    request = [{"role": "user", "content": "Résume le guide du budget, s'il te plaît."}]
    assert again.predict(request, model="gpt-5") == counter.predict(request, model="gpt-5")
    assert again.observations("gpt-5") == counter.observations("gpt-5") > 100
    assert again.models() == ["gpt-5"]
    with pytest.raises(InvalidValueError) as caught:
        CalibratedCounter(lambda text: len(text), state=state)
    assert caught.value.code == "invalid_calibration_state"
    with pytest.raises(InvalidValueError):
        CalibratedCounter(state={"version": 99})


def test_models_are_calibrated_apart() -> None:
    counter = CalibratedCounter()
    request = {"system": "Be brief.", "messages": [{"role": "user", "content": "Hello there"}]}
    for _ in range(5):
        counter.observe(request, Usage(input_tokens=40), model="big")
        counter.observe(request, Usage(input_tokens=20), model="small")
    assert counter.predict(request, model="big") == 40
    assert counter.predict(request, model="small") == 20
    assert counter.predict(request, model="never-seen") == sum(
        map(estimate_tokens, ["Be brief.", "Hello there"])
    )


def test_a_model_counter_is_a_token_counter_with_calibrated_counts() -> None:
    counter = CalibratedCounter()
    chinese = [{"role": "user", "content": "请总结预算指南的要点。" * 20}]
    for _ in range(10):  # this model counts Chinese at half the estimate
        counter.observe(chinese, Usage(input_tokens=estimate_tokens(chinese[0]["content"]) // 2),
                        model="m")
    model = counter.for_model("m")
    assert isinstance(model, ModelCounter) and isinstance(model, TokenCounter)
    assert model.id == "calibrated:m" and model.base == EstimateCounter()
    text = "预算指南"
    assert model.count(text) < estimate_tokens(text)
    assert model.scale(100) < 100
    assert model.predict(chinese) == counter.predict(chinese, model="m")


def test_another_base_counter_is_split_by_script_in_the_estimates_shares() -> None:
    counter = CalibratedCounter(lambda text: 2 * len(text))
    split = counter.base_by_script("abc 中文")
    assert sum(split.values()) == pytest.approx(2 * len("abc 中文"))
    assert set(split) == {"latin", "han", "code"}
    assert counter.base_key == "<lambda>"
    assert counter_key(EstimateCounter()) == "estimate@3"


def test_bad_requests_and_models_are_coded_errors() -> None:
    counter = CalibratedCounter()
    with pytest.raises(InvalidTypeError) as caught:
        counter.observe(42, Usage(input_tokens=1), model="m")
    assert caught.value.code == "invalid_request"
    with pytest.raises(InvalidValueError) as caught:
        counter.for_model(" ")
    assert caught.value.code == "blank_value"
    assert counter.observe("hello", Usage(), model="m") == 0.0  # nothing billed: nothing learnt
    assert counter.observations("m") == 0


def test_a_state_of_the_estimate_version_2_is_taken_with_its_six_scripts() -> None:
    """A state saved before the estimate knew more scripts (its fits had six script features):
    a counter over a tokenizer keeps it (its key did not change), and each new script starts
    from the prior."""
    counter = CalibratedCounter(len)
    request = [{"role": "user", "content": "Summarize the budget guide, please."}]
    for _ in range(5):
        counter.observe(request, Usage(input_tokens=20), model="m")
    state = counter.state()
    fit = state["models"]["m"]
    old = [0, 8, 9, 10, 11, 14, 15, 16]  # latin, han, kana, hangul, digits, code, messages, call
    assert all(fit["vector"][index] == 0.0 for index in range(17) if index not in old)
    fit["vector"] = [fit["vector"][index] for index in old]
    fit["matrix"] = [[fit["matrix"][row][column] for column in old] for row in old]
    again = CalibratedCounter(len, state=state)
    assert again.predict(request, model="m") == counter.predict(request, model="m")
    assert again.observations("m") == 5
    assert again.ratios("m")["cyrillic"] == 1.0
    fit["vector"] = fit["vector"][:5]
    with pytest.raises(InvalidValueError) as caught:
        CalibratedCounter(len, state=state)
    assert caught.value.code == "invalid_calibration_state"
