"""The estimate behind `agentassay plan` (agentassay/_features/plan/_estimate.py), on small designs."""

from __future__ import annotations

import numpy as np
import pytest

from agentassay._features.plan._estimate import estimate, rate_points, scenario_plan, summarise
from agentassay._gate import BaselineCounts, monitor_for, replay
from agentassay._spec import Scenario, Settings

SETTINGS = Settings(trials=50, baseline_trials=75, concurrency=1)  # a design shipped in designs.json
SC = Scenario("s", "hi")


def test_summarise_takes_the_expected_value_and_the_95th_percentile() -> None:
    dist = np.zeros(10)
    dist[[1, 4, 9]] = [0.5, 0.46, 0.04]
    expected, p95 = summarise(dist)
    assert expected == pytest.approx(0.5 * 2 + 0.46 * 5 + 0.04 * 10) and p95 == 5
    assert summarise(dist, floor=6) == (pytest.approx(0.96 * 6 + 0.04 * 10), 6)  # a sample fixed in advance


def test_the_sequential_estimate_matches_the_live_test_replayed_on_random_candidates() -> None:
    """The exact figure and the gate's own monitor fed seeded Bernoulli outcomes agree (Monte Carlo, 4 s.e.)."""
    base = BaselineCounts(68, 75)
    plan = scenario_plan(SC, SETTINGS, scenarios=1, baseline=base)
    assert plan.test == "sequential-regression" and plan.cap == 50 and plan.baseline == "68/75"
    rng = np.random.default_rng(5)
    used = []
    for p in rng.choice(rate_points(68, 75), size=3000):
        monitor = monitor_for(SC, SETTINGS, scenarios=1, baseline=base, regression=True)
        used.append(replay(monitor, list(rng.random(50) < p)).trials_used)
    used_arr = np.array(used)
    assert abs(used_arr.mean() - plan.expected) < 4 * used_arr.std() / np.sqrt(len(used_arr))
    assert np.mean(used_arr <= plan.p95) >= 0.93


def test_fixed_n_uses_its_cap_and_no_baseline_is_rougher_and_unpriced() -> None:
    fixed = scenario_plan(SC, Settings(trials=30, method="fixed"), scenarios=1, baseline=BaselineCounts(40, 45))
    assert (fixed.test, fixed.expected, fixed.p95) == ("fixed-n", 30.0, 30)
    plan = estimate([SC, Scenario("t", "x", threshold=0.9)], SETTINGS, baseline=None)
    assert plan.basis == "threshold" and plan.scenarios[1].rate == 0.9
    assert all(s.usd_per_trial is None for s in plan.scenarios) and plan.totals()["usd_expected"] is None
    assert any("no baseline" in n and "rougher" in n for n in plan.notes)
    d = plan.to_dict()
    assert d["method"] == "exact" and set(d["scenarios"]) == {"s", "t"} and d["total"]["cap"] == 100


def test_the_offline_simulator_costs_nothing_and_an_unknown_model_is_named() -> None:
    class Base:  # the few things the estimate reads of a baseline Results
        def __init__(self) -> None:
            self.trials = [type("T", (), {"input_tokens": 100, "output_tokens": 50, "usd": None})()] * 75

        def baseline_counts(self) -> dict[str, BaselineCounts]:
            return {"s": BaselineCounts(71, 75)}

        def scenario(self, name: str) -> object:
            return type("S", (), {"trials": self.trials, "usd_per_trial": lambda self: None})()

    offline = estimate([SC], SETTINGS, baseline=Base(), model={"provider": "offline", "name": "offline-simulator"})
    assert offline.scenarios[0].usd_per_trial == 0.0 and offline.prices == "the offline simulator"
    unknown = estimate([SC], SETTINGS, baseline=Base(), model={"provider": "openai-compatible", "name": "mine-7b"})
    assert unknown.scenarios[0].usd_per_trial is None
    assert any("'mine-7b' has no price" in n and "config.prices" in n for n in unknown.notes)
    priced = estimate([SC], Settings(trials=50, prices={"mine-7b": {"input": 1.0, "output": 2.0}}), baseline=Base(),
                      model={"provider": "openai-compatible", "name": "mine-7b"})
    per = (100 * 1.0 + 50 * 2.0) / 1e6
    assert priced.scenarios[0].usd_per_trial == pytest.approx(per)
    assert priced.totals()["usd_expected"] == pytest.approx(per * priced.scenarios[0].expected, rel=1e-5)
