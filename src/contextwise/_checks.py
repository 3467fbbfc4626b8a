"""Checks that the public entry points share: argument types, finite numbers, nesting depth.

Internal. Each check raises the coded error that the entry point would otherwise build itself, so
that an argument is checked in one line, before anything is called.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from contextwise._translation import short_repr
from contextwise.errors import InvalidTypeError, InvalidValueError

MAX_DEPTH = 100
"""The deepest nesting of lists and objects that contextwise reads, in a policy file, a message
(its tool arguments and results included), a decision reply or a decision state. Deeper data is
refused with a coded error (``too_deep``, ``message_too_deep``, ``state_too_deep``) before any
recursive reader could fail on it."""


def require_instance(
    value: object, expected: type | tuple[type, ...], name: str, label: str
) -> None:
    """Raise ``not_an_instance`` when ``value`` is not an instance of ``expected``.

    Args:
        value: The argument.
        expected: The accepted types.
        name: The argument's name, as the caller wrote it.
        label: What the argument must be, in the message (``ModelSpec``, ``RoutingContext``...).
    """
    if not isinstance(value, expected):
        raise InvalidTypeError(
            "not_an_instance", name=name, expected=label, type_name=type(value).__name__
        )


def require_callable(value: object, name: str) -> None:
    """Raise ``not_callable`` when ``value`` cannot be called."""
    if not callable(value):
        raise InvalidTypeError("not_callable", name=name, type_name=type(value).__name__)


def require_mapping(value: object, name: str) -> None:
    """Raise ``not_a_mapping`` when ``value`` is not a mapping (a list of functions included)."""
    if not isinstance(value, Mapping):
        raise InvalidTypeError("not_a_mapping", name=name, type_name=type(value).__name__)


def require_string(value: object, name: str) -> None:
    """Raise ``not_a_string`` when ``value`` is not a string."""
    if not isinstance(value, str):
        raise InvalidTypeError("not_a_string", name=name, type_name=type(value).__name__)


def finite_float(value: object) -> float | None:
    """The value as a float when it is a real number that a float holds, finite; else ``None``.

    A boolean is not a number here, and an integer too large for a float (``10**400``) is
    ``None`` rather than an ``OverflowError``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether lists, tuples and dicts are nested more than ``limit`` levels deep in ``value``.

    The walk uses no recursion, and visits a container shared by several parents (or by itself,
    in a cycle) once per depth at most, so it ends quickly on any input.
    """
    if not isinstance(value, list | tuple | dict):
        return False
    containers = (list, tuple, dict)
    seen: dict[int, int] = {}
    stack: list[tuple[object, int]] = [(value, 0)]
    push = stack.append
    while stack:
        item, depth = stack.pop()
        if depth >= limit:
            return True
        ident = id(item)
        if seen.get(ident, limit) <= depth:
            continue
        seen[ident] = depth
        children = item.values() if isinstance(item, dict) else item
        for child in children:  # type: ignore[attr-defined]
            if isinstance(child, containers):
                push((child, depth + 1))
    return False


SIZE_LIMIT = 2**63 - 1
"""The largest count, offset or size that contextwise takes: what a store's integer column
holds, far beyond any text or token count, and small enough to print and to make a float of."""


def whole_number(value: object, name: str, minimum: int = 0, maximum: int = SIZE_LIMIT) -> int:
    """The value when it is a whole number (not a boolean) within ``[minimum, maximum]``.

    Raises ``not_a_whole_number`` for another type (a float included, even ``1.0``),
    ``negative_size`` below a minimum of 0, and ``out_of_range`` otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError("not_a_whole_number", name=name, value=short_repr(value))
    if value < minimum:
        if minimum == 0:
            raise InvalidValueError("negative_size", name=name, value=short_repr(value))
        raise InvalidValueError(
            "out_of_range", field=name, constraint=f"≥ {minimum}", value=short_repr(value)
        )
    if value > maximum:
        raise InvalidValueError(
            "out_of_range", field=name, constraint=f"≤ {maximum}", value=short_repr(value)
        )
    return int(value)
