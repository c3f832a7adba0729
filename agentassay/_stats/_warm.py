"""Warm-started SPRT (paper Def. 7.8) whose worst case is computed, not hoped for.

The paper starts the SPRT's log-likelihood ratio at the log of a Beta density ratio built from
earlier trials and claims error control "provided the prior is well calibrated". That is exactly
"treat the earlier trials as trials of this version": a 100-trial prior from the same agent
decides most runs before a single new trial, and a prior from a better version hides a real
regression (ERRATA). Our warm start uses the prior for what it is good for — telling the test
*where the agent's pass rate probably is* — and lets only new trials supply the evidence:

* **PASS-only.** The cold SPRT is kept as it is. The warm start adds a second way to PASS: the
  log-likelihood ratio of ``warm_rate`` (the prior's pass rate, at least ``threshold``) against
  ``threshold - delta`` reaching ``warm_bound``. For an agent well above the threshold this
  ratio grows faster than the cold one, so PASS comes sooner. The FAIL rule is untouched and a
  second PASS rule can only stop paths earlier, so the false-alarm rate is never above the cold
  SPRT's, whatever the prior.
* **Exactly capped miss rate.** ``warm_bound`` is the smallest bound for which the *exact*
  probability of PASS at ``p = threshold - delta`` (cold and warm rules together, by dynamic
  programming) is at most ``inflation * beta``; it only falls as p falls, so this bounds the
  miss rate over the whole alternative for a prior from *any* version, however wrong.

By Wald and Wolfowitz's optimality of the SPRT no rule can save much at ``p = threshold`` itself
(at most what an SPRT at beta' = 1.5 beta saves, about 18%); the saving comes for agents whose
recorded pass rate is above the threshold, where the cold SPRT is far from optimal. Both are
measured in ``benchmarks/token_efficiency.py`` (docs/token-efficiency.md).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from ._sprt_design import SPRTDesign
from ._validation import check_count, check_passes

_BISECT = 36


def _pass_at(design: SPRTDesign, p: float) -> float:
    return design.operating_characteristic(p).pass_probability


@lru_cache(maxsize=128)
def _bound(
    threshold: float, delta: float, alpha: float, beta: float, max_trials: int | None, rate: float, target: float
) -> float:
    """Smallest warm bound with exact P(PASS | threshold - delta) <= target (inf if none)."""
    p1 = threshold - delta
    cold = SPRTDesign(threshold, delta, alpha, beta, max_trials)
    if _pass_at(cold, p1) > target:
        return math.inf

    def miss(bound: float) -> float:
        return _pass_at(SPRTDesign(threshold, delta, alpha, beta, max_trials, rate, bound), p1)

    lo, hi = 1e-6, max(1.0, -cold.lower) * 4
    while miss(hi) > target:  # pragma: no cover - the cold rule already dominates by then
        hi *= 2
    for _ in range(_BISECT):
        mid = (lo + hi) / 2
        if miss(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class WarmStart:
    """How a prior of recorded trials changes an SPRT, and what that costs at worst."""

    prior_passes: int
    prior_trials: int
    rate: float  # the alternative the warm PASS rule is tuned to: max(threshold, (x + 1) / (n + 2))
    bound: float  # the warm rule's calibrated bound (inf: not used)
    inflation: float
    cold_miss: float  # exact P(PASS | threshold - delta) of the cold SPRT
    worst_case_miss: float  # exact P(PASS | threshold - delta) with the warm rule, for any prior
    cold_expected_trials: float  # exact, at the prior's observed pass rate
    warm_expected_trials: float

    @property
    def used(self) -> bool:
        return math.isfinite(self.bound)

    @property
    def expected_savings(self) -> float:
        """Expected trials saved at the prior's observed pass rate."""
        return max(0.0, self.cold_expected_trials - self.warm_expected_trials)

    def explain(self) -> str:
        used = f"{self.prior_passes}/{self.prior_trials} recorded trials"
        if not self.prior_trials:
            return "No warm start: there are no recorded trials of this scenario."
        if not self.used:
            return f"No warm start from {used}: the cold SPRT already uses the whole miss-rate budget."
        return (
            f"Warm start from {used} (PASS rule tuned to a pass rate of {self.rate:.2f}): "
            f"worst-case miss rate {self.worst_case_miss:.3f} against {self.cold_miss:.3f} cold "
            f"(allowed {self.inflation:g} x beta, for a prior from any version); "
            f"expected saving at the recorded rate {self.expected_savings:.1f} trials "
            f"({self.cold_expected_trials:.1f} -> {self.warm_expected_trials:.1f})."
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self) | {"expected_savings": self.expected_savings, "used": self.used}
        if not self.used:
            d["bound"] = None
        return d


def warm_start(
    prior_passes: int,
    prior_trials: int,
    *,
    threshold: float,
    delta: float = 0.10,
    alpha: float = 0.05,
    beta: float = 0.10,
    max_trials: int | None = None,
    inflation: float = 1.5,
) -> WarmStart:
    """Warm start for ``SPRT(..., warm=...)`` from ``prior_passes`` of ``prior_trials`` earlier trials.

    The prior may come from any version: the false-alarm rate stays at most the cold SPRT's and
    the miss rate at ``worst_case_miss <= inflation * beta``. ``inflation = 1`` still helps when the
    cold SPRT's exact miss rate is below beta (Wald's boundaries are conservative).
    """
    prior_trials = check_count("prior_trials", prior_trials)
    prior_passes = check_passes("prior_passes", prior_passes, "prior_trials", prior_trials)
    cold = SPRTDesign(threshold, delta, alpha, beta, max_trials)  # validates the design
    if not (math.isfinite(inflation) and inflation >= 1.0):
        raise ValueError(f"inflation must be >= 1 (1: no more misses than beta); got {inflation}")
    if inflation * beta >= 1.0:
        raise ValueError(f"inflation * beta must be < 1; got {inflation} * {beta}")
    rate = max(float(threshold), (prior_passes + 1) / (prior_trials + 2))
    p1 = threshold - delta
    cold_miss = _pass_at(cold, p1)
    observed = prior_passes / prior_trials if prior_trials else float(threshold)
    cold_n = cold.operating_characteristic(observed).expected_trials
    bound = math.inf
    if prior_trials:
        bound = _bound(
            float(threshold), float(delta), float(alpha), float(beta), max_trials, round(rate, 12),
            float(inflation * beta),
        )
    if not math.isfinite(bound):
        return WarmStart(prior_passes, prior_trials, rate, bound, float(inflation), cold_miss, cold_miss, cold_n, cold_n)
    warm = SPRTDesign(threshold, delta, alpha, beta, max_trials, rate, bound)
    return WarmStart(
        prior_passes,
        prior_trials,
        rate,
        bound,
        float(inflation),
        cold_miss,
        _pass_at(warm, p1),
        cold_n,
        warm.operating_characteristic(observed).expected_trials,
    )
