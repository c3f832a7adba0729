"""Fixed-sample regression verdict: p-values against scipy, the non-inferiority rule and its exactness."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from agentassay._stats import RegressionResult, Verdict, cohens_h, effect_sizes, regression_verdict
from agentassay._stats._regression import regression_codes
from agentassay._stats._verdict import CODE_FAIL, CODE_PASS, VERDICT_OF_CODE

RANK = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}


def _random_table(rng: np.random.Generator, n_max: int) -> tuple[int, int, int, int]:
    nb, nc = (int(x) for x in rng.integers(1, n_max + 1, size=2))
    return int(rng.integers(0, nb + 1)), nb, int(rng.integers(0, nc + 1)), nc


@cache
def _random_results() -> tuple[RegressionResult, ...]:
    """One shared sample of verdicts (each call costs ~40 ms: the bound is found by bisection)."""
    rng = np.random.default_rng(20261121)
    out = []
    for _ in range(120):
        xb, nb, xc, nc = _random_table(rng, 40)
        alpha = float(rng.choice([0.01, 0.05, 0.10]))
        delta = float(rng.choice([0.05, 0.10, 0.20]))
        out.append(regression_verdict(xb, nb, xc, nc, alpha=alpha, delta=delta))
    return tuple(out)


# --------------------------------------------------------------------------- p-values


def test_fisher_pvalue_matches_scipy() -> None:
    rng = np.random.default_rng(1)
    tables = [_random_table(rng, 60) for _ in range(30)] + [
        (0, 5, 0, 7),
        (5, 5, 7, 7),
        (5, 5, 0, 7),
        (0, 5, 7, 7),
    ]
    for xb, nb, xc, nc in tables:
        r = regression_verdict(xb, nb, xc, nc, test="fisher")
        ref = stats.fisher_exact([[xb, nb - xb], [xc, nc - xc]], alternative="greater").pvalue
        assert r.pvalue == pytest.approx(ref, rel=1e-9, abs=1e-300), (xb, nb, xc, nc)


def test_fisher_pvalue_of_the_shared_sample_matches_scipy() -> None:
    for r in _random_results():
        xb, nb, xc, nc = r.base_passes, r.base_trials, r.cand_passes, r.cand_trials
        ref = stats.fisher_exact([[xb, nb - xb], [xc, nc - xc]], alternative="greater").pvalue
        assert r.pvalue == pytest.approx(ref, rel=1e-9, abs=1e-300)


def _scipy_boschloo(xb: int, nb: int, xc: int, nc: int) -> tuple[float, float]:
    """scipy's Boschloo p-value for H1: p_cand < p_base, in both orientations.

    scipy treats the two *columns* as the binomial samples and "greater" as H1: p_col0 > p_col1.
    So with the baseline in column 0 the alternative is "greater"; with the candidate in
    column 0 it is "less". Both must give the same number.
    """
    base_first = stats.boschloo_exact(np.array([[xb, xc], [nb - xb, nc - xc]]), alternative="greater").pvalue
    cand_first = stats.boschloo_exact(np.array([[xc, xb], [nc - xc, nb - xb]]), alternative="less").pvalue
    return float(base_first), float(cand_first)


def test_boschloo_pvalue_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(20):
        xb, nb, xc, nc = _random_table(rng, 30)
        ours = regression_verdict(xb, nb, xc, nc, test="boschloo").pvalue
        base_first, cand_first = _scipy_boschloo(xb, nb, xc, nc)
        assert base_first == pytest.approx(cand_first, abs=1e-6)
        # Our supremum is a 201-point grid plus local refinement; scipy runs its own optimiser.
        assert ours == pytest.approx(base_first, abs=2e-3), (xb, nb, xc, nc)
        checked += 0.01 < ours < 0.99
    assert checked >= 5  # the sample was not all trivial 0 / 1 p-values


def test_boschloo_orientation_matters() -> None:
    """The opposite alternative gives a different number: the orientation above is not vacuous."""
    xb, nb, xc, nc = 9, 11, 6, 24
    ours = regression_verdict(xb, nb, xc, nc, test="boschloo").pvalue
    wrong = stats.boschloo_exact(np.array([[xb, xc], [nb - xb, nc - xc]]), alternative="less").pvalue
    assert ours < 0.01 < 0.9 < wrong


def test_boschloo_is_never_less_powerful_than_fisher() -> None:
    """Boschloo's p-value is sup_pi P(Fisher p <= observed) <= observed Fisher p."""
    rng = np.random.default_rng(3)
    for _ in range(25):
        xb, nb, xc, nc = _random_table(rng, 30)
        fisher = regression_verdict(xb, nb, xc, nc, test="fisher").pvalue
        boschloo = regression_verdict(xb, nb, xc, nc, test="boschloo").pvalue
        assert boschloo <= fisher + 1e-9, (xb, nb, xc, nc)


