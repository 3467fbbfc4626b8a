"""The cost ledger: every call's usage and price, totalled per model and per kind.

The package :mod:`contextwise.accounting` documents it and re-exports its public names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from contextwise._checks import require_instance, require_mapping
from contextwise._translation import short_repr
from contextwise.accounting._prices import Cost, ModelPrices, cost
from contextwise.accounting._usage import Usage, usage_from
from contextwise.errors import ContextwiseError, InvalidTypeError, InvalidValueError

__all__ = [
    "USAGE_KINDS",
    "UsageKind",
    "UsageLedger",
    "UsageRecord",
    "UsageSummary",
    "UsageTotals",
    "price_usage",
    "summarize_usage",
]

UsageKind: TypeAlias = Literal["model", "summarizer", "router"]
"""Who spent the tokens: the harness's model, a compressor's summary, or a routing decision."""

USAGE_KINDS: tuple[UsageKind, ...] = ("model", "summarizer", "router")
"""The accepted values of a record's ``kind``."""


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One call in the ledger: its usage, its model, its kind and its price.

    Examples:
        >>> from contextwise import Usage, price_usage
        >>> record = price_usage(Usage(input_tokens=1000, output_tokens=50), model="gpt-5")
        >>> record.kind, record.cost is not None
        ('model', True)
    """

    usage: Usage
    """The tokens the call spent."""

    model: str | None
    """The model's name, or ``None`` when it was not given."""

    kind: UsageKind
    """Who spent the tokens: ``model``, ``summarizer`` or ``router``."""

    cost: Cost | None
    """The call's price, or ``None`` when no price is known for its model."""

    at: datetime
    """When the call was recorded, in UTC."""

    step: int | None = None
    """The harness step the call belongs to, when given."""

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data, as a session store keeps it."""
        price = self.cost
        return {
            "usage": self.usage.model_dump(),
            "model": self.model,
            "kind": self.kind,
            "at": self.at.isoformat(),
            "step": self.step,
            "cost": None
            if price is None
            else {
                "input": str(price.input),
                "output": str(price.output),
                "source": price.source,
                "model": price.model,
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UsageRecord:
        """Read a record that :meth:`to_json` wrote.

        Args:
            data: The JSON data.

        Returns:
            The record.

        Raises:
            InvalidTypeError: When the data is not a mapping (code ``not_a_mapping``).
            InvalidValueError: When it is not a record that :meth:`to_json` wrote (code
                ``invalid_value``).
        """
        require_mapping(data, "data")
        try:
            record = _record_from_json(cls, data)
        except ContextwiseError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError):
            raise InvalidValueError("invalid_value", field="data", value=short_repr(data)) from None
        for field, value, expected in (
            ("model", record.model, str | None),
            ("kind", record.kind, str),
            ("step", record.step, int | None),
        ):
            if not isinstance(value, expected) or isinstance(value, bool):
                raise InvalidValueError("invalid_value", field=field, value=short_repr(value))
        return record


def _record_from_json(cls: type[UsageRecord], data: Mapping[str, Any]) -> UsageRecord:
    price = data.get("cost")
    return cls(
        usage=Usage.model_validate(data["usage"]),
        model=data.get("model"),
        kind=data["kind"],
        cost=None
        if price is None
        else Cost(Decimal(price["input"]), Decimal(price["output"]), price["source"],
                  price["model"]),
        at=datetime.fromisoformat(data["at"]),
        step=data.get("step"),
    )


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """The usage and price of several calls added up.

    Examples:
        >>> from contextwise import summarize_usage
        >>> totals = summarize_usage([]).total
        >>> totals.calls, totals.cost
        (0, Decimal('0'))
    """

    calls: int
    """How many calls."""

    usage: Usage
    """Their usage, added up."""

    cost: Decimal
    """The price of the priced calls, in US dollars."""

    unpriced_calls: int = 0
    """How many calls had no known price (their tokens are in ``usage``, not in ``cost``)."""

    @property
    def cache_hit_share(self) -> float:
        """The share of the input tokens read from the cache, from 0 to 1."""
        tokens = self.usage.input_tokens
        return self.usage.cached_input_tokens / tokens if tokens else 0.0


@dataclass(frozen=True, slots=True)
class UsageSummary:
    """The ledger's totals: all the calls, per model and per kind.

    Examples:
        >>> from contextwise import Usage, UsageLedger
        >>> ledger = UsageLedger()
        >>> _ = ledger.record(Usage(input_tokens=2000, cached_input_tokens=1500, output_tokens=90),
        ...     model="gpt-5")
        >>> _ = ledger.record(Usage(input_tokens=600, output_tokens=40), model="gpt-5-nano",
        ...     kind="summarizer")
        >>> summary = ledger.summary()
        >>> summary.total.calls, sorted(summary.by_kind), summary.by_model["gpt-5"].cache_hit_share
        (2, ['model', 'summarizer'], 0.75)
    """

    records: tuple[UsageRecord, ...]
    """Every call, in the order recorded."""

    total: UsageTotals
    """All the calls together."""

    by_model: dict[str, UsageTotals]
    """The calls of each model (``""`` for those recorded without one)."""

    by_kind: dict[str, UsageTotals]
    """The calls of each kind: ``model``, ``summarizer``, ``router``."""


def price_usage(
    usage: Usage,
    *,
    model: Any = None,
    kind: UsageKind = "model",
    step: int | None = None,
    prices: ModelPrices | None = None,
    at: datetime | None = None,
) -> UsageRecord:
    """Make a ledger record: check the usage and price it when a price is known.

    The price comes from :func:`~contextwise.cost`: ``prices``, the model spec's prices, or
    genai-prices' table. A model that no table knows, or genai-prices not being installed,
    leaves the record unpriced (``cost`` is ``None``) rather than failing the call.

    Args:
        usage: The call's usage, or anything :func:`~contextwise.usage_from` reads.
        model: The model: its name or a :class:`~contextwise.routing.ModelSpec`.
        kind: Who spent the tokens: ``model``, ``summarizer`` or ``router``.
        step: The harness step, when the caller counts them.
        prices: The prices to apply, instead of the model's or the table's.
        at: When the call was made; now when omitted.

    Returns:
        The record.

    Raises:
        InvalidValueError: When ``kind`` is not a usage kind (code ``invalid_choice``).
        InvalidTypeError: When the usage cannot be read (code ``unknown_usage_shape``) or the
            model is neither a name nor a model spec (code ``not_a_string``).

    Examples:
        >>> from contextwise import Usage, price_usage
        >>> price_usage(Usage(input_tokens=10), model="no-such-model").cost is None
        True
    """
    if kind not in USAGE_KINDS:
        raise InvalidValueError(
            "invalid_choice", field="kind", expected=list(USAGE_KINDS), value=short_repr(kind)
        )
    usage = usage_from(usage)
    name = getattr(model, "name", model)
    if name is not None and not isinstance(name, str):
        raise InvalidTypeError("not_a_string", name="model", type_name=type(model).__name__)
    price: Cost | None = None
    if name is not None or prices is not None:
        try:
            price = cost(usage, "" if name is None else model, prices=prices, at=at)
        except ContextwiseError as exc:
            if exc.code not in ("unknown_model_price", "missing_extra"):
                raise
    return UsageRecord(usage, name, kind, price, at or datetime.now(UTC), step)


def _totals(records: list[UsageRecord]) -> UsageTotals:
    usage = sum((record.usage for record in records), Usage())
    priced = [record.cost.total for record in records if record.cost is not None]
    return UsageTotals(len(records), usage, sum(priced, Decimal(0)), len(records) - len(priced))


def summarize_usage(records: Iterable[UsageRecord]) -> UsageSummary:
    """Total ledger records: all of them, per model and per kind.

    Args:
        records: The records.

    Returns:
        The summary.

    Raises:
        InvalidTypeError: When ``records`` is not a collection of :class:`UsageRecord` (codes
            ``not_a_collection``, ``not_an_instance``).

    Examples:
        >>> from contextwise import Usage, price_usage, summarize_usage
        >>> summarize_usage([price_usage(Usage(input_tokens=5), model="m")]).by_model["m"].calls
        1
    """
    if isinstance(records, str | bytes | Mapping) or not isinstance(records, Iterable):
        raise InvalidTypeError(
            "not_a_collection", name="records", type_name=type(records).__name__
        )
    kept = list(records)
    for record in kept:
        require_instance(record, UsageRecord, "records[]", "UsageRecord")
    models: dict[str, list[UsageRecord]] = {}
    kinds: dict[str, list[UsageRecord]] = {}
    for record in kept:
        models.setdefault(record.model or "", []).append(record)
        kinds.setdefault(record.kind, []).append(record)
    return UsageSummary(
        tuple(kept),
        _totals(kept),
        {model: _totals(group) for model, group in models.items()},
        {kind: _totals(group) for kind, group in kinds.items()},
    )


class UsageLedger:
    """A cost ledger in memory: record each call's usage, then read the totals.

    Examples:
        >>> from contextwise import UsageLedger
        >>> ledger = UsageLedger()
        >>> record = ledger.record({"usage": {"prompt_tokens": 1200, "completion_tokens": 30}},
        ...     model="gpt-5")
        >>> ledger.summary().total.usage.input_tokens
        1200
    """

    def __init__(self) -> None:
        self._records: list[UsageRecord] = []

    def record(
        self,
        usage: Any,
        *,
        model: Any = None,
        kind: UsageKind = "model",
        step: int | None = None,
        prices: ModelPrices | None = None,
    ) -> UsageRecord:
        """Record one call, priced by :func:`price_usage`.

        Args:
            usage: The call's usage, or a response :func:`~contextwise.usage_from` reads.
            model: The model: its name or a model spec.
            kind: Who spent the tokens: ``model``, ``summarizer`` or ``router``.
            step: The harness step, when the caller counts them.
            prices: The prices to apply, instead of the model's or the table's.

        Returns:
            The record.
        """
        record = price_usage(usage, model=model, kind=kind, step=step, prices=prices)
        self._records.append(record)
        return record

    @property
    def records(self) -> tuple[UsageRecord, ...]:
        """Every call recorded, in order."""
        return tuple(self._records)

    def summary(self) -> UsageSummary:
        """The totals: all the calls, per model and per kind."""
        return summarize_usage(self._records)
