"""Compressors and apps: summaries, failure safety, timeouts, sync and async, unknown names."""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any

import pytest

from contextwise import (
    ContextPolicy,
    Fragment,
    InvalidTypeError,
    MessagesFragment,
    PolicyConfigurationError,
    PolicyStepError,
    TextFragment,
    aprocess_context,
    messages_chars,
    process_context,
    validate_context_policy,
)
from support.errors import assert_translated
from support.histories import chat


def compress_policy(**step: Any) -> ContextPolicy:
    return ContextPolicy.model_validate(
        {
            "mode": step.pop("mode", "reduce"),
            "triggerChars": 50,
            "steps": [
                {
                    "id": "summary",
                    "kind": "compress",
                    "fragmentId": "h",
                    "compressor": "llm",
                    **step,
                }
            ],
        }
    )


def summarize(messages: list[dict[str, Any]]) -> str:
    return f"{len(messages)} earlier"


# --- compressors that work -----------------------------------------------------------------------


def test_compress_replaces_the_older_groups_with_one_summary() -> None:
    history = chat(5)
    seen: list[list[dict[str, Any]]] = []

    def llm(messages: list[dict[str, Any]]) -> str:
        seen.append(messages)
        return summarize(messages)

    result = process_context(
        compress_policy(keepGroups=2), [MessagesFragment("h", history)], compressors={"llm": llm}
    )
    messages = list(result.fragment("h").messages)
    assert messages[0] == history[0]
    assert messages[1] == {"role": "user", "content": "6 earlier"}
    assert messages[2:] == history[7:]
    assert seen == [history[1:7]]
    assert result.removed["h"] == history[1:7]
    change = result.report.changes[0]
    assert (change.kind, change.status, change.removed_messages, change.added_messages) == (
        "compress",
        "applied",
        6,
        1,
    )
    assert (change.removed_chars, change.added_chars) == (60, 9)
    assert result.report.before_chars - result.report.after_chars == 51


def test_the_compressor_receives_a_copy() -> None:
    history = chat(3)
    snapshot = copy.deepcopy(history)

    def vandal(messages: list[dict[str, Any]]) -> str:
        for message in messages:
            message["content"] = "x"
        messages.clear()
        return "s"

    process_context(
        compress_policy(), [MessagesFragment("h", messages=history)], compressors={"llm": vandal}
    )
    assert history == snapshot


