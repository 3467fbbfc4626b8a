"""The cost benchmark is deterministic, so its goals are asserted here too: over a whole
tool-heavy conversation driven through each framework's real loop, every integration pays what
ContextSession pays, far less than trim_messages, keeps the prompt cache and buys fewer summaries
than LangChain's SummarizationMiddleware."""

from __future__ import annotations

import pytest

from benchmarks import bench_cost


@pytest.fixture(scope="module")
def ledgers() -> dict[str, bench_cost.Ledger]:
    return bench_cost.measure()


@pytest.mark.slow
def test_every_goal_of_the_cost_benchmark_is_met(ledgers: dict[str, bench_cost.Ledger]) -> None:
    missed = [text for text, met in bench_cost.goals(ledgers) if not met]
    assert not missed, missed


@pytest.mark.slow
def test_every_row_runs_the_same_conversation_under_the_same_limit(
    ledgers: dict[str, bench_cost.Ledger],
) -> None:
    calls = {ledger.calls for ledger in ledgers.values()}
    assert len(calls) == 1 and 350 <= calls.pop() <= 450
    limit_tokens = bench_cost.tokens(bench_cost.LIMIT + len(bench_cost.SYSTEM)) + 200
    for name, ledger in ledgers.items():
        if name != "append-only floor":
            assert ledger.max_prompt <= limit_tokens, name
    # The clear-then-trim row (tool loops) keeps the current task in every prompt.
    assert ledgers["ContextSession, clear+trim"].kept_task
    floor = ledgers["append-only floor"]
    assert floor.max_prompt > 3 * limit_tokens  # the conversation is far above the limit
    # The integrations pay per sent token about what ContextSession pays, and summarize as often.
    session = ledgers["ContextSession"]
    for name in bench_cost.INTEGRATIONS:
        assert ledgers[name].summarizer_calls == session.summarizer_calls, name


def test_the_pricing_follows_the_providers_rules() -> None:
    ledger = bench_cost.Ledger("rules")
    big = [("a", 8_000), ("b", 8_000)]
    ledger.prompt(big)  # nothing cached yet: written at 1.25 x
    first = ledger.anthropic_billed
    total = bench_cost.tokens(len(bench_cost.SYSTEM)) + 4_000
    assert first == pytest.approx(1.25 * total)
    ledger.prompt([*big, ("c", 400)])  # the previous prompt is read at 0.1 x
    assert ledger.anthropic_cached == total
    assert ledger.anthropic_billed - first == pytest.approx(0.1 * total + 1.25 * 100)
    assert ledger.openai_cached == 1_024 + 128 * ((total - 1_024) // 128)
    small = bench_cost.Ledger("small")
    small.prompt([("a", 400)])
    small.prompt([("a", 400), ("b", 40)])  # under 1,024 tokens nothing is cached
    assert small.anthropic_cached == 0 and small.openai_cached == 0


def test_a_larger_target_sends_larger_prompts_and_bills_more() -> None:
    turns = bench_cost.conversation()
    small, large = (bench_cost.run_session(turns, target) for target in (36_000, 108_000))
    assert bench_cost.limit_for(36_000) == 60_000 and bench_cost.limit_for(108_000) == 180_000
    assert (small.sent_tokens // small.calls, round(small.billed)) == (9_156, 1_414_211)
    assert (large.sent_tokens // large.calls, round(large.billed)) == (23_443, 1_896_309)


@pytest.mark.slow
def test_the_target_sweep_is_what_the_performance_page_draws() -> None:
    points = bench_cost.sweep()
    rows: dict[str, list[bench_cost.SweepPoint]] = {}
    for point in points:
        rows.setdefault(point.name, []).append(point)
    assert set(rows) == {
        "trim_messages",
        "SummarizationMiddleware",
        "ContextSession",
        "ContextSession, clear+trim",
    }
    for name, line in rows.items():
        assert [p.target for p in line] == list(bench_cost.TARGETS), name
        assert [p.mean_prompt for p in line] == sorted(p.mean_prompt for p in line), name
    # at every target, the session bills less than both LangChain rows
    for index in range(len(bench_cost.TARGETS)):
        session = rows["ContextSession"][index].billed
        assert session < rows["trim_messages"][index].billed
        assert session < rows["SummarizationMiddleware"][index].billed
    assert round(rows["ContextSession"][2].billed) == 1_601_814  # the main table's target
