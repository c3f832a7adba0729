"""The budget cap (``config.budget_usd``): no trial starts once the finished ones cost the budget.

Trials in flight when the budget is reached still finish (they are paid for) and are kept. The cap
is the run's: the proxy model's trials count against the same budget as the target's. Scenarios
left undecided are inconclusive, and a note says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ._settings import BudgetSettings

if TYPE_CHECKING:
    from ..._results import TrialOutcome
    from ..._runner import Run

NAME = "budget"
SPENT = StashKey[float]()  # USD of the run's finished trials, every phase


@hookimpl
def agentassay_trial_finished(run: Run, outcome: TrialOutcome) -> None:
    budget = run.settings.of(BudgetSettings).usd
    if budget is None:
        return
    spent = run.stash[SPENT] = run.stash.get(SPENT, 0.0) + (outcome.usd or 0.0)
    if spent >= budget:
        run.hold(f"the budget: ${spent:.4f} of ${budget:g} spent")


@hookimpl
def agentassay_after_trials(run: Run) -> None:
    budget = run.settings.of(BudgetSettings).usd
    spent = run.stash.get(SPENT, 0.0)
    if budget is None or spent < budget or not any(st.wants_more(run.full) for st in run.states.values()):
        return
    run.note(
        f"stopped at the budget: the finished trials cost ${spent:.4f} of the ${budget:g} allowed "
        "(config.budget_usd); undecided scenarios are inconclusive"
    )