def test_a_compressor_may_return_a_message_and_the_role_of_strings_is_configurable() -> None:
    def as_message(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": "Summary."}]}

    result = process_context(
        compress_policy(), [MessagesFragment("h", chat(3))], compressors={"llm": as_message}
    )
    assert (result.fragment("h").messages)[1]["role"] == "assistant"
    result = process_context(
        compress_policy(summaryRole="system"),
        [MessagesFragment("h", messages=chat(3))],
        compressors={"llm": summarize},
    )
    assert (result.fragment("h").messages)[1] == {"role": "system", "content": "4 earlier"}


def test_compress_a_text() -> None:
    policy = compress_policy(field="text", fragmentId="doc")
    result = process_context(
        policy, [TextFragment("doc", "word " * 20)], compressors={"llm": lambda text: text[:12]}
    )
    assert result.fragment("doc").text == "word word wo"
    assert result.removed["doc"] == ["word " * 20]


async def test_async_compressors_are_awaited_by_both_entry_points() -> None:
    async def llm(messages: list[dict[str, Any]]) -> str:
        await asyncio.sleep(0)
        return "short"

    history = chat(4)
    result = await aprocess_context(
        compress_policy(), [MessagesFragment("h", messages=history)], compressors={"llm": llm}
    )
    assert (result.fragment("h").messages)[1]["content"] == "short"
    # The sync twin works even inside a running event loop.
    result = process_context(
        compress_policy(), [MessagesFragment("h", messages=history)], compressors={"llm": llm}
    )
    assert (result.fragment("h").messages)[1]["content"] == "short"


def test_the_sync_twin_runs_async_compressors_without_a_loop() -> None:
    async def llm(messages: list[dict[str, Any]]) -> str:
        return "short"

    result = process_context(
        compress_policy(), [MessagesFragment("h", messages=chat(4))], compressors={"llm": llm}
    )
    assert (result.fragment("h").messages)[1]["content"] == "short"


# --- failure safety ------------------------------------------------------------------------------


def assert_failed(result: Any, history: list[dict[str, Any]], code: str) -> PolicyStepError:
    assert result.fragment("h").messages == tuple(history)
    assert result.removed["h"] == []
    change = result.report.changes[0]
    assert change.status == "failed"
    assert change.before_chars == change.after_chars == messages_chars(history)
    assert (change.removed_messages, change.removed_chars, change.added_chars) == (0, 0, 0)
    assert change.error is not None and change.error.code == code
    assert change.error.message
    return change


def test_a_compressor_that_raises_leaves_the_fragment_untouched() -> None:
    def broken(messages: list[dict[str, Any]]) -> str:
        raise RuntimeError("model overloaded")

    history = chat(4)
    result = process_context(
        compress_policy(), [MessagesFragment("h", messages=history)], compressors={"llm": broken}
    )
    change = assert_failed(result, history, "compressor_failed")
    assert "RuntimeError" in change.error.message and "model overloaded" in change.error.message
    assert result.report.before_chars == result.report.after_chars


def test_a_compressor_that_returns_something_larger_fails() -> None:
    def verbose(messages: list[dict[str, Any]]) -> str:
        return "x" * 1000

    history = chat(4)
    result = process_context(
        compress_policy(), [MessagesFragment("h", messages=history)], compressors={"llm": verbose}
    )
    change = assert_failed(result, history, "compressor_not_smaller")
    assert "1,000" in change.error.message


@pytest.mark.parametrize(
    ("returned", "code"),
    [
        (42, "compressor_invalid_result"),
        ({"role": "user", "content": 42}, "compressor_invalid_message"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
                ],
            },
            "compressor_summary_has_tools",
        ),
    ],
)
def test_a_compressor_that_returns_something_unusable_fails(returned: Any, code: str) -> None:
    history = chat(4)
    result = process_context(
        compress_policy(),
        [MessagesFragment("h", messages=history)],
        compressors={"llm": lambda m: returned},
    )
    assert_failed(result, history, code)


def test_a_sync_compressor_that_times_out_fails_and_its_result_is_discarded() -> None:
    release = threading.Event()
    finished = threading.Event()

    def slow(messages: list[dict[str, Any]]) -> str:
        release.wait(60)  # released below, once process_context has returned
        finished.set()
        return "s"

    history = chat(4)
    result = process_context(
        compress_policy(),
        [MessagesFragment("h", messages=history)],
        compressors={"llm": slow},
        step_timeout=0.05,
    )
    # process_context returned while the compressor was still blocked: it did not wait for it.
    assert not finished.is_set()
    release.set()
    assert finished.wait(60)  # the compressor then ran to its end, and its summary is not used
    change = assert_failed(result, history, "compressor_timeout")
    assert "0.05" in change.error.message


async def test_an_async_compressor_that_times_out_is_cancelled() -> None:
    cancelled = asyncio.Event()

    async def slow(messages: list[dict[str, Any]]) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "s"

    history = chat(4)
    result = await aprocess_context(
        compress_policy(timeout=0.05), [MessagesFragment("h", history)], compressors={"llm": slow}
    )
    assert_failed(result, history, "compressor_timeout")
    assert cancelled.is_set()


async def test_a_timeout_error_raised_by_the_compressor_is_a_failure_not_a_timeout() -> None:
    async def raises_timeout(messages: list[dict[str, Any]]) -> str:
        raise TimeoutError("upstream timed out")

    history = chat(4)
    result = await aprocess_context(
        compress_policy(timeout=5),
        [MessagesFragment("h", messages=history)],
        compressors={"llm": raises_timeout},
    )
    assert_failed(result, history, "compressor_failed")


def test_a_failed_step_lets_the_next_step_run_and_the_numbers_add_up() -> None:
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 50,
            "steps": [
                {"id": "summary", "kind": "compress", "fragmentId": "h", "compressor": "llm"},
                {"id": "trim", "kind": "trim", "fragmentId": "h"},
            ],
        }
    )

    def broken(messages: Any) -> str:
        raise ValueError("no")

    result = process_context(policy, [MessagesFragment("h", chat(4))], compressors={"llm": broken})
    statuses = [(change.id, change.status) for change in result.report.changes]
    assert statuses == [("summary", "failed"), ("trim", "applied")]
    report = result.report
    assert report.before_chars - report.after_chars == sum(
        change.saved_chars for change in report.changes
    )


