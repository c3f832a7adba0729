"""The ``structure`` operator class: structural mutants of the workflow graph (coverage paper, Sec. VI).

A *structural mutant* (``StructuralMutant``, a graph edit) changes one element of the coordination graph:

* ``delete_allowed_edge(a, t)``: agent ``a`` loses its allowed tool ``t`` (each edge of T_allow);
* ``remove_restriction(a, t)``: the restricted tool ``t`` becomes available to ``a`` (each edge of
  T_restrict);
* ``retarget_delegation(a, b, c)``: the delegation ``a → b`` now goes to ``c``, the first
  reachable agent (in manifest order) other than ``a`` and ``b``; no mutant when there is none;
* ``disconnect_agent(b)``: every delegation into ``b`` is removed (each reachable non-entry agent).

An edit is applied to the manifest (``apply_to_manifest``) or to the real OpenAI Agents SDK agent
graph (``apply_to_agents``, which clones every reachable agent with ``clone_graph`` and never touches
the originals). ``structure_mutants`` is the registry's operator: each edit becomes a ``Mutant``
(id ``structure.<edit id>``, ``edit`` set) that ``agentassay mutate`` checks with the gate;
``_analysis.mutation_analysis`` runs the very same edits against a structural test suite.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ..._integrations.adapters._openai_agents import _agent_tool_target, _handoff_target, _reachable
from ..structure import ManifestError, extract_manifest
from ..structure._graph import obligations
from ._mutant import Mutant, Mutated, Target

if TYPE_CHECKING:
    from ..structure._model import Manifest

__all__ = [
    "STRUCTURAL_OPERATORS",
    "StructuralMutant",
    "apply_to_agents",
    "apply_to_manifest",
    "clone_graph",
    "structural_mutants",
    "structure_mutants",
]

MutationOperator = Literal[
    "delete_allowed_edge", "remove_restriction", "retarget_delegation", "disconnect_agent"
]
STRUCTURAL_OPERATORS: tuple[MutationOperator, ...] = (
    "delete_allowed_edge",
    "remove_restriction",
    "retarget_delegation",
    "disconnect_agent",
)


@dataclass(frozen=True)
class StructuralMutant:
    """One structural mutation: ``operator`` applied to ``target`` (manifest ids).

    ``target`` is ``(agent, tool)`` for edge operators, ``(source, old_target, new_target)`` for
    ``retarget_delegation`` and ``(agent,)`` for ``disconnect_agent``.
    """

    operator: MutationOperator
    target: tuple[str, ...]
    description: str

    @property
    def id(self) -> str:
        return f"{self.operator}({', '.join(self.target)})"

    def __str__(self) -> str:
        return self.id


def structural_mutants(m: Manifest) -> tuple[StructuralMutant, ...]:
    """Every mutant of ``m``, grouped by operator (in ``STRUCTURAL_OPERATORS`` order), each in manifest order."""

    o = obligations(m)
    out: list[StructuralMutant] = []
    for a, t in o.allowed:
        out.append(StructuralMutant("delete_allowed_edge", (a, t), f"{a} can no longer use {t}"))
    for a, t in o.restricted:
        out.append(StructuralMutant("remove_restriction", (a, t), f"{a} is given the restricted tool {t}"))
    for a, b in o.delegations:
        c = next((x for x in o.agents if x not in (a, b)), None)
        if c is not None:
            out.append(
                StructuralMutant("retarget_delegation", (a, b, c), f"{a} delegates to {c} instead of {b}")
            )
    for b in o.agents:
        if b != m.entry_agent:
            out.append(StructuralMutant("disconnect_agent", (b,), f"no agent can delegate to {b} any more"))
    return tuple(out)


def apply_to_manifest(m: Manifest, mutant: StructuralMutant) -> Manifest:
    """The mutated manifest (a note records the mutation). Raises ValueError if it does not apply."""
    op, target = mutant.operator, mutant.target
    note = (*m.notes, f"structural mutant {mutant.id}: {mutant.description}")
    if op == "delete_allowed_edge":
        edge = (target[0], target[1])
        if edge not in m.allow:
            raise ValueError(f"{mutant.id}: {edge} is not an allowed edge of {m.system}")
        return replace(m, allow=tuple(e for e in m.allow if e != edge), notes=note)
    if op == "remove_restriction":
        edge = (target[0], target[1])
        if edge not in m.restrict:
            raise ValueError(f"{mutant.id}: {edge} is not a restricted edge of {m.system}")
        return replace(
            m,
            allow=(*m.allow, edge),
            restrict=tuple(e for e in m.restrict if e != edge),
            notes=note,
        )
    if op == "retarget_delegation":
        a, b, c = target
        if not any(d.edge == (a, b) for d in m.delegations):
            raise ValueError(f"{mutant.id}: {a} → {b} is not a delegation of {m.system}")
        moved = (replace(d, target=c) if d.edge == (a, b) else d for d in m.delegations)
        return replace(m, delegations=tuple(dict.fromkeys(moved)), notes=note)
    if op == "disconnect_agent":
        (b,) = target
        return replace(m, delegations=tuple(d for d in m.delegations if d.target != b), notes=note)
    raise ValueError(f"unknown mutation operator {op!r}")


# -- the SDK agent graph --------------------------------------------------------------------------
def _sdk() -> types.SimpleNamespace:
    """The SDK pieces, imported lazily so the manifest side works without ``openai-agents``."""
    from agents import Agent, Handoff
    from agents.util._transforms import transform_string_function_style


    return types.SimpleNamespace(
        Agent=Agent,
        Handoff=Handoff,
        snake=transform_string_function_style,
        agent_tool_target=_agent_tool_target,
        handoff_target=_handoff_target,
        reachable=_reachable,
    )


def _agent_map(entry: Any, m: Manifest) -> dict[str, Any]:
    """Manifest agent id → SDK agent, matched by runtime name.

    Assumption (the extractor's id scheme): when several SDK agents share a name, they are met in
    breadth-first order over handoffs then ``as_tool`` tools (the adapter's ``_reachable``), and
    the first met got the plain slug id, later ones ``_2``, ``_3``, …; so within one name the
    manifest ids sorted by (length, id) (``x``, ``x_2``, …, ``x_10``) line up with that order.
    Manifest agents without an SDK agent of their name (e.g. a Python coordinator) are left out.
    """
    sdk = _sdk()
    by_name: dict[str, list[Any]] = {}
    for agent in sdk.reachable(entry):
        by_name.setdefault(agent.name, []).append(agent)
    ids_by_name: dict[str, list[str]] = {}
    for a in m.agents:
        ids_by_name.setdefault(a.name, []).append(a.id)
    out: dict[str, Any] = {}
    for name, ids in ids_by_name.items():
        for agent_id, agent in zip(
            sorted(ids, key=lambda i: (len(i), i)), by_name.get(name, ()), strict=False
        ):
            out[agent_id] = agent
    return out


def _rebind(fn: Any, old: Any, new: Any, depth: int = 0) -> Any | None:
    """A copy of ``fn`` whose closure (through ``functools.partial`` and nested closures, a few
    levels deep) holds ``new`` wherever it held ``old``; None when ``old`` is not found."""
    if depth > 4:
        return None
    if isinstance(fn, functools.partial):
        changed = False
        func = _rebind(fn.func, old, new, depth + 1)
        changed |= func is not None
        args = []
        for a in fn.args:
            r = new if a is old else (_rebind(a, old, new, depth + 1) if callable(a) else None)
            changed |= r is not None
            args.append(a if r is None else r)
        kwargs = {}
        for k, v in fn.keywords.items():
            r = new if v is old else (_rebind(v, old, new, depth + 1) if callable(v) else None)
            changed |= r is not None
            kwargs[k] = v if r is None else r
        return functools.partial(func or fn.func, *args, **kwargs) if changed else None
    if not isinstance(fn, types.FunctionType) or not fn.__closure__:
        return None
    cells, changed = [], False
    for cell in fn.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            cells.append(cell)
            continue
        if value is old:
            cells.append(types.CellType(new))
            changed = True
        elif value is not fn and callable(value) and (r := _rebind(value, old, new, depth + 1)) is not None:
            cells.append(types.CellType(r))
            changed = True
        else:
            cells.append(cell)
    if not changed:
        return None
    g = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, tuple(cells))
    g.__kwdefaults__ = fn.__kwdefaults__
    g.__qualname__ = fn.__qualname__
    g.__doc__ = fn.__doc__
    g.__dict__.update(fn.__dict__)
    return g


def _handoff_to(h: Any, old: Any, new: Any, sdk: types.SimpleNamespace) -> Any:
    """``h`` (an Agent or a ``Handoff`` to ``old``) made to hand off to ``new`` instead.

    A ``Handoff`` keeps its callbacks, filters and input type (its invoke closure is rebound); when
    it used the default tool name/description derived from the target, they are derived from the
    new target (a retarget then looks to the model like ``handoff(new)`` in the source).
    """
    if isinstance(h, sdk.Agent):
        return new
    moved = copy.copy(h)
    invoke = _rebind(h.on_invoke_handoff, old, new)
    if invoke is None:  # unknown SDK internals: lose on_handoff/input_type, keep the destination right

        async def invoke(ctx: Any, input_json: str | None = None, _agent: Any = new) -> Any:
            return _agent

    moved.on_invoke_handoff = invoke
    moved._agent_ref = weakref.ref(new)  # the closure holds ``new`` strongly
    if new.name != old.name:
        moved.agent_name = new.name
        if getattr(h, "_default_tool_identity", None) is not None:
            moved.tool_name = sdk.Handoff.default_tool_name(new)
            moved._default_tool_identity = (new.name, moved.tool_name)
        if h.tool_description == sdk.Handoff.default_tool_description(old):
            moved.tool_description = sdk.Handoff.default_tool_description(new)
    return moved


def _agent_tool_to(tool: Any, old: Any, new: Any, sdk: types.SimpleNamespace) -> Any:
    """An ``Agent.as_tool`` tool for ``old`` made to run ``new`` (options kept via closure rebinding)."""
    invoker = tool.on_invoke_tool
    impl = getattr(invoker, "_invoke_tool_impl", None)
    rebound = _rebind(impl, old, new) if impl is not None else None
    bind = None
    if rebound is not None:
        try:
            fresh = type(invoker)(rebound, invoker._on_handled_error)
            bind = getattr(fresh, "__agents_bind_function_tool__", None)
        except Exception:
            rebound = None
    if rebound is None or bind is None:  # unknown SDK internals: rebuild (drops extractor, max_turns, …)
        moved = new.as_tool(tool.name, tool.description, is_enabled=tool.is_enabled)
    else:
        moved = copy.copy(tool)
        moved.on_invoke_tool = fresh.__agents_bind_function_tool__(moved)
        moved._agent_instance = new
    if new.name != old.name:
        if getattr(tool, "_agent_tool_default_identity", None) is not None:
            moved.name = sdk.snake(new.name)
            moved._agent_tool_default_identity = (new.name, moved.name)
        origin = getattr(moved, "_tool_origin", None)
        if dataclasses.is_dataclass(origin) and getattr(origin, "agent_name", None) == old.name:
            moved._tool_origin = replace(origin, agent_name=new.name, agent_tool_name=moved.name)
    return moved


def _handoff_tool_name(h: Any, sdk: types.SimpleNamespace) -> str:
    return sdk.Handoff.default_tool_name(h) if isinstance(h, sdk.Agent) else h.tool_name


def clone_graph(entry: Any) -> tuple[list[Any], dict[int, Any]]:
    """Every agent reachable from ``entry`` cloned (``Agent.clone``, fresh ``tools``/``handoffs`` lists),
    handoffs and ``as_tool`` tools relinked to the clones: ``(originals, {id(original): clone})``.

    The originals, their lists and their handoff/tool objects are never modified, so a mutation of a
    clone cannot leak into the user's objects (every registry operator that edits an SDK graph, and
    ``apply_to_agents``, starts from it).
    """
    sdk = _sdk()
    if not isinstance(entry, sdk.Agent):
        raise TypeError(f"clone_graph needs an agents.Agent, got {type(entry).__name__}")
    originals = sdk.reachable(entry)
    clones: dict[int, Any] = {
        id(a): a.clone(tools=list(a.tools), handoffs=list(a.handoffs)) for a in originals
    }
    for a in originals:
        c = clones[id(a)]
        handoffs = []
        for h in a.handoffs:
            target = sdk.handoff_target(h)
            handoffs.append(h if target is None else _handoff_to(h, target, clones[id(target)], sdk))
        tools = []
        for t in a.tools:
            target = sdk.agent_tool_target(t)
            tools.append(t if target is None else _agent_tool_to(t, target, clones[id(target)], sdk))
        c.handoffs = handoffs
        c.tools = tools
    return originals, clones


def _delete_tool(c: Any, agent: Any, name: str, mutant_id: str, sdk: types.SimpleNamespace) -> None:
    """``delete_allowed_edge``: drop the (non-agent) tool ``name`` from clone ``c``; kept apart for length."""
    kept = [t for t in c.tools if sdk.agent_tool_target(t) is not None or getattr(t, "name", None) != name]
    if len(kept) == len(c.tools):
        raise ValueError(f"{mutant_id}: agent {agent.name!r} has no tool named {name!r}")
    c.tools = kept


def _give_tool(
    originals: list[Any], c: Any, agent: Any, name: str, mutant_id: str, sdk: types.SimpleNamespace
) -> None:
    """``remove_restriction``: add to clone ``c`` the real tool ``name`` of the first original having it."""
    real = next(
        (
            t
            for a in originals
            for t in a.tools
            if sdk.agent_tool_target(t) is None and getattr(t, "name", None) == name
        ),
        None,
    )
    if real is None:
        raise ValueError(f"{mutant_id}: no agent of the graph has a tool named {name!r} to give away")
    if any(getattr(t, "name", None) == name for t in c.tools):
        raise ValueError(f"{mutant_id}: agent {agent.name!r} already has a tool named {name!r}")
    c.tools = [*c.tools, real]


def _retarget(
    c: Any,
    old_clone: Any,
    new_clone: Any,
    names: tuple[Any, Any],
    mutant_id: str,
    sdk: types.SimpleNamespace,
) -> None:
    """``retarget_delegation``: clone ``c``'s delegations to ``old_clone`` go to ``new_clone`` instead.

    ``names`` are the original agents ``(a, b)``, for the error message. Split out of ``apply_to_agents``.
    """
    # a retargeted delegation whose tool name ``a`` already uses elsewhere is dropped
    taken = {_handoff_tool_name(h, sdk) for h in c.handoffs if sdk.handoff_target(h) is not old_clone}
    taken |= {getattr(t, "name", None) for t in c.tools if sdk.agent_tool_target(t) is not old_clone}
    changed = False
    handoffs = []
    for h in c.handoffs:
        if sdk.handoff_target(h) is old_clone:
            changed = True
            h = _handoff_to(h, old_clone, new_clone, sdk)
            if _handoff_tool_name(h, sdk) in taken:
                continue
        handoffs.append(h)
    tools = []
    for t in c.tools:
        if sdk.agent_tool_target(t) is old_clone:
            changed = True
            t = _agent_tool_to(t, old_clone, new_clone, sdk)
            if t.name in taken:
                continue
        tools.append(t)
    if not changed:
        a, b = names
        raise ValueError(f"{mutant_id}: {a.name!r} has no handoff or agent tool to {b.name!r}")
    c.handoffs, c.tools = handoffs, tools


def _disconnect(
    clones: dict[int, Any], gone: Any, entry_clone: Any, mutant_id: str, sdk: types.SimpleNamespace
) -> None:
    """``disconnect_agent``: drop every clone's handoff and agent tool pointing at ``gone``."""
    if gone is entry_clone:
        raise ValueError(f"{mutant_id}: the entry agent cannot be disconnected")
    dropped = 0
    for c in clones.values():
        handoffs = [h for h in c.handoffs if sdk.handoff_target(h) is not gone]
        tools = [t for t in c.tools if sdk.agent_tool_target(t) is not gone]
        dropped += len(c.handoffs) - len(handoffs) + len(c.tools) - len(tools)
        c.handoffs, c.tools = handoffs, tools
    if not dropped:  # e.g. only a Python coordinator runs it: nothing here to disconnect
        raise ValueError(f"{mutant_id}: no handoff or agent tool points at {gone.name!r}")


def apply_to_agents(entry: Any, m: Manifest, mutant: StructuralMutant) -> Any:
    """A mutated copy of the SDK agent graph rooted at ``entry``; returns the entry's clone.

    Every agent reachable from ``entry`` (handoffs and ``as_tool`` tools) is cloned with
    ``Agent.clone`` and fresh ``tools``/``handoffs`` lists; handoffs (bare agents and ``Handoff``
    objects) and ``as_tool`` tools are relinked to the clones, so the original agents, their lists
    and their handoff/tool objects are never modified. Then the mutation:

    * ``delete_allowed_edge(a, t)``: the tool named like ``t`` is dropped from ``a``'s clone;
    * ``remove_restriction(a, t)``: the real tool object named like ``t`` (taken from the first
      agent, breadth first, that has it) is added to ``a``'s clone;
    * ``retarget_delegation(a, b, c)``: ``a``'s handoffs / ``as_tool`` tools to ``b`` now go to
      ``c``'s clone (a default tool name follows the new target; a retargeted delegation whose tool
      name ``a`` already has is dropped: the SDK logs a tool-name collision and providers reject
      duplicate tool names, so the mutant is "``a`` loses its route to ``b``");
    * ``disconnect_agent(b)``: every handoff and ``as_tool`` tool pointing at ``b`` is dropped.

    A mutation with nothing to act on in the SDK graph (say, a delegation a Python coordinator
    makes) raises ValueError rather than yield a copy identical to the original, which would pass
    for a surviving mutant. Manifest ids are mapped to SDK agents by name (see ``_agent_map`` for shared names). A
    ``Handoff`` built without ``handoff()`` (no target reference) cannot be followed and is kept
    as is. Raises ValueError when the mutation cannot be applied to this agent graph.
    """
    sdk = _sdk()
    originals, clones = clone_graph(entry)
    by_id = _agent_map(entry, m)

    def sdk_agent(agent_id: str) -> Any:
        if agent_id not in by_id:
            raise ValueError(f"{mutant.id}: no SDK agent for manifest agent {agent_id!r}")
        return by_id[agent_id]

    def tool_name(tool_id: str) -> str:
        try:
            return m.tool(tool_id).name
        except KeyError:
            raise ValueError(f"{mutant.id}: {tool_id!r} is not a tool of the manifest") from None

    op, target = mutant.operator, mutant.target
    if op == "delete_allowed_edge":
        agent, name = sdk_agent(target[0]), tool_name(target[1])
        _delete_tool(clones[id(agent)], agent, name, mutant.id, sdk)
    elif op == "remove_restriction":
        agent, name = sdk_agent(target[0]), tool_name(target[1])
        _give_tool(originals, clones[id(agent)], agent, name, mutant.id, sdk)
    elif op == "retarget_delegation":
        a, b, new = (sdk_agent(x) for x in target)
        _retarget(clones[id(a)], clones[id(b)], clones[id(new)], (a, b), mutant.id, sdk)
    elif op == "disconnect_agent":
        _disconnect(clones, clones[id(sdk_agent(target[0]))], clones[id(entry)], mutant.id, sdk)
    else:
        raise ValueError(f"unknown mutation operator {op!r}")
    return clones[id(entry)]


# -- the registry's operator ----------------------------------------------------------------------
def structure_mutants(t: Target) -> list[Mutant]:
    """The ``structure`` class: one ``Mutant`` per structural mutant of the extracted workflow graph."""
    agent = t.sdk_agent
    if agent is None:
        t.notes.append("structure: needs an OpenAI Agents SDK workflow; skipped")
        return []

    try:
        manifest = extract_manifest(agent, system=t.suite.name)
    except (ManifestError, ValueError) as exc:
        t.notes.append(f"structure: the workflow could not be extracted ({exc}); skipped")
        return []

    def build(sm: StructuralMutant) -> Callable[[], Mutated]:
        return lambda: Mutated(adapter=t.sdk_adapter(apply_to_agents(agent, manifest, sm)))

    return [Mutant(f"structure.{sm.id}", "structure", sm.operator, sm.description, build=build(sm), edit=sm)
            for sm in structural_mutants(manifest)]
