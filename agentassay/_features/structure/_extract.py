"""Extract the workflow manifest S from OpenAI Agents SDK objects (paper Sec. II-A, IV-B-d).

The paper extracts its manifests "mechanically, by importing the example module and introspecting
its Agent, function_tool and handoff objects"; this module does the same, so a user gets the
coordination graph of their own workflow without writing YAML:

* an ``Agent`` is walked breadth first through ``handoffs`` (delegation ``via="handoff"``) and
  ``tools``: a function or hosted tool is a tool node with an allow edge; a tool made by
  ``Agent.as_tool`` is a delegation ``via="as_tool"`` to the wrapped agent, which is walked too;
* a Python coordinator (a class, or an instance, whose methods call ``Runner.run`` and friends on
  agents) becomes a ``coordinator`` node with a ``via="call"`` delegation to each agent it runs,
  the normalization the paper applies to benchmarks that orchestrate in plain Python. The agent
  argument may be built in the method — ``writer.clone(tools=[analyst.as_tool(...)])``,
  ``Agent(...)``, a module-level factory's result: ``_evaluate`` computes such expressions from the
  source over the imported objects, running only the SDK's own constructors, never user code;
* a module-level factory function whose body is assignments and one ``return`` is an entry point
  too, evaluated the same way (not called).

Ids are slugs of runtime names, suffixed ``_2``, ``_3`` when distinct objects share a name, so two
agents both called "Fact Checker" stay two nodes. Restrictions are derived closed-world by default,
as in the paper's extracted Listing 1.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
import types
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..._errors import AgentAssayError
from ..._integrations.adapters._otel import detect, load_profile
from ..._integrations.adapters._resolve import import_entry
from ._evaluate import ClassScope, Evaluator, Frame, _is_factory, local_assignments
from ._manifest import DOCS, _article, _derive, check_manifest
from ._model import AgentNode, Delegation, Edge, Manifest, ToolNode

__all__ = ["ExtractError", "extract_manifest", "slug"]

_RUN_METHODS = frozenset({"run", "run_sync", "run_streamed"})
_HOSTED = ("WebSearchTool", "FileSearchTool", "CodeInterpreterTool", "ImageGenerationTool", "ToolSearchTool")
_MCP = ("HostedMCPTool",)
_ACCEPTS = (
    "an OpenAI Agents SDK Agent, or a class (or an instance of one) whose methods call "
    "Runner.run / Runner.run_sync / Runner.run_streamed on agents, or a module-level factory "
    "function whose body is assignments and one `return` of an agent"
)


class ExtractError(AgentAssayError, ValueError):
    """The target cannot be turned into a manifest; the message says what to point at instead."""


def slug(name: str) -> str:
    """``"Seat Booking Agent"`` → ``seat_booking_agent``: lowercase, non-alphanumeric runs → ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "node"


