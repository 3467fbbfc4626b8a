"""Token counting: estimates, tokenizers, and counts calibrated against what the provider bills.

Token counting: a rough estimate, the TokenCounter protocol and adapters for real tokenizers.

contextwise never downloads a tokenizer. It counts with the script-aware estimate of
:func:`estimate_tokens` unless the application hands it a tokenizer it already has: any object
with an ``encode`` method (a tiktoken ``Encoding``, a Hugging Face ``tokenizers.Tokenizer``, a
``transformers`` tokenizer) or any function that returns a number of tokens.

Token counts calibrated against what the provider reports: :class:`CalibratedCounter`.

An estimate (or a tokenizer of another model) is close, not exact: each model's tokenizer cuts
each script its own way and adds its own framing to every message and every call. The provider
reports the true number in every response's usage. :class:`CalibratedCounter` learns from it:
after each call, ``observe(request, usage)`` compares the whole request (system, tools,
messages) as its base counter measures it with the input tokens the provider billed, and fits,
per model, one ratio per script (:data:`~contextwise.SCRIPTS`), a per-message overhead and a
fixed per-call overhead. Its prediction for the next call is then within a few percent
(``benchmarks/bench_calibration.py`` prints the figure on a recorded conversation).

The fit is a least-squares fit on relative errors, pulled gently towards a ratio of 1 and no
overhead so that it is stable from the first call. Its state is a plain dict (JSON), which a
session store keeps.
"""

from contextwise.counting._calibration import (
    CALIBRATION_STATE_VERSION,
    CalibratedCounter,
    ModelCounter,
    counter_key,
)
from contextwise.counting._tokens import (
    ESTIMATE_VERSION,
    SCRIPTS,
    CallableCounter,
    EstimateCounter,
    Script,
    TokenCounter,
    TokenizerCounter,
    as_token_counter,
    count_tokens,
    estimate_by_script,
    estimate_tokens,
)

__all__ = [
    "CALIBRATION_STATE_VERSION",
    "ESTIMATE_VERSION",
    "SCRIPTS",
    "CalibratedCounter",
    "CallableCounter",
    "EstimateCounter",
    "ModelCounter",
    "Script",
    "TokenCounter",
    "TokenizerCounter",
    "as_token_counter",
    "count_tokens",
    "counter_key",
    "estimate_by_script",
    "estimate_tokens",
]
