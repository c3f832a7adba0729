"""The typed coordination graph of the structural-coverage paper, as plain frozen data.

A ``Manifest`` is the normalized workflow specification S (paper Listing 1): agents, tools,
allowed and restricted agent–tool edges, and delegation edges, all by *id*. Ids are unique;
``name`` is what the runtime shows in traces (two agents may share a name, the ids tell them
apart). ``Observation`` is obs(x) of one executed test: which agents, allowed tool uses,
restricted-call attempts and delegations the trace witnessed, mapped from runtime names to ids.

Everything here is framework-free: extraction from the OpenAI Agents SDK lives in ``_extract``,
and the trace format is AgentAssay's own (``agentassay._traces``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..._traces._model import RESTRICTED_CALL, TOOL_NOT_FOUND, Action, Trace  # noqa: F401  (re-exported)

AgentKind = Literal["agent", "coordinator"]
ToolKind = Literal["function", "hosted", "mcp", "other"]
DelegationVia = Literal["handoff", "as_tool", "call", "declared"]
ObjectiveKind = Literal["reach", "use_tool", "restrict_tool", "delegate"]

Edge = tuple[str, str]


@dataclass(frozen=True)
class AgentNode:
    """An agent (or a Python coordinator that runs agents). ``name`` is its runtime name."""

    id: str
    name: str
    kind: AgentKind = "agent"
    description: str = ""


@dataclass(frozen=True)
class ToolNode:
    """An opaque tool node; ``schema`` is its JSON-schema of parameters when known."""

    id: str
    name: str
    kind: ToolKind = "function"
    description: str = ""
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Delegation:
    """A delegation edge source → target. ``tool`` is the handoff/``as_tool`` tool name if any."""

    source: str
    target: str
    via: DelegationVia = "declared"
    trigger: str = "delegate"
    tool: str | None = None

    @property
    def edge(self) -> Edge:
        return (self.source, self.target)


@dataclass(frozen=True)
class Manifest:
    """The normalized multi-agent workflow specification S (well-formedness checked on load)."""

    system: str
    entry_agent: str
    agents: tuple[AgentNode, ...]
    tools: tuple[ToolNode, ...] = ()
    allow: tuple[Edge, ...] = ()
    restrict: tuple[Edge, ...] = ()
    delegations: tuple[Delegation, ...] = ()
    notes: tuple[str, ...] = ()
    source: str | None = None

    def agent(self, agent_id: str) -> AgentNode:
        for a in self.agents:
            if a.id == agent_id:
                return a
        raise KeyError(agent_id)

    def tool(self, tool_id: str) -> ToolNode:
        for t in self.tools:
            if t.id == tool_id:
                return t
        raise KeyError(tool_id)

    def agent_ids_named(self, name: str) -> tuple[str, ...]:
        """Ids of the agents whose runtime name is ``name`` (more than one when names clash)."""
        return tuple(a.id for a in self.agents if a.name == name)

    def tool_ids_named(self, name: str) -> tuple[str, ...]:
        return tuple(t.id for t in self.tools if t.name == name)


@dataclass(frozen=True)
class Obligations:
    """Ω(S) = (A_reach, T_allow, T_restrict, D), each restricted to the reachable part."""

    agents: tuple[str, ...]
    allowed: tuple[Edge, ...]
    restricted: tuple[Edge, ...]
    delegations: tuple[Edge, ...]

    @property
    def total(self) -> int:
        return len(self.agents) + len(self.allowed) + len(self.restricted) + len(self.delegations)

    def counts(self) -> dict[str, int]:
        return {
            "agents": len(self.agents),
            "allowed": len(self.allowed),
            "restricted": len(self.restricted),
            "delegations": len(self.delegations),
            "total": self.total,
        }


@dataclass(frozen=True)
class Objective:
    """A witness objective: Reach(a), UseTool(a, t), RestrictTool(a, t) or Delegate(a, b)."""

    kind: ObjectiveKind
    subject: tuple[str, ...]

    @property
    def id(self) -> str:
        label = {"reach": "Reach", "use_tool": "UseTool", "restrict_tool": "RestrictTool", "delegate": "Delegate"}
        return f"{label[self.kind]}({', '.join(self.subject)})"

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True)
class Bundle:
    """Objectives realized by one test: the driver picks the DSPy signature, the rest ride along."""

    driver: Objective
    secondary: tuple[Objective, ...] = ()

    @property
    def objectives(self) -> tuple[Objective, ...]:
        return (self.driver, *self.secondary)

    @property
    def id(self) -> str:
        return " + ".join(o.id for o in self.objectives)


@dataclass(frozen=True)
class Observation:
    """obs(x) of one trace, in manifest ids. ``ambiguous`` lists runtime events no id fits uniquely."""

    agents: frozenset[str] = frozenset()
    tools: frozenset[Edge] = frozenset()
    restricted: frozenset[Edge] = frozenset()
    delegations: frozenset[Edge] = frozenset()
    ambiguous: tuple[str, ...] = field(default=())

    def witnesses(self, objective: Objective) -> bool:
        """Witness(q, τ) of Algorithm 1."""
        s = objective.subject
        if objective.kind == "reach":
            return s[0] in self.agents
        if objective.kind == "use_tool":
            return (s[0], s[1]) in self.tools
        if objective.kind == "restrict_tool":
            return (s[0], s[1]) in self.restricted
        return (s[0], s[1]) in self.delegations


def _resolve_agent(manifest: Manifest, name: str | None, edges: Iterable[str] | None = None) -> str | None:
    """The unique id for runtime ``name``; with several, the one among ``edges`` (candidate ids)."""
    if not name:
        return None
    ids = manifest.agent_ids_named(name)
    if len(ids) == 1:
        return ids[0]
    if edges is not None:
        fitting = [i for i in ids if i in set(edges)]
        if len(fitting) == 1:
            return fitting[0]
    return None


def observe(trace: Trace, manifest: Manifest) -> Observation:
    """Map a trace's runtime events (agent and tool *names*) onto manifest ids.

    * a ``call_tool`` step with the ``RESTRICTED_CALL`` error is a restricted-call attempt;
      any other ``call_tool`` step is a tool use (a call that raised was still invoked);
    * a ``handoff`` step is a delegation (``tool`` set: an ``Agent.as_tool`` call);
    * when the entry is a coordinator (a Python manager), it is reached by any run, and an agent
      that starts a top-level run without being handed the conversation is delegated to by it.
    Names shared by several agents are resolved through the edges that fit; what cannot be
    resolved is listed in ``ambiguous`` rather than credited to a guess.
    """
    agents: set[str] = set()
    tools: set[Edge] = set()
    restricted: set[Edge] = set()
    delegations: set[Edge] = set()
    ambiguous: list[str] = []
    allowed_by_tool: dict[str, set[str]] = {}
    restricted_by_tool: dict[str, set[str]] = {}
    for a, t in manifest.allow:
        allowed_by_tool.setdefault(t, set()).add(a)
    for a, t in manifest.restrict:
        restricted_by_tool.setdefault(t, set()).add(a)

    entry = manifest.agent(manifest.entry_agent) if manifest.entry_agent else None
    coordinator = entry is not None and entry.kind == "coordinator"
    if coordinator and trace.steps:
        agents.add(entry.id)

    handed_to: set[str] = set()
    previous_top: str | None = None
    for step in trace.steps:
        if step.action is Action.CALL_TOOL and step.tool:
            refused = step.error == RESTRICTED_CALL
            index = restricted_by_tool if refused else allowed_by_tool
            tool_ids = manifest.tool_ids_named(step.tool)
            candidates = [(i, a) for i in tool_ids for a in index.get(i, ())]
            names = {a for _, a in candidates if manifest.agent(a).name == step.agent}
            pairs = [(a, i) for i, a in candidates if a in names]
            if len(pairs) == 1:
                (restricted if refused else tools).add(pairs[0])
                agents.add(pairs[0][0])
            elif step.agent:
                agent_id = _resolve_agent(manifest, step.agent)
                if agent_id is not None:
                    agents.add(agent_id)
                if len(pairs) > 1:
                    ambiguous.append(f"{step.agent} → {step.tool}")
        elif step.action is Action.HANDOFF:
            fits = [
                d
                for d in manifest.delegations
                if manifest.agent(d.source).name == step.agent
                and manifest.agent(d.target).name == step.target
                and (step.tool is None or d.tool in (None, step.tool))
            ]
            if len({d.edge for d in fits}) == 1:
                delegations.add(fits[0].edge)
                agents.update(fits[0].edge)
                handed_to.add(fits[0].target)
            else:
                for name in (step.agent, step.target):
                    agent_id = _resolve_agent(manifest, name)
                    if agent_id is not None:
                        agents.add(agent_id)
                if len(fits) > 1:
                    ambiguous.append(f"{step.agent} → {step.target}")
        elif step.agent:
            agent_id = _resolve_agent(manifest, step.agent)
            if agent_id is not None:
                agents.add(agent_id)
            elif len(manifest.agent_ids_named(step.agent)) > 1:
                ambiguous.append(step.agent)
        if coordinator and step.depth == 0 and step.agent and step.agent != previous_top:
            started = _resolve_agent(manifest, step.agent)
            if started is not None and started not in handed_to:
                edge = (entry.id, started)
                if any(d.edge == edge for d in manifest.delegations):
                    delegations.add(edge)
                    agents.add(started)
        if step.depth == 0 and step.agent:
            previous_top = step.agent
    return Observation(
        frozenset(agents), frozenset(tools), frozenset(restricted), frozenset(delegations), tuple(ambiguous)
    )


# -- objective ids --------------------------------------------------------------------------------
_OBJECTIVE = re.compile(r"^\s*(Reach|UseTool|RestrictTool|Delegate)\((.*)\)\s*$")
_KINDS = {
    "Reach": ("reach", 1),
    "UseTool": ("use_tool", 2),
    "RestrictTool": ("restrict_tool", 2),
    "Delegate": ("delegate", 2),
}


def parse_objective(text: str) -> Objective:
    """The objective of an id such as ``"UseTool(faq_agent, faq_lookup_tool)"`` (inverse of ``Objective.id``)."""
    match = _OBJECTIVE.match(text)
    if match is None:
        raise ValueError(f"not an objective id: {text!r} (expected e.g. 'Reach(a)' or 'Delegate(a, b)')")
    kind, arity = _KINDS[match.group(1)]
    subject = tuple(p.strip() for p in match.group(2).split(","))
    if len(subject) != arity or not all(subject):
        raise ValueError(f"objective {text!r}: {match.group(1)} takes {arity} id(s)")
    return Objective(kind, subject)  # type: ignore[arg-type]
