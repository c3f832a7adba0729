"""Structural mutation analysis: does a structural test suite notice a changed workflow graph?

``mutation_analysis`` runs a structural test suite (objective ids per test, e.g. from ``generate_suite``)
on the original and on every structural mutant — the same ``StructuralMutant`` edits the registry's
``structure`` class makes (``structural_mutants``) — with the same seeds, and reports which mutants the
suite detects (kills): a structurally adequate suite should kill the mutants of the structure it
claims to cover. Its kill rule is structural (a test's witnessed objectives change, or a restricted
edge is really called), not the gate ``agentassay mutate`` uses, and it writes its own report
(``agentassay.structural-mutation/1``): a thin adapter over the registry's mutants, kept so its
output stays what it was, not a second mutant definition.

Mind what a kill means with a model in the loop: a mutation also changes what the affected agents
are shown (their tool and handoff lists), so a real model, and equally the seeded offline
simulator (whose draws hash everything an agent is shown), may choose differently even on paths
the mutation did not touch. Such kills are real differences in behaviour, but not always the
mechanism the mutant names; the per-test reasons say what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..._integrations.adapters._base import AgentRunError, describe_exception
from ..._integrations.adapters._transient import is_transient
from ..._traces import Action, Trace
from ..structure._model import (
    RESTRICTED_CALL,
    TOOL_NOT_FOUND,
    Edge,
    Manifest,
    Objective,
    observe,
    parse_objective,
)
from ._structural import StructuralMutant, apply_to_agents, apply_to_manifest, structural_mutants

__all__ = ["MUTATION_SCHEMA", "BaselineRun", "MutantResult", "MutationReport", "mutation_analysis"]

MUTATION_SCHEMA = "agentassay.structural-mutation/1"


@dataclass(frozen=True)
class BaselineRun:
    """One test on the original workflow: what it aims at and what its trace witnessed.

    ``broken`` are restricted edges (of the original manifest) the original itself really called;
    they do not count against mutants.
    """

    name: str
    seed: int
    objectives: tuple[str, ...]
    witnessed: tuple[str, ...]
    error: str | None = None
    broken: tuple[Edge, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seed": self.seed,
            "objectives": list(self.objectives),
            "witnessed": list(self.witnessed),
            "error": self.error,
            "broken_restrictions": [list(e) for e in self.broken],
        }


@dataclass(frozen=True)
class MutantResult:
    """The verdict on one mutant: every (test, reason) that detected it; ``error`` if it did not apply."""

    mutant: StructuralMutant
    kills: tuple[tuple[str, str], ...] = ()
    error: str | None = None

    @property
    def killed(self) -> bool:
        return bool(self.kills)

    @property
    def killed_by(self) -> str | None:
        return self.kills[0][0] if self.kills else None

    @property
    def reason(self) -> str | None:
        return self.kills[0][1] if self.kills else None

    @property
    def status(self) -> str:
        return "invalid" if self.error is not None else "killed" if self.killed else "survived"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.mutant.id,
            "operator": self.mutant.operator,
            "target": list(self.mutant.target),
            "description": self.mutant.description,
            "status": self.status,
            "killed": self.killed,
            "killed_by": self.killed_by,
            "reason": self.reason,
            "kills": [{"test": t, "reason": r} for t, r in self.kills],
            "error": self.error,
        }


@dataclass(frozen=True)
class MutationReport:
    """Mutation analysis of one suite: baselines, per-mutant verdicts, and the score."""

    system: str
    tests: tuple[BaselineRun, ...]
    results: tuple[MutantResult, ...]

    @property
    def applicable(self) -> tuple[MutantResult, ...]:
        return tuple(r for r in self.results if r.error is None)

    @property
    def killed(self) -> tuple[MutantResult, ...]:
        return tuple(r for r in self.applicable if r.killed)

    @property
    def survived(self) -> tuple[MutantResult, ...]:
        return tuple(r for r in self.applicable if not r.killed)

    @property
    def score(self) -> float:
        """killed / applicable mutants (1.0, vacuously, when there are none)."""
        total = len(self.applicable)
        return 1.0 if total == 0 else len(self.killed) / total

    def result(self, mutant_id: str) -> MutantResult:
        for r in self.results:
            if r.mutant.id == mutant_id:
                return r
        raise KeyError(mutant_id)

    def summary(self) -> str:
        return (
            f"mutation score {len(self.killed)}/{len(self.applicable)} ({self.score:.2f}); "
            f"survived: {', '.join(r.mutant.id for r in self.survived) or 'none'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": MUTATION_SCHEMA,
            "system": self.system,
            "score": self.score,
            "total": len(self.applicable),
            "killed": len(self.killed),
            "survived": len(self.survived),
            "invalid": len(self.results) - len(self.applicable),
            "tests": [t.to_dict() for t in self.tests],
            "mutants": [r.to_dict() for r in self.results],
        }


def _restriction_index(m: Manifest) -> dict[tuple[str, str], tuple[Edge, ...]]:
    """(agent name, tool name) → the restricted edges with those names, where no allowed edge has them."""

    def names(e: Edge) -> tuple[str, str] | None:
        try:
            return (m.agent(e[0]).name, m.tool(e[1]).name)
        except KeyError:
            return None

    allowed = {n for e in m.allow if (n := names(e)) is not None}
    out: dict[tuple[str, str], list[Edge]] = {}
    for e in dict.fromkeys(m.restrict):
        n = names(e)
        if n is not None and n not in allowed:
            out.setdefault(n, []).append(e)
    return {k: tuple(v) for k, v in out.items()}


def _broken(trace: Trace, index: dict[tuple[str, str], tuple[Edge, ...]]) -> tuple[Edge, ...]:
    """Restricted edges the trace really called (a call not refused by the restriction stub)."""
    found: dict[Edge, None] = {}
    for step in trace.steps:
        if step.action is not Action.CALL_TOOL or not step.tool or not step.agent:
            continue
        error = step.error or ""
        if error == RESTRICTED_CALL or error.startswith(TOOL_NOT_FOUND):
            continue
        for e in index.get((step.agent, step.tool), ()):
            found.setdefault(e, None)
    return tuple(found)


def mutation_analysis(
    m: Manifest,
    tests: Sequence[tuple[str, str, Iterable[str]]],
    run: Callable[[Any, str, int], Trace],
    *,
    agent: Any = None,
    mutants: Iterable[StructuralMutant] | None = None,
    seed: int = 0,
) -> MutationReport:
    """Run a structural test suite against every structural mutant and report which it detects.

    ``tests``: ``(name, input_text, objective_ids)``, e.g. ``("baggage", "How much baggage can I
    bring?", ["Delegate(triage_agent, faq_agent)", "UseTool(faq_agent, faq_lookup_tool)"])``.
    ``run(entry, input_text, seed) -> Trace`` executes one trial; ``entry`` is the (mutated) SDK
    entry agent when ``agent`` is given (mutants applied with ``apply_to_agents``), otherwise the
    (mutated) ``Manifest`` (``apply_to_manifest``), for runtimes that execute a manifest.

    Test ``i`` runs with seed ``seed + i`` on the original and on every mutant. A trial that fails
    (``AgentRunError``, whose partial trace is kept, or a trace with ``error`` set) witnesses none
    of its objectives; on a mutant, any other non-transient exception from ``run`` is such a failed
    trial too (the harness could not run the mutated workflow), while on the original it propagates. A mutant is *killed* when some test's set of witnessed objectives differs
    from the original's, or when a trace shows a real (not refused) call on an edge the original
    manifest restricts and the original run of that test did not. Observations always map names
    through the *original* manifest. Mutants that cannot be applied are reported ``invalid`` and
    left out of the score (killed / applicable).
    """
    suite = [
        (str(name), str(text), tuple(parse_objective(x) for x in ids), seed + i)
        for i, (name, text, ids) in enumerate(tests)
    ]
    restricted = _restriction_index(m)

    def trial(
        subject: Any, text: str, s: int, wanted: tuple[Objective, ...], *, mutated: bool
    ) -> BaselineRun:
        try:
            trace = run(subject, text, s)
            error = trace.error
        except AgentRunError as exc:
            trace = exc.trace if exc.trace is not None else Trace(error=describe_exception(exc))
            error = trace.error or describe_exception(exc)
        except Exception as exc:
            # the harness could not run the mutated workflow at all (e.g. a probe naming an agent
            # the mutant made unreachable): a failed trial. On the original, or when transient, raise.
            if not mutated or is_transient(exc):
                raise
            trace = Trace(error=describe_exception(exc))
            error = trace.error
        if error is None:
            obs = observe(trace, m)
            witnessed = tuple(q.id for q in wanted if obs.witnesses(q))
        else:
            witnessed = ()
        return BaselineRun("", s, tuple(q.id for q in wanted), witnessed, error, _broken(trace, restricted))

    baselines = tuple(
        replace(trial(agent if agent is not None else m, text, s, wanted, mutated=False), name=name)
        for name, text, wanted, s in suite
    )
    results: list[MutantResult] = []
    for mutant in structural_mutants(m) if mutants is None else mutants:
        try:
            subject = apply_to_agents(agent, m, mutant) if agent is not None else apply_to_manifest(m, mutant)
        except ValueError as exc:
            results.append(MutantResult(mutant, error=str(exc)))
            continue
        kills: list[tuple[str, str]] = []
        for (name, text, wanted, s), base in zip(suite, baselines, strict=True):
            got = trial(subject, text, s, wanted, mutated=True)
            reasons = []
            lost = [q for q in base.witnessed if q not in got.witnessed]
            gained = [q for q in got.witnessed if q not in base.witnessed]
            if lost:
                reasons.append("no longer witnesses " + ", ".join(lost))
            if gained:
                reasons.append("now witnesses " + ", ".join(gained))
            if (lost or gained) and got.error is not None and base.error is None:
                reasons.append(f"the run failed: {got.error}")
            new_broken = [e for e in got.broken if e not in base.broken]
            if new_broken:
                reasons.append(
                    "real call on restricted edge " + ", ".join(f"{a} → {t}" for a, t in new_broken)
                )
            if reasons:
                kills.append((name, "; ".join(reasons)))
        results.append(MutantResult(mutant, tuple(kills)))
    return MutationReport(m.system, baselines, tuple(results))
