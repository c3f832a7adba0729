"""Reading a results file as untrusted input: bounded, typed, finite, consistent (docs/runner.md,
"Validation on load").

A results file decides things — a baseline's counts and per-trial data feed `check`, `compare` replays
its trials, the Action keeps it as an artifact, a fork can write one — so a damaged or forged file
must be refused with the JSON path at fault (exit 3), never crash (read as BLOCK) and never be
read as something else (``"passed": "yes"`` as a pass, a feature value of ``1e308`` as a shift).

Three layers, cheapest first: the size is checked before reading (``MAX_BYTES``); the text must be
UTF-8 JSON nested at most ``MAX_DEPTH`` deep; then ``results.schema.json`` (package data, JSON
Schema 2020-12, with each built-in feature's keys merged in) types and bounds every field the engine
and the features read, with "number" meaning a *finite*
number, and :func:`_consistent` checks what a schema cannot say (counts agree with the trials).
Unknown keys are allowed everywhere: plugins add sections and newer versions add fields.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .._spec._settings import feature_records
from ._model import ResultsError

#: Default size bound of a results file: 300 scenarios x 100 trials is about 12 MB, so this leaves
#: 8x headroom while a file read stays well under a gigabyte of memory (a 600 MB file took 1.35 GB).
MAX_BYTES = 100 * 1024 * 1024
#: Environment variable that raises (or lowers) the bound, in megabytes, for a suite that needs it.
MAX_MB_ENV = "AGENTASSAY_MAX_RESULTS_MB"
#: Nesting bound: a results file written by AgentAssay nests about 10 deep (plugin sections a little
#: more); anything deeper is not one, and would exhaust the stack of whatever reads it next.
MAX_DEPTH = 64
#: The shortest integer Python refuses to parse from text (``sys.get_int_max_str_digits``).
_INT_DIGITS = re.compile(r"\d{4301,}")

FIX = (
    "A results file is written by AgentAssay, never edited by hand: record it again with "
    "`agentassay run SUITE -o FILE` (or restore the file the run wrote)."
)


def max_bytes() -> int:
    """The size bound in bytes: ``MAX_BYTES`` unless ``AGENTASSAY_MAX_RESULTS_MB`` sets another."""
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    if not raw:
        return MAX_BYTES
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not math.isfinite(mb) or mb <= 0:
        raise ResultsError(f"{MAX_MB_ENV}={raw!r}: expected a size in megabytes > 0 (default {MAX_BYTES >> 20})")
    return int(mb * 1024 * 1024)


def _size(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n >= 2**20 else f"{n:,} bytes"


def read_json(path: Path, *, with_text: bool = False) -> Any:
    """The file's JSON value, read within the size bound; ResultsError names the file, line and fix.
    ``with_text``: (value, the file's text), so that the boundary can scan the text it already has."""
    limit = max_bytes()
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = b"" if size > limit else f.read(limit + 1)  # + 1: a pipe or device has no size
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such results file; record one with `agentassay run SUITE -o {path}`") from None
    except IsADirectoryError:
        raise ResultsError(f"{path}: is a directory, not a results file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read results file ({exc.strerror or exc})") from exc
    if size > limit or len(raw) > limit:
        shown = _size(size) if size > limit else f"more than {_size(limit)}"
        raise ResultsError(
            f"{path}: {shown}, over the {_size(limit)} bound on a results file (checked before reading). A "
            f"real one is about 40 kB per 100 trials; if this suite's really is larger, raise the bound with "
            f"{MAX_MB_ENV}=N. {FIX}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ResultsError(
            f"{path}:{line}: not UTF-8 text (byte {exc.start}: {exc.reason}); a results file is UTF-8 JSON. {FIX}"
        ) from None
    del raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); the file may be truncated. {FIX}"
        ) from None
    except RecursionError:
        raise ResultsError(
            f"{path}:{_deep_line(text)}: JSON nested too deep to read (a results file nests at most {MAX_DEPTH} "
            f"levels). {FIX}"
        ) from None
    except ValueError:  # an integer of more than 4,300 digits (Python's int_max_str_digits)
        m = _INT_DIGITS.search(text)
        line = f":{text.count(chr(10), 0, m.start()) + 1}" if m else ""
        raise ResultsError(
            f"{path}{line}: a number with more than 4,300 digits; no field of a results file holds one. {FIX}"
        ) from None
    too_deep = _too_deep(data)
    if too_deep is not None:
        raise ResultsError(f"{path}: {too_deep}: nested more than {MAX_DEPTH} levels deep; no results file does. {FIX}")
    return (data, text) if with_text else data


_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]')


def _deep_line(text: str) -> int:
    """The line where nesting first passes ``MAX_DEPTH`` (only computed for the error message)."""
    depth, line = 0, 1
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token == "\n":
            line += 1
        elif token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif token in ("]", "}"):
            depth -= 1
    return line


