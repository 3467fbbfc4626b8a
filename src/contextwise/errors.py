"""The error hierarchy: every error has a stable code, named parameters and a message in three languages.

Every error that contextwise raises on purpose derives from :class:`ContextwiseError`. Its ``code``
is a stable snake_case identifier to match on; its ``params`` are the named values that fill the
message; ``str(err)`` is the message in the locale that was in force when the error was raised, and
``err.render("zh")`` renders it again in another locale.

Errors that correspond to a builtin exception also derive from it, so ``except ValueError`` keeps
working: size and value problems derive from :class:`ValueError`, wrong types from
:class:`TypeError`, timeouts from :class:`TimeoutError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from contextwise.i18n import N_, NP_, Locale, Message, normalize_locale, resolve_locale, translate

_DETAIL = N_("Detail: {detail}")


class ContextwiseError(Exception):
    """Base class of every error that contextwise raises on purpose.

    Args:
        code: The stable machine code of the error, one of the keys of the class's ``messages``.
        locale: The locale of ``str(err)``; the current default locale when omitted.
        detail: Free text from outside contextwise (an upstream status line, for example), shown
            after the message as it is, untranslated.
        **params: The named values that fill the message.

    Raises:
        KeyError: When the code is not one of the class's codes (a programming error).

    Examples:
        >>> from contextwise import ContextOverflowError
        >>> err = ContextOverflowError("context_overflow", tokens=12345, context_budget=8000)
        >>> err.code
        'context_overflow'
        >>> print(err.render("fr"))
        Le contexte ne tient pas : 12 345 jetons pour un budget de contexte de 8 000 jetons.
    """

    messages: ClassVar[Mapping[str, Message]] = {}
    """The codes this class raises and their message templates."""

    code: str
    """The stable machine code, such as ``context_overflow``."""

    params: dict[str, Any]
    """The named values that fill the message."""

    locale: Locale
    """The locale of ``str(err)``."""

    detail: str | None
    """Free text from outside contextwise, shown untranslated after the message."""

    def __init__(
        self,
        code: str,
        /,
        *,
        locale: str | None = None,
        detail: str | None = None,
        **params: Any,
    ) -> None:
        if code not in self.messages:
            raise KeyError(f"{type(self).__name__} has no error code {code!r}")
        self.code = code
        self.params = params
        self.detail = detail
        self.locale = resolve_locale(locale)
        super().__init__(self.render())

    def render(self, locale: str | None = None) -> str:
        """Render the message in a locale.

        Args:
            locale: ``"en"``, ``"fr"``, ``"zh"`` or any spelling of them; the error's own locale when
                omitted.

        Returns:
            The message with its parameters formatted for the locale.

        Raises:
            UnsupportedLocaleError: When the locale is not English, French or Chinese.
        """
        target = self.locale if locale is None else normalize_locale(locale)
        text = translate(self.messages[self.code], self.params, target)
        if self.detail:
            text = f"{text} {translate(_DETAIL, {'detail': self.detail}, target)}"
        return text

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.code, self.locale, self.detail, self.params))


def _rebuild(
    cls: type[ContextwiseError],
    code: str,
    locale: str,
    detail: str | None,
    params: dict[str, Any],
) -> ContextwiseError:
    error = cls.__new__(cls)
    ContextwiseError.__init__(error, code, locale=locale, detail=detail, **params)
    return error


class InvalidValueError(ContextwiseError, ValueError):
    """A value is out of range or malformed: a negative size, a NaN, a duplicate id, an unknown level."""

    messages: ClassVar[Mapping[str, Message]] = {
        "negative_size": N_("{name} must be zero or more, got {value}."),
        "non_finite_size": N_("{name} must be a finite number, got {value}."),
        "non_finite_priority": N_("Segment '{segment_id}' has a priority that is not finite: {value}."),
        "duplicate_segment_id": N_("Segment id '{segment_id}' appears more than once."),
        "unknown_strategy": N_("Unknown planning strategy '{strategy}'; use one of {supported}."),
        "invalid_effort": N_("{value} is not an effort level; use one of {supported}."),
        "empty_supported_efforts": N_("The list of supported effort levels is empty."),
        "invalid_message": N_("Message {index} is not a chat message: {reason}"),
        "unknown_grouping": N_("Unknown grouping '{grouping}'; use one of {supported}."),
        "invalid_counter_result": N_(
            "Token counter '{counter_id}' returned {value} instead of a whole number of zero or more."
        ),
    }


class InvalidTypeError(ContextwiseError, TypeError):
    """A value has the wrong type: a string where a number is expected, a bool used as a size."""

    messages: ClassVar[Mapping[str, Message]] = {
        "not_a_number": N_("{name} must be a number, got a value of type {type_name}."),
        "bool_not_a_number": N_("{name} must be a number, not a boolean."),
        "not_a_string": N_("{name} must be a string, got a value of type {type_name}."),
        "invalid_segment": N_(
            "Segment {index} must be a BudgetSegment or a mapping, got a value of type {type_name}."
        ),
        "invalid_tokenizer": N_(
            "{type_name} cannot count tokens: pass an object with an encode method or a callable "
            "that returns a number of tokens."
        ),
    }


class UnsupportedLocaleError(InvalidValueError):
    """A locale other than English, French or Simplified Chinese was requested."""

    messages: ClassVar[Mapping[str, Message]] = {
        "unsupported_locale": N_("Unsupported locale {locale_name}; supported locales are {supported}."),
    }


class ContextOverflowError(ContextwiseError):
    """The context does not fit: the reserves exceed the window, or the tokens exceed the budget.

    It derives from :class:`ContextwiseError` only: an overflow is not a malformed value but a
    context that is too large for the model, and a harness usually reacts by compacting it.
    """

    messages: ClassVar[Mapping[str, Message]] = {
        "context_overflow": N_(
            "The context does not fit: {tokens} tokens for a context budget of {context_budget} tokens."
        ),
        "reserves_exceed_window": N_(
            "The reserves ({reserved} tokens: output {output}, reasoning {reasoning}, safety "
            "{safety}) exceed the context window of {window} tokens."
        ),
        "required_segments_overflow": NP_(
            "The required segment {segment_ids} needs {required} tokens, {shortfall} more than the "
            "context budget of {context_budget} tokens.",
            "The {count} required segments {segment_ids} need {required} tokens, {shortfall} more "
            "than the context budget of {context_budget} tokens.",
            "count",
        ),
    }
