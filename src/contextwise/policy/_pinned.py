"""Pinned parts: what the model receives besides the fragments, which counts against the
triggers and targets but which no step removes (a system prompt, instructions, tool
definitions). Internal to the policy engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextwise.errors import InvalidTypeError
from contextwise.policy._measure import Measure

PinnedPart = str | Mapping[str, Any] | object
"""One pinned part: a text, a message (a mapping with a ``role``, or a framework message
object), or a tool or schema definition (any other mapping, measured by its canonical JSON)."""


@dataclass(frozen=True, slots=True)
class Pinned:
    """The measured size of the pinned parts of one run.

    ``offset_tokens`` corrects the token measure of the whole prompt: the provider's count of the
    previous prompt minus its estimate, when an integration knows it (0 otherwise).
    """

    chars: int = 0
    tokens: int | None = None
    offset_tokens: int = 0


NOTHING_PINNED = Pinned()
"""No pinned part and no correction."""


def canonical_json(value: Mapping[str, Any]) -> str:
    """A definition's canonical JSON: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def measure_pinned(parts: object, measure: Measure, offset_tokens: int = 0) -> Pinned:
    """Measure pinned parts with a run's measure: characters, and tokens with a counter.

    Raises:
        InvalidTypeError: When ``parts`` is not a list of parts (code ``not_a_collection``), or
            a part is ``None`` or a number (code ``invalid_pinned_part``).
        InvalidValueError: When a message has no supported shape and the run does not keep
            unknown items as opaque units.
    """
    if not isinstance(parts, Sequence) or isinstance(parts, str | bytes):
        raise InvalidTypeError("not_a_collection", name="pinned", type_name=type(parts).__name__)
    texts: list[str] = []
    messages: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            if "role" in part:
                messages.append(part)
            else:
                texts.append(canonical_json(part))
        elif part is None or isinstance(part, int | float | bytes):
            raise InvalidTypeError("invalid_pinned_part", type_name=type(part).__name__)
        else:
            messages.append(part)
    chars = sum(map(len, texts))
    if messages:
        chars += sum(measure.profile(messages).sizes)
    if measure.counter is None:
        return Pinned(chars, None, 0)
    tokens = sum(measure.text_tokens(text) for text in texts)
    tokens += sum(measure.one_message_tokens(message) for message in messages)
    return Pinned(chars, tokens, offset_tokens)
