"""The check gate with fingerprints: alpha split, fixed fingerprint sample, storage, warm start."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from agentassay.features.fingerprints import fingerprint_of, fingerprint_test, from_records
from agentassay.gate import BaselineCounts, ScenarioVerdict, decide, fingerprint_plan, monitor_for
from agentassay.gate._fingerprints import SHARE, FingerprintPlan
from agentassay.results import TrialOutcome
from agentassay.spec import Scenario, Settings
from agentassay.stats import Verdict
from agentassay.traces import Action, Cost, Step, Trace, TraceStore


def _trace(calls: int, words: int) -> Trace:
    steps = tuple(Step(Action.CALL_TOOL, agent="A", tool="lookup", output="ok") for _ in range(calls))
    return Trace(steps=(*steps, Step(Action.RESPOND, agent="A")), output="w " * words, cost=Cost(100, words, 0.1))


def _records(rng: np.random.Generator, n: int, extra: float = 0.0) -> list[dict[str, float]]:
    return [fingerprint_of(_trace(1 + int(rng.random() < extra), int(rng.integers(8, 12)))) for _ in range(n)]


def _verdict(v: Verdict) -> ScenarioVerdict:
    return ScenarioVerdict(v, "sequential-regression", f"{v.value.upper()}: pass rate", {}, 30)


def test_a_behaviour_shift_fails_a_scenario_whose_pass_rate_passed() -> None:
    rng = np.random.default_rng(1)
    base, cand, same = _records(rng, 40), _records(rng, 30, extra=0.8), _records(rng, 30)
    settings = Settings()
    shifted = fingerprint_test(*from_records(base, cand), alpha=settings.alpha * SHARE, seed=1)
    unchanged = fingerprint_test(*from_records(base, same), alpha=settings.alpha * SHARE, seed=1)
    plan = FingerprintPlan(30, settings.alpha * SHARE)
    verdicts = {"a": _verdict(Verdict.PASS), "b": _verdict(Verdict.PASS)}
    final, decision = decide(verdicts, settings, {"a": (shifted, plan), "b": (unchanged, plan)})
    assert final["a"].verdict is Verdict.FAIL and final["a"].rate_verdict is Verdict.PASS
    assert "calls to lookup per run" in final["a"].explanation
    assert final["a"].fingerprint["correction"] == "holm"
    assert final["a"].fingerprint["adjusted_p"] >= shifted.p_value
    assert final["b"].verdict is Verdict.PASS and final["b"].fingerprint["verdict"] == "pass"
    assert decision.decision.value == "block"
    assert ScenarioVerdict.from_dict(final["a"].to_dict()) == final["a"]


def test_pass_rate_tests_get_half_of_alpha_when_fingerprints_share_it() -> None:
    settings = Settings(method="fixed")
    scenario = Scenario("s", "hi")
    base = BaselineCounts(90, 100)
    alone = monitor_for(scenario, settings, scenarios=2, baseline=base, regression=True)
    shared = monitor_for(scenario, settings, scenarios=2, baseline=base, regression=True, fingerprints=True)
    assert shared.alpha == pytest.approx(alone.alpha * (1 - SHARE))


def test_the_plan_comes_from_the_adaptive_budget_or_the_suite() -> None:
    rng = np.random.default_rng(2)
    base = _records(rng, 40)
    auto = fingerprint_plan(base, Settings(), scenarios=4)
    assert auto is not None and auto.budget is not None and 3 <= auto.trials <= Settings().trial_cap
    fixed = fingerprint_plan(base, Settings(fingerprint_trials=12), scenarios=4)
    assert fixed is not None and fixed.trials == 12 and fixed.budget is None
    assert fingerprint_plan(base, Settings(fingerprints=False), scenarios=4) is None
    assert fingerprint_plan(base[:2], Settings(), scenarios=4) is None


def test_fingerprints_travel_with_the_results_and_the_store(tmp_path: Path) -> None:
    fp = fingerprint_of(_trace(2, 5))
    t = TrialOutcome(index=0, passed=True, seed=1, fingerprint=fp)
    assert TrialOutcome.from_dict(t.to_dict()).fingerprint == fp  # full precision, no rounding
    with TraceStore(tmp_path / "t.db") as store:
        store.add(_trace(2, 5), run_id="r", suite="s", scenario="a", agent_version="v", trial=0, fingerprint=fp)
        assert store.run("r")[0].fingerprint == fp


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with TraceStore(path) as store:
        store.add(_trace(1, 3), run_id="r", suite="s", scenario="a", agent_version="v", trial=0)
    con = sqlite3.connect(path)  # make it look like a store written before fingerprints existed
    con.execute("ALTER TABLE trials DROP COLUMN fingerprint")
    con.execute("UPDATE meta SET value='1' WHERE key='schema'")
    con.commit()
    con.close()
    with TraceStore(path) as store:
        assert store.count() == 1 and store.run("r")[0].fingerprint is None
        store.add(_trace(1, 3), run_id="r", suite="s", scenario="a", agent_version="v", trial=1, fingerprint={"x": 1.0})
        assert store.run("r")[1].fingerprint == {"x": 1.0}


def test_warm_start_reaches_the_threshold_sprt_and_its_evidence() -> None:
    settings = Settings(threshold=0.9, delta=0.1, trials=100)
    m = monitor_for(Scenario("s", "hi"), settings, scenarios=1, prior=BaselineCounts(100, 100))
    while not m.update(True):
        pass
    v = m.finish()
    assert v.verdict is Verdict.PASS and v.trials_used < 20  # cold: 20 straight passes
    assert v.evidence["warm_start"]["worst_case_miss"] <= 1.5 * settings.beta
    assert any("Warm start" in n for n in v.notes)
    cold = monitor_for(Scenario("s", "hi"), Settings(threshold=0.9, trials=100, warm_start=False), scenarios=1,
                       prior=BaselineCounts(100, 100))
    assert cold.warm is None
