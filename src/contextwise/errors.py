"""The error hierarchy: stable codes, named parameters and messages in three languages.

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

from contextwise import _error_messages as templates
from contextwise._translation import (
    SUPPORTED_LOCALES,
    Locale,
    Message,
    current_locale,
    match_locale,
    short_repr,
    translate,
)


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
        Le contexte ne tient pas : 12 345 jetons pour un budget de contexte de 8 000 jetons.
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

    _more: tuple[ContextwiseError, ...] = ()
    _unlisted: int = 0

    def __init__(
        self,
        code: str,
        /,
        *,
        locale: str | None = None,
        detail: str | None = None,
        **params: Any,
    ) -> None:
        if not isinstance(code, str) or _find_message(type(self), code) is None:
            raise KeyError(f"{type(self).__name__} has no error code {short_repr(code)}")
        self.code = code
        self.params = params
        self.detail = detail
        self.locale = current_locale.get() if locale is None else checked_locale(locale)
        # The message is rendered when it is read: an input with a million problems builds a
        # million errors, and most of them are never shown.
        super().__init__(code)

    def render(self, locale: str | None = None) -> str:
        """Render the message in a locale.

        Args:
            locale: ``"en"``, ``"fr"``, ``"zh"`` or any spelling of them; the error's own
                locale when omitted.

        Returns:
            The message with its parameters formatted for the locale.

        Raises:
            UnsupportedLocaleError: When the locale is not English, French or Chinese.
        """
        target = self.locale if locale is None else checked_locale(locale)
        message = _find_message(type(self), self.code)
        assert message is not None
        text = translate(message, self.params, target)
        # Chinese puts no space after the full stop (。) that ends the message.
        separator = "" if target == "zh" else " "
        if self.detail:
            detail = translate(templates.DETAIL, {"detail": self.detail}, target)
            text = f"{text}{separator}{detail}"
        if self._more or self._unlisted:
            count = len(self._more) + self._unlisted
            more = translate(templates.MORE_PROBLEMS, {"count": count}, target)
            text = f"{text}{separator}{more}"
        return text

    @property
    def problems(self) -> tuple[ContextwiseError, ...]:
        """Every problem found in the same input, this error first.

        Validating a policy file, a model spec or a decision response reports every problem at
        once: the error raised is the first one, and this tuple holds them, each with its own
        code, field path and message. An input with thousands of problems keeps the first 20
        here, and the message counts the others. For any other error it holds just the error
        itself.

        Examples:
            >>> from contextwise import ContextPolicy, PolicyConfigurationError
            >>> try:
            ...     ContextPolicy.model_validate({"mode": "reduce", "triggerChars": "2000",
            ...                                   "colour": "blue"})
            ... except PolicyConfigurationError as err:
            ...     print([(problem.code, problem.params["field"]) for problem in err.problems])
            [('wrong_type', 'triggerChars'), ('unknown_key', 'colour')]
        """
        return (self, *self._more)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.render()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        args = (type(self), self.code, self.locale, self.detail, self.params)
        if self._more or self._unlisted:
            return (_rebuild, args, {"_more": self._more, "_unlisted": self._unlisted})
        return (_rebuild, args)


def _find_message(cls: type[ContextwiseError], code: str) -> Message | None:
    # A class raises its own codes and those of its bases: the field-validation codes of
    # InvalidValueError serve every configuration error.
    for klass in cls.__mro__:
        messages = klass.__dict__.get("messages")
        if messages is not None and code in messages:
            found: Message = messages[code]
            return found
    return None


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
    """A value is out of range or malformed: a negative size, a NaN, a duplicate id, a bad level.

    It also holds the field-validation codes that every configuration error raises for a policy
    file, a model spec, a question or a decision response: ``unknown_key``, ``duplicate_key``,
    ``missing_key``, ``wrong_type``, ``out_of_range``, ``not_finite``, ``blank_value``,
    ``too_few_items``, ``too_many_items``, ``invalid_choice``, ``invalid_json`` and
    ``invalid_value``, each with the ``field`` path and the offending ``value``.

    Examples:
        >>> from contextwise import ContextBudget, InvalidValueError
        >>> try:
        ...     ContextBudget(window=8000, output=-1)
        ... except InvalidValueError as err:
        ...     print(err.code, err.params)
        negative_size {'name': 'output', 'value': -1}
    """

    messages: ClassVar[Mapping[str, Message]] = templates.INVALID_VALUE_ERROR


class InvalidTypeError(ContextwiseError, TypeError):
    """A value has the wrong type: a string where a number is expected, a bool used as a size.

    Examples:
        >>> from contextwise import ContextBudget, InvalidTypeError
        >>> try:
        ...     ContextBudget(window="8k", output=500)
        ... except InvalidTypeError as err:
        ...     print(err.code, isinstance(err, TypeError))
        not_a_number True
    """

    messages: ClassVar[Mapping[str, Message]] = templates.INVALID_TYPE_ERROR


class UnsupportedLocaleError(InvalidValueError):
    """A locale other than English, French or Simplified Chinese was requested.

    Examples:
        >>> from contextwise import UnsupportedLocaleError, set_locale
        >>> try:
        ...     set_locale("de_DE")
        ... except UnsupportedLocaleError as err:
        ...     print(err.code, err.params["supported"])
        unsupported_locale ['en', 'fr', 'zh']
    """

    messages: ClassVar[Mapping[str, Message]] = templates.UNSUPPORTED_LOCALE_ERROR


def with_problems(
    first: ContextwiseError, more: tuple[ContextwiseError, ...], unlisted: int = 0
) -> ContextwiseError:
    """Give an error the other problems found in the same input, and return it.

    The validators that report every problem at once build the first error and attach the others
    here (``problems`` lists them; the message counts them, ``unlisted`` included); with no other
    problem, the error's message is its own alone.
    """
    first._more = more
    first._unlisted = unlisted
    return first


def checked_locale(value: object) -> Locale:
    """Return the supported locale that a locale name designates, or raise.

    The errors check the locales they are given here; :func:`contextwise.normalize_locale` is this
    function's public face.

    Raises:
        UnsupportedLocaleError: When the value is not a string naming a supported language.
    """
    found = match_locale(value)
    if found is None:
        raise UnsupportedLocaleError(
            "unsupported_locale", locale_name=short_repr(value), supported=list(SUPPORTED_LOCALES)
        )
    return found


class ContextOverflowError(ContextwiseError):
    """The context does not fit: the reserves exceed the window, or the tokens exceed the budget.

    It derives from :class:`ContextwiseError` only: an overflow is not a malformed value but a
    context that is too large for the model, and a harness usually reacts by compacting it.

    Examples:
        >>> from contextwise import ContextBudget, ContextOverflowError
        >>> try:
        ...     ContextBudget(window=8000, output=1000, safety=0).assert_fits(9000)
        ... except ContextOverflowError as err:
        ...     print(err.code, err.params)
        context_overflow {'tokens': 9000, 'context_budget': 7000}
    """

    messages: ClassVar[Mapping[str, Message]] = templates.CONTEXT_OVERFLOW_ERROR


# --- Routing (model routing and the decision providers) --------------------------------------


class RoutingConfigurationError(InvalidValueError):
    """A routing declaration or a routing state is invalid.

    Raised by :class:`~contextwise.routing.ModelRouting` and the decision types at construction, and
    by the router before any request when the state is not lossless JSON. The ``field`` parameter
    names the faulty field.

    Examples:
        >>> from contextwise import (
        ...     ChoiceQuestion, Decision, ModelRouting, RoutingConfigurationError,
        ... )
        >>> class Provider:
        ...     name = "fake"
        ...     async def request(self, request):
        ...         raise NotImplementedError
        >>> question = ChoiceQuestion(
        ...     instructions="Pick a model.",
        ...     criteria={"small": "Easy steps.", "large": "Hard steps."},
        ... )
        >>> decision = Decision(questions={"model": question})
        >>> try:
        ...     ModelRouting(
        ...         provider=Provider(), model="router-mini", decision=decision, question="model",
        ...         models={"small": "gpt-small", "large": "gpt-large"}, fallback="medium",
        ...     )
        ... except RoutingConfigurationError as err:
        ...     print(err.code, err.params["field"])
        unknown_fallback fallback
    """

    messages: ClassVar[Mapping[str, Message]] = templates.ROUTING_CONFIGURATION_ERROR


class DecisionResponseError(InvalidValueError):
    """A decision provider returned a malformed answer.

    The router raises it, and it always propagates: a provider that answers badly is a bug to fix,
    not a passing outage to route around.

    Examples:
        >>> from contextwise import DecisionResponseError
        >>> err = DecisionResponseError(
        ...     "unknown_choice", question="model", choice="huge", allowed=["small", "large"]
        ... )
        >>> print(err)
        The answer to question 'model' chose 'huge', which is not one of small and large.
    """

    messages: ClassVar[Mapping[str, Message]] = templates.DECISION_RESPONSE_ERROR


class RoutingRuleError(ContextwiseError):
    """A routing rule raised while a rule router tried it.

    The rule's own error is the ``__cause__`` of this one, and its text is the ``detail``.

    Examples:
        >>> from contextwise import RoutingRuleError
        >>> err = RoutingRuleError(
        ...     "rule_failed", rule="long-context", step=4, error_type="KeyError", detail="'tokens'"
        ... )
        >>> print(err.render("en"))
        The routing rule 'long-context' failed at step 4 with KeyError. Detail: 'tokens'
    """

    messages: ClassVar[Mapping[str, Message]] = templates.ROUTING_RULE_ERROR


class DecisionTimeoutError(ContextwiseError, TimeoutError):
    """A decision provider did not answer in time.

    A provider raises it to report its own timeout; the router raises it when its ``timeout``
    expires. With ``on_error="fallback"`` the router then selects the fallback model.

    Args:
        detail: Free text from outside contextwise, such as the upstream error, shown untranslated.
        timeout: The number of seconds that expired, when known.
        locale: The locale of ``str(err)``; the current default locale when omitted.

    Examples:
        >>> from contextwise import DecisionTimeoutError
        >>> err = DecisionTimeoutError("read timed out", timeout=2.5)
        >>> err.code, isinstance(err, TimeoutError)
        ('decision_timeout_after', True)
    """

    messages: ClassVar[Mapping[str, Message]] = templates.DECISION_TIMEOUT_ERROR

    def __init__(
        self, detail: str | None = None, *, timeout: float | None = None, locale: str | None = None
    ) -> None:
        if timeout is None:
            super().__init__("decision_timeout", locale=locale, detail=detail)
        else:
            super().__init__(
                "decision_timeout_after", locale=locale, detail=detail, timeout=timeout
            )


class MissingDependencyError(ContextwiseError, ImportError):
    """An optional dependency is not installed: an integration was imported without its framework.

    Each module of ``contextwise.integrations`` imports its framework when it is imported itself,
    and raises this error, an :class:`ImportError`, when the framework is missing. The message
    names the extra that installs it.

    Examples:
        >>> from contextwise import MissingDependencyError
        >>> err = MissingDependencyError(
        ...     "missing_extra",
        ...     module="contextwise.integrations.langchain",
        ...     package="langchain",
        ...     extra="langchain",
        ... )
        >>> err.code, isinstance(err, ImportError)
        ('missing_extra', True)
        >>> str(err).endswith("pip install 'contextwise[langchain]'")
        True
    """

    messages: ClassVar[Mapping[str, Message]] = templates.MISSING_DEPENDENCY_ERROR


class ProviderUnavailableError(ContextwiseError):
    """A decision provider is unavailable: a 5xx status, an overloaded service, a lost connection.

    With ``on_error="fallback"`` the router selects the fallback model, also when this error is
    found up to 8 levels down the ``__cause__`` chain of the error the provider raised.

    Args:
        detail: Free text from outside contextwise, such as ``"503 from upstream"``, shown
            untranslated.
        locale: The locale of ``str(err)``; the current default locale when omitted.

    Examples:
        >>> from contextwise import ProviderUnavailableError
        >>> print(ProviderUnavailableError("503 from upstream"))
        The decision provider is unavailable. Detail: 503 from upstream
    """

    messages: ClassVar[Mapping[str, Message]] = templates.PROVIDER_UNAVAILABLE_ERROR

    def __init__(self, detail: str | None = None, *, locale: str | None = None) -> None:
        super().__init__("provider_unavailable", locale=locale, detail=detail)


class QuotaExceededError(ContextwiseError):
    """A decision provider refused the request because a quota or rate limit is exhausted.

    It always propagates, even with ``on_error="fallback"``: a spent quota fails every following
    step too, so the harness must know about it.

    Args:
        detail: Free text from outside contextwise, such as the upstream message, shown
            untranslated.
        locale: The locale of ``str(err)``; the current default locale when omitted.

    Examples:
        >>> from contextwise import QuotaExceededError
        >>> QuotaExceededError("429 Too Many Requests").code
        'quota_exceeded'
    """

    messages: ClassVar[Mapping[str, Message]] = templates.QUOTA_EXCEEDED_ERROR

    def __init__(self, detail: str | None = None, *, locale: str | None = None) -> None:
        super().__init__("quota_exceeded", locale=locale, detail=detail)


# --- Policy (context policies) -----------------------------------------------------------------


class PolicyConfigurationError(InvalidValueError):
    """A context policy is invalid, or does not match what the application supplies.

    :func:`~contextwise.policy.validate_context_policy` and
    :meth:`~contextwise.policy.ContextPolicy.bind` raise it: for a rule of the policy itself
    (unique step ids, a trigger above its target...), for a compressor, app or fragment that a
    step names but the application does not supply, and for a runner option that does not exist
    or does not fit the policy. Reading or constructing a
    :class:`~contextwise.policy.ContextPolicy` raises it too, for every problem of the file: an
    unknown key (``unknown_key``), one key in both spellings (``duplicate_key``), a wrong type
    (``wrong_type``), a value out of range (``out_of_range``), a missing key (``missing_key``),
    invalid JSON or TOML (``invalid_json``, ``invalid_toml``)... with the ``field`` path and the
    offending ``value``; its ``problems`` list them all.

    Examples:
        >>> from contextwise import ContextPolicy, PolicyConfigurationError, validate_context_policy
        >>> policy = ContextPolicy.model_validate({
        ...     "mode": "reduce", "trigger_chars": 2000, "target_input_chars": 1000,
        ...     "steps": [{"id": "summary", "kind": "compress", "fragment_id": "history",
        ...                "compressor": "summarize"}],
        ... })
        >>> try:
        ...     validate_context_policy(policy, compressors=[], apps=[])
        ... except PolicyConfigurationError as err:
        ...     print(err.code)
        unknown_compressor
    """

    messages: ClassVar[Mapping[str, Message]] = templates.POLICY_CONFIGURATION_ERROR


class PolicyStepError(ContextwiseError):
    """A compressor or an app step failed; the report records it, and its fragment is untouched.

    contextwise does not raise it: a failing step must never lose the conversation. It is the
    ``error`` of a change whose ``status`` is ``failed`` in the
    :class:`~contextwise.policy.ContextProcessingReport`, with its code and its message.

    Examples:
        >>> from contextwise import PolicyStepError
        >>> err = PolicyStepError(
        ...     "compressor_failed", compressor="summarize", step_id="summary", error_type="OSError"
        ... )
        >>> print(err.code, "-", err)
        compressor_failed - The compressor 'summarize' of the step 'summary' raised OSError.
    """

    messages: ClassVar[Mapping[str, Message]] = templates.POLICY_STEP_ERROR


# --- Sessions ----------------------------------------------------------------------------------


class SessionStoreError(ContextwiseError):
    """A session store cannot be used: its layout is another version, or the database refused
    the operation.

    Every failure of a store's database is raised as this error, with the database's own error
    as ``__cause__`` and its text as ``detail``: a file that cannot be opened or is not a
    database (``store_cannot_open``, ``store_not_a_database``), a read-only file or filesystem
    (``store_read_only``), a full disk (``store_full``), a lock held longer than the timeout
    (``store_locked``), a layout of another version (``session_schema_mismatch``,
    ``session_layout_mismatch``), a damaged row (``store_row_unreadable``), a closed store
    (``store_closed``), and anything else (``store_failed``).

    Examples:
        >>> from contextwise import SessionStoreError
        >>> err = SessionStoreError("session_schema_mismatch", found=7, expected=1)
        >>> err.code, err.params
        ('session_schema_mismatch', {'found': 7, 'expected': 1})
    """

    messages: ClassVar[Mapping[str, Message]] = templates.SESSION_STORE_ERROR


class SessionConflictError(SessionStoreError):
    """Another writer changed the session first: the change was not stored, nothing was lost.

    Two writers that reduce one session at once compute their changes from the same version;
    the store keeps the first and refuses the second with this error. Read the session again
    (the next call does) and retry.

    Examples:
        >>> from contextwise import SessionConflictError
        >>> err = SessionConflictError("session_conflict", session_id="chat-1", expected=4, found=5)
        >>> err.code, err.params["found"]
        ('session_conflict', 5)
    """

    messages: ClassVar[Mapping[str, Message]] = templates.SESSION_CONFLICT_ERROR
