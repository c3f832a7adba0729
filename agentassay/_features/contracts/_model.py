"""Contracts of a suite: parsed from ``contracts:`` (suite and scenario level), checked on one trace at a time.

Every contract is compiled when the suite is configured — expressions checked against the
whitelist, regexes compiled, JSON schemas checked, ``python`` entries imported — so a broken
contract is a :class:`SpecError` naming the file, the line and the key
(``scenarios[0].contracts[1].require``) before the first trial, never a failure repeated in every
trial. On a trace, :meth:`Contract.evaluate` returns ``None`` (satisfied) or the
:class:`Violation` quoting the step that broke it; it never raises.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from ..._config_check import KeyLines, closest
from ..._evaluators import Where, resolve
from ..._limits import PatternTimeout, compile_pattern, doing, regex_error
from ..._runner._cost import OFFLINE, price_source, unpriced_message
from ..._spec import Check as SpecCheck
from ..._spec import Extension, Scenario, SpecError, Suite
from ..._traces import Action, Step, Trace
from ._expr import Env, EvalError, ExprError, Expression, compile_expression, shown

KINDS = (
    "before",
    "never",
    "arguments",
    "require",
    "max_steps",
    "max_tool_calls",
    "max_tokens",
    "max_usd",
    "max_latency_s",
    "output_schema",
    "python",
)
OPTIONS = ("name", "p", "delta")
DEFAULT_P = 1.0
DEFAULT_DELTA = 0.05
_ARGUMENT_KEYS = ("tool", "field", "matches", "one_of", "min", "max")
_NEVER_KEYS = ("tool", "handoff", "when")
_KEY_VALUE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*")
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


# -- what a contract sees of one trace ------------------------------------------------------------


def output_text(value: Any) -> str:
    """The final output as text: strings as they are, structured outputs as JSON, no output as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _scalar(text: str) -> Any:
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def input_fields(text: str) -> dict[str, Any] | None:
    """``input.<field>``: a JSON object's keys, else the ``key: value`` lines (numbers read as numbers); None when neither."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
    fields: dict[str, Any] = {}
    for line in text.splitlines():
        m = _KEY_VALUE.fullmatch(line)
        if m and m[1] not in fields:
            fields[m[1]] = _scalar(m[2])
    return fields or None


def output_fields(value: Any) -> dict[str, Any] | None:
    """``output.<field>``: a structured output's keys, or a JSON-object string's; None otherwise."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            obj = json.loads(value)
        except json.JSONDecodeError:
            return None
        return obj if isinstance(obj, dict) else None
    return None


def step_arguments(step: Step) -> dict[str, Any]:
    """A tool call's arguments as a mapping (JSON-object strings are parsed; anything else has none)."""
    args = step.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return {}
    return args if isinstance(args, dict) else {}


def describe_step(step: Step) -> str:
    """One step as a violation quotes it: ``handoff Triage Agent → FAQ Agent``, ``update_seat(new_seat="99Z")``."""
    if step.action is Action.HANDOFF:
        return f"handoff {step.agent or '?'} → {step.target or '?'}"
    if step.action is Action.CALL_TOOL:
        args = step.arguments
        if isinstance(args, dict):
            inner = ", ".join(f"{k}={shown(v, 40)}" for k, v in args.items())
        else:
            inner = "" if args is None else shown(args, 60)
        if len(inner) > 100:
            inner = inner[:99] + "…"
        return f"{step.tool}({inner})"
    if step.action is Action.RESPOND:
        return f"respond {shown(output_text(step.output), 60)}"
    if step.action is Action.ERROR:
        return f"error {shown(step.error or '', 80)}"
    return str(step.action)


