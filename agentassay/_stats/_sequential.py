"""Sequential regression test of a candidate against a finite, already-recorded baseline.

Why not the paper's SPRT with theta taken from the baseline (Alg. 2)? The baseline rate is
an estimate; treating it as known ignores its sampling error and, in simulation, raised the
false-alarm rate to 0.10-0.19 (ERRATA). Here the baseline count stays a random variable
in every error computation.

Design. The baseline (x_b of n_b) is fixed; candidate trials arrive one by one, up to
``max_trials``. After trial k the test computes two statistics on (x_b, n_b, x_c, k):

* ``Z_fail``: the pooled two-proportion z statistic of "p_cand < p_base";
* ``Z_pass``: the Farrington-Manning score statistic of "p_base - p_cand < delta".

It stops with FAIL when ``Z_fail >= c_fail * (max_trials / k) ** shape``, with PASS when
``Z_pass >= c_pass * (max_trials / k) ** shape`` (PASS checked first), and ends
INCONCLUSIVE at ``max_trials``. The shape parameter is Wang and Tsiatis's: 0 gives Pocock's
flat boundary (early stops, lower final power), 0.5 O'Brien-Fleming's (few early stops).
With ``looks = g > 1`` the statistics are compared only after every g-th trial (and at
``max_trials``): fewer looks cost less multiplicity, so the boundaries sit lower.

Two claims, two levels. FAIL and PASS are different claims: a suite is blocked when *any*
scenario FAILs (so FAIL needs a level corrected for multiplicity, ``alpha``), but deploys only
when *every* scenario PASSes, an intersection-union test that holds at the uncorrected level
(``pass_alpha``). The constants are chosen by exact computation so that

    sup_p P(FAIL | p_base = p_cand = p) <= alpha       and
    sup_p P(PASS | p_base = p, p_cand = p - delta) <= pass_alpha,

each computed for the boundary on its own (a second boundary can only stop paths
earlier, so the joint test's errors are smaller still). The probabilities are sums over
the baseline's binomial distribution and the candidate's walk, by dynamic programming;
the supremum is taken over a grid of the nuisance rate and checked on a finer one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from . import _exact
from ._ni import exact_statistic
from ._sprt_design import TrialCountDistribution
from ._validation import check_closed_unit, check_count, check_margin, check_open_unit, check_passes
from ._verdict import Verdict

_COARSE, _FINE = 17, 65
# Bump when anything that changes calibrated constants changes (grids, bisection, statistics, the
# walk): tables of constants (the shipped agentassay/_gate/designs.json, per-machine caches) are keyed by it.
DESIGN_ALGORITHM = 2  # 2: separate FAIL / PASS levels and grouped looks (constants keyed per boundary)


@lru_cache(maxsize=2)
def _zfail(nb: int, n_max: int) -> np.ndarray:
    """Z_fail for every look k = 1..n_max: an array (n_max, nb+1, n_max+1), -inf padded."""
    zf = np.full((n_max, nb + 1, n_max + 1), -np.inf)
    for k in range(1, n_max + 1):
        zf[k - 1, :, : k + 1] = _exact.pooled_z.__wrapped__(nb, k)
    zf.setflags(write=False)
    return zf


@lru_cache(maxsize=2)
def _zpass(nb: int, n_max: int, delta: float) -> np.ndarray:
    """Z_pass for every look k = 1..n_max: an array (n_max, nb+1, n_max+1), -inf padded."""
    zp = np.full((n_max, nb + 1, n_max + 1), -np.inf)
    for k in range(1, n_max + 1):
        zp[k - 1, :, : k + 1] = _exact.ni_statistic.__wrapped__(nb, k, delta)
    zp.setflags(write=False)
    return zp


def _walk(
    stat: np.ndarray | None,
    bounds: np.ndarray | None,
    pb: np.ndarray,
    pc: np.ndarray,
    nb: int,
    n_max: int,
    *,
    other: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probability of crossing ``stat >= bounds[k]`` (first boundary) and ``other`` (second).

    Returns per grid point: P(first), P(second), and the distribution of the stopping
    trial (n_max columns; the last also holds the mass that never stopped).
    """
    g = len(pb)
    state = np.zeros((g, nb + 1, n_max + 1))
    state[:, :, 0] = _exact.pmf_grid(nb, pb)
    q = pc[:, None, None]
    first = np.zeros(g)
    second = np.zeros(g)
    stops = np.zeros((g, n_max))
    for k in range(1, n_max + 1):
        s = state[:, :, : k + 1]
        moved = s * (1 - q)
        moved[:, :, 1:] += s[:, :, :-1] * q
        state[:, :, : k + 1] = moved
        s = state[:, :, : k + 1]
        stopped = np.zeros(g)
        if other is not None:  # checked first: PASS has precedence over FAIL
            m2 = other[0][k - 1, :, : k + 1] >= other[1][k - 1]
            p2 = (s * m2).sum(axis=(1, 2))
            second += p2
            stopped += p2
            s[:, m2] = 0.0
        if stat is not None:
            m1 = stat[k - 1, :, : k + 1] >= bounds[k - 1]
            p1 = (s * m1).sum(axis=(1, 2))
            first += p1
            stopped += p1
            s[:, m1] = 0.0
        stops[:, k - 1] = stopped
    stops[:, -1] += state.sum(axis=(1, 2))
    return first, second, stops


