"""The contract expression language: Python syntax, parsed with :mod:`ast`, a whitelist evaluated by hand.

Expressions come from a suite file and run on every trace, so nothing reaches ``eval`` or ``exec``:
:func:`compile_expression` walks the tree once, at load, and refuses anything outside the
whitelist (docs/contracts.md, "Expressions") with the offending name and a did-you-mean; the
evaluator then interprets only the node types the checker let through. Errors while evaluating
(a type mismatch, a missing field) are :class:`EvalError`, which makes that trial's contract
violated with the reason, never a crash.

Names: ``input``, ``output``, ``steps``, ``tools``, ``handoffs``, ``tokens``, ``usd``, ``latency_s``,
and, where the contract allows it, a tool's name for the arguments of the call being checked
(``refund.amount``).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._config_check import closest
from ..._errors import AgentAssayError
from ..._limits import PatternTimeout, UserPattern, compile_pattern, expired, regex_error

ROOTS = ("input", "output", "steps", "tools", "handoffs", "tokens", "usd", "latency_s")
# Roots whose fields are read with a dot (``input.order_total``); tool names are the others.
FIELD_ROOTS = ("input", "output")
# name -> (fewest, most) positional arguments; None: any number.
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "len": (1, 1),
    "count": (2, 2),
    "any": (1, 1),
    "all": (1, 1),
    "lower": (1, 1),
    "upper": (1, 1),
    "matches": (2, 2),
    "number": (1, 1),
    "min": (1, None),
    "max": (1, None),
    "abs": (1, 1),
}
_COMPARE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b,
}
_CMP: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
# Names for constructs the checker refuses, so the message says what was written.
_REFUSED: dict[type[ast.AST], str] = {
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Dict: "a dict literal",
    ast.Set: "a set literal",
    ast.IfExp: "a conditional expression (x if c else y)",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment (:=)",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Starred: "unpacking (*)",
    ast.Slice: "a slice",
}
_MAX_REPEAT = (
    100_000  # "x" * n and [x] * n beyond this many items are an evaluation error, not a memory spike
)
# Issue 22, defect 8: every value an operator builds (+, *, %, a list literal) is charged its size — characters
# of text plus items of lists, nested — and one evaluation may build at most this much in total. It bounds the
# memory of an expression and the time of any one operation on what it built: comparing two 10^5 x 10^5 nested
# lists (10^10 item comparisons in one C call, which no deadline can interrupt) is refused when they are built.
MAX_BUILT = 10_000_000
MAX_FORMAT_WIDTH = 1_000  # width and precision of a %-format ('%999999999d' allocated 1 GB, '%.999999999f' 19 s)
# A %-conversion: mapping key, flags, width, precision, length modifier, conversion character.
_PERCENT = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.?)", re.DOTALL)
ALLOWED = (
    "names " + ", ".join(ROOTS) + " (and tool arguments where the contract allows them); comparisons, "
    "and/or/not, + - * / %, in; numbers, strings, True/False/None, lists; functions " + ", ".join(FUNCTIONS)
)


MAX_EXPRESSION = 10_000  # characters of one contract expression


class ExprError(AgentAssayError):
    """An expression that cannot be used: ``name`` is the offending name, ``suggestion`` a close valid one."""

    def __init__(self, message: str, *, name: str | None = None, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.suggestion = suggestion


class EvalError(AgentAssayError):
    """An expression that failed on one trace (a type mismatch, a missing field): that trial's contract is violated."""


def _unknown(what: str, name: str, valid: Collection[str], note: str = "") -> ExprError:
    near = closest(name, valid)
    hint = f"; did you mean '{near}'?" if near else f" (valid: {', '.join(valid)})"
    return ExprError(f"unknown {what} '{name}'{note}{hint}", name=name, suggestion=near)


