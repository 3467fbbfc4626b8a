"""What a model call costs: :func:`cost` prices a :class:`~contextwise.Usage`.

The package :mod:`contextwise.accounting` documents it and re-exports its public names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from pydantic import ConfigDict, Field, field_validator

from contextwise._checks import require_instance, require_string
from contextwise._translation import short_repr
from contextwise._validation import CodedModel
from contextwise.accounting._usage import Usage
from contextwise.errors import InvalidTypeError, InvalidValueError, MissingDependencyError

__all__ = ["Cost", "CostSource", "ModelPrices", "PriceTier", "cost"]

PER_TOKENS = 1_000_000
"""Prices are per million tokens."""

CostSource: TypeAlias = Literal["genai-prices", "model-prices"]
"""Where a price came from: the genai-prices table, or :class:`ModelPrices`."""


def _price(value: object) -> object:
    """A price: a finite number of zero or more, never a string or a bool."""
    if value is None or isinstance(value, Decimal):
        number = value
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidTypeError("not_a_number", name="price", type_name=type(value).__name__)
    elif isinstance(value, int):
        number = Decimal(int(value))
    else:
        number = Decimal(repr(float(value)))
    if number is not None and (not number.is_finite() or number < 0):
        raise InvalidValueError("invalid_price", value=short_repr(value))
    return number


class _Prices(CodedModel):
    """What :class:`PriceTier` and :class:`ModelPrices` share: their prices are checked alike.

    Each declares its own fields, in the order its page documents them; the checks name them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("input", "output", "cached_input", mode="before", check_fields=False)
    @classmethod
    def _check_price(cls, value: object) -> object:
        return _price(value)

    @field_validator("cache_write", mode="before", check_fields=False)
    @classmethod
    def _check_cache_write(cls, value: object) -> object:
        if isinstance(value, dict):
            return {key: _price(price) for key, price in value.items()}
        return value


class PriceTier(_Prices):
    """The prices of a call whose input is above a number of tokens (a long-context price).

    As in the providers' price lists, crossing a tier prices all the call's tokens at the
    tier's prices, not only those above it.

    Examples:
        >>> from contextwise import PriceTier
        >>> PriceTier(above_input_tokens=200_000, input=6, output=22.5).above_input_tokens
        200000
    """

    above_input_tokens: int = Field(ge=0, strict=True)
    """The tier applies to a call whose ``input_tokens`` is above this number."""

    input: Decimal
    """The price of a million uncached input tokens, in US dollars."""

    output: Decimal
    """The price of a million output tokens (reasoning included), in US dollars."""

    cached_input: Decimal | None = None
    """The price of a million input tokens read from the cache; the input price when omitted."""

    cache_write: dict[str, Decimal] = Field(default_factory=dict)
    """The price of a million input tokens written to the cache, by retention (``5m``, ``1h``,
    ``default``); a retention without a price takes ``default``'s, else the input price."""


class ModelPrices(_Prices):
    """A model's prices per million tokens, in US dollars, given by the application.

    Give it as ``ModelSpec(..., prices=...)`` or to :func:`cost` directly. Prices are numbers
    (an ``int``, a ``float`` or a :class:`~decimal.Decimal`), never strings.

    Raises:
        InvalidTypeError: When a price is not a number (code ``not_a_number``).
        InvalidValueError: When a price is negative or not finite (code ``invalid_price``), or
            a field is unknown or missing.

    Examples:
        >>> from contextwise import ModelPrices
        >>> prices = ModelPrices(input=3, output=15, cached_input=0.3,
        ...     cache_write={"5m": 3.75, "1h": 6},
        ...     tiers=[{"above_input_tokens": 200_000, "input": 6, "output": 22.5}])
        >>> prices.cache_write["1h"]
        Decimal('6')
    """

    input: Decimal
    """The price of a million uncached input tokens, in US dollars."""

    output: Decimal
    """The price of a million output tokens (reasoning included), in US dollars."""

    cached_input: Decimal | None = None
    """The price of a million input tokens read from the cache; the input price when omitted."""

    cache_write: dict[str, Decimal] = Field(default_factory=dict)
    """The price of a million input tokens written to the cache, by retention (``5m``, ``1h``,
    ``default``); a retention without a price takes ``default``'s, else the input price."""

    tiers: tuple[PriceTier, ...] = ()
    """Higher prices for calls with a long input, by ``above_input_tokens``."""

    def tier_for(self, usage: Usage) -> PriceTier | ModelPrices:
        """The prices that apply to a call: the highest tier its input is above, else these.

        Args:
            usage: The call's usage.

        Returns:
            The tier, or this object.
        """
        chosen: PriceTier | ModelPrices = self
        for tier in sorted(self.tiers, key=lambda tier: tier.above_input_tokens):
            if usage.input_tokens > tier.above_input_tokens:
                chosen = tier
        return chosen


