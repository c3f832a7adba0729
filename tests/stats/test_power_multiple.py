"""Sample size and power (paper Eq. 1, Eq. 6), multiplicity corrections, suite verdict, deployment gate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agentassay._stats import (
    Decision,
    Verdict,
    adjust_pvalues,
    bonferroni_alpha,
    correct_regressions,
    deployment_decision,
    pass_probability,
    power_one_sample,
    power_two_sample,
    regression_verdict,
    sample_size_one_sample,
    sample_size_two_sample,
    suite_verdict,
)

# --------------------------------------------------------------------------- sample size and power


def test_one_sample_sizes_of_paper_example_3_2() -> None:
    """ERRATA: exact binomial 109, one-sample normal 102, Eq. 1 as printed 190."""
    assert sample_size_one_sample(0.9, 0.1, alpha=0.05, beta=0.10) == 109
    assert sample_size_one_sample(0.9, 0.1, alpha=0.05, beta=0.10, method="exact") == 109
    assert sample_size_one_sample(0.9, 0.1, alpha=0.05, beta=0.10, method="normal") == 102
    assert sample_size_one_sample(0.9, 0.1, alpha=0.05, beta=0.10, method="paper") == 190


def test_one_sample_formulas_by_hand() -> None:
    za, zb = stats.norm.isf(0.05), stats.norm.isf(0.10)
    normal = ((za * math.sqrt(0.9 * 0.1) + zb * math.sqrt(0.8 * 0.2)) / 0.1) ** 2
    assert sample_size_one_sample(0.9, 0.1, method="normal") == math.ceil(normal)
    paper = (stats.norm.isf(0.025) + zb) ** 2 * 2 * 0.9 * 0.1 / 0.1**2
    assert sample_size_one_sample(0.9, 0.1, method="paper") == math.ceil(paper)


def test_exact_one_sample_size_is_the_first_n_with_enough_power() -> None:
    assert power_one_sample(109, 0.9, 0.1) >= 0.9
    assert all(power_one_sample(n, 0.9, 0.1) < 0.9 for n in range(1, 109))
    assert power_one_sample(111, 0.9, 0.1) < 0.9  # the documented saw-tooth


def test_one_sample_power_is_the_exact_binomial_power() -> None:
    n, p0, p1 = 50, 0.9, 0.8
    c = int(stats.binom.ppf(0.05, n, p0))
    while stats.binom.cdf(c, n, p0) > 0.05:
        c -= 1
    assert stats.binom.cdf(c, n, p0) <= 0.05 < stats.binom.cdf(c + 1, n, p0)
    assert power_one_sample(n, p0, 0.1) == pytest.approx(stats.binom.cdf(c, n, p1), rel=1e-12)


@pytest.mark.parametrize(
    ("p_base", "delta", "alpha", "beta"),
    [(0.9, 0.1, 0.05, 0.10), (0.8, 0.1, 0.025, 0.2), (0.7, 0.05, 0.05, 0.1), (0.95, 0.15, 0.01, 0.05)],
)
def test_two_sample_normal_size_is_equation_6(p_base: float, delta: float, alpha: float, beta: float) -> None:
    q = p_base - delta
    z = stats.norm.isf(alpha) + stats.norm.isf(beta)
    by_hand = math.ceil(z**2 * (p_base * (1 - p_base) + q * (1 - q)) / delta**2)
    assert sample_size_two_sample(p_base, delta, alpha=alpha, beta=beta) == by_hand
    assert sample_size_two_sample(p_base, delta, alpha=alpha, beta=beta, method="normal") == by_hand


def test_two_sample_exact_size_reaches_the_power_and_is_minimal() -> None:
    n = sample_size_two_sample(0.9, 0.2, method="exact")
    assert n >= sample_size_two_sample(0.9, 0.2, method="normal")
    assert power_two_sample(n, n, 0.9, 0.2) >= 0.9
    assert power_two_sample(n - 1, n - 1, 0.9, 0.2) < 0.9


def test_two_sample_power_is_the_fail_probability_of_the_verdict() -> None:
    nb, nc = 9, 7
    pb, pc = 0.8, 0.4
    brute = 0.0
    for xb in range(nb + 1):
        for xc in range(nc + 1):
            if regression_verdict(xb, nb, xc, nc).verdict is Verdict.FAIL:
                brute += stats.binom.pmf(xb, nb, pb) * stats.binom.pmf(xc, nc, pc)
    assert power_two_sample(nb, nc, pb, 0.4) == pytest.approx(brute, abs=1e-12)
    assert 0.2 < brute < 0.95


def test_pass_probability_of_an_unchanged_agent_grows_with_n() -> None:
    probs = [pass_probability(n, n, 0.9, 0.9) for n in (10, 30, 60)]
    assert probs == sorted(probs)
    assert probs[-1] > 0.3
    assert pass_probability(30, 30, 0.9, 0.8) <= 0.05 + 1e-9


# --------------------------------------------------------------------------- multiplicity


def _holm_reference(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_holm_hand_example() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.06, 0.04*1) = 0.06
    adjusted = adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="holm")
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjust_pvalues([0.01, 0.04, 0.03, 0.005]) == pytest.approx(adjusted)  # holm is the default
    assert adjust_pvalues([0.5, 0.6], method="holm") == pytest.approx([1.0, 1.0])  # capped at 1


def test_holm_matches_a_reference_loop() -> None:
    rng = np.random.default_rng(9)
    for _ in range(100):
        m = int(rng.integers(1, 25))
        p = rng.uniform(0, 1, m) ** 3
        if rng.random() < 0.3:
            p[: m // 2] = p[0]  # ties
        assert adjust_pvalues(p, method="holm") == pytest.approx(_holm_reference(list(p)), abs=1e-15)


def test_bh_matches_scipy() -> None:
    rng = np.random.default_rng(10)
    for _ in range(50):
        p = rng.uniform(0, 1, int(rng.integers(1, 30))) ** 2
        assert adjust_pvalues(p, method="bh") == pytest.approx(
            stats.false_discovery_control(p, method="bh"), abs=1e-15
        )


def test_adjust_pvalues_edge_cases() -> None:
    assert adjust_pvalues([], method="holm").size == 0
    p = [0.2, 0.01]
    out = adjust_pvalues(p, method="none")
    assert out == pytest.approx(p)
    for bad in ([0.5, 1.2], [-0.1], [float("nan")], [[0.1, 0.2]]):
        with pytest.raises(ValueError, match="pvalues"):
            adjust_pvalues(bad)
    with pytest.raises(ValueError, match=r"method.*'bogus'"):
        adjust_pvalues([0.1], method="bogus")


def test_bonferroni_alpha() -> None:
    assert bonferroni_alpha(0.05, 5) == pytest.approx(0.01)
    with pytest.raises(ValueError, match=r"scenarios.*got 0"):
        bonferroni_alpha(0.05, 0)


def test_correct_regressions_turns_a_marginal_fail_into_inconclusive() -> None:
    marginal = regression_verdict(90, 100, 80, 100)  # p = 0.037
    strong = regression_verdict(90, 100, 70, 100)  # p = 0.0003
    fine = regression_verdict(90, 100, 91, 100)
    assert marginal.verdict is strong.verdict is Verdict.FAIL
    assert 0.01 < marginal.pvalue < 0.05
    assert fine.verdict is Verdict.PASS

    results = [marginal, strong] + [fine] * 8
    corrected = correct_regressions(results)
    assert corrected[0].verdict is Verdict.INCONCLUSIVE
    assert corrected[1].verdict is Verdict.FAIL
    assert all(r.verdict is Verdict.PASS for r in corrected[2:])
    # Everything except the verdict is kept.
    assert (
        corrected[0].pvalue == marginal.pvalue and corrected[0].drop_upper_bound == marginal.drop_upper_bound
    )
    # One scenario alone needs no correction; neither does "none".
    assert correct_regressions([marginal])[0].verdict is Verdict.FAIL
    assert correct_regressions(results, method="none")[0].verdict is Verdict.FAIL
    assert suite_verdict(r.verdict for r in corrected) is Verdict.FAIL
    assert (
        suite_verdict(r.verdict for r in correct_regressions([marginal] + [fine] * 8)) is Verdict.INCONCLUSIVE
    )


# --------------------------------------------------------------------------- suite and deployment


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([Verdict.PASS], Verdict.PASS),
        ([Verdict.PASS, Verdict.PASS], Verdict.PASS),
        ([Verdict.PASS, Verdict.INCONCLUSIVE], Verdict.INCONCLUSIVE),
        ([Verdict.INCONCLUSIVE, Verdict.FAIL, Verdict.PASS], Verdict.FAIL),
        ([Verdict.FAIL], Verdict.FAIL),
        (["pass", "inconclusive"], Verdict.INCONCLUSIVE),
        (["pass", "fail"], Verdict.FAIL),
    ],
)
def test_suite_verdict(verdicts: list, expected: Verdict) -> None:
    assert suite_verdict(verdicts) is expected
    assert suite_verdict(iter(verdicts)) is expected  # any iterable


def test_suite_verdict_rejects_empty_and_unknown() -> None:
    with pytest.raises(ValueError, match="at least one"):
        suite_verdict([])
    with pytest.raises(ValueError):
        suite_verdict(["maybe"])


@pytest.mark.parametrize(
    ("suite", "kwargs", "decision", "exit_code"),
    [
        (Verdict.PASS, {}, Decision.DEPLOY, 0),
        (Verdict.FAIL, {}, Decision.BLOCK, 1),
        (Verdict.INCONCLUSIVE, {}, Decision.MANUAL, 2),
        ("pass", {}, Decision.DEPLOY, 0),
        (Verdict.PASS, {"coverage": 0.9, "min_coverage": 0.8}, Decision.DEPLOY, 0),
        (Verdict.PASS, {"coverage": 0.8, "min_coverage": 0.8}, Decision.DEPLOY, 0),
        (Verdict.PASS, {"coverage": 0.5, "min_coverage": 0.8}, Decision.MANUAL, 2),
        (Verdict.FAIL, {"coverage": 0.1, "min_coverage": 0.8}, Decision.BLOCK, 1),
        (Verdict.INCONCLUSIVE, {"coverage": 1.0, "min_coverage": 0.8}, Decision.MANUAL, 2),
    ],
)
def test_deployment_decision(suite: Verdict | str, kwargs: dict, decision: Decision, exit_code: int) -> None:
    d = deployment_decision(suite, **kwargs)
    assert d is decision
    assert d.exit_code == exit_code
    assert str(d) == decision.value


def test_deployment_decision_validates_coverage() -> None:
    with pytest.raises(ValueError, match=r"coverage.*1\.5"):
        deployment_decision(Verdict.PASS, coverage=1.5)
    with pytest.raises(ValueError, match="min_coverage"):
        deployment_decision(Verdict.PASS, min_coverage=-0.1)
