"""Evaluators (paper Def. 3.3): a scenario's checks compiled into one callable ``E(input, trace)``.

Every check runs on every trace, so a failed trial lists all its reasons, each one short sentence
that a reviewer can read in a PR comment without opening the trace. Checks are compiled once per
scenario (regexes compiled, entries imported, schemas validated) so that a broken check is a
:class:`SpecError` before the first trial, not a failure repeated in every trial.

Check kinds are a registry (_spec/_kinds.py). The kernel's kinds are compiled here; a kind a feature adds
names its builder, ``build(check, where) -> CheckFn``, which may use :func:`resolve` (import a
``module:function`` now) and :func:`outcome` (read what a check function returned) as ``python`` does.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from .._limits import PatternTimeout, compile_pattern, doing, regex_error
from .._spec import Check, Scenario, SpecError
from .._spec._kinds import KERNEL_KINDS, check_kinds, kind_names
from .._traces import Trace

# One compiled check: the failure reason, or None when the trace passes it.
CheckFn = Callable[[str, Trace], "str | None"]

_SNIPPET = 60


@dataclass(frozen=True)
class EvalResult:
    """The binary judgment of Def. 3.3 plus why: ``failures`` is empty exactly when ``passed``."""

    passed: bool
    failures: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "failures": list(self.failures)}


class Evaluator:
    """``evaluator(input, trace) -> EvalResult`` for one scenario. Stateless, so safe to share across trials."""

    __slots__ = ("_fns", "checks", "scenario")

    def __init__(self, scenario: str, checks: tuple[Check, ...], fns: tuple[CheckFn, ...]) -> None:
        self.scenario = scenario
        self.checks = checks
        self._fns = fns

    def __call__(self, input: str, trace: Trace) -> EvalResult:
        if trace.error:
            return EvalResult(False, (trace.error,))
        failures = []
        for check, fn in zip(self.checks, self._fns, strict=True):
            doing(f"{check.kind} check {str(check.value)[:80]!r}")  # named if the trial's time limit abandons it
            reason = fn(input, trace)
            if reason is not None:
                failures.append(reason)
        return EvalResult(not failures, tuple(failures))

    def __repr__(self) -> str:
        kinds = ", ".join(c.kind for c in self.checks)
        return f"Evaluator({self.scenario!r}: {kinds})"


def build_evaluator(
    scenario: Scenario,
    *,
    file: str | os.PathLike[str] | None = None,
    search: Sequence[str | os.PathLike[str]] = (),
) -> Evaluator:
    """Compile ``scenario.checks``. ``file`` (the suite file) only serves error messages;
    ``search`` folders go on ``sys.path`` first, so the entries of checks that name code import from the
    suite's folder the way the agent entry does.

    Raises :class:`SpecError` when a check cannot work at all: an entry that does not import, an
    invalid JSON schema, an unknown kind in a hand-built :class:`Check`.
    """
    where = Where(os.fspath(file) if file is not None else None, scenario, tuple(map(os.fspath, search)))
    fns = tuple(_compile(check, where) for check in scenario.checks)
    return Evaluator(scenario.name, scenario.checks, fns)


@dataclass(frozen=True)
class Where:
    """What a check's builder knows of where the check is: for error messages and imports."""

    file: str | None
    scenario: Scenario
    search: tuple[str, ...] = ()

    def error(self, check: Check, message: str) -> SpecError:
        key = check.key or f"scenario {self.scenario.name!r}"
        return SpecError(message, file=self.file, line=check.line or self.scenario.line, key=key)


def _compile(check: Check, where: Where) -> CheckFn:
    builder = _BUILDERS.get(check.kind) or _feature_builder(check.kind)
    if builder is None:
        raise where.error(check, f"unknown check {check.kind!r}; valid checks: {', '.join(kind_names())}.")
    return builder(check, where)


@cache
def _feature_builder(kind: str) -> Callable[[Check, Where], CheckFn] | None:
    """The builder a feature's registry entry names for ``kind`` (imported on first use), or None."""
    spec = check_kinds().get(kind)
    if spec is None or spec.build is None:
        return None
    module, _, attr = spec.build.partition(":")
    builder: Callable[[Check, Where], CheckFn] = getattr(importlib.import_module(module), attr)
    return builder


