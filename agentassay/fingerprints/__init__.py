"""Behavioural fingerprints: what each run *did*, as numbers, and a test of whether that shifted.

``extract`` / ``extract_pair`` turn traces into a named feature matrix (paper Def. 7.1);
``fingerprint_test`` compares two such matrices with a calibrated permutation test and names the
features that moved, so a regression in *how* the agent works is caught even when its pass rate
holds. Calibration and power are measured in ``benchmarks/fingerprints.py``.
"""

from ._extract import FingerprintMatrix, extract, extract_pair, feature_names
from ._test import METHODS, FeatureShift, FingerprintResult, fingerprint_test, phrase

__all__ = [
    "METHODS",
    "FeatureShift",
    "FingerprintMatrix",
    "FingerprintResult",
    "extract",
    "extract_pair",
    "feature_names",
    "fingerprint_test",
    "phrase",
]