def test_step_errors_render_in_every_locale() -> None:
    error = PolicyStepError("compressor_timeout", compressor="llm", step_id="s", timeout=1.5)
    assert error.code == "compressor_timeout"
    for locale in ("en", "fr", "zh"):
        assert error.render(locale)


# --- apps ----------------------------------------------------------------------------------------


def app_policy() -> ContextPolicy:
    return ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 10,
            "steps": [{"id": "drop-answers", "kind": "app", "fragmentId": "h", "app": "mutate"}],
        }
    )


def test_an_app_mutation_is_recorded_with_kind_app() -> None:
    history = chat(2)

    def drop_answers(fragment: Fragment) -> Fragment:
        kept = [m for m in fragment.messages if m["role"] != "assistant"]
        return fragment.with_messages(kept)

    result = process_context(
        app_policy(), [MessagesFragment("h", messages=history)], apps={"mutate": drop_answers}
    )
    assert [m["role"] for m in result.fragment("h").messages] == ["system", "user", "user"]
    assert result.removed["h"] == [history[2], history[4]]
    change = result.report.changes[0]
    assert (change.kind, change.removed_messages, change.removed_chars, change.added_messages) == (
        "app",
        2,
        20,
        0,
    )


async def test_an_async_app_may_return_just_the_messages() -> None:
    async def keep_last(fragment: Fragment) -> list[dict[str, Any]]:
        return list((fragment.messages)[-1:])

    history = chat(2)
    result = await aprocess_context(
        app_policy(), [MessagesFragment("h", messages=history)], apps={"mutate": keep_last}
    )
    assert result.fragment("h").messages == (history[-1],)


def test_an_app_that_rewrites_text_reports_the_replaced_text() -> None:
    policy = ContextPolicy.model_validate(
        {
            "mode": "reduce",
            "triggerChars": 5,
            "steps": [{"id": "redact", "kind": "app", "fragmentId": "doc", "app": "redact"}],
        }
    )
    result = process_context(
        policy,
        [TextFragment("doc", text="key=SECRET123;")],
        apps={"redact": lambda fragment: fragment.with_text("key=***;")},
    )
    assert result.fragment("doc").text == "key=***;"
    assert result.removed["doc"] == ["key=SECRET123;"]
    change = result.report.changes[0]
    assert (change.removed_chars, change.added_chars, change.saved_chars) == (9, 3, 6)


def test_an_app_that_separates_a_tool_call_from_its_result_fails() -> None:
    history = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
    ]

    def drop_call(fragment: Fragment) -> Fragment:
        messages = fragment.messages
        return fragment.with_messages([messages[0], messages[2]])

    result = process_context(
        app_policy(), [MessagesFragment("h", messages=history)], apps={"mutate": drop_call}
    )
    assert_failed(result, history, "app_broke_tool_pairing")


@pytest.mark.parametrize(
    ("app", "code"),
    [
        (lambda fragment: 42, "app_invalid_result"),
        (lambda fragment: MessagesFragment("other", messages=[]), "app_invalid_result"),
        (lambda fragment: [{"role": "user", "content": 1}], "app_invalid_message"),
        (lambda fragment: 1 / 0, "app_failed"),
    ],
)
def test_an_app_that_fails_leaves_the_fragment_untouched(app: Any, code: str) -> None:
    history = chat(2)
    result = process_context(app_policy(), [MessagesFragment("h", history)], apps={"mutate": app})
    assert_failed(result, history, code)


# --- unknown names and bad arguments --------------------------------------------------------------


def test_unknown_compressor_app_and_fragment_are_clear_errors() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(compress_policy(), [MessagesFragment("h", messages=chat(2))])
    assert caught.value.code == "unknown_compressor"
    assert caught.value.params == {"step_id": "summary", "compressor": "llm", "provided": []}
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(app_policy(), [MessagesFragment("h", chat(2))], apps={"other": len})
    assert caught.value.code == "unknown_app"
    assert caught.value.params["provided"] == ["other"]
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(app_policy(), [TextFragment("doc", text="x")], apps={"mutate": len})
    assert caught.value.code == "unknown_fragment"
    assert_translated(caught.value)


