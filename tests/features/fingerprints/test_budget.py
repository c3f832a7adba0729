"""Adaptive budget: validation, effective dimension, monotonicity, and that the planned power is honest."""

from __future__ import annotations

import numpy as np
import pytest

from agentassay._features.fingerprints import (
    BudgetPlan,
    FingerprintMatrix,
    fingerprint_test,
    plan_budget,
    planned_power,
)


def _gaussian(k: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(k, d))


def test_plan_fields_and_dict() -> None:
    x = np.hstack([_gaussian(40, 5), np.full((40, 2), 3.0)])
    fm = FingerprintMatrix(x, tuple(f"c{j}" for j in range(7)))
    plan = plan_budget(fm, shift=1.0)
    assert isinstance(plan, BudgetPlan)
    assert plan.features == 5 and plan.dropped == ("c5", "c6") and plan.calibration_trials == 40
    assert 1 <= plan.d_eff <= 5 and plan.trials >= 10 and not plan.capped
    assert plan.planned_power >= 0.9
    assert plan.planned_power == pytest.approx(planned_power(plan.trials, d_eff=plan.d_eff, shift=1.0))
    assert planned_power(plan.trials - 1, d_eff=plan.d_eff, shift=1.0) < 0.9 or plan.trials == 10
    assert plan.variance_class in ("stable", "moderate", "volatile")
    assert plan.per_dimension_variance == pytest.approx(plan.total_variance / 5)
    assert 0 < plan.per_dimension_variance <= 0.25
    d = plan.to_dict()
    assert d["trials"] == plan.trials and tuple(d["dropped"]) == ("c5", "c6") and d["capped"] is False
    text = plan.explain()
    assert f"{plan.trials} trials per side" in text and "1.0-SD" in text and "5 features" in text
    with pytest.raises(AttributeError):
        plan.trials = 3  # type: ignore[misc]


def test_validation() -> None:
    x = _gaussian(10, 3)
    with pytest.raises(ValueError, match=r"at least 3 baseline trials.*got 2"):
        plan_budget(x[:2])
    with pytest.raises(ValueError, match="2-D"):
        plan_budget(x[:, 0])
    with pytest.raises(ValueError, match="NaN"):
        plan_budget(np.where(x > 1, np.nan, x))
    for kwargs in ({"alpha": 0.0}, {"beta": 1.0}, {"shift": 0.0}, {"shift": -1.0}, {"shift": float("inf")}):
        with pytest.raises(ValueError):
            plan_budget(x, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="minimum"):
        plan_budget(x, minimum=1)
    with pytest.raises(ValueError, match="maximum"):
        plan_budget(x, minimum=10, maximum=5)
    with pytest.raises(ValueError, match="names"):
        plan_budget(x, names=["a", "b"])
    with pytest.raises(ValueError, match="d_eff"):
        planned_power(20, d_eff=0)
    with pytest.raises(ValueError, match="n must"):
        planned_power(1, d_eff=1)


def test_effective_dimension() -> None:
    z = _gaussian(200, 1)
    same = np.hstack([z, 2 * z + 1, -z, 0.5 * z])  # perfectly correlated: one test
    assert plan_budget(same).d_eff == 1
    assert plan_budget(_gaussian(5000, 6, seed=1)).d_eff == 6  # independent: d tests
    # A constant-only baseline still yields a plan (nothing varied; d_eff 1).
    flat = plan_budget(np.ones((5, 3)))
    assert flat.features == 0 and flat.d_eff == 1 and flat.variance_class == "stable"


def test_monotone_in_shift_beta_and_dimension() -> None:
    x = _gaussian(3000, 8, seed=2)
    by_shift = [plan_budget(x, shift=s).trials for s in (0.5, 0.75, 1.0, 1.5, 2.0)]
    assert by_shift == sorted(by_shift, reverse=True) and by_shift[0] > by_shift[-1]
    by_beta = [plan_budget(x, beta=b).trials for b in (0.05, 0.1, 0.2, 0.3)]
    assert by_beta == sorted(by_beta, reverse=True) and by_beta[0] > by_beta[-1]
    powers = [planned_power(n, d_eff=4) for n in (5, 10, 20, 40)]
    assert powers == sorted(powers)
    assert planned_power(30, d_eff=1) > planned_power(30, d_eff=8)
    assert planned_power(200, d_eff=1, shift=0.0) == pytest.approx(0.05, abs=0.005)  # size at no shift


def test_cap_reports_power_at_the_cap() -> None:
    x = _gaussian(100, 4)
    free = plan_budget(x, shift=0.5)
    capped = plan_budget(x, shift=0.5, maximum=30)
    assert free.trials > 30 and capped.trials == 30 and capped.capped and not free.capped
    assert capped.planned_power < 0.9 and "short of the 0.90" in capped.explain()
    roomy = plan_budget(x, shift=0.5, maximum=free.trials)
    assert roomy.trials == free.trials and not roomy.capped
    assert plan_budget(x, shift=3.0, minimum=25).trials == 25  # the minimum wins for large shifts


def test_planned_power_is_achieved() -> None:
    """The plan is honest: the permutation test reaches the planned power at the planned n."""
    rng = np.random.default_rng(20261122)
    d, shift = 4, 1.0
    plan = plan_budget(rng.normal(size=(400, d)), shift=shift, beta=0.2)
    n, reps = plan.trials, 400
    hits = 0
    for _ in range(reps):
        base, cand = rng.normal(size=(n, d)), rng.normal(size=(n, d))
        cand[:, rng.integers(d)] += shift
        hits += fingerprint_test(base, cand, permutations=500, seed=rng).shifted
    achieved = hits / reps
    assert achieved >= plan.planned_power - 0.08, (n, plan.planned_power, achieved)
    assert achieved <= plan.planned_power + 0.08  # and not wastefully conservative
