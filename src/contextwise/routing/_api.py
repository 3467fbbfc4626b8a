"""What the other packages of contextwise use of ``routing`` beyond its public names.

The one door between packages for these names: no module outside ``routing/`` imports
another of its private modules.
"""

from contextwise.routing._outcome import check_router

__all__ = [
    "check_router",
]
