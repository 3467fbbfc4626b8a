"""Accounting: what each model call spent, what it costs, and the ledger that totals them.

What a model call spent: :class:`Usage`, one meaning for every provider, and :func:`usage_from`.

Every provider reports the tokens of a call, each in its own words: OpenAI counts the cached
tokens inside the prompt, Anthropic reports the uncached input only and the cache reads and
writes beside it, Gemini counts the thinking and the tool-use prompt apart. :class:`Usage` gives
them one meaning, and :func:`usage_from` reads the usage of a provider's response, as the SDK's
own object or as the equivalent dict.

How each provider's fields map to :class:`Usage`:

| Source | `input_tokens` | `cached_input_tokens` | `cache_write_tokens` | `output_tokens` | `reasoning_tokens` |
|---|---|---|---|---|---|
| OpenAI chat completions (`usage`) | `prompt_tokens` | `prompt_tokens_details.cached_tokens` | none | `completion_tokens` | `completion_tokens_details.reasoning_tokens` |
| OpenAI Responses (`usage`) | `input_tokens` | `input_tokens_details.cached_tokens` | `input_tokens_details.cache_write_tokens` as `default` | `output_tokens` | `output_tokens_details.reasoning_tokens` |
| Anthropic messages (`usage`) | `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens` | `cache_read_input_tokens` | `cache_creation.ephemeral_5m_input_tokens` as `5m`, `ephemeral_1h_input_tokens` as `1h` (without the breakdown, all as `5m`) | `output_tokens` | `output_tokens_details.thinking_tokens` |
| Gemini (`usage_metadata`) | `prompt_token_count` + `tool_use_prompt_token_count` | `cached_content_token_count` | none | `candidates_token_count` + `thoughts_token_count` | `thoughts_token_count` |
| LangChain (`AIMessage.usage_metadata`) | `input_tokens` | `input_token_details.cache_read` | `input_token_details.cache_creation` as `default` | `output_tokens` | `output_token_details.reasoning` |
| pydantic-ai (`RequestUsage`, `RunUsage`) | `input_tokens` | `cache_read_tokens` | `cache_write_1h_tokens` as `1h`, the rest of `cache_write_tokens` as `5m` | `output_tokens` | `details["reasoning_tokens"]` |
| OpenAI Agents SDK (`Usage`) | `input_tokens` | `input_tokens_details.cached_tokens` | `input_tokens_details.cache_write_tokens` as `default` | `output_tokens` | `output_tokens_details.reasoning_tokens` |

A missing or ``None`` field counts as 0. Gemini's camelCase keys (``promptTokenCount``...) are read
too.

What a model call costs: :func:`cost` prices a :class:`~contextwise.Usage`.

Prices come from genai-prices, the price table that the pydantic project maintains (install it
with ``pip install 'contextwise[prices]'``; its table ships in the wheel, so nothing is fetched),
with its price tiers and cache-write prices, or from :class:`ModelPrices` given by the
application, for a model the table does not know or a negotiated price. Amounts are
:class:`~decimal.Decimal` US dollars.

The cost ledger: every call's usage and price, totalled per model and per kind.

A harness spends tokens in three kinds of calls: the model's own (``model``), the summaries a
policy's compressors write (``summarizer``) and the routing decisions (``router``). The ledger
records each with its model and its price (:func:`~contextwise.cost`), and totals them.
:class:`UsageLedger` keeps it in memory; a :class:`~contextwise.session.ContextSession` keeps
it in its store (``record_usage`` and ``usage``).
"""

from contextwise.accounting._ledger import (
    USAGE_KINDS,
    UsageKind,
    UsageLedger,
    UsageRecord,
    UsageSummary,
    UsageTotals,
    price_usage,
    summarize_usage,
)
from contextwise.accounting._prices import (
    Cost,
    CostSource,
    ModelPrices,
    PriceTier,
    cost,
)
from contextwise.accounting._usage import (
    CACHE_RETENTIONS,
    USAGE_SOURCES,
    CacheRetention,
    Usage,
    UsageSource,
    WithUsage,
    usage_from,
)

__all__ = [
    "CACHE_RETENTIONS",
    "USAGE_KINDS",
    "USAGE_SOURCES",
    "CacheRetention",
    "Cost",
    "CostSource",
    "ModelPrices",
    "PriceTier",
    "Usage",
    "UsageKind",
    "UsageLedger",
    "UsageRecord",
    "UsageSource",
    "UsageSummary",
    "UsageTotals",
    "WithUsage",
    "cost",
    "price_usage",
    "summarize_usage",
    "usage_from",
]
