"""Collect the reference model of a package: griffe reads the source, pydantic answers at run time.

griffe loads the package statically (Google docstrings), so signatures, annotations and
docstrings are read exactly as written. The package is also imported, but only to ask what static
analysis cannot know for sure: the kind of a class (pydantic model, dataclass, enum...), which
fields are required and their defaults (``model_fields``, ``dataclasses.fields``), and the error
codes of an exception class. Any griffe warning, such as a documented parameter that is missing
from the signature, fails the run.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import importlib.util
import logging
import re
import sys
import typing
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import griffe

from tools.docs.sdkref.model import (
    AttributeDoc,
    Block,
    ClassDoc,
    ClassKind,
    ErrorCode,
    Example,
    FieldDoc,
    Function,
    Item,
    Member,
    Msg,
    Page,
    Param,
    PropertyDoc,
    Reference,
    Target,
    TypeExpr,
)

DOCSTRING_OPTIONS = griffe.GoogleOptions(
    returns_multiple_items=False,
    warn_unknown_params=True,
    warn_missing_types=True,
    trim_doctest_flags=True,
)
"""Google-style parsing: a Returns section is one item (its ``Word:`` prefix is put back)."""

SIGNATURE_WIDTH = 88
_WRAPPERS = {"Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"}
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_KINDS = griffe.ParameterKind


class GriffeWarningsError(RuntimeError):
    """griffe warned, or a docstring has a section the generator cannot show: the reference would
    be wrong or incomplete."""

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings
        super().__init__("problems in the docstrings:\n" + "\n".join(warnings))


@contextmanager
def griffe_warnings() -> Iterator[list[str]]:
    """Collect the warnings that griffe logs inside the block instead of printing them."""
    found: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record.getMessage())

    logger = logging.getLogger("griffe")
    handler = Collect(level=logging.WARNING)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield found
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def normalize(text: str) -> str:
    """One line, single spaces: a msgid does not change when a docstring is re-wrapped."""
    return " ".join(text.split())


def text_blocks(text: str, context: str, first: bool, start: int) -> tuple[list[Block], int]:
    """Split docstring text into paragraphs, lists and fenced code blocks.

    The first paragraph of a description is its ``summary``; the next blocks are numbered
    ``paragraph:N`` from ``start``; the items of a list are ``paragraph:N:item:M``.
    """
    blocks: list[Block] = []
    number = start
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        if line.lstrip().startswith("```"):
            fence = line.strip()
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith("```"):
                body.append(lines[index])
                index += 1
            index += 1
            blocks.append(Block("code", code="\n".join(body), language=fence[3:].strip()))
            continue
        chunk: list[str] = []
        while index < len(lines) and lines[index].strip():
            # A list that starts right under a paragraph, without a blank line, is still a list.
            if chunk and _LIST_ITEM.match(lines[index]) and not _LIST_ITEM.match(chunk[0]):
                break
            chunk.append(lines[index])
            index += 1
        if chunk[0].lstrip().startswith("|"):
            # A Markdown table keeps its rows: one message, translated whole.
            number += 1
            table = "\n".join(row.strip() for row in chunk)
            blocks.append(Block("paragraph", msgs=(Msg(f"{context}:paragraph:{number}", table),)))
            continue
        if _LIST_ITEM.match(chunk[0]):
            number += 1
            items: list[list[str]] = []
            for part in chunk:
                if _LIST_ITEM.match(part):
                    items.append([_LIST_ITEM.sub("", part)])
                else:
                    items[-1].append(part)
            msgs = tuple(
                Msg(f"{context}:paragraph:{number}:item:{position}", normalize(" ".join(item)))
                for position, item in enumerate(items, 1)
            )
            blocks.append(Block("list", msgs=msgs))
        elif first and not blocks:
            blocks.append(
                Block("paragraph", msgs=(Msg(f"{context}:summary", normalize(" ".join(chunk))),))
            )
        else:
            number += 1
            msg = Msg(f"{context}:paragraph:{number}", normalize(" ".join(chunk)))
            blocks.append(Block("paragraph", msgs=(msg,)))
    return blocks, number


@dataclasses.dataclass
class Doc:
    """The parsed sections of one docstring, as messages."""

    description: list[Block] = dataclasses.field(default_factory=list)
    params: dict[str, Msg] = dataclasses.field(default_factory=dict)
    attributes: dict[str, Msg] = dataclasses.field(default_factory=dict)
    returns: Item | None = None
    yields: Item | None = None
    raises: list[Item] = dataclasses.field(default_factory=list)
    examples: list[Example] = dataclasses.field(default_factory=list)


class Collector:
    """Builds the :class:`Reference` of one package."""

    def __init__(self, package: str, src: Path, root: Path) -> None:
        self.package = package
        self.src = src
        self.root = root
        self.targets: dict[str, Target] = {}
        self.problems: list[str] = []
        self._final_paths: dict[str, str] = {}
        self._modules: dict[str, Any] = {}
        """The module of each page, by slug."""
        self._static: set[str] = set()
        """The slugs of the pages whose module is read statically, never imported."""

    # -- loading -------------------------------------------------------------------------------

    def collect(self) -> Reference:
        with griffe_warnings() as warnings:
            self.module = griffe.load(
                self.package,
                search_paths=[str(self.src)],
                docstring_parser="google",
                docstring_options=DOCSTRING_OPTIONS,
            )
            self._import()
            pages = self._pages()
        if warnings or self.problems:
            raise GriffeWarningsError(sorted(set(warnings)) + self.problems)
        return Reference(self.package, pages, self.targets)

    def _import(self) -> Any:
        """Import the package from ``src``, even if a same-named one was imported from elsewhere.

        The package is loaded from its own folder by file location, so ``sys.path`` is left as
        it is: the fixture package of the tests is imported without being installed.
        """
        loaded = sys.modules.get(self.package)
        if loaded is not None and Path(loaded.__file__ or "").is_relative_to(self.src):
            return loaded
        for name in [n for n in sys.modules if n.split(".")[0] == self.package]:
            del sys.modules[name]
        init = self.src / self.package / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            self.package, init, submodule_search_locations=[str(init.parent)]
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {self.package} from {init}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.package] = module
        spec.loader.exec_module(module)
        return module

    def _runtime(self, path: str) -> Any:
        module_path, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module_path), name)

    def final(self, path: str) -> str:
        """The path an alias finally points to (``pkg.Name`` -> ``pkg.module.Name``)."""
        if path not in self._final_paths:
            try:
                obj = self.module.modules_collection.get_member(path)
                self._final_paths[path] = obj.final_target.path if obj.is_alias else obj.path
            except Exception:  # noqa: BLE001 - a name outside the package (str, Sequence...)
                self._final_paths[path] = path
        return self._final_paths[path]

    # -- pages ---------------------------------------------------------------------------------

    def _pages(self) -> list[Page]:
        grouped: dict[str, list[tuple[str, Any]]] = {}
        roots: dict[str, str] = {}
        for export in self.module.exports or ():
            name = str(export)
            if name.startswith("_"):
                continue
            exported = self.module[name]
            target = exported.final_target if exported.is_alias else exported
            parts = target.path.split(".")
            if len(parts) < 3 or parts[0] != self.package:
                continue
            slug = self._page_of(exported, parts[1])
            grouped.setdefault(slug, []).append((name, target))
            self._modules[slug] = self.module.members[slug]
            roots[slug] = self.package
        exported_paths = {target.path for members in grouped.values() for _, target in members}
        for module in self._standalone(self.module, exported_paths):
            slug = "-".join(module.path.split(".")[1:]).replace("_", "-")
            grouped[slug] = [(str(name), self._final(module[str(name)])) for name in module.exports]
            self._modules[slug] = module
            self._static.add(slug)
            roots[slug] = module.path
        # Every documented name is known before any page is built, so that links and inherited
        # descriptions can point to a page built later.
        for slug, members in grouped.items():
            for name, target in members:
                aliases = (target.path, f"{self.package}.{slug}.{name}", f"{roots[slug]}.{name}")
                for alias in aliases:
                    self.targets[alias] = Target(slug, name)
                self.targets[name] = Target(slug, name)
        return [self._page(slug, members, roots[slug]) for slug, members in sorted(grouped.items())]

    @staticmethod
    def _final(obj: Any) -> Any:
        return obj.final_target if obj.is_alias else obj

    def _standalone(self, package: Any, exported: set[str]) -> Iterator[Any]:
        """The public modules under ``package`` that declare ``__all__`` and whose names the
        package root does not export: each is documented on a page of its own."""
        for name, module in sorted(package.modules.items()):
            if name.startswith("_") or module.is_alias:
                continue
            names = [str(n) for n in module.exports or () if not str(n).startswith("_")]
            if names and not any(self._final(module[n]).path in exported for n in names):
                yield module
            yield from self._standalone(module, exported)

    def _page_of(self, exported: Any, module: str) -> str:
        """The page of an exported name: the public module that defines it.

        A name defined in a private module (``_translation``) is documented on the page of the
        public module that the package root imports it from (``i18n``), where readers look.
        """
        if not module.startswith("_") or not exported.is_alias:
            return module
        parts = str(exported.target_path).split(".")
        return parts[1] if len(parts) > 2 and not parts[1].startswith("_") else module

    def _page(self, slug: str, members: list[tuple[str, Any]], namespace: str) -> Page:
        module = self._modules[slug]
        filepath = module.filepath
        if not isinstance(filepath, Path):
            raise GriffeWarningsError([f"{module.path}: a namespace package has no page"])
        is_package = filepath.name == "__init__.py"
        folder = filepath.parent if is_package else filepath
        source = folder.relative_to(self.root).as_posix() + ("/" if is_package else "")
        title = "/".join(module.path.split(".")[1:])
        page = Page(
            slug=slug,
            title=f"{title}/" if is_package else f"{title}.py",
            source=source,
            module_path=module.path,
            package=self.package,
            namespace=namespace,
            names=sorted((name for name, _ in members), key=_import_order),
        )
        page.description = self.doc(module, page.module_path).description
        members.sort(key=lambda item: (str(item[1].filepath), item[1].lineno or 0))
        for name, target in members:
            path = f"{page.module_path}.{name}"
            if target.kind is griffe.Kind.CLASS:
                page.classes.append(self._class(target, path, name, slug))
            elif target.kind is griffe.Kind.FUNCTION:
                page.functions.append(self.function(target, path, name, name))
            elif target.kind is griffe.Kind.ATTRIBUTE:
                page.attributes.append(self._attribute(target, path, name))
        return page

    # -- docstrings ----------------------------------------------------------------------------

    def unpacked(self, obj: Any) -> dict[str, Any]:
        """The keys of a ``**options: Unpack[SomeTypedDict]`` parameter of a function, or of a
        class's ``__init__``, in source order: name -> the typed dict's attribute (read
        statically). Each key is documented as a keyword parameter of its own."""
        fn = obj.members.get("__init__") if obj.kind is griffe.Kind.CLASS else obj
        if fn is None or fn.is_alias or fn.kind is not griffe.Kind.FUNCTION:
            return {}
        for param in fn.parameters:
            annotation = param.annotation
            if (
                param.kind is _KINDS.var_keyword
                and isinstance(annotation, griffe.ExprSubscript)
                and getattr(annotation.left, "name", None) == "Unpack"
                and isinstance(annotation.slice, griffe.Expr)
            ):
                typed = self._final(
                    self.module.modules_collection.get_member(annotation.slice.canonical_path)
                )
                members = sorted(typed.members.items(), key=lambda m: m[1].lineno or 0)
                return {n: m for n, m in members if m.kind is griffe.Kind.ATTRIBUTE}
        return {}

    def _sections(self, obj: Any, context: str) -> list[Any]:
        """The parsed docstring. With unpacked keyword options, griffe cannot tell that an option
        is a parameter: its two warnings are off, and each documented name is checked here."""
        keys = self.unpacked(obj) if obj.kind in (griffe.Kind.CLASS, griffe.Kind.FUNCTION) else {}
        if not keys:
            return list(obj.docstring.parsed)
        quiet = {**DOCSTRING_OPTIONS, "warn_unknown_params": False, "warn_missing_types": False}
        sections = list(obj.docstring.parse("google", **quiet))
        fn = obj.members["__init__"] if obj.kind is griffe.Kind.CLASS else obj
        known = {p.name for p in fn.parameters} | set(keys)
        for section in sections:
            if section.kind.value == "parameters":
                self.problems += [
                    f"{context}: the parameter {param.name!r} is not in the signature"
                    for param in section.value
                    if param.name.lstrip("*") not in known
                ]
        return sections

    def doc(self, obj: Any, context: str) -> Doc:
        doc = Doc()
        if obj.docstring is None:
            return doc
        state = _DocState()
        for section in self._sections(obj, context):
            kind = section.kind.value
            if kind in ("text", "admonition"):
                text = (
                    section.value
                    if kind == "text"
                    else f"{section.title}: {section.value.description}"
                )
                blocks, state.number = text_blocks(text, context, not doc.description, state.number)
                doc.description.extend(blocks)
            elif kind in ("parameters", "other parameters"):
                for param in section.value:
                    name = param.name.lstrip("*")
                    doc.params[name] = Msg(f"{context}:param:{name}", normalize(param.description))
            elif kind == "attributes":
                for attribute in section.value:
                    doc.attributes[attribute.name] = Msg(
                        f"{context}:attribute:{attribute.name}", normalize(attribute.description)
                    )
            elif kind in ("returns", "yields"):
                self._returns(doc, section, context, kind)
            elif kind == "raises":
                self._raises(doc, section, context, state.raised)
            elif kind == "examples":
                state.examples = _examples(doc, section, context, state.examples)
            else:
                self.problems.append(f"{context}: the docstring section {kind!r} is not supported")
        return doc

    def _returns(self, doc: Doc, section: Any, context: str, kind: str) -> None:
        value = section.value[0]
        # griffe reads "Word: text" as a named value; our docstrings do not name values.
        text = f"{value.name}: {value.description}" if value.name else value.description
        item = Item(self.type(value.annotation), self._msg(context, kind, text))
        if kind == "returns":
            doc.returns = item
        else:
            doc.yields = item

    def _raises(self, doc: Doc, section: Any, context: str, raised: dict[str, int]) -> None:
        for entry in section.value:
            name = str(entry.annotation)
            raised[name] = raised.get(name, 0) + 1
            suffix = "" if raised[name] == 1 else f":{raised[name]}"
            slot = f"raises:{name}{suffix}"
            doc.raises.append(
                Item(self.type(entry.annotation), self._msg(context, slot, entry.description))
            )

    @staticmethod
    def _msg(context: str, slot: str, text: str | None) -> Msg | None:
        text = normalize(text or "")
        return Msg(f"{context}:{slot}", text) if text else None

    # -- types and signatures ------------------------------------------------------------------

    def type(self, expr: Any) -> TypeExpr | None:
        if expr is None or expr == "":
            return None
        if isinstance(expr, str):
            return TypeExpr((expr,))
        expr = _unwrap(expr)
        if isinstance(expr, str):
            return TypeExpr((expr,))
        parts: list[str | tuple[str, str]] = []
        for piece in self._public_pieces(expr):
            if isinstance(piece, str):
                if parts and isinstance(parts[-1], str):
                    parts[-1] += piece
                else:
                    parts.append(piece)
            else:
                parts.append((piece.name, self.final(piece.canonical_path)))
        return TypeExpr(tuple(parts))

    def _public_pieces(self, expr: Any) -> list[Any]:
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
                alias = self.module.modules_collection.get_member(piece.canonical_path)
            except (KeyError, ValueError, griffe.AliasResolutionError):
                alias = None
            value = getattr(alias, "value", None)
            if value is None:
                self.problems.append(f"the private type {piece.canonical_path} cannot be shown")
                pieces.append(piece.name)
                continue
            pieces.extend(self._public_pieces(_unwrap(value)))
        return pieces

    def public_text(self, expr: Any) -> str | None:
        """A type expression as text, with private aliases replaced (see ``_public_pieces``)."""
        if expr is None:
            return None
        return "".join(
            piece if isinstance(piece, str) else piece.name for piece in self._public_pieces(expr)
        )

    def signature(
        self, name: str, params: list[tuple[str, str, str | None, str | None]], returns: str | None
    ) -> str:
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
            star = {"var-positional": "*", "var-keyword": "**"}.get(kind, "")
            text = f"{star}{param}"
            if annotation:
                text += f": {annotation}"
            if default is not None and not star:
                text += f" = {default}" if annotation else f"={default}"
            rendered.append(text)
            previous = kind
        if previous == "positional-only":
            rendered.append("/")
        tail = f" -> {returns}" if returns else ""
        line = f"{name}({', '.join(rendered)}){tail}"
        if len(line) <= SIGNATURE_WIDTH or not rendered:
            return line
        body = "".join(f"    {item},\n" for item in rendered)
        return f"{name}(\n{body}){tail}"

    def function(
        self, fn: Any, path: str, anchor: str, heading: str, *, method: bool = False
    ) -> Function:
        doc = self.with_async_twin(fn, path, self.doc(fn, path))
        parameters = list(fn.parameters)
        if method and "staticmethod" not in fn.labels and parameters:
            parameters = parameters[1:]
        params: list[Param] = []
        keys = self.unpacked(fn)
        for p in parameters:
            if p.kind is _KINDS.var_keyword and keys:
                params += self._expanded(keys, doc, path, p.name)
            else:
                params.append(self._param(p, doc))
        returns = fn.returns if fn.returns not in (None, "None") else None
        prefix = "async " if "async" in fn.labels else ""
        decorators = "".join(
            f"@{label}\n" for label in ("classmethod", "staticmethod") if label in fn.labels
        )
        signature = (
            decorators
            + prefix
            + self.signature(
                fn.name,
                [self._sig_param(p) for p in parameters],
                self.public_text(returns) if returns else None,
            )
        )
        result = Function(
            path=path,
            name=fn.name,
            anchor=anchor,
            signature=signature,
            description=doc.description,
            params=params,
            # A generator documents what it yields; its Iterator annotation is not a return value.
            returns=None
            if doc.yields and not doc.returns
            else _with_type(doc.returns, self.type(returns)),
            yields=doc.yields,
            raises=doc.raises,
            examples=doc.examples,
            heading=heading,
        )
        return result

    def _expanded(self, keys: dict[str, Any], doc: Doc, path: str, name: str) -> list[Param]:
        """The keys of ``**name: Unpack[SomeTypedDict]``, one keyword parameter each, described
        once, by the typed dict's own attribute docstrings (their messages keep the typed dict's
        context, so a translator sees each text once). A docstring that documents the keys or
        ``**name`` again is a problem: the table would hide what it says."""
        params: list[Param] = []
        for documented in (name, *keys):
            if documented in doc.params:
                self.problems.append(
                    f"{path}: the parameter {documented!r} is documented by the typed dict of "
                    f"**{name}; remove it from Args"
                )
        for key_name, key in keys.items():
            typed = key.parent
            target = self.targets.get(typed.path)
            where = f"{self.package}.{target.slug}.{target.anchor}" if target else typed.path
            description = self._description(typed, key_name, where)
            params.append(Param(key_name, self.type(key.annotation), None, False, description))
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
        twin_doc = self.doc(twin, f"{path.rpartition('.')[0]}.a{fn.name}")
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
            annotation=self.type(param.annotation),
            default=default,
            required=default is None and not variadic,
            description=doc.params.get(param.name),
        )

    def _sig_param(self, param: Any) -> tuple[str, str, str | None, str | None]:
        annotation = self.public_text(param.annotation)
        default = str(param.default) if param.default is not None else None
        return (
            param.kind.value.replace(" ", "-").replace("variadic-", "var-"),
            param.name,
            annotation,
            default,
        )

    # -- classes -------------------------------------------------------------------------------

    def _class(self, cls: Any, path: str, name: str, slug: str) -> ClassDoc:
        runtime: Any = None
        if slug in self._static:
            kind = self._static_kind(cls, path)
        else:
            runtime = self._runtime(cls.path)
            kind = class_kind(runtime)
        doc = self.doc(cls, path)
        result = ClassDoc(
            path=path,
            name=name,
            anchor=name,
            kind=kind,
            description=doc.description,
            examples=list(doc.examples),
        )
        if kind == "exception":
            self._exception(result, cls, runtime)
        self._class_fields(result, cls, runtime, path, name, doc)
        init = cls.members.get("__init__")
        custom = kind == "model" and init is not None
        if (
            (result.constructor is None or custom)
            and init is not None
            and kind not in ("enum", "protocol")
        ):
            result.constructor = self._constructor(cls, init, path, name, doc, result.fields)
            result.examples.extend(result.constructor.examples)
            result.constructor.examples = []
        self._class_methods(result, cls, path, name, slug)
        described = [f.name for f in result.fields] + [p.name for p in result.properties]
        for member_name in described + [m.name for m in result.members]:
            self.targets.setdefault(f"{cls.path}.{member_name}", Target(slug, name))
            self.targets.setdefault(f"{name}.{member_name}", Target(slug, name))
        return result

    def _exception(self, result: ClassDoc, cls: Any, runtime: Any) -> None:
        """An exception's bases and error codes."""
        result.bases = [t for t in (self.type(base) for base in cls.bases) if t is not None]
        messages = runtime.__dict__.get("messages")
        if isinstance(messages, Mapping):
            result.error_codes = [
                ErrorCode(code, str(getattr(text, "singular", text)))
                for code, text in messages.items()
            ]

    def _class_fields(
        self, result: ClassDoc, cls: Any, runtime: Any, path: str, name: str, doc: Doc
    ) -> None:
        """A class's members, fields or attributes, properties and generated constructor."""
        kind = result.kind
        if kind == "enum":
            result.members = [
                Member(
                    member.name,
                    repr(member.value),
                    self._attribute_msg(cls, member.name, path, doc),
                )
                for member in runtime
            ]
        elif kind in ("model", "dataclass", "namedtuple", "typeddict"):
            result.fields, params = self._fields(cls, runtime, kind, path, doc)
            if kind != "typeddict":
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
                result.constructor = Function(
                    path=f"{path}.__init__",
                    name="__init__",
                    anchor=_anchor(name, "__init__"),
                    signature=self.signature(name, sig, None),
                    params=params,
                    raises=doc.raises,
                )
        else:
            result.fields = self._attributes(cls, path, doc)
            result.fields_are_attributes = True
        if kind in ("enum", "model", "dataclass", "namedtuple"):
            result.properties = self._properties(cls, path, doc)

    def _class_methods(self, result: ClassDoc, cls: Any, path: str, name: str, slug: str) -> None:
        """A class's public methods, in source order, each registered as a link target."""
        for member_name, member in sorted(cls.members.items(), key=lambda m: m[1].lineno or 0):
            if member.is_alias or member.kind is not griffe.Kind.FUNCTION:
                continue
            if member_name.startswith("_") and member_name != "__call__":
                continue
            if any("validator" in str(d.value) for d in member.decorators):
                continue
            method_path = f"{path}.{member_name}"
            method = self.function(
                member,
                method_path,
                _anchor(name, member_name),
                f"{name}.{member_name}",
                method=True,
            )
            result.methods.append(method)
            self.targets[member.path] = Target(slug, method.anchor)
            self.targets[f"{name}.{member_name}"] = Target(slug, method.anchor)

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
        self.problems.append(
            f"{path}: a class of a module that is not imported must be a plain class, a protocol"
            " or a dataclass with its own __init__"
        )
        return "class"

    def _constructor(
        self, cls: Any, init: Any, path: str, name: str, class_doc: Doc, fields: list[FieldDoc]
    ) -> Function:
        """The class's own ``__init__``; a parameter not described there takes the class's text."""
        constructor = self.function(
            init, f"{path}.__init__", _anchor(name, "__init__"), name, method=True
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
        constructor.signature = self.signature(name, [self._sig_param(p) for p in parameters], None)
        constructor.returns = None
        return constructor

    def _attribute_msg(self, cls: Any, name: str, path: str, doc: Doc) -> Msg | None:
        """An attribute's description: its docstring, the class's Attributes section, or else the
        description in a base class (a documented base keeps its own context: one message)."""
        found = self._description(cls, name, path) or doc.attributes.get(name)
        if found is not None:
            return found
        try:
            bases = cls.mro()
        except Exception:  # noqa: BLE001 - a base outside the package cannot be resolved
            bases = []
        for base in bases:
            target = self.targets.get(base.path)
            where = f"{self.package}.{target.slug}.{target.anchor}" if target else path
            inherited = self._description(base, name, where)
            if inherited is not None:
                return inherited
        return None

    def _description(self, cls: Any, name: str, path: str) -> Msg | None:
        member = cls.members.get(name)
        if member is None or member.is_alias or member.docstring is None:
            return None
        text = normalize(
            " ".join(msg.text for block in self._text_only(member) for msg in block.msgs)
        )
        return Msg(f"{path}.{name}:description", text) if text else None

    def _text_only(self, obj: Any) -> list[Block]:
        blocks: list[Block] = []
        for section in obj.docstring.parsed:
            if section.kind.value == "text":
                found, _ = text_blocks(section.value, "", False, 0)
                blocks.extend(found)
        return [b for b in blocks if b.kind != "code"]

    def _fields(
        self, cls: Any, runtime: Any, kind: ClassKind, path: str, doc: Doc
    ) -> tuple[list[FieldDoc], list[Param]]:
        # name, required, default, runtime type, description, constructor parameter
        specs: list[tuple[str, bool, str | None, Any, str | None, bool]] = []
        if kind == "model":
            for field_name, info in runtime.model_fields.items():
                specs.append(
                    (
                        field_name,
                        info.is_required(),
                        _pydantic_default(info),
                        info.annotation,
                        info.description,
                        True,
                    )
                )
        elif kind == "dataclass":
            # A field with ``init=False`` is still read by users: it is documented among the
            # fields (never required) but is not a constructor parameter.
            for field in dataclasses.fields(runtime):
                required = field.init and (
                    field.default is dataclasses.MISSING
                    and field.default_factory is dataclasses.MISSING
                )
                default = _dataclass_default(field)
                specs.append((field.name, required, default, field.type, None, field.init))
        elif kind == "namedtuple":
            hints = typing.get_type_hints(runtime)
            for field_name in runtime._fields:
                has_default = field_name in runtime._field_defaults
                default = repr(runtime._field_defaults[field_name]) if has_default else None
                specs.append(
                    (field_name, not has_default, default, hints.get(field_name), None, True)
                )
        else:
            hints = typing.get_type_hints(runtime)
            for field_name in hints:
                specs.append(
                    (
                        field_name,
                        field_name in runtime.__required_keys__,
                        None,
                        hints[field_name],
                        None,
                        True,
                    )
                )
        fields: list[FieldDoc] = []
        params: list[Param] = []
        for field_name, required, default, runtime_type, description, init in specs:
            member = _member(cls, field_name)
            annotation = self.type(member.annotation) if member is not None else None
            if annotation is None:
                annotation = TypeExpr((_runtime_type(runtime_type),))
            msg = self._attribute_msg(cls, field_name, path, doc)
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
        for name, member in sorted(cls.members.items(), key=lambda m: m[1].lineno or 0):
            if (
                member.is_alias
                or member.kind is not griffe.Kind.ATTRIBUTE
                or "property" not in member.labels
                or name.startswith("_")
            ):
                continue
            found.append(
                PropertyDoc(
                    name, self.type(member.annotation), self._attribute_msg(cls, name, path, doc)
                )
            )
        return found

    def _attributes(self, cls: Any, path: str, doc: Doc) -> list[FieldDoc]:
        fields: list[FieldDoc] = []
        members = sorted(cls.members.items(), key=lambda m: m[1].lineno or 0)
        for name, member in members:
            if member.is_alias or member.kind is not griffe.Kind.ATTRIBUTE or name.startswith("_"):
                continue
            annotation = self.type(member.annotation)
            optional = annotation is not None and re.search(
                r"\bNone\b|\bOptional\[", annotation.text
            )
            fields.append(
                FieldDoc(name, annotation, not optional, self._attribute_msg(cls, name, path, doc))
            )
        return fields

    # -- module attributes ---------------------------------------------------------------------

    def _attribute(self, attribute: Any, path: str, name: str) -> AttributeDoc:
        doc = self.doc(attribute, path)
        text = name
        if attribute.annotation is not None:
            text += f": {attribute.annotation}"
        if attribute.value is not None:
            text += f" = {attribute.value}"
        return AttributeDoc(
            path=path,
            name=name,
            anchor=name,
            signature=text,
            description=doc.description,
            examples=doc.examples,
        )


def _anchor(cls: str, member: str) -> str:
    """The heading id of a class member: ``Class-method``, ``Class-constructor`` for ``__init__``.

    A dunder is spelled without its underscores: Markdown would read ``__init__`` in a heading id
    as bold text and drop the id.
    """
    if member == "__init__":
        return f"{cls}-constructor"
    return f"{cls}-{member.strip('_')}" if member.startswith("__") else f"{cls}-{member}"


def _import_order(name: str) -> tuple[int, str]:
    """The order of ruff's isort: constants, then classes, then functions and variables."""
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


@dataclasses.dataclass
class _DocState:
    """What reading one docstring counts across its sections."""

    number: int = 0
    examples: int = 0
    raised: dict[str, int] = dataclasses.field(default_factory=dict)


def _examples(doc: Doc, section: Any, context: str, count: int) -> int:
    """Add an Examples section's code and sentences; return the sentences counted so far."""
    for sub_kind, text in section.value:
        if sub_kind.value == "examples":
            doc.examples.append(Example(code=text))
            continue
        for block in text.split("\n\n"):
            if block.strip():
                count += 1
                msg = Msg(f"{context}:example:{count}", normalize(block))
                doc.examples.append(Example(text=msg))
    return count


def _unwrap(expr: Any) -> Any:
    while isinstance(expr, griffe.ExprSubscript) and getattr(expr.left, "name", None) in _WRAPPERS:
        inner = expr.slice
        expr = inner.elements[0] if isinstance(inner, griffe.ExprTuple) else inner
    return expr


def _with_type(item: Item | None, annotation: TypeExpr | None) -> Item | None:
    if item is None:
        return Item(annotation, None) if annotation is not None else None
    return Item(item.annotation or annotation, item.description)


def _member(cls: Any, name: str) -> Any:
    try:
        member = cls.all_members.get(name)
    except Exception:  # noqa: BLE001 - unresolvable bases: fall back to the class's own members
        member = cls.members.get(name)
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


def collect(package: str, src: Path, root: Path) -> Reference:
    """Load ``package`` from ``src`` and return its reference model."""
    return Collector(package, src, root).collect()
