"""The trace store writer: every finished trial's trace goes into the SQLite store as it finishes.

Writing on ``agentassay_trial_finished`` rather than at the end means an interrupted or crashed
run keeps every trace it paid for. Each phase files its traces under its own version (the proxy's
under ``<version>+proxy:<model>``), so the store never mixes them.

A record that cannot be written (a full disk, a locked file, text the boundary could not make
valid) is skipped, counted and named in a note — it never turns the store off for the rest of
the run, and it never costs the verdict: the store is an archive, not evidence (issue 22, defect 3).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey

if TYPE_CHECKING:
    from ..._results import TrialOutcome
    from ..._runner import Phase, Run, ScenarioState
    from ..._traces import Trace

NAME = "store"


@dataclass
class _Skipped:
    """Trial records the store could not write: how many, and the first's reason."""

    count: int = 0
    first: str | None = None


SKIPPED = StashKey[_Skipped]()


@hookimpl
def agentassay_trial_finished(run: Run, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace) -> None:
    store = run.options.store
    if store is None:
        return
    try:
        store.add(
            trace,
            run_id=run.run_id,
            suite=run.suite.name,
            scenario=state.scenario.name,
            agent_version=phase.agent_version,
            trial=outcome.index,
            input=state.scenario.input,
            passed=outcome.passed,
            data=outcome.data or None,
        )
    except (sqlite3.Error, UnicodeError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        skipped = run.stash.setdefault(SKIPPED, _Skipped())
        skipped.count += 1
        skipped.first = skipped.first or f"{state.scenario.name} trial {outcome.index}: {type(exc).__name__}: {exc}"


@hookimpl
def agentassay_after_trials(run: Run) -> None:
    skipped = run.stash.get(SKIPPED, None)
    if skipped is None:
        return
    store = run.options.store
    where = f" {store.path}" if store is not None else ""
    run.note(
        f"the trace store{where} skipped {skipped.count} trial record(s) it could not write (first: "
        f"{str(skipped.first)[:300]}); every other trial is stored and the verdict does not depend on it"
    )
