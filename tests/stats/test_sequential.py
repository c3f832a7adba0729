"""Sequential regression test against a finite baseline: exact error bounds and the live object."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agentassay._stats import SequentialDesign, SequentialRegression, Verdict, sequential_regression

SIZES = (10, 20, 30)


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"n={n}")
def design(request: pytest.FixtureRequest) -> SequentialDesign:
    return SequentialDesign(request.param, request.param)


def test_false_alarm_is_at_most_alpha(design: SequentialDesign) -> None:
    ps = np.linspace(0.02, 0.98, 25)
    fails = [design.operating_characteristic(p, p).fail_probability for p in ps]
    assert max(fails) <= design.alpha + 1e-9
    assert max(fails) > design.alpha / 4  # calibrated, not trivially conservative


def test_pass_at_a_drop_of_delta_is_at_most_alpha(design: SequentialDesign) -> None:
    d = design.delta
    ps = np.linspace(d + 0.02, 0.98, 25)
    passes = [design.operating_characteristic(p, p - d).pass_probability for p in ps]
    assert max(passes) <= design.alpha + 1e-9
    assert max(passes) > design.alpha / 4


def test_operating_characteristic_is_a_distribution(design: SequentialDesign) -> None:
    for pb, pc in [(0.9, 0.9), (0.8, 0.65), (0.5, 0.55)]:
        oc = design.operating_characteristic(pb, pc)
        assert oc.pass_probability + oc.fail_probability + oc.inconclusive_probability == pytest.approx(
            1.0, abs=1e-9
        )
        assert len(oc.trials_distribution) == design.max_trials
        assert sum(oc.trials_distribution) == pytest.approx(1.0, abs=1e-9)
        assert 1 <= oc.expected_trials <= design.max_trials
        assert 1 <= oc.trials_quantile(0.5) <= oc.trials_quantile(0.95) <= design.max_trials


def _dp_through_decide(design: SequentialDesign, p_base: float, p_cand: float) -> tuple[float, float, float]:
    """P(PASS), P(FAIL), E[N] by a dynamic programme that asks ``design.decide`` at every state."""
    nb, n = design.base_trials, design.max_trials
    passed = failed = expected_n = 0.0
    for xb, wb in enumerate(stats.binom.pmf(np.arange(nb + 1), nb, p_base)):
        alive = np.array([1.0])
        for k in range(1, n + 1):
            nxt = np.zeros(k + 1)
            nxt[:-1] += alive * (1 - p_cand)
            nxt[1:] += alive * p_cand
            for c in range(k + 1):
                v = design.decide(xb, c, k)
                if v is not None:
                    passed += wb * nxt[c] * (v is Verdict.PASS)
                    failed += wb * nxt[c] * (v is Verdict.FAIL)
                    expected_n += wb * nxt[c] * k
                    nxt[c] = 0.0
            alive = nxt
    return passed, failed, expected_n


@pytest.mark.parametrize(("p_base", "p_cand"), [(0.8, 0.8), (0.8, 0.7), (0.6, 0.65)])
def test_operating_characteristic_equals_a_dp_over_decide(p_base: float, p_cand: float) -> None:
    design = SequentialDesign(20, 20)
    oc = design.operating_characteristic(p_base, p_cand)
    passed, failed, expected_n = _dp_through_decide(design, p_base, p_cand)
    assert oc.pass_probability == pytest.approx(passed, abs=1e-12)
    assert oc.fail_probability == pytest.approx(failed, abs=1e-12)
    assert oc.expected_trials == pytest.approx(expected_n, abs=1e-10)


def test_live_object_agrees_with_decide_and_stops(design: SequentialDesign) -> None:
    rng = np.random.default_rng(design.base_trials)
    seen = set()
    for _ in range(150):
        xb = int(rng.integers(0, design.base_trials + 1))
        p = float(rng.uniform(0.05, 0.95))
        outcomes = rng.random(design.max_trials) < p
        test = SequentialRegression(xb, design.base_trials, max_trials=design.max_trials)
        passes = 0
        for k, o in enumerate(outcomes, start=1):
            passes += bool(o)
            v = test.update(bool(o))
            assert v is design.decide(xb, passes, k)
            assert (test.trials, test.passes) == (k, passes)
            if v is not None:
                break
        assert test.verdict is not None  # always decided by max_trials
        seen.add(test.verdict)
        with pytest.raises(RuntimeError, match="already decided"):
            test.update(True)
        r = test.result()
        assert (r.verdict, r.cand_trials, r.cand_passes, r.base_passes) == (
            test.verdict,
            test.trials,
            passes,
            xb,
        )
        assert r.explain().startswith(r.verdict.value.upper())
        assert sequential_regression(xb, design.base_trials, outcomes, max_trials=design.max_trials) == r
    assert seen == set(Verdict)


def test_result_evidence_matches_the_boundary() -> None:
    test = SequentialRegression(28, 30, max_trials=30)
    while test.update(True) is None:
        pass
    r = test.result()
    assert r.verdict is Verdict.PASS
    assert r.pass_statistic >= r.pass_boundary
    assert (r.fail_boundary, r.pass_boundary) == test.design.boundary(r.cand_trials)
    assert r.to_dict()["verdict"] == "pass"


def test_boundaries_follow_the_wang_tsiatis_shape() -> None:
    d = SequentialDesign(20, 20, shape=0.25)
    for k in (1, 5, 20):
        bf, bp = d.boundary(k)
        assert bf == pytest.approx(d.c_fail * (20 / k) ** 0.25)
        assert bp == pytest.approx(d.c_pass * (20 / k) ** 0.25)
    pocock = SequentialDesign(20, 20, shape=0.0)
    assert pocock.boundary(1) == pocock.boundary(20) == (pocock.c_fail, pocock.c_pass)


def _monte_carlo(
    design: SequentialDesign, p_base: float, p_cand: float, runs: int, seed: int
) -> tuple[float, float, float]:
    """P(FAIL), P(PASS) and E[N] of the live object; the baseline count is drawn binomially."""
    rng = np.random.default_rng(seed)
    fails, passes, trials = 0, 0, 0
    base = rng.binomial(design.base_trials, p_base, size=runs)
    for xb in base:
        test = SequentialRegression(int(xb), design.base_trials, max_trials=design.max_trials)
        while test.update(bool(rng.random() < p_cand)) is None:
            pass
        fails += test.verdict is Verdict.FAIL
        passes += test.verdict is Verdict.PASS
        trials += test.trials
    return fails / runs, passes / runs, trials / runs


@pytest.mark.parametrize(("p_base", "p_cand"), [(0.8, 0.8), (0.8, 0.6), (0.9, 0.85)])
def test_operating_characteristic_matches_monte_carlo(p_base: float, p_cand: float) -> None:
    design = SequentialDesign(20, 20)
    oc = design.operating_characteristic(p_base, p_cand)
    runs = 5000
    fail_rate, pass_rate, mean_n = _monte_carlo(
        design, p_base, p_cand, runs, seed=int(100 * (p_base + p_cand))
    )
    for observed, exact in [(fail_rate, oc.fail_probability), (pass_rate, oc.pass_probability)]:
        assert abs(observed - exact) <= 3 * math.sqrt(exact * (1 - exact) / runs), (observed, exact)
    n = np.arange(1, design.max_trials + 1)
    sd = math.sqrt(float((n - oc.expected_trials) ** 2 @ np.asarray(oc.trials_distribution)))
    assert abs(mean_n - oc.expected_trials) <= 3 * sd / math.sqrt(runs)


@pytest.mark.parametrize(("base_trials", "max_trials"), [(10, 30), (40, 40)])
def test_pass_error_holds_between_the_calibration_grid_points(base_trials: int, max_trials: int) -> None:
    design = SequentialDesign(base_trials, max_trials, shape=0.0)

    def pass_at_drop(p: float) -> float:
        return design.operating_characteristic(p, p - design.delta).pass_probability

    ps = np.linspace(design.delta + 0.001, 0.999, 300)
    values = np.array([pass_at_drop(p) for p in ps])
    i = int(np.argmax(values))
    fine = np.linspace(ps[max(i - 1, 0)], ps[min(i + 1, ps.size - 1)], 101)
    assert max(values.max(), max(pass_at_drop(p) for p in fine)) <= design.alpha + 1e-9


# -- two claims, two levels; grouped looks (issue 21) -------------------------------------------


@pytest.fixture(scope="module")
def two_levels() -> SequentialDesign:
    """FAIL at a Bonferroni level, PASS at the suite's alpha, a look after every 5th trial."""
    return SequentialDesign(45, 30, 0.0125, 0.1, 0.25, pass_alpha=0.05, looks=5)