def _yates_pooled_z_pvalue(xb: int, nb: int, xc: int, nc: int) -> float:
    """One-sided pooled two-proportion z test with Yates' correction (as R's prop.test)."""
    pb, pc = xb / nb, xc / nc
    pbar = (xb + xc) / (nb + nc)
    se = math.sqrt(pbar * (1 - pbar) * (1 / nb + 1 / nc))
    if se == 0:
        return 1.0
    z = (pb - pc - (1 / nb + 1 / nc) / 2) / se
    return float(stats.norm.sf(z))


def test_z_pvalue_matches_hand_computed_pooled_z() -> None:
    rng = np.random.default_rng(4)
    tables = [_random_table(rng, 60) for _ in range(30)] + [
        (150, 200, 170, 180),
        (0, 10, 0, 10),
        (10, 10, 10, 10),
        (10, 10, 0, 10),
    ]
    for xb, nb, xc, nc in tables:
        r = regression_verdict(xb, nb, xc, nc, test="z")
        assert r.pvalue == pytest.approx(_yates_pooled_z_pvalue(xb, nb, xc, nc), rel=1e-9, abs=1e-15), (
            xb,
            nb,
            xc,
            nc,
        )


def test_pvalue_direction() -> None:
    """A candidate better than its baseline gives a large p-value; a much worse one a tiny p-value."""
    for test in ("fisher", "boschloo", "z"):
        assert regression_verdict(30, 50, 45, 50, test=test).pvalue > 0.9
        assert regression_verdict(45, 50, 30, 50, test=test).pvalue < 1e-3


# --------------------------------------------------------------------------- non-inferiority rule


def test_pass_iff_noninferiority_pvalue_at_most_alpha() -> None:
    results = _random_results()
    for r in results:
        assert (r.noninferiority_pvalue <= r.alpha) == (r.verdict is Verdict.PASS), r
    assert {r.verdict for r in results} == set(Verdict)


def test_drop_upper_bound_agrees_with_pass() -> None:
    for r in _random_results():
        if abs(r.drop_upper_bound - r.delta) > 1e-3:  # the bound is found by bisection
            assert (r.drop_upper_bound < r.delta) == (r.verdict is Verdict.PASS), r
        assert -1.0 <= r.drop_upper_bound <= 1.0
        assert r.drop_upper_bound >= r.effects.difference - 1e-6  # an upper bound lies above the estimate


def test_fail_implies_significant_drop_and_no_noninferiority() -> None:
    fails = [r for r in _random_results() if r.verdict is Verdict.FAIL]
    assert fails
    for r in fails:
        assert r.pvalue <= r.alpha
        assert r.noninferiority_pvalue > r.alpha
        assert r.cand_rate < r.base_rate


def test_verdict_is_read_from_the_verdict_table() -> None:
    for r in _random_results()[:40]:
        codes = regression_codes(
            r.base_trials, r.cand_trials, alpha=r.alpha, beta=r.beta, delta=r.delta, test=r.test, rule=r.rule
        )
        assert VERDICT_OF_CODE[int(codes[r.base_passes, r.cand_passes])] is r.verdict


def test_explain_and_to_dict() -> None:
    r = regression_verdict(90, 100, 60, 100)
    assert r.verdict is Verdict.FAIL
    assert r.explain().startswith("FAIL")
    d = r.to_dict()
    assert d["verdict"] == "fail"
    assert d["effects"]["magnitude"] in {"small", "medium", "large"}
    ok = regression_verdict(90, 100, 91, 100)
    assert ok.verdict is Verdict.PASS and ok.explain().startswith("PASS")
    assert ok.drop_upper_bound < 0.1


# --------------------------------------------------------------------------- exactness


def _binom_rows(n: int, ps: np.ndarray) -> np.ndarray:
    return stats.binom.pmf(np.arange(n + 1)[None, :], n, ps[:, None])


