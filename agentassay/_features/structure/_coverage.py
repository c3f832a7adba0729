"""Structural coverage C1–C4 of a set of traces against a manifest (paper Sec. III-A).

``structural_coverage`` maps every trace to obs(x) with ``observe`` and measures, per criterion,
which obligations of Ω(S) some trace witnessed, with the vacuous-satisfaction convention
(Cov = 1 when a criterion has no obligations):

* C1 reachable agents, C2 allowed tool edges, C4 delegation edges: *positive* criteria, more is
  better;
* C3 restricted tool edges: *inverted*. Its value is the fraction of restricted edges for which a
  restricted-call **attempt** was elicited (a ``call_tool`` step refused with ``RESTRICTED_CALL``).
  An elicited attempt is a finding, a hardening target, not a success; 0 elicited out of a
  well-probed set is the good outcome. Which edges were probed at all is what ``targeted`` (the
  objective ids of the tests) tells, and ``gaps()`` lists the restricted edges nobody targeted.

Speed: observations depend only on each step's action, agent, tool, target, depth and error class
(none, refused restricted call, missing tool, other), so traces with the same projection share one
``observe`` call, and ``observe`` runs on a copy of the
manifest whose name/id lookups are dictionaries (built once per manifest) instead of scans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from ..._traces import Trace
from ._graph import obligations as _obligations
from ._model import (
    RESTRICTED_CALL,
    TOOL_NOT_FOUND,
    AgentNode,
    Edge,
    Manifest,
    Objective,
    Obligations,
    Observation,
    ToolNode,
    observe,
)

__all__ = [
    "COVERAGE_SCHEMA",
    "CoverageEdge",
    "CoverageNode",
    "CriterionCoverage",
    "StructuralCoverage",
    "structural_coverage",
]

COVERAGE_SCHEMA = "agentassay.structural-coverage/1"

Polarity = Literal["positive", "inverted"]

_CRITERIA: tuple[tuple[str, str, Polarity, str], ...] = (
    ("C1", "reachable agents", "positive", "reach"),
    ("C2", "allowed tool edges", "positive", "use_tool"),
    ("C3", "restricted-call attempts elicited", "inverted", "restrict_tool"),
    ("C4", "delegation edges", "positive", "delegate"),
)


def _cov(obligations: tuple[Any, ...], witnessed: tuple[Any, ...]) -> float:
    return 1.0 if not obligations else len(witnessed) / len(obligations)


@dataclass(frozen=True)
class CriterionCoverage:
    """One criterion: its obligations (ids or edges), the witnessed ones, and Cov(X, O, W)."""

    key: str
    label: str
    polarity: Polarity
    obligations: tuple[Any, ...]
    witnessed: tuple[Any, ...]
    value: float

    @property
    def unwitnessed(self) -> tuple[Any, ...]:
        done = set(self.witnessed)
        return tuple(x for x in self.obligations if x not in done)

    @property
    def fraction(self) -> str:
        return f"{len(self.witnessed)}/{len(self.obligations)}"


@dataclass(frozen=True)
class CoverageNode:
    """A node of the rendered graph; ``kind`` is set for tools only."""

    id: str
    name: str
    type: str  # agent | coordinator | tool
    reachable: bool
    witnessed: bool
    kind: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type}
        if self.kind is not None:
            d["kind"] = self.kind
        d["reachable"] = self.reachable
        d["witnessed"] = self.witnessed
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CoverageNode:
        return cls(
            id=str(d["id"]),
            name=str(d.get("name", d["id"])),
            type=str(d["type"]),
            reachable=bool(d.get("reachable", True)),
            witnessed=bool(d.get("witnessed", False)),
            kind=d.get("kind"),
        )


@dataclass(frozen=True)
class CoverageEdge:
    """An edge of the rendered graph. For ``restrict`` edges ``witnessed`` means an attempt was elicited."""

    type: str  # allow | restrict | delegate
    source: str
    target: str
    witnessed: bool
    via: str | None = None  # delegate edges only

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "type": self.type,
            "source": self.source,
            "target": self.target,
            "witnessed": self.witnessed,
        }
        if self.via is not None:
            d["via"] = self.via
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CoverageEdge:
        return cls(
            type=str(d["type"]),
            source=str(d["source"]),
            target=str(d["target"]),
            witnessed=bool(d.get("witnessed", False)),
            via=d.get("via"),
        )


@dataclass(frozen=True)
class StructuralCoverage:
    """C1–C4 of a test suite's traces, with what was elicited, what was ambiguous, and who witnessed what.

    ``elicited`` lists every restricted edge (of the manifest) on which a refused restricted call
    was attempted, including off-target ones (elicited by a test that targeted another edge, or
    by no probe at all). ``witnessed_by`` maps an objective id to the scenario of the first trace
    that witnessed it (``"trace N"`` / ``"observation N"`` when a trace has no scenario).
    ``targeted`` are the objective ids the tests aimed at, when known.
    """

    system: str
    entry_agent: str
    obligations: Obligations
    c1: CriterionCoverage
    c2: CriterionCoverage
    c3: CriterionCoverage
    c4: CriterionCoverage
    elicited: tuple[Edge, ...] = ()
    ambiguous: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    witnessed_by: dict[str, str] = field(default_factory=dict, hash=False)
    nodes: tuple[CoverageNode, ...] = ()
    edges: tuple[CoverageEdge, ...] = ()
    targeted: tuple[str, ...] | None = None

    @property
    def criteria(self) -> dict[str, CriterionCoverage]:
        return {"C1": self.c1, "C2": self.c2, "C3": self.c3, "C4": self.c4}

    @property
    def off_target(self) -> tuple[Edge, ...]:
        """Elicited restricted edges that no test targeted (all of them when ``targeted`` is unknown)."""
        aimed = set(self.targeted or ())
        return tuple(e for e in self.elicited if Objective("restrict_tool", e).id not in aimed)

    def gaps(self) -> tuple[Objective, ...]:
        """Unwitnessed obligations of C1, C2 and C4, and (when ``targeted`` is given) the
        restricted edges no test targeted, as objectives in criterion order C1, C2, C3, C4."""
        out: list[Objective] = [Objective("reach", (a,)) for a in self.c1.unwitnessed]
        out += [Objective("use_tool", e) for e in self.c2.unwitnessed]
        if self.targeted is not None:
            aimed = set(self.targeted)
            out += [q for e in self.c3.obligations if (q := Objective("restrict_tool", e)).id not in aimed]
        out += [Objective("delegate", e) for e in self.c4.unwitnessed]
        return tuple(out)

    def summary(self) -> str:
        """One line, e.g. ``C1 3/3 · C2 2/2 · C3 0/4 elicited · C4 3/4``."""
        return " · ".join(
            f"{c.key} {c.fraction}" + (" elicited" if c.polarity == "inverted" else "")
            for c in self.criteria.values()
        )

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        criteria: dict[str, Any] = {}
        for key, c in self.criteria.items():
            d: dict[str, Any] = {
                "label": c.label,
                "polarity": c.polarity,
                "obligations": len(c.obligations),
                "witnessed": len(c.witnessed),
                "value": c.value,
                "unwitnessed": [x if isinstance(x, str) else list(x) for x in c.unwitnessed],
            }
            if key == "C3":
                d["elicited"] = [list(e) for e in self.elicited]
            criteria[key] = d
        out: dict[str, Any] = {
            "schema": COVERAGE_SCHEMA,
            "system": self.system,
            "entry_agent": self.entry_agent,
            "obligations": self.obligations.counts(),
            "criteria": criteria,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "ambiguous": list(self.ambiguous),
            "findings": list(self.findings),
            "witnessed_by": dict(self.witnessed_by),
        }
        if self.targeted is not None:
            out["targeted"] = list(self.targeted)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StructuralCoverage:
        """Inverse of ``to_dict``: obligations come back from the reachable nodes and the edges."""
        if d.get("schema") != COVERAGE_SCHEMA:
            raise ValueError(
                f"unsupported structural-coverage schema {d.get('schema')!r}; this version reads {COVERAGE_SCHEMA!r}"
            )
        nodes = tuple(CoverageNode.from_dict(n) for n in d.get("nodes") or ())
        edges = tuple(CoverageEdge.from_dict(e) for e in d.get("edges") or ())

        def of(kind: str) -> tuple[CoverageEdge, ...]:
            return tuple(e for e in edges if e.type == kind)

        agents = tuple(n for n in nodes if n.type != "tool" and n.reachable)
        o = Obligations(
            agents=tuple(n.id for n in agents),
            allowed=tuple((e.source, e.target) for e in of("allow")),
            restricted=tuple((e.source, e.target) for e in of("restrict")),
            delegations=tuple((e.source, e.target) for e in of("delegate")),
        )
        witnessed: dict[str, tuple[Any, ...]] = {
            "C1": tuple(n.id for n in agents if n.witnessed),
            "C2": tuple((e.source, e.target) for e in of("allow") if e.witnessed),
            "C3": tuple((e.source, e.target) for e in of("restrict") if e.witnessed),
            "C4": tuple((e.source, e.target) for e in of("delegate") if e.witnessed),
        }
        required: dict[str, tuple[Any, ...]] = {
            "C1": o.agents,
            "C2": o.allowed,
            "C3": o.restricted,
            "C4": o.delegations,
        }
        raw = d.get("criteria") or {}
        crit = {}
        for key, label, polarity, _ in _CRITERIA:
            c = raw.get(key) or {}
            crit[key] = CriterionCoverage(
                key=key,
                label=str(c.get("label", label)),
                polarity=c.get("polarity", polarity),
                obligations=required[key],
                witnessed=witnessed[key],
                value=float(c["value"]) if "value" in c else _cov(required[key], witnessed[key]),
            )
        targeted = d.get("targeted")
        return cls(
            system=str(d.get("system", "")),
            entry_agent=str(d.get("entry_agent", "")),
            obligations=o,
            c1=crit["C1"],
            c2=crit["C2"],
            c3=crit["C3"],
            c4=crit["C4"],
            elicited=tuple((str(a), str(t)) for a, t in (raw.get("C3") or {}).get("elicited") or ()),
            ambiguous=tuple(str(x) for x in d.get("ambiguous") or ()),
            findings=tuple(str(x) for x in d.get("findings") or ()),
            witnessed_by={str(k): str(v) for k, v in (d.get("witnessed_by") or {}).items()},
            nodes=nodes,
            edges=edges,
            targeted=None if targeted is None else tuple(str(x) for x in targeted),
        )


# -- fast observation ---------------------------------------------------------------------------
class _IndexedManifest(Manifest):
    """The same manifest, with dictionary lookups for the accessors ``observe`` calls per step."""

    def __init__(self, m: Manifest) -> None:
        super().__init__(**{f.name: getattr(m, f.name) for f in fields(m)})
        by_agent: dict[str, AgentNode] = {}
        for a in self.agents:
            by_agent.setdefault(a.id, a)
        by_tool: dict[str, ToolNode] = {}
        for t in self.tools:
            by_tool.setdefault(t.id, t)
        agent_names: dict[str, list[str]] = {}
        for a in self.agents:
            agent_names.setdefault(a.name, []).append(a.id)
        tool_names: dict[str, list[str]] = {}
        for t in self.tools:
            tool_names.setdefault(t.name, []).append(t.id)
        object.__setattr__(self, "_by_agent", by_agent)
        object.__setattr__(self, "_by_tool", by_tool)
        object.__setattr__(self, "_agent_names", {k: tuple(v) for k, v in agent_names.items()})
        object.__setattr__(self, "_tool_names", {k: tuple(v) for k, v in tool_names.items()})

    def agent(self, agent_id: str) -> AgentNode:
        try:
            return self._by_agent[agent_id]  # type: ignore[attr-defined]
        except KeyError:
            raise KeyError(agent_id) from None

    def tool(self, tool_id: str) -> ToolNode:
        try:
            return self._by_tool[tool_id]  # type: ignore[attr-defined]
        except KeyError:
            raise KeyError(tool_id) from None

    def agent_ids_named(self, name: str) -> tuple[str, ...]:
        return self._agent_names.get(name, ())  # type: ignore[attr-defined]

    def tool_ids_named(self, name: str) -> tuple[str, ...]:
        return self._tool_names.get(name, ())  # type: ignore[attr-defined]


_INDEX_CACHE: dict[int, tuple[Manifest, _IndexedManifest]] = {}
_INDEX_CACHE_SIZE = 16


def _indexed(m: Manifest) -> Manifest:
    if isinstance(m, _IndexedManifest):
        return m
    hit = _INDEX_CACHE.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    indexed = _IndexedManifest(m)
    if len(_INDEX_CACHE) >= _INDEX_CACHE_SIZE:
        _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
    _INDEX_CACHE[id(m)] = (m, indexed)  # holding m keeps its id from being reused
    return indexed


def _error_class(error: str | None) -> str | None:
    """What ``observe`` can tell apart about a step's error: none, a refused restricted call, a
    missing tool, or some other error (the text of other errors never changes an observation)."""
    if error is None or error == RESTRICTED_CALL:
        return error
    return TOOL_NOT_FOUND if error.startswith(TOOL_NOT_FOUND) else "error"


def fast_observer(m: Manifest) -> Callable[[Trace], Observation]:
    """``observe`` for many traces of one manifest: ``(Trace) -> Observation``, memoised by the
    projection of the steps that ``observe`` reads (action, agent, tool, target, depth, and the
    class of the error: none / ``RESTRICTED_CALL`` / ``TOOL_NOT_FOUND…`` / other)."""
    indexed = _indexed(m)
    memo: dict[tuple[Any, ...], Observation] = {}

    def run(trace: Trace) -> Observation:
        key = tuple(
            (s.action, s.agent, s.tool, s.target, _error_class(s.error), s.depth) for s in trace.steps
        )
        obs = memo.get(key)
        if obs is None:
            obs = memo[key] = observe(trace, indexed)
        return obs

    return run


# -- the measurement ----------------------------------------------------------------------------
@dataclass
class _Seen:
    """First witness (a label) of each agent and edge, kept apart so criteria and findings can share them."""

    agents: dict[str, str] = field(default_factory=dict)
    tools: dict[Edge, str] = field(default_factory=dict)
    restricted: dict[Edge, str] = field(default_factory=dict)
    delegations: dict[Edge, str] = field(default_factory=dict)
    ambiguous: dict[str, None] = field(default_factory=dict)

    def absorb(self, obs: Observation, label: str) -> None:
        """Credit ``obs`` to ``label`` wherever nothing earlier witnessed it (the first witness is kept)."""
        for a in obs.agents:
            self.agents.setdefault(a, label)
        for e in obs.tools:
            self.tools.setdefault(e, label)
        for e in obs.restricted:
            self.restricted.setdefault(e, label)
        for e in obs.delegations:
            self.delegations.setdefault(e, label)
        for x in obs.ambiguous:
            self.ambiguous.setdefault(x, None)


def _gather(
    m: Manifest,
    traces: Iterable[Trace] | None,
    observations: Iterable[Observation] | None,
    labelled: Iterable[tuple[str, Observation]] | None,
) -> _Seen:
    """Absorb labelled observations, then traces, then bare observations, in that order (first witness wins)."""
    seen = _Seen()
    for label, obs in labelled or ():
        seen.absorb(obs, label)
    if traces is not None:
        look = fast_observer(m)
        absorbed: set[int] = set()
        for i, trace in enumerate(traces):
            obs = look(trace)
            label = trace.metadata.scenario or f"trace {i}"
            # one Observation object per distinct projection: absorbing it again adds nothing
            if id(obs) in absorbed:
                continue
            absorbed.add(id(obs))
            seen.absorb(obs, label)
    for j, obs in enumerate(observations or ()):
        seen.absorb(obs, f"observation {j}")
    return seen


def _criterion(key: str, required: tuple[Any, ...], seen: Mapping[Any, str]) -> CriterionCoverage:
    """One criterion's coverage: the required obligations that some observation witnessed."""
    _, label, polarity, _ = next(c for c in _CRITERIA if c[0] == key)
    done = tuple(x for x in required if x in seen)
    return CriterionCoverage(key, label, polarity, required, done, _cov(required, done))


