"""Request options: the keyword arguments a provider's own SDK takes for a model and an effort."""

from __future__ import annotations

from typing import Any

from contextwise._checks import require_instance
from contextwise.effort import Effort, EffortLevel, clamp_effort
from contextwise.errors import RoutingConfigurationError
from contextwise.routing._model import APIS, MIN_ANTHROPIC_THINKING_TOKENS, ModelSpec


def provider_options(model: ModelSpec | str, effort: EffortLevel | None = None) -> dict[str, Any]:
    """Return the keyword arguments that the model's provider SDK takes for a model and an effort.

    The result goes straight into the SDK's call, next to the messages: OpenAI
    ``client.chat.completions.create(messages=..., **options)`` or
    ``client.responses.create(input=..., **options)``, Anthropic
    ``client.messages.create(messages=..., **options)``, Gemini
    ``client.models.generate_content(contents=..., **options)``. It holds the model name, the
    output limit when the model declares one, and the reasoning or thinking parameters:

    - ``openai-chat``: ``reasoning_effort`` and ``max_completion_tokens``;
    - ``openai-responses``: ``reasoning={"effort": ...}`` and ``max_output_tokens``;
    - ``anthropic``: ``max_tokens`` and ``thinking``: ``{"type": "enabled", "budget_tokens": n}``
      with the level's thinking budget, or ``{"type": "adaptive"}`` with
      ``output_config={"effort": ...}`` when ``effort_names`` names the level, or
      ``{"type": "disabled"}`` for ``none`` or a ``reasoning_tokens`` entry of 0. The API
      rejects a budget below 1,024 tokens, so such a request is never built: an explicit
      ``reasoning_tokens`` entry below it is refused when the :class:`ModelSpec` is made, and a
      default budget that the output limit lowers below it raises an error here instead of
      being sent or silently raised;
    - ``gemini``: ``config={"max_output_tokens": ..., "thinking_config": ...}`` whose
      ``thinking_config`` holds the level's ``thinking_budget`` (0 for ``none``), or its
      ``thinking_level`` (the provider's word in capitals, as the API spells it) when
      ``effort_names`` names the level.

    The effort is clamped to the model's ``supported_efforts`` first, so a level the model
    rejects is never sent. OpenAI takes its words as they are (``none`` included); a level
    listed in ``effort_names`` is sent under the provider's word. Without an effort (neither
    ``effort`` nor the model's own), no reasoning parameter is sent.

    Args:
        model: The model to call, with its ``api``; a bare name is not enough, since the API is
            needed.
        effort: The effort level of this call; the model's own ``effort`` when omitted.

    Returns:
        A new dictionary of keyword arguments for the provider SDK's request.

    Raises:
        RoutingConfigurationError: When the model declares no API (code ``missing_api``), or
            when the Anthropic API is called without an output limit (code
            ``missing_output_limit``), or when the level's default thinking budget, lowered to
            fit the output limit, falls below Anthropic's minimum of 1,024 tokens (code
            ``derived_thinking_budget_below_minimum``, fixed by a ``reasoning_tokens`` entry for
            the level) or the output limit leaves no room for 1,024 thinking tokens and the
            answer (code ``output_limit_below_thinking_minimum``).
        InvalidValueError: When the effort is not an effort level (code ``invalid_effort``).
        InvalidTypeError: When ``model`` is neither a :class:`ModelSpec` nor a name (code
            ``not_an_instance``).

    Examples:
        >>> from contextwise import ModelSpec, provider_options
        >>> provider_options(ModelSpec(name="gpt-5", api="openai-chat"), "none")
        {'model': 'gpt-5', 'reasoning_effort': 'none'}
        >>> provider_options(
        ...     ModelSpec(name="gpt-5", api="openai-responses", effort_names={"low": "minimal"}),
        ...     "low",
        ... )
        {'model': 'gpt-5', 'reasoning': {'effort': 'minimal'}}
        >>> provider_options(
        ...     ModelSpec(name="claude-sonnet-4-6", api="anthropic", max_output_tokens=32_000),
        ...     "medium",
        ... )
        {'model': 'claude-sonnet-4-6', 'max_tokens': 32000,
         'thinking': {'type': 'enabled', 'budget_tokens': 4096}}
        >>> provider_options(ModelSpec(name="gemini-2.5-flash", api="gemini"), "none")
        {'model': 'gemini-2.5-flash', 'config': {'thinking_config': {'thinking_budget': 0}}}
    """
    require_instance(model, (ModelSpec, str), "model", "ModelSpec")
    spec = ModelSpec(name=model) if isinstance(model, str) else model
    if spec.api is None:
        raise RoutingConfigurationError(
            "missing_api", field="api", model=spec.name, supported=list(APIS)
        )
    requested = spec.effort if effort is None else effort
    level = None if requested is None else clamp_effort(requested, spec.supported_efforts)
    if spec.api == "anthropic":
        return _anthropic(spec, level)
    if spec.api == "gemini":
        return _gemini(spec, level)
    options: dict[str, Any] = {"model": spec.name}
    word = None if level is None else _word(spec, level)
    if spec.api == "openai-chat":
        if spec.max_output_tokens is not None:
            options["max_completion_tokens"] = spec.max_output_tokens
        if word is not None:
            options["reasoning_effort"] = word
        return options
    if spec.max_output_tokens is not None:
        options["max_output_tokens"] = spec.max_output_tokens
    if word is not None:
        options["reasoning"] = {"effort": word}
    return options