class TraceView:
    """One trace and its input, with what expressions read computed once."""

    def __init__(self, input: str, trace: Trace) -> None:
        self.input = input
        self.trace = trace
        self.steps = trace.steps

    def quote(self, number: int) -> str:
        """``step 2: handoff Triage Agent → FAQ Agent`` (steps count from 1)."""
        return f"step {number}: {describe_step(self.steps[number - 1])}"

    @cached_property
    def _input_fields(self) -> dict[str, Any] | None:
        return input_fields(self.input)

    @cached_property
    def _output_fields(self) -> dict[str, Any] | None:
        return output_fields(self.trace.output)

    @cached_property
    def _values(self) -> dict[str, Any]:
        t = self.trace
        return {
            "input": self.input,
            "output": lambda: output_text(t.output),
            "steps": len(t.steps),
            "tools": lambda: t.tools_called,
            "handoffs": lambda: [s.target for s in t.steps if s.action is Action.HANDOFF],
            "tokens": t.cost.total_tokens,
            "usd": t.cost.usd,
            "latency_s": t.cost.latency_s,
        }

    def env(self, args: Mapping[str, Any] | None = None) -> Env:
        fields = {"input": lambda: self._input_fields, "output": lambda: self._output_fields}
        return Env(self._values, fields, dict(args or {}))


# -- contracts ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """Why one trace broke a contract: the step quoted, then (after a dash) what was wrong with it."""

    quote: str
    reason: str = ""

    @property
    def text(self) -> str:
        return f"{self.quote} — {self.reason}" if self.reason else self.quote


Check = Callable[[TraceView], "Violation | None"]


class _Built(NamedTuple):
    """What a kind's builder gives: the contract's text (its default name), its check, what it names."""

    text: str
    check: Check
    tools: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Contract:
    """One contract: which ``kind``, its one-line ``text``, the (p, δ) of its oracle, where it was written."""

    name: str
    kind: str
    text: str
    check: Check = field(repr=False, compare=False)
    p: float = DEFAULT_P
    delta: float = DEFAULT_DELTA
    scope: str = "scenario"  # "suite": written at the top level, applies to every scenario
    key: str = ""  # the item, e.g. "scenarios[0].contracts[1]"
    line: int | None = None  # of its kind key
    file: str | None = None
    tools: frozenset[str] = frozenset()  # tool names it refers to (checked against the agent's tools)
    agents: frozenset[str] = frozenset()  # handoff targets it refers to

    @property
    def bound(self) -> float:
        """The rate the oracle tests against: ``p - delta``."""
        return round(self.p - self.delta, 12)

    def evaluate(self, input: str, trace: Trace) -> Violation | None:
        """None when ``trace`` satisfies the contract, else the violation. Never raises."""
        view = TraceView(input, trace)
        doing(f"contract {self.name!r}")  # named if the trial's time limit abandons it
        try:
            return self.check(view)
        except (EvalError, PatternTimeout) as exc:
            return Violation("trace", f"{self.kind} could not be evaluated: {exc}")
        except Exception as exc:  # a contract must cost its trial a violation, never the run
            return Violation("trace", f"{self.kind} failed: {type(exc).__name__}: {exc}")

    def describe(self) -> dict[str, Any]:
        """What the results file says of the contract itself."""
        return {
            "name": self.name,
            "kind": self.kind,
            "text": self.text,
            "scope": self.scope,
            "p": self.p,
            "delta": self.delta,
        }


@dataclass(frozen=True)
class _Target:
    """A step a contract names: a call of ``tool`` or a handoff to ``handoff``."""

    kind: str  # "tool" or "handoff"
    name: str

    def matches(self, step: Step) -> bool:
        if self.kind == "tool":
            return step.action is Action.CALL_TOOL and step.tool == self.name
        return step.action is Action.HANDOFF and step.target == self.name

    @property
    def text(self) -> str:
        return self.name if self.kind == "tool" else f"handoff {self.name}"


# -- parsing -----------------------------------------------------------------------------------------


