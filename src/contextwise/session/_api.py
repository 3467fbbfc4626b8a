"""What the other packages of contextwise use of ``session`` beyond its public names.

The one door between packages for these names: no module outside ``session/`` imports
another of its private modules.
"""

from contextwise.session._codec import decode_message, encode_messages
from contextwise.session._conversations import check_ttl
from contextwise.session._records import check_store

__all__ = [
    "check_store",
    "check_ttl",
    "decode_message",
    "encode_messages",
]