def _one_typo(a: str, b: str) -> bool:
    """Same length, and one character changed or two neighbours swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 1 or (
        len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    )


def _dunder(name: str) -> bool:
    return name.startswith("__")


@dataclass(frozen=True)
class Expression:
    """A checked expression: its text, its tree and the tools whose arguments it reads."""

    text: str
    tree: ast.expr = field(repr=False)
    tools: frozenset[str] = frozenset()
    roots: frozenset[str] = frozenset()
    patterns: Mapping[str, UserPattern] = field(default_factory=dict, repr=False)

    def evaluate(self, env: Env) -> Any:
        """The value on one trace; :class:`EvalError` when it cannot be computed (also when it would build more
        than ``MAX_BUILT`` or outlast the trial's time limit: bounded work, docs/contracts.md)."""
        try:
            return _Eval(env, self.patterns).eval(self.tree)
        except EvalError:
            raise
        except PatternTimeout as exc:
            raise EvalError(f"matches(): {exc}") from None
        except MemoryError:
            raise EvalError("the expression ran out of memory") from None
        except (
            TypeError,
            ValueError,
            ZeroDivisionError,
            IndexError,
            KeyError,
            OverflowError,
            re.error,
            *regex_error(),
            RecursionError,
        ) as exc:
            raise EvalError(f"{type(exc).__name__}: {exc}") from None

    def reads(self) -> list[tuple[str, ast.expr]]:
        """The maximal name/field reads in it (``input.order_total``), with their source text, to explain a failure."""
        out: list[tuple[str, ast.expr]] = []

        def visit(node: ast.AST) -> None:
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and _rooted(node):
                text = ast.get_source_segment(self.text, node) or ast.unparse(node)
                if all(t != text for t, _ in out):
                    out.append((text, node))
                return
            for child in ast.iter_child_nodes(node):
                if not (isinstance(node, ast.Call) and child is node.func):
                    visit(child)

        visit(self.tree)
        return out

    def explain(self, env: Env, *, skip: Collection[str] = ()) -> str:
        """``input.order_total = 100, tools = ['a']``: the values it read on this trace (not those in ``skip``)."""
        parts = []
        for text, node in self.reads():
            base = _base_name(node)
            if base in skip:
                continue
            try:
                value = shown(_Eval(env, self.patterns).eval(node))
            except Exception as exc:  # explaining a violation must never fail it
                value = f"<{type(exc).__name__}>"
            parts.append(f"{text} = {value}")
        return ", ".join(parts)


def shown(value: Any, width: int = 60) -> str:
    """A value as a message shows it: JSON-like, clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _rooted(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name)


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def compile_expression(
    text: Any, *, tools: bool | Collection[str] = False, known_tools: Collection[str] = ()
) -> Expression:
    """Parse and check ``text``; raise :class:`ExprError` naming what is not allowed.

    ``tools``: may the expression read tool arguments (``refund.amount``)? ``True`` for any tool,
    a collection for those tools only, ``False`` for none. ``known_tools`` (when the agent's tools
    are known) turns a misspelt tool name into an error with a did-you-mean.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExprError(f"expected an expression (a string), got {shown(text)}")
    if len(text) > MAX_EXPRESSION:  # issue 22, defect 7: a huge expression must not take the parser down
        raise ExprError(
            f"the expression is {len(text):,} characters long; at most {MAX_EXPRESSION:,} are allowed: "
            "split it into several contracts"
        )
    too_deep = "the expression is nested too deeply to check; split it into several contracts"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        col = f" at column {exc.offset}" if exc.offset else ""
        raise ExprError(f"not a valid expression: {exc.msg}{col}") from None
    except (RecursionError, MemoryError, ValueError):  # ast.parse's own limits: never disable the contracts
        raise ExprError(too_deep) from None
    checker = _Checker(tools, tuple(known_tools))
    try:
        checker.check(tree.body)
    except RecursionError:
        raise ExprError(too_deep) from None
    return Expression(
        text.strip(), tree.body, frozenset(checker.tools), frozenset(checker.roots), checker.patterns
    )


class _Checker:
    """One pass over the tree at load: every node must be on the whitelist."""

    def __init__(self, tools: bool | Collection[str], known: tuple[str, ...]) -> None:
        self.allow = tools
        self.known = known
        self.tools: set[str] = set()
        self.roots: set[str] = set()
        self.patterns: dict[str, UserPattern] = {}

    def check(self, node: ast.AST) -> None:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            what = _REFUSED.get(type(node)) or type(node).__name__
            raise ExprError(f"{what} is not allowed in a contract expression; allowed: {ALLOWED}")
        method(node)

    # -- leaves ---------------------------------------------------------------------------------
    def _Constant(self, node: ast.Constant) -> None:
        if node.value is not None and not isinstance(node.value, (bool, int, float, str)):
            raise ExprError(
                f"the literal {node.value!r} is not allowed; use numbers, strings, True, False or None"
            )

    def _Name(self, node: ast.Name) -> None:
        name = node.id
        if _dunder(name):
            raise ExprError(f"dunder names are not allowed: '{name}'", name=name)
        if name in ROOTS:
            self.roots.add(name)
            return
        if name in FUNCTIONS:
            raise ExprError(f"'{name}' is a function: call it, e.g. {name}(tools)", name=name)
        if self.allow and (name in self.known or (not closest(name, ROOTS) and name not in FUNCTIONS)):
            raise ExprError(
                f"unknown name '{name}': read a tool's argument by name ({name}.<argument>); "
                f"other names: {', '.join(ROOTS)}",
                name=name,
            )
        raise _unknown("name", name, ROOTS)

    def _List(self, node: ast.List | ast.Tuple) -> None:
        for item in node.elts:
            self.check(item)

    _Tuple = _List

    # -- reads ----------------------------------------------------------------------------------
    def _Attribute(self, node: ast.Attribute) -> None:
        if _dunder(node.attr):
            raise ExprError(f"dunder names are not allowed: '{node.attr}'", name=node.attr)
        base = node.value
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            if isinstance(base, ast.Attribute) and _dunder(base.attr):
                raise ExprError(f"dunder names are not allowed: '{base.attr}'", name=base.attr)
            if isinstance(base, ast.Subscript):
                self._index(base)
            base = base.value
        if not isinstance(base, ast.Name):
            raise ExprError(
                f"'.{node.attr}' on {_what(base)} is not allowed: fields are read only from "
                f"{', '.join(FIELD_ROOTS)} and tool arguments (e.g. input.order_total, refund.amount)",
                name=node.attr,
            )
        name = base.id
        if _dunder(name):
            raise ExprError(f"dunder names are not allowed: '{name}'", name=name)
        if name in FIELD_ROOTS:
            self.roots.add(name)
            return
        if name in ROOTS:
            raise ExprError(
                f"'{name}' has no fields ('{name}.{node.attr}'): fields are read only from "
                f"{', '.join(FIELD_ROOTS)} and tool arguments",
                name=f"{name}.{node.attr}",
            )
        if name in FUNCTIONS:
            raise ExprError(f"'{name}.{node.attr}': functions have no attributes", name=name)
        self._tool(name)

    def _tool(self, name: str) -> None:
        if not self.allow:
            near = closest(name, ROOTS)
            if near:
                raise _unknown("name", name, ROOTS)
            raise ExprError(
                f"unknown name '{name}': tool arguments ('{name}.<argument>') can be read only in `require` "
                f"and in `never: {{tool: …}}`; valid names here: {', '.join(ROOTS)}",
                name=name,
            )
        if not isinstance(self.allow, bool) and name not in self.allow:
            allowed = ", ".join(sorted(self.allow))
            near = closest(name, [*self.allow, *ROOTS])
            hint = f"; did you mean '{near}'?" if near else ""
            raise ExprError(
                f"unknown name '{name}': here only the arguments of {allowed} can be read{hint}",
                name=name,
                suggestion=near,
            )
        if self.known and name not in self.known:
            raise _unknown(
                "name",
                name,
                [*ROOTS, *sorted(set(self.known))],
                " (not a name and not one of the agent's tools)",
            )
        # Before the agent is loaded a tool name cannot be told from a misspelt root, except for the typos
        # that keep the length (inptu, ouptut): those are refused now; the rest are checked against the
        # agent's tools once it is loaded (plugin hook agentassay_prepare).
        typo = next((r for r in ROOTS if _one_typo(name, r)), None)
        if typo and name not in self.known:
            raise ExprError(
                f"unknown name '{name}'; did you mean '{typo}'? (a tool named '{name}' would be read the same way: "
                "rename the tool or fix the spelling)",
                name=name,
                suggestion=typo,
            )
        self.tools.add(name)

    def _Subscript(self, node: ast.Subscript) -> None:
        base = node.value
        while isinstance(base, ast.Subscript):
            self._index(base)
            base = base.value
        self._index(node)
        if isinstance(base, ast.Attribute):
            self._Attribute(base)
        elif isinstance(base, ast.Name):
            self._Name(base)
        else:
            raise ExprError(
                f"indexing {_what(base)} is not allowed: index only names and fields (tools[0], input.items[1])"
            )

    def _index(self, node: ast.Subscript) -> None:
        s = node.slice
        if isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub) and isinstance(s.operand, ast.Constant):
            s = s.operand
        if not (
            isinstance(s, ast.Constant) and isinstance(s.value, (int, str)) and not isinstance(s.value, bool)
        ):
            raise ExprError(
                "an index must be a literal number or string (tools[0], tools[-1], input['order id'])"
            )

    # -- operators ------------------------------------------------------------------------------
    def _BoolOp(self, node: ast.BoolOp) -> None:
        for v in node.values:
            self.check(v)

    def _UnaryOp(self, node: ast.UnaryOp) -> None:
        if not isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
            raise ExprError(f"the operator {type(node.op).__name__} is not allowed; allowed: not, -, +")
        self.check(node.operand)

    def _BinOp(self, node: ast.BinOp) -> None:
        if type(node.op) not in _BINOPS:
            op = {ast.Pow: "**", ast.FloorDiv: "//", ast.MatMult: "@"}.get(
                type(node.op), type(node.op).__name__
            )
            raise ExprError(f"the operator {op} is not allowed; allowed: + - * / %")
        self.check(node.left)
        self.check(node.right)

    def _Compare(self, node: ast.Compare) -> None:
        for op in node.ops:
            if not isinstance(op, _COMPARE):
                raise ExprError(f"the comparison {type(op).__name__} is not allowed")
        self.check(node.left)
        for c in node.comparators:
            self.check(c)

    def _Call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) in _REFUSED:
            self.check(func)  # says what it is ("a lambda is not allowed …")
        if not isinstance(func, ast.Name):
            raise ExprError(
                f"calling {_what(func)} is not allowed: only the functions {', '.join(FUNCTIONS)} can be called"
            )
        name = func.id
        if _dunder(name):
            raise ExprError(f"dunder names are not allowed: '{name}'", name=name)
        if name not in FUNCTIONS:
            raise _unknown("function", name, tuple(FUNCTIONS))
        if node.keywords:
            raise ExprError(f"{name}() takes positional arguments only")
        lo, hi = FUNCTIONS[name]
        n = len(node.args)
        if n < lo or (hi is not None and n > hi):
            want = str(lo) if lo == hi else f"at least {lo}" if hi is None else f"{lo} to {hi}"
            raise ExprError(f"{name}() takes {want} argument{'s' if want != '1' else ''}, got {n}")
        for a in node.args:
            self.check(a)
        if name == "matches":
            pat = node.args[0]
            if isinstance(pat, ast.Constant) and isinstance(pat.value, str):
                try:
                    self.patterns[pat.value] = compile_pattern(pat.value)
                except regex_error() as exc:
                    raise ExprError(f"invalid regular expression {pat.value!r} in matches(): {exc}") from None


