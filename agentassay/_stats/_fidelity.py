"""Multi-fidelity proxy testing (paper Sec. 7.4, Def. 7.7, Prop. 7.4): spend cheap-model trials instead
of some expensive-model trials.

Three pieces. :func:`fidelity_correlation` measures ρ from *paired* runs (the same input and seed on
the target and the proxy model). :func:`combine_proxy` merges a target test's and a proxy test's
one-sided p-values by weighted Stouffer. :func:`proxy_allocation` picks how many trials of each keep
n_e + ρ² n_c ≥ n_single at the least cost.

Deviations from the paper (ERRATA.md): Eq. 47's weighted Fisher statistic −2[ρ log p_c + (1−ρ) log p_e]
has mean 2, not the 4 of its χ²₄ reference, so its size is far below nominal (0.0035 at ρ = 0.8,
alpha = 0.05); we use weighted Stouffer, as the paper's footnote says its implementation does. The
cost bound of Eq. 48 misprints the appendix's 1 − ρ² + ρ²√(c_c/c_e) (Eq. 94); we report that bound
next to the cost our allocation achieves.

What must hold for the combination to be valid and useful: the two p-values are independent under
H0 — true when the proxy's trials are separate runs from the target's (not the paired calibration
runs) — and a regression of the target shows up in the proxy with about ρ times its size (in SD
units). The second is an assumption about the change under test, not something paired-run ρ proves:
a regression the proxy model does not reproduce is diluted by the proxy's weight
(``docs/multifidelity.md`` measures that case). Hence ``min_target``: the target's own trials stay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._validation import _real, check_closed_unit, check_count

ArrayLike = float | Sequence[float] | np.ndarray


@dataclass(frozen=True)
class FidelityResult:
    """Weighted-Stouffer combination of a target and a proxy p-value (one-sided, small = regression).

    ``statistic`` is the combined z; ``weights`` are (target, proxy) = (√n_e, |ρ|√n_c);
    ``effective_trials`` = n_e + ρ² n_c is the number of target trials the evidence is worth when a
    regression reaches the proxy at ρ times its size. ``pvalue`` and ``statistic`` are arrays when
    arrays of p-values were given.
    """

    pvalue: float | np.ndarray
    statistic: float | np.ndarray
    weights: tuple[float, float]
    rho: float
    n_target: int
    n_proxy: int
    effective_trials: float

    def explain(self) -> str:
        if np.ndim(self.pvalue):
            return f"{np.size(self.pvalue)} combined p-values (weights {self.weights[0]:.3g}, {self.weights[1]:.3g})"
        return (
            f"combined p = {self.pvalue:.3g} (weighted Stouffer z = {self.statistic:.2f}) from "
            f"{self.n_target} target and {self.n_proxy} proxy trials at ρ = {self.rho:.2f}, worth "
            f"{self.effective_trials:.1f} target trials"
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("pvalue", "statistic"):
            out[key] = np.asarray(out[key]).tolist()
        out["weights"] = list(self.weights)
        return out


@dataclass(frozen=True)
class ProxyAllocation:
    """Cost-optimal trials per side on the target (``n_target``) and the proxy (``n_proxy``).

    ``cost_ratio`` = allocation cost / (``trials_single`` · ``cost_target``); ``paper_bound`` is the
    appendix's 1 − ρ² + ρ²√(c_c/c_e) (Eq. 94) for comparison. ``proxy_pays`` is False when a unit of
    proxy information (ρ² of a target trial) costs at least as much as a target trial.
    """

    rho: float
    cost_target: float
    cost_proxy: float
    trials_single: int
    min_target: int
    n_target: int
    n_proxy: int
    effective_trials: float
    cost: float
    cost_ratio: float
    paper_bound: float
    proxy_pays: bool

    def explain(self) -> str:
        if not self.proxy_pays and self.rho**2 * self.cost_target > self.cost_proxy:
            return (
                f"the target floor (min_target {self.min_target}) already covers the {self.trials_single} "
                f"trials needed: run {self.n_target} target trials per side"
            )
        if not self.proxy_pays:
            return (
                f"the proxy does not pay (ρ² = {self.rho**2:.2f} ≤ cost ratio "
                f"{self.cost_proxy / self.cost_target:.3g}): run {self.n_target} target trials per side"
            )
        return (
            f"{self.n_target} target + {self.n_proxy} proxy trials per side are worth "
            f"{self.effective_trials:.1f} target trials (≥ {self.trials_single}) at "
            f"{self.cost_ratio:.0%} of the single-model cost (paper's bound {self.paper_bound:.0%})"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _matrix(name: str, data: object) -> np.ndarray:
    values = getattr(data, "values", data)  # a FingerprintMatrix (or a DataFrame) carries .values
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array (rows = paired runs): {exc}") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (rows = paired runs); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def fidelity_correlation(target: object, proxy: object) -> float:
    """ρ of Def. 7.7: per-column Pearson correlation of paired runs, averaged over usable columns.

    Row i of ``target`` and of ``proxy`` must come from the same input and seed, or the
    correlation measures nothing. Columns constant in either model carry no correlation and are
    skipped; 0.0 is returned when none is left (no evidence the proxy tracks the target).
    """
    t, p = _matrix("target", target), _matrix("proxy", proxy)
    if t.shape != p.shape:
        raise ValueError(
            f"target and proxy must have the same shape (paired runs); got {t.shape} and {p.shape}"
        )
    if t.shape[0] < 3:
        raise ValueError(f"need at least 3 paired runs to estimate a correlation; got {t.shape[0]}")
    tc, pc = t - t.mean(axis=0), p - p.mean(axis=0)
    st, sp = np.sqrt((tc**2).sum(axis=0)), np.sqrt((pc**2).sum(axis=0))
    tol_t = 1e-12 * np.maximum(np.abs(t).max(axis=0), 1.0) * math.sqrt(t.shape[0])
    tol_p = 1e-12 * np.maximum(np.abs(p).max(axis=0), 1.0) * math.sqrt(p.shape[0])
    ok = (st > tol_t) & (sp > tol_p)
    if not ok.any():
        return 0.0
    r = (tc[:, ok] * pc[:, ok]).sum(axis=0) / (st[ok] * sp[ok])
    return float(np.clip(r, -1.0, 1.0).mean())


def _check_rho(value: object) -> float:
    x = _real("rho", value, "a correlation in [-1, 1]")
    if not -1.0 <= x <= 1.0:
        raise ValueError(f"rho must be a correlation in [-1, 1]; got {x}")
    return x


def _pvalues(name: str, value: object) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a p-value in [0, 1] or an array of them; got {value!r}") from None
    if arr.ndim == 0:
        check_closed_unit(name, float(arr))
    elif not (np.isfinite(arr).all() and ((arr >= 0) & (arr <= 1)).all()):
        raise ValueError(f"{name} must hold p-values in [0, 1]")
    return arr


def combine_proxy(
    p_target: ArrayLike, p_proxy: ArrayLike, *, rho: float, n_target: int, n_proxy: int
) -> FidelityResult:
    """Weighted Stouffer combination of the target's and the proxy's one-sided p-values.

    Weights √n_e and |ρ|√n_c are proportional to each test's expected z under a regression that
    reaches the proxy at ρ times its size, which makes them the most powerful Stouffer weights and
    the combined z worth n_e + ρ² n_c target trials (Prop. 7.4). The proxy's p-value must test the
    direction in which a target regression moves the proxy (reverse it when ρ < 0), and its trials
    must be separate from the target's: Stouffer is exact only for independent p-values. Arrays of
    p-values are combined element-wise.
    """
    pe, pc = _pvalues("p_target", p_target), _pvalues("p_proxy", p_proxy)
    rho = _check_rho(rho)
    n_e = check_count("n_target", n_target, minimum=1)
    n_c = check_count("n_proxy", n_proxy)
    pe, pc = np.broadcast_arrays(pe, pc)
    w_e, w_c = math.sqrt(n_e), abs(rho) * math.sqrt(n_c)
    # p = 0 or 1 maps to an infinite z; clipping keeps inf − inf (a nan) out of the sum.
    tiny = np.finfo(np.float64).tiny
    if w_c > 0:
        pvals = np.clip(np.stack([pe, pc]), tiny, np.nextafter(1.0, 0.0))
        weights = np.array([w_e, w_c]).reshape((2,) + (1,) * pe.ndim)
        res = stats.combine_pvalues(pvals, method="stouffer", weights=weights, axis=0)
        z, p = res.statistic, res.pvalue
    else:  # no proxy information: the target's own evidence, unchanged
        z, p = stats.norm.isf(pe), pe
    if pe.ndim == 0:
        z, p = float(z), float(p)
    else:
        z, p = np.asarray(z, dtype=np.float64), np.asarray(p, dtype=np.float64)
    return FidelityResult(p, z, (w_e, w_c), rho, n_e, n_c, n_e + rho**2 * n_c)


def _positive(name: str, value: object) -> float:
    x = _real(name, value, "a positive cost per trial")
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a positive finite cost per trial; got {x}")
    return x


def proxy_allocation(
    rho: float, *, cost_target: float, cost_proxy: float, trials_single: int, min_target: int = 10
) -> ProxyAllocation:
    """Cheapest (n_e, n_c) per side with n_e + ρ² n_c ≥ ``trials_single`` and n_e ≥ ``min_target``.

    Cost n_e c_e + n_c c_c is linear and so is the constraint, so the optimum is a corner: a unit of
    effective trials costs c_e on the target and c_c / ρ² on the proxy. If the proxy is cheaper per
    unit (ρ² > c_c / c_e) run the target floor and fill the rest with proxy trials; otherwise run the
    target alone. All-proxy would be optimal on paper but is unsafe — the proxy only approximates the
    target — so ``min_target`` target trials (capped at ``trials_single``) are always run. The
    appendix's Lagrangian (Eq. 92-94) comes from a control-variate variance with a (1 − ρ²)/n_e term
    and has an interior optimum; for a Stouffer combination that term does not exist.
    """
    rho = _check_rho(rho)
    c_e, c_c = _positive("cost_target", cost_target), _positive("cost_proxy", cost_proxy)
    n_single = check_count("trials_single", trials_single, minimum=1)
    floor = check_count("min_target", min_target, minimum=1)
    r2 = rho * rho
    n_e, n_c = n_single, 0
    if r2 * c_e > c_c:
        n_e_try = min(floor, n_single)
        n_c_try = math.ceil((n_single - n_e_try) / r2 - 1e-9) if n_single > n_e_try else 0
        if n_e_try * c_e + n_c_try * c_c < n_single * c_e:  # rounding up n_c can eat a thin saving
            n_e, n_c = n_e_try, n_c_try
    cost = n_e * c_e + n_c * c_c
    return ProxyAllocation(
        rho=rho,
        cost_target=c_e,
        cost_proxy=c_c,
        trials_single=n_single,
        min_target=floor,
        n_target=n_e,
        n_proxy=n_c,
        effective_trials=n_e + r2 * n_c,
        cost=cost,
        cost_ratio=cost / (n_single * c_e),
        paper_bound=1 - r2 + r2 * math.sqrt(c_c / c_e),
        proxy_pays=n_c > 0,
    )


__all__ = [
    "FidelityResult",
    "ProxyAllocation",
    "combine_proxy",
    "fidelity_correlation",
    "proxy_allocation",
]
