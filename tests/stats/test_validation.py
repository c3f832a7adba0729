"""Bad input raises ValueError naming the parameter and the value given."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from agentassay._stats import (
    SPRT,
    SequentialDesign,
    SequentialRegression,
    SPRTDesign,
    Verdict,
    bayesian_regression,
    regression_verdict,
    sprt,
    threshold_verdict,
)

NAN = float("nan")


def _tv(**kw: object) -> Callable[[], object]:
    args = {"passes": 5, "trials": 10, "threshold": 0.8} | kw
    return lambda: threshold_verdict(**args)


def _rv(**kw: object) -> Callable[[], object]:
    args = {"base_passes": 8, "base_trials": 10, "cand_passes": 7, "cand_trials": 10} | kw
    return lambda: regression_verdict(**args)


def _bayes(**kw: object) -> Callable[[], object]:
    args = {"base_passes": 8, "base_trials": 10, "cand_passes": 7, "cand_trials": 10} | kw
    return lambda: bayesian_regression(**args)


def _sprt(**kw: object) -> Callable[[], object]:
    args = {"threshold": 0.9, "delta": 0.1} | kw
    return lambda: SPRT(**args)


def _sprt_design(**kw: object) -> Callable[[], object]:
    args = {"threshold": 0.9, "delta": 0.1} | kw
    return lambda: SPRTDesign(**args)


def _seq(**kw: object) -> Callable[[], object]:
    args = {"base_trials": 10, "max_trials": 10} | kw
    return lambda: SequentialDesign(**args)


# (id, call, parameter named in the message, the value as the message must show it)
CASES = [
    # threshold_verdict
    ("tv-trials-0", _tv(passes=0, trials=0), "trials", "0"),
    ("tv-passes>trials", _tv(passes=5, trials=3), "passes", "5"),
    ("tv-negative-passes", _tv(passes=-1), "passes", "-1"),
    ("tv-alpha-0", _tv(alpha=0), "alpha", "0"),
    ("tv-alpha-1.5", _tv(alpha=1.5), "alpha", "1.5"),
    ("tv-alpha-nan", _tv(alpha=NAN), "alpha", "nan"),
    ("tv-method-bogus", _tv(method="bogus"), "method", "'bogus'"),
    ("tv-bool-trials", _tv(passes=1, trials=True), "trials", "True"),
    ("tv-float-trials", _tv(trials=10.0), "trials", "10.0"),
    ("tv-threshold-1.5", _tv(threshold=1.5), "threshold", "1.5"),
    ("tv-threshold-nan", _tv(threshold=NAN), "threshold", "nan"),
    # regression_verdict
    ("rv-base-trials-0", _rv(base_passes=0, base_trials=0), "base_trials", "0"),
    ("rv-cand-trials-0", _rv(cand_passes=0, cand_trials=0), "cand_trials", "0"),
    ("rv-base-passes>trials", _rv(base_passes=11), "base_passes", "11"),
    ("rv-cand-passes>trials", _rv(cand_passes=12), "cand_passes", "12"),
    ("rv-negative-passes", _rv(cand_passes=-2), "cand_passes", "-2"),
    ("rv-alpha-0", _rv(alpha=0), "alpha", "0"),
    ("rv-alpha-1.5", _rv(alpha=1.5), "alpha", "1.5"),
    ("rv-alpha-nan", _rv(alpha=NAN), "alpha", "nan"),
    ("rv-beta-1", _rv(beta=1), "beta", "1"),
    ("rv-delta-0", _rv(delta=0), "delta", "0"),
    ("rv-delta-negative", _rv(delta=-0.1), "delta", "-0.1"),
    ("rv-delta-1", _rv(delta=1.0), "delta", "1"),
    ("rv-test-bogus", _rv(test="bogus"), "test", "'bogus'"),
    ("rv-rule-bogus", _rv(rule="bogus"), "rule", "'bogus'"),
    ("rv-bool-trials", _rv(base_passes=1, base_trials=True), "base_trials", "True"),
    # bayesian_regression
    ("bayes-trials-0", _bayes(base_passes=0, base_trials=0), "base_trials", "0"),
    ("bayes-passes>trials", _bayes(cand_passes=11), "cand_passes", "11"),
    ("bayes-negative-passes", _bayes(base_passes=-1), "base_passes", "-1"),
    ("bayes-alpha-0", _bayes(alpha=0), "alpha", "0"),
    ("bayes-alpha-1.5", _bayes(alpha=1.5), "alpha", "1.5"),
    ("bayes-alpha-nan", _bayes(alpha=NAN), "alpha", "nan"),
    ("bayes-beta-1", _bayes(beta=1), "beta", "1"),
    ("bayes-delta-0", _bayes(delta=0), "delta", "0"),
    ("bayes-delta-negative", _bayes(delta=-0.1), "delta", "-0.1"),
    ("bayes-bool-trials", _bayes(cand_passes=1, cand_trials=True), "cand_trials", "True"),
    ("bayes-prior", _bayes(prior=(0.0, 1.0)), "prior", "(0.0, 1.0)"),
    # SPRT
    ("sprt-threshold-minus-delta-negative", _sprt(threshold=0.05, delta=0.1), "threshold - delta", "-0.05"),
    ("sprt-threshold-minus-delta-zero", _sprt(threshold=0.1, delta=0.1), "threshold - delta", "0"),
    ("sprt-alpha-0", _sprt(alpha=0), "alpha", "0"),
    ("sprt-alpha-1.5", _sprt(alpha=1.5), "alpha", "1.5"),
    ("sprt-alpha-nan", _sprt(alpha=NAN), "alpha", "nan"),
    ("sprt-beta-1", _sprt(beta=1), "beta", "1"),
    ("sprt-delta-0", _sprt(delta=0), "delta", "0"),
    ("sprt-delta-negative", _sprt(delta=-0.1), "delta", "-0.1"),
    ("sprt-threshold-1.5", _sprt(threshold=1.5), "threshold", "1.5"),
    ("sprt-bool-threshold", _sprt(threshold=True), "threshold", "True"),
    ("sprt-max-trials-0", _sprt(max_trials=0), "max_trials", "0"),
    ("sprt-bool-max-trials", _sprt(max_trials=True), "max_trials", "True"),
    ("sprt-alpha+beta", _sprt(alpha=0.6, beta=0.5), "alpha + beta", "alpha=0.6"),
    ("sprt-function", lambda: sprt([True], threshold=0.9, alpha=0), "alpha", "0"),
    (
        "sprt-design-threshold-minus-delta",
        _sprt_design(threshold=0.08, delta=0.1),
        "threshold - delta",
        "-0.02",
    ),
    ("sprt-design-beta-1", _sprt_design(beta=1), "beta", "1"),
    # SequentialDesign / SequentialRegression
    ("seq-base-trials-0", _seq(base_trials=0), "base_trials", "0"),
    ("seq-max-trials-0", _seq(max_trials=0), "max_trials", "0"),
    ("seq-bool-base-trials", _seq(base_trials=True), "base_trials", "True"),
    ("seq-alpha-0", _seq(alpha=0), "alpha", "0"),
    ("seq-alpha-1.5", _seq(alpha=1.5), "alpha", "1.5"),
    ("seq-alpha-nan", _seq(alpha=NAN), "alpha", "nan"),
    ("seq-delta-0", _seq(delta=0), "delta", "0"),
    ("seq-delta-negative", _seq(delta=-0.1), "delta", "-0.1"),
    ("seq-shape", _seq(shape=0.7), "shape", "0.7"),
    ("seq-live-base-passes", lambda: SequentialRegression(11, 10, max_trials=10), "base_passes", "11"),
]


def _pattern(name: str, value: str) -> str:
    """The message starts with the parameter's name and shows the value after "got".

    Floats are shown as Python prints them once converted (0 -> 0.0), so a given integer
    may carry a trailing ".0".
    """
    v = re.escape(value)
    if re.fullmatch(r"-?\d+", value):
        v += r"(\.0+)?"
    return rf"^{re.escape(name)} .*\bgot .*?{v}(?![\d.])"


@pytest.mark.parametrize(("call", "name", "value"), [pytest.param(c, n, v, id=i) for i, c, n, v in CASES])
def test_bad_input_names_parameter_and_value(call: Callable[[], object], name: str, value: str) -> None:
    with pytest.raises(ValueError, match=_pattern(name, value)):
        call()


def test_the_pattern_is_strict() -> None:
    """Guard the helper: a wrong name or value must not match."""
    msg = "passes must be between 0 and trials (3); got 5"
    assert re.search(_pattern("passes", "5"), msg)
    assert not re.search(_pattern("trials", "5"), msg)
    assert not re.search(_pattern("passes", "3"), msg)
    assert not re.search(_pattern("passes", "50"), msg)
    assert re.search(_pattern("alpha", "0"), "alpha must be in (0, 1) (exclusive); got 0.0")
    assert not re.search(_pattern("alpha", "0"), "alpha must be in (0, 1) (exclusive); got 0.05")


@pytest.mark.parametrize(
    "call",
    [
        lambda: threshold_verdict(0, 1, threshold=0.0),
        lambda: threshold_verdict(10, 10, threshold=1.0),
        lambda: threshold_verdict(
            np.int64(5), np.int64(10), threshold=np.float64(0.5), alpha=np.float64(0.1)
        ),
        lambda: regression_verdict(0, 1, 1, 1, delta=0.999),
        lambda: regression_verdict(np.int64(3), 4, np.int32(2), 4),
        lambda: bayesian_regression(0, 1, 0, 1, prior=(0.1, 5)),
        lambda: SPRT(threshold=0.2, delta=0.19),
        lambda: SequentialDesign(1, 1, shape=0.5),
    ],
)
def test_valid_edge_inputs_are_accepted(call: Callable[[], object]) -> None:
    result = call()
    verdict = getattr(result, "verdict", Verdict.INCONCLUSIVE)
    assert verdict is None or isinstance(verdict, Verdict)
