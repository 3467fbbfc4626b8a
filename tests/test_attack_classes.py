"""Each escape class of the attack of 2026-12-04 (``reviews/attack.md``, §2 A, B, D and §7) is a
coded, translated error now, or works: one test per class, with the attack's own repro."""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest

from contextwise import (
    CalibratedCounter,
    ContextwiseError,
    InvalidTypeError,
    InvalidValueError,
    ModelPrices,
    PartEstimate,
    RecallPage,
    RecallTool,
    UnsupportedLocaleError,
    Usage,
    UsageRecord,
    anthropic_context_management,
    cost,
    i18n,
    recall,
    recall_tool,
    usage_from,
)
from contextwise._translation import N_
from contextwise.shapes import image_size, image_tokens
from support.errors import assert_translated

HISTORY = [{"role": "tool", "tool_call_id": "c1", "content": "Sunny, 21 degrees."}]
HUGE = 10**5000


def coded(call: Callable[[], object], error: type[ContextwiseError], code: str) -> None:
    """The call raises ``error`` with ``code``, and its message renders in every language."""
    with pytest.raises(error) as caught:
        call()
    assert caught.value.code == code, caught.value
    assert_translated(caught.value)


# --- A1: model-written recall arguments nested 100,000 deep -----------------------------------


def test_recall_arguments_nested_100000_deep_are_answered_never_raised() -> None:
    tool = recall_tool(history=HISTORY)
    deep = '{"ref": "c1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    answer = tool.handle(deep)
    assert answer.startswith("arguments is nested more than 100 levels deep")
    assert asyncio.run(tool.ahandle(deep)) == answer
    assert asyncio.run(tool.ahandle(deep.encode())) == answer


# --- A2 and A7: a recall offset or limit of 10**5000 ------------------------------------------


def test_a_huge_recall_offset_is_refused_with_a_coded_error() -> None:
    coded(lambda: recall("c1", history=HISTORY, offset=HUGE), InvalidValueError, "out_of_range")
    coded(lambda: recall("c1", history=HISTORY, limit=HUGE), InvalidValueError, "out_of_range")
    tool = recall_tool(history=HISTORY)
    for arguments in ({"ref": "c1", "offset": HUGE}, '{"ref": "c1", "offset": ' + "9" * 5000 + "}"):
        assert tool.handle(arguments).startswith("offset must be ≤ 9223372036854775807, got ≈10^")
    # A limit above the tool's own is the tool's limit: a huge one works.
    assert tool.handle({"ref": "c1", "limit": HUGE}).startswith("Sunny, 21 degrees.")
    # A number JSON cannot give Python is not "invalid JSON at column 0" any more.
    assert "line 1, column 0" not in tool.handle('{"ref": "c1", "offset": ' + "9" * 5000 + "}")


def test_a_huge_recall_tool_limit_is_refused_at_construction_in_every_integration() -> None:
    from contextwise.integrations import langchain, openai_agents, pydantic_ai

    for make in (recall_tool, langchain.recall_tool, pydantic_ai.recall_tool, RecallTool):
        coded(lambda make=make: make(limit=HUGE), InvalidValueError, "out_of_range")
    coded(lambda: openai_agents.recall_tool(None, limit=HUGE), InvalidValueError, "out_of_range")


def test_a_hand_built_recall_page_is_checked() -> None:
    coded(lambda: RecallPage("c1", None, 0, 1, "history"), InvalidTypeError,  # type: ignore[arg-type]
          "not_a_string")
    coded(lambda: RecallPage("c1", "x", HUGE, 1, "history"), InvalidValueError, "out_of_range")
    coded(lambda: RecallPage("c1", "x", 0, 1, "elsewhere"), InvalidValueError,  # type: ignore[arg-type]
          "invalid_choice")
    page = RecallPage("c1", "Hello", 0, 12, "history")
    assert page.for_model().endswith("more from offset 5]")


# --- A3: usage counts of 2**1024 and more ----------------------------------------------------


def test_a_usage_count_beyond_a_float_is_refused_by_calibration_and_priced_by_cost() -> None:
    response = {"usage": {"prompt_tokens": 2**1100, "completion_tokens": 1}}
    counter = CalibratedCounter()
    coded(lambda: counter.observe([{"role": "user", "content": "Hi"}], response, model="m"),
          InvalidValueError, "out_of_range")
    assert counter.observations("m") == 0  # nothing half-learnt
    usage = usage_from(response)
    assert usage.input_tokens == 2**1100
    priced = cost(usage, "m", prices=ModelPrices(input=1, output=1))
    assert priced.input == Decimal(2**1100) / 1_000_000


