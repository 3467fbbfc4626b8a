"""Pydantic validation failures turned into coded contextwise errors. Internal.

Every pydantic model of contextwise derives from :class:`CodedModel`. Its constructor and its
``model_validate*`` class methods raise a :class:`~contextwise.errors.ContextwiseError` of the
model's error class instead of pydantic's ``ValidationError``: one coded error per problem
(``unknown_key``, ``wrong_type``, ``out_of_range``...), each with the field path in the user's
spelling and the offending value. The error raised is the first problem; its ``problems`` hold
them all.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, Tag, ValidationError
from pydantic_core import ErrorDetails, from_json

from contextwise._checks import MAX_DEPTH, too_deep
from contextwise._translation import short_repr as value_repr
from contextwise._translation import short_text
from contextwise.errors import ContextwiseError, InvalidValueError, with_problems

ModelT = TypeVar("ModelT", bound=BaseModel)

VALUE_REPR_LIMIT = 80
"""The longest offending value quoted in a message, in characters."""

MAX_PROBLEMS = 20
"""The most problems of one input turned into coded errors; the message counts the others."""

_TYPE_ERROR = re.compile(r"(?P<kind>[a-z_]+?)_(?:type|parsing|from_float)\Z")
_EXPECTED_TYPES = {
    "int": "integer",
    "float": "number",
    "decimal": "number",
    "string": "string",
    "bytes": "string",
    "bool": "boolean",
    "dict": "object",
    "model": "object",
    "model_attributes": "object",
    "dataclass": "object",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozen_set": "array",
    "iterable": "array",
}
_BOUNDS = {
    "greater_than": ("gt", ">"),
    "greater_than_equal": ("ge", "≥"),
    "less_than": ("lt", "<"),
    "less_than_equal": ("le", "≤"),
}
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_LINE_COLUMN = re.compile(r"line (\d+) column (\d+)")


class CodedModel(BaseModel):
    """A pydantic model whose validation failures are coded contextwise errors.

    A subclass names the class of its errors in ``_error_class``.
    """

    _error_class: ClassVar[type[ContextwiseError]] = InvalidValueError

    def __init__(self, /, **data: Any) -> None:
        # No depth check here: the models build their own reports this way, and a field given
        # nested data fails on its type at the first level anyway.
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise coded_error(exc, type(self), data) from None

    # Tells pydantic that this constructor validates exactly as its own does, so that nested
    # models are validated in one pass (a custom __init__ would be called for each of them).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """Validate a Python object, raising a coded error on any problem."""
        _check_depth(cls, obj)
        try:
            return super().model_validate(obj, **options)
        except ValidationError as exc:
            raise coded_error(exc, cls, obj) from None

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Self:
        """Validate JSON text, raising a coded error on any problem (``invalid_json`` included)."""
        try:
            data = from_json(json_data)
        except (TypeError, ValueError):
            pass  # pydantic reports the text that is not JSON, with its position
        else:
            _check_depth(cls, data)
        try:
            return super().model_validate_json(json_data, **options)
        except ValidationError as exc:
            raise coded_error(exc, cls, _loads(json_data)) from None

    @classmethod
    def model_validate_strings(cls, obj: Any, **options: Any) -> Self:
        """Validate an object of strings, raising a coded error on any problem."""
        _check_depth(cls, obj)
        try:
            return super().model_validate_strings(obj, **options)
        except ValidationError as exc:
            raise coded_error(exc, cls, obj) from None


def read_json(text: object, name: str) -> object:
    """Parse JSON text once, raising the coded errors of the models' ``model_validate_json``.

    Args:
        text: The text (``str``, ``bytes`` or ``bytearray``).
        name: What the text holds, named in the errors (``BudgetSegment``).

    Raises:
        InvalidValueError: When the value is not text (code ``wrong_type``), the text is not
            JSON (code ``invalid_json``, with its line and column), or it is nested too deep
            (code ``too_deep``).
    """
    if not isinstance(text, str | bytes | bytearray):
        raise InvalidValueError(
            "wrong_type", field=name, expected="string", value=value_repr(text, VALUE_REPR_LIMIT)
        )
    if isinstance(text, str):
        _check_encodable(text)
    try:
        data = from_json(text)
    except ValueError as exc:
        reason = str(exc)
        if "recursion limit" in reason:
            raise InvalidValueError("too_deep", field=name, limit=MAX_DEPTH) from None
        found = _LINE_COLUMN.search(reason)
        line, column = (int(found[1]), int(found[2])) if found else (1, 0)
        raise InvalidValueError("invalid_json", line=line, column=column, detail=reason) from None
    if too_deep(data):
        raise InvalidValueError("too_deep", field=name, limit=MAX_DEPTH)
    return data


def _check_encodable(text: str) -> None:
    """JSON text is Unicode: a lone surrogate (which no encoding can write) is not JSON."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        column = exc.start - (text.rfind("\n", 0, exc.start) + 1)
        raise InvalidValueError(
            "invalid_json", line=line, column=column, detail=exc.reason
        ) from None


