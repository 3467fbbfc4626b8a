"""Message shapes: every form of chat message that contextwise reads, each in one module.

- :mod:`~contextwise.shapes.chat`: OpenAI Chat, Anthropic Messages, and the Responses ``message``
  item;
- :mod:`~contextwise.shapes.responses`: the other OpenAI Responses items (tool calls and their
  outputs, hosted calls, reasoning);
- :mod:`~contextwise.shapes.gemini`: Gemini contents;
- :mod:`~contextwise.shapes.langchain` and :mod:`~contextwise.shapes.pydantic_ai`: the
  frameworks' message objects, read through their attributes without importing the frameworks;
- :mod:`~contextwise.shapes.parts`: the content parts the dict shapes share;
- :mod:`~contextwise.shapes.estimate`: the estimates of parts without text.

:func:`read_message` recognises a message and returns its :class:`MessageFacts`; everything that
takes messages reads them through it.
"""

from contextwise.shapes.estimate import (
    DEFAULT_PART_ESTIMATE,
    ImageRule,
    PartEstimate,
    PartKind,
    image_size,
    image_tokens,
)
from contextwise.shapes.facts import (
    PINNED_ROLES,
    CallKey,
    MessageFacts,
    MessageShape,
    Role,
)
from contextwise.shapes.read import message_shape, plain_message, read_message
from contextwise.shapes.summary import SummaryRole, summary_message

__all__ = [
    "DEFAULT_PART_ESTIMATE",
    "PINNED_ROLES",
    "CallKey",
    "ImageRule",
    "MessageFacts",
    "MessageShape",
    "PartEstimate",
    "PartKind",
    "Role",
    "SummaryRole",
    "image_size",
    "image_tokens",
    "message_shape",
    "plain_message",
    "read_message",
    "summary_message",
]
