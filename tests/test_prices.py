"""Prices and the ledger: genai-prices' table, ModelPrices, tiers, cache writes, totals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from contextwise import (
    InvalidTypeError,
    InvalidValueError,
    ModelPrices,
    ModelSpec,
    Usage,
    UsageLedger,
    UsageRecord,
    cost,
    price_usage,
)

CLAUDE = Usage(
    input_tokens=100_000,
    cached_input_tokens=50_000,
    cache_write_tokens={"5m": 10_000, "1h": 10_000},
    output_tokens=1_000,
)


def test_genai_prices_prices_cache_reads_and_writes_by_retention() -> None:
    priced = cost(CLAUDE, "claude-sonnet-4-5")
    # 30k uncached x $3 + 50k reads x $0.30 + 10k 5m writes x $3.75 + 10k 1h writes x $6, per M
    assert priced.input == Decimal("0.2025")
    assert priced.output == Decimal("0.015")
    assert priced.source == "genai-prices" and priced.model == "claude-sonnet-4-5"


def test_genai_prices_applies_the_long_context_tier_to_the_whole_call() -> None:
    short = cost(Usage(input_tokens=200_000, output_tokens=0), "claude-sonnet-4-5")
    long = cost(Usage(input_tokens=200_001, output_tokens=0), "claude-sonnet-4-5")
    assert short.input == Decimal("0.6")
    assert long.input > 2 * short.input * Decimal("0.99")


def test_model_prices_win_over_the_table_with_tiers_and_retentions() -> None:
    prices = ModelPrices(
        input=3, output=15, cached_input=0.3, cache_write={"5m": 3.75, "1h": 6},
        tiers=[{"above_input_tokens": 200_000, "input": 6, "output": 22.5, "cached_input": 0.6,
                "cache_write": {"5m": 7.5, "1h": 12}}],
    )
    spec = ModelSpec(name="claude-sonnet-4-5", prices=prices)
    assert cost(CLAUDE, spec).total == Decimal("0.2175")
    assert cost(CLAUDE, spec).source == "model-prices"
    big = Usage(input_tokens=300_000, output_tokens=1_000_000)
    assert cost(big, spec).total == Decimal("1.8") + Decimal("22.5")
    assert cost(Usage(input_tokens=10**6), "x", prices=ModelPrices(input=1, output=1)).total == 1


def test_a_retention_without_a_price_takes_default_then_the_input_price() -> None:
    usage = Usage(input_tokens=10**6, cache_write_tokens={"24h": 10**6})
    assert cost(usage, "m", prices=ModelPrices(input=2, output=0)).input == 2
    with_default = ModelPrices(input=2, output=0, cache_write={"default": 2.5})
    assert cost(usage, "m", prices=with_default).input == Decimal("2.5")


def test_bad_prices_and_unknown_models_are_coded_errors() -> None:
    with pytest.raises(InvalidTypeError) as caught:
        ModelPrices(input="3", output=15)
    assert caught.value.code == "not_a_number"
    with pytest.raises(InvalidValueError) as caught:
        ModelPrices(input=-1, output=15)
    assert caught.value.code == "invalid_price"
    with pytest.raises(InvalidValueError) as caught:
        cost(Usage(input_tokens=1), "no-such-model-anywhere")
    assert caught.value.code == "unknown_model_price"
    with pytest.raises(InvalidValueError) as caught:
        cost(Usage(input_tokens=1), "no-such-model-anywhere", provider="openai")
    # The provider prefixes the name; the Chinese message carries no ASCII parenthesis of its own.
    assert caught.value.params["model"] == "openai/no-such-model-anywhere"
    chinese = caught.value.render("zh")
    assert "“openai/no-such-model-anywhere”的价格" in chinese
    assert "(" not in chinese.split("ModelSpec")[0]
    with pytest.raises(InvalidTypeError) as caught:
        cost({"input_tokens": 1}, "gpt-5")  # type: ignore[arg-type]
    assert caught.value.code == "not_a_usage"


def test_the_ledger_totals_per_model_and_per_kind() -> None:
    ledger = UsageLedger()
    ledger.record(Usage(input_tokens=20_000, cached_input_tokens=18_000, output_tokens=400),
                  model="gpt-5", step=1)
    ledger.record({"usage": {"prompt_tokens": 3_000, "completion_tokens": 200}},
                  model="gpt-5-mini", kind="summarizer", step=1)
    ledger.record(Usage(input_tokens=900, output_tokens=8), model="router-model-unknown",
                  kind="router", step=2)
    summary = ledger.summary()
    assert summary.total.calls == 3 and summary.total.unpriced_calls == 1
    assert set(summary.by_kind) == {"model", "summarizer", "router"}
    assert summary.by_model["gpt-5"].cache_hit_share == 0.9
    priced = [record.cost.total for record in summary.records if record.cost is not None]
    assert summary.total.cost == sum(priced) > 0
    assert summary.total.usage.input_tokens == 23_900
    for record in summary.records:
        assert UsageRecord.from_json(record.to_json()) == record


def test_the_ledger_uses_the_prices_given_without_a_model_name() -> None:
    """Bug 9: the Agents SDK's raw responses carry no model name; the prices given still apply."""
    ledger = UsageLedger()
    record = ledger.record(Usage(input_tokens=1_000_000, output_tokens=1_000_000),
                           prices=ModelPrices(input=2, output=8))
    assert record.cost is not None and record.cost.total == Decimal(10)
    assert record.model is None
    summary = ledger.summary()
    assert summary.total.cost == Decimal(10) and summary.total.unpriced_calls == 0
    assert UsageRecord.from_json(record.to_json()) == record


def test_a_record_checks_its_kind() -> None:
    with pytest.raises(InvalidValueError) as caught:
        price_usage(Usage(), kind="tool")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_choice"