def _loads(text: object) -> object:
    try:
        return json.loads(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, RecursionError):
        return text


def _check_depth(model: type[BaseModel], data: object) -> None:
    """Refuse input nested deeper than :data:`MAX_DEPTH`, before a recursive validator meets it."""
    if too_deep(data):
        error_class: type[ContextwiseError] = getattr(model, "_error_class", InvalidValueError)
        raise error_class("too_deep", field=model.__name__, limit=MAX_DEPTH)


def coded_error(exc: ValidationError, model: type[BaseModel], data: object) -> ContextwiseError:
    """Turn a pydantic ``ValidationError`` into coded contextwise errors.

    Args:
        exc: The validation error pydantic raised.
        model: The model that was validated.
        data: The input, walked to spell each field path as the user wrote it.

    Returns:
        The first problem, whose ``problems`` hold the first :data:`MAX_PROBLEMS` problems in
        pydantic's order; its message counts every other one.
    """
    error_class: type[ContextwiseError] = getattr(model, "_error_class", InvalidValueError)
    errors = exc.errors(include_url=False)
    problems = [problem_error(error, model, data, error_class) for error in errors[:MAX_PROBLEMS]]
    return with_problems(problems[0], tuple(problems[1:]), len(errors) - len(problems))


def problem_error(
    error: ErrorDetails,
    model: type[BaseModel],
    data: object,
    error_class: type[ContextwiseError],
) -> ContextwiseError:
    """Turn one of pydantic's error entries into a coded contextwise error."""
    kind = error["type"]
    loc = tuple(error["loc"])
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    inner = ctx.get("error")
    field = field_path(loc, data, model)
    if isinstance(inner, ContextwiseError):
        return _located(inner, field, bool(loc))
    value = short_repr(error.get("input"))
    if kind == "extra_forbidden":
        return _extra_key(model, loc, data, field, error_class)
    if kind == "missing":
        return error_class("missing_key", field=field)
    if kind == "union_tag_not_found":
        return error_class("missing_key", field=_join(field, _unquote(ctx["discriminator"])))
    if kind == "union_tag_invalid":
        return error_class(
            "invalid_choice",
            field=_join(field, _unquote(ctx["discriminator"])),
            expected=_quoted_list(ctx.get("expected_tags", "")),
            value=short_repr(ctx.get("tag")),
        )
    if kind in ("literal_error", "enum"):
        expected = _quoted_list(str(ctx.get("expected", "")))
        return error_class("invalid_choice", field=field, expected=expected, value=value)
    return _value_problem(error, kind, ctx, field, value, error_class)


def _extra_key(
    model: type[BaseModel],
    loc: tuple[int | str, ...],
    data: object,
    field: str,
    error_class: type[ContextwiseError],
) -> ContextwiseError:
    # With both spellings of one field given, pydantic reads the alias and reports the name as
    # an extra key: that is one key written twice, not an unknown key.
    found, value = model_at(model, loc[:-1], data)
    key = loc[-1] if loc else ""
    if found is None:
        return error_class("unknown_key", field=field, known=[])
    info = found.model_fields.get(str(key))
    if info is not None and info.alias and isinstance(value, Mapping) and info.alias in value:
        return error_class("duplicate_key", field=field, name=short_text(key), alias=info.alias)
    return error_class("unknown_key", field=field, known=list(found.model_fields))


