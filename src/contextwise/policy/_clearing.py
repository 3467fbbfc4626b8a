"""What the ``clear`` and ``clip`` steps rewrite in a list of messages. Internal to the policy
engine.

Both steps rewrite messages in place: a tool result's content, a call's arguments, a message's
thinking. A message that changes is copied in its own shape (see :mod:`contextwise.shapes._tools`),
so the caller's objects are never touched; a Responses ``reasoning`` item is the only message
that leaves. The functions here plan the rewrite; :mod:`contextwise.policy._step_clear` measures
it and records the change.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from contextwise._layout import scan, task_index
from contextwise.policy._model import CLEARED_PLACEHOLDER, CLIP_MARKER, ClearStep, ClipStep
from contextwise.shapes import CallKey, MessageFacts
from contextwise.shapes._api import (
    ToolCall,
    ToolResult,
    tool_calls,
    tool_results,
    with_results,
    without_inputs,
    without_item_id,
    without_thinking,
)

REDUCED: Final = re.compile(r'\[(?:cleared|clipped): \d+ characters; recall\("[^"\n]*"\)\]')
"""What the placeholder of a cleared result and the marker of a clipped one look like: a text
holding either is not an original."""

_CLEARED: Final = re.compile(r'\[cleared: \d+ characters; recall\("[^"\n]*"\)\]')
_CLIPPED: Final = re.compile(r'\n\[clipped: (\d+) characters; recall\("[^"\n]*"\)\]\n')


def is_reduced(text: str) -> bool:
    """Whether a tool result's text was cleared or clipped by contextwise."""
    return REDUCED.search(text) is not None


