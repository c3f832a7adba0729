"""The trace store writer: every finished trial's trace goes into the SQLite store as it finishes.

Writing on ``agentassay_trial_finished`` rather than at the end means an interrupted or crashed
run keeps every trace it paid for. Each phase files its traces under its own version (the proxy's
under ``<version>+proxy:<model>``), so the store never mixes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._hookspecs import hookimpl

if TYPE_CHECKING:
    from ..results import TrialOutcome
    from ..runner import Phase, Run, ScenarioState
    from ..traces import Trace


@hookimpl
def agentassay_trial_finished(run: Run, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace) -> None:
    store = run.options.store
    if store is None:
        return
    store.add(
        trace,
        run_id=run.run_id,
        suite=run.suite.name,
        scenario=state.scenario.name,
        agent_version=phase.agent_version,
        trial=outcome.index,
        input=state.scenario.input,
        passed=outcome.passed,
        fingerprint=outcome.fingerprint,
    )