def _amounts(prices: PriceTier | ModelPrices, usage: Usage) -> tuple[Decimal, Decimal]:
    """The input and output amounts of a usage at these prices, in dollars."""
    cached = prices.input if prices.cached_input is None else prices.cached_input
    fallback = prices.cache_write.get("default", prices.input)
    paid = Decimal(usage.uncached_input_tokens) * prices.input
    paid += Decimal(usage.cached_input_tokens) * cached
    for retention, written in usage.cache_write_tokens.items():
        paid += Decimal(written) * prices.cache_write.get(retention, fallback)
    return paid / PER_TOKENS, Decimal(usage.output_tokens) * prices.output / PER_TOKENS


@dataclass(frozen=True, slots=True)
class Cost:
    """The price of one or more model calls, in US dollars.

    Examples:
        >>> from contextwise import Cost
        >>> from decimal import Decimal
        >>> Cost(Decimal("0.003"), Decimal("0.0015"), "model-prices", "m").total
        Decimal('0.0045')
    """

    input: Decimal
    """The price of the input: uncached, read from the cache and written to it."""

    output: Decimal
    """The price of the output, reasoning included."""

    source: CostSource
    """Where the prices came from."""

    model: str
    """The model the prices are for, as the price table knows it."""

    @property
    def total(self) -> Decimal:
        """The input and the output together."""
        return self.input + self.output


def _genai_prices() -> Any:
    try:
        import genai_prices
    except ImportError as exc:
        raise MissingDependencyError(
            "missing_extra", module="contextwise.cost", package="genai-prices", extra="prices"
        ) from exc
    return genai_prices


def cost(
    usage: Usage,
    model: Any,
    *,
    prices: ModelPrices | None = None,
    provider: str | None = None,
    at: datetime | None = None,
) -> Cost:
    """Price one model call, or the summed usage of several calls of one model.

    The prices are, in this order: ``prices`` when given; the ``prices`` of ``model`` when it
    is a :class:`~contextwise.routing.ModelSpec` that has them; else genai-prices' table for
    the model's name, with its tiers (chosen by the call's input tokens) and its cache-write
    prices by retention. A summed usage of many calls is priced as one call, which is exact
    unless a tier applies.

    Args:
        usage: The call's usage.
        model: The model: its name, or a ``ModelSpec``.
        prices: The prices to apply, instead of the model's or the table's.
        provider: The provider's id in genai-prices (``openai``, ``anthropic``, ``google``...),
            when the model's name alone is ambiguous.
        at: When the call was made, for a price that changed over time; now when omitted.

    Returns:
        The cost.

    Raises:
        InvalidTypeError: When ``usage`` is not a :class:`~contextwise.Usage`, the model is
            neither a name nor a model spec (code ``not_a_string``), ``prices`` is not a
            :class:`ModelPrices` (code ``not_an_instance``), ``provider`` is not a string
            (``not_a_string``) or ``at`` is not a ``datetime`` (``not_an_instance``).
        InvalidValueError: When genai-prices does not know the model (code
            ``unknown_model_price``).
        MissingDependencyError: When prices are needed from genai-prices and it is not
            installed (code ``missing_extra``).

    Examples:
        >>> from contextwise import ModelPrices, Usage, cost
        >>> usage = Usage(input_tokens=10_000, cached_input_tokens=8_000, output_tokens=500)
        >>> cost(usage, "my-model", prices=ModelPrices(input=2, output=8, cached_input=0.2)).total
        Decimal('0.0096')
        >>> cost(usage, "gpt-5").source
        'genai-prices'
    """
    if not isinstance(usage, Usage):
        raise InvalidTypeError("not_a_usage", type_name=type(usage).__name__)
    name = getattr(model, "name", model)
    if not isinstance(name, str):
        raise InvalidTypeError("not_a_string", name="model", type_name=type(model).__name__)
    if prices is not None:
        require_instance(prices, ModelPrices, "prices", "ModelPrices")
    if provider is not None:
        require_string(provider, "provider")
    if at is not None:
        require_instance(at, datetime, "at", "datetime")
    chosen = prices if prices is not None else getattr(model, "prices", None)
    if chosen is not None:
        tier = chosen.tier_for(usage)
        paid_in, paid_out = _amounts(tier, usage)
        return Cost(paid_in, paid_out, "model-prices", name)
    return _table_cost(usage, name, provider, at)


def _table_cost(usage: Usage, name: str, provider: str | None, at: datetime | None) -> Cost:
    prices = _genai_prices()
    hour = usage.cache_write_tokens.get("1h", 0)
    counted = prices.Usage(
        input_tokens=usage.input_tokens,
        cache_read_tokens=usage.cached_input_tokens,
        cache_write_tokens=usage.total_cache_write_tokens,
        cache_write_1h_tokens=hour or None,
        output_tokens=usage.output_tokens,
    )
    try:
        priced = prices.calc_price(
            counted, name, provider_id=provider, genai_request_timestamp=at
        )
    except LookupError as exc:
        # The provider, when given, prefixes the name as LiteLLM and genai-prices write it
        # ("provider/model"): a parameter carries no words or punctuation of one language.
        model = f"{provider}/{name}" if provider else name
        raise InvalidValueError("unknown_model_price", model=model) from exc
    return Cost(
        Decimal(priced.input_price), Decimal(priced.output_price), "genai-prices", priced.model.id
    )

