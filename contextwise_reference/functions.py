"""Functions and methods: their signature, parameters, returns and raises.

A sync face (``route``) borrows what it takes, returns and raises from its async twin
(``aroute``), and ``**options: Unpack[SomeTypedDict]`` is expanded into one keyword parameter per
key, described by the typed dict's own attributes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import griffe

from contextwise_reference.annotations import Types, signature
from contextwise_reference.docstrings import Doc, Docstrings
from contextwise_reference.loaded import Loaded
from contextwise_reference.model import Function, Item, Param, TypeExpr

_KINDS = griffe.ParameterKind


class Functions:
    """Reads griffe functions into :class:`Function` values."""

    def __init__(self, loaded: Loaded, types: Types, docs: Docstrings) -> None:
        self.loaded = loaded
        self.types = types
        self.docs = docs

    def function(
        self, fn: Any, path: str, anchor: str, heading: str, *, method: bool = False
    ) -> Function:
        """A function (or a method, without its first parameter), documented at ``path``."""
        doc = self.with_async_twin(fn, path, self.docs.doc(fn, path))
        parameters = list(fn.parameters)
        if method and "staticmethod" not in fn.labels and parameters:
            parameters = parameters[1:]
        params: list[Param] = []
        keys = self.docs.unpacked(fn)
        for p in parameters:
            if p.kind is _KINDS.var_keyword and keys:
                params += self._expanded(keys, doc, path, p.name)
            else:
                params.append(self._param(p, doc))
        returns = fn.returns if fn.returns not in (None, "None") else None
        return Function(
            path=path,
            name=fn.name,
            anchor=anchor,
            signature=self._signature(fn, parameters, returns),
            description=doc.description,
            params=params,
            # A generator documents what it yields; its Iterator annotation is not a return value.
            returns=None
            if doc.yields and not doc.returns
            else _with_type(doc.returns, self.types.type(returns)),
            yields=doc.yields,
            raises=doc.raises,
            examples=doc.examples,
            heading=heading,
        )

    def _signature(self, fn: Any, parameters: list[Any], returns: Any) -> str:
        prefix = "async " if "async" in fn.labels else ""
        decorators = "".join(
            f"@{label}\n" for label in ("classmethod", "staticmethod") if label in fn.labels
        )
        return (
            decorators
            + prefix
            + signature(
                fn.name,
                [self.types.sig_param(p) for p in parameters],
                self.types.public_text(returns) if returns else None,
            )
        )

    def _expanded(self, keys: dict[str, Any], doc: Doc, path: str, name: str) -> list[Param]:
        """The keys of ``**name: Unpack[SomeTypedDict]``, one keyword parameter each, described
        once, by the typed dict's own attribute docstrings (their messages keep the typed dict's
        context, so a translator sees each text once). A docstring that documents the keys or
        ``**name`` again is a problem: the table would hide what it says."""
        params: list[Param] = []
        for documented in (name, *keys):
            if documented in doc.params:
                self.loaded.problems.append(
                    f"{path}: the parameter {documented!r} is documented by the typed dict of "
                    f"**{name}; remove it from Args"
                )
        for key_name, key in keys.items():
            typed = key.parent
            where = self.loaded.public_path(typed.path, typed.path)
            description = self.docs.description(typed, key_name, where)
            annotation = self.types.type(key.annotation)
            params.append(Param(key_name, annotation, None, False, description))
        return params

    def with_async_twin(self, fn: Any, path: str, doc: Doc) -> Doc:
        """Fill a sync function's missing Args, Returns and Raises from its async twin.

        The twin of ``X`` is ``aX`` beside it (in the same module or class): ``route`` and
        ``aroute``, ``prepare_step`` and ``aprepare_step``. A sync face's docstring is a summary
        and an example; what it takes, returns and raises is written once, on the async twin, and
        the messages keep the twin's context, so a translator sees each text once.
        """
        if "async" in fn.labels or fn.parent is None:
            return doc
        twin = fn.parent.members.get(f"a{fn.name}")
        if twin is None or twin.is_alias or twin.kind is not griffe.Kind.FUNCTION:
            return doc
        if "async" not in twin.labels:
            return doc
        twin_doc = self.docs.doc(twin, f"{path.rpartition('.')[0]}.a{fn.name}")
        return dataclasses.replace(
            doc,
            params=doc.params or twin_doc.params,
            returns=doc.returns or twin_doc.returns,
            raises=doc.raises or twin_doc.raises,
        )

    def _param(self, param: Any, doc: Doc) -> Param:
        variadic = param.kind in (_KINDS.var_positional, _KINDS.var_keyword)
        star = {_KINDS.var_positional: "*", _KINDS.var_keyword: "**"}.get(param.kind, "")
        default = None if variadic or param.default is None else str(param.default)
        return Param(
            name=star + param.name,
            annotation=self.types.type(param.annotation),
            default=default,
            required=default is None and not variadic,
            description=doc.params.get(param.name),
        )


def anchor(cls: str, member: str) -> str:
    """The heading id of a class member: ``Class-method``, ``Class-constructor`` for ``__init__``.

    A dunder is spelled without its underscores: Markdown would read ``__init__`` in a heading id
    as bold text and drop the id.
    """
    if member == "__init__":
        return f"{cls}-constructor"
    return f"{cls}-{member.strip('_')}" if member.startswith("__") else f"{cls}-{member}"


def _with_type(item: Item | None, annotation: TypeExpr | None) -> Item | None:
    if item is None:
        return Item(annotation, None) if annotation is not None else None
    return Item(item.annotation or annotation, item.description)
