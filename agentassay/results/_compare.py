"""Regression verdicts from two results files, without calling the agent (trace-first, Def. 7.6).

The candidate's outcomes are replayed in trial order through the very test ``check`` runs
live (same settings, same design), so ``compare`` of the two files ``check`` used reaches the
verdicts ``check`` reached.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..gate import (
    FingerprintPlan,
    ProxyEvidence,
    decide,
    fingerprint_plan,
    fingerprint_test,
    fixed_n_equivalent,
    monitor_for,
    replay,
)
from ..spec import Scenario, Settings
from ._model import Results, TrialOutcome, first_fingerprints

if TYPE_CHECKING:
    from ..fingerprints import FingerprintResult


Plans = dict[str, tuple[list[dict[str, float]], FingerprintPlan]]


def fingerprint_plans(base: Results, names: list[str], settings: Settings) -> Plans:
    """Per scenario: the baseline's fingerprint sample and the candidate's planned sample size."""
    out = {}
    for name in names:
        s = base.scenario(name)
        if s is None:
            continue
        records = s.fingerprint_sample()
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


def baseline_notes(base: Results, scenarios: list[str], suite_name: str | None) -> list[str]:
    """What a reviewer should know about how the baseline matches the candidate's suite."""
    counts = base.baseline_counts()
    notes = []
    missing = [name for name in scenarios if name not in counts]
    if missing:
        notes.append(f"not in the baseline, tested against the threshold: {', '.join(missing)}")
    if base.suite.get("name") != suite_name:
        notes.append(f"the baseline was recorded for suite '{base.suite.get('name')}', not '{suite_name}'")
    return notes


def compare_results(base: Results, cand: Results) -> Results:
    settings = cand.settings
    counts = base.baseline_counts()
    m = len(cand.scenarios)
    plans = fingerprint_plans(base, [s.name for s in cand.scenarios], settings)
    verdicts = {}
    fixed_n = {}
    for s in cand.scenarios:
        scenario = Scenario(s.name, s.input, threshold=s.threshold)
        plan = {"scenarios": m, "baseline": counts.get(s.name), "regression": True}
        monitor = monitor_for(scenario, settings, **plan, fingerprints=s.name in plans)
        verdicts[s.name] = replay(monitor, s.outcomes)
        fixed_n[s.name] = fixed_n_equivalent(scenario, settings, **plan)
    fps = fingerprint_outcomes(plans, {s.name: s.trials for s in cand.scenarios}, settings)
    final, decision = decide(verdicts, settings, fps, ProxyEvidence.from_sections(base.proxy, cand.proxy))
    notes = baseline_notes(base, [s.name for s in cand.scenarios], cand.suite.get("name"))
    dropped = [s.name for s in base.scenarios if cand.scenario(s.name) is None]
    if dropped:
        notes.append(f"in the baseline but not in the candidate: {', '.join(dropped)}")
    scenarios = tuple(
        replace(
            s,
            verdict=final[s.name],
            baseline=counts.get(s.name),
            fixed_n=fixed_n[s.name],
        )
        for s in cand.scenarios
    )
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return replace(
        cand,
        kind="compare",
        scenarios=scenarios,
        decision=decision,
        started_at=now,
        finished_at=now,
        notes=(*cand.notes, *notes),
    )