def test_compressors_must_be_callables_in_a_mapping() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(
            compress_policy(), [MessagesFragment("h", messages=chat(2))], compressors={"llm": "gpt"}
        )  # type: ignore[dict-item]
    assert caught.value.code == "invalid_compressor"
    with pytest.raises(InvalidTypeError) as type_error:
        process_context(
            compress_policy(), [MessagesFragment("h", messages=chat(2))], compressors=[summarize]
        )  # type: ignore[arg-type]
    assert type_error.value.code == "not_a_mapping"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "1"])
def test_step_timeout_must_be_positive_and_finite(timeout: Any) -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(
            compress_policy(),
            [MessagesFragment("h", messages=chat(2))],
            compressors={"llm": summarize},
            step_timeout=timeout,
        )
    assert caught.value.code == "invalid_step_timeout"


async def test_an_app_that_times_out_fails() -> None:
    async def slow(fragment: Fragment) -> Fragment:
        await asyncio.sleep(5)
        return fragment

    history = chat(2)
    result = await aprocess_context(
        app_policy(),
        [MessagesFragment("h", messages=history)],
        apps={"mutate": slow},
        step_timeout=0.05,
    )
    assert_failed(result, history, "app_timeout")


def test_apps_must_be_callables_and_budgets_must_be_budgets() -> None:
    with pytest.raises(PolicyConfigurationError) as caught:
        process_context(app_policy(), [MessagesFragment("h", messages=chat(2))], apps={"mutate": 3})  # type: ignore[dict-item]
    assert caught.value.code == "invalid_app"
    assert caught.value.params == {"app": "mutate", "type_name": "int"}
    with pytest.raises(InvalidTypeError) as type_error:
        process_context(app_policy(), [MessagesFragment("h", messages=chat(2))], budget=100)
    assert type_error.value.code == "invalid_budget"


@pytest.mark.parametrize(
    "summary",
    [{"role": "user"}, {"role": "user", "content": None}, {"role": "assistant", "content": []},
     "", "   "],
)
def test_a_compressor_returning_a_message_without_content_fails_the_step(summary: Any) -> None:
    policy = {
        "mode": "reduce",
        "trigger_chars": 5,
        "steps": [{"id": "s", "kind": "compress", "fragment_id": "h", "compressor": "c",
                   "grouping": {"kind": "message"}, "keep_groups": 1}],
    }
    messages = [{"role": "user", "content": "hello there"}] * 3
    result = process_context(
        policy, [MessagesFragment("h", messages=messages)], compressors={"c": lambda _: summary}
    )
    [change] = result.report.changes
    assert (change.status, change.error and change.error.code) == (
        "failed", "compressor_empty_summary"
    )
    assert list(result.fragment("h").messages) == messages


def test_a_list_where_names_are_expected_is_a_coded_error() -> None:
    policy = {"mode": "reduce", "trigger_chars": 5, "steps": [
        {"id": "s", "kind": "compress", "fragment_id": "h", "compressor": "summarize"}]}
    with pytest.raises(InvalidTypeError) as caught:
        validate_context_policy(policy, compressors=[len])
    assert (caught.value.code, caught.value.params["name"]) == ("not_a_string", "compressors[0]")
    assert_translated(caught.value)
    with pytest.raises(InvalidTypeError) as not_names:
        validate_context_policy(policy, compressors=len)  # type: ignore[arg-type]
    assert not_names.value.code == "not_a_collection"
    assert validate_context_policy(policy, compressors={"summarize": len}).mode == "reduce"


def test_a_toml_integer_too_long_to_convert_is_invalid_toml() -> None:
    text = f'mode = "reduce"\ntrigger_chars = {"9" * 5001}\n'
    with pytest.raises(PolicyConfigurationError) as caught:
        ContextPolicy.from_toml(text)
    assert caught.value.code == "invalid_toml"
    assert "4300 digits" in str(caught.value)  # the parser's own reason, as the detail
    assert_translated(caught.value)
