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


def compare_results(base: Results, cand: Results) -> Results:
    settings = cand.settings
    counts = base.baseline_counts()
    m = len(cand.scenarios)
    verdicts = {}
    for s in cand.scenarios:
        monitor = monitor_for(
            Scenario(s.name, s.input, threshold=s.threshold),
            settings,
            scenarios=m,
            baseline=counts.get(s.name),
            regression=True,
        )
        verdicts[s.name] = replay(monitor, s.outcomes)
    final, decision = decide(verdicts, settings)
    notes = []
    missing = [s.name for s in cand.scenarios if s.name not in counts]
    if missing:
        notes.append(f"not in the baseline, tested against the threshold: {', '.join(missing)}")
    dropped = [s.name for s in base.scenarios if cand.scenario(s.name) is None]
    if dropped:
        notes.append(f"in the baseline but not in the candidate: {', '.join(dropped)}")
    if base.suite.get("name") != cand.suite.get("name"):
        notes.append(f"suites differ: baseline '{base.suite.get('name')}', candidate '{cand.suite.get('name')}'")
    scenarios = tuple(
        replace(
            s,
            verdict=final[s.name],
            baseline=counts.get(s.name),
            fixed_n=fixed_n_equivalent(
                Scenario(s.name, s.input, threshold=s.threshold), settings, scenarios=m,
                baseline=counts.get(s.name), regression=True,
            ),
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

