"""The language-independent model of the reference: what each page says, before translation.

Every text a reader sees in prose is a :class:`Msg`: an English ``msgid`` with a stable context
(object path + slot). The renderer asks a translator for each one; the extractor collects them.
Type expressions keep the canonical paths of the names they mention so that the renderer can link
them to their definitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Msg:
    """One translatable text: ``text`` is the English msgid, ``context`` its stable msgctxt."""

    context: str
    text: str


@dataclass(frozen=True)
class TypeExpr:
    """A type as written in the source: text pieces and ``(name, canonical path)`` pairs."""

    parts: tuple[str | tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "".join(part if isinstance(part, str) else part[0] for part in self.parts)


@dataclass(frozen=True)
class Block:
    """A paragraph (one message), a list (one message per item) or a code block (not translated)."""

    kind: Literal["paragraph", "list", "code"]
    msgs: tuple[Msg, ...] = ()
    code: str = ""
    language: str = ""


@dataclass(frozen=True)
class Example:
    """One piece of an Examples section: a translatable sentence or a doctest session."""

    text: Msg | None = None
    code: str = ""


@dataclass(frozen=True)
class Param:
    name: str
    annotation: TypeExpr | None
    default: str | None
    required: bool
    description: Msg | None


@dataclass(frozen=True)
class Item:
    """A Returns/Yields value or a Raises/Warns entry."""

    annotation: TypeExpr | None
    description: Msg | None


@dataclass
class Function:
    path: str
    name: str
    anchor: str
    signature: str
    description: list[Block] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    returns: Item | None = None
    yields: Item | None = None
    raises: list[Item] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    heading: str = ""
    """The name shown in the heading (``ContextBudget.plan``); ``name`` when empty."""


@dataclass(frozen=True)
class FieldDoc:
    name: str
    annotation: TypeExpr | None
    required: bool
    description: Msg | None


@dataclass(frozen=True)
class PropertyDoc:
    """A public property of a pydantic model, dataclass, named tuple or enumeration.

    Its type is the getter's return annotation and its description the getter's docstring.
    """

    name: str
    annotation: TypeExpr | None
    description: Msg | None


@dataclass(frozen=True)
class Member:
    """An enumeration member."""

    name: str
    value: str
    description: Msg | None


@dataclass(frozen=True)
class ErrorCode:
    code: str
    message: str


ClassKind = Literal[
    "class", "model", "dataclass", "enum", "protocol", "exception", "namedtuple", "typeddict"
]


@dataclass
class ClassDoc:
    path: str
    name: str
    anchor: str
    kind: ClassKind
    description: list[Block] = field(default_factory=list)
    bases: list[TypeExpr] = field(default_factory=list)
    fields: list[FieldDoc] = field(default_factory=list)
    fields_are_attributes: bool = False
    properties: list[PropertyDoc] = field(default_factory=list)
    """Shown in their own table after the fields; a plain class lists them among its attributes."""
    members: list[Member] = field(default_factory=list)
    error_codes: list[ErrorCode] = field(default_factory=list)
    constructor: Function | None = None
    methods: list[Function] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)


@dataclass
class AttributeDoc:
    """A module-level constant or type alias."""

    path: str
    name: str
    anchor: str
    signature: str
    description: list[Block] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)


@dataclass
class Page:
    slug: str
    title: str
    source: str
    module_path: str
    package: str
    namespace: str = ""
    """The module its names are imported from: the package root unless the page stands alone."""
    description: list[Block] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    classes: list[ClassDoc] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    attributes: list[AttributeDoc] = field(default_factory=list)

    @property
    def summary(self) -> Msg | None:
        for block in self.description:
            if block.kind == "paragraph":
                return block.msgs[0]
        return None


@dataclass(frozen=True)
class Target:
    """Where a documented name lives: its page and its anchor."""

    slug: str
    anchor: str


@dataclass
class Reference:
    """Everything the run documents: the pages and the index of linkable names."""

    package: str
    pages: list[Page]
    targets: dict[str, Target]
    """Documented object paths (canonical and public) to their page and anchor."""