# --- B: public helpers check their arguments ---------------------------------------------------


def test_cost_checks_its_provider_and_date() -> None:
    usage = Usage(input_tokens=10)
    coded(lambda: cost(usage, "gpt-4o", provider=5), InvalidTypeError,  # type: ignore[arg-type]
          "not_a_string")
    coded(lambda: cost(usage, "gpt-4o", at="yesterday"), InvalidTypeError,  # type: ignore[arg-type]
          "not_an_instance")


@pytest.mark.parametrize(
    ("call", "error", "code"),
    [
        (lambda: image_tokens(None, 10, "openai"), InvalidTypeError, "not_a_whole_number"),
        (lambda: image_tokens(Decimal("NaN"), 10, "openai"), InvalidTypeError,
         "not_a_whole_number"),
        (lambda: image_tokens(10, 10, "bogus"), InvalidValueError, "invalid_choice"),
        (lambda: image_size(5), InvalidTypeError, "not_an_instance"),
        (lambda: PartEstimate().to_chars(HUGE), InvalidValueError, "out_of_range"),
        (lambda: PartEstimate().to_chars(math.nan), InvalidTypeError, "not_a_whole_number"),
        (lambda: PartEstimate().encrypted_chars(5), InvalidTypeError, "not_a_string"),
        (lambda: PartEstimate().flat_chars(["image"]), InvalidValueError, "invalid_choice"),
        (lambda: PartEstimate().image_chars(5, "openai"), InvalidTypeError, "not_an_instance"),
        (lambda: PartEstimate(image_tokens=True), InvalidValueError, "invalid_part_estimate"),
        (lambda: PartEstimate(file_tokens=10**30), InvalidValueError, "out_of_range"),
    ],
    ids=["image_tokens(None)", "image_tokens(NaN)", "image_tokens(rule)", "image_size(5)",
         "to_chars(10**5000)", "to_chars(nan)", "encrypted_chars(5)", "flat_chars(list)",
         "image_chars(5)", "PartEstimate(True)", "PartEstimate(10**30)"],
)
def test_image_and_part_estimate_helpers_check_their_arguments(
    call: Callable[[], object], error: type[ContextwiseError], code: str
) -> None:
    coded(call, error, code)


def test_calibration_helpers_check_their_arguments() -> None:
    counter = CalibratedCounter()
    for method in (counter.ratios, counter.overheads, counter.observations):
        coded(lambda method=method: method(["m"]), InvalidTypeError, "not_a_string")
    coded(lambda: counter.base_by_script(["m"]), InvalidTypeError, "not_a_string")
    model = counter.for_model("m")
    coded(lambda: model.scale(None), InvalidTypeError, "not_a_whole_number")  # type: ignore[arg-type]
    coded(lambda: model.scale(math.nan), InvalidTypeError, "not_a_whole_number")  # type: ignore[arg-type]
    coded(lambda: model.scale(HUGE), InvalidValueError, "out_of_range")
    assert model.scale(100) >= 100


@pytest.mark.parametrize("data", [None, {}, [1, 2], {"usage": {}, "kind": "model", "at": 5},
                                  {"usage": {}, "kind": 3, "at": "2026-01-01T00:00:00"}])
def test_a_usage_record_that_json_did_not_write_is_a_coded_error(data: Any) -> None:
    with pytest.raises(ContextwiseError) as caught:
        UsageRecord.from_json(data)
    assert caught.value.code in {"not_a_mapping", "invalid_value"}
    assert_translated(caught.value)


def test_i18n_translate_and_translations_check_their_arguments() -> None:
    coded(lambda: i18n.translate("Hello", {}, "en"), InvalidTypeError,  # type: ignore[arg-type]
          "not_an_instance")
    coded(lambda: i18n.translate(N_("{a}"), None, "en"), InvalidTypeError,  # type: ignore[arg-type]
          "not_a_mapping")
    # A parameter the message names but was not given shows as its placeholder.
    assert i18n.translate(N_("{a} and {b}"), {"b": 2}, "fr") == "{a} and 2"
    coded(lambda: i18n.translate(N_("{a:q}"), {"a": 1}, "fr"), InvalidValueError,
          "invalid_value")
    coded(lambda: i18n.translations(None), UnsupportedLocaleError,  # type: ignore[arg-type]
          "unsupported_locale")
    coded(lambda: i18n.translations("fr", "../reference"), InvalidValueError, "invalid_value")
    assert i18n.translations("zh").gettext("Detail: {detail}") != "Detail: {detail}"


