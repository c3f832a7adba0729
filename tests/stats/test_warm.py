"""Warm-started SPRT: the prior may come from any version, the error rates are computed exactly."""

from __future__ import annotations

import numpy as np
import pytest

from agentassay._stats import SPRT, SPRTDesign, Verdict, warm_start

THETA, DELTA, ALPHA, BETA, CAP = 0.9, 0.1, 0.05, 0.10, 100


def _warm_design(ws) -> SPRTDesign:
    return SPRTDesign(THETA, DELTA, ALPHA, BETA, CAP, ws.rate, ws.bound)


@pytest.mark.parametrize("prior", [(100, 100), (97, 100), (90, 100), (60, 100), (20, 20), (5, 5)])
def test_miss_rate_is_capped_and_false_alarms_never_rise_for_any_prior(prior: tuple[int, int]) -> None:
    ws = warm_start(*prior, threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=CAP)
    assert ws.used
    warm, cold = _warm_design(ws), SPRTDesign(THETA, DELTA, ALPHA, BETA, CAP)
    for p in (THETA - DELTA, 0.75, 0.6):  # the whole alternative, worst case first
        assert warm.operating_characteristic(p).pass_probability <= 1.5 * BETA + 1e-9
    assert ws.worst_case_miss == pytest.approx(warm.operating_characteristic(THETA - DELTA).pass_probability)
    for p in (THETA, 0.95, 0.99):  # the null: FAIL never more likely than cold
        assert (
            warm.operating_characteristic(p).fail_probability
            <= cold.operating_characteristic(p).fail_probability + 1e-12
        )


def test_same_version_prior_saves_at_least_30_percent_above_the_threshold() -> None:
    ws = warm_start(97, 100, threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=CAP)
    assert ws.warm_expected_trials <= 0.7 * ws.cold_expected_trials
    assert ws.expected_savings == pytest.approx(ws.cold_expected_trials - ws.warm_expected_trials)


def test_exact_characteristic_matches_a_simulation_of_the_live_object() -> None:
    ws = warm_start(97, 100, threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=CAP)
    rng = np.random.default_rng(5)
    p, reps = THETA - DELTA, 3000
    passes = 0
    for _ in range(reps):
        test = SPRT(threshold=THETA, delta=DELTA, alpha=ALPHA, beta=BETA, max_trials=CAP, warm=ws)
        for x in rng.random(CAP) < p:
            if test.update(bool(x)) is not None:
                break
        passes += test.result().verdict is Verdict.PASS
    se = (ws.worst_case_miss * (1 - ws.worst_case_miss) / reps) ** 0.5
    assert abs(passes / reps - ws.worst_case_miss) <= 4 * se


def test_no_prior_means_the_cold_sprt() -> None:
    ws = warm_start(0, 0, threshold=THETA, max_trials=CAP)
    assert not ws.used and ws.expected_savings == 0
    assert "no recorded trials" in ws.explain()
    test = SPRT(threshold=THETA, max_trials=CAP, warm=ws)
    assert test.design == SPRTDesign(THETA, DELTA, ALPHA, BETA, CAP)


def test_warm_pass_is_explained_and_serialised() -> None:
    ws = warm_start(100, 100, threshold=THETA, max_trials=CAP)
    test = SPRT(threshold=THETA, max_trials=CAP, warm=ws)
    verdict = None
    while verdict is None:
        verdict = test.update(True)
    r = test.result()
    assert verdict is Verdict.PASS and r.trials < 20  # the cold SPRT needs 20 straight passes
    assert "warm start" in r.explain() and r.to_dict()["warm_rate"] == pytest.approx(ws.rate)
    assert ws.to_dict()["used"] is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"inflation": 0.9}, "inflation must be >= 1"), ({"inflation": 20.0}, "inflation \\* beta must be < 1")],
)
def test_bad_arguments_say_what_to_change(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        warm_start(9, 10, threshold=THETA, **kwargs)
    with pytest.raises(ValueError, match="prior_passes"):
        warm_start(11, 10, threshold=THETA)