@pytest.mark.parametrize("test", ["fisher", "boschloo", "z"])
def test_pass_at_a_true_drop_of_delta_is_at_most_alpha(test: str) -> None:
    nb = nc = 20
    alpha, delta = 0.05, 0.1
    codes = regression_codes(nb, nc, alpha=alpha, beta=0.1, delta=delta, test=test, rule="non-inferiority")
    p_base = np.linspace(delta, 1.0, 50)
    mb, mc = _binom_rows(nb, p_base), _binom_rows(nc, np.clip(p_base - delta, 0, 1))
    pass_prob = np.einsum("gi,ij,gj->g", mb, (codes == CODE_PASS).astype(float), mc)
    assert pass_prob.max() <= alpha + 1e-9
    assert pass_prob.max() > alpha / 2  # and the test is not trivially conservative


@pytest.mark.parametrize("test", ["fisher", "boschloo", "z"])
def test_fail_without_a_change_is_at_most_alpha(test: str) -> None:
    nb = nc = 20
    alpha = 0.05
    codes = regression_codes(nb, nc, alpha=alpha, beta=0.1, delta=0.1, test=test, rule="non-inferiority")
    p = np.linspace(0.0, 1.0, 50)
    m = _binom_rows(nb, p)
    fail_prob = np.einsum("gi,ij,gj->g", m, (codes == CODE_FAIL).astype(float), m)
    assert fail_prob.max() <= alpha + 1e-9


def test_exactness_on_a_fine_grid_for_unequal_arms() -> None:
    nb, nc, alpha, delta = 12, 33, 0.05, 0.15
    codes = regression_codes(
        nb, nc, alpha=alpha, beta=0.1, delta=delta, test="fisher", rule="non-inferiority"
    )
    p = np.linspace(delta, 1.0, 801)
    passes = np.einsum(
        "gi,ij,gj->g", _binom_rows(nb, p), (codes == CODE_PASS).astype(float), _binom_rows(nc, p - delta)
    )
    q = np.linspace(0.0, 1.0, 801)
    fails = np.einsum(
        "gi,ij,gj->g", _binom_rows(nb, q), (codes == CODE_FAIL).astype(float), _binom_rows(nc, q)
    )
    assert passes.max() <= alpha + 1e-9
    assert fails.max() <= alpha + 1e-9


# --------------------------------------------------------------------------- the paper's rule


def test_paper_rule_passes_a_ten_point_drop_but_ours_does_not() -> None:
    """ERRATA example: 85/100 -> 75/100 is a PASS under Def. 3.7's observed-power rule."""
    paper = regression_verdict(85, 100, 75, 100, rule="paper", beta=0.2)
    ours = regression_verdict(85, 100, 75, 100)
    assert paper.verdict is Verdict.PASS
    assert paper.observed_power is not None and paper.observed_power >= 0.8
    assert ours.verdict is not Verdict.PASS
    assert ours.verdict is Verdict.INCONCLUSIVE
    assert ours.observed_power is None
    assert ours.drop_upper_bound > 0.1


# --------------------------------------------------------------------------- effect sizes


def test_effect_sizes_match_their_formulas() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        xb, nb, xc, nc = _random_table(rng, 100)
        e = effect_sizes(xb, nb, xc, nc)
        pb, pc = xb / nb, xc / nc
        assert e.difference == pytest.approx(pb - pc, abs=1e-15)
        h = 2 * math.asin(math.sqrt(pb)) - 2 * math.asin(math.sqrt(pc))
        assert e.cohens_h == pytest.approx(h, abs=1e-12)
        assert cohens_h(pb, pc) == pytest.approx(h, abs=1e-12)
        cells = [xb, nb - xb, xc, nc - xc]
        if min(cells) > 0:
            assert e.odds_ratio == pytest.approx((xb * (nc - xc)) / ((nb - xb) * xc), rel=1e-12)
        else:
            a, b, c, d = (x + 0.5 for x in cells)
            assert e.odds_ratio == pytest.approx((a * d) / (b * c), rel=1e-12)


def test_odds_ratio_is_finite_for_all_pass_agents() -> None:
    for xb, nb, xc, nc in [(20, 20, 20, 20), (20, 20, 0, 20), (0, 20, 20, 20), (50, 50, 45, 50)]:
        e = effect_sizes(xb, nb, xc, nc)
        assert math.isfinite(e.odds_ratio) and e.odds_ratio > 0
    assert effect_sizes(20, 20, 20, 20).odds_ratio == pytest.approx(1.0)
    assert effect_sizes(20, 20, 0, 20).odds_ratio == pytest.approx(20.5 * 20.5 / (0.5 * 0.5))
    assert regression_verdict(20, 20, 20, 20).effects.odds_ratio == pytest.approx(1.0)