# -- output as text -----------------------------------------------------------------------------


def _text(value: Any) -> str:
    """What text checks read: strings as they are, structured outputs as JSON, no output as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump_json"):  # pydantic outputs (Agents SDK output_type)
        return str(value.model_dump_json())
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _show(value: Any) -> str:
    """A quoted, truncated rendering for messages."""
    if value is None:
        return "no output"
    text = _text(value) if not isinstance(value, str) else value
    if len(text) > _SNIPPET:
        text = text[: _SNIPPET - 1] + "…"
    return repr(text)


def _names(items: list[str], none: str) -> str:
    return ", ".join(dict.fromkeys(items)) or none


def _as_bool(value: Any) -> bool | None:
    """A check function's verdict: real booleans only (also numpy's), so ``None`` is never a pass."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    return None


def outcome(result: Any, who: str) -> str | None:
    """A check function's result (``True``/``False`` or ``(passed, reason)``) as a failure reason or None."""
    reason: Any = None
    if isinstance(result, tuple) and len(result) == 2:
        result, reason = result
    ok = _as_bool(result)
    if ok is None:
        return f"{who} returned {result!r}, expected True, False or (passed, reason)"
    if ok:
        return None
    return str(reason) if reason else f"{who} returned False"


# -- the checks ---------------------------------------------------------------------------------


def _field_of(output: Any, name: str) -> tuple[bool, Any]:
    """``output[name]`` for dicts, JSON-object strings and objects with that attribute."""
    obj = output
    if isinstance(obj, str) and obj.lstrip().startswith("{"):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError:
            return False, None
    if isinstance(obj, dict):
        return (True, obj[name]) if name in obj else (False, None)
    if obj is not None and not isinstance(obj, str) and hasattr(obj, name):
        return True, getattr(obj, name)
    return False, None


def _exact_match(check: Check, where: Where) -> CheckFn:
    expected = str(check.value).strip()
    field_name: str | None = check.options.get("field")

    def run(input: str, trace: Trace) -> str | None:
        out, label = trace.output, "output"
        if field_name is not None:
            found, value = _field_of(out, field_name)
            if found:
                out, label = value, field_name
            elif isinstance(out, dict):
                return f"output has no field {field_name!r} (fields: {_names([str(k) for k in out], 'none')})"
        got = _text(out).strip()
        if got == expected:
            return None
        return f"expected {label} {expected!r}, got {_show(got) if out is not None else 'no output'}"

    return run


def _contains(check: Check, where: Where) -> CheckFn:
    needle = str(check.value)
    folded = needle.casefold()

    def run(input: str, trace: Trace) -> str | None:
        if folded in _text(trace.output).casefold():
            return None
        return f"output does not contain {needle!r} (output: {_show(trace.output)})"

    return run


def _not_contains(check: Check, where: Where) -> CheckFn:
    needle = str(check.value)
    folded = needle.casefold()

    def run(input: str, trace: Trace) -> str | None:
        if folded not in _text(trace.output).casefold():
            return None
        return f"output contains {needle!r}, which it must not (output: {_show(trace.output)})"

    return run


def _regex(check: Check, where: Where) -> CheckFn:
    try:
        pattern = compile_pattern(str(check.value))
    except regex_error() as e:
        raise where.error(check, f"invalid regular expression {check.value!r}: {e}.") from None

    def run(input: str, trace: Trace) -> str | None:
        try:
            if pattern.search(_text(trace.output)):
                return None
        except PatternTimeout as e:  # issue 22, defect 8: a backtracking pattern fails this trial, never hangs
            return f"regex check '{pattern.pattern}' gave up: {e}"
        return f"output does not match regex '{pattern.pattern}' (output: {_show(trace.output)})"

    return run


