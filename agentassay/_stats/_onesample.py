"""One-sample procedures: confidence intervals and the threshold verdict (paper Def. 3.6)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from ._validation import check_choice, check_closed_unit, check_count, check_open_unit, check_passes
from ._verdict import CODE_FAIL, CODE_INCONCLUSIVE, CODE_PASS, VERDICT_OF_CODE, Verdict

METHODS = ("clopper-pearson", "wilson", "wilsoncc")
_ALIASES = {"exact": "clopper-pearson", "clopper_pearson": "clopper-pearson"}


def _method(method: str) -> str:
    return check_choice("method", _ALIASES.get(method, method), METHODS)


def proportion_ci(
    passes: Any, trials: Any, *, confidence_level: float = 0.95, method: str = "clopper-pearson"
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval for a binomial rate, vectorised; agrees with scipy's ``proportion_ci``.

    ``method`` is ``"clopper-pearson"`` (alias ``"exact"``), ``"wilson"`` or ``"wilsoncc"``
    (Wilson with continuity correction), the names scipy uses.
    """
    method = _method(method)
    check_open_unit("confidence_level", confidence_level)
    k = np.asarray(passes, dtype=float)
    n = np.asarray(trials, dtype=float)
    a = 1.0 - confidence_level
    if method == "clopper-pearson":
        with np.errstate(invalid="ignore"):
            lo = np.where(k > 0, special.betaincinv(k, n - k + 1, a / 2), 0.0)
            hi = np.where(k < n, special.betaincinv(k + 1, n - k, 1 - a / 2), 1.0)
        return lo, hi
    z = stats.norm.isf(a / 2)
    p = k / n
    if method == "wilson":
        denom = 1 + z * z / n
        center = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        lo = np.where(k > 0, np.maximum(center - half, 0.0), 0.0)
        return lo, np.where(k < n, np.minimum(center + half, 1.0), 1.0)
    # wilsoncc: Newcombe (1998) method 4, the formula scipy implements.
    q = 1 - p
    denom = 2 * (n + z * z)
    with np.errstate(invalid="ignore"):
        lo_d = z * np.sqrt(z * z - 2 - 1 / n + 4 * p * (n * q + 1))
        hi_d = z * np.sqrt(z * z + 2 - 1 / n + 4 * p * (n * q - 1))
    lo = np.where(k > 0, (2 * n * p + z * z - 1 - lo_d) / denom, 0.0)
    hi = np.where(k < n, (2 * n * p + z * z + 1 + hi_d) / denom, 1.0)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def threshold_codes(trials: int, threshold: float, alpha: float, method: str) -> np.ndarray:
    """Verdict code for every possible pass count 0..trials (used by the exact calibration)."""
    k = np.arange(trials + 1)
    lo, hi = proportion_ci(k, trials, confidence_level=1 - alpha, method=method)
    codes = np.full(trials + 1, CODE_INCONCLUSIVE, dtype=np.int8)
    codes[lo >= threshold] = CODE_PASS
    codes[hi < threshold] = CODE_FAIL
    return codes


@dataclass(frozen=True)
class ThresholdResult:
    """Verdict of one agent's pass rate against a required threshold (paper Def. 3.6)."""

    verdict: Verdict
    passes: int
    trials: int
    pass_rate: float
    ci_low: float
    ci_high: float
    confidence_level: float
    threshold: float
    method: str

    @property
    def confidence_interval(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    def explain(self) -> str:
        ci = f"{self.confidence_level:.0%} {self.method} interval [{self.ci_low:.3f}, {self.ci_high:.3f}]"
        rate = f"{self.passes}/{self.trials} passed ({self.pass_rate:.1%})"
        if self.verdict is Verdict.PASS:
            return f"PASS: {rate}; the {ci} lies at or above the threshold {self.threshold:.3f}."
        if self.verdict is Verdict.FAIL:
            return f"FAIL: {rate}; the {ci} lies below the threshold {self.threshold:.3f}."
        return (
            f"INCONCLUSIVE: {rate}; the {ci} contains the threshold {self.threshold:.3f}, "
            "so more trials are needed to decide."
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return d


def threshold_verdict(
    passes: int,
    trials: int,
    *,
    threshold: float,
    alpha: float = 0.05,
    method: str = "clopper-pearson",
) -> ThresholdResult:
    """Does the agent's pass rate meet ``threshold``? (paper Def. 3.6)

    The verdict compares a two-sided ``1 - alpha`` interval with the threshold: PASS when
    its lower end is ``>= threshold``, FAIL when its upper end is ``< threshold``. ``alpha``
    is therefore two-sided: each wrong verdict (FAIL for an agent exactly at the threshold,
    PASS for one just below it) has probability at most ``alpha / 2`` with the exact
    Clopper-Pearson interval, the default. Wilson's interval is offered because the paper
    uses it, but its one-sided errors exceed ``alpha`` when ``trials * (1 - threshold)``
    is about 1 or less (see docs/calibration.md).
    """
    n = check_count("trials", trials, minimum=1)
    k = check_passes("passes", passes, "trials", n)
    th = check_closed_unit("threshold", threshold)
    a = check_open_unit("alpha", alpha)
    m = _method(method)
    lo, hi = proportion_ci(k, n, confidence_level=1 - a, method=m)
    lo, hi = float(lo), float(hi)
    code = CODE_PASS if lo >= th else CODE_FAIL if hi < th else CODE_INCONCLUSIVE
    return ThresholdResult(VERDICT_OF_CODE[code], k, n, k / n, lo, hi, 1 - a, th, m)


def exact_one_sided_critical(trials: int, p0: float, alpha: float) -> int:
    """Largest c with P(X <= c | p0) <= alpha (-1 when none): the exact test of p >= p0."""
    c = int(stats.binom.ppf(alpha, trials, p0))
    while c >= 0 and stats.binom.cdf(c, trials, p0) > alpha:
        c -= 1
    while c + 1 <= trials and stats.binom.cdf(c + 1, trials, p0) <= alpha:
        c += 1
    return c
