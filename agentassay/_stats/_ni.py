"""The exact non-inferiority p-value and drop bound of *one* outcome, in milliseconds.

``regression_verdict`` reports, for its outcome ``(x_b, x_c)``, the exact unconditional p-value
of "p_base - p_cand >= delta" (Farrington-Manning ordering, supremum over the null boundary as
``_exact.sup_tail`` takes it) and the upper bound of ``p_base - p_cand`` found by bisecting that
p-value over ``[-1, 1]``. On whole ``(n_b + 1) x (n_c + 1)`` tables that cost 0.2-9 s per verdict;
here the same figures (``tests/stats/test_regression_fast.py`` compares them with the table code on a
grid) come from:

* Staircases. For every ``x_b`` the statistic is non-decreasing in ``x_c`` (checked on a grid in
  the tests), so the outcomes at least as extreme as the observed one are ``x_c >= c(x_b)``, row
  by row. ``c`` is found by binary search (from the previous halving's ``c`` when it still fits),
  evaluating the statistic at a few points per row: closed-form restricted MLE polished by Newton,
  and where that lands within 1e-7 of the threshold, the table's own bisection decides, so the set
  is the table's set. The tail at each nuisance rate is then ``sum_x_b pmf_b(x_b) SF_c(c(x_b))``.
* The binomial pmf in log space (within ~1e-13 of scipy's, far below any figure a verdict reads).
* The bound takes the first 16 of the 22 halvings the table code took, and reports the upper end
  of that bracket: never below the old figure and at most 2**-15 (3.1e-5) above it, for the reports
  print three decimals. The halvings are the table code's own (a search assuming the p-value falls
  as delta grows would land elsewhere: it does not always fall, the ordering changes make it jump
  up, a saw-tooth, e.g. 0.047 -> 0.054 at n = 20/30), and halvings far from the bound are decided
  by certificates that need no staircase (below).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from ._exact import _TIE, GRID_POINTS, null_curve

_EPS = 1e-12  # ni_statistic's bracket margin
HALVINGS = 16  # of [-1, 1]: the bound's resolution is 2**-15; the table code took 22 (2**-21)
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


def _fast_statistic(nb: int, nc: int, xb: np.ndarray, xc: np.ndarray, d: float) -> np.ndarray:
    """The statistic at count arrays (xb, xc) and margin d: Miettinen-Nurminen's closed-form root of the
    restricted likelihood, one Newton step; within ~1e-10 (relative) of the table's bisection."""
    pbh = xb / nb
    pch = xc / nc
    fb = pbh * nb
    fc = pch * nc
    th = nc / nb
    a = 1 + th
    t1 = pbh + th * pch
    b = -(1 + th + t1 + d * (th + 2))
    c = (d * d + d * (2 * pbh + th + 1)) + t1
    e = pbh * (-d * (1 + d))
    b3 = b / (3 * a)
    v = b3**3 - b * c / (6 * a * a) + e / (2 * a)
    lo, hi = max(0.0, -d) + _EPS, min(1.0, 1.0 - d) - _EPS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = np.sign(v) * np.sqrt(np.maximum(b3 * b3 - c / (3 * a), 0.0))
        w = (np.pi + np.arccos(np.clip(v / u**3, -1.0, 1.0))) / 3
        root = np.where(u == 0, -b3, 2 * u * np.cos(w) - b3) - d
        root[~np.isfinite(root)] = (lo + hi) / 2
        m = np.clip(root, lo, hi)
        q = m + d  # one Newton step on the score
        s = fb / q - (nb - fb) / (1 - q) + fc / m - (nc - fc) / (1 - m)
        ds = -fb / q**2 - (nb - fb) / (1 - q) ** 2 - fc / m**2 - (nc - fc) / (1 - m) ** 2
        step = s / ds
        step[~((ds < 0) & np.isfinite(step))] = 0.0
        m = np.clip(m - step, lo, hi)
        pb_t = m + d
        var = pb_t * (1 - pb_t) / nb + m * (1 - m) / nc
        num = d - (pbh - pch)
        out = num / np.sqrt(np.maximum(var, 1e-300))
        small = var <= 1e-15
        if small.any():
            out[small] = np.sign(num[small]) * 1e6
        return out


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
        below, at = g - 1, g  # is the guess's column in the region and the one before it not?
        has_below, has_at = below >= 0, at <= nc
        rows_all = np.arange(nb + 1)
        k = int(has_below.sum())
        inside = _at_least(
            nb,
            nc,
            np.concatenate([rows_all[has_below], rows_all[has_at]]),
            np.concatenate([below[has_below], at[has_at]]),
            d,
            thr,
        )
        ok0 = np.zeros(nb + 1, dtype=bool)
        ok0[has_below] = inside[:k]
        ok1 = np.ones(nb + 1, dtype=bool)
        ok1[has_at] = inside[k:]
        settled = ok1 & ~ok0
        lo = np.where(settled, g, np.where(ok0, 0, g + 1))
        hi = np.where(settled, g, np.where(ok0, g - 1, nc + 1))
        rows = np.flatnonzero(~settled)
        if rows.size:  # moved: gallop away from the guess (1, 2, 4, 8 counts), then bracket as usual
            up = ~ok1[rows]
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
def _reversed_basis(n: int) -> np.ndarray:
    """Rows x, 1, log C(n, x) for x = n..0: the binomial log pmf is one (rates, 3) @ (3, n + 1) product."""
    x = np.arange(n, -1, -1, dtype=float)
    log_choose = special.gammaln(n + 1) - special.gammaln(x + 1) - special.gammaln(n - x + 1)
    return np.ascontiguousarray(np.stack([x, np.ones(n + 1), log_choose]))


