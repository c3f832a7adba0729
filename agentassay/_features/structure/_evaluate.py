"""Safe evaluation of the agent expressions a Python coordinator hands to ``Runner.run*`` (issue 17).

Real workflows build agents at run time — ``writer.clone(tools=[analyst.as_tool(...)])`` inside a
method, ``Runner.run(make_agent(...))`` on a factory — so reading module attributes alone misses
them (the Agents SDK's ``financial_research_agent`` lost its writer and both analysts that way).
Running the coordinator to see them is not an option: its methods call models, the network and
the file system. This evaluator reads the expression's AST and computes it over the objects the
import already created, and nothing else:

* literals, lists, tuples, dicts, f-strings and ``+`` of strings or lists; names (the enclosing
  function's locals, then the module's globals); attribute reads through
  ``inspect.getattr_static`` (no property or ``__getattr__`` runs); subscripts; ``a if c else b``
  when ``c`` is decided without user code (``is None``, ``==`` between plain values);
* the SDK's own constructors and methods on the SDK's own classes — ``Agent(...)`` /
  ``Agent[Ctx](...)``, ``agent.clone(...)`` (a ``dataclasses.replace``), ``agent.as_tool(...)``,
  ``handoff(...)``, the hosted tools (``WebSearchTool()`` …), ``ModelSettings(...)`` — never on a
  user subclass, which could override them;
* a call to a module-level *factory* function is not made: its source is inlined — a body of
  assignments and one ``return``, evaluated by these same rules with the call's arguments bound
  (defaults are the objects Python created at import).

Anything else is ``UNKNOWN`` and the caller reports the ``Runner`` call as unresolved. Arguments
that cannot change the graph (instructions, model, output type, hooks, …) may be unknown: they are
dropped and the SDK's default (or, for a clone, the original's value) stands; an unknown name, tool
list or handoff list makes the whole expression unknown rather than a wrong graph.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["UNKNOWN", "ClassScope", "Evaluator", "Frame", "local_assignments"]


class _Unknown:
    """The value of an expression this module will not compute (``None`` is a real value)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()

_MAX_DEPTH = 24
_AGENT_GRAPH = frozenset({"name", "tools", "handoffs", "mcp_servers"})  # what an Agent's node depends on
# Other SDK callables evaluated, each with the arguments its manifest node depends on. Hosted tools
# and settings are plain dataclasses; anything that opens connections or processes (MCP servers,
# model clients) is left out.
_SDK_CALLS = {
    "handoff": frozenset({"agent", "tool_name_override"}),
    "WebSearchTool": frozenset(),
    "FileSearchTool": frozenset(),
    "CodeInterpreterTool": frozenset(),
    "ImageGenerationTool": frozenset(),
    "HostedMCPTool": frozenset(),
    "ModelSettings": frozenset(),
}
_MUTATORS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "add", "discard",
     "sort", "reverse", "__setitem__", "__delitem__"}
)  # fmt: skip
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _is_sdk(module: str | None) -> bool:
    return module == "agents" or (module or "").startswith("agents.")


