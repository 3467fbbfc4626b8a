"""What the other packages of contextwise use of ``policy`` beyond its public names.

The one door between packages for these names: no module outside ``policy/`` imports
another of its private modules.
"""

from contextwise.policy._clearing import is_reduced
from contextwise.policy._fragments import coerce_fragments
from contextwise.policy._measure import KnownSizes, Measure
from contextwise.policy._model import coerce_policy, token_limits
from contextwise.policy._runner import as_runner, limits_of, measure_of, runner_core
from contextwise.policy._validation import check_fragments

__all__ = [
    "KnownSizes",
    "Measure",
    "as_runner",
    "check_fragments",
    "coerce_fragments",
    "coerce_policy",
    "is_reduced",
    "limits_of",
    "measure_of",
    "runner_core",
    "token_limits",
]
