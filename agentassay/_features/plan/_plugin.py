"""The estimate of a check (``plan`` section): what ``agentassay plan`` says, printed before the first trial.

Computed from the same baseline, settings, levels and samples fixed in advance as the run's tests
(``run.plan``), once every plan is applied and before any trial (``agentassay_start``): the person watching
a check, or an Action's log, reads what it is about to spend before it spends it, and the PR comment sets
the same figures beside what the check used. It is evidence for the reader only: it never costs the run its
verdicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._runner._run import adapter_model
from ._estimate import Plan, estimate

if TYPE_CHECKING:
    from ..._runner import Run

NAME = "plan"
ESTIMATE = StashKey[Plan]()


@hookimpl
def agentassay_start(run: Run) -> None:
    if run.baseline is None:
        return
    names = [s.name for s in run.scenarios]
    try:
        plan = estimate(
            run.scenarios,
            run.target_settings,
            baseline=run.baseline,
            model=adapter_model(run.adapter),
            shares={n: run.plan.taken(n) for n in names},
            min_trials={n: run.plan.min_trials(n) for n in names},
            m=run.m,
        )
    except Exception as exc:  # an estimate is for the reader: never let it cost the run its results
        run.note(f"plan: the estimate could not be computed ({type(exc).__name__}: {exc})")
        return
    run.stash[ESTIMATE] = plan
    run.say(f"estimate (agentassay plan): {plan.summary()}")


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    plan = run.stash.get(ESTIMATE, None)
    if plan is None:
        return None
    # Per scenario only (no totals, no notes): the shards of a check merge it key by key (agentassay merge).
    section = {k: v for k, v in plan.to_dict().items() if k not in ("total", "notes")}
    return {"plan": section}
