"""Regression verdicts from two results files, without calling the agent (trace-first, Def. 7.6).

The candidate's outcomes are replayed in trial order through the very test ``check`` runs
live (same settings, same design), so ``compare`` of the two files ``check`` used reaches the
verdicts ``check`` reached.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from .._gate import Candidate, GatePlan, decide, fixed_n_equivalent, monitor_for, replay
from .._plugins import default_plugins
from .._spec import Scenario
from ._model import Results
from ._more import with_more_trials

if TYPE_CHECKING:
    from .._plugins import Plugins


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


def compare_results(base: Results, cand: Results, *, plugins: Plugins | None = None) -> Results:
    """``cand``'s verdicts re-derived against ``base``: the plan and the evidence from the plugins
    (``agentassay_plan``, ``agentassay_scenario_evidence``; default: the built-ins the files need and
    the installed ones), the pass-rate tests replayed in trial order."""

    settings = cand.settings
    counts = base.baseline_counts()
    names = tuple(s.name for s in cand.scenarios)
    m = len(names)
    sections = dict(cand.sections)
    plan = GatePlan(settings, names, baseline=base, sections=sections)
    hooks = (plugins or default_plugins()).for_plan(plan)
    hooks.call("agentassay_plan", plan=plan)
    verdicts = {}
    fixed_n = {}
    for s in cand.scenarios:
        scenario = Scenario(s.name, s.input, threshold=s.threshold)
        level = {"scenarios": m, "baseline": counts.get(s.name), "regression": True}
        verdicts[s.name] = replay(
            monitor_for(scenario, settings, **level, share=plan.taken(s.name)), s.outcomes
        )
        fixed_n[s.name] = fixed_n_equivalent(scenario, settings, **level)
    candidate = Candidate({s.name: s.trials for s in cand.scenarios}, sections)
    evidence = [
        e
        for found in hooks.call("agentassay_scenario_evidence", plan=plan, candidate=candidate)
        for e in found
    ]
    final, decision = decide(verdicts, settings, evidence=evidence)
    made: list[str] = []  # a plugin's gate, as `check` applied it
    decision = hooks.chain("agentassay_decide_files", "decision", decision, plan=plan, candidate=candidate, notes=made)
    notes = baseline_notes(base, list(names), cand.suite.get("name"))
    notes += [n for n in made if n not in cand.notes]
    dropped = [s.name for s in base.scenarios if cand.scenario(s.name) is None]
    if dropped:
        notes.append(f"in the baseline but not in the candidate: {', '.join(dropped)}")
    notes += [f.note() for f in hooks.failures]
    scenarios = with_more_trials(
        [
            replace(
                s,
                verdict=final[s.name],
                baseline=counts.get(s.name),
                fixed_n=fixed_n[s.name],
            )
            for s in cand.scenarios
        ],
        settings,
    )
    out_sections = dict(cand.sections)
    for made_here in hooks.call("agentassay_compare_sections", baseline=base, candidate=cand):
        for key, value in made_here.items():
            if value is None:
                out_sections.pop(key, None)
            else:
                out_sections[key] = value
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return replace(
        cand,
        kind="compare",
        scenarios=scenarios,
        decision=decision,
        started_at=now,
        finished_at=now,
        notes=(*cand.notes, *notes),
        sections=out_sections,
    )
