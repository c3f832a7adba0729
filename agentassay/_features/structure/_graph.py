"""The reachable coordination graph G(S), its obligations Ω(S), witness objectives and bundles.

Paper Sec. III-A and III-B: reachability over delegation edges from the entry agent, the four
obligation sets (A_reach, T_allow, T_restrict, D) restricted to the reachable part, objective
rules R1–R4, and obligation-preserving merging of objectives into bundles (Algorithm 1, line 16).

Everything is deterministic and follows manifest (declaration) order, so the same manifest always
gives the same obligations, objectives and bundles, in the same order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from ._model import Bundle, Edge, Manifest, Objective, Obligations

__all__ = ["merge_bundles", "objectives", "obligations", "reachable"]


def reachable(m: Manifest) -> tuple[str, ...]:
    """A_reach in breadth-first order from ``m.entry_agent`` over delegation edges.

    Cycles are fine (each agent is visited once). Ties (several agents first seen from the same
    agent) are broken by the order of ``m.agents``. Delegation endpoints that are not declared
    agents are ignored; an entry agent that is not declared gives ``()``.
    """
    index = {a.id: i for i, a in enumerate(m.agents)}
    if m.entry_agent not in index:
        return ()
    successors: dict[str, list[str]] = {}
    for d in m.delegations:
        if d.source in index and d.target in index:
            successors.setdefault(d.source, []).append(d.target)
    seen = {m.entry_agent}
    order = [m.entry_agent]
    queue = deque(order)
    while queue:
        agent = queue.popleft()
        for nxt in sorted(set(successors.get(agent, ())), key=index.__getitem__):
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                queue.append(nxt)
    return tuple(order)


def _unique(edges: Iterable[Edge]) -> tuple[Edge, ...]:
    return tuple(dict.fromkeys(edges))


def obligations(m: Manifest) -> Obligations:
    """Ω(S) = (A_reach, T_allow, T_restrict, D), paper Sec. III-A, in manifest order.

    * ``agents``: the reachable agents, in the order of ``m.agents``;
    * ``allowed`` / ``restricted``: the allow / restrict edges whose agent is reachable;
    * ``delegations``: the delegation edges with both ends reachable, deduplicated by edge (two
      delegations a → b through different tools are one obligation).
    Repeated declarations of the same edge count once.
    """
    reach = set(reachable(m))
    return Obligations(
        agents=tuple(a.id for a in m.agents if a.id in reach),
        allowed=_unique(e for e in m.allow if e[0] in reach),
        restricted=_unique(e for e in m.restrict if e[0] in reach),
        delegations=_unique(d.edge for d in m.delegations if d.source in reach and d.target in reach),
    )


def objectives(o: Obligations) -> tuple[Objective, ...]:
    """Witness objectives by rules R1–R4: Reach, UseTool, RestrictTool, Delegate (in that order)."""
    return (
        *(Objective("reach", (a,)) for a in o.agents),
        *(Objective("use_tool", e) for e in o.allowed),
        *(Objective("restrict_tool", e) for e in o.restricted),
        *(Objective("delegate", e) for e in o.delegations),
    )


def merge_bundles(objectives: Iterable[Objective], *, entry: str | None = None) -> tuple[Bundle, ...]:
    """Obligation-preserving merging (paper Sec. III-B c): one driver per bundle.

    * Every non-reach objective (UseTool, RestrictTool, Delegate) drives its own bundle: two
      non-reach drivers are never merged, since they need different realization signatures.
    * A Reach objective rides along as a secondary only on a driver that entails it:
      ``UseTool(a, t)`` entails ``Reach(a)``; ``Delegate(a, b)`` entails ``Reach(a)`` and
      ``Reach(b)``. Preference when several drivers entail ``Reach(a)``: the first
      ``UseTool(a, ·)``, then the first ``Delegate(·, a)``, then the first ``Delegate(a, ·)`` —
      except for the ``entry`` agent, which every run reaches: its Reach goes on an outgoing
      ``Delegate(entry, ·)`` first, not on a hand-back into it, which is the harder edge to realize.
    * A Reach objective is never attached to a ``RestrictTool`` driver, even though reaching ``a``
      is implied by an attempt from ``a``: a C3 probe tempts the agent to *misbehave*, and for a
      well-behaved workflow it is usually not elicited, so the bundle is reported unrealized and
      an easy ``Reach(a)`` hung on it would be reported unrealized with it.
    * Reach objectives no driver entails are bundles of their own.
    No merge can introduce a contradiction (use and restriction of one pair never share a bundle).

    Each objective appears in exactly one bundle (duplicates in the input are taken once). Bundles
    come in the order of their first objective in the input: a driver's bundle where the driver
    stood, a lone Reach bundle where the Reach stood.
    """
    unique = tuple(dict.fromkeys(objectives))
    drivers = [q for q in unique if q.kind != "reach"]
    secondaries: dict[Objective, list[Objective]] = {q: [] for q in drivers}

    def host(agent: str) -> Objective | None:
        tests = [
            lambda q: q.kind == "use_tool" and q.subject[0] == agent,
            lambda q: q.kind == "delegate" and q.subject[1] == agent,
            lambda q: q.kind == "delegate" and q.subject[0] == agent,
        ]
        if agent == entry:
            tests[1], tests[2] = tests[2], tests[1]
        for test in tests:
            for q in drivers:
                if test(q):
                    return q
        return None

    bundles: list[Bundle] = []
    for q in unique:
        if q.kind != "reach":
            continue
        driver = host(q.subject[0])
        if driver is None:
            continue
        secondaries[driver].append(q)
    for q in unique:
        if q.kind != "reach":
            bundles.append(Bundle(q, tuple(secondaries[q])))
        elif host(q.subject[0]) is None:
            bundles.append(Bundle(q))
    return tuple(bundles)
