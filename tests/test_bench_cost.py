"""The cost benchmark is deterministic, so its goals are asserted here too: over a whole
tool-heavy conversation driven through each framework's real loop, with a system prompt of over
8,000 characters and six tool definitions sent at every call, every integration measures the whole
prompt, pays what ContextSession pays, far less than trim_messages, keeps the prompt cache, buys
fewer summaries than LangChain's SummarizationMiddleware, and never leaves a call above the trigger
that the same policy without memory would have brought under it."""

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
    # LangChain's rows do not count the tools (nor, for SummarizationMiddleware, the system
    # prompt): the limit plus the prefix bounds them; contextwise's rows count the whole prompt.
    limit_tokens = bench_cost.tokens(bench_cost.LIMIT + len(bench_cost.PREFIX)) + 200
    for name, ledger in ledgers.items():
        if name != "append-only floor":
            assert ledger.max_prompt <= limit_tokens, name
    for name in ("ContextSession", "ContextSession, clear+trim", *bench_cost.INTEGRATIONS):
        assert ledgers[name].max_prompt <= bench_cost.tokens(bench_cost.LIMIT) + 200, name
    # The clear-then-trim row (tool loops) keeps the current task in every prompt.
    assert ledgers["ContextSession, clear+trim"].kept_task
    floor = ledgers["append-only floor"]
    assert floor.max_prompt > 3 * limit_tokens  # the conversation is far above the limit
    # The integrations pay per sent token about what ContextSession pays, and summarize as often.
    session = ledgers["ContextSession"]
    for name in bench_cost.INTEGRATIONS:
        assert ledgers[name].summarizer_calls == session.summarizer_calls, name


@pytest.mark.slow
def test_every_contextwise_row_measures_the_system_prompt_and_the_tools(
    ledgers: dict[str, bench_cost.Ledger],
) -> None:
    assert len(bench_cost.SYSTEM) >= 8_000 and len(bench_cost.TOOLS) == 6
    for name in ("ContextSession", *bench_cost.INTEGRATIONS):
        ledger = ledgers[name]
        # each framework writes the tools its own way: within 3 % of the canonical JSON
        assert abs(ledger.pinned_chars - len(bench_cost.PREFIX)) <= 0.03 * len(bench_cost.PREFIX)
        assert len(ledger.measured) == ledger.calls, name
        assert max(ledger.measured) <= bench_cost.LIMIT, name
        assert (ledger.above_trigger, ledger.stateless_under) == (0, 0), name


def test_the_pricing_follows_the_providers_rules() -> None:
    ledger = bench_cost.Ledger("rules")
    big = [("a", 8_000), ("b", 8_000)]
    ledger.prompt(big)  # nothing cached yet: written at 1.25 x
    first = ledger.anthropic_billed
    total = bench_cost.tokens(len(bench_cost.PREFIX)) + 4_000
    assert first == pytest.approx(1.25 * total)
    ledger.prompt([*big, ("c", 400)])  # the previous prompt is read at 0.1 x
    assert ledger.anthropic_cached == total
    assert ledger.anthropic_billed - first == pytest.approx(0.1 * total + 1.25 * 100)
    assert ledger.openai_cached == 1_024 + 128 * ((total - 1_024) // 128)
    small = bench_cost.Ledger("small", prefix="")
    small.prompt([("a", 400)])
    small.prompt([("a", 400), ("b", 40)])  # under 1,024 tokens nothing is cached
    assert small.anthropic_cached == 0 and small.openai_cached == 0


def test_a_larger_target_sends_larger_prompts_and_bills_more() -> None:
    turns = bench_cost.conversation()
    small, large = (bench_cost.run_session(turns, target) for target in (36_000, 108_000))
    assert bench_cost.limit_for(36_000) == 60_000 and bench_cost.limit_for(108_000) == 180_000
    assert (small.sent_tokens // small.calls, round(small.billed)) == (10_220, 1_615_034)
    assert (large.sent_tokens // large.calls, round(large.billed)) == (25_321, 2_026_566)


@pytest.mark.slow
def test_the_target_sweep_is_what_the_performance_page_draws(
    ledgers: dict[str, bench_cost.Ledger],
) -> None:
    points = bench_cost.sweep(measured=ledgers)
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
    # At every target the session bills less than SummarizationMiddleware, and from 54,000 up
    # less than trim_messages. At 36,000 (limit 60,000) the pinned 10,318 characters leave the
    # history little room: the session's model calls still bill less than trim_messages', but
    # its 47 summaries (their input billed at 1 x) make its total about 4 % more.
    for index in range(len(bench_cost.TARGETS)):
        session = rows["ContextSession"][index].billed
        assert session < rows["SummarizationMiddleware"][index].billed
        if bench_cost.TARGETS[index] >= 54_000:
            assert session < rows["trim_messages"][index].billed
    assert round(rows["ContextSession"][0].billed) == 1_615_034
    assert round(rows["trim_messages"][0].billed) == 1_552_729
    assert round(rows["ContextSession"][2].billed) == 1_785_862  # the main table's target


def test_a_call_left_above_the_trigger_counts_when_the_policy_without_memory_fits_it() -> None:
    turns = bench_cost.conversation(turns=8)
    calls = sum(len(turn.results) + 1 for turn in turns)
    whole = bench_cost.run_floor(turns)
    assert whole.max_prompt > bench_cost.tokens(bench_cost.LIMIT)  # the last call needs reducing
    ledger = bench_cost.Ledger("left above")
    ledger.measured = [0] * (calls - 1) + [bench_cost.LIMIT + 1]
    bench_cost.above_the_trigger(ledger, turns)
    assert (ledger.above_trigger, ledger.stateless_under) == (1, 1)
    fitted = bench_cost.Ledger("fitted")
    fitted.measured = [bench_cost.LIMIT] * calls
    bench_cost.above_the_trigger(fitted, turns)
    assert (fitted.above_trigger, fitted.stateless_under) == (0, 0)
