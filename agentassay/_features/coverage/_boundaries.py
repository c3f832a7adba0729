"""Tool boundaries (paper Defs. 4.7, 4.8) read from the tools' JSON schemas.

Which boundaries a schema defines (``<tool>.<path>:<kind>`` is the stable id):

* numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum`` (draft-4 boolean
  ``exclusiveMinimum: true`` turns ``minimum`` into an exclusive bound);
* strings without ``enum``: ``empty`` (``""``; ``minLength`` instead when it is > 0) and
  ``maxLength`` when given;
* arrays: ``empty`` (``[]``; ``minItems`` instead when > 0) and ``maxItems`` when given; the item
  schema is walked with ``[]`` in the path (``order.lines[].qty``);
* ``enum``: one boundary per member, ``enum=<value>``; a ``boolean`` is the enum ``false``/``true``;
* objects: every property is walked, ``$ref`` to ``#/$defs/…``, ``#/definitions/…`` or any local
  JSON pointer is resolved, and ``anyOf``/``oneOf``/``allOf`` branches all contribute.

A boundary is *tested* when one call's argument at that path is at it: an inclusive numeric bound
b when |x − b| ≤ ε·max(1, |b|); an exclusive bound when x is inside the domain and no further than
that from b, or, for an ``integer`` parameter, when x is the adjacent valid integer (b + 1 for
``exclusiveMinimum``, b − 1 for ``exclusiveMaximum``); a length bound when the length is equal; an
enum member when the value is equal and of the same JSON type.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_EPSILON = 1e-9
_MAX_DEPTH = 32


class _Items:
    """Path segment meaning "every element of the array here"."""

    def __repr__(self) -> str:
        return "[]"


ITEMS = _Items()
Segment = Any  # str (property name) or ITEMS


@dataclass(frozen=True)
class Boundary:
    """One tool boundary: ``tool`` parameter at ``path`` (dotted, ``[]`` for array items).

    ``kind`` is ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``empty``,
    ``minLength``, ``maxLength``, ``minItems``, ``maxItems`` or ``enum``; ``value`` is the bound,
    the length, the enum member, or for ``empty`` the empty value (``""``, or ``()`` for arrays).
    """

    id: str
    tool: str
    path: str
    kind: str
    value: Any = None

    def describe(self) -> str:
        """What an argument at this boundary looks like, e.g. ``new_seat = ""``."""
        name = self.path or "the arguments"
        v = self.value
        if self.kind in ("minimum", "maximum"):
            return f"{name} = {_num(v)} ({self.kind})"
        if self.kind == "exclusiveMinimum":
            return f"{name} just above {_num(v)} (exclusiveMinimum)"
        if self.kind == "exclusiveMaximum":
            return f"{name} just below {_num(v)} (exclusiveMaximum)"
        if self.kind == "empty":
            return f"{name} = {'[]' if isinstance(v, tuple) else chr(34) * 2}"
        if self.kind in ("minLength", "maxLength"):
            return f"{name} with {v} characters ({self.kind})"
        if self.kind in ("minItems", "maxItems"):
            return f"{name} with {v} items ({self.kind})"
        return f"{name} = {json.dumps(v, ensure_ascii=False)}"


def _num(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _path_text(segments: Sequence[Segment]) -> str:
    out = ""
    for seg in segments:
        if seg is ITEMS:
            out += "[]"
        else:
            out += ("." if out else "") + str(seg)
    return out


def _enum_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False)


def _same(x: Any, v: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1 and "1" is not 1."""
    if isinstance(v, bool) or isinstance(x, bool):
        return isinstance(x, bool) and isinstance(v, bool) and x is v
    if _is_number(v) or _is_number(x):
        return _is_number(x) and _is_number(v) and x == v
    return type(x) is type(v) and x == v


# -- predicates -------------------------------------------------------------------------------------
Predicate = Callable[[Any], bool]


