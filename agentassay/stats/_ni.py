"""The exact non-inferiority p-value and drop bound of *one* outcome, in milliseconds.

``regression_verdict`` reports, for its outcome ``(x_b, x_c)``, the exact unconditional p-value
of "p_base - p_cand >= delta" (Farrington-Manning ordering, supremum over the null boundary as
``_exact.sup_tail`` takes it) and the upper bound of ``p_base - p_cand`` found by bisecting that
p-value over ``[-1, 1]`` in 22 halvings. On whole ``(n_b + 1) x (n_c + 1)`` tables that cost
0.2-9 s per verdict; here the same numbers (``tests/test_regression_fast.py`` compares them with
the table code on a grid) come from:

* Staircases. For every ``x_b`` the statistic is non-decreasing in ``x_c`` (checked on a grid in
  the tests), so the outcomes at least as extreme as the observed one are ``x_c >= c(x_b)``, row
  by row. ``c`` is found by binary search (from the previous halving's ``c`` when it still fits),
  evaluating the statistic at a few points per row: closed-form restricted MLE polished by Newton,
  and where that lands within 1e-7 of the threshold, the table's own bisection decides, so the set
  is the table's set. The tail at each nuisance rate is then ``sum_x_b pmf_b(x_b) SF_c(c(x_b))``.
* The binomial pmf in log space (within ~1e-13 of scipy's, far below any figure a verdict reads).
* The bound replays the bisection's 22 halvings exactly. A search that assumes the p-value falls
  as delta grows would need fewer, but it does not always fall: when the ordering changes the
  p-value jumps up (a saw-tooth, e.g. 0.047 -> 0.054 at n = 20/30), and the bisection's answer
  depends on which side of a tooth each halving lands. Identical answers need the same halvings.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from ._exact import _TIE, GRID_POINTS, null_curve, sup_tail_of

_EPS = 1e-12  # ni_statistic's bracket margin
_AMBIGUOUS = 1e-7  # |T_fast - threshold| below this (relative) is decided by the exact bisection


# --------------------------------------------------------------------------- the statistic


def exact_statistic(nb: int, nc: int, xb: int, xc: int, delta0: float) -> float:
    """``_exact.ni_statistic(nb, nc, delta0)[xb, xc]``, bit for bit: the same IEEE operations on one element."""
    pb_hat, pc_hat = xb / nb, xc / nc
    fb, fc = pb_hat * nb, pc_hat * nc
    a, b = max(0.0, -delta0) + _EPS, min(1.0, 1.0 - delta0) - _EPS
    for _ in range(60):
        m = (a + b) / 2
        q = m + delta0
        if fb / q - (nb - fb) / (1 - q) + fc / m - (nc - fc) / (1 - m) > 0:
            a = m
        else:
            b = m
    pc_t = (a + b) / 2
    pb_t = pc_t + delta0
    var = pb_t * (1 - pb_t) / nb + pc_t * (1 - pc_t) / nc
    num = delta0 - (pb_hat - pc_hat)
    if var > 1e-15:
        return num / math.sqrt(max(var, 1e-300))
    return ((num > 0) - (num < 0)) * 1e6


def _fast_statistic(nb: int, nc: int, xb: np.ndarray, xc: np.ndarray, d: float | np.ndarray) -> np.ndarray:
    """The statistic at count arrays (xb, xc) and margin(s) d: Miettinen-Nurminen's closed-form root of the
    restricted likelihood, one Newton step; within ~1e-10 (relative) of the table's bisection."""
    pbh, pch = xb / nb, xc / nc
    fb, fc = pbh * nb, pch * nc
    th = nc / nb
    a = 1 + th
    b = -(1 + th + pbh + th * pch + d * (th + 2))
    c = d * d + d * (2 * pbh + th + 1) + pbh + th * pch
    e = -pbh * d * (1 + d)
    b3 = b / (3 * a)
    v = b3**3 - b * c / (6 * a * a) + e / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b3 * b3 - c / (3 * a), 0.0))
    lo, hi = np.maximum(0.0, -d) + _EPS, np.minimum(1.0, 1.0 - d) - _EPS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = (np.pi + np.arccos(np.clip(v / u**3, -1.0, 1.0))) / 3
        root = np.where(u == 0, -b3, 2 * u * np.cos(w) - b3) - d
        m = np.minimum(np.maximum(np.where(np.isfinite(root), root, (lo + hi) / 2), lo), hi)
        for _ in range(1):
            q = m + d
            s = fb / q - (nb - fb) / (1 - q) + fc / m - (nc - fc) / (1 - m)
            ds = -fb / q**2 - (nb - fb) / (1 - q) ** 2 - fc / m**2 - (nc - fc) / (1 - m) ** 2
            step = np.where(ds < 0, s / ds, 0.0)
            m = np.minimum(np.maximum(m - np.where(np.isfinite(step), step, 0.0), lo), hi)
        pb_t = m + d
        var = pb_t * (1 - pb_t) / nb + m * (1 - m) / nc
        num = d - (pbh - pch)
        return np.where(var > 1e-15, num / np.sqrt(np.maximum(var, 1e-300)), np.sign(num) * 1e6)


