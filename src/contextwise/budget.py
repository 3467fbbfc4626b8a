"""Context budgets: how many tokens the prompt's context may take, and which segments fit.

A model's context window is shared between the prompt's context, the answer, the model's internal
reasoning and a safety margin: ``B_context = W - B_out - B_reasoning - B_safety``.
:class:`ContextBudget` computes that budget and checks sizes against it; its
:meth:`~ContextBudget.plan` method decides which segments of a prompt fit and returns a
:class:`BudgetPlan`.
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from numbers import Real
from operator import not_
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, ValidationError

from contextwise._translation import short_repr, short_text
from contextwise._validation import CodedModel, coded_error, read_json
from contextwise.errors import ContextOverflowError, InvalidTypeError, InvalidValueError
from contextwise.i18n import Locale, normalize_locale

__all__ = ["BudgetPlan", "BudgetSegment", "ContextBudget", "PlanStrategy"]

PlanStrategy: TypeAlias = Literal["greedy", "cutoff"]
"""The name of a planning strategy: ``"greedy"`` (the default) or ``"cutoff"``."""

_STRATEGIES = ("greedy", "cutoff")
_BUDGET_FIELDS = ("window", "output", "reasoning", "safety", "locale")
_SEGMENT_KEYS = ("id", "tokens", "priority", "required")
_INF = math.inf


# --- Checks shared by the budget, the segments and the plan -------------------------------------


_Where = str | tuple[int, str]
"""A value's name in an error: a name, or a segment's index and field (``segments[3].tokens``),
spelled out only when an error is raised."""


def _name(where: _Where) -> str:
    return where if isinstance(where, str) else f"segments[{where[0]}].{where[1]}"


def _real(value: object, name: _Where, locale: Locale | None) -> None:
    """Refuse a bool or a value that is not a real number (an int or a float is one at once)."""
    if isinstance(value, bool):
        raise InvalidTypeError("bool_not_a_number", name=_name(name), locale=locale)
    if not isinstance(value, int | float) and not isinstance(value, Real):
        raise InvalidTypeError(
            "not_a_number", name=_name(name), type_name=type(value).__name__, locale=locale
        )


def _number(value: object, name: _Where, locale: Locale | None) -> float | int:
    """Return a finite real number of zero or more, or raise the error that names the problem."""
    _real(value, name, locale)
    number = value if isinstance(value, int | float) else float(value)  # type: ignore[arg-type]
    if isinstance(number, float) and not math.isfinite(number):
        raise InvalidValueError("non_finite_size", name=_name(name), value=number, locale=locale)
    if number < 0:
        raise InvalidValueError("negative_size", name=_name(name), value=number, locale=locale)
    return number


def _size(value: object, name: str, locale: Locale | None) -> int:
    """Return a budget size floored to an integer."""
    return math.floor(_number(value, name, locale))


def _segment_tokens(value: object, name: _Where, locale: Locale | None) -> int:
    """Return a segment's tokens, rounded up to a whole number."""
    return math.ceil(_number(value, name, locale))


def _priority(value: object, name: _Where, locale: Locale | None) -> int | float:
    _real(value, name, locale)
    number = value if isinstance(value, int | float) else float(value)  # type: ignore[arg-type]
    if not 0 <= number < _INF:  # refuses NaN too; exact for integers of any size
        raise InvalidValueError("invalid_priority", name=_name(name), value=number, locale=locale)
    return number


def _segment_id(value: object, name: _Where, locale: Locale | None) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(
            "not_a_string", name=_name(name), type_name=type(value).__name__, locale=locale
        )
    return value


def _required(value: object, name: _Where, locale: Locale | None) -> bool:
    if value is not True and value is not False:
        raise InvalidTypeError(
            "not_a_bool", name=_name(name), type_name=type(value).__name__, locale=locale
        )
    return value