def _what(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return "a call's result"
    if isinstance(node, ast.Constant):
        return f"the literal {node.value!r}"
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return _REFUSED.get(type(node)) or f"a {type(node).__name__} expression"


# -- evaluation -------------------------------------------------------------------------------------


class Env:
    """What an expression reads on one trace: the roots, the fields of input and output, the bound tool's arguments."""

    def __init__(
        self,
        values: Mapping[str, Any],
        fields: Mapping[str, Callable[[], Mapping[str, Any] | None]],
        args: Mapping[str, Any],
    ) -> None:
        self.values = values  # root -> value (or a zero-argument function computing it)
        self.fields = fields  # field root -> function giving its fields, or None when it has none
        self.args = args  # tool name -> the arguments of the call being checked

    def root(self, name: str) -> Any:
        v = self.values[name]
        return v() if callable(v) else v

    def field(self, root: str, name: str) -> Any:
        found = self.fields[root]()
        if found is None:
            raise EvalError(
                f"{root} has no fields ({root} is not a JSON object and has no 'key: value' lines), so no {root}.{name}"
            )
        if name not in found:
            have = ", ".join(map(str, list(found)[:8])) or "none"
            raise EvalError(f"{root} has no field '{name}' (fields: {have})")
        return found[name]

    def arg(self, tool: str, name: str) -> Any:
        if tool not in self.args:
            raise EvalError(f"no call of {tool} is being checked here, so no {tool}.{name}")
        args = self.args[tool]
        if not isinstance(args, Mapping) or name not in args:
            have = ", ".join(map(str, args)) if isinstance(args, Mapping) else "none"
            raise EvalError(f"{tool} was called without the argument '{name}' (arguments: {have or 'none'})")
        return args[name]


class _Eval:
    def __init__(self, env: Env, patterns: Mapping[str, UserPattern]) -> None:
        self.env = env
        self.patterns = patterns
        self.built = 0  # what operators built so far (MAX_BUILT)

    def _charge(self, size: int, what: str) -> None:
        """Count ``size`` against MAX_BUILT before the operation builds it."""
        if self.built + size > MAX_BUILT:
            raise EvalError(
                f"{what} would build more than {MAX_BUILT:,} characters or list items in one evaluation; "
                "contracts are bounded (docs/contracts.md, 'Limits')"
            )
        self.built += size

    def eval(self, node: ast.expr) -> Any:
        if expired():  # the trial's time limit (the engine's deadline on this thread): each step is bounded
            raise EvalError("the expression did not finish within the trial's time limit (config.timeout)")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.env.root(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self.eval(e) for e in node.elts]
            self._charge(len(items), "a list literal")
            return items
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.BoolOp):
            value: Any = None
            for v in node.values:
                value = self.eval(v)
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
            return value
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            _need_number(operand, "-" if isinstance(node.op, ast.USub) else "+")
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self.eval(comp)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return self._call(node.func.id, [self.eval(a) for a in node.args], node)
        raise EvalError(f"cannot evaluate {type(node).__name__}")  # the checker lets nothing else through

    def _attribute(self, node: ast.Attribute) -> Any:
        base = node.value
        if isinstance(base, ast.Name):
            if base.id in FIELD_ROOTS:
                return self.env.field(base.id, node.attr)
            return self.env.arg(base.id, node.attr)
        value = self.eval(base)
        if isinstance(value, Mapping):
            if node.attr not in value:
                raise EvalError(f"{ast.unparse(base)} has no field '{node.attr}'")
            return value[node.attr]
        raise EvalError(f"{ast.unparse(base)} is {_kind(value)}, which has no field '{node.attr}'")

    def _subscript(self, node: ast.Subscript) -> Any:
        s = node.slice
        index = -s.operand.value if isinstance(s, ast.UnaryOp) else s.value  # type: ignore[attr-defined]
        base = node.value
        if isinstance(base, ast.Name) and base.id in FIELD_ROOTS and isinstance(index, str):
            return self.env.field(
                base.id, index
            )  # input['order total']: a field whose name is not an identifier
        value = self.eval(base)
        if isinstance(value, Mapping):
            if index not in value:
                raise EvalError(f"{ast.unparse(node.value)} has no key {index!r}")
            return value[index]
        if isinstance(value, (list, tuple, str)) and isinstance(index, int):
            if not -len(value) <= index < len(value):
                raise EvalError(f"{ast.unparse(node.value)}[{index}] is out of range (length {len(value)})")
            return value[index]
        raise EvalError(f"{ast.unparse(node.value)} is {_kind(value)} and cannot be indexed by {index!r}")

    def _binop(self, node: ast.BinOp) -> Any:
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Mult):
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list)) and isinstance(n, int) and not isinstance(n, bool):
                    if n * len(seq) > _MAX_REPEAT:
                        raise EvalError(f"repeating a sequence {n} times is too large")
                    if n > 0:
                        self._charge(n * _size(seq, MAX_BUILT - self.built), "repeating a sequence")
        elif isinstance(node.op, ast.Add) and isinstance(left, (str, list)) and isinstance(right, (str, list)):
            budget = MAX_BUILT - self.built
            self._charge(_size(left, budget) + _size(right, budget), "joining two sequences with +")
        elif isinstance(node.op, ast.Mod) and isinstance(left, str):
            _check_format(left)
            self._charge(len(left), "%-formatting")
            out = left % right
            self._charge(len(out), "%-formatting")
            return out
        return _BINOPS[type(node.op)](left, right)

    def _call(self, name: str, args: list[Any], node: ast.Call) -> Any:
        if name == "len":
            return len(args[0])
        if name == "count":
            seq, x = args
            if not isinstance(seq, (list, tuple, str)):
                raise EvalError(f"count() needs a list, got {_kind(seq)}")
            return seq.count(x)
        if name in ("any", "all"):
            seq = args[0]
            if not isinstance(seq, (list, tuple)):
                raise EvalError(f"{name}() needs a list, got {_kind(seq)}")
            return any(seq) if name == "any" else all(seq)
        if name in ("lower", "upper"):
            text = args[0]
            if not isinstance(text, str):
                raise EvalError(f"{name}() needs text, got {_kind(text)}")
            return text.lower() if name == "lower" else text.upper()
        if name == "matches":
            pattern, text = args
            if not isinstance(pattern, str):
                raise EvalError(f"matches() needs a pattern (text) first, got {_kind(pattern)}")
            if isinstance(text, (int, float)) and not isinstance(text, bool):
                text = str(text)
            if not isinstance(text, str):
                raise EvalError(f"matches() needs text second, got {_kind(text)}")
            compiled = self.patterns.get(pattern) or compile_pattern(pattern)
            return compiled.search(text) is not None
        if name == "number":
            return to_number(args[0])
        if name in ("min", "max"):
            items = args[0] if len(args) == 1 else args
            if not isinstance(items, (list, tuple)) or not items:
                raise EvalError(f"{name}() needs a non-empty list or several values")
            return min(items) if name == "min" else max(items)
        if name == "abs":
            _need_number(args[0], "abs()")
            return abs(args[0])
        raise EvalError(f"unknown function {name}")