def _bounds(c: float, n_max: int, shape: float, looks: int = 1) -> np.ndarray:
    """The boundary at every trial k = 1..n_max; +inf where the test does not look."""
    k = np.arange(1, n_max + 1)
    b = c * (n_max / k) ** shape
    return b if looks <= 1 else np.where(_is_look(k, n_max, looks), b, np.inf)


def _is_look(k: np.ndarray | int, n_max: int, looks: int) -> np.ndarray | bool:
    return (k % looks == 0) | (k == n_max)


def _null_grid(delta0: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    pb, pc = _exact.null_curve(delta0, points + 2)
    return pb[1:-1], pc[1:-1]  # the end points carry no mass at all


def _calibrate_one(
    stat: np.ndarray, delta0: float, nb: int, n_max: int, alpha: float, shape: float, looks: int = 1
) -> float:
    def size(c: float, points: int) -> float:
        bounds = _bounds(c, n_max, shape, looks)
        pb, pc = _null_grid(delta0, points)
        err = _walk(stat, bounds, pb, pc, nb, n_max)[0]
        if points < _FINE:
            return float(err.max())
        # Refine around the three highest grid points: the error is a polynomial in the
        # nuisance rate and its peaks can fall between grid points.
        best = float(err.max())
        for i in np.argsort(err)[-3:]:
            lo, hi = pc[max(i - 1, 0)], pc[min(i + 1, len(pc) - 1)]
            fine = np.linspace(lo, hi, 33)
            best = max(
                best, float(_walk(stat, bounds, np.clip(fine + delta0, 0, 1), fine, nb, n_max)[0].max())
            )
        return best

    lo, hi = 0.0, 8.0
    for _ in range(14):
        mid = (lo + hi) / 2
        if size(mid, _COARSE) <= alpha:
            hi = mid
        else:
            lo = mid
    c = hi
    while size(c, _FINE) > alpha:  # the coarse grid missed the supremum: tighten
        c += 0.02
    return c


@lru_cache(maxsize=64)
def fail_constant(nb: int, n_max: int, alpha: float, shape: float, looks: int = 1) -> float:
    """``c_fail``: the FAIL boundary's constant at level ``alpha`` (exact; does not depend on delta)."""
    return _calibrate_one(_zfail(nb, n_max), 0.0, nb, n_max, alpha, shape, looks)


@lru_cache(maxsize=64)
def pass_constant(nb: int, n_max: int, alpha: float, delta: float, shape: float, looks: int = 1) -> float:
    """``c_pass``: the PASS boundary's constant at level ``alpha`` for the margin ``delta`` (exact)."""
    return _calibrate_one(_zpass(nb, n_max, delta), delta, nb, n_max, alpha, shape, looks)


@dataclass(frozen=True)
class SequentialCharacteristic(TrialCountDistribution):
    """Exact operating characteristic of a sequential regression design at one truth."""

    p_base: float
    p_cand: float
    pass_probability: float
    fail_probability: float
    inconclusive_probability: float
    expected_trials: float
    trials_distribution: tuple[float, ...] = field(repr=False)


@dataclass(frozen=True)
class SequentialDesign:
    """Calibrated boundaries for testing up to ``max_trials`` candidate trials against a baseline of ``base_trials``.

    ``alpha`` is the FAIL level, ``pass_alpha`` the PASS level (``alpha`` when not given; the gate
    passes its multiplicity-corrected FAIL level and the suite's alpha, docs/statistics.md), and
    ``looks`` the group size: the test looks after every ``looks``-th trial and at the cap.
    """

    base_trials: int
    max_trials: int
    alpha: float = 0.05
    delta: float = 0.10
    shape: float = 0.25
    pass_alpha: float | None = None
    looks: int = 1
    c_fail: float = field(init=False)
    c_pass: float = field(init=False)

    def __post_init__(self) -> None:
        check_count("base_trials", self.base_trials, minimum=1)
        check_count("max_trials", self.max_trials, minimum=1)
        check_open_unit("alpha", self.alpha)
        object.__setattr__(self, "pass_alpha", check_open_unit("pass_alpha", self.alpha if self.pass_alpha is None else self.pass_alpha))
        check_margin("delta", self.delta)
        check_count("looks", self.looks, minimum=1)
        if not 0.0 <= self.shape <= 0.5:
            raise ValueError(f"shape must be in [0, 0.5] (0 Pocock, 0.5 O'Brien-Fleming); got {self.shape}")
        nb, n, shape, g = self.base_trials, self.max_trials, float(self.shape), int(self.looks)
        object.__setattr__(self, "c_fail", fail_constant(nb, n, float(self.alpha), shape, g))
        object.__setattr__(self, "c_pass", pass_constant(nb, n, float(self.pass_alpha), float(self.delta), shape, g))

    @classmethod
    def from_constants(
        cls,
        base_trials: int,
        max_trials: int,
        alpha: float,
        delta: float,
        shape: float,
        c_fail: float,
        c_pass: float,
        *,
        pass_alpha: float | None = None,
        looks: int = 1,
    ) -> SequentialDesign:
        """Rebuild a design from constants calibrated earlier (skips the seconds-long calibration).

        Callers that store constants key them by every argument and ``DESIGN_ALGORITHM``.
        """
        design = object.__new__(cls)
        for name, value in (
            ("base_trials", check_count("base_trials", base_trials, minimum=1)),
            ("max_trials", check_count("max_trials", max_trials, minimum=1)),
            ("alpha", check_open_unit("alpha", alpha)),
            ("delta", check_margin("delta", delta)),
            ("shape", float(shape)),
            ("pass_alpha", check_open_unit("pass_alpha", alpha if pass_alpha is None else pass_alpha)),
            ("looks", check_count("looks", looks, minimum=1)),
            ("c_fail", float(c_fail)),
            ("c_pass", float(c_pass)),
        ):
            object.__setattr__(design, name, value)
        return design

    def is_look(self, k: int) -> bool:
        """Whether the test compares its statistics with the boundaries after trial ``k``."""
        return bool(_is_look(k, self.max_trials, self.looks))

    def boundary(self, k: int) -> tuple[float, float]:
        """(FAIL, PASS) critical values of the statistics after k candidate trials (at a look)."""
        s = (self.max_trials / k) ** self.shape
        return self.c_fail * s, self.c_pass * s

    def statistics(self, base_passes: int, cand_passes: int, k: int) -> tuple[float, float]:
        zf = _exact.pooled_z_cell(self.base_trials, k, base_passes, cand_passes)
        zp = exact_statistic(self.base_trials, k, base_passes, cand_passes, self.delta)
        return zf, zp

    def decide(self, base_passes: int, cand_passes: int, k: int) -> Verdict | None:
        if not self.is_look(k):
            return None
        zf, zp = self.statistics(base_passes, cand_passes, k)
        bf, bp = self.boundary(k)
        if zp >= bp:
            return Verdict.PASS
        if zf >= bf:
            return Verdict.FAIL
        return Verdict.INCONCLUSIVE if k >= self.max_trials else None

    def trials_given_baseline(self, base_passes: int, p_cand: Any) -> np.ndarray:
        """P(the test stops after k candidate trials), k = 1..max_trials, for the recorded baseline count
        ``base_passes`` and candidate trials passing with probability ``p_cand`` (a rate, or an array of them:
        one row each). For ``agentassay plan``.

        Exact: a dynamic programme over the candidate's pass count, stopping where :meth:`decide` (the live
        test's own rule) stops, so the figures are those of the test a check runs. Unlike
        :meth:`operating_characteristic` the baseline is not re-drawn: it is the one on file.
        """
        base_passes = check_passes("base_passes", base_passes, "base_trials", self.base_trials)
        rates = np.atleast_1d(np.asarray(p_cand, dtype=float))
        for p in rates:
            check_closed_unit("p_cand", float(p))
        n = self.max_trials
        q = rates[:, None]
        state = np.zeros((len(rates), n + 1))
        state[:, 0] = 1.0
        stops = np.zeros((len(rates), n))
        for k in range(1, n + 1):
            nxt = np.zeros_like(state)
            nxt[:, : k + 1] = state[:, : k + 1] * (1 - q)
            nxt[:, 1 : k + 1] += state[:, :k] * q
            state = nxt
            if self.is_look(k):
                stop = [x for x in range(k + 1) if self.decide(base_passes, x, k) is not None]
                stops[:, k - 1] = state[:, stop].sum(axis=1)
                state[:, stop] = 0.0
        stops[:, -1] += state.sum(axis=1)  # mass left undecided at the cap (none: the cap always decides)
        return stops if np.ndim(p_cand) else stops[0]

    def operating_characteristic(self, p_base: float, p_cand: float) -> SequentialCharacteristic:
        """Exact verdict probabilities and trial-count distribution at true rates (p_base, p_cand)."""
        check_closed_unit("p_base", p_base)
        check_closed_unit("p_cand", p_cand)
        nb, n = self.base_trials, self.max_trials
        zf, zp = _zfail(nb, n), _zpass(nb, n, self.delta)
        k = np.arange(1, n + 1)
        fail, passed, stops = _walk(
            zf,
            _bounds(self.c_fail, n, self.shape, self.looks),
            np.array([p_base]),
            np.array([p_cand]),
            nb,
            n,
            other=(zp, _bounds(self.c_pass, n, self.shape, self.looks)),
        )
        dist = stops[0]
        return SequentialCharacteristic(
            p_base,
            p_cand,
            float(passed[0]),
            float(fail[0]),
            float(max(0.0, 1 - passed[0] - fail[0])),
            float(np.dot(k, dist)),
            tuple(float(x) for x in dist),
        )


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of a sequential regression test."""

    verdict: Verdict
    base_passes: int
    base_trials: int
    cand_passes: int
    cand_trials: int
    max_trials: int
    fail_statistic: float
    pass_statistic: float
    fail_boundary: float
    pass_boundary: float
    alpha: float
    delta: float
    pass_alpha: float | None = None  # the PASS level (None: alpha, as before the two levels)
    looks: int = 1

    def explain(self) -> str:
        rates = (
            f"pass rate {self.base_passes / self.base_trials:.1%} -> {self.cand_passes / max(self.cand_trials, 1):.1%} "
            f"(baseline {self.base_passes}/{self.base_trials} -> candidate {self.cand_passes}/{self.cand_trials})"
        )
        used = f"after {self.cand_trials} of at most {self.max_trials} trials"
        if self.verdict is Verdict.PASS:
            return f"PASS {used}: {rates}; the drop is shown to be below {self.delta:.2f}."
        if self.verdict is Verdict.FAIL:
            return f"FAIL {used}: {rates}; the candidate is significantly worse than the baseline."
        return f"INCONCLUSIVE {used}: {rates}; neither a regression nor a drop below {self.delta:.2f} could be shown."

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"verdict": self.verdict.value}


class SequentialRegression:
    """Feed candidate outcomes one at a time; ``update`` returns the verdict once decided."""

    def __init__(
        self,
        base_passes: int,
        base_trials: int,
        *,
        max_trials: int,
        alpha: float = 0.05,
        delta: float = 0.10,
        shape: float = 0.25,
        design: SequentialDesign | None = None,
        pass_alpha: float | None = None,
        looks: int = 1,
    ) -> None:
        if design is None:
            design = SequentialDesign(base_trials, max_trials, alpha, delta, shape, pass_alpha, looks)
        elif (design.base_trials, design.max_trials) != (base_trials, max_trials):
            raise ValueError(
                f"design is for {design.base_trials} baseline and {design.max_trials} candidate trials; "
                f"got base_trials={base_trials}, max_trials={max_trials}"
            )
        self.design = design
        self.base_passes = check_passes("base_passes", base_passes, "base_trials", base_trials)
        self.passes = 0
        self.trials = 0
        self.verdict: Verdict | None = None

    def update(self, passed: bool) -> Verdict | None:
        if self.verdict is not None:
            raise RuntimeError(f"the test already decided {self.verdict.value.upper()}; start a new one")
        self.trials += 1
        self.passes += bool(passed)
        self.verdict = self.design.decide(self.base_passes, self.passes, self.trials)
        return self.verdict

    def result(self) -> SequentialResult:
        d = self.design
        k = max(self.trials, 1)
        zf, zp = d.statistics(self.base_passes, self.passes, k) if self.trials else (0.0, 0.0)
        bf, bp = d.boundary(k)
        return SequentialResult(
            self.verdict or Verdict.INCONCLUSIVE,
            self.base_passes,
            d.base_trials,
            self.passes,
            self.trials,
            d.max_trials,
            zf,
            zp,
            bf,
            bp,
            d.alpha,
            d.delta,
            d.pass_alpha,
            d.looks,
        )


def sequential_regression(
    base_passes: int,
    base_trials: int,
    outcomes: Any,
    *,
    max_trials: int,
    alpha: float = 0.05,
    delta: float = 0.10,
    shape: float = 0.25,
    pass_alpha: float | None = None,
    looks: int = 1,
) -> SequentialResult:
    """Run the sequential regression test over candidate ``outcomes`` (stops at the first decision).

    ``alpha`` is the FAIL level, ``pass_alpha`` the PASS level (default ``alpha``).
    """
    test = SequentialRegression(
        base_passes, base_trials, max_trials=max_trials, alpha=alpha, delta=delta, shape=shape,
        pass_alpha=pass_alpha, looks=looks,
    )
    for outcome in outcomes:
        if test.update(bool(outcome)) is not None:
            break
    return test.result()