def _pmf_reversed(n: int, ps: np.ndarray) -> np.ndarray:
    """Binomial pmf of x = n..0 (reversed, so that a forward cumulative sum is the survival function) at the
    rates ``ps`` rounded as ``_exact.pmf_grid`` rounds them: (len(ps), n + 1), within ~1e-13 of scipy's."""
    p = np.round(np.asarray(ps, dtype=float), 15)
    edge = (p == 0.0) | (p == 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lq = np.log1p(-p)
        coef = np.stack([np.log(p) - lq, n * lq, np.ones_like(p)], axis=1)
    coef[edge] = 0.0
    out = coef @ _reversed_basis(n)
    np.exp(out, out=out)
    if edge.any():  # 0 * log(0) is 0 here, as in the binomial pmf
        out[edge] = 0.0
        out[p == 0.0, n] = 1.0
        out[p == 1.0, 0] = 1.0
    return out


def _tails(c: np.ndarray, nb: int, nc: int, pb: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """P(x_c >= c(x_b)) at each (pb, pc): the tail of a staircase region."""
    g = len(pc)
    if nb == nc:  # one pmf call for both arms (the common case): half the fixed cost of small arrays
        both = _pmf_reversed(nc, np.concatenate([pc, pb]))
        mc, mb = both[:g], both[g:]
    else:
        mc, mb = _pmf_reversed(nc, pc), _pmf_reversed(nb, pb)
    sf = np.empty((g, nc + 2))  # sf[:, j] = P(x_c >= nc + 1 - j)
    sf[:, 0] = 0.0
    np.cumsum(mc, axis=1, out=sf[:, 1:])
    return np.einsum("gi,gi->g", mb, sf[:, (nc + 1) - c[::-1]])


def staircase_sup_tail(c: np.ndarray, nb: int, nc: int, delta0: float, points: int = GRID_POINTS) -> float:
    """``_exact.sup_tail`` of the region ``x_c >= c(x_b)``: the grid maximum, refined around it."""
    return _sup_and_argmax(c, nb, nc, delta0, points)[0]


def _sup_and_argmax(
    c: np.ndarray, nb: int, nc: int, delta0: float, points: int = GRID_POINTS, above: float = math.inf
) -> tuple[float, int]:
    """The sup and the coarse point where it was found (the coarse maximum alone when it exceeds ``above``:
    the refinement could only raise it).

    Every coarse point is needed: the NI test's size is nearly flat along the null boundary (within a
    few per cent over most of it, by design of the score statistic), so no point can be bounded away.
    """
    if (c > nc).all():
        return 0.0, 0
    pb, pc = null_curve(delta0, points)
    probs = _tails(c, nb, nc, pb, pc)
    i = int(np.argmax(probs))
    if probs[i] > above:
        return float(min(1.0, probs[i])), i
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

    The table code's figure to ~1e-13 (relative): the same region (found row by row) and the same
    grid, summed with the log-space pmf above instead of scipy's (whose 90,000 pmf values cost 9 ms).
    """
    d = round(delta0, 12)
    thr = exact_statistic(nb, nc, xb, xc, d) - _TIE
    c = _crossings(nb, nc, d, thr, _linear_guess(nb, nc, xb, xc, d, thr))
    return staircase_sup_tail(c, nb, nc, delta0)


# --------------------------------------------------------------------------- certificates
#
# Far from the bound a halving's side is plain, and two half-planes in the observed drop
# D = x_b/n_b - x_c/n_c prove it without the region's staircase. The statistic is
# T = (delta - D) / s with s between s_min and s_max over the restricted MLE's range (s squared is a
# concave quadratic in that MLE, so both are closed form), hence {T >= thr} lies between
# {D <= delta - thr * s_max} and {D <= delta - thr * s_min} (the two swap when thr < 0). A subset
# with probability > alpha at one point of the null curve proves p > alpha (that point is one of
# the terms p maximises); a Chernoff bound of the superset over whole segments of the curve (each
# factor taken at its segment's worse end) <= alpha proves p <= alpha, at every point the sup could
# look at. Both only decide what the full computation would decide, with margins far above rounding.

_CERTIFY_WIDTH = 1 / 64  # try certificates while the bracket is wider (the first 7 halvings)
_LAMBDAS = np.geomspace(0.25, 4000.0, 40)[None, :]  # Chernoff exponents
_SEGMENTS = 128


def _s_range(nb: int, nc: int, d: float) -> tuple[float, float] | None:
    """(s_min, s_max) of the statistic's denominator over the restricted MLE's range, padded; None when the
    statistic's degenerate branch (var <= 1e-15) could be taken."""
    lo, hi = max(0.0, -d) + _EPS, min(1.0, 1.0 - d) - _EPS

    def var(m: float) -> float:
        q = m + d
        return q * (1 - q) / nb + m * (1 - m) / nc

    vertex = ((1 - 2 * d) / nb + 1 / nc) / (2 * (1 / nb + 1 / nc))
    vmin = min(var(lo), var(hi))
    vmax = max(var(lo), var(hi), var(min(max(vertex, lo), hi)))
    if not vmin * (1 - 1e-9) > 1e-15:
        return None
    return math.sqrt(vmin) * (1 - 1e-9), math.sqrt(vmax) * (1 + 1e-9)


def _certified_side(
    nb: int, nc: int, d: float, mid: float, thr: float, alpha: float, near: int | None, right_first: bool
) -> bool | None:
    """True when p(mid) <= alpha is proven, False when p(mid) > alpha is, None when neither.

    ``right_first`` tries the superset first (the side a normal approximation expects): a certified
    halving then costs one check.
    """
    s = _s_range(nb, nc, d)
    if s is None or not math.isfinite(thr):
        return None
    s_min, s_max = s
    t_super = d - thr * (s_min if thr >= 0 else s_max) + 1e-9  # {T >= thr} within {D <= t_super}
    t_sub = d - thr * (s_max if thr >= 0 else s_min) - 1e-9  # {D <= t_sub} within {T >= thr}
    below = lambda: _proves_below(nb, nc, mid, t_super, alpha)  # noqa: E731
    above = lambda: _proves_above(nb, nc, mid, t_sub, alpha, near)  # noqa: E731
    for check, side in ((below, True), (above, False)) if right_first else ((above, False), (below, True)):
        if check():
            return side
    return None


def _proves_below(nb: int, nc: int, mid: float, t: float, alpha: float) -> bool:
    """p(mid) <= alpha: a Chernoff bound of the superset {D <= t} over every segment of the null curve."""
    edges = np.linspace(max(0.0, -mid), min(1.0, 1.0 - mid), _SEGMENTS + 1)
    pc = np.minimum(edges[1:] + 1e-12, 1.0)  # the c factor grows with p_c: the segment's top
    pb = np.clip(edges[:-1] - 1e-12 + mid, 0.0, 1.0)  # the b factor falls with p_b: the segment's bottom
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_bound = (
            _LAMBDAS * t
            + nc * np.log1p(pc[:, None] * np.expm1(_LAMBDAS / nc))
            + nb * np.log1p(pb[:, None] * np.expm1(-_LAMBDAS / nb))
        )
        log_bound[~np.isfinite(log_bound)] = np.inf
    return bool(log_bound.min(axis=1).max() <= math.log(alpha) + math.log1p(-1e-6))


def _proves_above(nb: int, nc: int, mid: float, t: float, alpha: float, near: int | None) -> bool:
    """p(mid) > alpha: the subset {D <= t}'s tail above alpha at one coarse point of the null curve."""
    c_sub = np.clip(np.ceil(nc * (np.arange(nb + 1) / nb - t) + 1e-6), 0, nc + 1).astype(np.int64)
    if (c_sub > nc).all():
        return False
    pbs, pcs = null_curve(mid, GRID_POINTS)
    idx = [GRID_POINTS // 4, GRID_POINTS // 2, 3 * GRID_POINTS // 4] + ([] if near is None else [near])
    return bool((_tails(c_sub, nb, nc, pbs[idx], pcs[idx]) > alpha * (1 + 1e-9)).any())


def _linear_guess(nb: int, nc: int, xb: int, xc: int, d: float, thr: float) -> np.ndarray:
    """A first guess of the staircase: T taken as (delta - D) / s with the observed outcome's s."""
    pb, pc = xb / nb, xc / nc
    s = math.sqrt(max(pb * (1 - pb) / nb + pc * (1 - pc) / nc, 0.25 / (nb * nb + nc * nc)))
    x = np.arange(nb + 1)
    return np.clip(np.ceil(nc * (x / nb - d + thr * s)), 0, nc + 1).astype(np.int64)


@lru_cache(maxsize=4096)
def drop_upper_bound(nb: int, nc: int, xb: int, xc: int, alpha: float) -> float:
    """One-sided upper (1 - alpha) bound of p_base - p_cand, by inverting the exact NI test (16 halvings).

    A halving far from the bound is decided by the certificates above. A halving whose p-value is
    plainly above alpha is decided from one coarse point: the tail at the previous full sup's argmax
    is one of the terms the p-value maximises, so when it alone exceeds alpha (with a 1e-9 margin
    for rounding), so does the p-value. As the size is nearly flat along the null boundary that
    settles most halvings left of the bound at a tenth of the cost.
    """
    lo, hi = -1.0, 1.0
    c, near = None, None
    for _ in range(HALVINGS):
        mid = (lo + hi) / 2
        d = round(mid, 12)  # the table's key, as ni_pvalue rounds it
        thr = exact_statistic(nb, nc, xb, xc, d) - _TIE
        if hi - lo > _CERTIFY_WIDTH:
            side = _certified_side(nb, nc, d, mid, thr, alpha, near, mid > xb / nb - xc / nc)
            if side is not None:
                if side:
                    hi = mid
                else:
                    lo = mid
                continue
        c = _crossings(nb, nc, d, thr, c if c is not None else _linear_guess(nb, nc, xb, xc, d, thr))
        if near is not None and _tail_at(c, nb, nc, mid, near) > alpha * (1 + 1e-9):
            lo = mid
            continue
        p, near = _sup_and_argmax(c, nb, nc, mid, above=alpha)
        if p <= alpha:
            hi = mid
        else:
            lo = mid
    return min(1.0, hi)
