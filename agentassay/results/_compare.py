"""Regression verdicts from two results files, without calling the agent (trace-first, Def. 7.6).

The candidate's outcomes are replayed in trial order through the very test ``check`` runs
live (same settings, same design), so ``compare`` of the two files ``check`` used reaches the
verdicts ``check`` reached.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from ..gate import decide, fixed_n_equivalent, monitor_for, replay
from ..spec import Scenario
from ._model import Results


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
    verdicts = {}
    fixed_n = {}
    for s in cand.scenarios:
        scenario = Scenario(s.name, s.input, threshold=s.threshold)
        plan = {"scenarios": m, "baseline": counts.get(s.name), "regression": True}
        verdicts[s.name] = replay(monitor_for(scenario, settings, **plan), s.outcomes)
        fixed_n[s.name] = fixed_n_equivalent(scenario, settings, **plan)
    final, decision = decide(verdicts, settings)
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

