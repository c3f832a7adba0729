"""The versioned results file written by ``run`` / ``check`` and read as a baseline."""

from ._compare import baseline_notes, compare_results, fingerprint_outcomes, fingerprint_plans
from ._merge import merge_results, shard_note, shard_slice
from ._model import RESULTS_SCHEMA, Results, ResultsError, ScenarioResult, TrialOutcome, load_results

__all__ = [
    "RESULTS_SCHEMA",
    "Results",
    "ResultsError",
    "ScenarioResult",
    "TrialOutcome",
    "baseline_notes",
    "compare_results",
    "fingerprint_outcomes",
    "fingerprint_plans",
    "load_results",
    "merge_results",
    "shard_note",
    "shard_slice",
]