def _value_problem(
    error: ErrorDetails,
    kind: str,
    ctx: dict[str, Any],
    field: str,
    value: str,
    error_class: type[ContextwiseError],
) -> ContextwiseError:
    if kind in _BOUNDS:
        key, symbol = _BOUNDS[kind]
        return error_class(
            "out_of_range", field=field, constraint=f"{symbol} {ctx.get(key)}", value=value
        )
    if kind == "finite_number":
        return error_class("not_finite", field=field, value=value)
    if kind in ("string_too_short", "string_pattern_mismatch"):
        return error_class("blank_value", field=field, value=value)
    if kind == "too_short":
        return error_class(
            "too_few_items", field=field, minimum=ctx.get("min_length", 0), count=_length(error)
        )
    if kind == "too_long":
        return error_class(
            "too_many_items", field=field, maximum=ctx.get("max_length", 0), count=_length(error)
        )
    if kind == "json_invalid":
        reason = str(ctx.get("error", ""))
        if "recursion limit" in reason:
            return error_class("too_deep", field=field, limit=MAX_DEPTH)
        found = _LINE_COLUMN.search(reason)
        line, column = (int(found[1]), int(found[2])) if found else (1, 0)
        return error_class("invalid_json", line=line, column=column, detail=reason)
    matched = _TYPE_ERROR.match(kind)
    if matched and matched["kind"] in _EXPECTED_TYPES:
        return error_class(
            "wrong_type", field=field, expected=_EXPECTED_TYPES[matched["kind"]], value=value
        )
    if kind in ("json_type", "is_instance_of", "none_required"):
        expected = "string" if kind == "json_type" else str(ctx.get("class", "null"))
        return error_class("wrong_type", field=field, expected=expected, value=value)
    return error_class("invalid_value", field=field, value=value, detail=error["msg"])


def _located(inner: ContextwiseError, field: str, nested: bool) -> ContextwiseError:
    """An error a validator raised, with its field path completed by where it was raised."""
    inner_field = inner.params.get("field")
    if not nested or not isinstance(inner_field, str) or "field" not in inner.params:
        return inner
    if inner.code not in _FIELD_CODES:
        return inner
    params = {**inner.params, "field": _join(field, inner_field)}
    return type(inner)(inner.code, locale=inner.locale, detail=inner.detail, **params)


_FIELD_CODES = frozenset({"duplicate_key", "wrong_type", "blank_value", "out_of_range"})


def _length(error: ErrorDetails) -> int:
    value = error.get("input")
    return len(value) if isinstance(value, Sequence | Mapping) else 0


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path and not path[0].isupper() else key


def _unquote(text: object) -> str:
    return str(text).strip("'\"")


def _quoted_list(text: str) -> list[str]:
    found = _QUOTED.findall(text)
    return [f"'{item}'" for item in found] if found else [text]


def short_repr(value: object, limit: int = VALUE_REPR_LIMIT) -> str:
    """The ``repr`` of a value, cut to ``limit`` characters with an ellipsis; it never raises."""
    return value_repr(value, limit)


def field_path(loc: tuple[int | str, ...], data: object, model: type[BaseModel]) -> str:
    """Spell a pydantic location as the user wrote it: ``steps[0].keepGroups``.

    The model's annotations are walked along the location, so that the tags pydantic inserts for
    unions (``trim`` in ``steps.0.trim.keep_groups``) are left out. An empty location is the
    model's name.
    """
    parts: list[str] = []
    annotation: Any = model
    current: object = data
    snake = _writes_snake_case(data)
    for part in loc:
        member = _union_member(annotation, part, current)
        if member is not None:
            annotation = member
            continue
        written = isinstance(current, Mapping) and part in current
        if isinstance(part, str) and snake and not written:
            part = _CAMEL_HUMP.sub(r"_\1", part).lower()  # a key the input lacks, as it writes
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
        if annotation is not None:
            annotation, current = _descend(annotation, part, current)
    text = "".join(parts).lstrip(".")
    return text or model.__name__


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _writes_snake_case(data: object, depth: int = 0) -> bool:
    """Whether an input spells its keys in snake_case (``fragment_id``) and never in camelCase:
    a key it lacks is then named in snake_case too."""
    snake = False
    pending: list[tuple[object, int]] = [(data, depth)]
    while pending:
        value, level = pending.pop()
        if level > 8:
            continue
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and _CAMEL_HUMP.search(key):
                    return False
                snake = snake or (isinstance(key, str) and "_" in key.strip("_"))
                pending.append((item, level + 1))
        elif isinstance(value, list | tuple):
            pending.extend((item, level + 1) for item in value[:100])
    return snake