def test_cohens_h_magnitude_labels() -> None:
    assert effect_sizes(50, 100, 50, 100).magnitude == "negligible"
    assert effect_sizes(90, 100, 80, 100).magnitude == "small"  # h = 0.28
    assert effect_sizes(90, 100, 70, 100).magnitude == "medium"  # h = 0.52
    assert effect_sizes(90, 100, 50, 100).magnitude == "large"  # h = 0.93
    assert effect_sizes(50, 100, 90, 100).magnitude == "large"  # |h|: improvements too


# --------------------------------------------------------------------------- monotonicity


@st.composite
def monotone_case(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    nb = draw(st.integers(1, 40))
    nc = draw(st.integers(1, 40))
    xb = draw(st.integers(0, nb))
    xc1 = draw(st.integers(0, nc))
    xc2 = draw(st.integers(xc1, nc))
    return xb, nb, xc1, xc2, nc


@settings(max_examples=30, deadline=None)
@given(
    case=monotone_case(),
    alpha=st.sampled_from([0.05, 0.1]),
    delta=st.sampled_from([0.05, 0.1, 0.2]),
    test=st.sampled_from(["fisher", "boschloo", "z"]),
)
def test_more_candidate_passes_never_make_the_verdict_worse(
    case: tuple[int, int, int, int, int], alpha: float, delta: float, test: str
) -> None:
    xb, nb, xc1, xc2, nc = case
    v1 = regression_verdict(xb, nb, xc1, nc, alpha=alpha, delta=delta, test=test).verdict
    v2 = regression_verdict(xb, nb, xc2, nc, alpha=alpha, delta=delta, test=test).verdict
    assert RANK[v1] <= RANK[v2], (case, alpha, delta, test, v1, v2)


@pytest.mark.parametrize("test", ["fisher", "boschloo", "z"])
def test_verdict_tables_are_monotone(test: str) -> None:
    """The whole table at once: better candidates and worse baselines never lower the verdict."""
    rank = np.array([1, 2, 0])  # code -> rank: INCONCLUSIVE 0 -> 1, PASS 1 -> 2, FAIL 2 -> 0
    for nb, nc in [(5, 5), (13, 29), (30, 30), (40, 17)]:
        for alpha in (0.05, 0.1):
            for delta in (0.05, 0.1, 0.2):
                r = rank[
                    regression_codes(
                        nb, nc, alpha=alpha, beta=0.1, delta=delta, test=test, rule="non-inferiority"
                    )
                ]
                assert (np.diff(r, axis=1) >= 0).all(), (nb, nc, alpha, delta)
                assert (np.diff(r, axis=0) <= 0).all(), (nb, nc, alpha, delta)


def test_pass_has_a_level_of_its_own() -> None:
    """Two claims, two levels (issue 21): FAIL at a corrected alpha, PASS at the suite's alpha."""
    one = regression_verdict(90, 100, 88, 100, alpha=0.0125)
    two = regression_verdict(90, 100, 88, 100, alpha=0.0125, pass_alpha=0.05)
    assert 0.0125 < one.noninferiority_pvalue <= 0.05  # shown at 0.05, not at 0.0125
    assert (one.verdict, two.verdict) == (Verdict.INCONCLUSIVE, Verdict.PASS)
    assert two.pass_level == 0.05 and one.pass_level == 0.0125 and two.alpha == 0.0125
    assert two.drop_upper_bound < one.drop_upper_bound  # a 95 % bound, not a 98.75 % one
    assert "with 95% confidence" in two.explain()
    # FAIL stays at alpha: a p-value between the levels does not FAIL
    mid = regression_verdict(90, 100, 80, 100, alpha=0.0125, pass_alpha=0.05)
    assert 0.0125 < mid.pvalue < 0.05 and mid.verdict is Verdict.INCONCLUSIVE
    codes = regression_codes(
        40, 40, alpha=0.0125, beta=0.1, delta=0.1, test="fisher", rule="non-inferiority", pass_alpha=0.05
    )
    for kb in range(0, 41, 3):
        for kc in range(0, 41, 3):
            v = regression_verdict(kb, 40, kc, 40, alpha=0.0125, pass_alpha=0.05)
            assert VERDICT_OF_CODE[int(codes[kb, kc])] is v.verdict, (kb, kc)