# --- Segments and plans -------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class BudgetSegment:
    """A piece of the prompt's context handed to :meth:`ContextBudget.plan`.

    A segment is an id, a size in tokens, a priority and a ``required`` flag.
    :meth:`ContextBudget.plan` also accepts a plain mapping with the same keys, such as
    ``{"id": "history", "tokens": 900, "priority": 1, "required": False}``.

    The constructor takes the fields by position or by keyword and checks them with the same rules
    as :meth:`ContextBudget.plan`, raising a :class:`ContextwiseError` with a stable code. A
    fractional number of tokens is rounded up, so that a plan never undercounts.

    ``BudgetSegment.model_validate(data)``, ``model_validate_json`` and ``model_validate_strings``
    check a mapping with the same rules and the same codes, so that untrusted input never raises
    pydantic's ``ValidationError``. A missing key raises :class:`InvalidValueError` with the code
    ``missing_key``, another key ``unknown_key``, and a value that is not a mapping
    ``wrong_type``, each with the ``field`` path; JSON that does not parse raises
    ``invalid_json`` with its line and column. ``model_validate_strings`` reads the numbers and
    the flag from their text (``"900"``, ``"false"``) before checking them.

    Args:
        id: The segment's identifier, returned in ``included`` or ``dropped``.
        tokens: The segment's size in tokens, a finite number of zero or more.
        priority: A finite number of zero or more; higher priorities are kept first.
        required: Whether the segment must be kept. A required segment must fit or the plan fails.

    Raises:
        InvalidTypeError: When a field has the wrong type (codes ``not_a_string``,
            ``not_a_number``, ``bool_not_a_number``, ``not_a_bool``).
        InvalidValueError: When the tokens are negative or not finite (codes ``negative_size``,
            ``non_finite_size``) or the priority is negative or not finite (code
            ``invalid_priority``); when validating, also for a missing or unknown key, a value
            that is not a mapping or text that is not JSON (codes ``missing_key``,
            ``unknown_key``, ``wrong_type``, ``invalid_json``).

    Examples:
        >>> from contextwise import BudgetSegment, InvalidValueError
        >>> BudgetSegment("instructions", 1200)
        BudgetSegment(id='instructions', tokens=1200, priority=0, required=True)
        >>> BudgetSegment(id="history", tokens=899.5, priority=1, required=False).tokens
        900
        >>> try:
        ...     BudgetSegment.model_validate({"id": "history", "tokens": -5})
        ... except InvalidValueError as err:
        ...     print(err.code, err.params["name"])
        negative_size tokens
    """

    id: str
    """The segment's identifier, returned in ``included`` or ``dropped`` of the plan."""

    tokens: int
    """The segment's size in tokens."""

    priority: int | float = 0
    """Segments with a higher priority are kept first; 0 by default."""

    required: bool = True
    """Whether the segment must be kept: a required segment must fit or the plan fails with
    ``ContextOverflowError``. It is True by default, so that nothing is dropped silently unless the
    caller allows it by setting it to False."""

    def __init__(
        self,
        id: str,
        tokens: float,
        priority: float = 0,
        required: bool = True,
    ) -> None:
        checked = _segment_values(id, tokens, priority, required, None, None)
        # The dataclass's own __init__ would take the values unchecked: this one sets the checked
        # values as it would, through object.__setattr__ on the frozen instance.
        for name, value in zip(_SEGMENT_KEYS, checked, strict=True):
            object.__setattr__(self, name, value)

    @classmethod
    def model_validate(cls, obj: object) -> "BudgetSegment":
        """Validate a segment given as a mapping, raising a coded error on any problem."""
        if isinstance(obj, BudgetSegment):
            return obj
        segment = cls.__new__(cls)
        for name, value in zip(_SEGMENT_KEYS, _read_segment(obj, None, None), strict=True):
            object.__setattr__(segment, name, value)
        return segment

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray) -> "BudgetSegment":
        """Validate a segment given as JSON text, raising a coded error on any problem."""
        return cls.model_validate(read_json(json_data, "BudgetSegment"))

    @classmethod
    def model_validate_strings(cls, obj: object) -> "BudgetSegment":
        """Validate a segment whose values are text, raising a coded error on any problem."""
        _read_keys(obj, None, None)
        try:
            read = _SegmentText.model_validate_strings(obj)
        except ValidationError as exc:
            raise coded_error(exc, _SegmentText, obj) from None
        return cls(read.id, read.tokens, read.priority, read.required)


