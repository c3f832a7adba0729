"""One-sample procedures: ``proportion_ci`` against scipy, and ``threshold_verdict`` (paper Def. 3.6)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from agentassay._stats import Verdict, proportion_ci, threshold_verdict
from agentassay._stats._onesample import threshold_codes
from agentassay._stats._verdict import VERDICT_OF_CODE

# Our method name -> scipy's name for the same interval.
SCIPY_METHOD = {"wilson": "wilson", "wilsoncc": "wilsoncc", "clopper-pearson": "exact"}
METHODS = tuple(SCIPY_METHOD)
RANK = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}


def _random_triples(seed: int, count: int = 200) -> list[tuple[int, int, float]]:
    """(passes, trials, confidence level); about one in five sits on the edge k = 0 or k = n."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(1, 301))
        u = rng.random()
        k = 0 if u < 0.1 else n if u < 0.2 else int(rng.integers(0, n + 1))
        level = float(rng.uniform(0.5, 0.999))
        out.append((k, n, level))
    return out


# --------------------------------------------------------------------------- intervals


@pytest.mark.parametrize("method", METHODS)
def test_proportion_ci_matches_scipy(method: str) -> None:
    for k, n, level in _random_triples(seed=20260101 + METHODS.index(method)):
        lo, hi = proportion_ci(k, n, confidence_level=level, method=method)
        ref = binomtest(k, n).proportion_ci(confidence_level=level, method=SCIPY_METHOD[method])
        assert float(lo) == pytest.approx(ref.low, abs=1e-9), (k, n, level)
        assert float(hi) == pytest.approx(ref.high, abs=1e-9), (k, n, level)


@pytest.mark.parametrize("method", METHODS)
def test_proportion_ci_matches_scipy_on_every_small_table(method: str) -> None:
    """Every k for tiny n, where the edge cases (k = 0, k = n, n = 1) live."""
    for n in (1, 2, 3, 5, 8):
        for k in range(n + 1):
            for level in (0.8, 0.95, 0.99):
                lo, hi = proportion_ci(k, n, confidence_level=level, method=method)
                ref = binomtest(k, n).proportion_ci(confidence_level=level, method=SCIPY_METHOD[method])
                assert (float(lo), float(hi)) == pytest.approx((ref.low, ref.high), abs=1e-9), (k, n, level)


@pytest.mark.parametrize("method", METHODS)
def test_proportion_ci_is_vectorised(method: str) -> None:
    k = np.array([0, 3, 17, 40, 40])
    n = np.array([10, 10, 40, 40, 90])
    lo, hi = proportion_ci(k, n, confidence_level=0.9, method=method)
    assert lo.shape == hi.shape == (5,)
    for i in range(5):
        lo_i, hi_i = proportion_ci(int(k[i]), int(n[i]), confidence_level=0.9, method=method)
        assert lo[i] == pytest.approx(float(lo_i), abs=1e-15)
        assert hi[i] == pytest.approx(float(hi_i), abs=1e-15)


def test_exact_is_an_alias_of_clopper_pearson() -> None:
    a = proportion_ci(7, 19, confidence_level=0.9, method="exact")
    b = proportion_ci(7, 19, confidence_level=0.9, method="clopper-pearson")
    assert (float(a[0]), float(a[1])) == (float(b[0]), float(b[1]))
    assert threshold_verdict(7, 19, threshold=0.2, method="exact").method == "clopper-pearson"


def test_proportion_ci_rejects_unknown_method() -> None:
    with pytest.raises(ValueError, match=r"method.*'bogus'"):
        proportion_ci(3, 10, method="bogus")


# --------------------------------------------------------------------------- paper examples


def test_paper_example_3_1_is_inconclusive_with_wilson() -> None:
    """45/50 against 0.85 with Wilson: the interval [0.786, 0.957] (ERRATA) contains 0.85."""
    r = threshold_verdict(45, 50, threshold=0.85, method="wilson")
    assert r.verdict is Verdict.INCONCLUSIVE
    assert round(r.ci_low, 3) == 0.786
    assert round(r.ci_high, 3) == 0.957
    assert r.pass_rate == pytest.approx(0.9)
    assert r.confidence_level == pytest.approx(0.95)
    assert r.confidence_interval == (r.ci_low, r.ci_high)
    assert r.explain().startswith("INCONCLUSIVE")


def test_paper_example_3_1_default_method_is_also_inconclusive() -> None:
    r = threshold_verdict(45, 50, threshold=0.85)
    assert r.method == "clopper-pearson"
    assert r.verdict is Verdict.INCONCLUSIVE
    assert (round(r.ci_low, 3), round(r.ci_high, 3)) == (0.782, 0.967)