# --- D: a locale is never a path ---------------------------------------------------------------

OPENED: list[str] = []
WATCHING: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if WATCHING and event == "open":
        OPENED.append(str(args[0]))


@contextmanager
def files_opened() -> Iterator[list[str]]:
    """The files opened inside the block (an audit hook, installed once for the process)."""
    if not hasattr(sys, "_contextwise_audit"):
        sys.addaudithook(_audit)
        sys._contextwise_audit = True  # type: ignore[attr-defined]
    OPENED.clear()
    WATCHING.append(True)
    try:
        yield OPENED
    finally:
        WATCHING.clear()


def test_a_locale_that_is_a_path_opens_no_file(tmp_path: Any) -> None:
    folder = tmp_path / "LC_MESSAGES"
    folder.mkdir()
    (folder / "contextwise.po").write_text('msgid ""\nmsgstr ""\n', encoding="utf-8")
    from contextwise._translation import translations

    translations.cache_clear()
    with files_opened() as opened:
        for call in (
            lambda: i18n.translate(N_("Hello"), {}, str(tmp_path)),
            lambda: i18n.translations(str(tmp_path)),
            lambda: i18n.translate(N_("Hello"), {}, "fr/../../" + str(tmp_path)),
        ):
            coded(call, UnsupportedLocaleError, "unsupported_locale")
    assert not [path for path in opened if str(tmp_path) in path]


# --- integration arguments ---------------------------------------------------------------------

POLICY = {"mode": "audit"}


def test_a_policy_session_refuses_what_is_not_a_session() -> None:
    from agents import SQLiteSession

    from contextwise.integrations.openai_agents import PolicySession

    for call in (
        lambda: PolicySession(None, POLICY),  # type: ignore[arg-type]
        lambda: PolicySession({"session_id": "s"}, POLICY),  # type: ignore[arg-type]
        lambda: PolicySession(POLICY, SQLiteSession("s")),  # type: ignore[arg-type]
    ):
        coded(call, InvalidTypeError, "not_an_instance")
    session = PolicySession(SQLiteSession("s"), POLICY)
    coded(lambda: session.run_config([]), InvalidTypeError, "not_an_instance")  # type: ignore[arg-type]


def test_a_history_processor_given_no_list_is_a_coded_error() -> None:
    from contextwise.integrations.pydantic_ai import history_processor

    process = history_processor(POLICY)
    coded(lambda: asyncio.run(process(None)), InvalidTypeError,  # type: ignore[arg-type]
          "not_a_message_list")


@pytest.mark.parametrize("name", ["a\x00b", "a\ud800b", "line\nbreak"])
def test_a_recall_tool_name_every_framework_cannot_take_is_refused_at_construction(
    name: str,
) -> None:
    from contextwise.integrations import langchain, openai_agents, pydantic_ai

    for make in (recall_tool, langchain.recall_tool, pydantic_ai.recall_tool, RecallTool):
        coded(lambda make=make: make(name=name), InvalidValueError, "invalid_value")
    coded(lambda: openai_agents.recall_tool(None, name=name), InvalidValueError, "invalid_value")


# --- §7: smaller observations ------------------------------------------------------------------


def test_a_count_json_cannot_carry_is_refused_before_it_reaches_a_request() -> None:
    policy = {"mode": "reduce", "trigger_tokens": 100_000, "steps": [
        {"id": "c", "kind": "clear", "fragment_id": "history", "keep_recent": 3,
         "min_gain_tokens": HUGE}]}
    coded(lambda: anthropic_context_management(policy), InvalidValueError, "out_of_range")


def test_a_recall_tool_definition_for_an_unknown_api_is_refused() -> None:
    coded(lambda: recall_tool().definition(api="bogus"), InvalidValueError,  # type: ignore[arg-type]
          "invalid_choice")


def test_a_fractional_offset_is_said_to_be_not_a_whole_number() -> None:
    tool = recall_tool(history=HISTORY)
    assert tool.handle({"ref": "c1", "offset": 1.0}) == (
        "offset must be a whole number, got 1.0."
    )
    assert tool.handle('{"ref": "c1", "offset": 1e400}') == (
        "offset must be a whole number, got inf."
    )
