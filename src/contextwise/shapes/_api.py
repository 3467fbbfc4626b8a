"""What the other packages of contextwise use of ``shapes`` beyond its public names.

The one door between packages for these names: no module outside ``shapes/`` imports
another of its private modules.
"""

from contextwise.shapes._facts import ToolCall, ToolResult
from contextwise.shapes._read import plain_size
from contextwise.shapes._responses import without_item_id
from contextwise.shapes._tools import (
    tool_calls,
    tool_results,
    with_results,
    without_inputs,
    without_thinking,
)

__all__ = [
    "ToolCall",
    "ToolResult",
    "plain_size",
    "tool_calls",
    "tool_results",
    "with_results",
    "without_inputs",
    "without_item_id",
    "without_thinking",
]
