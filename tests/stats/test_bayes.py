"""Bayesian regression probability (paper Def. 3.10): quadrature accuracy, verdict rule, monotonicity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from agentassay._stats import Verdict, bayesian_regression, regression_probability

RANK = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}


def _beta_pdf(x: np.ndarray, a: float, b: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.exp(special.xlogy(a - 1, x) + special.xlog1py(b - 1, -x) - special.betaln(a, b))


def _trapezoid_reference(ab: float, bb: float, ac: float, bc: float, delta: float) -> float:
    """∫_delta^1 pdf_base(x) cdf_cand(x - delta) dx by the trapezoid rule on 2,000,001 points.

    Only valid when pdf_base is bounded on [delta, 1] (bb >= 1). The candidate's cdf is
    evaluated only where the density is not negligible (that part adds < 1e-12).
    """
    x = np.linspace(delta, 1.0, 2_000_001)
    f = _beta_pdf(x, ab, bb)
    live = f > 1e-12
    f[live] *= special.betainc(ac, bc, np.clip(x[live] - delta, 0.0, 1.0))
    f[~live] = 0.0
    h = x[1] - x[0]
    return float(h * (f.sum() - (f[0] + f[-1]) / 2))


def _quantile_reference(
    ab: float, bb: float, ac: float, bc: float, delta: float, points: int = 2_000_000
) -> float:
    """Same integral after u = F_base(x): ∫_0^1 F_cand(F_base^{-1}(u) - delta) du, midpoint rule.

    The integrand is monotone and bounded by 1, so the error is below 1/points whatever
    the shape of the baseline density (including its integrable poles at 0 and 1).
    """
    u = (np.arange(points) + 0.5) / points
    return float(special.betainc(ac, bc, np.clip(special.betaincinv(ab, bb, u) - delta, 0.0, 1.0)).mean())


def _random_cases(seed: int, count: int) -> list[tuple[int, int, int, int, float, tuple[float, float]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        nb, nc = (int(x) for x in rng.integers(2, 201, size=2))
        prior = (1.0, 1.0) if rng.random() < 0.5 else (0.5, 0.5)
        # With Jeffreys' prior the baseline density has a pole at 1 when xb = nb; keep xb < nb
        # here (the trapezoid rule cannot integrate a pole) -- test_regression_probability_with_a_pole_in_the_baseline_density covers that case.
        xb_max = nb if prior == (1.0, 1.0) else nb - 1
        xb, xc = int(rng.integers(0, xb_max + 1)), int(rng.integers(0, nc + 1))
        out.append((xb, nb, xc, nc, float(rng.uniform(0.01, 0.3)), prior))
    return out


def test_regression_probability_matches_trapezoid_reference() -> None:
    cases = [
        *_random_cases(seed=11, count=10),
        (40, 40, 36, 40, 0.1, (1.0, 1.0)),
        (199, 200, 180, 200, 0.05, (1.0, 1.0)),
    ]
    informative = 0
    for xb, nb, xc, nc, delta, (a0, b0) in cases:
        ab, bb, ac, bc = a0 + xb, b0 + nb - xb, a0 + xc, b0 + nc - xc
        ours = float(regression_probability(ab, bb, ac, bc, delta))
        ref = _trapezoid_reference(ab, bb, ac, bc, delta)
        assert ours == pytest.approx(ref, abs=1e-6), (xb, nb, xc, nc, delta, a0)
        informative += 1e-3 < ref < 1 - 1e-3
    assert informative >= 4


def test_regression_probability_matches_quantile_reference_on_sharp_posteriors() -> None:
    """The second reference (quantile substitution) agrees too: 200-trial arms, both priors."""
    for xb, nb, xc, nc, delta, a0 in [(180, 200, 170, 200, 0.02, 1.0), (150, 200, 120, 200, 0.1, 0.5)]:
        ab, bb, ac, bc = a0 + xb, a0 + nb - xb, a0 + xc, a0 + nc - xc
        ours = float(regression_probability(ab, bb, ac, bc, delta))
        ref = _quantile_reference(ab, bb, ac, bc, delta, points=600_000)
        assert 1e-3 < ref < 1 - 1e-3
        assert ours == pytest.approx(ref, abs=1e-6)


def test_regression_probability_with_a_pole_in_the_baseline_density() -> None:
    r = bayesian_regression(30, 30, 23, 30, prior=(0.5, 0.5), alpha=0.05)
    truth = _quantile_reference(30.5, 0.5, 23.5, 7.5, 0.1, points=500_000)
    assert truth > 0.95
    assert r.verdict is Verdict.FAIL
    for xb, nb, xc, nc in [(20, 20, 15, 20), (50, 50, 40, 50), (200, 200, 200, 200)]:
        ab, bb, ac, bc = 0.5 + xb, 0.5 + nb - xb, 0.5 + xc, 0.5 + nc - xc
        delta = 0.1 if nb < 200 else 0.01
        ours = float(regression_probability(ab, bb, ac, bc, delta))
        assert ours == pytest.approx(_quantile_reference(ab, bb, ac, bc, delta, points=500_000), abs=1e-6)


def test_regression_probability_is_vectorised() -> None:
    ab = np.array([5.0, 30.0, 81.0])
    bb = np.array([3.0, 12.0, 21.0])
    out = regression_probability(ab[:, None], bb[:, None], np.array([4.0, 9.0]), np.array([6.0, 2.0]), 0.1)
    assert out.shape == (3, 2)
    for i in range(3):
        for j, (ac, bc) in enumerate([(4.0, 6.0), (9.0, 2.0)]):
            assert out[i, j] == pytest.approx(
                float(regression_probability(ab[i], bb[i], ac, bc, 0.1)), abs=1e-14
            )


def test_regression_probability_sanity() -> None:
    # Same posterior for both: a drop of more than delta is less likely than not.
    assert float(regression_probability(30, 10, 30, 10, 0.1)) < 0.5
    # A clear drop: nearly certain; a clear improvement: nearly impossible.
    assert float(regression_probability(91, 11, 51, 51, 0.1)) > 0.999
    assert float(regression_probability(51, 51, 91, 11, 0.1)) < 1e-6
    # Larger delta, smaller probability.
    p = [float(regression_probability(41, 11, 31, 21, d)) for d in (0.05, 0.1, 0.2, 0.3)]
    assert p == sorted(p, reverse=True)


# --------------------------------------------------------------------------- verdict rule


def test_verdict_follows_the_posterior_thresholds() -> None:
    rng = np.random.default_rng(12)
    seen = set()
    for _ in range(150):
        nb, nc = (int(x) for x in rng.integers(1, 81, size=2))
        xb, xc = int(rng.integers(0, nb + 1)), int(rng.integers(0, nc + 1))
        delta = float(rng.choice([0.05, 0.1, 0.2]))
        alpha = float(rng.choice([0.05, 0.1]))
        beta = float(rng.choice([0.05, 0.1, 0.2]))
        prior = ((1.0, 1.0), (0.5, 0.5), (2.0, 3.0))[int(rng.integers(0, 3))]
        r = bayesian_regression(xb, nb, xc, nc, delta=delta, alpha=alpha, beta=beta, prior=prior)
        a0, b0 = prior
        p = float(regression_probability(a0 + xb, b0 + nb - xb, a0 + xc, b0 + nc - xc, delta))
        assert r.regression_probability == p
        expected = Verdict.FAIL if p > 1 - alpha else Verdict.PASS if p < beta else Verdict.INCONCLUSIVE
        assert r.verdict is expected
        assert (r.alpha, r.beta, r.delta, r.prior) == (alpha, beta, delta, prior)
        assert r.explain().startswith(r.verdict.value.upper())
        seen.add(r.verdict)
    assert seen == set(Verdict)


def test_default_prior_is_used_and_reported() -> None:
    r = bayesian_regression(45, 50, 30, 50)
    a0, b0 = r.prior
    assert r.regression_probability == float(
        regression_probability(a0 + 45, b0 + 5, a0 + 30, b0 + 20, r.delta)
    )
    assert r.verdict is Verdict.FAIL
    assert r.to_dict()["verdict"] == "fail"
    assert bayesian_regression(45, 50, 49, 50).verdict is Verdict.PASS


# --------------------------------------------------------------------------- monotonicity


@st.composite
def monotone_case(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    nb = draw(st.integers(1, 60))
    nc = draw(st.integers(1, 60))
    xb = draw(st.integers(0, nb))
    xc1 = draw(st.integers(0, nc))
    xc2 = draw(st.integers(xc1, nc))
    return xb, nb, xc1, xc2, nc


@settings(max_examples=80, deadline=None)
@given(
    case=monotone_case(),
    delta=st.sampled_from([0.05, 0.1, 0.2]),
    prior=st.sampled_from([(1.0, 1.0), (0.5, 0.5)]),
)
def test_more_candidate_passes_never_raise_the_probability_or_worsen_the_verdict(
    case: tuple[int, int, int, int, int], delta: float, prior: tuple[float, float]
) -> None:
    xb, nb, xc1, xc2, nc = case
    r1 = bayesian_regression(xb, nb, xc1, nc, delta=delta, prior=prior)
    r2 = bayesian_regression(xb, nb, xc2, nc, delta=delta, prior=prior)
    assert r2.regression_probability <= r1.regression_probability + 1e-12
    assert RANK[r1.verdict] <= RANK[r2.verdict]
