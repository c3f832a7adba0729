"""Scenarios from a CSV or JSONL file: each row, rendered through a scenario template, is one scenario.

A suite's ``scenarios:`` may hold ``- dataset: cases.csv`` items beside inline scenarios (docs/suite.md,
"Datasets"). The other keys of such an item are an ordinary scenario whose strings are Jinja templates over
the row's columns (promptfoo's ``vars``, Inspect's ``FieldSpec``). Rows are expanded into YAML nodes here,
before validation, so the loader reads a row exactly as it reads an inline scenario and nothing downstream
knows a dataset existed. Every rendered node remembers its row (:class:`Origin`), so an error found while
validating it names the file, the row and the column.

Dataset text is untrusted: it is only ever *inserted* into templates, never rendered as one, and the
templates run in Jinja's sandbox with ``StrictUndefined`` (a misspelt column is an error, not an empty
string). Reading is bounded by ``MAX_DATASET_BYTES`` and ``MAX_DATASET_ROWS`` (agentassay/_limits.py).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .._errors import AgentAssayError
from .._limits import MAX_DATASET_BYTES, MAX_DATASET_ROWS

# File suffixes a dataset may have, and the format each means.
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
STR_TAG = "tag:yaml.org,2002:str"  # a YAML string scalar (the loader builds nodes with it too)
_TEMPLATE_MARKS = ("{{", "{%", "{#")


class DatasetProblem(AgentAssayError):
    """A dataset that cannot be read or a row that cannot be rendered; the loader adds the suite's file, line
    and key (it becomes a ``SpecError``). ``row`` is 1-based as a spreadsheet or an editor shows it."""

    def __init__(self, message: str, *, row: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


@dataclass(frozen=True)
class Origin:
    """Which dataset row a rendered node came from, and the columns its template reads."""

    file: str  # the dataset as messages show it
    row: int
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    number: int  # CSV: the header is row 1; JSONL: the line number
    values: dict[str, Any]


@dataclass(frozen=True)
class Dataset:
    shown: str  # the file as messages show it
    columns: tuple[str, ...] | None  # the CSV header; None for JSONL, whose lines each have their keys
    rows: tuple[Row, ...]


def dataset_format(name: str) -> str | None:
    return FORMATS.get(Path(name).suffix.lower())


def read_dataset(path: Path, shown: str, allowed: int = MAX_DATASET_ROWS) -> Dataset:
    """The rows of the CSV or JSONL file at ``path``; at most ``allowed`` of them (what the suite has left)."""
    kind = dataset_format(path.name)
    if kind is None:
        raise DatasetProblem(
            f"unknown dataset format {path.suffix or '(no suffix)'!r}; name a .csv or .jsonl file "
            "(one JSON object per line)."
        )
    try:
        size = path.stat().st_size
        if size > MAX_DATASET_BYTES:
            raise DatasetProblem(
                f"{size:,} bytes, more than the {MAX_DATASET_BYTES:,} a dataset may have "
                "(MAX_DATASET_BYTES, agentassay/_limits.py); split the file."
            )
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise DatasetProblem(
            f"cannot read: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8."
        ) from None
    except OSError as e:
        raise DatasetProblem(f"cannot read: {e.strerror or e}.") from None
    if kind == "csv":
        columns, rows = _csv_rows(text, allowed)
    else:
        columns, rows = None, _jsonl_rows(text, allowed)
    if not rows:
        raise DatasetProblem("has no rows; add rows below the header, or remove this dataset entry.")
    return Dataset(shown, columns, tuple(rows))


def _too_many(allowed: int, row: int) -> DatasetProblem:
    return DatasetProblem(
        f"more than {allowed:,} rows (MAX_DATASET_ROWS is {MAX_DATASET_ROWS:,} for all of a suite's datasets, "
        "agentassay/_limits.py); each row is a scenario of up to config.trials trials, so sample the file.",
        row=row,
    )


def _csv_rows(text: str, allowed: int) -> tuple[tuple[str, ...], list[Row]]:
    """Records numbered as a spreadsheet shows them (a quoted value may span lines; blank lines count)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[Row] = []
    number = 0
    try:
        for cells in reader:
            number += 1
            if header is None:
                header = _header(cells)
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(rows) == allowed:
                raise _too_many(allowed, number)
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header) :]):
                raise DatasetProblem(
                    f"malformed CSV: {len(cells)} values but the header (row 1) names {len(header)} columns; "
                    'quote a value that contains a comma ("a, b").',
                    row=number,
                )
            padded = [*cells, *[""] * (len(header) - len(cells))]
            rows.append(Row(number, {h: v for h, v in zip(header, padded, strict=False) if h}))
    except csv.Error as e:
        raise DatasetProblem(
            f'malformed CSV: {e}; check the quotes of this row (a quote inside a quoted value is written "").',
            row=number + 1,
        ) from None
    if header is None:
        raise DatasetProblem("is empty; a CSV dataset starts with a header row naming its columns.")
    return tuple(h for h in header if h), rows