def _too_deep(data: Any) -> str | None:
    """The JSON path of a value nested deeper than ``MAX_DEPTH``, or None. The recursion stops at
    ``MAX_DEPTH`` levels, far below Python's limit (and is ~2x faster than an explicit stack)."""

    def shallow(obj: Any, depth: int) -> bool:
        for v in obj.values() if type(obj) is dict else obj:
            t = type(v)
            if (t is dict or t is list) and (depth == 0 or not shallow(v, depth - 1)):
                return False
        return True

    if type(data) is not dict and type(data) is not list:
        return None
    return None if shallow(data, MAX_DEPTH - 1) else _path_to_depth(data)


def _path_to_depth(data: Any) -> str:
    """The path down to the first container at ``MAX_DEPTH`` (only computed for the error message)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        obj, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            return json_path(path)
        items = obj.items() if type(obj) is dict else enumerate(obj)
        stack.extend((v, (*path, k)) for k, v in items if type(v) is dict or type(v) is list)
    return "$"


def json_path(parts: Any) -> str:
    """``scenarios[2].trials[5].passed`` from ``("scenarios", 2, "trials", 5, "passed")`` (``$``: the root)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][\w]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part), ensure_ascii=False)}]"
    return out or "$"


# -- the schema, compiled -------------------------------------------------------------------------
# jsonschema takes 8 s over the 30,000 trials of a 300-scenario baseline (its generality: error
# generators, reference resolution); `compare` of such files must stay under 5 s (docs/performance.md).
# So the shipped schema is compiled here, once, into closures for the subset of JSON Schema 2020-12 it
# uses; a keyword outside that subset is refused at compile time, and tests/adversarial/test_files.py
# checks that jsonschema itself agrees on every case. A check returns None, or (path, message) with
# the path built on the way back up — nothing is spent on paths while a file is valid.

