"""Metamorphic relations in the gate (paper Sec. 6.1, Prop. 6.1; docs/metamorphic.md).

A scenario's ``metamorphic:`` relations each transform its input into a follow-up input x' = φ(x)
(fixed when the suite is read) and check every pair of a source trial and its follow-up trial.

Paired trials: the source trials are the scenario's own target trials; after them
(``after_trials``), one phase per relation runs the follow-ups on x' for source indices
``0..k-1`` with the *same* seeds (``seed_role = run.seed_role``, same scenario name), filed in the store
under ``<version>+mr:<relation>``, with the scenario's own evaluator. ``k = min(config trials,
source trials finished)``; ``configure`` asks the plan to run those first ``k`` source trials
whatever the sequential test decided (as the fingerprint sample does), so every relation gets its
pairs. Under ``agentassay analyze`` (a replay adapter) only follow-ups that were recorded are used.

Evidence (``check``; again in ``compare`` / ``merge`` from the files): every scenario whose
*baseline* section has relations holds ``SHARE`` (0.2) of its alpha, reserved in ``plan`` before
any candidate trial. Per relation, the regression test of the candidate's non-violating pairs
against the baseline's (``agentassay._features.metamorphic.regression``); Bonferroni within a scenario, Holm
across scenarios in the gate; a rejection is a FAIL quoting the relation's violation rates. A
relation the baseline lacks (or has with another transformation or check) is reported, not tested.

Hooks: ``configure`` (every relation validated and its follow-up input built: exit 3 on a bad one),
``plan``, ``trial_finished`` (the source and follow-up trials), ``after_trials`` (the follow-up
phases), ``results_sections`` (``metamorphic``), ``scenario_evidence`` and ``report_sections``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..._gate import ThresholdFixed
from ..._limits import DEFAULT_TIMEOUT, deadline
from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._reports import Section
from ..._runner import ScenarioState, trial_seed
from . import DEFAULT_TRIALS, Side, config_trials, suite_relations
from ._stats import CI_METHOD, CONFIDENCE, KIND, SHARE, assess, by_name, scenario_test

if TYPE_CHECKING:
    from ..._gate import GatePlan, ScenarioTest
    from ..._reports import ReportContext, Section
    from ..._results import Results, TrialOutcome
    from ..._runner import Phase, Run, ScenarioState
    from ..._traces import Trace
    from . import Relation, Side

NAME = KIND
PHASE = "metamorphic:"  # phase names: "metamorphic:<relation>"
EXAMPLES = 3  # violation reasons kept per relation
_INPUT_CLIP = 300
_METHODS = {"clopper-pearson": "Clopper-Pearson", "wilson": "Wilson"}

__all__ = ["KIND", "NAME", "SHARE"]


@dataclass
class _State:
    relations: dict[str, tuple[Relation, ...]]
    trials: int  # follow-up trials per relation at most
    sources: dict[str, dict[int, Side]] = field(default_factory=dict)
    followups: dict[tuple[str, str], dict[int, Side]] = field(default_factory=dict)
    planned: dict[tuple[str, str], int] = field(default_factory=dict)  # k per (scenario, relation)


STATE = StashKey[_State]()  # this plugin's state for one run


# -- the hooks of a run --------------------------------------------------------------------------------


@hookimpl
def agentassay_configure(run: Run) -> None:

    relations = suite_relations(run.suite, search=run.search)
    configured = config_trials(run.suite)
    trials = configured if configured is not None else DEFAULT_TRIALS
    run.stash[STATE] = _State(relations, trials)
    for name in relations:  # the first k source trials run whatever the sequential test decides
        run.plan.require(name, KIND, trials)


@hookimpl
def agentassay_plan(plan: GatePlan) -> None:
    if plan.baseline is None:
        return
    section = plan.baseline.sections.get(KIND) or {}
    for name, s in (section.get("scenarios") or {}).items():
        if name in plan.names and s.get("relations"):
            plan.share(name, KIND, SHARE)


@hookimpl
def agentassay_trial_finished(
    run: Run, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace
) -> None:
    mine: _State | None = run.stash.get(STATE, None)
    name = state.scenario.name
    if mine is None or name not in mine.relations:
        return

    if phase.name == "target":
        if outcome.index < mine.trials:
            mine.sources.setdefault(name, {})[outcome.index] = Side(outcome, trace)
    elif phase.name.startswith(PHASE):
        mine.followups.setdefault((name, phase.name[len(PHASE) :]), {})[outcome.index] = Side(outcome, trace)


def _pairs(run: Run, mine: _State, relation: Relation) -> int:
    """k: the source trials 0..k-1 that finished (at most the configured trials); under a replay, only
    those whose follow-up was recorded (analyze never calls the agent)."""
    src = mine.sources.get(relation.scenario, {})
    k = 0
    while k < mine.trials and k in src:
        k += 1
    adapter = run.adapter
    if getattr(adapter, "replay", False):

        j = 0
        while j < k and adapter.has(
            relation.followup, trial_seed(run.settings.seed, run.seed_role, relation.scenario, j)
        ):  # type: ignore[union-attr]
            j += 1
        k = j
    return k


@hookimpl
def agentassay_after_trials(run: Run) -> None:
    mine: _State | None = run.stash.get(STATE, None)
    if mine is None or run.aborted or run.interrupted or run.adapter is None:
        return

    groups: dict[str, list[Relation]] = {}  # one phase per relation name, over every scenario that has it
    for sc in run.scenarios:
        for r in mine.relations.get(sc.name, ()):
            groups.setdefault(r.name, []).append(r)
    for relation, members in groups.items():
        states = {}
        for r in members:
            k = mine.planned[(r.scenario, r.name)] = _pairs(run, mine, r)
            if k <= 0 or r.scenario not in run.states:
                continue
            scenario = run.states[r.scenario].scenario
            monitor = ThresholdFixed(
                k, (), threshold=scenario.threshold or run.settings.threshold, alpha=run.settings.alpha
            )
            states[r.scenario] = ScenarioState(
                replace(scenario, input=r.followup), run.evaluators[r.scenario], monitor, k, min_trials=k
            )
        if not states:
            continue
        out = run.phase(
            f"{PHASE}{relation}",
            states,
            adapter=run.adapter,
            role=run.role,
            seed_role=run.seed_role,
            version=f"{run.version}+mr:{relation}",
            label=f"metamorphic: {relation}",
            planned=sum(st.limit for st in states.values()),
        )
        run.absorb(out, f"metamorphic relation '{relation}'")
        if run.interrupted or run.aborted:
            return


def record(relation: Relation, mine: _State, timeout: float | None = None) -> dict[str, Any]:
    """One relation's counts from its pairs: what the results file keeps and the gate tests.

    ``timeout``: each pair's check gets that long (``config.timeout``; a ``regex`` check gives up after it).
    """

    src = mine.sources.get(relation.scenario, {})
    fu = mine.followups.get((relation.scenario, relation.name), {})
    k = mine.planned.get((relation.scenario, relation.name), 0)
    pairs = violations = errors = 0
    examples: list[dict[str, Any]] = []
    for i in range(k):
        if i not in src or i not in fu:
            continue
        pairs += 1
        errors += bool(fu[i].outcome.error)
        with deadline(timeout or DEFAULT_TIMEOUT):
            reason = relation.check(src[i], fu[i])
        if reason is not None:
            violations += 1
            if len(examples) < EXAMPLES:
                examples.append({"trial": i, "reason": reason})
    usd = [s.outcome.usd for s in fu.values() if s.outcome.usd is not None]
    followup = (
        relation.followup
        if len(relation.followup) <= _INPUT_CLIP
        else relation.followup[: _INPUT_CLIP - 1] + "…"
    )
    return {
        "name": relation.name,
        "family": relation.family,
        "transform": relation.transform.to_dict(),
        "check": relation.check.to_json(),
        "input": followup,
        "planned": k,
        "pairs": pairs,
        "violations": violations,
        "errors": errors,
        "examples": examples,
        "usd": round(math.fsum(usd), 6) if usd else None,
    }


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    mine: _State | None = run.stash.get(STATE, None)
    if mine is None or not mine.planned:
        return None
    checking = run.baseline is not None
    base = run.baseline.sections.get(KIND) if run.baseline is not None else None
    scenarios: dict[str, Any] = {}
    untested: list[str] = []
    for sc in run.scenarios:
        relations = [r for r in mine.relations.get(sc.name, ()) if (sc.name, r.name) in mine.planned]
        if not relations:
            continue
        entries = assess(
            [record(r, mine, run.settings.timeout) for r in relations],
            (by_name(base, sc.name) or {}) if checking else None,
            run.settings,
        )
        untested += [f"{sc.name} · {e['name']} ({e['untested']})" for e in entries if e.get("untested")]
        scenarios[sc.name] = {"gated": bool(run.plan.shares.get(sc.name, {}).get(KIND)), "relations": entries}
    if not scenarios:
        return None
    if untested:
        run.note("metamorphic relations reported but not tested by the gate: " + "; ".join(untested))
    # Only suite-wide constants beside the scenarios, so shards' sections merge key by key (_features/shards/_merge.py).
    return {
        KIND: {
            "share": SHARE,
            "mode": run.role,
            "trials": mine.trials,
            "ci_method": CI_METHOD,
            "confidence": CONFIDENCE,
            "scenarios": scenarios,
        }
    }


@hookimpl
def agentassay_scenario_evidence(plan: GatePlan, candidate: Any) -> list[ScenarioTest] | None:
    if plan.baseline is None:
        return None
    test = scenario_test(
        plan.baseline.sections.get(KIND),
        candidate.sections.get(KIND),
        plan.settings,
        gated=lambda name: bool(plan.shares.get(name, {}).get(KIND)),
    )
    return None if test is None else [test]


# -- the report ----------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def _rates(e: Mapping[str, Any]) -> str:
    """``1/30 → 14/30 violated (3% → 47%, 95% CI 28–66%)``; without a baseline only the candidate."""
    n, v = int(e.get("pairs") or 0), int(e.get("violations") or 0)
    if n == 0:
        return "no pairs"
    ci = e.get("ci")
    interval = f", 95% CI {ci[0] * 100:.0f}–{ci[1] * 100:.0f}%" if ci else ""
    base = e.get("baseline")
    if base:
        bn, bv = int(base["pairs"]), int(base["violations"])
        return f"{bv}/{bn} → {v}/{n} violated ({_pct(bv / bn)} → {_pct(v / n)}{interval})"
    return f"{v}/{n} violated ({_pct(v / n)}{interval})"


def _word(e: Mapping[str, Any], gate: Mapping[str, Any] | None) -> str:
    """The relation's regression verdict as the gate sees it: a relation significant on its own but not
    after Holm across scenarios (the scenario's gate evidence did not reject) is not shown as FAIL."""
    verdict = str(e.get("verdict", "")).upper()
    if verdict == "FAIL" and isinstance(gate, Mapping) and gate.get("verdict") != "fail":
        return "INCONCLUSIVE (significant alone, not after Holm across scenarios)"
    return verdict


def relation_line(scenario: str, e: Mapping[str, Any], gate: Mapping[str, Any] | None = None) -> str:
    """One relation in one line: what it is, its violation rates, the regression test or why none.

    ``gate``: the scenario's ``metamorphic`` evidence in its verdict (absent in a recording)."""
    transform = e.get("transform") or {}
    t = (
        "; ".join(f"{k}: {v}" for k, v in transform.items())
        if isinstance(transform, Mapping)
        else str(transform)
    )
    check = e.get("check")
    c = "; ".join(f"{k}: {v}" for k, v in check.items()) if isinstance(check, Mapping) else str(check)
    line = f"{scenario} · {e['name']} ({e.get('family')}, {t}, {c}): {_rates(e)}"
    word = ""
    if e.get("pvalue") is not None:
        word = _word(e, gate)
        line += f" {word}, p = {float(e['pvalue']):.2g}"
    elif e.get("untested"):
        line += f"; not tested: {e['untested']}"
    examples = e.get("examples") or []
    if examples and word == "FAIL":
        line += f"; e.g. trial {examples[0]['trial']}: {examples[0]['reason']}"
    return line


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:

    section = results.sections.get(KIND)
    if not isinstance(section, Mapping) or not section.get("scenarios"):
        return None
    gate = {s.name: (s.verdict.evidence or {}).get(KIND) for s in results.scenarios}
    items = tuple(
        relation_line(name, e, gate.get(name))
        for name, s in section["scenarios"].items()
        for e in (s.get("relations") or [])
    )
    n_sc = len(section["scenarios"])
    lead = (
        f"{len(items)} relation{'s' if len(items) != 1 else ''} on {n_sc} scenario{'s' if n_sc != 1 else ''}: "
        "follow-up trials on the transformed input, paired with the source trials by seed; violation rates with "
        f"exact {section.get('confidence', CONFIDENCE):.0%} {_METHODS.get(str(section.get('ci_method')), 'Clopper-Pearson')} "
        "intervals."
    )
    if any(
        e.get("pvalue") is not None for s in section["scenarios"].values() for e in s.get("relations") or []
    ):
        failed = [n for n, g in gate.items() if isinstance(g, Mapping) and g.get("verdict") == "fail"]
        lead += (
            " Each relation's violations are tested against the baseline's as a regression (Prop. 6.1; Fisher on the "
            f"non-violating pairs), Bonferroni within a scenario, Holm across scenarios at alpha × {section.get('share', SHARE)}"
        )
        lead += f"; FAIL in {', '.join(failed)}." if failed else "; none failed the gate."
    spent = [
        float(e["usd"])
        for s in section["scenarios"].values()
        for e in s.get("relations") or []
        if e.get("usd") is not None
    ]
    extra = (("metamorphic", round(math.fsum(spent), 6)),) if spent else ()
    return [
        Section(
            key=KIND,
            title="Metamorphic relations",
            paragraphs=(lead,),
            items=items,
            noun="relations",
            extra_usd=extra,
        )
    ]
