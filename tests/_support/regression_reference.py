"""The table implementation of the fixed-n regression evidence as it was before issue 17, kept verbatim
as the reference ``tests/stats/test_regression_fast.py`` holds the fast code to (same verdicts, p-values, bounds).

Copied from ``agentassay/_stats/_exact.py`` and ``_regression.py`` at commit 2211aa5; only the module
header and the ``reference_verdict`` wrapper at the end are new. Do not "improve" it: it is the oracle.
"""

from __future__ import annotations

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
    nb, nc = stat.shape[0] - 1, stat.shape[1] - 1
    mask = stat >= t - _TIE
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


def ni_pvalue(nb: int, nc: int, xb: int, xc: int, delta0: float) -> float:
    stat = ni_statistic(nb, nc, round(delta0, 12))
    return sup_tail(stat, stat[xb, xc], delta0)


def drop_upper_bound(nb: int, nc: int, xb: int, xc: int, alpha: float) -> float:
    """One-sided upper (1 - alpha) bound of p_base - p_cand, by inverting the exact NI test."""
    lo, hi = -1.0, 1.0
    for _ in range(22):
        mid = (lo + hi) / 2
        if ni_pvalue(nb, nc, xb, xc, mid) <= alpha:
            hi = mid
        else:
            lo = mid
    return min(1.0, hi)


def reference_verdict(
    xb: int, nb: int, xc: int, nc: int, *, alpha: float = 0.05, delta: float = 0.10, test: str = "fisher"
) -> tuple[str, float, float, float]:
    """(verdict, p-value, NI p-value, drop bound) as ``regression_verdict`` (rule non-inferiority) gave them."""
    reject = regression_reject(nb, nc, test, alpha)
    ni = ni_reject(nb, nc, delta, alpha)
    verdict = "pass" if ni[xb, xc] else "fail" if reject[xb, xc] else "inconclusive"
    if test == "boschloo":
        pvalue = boschloo_pvalue(nb, nc, xb, xc)
    else:
        pvalue = float(regression_pvalues(nb, nc, test)[xb, xc])
    return verdict, pvalue, ni_pvalue(nb, nc, xb, xc, delta), drop_upper_bound(nb, nc, xb, xc, alpha)


# Outcomes at arm sizes too large to run the reference in a test (seconds each): their reference values
# are stored in tests/fixtures/regression_reference.json by `python tests/_support/regression_reference.py`.
LARGE = [
    (nb, nc, xb, xc, alpha)
    for nb, nc in ((100, 100), (200, 200), (150, 120))
    for xb, xc in ((int(0.9 * nb), int(0.85 * nc)), (int(0.9 * nb), int(0.9 * nc)), (nb, nc), (int(0.7 * nb), int(0.95 * nc)))
    for alpha in (0.05, 0.00625)
]


if __name__ == "__main__":
    import json
    from pathlib import Path

    rows = []
    for nb, nc, xb, xc, alpha in LARGE:
        verdict, pvalue, ni_p, bound = reference_verdict(xb, nb, xc, nc, alpha=alpha, delta=0.1)
        rows.append({"nb": nb, "nc": nc, "xb": xb, "xc": xc, "alpha": alpha, "delta": 0.1, "verdict": verdict,
                     "pvalue": pvalue, "noninferiority_pvalue": ni_p, "drop_upper_bound": bound})
        print(rows[-1], flush=True)
    out = Path(__file__).resolve().parents[1] / "fixtures" / "regression_reference.json"
    out.write_text(json.dumps({"generated_by": "python tests/_support/regression_reference.py", "cases": rows}, indent=1) + "\n")
