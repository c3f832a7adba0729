"""The gate: which test each scenario gets, and how verdicts become deploy / block / manual."""

from ._designs import sequential_design
from ._evidence import Candidate, Evidence, GatePlan, ScenarioTest
from ._monitors import (
    Monitor,
    Prior,
    RegressionFixed,
    RegressionSequential,
    ScenarioVerdict,
    Start,
    ThresholdFixed,
    ThresholdSPRT,
    explain_fail,
    replay,
)
from ._plan import (
    BaselineCounts,
    SuiteDecision,
    decide,
    fixed_n_equivalent,
    monitor_for,
    scenario_alpha,
)

__all__ = [
    "BaselineCounts",
    "Candidate",
    "Evidence",
    "GatePlan",
    "Monitor",
    "Prior",
    "RegressionFixed",
    "RegressionSequential",
    "ScenarioTest",
    "ScenarioVerdict",
    "Start",
    "SuiteDecision",
    "ThresholdFixed",
    "ThresholdSPRT",
    "decide",
    "explain_fail",
    "fixed_n_equivalent",
    "monitor_for",
    "replay",
    "scenario_alpha",
    "sequential_design",
]