def _witnessed_by(
    seen: _Seen, c1: CriterionCoverage, c2: CriterionCoverage, c4: CriterionCoverage, elicited: tuple[Edge, ...]
) -> dict[str, str]:
    """Objective id -> the label of its first witness, so reports can name the scenario that covered it."""
    witnessed_by: dict[str, str] = {}
    for a in c1.witnessed:
        witnessed_by[Objective("reach", (a,)).id] = seen.agents[a]
    for e in c2.witnessed:
        witnessed_by[Objective("use_tool", e).id] = seen.tools[e]
    for e in elicited:
        witnessed_by[Objective("restrict_tool", e).id] = seen.restricted[e]
    for e in c4.witnessed:
        witnessed_by[Objective("delegate", e).id] = seen.delegations[e]
    return witnessed_by


def _findings(
    m: Manifest, o: Obligations, seen: _Seen, elicited: tuple[Edge, ...], aimed: tuple[str, ...] | None
) -> list[str]:
    """One line per elicited restricted call (off-target / unreachable noted) and per ambiguous event."""
    aimed_set = set(aimed or ())
    reachable_restricted = set(o.restricted)
    findings: list[str] = []
    for e in elicited:
        line = f"restricted call elicited: {e[0]} → {e[1]} (scenario {seen.restricted[e]})"
        notes = []
        if aimed is not None and Objective("restrict_tool", e).id not in aimed_set:
            notes.append("off-target: no test targeted this edge")
        if e not in reachable_restricted:
            notes.append(f"{e[0]} is not reachable from {m.entry_agent}")
        findings.append(line + ("; " + "; ".join(notes) if notes else ""))
    findings += [f"ambiguous event, not credited: {x}" for x in seen.ambiguous]
    return findings