def _word(spec: ModelSpec, level: Effort) -> str:
    return (spec.effort_names or {}).get(level, level.value)


def _anthropic(spec: ModelSpec, level: Effort | None) -> dict[str, Any]:
    if spec.max_output_tokens is None:
        raise RoutingConfigurationError(
            "missing_output_limit", field="max_output_tokens", model=spec.name, api="anthropic"
        )
    options: dict[str, Any] = {"model": spec.name, "max_tokens": spec.max_output_tokens}
    if level is None:
        return options
    if level is Effort.NONE:
        options["thinking"] = {"type": "disabled"}
    elif level in (spec.effort_names or {}):
        options["thinking"] = {"type": "adaptive"}
        options["output_config"] = {"effort": _word(spec, level)}
    else:
        budget = _anthropic_budget(spec, level)
        options["thinking"] = (
            {"type": "enabled", "budget_tokens": budget} if budget else {"type": "disabled"}
        )
    return options


def _anthropic_budget(spec: ModelSpec, level: Effort) -> int:
    budget = spec.thinking_budget(level)
    explicit = level in (spec.reasoning_tokens or {})
    if budget >= MIN_ANTHROPIC_THINKING_TOKENS or (explicit and budget == 0):
        return budget
    limit = spec.max_output_tokens
    params: dict[str, Any] = {
        "model": spec.name,
        "level": level.value,
        "limit": limit,
        "minimum": MIN_ANTHROPIC_THINKING_TOKENS,
        "api": "anthropic",
    }
    if limit is not None and limit > MIN_ANTHROPIC_THINKING_TOKENS:
        raise RoutingConfigurationError(
            "derived_thinking_budget_below_minimum",
            field="reasoning_tokens",
            tokens=budget,
            **params,
        )
    raise RoutingConfigurationError(
        "output_limit_below_thinking_minimum", field="max_output_tokens", **params
    )


def _gemini(spec: ModelSpec, level: Effort | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if spec.max_output_tokens is not None:
        config["max_output_tokens"] = spec.max_output_tokens
    if level is not None:
        if level in (spec.effort_names or {}):
            config["thinking_config"] = {"thinking_level": _word(spec, level).upper()}
        else:
            config["thinking_config"] = {"thinking_budget": spec.thinking_budget(level)}
    options: dict[str, Any] = {"model": spec.name}
    if config:
        options["config"] = config
    return options
