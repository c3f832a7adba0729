"""Decisions across scenarios: multiplicity corrections, suite verdict, deployment gate."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
from scipy import stats

from ._regression import RegressionResult
from ._validation import check_choice, check_closed_unit, check_open_unit
from ._verdict import Decision, Verdict

CORRECTIONS = ("holm", "bh", "none")


def adjust_pvalues(pvalues: Sequence[float], *, method: str = "holm") -> np.ndarray:
    """Adjusted p-values: Holm-Bonferroni (family-wise error) or Benjamini-Hochberg (FDR).

    Reject hypothesis ``i`` at level alpha when ``adjusted[i] <= alpha``.
    """
    check_choice("method", method, CORRECTIONS)
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError(f"pvalues must be a 1-d sequence of numbers in [0, 1]; got {pvalues!r}")
    if method == "none" or p.size == 0:
        return p.copy()
    if method == "bh":
        return stats.false_discovery_control(p, method="bh")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def correct_regressions(
    results: Sequence[RegressionResult], *, method: str = "holm"
) -> list[RegressionResult]:
    """Re-decide FAIL verdicts across scenarios with adjusted regression p-values.

    Only FAIL needs correcting: a suite FAILs when *any* scenario fails, so the family-wise
    error of FAIL grows with the number of scenarios. A suite PASSes only when *every*
    scenario shows non-inferiority, an intersection-union test whose error is already at
    most alpha without adjustment, so PASS verdicts are left alone. A FAIL whose adjusted
    p-value no longer clears alpha becomes INCONCLUSIVE.
    """
    adjusted = adjust_pvalues([r.pvalue for r in results], method=method)
    out = []
    for r, q in zip(results, adjusted, strict=True):
        if r.verdict is Verdict.FAIL and q > r.alpha:
            r = replace(r, verdict=Verdict.INCONCLUSIVE)
        out.append(r)
    return out


def suite_verdict(verdicts: Iterable[Verdict | str]) -> Verdict:
    """Paper Def. 3.11: FAIL if any scenario fails, else INCONCLUSIVE if any is, else PASS."""
    vs = [Verdict(v) for v in verdicts]
    if not vs:
        raise ValueError("verdicts must contain at least one scenario verdict; got an empty sequence")
    if Verdict.FAIL in vs:
        return Verdict.FAIL
    if Verdict.INCONCLUSIVE in vs:
        return Verdict.INCONCLUSIVE
    return Verdict.PASS


def deployment_decision(
    suite: Verdict | str, *, coverage: float | None = None, min_coverage: float = 0.0
) -> Decision:
    """Paper Eq. 26: deploy on PASS with enough coverage, block on FAIL, otherwise manual.

    ``coverage=None`` means coverage was not measured, and only the verdict counts.
    Exit codes: deploy 0, block 1, manual 2 (``Decision.exit_code``).
    """
    v = Verdict(suite)
    check_closed_unit("min_coverage", min_coverage)
    if v is Verdict.FAIL:
        return Decision.BLOCK
    if coverage is not None and check_closed_unit("coverage", coverage) < min_coverage:
        return Decision.MANUAL
    return Decision.DEPLOY if v is Verdict.PASS else Decision.MANUAL


def bonferroni_alpha(alpha: float, scenarios: int) -> float:
    """Per-scenario level for procedures without p-values (the sequential test)."""
    check_open_unit("alpha", alpha)
    if scenarios < 1:
        raise ValueError(f"scenarios must be an integer >= 1; got {scenarios}")
    return alpha / scenarios
