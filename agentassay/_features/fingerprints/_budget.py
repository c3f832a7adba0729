"""How many trials per side does the fingerprint test need? (paper Sec. 7.2, Def. 7.4, Alg. 4).

The paper's Eq. 39, n* = (z_{1-a} + z_{1-b})² σ²_fp / Δ²_M + (d_eff + 1)/2, divides a *total*
variance by a squared *Mahalanobis* distance (which is already in variance units), so its n does not
follow the test it is meant to feed: ``docs/budget.md`` measures its achieved power far below the
1 − β it promises. :func:`plan_budget` instead plans for the test we ship — the permutation max-|t|
test of :func:`fingerprint_test` — and states the alternative in the units that test sees: a shift of
``shift`` baseline standard deviations in any one feature (Cohen's d). The max over features is
approximated by a two-sided Welch t test at the Bonferroni level alpha / d_eff, where d_eff is the
number of principal components holding 95% of the baseline's correlation (Def. 7.4 / Alg. 4 line 8):
perfectly correlated features are one test, independent ones are d tests. Because the shift is in SD
units the plan needs no variance estimate, so Alg. 4's safety margin for σ²_fp is not needed; the
calibration sample enters only through d_eff.

The variance class of Def. 7.4 is reported but is informational only (it does not change n): after
min-max scaling each feature to the baseline's own range it measures how concentrated the features
are relative to their extremes, not how large a shift is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..._stats._validation import _real, check_count, check_open_unit
from ._extract import FingerprintMatrix
from ._test import _VAR_FLOOR, _as_array

# Per-dimension variance thresholds of the variance class, on features min-max scaled to [0, 1].
# The paper's footnote (0.107 and 0.357 per dimension) cannot apply there: 0.357 exceeds the 1/4 that
# bounds a [0, 1] variable's variance, so nothing would ever be "volatile". For reference a uniform
# feature has variance 1/12 ≈ 0.083 (volatile), a Gaussian scaled to its 30-run range ≈ 0.06
# (moderate), a 0/1 feature that fires in 2% of runs ≈ 0.02 (stable).
STABLE_BELOW = 0.02
VOLATILE_FROM = 0.08
VARIANCE_CLASSES = ("stable", "moderate", "volatile")
_EXPLAINED = 0.95  # share of correlation captured by the d_eff components (Alg. 4 line 8)
_MAX_TRIALS = 10**9  # a search beyond this means the shift is too small to plan for


@dataclass(frozen=True)
class BudgetPlan:
    """Trials per side for :func:`fingerprint_test` and the evidence the number rests on.

    ``planned_power`` is the modelled power at ``trials`` for a ``shift``-SD shift in one feature;
    ``capped`` means ``maximum`` stopped the search before power reached ``1 - beta``.
    ``variance_class``, ``total_variance`` and ``per_dimension_variance`` describe the baseline
    (Def. 7.4, features min-max scaled to [0, 1]) and do not enter ``trials``.
    """

    trials: int
    d_eff: int
    features: int
    variance_class: str
    total_variance: float
    per_dimension_variance: float
    shift: float
    alpha: float
    beta: float
    planned_power: float
    capped: bool
    calibration_trials: int
    dropped: tuple[str, ...] = ()

    def explain(self) -> str:
        shift = f"a {_shift_text(self.shift)}-SD shift"
        if self.features > 1:
            what = f"{shift} in any one of {self.features} features (d_eff {self.d_eff})"
        elif self.features == 1:
            what = f"{shift} in the one varying feature"
        else:
            what = f"{shift} (no feature varied over the baseline)"
        if self.capped:
            return (
                f"{self.trials} trials per side (the maximum) detect {what} with planned power only "
                f"{self.planned_power:.2f}, short of the {1 - self.beta:.2f} asked, at alpha {self.alpha:g}"
            )
        return (
            f"{self.trials} trials per side detect {what} with planned power {self.planned_power:.2f} "
            f"at alpha {self.alpha:g}"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _shift_text(shift: float) -> str:
    s = f"{shift:g}"
    return s if ("." in s or "e" in s) else f"{s}.0"


def _check_shift(value: object, *, allow_zero: bool = False) -> float:
    x = _real("shift", value, "a positive number of standard deviations")
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"shift must be a positive number of standard deviations (e.g. 1.0); got {x}")
    return x


def planned_power(n: int, *, d_eff: int, shift: float = 1.0, alpha: float = 0.05) -> float:
    """Modelled power of the max-|t| fingerprint test with ``n`` trials per side.

    Two-sided Welch t test (df = 2n − 2, noncentrality ``shift·√(n/2)``) at the Bonferroni level
    alpha / d_eff. For independent features the permutation max-T critical value is the Šidák one,
    which Bonferroni slightly exceeds, so the plan errs on the safe side; for correlated features
    the 95%-variance d_eff can undercount the tests the max is worth and the plan is slightly
    optimistic (``docs/budget.md`` measures both). The test's variance floor (5% of the pooled variance, which under a shift includes the
    between-arm difference) is mirrored so that planned and achieved power agree for *our* test.
    """
    n = check_count("n", n, minimum=2)
    d_eff = check_count("d_eff", d_eff, minimum=1)
    shift = _check_shift(shift, allow_zero=True)
    alpha = check_open_unit("alpha", alpha)
    df = 2 * n - 2
    crit = float(stats.t.isf(alpha / (2 * d_eff), df))
    # Observed |t| shrinks by √(1 + floor·(1 + shift²/4)), the permutation null's by √(1 + floor).
    crit *= math.sqrt((1 + _VAR_FLOOR * (1 + shift**2 / 4)) / (1 + _VAR_FLOOR))
    ncp = shift * math.sqrt(n / 2)
    # P(T < −c) is taken as P(T' > c) with T' of noncentrality −ncp: scipy's nct.cdf far in the
    # lower tail can return nan where sf is still accurate.
    upper, lower = (float(stats.nct.sf(crit, df, nc)) for nc in (ncp, -ncp))
    if not (math.isfinite(upper) and math.isfinite(lower)):
        raise ArithmeticError(f"noncentral t power is not finite at n={n}, d_eff={d_eff}, shift={shift}")
    return min(max(upper + lower, 0.0), 1.0)


def _names(baseline: object, names: Sequence[str] | None, d: int) -> tuple[str, ...]:
    if names is not None:
        out = tuple(str(n) for n in names)
        if len(out) != d:
            raise ValueError(f"names must have one entry per column ({d}); got {len(out)}")
        return out
    if isinstance(baseline, FingerprintMatrix):
        return baseline.names
    return tuple(f"f{j}" for j in range(d))


def _effective_dimension(x: np.ndarray) -> int:
    """Principal components of the correlation matrix holding 95% of the variance, at least 1.

    With k rows the correlation matrix has rank ≤ k − 1, so d_eff cannot exceed k − 1: a
    calibration sample smaller than the number of features under-counts independent features.
    """
    if x.shape[1] <= 1:
        return 1
    eig = np.clip(np.linalg.eigvalsh(np.corrcoef(x, rowvar=False))[::-1], 0.0, None)
    share = np.cumsum(eig) / eig.sum()
    return max(1, int(np.searchsorted(share, _EXPLAINED - 1e-12) + 1))


def _trials(target: float, d_eff: int, shift: float, alpha: float, minimum: int, maximum: int | None) -> int:
    def enough(n: int) -> bool:
        return planned_power(n, d_eff=d_eff, shift=shift, alpha=alpha) >= target

    if enough(minimum):
        return minimum
    z = stats.norm.isf(alpha / (2 * d_eff)) + stats.norm.isf(1 - target)
    hi = max(minimum + 1, math.ceil(2 * (z / shift) ** 2) + 2)  # the z approximation, then check
    while not enough(hi):
        if maximum is not None and hi >= maximum:
            return maximum
        if hi > _MAX_TRIALS:
            raise ValueError(
                f"shift {shift} is too small to plan for: more than {_MAX_TRIALS} trials per side"
            )
        hi = math.ceil(hi * 1.25)
    if maximum is not None and hi > maximum and not enough(maximum):
        return maximum
    lo = minimum  # invariant: not enough(lo), enough(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def plan_budget(
    baseline: np.ndarray | FingerprintMatrix,
    *,
    alpha: float = 0.05,
    beta: float = 0.10,
    shift: float = 1.0,
    minimum: int = 10,
    maximum: int | None = None,
    names: Sequence[str] | None = None,
) -> BudgetPlan:
    """Smallest n ≥ ``minimum`` per side at which the fingerprint test detects a ``shift``-SD shift
    in any one feature with planned power ≥ 1 − ``beta`` at level ``alpha``.

    ``baseline`` holds recorded baseline fingerprints (the k calibration rows of Alg. 4; in practice
    the baseline artifact's trials, so calibration costs no new runs). Columns constant over the
    baseline are dropped, as the test drops them. ``maximum`` caps n; the plan then reports the power
    at the cap and ``capped=True``. The model assumes the shift leaves the feature's variance alone;
    for counts, whose variance grows with the mean, give ``shift`` in the candidate's (larger) SD.
    """
    alpha = check_open_unit("alpha", alpha)
    beta = check_open_unit("beta", beta)
    shift = _check_shift(shift)
    minimum = check_count("minimum", minimum, minimum=2)
    if maximum is not None:
        if isinstance(maximum, bool) or not isinstance(maximum, numbers.Integral) or maximum < minimum:
            raise ValueError(f"maximum must be None or an integer >= minimum ({minimum}); got {maximum!r}")
        maximum = int(maximum)
    x = _as_array("baseline", baseline)
    if x.shape[0] < 3:
        raise ValueError(f"need at least 3 baseline trials to plan a budget; got {x.shape[0]}")
    k, d = x.shape
    all_names = _names(baseline, names, d)
    spread = x.max(axis=0) - x.min(axis=0)
    keep = spread > 1e-12 * np.maximum(np.abs(x).max(axis=0), 1.0)
    dropped = tuple(n for n, kept in zip(all_names, keep, strict=True) if not kept)
    xs = x[:, keep]
    features = int(xs.shape[1])
    d_eff = _effective_dimension(xs) if features else 1
    if features:
        scaled = (xs - xs.min(axis=0)) / spread[keep]
        total = float(scaled.var(axis=0, ddof=1).sum())  # Eq. 37 on [0, 1]-scaled features
        per_dim = total / features
    else:
        total = per_dim = 0.0
    klass = VARIANCE_CLASSES[0 if per_dim < STABLE_BELOW else 1 if per_dim < VOLATILE_FROM else 2]
    n = _trials(1 - beta, d_eff, shift, alpha, minimum, maximum)
    power = planned_power(n, d_eff=d_eff, shift=shift, alpha=alpha)
    return BudgetPlan(
        trials=n,
        d_eff=d_eff,
        features=features,
        variance_class=klass,
        total_variance=total,
        per_dimension_variance=per_dim,
        shift=shift,
        alpha=alpha,
        beta=beta,
        planned_power=power,
        capped=power < 1 - beta,
        calibration_trials=k,
        dropped=dropped,
    )


__all__ = ["VARIANCE_CLASSES", "BudgetPlan", "plan_budget", "planned_power"]
