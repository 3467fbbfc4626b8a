"""Classes: their kind, fields, properties, constructor, methods and error codes.

What static reading cannot know for sure is asked of the imported class (a pydantic model's
required fields and defaults, a dataclass's fields, an exception's error codes). A class of a
module that is never imported (an integration) is read from its source only.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import sys
import typing
from collections.abc import Mapping
from typing import Any

import griffe

from contextwise_reference.annotations import Types, signature
from contextwise_reference.docstrings import Doc, Docstrings, normalize
from contextwise_reference.functions import Functions, anchor
from contextwise_reference.loaded import Loaded, final_object, in_source_order, runtime
from contextwise_reference.model import (
    ClassDoc,
    ClassKind,
    ErrorCode,
    FieldDoc,
    Function,
    Member,
    Msg,
    Param,
    PropertyDoc,
    Target,
    TypeExpr,
)

FieldSpec = tuple[str, bool, str | None, Any, str | None, bool]
"""A field read at run time: name, required, default, type, description, constructor parameter."""


class Classes:
    """Reads griffe classes into :class:`ClassDoc` values."""

    def __init__(
        self, loaded: Loaded, types: Types, docs: Docstrings, functions: Functions
    ) -> None:
        self.loaded = loaded
        self.types = types
        self.docs = docs
        self.functions = functions

    def document(self, cls: Any, path: str, name: str, slug: str) -> ClassDoc:
        """The class ``cls``, documented at ``path`` on the page ``slug``."""
        live: Any = None
        if slug in self.loaded.static and _is_typeddict(cls):
            # A typed dict is read like the package's own: its module must import no framework.
            live = runtime(cls.path)
            kind = class_kind(live)
        elif slug in self.loaded.static:
            kind = self._static_kind(cls, path)
        else:
            live = runtime(cls.path)
            kind = class_kind(live)
        doc = self.docs.doc(cls, path)
        result = ClassDoc(
            path=path,
            name=name,
            anchor=name,
            kind=kind,
            description=doc.description,
            examples=list(doc.examples),
        )
        if kind == "exception":
            self._exception(result, cls, live)
        self._class_fields(result, cls, live, path, name, doc)
        init = cls.members.get("__init__")
        # A pydantic model, or a dataclass that writes its own checked __init__ (init=False).
        own_init = kind == "dataclass" and not _dataclass_makes_init(live)
        custom = (kind == "model" or own_init) and init is not None and not init.is_alias
        if (
            (result.constructor is None or custom)
            and init is not None
            and kind not in ("enum", "protocol")
        ):
            result.constructor = self._constructor(init, path, name, doc, result.fields)
            result.examples.extend(result.constructor.examples)
            result.constructor.examples = []
        self._class_methods(result, cls, path, name, slug)
        described = [f.name for f in result.fields] + [p.name for p in result.properties]
        for member_name in described + [m.name for m in result.members]:
            self.loaded.targets.setdefault(f"{cls.path}.{member_name}", Target(slug, name))
            self.loaded.targets.setdefault(f"{name}.{member_name}", Target(slug, name))
        return result

    def _exception(self, result: ClassDoc, cls: Any, live: Any) -> None:
        """An exception's bases and error codes."""
        result.bases = [t for t in (self.types.type(base) for base in cls.bases) if t is not None]
        messages = live.__dict__.get("messages")
        if isinstance(messages, Mapping):
            result.error_codes = [
                ErrorCode(code, str(getattr(text, "singular", text)))
                for code, text in messages.items()
            ]

    def _class_fields(
        self, result: ClassDoc, cls: Any, live: Any, path: str, name: str, doc: Doc
    ) -> None:
        """A class's members, fields or attributes, properties and generated constructor."""
        kind = result.kind
        if kind == "enum":
            result.members = [
                Member(
                    member.name,
                    repr(member.value),
                    self.docs.attribute_msg(cls, member.name, path, doc),
                )
                for member in live
            ]
        elif kind in ("model", "dataclass", "namedtuple", "typeddict"):
            specs = field_specs(live, kind)
            if kind == "typeddict":
                # The keys of a base typed dict are documented once, by the base.
                specs = [spec for spec in specs if spec[0] in cls.members]
            result.fields, params = self._fields(cls, specs, path, doc)
            if kind != "typeddict":
                result.constructor = _generated_constructor(kind, path, name, params, doc)
        else:
            result.fields = self._attributes(cls, path, doc)
            result.fields_are_attributes = True
        if kind in ("enum", "model", "dataclass", "namedtuple"):
            result.properties = self._properties(cls, path, doc)

    def _class_methods(self, result: ClassDoc, cls: Any, path: str, name: str, slug: str) -> None:
        """A class's public methods, in source order, each registered as a link target."""
        for member_name, member in in_source_order(cls.members):
            if member.is_alias or member.kind is not griffe.Kind.FUNCTION:
                continue
            if member_name.startswith("_") and member_name != "__call__":
                continue
            if any("validator" in str(d.value) for d in member.decorators):
                continue
            method_path = f"{path}.{member_name}"
            method = self.functions.function(
                member,
                method_path,
                anchor(name, member_name),
                f"{name}.{member_name}",
                method=True,
            )
            result.methods.append(method)
            self.loaded.targets[member.path] = Target(slug, method.anchor)
            self.loaded.targets[f"{name}.{member_name}"] = Target(slug, method.anchor)

    def _static_kind(self, cls: Any, path: str) -> ClassKind:
        """The kind of a class of a module that is never imported, read from its source.

        Only what needs no run-time answer is supported: a protocol, or a plain class (a dataclass
        that defines its own ``__init__`` reads as one); anything else is a problem to fix.
        """
        if any(str(base).rpartition(".")[2] == "Protocol" for base in cls.bases):
            return "protocol"
        init = cls.members.get("__init__")
        if "dataclass" not in cls.labels or (init is not None and not init.is_alias):
            return "class"
        self.loaded.problems.append(
            f"{path}: a class of a module that is not imported must be a plain class, a protocol"
            " or a dataclass with its own __init__"
        )
        return "class"

    def _constructor(
        self, init: Any, path: str, name: str, class_doc: Doc, fields: list[FieldDoc]
    ) -> Function:
        """The class's own ``__init__``; a parameter not described there takes the class's text."""
        constructor = self.functions.function(
            init, f"{path}.__init__", anchor(name, "__init__"), name, method=True
        )
        described = {f.name: f.description for f in fields}
        params = [
            dataclasses.replace(
                p,
                description=p.description
                or class_doc.params.get(p.name.lstrip("*"))
                or described.get(p.name),
            )
            for p in constructor.params
        ]
        constructor.params = params
        constructor.raises = constructor.raises or class_doc.raises
        parameters = list(init.parameters)[1:]
        constructor.signature = signature(
            name, [self.types.sig_param(p) for p in parameters], None
        )
        constructor.returns = None
        return constructor

    def _fields(
        self, cls: Any, specs: list[FieldSpec], path: str, doc: Doc
    ) -> tuple[list[FieldDoc], list[Param]]:
        fields: list[FieldDoc] = []
        params: list[Param] = []
        for field_name, required, default, runtime_type, description, init in specs:
            member = _member(cls, field_name)
            annotation = self.types.type(member.annotation) if member is not None else None
            if annotation is None:
                annotation = TypeExpr((_runtime_type(runtime_type),))
            msg = self.docs.attribute_msg(cls, field_name, path, doc)
            if msg is None and description:
                msg = Msg(f"{path}.{field_name}:description", normalize(description))
            fields.append(FieldDoc(field_name, annotation, required, msg))
            if init:
                params.append(Param(field_name, annotation, default, required, msg))
        return fields, params

    def _properties(self, cls: Any, path: str, doc: Doc) -> list[PropertyDoc]:
        """The public properties the class defines (griffe reads a property as an attribute
        labelled ``property``), in source order, described by their getter's docstring."""
        found: list[PropertyDoc] = []
        for name, member in in_source_order(cls.members):
            if (
                member.is_alias
                or member.kind is not griffe.Kind.ATTRIBUTE
                or "property" not in member.labels
                or name.startswith("_")
            ):
                continue
            found.append(
                PropertyDoc(
                    name,
                    self.types.type(member.annotation),
                    self.docs.attribute_msg(cls, name, path, doc),
                )
            )
        return found

    def _attributes(self, cls: Any, path: str, doc: Doc) -> list[FieldDoc]:
        fields: list[FieldDoc] = []
        for name, member in in_source_order(cls.members):
            if member.is_alias or member.kind is not griffe.Kind.ATTRIBUTE or name.startswith("_"):
                continue
            annotation = self.types.type(member.annotation)
            optional = annotation is not None and re.search(
                r"\bNone\b|\bOptional\[", annotation.text
            )
            fields.append(
                FieldDoc(
                    name, annotation, not optional, self.docs.attribute_msg(cls, name, path, doc)
                )
            )
        return fields


