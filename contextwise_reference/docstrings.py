"""Docstrings as messages: each paragraph, parameter, return and exception a translatable text.

Every text gets a stable context: the documented object's path and the slot of the text
(``summary``, ``paragraph:2``, ``param:name``, ``raises:ValueError``...). A Google-style section
the generator cannot show is a problem that fails the run.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import griffe

from contextwise_reference.annotations import Types
from contextwise_reference.loaded import Loaded, final_object, in_source_order
from contextwise_reference.model import Block, Example, Item, Msg

DOCSTRING_OPTIONS = griffe.GoogleOptions(
    returns_multiple_items=False,
    warn_unknown_params=True,
    warn_missing_types=True,
    trim_doctest_flags=True,
)
"""Google-style parsing: a Returns section is one item (its ``Word:`` prefix is put back)."""

_LIST_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_KINDS = griffe.ParameterKind


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


@dataclasses.dataclass
class DocState:
    """What reading one docstring counts across its sections."""

    number: int = 0
    examples: int = 0
    raised: dict[str, int] = dataclasses.field(default_factory=dict)


class Docstrings:
    """Reads the docstrings of griffe objects into :class:`Doc` values."""

    def __init__(self, loaded: Loaded, types: Types) -> None:
        self.loaded = loaded
        self.types = types

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
                typed = final_object(self.loaded.member(annotation.slice.canonical_path))
                return _typed_keys(typed)
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
                self.loaded.problems += [
                    f"{context}: the parameter {param.name!r} is not in the signature"
                    for param in section.value
                    if param.name.lstrip("*") not in known
                ]
        return sections

    def doc(self, obj: Any, context: str) -> Doc:
        """The docstring of ``obj``, its messages under ``context``."""
        doc = Doc()
        if obj.docstring is None:
            return doc
        state = DocState()
        for section in self._sections(obj, context):
            self._section(doc, section, context, state)
        return doc

    def _section(self, doc: Doc, section: Any, context: str, state: DocState) -> None:
        kind = section.kind.value
        if kind in ("text", "admonition"):
            text = (
                section.value if kind == "text" else f"{section.title}: {section.value.description}"
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
            state.examples = examples(doc, section, context, state.examples)
        else:
            self.loaded.problems.append(
                f"{context}: the docstring section {kind!r} is not supported"
            )

    def _returns(self, doc: Doc, section: Any, context: str, kind: str) -> None:
        value = section.value[0]
        # griffe reads "Word: text" as a named value; our docstrings do not name values.
        text = f"{value.name}: {value.description}" if value.name else value.description
        item = Item(self.types.type(value.annotation), message(context, kind, text))
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
                Item(self.types.type(entry.annotation), message(context, slot, entry.description))
            )

    def description(self, cls: Any, name: str, path: str) -> Msg | None:
        """The text of the docstring of ``cls``'s member ``name``, as one message."""
        member = cls.members.get(name)
        if member is None or member.is_alias or member.docstring is None:
            return None
        text = normalize(
            " ".join(msg.text for block in _text_only(member) for msg in block.msgs)
        )
        return Msg(f"{path}.{name}:description", text) if text else None

    def attribute_msg(self, cls: Any, name: str, path: str, doc: Doc) -> Msg | None:
        """An attribute's description: its docstring, the class's Attributes section, or else the
        description in a base class (a documented base keeps its own context: one message)."""
        found = self.description(cls, name, path) or doc.attributes.get(name)
        if found is not None:
            return found
        try:
            bases = cls.mro()
        except Exception:  # noqa: BLE001 - a base outside the package cannot be resolved
            bases = []
        for base in bases:
            where = self.loaded.public_path(base.path, path)
            inherited = self.description(base, name, where)
            if inherited is not None:
                return inherited
        return None


def message(context: str, slot: str, text: str | None) -> Msg | None:
    """The message of a slot, or nothing when its text is empty."""
    text = normalize(text or "")
    return Msg(f"{context}:{slot}", text) if text else None


def _text_only(obj: Any) -> list[Block]:
    blocks: list[Block] = []
    for section in obj.docstring.parsed:
        if section.kind.value == "text":
            found, _ = text_blocks(section.value, "", False, 0)
            blocks.extend(found)
    return [b for b in blocks if b.kind != "code"]


def examples(doc: Doc, section: Any, context: str, count: int) -> int:
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


def _typed_keys(typed: Any) -> dict[str, Any]:
    """A typed dict's keys: its own in source order, then those of its bases that are typed
    dicts of the package (each key keeps its own class, so its message keeps that context)."""
    members = in_source_order(typed.members)
    keys = {n: m for n, m in members if m.kind is griffe.Kind.ATTRIBUTE}
    for base in typed.resolved_bases:
        for name, key in _typed_keys(final_object(base)).items():
            keys.setdefault(name, key)
    return keys
