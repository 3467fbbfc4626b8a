"""Message shapes: every form of chat message that contextwise reads.

It reads:

- OpenAI Chat and Anthropic Messages messages, and the Responses ``message`` item;
- the other OpenAI Responses items (tool calls and their outputs, hosted calls, reasoning);
- Gemini contents;
- LangChain's and pydantic-ai's message objects, through their attributes, without importing the
  frameworks;
- the content parts that the dict shapes share, with an estimate for the parts without text.

:func:`read_message` recognises a message and returns its :class:`MessageFacts`; everything that
takes messages reads them through it.
"""

from contextwise.shapes._estimate import (
    DEFAULT_PART_ESTIMATE,
    ImageRule,
    PartEstimate,
    PartKind,
    image_size,
    image_tokens,
)
from contextwise.shapes._facts import (
    PINNED_ROLES,
    CallKey,
    MessageFacts,
    MessageShape,
    Role,
)
from contextwise.shapes._read import message_shape, plain_message, read_message
from contextwise.shapes._summary import SummaryRole, summary_message

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