def _header(cells: list[str]) -> list[str]:
    names = [c.strip() for c in cells]
    if not any(names):
        raise DatasetProblem("the header (row 1) is empty; name the columns in the first row.", row=1)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DatasetProblem(f"duplicate column {name!r} in the header; rename one.", row=1, column=name)
        if name:
            seen.add(name)
    return names


def _jsonl_rows(text: str, allowed: int) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        if len(rows) == allowed:
            raise _too_many(allowed, number)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetProblem(
                f"malformed JSON line: {e.msg} at column {e.colno}; each line is one JSON object.", row=number
            ) from None
        if not isinstance(value, dict):
            kind = "a list" if isinstance(value, list) else type(value).__name__
            raise DatasetProblem(
                f'expected a JSON object ({{"column": value, ...}}) on each line, got {kind}.', row=number
            )
        rows.append(Row(number, value))
    return rows


# -- templates ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Compiled:
    node: yaml.ScalarNode  # the template's node in the suite
    template: Any  # jinja2.Template
    columns: tuple[str, ...]  # the variables it reads, sorted
    whole: str | None  # the one column when the template is exactly ``{{ column }}``


class TemplateProblem(AgentAssayError):
    """A template string of the suite that does not compile, or names a column the CSV does not have."""

    def __init__(self, node: yaml.Node, message: str, column: str | None = None) -> None:
        super().__init__(message)
        self.node = node
        self.message = message
        self.column = column


def _environment() -> Any:
    # jinja2 here, not at the top: importing the spec stays light (tests/spec/test_spec.py), and only
    # suites with datasets pay for the template engine.
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=lambda v: "" if v is None else v,
    )


