"""The lossless-JSON check of a decision state: what is sent is what a reader gets back."""

from __future__ import annotations

import math
import re
from typing import Any, TypeAlias

from contextwise._checks import MAX_DEPTH
from contextwise._translation import short_repr
from contextwise.errors import RoutingConfigurationError

STATE_MAX_DEPTH = MAX_DEPTH
"""The deepest nesting of lists and dicts that a decision state may have: 100, the nesting limit
that every input of contextwise shares."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_Path: TypeAlias = tuple[Any, ...] | None


def check_json_state(state: object, *, field: str = "state") -> None:
    """Check that a decision state is lossless JSON, before anything is sent.

    Lossless means that a JSON reader in any language gets back exactly the same value. Allowed:
    ``None``, booleans, strings, integers of at most 4,300 digits, finite floats other than
    ``-0.0``, lists, and dicts with string keys, nested at most :data:`STATE_MAX_DEPTH` (100)
    levels. Rejected: NaN and the infinities, ``-0.0`` (read back as ``0``), containers that
    contain themselves, non-string keys, and every other type. Tuples and sets are rejected too:
    JSON reads an array back as a list, so use lists.
    Subclasses of ``str`` and ``int`` (such as enum members) are accepted, since they equal their
    JSON value.

    Args:
        state: The state to check.
        field: The name of the state in errors.

    Raises:
        RoutingConfigurationError: When the state is not lossless JSON; the ``path`` parameter
            locates the faulty value, such as ``$.messages[2].content``.

    Examples:
        >>> from contextwise import check_json_state
        >>> check_json_state({"step": 3, "messages": [{"role": "user", "content": "hi"}]})
        >>> from contextwise import RoutingConfigurationError
        >>> try:
        ...     check_json_state({"scores": [0.5, float("nan")]})
        ... except RoutingConfigurationError as err:
        ...     print(err.code, err.params["path"])
        state_non_finite $.scores[1]
    """
    _check_json(state, None, set(), 0, field)


_PLAIN_SCALARS = frozenset({str, bool, type(None)})
"""The scalar types accepted as they are; an int is checked against :data:`_JSON_INT_BOUND`."""

JSON_INT_DIGITS = 4300
"""The most digits of an integer in a state: Python writes no longer one as JSON text."""

_JSON_INT_BOUND = 10**JSON_INT_DIGITS


def _check_json(value: object, path: _Path, active: set[int], depth: int, field: str) -> None:
    # The hot path: the exact scalar types are accepted without a call, and a path is only
    # built when a container is entered or an error is reported.
    if _checked_scalar(value, path, field):
        return
    if not isinstance(value, (dict, list)):
        raise RoutingConfigurationError(
            "state_not_json", field=field, path=_format_path(path), type_name=type(value).__name__
        )
    if depth >= STATE_MAX_DEPTH:
        raise RoutingConfigurationError(
            "state_too_deep", field=field, path=_format_path(path), limit=STATE_MAX_DEPTH
        )
    ident = id(value)
    if ident in active:
        raise RoutingConfigurationError("state_cycle", field=field, path=_format_path(path))
    active.add(ident)
    if isinstance(value, dict):
        _check_object(value, path, active, depth, field)
    else:
        scalars = _PLAIN_SCALARS
        for index, item in enumerate(value):
            if type(item) not in scalars:
                _check_json(item, (path, index), active, depth + 1, field)
    active.discard(ident)


def _checked_scalar(value: object, path: _Path, field: str) -> bool:
    """Whether a value is a JSON scalar that the state may hold; a scalar it may not (a huge
    int, a NaN, ``-0.0``) raises. ``False`` for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not -_JSON_INT_BOUND < value < _JSON_INT_BOUND:
            raise RoutingConfigurationError(
                "state_huge_int", field=field, path=_format_path(path), limit=JSON_INT_DIGITS
            )
        return True
    if type(value) in _PLAIN_SCALARS or isinstance(value, str):
        return True
    if isinstance(value, float):
        _check_float(value, path, field)
        return True
    return False


def _check_object(
    value: dict[Any, Any], path: _Path, active: set[int], depth: int, field: str
) -> None:
    scalars = _PLAIN_SCALARS
    for key, item in value.items():
        if type(key) is not str and not isinstance(key, str):
            raise RoutingConfigurationError(
                "state_non_string_key",
                field=field,
                path=_format_path(path),
                value=short_repr(key),
                type_name=type(key).__name__,
            )
        if type(item) not in scalars:
            _check_json(item, (path, key), active, depth + 1, field)


def _check_float(value: float, path: _Path, field: str) -> None:
    if not math.isfinite(value):
        raise RoutingConfigurationError(
            "state_non_finite", field=field, path=_format_path(path), value=short_repr(value)
        )
    if value == 0.0 and math.copysign(1.0, value) < 0.0:
        raise RoutingConfigurationError("state_negative_zero", field=field, path=_format_path(path))


def _format_path(path: _Path) -> str:
    parts: list[str] = []
    while path is not None:
        path, key = path
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _IDENTIFIER.match(key):
            parts.append(f".{key}")
        else:
            escaped = key.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'["{escaped}"]')
    return "$" + "".join(reversed(parts))
