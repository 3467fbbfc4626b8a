"""Checks on an error's messages in every language (no tests here)."""

from __future__ import annotations

import string

from contextwise import SUPPORTED_LOCALES, ContextwiseError
from contextwise._translation import format_value


def placeholders(error: ContextwiseError) -> set[str]:
    """The parameters the error's English message shows (a plural's count may show in neither)."""
    # A class raises its own codes and those of its bases (the field-validation codes).
    message = next(
        klass.__dict__["messages"][error.code]
        for klass in type(error).__mro__
        if error.code in klass.__dict__.get("messages", {})
    )
    templates = (message.singular, message.plural or "")
    return {
        field for text in templates for _, field, _, _ in string.Formatter().parse(text) if field
    }


def assert_translated(error: ContextwiseError) -> None:
    """Each translated message differs from the English one and shows every parameter's value,
    formatted as that language writes it (numbers with its separators, lists joined)."""
    english = error.render("en")
    for locale in SUPPORTED_LOCALES[1:]:
        text = error.render(locale)
        assert text != english, f"{error.code}: the {locale} message is the English one"
        for name in sorted(placeholders(error)):
            shown = format_value(error.params[name], locale)
            assert shown in text, f"{error.code}: the {locale} message lacks {name}={shown!r}"