def _json_schema(check: Check, where: Where) -> CheckFn:
    try:
        import jsonschema  # lazy: only suites with a json_schema check pay for it
    except ImportError:
        raise where.error(
            check, "the json_schema check needs the jsonschema package (pip install jsonschema)."
        ) from None
    schema = check.value
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        raise where.error(check, f"invalid JSON schema: {e.message}.") from None
    validator = cls(schema)

    def run(input: str, trace: Trace) -> str | None:
        out = trace.output
        if isinstance(out, str):
            try:
                out = json.loads(out)
            except json.JSONDecodeError as e:
                return f"output is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})"
        elif hasattr(out, "model_dump"):
            out = out.model_dump(mode="json")
        error = jsonschema.exceptions.best_match(validator.iter_errors(out))
        if error is None:
            return None
        message = error.message if len(error.message) <= 160 else error.message[:159] + "…"
        path = getattr(error, "json_path", "$")
        at = f" at {path}" if path != "$" else ""
        return f"output does not match the JSON schema{at}: {message}"

    return run


def resolve(check: Check, where: Where) -> Callable[..., Any]:
    """Import ``module:attr`` now, so a typo fails the load, not every trial."""
    entry = str(check.value)
    module_name, _, attr = entry.partition(":")
    if not module_name or not attr:
        raise where.error(check, f"expected 'module:function', got {entry!r}.")
    for folder in reversed(where.search):
        folder = os.path.abspath(folder)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as e:
        raise where.error(
            check, f"cannot import module {module_name!r} for {entry!r}: {type(e).__name__}: {e}."
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise where.error(check, f"module {module_name!r} has no attribute {attr!r}.") from None
    if not callable(obj):
        raise where.error(check, f"{entry!r} is not callable (it is a {type(obj).__name__}).")
    if inspect.iscoroutinefunction(obj):
        raise where.error(
            check, f"{entry!r} is async; check functions must be plain (synchronous) functions."
        )
    return obj


def _python(check: Check, where: Where) -> CheckFn:
    fn = resolve(check, where)
    who = f"check {check.value}"

    def run(input: str, trace: Trace) -> str | None:
        try:
            result = fn(input, trace.output, trace)
        except Exception as e:
            return f"{who} raised {type(e).__name__}: {e}"
        return outcome(result, who)

    return run


def _max_steps(check: Check, where: Where) -> CheckFn:
    limit = int(check.value)

    def run(input: str, trace: Trace) -> str | None:
        n = len(trace.steps)
        return None if n <= limit else f"took {n} steps (max {limit})"

    return run


def _must_call(check: Check, where: Where) -> CheckFn:
    tool = str(check.value)

    def run(input: str, trace: Trace) -> str | None:
        called = trace.tools_called
        if tool in called:
            return None
        return f"did not call tool {tool!r} (called: {_names(called, 'no tools')})"

    return run


def _must_not_call(check: Check, where: Where) -> CheckFn:
    tool = str(check.value)

    def run(input: str, trace: Trace) -> str | None:
        n = trace.tools_called.count(tool)
        if n == 0:
            return None
        times = "once" if n == 1 else f"{n} times"
        return f"called tool {tool!r} ({times}), which it must not call"

    return run


def _must_reach(check: Check, where: Where) -> CheckFn:
    agent = str(check.value)

    def run(input: str, trace: Trace) -> str | None:
        reached = trace.agents_reached
        if agent in reached:
            return None
        return f"did not reach agent {agent!r} (reached: {_names(reached, 'no agents recorded')})"

    return run


# The kernel's kinds (_spec/_kinds.py KERNEL_KINDS); features' kinds name their own builders.
_BUILDERS: dict[str, Callable[[Check, Where], CheckFn]] = {
    "exact_match": _exact_match,
    "contains": _contains,
    "not_contains": _not_contains,
    "regex": _regex,
    "json_schema": _json_schema,
    "python": _python,
    "max_steps": _max_steps,
    "must_call": _must_call,
    "must_not_call": _must_not_call,
    "must_reach": _must_reach,
}
assert set(_BUILDERS) == {k.name for k in KERNEL_KINDS}, "every kernel check kind needs a builder"