# -- what a function assigns ----------------------------------------------------------------------
def _own_nodes(func: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``func``'s body, not of functions, lambdas or classes nested in it."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def local_assignments(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr | None]]:
    """Every binding of each local name: ``name = expr`` gives ``expr``; a parameter, an unpacking,
    ``+=``, ``with … as``, an import or an in-place change (``name.append(x)``, ``name[k] = v``,
    ``name.tools = …``) gives ``None`` — a value that static reading cannot know."""
    found: dict[str, list[ast.expr | None]] = {}

    def unknowable(target: ast.AST) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                found.setdefault(n.id, []).append(None)

    a = func.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None and arg.arg != "self":
            found.setdefault(arg.arg, []).append(None)
    for node in _own_nodes(func):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    if value is not None:
                        found.setdefault(target.id, []).append(value)
                elif isinstance(target, ast.Subscript | ast.Attribute):
                    unknowable(target.value)  # changes the object the name holds
                else:
                    unknowable(target)
        elif isinstance(node, ast.AugAssign | ast.Delete):
            for target in [node.target] if isinstance(node, ast.AugAssign) else node.targets:
                unknowable(target if isinstance(target, ast.Name) else getattr(target, "value", target))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            unknowable(node.optional_vars)
        elif isinstance(node, ast.NamedExpr):
            unknowable(node.target)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                found.setdefault((alias.asname or alias.name).partition(".")[0], []).append(None)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            found.setdefault(node.func.value.id, []).append(None)
    return found


# -- frames ---------------------------------------------------------------------------------------
@dataclass
class ClassScope:
    """A coordinator class: ``self.<attr>`` is read from the instance (when given), the class, or
    the expression ``__init__`` assigns — the last only without calls (what ``__init__`` builds
    belongs to an instance, so the extraction asks for one)."""

    cls: type
    instance: object | None
    assigned: dict[str, ast.expr] = field(default_factory=dict)
    init_locals: dict[str, list[ast.expr | None]] = field(default_factory=dict)
    loops: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(frozen=True)
class Frame:
    """Where names are looked up: the function's locals, values bound by a factory call, the module."""

    namespace: Mapping[str, Any]
    locals: Mapping[str, list[ast.expr | None]] = field(default_factory=dict)
    bound: Mapping[str, Any] = field(default_factory=dict)
    scope: ClassScope | None = None
    key: tuple[int, ...] = ()  # the factory call sites this frame is inlined from (memo key)
    construct: bool = True  # may calls be evaluated here (not in __init__ read from the class)


# -- the evaluator --------------------------------------------------------------------------------
class Evaluator:
    """Evaluates expressions of one extraction; an expression that builds an object is built once
    per frame (two ``Runner`` calls on one local clone are one agent, as at run time)."""

    def __init__(self, sdk: Any) -> None:
        self.sdk = sdk
        self.reasons: list[str] = []  # why the last expressions were unknown, for the caller's note
        self._memo: dict[tuple[tuple[int, ...], int], tuple[Any, tuple[str, ...]]] = {}
        self._factories: dict[Any, Any] = {}
        self._keep: list[ast.AST] = []  # trees whose node ids key the memo stay alive
        self.built: list[Any] = []  # objects this evaluator made (SDK constructors, clone, as_tool)

    def keep(self, tree: ast.AST) -> None:
        self._keep.append(tree)

    # -- expressions ------------------------------------------------------------------------------
    def value(self, node: ast.expr, frame: Frame, depth: int = 0) -> Any:
        """The value of ``node`` in ``frame``, or ``UNKNOWN``."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        d = depth + 1
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, frame, d)
        if isinstance(node, ast.Attribute):
            if frame.scope is not None and isinstance(node.value, ast.Name) and node.value.id == "self":
                return self._self_attr(node.attr, frame, d)
            base = self.value(node.value, frame, d)
            return UNKNOWN if base is UNKNOWN else _static_attr(base, node.attr)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = self._items(node.elts, frame, d)
            if items is UNKNOWN:
                return UNKNOWN
            return tuple(items) if isinstance(node, ast.Tuple) else items  # a set of agents: unhashable
        if isinstance(node, ast.Dict):
            return self._dict(node, frame, d)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, frame, d)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, frame, d)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, frame, d), self.value(node.right, frame, d)
            if type(left) is type(right) and isinstance(left, str | list):
                return left + right
            return UNKNOWN
        if isinstance(node, ast.Call):
            return self._call(node, frame, d)
        if isinstance(node, ast.IfExp):  # `tools if extra is None else [*tools, extra]`
            test = self._test(node.test, frame, d)
            return UNKNOWN if test is UNKNOWN else self.value(node.body if test else node.orelse, frame, d)
        return UNKNOWN

    def _test(self, node: ast.expr, frame: Frame, depth: int) -> Any:
        """A condition, only where deciding it runs no user code: ``is`` / ``is not`` on anything,
        ``==`` / ``!=`` between plain values, ``not`` / ``and`` / ``or`` of those, a bool."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self._test(node.operand, frame, depth + 1)
            return UNKNOWN if inner is UNKNOWN else not inner
        if isinstance(node, ast.BoolOp):
            values = [self._test(v, frame, depth + 1) for v in node.values]
            if any(v is UNKNOWN for v in values):
                return UNKNOWN
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self.value(node.left, frame, depth)
            right = self.value(node.comparators[0], frame, depth)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            op = node.ops[0]
            if isinstance(op, ast.Is | ast.IsNot):
                return (left is right) is isinstance(op, ast.Is)
            plain = (str, int, float, bool, type(None))
            if isinstance(op, ast.Eq | ast.NotEq) and type(left) in plain and type(right) in plain:
                return (left == right) is isinstance(op, ast.Eq)
            return UNKNOWN
        found = self.value(node, frame, depth)
        return found if isinstance(found, bool) else UNKNOWN

    def agents(self, node: ast.expr, frame: Frame, depth: int = 0) -> list[Any]:
        """The agents ``node`` may be: one, every agent of the collection it is taken from, every
        value a local is assigned, or both branches of a conditional (an over-approximation, like
        any static call graph)."""
        if depth > _MAX_DEPTH:
            return []
        if isinstance(node, ast.IfExp):
            return self.agents(node.body, frame, depth + 1) + self.agents(node.orelse, frame, depth + 1)
        if isinstance(node, ast.Name) and node.id in frame.locals and node.id not in frame.bound:
            found: list[Any] = []
            for expr in frame.locals[node.id]:
                if expr is not None:
                    found += self.agents(expr, frame, depth + 1)
            return found
        if isinstance(node, ast.Name) and frame.scope is not None and node.id in frame.scope.loops:
            return self._members(frame.scope.loops[node.id], frame, depth + 1)
        if isinstance(node, ast.Subscript):
            return self._members(node.value, frame, depth + 1)
        found_one = self.value(node, frame, depth + 1)
        return [found_one] if isinstance(found_one, self.sdk.Agent) else []

    def _members(self, node: ast.expr, frame: Frame, depth: int) -> list[Any]:
        """The agents of a collection; of a literal one, those of its known elements."""
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            elements = node.values if isinstance(node, ast.Dict) else node.elts
            return [a for e in elements for a in self.agents(e, frame, depth + 1)]
        collection = self.value(node, frame, depth)
        if isinstance(collection, dict):
            collection = list(collection.values())
        if not isinstance(collection, list | tuple | set | frozenset):
            return []
        return [a for a in collection if isinstance(a, self.sdk.Agent)]

    def _name(self, name: str, frame: Frame, depth: int) -> Any:
        if name in frame.locals:
            exprs = frame.locals[name]
            if len(exprs) == 1 and exprs[0] is not None:
                return self.value(exprs[0], frame, depth)
            return UNKNOWN
        if name in frame.bound:
            return frame.bound[name]
        return frame.namespace.get(name, UNKNOWN)

    def _self_attr(self, attr: str, frame: Frame, depth: int) -> Any:
        scope = frame.scope
        assert scope is not None
        for holder in (scope.instance, scope.cls):
            if holder is not None:
                found = _static_attr(holder, attr)
                if found is not UNKNOWN and found is not None:
                    return found
        expr = scope.assigned.get(attr)
        if expr is None:
            return UNKNOWN
        init = Frame(frame.namespace, scope.init_locals, scope=scope, construct=False)
        return self.value(expr, init, depth)

    def _items(self, elts: list[ast.expr], frame: Frame, depth: int) -> Any:
        items: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                inner = self.value(e.value, frame, depth)
                if not isinstance(inner, list | tuple):
                    return UNKNOWN
                items.extend(inner)
                continue
            v = self.value(e, frame, depth)
            if v is UNKNOWN:
                return UNKNOWN
            items.append(v)
        return items

    def _dict(self, node: ast.Dict, frame: Frame, depth: int) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            key = UNKNOWN if k is None else self.value(k, frame, depth)
            val = self.value(v, frame, depth)
            if key is UNKNOWN or val is UNKNOWN:
                return UNKNOWN
            try:
                out[key] = val
            except TypeError:
                return UNKNOWN
        return out

    def _subscript(self, node: ast.Subscript, frame: Frame, depth: int) -> Any:
        base = self.value(node.value, frame, depth)
        if base is self.sdk.Agent:
            return base  # Agent[Context]: the type parameter changes nothing at run time
        if not isinstance(base, list | tuple | dict):
            return UNKNOWN
        key = self.value(node.slice, frame, depth)
        try:
            return base[key] if key is not UNKNOWN else UNKNOWN
        except (LookupError, TypeError):
            return UNKNOWN

    def _fstring(self, node: ast.JoinedStr, frame: Frame, depth: int) -> Any:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            assert isinstance(part, ast.FormattedValue)
            v = self.value(part.value, frame, depth)
            if part.format_spec is not None or not isinstance(v, str | int | float | bool):
                return UNKNOWN
            parts.append({115: str, 114: repr, 97: ascii}.get(part.conversion, str)(v))
        return "".join(parts)

    # -- calls ------------------------------------------------------------------------------------
    def _call(self, node: ast.Call, frame: Frame, depth: int) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "values" and not node.args and not node.keywords:
            base = self.value(func.value, frame, depth)  # specialists.values()
            if isinstance(base, dict):
                return list(base.values())
            return base if isinstance(base, list | tuple) else UNKNOWN
        if not frame.construct:
            return UNKNOWN
        key = (frame.key, id(node))
        if key in self._memo:
            result, reasons = self._memo[key]
            self.reasons.extend(reasons)
            return result
        before = len(self.reasons)
        result = self._build(node, frame, depth)
        if result is not UNKNOWN:
            self.built.append(result)
        self._memo[key] = (result, tuple(self.reasons[before:]))
        return result

    def _build(self, node: ast.Call, frame: Frame, depth: int) -> Any:
        sdk, func = self.sdk, node.func
        if isinstance(func, ast.Attribute) and func.attr in ("clone", "as_tool"):
            receiver = self.value(func.value, frame, depth)
            if not isinstance(receiver, sdk.Agent):
                return UNKNOWN
            if not _is_sdk(type(receiver).__module__):
                self.reasons.append(
                    f"{type(receiver).__name__} subclasses Agent outside the SDK; its {func.attr}() is not run"
                )
                return UNKNOWN
            graph = _AGENT_GRAPH if func.attr == "clone" else frozenset({"tool_name"})
            method = getattr(sdk.Agent, func.attr)
            return self._invoke(method, [receiver], node, frame, depth, graph, f"{ast.unparse(func)}()")
        callee = self.value(func, frame, depth)
        if callee is UNKNOWN:
            return UNKNOWN
        if inspect.isclass(callee) and issubclass(callee, sdk.Agent):
            if not _is_sdk(callee.__module__):
                self.reasons.append(f"{callee.__name__} subclasses Agent outside the SDK; it is not constructed")
                return UNKNOWN
            return self._invoke(callee, [], node, frame, depth, _AGENT_GRAPH, f"{callee.__name__}(...)")
        for name, graph in _SDK_CALLS.items():
            if callee is getattr(sdk, name, None):
                return self._invoke(callee, [], node, frame, depth, graph, f"{name}(...)")
        if _is_factory(callee):
            return self._inline(callee, node, frame, depth)
        return UNKNOWN

    def _arguments(self, node: ast.Call, frame: Frame, depth: int) -> tuple[list[Any], dict[str, Any]] | None:
        """Positional and keyword argument values (``UNKNOWN`` allowed); ``None`` for ``*x`` / ``**x``
        that do not resolve to a sequence / mapping."""
        positional: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                inner = self.value(a.value, frame, depth)
                if not isinstance(inner, list | tuple):
                    return None
                positional.extend(inner)
            else:
                positional.append(self.value(a, frame, depth))
        keywords: dict[str, Any] = {}
        for k in node.keywords:
            v = self.value(k.value, frame, depth)
            if k.arg is not None:
                keywords[k.arg] = v
            elif isinstance(v, Mapping) and all(isinstance(name, str) for name in v):
                keywords.update(v)
            else:
                return None
        return positional, keywords

    def _invoke(
        self,
        fn: Any,
        leading: list[Any],
        node: ast.Call,
        frame: Frame,
        depth: int,
        graph: frozenset[str],
        label: str,
    ) -> Any:
        """Call an SDK callable with the evaluated arguments; unknown arguments outside ``graph``
        are dropped (defaults stand), one inside it makes the result unknown."""
        args = self._arguments(node, frame, depth)
        if args is None:
            return UNKNOWN
        positional, keywords = args
        signature = inspect.signature(fn)
        try:
            bound = signature.bind_partial(*leading, *positional, **keywords)
        except TypeError as exc:
            self.reasons.append(f"{label}: {exc}")
            return UNKNOWN
        for name, v in list(bound.arguments.items()):
            parameter = signature.parameters[name]
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                for k in [k for k, kv in v.items() if kv is UNKNOWN]:
                    if k in graph:
                        return UNKNOWN
                    del v[k]
            elif v is UNKNOWN:
                if name in graph:
                    return UNKNOWN
                if parameter.default is inspect.Parameter.empty:
                    bound.arguments[name] = None
                else:
                    del bound.arguments[name]
        try:
            return fn(*bound.args, **bound.kwargs)
        except Exception as exc:  # the SDK's own validation refused the evaluated arguments
            self.reasons.append(f"{label} raised {type(exc).__name__}: {exc}")
            return UNKNOWN

    def _inline(self, fn: types.FunctionType, node: ast.Call, frame: Frame, depth: int) -> Any:
        """A factory's ``return`` expression, evaluated with the call's arguments bound."""
        body = self._factory_body(fn)
        if isinstance(body, str):
            self.reasons.append(body)
            return UNKNOWN
        assigned, returned = body
        args = self._arguments(node, frame, depth)
        if args is None:
            return UNKNOWN
        try:
            bound = inspect.signature(fn).bind(*args[0], **args[1])
        except TypeError as exc:
            self.reasons.append(f"factory {fn.__name__}(): {exc}")
            return UNKNOWN
        bound.apply_defaults()  # defaults are objects Python created when it ran the def
        inner = Frame(fn.__globals__, assigned, dict(bound.arguments), key=(*frame.key, id(node)))
        return self.value(returned, inner, depth)

    def _factory_body(self, fn: types.FunctionType) -> tuple[dict[str, list[ast.expr | None]], ast.expr] | str:
        """``(locals, return expression)`` of a plain factory, or why it is not one."""
        if fn in self._factories:
            return self._factories[fn]
        why = f"factory {fn.__name__}(): only a body of assignments and one return is evaluated"
        result: Any = why
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            tree = None
            result = f"factory {fn.__name__}(): its source could not be read"
        defn = tree.body[0] if tree is not None and tree.body else None
        if isinstance(defn, ast.FunctionDef) and defn.name == fn.__name__:
            self.keep(tree)  # type: ignore[arg-type]
            stmts = list(defn.body)
            if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
                stmts = stmts[1:]  # the docstring
            last = stmts[-1] if stmts else None
            plain = all(
                (isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets))
                or (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None)
                for s in stmts[:-1]
            )
            if plain and isinstance(last, ast.Return) and last.value is not None:
                assigned = local_assignments(defn)
                for name in inspect.signature(fn).parameters:
                    if assigned.get(name) == [None]:
                        del assigned[name]  # a parameter only: its value is bound by the call
                result = (assigned, last.value)
        self._factories[fn] = result
        return result


def _is_factory(obj: Any) -> bool:
    """A plain module-level function of user code (not a lambda, method, coroutine or generator)."""
    return (
        isinstance(obj, types.FunctionType)
        and obj.__name__ != "<lambda>"
        and obj.__qualname__ == obj.__name__
        and not _is_sdk(obj.__module__)
        and not (
            inspect.iscoroutinefunction(obj) or inspect.isgeneratorfunction(obj) or inspect.isasyncgenfunction(obj)
        )
    )


def _static_attr(base: Any, attr: str) -> Any:
    """``base.attr`` without running code: properties and other data descriptors are unknown."""
    try:
        found = inspect.getattr_static(base, attr)
    except AttributeError:
        return UNKNOWN
    if isinstance(found, staticmethod):
        return found.__func__
    if isinstance(found, types.MemberDescriptorType) and not inspect.isclass(base):
        try:
            return found.__get__(base, type(base))  # a __slots__ field: a plain read
        except AttributeError:
            return UNKNOWN
    kind = type(found)
    if isinstance(found, property | classmethod) or hasattr(kind, "__set__") or hasattr(kind, "__delete__"):
        return UNKNOWN
    return found