def test_each_boundary_holds_its_own_level(two_levels: SequentialDesign) -> None:
    d = two_levels
    fails = [d.operating_characteristic(p, p).fail_probability for p in np.linspace(0.02, 0.98, 25)]
    passes = [d.operating_characteristic(p, p - d.delta).pass_probability for p in np.linspace(0.12, 0.98, 25)]
    assert max(fails) <= d.alpha + 1e-9 and max(passes) <= d.pass_alpha + 1e-9
    assert max(fails) > d.alpha / 4 and max(passes) > d.pass_alpha / 4  # each calibrated at its own level
    one = SequentialDesign(45, 30, 0.0125, 0.1, 0.25, looks=5)  # both at the FAIL level, as before
    assert one.c_fail == d.c_fail and one.c_pass > d.c_pass  # PASS at alpha: a lower boundary
    assert d.operating_characteristic(0.9, 0.9).pass_probability > one.operating_characteristic(0.9, 0.9).pass_probability


def test_grouped_looks_decide_only_at_looks_and_the_cap(two_levels: SequentialDesign) -> None:
    d = two_levels
    assert [k for k in range(1, 31) if d.is_look(k)] == [5, 10, 15, 20, 25, 30]
    assert all(d.decide(45, c, k) is None for k in (1, 4, 6, 29) for c in range(k + 1))
    assert d.decide(40, 30, 30) is Verdict.PASS and d.decide(45, 0, 5) is Verdict.FAIL
    oc = d.operating_characteristic(0.8, 0.8)
    passed, failed, expected_n = _dp_through_decide(d, 0.8, 0.8)
    assert oc.pass_probability == pytest.approx(passed, abs=1e-12)
    assert oc.fail_probability == pytest.approx(failed, abs=1e-12)
    assert oc.expected_trials == pytest.approx(expected_n, abs=1e-10)
    assert all(p == 0.0 for k, p in enumerate(oc.trials_distribution, 1) if not d.is_look(k))
    r = sequential_regression(40, 45, [True] * 30, max_trials=30, alpha=0.0125, pass_alpha=0.05, looks=5)
    assert (r.verdict, r.cand_trials, r.alpha, r.pass_alpha, r.looks) == (Verdict.PASS, 20, 0.0125, 0.05, 5)


def test_one_look_reads_one_cell_identical_to_the_tables() -> None:
    """The live test computes one cell per look; the calibration used whole tables: same numbers, bit for bit."""
    from agentassay._stats import _exact
    from agentassay._stats._ni import exact_statistic

    for nb, nc, delta in [(20, 7, 0.1), (300, 200, 0.1), (50, 1, 0.1), (60, 60, 0.2)]:
        z, t = _exact.pooled_z.__wrapped__(nb, nc), _exact.ni_statistic.__wrapped__(nb, nc, delta)
        for xb in range(0, nb + 1, max(1, nb // 40)):
            for xc in range(nc + 1):
                assert _exact.pooled_z_cell(nb, nc, xb, xc) == z[xb, xc]
                assert exact_statistic(nb, nc, xb, xc, delta) == t[xb, xc]