def _near(b: float, eps: float) -> Predicate:
    tol = eps * max(1.0, abs(b))
    return lambda x: _is_number(x) and abs(x - b) <= tol


def _inside_above(b: float, eps: float, integer: bool) -> Predicate:
    if integer:
        return _near(b + 1, eps)
    tol = eps * max(1.0, abs(b))
    return lambda x: _is_number(x) and b < x <= b + tol


def _inside_below(b: float, eps: float, integer: bool) -> Predicate:
    if integer:
        return _near(b - 1, eps)
    tol = eps * max(1.0, abs(b))
    return lambda x: _is_number(x) and b - tol <= x < b


def _length(kind: type, n: int) -> Predicate:
    return lambda x: isinstance(x, kind) and len(x) == n


def _member(v: Any) -> Predicate:
    return lambda x: _same(x, v)


# -- schema walk ------------------------------------------------------------------------------------
class _Walker:
    def __init__(self, tool: str, root: Mapping[str, Any], eps: float) -> None:
        self.tool, self.root, self.eps = tool, root, eps
        self.found: dict[str, tuple[Boundary, tuple[Segment, ...], Predicate]] = {}
        self.notes: list[str] = []

    def add(self, segments: tuple[Segment, ...], kind: str, value: Any, pred: Predicate, label: str = "") -> None:
        path = _path_text(segments)
        bid = f"{self.tool}.{path}:{label or kind}" if path else f"{self.tool}:{label or kind}"
        if bid not in self.found:
            self.found[bid] = (Boundary(bid, self.tool, path, kind, value), segments, pred)

    def resolve(self, schema: Mapping[str, Any], refs: tuple[str, ...]) -> tuple[Mapping[str, Any] | None, tuple[str, ...]]:
        while isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if ref in refs:  # recursive schema: its boundaries are already being collected
                return None, refs
            if not ref.startswith("#"):
                self.notes.append(f"{self.tool}: $ref {ref!r} is not a local reference; not followed")
                return None, refs
            target: Any = self.root
            for raw in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
                key = raw.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and key in target:
                    target = target[key]
                elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
                    target = target[int(key)]
                else:
                    self.notes.append(f"{self.tool}: $ref {ref!r} does not resolve; not followed")
                    return None, refs
            if not isinstance(target, Mapping):
                return None, refs
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings}
            refs = (*refs, ref)
        return schema, refs

    def walk(self, schema: Any, segments: tuple[Segment, ...], refs: tuple[str, ...] = ()) -> None:
        if not isinstance(schema, Mapping) or len(segments) > _MAX_DEPTH:
            return
        resolved, refs = self.resolve(schema, refs)
        if resolved is None:
            return
        schema = resolved
        for key in ("allOf", "anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                for sub in branches:
                    self.walk(sub, segments, refs)

        t = schema.get("type")
        types = {t} if isinstance(t, str) else {x for x in t if isinstance(x, str)} if isinstance(t, list) else set()
        integer = "integer" in types and "number" not in types
        eps = self.eps

        enum = schema.get("enum")
        if isinstance(enum, list):
            for v in enum:
                self.add(segments, "enum", v, _member(v), f"enum={_enum_text(v)}")
        elif "boolean" in types:
            for v in (False, True):
                self.add(segments, "enum", v, _member(v), f"enum={_enum_text(v)}")

        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if xlo is True and _is_number(lo):  # draft 4: the flag makes ``minimum`` exclusive
            xlo, lo = lo, None
        if xhi is True and _is_number(hi):
            xhi, hi = hi, None
        for kind, b in (("minimum", lo), ("maximum", hi)):
            if _is_number(b) and math.isfinite(b):
                self.add(segments, kind, b, _near(b, eps))
        if _is_number(xlo) and math.isfinite(xlo):
            self.add(segments, "exclusiveMinimum", xlo, _inside_above(xlo, eps, integer))
        if _is_number(xhi) and math.isfinite(xhi):
            self.add(segments, "exclusiveMaximum", xhi, _inside_below(xhi, eps, integer))

        if "string" in types and not isinstance(enum, list) and "const" not in schema:
            min_len, max_len = schema.get("minLength"), schema.get("maxLength")
            if isinstance(min_len, int) and not isinstance(min_len, bool) and min_len > 0:
                self.add(segments, "minLength", min_len, _length(str, min_len))
            else:
                self.add(segments, "empty", "", _member(""))
            if isinstance(max_len, int) and not isinstance(max_len, bool) and max_len >= 0:
                self.add(segments, "maxLength", max_len, _length(str, max_len))

        items = schema.get("items")
        prefix = schema.get("prefixItems")
        if "array" in types or items is not None or prefix is not None:
            min_items, max_items = schema.get("minItems"), schema.get("maxItems")
            if isinstance(min_items, int) and not isinstance(min_items, bool) and min_items > 0:
                self.add(segments, "minItems", min_items, _length(list, min_items))
            else:
                self.add(segments, "empty", (), _length(list, 0))
            if isinstance(max_items, int) and not isinstance(max_items, bool) and max_items >= 0:
                self.add(segments, "maxItems", max_items, _length(list, max_items))
            for sub in (items if isinstance(items, list) else [items]) + (prefix if isinstance(prefix, list) else []):
                self.walk(sub, (*segments, ITEMS), refs)

        props = schema.get("properties")
        if isinstance(props, Mapping):
            for name, sub in props.items():
                self.walk(sub, (*segments, str(name)), refs)


def _tool_fields(tool: Any) -> tuple[str, Any, str | None]:
    if isinstance(tool, str):
        return tool, None, None
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"tools must be ToolInfo objects (or tool names); got {tool!r}")
    return name, getattr(tool, "parameters", None), getattr(tool, "agent", None)


