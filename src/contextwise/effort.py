"""Effort levels: how hard a model should think, on one ordered scale.

Reasoning models accept an effort level. contextwise uses one scale for all of them,
``none < low < medium < high < max``, and helpers to check, compare and clamp levels so that a
harness never sends a level that a model rejects.
"""

from collections.abc import Iterable
from enum import EnumType, StrEnum
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, TypeGuard

from contextwise.errors import InvalidTypeError, InvalidValueError

__all__ = ["Effort", "EffortLevel", "clamp_effort", "compare_effort", "is_effort"]


class _EffortType(EnumType):
    """Looks a level up without the enum machinery, which formats ``repr(value)`` for an unknown
    value before any hook can answer (and that fails for a huge int or a broken ``__repr__``)."""

    def __call__(cls, value: Any = None, *args: Any, **kwargs: Any) -> Any:
        # ``Effort()`` without a level is refused like ``Effort(None)`` (Python 3.12 reads an
        # enum's signature as ``(*values)``, so callers may well omit it).
        if args or kwargs:
            return super().__call__(value, *args, **kwargs)
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            member = cls._value2member_map_.get(value)
            if member is not None:
                return member
        raise _invalid(value, "value")


class Effort(StrEnum, metaclass=_EffortType):
    """An effort level on the ordered scale ``none < low < medium < high < max``.

    ``Effort`` is a string enumeration: each member is equal to its string value, so it can be
    sent as it is to a provider's API that takes ``"low"`` or ``"high"``. Its ordering operators
    (``<``, ``<=``, ``>``, ``>=``) follow the scale, not the alphabet.

    A member can also be compared with a plain string that is a valid level, for example
    ``Effort.LOW < "high"``; the comparison follows the scale as well. Comparing with a string that
    is not a level raises :class:`InvalidValueError` with the code ``invalid_effort``, and comparing
    with a value that is not a string raises :class:`InvalidTypeError` with the code
    ``invalid_effort_type`` (a ``TypeError``, as for any unsupported comparison in Python).
    Equality is the equality of strings: ``Effort.HIGH == "high"`` is true.

    Creating a member from an unknown string, as in ``Effort("turbo")``, raises
    :class:`InvalidValueError` with the code ``invalid_effort``.

    Examples:
        >>> from contextwise import Effort
        >>> Effort.LOW < Effort.HIGH
        True
        >>> Effort.MEDIUM == "medium"
        True
        >>> Effort("max") > "high"
        True
        >>> [level.value for level in sorted([Effort.MAX, Effort.NONE, Effort.MEDIUM])]
        ['none', 'medium', 'max']
    """

    NONE = "none"
    """No reasoning at all: the model answers directly."""

    LOW = "low"
    """A little reasoning."""

    MEDIUM = "medium"
    """A moderate amount of reasoning."""

    HIGH = "high"
    """A lot of reasoning."""

    MAX = "max"
    """As much reasoning as the model allows."""

    @classmethod
    def _missing_(cls, value: object) -> "Effort":
        raise _invalid(value, "value")

    def __lt__(self, other: object) -> bool:
        return _RANKS[self] < _rank(other, "other")

    def __le__(self, other: object) -> bool:
        return _RANKS[self] <= _rank(other, "other")

    def __gt__(self, other: object) -> bool:
        return _RANKS[self] > _rank(other, "other")

    def __ge__(self, other: object) -> bool:
        return _RANKS[self] >= _rank(other, "other")


EffortLevel: TypeAlias = Effort | Literal["none", "low", "medium", "high", "max"]
"""An effort level given as an :class:`Effort` member or as its string value."""

_RANKS = MappingProxyType({level.value: rank for rank, level in enumerate(Effort)})
_SUPPORTED = [level.value for level in Effort]


def _invalid(value: object, name: str) -> InvalidValueError | InvalidTypeError:
    if isinstance(value, str):
        return InvalidValueError("invalid_effort", name=name, value=value, supported=_SUPPORTED)
    return InvalidTypeError("invalid_effort_type", name=name, type_name=type(value).__name__)


