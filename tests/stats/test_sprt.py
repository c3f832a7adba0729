"""Wald's SPRT (paper Def. 3.9): boundaries, the live object, and the exact operating characteristic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentassay._stats import SPRT, SPRTDesign, Verdict, sprt

THETA, DELTA, ALPHA, BETA = 0.9, 0.1, 0.05, 0.10


@pytest.mark.parametrize(("alpha", "beta"), [(0.05, 0.10), (0.01, 0.2), (0.1, 0.1), (0.3, 0.4)])
def test_boundaries_and_steps(alpha: float, beta: float) -> None:
    d = SPRTDesign(0.8, 0.15, alpha, beta)
    assert d.lower == pytest.approx(math.log(beta / (1 - alpha)), abs=1e-15)
    assert d.upper == pytest.approx(math.log((1 - beta) / alpha), abs=1e-15)
    assert d.step_pass == pytest.approx(math.log(0.65 / 0.8), abs=1e-15)
    assert d.step_fail == pytest.approx(math.log(0.35 / 0.2), abs=1e-15)
    assert d.lower < 0 < d.upper
    assert d.llr(7, 3) == pytest.approx(7 * d.step_pass + 3 * d.step_fail)


def test_all_passes_stop_with_pass_then_refuse_updates() -> None:
    # Each pass moves the log-likelihood ratio by log(0.8/0.9) = -0.1178; the lower boundary
    # is log(0.1/0.95) = -2.2513, first reached after ceil(2.2513/0.1178) = 20 passes.
    test = SPRT(threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA)
    verdicts = [test.update(True) for _ in range(20)]
    assert verdicts[:-1] == [None] * 19
    assert verdicts[-1] is Verdict.PASS
    assert test.verdict is Verdict.PASS and test.trials == 20 and test.passes == 20
    with pytest.raises(RuntimeError, match="already decided PASS"):
        test.update(True)
    with pytest.raises(RuntimeError):
        test.update(False)
    assert test.trials == 20  # the refused outcomes were not counted
    r = test.result()
    assert r.verdict is Verdict.PASS
    assert r.log_likelihood_ratio <= r.lower_boundary
    assert r.explain().startswith("PASS")


def test_all_failures_stop_with_fail() -> None:
    # Each failure adds log(0.2/0.1) = 0.693; the upper boundary log(0.9/0.05) = 2.890 is crossed at 5.
    test = SPRT(threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA)
    assert [test.update(False) for _ in range(5)] == [None, None, None, None, Verdict.FAIL]
    with pytest.raises(RuntimeError, match="FAIL"):
        test.update(False)
    r = test.result()
    assert (r.verdict, r.trials, r.passes) == (Verdict.FAIL, 5, 0)
    assert r.log_likelihood_ratio >= r.upper_boundary
    assert r.to_dict()["verdict"] == "fail"


def test_sprt_function_stops_at_first_crossing_and_ignores_the_rest() -> None:
    r = sprt([True] * 20 + [False] * 50, threshold=THETA, delta=DELTA)
    assert (r.verdict, r.trials, r.passes) == (Verdict.PASS, 20, 20)


def test_sprt_with_max_trials_ends_inconclusive() -> None:
    r = sprt([True] * 100, threshold=THETA, delta=DELTA, max_trials=10)
    assert r.verdict is Verdict.INCONCLUSIVE
    assert r.trials == 10 and r.max_trials == 10
    assert "cap of 10 trials" in r.explain()
    live = SPRT(threshold=THETA, delta=DELTA, max_trials=10)
    assert [live.update(True) for _ in range(10)][-1] is Verdict.INCONCLUSIVE
    with pytest.raises(RuntimeError):
        live.update(True)


def test_sequence_that_ends_undecided_is_inconclusive() -> None:
    r = sprt([True, False, True], threshold=THETA, delta=DELTA)
    assert r.verdict is Verdict.INCONCLUSIVE and r.trials == 3
    assert "not yet decided" in r.explain()
    assert SPRT(threshold=THETA).result().verdict is Verdict.INCONCLUSIVE


def test_a_boundary_crossing_on_the_last_allowed_trial_is_a_decision() -> None:
    r = sprt([True] * 20, threshold=THETA, delta=DELTA, max_trials=20)
    assert r.verdict is Verdict.PASS


# --------------------------------------------------------------------------- operating characteristic


def _simulate(
    p: float, runs: int, rng: np.random.Generator, max_trials: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised SPRT written from the textbook formulas, independent of the package.

    Returns the verdict (0 inconclusive, 1 pass, 2 fail) and the trials used by each run.
    """
    p0, p1 = THETA, THETA - DELTA
    lp, lf = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    lower, upper = math.log(BETA / (1 - ALPHA)), math.log((1 - BETA) / ALPHA)
    tol = 1e-12  # the lattice never lands within 1e-12 of these irrational boundaries
    verdict = np.zeros(runs, dtype=np.int8)
    trials = np.zeros(runs, dtype=np.int64)
    alive = np.arange(runs)
    fails = np.zeros(runs, dtype=np.int64)
    done, block = 0, 250
    while alive.size and (max_trials is None or done < max_trials):
        m = block if max_trials is None else min(block, max_trials - done)
        f = fails[alive, None] + np.cumsum(rng.random((alive.size, m)) >= p, axis=1)
        k = done + np.arange(1, m + 1)
        llr = (k - f) * lp + f * lf
        hit = (llr <= lower + tol) | (llr >= upper - tol)
        stopped = hit.any(axis=1)
        first = hit.argmax(axis=1)
        idx = alive[stopped]
        at = first[stopped]
        verdict[idx] = np.where(llr[stopped, at] <= lower + tol, 1, 2)
        trials[idx] = done + at + 1
        fails[alive] = f[:, -1]
        alive = alive[~stopped]
        done += m
    trials[alive] = done  # truncated runs: INCONCLUSIVE after max_trials
    return verdict, trials