class _Parser:
    """Turns one ``contracts:`` value into :class:`Contract` objects, every error located."""

    def __init__(
        self,
        ext: Extension,
        *,
        scope: str,
        lines: KeyLines,
        suite: Suite,
        search: Sequence[str | os.PathLike[str]],
        known_tools: Collection[str] = (),
    ) -> None:
        self.ext = ext
        self.scope = scope
        self.lines = lines
        self.suite = suite
        self.search = tuple(os.fspath(s) for s in search)
        self.known = tuple(known_tools)

    def error(
        self,
        key: str,
        message: str,
        *,
        suggestion: str | None = None,
        expected: str | None = None,
        got: Any = None,
    ) -> SpecError:
        line = self.lines.line(key) or self.ext.line
        return SpecError(
            message,
            file=self.ext.file,
            line=line,
            key=key,
            suggestion=suggestion,
            expected=expected,
            got=None if got is None else shown(got),
        )

    def expr_error(self, key: str, exc: ExprError) -> SpecError:
        return self.error(key, exc.message, suggestion=exc.suggestion)

    def contracts(self) -> list[Contract]:
        value = self.ext.value
        if not isinstance(value, list):
            raise self.error(
                self.ext.key,
                "expected a list of contracts, e.g. [{before: [lookup, update_seat]}, {max_steps: 8}]",
                expected="a list",
                got=value,
            )
        out: list[Contract] = []
        for i, raw in enumerate(value):
            c = self.item(raw, f"{self.ext.key}[{i}]")
            taken = {x.name for x in out}
            if c.name in taken:
                if raw.get("name") is not None:
                    raise self.error(
                        f"{c.key}.name", f"duplicate contract name {c.name!r}; names must be unique"
                    )
                k = 2
                while f"{c.name} #{k}" in taken:
                    k += 1
                c = _renamed(c, f"{c.name} #{k}")
            out.append(c)
        return out

    def item(self, raw: Any, key: str) -> Contract:
        if not isinstance(raw, dict):
            raise self.error(
                key,
                "expected a mapping with one contract kind, e.g. {never: {tool: refund}} "
                f"(kinds: {', '.join(KINDS)})",
                expected="a mapping",
                got=raw,
            )
        for k in raw:
            if k not in KINDS and k not in OPTIONS:
                near = closest(str(k), [*KINDS, *OPTIONS])
                hint = f"; did you mean '{near}'?" if near else ""
                raise self.error(
                    f"{key}.{k}",
                    f"unknown contract kind or option '{k}'{hint} Kinds: {', '.join(KINDS)}; options: "
                    f"{', '.join(OPTIONS)}.",
                    suggestion=near,
                )
        kinds = [k for k in raw if k in KINDS]
        if not kinds:
            raise self.error(key, f"no contract kind in this item; write one of {', '.join(KINDS)}")
        if len(kinds) > 1:
            raise self.error(
                key,
                f"one contract per item, this one has {', '.join(kinds)}: split it into {len(kinds)} items",
            )
        kind = kinds[0]
        p = self.rate(raw, key, "p", DEFAULT_P, low_open=True)
        delta = self.rate(raw, key, "delta", DEFAULT_DELTA, low_open=False)
        if not p - delta > 0:
            raise self.error(
                f"{key}.delta",
                f"p - delta must be above 0 (p = {p}, delta = {delta}): the contract could never be violated",
            )
        built: _Built = getattr(self, f"_{kind}")(raw[kind], f"{key}.{kind}")
        name = raw.get("name", built.text)
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"{key}.name", "expected a non-empty name", expected="a string", got=name)
        line = self.lines.line(f"{key}.{kind}") or self.lines.line(key) or self.ext.line
        return Contract(
            name.strip(),
            kind,
            built.text,
            built.check,
            p,
            delta,
            self.scope,
            key,
            line,
            self.ext.file,
            built.tools,
            built.agents,
        )

    def rate(self, raw: dict[str, Any], key: str, option: str, default: float, *, low_open: bool) -> float:
        if option not in raw:
            return default
        v = raw[option]
        ok = (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and (0 < v <= 1 if low_open else 0 <= v < 1)
        )
        if not ok:
            want = "a number in (0, 1]" if low_open else "a number in [0, 1)"
            raise self.error(f"{key}.{option}", f"expected {want}", expected=want, got=v)
        return float(v)

    # -- kinds ------------------------------------------------------------------------------------
    def target(self, raw: Any, key: str, *, when: bool = False) -> tuple[_Target, Any]:
        """A tool name, ``{tool: name}`` or ``{handoff: agent}`` (with ``when`` where allowed)."""
        if isinstance(raw, str) and raw.strip():
            return _Target("tool", raw.strip()), None
        allowed = _NEVER_KEYS if when else ("tool", "handoff")
        if not isinstance(raw, dict):
            raise self.error(key, "expected a tool name, {tool: name} or {handoff: agent}", got=raw)
        for k in raw:
            if k not in allowed:
                near = closest(str(k), allowed)
                hint = f"; did you mean '{near}'?" if near else ""
                raise self.error(
                    f"{key}.{k}", f"unknown key '{k}'{hint} (expected {', '.join(allowed)})", suggestion=near
                )
        named = [k for k in ("tool", "handoff") if k in raw]
        if len(named) != 1:
            raise self.error(key, "name exactly one of tool or handoff")
        name = raw[named[0]]
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"{key}.{named[0]}", "expected a name", expected="a string", got=name)
        return _Target(named[0], name.strip()), raw.get("when")

    def _before(self, value: Any, key: str) -> _Built:
        if not isinstance(value, list) or len(value) < 2:
            raise self.error(
                key, "expected a list of at least two steps in order, e.g. [lookup, update_seat]", got=value
            )
        targets = [self.target(v, f"{key}[{i}]")[0] for i, v in enumerate(value)]
        text = " before ".join(t.text for t in targets)

        def check(view: TraceView) -> Violation | None:
            seen: set[int] = set()
            for number, step in enumerate(view.steps, 1):
                for j, t in enumerate(targets):
                    if j in seen or not t.matches(step):
                        continue
                    missing = [targets[m].text for m in range(j) if m not in seen]
                    if missing:
                        return Violation(view.quote(number), f"no {' or '.join(missing)} before it")
                    seen.add(j)
            return None

        return _Built(text, check, _names(targets, "tool"), _names(targets, "handoff"))

    def _never(self, value: Any, key: str) -> _Built:
        target, when_text = self.target(value, key, when=True)
        when: Expression | None = None
        if when_text is not None:
            tools = {target.name} if target.kind == "tool" else False
            try:
                when = compile_expression(when_text, tools=tools, known_tools=self.known)
            except ExprError as exc:
                raise self.expr_error(f"{key}.when", exc) from None
        text = f"never {target.text}" + (f" when {when.text}" if when else "")

        def check(view: TraceView) -> Violation | None:
            for number, step in enumerate(view.steps, 1):
                if not target.matches(step):
                    continue
                if when is None:
                    return Violation(view.quote(number))
                args = {target.name: step_arguments(step)} if target.kind == "tool" else {}
                try:
                    holds = when.evaluate(view.env(args))
                except EvalError as exc:
                    return Violation(view.quote(number), f"when could not be evaluated: {exc}")
                if holds:
                    return Violation(view.quote(number))
            return None

        return _Built(text, check, _names([target], "tool"), _names([target], "handoff"))

    def _arguments(self, value: Any, key: str) -> _Built:
        if not isinstance(value, dict):
            raise self.error(
                key,
                "expected a mapping like {tool: update_seat, field: new_seat, matches: '^\\d{1,2}[A-F]$'}",
                got=value,
            )
        for k in value:
            if k not in _ARGUMENT_KEYS:
                near = closest(str(k), _ARGUMENT_KEYS)
                hint = f"; did you mean '{near}'?" if near else ""
                raise self.error(
                    f"{key}.{k}",
                    f"unknown key '{k}'{hint} (expected {', '.join(_ARGUMENT_KEYS)})",
                    suggestion=near,
                )
        for k in ("tool", "field"):
            if not isinstance(value.get(k), str) or not value[k].strip():
                raise self.error(
                    f"{key}.{k}" if k in value else key,
                    f"'{k}' is required: the {k} to constrain",
                    got=value.get(k),
                )
        tool, fname = value["tool"].strip(), value["field"].strip()
        rules: list[tuple[str, Callable[[Any], str | None]]] = []
        if "matches" in value:
            pattern_text = value["matches"]
            if not isinstance(pattern_text, str):
                raise self.error(
                    f"{key}.matches", "expected a regular expression (a string)", got=pattern_text
                )
            try:
                pattern = compile_pattern(pattern_text)
            except regex_error() as exc:
                raise self.error(
                    f"{key}.matches", f"invalid regular expression {pattern_text!r}: {exc}"
                ) from None

            def matches(v: Any) -> str | None:
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    v = str(v)
                if not isinstance(v, str):
                    return f"{fname} is {shown(v, 30)}, not text, so it does not match {pattern_text}"
                return None if pattern.search(v) else f"{fname} does not match {pattern_text}"

            rules.append((f"matches {pattern_text}", matches))
        if "one_of" in value:
            options = value["one_of"]
            if not isinstance(options, list) or not options:
                raise self.error(f"{key}.one_of", "expected a non-empty list of allowed values", got=options)
            rules.append(
                (
                    f"one of {shown(options)}",
                    lambda v: (
                        None if v in options else f"{fname} is {shown(v, 30)}, not one of {shown(options)}"
                    ),
                )
            )
        for bound in ("min", "max"):
            if bound in value:
                limit = value[bound]
                if isinstance(limit, bool) or not isinstance(limit, (int, float)):
                    raise self.error(f"{key}.{bound}", "expected a number", got=limit)
                rules.append(
                    (f"{'>=' if bound == 'min' else '<='} {limit}", _bound_rule(fname, bound, limit))
                )
        if not rules:
            raise self.error(key, "name at least one constraint: matches, one_of, min or max")
        text = f"{tool}.{fname} " + " and ".join(t for t, _ in rules)
        path = fname.split(".")

        def check(view: TraceView) -> Violation | None:
            for number, step in enumerate(view.steps, 1):
                if step.action is not Action.CALL_TOOL or step.tool != tool:
                    continue
                found, v = _lookup(step_arguments(step), path)
                if not found:
                    return Violation(view.quote(number), f"{fname} is missing")
                for _, rule in rules:
                    why = rule(v)
                    if why is not None:
                        return Violation(view.quote(number), why)
            return None

        return _Built(text, check, frozenset({tool}))

    def _require(self, value: Any, key: str) -> _Built:
        try:
            expr = compile_expression(value, tools=True, known_tools=self.known)
        except ExprError as exc:
            raise self.expr_error(key, exc) from None
        if len(expr.tools) > 1:
            raise self.error(
                key,
                f"reads the arguments of {len(expr.tools)} tools ({', '.join(sorted(expr.tools))}); a require "
                "expression is checked at every call of one tool: split it into one contract per tool",
            )
        tool = next(iter(expr.tools), None)

        def check(view: TraceView) -> Violation | None:
            if tool is None:
                env = view.env()
                try:
                    ok = expr.evaluate(env)
                except EvalError as exc:
                    return Violation("trace", f"{expr.text} could not be evaluated: {exc}")
                if ok:
                    return None
                values = expr.explain(env)
                return Violation(f"trace: {expr.text} is false", values)
            for number, step in enumerate(view.steps, 1):
                if step.action is not Action.CALL_TOOL or step.tool != tool:
                    continue
                env = view.env({tool: step_arguments(step)})
                try:
                    ok = expr.evaluate(env)
                except EvalError as exc:
                    return Violation(view.quote(number), f"{expr.text} could not be evaluated: {exc}")
                if not ok:
                    values = expr.explain(env, skip=(tool,))
                    return Violation(
                        view.quote(number), f"{expr.text} is false" + (f" ({values})" if values else "")
                    )
            return None

        return _Built(expr.text, check, expr.tools)

    def _count(self, value: Any, key: str, *, integer: bool) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        if integer:
            ok = ok and float(value).is_integer()
        if not ok:
            want = "a whole number >= 0" if integer else "a number >= 0"
            raise self.error(key, f"expected {want}", expected=want, got=value)
        return int(value) if integer else float(value)

    def _max_steps(self, value: Any, key: str) -> _Built:
        limit = int(self._count(value, key, integer=True))

        def check(view: TraceView) -> Violation | None:
            n = len(view.steps)
            return (
                None
                if n <= limit
                else Violation(view.quote(limit + 1), f"beyond max_steps {limit} ({n} steps)")
            )

        return _Built(f"max_steps {limit}", check)

    def _max_tool_calls(self, value: Any, key: str) -> _Built:
        limit = int(self._count(value, key, integer=True))

        def check(view: TraceView) -> Violation | None:
            calls = [i for i, s in enumerate(view.steps, 1) if s.action is Action.CALL_TOOL]
            if len(calls) <= limit:
                return None
            return Violation(
                view.quote(calls[limit]),
                f"tool call {limit + 1}, beyond max_tool_calls {limit} ({len(calls)} calls)",
            )

        return _Built(f"max_tool_calls {limit}", check)

    def _max_tokens(self, value: Any, key: str) -> _Built:
        limit = int(self._count(value, key, integer=True))

        def check(view: TraceView) -> Violation | None:
            n = view.trace.cost.total_tokens
            return None if n <= limit else Violation(f"trace: {n:,} tokens", f"above max_tokens {limit:,}")

        return _Built(f"max_tokens {limit}", check)

    def _max_usd(self, value: Any, key: str) -> _Built:
        """A trial's USD comes from config.prices, else the maintained table (issue 25): a named hosted model
        needs no configuration. What cannot be priced is said at load time when the suite names the model."""
        limit = self._count(value, key, integer=False)
        model, prices = self.suite.model, self.suite.settings.prices
        source = price_source(model.name, model.provider, prices)
        if source is not None and source.kind == OFFLINE:
            raise self.error(
                key,
                "max_usd: the offline simulator's trials cost nothing, so no trial has a cost in USD. Name the "
                "hosted model (model.provider and model.name: the price table prices known models), or add "
                'config.prices (`"*"` prices any model, the simulator too)',
            )
        if source is None and model.name:
            raise self.error(key, "max_usd: " + unpriced_message(model.name, model.provider, "max_usd cannot be checked"))

        def check(view: TraceView) -> Violation | None:
            usd = view.trace.cost.usd
            if usd is None:
                return Violation("trace: no cost in USD", "the trace's model has no price in config.prices or the price table")
            return None if usd <= limit else Violation(f"trace: ${usd:.6f}", f"above max_usd ${limit}")

        return _Built(f"max_usd {limit}", check)

    def _max_latency_s(self, value: Any, key: str) -> _Built:
        limit = self._count(value, key, integer=False)

        def check(view: TraceView) -> Violation | None:
            s = view.trace.cost.latency_s
            return None if s <= limit else Violation(f"trace: {s:.3f} s", f"above max_latency_s {limit}")

        return _Built(f"max_latency_s {limit}", check)

    def _output_schema(self, value: Any, key: str) -> _Built:
        import jsonschema

        if not isinstance(value, (dict, bool)):
            raise self.error(key, "expected a JSON schema (a mapping)", expected="a mapping", got=value)
        cls = jsonschema.validators.validator_for(value)
        try:
            cls.check_schema(value)
        except jsonschema.exceptions.SchemaError as exc:
            raise self.error(key, f"invalid JSON schema: {exc.message}") from None
        validator = cls(value)

        def check(view: TraceView) -> Violation | None:
            out = view.trace.output
            quote = f"final output {shown(output_text(out), 60)}"
            if isinstance(out, str):
                try:
                    out = json.loads(out)
                except json.JSONDecodeError as exc:
                    return Violation(quote, f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
            error = jsonschema.exceptions.best_match(validator.iter_errors(out))
            if error is None:
                return None
            message = error.message if len(error.message) <= 160 else error.message[:159] + "…"
            path = getattr(error, "json_path", "$")
            at = f" at {path}" if path != "$" else ""
            return Violation(quote, f"does not match the JSON schema{at}: {message}")

        return _Built("output_schema", check)

    def _python(self, value: Any, key: str) -> _Built:

        if not isinstance(value, str):
            raise self.error(key, "expected 'module:function'", expected="a string", got=value)
        where = Where(self.ext.file, Scenario("contracts", ""), self.search)
        fn = resolve(
            SpecCheck("python", value, {}, line=self.lines.line(key) or self.ext.line, key=key), where
        )
        who = f"python {value}"

        def check(view: TraceView) -> Violation | None:
            try:
                result = fn(view.input, view.trace)
            except Exception as exc:
                return Violation(f"trace: {who}", f"raised {type(exc).__name__}: {exc}")
            reason: Any = None
            if isinstance(result, tuple) and len(result) == 2:
                result, reason = result
            if not isinstance(result, bool) and type(result).__name__ != "bool_":
                return Violation(
                    f"trace: {who}", f"returned {result!r}, expected True, False or (passed, reason)"
                )
            if result:
                return None
            return Violation(f"trace: {who}", str(reason) if reason else "returned False")

        return _Built(who, check)


def _names(targets: Sequence[_Target], kind: str) -> frozenset[str]:
    return frozenset(t.name for t in targets if t.kind == kind)


def _bound_rule(fname: str, bound: str, limit: float) -> Callable[[Any], str | None]:
    def rule(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"{fname} is {shown(v, 30)}, not a number"
        if bound == "min" and v < limit:
            return f"{fname} is {v}, below {limit}"
        if bound == "max" and v > limit:
            return f"{fname} is {v}, above {limit}"
        return None

    return rule


def _lookup(args: Mapping[str, Any], path: Sequence[str]) -> tuple[bool, Any]:
    value: Any = args
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _renamed(c: Contract, name: str) -> Contract:
    from dataclasses import replace

    return replace(c, name=name)


# -- a suite's contracts ---------------------------------------------------------------------------


def suite_contracts(
    suite: Suite,
    *,
    search: Sequence[str | os.PathLike[str]] | None = None,
    known_tools: Collection[str] = (),
) -> dict[str, tuple[Contract, ...]]:
    """Every scenario's contracts, the suite's first, compiled; raises :class:`SpecError` on any bad one.

    ``search``: folders put first on ``sys.path`` for ``python`` entries (default: the working folder
    and the suite's, as for the suite's python checks). ``known_tools``: the agent's tool names, when
    known, so a misspelt tool is an error rather than a contract that can never apply.
    """
    folders = list(search) if search is not None else [Path.cwd(), suite.root]
    lines = KeyLines(suite.path)

    def parse(ext: Extension, scope: str) -> list[Contract]:
        return _Parser(
            ext, scope=scope, lines=lines, suite=suite, search=folders, known_tools=known_tools
        ).contracts()

    top = suite.extensions.get("contracts")
    shared = parse(top, "suite") if top is not None else []
    out: dict[str, tuple[Contract, ...]] = {}
    for sc in suite.scenarios:
        ext = sc.extensions.get("contracts")
        own = parse(ext, "scenario") if ext is not None else []
        names = {c.name: c for c in shared}
        for c in own:
            if c.name in names:
                raise SpecError(
                    f"contract name {c.name!r} is also a suite-level contract's (line {names[c.name].line}); names must "
                    "be unique within a scenario: give this one a `name:`",
                    file=c.file,
                    line=c.line,
                    key=c.key,
                )
        out[sc.name] = (*shared, *own)
    return out
