"""Hostile values: what an attacker, a fuzzer or a careless caller passes where a value belongs.

Each value is built once, cheaply; the deep and huge ones are shared. ``HOSTILE`` names every
value, so a failing call reports which one escaped.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any


class RaisingRepr:
    """An object whose ``repr`` and ``str`` raise."""

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")

    __str__ = __repr__


class RaisingReprInt(int):
    """An int whose ``repr`` and ``str`` raise: it passes numeric checks, then breaks formatting."""

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")

    __str__ = __repr__


class RaisingReprStr(str):
    """A str whose ``repr`` raises."""

    def __repr__(self) -> str:
        raise RuntimeError("repr failed")


def deep_list(depth: int) -> list[Any]:
    """A list nested ``depth`` levels deep, built without recursion."""
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _cycle_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def _cycle_dict() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


HUGE_INT = 10**5000
"""An int with more than 4,300 digits: ``str()`` of it raises in Python 3.11+."""

OVERFLOW_INT = 10**400
"""An int that ``float()`` cannot convert."""

HOSTILE: dict[str, Any] = {
    "None": None,
    "True": True,
    "zero": 0,
    "minus one": -1,
    "2**63": 2**63,
    "-2**63-1": -(2**63) - 1,
    "10**400": OVERFLOW_INT,
    "10**5000": HUGE_INT,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "-0.0": -0.0,
    "1e308": 1e308,
    "Decimal nan": Decimal("NaN"),
    "Fraction": Fraction(1, 3),
    "complex": complex(1, 2),
    "empty string": "",
    "blank string": "  \t",
    "NUL string": "a\x00b",
    "lone surrogate": "a\ud800b",
    "megabyte string": "x" * 1_000_000,
    "control characters": "\x1b[31mred\x07",
    "bytes": b"bytes",
    "bytearray": bytearray(b"ba"),
    "empty list": [],
    "list of None": [None],
    "huge list": [None] * 200_000,
    "deep list": deep_list(100_000),
    "deep dict": deep_dict(100_000),
    "cyclic list": _cycle_list(),
    "cyclic dict": _cycle_dict(),
    "empty dict": {},
    "tuple key dict": {(1, 2): "x"},
    "int key dict": {1: "x"},
    "object in dict": {"role": object()},
    "set": {1, 2},
    "tuple": ("a", "b"),
    "object": object(),
    "raising repr": RaisingRepr(),
    "raising repr int": RaisingReprInt(7),
    "raising repr str": RaisingReprStr("text"),
    "class": type("Anything", (), {}),
    "lambda": lambda *args, **kwargs: None,
    "generator": (n for n in range(3)),
    "ellipsis": ...,
}
"""Every hostile value by name."""
