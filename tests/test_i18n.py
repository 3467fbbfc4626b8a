"""Locales: normalization, the per-context default, and locale-aware formatting."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from contextwise import (
    ContextOverflowError,
    UnsupportedLocaleError,
    get_locale,
    normalize_locale,
    set_locale,
    use_locale,
)
from contextwise._translation import Message, format_value, translations
from contextwise.i18n import translate


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("en", "en"),
        ("en_US", "en"),
        ("EN-gb", "en"),
        ("fr", "fr"),
        ("fr_FR", "fr"),
        ("fr-CA", "fr"),
        ("fr_FR.UTF-8", "fr"),
        ("zh", "zh"),
        ("ZH", "zh"),
        ("zh_CN", "zh"),
        ("zh-Hans", "zh"),
        ("zh_Hans_CN", "zh"),
        (" zh-hans ", "zh"),
    ],
)
def test_locale_spellings_normalize(spelling: str, expected: str) -> None:
    assert normalize_locale(spelling) == expected


@pytest.mark.parametrize("bad", ["de", "", "english", "f", None, 3, ["fr"]])
def test_unsupported_locale_lists_the_supported_ones(bad: object) -> None:
    with pytest.raises(UnsupportedLocaleError) as caught:
        normalize_locale(bad)
    err = caught.value
    assert err.code == "unsupported_locale"
    assert isinstance(err, ValueError)
    assert err.params["supported"] == ["en", "fr", "zh"]
    assert "en, fr, and zh" in str(err)


def test_set_locale_is_per_context() -> None:
    assert get_locale() == "en"

    def in_copy() -> str:
        set_locale("fr_FR")
        return get_locale()

    assert contextvars.copy_context().run(in_copy) == "fr"
    assert get_locale() == "en"


def test_async_tasks_keep_their_own_locale() -> None:
    async def speak(locale: str) -> str:
        set_locale(locale)
        await asyncio.sleep(0)
        return str(ContextOverflowError("context_overflow", tokens=5, context_budget=4))

    async def both() -> list[str]:
        return list(await asyncio.gather(speak("fr"), speak("zh")))

    french, chinese = asyncio.run(both())
    assert french != chinese
    assert get_locale() == "en"


def test_use_locale_restores_the_previous_default() -> None:
    with use_locale("zh_CN") as active:
        assert active == "zh"
        assert get_locale() == "zh"
    assert get_locale() == "en"


def test_numbers_and_lists_are_formatted_per_locale() -> None:
    assert format_value(12345, "en") == "12,345"
    assert format_value(12345, "fr").replace("\u202f", " ").replace("\xa0", " ") == "12 345"
    assert format_value(12345, "zh") == "12,345"
    assert format_value(["a", "b", "c"], "en") == "a, b, and c"
    assert format_value(["a", "b", "c"], "fr") == "a, b et c"
    assert format_value(["a", "b", "c"], "zh") == "a、b、c"
    assert format_value(True, "fr") == "True"


def test_chinese_messages_join_lists_with_the_enumeration_comma_only() -> None:
    from contextwise import UnsupportedLocaleError, set_locale

    with pytest.raises(UnsupportedLocaleError) as caught:
        set_locale("de")
    message = caught.value.render("zh")
    assert "en、fr、zh" in message
    assert "和" not in message


def test_a_broken_translation_falls_back_to_english(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def gettext(self, message: str) -> str:
            return "{missing_placeholder}"

    monkeypatch.setattr("contextwise._translation.translations", lambda locale, domain="": Broken())
    text = translate(Message("{n} tokens"), {"n": 3}, "fr")
    assert text == "3 tokens"


def test_a_missing_catalog_gives_english(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setattr("contextwise._translation.locales_dir", lambda: tmp_path)
    translations.cache_clear()
    try:
        err = ContextOverflowError("context_overflow", tokens=5, context_budget=4, locale="fr")
        assert str(err) == err.render("en")
    finally:
        translations.cache_clear()


def test_numbers_beyond_babel_precision_are_summarized_never_raised() -> None:
    assert format_value(-(10**29), "en") == str(-(10**29))  # past Babel, whole
    assert format_value(-(10**400), "fr") == "-≈10^400"
    # str() refuses an int of more than 4,300 digits; the message shows where it stands.
    assert format_value(10**5000 + 7, "zh") == "≈10^5000"
    assert format_value(1e300, "zh") == str(1e300)


def test_strange_parameters_are_cut_or_summarized_never_raised() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no text")

        __repr__ = __str__

    deep: list[object] = []
    for _ in range(10_000):
        deep = [deep]
    assert format_value(Broken(), "en") == "<Broken>"
    assert format_value("x" * 1_000_000, "en") == "x" * 499 + "…"
    assert format_value(list(range(1_000)), "en").endswith("19, and …")
    assert len(format_value(deep, "fr")) < 100
    assert format_value(float("nan"), "en") == "nan"


def test_chinese_messages_put_no_space_after_the_full_stop_before_a_detail() -> None:
    from contextwise import ProviderUnavailableError

    error = ProviderUnavailableError("503 from upstream")
    assert error.render("zh").endswith("。详情：503 from upstream")
    assert error.render("en").endswith("unavailable. Detail: 503 from upstream")
