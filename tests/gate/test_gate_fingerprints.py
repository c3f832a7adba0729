"""The check gate with fingerprints: alpha split, fixed fingerprint sample, storage, warm start."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from agentassay._features.fingerprints import fingerprint_of, fingerprint_test, from_records
from agentassay._features.fingerprints._gate import SHARE, FingerprintEvidence, FingerprintPlan
from agentassay._features.fingerprints._gate import plan as fingerprint_plan
from agentassay._features.fingerprints._settings import FingerprintSettings
from agentassay._features.warm_start._prior import WarmPrior
from agentassay._features.warm_start._settings import WarmStartSettings
from agentassay._gate import BaselineCounts, ScenarioVerdict, decide, monitor_for
from agentassay._results import TrialOutcome
from agentassay._spec import Scenario, Settings
from agentassay._stats import Verdict
from agentassay._traces import Action, Cost, Step, Trace, TraceStore


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
    final, decision = decide(
        verdicts, settings, evidence=[FingerprintEvidence({"a": (shifted, plan), "b": (unchanged, plan)})]
    )
    assert final["a"].verdict is Verdict.FAIL and final["a"].rate_verdict is Verdict.PASS
    assert "calls to lookup per run" in final["a"].explanation
    assert final["a"].data["fingerprint"]["correction"] == "holm"
    assert final["a"].data["fingerprint"]["adjusted_p"] >= shifted.pvalue
    assert final["b"].verdict is Verdict.PASS and final["b"].data["fingerprint"]["verdict"] == "pass"
    assert decision.decision.value == "block"
    assert ScenarioVerdict.from_dict(final["a"].to_dict()) == final["a"]


def test_pass_rate_tests_get_half_of_alpha_when_fingerprints_share_it() -> None:
    settings = Settings(method="fixed")
    scenario = Scenario("s", "hi")
    base = BaselineCounts(90, 100)
    alone = monitor_for(scenario, settings, scenarios=2, baseline=base, regression=True)
    shared = monitor_for(scenario, settings, scenarios=2, baseline=base, regression=True, share=SHARE)
    assert shared.alpha == pytest.approx(alone.alpha * (1 - SHARE))


def test_the_plan_comes_from_the_adaptive_budget_or_the_suite() -> None:
    rng = np.random.default_rng(2)
    base = _records(rng, 40)
    auto = fingerprint_plan(base, Settings(), scenarios=4)
    assert auto is not None and auto.budget is not None and 3 <= auto.trials <= Settings().trial_cap
    fixed = fingerprint_plan(base, Settings().with_parts(FingerprintSettings(trials=12)), scenarios=4)
    assert fixed is not None and fixed.trials == 12 and fixed.budget is None
    assert fingerprint_plan(base, Settings().with_parts(FingerprintSettings(enabled=False)), scenarios=4) is None
    assert fingerprint_plan(base[:2], Settings(), scenarios=4) is None


def test_fingerprints_travel_with_the_results_and_the_store(tmp_path: Path) -> None:
    fp = fingerprint_of(_trace(2, 5))
    t = TrialOutcome(index=0, passed=True, seed=1, data={"fingerprint": fp})
    assert t.to_dict()["fingerprint"] == fp  # written flat, where the file always had it
    assert TrialOutcome.from_dict(t.to_dict()).data["fingerprint"] == fp  # full precision, no rounding
    assert TrialOutcome.from_dict({**t.to_dict(), "fingerprint": {"steps": "x"}}).data == {}  # damaged: dropped
    with TraceStore(tmp_path / "t.db") as store:
        store.add(_trace(2, 5), run_id="r", suite="s", scenario="a", agent_version="v", trial=0, data=t.data)
        assert store.run("r")[0].data == {"fingerprint": fp}


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with TraceStore(path) as store:
        store.add(_trace(1, 3), run_id="r", suite="s", scenario="a", agent_version="v", trial=0)
    con = sqlite3.connect(path)  # make it look like a store written before fingerprints existed
    con.execute("ALTER TABLE trials DROP COLUMN data")
    con.execute("UPDATE meta SET value='1' WHERE key='schema'")
    con.commit()
    con.close()
    with TraceStore(path) as store:
        assert store.count() == 1 and store.run("r")[0].data is None
        store.add(_trace(1, 3), run_id="r", suite="s", scenario="a", agent_version="v", trial=1, data={"x": 1.0})
        assert store.run("r")[1].data == {"x": 1.0}


def test_a_version_2_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """Schema 2 kept fingerprints in a column of their own: upgraded once, in place, to the generic ``data``
    column, every row kept with its fingerprint under the key the results file uses."""
    path = tmp_path / "v2.db"
    fp = fingerprint_of(_trace(2, 5))
    with TraceStore(path) as store:
        store.add(_trace(2, 5), run_id="r", suite="s", scenario="a", agent_version="v", trial=0)
        store.add(_trace(1, 3), run_id="r", suite="s", scenario="a", agent_version="v", trial=1)
    con = sqlite3.connect(path)  # as schema 2 wrote it: a fingerprint column, one row fingerprinted
    con.execute("ALTER TABLE trials RENAME COLUMN data TO fingerprint")
    con.execute("UPDATE trials SET fingerprint = ? WHERE trial = 0", (json.dumps(fp),))
    con.execute("UPDATE meta SET value='2' WHERE key='schema'")
    con.commit()
    con.close()
    for _ in range(2):  # the second open finds schema 3 and changes nothing
        with TraceStore(path) as store:
            rows = store.run("r")
            assert [r.data for r in rows] == [{"fingerprint": fp}, None]
            assert rows[0].trace == _trace(2, 5)
    con = sqlite3.connect(path)
    assert con.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == ("3",)
    assert "fingerprint" not in [r[1] for r in con.execute("PRAGMA table_info(trials)")]
    con.close()


def test_warm_start_reaches_the_threshold_sprt_and_its_evidence() -> None:
    settings = Settings(threshold=0.9, delta=0.1, trials=100)
    m = monitor_for(Scenario("s", "hi"), settings, scenarios=1, prior=WarmPrior(100, 100))
    while not m.update(True):
        pass
    v = m.finish()
    assert v.verdict is Verdict.PASS and v.trials_used < 20  # cold: 20 straight passes
    assert v.evidence["warm_start"]["worst_case_miss"] <= 1.5 * settings.beta
    assert any("Warm start" in n for n in v.notes)
    cold = monitor_for(Scenario("s", "hi"), Settings(threshold=0.9, trials=100).with_parts(WarmStartSettings(enabled=False)), scenarios=1,
                       prior=WarmPrior(100, 100))
    assert cold.start is None