def _rank(value: object, name: str) -> int:
    if isinstance(value, str):
        rank = _RANKS.get(value)
        if rank is not None:
            return rank
    raise _invalid(value, name)


def is_effort(value: object) -> TypeGuard[EffortLevel]:
    """Tell whether a value is one of the effort levels none, low, medium, high or max.

    The check is exact and case-sensitive, as provider APIs are: ``"High"`` is not a level. It
    never raises, whatever the value.

    Args:
        value: The value to check.

    Returns:
        True when the value is an :class:`Effort` member or one of the strings ``"none"``,
        ``"low"``, ``"medium"``, ``"high"`` and ``"max"``.

    Examples:
        >>> from contextwise import Effort, is_effort
        >>> is_effort("high"), is_effort(Effort.LOW)
        (True, True)
        >>> is_effort("extreme"), is_effort("High"), is_effort(3)
        (False, False, False)
    """
    return isinstance(value, str) and value in _RANKS


def compare_effort(a: EffortLevel, b: EffortLevel) -> int:
    """Compare two effort levels on the ordered scale ``none < low < medium < high < max``.

    Args:
        a: The first effort level, a member or its string value.
        b: The second effort level, a member or its string value.

    Returns:
        -1 when ``a`` is lower than ``b``, 0 when they are the same level, 1 when ``a`` is higher.

    Raises:
        InvalidValueError: When a string is not an effort level (code ``invalid_effort``).
        InvalidTypeError: When a value is not a string (code ``invalid_effort_type``).

    Examples:
        >>> from contextwise import Effort, compare_effort
        >>> compare_effort("low", "high")
        -1
        >>> compare_effort(Effort.MAX, "max")
        0
        >>> compare_effort("medium", Effort.NONE)
        1
    """
    rank_a = _rank(a, "a")
    rank_b = _rank(b, "b")
    return (rank_a > rank_b) - (rank_a < rank_b)


def clamp_effort(requested: EffortLevel, supported: Iterable[EffortLevel] | None) -> Effort:
    """Return the effort level to send to a model that supports only some levels.

    The result is the requested level when the model supports it; otherwise the nearest higher
    supported level, so that the model never thinks less than asked when it can think more;
    otherwise the nearest lower supported level. A harness that clamps every level it sends never
    sends one that the model rejects.

    ``supported=None`` means that the model accepts every level, and the requested level is
    returned as it is. An empty collection is an error: no level could be sent.

    Args:
        requested: The effort level the caller wants, a member or its string value.
        supported: The levels the model accepts, in any order, or None when it accepts them all.

    Returns:
        The level to send, always an :class:`Effort` member.

    Raises:
        InvalidValueError: When a level is not an effort level (code ``invalid_effort``) or when
            ``supported`` is empty (code ``empty_supported_efforts``).
        InvalidTypeError: When a level is not a string (code ``invalid_effort_type``), or when
            ``supported`` is a single string or not a collection (code ``not_a_collection``).

    Examples:
        >>> from contextwise import Effort, clamp_effort
        >>> clamp_effort("medium", ["low", "medium", "high"])
        <Effort.MEDIUM: 'medium'>
        >>> print(clamp_effort("medium", ["low", "high"]))
        high
        >>> print(clamp_effort(Effort.MAX, ["low", "high"]))
        high
        >>> print(clamp_effort("low", None))
        low
    """
    wanted = _rank(requested, "requested")
    scale = list(Effort)
    if supported is None:
        return scale[wanted]
    if isinstance(supported, str | bytes) or not isinstance(supported, Iterable):
        raise InvalidTypeError(
            "not_a_collection", name="supported", type_name=type(supported).__name__
        )
    ranks = {_rank(level, f"supported[{index}]") for index, level in enumerate(supported)}
    if not ranks:
        raise InvalidValueError("empty_supported_efforts")
    if wanted in ranks:
        return scale[wanted]
    higher = [rank for rank in ranks if rank > wanted]
    return scale[min(higher) if higher else max(ranks)]