@pytest.mark.parametrize("max_trials", [None, 60])
@pytest.mark.parametrize("p", [0.9, 0.8])
def test_operating_characteristic_matches_monte_carlo(p: float, max_trials: int | None) -> None:
    design = SPRTDesign(THETA, DELTA, ALPHA, BETA, max_trials)
    oc = design.operating_characteristic(p)
    runs = 20_000
    rng = np.random.default_rng(1000 + int(p * 100) + (max_trials or 0))
    verdict, trials = _simulate(p, runs, rng, max_trials)

    total = oc.pass_probability + oc.fail_probability + oc.inconclusive_probability
    assert total == pytest.approx(1.0, abs=1e-9)
    assert sum(oc.trials_distribution) == pytest.approx(1.0, abs=1e-9)
    if max_trials is None:
        assert oc.inconclusive_probability == 0.0
    else:
        assert len(oc.trials_distribution) == max_trials
        assert oc.inconclusive_probability > 0.1

    for code, exact in [(2, oc.fail_probability), (1, oc.pass_probability)]:
        se = math.sqrt(exact * (1 - exact) / runs)
        assert abs((verdict == code).mean() - exact) <= 3 * se, (code, exact)

    n = np.arange(1, len(oc.trials_distribution) + 1)
    dist = np.asarray(oc.trials_distribution)
    assert float(n @ dist) == pytest.approx(oc.expected_trials, rel=1e-12)
    sd = math.sqrt(float((n - oc.expected_trials) ** 2 @ dist))
    assert abs(trials.mean() - oc.expected_trials) <= 3 * sd / math.sqrt(runs)