class SlugClaims:
    """Distinct ids from names: each name's slug, with ``_2``, ``_3``, … after the first taken (ids of a manifest)."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.taken = set(reserved)

    def claim(self, name: str) -> str:
        base = slug(name)
        candidate, n = base, 1
        while candidate in self.taken:
            n += 1
            candidate = f"{base}_{n}"
        self.taken.add(candidate)
        return candidate


def _class_slug(name: str) -> str:
    """``ResearchManager`` → ``research_manager`` (a class name's words are its capitals)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return slug(spaced)


def _sdk() -> Any:
    try:
        import agents
    except ImportError as exc:  # pragma: no cover - the extra is installed wherever this is used
        raise ExtractError(
            "extracting a manifest needs the OpenAI Agents SDK: pip install 'agentassay[agents]'"
        ) from exc
    return agents


def _first_line(text: object) -> str:
    if not isinstance(text, str):
        return ""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


# -- the agent graph ------------------------------------------------------------------------------
class _Walker:
    """Breadth-first walk over agents; nodes are keyed by object identity, named at the end."""

    def __init__(self, sdk: Any, reserved: Iterable[str] = ()) -> None:
        self.sdk = sdk
        self.reserved = set(reserved)
        self.agents: list[Any] = []
        self.tools: list[Any] = []
        self._agent_index: dict[int, int] = {}
        self._tool_index: dict[int, int] = {}
        self.allow: list[tuple[int, int]] = []
        # (source agent index, target agent index, via, tool name)
        self.delegations: list[tuple[int, int, str, str | None]] = []
        self.notes: list[str] = []

    def add_agent(self, agent: Any) -> int:
        index = self._agent_index.get(id(agent))
        if index is None:
            index = self._agent_index[id(agent)] = len(self.agents)
            self.agents.append(agent)
        return index

    def _add_tool(self, tool: Any) -> int:
        index = self._tool_index.get(id(tool))
        if index is None:
            index = self._tool_index[id(tool)] = len(self.tools)
            self.tools.append(tool)
        return index

    def _delegate(self, source: int, target: int, via: str, tool: str | None) -> None:
        edge = (source, target, via, tool)
        if edge not in self.delegations:
            self.delegations.append(edge)

    def walk(self) -> None:
        Agent, Handoff = self.sdk.Agent, self.sdk.Handoff
        pending: list[tuple[int, str, str]] = []  # handoffs whose target agent is unknown
        i = 0
        while i < len(self.agents):
            agent = self.agents[i]
            for h in agent.handoffs:
                if isinstance(h, Handoff):
                    ref = getattr(h, "_agent_ref", None)
                    target = ref() if callable(ref) else None
                    tool_name = h.tool_name
                else:
                    target, tool_name = h, Handoff.default_tool_name(h)
                if isinstance(target, Agent):
                    self._delegate(i, self.add_agent(target), "handoff", tool_name)
                else:
                    pending.append((i, str(getattr(h, "agent_name", "")), tool_name))
            for tool in agent.tools:
                wrapped = getattr(tool, "_agent_instance", None)
                if isinstance(wrapped, Agent):
                    self._delegate(i, self.add_agent(wrapped), "as_tool", str(tool.name))
                else:
                    edge = (i, self._add_tool(tool))
                    if edge not in self.allow:
                        self.allow.append(edge)
            if agent.mcp_servers:
                self.notes.append(
                    f"agent '{agent.name}' uses {len(agent.mcp_servers)} MCP server(s); their tools are "
                    "listed at run time and are not in this manifest"
                )
            i += 1
        for source, name, tool_name in pending:
            matches = [j for j, a in enumerate(self.agents) if a.name == name]
            who = f"handoff '{tool_name}' of agent '{self.agents[source].name}'"
            if len(matches) == 1:
                self._delegate(source, matches[0], "handoff", tool_name)
                self.notes.append(f"{who}: target agent not recoverable; matched '{name}' by name")
            else:
                why = "no reachable agent has" if not matches else f"{len(matches)} agents have"
                self.notes.append(
                    f"{who}: target agent not recoverable and {why} the name '{name}'; edge left out"
                )

    # -- naming -----------------------------------------------------------------------------------
    def ids(self) -> tuple[list[str], list[str]]:
        """Agent ids (BFS order), then tool ids, all distinct from each other and ``reserved``."""
        claim = SlugClaims(self.reserved).claim

        agent_ids = [claim(str(a.name)) for a in self.agents]
        tool_ids = [claim(_tool_name(t)) for t in self.tools]
        return agent_ids, tool_ids

    def tool_node(self, tool: Any, tool_id: str) -> ToolNode:
        if isinstance(tool, self.sdk.FunctionTool):
            schema = _plain(tool.params_json_schema)
            return ToolNode(tool_id, tool.name, "function", tool.description or "", schema)
        kind = _tool_kind(tool)
        description = _first_line(getattr(tool, "description", "")) if kind == "other" else ""
        return ToolNode(tool_id, _tool_name(tool), kind, description)


def _tool_name(tool: Any) -> str:
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) and name else type(tool).__name__


def _tool_kind(tool: Any) -> str:
    names = {c.__name__ for c in type(tool).__mro__}
    if names & set(_MCP):
        return "mcp"
    if names & set(_HOSTED):
        return "hosted"
    return "other"  # local non-function tools: shell, computer, apply_patch, custom ...


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _agent_description(agent: Any) -> str:
    return _first_line(agent.handoff_description) or _first_line(agent.instructions)


