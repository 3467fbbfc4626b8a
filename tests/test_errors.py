"""The error hierarchy: stable codes, named parameters, builtin bases, three languages."""

from __future__ import annotations

import pickle

import pytest

import contextwise
from contextwise import (
    ContextOverflowError,
    ContextwiseError,
    InvalidTypeError,
    InvalidValueError,
    UnsupportedLocaleError,
    set_locale,
)


def _error_classes() -> list[type[ContextwiseError]]:
    return [
        obj
        for name in contextwise.__all__
        if isinstance(obj := getattr(contextwise, name), type) and issubclass(obj, ContextwiseError)
    ]


def test_builtin_bases() -> None:
    assert issubclass(InvalidValueError, ValueError)
    assert issubclass(InvalidTypeError, TypeError)
    assert issubclass(UnsupportedLocaleError, ValueError)
    assert not issubclass(ContextOverflowError, ValueError)
    assert ContextOverflowError.__mro__[1] is ContextwiseError


def test_str_uses_the_locale_in_force_when_raised() -> None:
    set_locale("fr")
    try:
        err = ContextOverflowError("context_overflow", tokens=12345, context_budget=8000)
    finally:
        set_locale("en")
    assert err.locale == "fr"
    assert str(err) == err.render("fr")
    assert str(err) != err.render("en")
    assert "12,345" in err.render("en")


def test_per_object_locale_wins_over_the_default() -> None:
    err = ContextOverflowError("context_overflow", tokens=1, context_budget=0, locale="zh_CN")
    assert err.locale == "zh"
    assert str(err) == err.render("zh")


def test_render_rejects_an_unsupported_locale() -> None:
    err = ContextOverflowError("context_overflow", tokens=1, context_budget=0)
    with pytest.raises(UnsupportedLocaleError):
        err.render("de")


def test_an_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        ContextOverflowError("no_such_code")


def test_detail_is_appended_untranslated() -> None:
    err = InvalidValueError("negative_size", name="window", value=-1, detail="from config.toml")
    assert err.detail == "from config.toml"
    assert str(err).endswith("from config.toml")
    assert err.render("zh").endswith("from config.toml")


def test_errors_pickle_with_code_params_and_locale() -> None:
    err = ContextOverflowError("context_overflow", tokens=9, context_budget=8, locale="fr")
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is ContextOverflowError
    assert (copy.code, copy.params, copy.locale, str(copy)) == (
        err.code,
        err.params,
        err.locale,
        str(err),
    )


def test_codes_are_snake_case_and_unique_per_class() -> None:
    seen: dict[str, type[ContextwiseError]] = {}
    for cls in _error_classes():
        for code in cls.__dict__.get("messages", {}):
            assert code.isidentifier() and code == code.lower(), code
            assert seen.setdefault(code, cls) is cls, f"{code} defined twice"


def test_every_message_renders_in_three_languages() -> None:
    """Each template fills from its own placeholders in en, fr and zh, and is translated."""
    import string

    for cls in _error_classes():
        for code, message in cls.__dict__.get("messages", {}).items():
            names = {
                field
                for template in (message.singular, message.plural or "")
                for _, field, _, _ in string.Formatter().parse(template)
                if field
            }
            params = {name: 2 for name in names}
            err = cls.__new__(cls)
            ContextwiseError.__init__(err, code, **params)
            english = err.render("en")
            for locale in contextwise.SUPPORTED_LOCALES[1:]:
                rendered = err.render(locale)
                assert "{" not in rendered, (code, locale)
                assert rendered != english, f"{cls.__name__}.{code} is not translated into {locale}"
