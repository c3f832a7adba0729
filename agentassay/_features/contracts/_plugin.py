"""Behavioural contracts in the gate (docs/contracts.md): did the agent keep its preconditions, postconditions and invariants?

Plan: every scenario with contracts holds ``SHARE`` (0.15) of its alpha for them — fingerprints hold
0.5 and metamorphic relations 0.2 where they apply, the pass-rate test keeps the rest. ``run`` reserves
it in ``configure`` (the plan hook of a recording cannot see the suite); ``check``, ``compare`` and
``merge`` reserve it in ``plan`` for the scenarios whose *baseline* section has contracts, so the level
depends on the files alone.

Evidence, per contract, from the results sections only (so ``compare`` re-derives it): in ``run`` the
exact one-sided binomial test of "rate >= p - delta"; in ``check`` the regression test of its
satisfaction count against the baseline's, as for a pass rate (a contract the baseline lacks falls
back to the binomial test). A scenario's contracts are combined by Bonferroni (``min(1, c * min p)``),
and the gate applies Holm across scenarios at ``alpha * SHARE``: a rejection is a FAIL quoting the
violating step.

Hooks: ``configure`` (compile every contract: a bad one is exit 3), ``plan``, ``prepare`` (tool and
agent names against the loaded agent), ``trial_finished`` (the target's traces, per trace with the
function ``analyze`` uses), ``results_sections`` (``contracts``), ``scenario_evidence`` and
``report_sections``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._config_check import closest, did_you_mean
from ..._gate import ScenarioTest
from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._reports import Section
from ..._spec import Settings, SpecError
from . import (
    ROOTS,
    Contract,
    Tally,
    Violation,
    binomial_pvalue,
    bonferroni,
    counted,
    lower_bound,
    oracle_verdict,
    record,
    regression,
    suite_contracts,
)

if TYPE_CHECKING:
    from ..._gate import GatePlan, ScenarioTest
    from ..._reports import ReportContext, Section
    from ..._results import Results, TrialOutcome
    from ..._runner import Phase, Run, ScenarioState
    from ..._traces import Trace

NAME = KIND = "contracts"
# What a contract's entry holds before statistics (agentassay._features.contracts.record): the evidence is re-derived from these.
RECORD = ("name", "kind", "text", "scope", "p", "delta", "trials", "satisfied", "violations")
SHARE = 0.15  # of each scenario's alpha, held by its contracts (fingerprints 0.5, metamorphic relations 0.2)

__all__ = ["KIND", "NAME", "RECORD", "SHARE", "assess", "level_of", "words"]


@dataclass
class _State:
    contracts: dict[str, tuple[Contract, ...]]
    tallies: dict[str, dict[str, Tally]]
    # (scenario, trial index) -> each contract's violation (or None), computed in the trial's check thread under
    # its time limit (agentassay_trial_checks) and tallied when the trial is recorded (agentassay_trial_finished).
    checked: dict[tuple[str, int], list[Any]] = field(default_factory=dict)


STATE = StashKey[_State]()  # this plugin's state for one run


# -- statistics of a section (also what compare re-derives) -------------------------------------------


def level_of(settings: Settings, contracts: int) -> float:
    """What one contract of a scenario with ``contracts`` contracts is tested at: ``alpha * SHARE / c``."""
    return settings.alpha * SHARE / max(contracts, 1)


def assess(
    entries: Sequence[Mapping[str, Any]], baseline: Mapping[str, Mapping[str, Any]] | None, settings: Settings
) -> list[dict[str, Any]]:
    """Each contract record with its statistics: rate, lower bound, oracle verdict, the p-value the gate uses.

    ``baseline``: the baseline's records of this scenario by name (``check``); a contract is tested for
    regression when the baseline has one of the same name and text with trials, else by the binomial test.
    """
    level = level_of(settings, len(entries))
    out = []
    for stored in entries:
        e = {k: stored[k] for k in RECORD if k in stored}  # the counts, never statistics a file already holds
        k, n = int(e["satisfied"]), int(e["trials"])
        bound = round(float(e["p"]) - float(e["delta"]), 12)  # 0.8, not 0.7999999999999999
        stats: dict[str, Any] = {
            "rate": k / n if n else None,
            "bound": bound,
            "level": level,
            "lower_bound": lower_bound(k, n, settings.alpha),
            "verdict": oracle_verdict(k, n, bound, alpha=settings.alpha, level=level),
        }
        b = (baseline or {}).get(str(e["name"]))
        if b is not None and b.get("text") == e.get("text") and int(b.get("trials", 0)) > 0 and n > 0:
            bk, bn = int(b["satisfied"]), int(b["trials"])
            p, verdict = regression(bk, bn, k, n, level=level, beta=settings.beta, delta=settings.margin)
            stats |= {
                "baseline": {"trials": bn, "satisfied": bk},
                "test": "regression",
                "pvalue": p,
                "regression": verdict,
            }
        else:
            stats |= {"test": "binomial", "pvalue": binomial_pvalue(k, n, bound)}
        out.append({**e, **stats})
    return out


def _by_name(section: Mapping[str, Any] | None, scenario: str) -> dict[str, Mapping[str, Any]] | None:
    if not section:
        return None
    entries = (section.get("scenarios") or {}).get(scenario, {}).get("contracts") or []
    return {str(e["name"]): e for e in entries}


def baseline_scenarios(baseline: Results) -> list[str]:
    """Scenarios whose baseline section has contracts: those ``check`` and ``compare`` test."""
    section = baseline.sections.get(KIND) or {}
    return [name for name, s in (section.get("scenarios") or {}).items() if s.get("contracts")]


def words(entry: Mapping[str, Any]) -> str:
    """A failing contract in one sentence, the first violation quoted."""
    n, k = int(entry["trials"]), int(entry["satisfied"])
    text = (
        f"contract '{entry['name']}' violated in {n - k}/{n} trials ({(n - k) / n:.0%})"
        if n
        else f"contract '{entry['name']}'"
    )
    base = entry.get("baseline")
    if base:
        bn, bk = int(base["trials"]), int(base["satisfied"])
        text += f" against {bn - bk}/{bn} in the baseline"
    examples = entry.get("violations") or []
    if examples:
        text += f"; first: {examples[0]['text']}"
    return text


# -- hooks ---------------------------------------------------------------------------------------------


@hookimpl
def agentassay_configure(run: Run) -> None:
    contracts = suite_contracts(run.suite, search=run.search)
    run.stash[STATE] = _State(
        contracts, {name: {c.name: Tally() for c in cs} for name, cs in contracts.items() if cs}
    )
    if run.baseline is None:  # recording: the plan hook cannot see the suite, so reserve the share here
        for name, cs in contracts.items():
            if cs:
                run.plan.share(name, KIND, SHARE)


@hookimpl
def agentassay_plan(plan: GatePlan) -> None:
    if (
        plan.baseline is None
    ):  # re-deriving a recording from its file (merge of run shards): as the run reserved
        section = plan.sections.get(KIND) or {}
        for name, s in (section.get("scenarios") or {}).items():
            if s.get("gated") and name in plan.names:
                plan.share(name, KIND, SHARE)
        return
    for name in baseline_scenarios(plan.baseline):
        if name in plan.names:
            plan.share(name, KIND, SHARE)


@hookimpl
def agentassay_prepare(run: Run) -> None:
    """Tool and agent names against the loaded agent: a misspelt one would make a contract that never applies."""
    state: _State | None = run.stash.get(STATE, None)
    if state is None or run.adapter is None:
        return
    try:
        tools = {t.name for t in run.adapter.tools()}
        agents = {
            str(a.get("name")) for a in (run.adapter.config().get("agents") or []) if isinstance(a, Mapping)
        }
    except Exception:  # an agent that cannot describe itself: nothing to check against
        return
    seen: set[tuple[str, str]] = set()
    for cs in state.contracts.values():
        for c in cs:
            if (c.key, c.name) in seen:
                continue
            seen.add((c.key, c.name))
            for what, names, have in (("tool", c.tools, tools), ("agent", c.agents, agents)):
                missing = sorted(names - have) if have else []
                if missing:
                    raise _unknown(c, what, missing[0], have)


def _unknown(c: Contract, what: str, name: str, have: set[str]) -> SpecError:

    valid = sorted(have) + (list(ROOTS) if what == "tool" and c.kind == "require" else [])
    near = closest(name, valid)
    hint = did_you_mean(near)
    owner = "the agent's tools" if what == "tool" else "the workflow's agents"
    return SpecError(
        f"contract {c.name!r} names the {what} {name!r}, which is not among {owner} ({', '.join(sorted(have))}), so "
        f"it could never apply.{hint}",
        file=c.file,
        line=c.line,
        key=f"{c.key}.{c.kind}",
        suggestion=near,
    )


@hookimpl
def agentassay_trial_checks(run: Run, phase: Phase, state: ScenarioState, index: int, trace: Trace) -> None:
    """Evaluate the scenario's contracts on this trace, in the trial's check thread and under its time limit."""
    mine: _State | None = run.stash.get(STATE, None)
    if mine is None or phase.name != "target" or not counted(trace, run.suite):
        return
    name = state.scenario.name
    if mine.tallies.get(name):
        mine.checked[(name, index)] = [c.evaluate(state.scenario.input, trace) for c in mine.contracts[name]]


@hookimpl
def agentassay_trial_finished(
    run: Run, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace
) -> None:
    mine: _State | None = run.stash.get(STATE, None)
    if mine is None or phase.name != "target" or not counted(trace, run.suite):
        return
    name = state.scenario.name
    tallies = mine.tallies.get(name)
    if not tallies:
        return
    found = mine.checked.pop((name, outcome.index), None)
    if found is None:  # the trial's checks were abandoned at its time limit (or ran without the engine's hook)
        found = [
            Violation("trace", f"{c.kind} was not evaluated: {trace.error}")
            if trace.error
            else c.evaluate(state.scenario.input, trace)
            for c in mine.contracts[name]
        ]
    for c, violation in zip(mine.contracts[name], found, strict=True):
        tallies[c.name].add(outcome.index, violation)


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None:
        return None
    base = run.baseline.sections.get(KIND) if run.baseline is not None else None
    scenarios = {}
    for sc in run.scenarios:
        cs = state.contracts.get(sc.name) or ()
        if not cs:
            continue
        records = [record(c, state.tallies[sc.name][c.name]) for c in cs]
        entries = assess(records, _by_name(base, sc.name), run.settings)
        scenarios[sc.name] = {
            "gated": bool(run.plan.shares.get(sc.name, {}).get(KIND)),
            "level": level_of(run.settings, len(cs)),
            "contracts": entries,
        }
    if not scenarios:
        return None
    if run.baseline is not None:
        untested = [n for n, s in scenarios.items() if not s["gated"]]
        if untested:
            run.note(
                f"contracts of {', '.join(untested)} are reported but not tested by the gate: the baseline has no "
                "contracts for them (record it again with this suite)"
            )
    return {KIND: {"share": SHARE, "mode": run.role, "scenarios": scenarios}}


@hookimpl
def agentassay_scenario_evidence(plan: GatePlan, candidate: Any) -> list[ScenarioTest] | None:

    section = candidate.sections.get(KIND)
    if not section:
        return None
    base = plan.baseline.sections.get(KIND) if plan.baseline is not None else None
    pvalues: dict[str, float] = {}
    details: dict[str, dict[str, Any]] = {}
    describe: dict[str, str] = {}
    for name, s in (section.get("scenarios") or {}).items():
        raw = s.get("contracts") or []
        if not raw or not plan.shares.get(name, {}).get(KIND):
            continue
        entries = assess(raw, _by_name(base, name), plan.settings)
        pvalues[name] = bonferroni(e["pvalue"] for e in entries)
        worst = min(entries, key=lambda e: e["pvalue"])
        describe[name] = words(worst)
        details[name] = {
            "contracts": {
                e["name"]: {
                    k: e.get(k)
                    for k in ("test", "pvalue", "satisfied", "trials", "baseline")
                    if e.get(k) is not None
                }
                for e in entries
            },
            "bonferroni": len(entries),
        }
    if not pvalues:
        return None
    return [ScenarioTest(KIND, SHARE, pvalues, details=details, describe=describe)]


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:

    section = results.sections.get(KIND)
    if not section or not section.get("scenarios"):
        return None
    gate = {s.name: (s.verdict.evidence or {}).get(KIND) for s in results.scenarios}
    failed = [n for n, e in gate.items() if isinstance(e, Mapping) and e.get("verdict") == "fail"]
    rows: list[tuple[int, str]] = []
    kept: dict[str, list[str]] = {}  # satisfied and not regressed: one line for all of them
    total = 0
    for scenario, s in section["scenarios"].items():
        for e in s.get("contracts") or []:
            total += 1
            rank = _rank(e)
            if rank == _FINE:
                kept.setdefault(str(e["name"]), []).append(scenario)
            else:
                rows.append((rank, f"{scenario} · {_line(e)}"))
    rows.sort(key=lambda r: r[0])
    items = [r for _, r in rows]
    if kept:
        items.append(
            "satisfied: " + "; ".join(f"{name} ({', '.join(where)})" for name, where in kept.items())
        )
    n_sc = len(section["scenarios"])
    lead = f"{total} contract{'s' if total != 1 else ''} on {n_sc} scenario{'s' if n_sc != 1 else ''}, "
    lead += f"tested at alpha × {section.get('share', SHARE)}"
    lead += f"; FAIL in {', '.join(failed)}." if failed else "; none failed the gate."
    return [Section(key=KIND, title="Contracts", paragraphs=(lead,), items=tuple(items), noun="contracts")]


_FINE = 9


def _rank(e: Mapping[str, Any]) -> int:
    """Failing first, then violated, inconclusive, untested; ``_FINE`` for satisfied and not regressed."""
    regression = e.get("regression")
    if regression == "fail" or (e.get("test") == "binomial" and e.get("verdict") == "violated"):
        return 0
    verdict = str(e.get("verdict"))
    if verdict == "satisfied" and regression in (None, "pass"):
        return _FINE
    return {"violated": 1, "inconclusive": 2, "no trials": 3}.get(verdict, 4)


def _line(e: Mapping[str, Any]) -> str:
    """One contract in one line: verdict, counts, bound, baseline and regression, the first violation."""
    n, k = int(e.get("trials", 0)), int(e.get("satisfied", 0))
    text = f"{e['name']}: {str(e.get('verdict', '')).upper()}, satisfied {k}/{n}"
    if n:
        text += f" ({k / n:.0%}; lower bound {float(e.get('lower_bound', 0.0)):.3f} vs p − δ = {float(e.get('bound', 0.0)):.2f})"
    if e["name"] != e.get("text"):
        text += f" [{e.get('text')}]"
    base = e.get("baseline")
    if base:
        text += (
            f"; baseline {base['satisfied']}/{base['trials']}, regression {str(e.get('regression', '')).upper()} "
            f"(p = {float(e['pvalue']):.3g})"
        )
    examples = e.get("violations") or []
    if examples:
        text += f"; e.g. {examples[0]['text']}"
    return text
