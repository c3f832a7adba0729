"""Read a suite file (``agentassay.yml``) into a validated :class:`Suite`.

The file is written by hand, so every error reads like a reviewer's note: file, line, the dotted
key, what was expected, what was found and, for a misspelt key, the key that was probably meant.
Validation is hand-written over ``yaml.compose`` nodes rather than a JSON schema because schema
errors name paths, not lines, and cannot suggest the intended key. docs/suite.md is the reference.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from .._config_check import closest
from .._errors import AgentAssayError
from .._limits import MAX_DATASET_ROWS, compile_pattern, regex_error
from ._dataset import (
    STR_TAG,
    Dataset,
    DatasetProblem,
    Origin,
    TemplateProblem,
    Templates,
    dataset_format,
    origin_of,
    read_dataset,
    with_origin,
)
from ._kinds import check_kinds, kind_names
from ._model import (
    CORRECTIONS,
    ERROR_POLICIES,
    METHODS,
    PROPERTY_CHECKS,
    PROVIDERS,
    AgentConfig,
    Check,
    Extension,
    ModelConfig,
    Scenario,
    Settings,
    Suite,
)
from ._settings import FeatureSettings, builtin_keys, graders, settings_parts

# Keys plugins own (agentassay_suite_keys): {"suite" | "config" | "scenario": {key: plugin name}}.
PluginKeys = Mapping[str, Mapping[str, str]]

TOP_KEYS = ("name", "description", "agent", "model", "config", "scenarios")
CONFIG_KEYS = (
    "trials",
    "max_trials",
    "baseline_trials",
    "threshold",
    "alpha",
    "beta",
    "delta",
    "method",
    "concurrency",
    "timeout",
    "retries",
    "seed",
    "errors",
    "correction",
    "regression",
    "prices",
)
PRICE_KEYS = ("input", "output")
REGRESSION_KEYS = ("baseline", "delta")
AGENT_KEYS = ("entry", "factory", "version", "framework")
MODEL_KEYS = ("provider", "name", "behaviour", "base_url", "api_key_env", "temperature")
SCENARIO_KEYS = ("name", "input", "properties", "evaluator", "threshold", "description", "witness")

# `module.sub:attr.sub`: what `agent` and checks that name code (`python`, a feature's) name.
ENTRY_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Checks whose value may be a list: one check per item, so each failure names its own item.
_LISTABLE = ("contains", "not_contains", "regex", "must_call", "must_not_call", "must_reach")
# For ``{type: KIND, ...}``, the key holding the value and the further keys allowed: each kind's
# registry entry (_spec/_kinds.py).


#: Deepest nesting of mappings and sequences a suite (or manifest) may use. A real suite nests a few
#: levels (a json_schema check's schema a few more); PyYAML composes recursively, so a file nested
#: thousands deep would exhaust the stack (RecursionError, a traceback read as BLOCK). docs/suite.md.
MAX_YAML_DEPTH = 64


class YamlTooDeep(yaml.MarkedYAMLError, AgentAssayError):
    """Raised while composing a YAML document nested deeper than ``MAX_YAML_DEPTH``."""


class BoundedSafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses nesting deeper than ``MAX_YAML_DEPTH``, at the line where it goes
    too deep, before recursion can run out: the check is one counter per node composed."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        path: list[str] = self.__dict__.setdefault("_path", [])
        if isinstance(index, yaml.ScalarNode):
            path.append(f".{index.value}" if path else str(index.value))
        else:
            path.append(f"[{index}]" if isinstance(index, int) else "")
        try:
            if len(path) > MAX_YAML_DEPTH:
                shown = "".join(path[:4]).lstrip(".") + "..."
                raise YamlTooDeep(
                    None, None, f"{shown}: nested more than {MAX_YAML_DEPTH} levels deep (mappings and lists)",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)  # type: ignore[no-untyped-call]
        finally:
            path.pop()


class SpecError(AgentAssayError):
    """A suite file that cannot be used, located precisely enough to fix without reading code.

    ``str(e)`` is ``file:line: key: message``; the parts are also attributes so the CLI and
    tests can use them. ``line`` is 1-based; ``key`` is a dotted path such as
    ``config.trials`` or ``scenarios[2].evaluator[0]`` (list indices count from 0).

    A problem in a dataset row names the dataset as ``file``, its ``row`` (1-based as a spreadsheet shows it:
    a CSV's header is row 1; a JSONL's line) and ``column``; ``template`` is where the suite writes the template
    (``agentassay.yml:14``). ``rows`` lists every row with the same problem. ``errors`` is every problem of the
    file (this one alone unless it is a :class:`SpecErrors`).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        expected: str | None = None,
        got: str | None = None,
        suggestion: str | None = None,
        row: int | None = None,
        column: str | None = None,
        template: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.expected = expected
        self.got = got
        self.suggestion = suggestion
        self.row = row
        self.rows: tuple[int, ...] = (row,) if row is not None else ()
        self.column = column
        self.template = template
        self.errors: tuple[SpecError, ...] = (self,)

    def where(self) -> str | None:
        if self.rows:
            shown = ", ".join(str(r) for r in self.rows[:5])
            more = f" and {len(self.rows) - 5} more" if len(self.rows) > 5 else ""
            rows = f"row {shown}" if len(self.rows) == 1 else f"rows {shown}{more}"
            column = f", column '{self.column}'" if self.column else ""
            return f"{self.file or 'dataset'}, {rows}{column}"
        if self.file is not None:
            return f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"line {self.line}" if self.line is not None else None

    def __str__(self) -> str:
        tail = f" (template: {self.template})" if self.template else ""
        return ": ".join(p for p in (self.where(), self.key, self.message) if p) + tail


#: Problems one report lists; past it the report says how many more there are.
MAX_REPORTED_ERRORS = 50


class SpecErrors(SpecError):
    """Every independent problem of one suite file, reported together: the attributes are the first one's."""

    def __init__(self, errors: list[SpecError], file: str | None) -> None:
        first = errors[0]
        super().__init__(
            first.message, file=first.file, line=first.line, key=first.key, expected=first.expected,
            got=first.got, suggestion=first.suggestion, row=first.row, column=first.column, template=first.template,
        )
        self.rows = first.rows
        self.errors = tuple(errors)
        self.suite_file = file

    def __str__(self) -> str:
        shown = self.errors[:MAX_REPORTED_ERRORS]
        head = f"{len(self.errors)} problems in {self.suite_file or 'the suite'}; fix them all, then load it again:"
        more = len(self.errors) - len(shown)
        tail = [f"  ... and {more} more (fix these first)"] if more else []
        return "\n".join([head, *(f"  {e}" for e in shown), *tail])


def combine(errors: list[SpecError], file: str | None) -> SpecError:
    """One error for a file's problems: identical ones once, one problem in many dataset rows as one line
    naming the rows, and a :class:`SpecErrors` when more than one remains."""
    merged: dict[tuple[Any, ...], SpecError] = {}
    for e in errors:
        k = (e.file, e.line, e.key, e.message, e.column, e.template)
        if k in merged:
            if e.row is not None and e.row not in merged[k].rows:
                merged[k].rows = (*merged[k].rows, e.row)
            continue
        merged[k] = e
    out = list(merged.values())
    return out[0] if len(out) == 1 else SpecErrors(out, file)


