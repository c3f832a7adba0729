"""The gate: which test each scenario gets, and how verdicts become deploy / block / manual."""

from ._designs import sequential_design
from ._monitors import (
    Monitor,
    RegressionFixed,
    RegressionSequential,
    ScenarioVerdict,
    ThresholdFixed,
    ThresholdSPRT,
    replay,
)
from ._plan import BaselineCounts, SuiteDecision, decide, fixed_n_equivalent, monitor_for, scenario_alpha

__all__ = [
    "BaselineCounts",
    "Monitor",
    "RegressionFixed",
    "RegressionSequential",
    "ScenarioVerdict",
    "SuiteDecision",
    "ThresholdFixed",
    "ThresholdSPRT",
    "decide",
    "fixed_n_equivalent",
    "monitor_for",
    "replay",
    "scenario_alpha",
    "sequential_design",
]
