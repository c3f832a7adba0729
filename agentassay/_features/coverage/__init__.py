"""Behavioural coverage of a test suite (paper Sec. 4): tool, path, state, boundary, model.

    from agentassay._features.coverage import behavioural_coverage, coverage_from_store

    cov = coverage_from_store(".agentassay/traces.db", tools=adapter.tools(), agent_version="v1")
    cov.overall, cov.weakest, cov.suggestion, cov.to_dict()

Shards measured apart combine exactly: ``behavioural_statistics(acc)`` of each accumulator, then
``finish_behavioural(merge_behavioural_statistics([...]))``.

Definitions, choices and their measured behaviour: docs/coverage-behavioural.md. (Structural
workflow coverage lives in ``agentassay._features.structure``.)
"""

from ._behavioural import (
    COVERAGE_SCHEMA,
    DEFAULT_LAMBDA,
    DIMENSIONS,
    STATISTICS_SCHEMA,
    BehaviouralCoverage,
    CoverageDetails,
    behavioural_accumulator,
    behavioural_coverage,
    behavioural_statistics,
    coverage_from_store,
    decision_path,
    default_state_abstraction,
    finish_behavioural,
    merge_behavioural_statistics,
    normalise_weights,
    weighted_geometric_mean,
)
from ._boundaries import DEFAULT_EPSILON, Boundary, tool_boundaries
from ._chao1 import Chao1Estimate, chao1

__all__ = [
    "COVERAGE_SCHEMA",
    "DEFAULT_EPSILON",
    "DEFAULT_LAMBDA",
    "DIMENSIONS",
    "STATISTICS_SCHEMA",
    "BehaviouralCoverage",
    "Boundary",
    "Chao1Estimate",
    "CoverageDetails",
    "behavioural_accumulator",
    "behavioural_coverage",
    "behavioural_statistics",
    "chao1",
    "coverage_from_store",
    "decision_path",
    "default_state_abstraction",
    "finish_behavioural",
    "merge_behavioural_statistics",
    "normalise_weights",
    "tool_boundaries",
    "weighted_geometric_mean",
]
