"""Exact unconditional machinery for 2x2 comparisons of two binomial arms.

A test is given by an *ordering statistic* over every outcome ``(x_base, x_cand)`` (large
means more evidence against H0) and by the boundary of its null hypothesis, a curve of
``(p_base, p_cand)`` pairs indexed by the nuisance rate. Its exact p-value is the supremum
over that curve of ``P(T >= t_obs)``; its critical value is the smallest ``t`` whose
supremum tail is ``<= alpha``. Because every rejection region is a union of whole outcomes
we can compute error rates exactly, with no Monte-Carlo noise.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

GRID_POINTS = 201
_TIE = 1e-9


@lru_cache(maxsize=256)
def _pmf(n: int, ps: tuple[float, ...]) -> np.ndarray:
    return stats.binom.pmf(np.arange(n + 1)[None, :], n, np.asarray(ps)[:, None])


def pmf_grid(n: int, ps: np.ndarray) -> np.ndarray:
    """Binomial pmf of 0..n for every rate in ``ps``: shape (len(ps), n + 1)."""
    return _pmf(n, tuple(np.round(np.asarray(ps, dtype=float), 15)))


def null_curve(delta0: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    """Rates on the boundary ``p_base - p_cand = delta0`` (0 for the no-regression null)."""
    lo, hi = max(0.0, -delta0), min(1.0, 1.0 - delta0)
    pc = np.linspace(lo, hi, points)
    return np.clip(pc + delta0, 0.0, 1.0), pc


def _tail(mask: np.ndarray, nb: int, nc: int, pb: np.ndarray, pc: np.ndarray) -> np.ndarray:
    mb, mc = pmf_grid(nb, pb), pmf_grid(nc, pc)
    return np.einsum("gi,gi->g", mb @ mask.astype(float), mc)


def sup_tail(stat: np.ndarray, t: float, delta0: float, points: int = GRID_POINTS) -> float:
    """sup over the null curve of P(T >= t), refined around the grid maximum."""
    return sup_tail_of(stat >= t - _TIE, delta0, points)


def sup_tail_of(mask: np.ndarray, delta0: float, points: int = GRID_POINTS) -> float:
    """sup over the null curve of the probability of the outcomes in ``mask``, refined around the grid maximum."""
    nb, nc = mask.shape[0] - 1, mask.shape[1] - 1
    if not mask.any():
        return 0.0
    pb, pc = null_curve(delta0, points)
    probs = _tail(mask, nb, nc, pb, pc)
    i = int(np.argmax(probs))
    lo, hi = pc[max(i - 1, 0)], pc[min(i + 1, points - 1)]
    fine = np.linspace(lo, hi, 21)
    fine_probs = _tail(mask, nb, nc, np.clip(fine + delta0, 0, 1), fine)
    return float(min(1.0, max(probs.max(), fine_probs.max())))


def critical_value(stat: np.ndarray, alpha: float, delta0: float, points: int = GRID_POINTS) -> float:
    """Smallest attained value ``t`` with ``sup P(T >= t) <= alpha`` (``inf`` if none)."""
    vals = np.unique(stat)
    lo, hi = 0, len(vals)  # invariant: answer index in [lo, hi]; hi == len means none
    while lo < hi:
        mid = (lo + hi) // 2
        if sup_tail(stat, vals[mid], delta0, points) <= alpha:
            hi = mid
        else:
            lo = mid + 1
    return float(vals[lo]) if lo < len(vals) else float("inf")


def rates(nb: int, nc: int) -> tuple[np.ndarray, np.ndarray]:
    xb = np.arange(nb + 1)[:, None] / nb
    xc = np.arange(nc + 1)[None, :] / nc
    return np.broadcast_to(xb, (nb + 1, nc + 1)), np.broadcast_to(xc, (nb + 1, nc + 1))


@lru_cache(maxsize=64)
def ni_statistic(nb: int, nc: int, delta0: float) -> np.ndarray:
    """Farrington-Manning score statistic for H0: p_base - p_cand >= delta0 (large = NI).

    The variance is evaluated at the maximum-likelihood rates restricted to the null
    boundary, found by bisection on the (monotone) score of the concave restricted
    log-likelihood; this is the ordering Chan (1998) recommends for exact NI tests.
    """
    pb_hat, pc_hat = rates(nb, nc)
    xb, xc = pb_hat * nb, pc_hat * nc
    lo = np.full(pb_hat.shape, max(0.0, -delta0))
    hi = np.full(pb_hat.shape, min(1.0, 1.0 - delta0))
    eps = 1e-12
    a, b = lo + eps, hi - eps
    for _ in range(60):
        m = (a + b) / 2
        q = m + delta0
        with np.errstate(divide="ignore", invalid="ignore"):
            score = xb / q - (nb - xb) / (1 - q) + xc / m - (nc - xc) / (1 - m)
        up = score > 0
        a = np.where(up, m, a)
        b = np.where(up, b, m)
    pc_t = (a + b) / 2
    pb_t = pc_t + delta0
    var = pb_t * (1 - pb_t) / nb + pc_t * (1 - pc_t) / nc
    num = delta0 - (pb_hat - pc_hat)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(var > 1e-15, num / np.sqrt(np.maximum(var, 1e-300)), np.sign(num) * 1e6)
    t.setflags(write=False)
    return t


def pooled_z_cell(nb: int, nc: int, xb: int, xc: int) -> float:
    """``pooled_z(nb, nc)[xb, xc]`` (no continuity correction) without the table, bit-identical.

    A sequential test reads one cell per look (its NI twin is ``_ni.exact_statistic``): building the
    whole table for it, and missing a 64-entry cache on every new k, cost ~12 ms a look.
    """
    pb_hat, pc_hat = xb / nb, xc / nc
    pbar = (pb_hat * nb + pc_hat * nc) / (nb + nc)
    se = math.sqrt(pbar * (1 - pbar) * (1 / nb + 1 / nc))
    return (pb_hat - pc_hat) / se if se > 0 else 0.0


@lru_cache(maxsize=64)
def fisher_pvalues(nb: int, nc: int) -> np.ndarray:
    """One-sided Fisher p-value of H0: p_cand >= p_base for every outcome."""
    xb = np.arange(nb + 1)[:, None]
    xc = np.arange(nc + 1)[None, :]
    p = stats.hypergeom.sf(xb - 1, nb + nc, xb + xc, nb)
    p = np.clip(p, 0.0, 1.0)
    p.setflags(write=False)
    return p


@lru_cache(maxsize=64)
def pooled_z(nb: int, nc: int, continuity: bool = False) -> np.ndarray:
    """Pooled two-proportion z statistic (baseline minus candidate) for every outcome.

    With ``continuity=True`` the difference is shrunk by Yates' (1/nb + 1/nc) / 2, as in
    R's ``prop.test``: the uncorrected one-sided test exceeds its level (0.058 at n = 10,
    0.060 at n = 50 per arm, docs/calibration.md), the corrected one does not.
    """
    pb_hat, pc_hat = rates(nb, nc)
    pbar = (pb_hat * nb + pc_hat * nc) / (nb + nc)
    se = np.sqrt(pbar * (1 - pbar) * (1 / nb + 1 / nc))
    diff = pb_hat - pc_hat - ((1 / nb + 1 / nc) / 2 if continuity else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, -np.inf if continuity else 0.0)
    z.setflags(write=False)
    return z


@lru_cache(maxsize=64)
def regression_pvalues(nb: int, nc: int, test: str) -> np.ndarray:
    """One-sided p-value of H0: p_cand >= p_base (no regression) for every outcome.

    Fisher and z only: Boschloo's p-value needs a supremum per outcome, so verdicts use its
    critical value (``regression_reject``) and single results ``boschloo_pvalue``.
    """
    if test == "fisher":
        return fisher_pvalues(nb, nc)
    if test == "z":
        p = stats.norm.sf(pooled_z(nb, nc, continuity=True))
        p.setflags(write=False)
        return p
    raise ValueError(f"test must be 'fisher' or 'z' here; got {test!r}")


def boschloo_pvalue(nb: int, nc: int, xb: int, xc: int) -> float:
    stat = -fisher_pvalues(nb, nc)
    return sup_tail(stat, stat[xb, xc], 0.0)


@lru_cache(maxsize=64)
def regression_reject(nb: int, nc: int, test: str, alpha: float) -> np.ndarray:
    """Rejection region of the one-sided regression test at level alpha."""
    if test == "boschloo":
        stat = -fisher_pvalues(nb, nc)
        crit = critical_value(stat, alpha, 0.0)
        mask = stat >= crit - _TIE
    else:
        mask = regression_pvalues(nb, nc, test) <= alpha
    mask.setflags(write=False)
    return mask


@lru_cache(maxsize=64)
def ni_reject(nb: int, nc: int, delta: float, alpha: float) -> np.ndarray:
    """Outcomes where the exact unconditional test shows p_base - p_cand < delta at alpha."""
    stat = ni_statistic(nb, nc, delta)
    mask = stat >= critical_value(stat, alpha, delta) - _TIE
    mask.setflags(write=False)
    return mask


# The NI p-value and the drop bound of one outcome (what regression_verdict reports) are computed
# row by row instead of on whole tables, same numbers: see _ni.py. Imported last (_ni reads this module).
from ._ni import drop_upper_bound, ni_pvalue  # noqa: E402, F401  (re-exported: callers use _exact.*)
