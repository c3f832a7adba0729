"""Multi-fidelity proxy testing: correlation, weighted-Stouffer size, cost-optimal allocation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agentassay._stats import (
    FidelityResult,
    ProxyAllocation,
    combine_proxy,
    fidelity_correlation,
    proxy_allocation,
)

ALPHA = 0.05


def test_fidelity_correlation() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 4))
    assert fidelity_correlation(x, x) == pytest.approx(1.0)
    assert fidelity_correlation(x, -x) == pytest.approx(-1.0)
    assert abs(fidelity_correlation(x, rng.normal(size=(400, 4)))) < 0.1
    rho = 0.8
    proxy = rho * x + math.sqrt(1 - rho**2) * rng.normal(size=x.shape)
    assert fidelity_correlation(x, proxy) == pytest.approx(rho, abs=0.05)
    # Columns constant in either model are skipped, not averaged in as zeros.
    xt = np.hstack([x, np.ones((400, 1)), rng.normal(size=(400, 1))])
    xp = np.hstack([x, rng.normal(size=(400, 1)), np.zeros((400, 1))])
    assert fidelity_correlation(xt, xp) == pytest.approx(1.0)
    assert fidelity_correlation(np.ones((5, 2)), x[:5, :2]) == 0.0
    assert fidelity_correlation(x[:, 0], x[:, 0]) == pytest.approx(1.0)  # 1-D: one pass/fail column


def test_fidelity_correlation_validation() -> None:
    x = np.zeros((10, 3))
    with pytest.raises(ValueError, match="same shape"):
        fidelity_correlation(x, x[:, :2])
    with pytest.raises(ValueError, match="at least 3 paired runs"):
        fidelity_correlation(x[:2], x[:2])
    with pytest.raises(ValueError, match="NaN"):
        fidelity_correlation(np.full((5, 1), np.nan), np.zeros((5, 1)))


def test_combine_proxy_result() -> None:
    res = combine_proxy(0.04, 0.2, rho=0.8, n_target=10, n_proxy=100)
    assert isinstance(res, FidelityResult)
    assert res.weights == pytest.approx((math.sqrt(10), 0.8 * 10))
    assert res.effective_trials == pytest.approx(10 + 0.64 * 100)
    ref = stats.combine_pvalues([0.04, 0.2], method="stouffer", weights=list(res.weights))
    assert res.pvalue == pytest.approx(ref.pvalue) and res.statistic == pytest.approx(ref.statistic)
    assert "worth 74.0 target trials" in res.explain()
    assert res.to_dict()["weights"] == pytest.approx(list(res.weights))
    # No proxy information: the target's own p-value comes back unchanged.
    alone = combine_proxy(0.03, 0.9, rho=0.0, n_target=20, n_proxy=50)
    assert alone.pvalue == pytest.approx(0.03) and alone.effective_trials == 20
    assert combine_proxy(0.03, 0.9, rho=0.7, n_target=20, n_proxy=0).pvalue == pytest.approx(0.03)
    # Extreme p-values stay finite-or-decided, never nan.
    edge = combine_proxy([0.0, 1.0, 1.0], [1.0, 0.0, 1.0], rho=0.5, n_target=10, n_proxy=40)
    assert np.isfinite(edge.statistic).all() and ((edge.pvalue >= 0) & (edge.pvalue <= 1)).all()


def test_combine_proxy_validation() -> None:
    with pytest.raises(ValueError, match="p_target"):
        combine_proxy(1.5, 0.2, rho=0.5, n_target=10, n_proxy=10)
    with pytest.raises(ValueError, match="p_proxy"):
        combine_proxy(0.5, [0.2, -0.1], rho=0.5, n_target=10, n_proxy=10)
    with pytest.raises(ValueError, match="rho"):
        combine_proxy(0.5, 0.2, rho=1.2, n_target=10, n_proxy=10)
    with pytest.raises(ValueError, match="n_target"):
        combine_proxy(0.5, 0.2, rho=0.5, n_target=0, n_proxy=10)
    with pytest.raises(ValueError, match="n_proxy"):
        combine_proxy(0.5, 0.2, rho=0.5, n_target=10, n_proxy=-1)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_stouffer_size_under_h0(rho: float) -> None:
    """Two independent uniform p-values: the weighted combination rejects at most alpha + 2 s.e."""
    reps = 20_000
    rng = np.random.default_rng(7)
    res = combine_proxy(rng.random(reps), rng.random(reps), rho=rho, n_target=10, n_proxy=120)
    size = float(np.mean(res.pvalue <= ALPHA))
    se = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert size <= ALPHA + 2 * se and size >= ALPHA - 4 * se
    # The paper's Eq. 47 (weighted Fisher against chi2_4) on the same draws is far too conservative.
    pe, pc = rng.random(reps), rng.random(reps)
    fisher = -2 * (rho * np.log(pc) + (1 - rho) * np.log(pe))
    assert np.mean(fisher >= stats.chi2.isf(ALPHA, 4)) < 0.01


def test_allocation_constraint_and_floor() -> None:
    for rho in (0.5, 0.8, 0.9, -0.9):
        for ratio in (0.01, 0.05, 0.1):
            a = proxy_allocation(rho, cost_target=1.0, cost_proxy=ratio, trials_single=69)
            assert isinstance(a, ProxyAllocation)
            assert a.n_target + rho**2 * a.n_proxy >= 69 - 1e-9
            assert a.effective_trials == pytest.approx(a.n_target + rho**2 * a.n_proxy)
            assert a.n_target >= 10 and a.proxy_pays
            assert a.cost_ratio < 1 and a.cost == pytest.approx(a.n_target + ratio * a.n_proxy)
            assert a.paper_bound == pytest.approx(1 - rho**2 + rho**2 * math.sqrt(ratio))
            # One proxy trial fewer would break the constraint: the allocation is tight.
            assert a.n_target + rho**2 * (a.n_proxy - 1) < 69
    floor = proxy_allocation(0.9, cost_target=2.0, cost_proxy=0.1, trials_single=100, min_target=40)
    assert floor.n_target == 40 and floor.n_proxy == math.ceil(60 / 0.81)
    assert "40 target + 75 proxy trials" in floor.explain() and floor.to_dict()["n_proxy"] == 75
    small = proxy_allocation(0.9, cost_target=1.0, cost_proxy=0.05, trials_single=6)
    assert (small.n_target, small.n_proxy) == (6, 0) and "already covers" in small.explain()


def test_no_proxy_when_it_does_not_pay() -> None:
    a = proxy_allocation(0.2, cost_target=1.0, cost_proxy=0.05, trials_single=50)  # rho² = 0.04 < 0.05
    assert (a.n_target, a.n_proxy, a.proxy_pays) == (50, 0, False) and a.cost_ratio == 1.0
    assert "does not pay" in a.explain()
    b = proxy_allocation(0.0, cost_target=1.0, cost_proxy=0.01, trials_single=50)
    assert b.n_proxy == 0


def test_allocation_validation() -> None:
    with pytest.raises(ValueError, match="rho"):
        proxy_allocation(1.5, cost_target=1, cost_proxy=0.1, trials_single=10)
    with pytest.raises(ValueError, match="cost_proxy"):
        proxy_allocation(0.5, cost_target=1, cost_proxy=0, trials_single=10)
    with pytest.raises(ValueError, match="cost_target"):
        proxy_allocation(0.5, cost_target=float("inf"), cost_proxy=0.1, trials_single=10)
    with pytest.raises(ValueError, match="trials_single"):
        proxy_allocation(0.5, cost_target=1, cost_proxy=0.1, trials_single=0)
    with pytest.raises(ValueError, match="min_target"):
        proxy_allocation(0.5, cost_target=1, cost_proxy=0.1, trials_single=10, min_target=0)