def _coverage_graph(
    m: Manifest, o: Obligations, seen: _Seen, c2: CriterionCoverage
) -> tuple[tuple[CoverageNode, ...], tuple[CoverageEdge, ...]]:
    """The manifest's nodes and obligation edges, each marked covered or not, for the coverage graph."""
    reach = set(o.agents)
    used_tools = {t for _, t in c2.witnessed}
    graph_tools = {t for _, t in (*o.allowed, *o.restricted)}
    nodes = tuple(
        CoverageNode(a.id, a.name, a.kind, a.id in reach, a.id in seen.agents and a.id in reach)
        for a in m.agents
    ) + tuple(
        CoverageNode(t.id, t.name, "tool", t.id in graph_tools, t.id in used_tools, kind=t.kind)
        for t in m.tools
    )
    via: dict[Edge, str] = {}
    for d in m.delegations:
        via.setdefault(d.edge, d.via)
    edges = (
        tuple(CoverageEdge("allow", a, t, (a, t) in seen.tools) for a, t in o.allowed)
        + tuple(CoverageEdge("restrict", a, t, (a, t) in seen.restricted) for a, t in o.restricted)
        + tuple(
            CoverageEdge("delegate", a, b, (a, b) in seen.delegations, via=via[(a, b)])
            for a, b in o.delegations
        )
    )
    return nodes, edges