def _union_member(annotation: Any, part: int | str, value: object) -> type[BaseModel] | None:
    """The member of a union of models that a location part names as a tag, if it is a tag."""
    if annotation is None or isinstance(part, int):
        return None
    stripped = _strip(annotation)
    if isinstance(stripped, type) and issubclass(stripped, BaseModel):
        return None
    for member, tag in _tagged_members(stripped):
        if part in (member.__name__, _tag(member), tag):
            return member
    return None


def _tagged_members(annotation: Any) -> list[tuple[type[BaseModel], str | None]]:
    """The models of a union, each with the ``Tag`` it is annotated with, if any."""
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return []
    found: list[tuple[type[BaseModel], str | None]] = []
    for arg in typing.get_args(annotation):
        tag = None
        if typing.get_origin(arg) is Annotated:
            tag = next((item.tag for item in arg.__metadata__ if isinstance(item, Tag)), None)
        member = _strip(arg)
        if _is_model(member):
            found.append((member, tag))
        elif typing.get_origin(member) in (typing.Union, types.UnionType):
            found.extend(_tagged_members(member))
    return found


def model_at(
    model: type[BaseModel], loc: tuple[int | str, ...], data: object
) -> tuple[type[BaseModel] | None, object]:
    """The model found at a location, and the input there; ``None`` when it cannot be told."""
    current: Any = model
    value: object = data
    for part in loc:
        current, value = _descend(current, part, value)
        if current is None:
            return None, None
    return _single_model(current, value), value


def _descend(annotation: Any, part: int | str, value: object) -> tuple[Any, object]:
    member = _union_member(annotation, part, value)
    if member is not None:
        # A union tag that pydantic inserted (``app`` may also be a field of the member).
        return member, value
    model = _single_model(annotation, value)
    if model is not None:
        for name, info in model.model_fields.items():
            if part in (name, info.alias):
                inner = value.get(part) if isinstance(value, Mapping) else None
                return info.annotation, inner
        # A union tag that pydantic inserted: the model is the member the tag chose.
        return (model, value) if part in (model.__name__, _tag(model)) else (None, None)
    stripped = _strip(annotation)
    origin = typing.get_origin(stripped)
    args = _members(stripped)
    if origin in (tuple, list) and args and isinstance(part, int):
        in_range = isinstance(value, list | tuple) and -len(value) <= part < len(value)
        return args[0], value[part] if in_range else None  # type: ignore[index]
    if origin is dict and len(args) == 2:
        return args[1], value.get(part) if isinstance(value, Mapping) else None
    for member in args:
        if _is_model(member) and part in (member.__name__, _tag(member)):
            return member, value
    return None, None


def _is_model(value: object) -> typing.TypeGuard[type[BaseModel]]:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _single_model(annotation: Any, value: object) -> type[BaseModel] | None:
    annotation = _strip(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    models = [
        member
        for member in _members(annotation)
        if isinstance(member, type) and issubclass(member, BaseModel)
    ]
    if len(models) == 1:
        return models[0]
    if isinstance(value, Mapping):
        for member in models:
            tag = _tag(member)
            if tag is not None and tag in (value.get("kind"), value.get("mode")):
                return member
    return None


def _tag(model: type[BaseModel]) -> str | None:
    for name in ("kind", "mode"):
        info = model.model_fields.get(name)
        if info is not None and typing.get_origin(info.annotation) is Literal:
            args = typing.get_args(info.annotation)
            if len(args) == 1:
                return str(args[0])
    return None


def _strip(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> tuple[Any, ...]:
    annotation = _strip(annotation)
    origin = typing.get_origin(annotation)
    args = tuple(_strip(arg) for arg in typing.get_args(annotation))
    if origin is typing.Union or origin is types.UnionType:
        flat: list[Any] = []
        for arg in args:
            inner = _members(arg)
            nested = typing.get_origin(arg) in (typing.Union, types.UnionType)
            flat.extend(inner if nested else [arg])
        return tuple(flat)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return (args[0],)
    return args
