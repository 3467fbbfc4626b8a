"""The real tokenizers' files for the tests that measure the estimate against them.

``make tokenizers`` (a step of ``make test``) fetches them into a cache once (tools/tokenizers.py).
On a fresh clone without them, the fast tests still pass: a test that needs them skips, with a
reason that names ``make tokenizers``. ``CONTEXTWISE_REQUIRE_TOKENIZERS=1`` (set by ``make test``
and ``.ci/run``) makes their absence a failure, so that CI never skips these tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import tokenizers

REQUIRED_VARIABLE = "CONTEXTWISE_REQUIRE_TOKENIZERS"


def tokenizer_folder() -> Path:
    """The folder with every tokenizer file; skips the test (or fails it when required) if not."""
    try:
        return tokenizers.check()
    except tokenizers.TokenizerFilesMissing as exc:
        reason = f"this test needs the tokenizer files: {exc}"
        if os.environ.get(REQUIRED_VARIABLE) == "1":
            pytest.fail(f"the tokenizer files are required ({REQUIRED_VARIABLE}=1): {reason}")
        pytest.skip(reason)