def _at_least(nb: int, nc: int, xb: np.ndarray, xc: np.ndarray, d: float, thr: float) -> np.ndarray:
    """``ni_statistic(nb, nc, d)[xb, xc] >= thr`` elementwise, as the table would say."""
    t = _fast_statistic(nb, nc, xb.astype(float), xc.astype(float), d)
    out = t >= thr
    close = np.flatnonzero(~(np.abs(t - thr) > _AMBIGUOUS * max(1.0, abs(thr))))
    for i in close:
        out[i] = exact_statistic(nb, nc, int(xb[i]), int(xc[i]), d) >= thr
    return out


def _crossings(nb: int, nc: int, d: float, thr: float, guess: np.ndarray | None = None) -> np.ndarray:
    """``c[x_b]``: the smallest ``x_c`` with statistic ``>= thr`` (``nc + 1`` if none), per row.

    ``guess`` (the previous halving's ``c``, which moves by a few counts at most) is checked first, at
    ``guess - 1`` and ``guess``; rows it does not settle gallop away from it (1, 2, 4, 8 counts), then
    are bracketed by 16 probes a pass.
    """
    lo = np.zeros(nb + 1, dtype=np.int64)
    hi = np.full(nb + 1, nc + 1, dtype=np.int64)
    if guess is not None:
        g = np.clip(guess, 0, nc + 1)
        ok = _probe(nb, nc, d, thr, np.arange(nb + 1), np.stack([g - 1, g], axis=1))
        settled = ok[:, 1] & ~ok[:, 0]
        lo = np.where(settled, g, np.where(ok[:, 0], 0, g + 1))
        hi = np.where(settled, g, np.where(ok[:, 0], g - 1, nc + 1))
        rows = np.flatnonzero(~settled)
        if rows.size:  # moved: gallop away from the guess (1, 2, 4, 8 counts), then bracket as usual
            up = ~ok[rows, 1]
            steps = np.array([1, 2, 4, 8])[None, :]
            cols = np.where(up[:, None], g[rows, None] + steps, g[rows, None] - 1 - steps)
            more = _probe(nb, nc, d, thr, rows, cols)
            hi[rows] = np.minimum(hi[rows], np.where(more, cols, nc + 1).min(axis=1))
            lo[rows] = np.maximum(lo[rows], np.where(more, 0, cols + 1).max(axis=1))
    while True:
        act = np.flatnonzero(lo < hi)
        if act.size == 0:
            return lo
        width = hi[act] - lo[act]
        k = int(min(16, width.max()))
        cols = lo[act, None] + (width[:, None] * np.arange(1, k + 1)[None, :]) // (k + 1)
        ok = _probe(nb, nc, d, thr, act, cols)
        hi[act] = np.where(ok, cols, hi[act, None]).min(axis=1)
        lo[act] = np.where(ok, lo[act, None], cols + 1).max(axis=1)


