"""How a run measures a fragment: its size in characters and tokens, and the state a step reads.

:class:`Measure` counts characters, and tokens with the run's counter; :class:`FragState` is a
fragment with its measured sizes; :class:`KnownSizes` carries sizes measured before (by a
session), so that a run does not measure them again; :func:`measure_fragment` builds the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextwise._layout import Profile, message_tokens, profile_messages
from contextwise.counting import TokenCounter
from contextwise.counting._api import check_count
from contextwise.messages import ChatMessage
from contextwise.policy._fragments import Fragment, TextFragment
from contextwise.shapes import PartEstimate


@dataclass(frozen=True, slots=True)
class Measure:
    """How sizes are measured: characters always, tokens when a counter is given; parts without
    text by the part estimate; with ``opaque``, an item that no shape knows as one unit."""

    counter: TokenCounter | None
    part_estimate: PartEstimate | None = None
    opaque: bool = False

    def text_tokens(self, text: str) -> int:
        """Count the tokens of a text with the counter, checking the result."""
        assert self.counter is not None
        return check_count(self.counter.count(text), str(getattr(self.counter, "id", "?")))

    def tokens_per_message(self, messages: Sequence[ChatMessage]) -> list[int] | None:
        """Count the tokens of each message, or ``None`` without a counter: its text through the
        counter, plus its estimated parts at the estimate's characters per token."""
        if self.counter is None:
            return None
        return [self.one_message_tokens(message) for message in messages]

    def one_message_tokens(self, message: ChatMessage) -> int:
        """Count the tokens of one message (with a counter)."""
        return message_tokens(message, self.text_tokens, self.part_estimate, self.opaque)

    def profile(
        self, messages: Sequence[ChatMessage], sizes: Sequence[int] | None = None
    ) -> Profile:
        """Measure each message's characters and role once (or take ``sizes``, measured
        earlier)."""
        return profile_messages(messages, sizes, self.part_estimate, self.opaque)


@dataclass(frozen=True, slots=True)
class FragState:
    """A fragment with its measured sizes; ``version`` changes with every committed change."""

    fragment: Fragment
    chars: int
    tokens: int | None
    profile: Profile | None
    token_sizes: list[int] | None
    version: int
    made: frozenset[int] = frozenset()
    """The ``id()`` of the messages that a step of this run made (summaries): a later step of the
    same run keeps them, as it keeps pinned messages."""

    @property
    def sizes(self) -> list[int]:
        """The characters of each message (empty for a text)."""
        return [] if self.profile is None else self.profile.sizes


@dataclass(frozen=True, slots=True)
class KnownSizes:
    """The sizes of a fragment's messages, measured before (by a session, when they were added),
    so that a run does not measure them again."""

    chars: Sequence[int]
    tokens: Sequence[int] | None
    roles: Sequence[object] | None = None
    """The messages' roles when every message is a plain ``{role, content: str}`` dict with one
    of the plain roles (as found when they were added): nothing is read of the messages."""


def measure_fragment(
    fragment: Fragment, measure: Measure, version: int, known: KnownSizes | None = None
) -> FragState:
    """Measure a fragment once: each message's characters (and tokens, with a counter), or take
    the sizes it already has."""
    if isinstance(fragment, TextFragment):
        tokens = None if measure.counter is None else measure.text_tokens(fragment.text)
        return FragState(fragment, len(fragment.text), tokens, None, None, version)
    messages = fragment.messages
    if known is not None and known.roles is not None and len(known.roles) == len(messages):
        profile = Profile(list(known.chars), list(known.roles), True)
    else:
        profile = measure.profile(messages, None if known is None else known.chars)
    token_sizes = (
        list(known.tokens)
        if known is not None and known.tokens is not None and measure.counter is not None
        else measure.tokens_per_message(messages)
    )
    return FragState(
        fragment,
        sum(profile.sizes),
        None if token_sizes is None else sum(token_sizes),
        profile,
        token_sizes,
        version,
    )