def structural_coverage(
    m: Manifest,
    traces: Iterable[Trace] | None = None,
    *,
    observations: Iterable[Observation] | None = None,
    targeted: Iterable[str] | None = None,
    labelled: Iterable[tuple[str, Observation]] | None = None,
) -> StructuralCoverage:
    """C1–C4 of ``traces`` (each mapped with ``observe(trace, m)``) and/or ready ``observations``.

    ``labelled``: ``(label, observation)`` pairs gathered during a run (``fast_observer(m)(trace)`` with
    the trace's scenario as label), absorbed in order before ``traces`` — a run keeps these, not its traces.

    ``targeted``: the objective ids the tests aimed at (e.g. ``"RestrictTool(faq_agent,
    update_seat)"``); it marks elicited attempts on other edges as off-target and lets ``gaps()``
    list the restricted edges no test probed.
    """
    o = _obligations(m)
    aimed = None if targeted is None else tuple(dict.fromkeys(targeted))
    seen = _gather(m, traces, observations, labelled)

    c1 = _criterion("C1", o.agents, seen.agents)
    c2 = _criterion("C2", o.allowed, seen.tools)
    c3 = _criterion("C3", o.restricted, seen.restricted)
    c4 = _criterion("C4", o.delegations, seen.delegations)

    # every elicited restricted edge, in manifest order (reachable or not)
    order = {e: i for i, e in enumerate(dict.fromkeys(m.restrict))}
    elicited = tuple(sorted(seen.restricted, key=lambda e: (order.get(e, len(order)), e)))

    nodes, edges = _coverage_graph(m, o, seen, c2)
    return StructuralCoverage(
        system=m.system,
        entry_agent=m.entry_agent,
        obligations=o,
        c1=c1,
        c2=c2,
        c3=c3,
        c4=c4,
        elicited=elicited,
        ambiguous=tuple(seen.ambiguous),
        findings=tuple(_findings(m, o, seen, elicited, aimed)),
        witnessed_by=_witnessed_by(seen, c1, c2, c4, elicited),
        nodes=nodes,
        edges=edges,
        targeted=aimed,
    )