# -- Python coordinators --------------------------------------------------------------------------
def _resolve_path(node: ast.expr, namespace: dict[str, Any]) -> Any:
    """The value of ``name`` or ``name.attr.attr`` in ``namespace``; ``None`` when unresolvable."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve_path(node.value, namespace)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _is_runner_call(node: ast.AST, namespace: dict[str, Any], runner: type) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr not in _RUN_METHODS:
        return False
    callee = node.func.value
    value = _resolve_path(callee, namespace)
    if inspect.isclass(value):
        return issubclass(value, runner)
    # Unresolvable here (imported inside the method, say): trust the conventional spelling.
    last = callee.id if isinstance(callee, ast.Name) else getattr(callee, "attr", None)
    return value is None and last == "Runner"


def _self_attr(node: ast.expr | None) -> str | None:
    """``attr`` for the expression ``self.attr``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _scope(cls: type, instance: object | None, cls_node: ast.ClassDef) -> ClassScope:
    """``self.<attr> = <expr>`` in ``__init__`` (with its locals) and ``for <name> in <expr>`` loops."""
    scope = ClassScope(cls, instance)
    for item in cls_node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == "__init__":
            scope.init_locals = local_assignments(item)
            for node in ast.walk(item):
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets, value = [node.target], node.value
                else:
                    continue
                for t in targets:
                    attr = _self_attr(t)
                    if attr is not None:
                        scope.assigned[attr] = value
    for node in ast.walk(cls_node):
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and isinstance(node.target, ast.Name):
            scope.loops[node.target.id] = node.iter
    return scope


def _enclosing_locals(call: ast.AST, parents: dict[ast.AST, ast.AST]) -> dict[str, list[ast.expr | None]]:
    """Locals of the functions around ``call``, the innermost winning (closures see outer names)."""
    chain: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    node = parents.get(call)
    while node is not None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            chain.append(node)
        node = parents.get(node)
    merged: dict[str, list[ast.expr | None]] = {}
    for func in reversed(chain):
        merged.update(local_assignments(func))
    return merged


