"""The versioned results file written by ``run`` / ``check`` and read as a baseline."""

from ._compare import baseline_notes, compare_results
from ._model import (
    RESULTS_SCHEMA,
    TOP_LEVEL,
    Results,
    ResultsError,
    ScenarioResult,
    TrialOutcome,
    aborted_record,
    check_writable,
    keep_elsewhere,
    load_results,
    refuse_aborted,
)
from ._more import more_trials, more_trials_text, with_more_trials

__all__ = [
    "RESULTS_SCHEMA",
    "TOP_LEVEL",
    "Results",
    "ResultsError",
    "ScenarioResult",
    "TrialOutcome",
    "aborted_record",
    "baseline_notes",
    "check_writable",
    "compare_results",
    "keep_elsewhere",
    "load_results",
    "more_trials",
    "more_trials_text",
    "refuse_aborted",
    "with_more_trials",
]
