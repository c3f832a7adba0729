"""Behavioural fingerprints in the gate (docs/token-efficiency.md): did *how* the agent works shift?

Plan: from the baseline's own fingerprints each scenario gets a sample size fixed in advance (the
adaptive budget) and half of its alpha (``SHARE``); recording a baseline keeps a fingerprint sample
too. Evidence: the max-T permutation test of the candidate's first ``n`` trials against the
baseline's, Holm across scenarios, a FAIL naming the features that moved (_features/fingerprints/_gate.py).
Used by ``check`` and, from the files alone, by ``compare`` and ``merge``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..._gate import GatePlan
from ..._plugins._hookspecs import hookimpl
from ._gate import SHARE, FingerprintEvidence, FingerprintPlan, recording_sample
from ._gate import plan as fingerprint_plan
from ._gate import test as fingerprint_test
from ._records import SAMPLE_KEY, fingerprint_sample, first_fingerprints, trial_data
from ._report import report_parts

if TYPE_CHECKING:
    from ..._reports import ReportContext, ScenarioPart, Section
    from ..._results import Results, TrialOutcome
    from ..._spec import Settings
    from ..._traces import Trace
    from . import FingerprintResult

KIND = "fingerprints"

Plans = dict[str, tuple[list[dict[str, float]], FingerprintPlan]]


def fingerprint_plans(base: Results, names: Sequence[str], settings: Settings) -> Plans:
    """Per scenario: the baseline's fingerprint sample and the candidate's planned sample size."""
    out = {}
    for name in names:
        s = base.scenario(name)
        if s is None:
            continue
        records = fingerprint_sample(s)
        p = fingerprint_plan(records, settings, scenarios=len(names))
        if p is not None:
            out[name] = (records, p)
    return out


def fingerprint_outcomes(
    plans: Plans, trials: dict[str, Iterable[TrialOutcome]], settings: Settings
) -> dict[str, tuple[FingerprintResult | None, FingerprintPlan]]:
    """Run each planned fingerprint test on the candidate's first ``plan.trials`` trials."""
    return {
        name: (fingerprint_test(records, first_fingerprints(trials.get(name, ()), p.trials), settings, scenario=name), p)
        for name, (records, p) in plans.items()
    }


@hookimpl
def agentassay_plan(plan: GatePlan) -> None:
    if plan.baseline is None:  # recording: keep a fingerprint sample for later checks
        n = recording_sample(plan.settings, full=plan.full)
        for name in plan.names:
            if n:
                plan.require(name, KIND, n)
        return
    plans = plan.scratch[KIND] = fingerprint_plans(plan.baseline, plan.names, plan.settings)
    for name, (_, p) in plans.items():
        plan.share(name, KIND, SHARE)
        plan.require(name, KIND, p.trials)


@hookimpl
def agentassay_trial_data(trace: Trace) -> dict[str, Any] | None:
    return trial_data(trace)


@hookimpl
def agentassay_scenario_data(plan: GatePlan, scenario: str) -> dict[str, Any]:
    return {SAMPLE_KEY: plan.sample(scenario, KIND) or None}


@hookimpl
def agentassay_scenario_evidence(plan: GatePlan, candidate: Any) -> list[FingerprintEvidence] | None:
    plans: Plans = plan.scratch.get(KIND) or {}
    trials = dict(candidate.trials)
    mine = {n: p for n, p in plans.items() if n in trials}
    if plan.baseline is None or not mine:
        return None
    return [FingerprintEvidence(fingerprint_outcomes(mine, trials, plan.settings))]


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section | ScenarioPart]:

    return report_parts(results, report)