def _size(value: Any, cap: int) -> int:
    """What ``value`` weighs against MAX_BUILT: characters of text, items of lists (nested), 1 otherwise.

    Counting stops past ``cap`` (the budget left), so weighing costs no more than the budget.
    """
    if isinstance(value, str):
        return max(len(value), 1)
    if not isinstance(value, (list, tuple)):
        return 1
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            total += len(item) + 1
            stack.extend(x for x in item if isinstance(x, (str, list, tuple)))
        elif isinstance(item, str):
            total += len(item)
        if total > cap:
            break
    return total


def _check_format(fmt: str) -> None:
    """Refuse %-conversions whose width or precision would build or compute without bound."""
    for m in _PERCENT.finditer(fmt):
        width, precision = m.group(1), m.group(2)
        if "*" in (width, precision):
            raise EvalError("a %-format taking its width or precision from the arguments (*) is not allowed")
        for what, digits in (("width", width), ("precision", precision)):
            if digits and (len(digits) > 6 or int(digits) > MAX_FORMAT_WIDTH):
                raise EvalError(
                    f"the %-format {shown(m.group(0), 30)} has a {what} of {shown(digits, 12)}; at most "
                    f"{MAX_FORMAT_WIDTH:,} is allowed"
                )


_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")


def to_number(value: Any) -> int | float:
    """``number(text)``: ints stay ints, decimal text becomes int or float; anything else is an error."""
    if isinstance(value, bool) or value is None:
        raise EvalError(f"number() needs a number or numeric text, got {_kind(value)}")
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        s = value.strip()
        if _THOUSANDS.fullmatch(s):  # "1,250.50"
            s = s.replace(",", "")
        try:
            return int(s)
        except ValueError:
            pass
        try:
            f = float(s)
        except ValueError:
            raise EvalError(f"number() cannot read {shown(value)} as a number") from None
        if not math.isfinite(f):
            raise EvalError(f"number() cannot read {shown(value)} as a finite number")
        return f
    raise EvalError(f"number() needs a number or numeric text, got {_kind(value)}")


def _need_number(value: Any, who: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvalError(f"{who} needs a number, got {_kind(value)}")


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"text ({shown(value, 30)})"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
