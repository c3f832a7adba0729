"""The estimate a check records (``plan`` section): what ``agentassay plan`` would have said before this run.

Computed from the same baseline, settings, levels and samples fixed in advance as the run's tests
(``run.plan``), after the trials (it reads nothing they did), so the PR comment can set it beside what the
check used. It is evidence for the reader only: it never costs the run its verdicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._runner._run import adapter_model
from ._estimate import estimate

if TYPE_CHECKING:
    from ..._runner import Run

NAME = "plan"


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    if run.baseline is None:
        return None
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
        return None
    # Per scenario only (no totals, no notes): the shards of a check merge it key by key (agentassay merge).
    section = {k: v for k, v in plan.to_dict().items() if k not in ("total", "notes")}
    return {"plan": section}