@dataclass(frozen=True)
class _Compiled:
    """Boundaries of all tools plus, per tool, the checks grouped by argument path."""

    boundaries: tuple[Boundary, ...]
    checks: dict[str, tuple[tuple[tuple[Segment, ...], tuple[tuple[str, Predicate], ...]], ...]]
    notes: tuple[str, ...]


def compile_boundaries(tools: Iterable[Any], epsilon: float = DEFAULT_EPSILON) -> _Compiled:
    if not (_is_number(epsilon) and math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    found: dict[str, tuple[Boundary, tuple[Segment, ...], Predicate]] = {}
    notes: list[str] = []
    for tool in tools:
        name, params, _agent = _tool_fields(tool)
        if not isinstance(params, Mapping):
            continue
        walker = _Walker(name, params, float(epsilon))
        walker.walk(params, ())
        notes.extend(walker.notes)
        for bid, entry in walker.found.items():
            found.setdefault(bid, entry)
    grouped: dict[str, dict[tuple[Segment, ...], list[tuple[str, Predicate]]]] = {}
    for bid, (b, segments, pred) in found.items():
        grouped.setdefault(b.tool, {}).setdefault(segments, []).append((bid, pred))
    checks = {
        tool: tuple((segs, tuple(preds)) for segs, preds in by_path.items()) for tool, by_path in grouped.items()
    }
    return _Compiled(tuple(b for b, _, _ in found.values()), checks, tuple(dict.fromkeys(notes)))


def tool_boundaries(tools: Iterable[Any]) -> list[Boundary]:
    """Every boundary the tools' JSON schemas define, in tool and schema order (paper Def. 4.7)."""
    return list(compile_boundaries(tools).boundaries)


def values_at(arguments: Any, segments: Sequence[Segment]) -> list[Any]:
    """The argument values at a boundary's path (several when the path goes through arrays)."""
    current = [arguments]
    for seg in segments:
        nxt: list[Any] = []
        if seg is ITEMS:
            for c in current:
                if isinstance(c, list):
                    nxt.extend(c)
        else:
            for c in current:
                if isinstance(c, Mapping) and seg in c:
                    nxt.append(c[seg])
        if not nxt:
            return nxt
        current = nxt
    return current