def _generated_constructor(
    kind: ClassKind, path: str, name: str, params: list[Param], doc: Doc
) -> Function:
    """The constructor that pydantic, dataclasses or namedtuple make from the fields."""
    keyword = "keyword-only" if kind == "model" else "positional-or-keyword"
    sig = [
        (
            keyword if not p.name.startswith("*") else "var-keyword",
            p.name,
            p.annotation.text if p.annotation else None,
            p.default,
        )
        for p in params
    ]
    return Function(
        path=f"{path}.__init__",
        name="__init__",
        anchor=anchor(name, "__init__"),
        signature=signature(name, sig, None),
        params=params,
        raises=doc.raises,
    )


def field_specs(live: Any, kind: ClassKind) -> list[FieldSpec]:
    """The fields of a model, dataclass, namedtuple or typed dict, read at run time."""
    if kind == "model":
        return [
            (
                field_name,
                info.is_required(),
                _pydantic_default(info),
                info.annotation,
                info.description,
                True,
            )
            for field_name, info in live.model_fields.items()
        ]
    if kind == "dataclass":
        return _dataclass_specs(live)
    hints = typing.get_type_hints(live)
    if kind == "namedtuple":
        specs: list[FieldSpec] = []
        for field_name in live._fields:
            has_default = field_name in live._field_defaults
            default = repr(live._field_defaults[field_name]) if has_default else None
            specs.append((field_name, not has_default, default, hints.get(field_name), None, True))
        return specs
    return [
        (field_name, field_name in live.__required_keys__, None, hints[field_name], None, True)
        for field_name in hints
    ]


