"""Behavioural fingerprints: what each run *did*, as numbers, and a test of whether that shifted.

``extract`` / ``extract_pair`` turn traces into a named feature matrix (paper Def. 7.1);
``fingerprint_test`` compares two such matrices with a calibrated permutation test and names the
features that moved, so a regression in *how* the agent works is caught even when its pass rate
holds; ``plan_budget`` sizes that test from the baseline's own trials (Sec. 7.2). Calibration and
power are measured in ``benchmarks/fingerprints.py`` and ``benchmarks/budget.py``.
"""

from ._budget import BudgetPlan, plan_budget, planned_power
from ._extract import FingerprintMatrix, extract, extract_pair, feature_names, fingerprint_of, from_records
from ._test import METHODS, FeatureShift, FingerprintResult, fingerprint_test, phrase, rank_shifts

__all__ = [
    "METHODS",
    "BudgetPlan",
    "FeatureShift",
    "FingerprintMatrix",
    "FingerprintResult",
    "extract",
    "extract_pair",
    "feature_names",
    "fingerprint_of",
    "fingerprint_test",
    "from_records",
    "phrase",
    "plan_budget",
    "planned_power",
    "rank_shifts",
]
