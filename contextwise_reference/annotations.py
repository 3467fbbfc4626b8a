"""Type expressions and signatures as the reference shows them: no private name ever appears.

A private alias of the package (``_Size``, an ``Annotated`` integer) is replaced by the type it
stands for; the names of a type keep their canonical paths, so that the renderer links them.
"""

from __future__ import annotations

from typing import Any

import griffe

from contextwise_reference.loaded import Loaded
from contextwise_reference.model import TypeExpr

SIGNATURE_WIDTH = 88
"""A signature longer than this is written one parameter a line."""

_WRAPPERS = {"Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"}

SigParam = tuple[str, str, str | None, str | None]
"""A parameter of a signature: its kind, name, annotation text and default text."""


class Types:
    """Reads griffe type expressions into :class:`TypeExpr` and text."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded

    def type(self, expr: Any) -> TypeExpr | None:
        """A type expression's pieces, each name with its canonical path."""
        if expr is None or expr == "":
            return None
        if isinstance(expr, str):
            return TypeExpr((expr,))
        expr = unwrap(expr)
        if isinstance(expr, str):
            return TypeExpr((expr,))
        parts: list[str | tuple[str, str]] = []
        for piece in self.public_pieces(expr):
            if isinstance(piece, str):
                if parts and isinstance(parts[-1], str):
                    parts[-1] += piece
                else:
                    parts.append(piece)
            else:
                parts.append((piece.name, self.loaded.final(piece.canonical_path)))
        return TypeExpr(tuple(parts))

    def public_pieces(self, expr: Any) -> list[Any]:
        """The flat pieces of a type expression, each private alias of the package (``_Size``,
        an ``Annotated`` integer) replaced by the type it stands for: the reference never shows
        a private name."""
        if isinstance(expr, str):
            return [expr]
        pieces: list[Any] = []
        for piece in expr.iterate(flat=True):
            if isinstance(piece, str) or not piece.name.startswith("_"):
                pieces.append(piece)
                continue
            try:
                alias = self.loaded.member(piece.canonical_path)
            except (KeyError, ValueError, griffe.AliasResolutionError):
                alias = None
            value = getattr(alias, "value", None)
            if value is None:
                self.loaded.problems.append(
                    f"the private type {piece.canonical_path} cannot be shown"
                )
                pieces.append(piece.name)
                continue
            pieces.extend(self.public_pieces(unwrap(value)))
        return pieces

    def public_text(self, expr: Any) -> str | None:
        """A type expression as text, with private aliases replaced (see ``public_pieces``)."""
        if expr is None:
            return None
        return "".join(
            piece if isinstance(piece, str) else piece.name for piece in self.public_pieces(expr)
        )

    def sig_param(self, param: Any) -> SigParam:
        """A griffe parameter as a signature shows it."""
        annotation = self.public_text(param.annotation)
        default = str(param.default) if param.default is not None else None
        return (
            param.kind.value.replace(" ", "-").replace("variadic-", "var-"),
            param.name,
            annotation,
            default,
        )


def signature(name: str, params: list[SigParam], returns: str | None) -> str:
    """Format ``name(params) -> returns``, one parameter a line when it is too long."""
    rendered: list[str] = []
    previous = ""
    keyword_marker = any(kind == "var-positional" for kind, *_ in params)
    for kind, param, annotation, default in params:
        if previous == "positional-only" and kind != "positional-only":
            rendered.append("/")
        if kind == "keyword-only" and not keyword_marker:
            rendered.append("*")
            keyword_marker = True
        rendered.append(_parameter_text(kind, param, annotation, default))
        previous = kind
    if previous == "positional-only":
        rendered.append("/")
    tail = f" -> {returns}" if returns else ""
    line = f"{name}({', '.join(rendered)}){tail}"
    if len(line) <= SIGNATURE_WIDTH or not rendered:
        return line
    body = "".join(f"    {item},\n" for item in rendered)
    return f"{name}(\n{body}){tail}"


def _parameter_text(kind: str, param: str, annotation: str | None, default: str | None) -> str:
    star = {"var-positional": "*", "var-keyword": "**"}.get(kind, "")
    text = f"{star}{param}"
    if annotation:
        text += f": {annotation}"
    if default is not None and not star:
        text += f" = {default}" if annotation else f"={default}"
    return text


def unwrap(expr: Any) -> Any:
    """The type inside ``Annotated[...]``, ``ClassVar[...]``, ``Required[...]`` and the like."""
    while isinstance(expr, griffe.ExprSubscript) and getattr(expr.left, "name", None) in _WRAPPERS:
        inner = expr.slice
        expr = inner.elements[0] if isinstance(inner, griffe.ExprTuple) else inner
    return expr