def test_paper_n200_example_passes_with_wilson() -> None:
    """180/200 against 0.85: PASS. The paper prints [0.853, 0.935]; the Wilson interval is
    [0.851, 0.934] (scipy agrees), so we check the exact value and that the paper is only
    off by rounding-level amounts."""
    r = threshold_verdict(180, 200, threshold=0.85, method="wilson")
    assert r.verdict is Verdict.PASS
    assert r.ci_low >= 0.85
    ref = binomtest(180, 200).proportion_ci(0.95, method="wilson")
    assert (r.ci_low, r.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert (round(r.ci_low, 3), round(r.ci_high, 3)) == (0.851, 0.934)
    assert (r.ci_low, r.ci_high) == pytest.approx((0.853, 0.935), abs=3e-3)
    assert r.explain().startswith("PASS")


def test_clear_fail() -> None:
    r = threshold_verdict(30, 50, threshold=0.85)
    assert r.verdict is Verdict.FAIL
    assert r.ci_high < 0.85
    assert r.explain().startswith("FAIL")
    assert r.to_dict()["verdict"] == "fail"


# --------------------------------------------------------------------------- verdict vs interval


def test_verdict_is_consistent_with_the_interval_on_random_inputs() -> None:
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(300):
        n = int(rng.integers(1, 121))
        k = int(rng.integers(0, n + 1))
        th = float(rng.uniform(0.0, 1.0))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.2]))
        method = str(rng.choice(METHODS))
        r = threshold_verdict(k, n, threshold=th, alpha=alpha, method=method)
        lo, hi = proportion_ci(k, n, confidence_level=1 - alpha, method=method)
        assert (r.ci_low, r.ci_high) == (float(lo), float(hi))
        expected = Verdict.PASS if lo >= th else Verdict.FAIL if hi < th else Verdict.INCONCLUSIVE
        assert r.verdict is expected, (k, n, th, alpha, method)
        assert r.pass_rate == k / n
        assert r.confidence_level == pytest.approx(1 - alpha)
        seen.add(r.verdict)
    assert seen == set(Verdict)  # the random inputs exercised all three verdicts


@pytest.mark.parametrize("method", METHODS)
def test_verdict_table_agrees_with_threshold_verdict(method: str) -> None:
    """``threshold_codes`` (what the calibration uses) is the same rule as the function."""
    for n, th in [(1, 0.5), (20, 0.85), (37, 0.3), (60, 0.95)]:
        codes = threshold_codes(n, th, 0.05, method)
        for k in range(n + 1):
            assert (
                VERDICT_OF_CODE[int(codes[k])] is threshold_verdict(k, n, threshold=th, method=method).verdict
            )


def test_wilson_interval_ends_are_exact_at_zero_and_all_passes() -> None:
    assert threshold_verdict(10, 10, threshold=1.0, method="wilson").verdict is not Verdict.FAIL
    for n in range(1, 60):
        assert float(proportion_ci(n, n, method="wilson")[1]) == 1.0, n
        assert float(proportion_ci(0, n, method="wilson")[0]) == 0.0, n


def test_threshold_at_the_ends_of_the_unit_interval() -> None:
    # threshold 0 is met by any agent; threshold 1 can never be shown from finitely many trials.
    assert threshold_verdict(0, 10, threshold=0.0).verdict is Verdict.PASS
    assert threshold_verdict(10, 10, threshold=1.0).verdict is Verdict.INCONCLUSIVE
    assert threshold_verdict(9, 10, threshold=1.0).verdict is Verdict.FAIL


# --------------------------------------------------------------------------- properties

methods = st.sampled_from(METHODS)
alphas = st.sampled_from([0.01, 0.05, 0.1, 0.2])


@st.composite
def two_counts(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 150))
    k1 = draw(st.integers(0, n))
    k2 = draw(st.integers(k1, n))
    return k1, k2, n


@settings(max_examples=150, deadline=None)
@given(counts=two_counts(), th=st.floats(0.0, 1.0), alpha=alphas, method=methods)
def test_verdict_is_monotone_in_passes(
    counts: tuple[int, int, int], th: float, alpha: float, method: str
) -> None:
    k1, k2, n = counts
    v1 = threshold_verdict(k1, n, threshold=th, alpha=alpha, method=method).verdict
    v2 = threshold_verdict(k2, n, threshold=th, alpha=alpha, method=method).verdict
    assert RANK[v1] <= RANK[v2], (k1, k2, n, th, alpha, method, v1, v2)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 500),
    level=st.floats(0.5, 0.9999),
    method=methods,
)
def test_interval_is_inside_unit_and_contains_the_estimate(
    data: st.DataObject, n: int, level: float, method: str
) -> None:
    k = data.draw(st.integers(0, n))
    lo, hi = proportion_ci(k, n, confidence_level=level, method=method)
    lo, hi = float(lo), float(hi)
    assert 0.0 <= lo <= hi <= 1.0
    # 1e-15: Wilson's end points at k = 0 and k = n carry rounding error (pinned to exactly 0 and 1).
    assert lo - 1e-15 <= k / n <= hi + 1e-15
    assert lo < hi


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 200), data=st.data(), method=methods)
def test_interval_widens_with_the_confidence_level(n: int, data: st.DataObject, method: str) -> None:
    k = data.draw(st.integers(0, n))
    lo90, hi90 = proportion_ci(k, n, confidence_level=0.90, method=method)
    lo99, hi99 = proportion_ci(k, n, confidence_level=0.99, method=method)
    assert float(lo99) <= float(lo90) + 1e-12
    assert float(hi99) >= float(hi90) - 1e-12