def original_length(text: str) -> int | None:
    """The length of the original of a result's text: its own length, or, for a clipped text,
    its length with the characters the marker says were cut; ``None`` for a cleared one."""
    if _CLEARED.fullmatch(text):
        return None
    clipped = _CLIPPED.search(text)
    if clipped is None:
        return len(text)
    return len(text) - len(clipped[0]) + int(clipped[1])


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A list of messages rewritten in place: the new list, where each new message comes from
    (``None`` for a copy), and the indices of the messages that were replaced or dropped."""

    messages: tuple[Any, ...]
    source: list[int | None]
    removed: list[int]


@dataclass(frozen=True, slots=True)
class _Use:
    """One tool use: a call (``None`` for a result whose call is not in the list) and the
    results that answer it, as (message index, position, result)."""

    call: tuple[int, int, ToolCall] | None
    results: list[tuple[int, int, ToolResult]] = field(default_factory=list)

    @property
    def name(self) -> str | None:
        return None if self.call is None else self.call[2].name


def tool_uses(messages: Sequence[Any], facts: Sequence[MessageFacts]) -> list[_Use]:
    """Every tool use of a conversation, in the order of the calls, with its results; a Gemini
    result without an id answers the oldest open call of its name."""
    uses: list[_Use] = []
    by_id: dict[CallKey, _Use] = {}
    by_name: dict[CallKey, deque[_Use]] = {}
    for index, fact in enumerate(facts):
        if fact.has_results:
            for position, result in enumerate(tool_results(messages[index], fact.shape)):
                if isinstance(result.key, str):
                    use = by_id.get(result.key)
                else:
                    waiting = by_name.get(result.key)
                    use = waiting.popleft() if waiting else None
                if use is None:
                    use = _Use(None)
                    uses.append(use)
                use.results.append((index, position, result))
        if fact.calls:
            for position, call in enumerate(tool_calls(messages[index], fact.shape)):
                use = _Use((index, position, call))
                uses.append(use)
                if isinstance(call.key, str):
                    by_id[call.key] = use
                else:
                    by_name.setdefault(call.key, deque()).append(use)
    return uses


class _Edits:
    """The copies being made of a list of messages, each edit applied to the latest copy."""

    def __init__(self, messages: Sequence[Any], facts: Sequence[MessageFacts]) -> None:
        self.messages = messages
        self.facts = facts
        self.current: dict[int, Any] = {}
        self.dropped: set[int] = set()

    def get(self, index: int) -> Any:
        return self.current.get(index, self.messages[index])

    def results(self, index: int, texts: Mapping[int, str]) -> None:
        self.current[index] = with_results(self.get(index), self.facts[index].shape, texts)

    def inputs(self, index: int, positions: set[int]) -> None:
        self.current[index] = without_inputs(self.get(index), self.facts[index].shape, positions)

    def rewrite(self) -> Rewrite | None:
        messages: list[Any] = []
        source: list[int | None] = []
        removed: list[int] = []
        for index, message in enumerate(self.messages):
            if index in self.dropped:
                removed.append(index)
                continue
            copy = self.current.get(index, message)
            if copy is not message and copy != message:
                removed.append(index)
                messages.append(copy)
                source.append(None)
            else:
                messages.append(message)
                source.append(index)
        if not removed:
            return None
        return Rewrite(tuple(messages), source, removed)


def plan_clear(
    step: ClearStep, messages: Sequence[Any], facts: Sequence[MessageFacts]
) -> Rewrite | None:
    """The rewrite of a ``clear`` step, or ``None`` when it changes nothing."""
    edits = _Edits(messages, facts)
    uses = [use for use in tool_uses(messages, facts) if use.name not in step.exclude_tools]
    results: dict[int, dict[int, str]] = {}
    inputs: dict[int, set[int]] = {}
    for use in uses[: max(0, len(uses) - step.keep_recent)]:
        for index, position, result in use.results:
            length = original_length(result.text)
            if length is None:
                continue
            placeholder = CLEARED_PLACEHOLDER.format(n=length, ref=result.ref)
            if len(placeholder) < len(result.text):
                results.setdefault(index, {})[position] = placeholder
        if step.inputs and use.call is not None:
            index, position, _ = use.call
            inputs.setdefault(index, set()).add(position)
    for index, texts in results.items():
        edits.results(index, texts)
    for index, positions in inputs.items():
        edits.inputs(index, positions)
    if step.reasoning:
        _drop_reasoning(edits)
    return edits.rewrite()


def _drop_reasoning(edits: _Edits) -> None:
    """Drop the thinking of the turns before the latest one.

    A Responses ``reasoning`` item leaves with the ``id`` of the calls it produced (the API
    refuses a call whose ``id`` names a reasoning item that is not sent); it stays when one of
    those items needs its ``id`` (a message, a built-in tool's call).
    """
    facts = edits.facts
    attached, roles = scan(edits.messages, list(facts))
    latest = task_index(roles, attached)
    for index in range(latest or 0):
        fact = facts[index]
        if fact.leads and fact.shape == "openai-responses":
            _drop_reasoning_item(edits, index, latest or 0)
        elif fact.role == "assistant":
            copy = without_thinking(edits.get(index), fact.shape)
            if copy is not None:
                edits.current[index] = copy


def _drop_reasoning_item(edits: _Edits, index: int, stop: int) -> None:
    followers: list[int] = []
    following = index + 1
    while following < stop and edits.facts[following].role == "assistant":
        if edits.facts[following].leads:
            break
        followers.append(following)
        following += 1
    copies = [without_item_id(edits.get(position)) for position in followers]
    if any(copy is None for copy in copies):
        return
    edits.dropped.add(index)
    for position, copy in zip(followers, copies, strict=True):
        edits.current[position] = copy


def plan_clip(
    step: ClipStep,
    messages: Sequence[Any],
    facts: Sequence[MessageFacts],
    text_tokens: Callable[[str], int] | None,
) -> Rewrite | None:
    """The rewrite of a ``clip`` step, or ``None`` when no tool result is over its limit."""
    edits = _Edits(messages, facts)
    for index, fact in enumerate(facts):
        if not fact.has_results:
            continue
        texts: dict[int, str] = {}
        for position, result in enumerate(tool_results(messages[index], fact.shape)):
            if is_reduced(result.text):
                continue
            clipped = clip_text(result, step.max_chars, step.max_tokens, text_tokens)
            if clipped is not None:
                texts[position] = clipped
        if texts:
            edits.results(index, texts)
    return edits.rewrite()


def clip_text(
    result: ToolResult,
    max_chars: int | None,
    max_tokens: int | None,
    text_tokens: Callable[[str], int] | None,
) -> str | None:
    """A result's text cut to its head and tail around the clip marker, as long as the limits
    allow (the marker alone when nothing more fits), or ``None`` when it is within them."""
    text = result.text
    length = len(text)

    def fits(candidate: str) -> bool:
        if max_chars is not None and len(candidate) > max_chars:
            return False
        return max_tokens is None or text_tokens is None or text_tokens(candidate) <= max_tokens

    def cut(keep: int) -> str:
        head, tail = (keep + 1) // 2, keep // 2
        marker = CLIP_MARKER.format(n=length - keep, ref=result.ref)
        return text[:head] + marker + text[length - tail :]

    if fits(text):
        return None
    clipped = cut(longest_fit(lambda keep: fits(cut(keep)), length - 1))
    return clipped if len(clipped) < length else None


def longest_fit(fits: Callable[[int], bool], high: int) -> int:
    """The largest number of characters to keep, from 0 to ``high``, whose cut text fits (0 when
    none does): a binary search, since a longer cut never fits better. A text trim and a clip
    both cut this way."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