def _dataclass_specs(live: Any) -> list[FieldSpec]:
    # A field with ``init=False`` is still read by users: it is documented among the fields
    # (never required) but is not a constructor parameter.
    specs: list[FieldSpec] = []
    for field in dataclasses.fields(live):
        required = field.init and (
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        default = _dataclass_default(field)
        specs.append((field.name, required, default, field.type, None, field.init))
    return specs


def _dataclass_makes_init(live: Any) -> bool:
    params = getattr(live, "__dataclass_params__", None)
    return bool(getattr(params, "init", True))


def _member(cls: Any, name: str) -> Any:
    try:
        member = cls.all_members.get(name)
    except Exception:  # noqa: BLE001 - unresolvable bases: fall back to the class's own members
        member = cls.members.get(name)
    if member is not None and member.is_alias and getattr(member, "inherited", False):
        member = member.final_target  # a field a dataclass inherits from its base
    if member is None or member.is_alias:
        return None
    return member


def _runtime_type(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, type) and not typing.get_args(value):
        return value.__name__
    return re.sub(r"\b(?:typing|collections\.abc|builtins)\.", "", repr(value))


def _default_repr(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def _factory_repr(factory: Any) -> str:
    name = getattr(factory, "__name__", "")
    return f"{name}()" if name and name != "<lambda>" else "<factory>"


def _pydantic_default(info: Any) -> str | None:
    if info.is_required():
        return None
    if info.default_factory is not None:
        return _factory_repr(info.default_factory)
    return _default_repr(info.default)


def _dataclass_default(field: dataclasses.Field[Any]) -> str | None:
    if field.default is not dataclasses.MISSING:
        return _default_repr(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return _factory_repr(field.default_factory)
    return None


def _is_typeddict(cls: Any) -> bool:
    """Whether a class read from its source is a typed dict: it derives from ``TypedDict``, or
    from a typed dict."""
    if any(str(base).rpartition(".")[2] == "TypedDict" for base in cls.bases):
        return True
    return any(_is_typeddict(final_object(base)) for base in cls.resolved_bases)


def class_kind(cls: type) -> ClassKind:
    """Classify a class at run time, the most specific kind first."""
    if issubclass(cls, BaseException):
        return "exception"
    if issubclass(cls, enum.Enum):
        return "enum"
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(cls, pydantic.BaseModel):
        return "model"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if typing.is_typeddict(cls):
        return "typeddict"
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return "namedtuple"
    if getattr(cls, "_is_protocol", False):
        return "protocol"
    return "class"