class _SegmentText(BaseModel):
    """The fields of a segment read from text; the segment's own checks follow."""

    id: str
    tokens: float
    priority: float = 0
    required: bool = True


def _read_segment(
    data: object, index: int | None, locale: Locale | None
) -> tuple[str, int, int | float, bool]:
    """Check a segment given as a mapping: in a plan (at ``index``), or on its own.

    The one reading of the mapping form, with the checks of the constructor. A missing or
    unknown key is ``missing_key`` or ``unknown_key`` on its own, and ``missing_segment_field``
    or ``unknown_segment_field`` in a plan, which names the segment's index.
    """
    segment = _read_keys(data, index, locale)
    return _segment_values(
        segment["id"],
        segment["tokens"],
        segment.get("priority", 0),
        segment.get("required", True),
        index,
        locale,
    )


def _read_keys(data: object, index: int | None, locale: Locale | None) -> Mapping[str, Any]:
    """Refuse a value that is not a mapping, a missing ``id`` or ``tokens``, and another key."""
    if not isinstance(data, Mapping):
        raise InvalidValueError(
            "wrong_type",
            field="BudgetSegment",
            expected="object",
            value=short_repr(data),
            locale=locale,
        )
    for key in ("id", "tokens"):
        if key in data:
            continue
        if index is None:
            raise InvalidValueError("missing_key", field=key, locale=locale)
        raise InvalidValueError("missing_segment_field", index=index, field=key, locale=locale)
    for key in data:
        if key in _SEGMENT_KEYS:
            continue
        if index is None:
            raise InvalidValueError(
                "unknown_key", field=short_text(key), known=list(_SEGMENT_KEYS), locale=locale
            )
        raise InvalidValueError(
            "unknown_segment_field", index=index, field=short_text(key), locale=locale
        )
    return data


def _segment_values(
    id: object,
    tokens: object,
    priority: object,
    required: object,
    index: int | None,
    locale: Locale | None,
) -> tuple[str, int, int | float, bool]:
    """The checked fields of a segment, each error naming ``segments[index].field`` in a plan."""

    def where(name: str) -> _Where:
        return name if index is None else (index, name)

    return (
        _segment_id(id, where("id"), locale),
        _segment_tokens(tokens, where("tokens"), locale),
        _priority(priority, where("priority"), locale),
        _required(required, where("required"), locale),
    )


class BudgetPlan(CodedModel):
    """The result of :meth:`ContextBudget.plan`: the reserves, the budget and the segments kept.

    The plan records the numbers next to the decision, so that a harness can log them. Its fields
    are ordered as in ``B_context = W - B_out - B_reasoning - B_safety``, followed by the outcome.

    A plan read back from a log with ``BudgetPlan.model_validate_json`` is checked like any other
    model of contextwise: a malformed one raises :class:`InvalidValueError` with a stable code
    (``missing_key``, ``unknown_key``, ``wrong_type``, ``invalid_json``...).

    Examples:
        >>> from contextwise import ContextBudget
        >>> budget = ContextBudget(window=1000, output=100, safety=0)
        >>> plan = budget.plan(
        ...     [{"id": "a", "tokens": 600}, {"id": "b", "tokens": 400, "required": False}]
        ... )
        >>> plan.included, plan.dropped, plan.used, plan.remaining
        (['a'], ['b'], 600, 300)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    window: int
    """The model's context window in tokens."""

    output_reserved: int
    """The tokens reserved for the answer."""

    reasoning_reserved: int
    """The tokens reserved for internal reasoning."""

    safety_margin: int
    """The safety margin in tokens."""

    context_budget: int
    """The tokens available for the prompt's context."""

    used: int
    """The tokens of the segments kept."""

    remaining: int
    """The context budget left after the segments kept."""

    included: list[str]
    """The ids of the segments kept, in input order."""

    dropped: list[str]
    """The ids of the segments dropped, in input order."""