Check = Callable[[Any], "tuple[list[Any], str] | None"]
_ANNOTATIONS = frozenset(["$schema", "$id", "title", "description", "$defs"])
_KEYWORDS = frozenset(
    [
        "$ref", "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "required", "properties", "patternProperties", "additionalProperties", "items",
    ]
)
_TYPE_WORDS = {
    "boolean": "true/false",
    "integer": "an integer",
    "number": "a finite number",
    "string": "a string",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _shown(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "an array"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, target: str) -> Check:
        if target not in self.refs:
            if not target.startswith("#/$defs/"):
                raise ValueError(f"results schema: only local $defs references are supported, not {target!r}")
            self.refs[target] = self.compile(self.root["$defs"][target[len("#/$defs/"):]])
        return self.refs[target]

    def compile(self, node: dict[str, Any]) -> Check:
        """One closure per schema node, every keyword a cheap branch (the hot path is 30,000 trials)."""
        unknown = set(node) - _KEYWORDS - _ANNOTATIONS
        if unknown:
            raise ValueError(f"results schema: keyword(s) {sorted(unknown)} not supported by _results/_validate.py")
        if set(node) - _ANNOTATIONS == {"$ref"}:
            return self.ref(node["$ref"])  # no indirection for a bare reference
        ref = self.ref(node["$ref"]) if "$ref" in node else None
        kinds = None if "type" not in node else node["type"] if isinstance(node["type"], list) else [node["type"]]
        words = "" if kinds is None else " or ".join(_TYPE_WORDS[k] for k in kinds)
        py = {"boolean": bool, "string": str, "object": dict, "array": list, "null": type(None), "integer": int, "number": int}
        ok_types = frozenset(py[k] for k in kinds or ())
        any_float, int_float = "number" in (kinds or ()), "integer" in (kinds or ())
        allowed = node["enum"] if "enum" in node else [node["const"]] if "const" in node else None
        shown = "" if allowed is None else ", ".join(json.dumps(a) for a in allowed)
        bounds = [
            (node[key], op)
            for key, op in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"))
            if key in node
        ]
        required = node.get("required", ())
        props = {k: self.compile(sub) for k, sub in node.get("properties", {}).items()}
        patterns = [(re.compile(pat), self.compile(sub)) for pat, sub in node.get("patternProperties", {}).items()]
        extra = self.compile(node["additionalProperties"]) if "additionalProperties" in node else None
        every_key = bool(patterns) or extra is not None
        item = self.compile(node["items"]) if "items" in node else None
        scalar = self.leaf(kinds, words, ok_types, any_float, int_float, bounds)
        if ref is None and allowed is None and not required and not props and not every_key and item is None:
            return scalar
        typed = kinds is not None or bool(bounds)
        resolved: dict[str, Check | None] = {}  # key -> its check (patterns searched once per key)

        def check(v: Any) -> tuple[list[Any], str] | None:
            if ref is not None:
                err = ref(v)
                if err is not None:
                    return err
            if typed:
                err = scalar(v)
                if err is not None:
                    return err
            t = type(v)
            if allowed is not None and not any(v == a and t is type(a) for a in allowed):
                return [], f"expected one of {shown}, got {_shown(v)}"
            if t is dict:
                for k in required:
                    if k not in v:
                        return [k], "missing (a results file always has it)"
                if every_key:
                    for k, value in v.items():
                        if k in resolved:
                            sub = resolved[k]
                        else:
                            sub = props.get(k) or next((c for pat, c in patterns if pat.search(k)), extra)
                            if len(resolved) < 4096:
                                resolved[k] = sub
                        if sub is not None:
                            err = sub(value)
                            if err is not None:
                                err[0].insert(0, k)
                                return err
                else:
                    for k, sub in props.items():
                        if k in v:
                            err = sub(v[k])
                            if err is not None:
                                err[0].insert(0, k)
                                return err
            elif t is list and item is not None:
                for n, value in enumerate(v):
                    err = item(value)
                    if err is not None:
                        err[0].insert(0, n)
                        return err
            return None

        return check


    @staticmethod
    def leaf(
        kinds: list[str] | None, words: str, ok_types: frozenset[type], any_float: bool, int_float: bool,
        bounds: list[tuple[Any, str]],
    ) -> Check:
        """A scalar's type and bounds in one closure: most of the calls of a validation are these."""
        lo = next((b for b, op in bounds if op == ">="), None)
        hi = next((b for b, op in bounds if op == "<="), None)
        lo_x = next((b for b, op in bounds if op == ">"), None)
        hi_x = next((b for b, op in bounds if op == "<"), None)

        def leaf(v: Any) -> tuple[list[Any], str] | None:
            t = type(v)
            if kinds is not None:
                if t is float:
                    if not (math.isfinite(v) and (any_float or (int_float and v.is_integer()))):
                        return [], f"expected {words}, got {_shown(v)}"
                elif t not in ok_types:
                    return [], f"expected {words}, got {_shown(v)}"
            if t is int or t is float:
                if lo is not None and v < lo:
                    return [], f"expected a number >= {lo:g}, got {_shown(v)}"
                if hi is not None and v > hi:
                    return [], f"expected a number <= {hi:g}, got {_shown(v)}"
                if lo_x is not None and v <= lo_x:
                    return [], f"expected a number > {lo_x:g}, got {_shown(v)}"
                if hi_x is not None and v >= hi_x:
                    return [], f"expected a number < {hi_x:g}, got {_shown(v)}"
            return None

        return leaf


def schema() -> dict[str, Any]:
    """The results file's JSON Schema: the kernel's (package data ``agentassay/_results/results.schema.json``)
    with the properties each built-in feature owns in its records (``FeatureRecords.schema``) merged in."""
    text = resources.files(__package__).joinpath("results.schema.json").read_text(encoding="utf-8")
    root = json.loads(text)
    for records in feature_records():
        for where, properties in records.schema.items():
            # "results": keys at the file's top level (a feature's section); else a $defs entry (its records).
            target = root if where == "results" else root["$defs"][where]
            target.setdefault("properties", {}).update(properties)
    return root


@lru_cache(maxsize=1)
def _check() -> Check:
    root = schema()
    return _Compiler(root).compile(root)


def validate(data: Any, source: str) -> None:
    """Raise ResultsError naming ``source`` and the JSON path of the first problem of ``data``."""
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: expected a JSON object at the top level, got {_shown(data)}. {FIX}")
    if data.get("schema") != "agentassay.results/1":  # Results.from_dict says what the file is instead
        return
    err = _check()(data)
    if err is None:
        err = _consistent(data)
    if err is not None:
        raise ResultsError(f"{source}: {json_path(err[0])}: {err[1]}. {FIX}")


def _consistent(d: dict[str, Any]) -> tuple[list[Any], str] | None:
    """What the schema cannot say: a scenario's counts agree with its trial records (where both are
    written), trial indices are unique, a baseline passes at most its trials, the decision's counts
    tally the scenarios' verdicts. A forged count would otherwise be shown while the trials decide."""
    tally: dict[str, int] = {}
    for i, s in enumerate(d["scenarios"]):
        v = s["verdict"]["verdict"]
        tally[v] = tally.get(v, 0) + 1
        b = s.get("baseline")
        if b and b["passes"] > b["trials"]:
            return ["scenarios", i, "baseline", "passes"], f"{b['passes']} passes of {b['trials']} trials (passes <= trials)"
        trials = s.get("trials")
        if trials is None:
            continue
        seen: set[int] = set()
        for j, t in enumerate(trials):
            if t["index"] in seen:
                return ["scenarios", i, "trials", j, "index"], f"index {t['index']} repeats an earlier trial's"
            seen.add(t["index"])
        actual = {
            "trials_run": len(trials),
            "passes": sum(1 for t in trials if t.get("passed") is True),
            "counted_trials": sum(1 for t in trials if t.get("passed") is not None),
            "errors": sum(1 for t in trials if t.get("error")),
        }
        for key, n in actual.items():
            if key in s and s[key] != n:
                return ["scenarios", i, key], f"says {s[key]} but the scenario's {len(trials)} trial records give {n}"
    # No scenarios at all: the reader's own message ("shares no scenario with the suite") says more.
    counts = (d["decision"].get("counts") or {}) if d["scenarios"] else {}
    for verdict in ("pass", "fail", "inconclusive"):
        if verdict in counts and counts[verdict] != tally.get(verdict, 0):
            return (
                ["decision", "counts", verdict],
                f"says {counts[verdict]} but {tally.get(verdict, 0)} scenario verdicts are {verdict!r}",
            )
    return None
