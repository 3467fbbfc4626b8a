"""What a model call spent: :class:`Usage`, one meaning for every provider, and :func:`usage_from`.

The package :mod:`contextwise.accounting` documents it and re-exports its public names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from pydantic import ConfigDict, Field, field_validator, model_validator

from contextwise._translation import short_repr
from contextwise._validation import CodedModel
from contextwise.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "CACHE_RETENTIONS",
    "USAGE_SOURCES",
    "CacheRetention",
    "Usage",
    "UsageSource",
    "WithUsage",
    "usage_from",
]

CacheRetention: TypeAlias = str
"""How long a cache write is kept: ``5m``, ``1h``, or the provider's own word (``default`` when
the provider does not say)."""

CACHE_RETENTIONS: tuple[str, ...] = ("5m", "1h", "default")
"""The retentions that :func:`usage_from` reports; a :class:`Usage` built by hand may use others."""

UsageSource: TypeAlias = Literal[
    "openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "pydantic-ai",
    "openai-agents",
]
"""The shapes of usage that :func:`usage_from` reads."""

USAGE_SOURCES: tuple[UsageSource, ...] = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "langchain",
    "pydantic-ai",
    "openai-agents",
)
"""The accepted values of ``usage_from(..., source=...)``."""


class Usage(CodedModel):
    """The tokens one model call spent, with one meaning for every provider.

    ``input_tokens`` is all the input, cached and cache-written tokens included;
    ``cached_input_tokens`` and ``cache_write_tokens`` are parts of it. ``output_tokens`` is all
    the output, reasoning included; ``reasoning_tokens`` is the part of it spent thinking. Cache
    writes are kept by retention (``5m``, ``1h``, or the provider's word), because providers bill
    them at different prices. Usages add up with ``+``. The module's table says how each
    provider's fields map here; :func:`usage_from` reads them.

    Raises:
        InvalidValueError: When a count is negative or not a whole number (code
            ``wrong_type`` or ``out_of_range``), or when the parts exceed their whole: cached
            and cache-written tokens above the input, reasoning above the output (code
            ``inconsistent_usage``).

    Examples:
        >>> from contextwise import Usage
        >>> usage = Usage(input_tokens=1200, cached_input_tokens=1000, output_tokens=80)
        >>> usage.uncached_input_tokens, usage.total_tokens
        (200, 1280)
        >>> (usage + Usage(input_tokens=300, output_tokens=20)).input_tokens
        1500
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = Field(default=0, ge=0, strict=True)
    """All the input tokens of the call: uncached, read from the cache and written to it."""

    cached_input_tokens: int = Field(default=0, ge=0, strict=True)
    """The input tokens read from the provider's prompt cache, a part of ``input_tokens``."""

    cache_write_tokens: dict[str, int] = Field(default_factory=dict)
    """The input tokens written to the prompt cache, by retention (``5m``, ``1h``, or the
    provider's word), a part of ``input_tokens``."""

    output_tokens: int = Field(default=0, ge=0, strict=True)
    """All the output tokens, reasoning included."""

    reasoning_tokens: int = Field(default=0, ge=0, strict=True)
    """The output tokens spent reasoning, a part of ``output_tokens``."""

    @field_validator("cache_write_tokens", mode="before")
    @classmethod
    def _check_writes(cls, writes: object) -> object:
        if isinstance(writes, Mapping):
            for retention, tokens in writes.items():
                if isinstance(tokens, bool) or not isinstance(tokens, int):
                    raise InvalidValueError(
                        "wrong_type",
                        field=f"cache_write_tokens.{retention}",
                        expected="integer",
                        value=short_repr(tokens),
                    )
        return writes

    @model_validator(mode="after")
    def _check_parts(self) -> Usage:
        for retention, tokens in self.cache_write_tokens.items():
            if isinstance(tokens, bool) or tokens < 0 or not retention:
                raise InvalidValueError(
                    "out_of_range",
                    field=f"cache_write_tokens.{retention}",
                    constraint="≥ 0",
                    value=short_repr(tokens),
                )
        written = self.total_cache_write_tokens
        if self.cached_input_tokens + written > self.input_tokens:
            raise InvalidValueError(
                "inconsistent_usage",
                part="cached_input_tokens + cache_write_tokens",
                part_value=self.cached_input_tokens + written,
                whole="input_tokens",
                whole_value=self.input_tokens,
            )
        if self.reasoning_tokens > self.output_tokens:
            raise InvalidValueError(
                "inconsistent_usage",
                part="reasoning_tokens",
                part_value=self.reasoning_tokens,
                whole="output_tokens",
                whole_value=self.output_tokens,
            )
        return self

    @property
    def total_cache_write_tokens(self) -> int:
        """The input tokens written to the cache, all retentions together."""
        return sum(self.cache_write_tokens.values())

    @property
    def uncached_input_tokens(self) -> int:
        """The input tokens neither read from nor written to the cache."""
        return self.input_tokens - self.cached_input_tokens - self.total_cache_write_tokens

    @property
    def total_tokens(self) -> int:
        """The input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: object) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        writes = dict(self.cache_write_tokens)
        for retention, tokens in other.cache_write_tokens.items():
            writes[retention] = writes.get(retention, 0) + tokens
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=writes,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    def __radd__(self, other: object) -> Usage:
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return self  # sum() starts from 0
        return NotImplemented

    def __hash__(self) -> int:
        return hash(
            (
                self.input_tokens,
                self.cached_input_tokens,
                tuple(sorted(self.cache_write_tokens.items())),
                self.output_tokens,
                self.reasoning_tokens,
            )
        )


@dataclass(frozen=True, slots=True)
class WithUsage:
    """A result returned with what it cost: how a compressor reports the model call it made.

    A compressor that calls a model to write its summary returns ``WithUsage(summary, usage,
    model)`` instead of the bare summary; the policy uses the summary and records the usage on
    the step's change (:attr:`~contextwise.policy.ContextChange.usage`), and a session's ledger
    prices it as a summarizer call.

    Examples:
        >>> from contextwise import Usage, WithUsage
        >>> def summarize(messages):
        ...     usage = Usage(input_tokens=900, output_tokens=60)
        ...     return WithUsage("The user asked for a budget.", usage, "small-model")
        >>> summarize([]).usage.total_tokens
        960
    """

    value: Any
    """The result itself: a summary text or message."""

    usage: Usage
    """The tokens spent making it."""

    model: str | None = None
    """The model that made it, for pricing."""


# --- reading a provider's usage ---------------------------------------------------------------


def _get(source: Any, *names: str) -> Any:
    """The first of ``names`` that ``source`` has (a mapping key or an attribute), else None."""
    if source is None:
        return None
    for name in names:
        if isinstance(source, Mapping):
            if name in source:
                return source[name]
        else:
            value = getattr(source, name, None)
            if value is not None:
                return value
    return None


def _has(source: Any, *names: str) -> bool:
    if isinstance(source, Mapping):
        return any(name in source for name in names)
    return any(getattr(source, name, None) is not None for name in names)


def _count(source: Any, *names: str) -> int:
    value = _get(source, *names)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValueError(
            "wrong_type", field=names[0], expected="integer", value=short_repr(value)
        )
    return int(value)


def _writes(**by_retention: int) -> dict[str, int]:
    return {retention: tokens for retention, tokens in by_retention.items() if tokens}


def _openai_chat(usage: Any) -> Usage:
    return Usage(
        input_tokens=_count(usage, "prompt_tokens"),
        cached_input_tokens=_count(_get(usage, "prompt_tokens_details"), "cached_tokens"),
        output_tokens=_count(usage, "completion_tokens"),
        reasoning_tokens=_count(_get(usage, "completion_tokens_details"), "reasoning_tokens"),
    )


def _openai_responses(usage: Any) -> Usage:
    details = _get(usage, "input_tokens_details")
    return Usage(
        input_tokens=_count(usage, "input_tokens"),
        cached_input_tokens=_count(details, "cached_tokens"),
        cache_write_tokens=_writes(default=_count(details, "cache_write_tokens")),
        output_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(_get(usage, "output_tokens_details"), "reasoning_tokens"),
    )


def _anthropic(usage: Any) -> Usage:
    read = _count(usage, "cache_read_input_tokens")
    created = _count(usage, "cache_creation_input_tokens")
    breakdown = _get(usage, "cache_creation")
    if breakdown is not None:
        hour = _count(breakdown, "ephemeral_1h_input_tokens")
        minutes = _count(breakdown, "ephemeral_5m_input_tokens")
        created = max(created, hour + minutes)
        writes = _writes(**{"5m": created - hour, "1h": hour})
    else:
        writes = _writes(**{"5m": created})
    return Usage(
        input_tokens=_count(usage, "input_tokens") + read + created,
        cached_input_tokens=read,
        cache_write_tokens=writes,
        output_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(_get(usage, "output_tokens_details"), "thinking_tokens"),
    )


def _gemini(usage: Any) -> Usage:
    thoughts = _count(usage, "thoughts_token_count", "thoughtsTokenCount")
    return Usage(
        input_tokens=_count(usage, "prompt_token_count", "promptTokenCount")
        + _count(usage, "tool_use_prompt_token_count", "toolUsePromptTokenCount"),
        cached_input_tokens=_count(usage, "cached_content_token_count", "cachedContentTokenCount"),
        output_tokens=_count(usage, "candidates_token_count", "candidatesTokenCount") + thoughts,
        reasoning_tokens=thoughts,
    )


def _langchain(usage: Any) -> Usage:
    details = _get(usage, "input_token_details")
    return Usage(
        input_tokens=_count(usage, "input_tokens"),
        cached_input_tokens=_count(details, "cache_read"),
        cache_write_tokens=_writes(default=_count(details, "cache_creation")),
        output_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(_get(usage, "output_token_details"), "reasoning"),
    )


def _pydantic_ai(usage: Any) -> Usage:
    written = _count(usage, "cache_write_tokens")
    hour = _count(usage, "cache_write_1h_tokens")
    return Usage(
        input_tokens=_count(usage, "input_tokens"),
        cached_input_tokens=_count(usage, "cache_read_tokens"),
        cache_write_tokens=_writes(**{"5m": max(written - hour, 0), "1h": hour}),
        output_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(_get(usage, "details"), "reasoning_tokens"),
    )


_READERS: Mapping[str, Callable[[Any], Usage]] = MappingProxyType(
    {
        "openai-chat": _openai_chat,
        "openai-responses": _openai_responses,
        "anthropic": _anthropic,
        "gemini": _gemini,
        "langchain": _langchain,
        "pydantic-ai": _pydantic_ai,
        "openai-agents": _openai_responses,
    }
)


_MODULES = (
    ("anthropic.", "anthropic"),
    ("openai.types.responses.", "openai-responses"),
    ("openai.types.", "openai-chat"),
    ("google.genai.", "gemini"),
    ("pydantic_ai.", "pydantic-ai"),
    ("agents.", "openai-agents"),
)
"""The SDK of a usage object, by the module of its class (an object leaves out unset fields)."""


def _shape(usage: Any) -> str | None:
    """The source of ``usage``: its SDK's, else the one whose fields it has, or None."""
    if not isinstance(usage, Mapping):
        module = type(usage).__module__ + "."
        for prefix, source in _MODULES:
            if module.startswith(prefix):
                return source
    if _has(usage, "prompt_token_count", "promptTokenCount", "candidates_token_count",
            "candidatesTokenCount"):
        return "gemini"
    if _has(usage, "prompt_tokens", "completion_tokens"):
        return "openai-chat"
    if _has(usage, "cache_creation_input_tokens", "cache_read_input_tokens", "cache_creation"):
        return "anthropic"
    if _has(usage, "input_token_details", "output_token_details"):
        return "langchain"
    if _has(usage, "input_tokens_details", "output_tokens_details"):
        return "openai-responses"
    if _has(usage, "cache_read_tokens", "cache_write_tokens", "details"):
        return "pydantic-ai"
    if _has(usage, "input_tokens", "output_tokens"):
        return "langchain"  # plain input and output: every source means the same by them
    return None


_CONTAINERS = ("usage", "usage_metadata", "usageMetadata")


def _unwrap(response: Any) -> Any:
    """The usage inside a response: its ``usage`` (called when it is a method, as on a
    pydantic-ai run result), ``usage_metadata`` or ``usageMetadata``, or the Agents SDK's
    ``context_wrapper.usage``; the response itself when it has none of them."""
    wrapper = None if isinstance(response, Mapping) else getattr(response, "context_wrapper", None)
    if wrapper is not None and getattr(wrapper, "usage", None) is not None:
        return wrapper.usage
    for name in _CONTAINERS:
        inner = _get(response, name)
        if inner is None:
            continue
        if callable(inner) and not isinstance(inner, Mapping) and not _shape(inner):
            inner = inner()
        return inner
    return response


def usage_from(response: Any, *, source: UsageSource | None = None) -> Usage:
    """Read the usage of a model call from a provider's response, as an object or a dict.

    It reads OpenAI chat completions and Responses, Anthropic messages, Gemini responses,
    LangChain messages (``usage_metadata``), pydantic-ai responses and run results (and their
    ``RequestUsage`` or ``RunUsage``) and the OpenAI Agents SDK's run results and ``Usage``: the
    response itself, or only its usage part, as the SDK's object or the equivalent dict. The
    source is recognised by its field names; ``source=`` names it when a dict is ambiguous.
    The module's table says how each provider's fields map.

    Args:
        response: The response, or its usage part.
        source: The shape to read, one of :data:`USAGE_SOURCES`; recognised from the fields
            when omitted.

    Returns:
        The usage.

    Raises:
        InvalidTypeError: When nothing in the response looks like a usage (code
            ``unknown_usage_shape``).
        InvalidValueError: When ``source`` is not a known source (code ``invalid_choice``), or
            a count is not a whole number (code ``wrong_type``) or is inconsistent (code
            ``inconsistent_usage``).

    Examples:
        >>> from contextwise import usage_from
        >>> usage_from({"usage": {"prompt_tokens": 1200, "completion_tokens": 40,
        ...     "prompt_tokens_details": {"cached_tokens": 1024}}}).cached_input_tokens
        1024
        >>> anthropic = usage_from({"usage": {"input_tokens": 50, "output_tokens": 12,
        ...     "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 300}})
        >>> anthropic.input_tokens, anthropic.cache_write_tokens
        (2350, {'5m': 300})
    """
    if isinstance(response, Usage):
        return response
    if source is not None and (not isinstance(source, str) or source not in _READERS):
        raise InvalidValueError(
            "invalid_choice", field="source", expected=list(USAGE_SOURCES), value=short_repr(source)
        )
    usage = _unwrap(response)
    shape = source or _shape(usage)
    if shape is None or usage is None or isinstance(usage, str | bytes | int | float):
        raise InvalidTypeError("unknown_usage_shape", type_name=type(response).__name__)
    return _READERS[shape](usage)