def _probe(nb: int, nc: int, d: float, thr: float, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``statistic[row, col] >= thr`` for a (rows, k) array of columns; columns below 0 are False, above nc True."""
    ok = cols > nc
    inside = (cols >= 0) & ~ok
    r = np.broadcast_to(rows[:, None], cols.shape)
    ok[inside] = _at_least(nb, nc, r[inside], cols[inside], d, thr)
    return ok


# --------------------------------------------------------------------------- tails


@lru_cache(maxsize=64)
def _log_choose(n: int) -> np.ndarray:
    x = np.arange(n + 1)
    return special.gammaln(n + 1) - special.gammaln(x + 1) - special.gammaln(n - x + 1)


def _pmf(n: int, ps: np.ndarray) -> np.ndarray:
    """Binomial pmf of 0..n at the rates ``ps`` rounded as ``_exact.pmf_grid`` rounds them: (len(ps), n + 1)."""
    p = np.round(np.asarray(ps, dtype=float), 15)
    with np.errstate(divide="ignore", invalid="ignore"):
        lq = np.log1p(-p)
        out = np.multiply.outer(np.log(p) - lq, np.arange(n + 1, dtype=float))
        out += n * lq[:, None]
    out += _log_choose(n)
    for edge, at in ((0.0, 0), (1.0, n)):  # 0 * log(0) is 0 here, as in the binomial pmf
        rows = p == edge
        if rows.any():
            out[rows] = np.where(np.arange(n + 1) == at, 0.0, -np.inf)
    return np.exp(out, out=out)


def _tails(c: np.ndarray, nb: int, nc: int, pb: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """P(x_c >= c(x_b)) at each (pb, pc): the tail of a staircase region."""
    if nb == nc:  # one pmf call for both arms (the common case): half the fixed cost of small arrays
        both = _pmf(nc, np.concatenate([pc, pb]))
        mc, mb = both[: len(pc)], both[len(pc) :]
    else:
        mc, mb = _pmf(nc, pc), _pmf(nb, pb)
    sf = np.zeros((len(pc), nc + 2))
    sf[:, : nc + 1] = np.cumsum(mc[:, ::-1], axis=1)[:, ::-1]
    return np.einsum("gi,gi->g", mb, sf[:, c])


def staircase_sup_tail(c: np.ndarray, nb: int, nc: int, delta0: float, points: int = GRID_POINTS) -> float:
    """``_exact.sup_tail`` of the region ``x_c >= c(x_b)``: the grid maximum, refined around it."""
    return _sup_and_argmax(c, nb, nc, delta0, points)[0]


def _sup_and_argmax(c: np.ndarray, nb: int, nc: int, delta0: float, points: int = GRID_POINTS) -> tuple[float, int]:
    """The sup and the coarse point where it was found.

    Every coarse point is needed: the NI test's size is nearly flat along the null boundary (within a
    few per cent over most of it, by design of the score statistic), so no point can be bounded away.
    """
    if (c > nc).all():
        return 0.0, 0
    pb, pc = null_curve(delta0, points)
    probs = _tails(c, nb, nc, pb, pc)
    i = int(np.argmax(probs))
    lo, hi = pc[max(i - 1, 0)], pc[min(i + 1, points - 1)]
    fine = np.linspace(lo, hi, 21)
    fine_probs = _tails(c, nb, nc, np.clip(fine + delta0, 0, 1), fine)
    return float(min(1.0, max(probs.max(), fine_probs.max()))), i


def _tail_at(c: np.ndarray, nb: int, nc: int, delta0: float, i: int, points: int = GRID_POINTS) -> float:
    """The tail at coarse point ``i`` alone: a lower bound of the sup (it is one of the maximised terms)."""
    pb, pc = null_curve(delta0, points)
    return float(_tails(c, nb, nc, pb[i : i + 1], pc[i : i + 1])[0])


@lru_cache(maxsize=4096)
def ni_pvalue(nb: int, nc: int, xb: int, xc: int, delta0: float) -> float:
    """Exact unconditional p-value of H0: p_base - p_cand >= delta0 at the outcome (xb, xc).

    The figure a results file records, so its region (found row by row) is summed by the table code's
    own ``sup_tail_of``: the same number to the last bit as before (the bound's 22 p-values only decide
    a side, and take the faster sums above, within ~1e-13 of these).
    """
    d = round(delta0, 12)
    c = _crossings(nb, nc, d, exact_statistic(nb, nc, xb, xc, d) - _TIE)
    return sup_tail_of(np.arange(nc + 1)[None, :] >= c[:, None], delta0)


@lru_cache(maxsize=4096)
def drop_upper_bound(nb: int, nc: int, xb: int, xc: int, alpha: float) -> float:
    """One-sided upper (1 - alpha) bound of p_base - p_cand, by inverting the exact NI test (22 halvings).

    A halving whose p-value is plainly above alpha is decided from one coarse point: the tail at the
    previous halving's argmax is one of the terms the p-value maximises, so when it alone exceeds
    alpha (with a 1e-9 margin for rounding), so does the p-value. As the size is nearly flat along the
    null boundary that settles most halvings left of the bound at a tenth of the cost.
    """
    lo, hi = -1.0, 1.0
    c, near = None, None
    for _ in range(22):
        mid = (lo + hi) / 2
        d = round(mid, 12)  # the table's key, as ni_pvalue rounds it
        c = _crossings(nb, nc, d, exact_statistic(nb, nc, xb, xc, d) - _TIE, c)
        if near is not None and _tail_at(c, nb, nc, mid, near) > alpha * (1 + 1e-9):
            lo = mid
            continue
        p, near = _sup_and_argmax(c, nb, nc, mid)
        if p <= alpha:
            hi = mid
        else:
            lo = mid
    return min(1.0, hi)
