"""contextwise: fit, trim and route an LLM agent's context.

The package root is the table of contents: every public name is importable from here.
"""

from contextwise.errors import (
    ContextOverflowError,
    ContextwiseError,
    InvalidTypeError,
    InvalidValueError,
    UnsupportedLocaleError,
)
from contextwise.i18n import (
    SUPPORTED_LOCALES,
    Locale,
    get_locale,
    normalize_locale,
    set_locale,
    use_locale,
)

__version__ = "0.1.0"

__all__ = [
    "SUPPORTED_LOCALES",
    "ContextOverflowError",
    "ContextwiseError",
    "InvalidTypeError",
    "InvalidValueError",
    "Locale",
    "UnsupportedLocaleError",
    "__version__",
    "get_locale",
    "normalize_locale",
    "set_locale",
    "use_locale",
]
