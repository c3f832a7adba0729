"""The SPRT's design: boundaries, lattice walk and exact operating characteristic (paper Def. 3.9).

Kept apart from the live test in ``_sprt``: the warm start (``_warm``) calibrates its bound on
designs and the live test takes a ``WarmStart``, so with the design in ``_sprt`` the two would
import each other. Now ``_warm`` imports this module and ``_sprt`` imports both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import (
    check_closed_unit,
    check_count,
    check_margin,
    check_open_unit,
    check_threshold_and_delta,
)
from ._verdict import Verdict

_EPS = 1e-12


def _check(threshold: float, delta: float, alpha: float, beta: float, max_trials: int | None) -> None:
    check_open_unit("threshold", threshold)
    check_margin("delta", delta)
    check_threshold_and_delta(threshold, delta)
    check_open_unit("alpha", alpha)
    check_open_unit("beta", beta)
    if alpha + beta >= 1:
        raise ValueError(f"alpha + beta must be < 1; got alpha={alpha}, beta={beta}")
    if max_trials is not None:
        check_count("max_trials", max_trials, minimum=1)


@dataclass(frozen=True)
class SPRTDesign:
    """Boundaries and per-trial log-likelihood increments of one SPRT."""

    threshold: float
    delta: float
    alpha: float = 0.05
    beta: float = 0.10
    max_trials: int | None = None
    # Warm start (see ``warm_start``): a second, PASS-only rule. PASS also when the log-likelihood
    # ratio of ``warm_rate`` against ``threshold - delta`` reaches ``warm_bound``.
    warm_rate: float | None = None
    warm_bound: float = math.inf

    def __post_init__(self) -> None:
        _check(self.threshold, self.delta, self.alpha, self.beta, self.max_trials)
        if self.warm_rate is not None:
            if not self.threshold <= self.warm_rate < 1.0:
                raise ValueError(f"warm_rate must be in [threshold, 1); got {self.warm_rate}")
            if not self.warm_bound > 0.0:
                raise ValueError(f"warm_bound must be > 0; got {self.warm_bound}")

    @property
    def warm(self) -> bool:
        return self.warm_rate is not None and math.isfinite(self.warm_bound)

    def warm_llr(self, passes: Any, fails: Any) -> Any:
        """Evidence for ``warm_rate`` over ``threshold - delta`` (the warm PASS rule's statistic)."""
        p1, w = self.threshold - self.delta, self.warm_rate or self.threshold
        return passes * math.log(w / p1) + fails * math.log((1 - w) / (1 - p1))

    def passes_at(self, passes: Any, fails: Any) -> Any:
        """True where the test stops with PASS (the cold rule, or the warm rule when set)."""
        cold = self.llr(passes, fails) <= self.lower + _EPS
        if not self.warm:
            return cold
        return cold | (self.warm_llr(passes, fails) >= self.warm_bound - _EPS)

    @property
    def lower(self) -> float:
        """log(beta / (1 - alpha)): at or below it, PASS."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """log((1 - beta) / alpha): at or above it, FAIL."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def step_pass(self) -> float:
        p0, p1 = self.threshold, self.threshold - self.delta
        return math.log(p1 / p0)

    @property
    def step_fail(self) -> float:
        p0, p1 = self.threshold, self.threshold - self.delta
        return math.log((1 - p1) / (1 - p0))

    def llr(self, passes: Any, fails: Any) -> Any:
        return passes * self.step_pass + fails * self.step_fail

    def decide(self, passes: int, fails: int) -> Verdict | None:
        if self.passes_at(passes, fails):
            return Verdict.PASS
        if self.llr(passes, fails) >= self.upper - _EPS:
            return Verdict.FAIL
        if self.max_trials is not None and passes + fails >= self.max_trials:
            return Verdict.INCONCLUSIVE
        return None

    def wald_asn(self, p: float) -> float:
        """Wald's approximation of the expected number of trials at true rate ``p``.

        At p = threshold and p = threshold - delta this is paper Eq. 9 and Eq. 10; elsewhere
        it uses Wald's operating characteristic. It ignores overshoot and truncation.
        """
        a, b = self.lower, self.upper
        lp, lf = self.step_pass, self.step_fail
        drift = p * lp + (1 - p) * lf
        if abs(p - self.threshold) < 1e-12:
            accept = 1 - self.alpha
        elif abs(p - (self.threshold - self.delta)) < 1e-12:
            accept = self.beta
        elif abs(drift) < 1e-12:
            return -a * b / (lp * lp * p + lf * lf * (1 - p))
        else:
            # h solves p*e^{h lp} + (1-p) e^{h lf} = 1, h != 0; OC(p) = (e^{hb}-1)/(e^{hb}-e^{ha}).
            from scipy.optimize import brentq

            def g(h: float) -> float:
                return p * math.exp(h * lp) + (1 - p) * math.exp(h * lf) - 1

            h = brentq(g, 1e-9, 60) if drift < 0 else brentq(g, -60, -1e-9)
            accept = (math.exp(h * b) - 1) / (math.exp(h * b) - math.exp(h * a))
        return (accept * a + (1 - accept) * b) / drift

    def operating_characteristic(self, p: float, *, tol: float = 1e-12) -> SPRTCharacteristic:
        """Exact PASS / FAIL / INCONCLUSIVE probabilities and trial-count distribution at rate p.

        Dynamic programme over the number of failures after each trial; absorbs the mass
        that crosses a boundary. Without ``max_trials`` it runs until the mass still
        undecided is below ``tol``.
        """
        p = check_closed_unit("p", p)
        limit = self.max_trials if self.max_trials is not None else 1_000_000
        alive = np.array([1.0])
        passed = failed = 0.0
        n_dist: list[float] = []
        k = 0
        while k < limit:
            k += 1
            nxt = np.zeros(k + 1)
            nxt[:-1] += alive * p  # a pass keeps the failure count
            nxt[1:] += alive * (1 - p)  # a failure adds one
            f = np.arange(k + 1)
            pm = self.passes_at(k - f, f)
            fm = ~pm & (self.llr(k - f, f) >= self.upper - _EPS)
            step_pass, step_fail = nxt[pm].sum(), nxt[fm].sum()
            passed += step_pass
            failed += step_fail
            nxt[pm | fm] = 0.0
            alive = nxt
            n_dist.append(step_pass + step_fail)
            if self.max_trials is None and alive.sum() < tol:
                break
        rest = float(alive.sum())
        if self.max_trials is not None:
            n_dist[-1] += rest
        dist = np.asarray(n_dist)
        return SPRTCharacteristic(
            p=p,
            pass_probability=float(passed),
            fail_probability=float(failed),
            inconclusive_probability=rest if self.max_trials is not None else 0.0,
            expected_trials=float(np.dot(np.arange(1, len(dist) + 1), dist) / dist.sum()),
            trials_distribution=tuple(float(x) for x in dist),
        )


class TrialCountDistribution:
    """Mixin for exact characteristics that carry P(N = n), n = 1, 2, ..."""

    trials_distribution: tuple[float, ...]

    def trials_quantile(self, q: float) -> int:
        """Smallest n with P(N <= n) >= q."""
        c = np.cumsum(self.trials_distribution)
        return int(np.searchsorted(c, q - 1e-12) + 1)


@dataclass(frozen=True)
class SPRTCharacteristic(TrialCountDistribution):
    """Exact operating characteristic of an SPRT design at one true pass rate."""

    p: float
    pass_probability: float
    fail_probability: float
    inconclusive_probability: float
    expected_trials: float
    trials_distribution: tuple[float, ...] = field(repr=False)