def load_suite(path: str | os.PathLike[str], *, plugin_keys: PluginKeys | None = None) -> Suite:
    """Read and validate the suite file at ``path``; raise :class:`SpecError` on any problem.

    ``plugin_keys`` (``Plugins.suite_keys()``): keys plugins own, ``{"suite" | "config" | "scenario":
    {key: plugin}}``, accepted and kept raw in ``extensions`` for the plugin to validate.
    """
    shown = os.fspath(path)
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise _missing_file(p, shown) from None
    except IsADirectoryError:
        inside = p / "agentassay.yml"
        hint = f" Did you mean '{inside}'?" if inside.is_file() else ""
        raise SpecError(
            f"is a directory, expected a suite file (agentassay.yml).{hint}",
            file=shown,
            suggestion=str(inside) if hint else None,
        ) from None
    except UnicodeDecodeError as e:
        raise SpecError(f"cannot read: not UTF-8 text ({e.reason} at byte {e.start}).", file=shown) from None
    except OSError as e:
        raise SpecError(f"cannot read: {e.strerror or e}.", file=shown) from None
    return parse_suite(text, path=p, plugin_keys=plugin_keys)


def parse_suite(text: str, *, path: Path | None = None, plugin_keys: PluginKeys | None = None) -> Suite:
    """Validate suite YAML ``text``. ``path`` is used in messages and to resolve relative paths."""
    shown = os.fspath(path) if path is not None else None
    root = Path(path).resolve().parent if path is not None else None
    loader = BoundedSafeLoader(text)
    try:
        node = loader.get_single_node()
        keys = {
            w: {**builtin_keys().get(w, {}), **dict((plugin_keys or {}).get(w, {}))}
            for w in ("suite", "config", "scenario")
        }
        parser = _Parser(loader, shown, root, keys)
        suite = parser.suite(node)
    except YamlTooDeep as e:
        raise SpecError(
            f"{e.problem}; a suite nests a few levels. Flatten the structure that starts here.",
            file=shown,
            line=e.problem_mark.line + 1 if e.problem_mark is not None else None,
        ) from None
    except yaml.MarkedYAMLError as e:
        raise _yaml_error(e, shown) from None
    except yaml.YAMLError as e:
        raise SpecError(f"YAML error: {e}", file=shown) from None
    finally:
        loader.dispose()
    return replace(suite, path=Path(path).resolve()) if path is not None else suite


def _missing_file(p: Path, shown: str) -> SpecError:
    folder = p.parent if str(p.parent) else Path(".")
    near: str | None = None
    if folder.is_dir():
        names = [c.name for c in folder.iterdir() if c.suffix in (".yml", ".yaml")]
        near = closest(p.name, names)
    hint = f" Did you mean '{folder / near}'?" if near else ""
    return SpecError(f"file not found.{hint}", file=shown, suggestion=str(folder / near) if near else None)


def _yaml_error(e: yaml.MarkedYAMLError, shown: str | None) -> SpecError:
    mark = e.problem_mark or e.context_mark
    problem = e.problem or e.context or "malformed YAML"
    msg = f"YAML syntax error: {problem}"
    if e.context and e.problem:
        ctx_line = f" on line {e.context_mark.line + 1}" if e.context_mark is not None else ""
        msg += f" ({e.context}{ctx_line})"
    if "\\t" in problem or "\t" in problem:
        msg += ". Indent with spaces, not tabs"
    return SpecError(msg + ".", file=shown, line=mark.line + 1 if mark is not None else None)


