"""The versioned results file written by ``run`` / ``check`` and read as a baseline."""

from ._alerts import Conditions, alerts_of, change_alerts
from ._compare import baseline_notes, compare_results
from ._merge import merge_results, shard_note, shard_slice
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
from ._untrusted import rederive_untrusted, rederive_without_baseline

__all__ = [
    "RESULTS_SCHEMA",
    "TOP_LEVEL",
    "Conditions",
    "Results",
    "ResultsError",
    "ScenarioResult",
    "TrialOutcome",
    "aborted_record",
    "alerts_of",
    "baseline_notes",
    "change_alerts",
    "check_writable",
    "compare_results",
    "keep_elsewhere",
    "load_results",
    "merge_results",
    "more_trials",
    "more_trials_text",
    "rederive_untrusted",
    "rederive_without_baseline",
    "refuse_aborted",
    "shard_note",
    "shard_slice",
    "with_more_trials",
]