def _orchestrated(cls: type, instance: object | None, sdk: Any) -> tuple[list[Any], list[str]]:
    """Agents passed to ``Runner.run*`` in the class's methods (source order), and notes.

    The agent argument is evaluated by ``_evaluate.Evaluator``: module-level agents, attributes,
    locals, collections, and agents built in the method by ``clone`` / ``as_tool`` / ``Agent(...)``
    or a module-level factory — computed from the source over imported objects, never by running it.
    """
    found: list[Any] = []
    notes: list[str] = []
    read_any = False
    evaluator = Evaluator(sdk)
    for klass in cls.__mro__:
        if klass is object or klass.__module__ == "builtins":
            continue
        try:
            lines, start = inspect.getsourcelines(klass)
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError):
            continue
        class_node = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
        if class_node is None:
            continue
        read_any = True
        evaluator.keep(tree)
        module = sys.modules.get(klass.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        scope = _scope(cls, instance, class_node)
        parents = {child: parent for parent in ast.walk(class_node) for child in ast.iter_child_nodes(parent)}
        calls = [n for n in ast.walk(class_node) if _is_runner_call(n, namespace, sdk.Runner)]
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            keyword = next((k.value for k in call.keywords if k.arg == "starting_agent"), None)
            arg = call.args[0] if call.args else keyword
            if arg is None:
                continue
            frame = Frame(namespace, _enclosing_locals(call, parents), scope=scope)
            evaluator.reasons.clear()
            agents = evaluator.agents(arg, frame)
            method = call.func.attr  # type: ignore[attr-defined]
            where = (
                f"{klass.__name__}: Runner.{method}({ast.unparse(arg)}, ...) at line {start + call.lineno - 1}"
            )
            for agent in agents:
                if all(agent is not f for f in found):
                    found.append(agent)
                    if any(agent is b for b in evaluator.built):
                        notes.append(
                            f"{where}: agent '{agent.name}' is built at run time; evaluated from the source "
                            "(SDK constructors only, no user code run)"
                        )
            if agents:
                continue
            why = f" ({'; '.join(dict.fromkeys(evaluator.reasons))})" if evaluator.reasons else ""
            if instance is None and _self_attr(arg) is not None:
                notes.append(f"{where}: cannot tell which agent; extract from an instance of {cls.__name__}{why}")
            else:
                notes.append(f"{where}: the agent could not be resolved statically; not in this manifest{why}")
    if not read_any:
        notes.append(f"the source of {cls.__name__} could not be read")
    return found, notes


def _factory_agent(fn: Any, sdk: Any) -> tuple[Any, str]:
    """The agent a module-level factory entry point returns, evaluated from its source (no call)."""
    if not _is_factory(fn):
        return None, ""
    evaluator = Evaluator(sdk)
    call = ast.Call(func=ast.Name(fn.__name__, ast.Load()), args=[], keywords=[])
    agent = evaluator.value(call, Frame({fn.__name__: fn}))
    return (agent if isinstance(agent, sdk.Agent) else None), "; ".join(dict.fromkeys(evaluator.reasons))


# -- other frameworks' agent graphs ---------------------------------------------------------------
def _graph_manifest(graph: dict[str, Any], *, system: str | None, entry: str | None) -> Manifest:
    """A framework's agent graph as a manifest: its agents, one tool node per tool name, handoff edges."""
    claim = SlugClaims().claim

    agent_ids = {str(a["name"]): claim(str(a["name"])) for a in graph["agents"]}
    tools: dict[str, ToolNode] = {}
    allow: list[Edge] = []
    for agent in graph["agents"]:
        for info in agent["tools"]:
            if info.name not in tools:
                tools[info.name] = ToolNode(
                    claim(info.name), info.name, "function", _first_line(info.description), info.parameters
                )
            edge = (agent_ids[str(agent["name"])], tools[info.name].id)
            if edge not in allow:
                allow.append(edge)
    delegations = [
        Delegation(agent_ids[source], agent_ids[target], "handoff", "delegate", tool)
        for source, target, tool in graph["handoffs"]
    ]
    entry_id = agent_ids[str(graph["entry"])]
    return Manifest(
        system=system or _default_system(entry, entry_id),
        entry_agent=entry_id,
        agents=tuple(
            AgentNode(agent_ids[str(a["name"])], str(a["name"]), "agent", _first_line(a.get("description")))
            for a in graph["agents"]
        ),
        tools=tuple(tools.values()),
        allow=tuple(allow),
        delegations=tuple(delegations),
        source=entry,
    )


# -- the entry point ------------------------------------------------------------------------------
def _default_system(entry: str | None, fallback: str) -> str:
    """The last package component of the entry module (``examples.customer_service.v1``: customer_service)."""
    if not entry:
        return fallback
    module_name = entry.partition(":")[0]
    module = sys.modules.get(module_name)
    package = module_name if hasattr(module, "__path__") else (module_name.rpartition(".")[0] or module_name)
    return slug(package.rpartition(".")[2])


def _is_coordinator_candidate(obj: Any, agent_cls: type) -> bool:
    if isinstance(obj, types.ModuleType | types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        return False
    cls = obj if inspect.isclass(obj) else type(obj)
    module = cls.__module__ or ""
    if module == "builtins" or module == "agents" or module.startswith("agents."):
        return False
    return not issubclass(cls, agent_cls)


def _framework_manifest(
    obj: Any, framework: str, entry: str | None, system: str | None, derive: bool
) -> Manifest:
    """Another framework's agent: its profile reads the graph (``manifest(obj)``); named and checked here."""
    read = getattr(load_profile(framework), "manifest", None)
    if read is None:
        raise ExtractError(
            f"{f'{entry!r}' if entry else 'the target'} is a {framework} agent, whose manifest cannot be extracted "
            f"yet; write the manifest by hand (see {DOCS})"
        )
    found = read(obj)
    if isinstance(found, dict):  # plain data (agents, their tools, handoffs): built into a manifest here
        found = _graph_manifest(found, system=system, entry=entry)
    manifest = replace(found, system=system or _default_system(entry, found.system), source=entry)
    check_manifest(manifest, source=entry or "<extracted>")
    return _derive(manifest) if derive else manifest


def extract_manifest(target: Any, *, system: str | None = None, derive_restrictions: bool = True) -> Manifest:
    """The manifest of an agent workflow, from an entry point ``package.module:attr`` or the object.

    Accepts an SDK ``Agent`` (its handoff and ``as_tool`` graph), a Python coordinator class or
    instance (see the module docstring), or another framework's agent whose profile reads its graph
    (a compiled LangGraph graph). An entry point that fails to import raises
    ``AgentLoadError``; anything else that cannot be extracted raises ``ExtractError``.
    ``derive_restrictions`` adds the closed-world restrictions of the paper's Listing 1.
    """
    entry = target if isinstance(target, str) else None
    obj = import_entry(target) if entry is not None else target
    framework = detect(obj)
    if framework is not None:
        return _framework_manifest(obj, framework, entry, system, derive_restrictions)
    sdk = _sdk()
    label = f"'{entry}'" if entry else "the target"

    coordinator: AgentNode | None = None
    notes: list[str] = []
    built, why = _factory_agent(obj, sdk)
    if built is not None:
        notes.append(
            f"the agent is what {obj.__name__}() returns, evaluated from its source without calling it"
        )
        obj = built
    if isinstance(obj, sdk.Agent):
        walker = _Walker(sdk)
        walker.add_agent(obj)
        fallback = slug(str(obj.name))
    elif _is_coordinator_candidate(obj, sdk.Agent):
        cls = obj if inspect.isclass(obj) else type(obj)
        roots, notes = _orchestrated(cls, None if inspect.isclass(obj) else obj, sdk)
        if not roots:
            detail = f" ({'; '.join(notes)})" if notes else ""
            raise ExtractError(
                f"{label} is a {'class' if inspect.isclass(obj) else cls.__name__ + ' object'} but no agent "
                f"run by its methods could be resolved: no Runner.run / run_sync / run_streamed call on an "
                f"agent attribute or module-level agent was found{detail}. Write the manifest by hand "
                f"(see {DOCS})"
            )
        cid = _class_slug(cls.__name__)
        coordinator = AgentNode(cid, cls.__name__, "coordinator", _first_line(cls.__doc__))
        notes.insert(
            0,
            f"{cls.__name__} is a Python coordinator: each agent it runs with Runner is a 'call' "
            "delegation from it (paper Sec. IV-B-d)",
        )
        walker = _Walker(sdk, reserved=[cid])
        for agent in roots:
            walker.add_agent(agent)
        fallback = cid
    else:
        name = type(obj).__name__
        kind = f"the class {obj.__name__}" if inspect.isclass(obj) else f"{_article(name)} {name}"
        detail = f" ({why})" if why else ""
        raise ExtractError(
            f"{label} is {kind}{detail}; extract_manifest accepts {_ACCEPTS}. For any other workflow, write "
            f"the manifest by hand (see {DOCS})"
        )

    roots_count = len(walker.agents)
    walker.walk()
    agent_ids, tool_ids = walker.ids()
    agents = [
        AgentNode(agent_ids[i], str(a.name), "agent", _agent_description(a))
        for i, a in enumerate(walker.agents)
    ]
    delegations = [
        Delegation(agent_ids[s], agent_ids[t], via, "delegate", tool)  # type: ignore[arg-type]
        for s, t, via, tool in walker.delegations
    ]
    if coordinator is not None:
        agents.insert(0, coordinator)
        calls = [Delegation(coordinator.id, agent_ids[i], "call", "delegate") for i in range(roots_count)]
        delegations = calls + delegations
    allow: list[Edge] = [(agent_ids[a], tool_ids[t]) for a, t in walker.allow]
    manifest = Manifest(
        system=system or _default_system(entry, fallback),
        entry_agent=coordinator.id if coordinator is not None else agent_ids[0],
        agents=tuple(agents),
        tools=tuple(walker.tool_node(t, tool_ids[i]) for i, t in enumerate(walker.tools)),
        allow=tuple(allow),
        delegations=tuple(delegations),
        notes=tuple(notes + walker.notes),
        source=entry,
    )
    check_manifest(manifest, source=entry or "<extracted>")
    return _derive(manifest) if derive_restrictions else manifest