# --- The budget ---------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class ContextBudget:
    """The token budget of the prompt's context: ``B_context = W - B_out - B_reasoning - B_safety``.

    The sizes are rounded down to whole tokens and checked at construction. The safety margin
    defaults to 2 percent of the window, computed in integers as ``window * 2 // 100``; pass
    ``safety=0`` to do without one. Reserves equal to the window leave a context budget of 0.

    The attributes are read-only, and two budgets are equal when their four sizes and their locale
    are equal.

    Args:
        window: W, the model's context window in tokens.
        output: B_out, the tokens reserved for the answer.
        reasoning: B_reasoning, the tokens reserved for internal reasoning; 0 by default.
        safety: B_safety, the safety margin in tokens; 2 percent of the window by default.
        locale: The language of the errors this budget raises, such as ``"fr"``; the current
            default locale when omitted.

    Raises:
        InvalidTypeError: When a size is a bool or not a number (codes ``bool_not_a_number``,
            ``not_a_number``).
        InvalidValueError: When a size is negative, NaN or infinite (codes ``negative_size``,
            ``non_finite_size``).
        UnsupportedLocaleError: When the locale is not English, French or Chinese.
        ContextOverflowError: When the reserves exceed the window (code
            ``reserves_exceed_window``).

    Examples:
        >>> from contextwise import ContextBudget
        >>> budget = ContextBudget(window=32_000, output=2_000, reasoning=4_000)
        >>> budget
        ContextBudget(window=32000, output=2000, reasoning=4000, safety=640, locale=None)
        >>> budget.context_budget()
        25360
    """

    window: int
    """W: the model's context window in tokens."""

    output: int
    """B_out: the tokens reserved for the answer."""

    reasoning: int
    """B_reasoning: the tokens reserved for internal reasoning."""

    safety: int
    """B_safety: the safety margin in tokens, 2 percent of the window by default."""

    locale: Locale | None = None
    """The language of the errors this budget raises, or None for the current default."""

    def __init__(
        self,
        window: float,
        output: float,
        reasoning: float = 0,
        safety: float | None = None,
        *,
        locale: str | None = None,
    ) -> None:
        loc = None if locale is None else normalize_locale(locale)
        sizes = _size(window, "window", loc), _size(output, "output", loc)
        reserves = (
            _size(reasoning, "reasoning", loc),
            (sizes[0] * 2 // 100 if safety is None else _size(safety, "safety", loc)),
        )
        reserved = sizes[1] + reserves[0] + reserves[1]
        if reserved > sizes[0]:
            raise ContextOverflowError(
                "reserves_exceed_window",
                reserved=reserved,
                output=sizes[1],
                reasoning=reserves[0],
                safety=reserves[1],
                window=sizes[0],
                locale=loc,
            )
        # The dataclass's own __init__ would take the sizes unchecked: this one sets the checked
        # values as it would, through object.__setattr__ on the frozen instance.
        for name, value in zip(_BUDGET_FIELDS, (*sizes, *reserves, loc), strict=True):
            object.__setattr__(self, name, value)

    def context_budget(self) -> int:
        """Return the tokens available for the prompt's context.

        Returns:
            The window minus the output, reasoning and safety reserves, in tokens.

        Examples:
            >>> from contextwise import ContextBudget
            >>> budget = ContextBudget(window=10_000, output=1_000, reasoning=2_000, safety=0)
            >>> budget.context_budget()
            7000
        """
        return self.window - self.output - self.reasoning - self.safety

    def _tokens(self, tokens: object) -> float | int:
        return _number(tokens, "tokens", self.locale)

    def fits(self, tokens: float) -> bool:
        """Tell whether a number of tokens fits in the context budget.

        Args:
            tokens: The number of tokens to check, a finite number of zero or more.

        Returns:
            True when ``tokens`` is at most the context budget.

        Raises:
            InvalidTypeError: When ``tokens`` is a bool or not a number.
            InvalidValueError: When ``tokens`` is negative, NaN or infinite.

        Examples:
            >>> from contextwise import ContextBudget
            >>> budget = ContextBudget(window=10_000, output=1_000, safety=0)
            >>> budget.fits(9_000), budget.fits(9_001)
            (True, False)
        """
        return self._tokens(tokens) <= self.context_budget()

    def assert_fits(self, tokens: float) -> None:
        """Raise an error when a number of tokens does not fit in the context budget.

        Args:
            tokens: The number of tokens to check, a finite number of zero or more.

        Raises:
            ContextOverflowError: When ``tokens`` exceeds the context budget (code
                ``context_overflow``, with the parameters ``tokens`` and ``context_budget``).
            InvalidTypeError: When ``tokens`` is a bool or not a number.
            InvalidValueError: When ``tokens`` is negative, NaN or infinite.

        Examples:
            >>> from contextwise import ContextBudget, ContextOverflowError
            >>> budget = ContextBudget(window=10_000, output=1_000, safety=0)
            >>> budget.assert_fits(9_000)
            >>> try:
            ...     budget.assert_fits(12_345)
            ... except ContextOverflowError as err:
            ...     print(err)
            The context does not fit: 12,345 tokens for a context budget of 9,000 tokens.
        """
        value = self._tokens(tokens)
        budget = self.context_budget()
        if value > budget:
            raise ContextOverflowError(
                "context_overflow", tokens=value, context_budget=budget, locale=self.locale
            )

    def plan(
        self,
        segments: Iterable[BudgetSegment | Mapping[str, Any]],
        *,
        strategy: PlanStrategy = "greedy",
    ) -> BudgetPlan:
        """Decide which segments fit in the context budget.

        Required segments come first, in input order: if they do not fit together, the plan fails
        with :class:`ContextOverflowError`, which names them and the shortfall. The optional
        segments are then considered by descending priority, ties in input order:

        - ``"greedy"`` (the default) keeps each optional segment that fits in what remains and
          drops the others, going on with the next one. It fills the budget as much as it can,
          even if that means keeping a lower priority while a higher one was dropped.
        - ``"cutoff"`` keeps whole priority levels, highest first, and stops at the first level
          that does not fit entirely: that level and every lower one are dropped. It never keeps
          a lower priority while dropping a higher one, and segments of equal priority are kept
          or dropped together (the rule of the priompt library).

        ``included`` and ``dropped`` list the ids in input order. The work is linear apart from
        one sort of the optional segments by priority.

        Args:
            segments: The segments, each a :class:`BudgetSegment` or a mapping with the keys
                ``id``, ``tokens`` and optionally ``priority`` and ``required``.
            strategy: ``"greedy"`` or ``"cutoff"``.

        Returns:
            The plan: the reserves, the context budget, the tokens used and remaining, and the ids
            of the segments included and dropped.

        Raises:
            ContextOverflowError: When the required segments do not fit together (code
                ``required_segments_overflow``).
            InvalidValueError: For an unknown strategy (``unknown_strategy``), a duplicate id
                (``duplicate_segment_id``), a mapping without ``id`` or ``tokens``
                (``missing_segment_field``) or with another key (``unknown_segment_field``),
                negative or non-finite tokens (``negative_size``, ``non_finite_size``) or a
                negative or non-finite priority (``invalid_priority``).
            InvalidTypeError: When ``segments`` is not a collection (``not_a_collection``), a
                segment is neither a BudgetSegment nor a mapping (``invalid_segment``), or a field
                has the wrong type (``not_a_string``, ``not_a_number``, ``bool_not_a_number``,
                ``not_a_bool``).

        Examples:
            >>> from contextwise import ContextBudget
            >>> budget = ContextBudget(window=10_000, output=1_000, safety=0)
            >>> plan = budget.plan([
            ...     {"id": "instructions", "tokens": 2_000},
            ...     {"id": "old-history", "tokens": 5_000, "priority": 1, "required": False},
            ...     {"id": "recent-history", "tokens": 3_000, "priority": 3, "required": False},
            ...     {"id": "examples", "tokens": 2_500, "priority": 2, "required": False},
            ... ])
            >>> plan.included, plan.dropped
            (['instructions', 'recent-history', 'examples'], ['old-history'])
            >>> plan.used, plan.remaining
            (7500, 1500)
        """
        locale = self.locale
        if not isinstance(strategy, str) or strategy not in _STRATEGIES:
            raise InvalidValueError(
                "unknown_strategy",
                strategy=short_text(strategy),
                supported=list(_STRATEGIES),
                locale=locale,
            )
        ids, tokens, priorities, kept, optional, required_total = _read_segments(segments, locale)
        if len(set(ids)) != len(ids):
            _raise_duplicate(ids, locale)
        budget = self.context_budget()
        if required_total > budget:
            required_ids = list(compress(ids, kept))
            raise ContextOverflowError(
                "required_segments_overflow",
                segment_ids=required_ids,
                segments=[f"'{segment_id}'" for segment_id in required_ids],
                count=len(required_ids),
                required=required_total,
                shortfall=required_total - budget,
                context_budget=budget,
                locale=locale,
            )
        remaining = budget - required_total
        # A stable sort in reverse keeps ties in input order.
        order = sorted(optional, key=priorities.__getitem__, reverse=True)
        if strategy == "greedy":
            for index in order:
                size = tokens[index]
                if size <= remaining:
                    kept[index] = True
                    remaining -= size
        else:
            remaining = _cutoff(order, tokens, priorities, kept, remaining)
        return BudgetPlan.model_construct(
            window=self.window,
            output_reserved=self.output,
            reasoning_reserved=self.reasoning,
            safety_margin=self.safety,
            context_budget=budget,
            used=budget - remaining,
            remaining=remaining,
            included=list(compress(ids, kept)),
            dropped=list(compress(ids, map(not_, kept))),
        )


def _cutoff(
    order: list[int], tokens: list[int], priorities: list[float], kept: list[bool], remaining: int
) -> int:
    """Keep whole priority levels of ``order`` while they fit; return the tokens that remain."""
    start, end = 0, len(order)
    while start < end:
        level = priorities[order[start]]
        stop, total = start, 0
        while stop < end and priorities[order[stop]] == level:
            total += tokens[order[stop]]
            stop += 1
        if total > remaining:
            break
        for index in order[start:stop]:
            kept[index] = True
        remaining -= total
        start = stop
    return remaining


def _read_segments(
    segments: object, locale: Locale | None
) -> tuple[list[str], list[int], list[float], list[bool], list[int], int]:
    """Check the segments and return their columns, the optional indices and the required total.

    A :class:`BudgetSegment` was checked when it was built and is read as it is; a mapping is
    checked by :func:`_read_segment`.
    """
    if isinstance(segments, str | bytes | Mapping) or not isinstance(segments, Iterable):
        raise InvalidTypeError(
            "not_a_collection", name="segments", type_name=type(segments).__name__, locale=locale
        )
    ids: list[str] = []
    tokens: list[int] = []
    priorities: list[float] = []
    kept: list[bool] = []
    optional: list[int] = []
    required_total = 0
    for index, segment in enumerate(segments):
        if isinstance(segment, BudgetSegment):
            segment_id, size = segment.id, segment.tokens
            priority, required = segment.priority, segment.required
        elif isinstance(segment, Mapping):
            segment_id, size, priority, required = _read_segment(segment, index, locale)
        else:
            raise InvalidTypeError(
                "invalid_segment", index=index, type_name=type(segment).__name__, locale=locale
            )
        ids.append(segment_id)
        tokens.append(size)
        priorities.append(priority)
        kept.append(required)
        if required:
            required_total += size
        else:
            optional.append(index)
    return ids, tokens, priorities, kept, optional, required_total


def _raise_duplicate(ids: list[str], locale: Locale | None) -> None:
    first: dict[str, int] = {}
    for index, segment_id in enumerate(ids):
        previous = first.setdefault(segment_id, index)
        if previous != index:
            raise InvalidValueError(
                "duplicate_segment_id",
                segment_id=segment_id,
                first_index=previous,
                index=index,
                locale=locale,
            )
