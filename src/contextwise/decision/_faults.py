"""Fault classification: whether an error a decision provider raised means it is unavailable.

Model routing and the ``model`` selection of a context policy fall back when the provider times
out or is down; a spent quota, a bad answer or any other error is not an outage.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from typing import TypeAlias

from contextwise._checks import require_instance
from contextwise._translation import short_text
from contextwise.errors import (
    ProviderUnavailableError,
    QuotaExceededError,
    RoutingConfigurationError,
)

CAUSE_CHAIN_DEPTH = 8
"""How many levels down the ``__cause__`` chain :func:`is_provider_unavailable` looks."""

FallbackPredicate: TypeAlias = Callable[[BaseException], bool]
"""A user-defined test: ``True`` when an error means the provider is unavailable."""

NETWORK_ERRNOS: frozenset[int] = frozenset(
    code
    for name in (
        "ECONNREFUSED",
        "ECONNRESET",
        "ECONNABORTED",
        "EPIPE",
        "ETIMEDOUT",
        "EHOSTUNREACH",
        "EHOSTDOWN",
        "ENETUNREACH",
        "ENETDOWN",
        "ENETRESET",
        "ENOTCONN",
        "ESHUTDOWN",
    )
    if (code := getattr(errno, name, None)) is not None
)
"""The ``errno`` codes of an ``OSError`` that mean the network failed, not the local machine."""

TRANSPORT_ERRORS: frozenset[tuple[str, str]] = frozenset(
    {
        ("httpx", "TransportError"),
        ("httpcore", "NetworkError"),
        ("httpcore", "TimeoutException"),
        ("openai", "APIConnectionError"),
        ("openai", "APITimeoutError"),
        ("anthropic", "APIConnectionError"),
        ("anthropic", "APITimeoutError"),
    }
)
"""The (top-level package, class name) of the HTTP clients' errors that mean an outage; they are
recognized by name, so none of these packages is imported."""


def is_provider_unavailable(
    error: BaseException, fallback_on: FallbackPredicate | None = None
) -> bool:
    """Tell whether an error means the decision provider is unavailable, so a fallback may answer.

    The rule: look at the error and up to :data:`CAUSE_CHAIN_DEPTH` (8) levels down its
    ``__cause__`` chain, and only that chain (``__context__`` is ignored, since an error raised
    while handling another is not caused by it). If any of these errors is a
    :class:`~contextwise.errors.QuotaExceededError`, the answer is ``False``, wherever it sits: a
    spent quota is never treated as an outage. Otherwise the answer is ``True`` when one of them
    is the face of a timeout or an outage, or ``fallback_on`` returns ``True`` for it. Anything
    else, a foreign exception included, is ``False``.

    The faces of a timeout: :class:`~contextwise.errors.DecisionTimeoutError` and the builtin
    ``TimeoutError`` (``asyncio.TimeoutError`` is the same class). The faces of an outage:
    :class:`~contextwise.errors.ProviderUnavailableError`, ``ConnectionError`` and its subclasses
    (refused, reset, aborted, broken pipe), an ``OSError`` of the network (host or network
    unreachable, a host name that does not resolve...), ``httpx.TransportError``, and
    ``openai.APIConnectionError`` and ``openai.APITimeoutError``. The HTTP clients' errors are
    recognized by name, so neither package needs to be installed.

    Args:
        error: The error a provider raised.
        fallback_on: A user-defined test applied to each error of the chain, for outages that
            contextwise does not know, such as an SDK's own exception.

    Returns:
        Whether the error, or one of its first 8 causes, reports a timeout or an outage, with no
        quota error among them.

    Raises:
        InvalidTypeError: When ``error`` is not an exception (code ``not_an_instance``).
        RoutingConfigurationError: When ``fallback_on`` is not callable (code
            ``fallback_on_not_callable``), or raises (code ``fallback_on_failed``, with its
            error as ``__cause__``).

    Examples:
        >>> from contextwise import (
        ...     ProviderUnavailableError,
        ...     QuotaExceededError,
        ...     is_provider_unavailable,
        ... )
        >>> try:
        ...     raise RuntimeError("request failed") from ProviderUnavailableError("503")
        ... except RuntimeError as exc:
        ...     is_provider_unavailable(exc)
        True
        >>> is_provider_unavailable(ConnectionResetError("peer reset"))
        True
        >>> is_provider_unavailable(QuotaExceededError("429"))
        False
        >>> is_provider_unavailable(KeyError("x"), fallback_on=lambda e: isinstance(e, KeyError))
        True
    """
    require_instance(error, BaseException, "error", "exception")
    if fallback_on is not None and not callable(fallback_on):
        raise RoutingConfigurationError(
            "fallback_on_not_callable", field="fallback_on", type_name=type(fallback_on).__name__
        )
    found = False
    current: BaseException | None = error
    for _ in range(CAUSE_CHAIN_DEPTH + 1):
        if current is None:
            break
        if isinstance(current, QuotaExceededError):
            return False
        if is_ordinary_fault(current) or (
            fallback_on is not None and _user_fault(fallback_on, current)
        ):
            found = True
        current = current.__cause__
    return found


def is_ordinary_fault(error: BaseException) -> bool:
    """Tell whether one error, on its own, is the face of a timeout or an outage.

    Timeouts: contextwise's :class:`~contextwise.errors.DecisionTimeoutError` and the builtin
    ``TimeoutError`` (``asyncio.TimeoutError`` and ``socket.timeout`` are the same class).
    Outages: :class:`~contextwise.errors.ProviderUnavailableError`, ``ConnectionError`` and its
    subclasses (refused, reset, aborted, broken pipe), an ``OSError`` whose ``errno`` is one of
    :data:`NETWORK_ERRNOS` or that failed to resolve a host name (``socket.gaierror``), and the
    HTTP clients' transport errors of :data:`TRANSPORT_ERRORS` (``httpx.TransportError``,
    ``openai.APIConnectionError`` and ``openai.APITimeoutError``, and their subclasses).

    Args:
        error: One error, without looking at its causes.

    Returns:
        Whether it reports a timeout or an outage. A quota error is never one.

    Examples:
        >>> is_ordinary_fault(TimeoutError()), is_ordinary_fault(FileNotFoundError("x.json"))
        (True, False)
    """
    if isinstance(error, QuotaExceededError):
        return False
    if isinstance(
        error, TimeoutError | ConnectionError | ProviderUnavailableError | socket.gaierror
    ):
        return True
    if isinstance(error, OSError) and error.errno in NETWORK_ERRNOS:
        return True
    return any(
        (cls.__module__.partition(".")[0], cls.__name__) in TRANSPORT_ERRORS
        for cls in type(error).__mro__
    )


def _user_fault(fallback_on: FallbackPredicate, error: BaseException) -> bool:
    """Ask a user's ``fallback_on`` about an error; a predicate that raises is a coded error."""
    try:
        return bool(fallback_on(error))
    except Exception as exc:
        raise RoutingConfigurationError(
            "fallback_on_failed",
            field="fallback_on",
            error_type=type(exc).__name__,
            detail=short_text(exc) or None,
        ) from exc
