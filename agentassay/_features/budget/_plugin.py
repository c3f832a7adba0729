"""The budget cap (``config.budget_usd``): no trial starts once the finished ones cost the budget.

Trials in flight when the budget is reached still finish (they are paid for) and are kept. The cap
is the run's: the proxy model's trials count against the same budget as the target's. Scenarios
left undecided are inconclusive, and a note says so.

Prices (issue 25): ``config.prices``, else the maintained table (``_runner/_cost.py``), so a budget works with
no configuration for a known model. A model nothing prices is named plainly: before the first trial when the
suite names it (exit 3), else at the first trial that reports it (no new trial starts: a budget that cannot
count would not cap anything). The offline simulator costs $0, and a note says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._runner._cost import OFFLINE, OFFLINE_NOTE, price_source, unpriced_message
from ..._runner._run import adapter_model
from ..._spec import SpecError
from ._settings import BudgetSettings

if TYPE_CHECKING:
    from ..._results import TrialOutcome
    from ..._runner import Run
    from ..._runner._run import Phase
    from ..._traces import Trace

NAME = "budget"
SPENT = StashKey[float]()  # USD of the run's finished trials, every phase
UNPRICED = StashKey[str]()  # the first model no price applies to (named once)
BUDGET_WHY = "the budget cannot count what its trials cost"


@hookimpl
def agentassay_prepare(run: Run) -> None:
    """Before the first trial: the offline simulator's note, or the suite's model that nothing prices (exit 3)."""
    budget = run.settings.of(BudgetSettings).usd
    if budget is None or run.adapter is None:
        return
    model = adapter_model(run.adapter)
    provider, name = model.get("provider"), model.get("name")
    source = price_source(name if isinstance(name, str) else None, provider, run.settings.prices)
    if source is not None and source.kind == OFFLINE:  # not when config.prices prices the simulator
        run.note(f"budget: {OFFLINE_NOTE}, so config.budget_usd (${budget:g}) is never reached")
        return
    named = isinstance(name, str) and name and not name.endswith(":default")  # "openai:default": the SDK's own
    if named and source is None:
        path = str(run.suite.path) if run.suite.path is not None else None
        raise SpecError(unpriced_message(name, provider, BUDGET_WHY), file=path, key="config.budget_usd")


@hookimpl
def agentassay_trial_finished(run: Run, phase: Phase, outcome: TrialOutcome, trace: Trace) -> None:
    budget = run.settings.of(BudgetSettings).usd
    if budget is None:
        return
    if outcome.usd is None and outcome.input_tokens + outcome.output_tokens > 0 and UNPRICED not in run.stash:
        provider = phase.provider
        if provider != OFFLINE:
            model = trace.metadata.model or "(not reported by the trace)"
            run.stash[UNPRICED] = model
            run.note(f"stopped at the budget's first unpriced trial (config.budget_usd): {unpriced_message(model, provider, BUDGET_WHY)}")
            run.hold(f"the budget: model '{model}' has no price")
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
