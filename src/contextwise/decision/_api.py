"""What the other packages of contextwise use of ``decision`` beyond its public names.

The one door between packages for these names: no module outside ``decision/`` imports
another of its private modules.
"""

from contextwise.decision._core import (
    check_min_confidence,
    check_provider,
    check_timeout,
    choice_effects,
    choices_effects,
)
from contextwise.decision._faults import FallbackPredicate

__all__ = [
    "FallbackPredicate",
    "check_min_confidence",
    "check_provider",
    "check_timeout",
    "choice_effects",
    "choices_effects",
]