@pytest.mark.parametrize("max_trials", [None, 60])
def test_live_object_stops_exactly_at_the_first_boundary_crossing(max_trials: int | None) -> None:
    """The SPRT object against the textbook rule applied to the same outcome sequences."""
    lower, upper = math.log(BETA / (1 - ALPHA)), math.log((1 - BETA) / ALPHA)
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(200):
        outcomes = rng.random(2000) < rng.choice([0.8, 0.85, 0.9])
        fails = np.cumsum(~outcomes)
        k = np.arange(1, outcomes.size + 1)
        llr = (k - fails) * math.log(0.8 / 0.9) + fails * math.log(0.2 / 0.1)
        crossed = np.flatnonzero((llr <= lower) | (llr >= upper))
        expected_n = int(crossed[0]) + 1
        expected = Verdict.PASS if llr[expected_n - 1] <= lower else Verdict.FAIL
        if max_trials is not None and expected_n > max_trials:
            expected_n, expected = max_trials, Verdict.INCONCLUSIVE

        test = SPRT(threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=max_trials)
        for i, o in enumerate(outcomes, start=1):
            v = test.update(bool(o))
            assert (v is None) == (i < expected_n)
            if v is not None:
                break
        assert (test.verdict, test.trials) == (expected, expected_n)
        assert sprt(outcomes, threshold=THETA, delta=DELTA, max_trials=max_trials).verdict is expected
        seen.add(expected)
    assert {Verdict.PASS, Verdict.FAIL} <= seen


def test_exact_trial_distribution_quantiles() -> None:
    oc = SPRTDesign(THETA, DELTA, ALPHA, BETA).operating_characteristic(0.9)
    q50, q95 = oc.trials_quantile(0.5), oc.trials_quantile(0.95)
    c = np.cumsum(oc.trials_distribution)
    assert c[q95 - 1] >= 0.95 > c[q95 - 2]
    assert c[q50 - 1] >= 0.5 > c[q50 - 2]
    assert 20 <= q50 < q95
    # Fewer than 20 trials can never end the test at p = theta (20 passes are needed to PASS).
    assert sum(oc.trials_distribution[:4]) == 0.0


def test_wald_asn_matches_errata() -> None:
    """Paper Eq. 9 / Eq. 10: the paper printed 52 and 34; Wald's formulas give 54.4 and 53.5."""
    d = SPRTDesign(THETA, DELTA, ALPHA, BETA)
    assert d.wald_asn(0.9) == pytest.approx(54.4, abs=0.1)
    assert d.wald_asn(0.8) == pytest.approx(53.5, abs=0.1)
    # By hand: E[N | H0] = ((1-a) A + a B) / E[step | H0], E[N | H1] = (b A + (1-b) B) / E[step | H1].
    A, B = d.lower, d.upper
    z0 = 0.9 * d.step_pass + 0.1 * d.step_fail
    z1 = 0.8 * d.step_pass + 0.2 * d.step_fail
    assert d.wald_asn(0.9) == pytest.approx(((1 - ALPHA) * A + ALPHA * B) / z0, rel=1e-12)
    assert d.wald_asn(0.8) == pytest.approx((BETA * A + (1 - BETA) * B) / z1, rel=1e-12)


def test_wald_asn_elsewhere_is_close_to_exact() -> None:
    d = SPRTDesign(THETA, DELTA, ALPHA, BETA)
    for p in (0.7, 0.85, 0.95):
        wald, exact = d.wald_asn(p), d.operating_characteristic(p).expected_trials
        assert wald > 0
        assert wald == pytest.approx(exact, rel=0.25)  # Wald ignores overshoot


def test_operating_characteristic_rejects_rates_outside_the_unit_interval() -> None:
    d = SPRTDesign(THETA, DELTA, ALPHA, BETA, max_trials=50)
    with pytest.raises(ValueError, match=r"p .*1\.5"):
        d.operating_characteristic(1.5)


def test_operating_characteristic_at_degenerate_rates() -> None:
    d = SPRTDesign(THETA, DELTA, ALPHA, BETA)
    assert d.operating_characteristic(1.0).pass_probability == pytest.approx(1.0)
    assert d.operating_characteristic(1.0).expected_trials == pytest.approx(20.0)
    assert d.operating_characteristic(0.0).fail_probability == pytest.approx(1.0)
    assert d.operating_characteristic(0.0).expected_trials == pytest.approx(5.0)
