"""``SequentialDesign.trials_given_baseline`` (agentassay plan): the exact stopping-trial distribution with the
baseline's count fixed, in agreement with the live test and with the baseline-averaged characteristic."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from agentassay._stats import SequentialDesign, SequentialRegression


@pytest.fixture(scope="module")
def design() -> SequentialDesign:
    return SequentialDesign(30, 20, looks=5)


def test_averaged_over_the_baseline_it_is_the_operating_characteristic(design: SequentialDesign) -> None:
    pb, pc = 0.8, 0.7
    weights = stats.binom.pmf(np.arange(design.base_trials + 1), design.base_trials, pb)
    mixed = sum(w * design.trials_given_baseline(xb, pc) for xb, w in enumerate(weights))
    oc = design.operating_characteristic(pb, pc)
    assert np.allclose(mixed, oc.trials_distribution, atol=1e-12)


def test_a_distribution_per_rate_and_the_live_test_on_a_certain_path(design: SequentialDesign) -> None:
    rows = design.trials_given_baseline(27, np.array([0.0, 0.5, 0.9, 1.0]))
    assert rows.shape == (4, design.max_trials) and np.allclose(rows.sum(axis=1), 1.0)
    for p, row in ((0.0, rows[0]), (1.0, rows[3])):  # a certain rate: one path, the live test's stopping trial
        live = SequentialRegression(27, design.base_trials, max_trials=design.max_trials, design=design)
        k = 0
        while live.verdict is None:
            k += 1
            live.update(bool(p))
        assert row[k - 1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="base_passes"):
        design.trials_given_baseline(31, 0.5)
