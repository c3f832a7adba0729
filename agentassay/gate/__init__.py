"""The gate: which test each scenario gets, and how verdicts become deploy / block / manual."""

from ._designs import sequential_design
from ._evidence import Candidate, Evidence, GatePlan, ScenarioTest
from ._fingerprints import FingerprintPlan, recording_sample
from ._fingerprints import plan as fingerprint_plan
from ._fingerprints import test as fingerprint_test
from ._monitors import (
    Monitor,
    RegressionFixed,
    RegressionSequential,
    ScenarioVerdict,
    ThresholdFixed,
    ThresholdSPRT,
    replay,
)
from ._plan import (
    BaselineCounts,
    FingerprintEvidence,
    SuiteDecision,
    coverage_gate,
    decide,
    fixed_n_equivalent,
    monitor_for,
    scenario_alpha,
)
from ._proxy import ProxyEvidence
from ._proxy import allocation as proxy_allocation_for

__all__ = [
    "BaselineCounts",
    "Candidate",
    "Evidence",
    "FingerprintEvidence",
    "FingerprintPlan",
    "GatePlan",
    "Monitor",
    "ProxyEvidence",
    "RegressionFixed",
    "RegressionSequential",
    "ScenarioTest",
    "ScenarioVerdict",
    "SuiteDecision",
    "ThresholdFixed",
    "ThresholdSPRT",
    "coverage_gate",
    "decide",
    "fingerprint_plan",
    "fingerprint_test",
    "fixed_n_equivalent",
    "monitor_for",
    "proxy_allocation_for",
    "recording_sample",
    "replay",
    "scenario_alpha",
    "sequential_design",
]