class Templates:
    """A scenario template (the dataset item's YAML nodes) compiled once, rendered once per row."""

    def __init__(self, loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
        self.loader = loader
        self.node = node
        self.env = _environment()
        self.compiled: dict[int, _Compiled] = {}
        self.problems: list[TemplateProblem] = []
        self._compile(node)

    def _compile(self, node: yaml.Node) -> None:
        from jinja2 import TemplateSyntaxError, meta, nodes  # the environment's module, loaded just above

        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)  # merges (`<<: *x`) are resolved before rows are rendered
            for _, v in node.value:
                self._compile(v)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                self._compile(v)
        elif node.tag == STR_TAG and any(m in node.value for m in _TEMPLATE_MARKS):
            try:
                ast = self.env.parse(node.value)
            except TemplateSyntaxError as e:
                self.problems.append(
                    TemplateProblem(node, f"template syntax error: {e.message} in {node.value!r}.")
                )
                return
            columns = tuple(sorted(v for v in meta.find_undeclared_variables(ast) if v not in self.env.globals))
            whole = None
            body = ast.body
            if len(body) == 1 and isinstance(body[0], nodes.Output) and len(body[0].nodes) == 1:
                only = body[0].nodes[0]
                whole = only.name if isinstance(only, nodes.Name) else None
            self.compiled[id(node)] = _Compiled(node, self.env.from_string(node.value), columns, whole)

    def columns(self) -> Iterator[tuple[yaml.Node, str]]:
        """Every (template node, column it reads), in the suite's order (that of compiling)."""
        for c in self.compiled.values():
            for col in c.columns:
                yield c.node, col

    def render(self, row: Row, file: str) -> yaml.Node:
        """The scenario of ``row``: the template's nodes with every template string rendered. Raises
        :class:`TemplateProblem` (the template's node as ``node``) when a template fails on this row."""
        return self._render(self.node, row, file)

    def _render(self, node: yaml.Node, row: Row, file: str) -> yaml.Node:
        origin = Origin(file, row.number)
        if isinstance(node, yaml.MappingNode):
            out: yaml.Node = yaml.MappingNode(
                node.tag,
                [(k, self._render(v, row, file)) for k, v in node.value],
                node.start_mark,
                node.end_mark,
                node.flow_style,
            )
        elif isinstance(node, yaml.SequenceNode):
            out = yaml.SequenceNode(
                node.tag,
                [self._render(v, row, file) for v in node.value],
                node.start_mark,
                node.end_mark,
                node.flow_style,
            )
        else:
            c = self.compiled.get(id(node))
            if c is None:
                return node  # a literal: shared by every row, and its errors are the template's
            origin = Origin(file, row.number, c.columns)
            if c.whole is not None and c.whole in row.values and not isinstance(row.values[c.whole], str):
                out = _typed(row.values[c.whole], node)  # JSONL: a number, list or object keeps its type
            else:
                out = yaml.ScalarNode(STR_TAG, self._text(c, node, row), node.start_mark, node.end_mark, '"')
        _mark(out, origin)
        return out

    def _text(self, c: _Compiled, node: yaml.Node, row: Row) -> str:
        from jinja2 import UndefinedError  # the environment's module, loaded when compiling

        try:
            return str(c.template.render(row.values))
        except UndefinedError:
            missing = [col for col in c.columns if col not in row.values]
            col = missing[0] if missing else None
            have = ", ".join(sorted(row.values)) or "none"
            raise TemplateProblem(
                node,
                f"this row has no {col!r} (its keys: {have}); add it or change the template {node.value!r}."
                if col
                else f"the template {node.value!r} reads something this row does not have.",
                col,
            ) from None
        except Exception as e:  # the template's own failure (a filter, the sandbox): one row, one message
            raise TemplateProblem(node, f"the template {node.value!r} failed on this row: {e}.") from None


def _typed(value: Any, at: yaml.Node) -> yaml.Node:
    """A JSON value as the YAML node the loader would have composed from it."""
    rep = yaml.representer.SafeRepresenter(sort_keys=False)
    out = rep.represent_data(value)
    _relocate(out, at)
    return out


def _relocate(node: yaml.Node, at: yaml.Node) -> None:
    node.start_mark, node.end_mark = at.start_mark, at.end_mark
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            _relocate(k, at)
            _relocate(v, at)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _relocate(v, at)


def _mark(node: yaml.Node, origin: Origin) -> None:
    node.origin = origin  # type: ignore[attr-defined]


def origin_of(node: yaml.Node | None) -> Origin | None:
    """The row a node was rendered from, or None for a node of the suite file itself."""
    return getattr(node, "origin", None)


def with_origin(node: yaml.Node, origin: Origin) -> yaml.Node:
    """A copy of a template's scalar node that names ``origin``'s row (for an error found while rendering)."""
    out = (
        yaml.ScalarNode(node.tag, node.value, node.start_mark, node.end_mark)
        if isinstance(node, yaml.ScalarNode)
        else yaml.MappingNode(node.tag, [], node.start_mark, node.end_mark)
    )
    _mark(out, origin)
    return out