# -- helpers ------------------------------------------------------------------------------------


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _join(prefix: str | None, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _describe(value: Any) -> str:
    """How a found value is shown after 'got': strings quoted with their type, YAML spelling for bools."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (boolean)"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"{shown!r} (string)"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if isinstance(value, dict):
        return "an empty mapping" if not value else "a mapping"
    return f"{value} ({type(value).__name__})"


def _slug(text: str) -> str:
    """Default scenario name: readable in reports and safe in file names."""
    s = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return s[:40].rstrip("_") or "scenario"


def _entry_hint(value: str, attr_name: str) -> str:
    """Turn the common wrong spellings of an entry (a file path, a bare name) into a suggestion."""
    v = value.strip()
    if "/" in v or "\\" in v or v.endswith(".py"):
        mod, _, attr = v.partition(":")
        mod = re.sub(r"\.py$", "", mod).replace("\\", "/").strip("./").replace("/", ".")
        return f" Name a module, not a file: e.g. '{mod}:{attr or attr_name}'."
    if ":" not in v:
        return f" A colon separates the module from the attribute, e.g. '{v or 'tickets'}:{attr_name}'."
    return ""


class _Parser:
    """Walks composed YAML nodes; every typed read knows its node, hence its line."""

    def __init__(
        self, loader: yaml.SafeLoader, file: str | None, root: Path | None, plugin_keys: PluginKeys
    ) -> None:
        self.loader = loader
        self.file = file
        self.root = root
        self.plugin_keys = plugin_keys
        self.extensions: dict[str, Extension] = {}
        # Every independent problem found so far: a section that fails is recorded and the next one read, so
        # one load reports them all; what depends on a failed section is not checked (no cascades).
        self.errors: list[SpecError] = []
        self.dataset_rows = 0  # rows read from datasets so far (MAX_DATASET_ROWS bounds them all)

    def note(self, e: SpecError) -> None:
        self.errors.extend(e.errors)

    def attempt(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``, or None after recording the :class:`SpecError` it raised."""
        try:
            return fn(*args, **kwargs)
        except SpecError as e:
            self.note(e)
            return None

    def owned(self, where: str) -> dict[str, str]:
        return dict(self.plugin_keys.get(where) or {})

    def extension(self, where: str, k: str, key: str, vnode: yaml.Node) -> Extension:
        return Extension(key, self.value(vnode), _line(vnode), self.file, self.owned(where).get(k))

    # -- error construction ---------------------------------------------------------------------
    def err(self, node: yaml.Node | None, key: str | None, message: str, **parts: str | None) -> SpecError:
        line = _line(node) if node is not None else None
        origin = origin_of(node)
        if origin is None:
            return SpecError(message, file=self.file, line=line, key=key or None, **parts)
        # A node rendered from a dataset row: the row and its column are where the fix goes.
        column = ", ".join(origin.columns) or None
        if isinstance(node, yaml.ScalarNode) and origin.columns and not str(node.value).strip():
            what = f"column '{column}' is" if len(origin.columns) == 1 else f"columns {column} are"
            message += f" The row's {what} empty: fill it in, or remove the row."
        template = f"{self.file}:{line}" if self.file else f"line {line}"
        return SpecError(
            message, file=origin.file, key=key or None, row=origin.row, column=column, template=template, **parts
        )

    def expected(
        self, node: yaml.Node, key: str | None, expected: str, value: Any, hint: str = ""
    ) -> SpecError:
        got = _describe(value)
        return self.err(node, key, f"expected {expected}, got {got}.{hint}", expected=expected, got=got)

    def unknown(
        self, node: yaml.Node, key: str | None, name: str, valid: Iterable[str], noun: str
    ) -> SpecError:
        valid = sorted(valid)
        best = closest(name, valid)
        did = f" Did you mean '{best}'?" if best else ""
        return self.err(
            node,
            key,
            f"unknown {noun}.{did} Valid {noun}s: {', '.join(valid)}.",
            expected="one of " + ", ".join(valid),
            got=name,
            suggestion=best,
        )

    # -- typed reads ------------------------------------------------------------------------------
    def value(self, node: yaml.Node) -> Any:
        return self.loader.construct_object(node, deep=True)

    def typed(self, node: yaml.Node) -> Any:
        """The node's value; a string rendered from a CSV cell is read as YAML would read it unquoted (``3``
        an integer, ``0.9`` a number, ``true`` a boolean), for the keys that want those types."""
        v = self.value(node)
        if isinstance(v, str) and isinstance(node, yaml.ScalarNode) and origin_of(node) is not None:
            text = v.strip()
            tag = self.loader.resolve(yaml.ScalarNode, text, (True, False))
            if tag != STR_TAG:
                try:
                    return self.loader.construct_object(yaml.ScalarNode(tag, text), deep=True)
                except (yaml.YAMLError, ValueError):
                    return v
        return v

    def switch(
        self, node: yaml.Node, key: str, keys: tuple[str, ...]
    ) -> tuple[bool, dict[str, tuple[yaml.Node, yaml.Node]]]:
        """A feature switched on or off: ``true`` / ``false``, or a mapping with ``enabled`` (default on) and the
        feature's options: (enabled, the options' key and value nodes)."""
        if self.is_bool(node):
            return self.boolean(node, key), {}
        m = self.mapping(node, key, f"true, false, or a mapping with {', '.join(keys)}")
        self.check_keys(m, key, keys)
        enabled = self.boolean(m["enabled"][1], f"{key}.enabled") if "enabled" in m else True
        return enabled, {k: v for k, v in m.items() if k != "enabled"}

    def is_bool(self, node: yaml.Node) -> bool:
        return isinstance(node, yaml.ScalarNode) and node.tag.endswith(":bool")

    def is_null(self, node: yaml.Node) -> bool:
        return isinstance(node, yaml.ScalarNode) and self.value(node) is None

    def mapping(
        self, node: yaml.Node, key: str | None, expected: str = "a mapping"
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The mapping's entries by key, in file order; duplicate keys are errors, not silent overrides."""
        if not isinstance(node, yaml.MappingNode):
            raise self.expected(node, key, expected, self.value(node))
        self.loader.flatten_mapping(node)  # resolves `<<: *anchor` merges
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for knode, vnode in node.value:
            k = self.value(knode)
            if not isinstance(k, str):
                raise self.expected(knode, key, "a string key", k)
            if k in out:
                first = _line(out[k][0])
                raise self.err(knode, _join(key, k), f"duplicate key (first on line {first}).")
            out[k] = (knode, vnode)
        return out

    def check_keys(
        self, m: dict[str, tuple[yaml.Node, yaml.Node]], key: str | None, valid: Iterable[str]
    ) -> None:
        valid = tuple(valid)
        for k, (knode, _) in m.items():
            if k not in valid:
                raise self.unknown(knode, _join(key, k), k, valid, "key")

    def string(self, node: yaml.Node, key: str, expected: str = "a string", *, nonempty: bool = False) -> str:
        v = self.value(node)
        if not isinstance(v, str) or (nonempty and not v.strip()):
            raise self.expected(node, key, expected, v)
        return v

    def opt_string(self, node: yaml.Node, key: str, expected: str = "a string") -> str | None:
        return None if self.is_null(node) else self.string(node, key, expected, nonempty=True)

    def integer(self, node: yaml.Node, key: str, minimum: int) -> int:
        v = self.typed(node)
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.expected(node, key, f"an integer >= {minimum}", v)
        return v

    def number(self, node: yaml.Node, key: str, expected: str, ok: Callable[[float], bool]) -> float:
        v = self.typed(node)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not ok(v):
            raise self.expected(node, key, expected, v)
        return float(v)

    def probability(self, node: yaml.Node, key: str) -> float:
        return self.number(node, key, "a number strictly between 0 and 1", lambda x: 0.0 < x < 1.0)

    def boolean(self, node: yaml.Node, key: str) -> bool:
        v = self.typed(node)
        if not isinstance(v, bool):
            raise self.expected(node, key, "true or false", v)
        return v

    def choice(self, node: yaml.Node, key: str, choices: tuple[str, ...]) -> str:
        v = self.value(node)
        if isinstance(v, str) and v in choices:
            return v
        expected = "one of " + ", ".join(choices)
        best = closest(v, choices) if isinstance(v, str) else None
        hint = f" Did you mean '{best}'?" if best else ""
        got = _describe(v)
        raise self.err(
            node, key, f"expected {expected}, got {got}.{hint}", expected=expected, got=got, suggestion=best
        )

    def entry(self, node: yaml.Node, key: str) -> str:
        v = self.value(node)
        expected = "'package.module:attribute' (a dotted module path, a colon, then the attribute)"
        if not isinstance(v, str) or not ENTRY_RE.match(v.strip()):
            hint = (
                _entry_hint(v, "agent" if key.startswith("agent") else "function")
                if isinstance(v, str)
                else ""
            )
            raise self.expected(node, key, expected, v, hint)
        return v.strip()

    # -- sections ---------------------------------------------------------------------------------
    def suite(self, node: yaml.Node | None) -> Suite:
        if node is None:
            raise SpecError(
                "the file is empty; a suite needs at least `agent:` and `scenarios:` (see docs/suite.md).",
                file=self.file,
                line=1,
            )
        top = self.mapping(node, None, "a mapping at the top level (keys: " + ", ".join(TOP_KEYS) + ")")
        unknown = self.unknown_keys(top, None, (*TOP_KEYS, *self.owned("suite")))

        name = self.root.name if self.root is not None and self.root.name else "suite"
        description = ""
        agent: AgentConfig | None = None
        model = ModelConfig()
        settings = self.with_parts(Settings(), {}, {})
        config_nodes: dict[str, tuple[yaml.Node, yaml.Node]] | None = {}
        pending: list[_Pending] | None = None
        for k, (_, vnode) in top.items():
            if k in unknown:
                continue
            if k == "name":
                name = self.attempt(self.string, vnode, "name", "a non-empty string", nonempty=True) or name
            elif k == "description":
                description = "" if self.is_null(vnode) else self.attempt(self.string, vnode, "description") or ""
            elif k == "agent":
                agent = self.attempt(self.agent, vnode)
            elif k == "model":
                model = self.attempt(self.model, vnode) or model
            elif k == "config":
                settings, config_nodes = self.attempt(self.config, vnode) or (settings, None)
            elif k == "scenarios":
                pending = self.attempt(self.scenarios, vnode) or []
            else:  # a key a plugin owns
                self.extensions[k] = self.extension("suite", k, k, vnode)

        meant = {closest(k, (*TOP_KEYS, *self.owned("suite"))) for k in unknown}  # `agnet:` is not also "no agent"
        if "agent" not in top and "agent" not in meant:
            self.note(self.err(
                node,
                "agent",
                "required key missing. Add `agent: package.module:attribute` naming your agent "
                "(an Agents SDK Agent or a Python callable), e.g. `agent: tickets:route`.",
                expected="package.module:attribute",
                got="nothing",
            ))
        if "scenarios" not in top and "scenarios" not in meant:
            self.note(self.err(
                node,
                "scenarios",
                "required key missing. Add `scenarios:`, a list of scenarios each with at least "
                "`input:` and a check (`evaluator:` or a check property such as `must_call:`).",
                expected="a non-empty list of scenarios",
                got="nothing",
            ))
        for p in pending or []:
            if p.no_checks is not None and not self.graded(p):
                self.note(self.no_checks(p.no_checks, p.key, p))
            elif config_nodes is not None:  # the config's own errors are reported; not checked against it
                self.attempt(self.check_sprt_threshold, p, settings, config_nodes)
        scenarios = self.name_scenarios(pending or [])
        if self.errors or agent is None:
            raise combine(self.errors, self.file)
        return Suite(
            name=name,
            agent=agent,
            scenarios=scenarios,
            settings=settings,
            model=model,
            description=description,
            extensions=dict(self.extensions),
            model_given="model" in top,
        )

    def unknown_keys(
        self, m: dict[str, tuple[yaml.Node, yaml.Node]], key: str | None, valid: Iterable[str]
    ) -> set[str]:
        """Record an error for every key of ``m`` not in ``valid``; the set of them (to skip)."""
        valid = tuple(valid)
        bad = [k for k in m if k not in valid]
        for k in bad:
            self.note(self.unknown(m[k][0], _join(key, k), k, valid, "key"))
        return set(bad)

    def agent(self, node: yaml.Node) -> AgentConfig:
        if isinstance(node, yaml.MappingNode):
            m = self.mapping(node, "agent")
            self.check_keys(m, "agent", AGENT_KEYS)
            if "entry" not in m:
                raise self.err(
                    node,
                    "agent.entry",
                    "required key missing. Add `entry: package.module:attribute`.",
                    expected="package.module:attribute",
                    got="nothing",
                )
            entry = self.entry(m["entry"][1], "agent.entry")
            factory = self.boolean(m["factory"][1], "agent.factory") if "factory" in m else False
            version = None
            if "version" in m:
                version = self.opt_string(
                    m["version"][1], "agent.version", 'a string (quote numbers: "1.10")'
                )
            framework = None
            if "framework" in m:
                framework = self.opt_string(
                    m["framework"][1], "agent.framework", "a framework name, e.g. langgraph (docs/frameworks.md)"
                )
            return AgentConfig(entry=entry, factory=factory, version=version, framework=framework)
        if isinstance(node, yaml.ScalarNode) and not self.is_null(node):
            return AgentConfig(entry=self.entry(node, "agent"))
        raise self.expected(
            node,
            "agent",
            "'package.module:attribute' or a mapping with entry, factory, version, framework",
            self.value(node),
        )

    def model(self, node: yaml.Node, where: str = "model") -> ModelConfig:
        """``model:`` (or a feature's model key, ``where``): a provider name or a mapping."""
        if isinstance(node, yaml.ScalarNode):
            v = self.value(node)
            if isinstance(v, str) and v not in PROVIDERS:
                best = closest(v, PROVIDERS)
                did = f" Did you mean '{best}'?" if best else ""
                raise self.err(
                    node,
                    where,
                    f"unknown provider {v!r}.{did} Valid providers: {', '.join(PROVIDERS)}. "
                    "To choose a model, write a mapping: `model: {provider: openai, name: gpt-4o-mini}`.",
                    expected="one of " + ", ".join(PROVIDERS),
                    got=_describe(v),
                    suggestion=best,
                )
            provider = self.choice(node, where, PROVIDERS)
            cfg = ModelConfig(provider=provider)
            self.check_provider(cfg, node, {}, where)
            return cfg
        m = self.mapping(node, where, "a provider name or a mapping (provider, name, ...)")
        self.check_keys(m, where, MODEL_KEYS)
        kw: dict[str, Any] = {}
        for k, (_, vnode) in m.items():
            key = f"{where}.{k}"
            if k == "provider":
                kw[k] = self.choice(vnode, key, PROVIDERS)
            elif k == "temperature":
                kw[k] = (
                    None
                    if self.is_null(vnode)
                    else self.number(vnode, key, "a number >= 0", lambda x: x >= 0)
                )
            elif k == "api_key_env":
                v = self.value(vnode)
                if v is not None and not (isinstance(v, str) and _ENV_RE.match(v)):
                    # Never echo the value: it may be the key itself pasted by mistake.
                    shown = "a value that is not a variable name" if isinstance(v, str) else _describe(v)
                    raise self.err(
                        vnode,
                        key,
                        f"expected the name of an environment variable (e.g. OPENAI_API_KEY), got {shown}. "
                        "Put the key itself in the environment, never in the suite file.",
                        expected="an environment variable name",
                        got=shown,
                    )
                kw[k] = v
            elif k == "base_url":
                v = self.opt_string(vnode, key, "an http(s) URL")
                if v is not None and not re.match(r"^https?://", v):
                    raise self.expected(vnode, key, "an http(s) URL", v)
                kw[k] = v
            else:
                kw[k] = self.opt_string(vnode, key)
        cfg = ModelConfig(**kw)
        self.check_provider(cfg, node, m, where)
        return cfg

    def check_provider(
        self,
        cfg: ModelConfig,
        node: yaml.Node,
        m: dict[str, tuple[yaml.Node, yaml.Node]],
        where: str = "model",
    ) -> None:
        at = m["provider"][1] if "provider" in m else node
        if cfg.provider != "offline" and not cfg.name:
            raise self.err(
                at,
                f"{where}.name",
                f"required for provider '{cfg.provider}'. Add `name:` with the model to use, e.g. `name: gpt-4o-mini`.",
                expected="a model name",
                got="nothing",
            )
        if cfg.provider == "openai-compatible":
            for k, example in (("base_url", "http://localhost:8000/v1"), ("api_key_env", "MY_API_KEY")):
                if getattr(cfg, k) is None:
                    raise self.err(
                        at,
                        f"{where}.{k}",
                        f"required for provider 'openai-compatible'. Add `{k}:`, e.g. `{k}: {example}`.",
                        expected=k,
                        got="nothing",
                    )

    def config(self, node: yaml.Node) -> tuple[Settings, dict[str, tuple[yaml.Node, yaml.Node]]] | None:
        """The settings and ``config:``'s entries, or None when something in it is wrong: every key's problem is
        recorded (the checks between keys only once each reads well), and nothing is then checked against
        settings that are not the ones written."""
        if self.is_null(node):
            return self.with_parts(Settings(), {}, {}), {}
        before = len(self.errors)
        m = self.mapping(node, "config")
        owned = self.owned("config")
        unknown = self.unknown_keys(m, "config", (*CONFIG_KEYS, *self.part_keys(""), *owned))
        kw: dict[str, Any] = {}
        parts: dict[str, yaml.Node] = {}  # the value nodes of keys a feature's settings own, by config key
        for k, (_, vnode) in m.items():
            if k not in unknown:
                self.attempt(self.config_key, k, vnode, kw, parts, owned)
        if len(self.errors) > before:
            return None
        return self.check_config(self.with_parts(Settings(**kw), parts, m), m), m

    def config_key(
        self, k: str, vnode: yaml.Node, kw: dict[str, Any], parts: dict[str, yaml.Node], owned: dict[str, str]
    ) -> None:
        key = f"config.{k}"
        if k in ("trials", "concurrency"):
            kw[k] = self.integer(vnode, key, 1)
        elif k in ("max_trials", "baseline_trials"):
            kw[k] = None if self.is_null(vnode) else self.integer(vnode, key, 1)
        elif k in ("threshold", "alpha", "beta", "delta"):
            kw[k] = self.probability(vnode, key)
        elif k == "method":
            kw[k] = self.choice(vnode, key, METHODS)
        elif k == "errors":
            kw[k] = self.choice(vnode, key, ERROR_POLICIES)
        elif k == "correction":
            kw[k] = self.choice(vnode, key, CORRECTIONS)
        elif k == "timeout":
            kw[k] = self.number(vnode, key, "a number of seconds > 0", lambda x: x > 0)
        elif k in ("retries", "seed"):
            kw[k] = self.integer(vnode, key, 0)
        elif k == "regression":
            kw.update(self.regression(vnode, parts))
        elif k == "prices":
            kw[k] = self.prices(vnode)
        elif k in self.part_keys(""):
            parts[k] = vnode
        elif k in owned:
            self.extensions[key] = self.extension("config", k, key, vnode)

    def check_config(self, settings: Settings, m: dict[str, tuple[yaml.Node, yaml.Node]]) -> Settings:
        """The checks between ``config:``'s keys, once each key reads well on its own."""
        if settings.max_trials is not None and settings.max_trials < settings.trials:
            vnode = m["max_trials"][1]
            raise self.expected(
                vnode, "config.max_trials", f"an integer >= trials ({settings.trials})", settings.max_trials
            )
        if settings.method == "sprt":
            gap = settings.threshold - settings.delta
            if gap <= 0:
                k = "delta" if "delta" in m else "threshold" if "threshold" in m else "method"
                expected = "threshold - delta > 0 for method 'sprt'"
                got = f"{settings.threshold:g} - {settings.delta:g} = {gap:.6g}"
                raise self.err(
                    m[k][1],
                    f"config.{k}",
                    f"expected {expected} (the SPRT tells the threshold apart from threshold - delta), "
                    f"got {got}. Lower delta or raise threshold.",
                    expected=expected,
                    got=got,
                )
            if settings.alpha + settings.beta >= 1:
                k = "beta" if "beta" in m else "alpha"
                expected = "alpha + beta < 1 for method 'sprt'"
                got = f"{settings.alpha:g} + {settings.beta:g}"
                raise self.err(
                    m[k][1], f"config.{k}", f"expected {expected}, got {got}.", expected=expected, got=got
                )
        return settings

    def prices(self, node: yaml.Node) -> dict[str, dict[str, float]]:
        """``{model: {input: usd_per_million, output: usd_per_million}}``."""
        if self.is_null(node):
            return {}
        out: dict[str, dict[str, float]] = {}
        for model, (_, vnode) in self.mapping(node, "config.prices").items():
            key = f"config.prices.{model}"
            m = self.mapping(vnode, key)
            self.check_keys(m, key, PRICE_KEYS)
            out[str(model)] = {
                part: self.number(
                    m[part][1], f"{key}.{part}", "USD per million tokens, >= 0", lambda x: x >= 0
                )
                if part in m
                else 0.0
                for part in PRICE_KEYS
            }
        return out

    def regression(self, node: yaml.Node, parts: dict[str, yaml.Node]) -> dict[str, Any]:
        if self.is_null(node):
            return {}
        m = self.mapping(node, "config.regression")
        self.check_keys(m, "config.regression", (*REGRESSION_KEYS, *self.part_keys("regression.")))
        for k, (_, vnode) in m.items():
            if k in self.part_keys("regression."):
                parts[f"regression.{k}"] = vnode
        out: dict[str, Any] = {}
        if "baseline" in m:
            b = self.opt_string(m["baseline"][1], "config.regression.baseline", "a path to a baseline file")
            if b is not None and self.root is not None:
                b = str((self.root / os.path.expanduser(b)).resolve())
            out["baseline"] = b
        if "delta" in m:
            out["regression_delta"] = self.probability(m["delta"][1], "config.regression.delta")
        return out

    # -- features' parts of config (_spec/_settings.py) -------------------------------------------
    def part_keys(self, prefix: str) -> tuple[str, ...]:
        """Keys of ``config:`` (prefix ``""``) or ``config.regression`` (``"regression."``) a feature owns."""
        keys = (k for part in settings_parts() for k in part.CONFIG)
        return tuple(k[len(prefix):] for k in keys if k.startswith(prefix) and "." not in k[len(prefix):])

    def with_parts(
        self, settings: Settings, nodes: dict[str, yaml.Node], m: dict[str, tuple[yaml.Node, yaml.Node]]
    ) -> Settings:
        """``settings`` with every feature's part: parsed from its keys where the suite writes them, else the
        defaults; then each part checks itself against the kernel's settings."""
        parts: dict[str, FeatureSettings] = {}
        for cls in settings_parts():
            mine = {k: nodes[k] for k in cls.CONFIG if k in nodes}
            parts[cls.NAME] = cls.parse(self, mine) if mine else cls()
        settings = replace(settings, features=parts)
        for part in parts.values():
            part.check(settings, self, m)
        return settings

    # -- scenarios --------------------------------------------------------------------------------
    def scenarios(self, node: yaml.Node) -> list[_Pending]:
        """Each scenario read on its own (a bad one is recorded and skipped); a ``dataset:`` item is one per row."""
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise self.expected(
                node,
                "scenarios",
                "a non-empty list of scenarios (each `- input: ...`, or `- dataset: cases.csv`)",
                self.value(node),
            )
        out: list[_Pending] = []
        for i, item in enumerate(node.value):
            key = f"scenarios[{i}]"
            if isinstance(item, yaml.MappingNode) and any(
                isinstance(k, yaml.ScalarNode) and k.value == "dataset" for k, _ in item.value
            ):
                out.extend(self.attempt(self.dataset, item, key) or [])
            else:
                p = self.attempt(self.scenario, item, key)
                if p is not None:
                    out.append(p)
        return out

    def dataset(self, node: yaml.MappingNode, key: str) -> list[_Pending]:
        """``- dataset: FILE`` and a scenario template: one scenario per row of the CSV / JSONL file
        (_spec/_dataset.py). Problems of the file or the template are reported once, not once per row."""
        m = self.mapping(node, key)
        dnode = m["dataset"][1]
        shown_name = self.string(dnode, f"{key}.dataset", "a path to a .csv or .jsonl file", nonempty=True).strip()
        shown_name = shown_name.removeprefix("file://")  # promptfoo's spelling of a file
        path = (self.root or Path.cwd()) / os.path.expanduser(shown_name)
        shown = os.fspath(Path(os.path.dirname(self.file)) / shown_name) if self.file else shown_name
        if not path.is_file():
            raise self.missing_dataset(dnode, f"{key}.dataset", path, shown_name)
        try:
            data = read_dataset(path, shown, MAX_DATASET_ROWS - self.dataset_rows)
        except DatasetProblem as e:
            where = f"{self.file}:{_line(dnode)}" if self.file else f"line {_line(dnode)}"
            raise SpecError(
                e.message, file=shown, key=f"{key}.dataset",
                row=e.row, column=e.column, template=where,
            ) from None
        self.dataset_rows += len(data.rows)
        template = yaml.MappingNode(node.tag, [(k, v) for k, v in node.value if k.value != "dataset"],
                                    node.start_mark, node.end_mark, node.flow_style)
        # Inspect's FieldSpec defaults: `input` from a column `input`; `name` from `name`, else `id`.
        for field_name, columns in (("input", ("input",)), ("name", ("name", "id"))):
            found = [c for c in columns if data.columns is not None and c in data.columns]
            if field_name not in m and found:
                template.value.append((
                    yaml.ScalarNode(STR_TAG, field_name, dnode.start_mark, dnode.end_mark),
                    yaml.ScalarNode(STR_TAG, "{{ " + found[0] + " }}", dnode.start_mark, dnode.end_mark, '"'),
                ))
        before = len(self.errors)
        templates = Templates(self.loader, template)
        for problem in templates.problems:
            self.note(self.err(problem.node, key, problem.message))
        if data.columns is not None:
            for tnode, column in templates.columns():
                if column not in data.columns:
                    self.note(self.unknown_column(tnode, key, column, data))
        if len(self.errors) > before:  # a template's problem is reported once, not again in every row
            return []
        return self.dataset_rows_read(templates, data, key)

    def dataset_rows_read(self, templates: Templates, data: Dataset, key: str) -> list[_Pending]:
        out: list[_Pending] = []
        for row in data.rows:
            try:
                rendered = templates.render(row, data.shown)
            except TemplateProblem as e:
                node = e.node
                origin = Origin(data.shown, row.number, (e.column,) if e.column else ())
                self.note(self.err(with_origin(node, origin), key, e.message))
                continue
            p = self.attempt(self.scenario, rendered, key)
            if p is not None:
                out.append(p)
        return out

    def missing_dataset(self, node: yaml.Node, key: str, path: Path, name: str) -> SpecError:
        folder = path.parent
        near = None
        if folder.is_dir():
            near = closest(path.name, [c.name for c in folder.iterdir() if dataset_format(c.name)])
        did = f" Did you mean '{Path(name).parent / near}'?" if near else ""
        return self.err(
            node, key,
            f"dataset file not found: {path}.{did} The path is relative to the suite file's folder.",
            expected="an existing .csv or .jsonl file", got=name, suggestion=str(Path(name).parent / near) if near else None,
        )

    def unknown_column(self, node: yaml.Node, key: str, column: str, data: Dataset) -> SpecError:
        columns = list(data.columns or ())  # a CSV header: only CSV templates are checked against it
        best = closest(column, columns)
        did = f" Did you mean '{best}'?" if best else ""
        return SpecError(
            f"the template {node.value!r} reads column {column!r}, which {data.shown} does not have.{did} "
            f"Its columns (row 1): {', '.join(columns)}.",
            file=self.file, line=_line(node), key=key, expected="one of " + ", ".join(columns), got=column,
            suggestion=best,
        )

    def scenario(self, node: yaml.Node, key: str) -> _Pending | None:
        """One scenario; its keys' problems are all recorded, and a scenario with any is left out (None)."""
        m = self.mapping(node, key, "a scenario: a mapping with at least `input:`")
        before = len(self.errors)
        owned = self.owned("scenario")
        misplaced = [k for k in m if k in kind_names() and k not in owned]  # else the key of the plugin that owns it
        for k in misplaced:
            where = "`properties:` or `evaluator:`" if k in PROPERTY_CHECKS else "`evaluator:`"
            self.note(self.err(m[k][0], f"{key}.{k}", f"'{k}' is a check; put it under {where}."))
        valid = (*SCENARIO_KEYS, *owned)
        bad = {*misplaced, *self.unknown_keys({k: v for k, v in m.items() if k not in misplaced}, key, valid)}
        text = ""
        if "input" not in m and "input" not in {closest(k, valid) for k in bad}:
            self.note(self.err(
                node,
                f"{key}.input",
                "required key missing. Add `input:`, the text the agent is run on.",
                expected="a string",
                got="nothing",
            ))
        elif "input" in m:
            # A dataset row's input must say something: an empty cell is a mistake, not a test case.
            inode = m["input"][1]
            text = self.attempt(
                self.string, inode, f"{key}.input", "a string (the agent's input)", nonempty=origin_of(inode) is not None
            ) or ""
        p = _Pending(key=key, line=_line(node), input=text)
        p.extensions = {k: self.extension("scenario", k, f"{key}.{k}", m[k][1]) for k in m if k in owned}
        self.attempt(self.scenario_fields, m, key, p)
        pnodes: dict[str, tuple[yaml.Node, str]] = {}
        prop_checks: list[Check] | None = []
        if "properties" in m:
            prop_checks = self.attempt(self.properties, m["properties"][1], f"{key}.properties", p, pnodes)
        eval_checks: list[Check] | None = []
        if "evaluator" in m and prop_checks is not None:  # `evaluator: exact_match` may read a property
            eval_checks = self.attempt(self.evaluator, m["evaluator"][1], f"{key}.evaluator", pnodes)
        if len(self.errors) > before:  # every bad key was recorded too
            return None
        p.checks = (*(eval_checks or []), *(prop_checks or []))
        if not p.checks:
            p.no_checks = node  # an error unless a plugin grades it (known once the whole file is read)
        return p

    def scenario_fields(self, m: dict[str, tuple[yaml.Node, yaml.Node]], key: str, p: _Pending) -> None:
        """``name``, ``description``, ``witness`` and ``threshold`` of a scenario."""
        if "name" in m:
            p.name = self.attempt(self.string, m["name"][1], f"{key}.name", "a non-empty string", nonempty=True)
            p.name_node = m["name"][1]
        if "description" in m and not self.is_null(m["description"][1]):
            p.description = self.attempt(self.string, m["description"][1], f"{key}.description") or ""
        if "witness" in m and not self.is_null(m["witness"][1]):
            p.witness = self.attempt(self.witness, m["witness"][1], f"{key}.witness") or ()
        if "threshold" in m and not self.is_null(m["threshold"][1]):
            p.threshold = self.attempt(self.probability, m["threshold"][1], f"{key}.threshold")
            p.threshold_node = m["threshold"][1]

    def witness(self, wnode: yaml.Node, key: str) -> tuple[str, ...]:
        if not isinstance(wnode, yaml.SequenceNode):
            raise self.expected(wnode, key, "a list of objective ids like 'Reach(faq_agent)'", self.value(wnode))
        return tuple(
            self.string(i, f"{key}[{n}]", "an objective id like 'UseTool(faq_agent, faq_lookup_tool)'", nonempty=True)
            for n, i in enumerate(wnode.value)
        )

    def graded(self, p: _Pending) -> bool:
        """A plugin grades this scenario without checks (_spec/_settings.py, ``BuiltinPlugin.grades``): the
        scenario sets one of its keys, or the suite does and the scenario does not turn it off."""

        def on(ext: Extension | None) -> bool:
            return ext is not None and ext.value not in (False, None)

        for suite_keys, scenario_keys, _ in graders():
            if any(on(p.extensions.get(k)) for k in scenario_keys):
                return True
            for k in suite_keys:
                off = k in p.extensions and p.extensions[k].value is False
                if on(self.extensions.get(k)) and not off:
                    return True
        return False

    def no_checks(self, node: yaml.Node, key: str, p: _Pending) -> SpecError:
        hint = (
            " To compare with `expected`, add `evaluator: exact_match`." if "expected" in p.properties else ""
        )
        return self.err(
            node,
            key,
            "scenario has no checks, so every trial would pass. Add `evaluator:` "
            "(e.g. `evaluator: {contains: refund}`), a check property ("
            + ", ".join(PROPERTY_CHECKS)
            + ")"
            + "".join(f" or {words}" for *_, words in graders())
            + "; natural-language descriptions alone are not evaluated."
            + hint,
            expected="at least one check",
            got="none",
        )

    def properties(
        self, node: yaml.Node, key: str, p: _Pending, pnodes: dict[str, tuple[yaml.Node, str]]
    ) -> list[Check]:
        """Collect properties; the check-kind ones also become checks (the paper's ``max_steps: 5``)."""
        if self.is_null(node):
            return []
        entries: list[tuple[str, yaml.Node, yaml.Node, str]] = []
        descriptions: list[str] = []
        if isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                ikey = f"{key}[{i}]"
                if isinstance(item, yaml.ScalarNode):
                    v = self.value(item)
                    if not isinstance(v, str) or not v.strip():
                        raise self.expected(
                            item, ikey, "a description (string) or a mapping such as `max_steps: 5`", v
                        )
                    descriptions.append(v)
                else:
                    pm = self.mapping(
                        item, ikey, "a description (string) or a mapping such as `max_steps: 5`"
                    )
                    entries.extend((k, kn, vn, f"{ikey}.{k}") for k, (kn, vn) in pm.items())
        else:
            pm = self.mapping(node, key, "a list of properties or a mapping")
            entries.extend((k, kn, vn, f"{key}.{k}") for k, (kn, vn) in pm.items())

        props: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        checks: list[Check] = []
        for k, knode, vnode, vkey in entries:
            if k in kind_names() and k not in PROPERTY_CHECKS:
                raise self.err(
                    knode,
                    vkey,
                    f"'{k}' is an evaluator check, not a property; move it under `evaluator:` "
                    f"(e.g. `evaluator: {{{k}: ...}}`).",
                )
            value = self.typed(vnode) if k == "max_steps" else self.value(vnode)  # a CSV cell's "8" is 8
            if k in PROPERTY_CHECKS:
                for v in self.check_values(k, vnode, vkey):
                    checks.append(Check(k, v, {}, line=_line(vnode), key=vkey))
                if k in props:  # repeated check properties accumulate: `- must_call: a` `- must_call: b`
                    before = props[k] if isinstance(props[k], list) else [props[k]]
                    props[k] = before + (value if isinstance(value, list) else [value])
                    continue
            elif k in props:
                raise self.err(knode, vkey, f"duplicate property (first on line {first_line[k]}).")
            props[k] = value
            first_line[k] = _line(knode)
            pnodes.setdefault(k, (vnode, vkey))
        p.properties = props
        p.descriptions = tuple(descriptions)
        return checks

    def check_values(self, kind: str, node: yaml.Node, key: str) -> list[Any]:
        if kind in _LISTABLE and isinstance(node, yaml.SequenceNode):
            if not node.value:
                raise self.expected(node, key, f"a non-empty list for {kind}", [])
            return [self.check_value(kind, item, f"{key}[{i}]") for i, item in enumerate(node.value)]
        return [self.check_value(kind, node, key)]

    def check_value(self, kind: str, node: yaml.Node, key: str) -> Any:
        """Type-check one check's value at load time, so a bad value never costs a trial."""
        if kind == "max_steps":
            return self.integer(node, key, 1)
        if kind in ("contains", "not_contains"):
            return self.string(node, key, "a non-empty string (or a list of them)", nonempty=True)
        if kind in ("must_call", "must_not_call"):
            return self.string(node, key, "a tool name (or a list of them)", nonempty=True)
        if kind == "must_reach":
            return self.string(node, key, "an agent name (or a list of them)", nonempty=True)
        if kind == "regex":
            pattern = self.string(node, key, "a regular expression (string)", nonempty=True)
            try:
                compile_pattern(pattern)  # the engine the checks match with (regex, V0: re's syntax)
            except regex_error() as e:
                where = f" at position {e.pos}" if e.pos is not None else ""
                raise self.err(
                    node,
                    key,
                    f"invalid regular expression {pattern!r}: {e.msg}{where}.",
                    expected="a valid regular expression",
                    got=_describe(pattern),
                ) from None
            return pattern
        if kind == "json_schema":
            if not isinstance(node, yaml.MappingNode):
                raise self.expected(node, key, "a JSON schema (a mapping)", self.value(node))
            return self.value(node)
        if check_kinds()[kind].names_code:
            return self.entry(node, key)
        # exact_match
        v = self.value(node)
        if v is None or isinstance(v, (list, dict)):
            raise self.expected(node, key, "a string, number or boolean to compare the output with", v)
        return v

    def kind(self, node: yaml.Node, key: str, name: Any) -> str:
        if not isinstance(name, str):
            raise self.expected(node, key, "a check kind (" + ", ".join(kind_names()) + ")", name)
        if name not in kind_names():
            best = closest(name, kind_names())
            did = f" Did you mean '{best}'?" if best else ""
            kinds = ", ".join(sorted(kind_names()))
            raise self.err(
                node,
                key,
                f"unknown check {name!r}.{did} Valid checks: {kinds}.",
                expected="one of " + kinds,
                got=name,
                suggestion=best,
            )
        return name

    def evaluator(self, node: yaml.Node, key: str, pnodes: dict[str, tuple[yaml.Node, str]]) -> list[Check]:
        if self.is_null(node):
            return []
        if isinstance(node, yaml.SequenceNode):
            items = [(item, f"{key}[{i}]") for i, item in enumerate(node.value)]
        else:
            items = [(node, key)]
        checks: list[Check] = []
        for item, ikey in items:
            checks.extend(self.evaluator_item(item, ikey, pnodes))
        return checks

    def evaluator_item(
        self, node: yaml.Node, key: str, pnodes: dict[str, tuple[yaml.Node, str]]
    ) -> list[Check]:
        forms = "a check name, a mapping such as `{contains: refund}`, or a mapping with `type:`"
        if isinstance(node, yaml.ScalarNode):
            kind = self.kind(node, key, self.value(node))
            return self.from_properties(kind, node, key, pnodes, {})
        if not isinstance(node, yaml.MappingNode):
            raise self.expected(node, key, forms, self.value(node))
        m = self.mapping(node, key)
        if "type" in m:
            tnode = m["type"][1]
            kind = self.kind(tnode, f"{key}.type", self.value(tnode))
            spec = check_kinds()[kind]
            value_key, option_keys = spec.value_key, spec.options
            if option_keys is not None:
                self.check_keys(m, key, ("type", value_key, *option_keys))
            options: dict[str, Any] = {}
            for k, (kn, vn) in m.items():
                if k in ("type", value_key):
                    continue
                if k == "field":
                    options[k] = self.string(vn, f"{key}.field", "a field name of the output", nonempty=True)
                elif k in spec.reserved:
                    raise self.err(
                        kn, f"{key}.{k}", f"'{k}' is passed to the {kind} by AgentAssay; rename this option."
                    )
                else:
                    options[k] = self.value(vn)
            if value_key in m:
                vnode = m[value_key][1]
                return [
                    Check(kind, v, dict(options), line=_line(node), key=key)
                    for v in self.check_values(kind, vnode, f"{key}.{value_key}")
                ]
            if spec.names_code:
                raise self.err(
                    node,
                    f"{key}.{value_key}",
                    f"required key missing. Add `{value_key}: module:function`.",
                    expected="module:function",
                    got="nothing",
                )
            return self.from_properties(kind, node, key, pnodes, options)
        if len(m) != 1:
            got = "an empty mapping" if not m else "a mapping with keys " + ", ".join(m)
            raise self.err(
                node,
                key,
                f"expected one check per item, got {got}. Write a list with one check per item, "
                "or name the kind with `type:`.",
                expected=forms,
                got=got,
            )
        ((k, (kn, vn)),) = m.items()
        kind = self.kind(kn, key, k)
        return [
            Check(kind, v, {}, line=_line(node), key=key) for v in self.check_values(kind, vn, f"{key}.{k}")
        ]

    def from_properties(
        self,
        kind: str,
        node: yaml.Node,
        key: str,
        pnodes: dict[str, tuple[yaml.Node, str]],
        options: dict[str, Any],
    ) -> list[Check]:
        """Paper style: ``evaluator: exact_match`` takes its value from the ``expected*`` property."""
        if check_kinds()[kind].names_code:
            raise self.err(
                node,
                key,
                f"a {kind} check needs an entry: write `{{{kind}: module:function}}` "
                f"or `{{type: {kind}, entry: module:function}}`.",
            )
        if "expected" in pnodes:
            pk = "expected"
        else:
            found = [k for k in pnodes if k.startswith("expected_")]
            if len(found) != 1:
                why = (
                    f"this scenario has several ({', '.join(found)}); add `expected:`"
                    if found
                    else "this scenario has none; add one under `properties:`"
                )
                raise self.err(
                    node,
                    key,
                    f"'{kind}' takes its value from the `expected` property or a single "
                    f"`expected_<field>` one, and {why}, or write `{{{kind}: value}}`.",
                    expected="an expected or expected_<field> property",
                    got=", ".join(found) or "none",
                )
            pk = found[0]
        vnode, vkey = pnodes[pk]
        opts = dict(options)
        field_name = pk[len("expected_") :] if pk.startswith("expected_") else ""
        if kind == "exact_match" and field_name and "field" not in opts:
            opts["field"] = field_name
        return [
            Check(kind, v, dict(opts), line=_line(node), key=key)
            for v in self.check_values(kind, vnode, vkey)
        ]

    def check_sprt_threshold(
        self, p: _Pending, settings: Settings, config_nodes: dict[str, tuple[yaml.Node, yaml.Node]]
    ) -> None:
        if p.threshold is None or p.threshold_node is None or settings.method != "sprt":
            return
        gap = p.threshold - settings.delta
        if gap <= 0:
            expected = "threshold - delta > 0 for method 'sprt'"
            got = f"{p.threshold:g} - {settings.delta:g} (config.delta) = {gap:.6g}"
            raise self.err(
                p.threshold_node,
                f"{p.key}.threshold",
                f"expected {expected}, got {got}.",
                expected=expected,
                got=got,
            )

    def name_scenarios(self, pending: list[_Pending]) -> tuple[Scenario, ...]:
        """Explicit names must be unique; unnamed scenarios get a slug of their input, suffixed if taken."""
        taken: dict[str, int] = {}
        first: dict[str, str] = {}  # where each name was first given, as a message says it
        for p in pending:
            if p.name is None or p.name_node is None:
                continue
            origin = origin_of(p.name_node)
            here = f"{origin.file} row {origin.row}" if origin is not None else f"line {_line(p.name_node)}"
            if p.name in taken:
                hint = (
                    " A dataset's `name:` template must differ per row: use a column that does, e.g. "
                    "`name: \"refund_{{ id }}\"`."
                    if origin is not None
                    else ""
                )
                self.note(self.err(
                    p.name_node,
                    f"{p.key}.name",
                    f"duplicate scenario name {p.name!r} (also on {first[p.name]}); names must be unique.{hint}",
                ))
                continue
            taken[p.name] = _line(p.name_node)
            first[p.name] = here
        out: list[Scenario] = []
        for p in pending:
            name = p.name
            if name is None:
                base = _slug(p.input)
                name, n = base, 2
                while name in taken:
                    name, n = f"{base}_{n}", n + 1
                taken[name] = p.line
            out.append(
                Scenario(
                    name=name,
                    input=p.input,
                    properties=p.properties,
                    descriptions=p.descriptions,
                    checks=p.checks,
                    threshold=p.threshold,
                    line=p.line,
                    description=p.description,
                    witness=p.witness,
                    extensions=p.extensions,
                )
            )
        return tuple(out)


class _Pending:
    """A scenario read but not yet named (names depend on every other scenario)."""

    def __init__(self, key: str, line: int, input: str) -> None:
        self.key = key
        self.line = line
        self.input = input
        self.name: str | None = None
        self.name_node: yaml.Node | None = None
        self.description = ""
        self.witness: tuple[str, ...] = ()
        self.threshold: float | None = None
        self.threshold_node: yaml.Node | None = None
        self.properties: dict[str, Any] = {}
        self.descriptions: tuple[str, ...] = ()
        self.checks: tuple[Check, ...] = ()
        self.extensions: dict[str, Extension] = {}
        self.no_checks: yaml.Node | None = None  # set when only a plugin could grade it
