"""The runner: concurrency, trial-order feeding, early stopping, retries, errors, results, compare."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentassay._gate import BaselineCounts, ThresholdSPRT, replay
from agentassay._integrations.adapters import CallableAdapter
from agentassay._results import Results, compare_results
from agentassay._runner import run_suite, trial_seed
from agentassay._spec import AgentConfig, Check, Scenario, Settings, Suite
from agentassay._stats import Verdict, sprt
from agentassay._traces import TraceStore
from tests._support import fixture_agents as fa


def make_suite(scenarios: int = 2, **settings: object) -> Suite:
    base = {"trials": 30, "concurrency": 8, "timeout": 5.0, "seed": 3, "method": "sprt", "threshold": 0.8}
    base.update(settings)
    return Suite(
        name="t",
        agent=AgentConfig("tests._support.fixture_agents:always_ok"),
        scenarios=tuple(Scenario(f"s{i}", f"question {i}", checks=(Check("contains", "ok"),)) for i in range(scenarios)),
        settings=Settings(**base),  # type: ignore[arg-type]
    )


def go(suite: Suite, fn: object, **kw: object):
    return run_suite(suite, adapter=CallableAdapter(fn), progress=False, handle_signals=False, version="v", **kw)  # type: ignore[arg-type]


def test_concurrency_limit_is_reached_and_never_exceeded() -> None:
    gauge = fa.Gauge(0.02)
    report = go(make_suite(4, trials=25, method="fixed", concurrency=7), gauge)
    assert gauge.peak == 7
    assert sum(len(s.trials) for s in report.results.scenarios) == 100


def test_sequential_decision_equals_one_at_a_time_sprt_despite_out_of_order_finishes() -> None:
    suite = make_suite(3, trials=60, concurrency=10, threshold=0.85, delta=0.1, correction="none")
    report = go(suite, fa.jittery)
    for s in report.results.scenarios:
        outcomes = [bool(o) for o in s.outcomes]
        expected = sprt(outcomes, threshold=0.85, delta=0.1, alpha=0.05, beta=0.1, max_trials=60)
        assert s.verdict.verdict is expected.verdict
        assert s.verdict.trials_used == expected.trials
        counted = [t for t in s.trials if t.counted]
        assert len(counted) == expected.trials
        # no trial starts after the decision: the overrun is bounded by the in-flight slots
        assert len(s.trials) <= expected.trials + suite.settings.concurrency


def test_decided_scenario_stops_early_and_full_keeps_going() -> None:
    suite = make_suite(1, trials=60, concurrency=1, threshold=0.8)
    early = go(suite, fa.always_ok).results.scenarios[0]
    assert early.verdict.verdict is Verdict.PASS and len(early.trials) < 60
    full = go(suite, fa.always_ok, full=True).results.scenarios[0]
    # a baseline records 1.5 x the cap (Settings.record_cap); the test itself still decided where it did
    assert len(full.trials) == 90 == suite.settings.record_cap and full.verdict.trials_used == early.verdict.trials_used
    assert sum(t.counted for t in full.trials) == early.verdict.trials_used


def test_transient_errors_are_retried() -> None:
    flaky = fa.Flaky(failures=2)
    report = go(make_suite(1, trials=5, method="fixed", retries=2), flaky)
    trials = report.results.scenarios[0].trials
    assert all(t.passed and t.attempts == 3 for t in trials)
    exhausted = go(make_suite(1, trials=12, method="fixed", retries=1), fa.Flaky(failures=5))
    assert exhausted.aborted is not None and "TransientError" in exhausted.aborted


def test_agent_exception_is_a_failed_trial_by_default_and_excludable() -> None:
    suite = replace(
        make_suite(1, trials=20, method="fixed"),
        scenarios=(
            Scenario("refund", "I want a refund", checks=(Check("contains", "ok"),)),
            Scenario("hello", "hello", checks=(Check("contains", "ok"),)),
        ),
    )
    report = go(suite, fa.raises_on_refund)
    refund = report.results.scenario("refund")
    assert refund is not None and refund.errors == 20 and refund.passes == 0
    assert refund.verdict.verdict is Verdict.FAIL
    assert "refund service down" in next(iter(refund.failure_reasons()))
    assert report.exit_code == 1
    excluded = go(replace(suite, settings=replace(suite.settings, errors="exclude")), fa.raises_on_refund)
    r = excluded.results.scenario("refund")
    assert r is not None and r.counted_trials == 0 and r.verdict.verdict is Verdict.INCONCLUSIVE


def test_hanging_agent_times_out_and_health_check_stops_the_run() -> None:
    report = go(make_suite(2, trials=50, concurrency=10, timeout=0.2), fa.hangs)
    assert report.exit_code == 4
    assert "timed out after 0.2 s" in (report.aborted or "")
    assert sum(len(s.trials) for s in report.results.scenarios) < 30


def test_wrong_return_type_is_reported_with_the_type() -> None:
    report = go(make_suite(1, trials=20), fa.returns_none)
    assert report.exit_code == 4 and "returned NoneType" in (report.aborted or "")


def test_trial_seeds_are_reproducible_and_role_dependent() -> None:
    a = go(make_suite(2, trials=20, method="fixed"), fa.coin)
    b = go(make_suite(2, trials=20, method="fixed"), fa.coin)
    assert [s.outcomes for s in a.results.scenarios] == [s.outcomes for s in b.results.scenarios]
    assert trial_seed(1, "run", "s", 0) != trial_seed(1, "check", "s", 0)
    assert trial_seed(1, "run", "s", 0) == trial_seed(1, "run", "s", 0)


def test_store_receives_every_trial_with_keys(tmp_path) -> None:
    with TraceStore(tmp_path / "t.db") as store:
        report = go(make_suite(2, trials=10, method="fixed"), fa.coin, store=store)
        rows = store.query("v")
        assert len(rows) == 20 == store.count(run_id=report.results.run_id)
        assert {r.scenario for r in rows} == {"s0", "s1"}
        assert all(r.trace.metadata.seed is not None and r.trace.metadata.agent_version == "v" for r in rows)
        stored = sorted((r.trial, r.passed) for r in rows if r.scenario == "s0")
        assert stored == [(t.index, t.passed) for t in report.results.scenario("s0").trials]


def test_results_round_trip_and_compare_reproduces_check(tmp_path) -> None:
    suite = make_suite(2, trials=40, concurrency=6)
    base = go(suite, fa.coin, full=True).results
    path = base.save(tmp_path / "base.json")
    loaded = Results.from_dict(__import__("json").loads(path.read_text()))
    assert loaded.baseline_counts() == base.baseline_counts()
    assert [s.outcomes for s in loaded.scenarios] == [s.outcomes for s in base.scenarios]
    check = go(suite, fa.coin_low, baseline=loaded).results
    again = compare_results(loaded, check)
    assert [s.verdict.verdict for s in again.scenarios] == [s.verdict.verdict for s in check.scenarios]
    assert again.decision.decision == check.decision.decision
    assert check.decision.decision.value == "block"


def test_replay_matches_live_monitor() -> None:
    outcomes = [True] * 5 + [False] * 20
    m = ThresholdSPRT(25, threshold=0.9, delta=0.1, alpha=0.05, beta=0.1)
    v = replay(m, outcomes)
    assert v.verdict is sprt(outcomes, threshold=0.9, delta=0.1, max_trials=25).verdict


def test_missing_baseline_scenario_falls_back_to_threshold() -> None:
    suite = make_suite(1, trials=30)
    base = go(suite, fa.always_ok).results
    renamed = replace(base, scenarios=(replace(base.scenarios[0], name="other"),))
    report = go(suite, fa.always_ok, baseline=renamed)
    s = report.results.scenarios[0]
    assert s.verdict.test == "sprt" and s.verdict.notes
    assert any("not in the baseline" in n for n in report.results.notes)


@pytest.mark.parametrize("method", ["sprt", "fixed"])
def test_check_of_unchanged_agent_does_not_block(method: str) -> None:
    suite = make_suite(2, trials=60, method=method)
    base = go(suite, fa.always_ok, full=True).results
    assert base.baseline_counts()["s0"] == BaselineCounts(90, 90)  # a baseline records 1.5 x the cap
    report = go(suite, fa.always_ok, baseline=base)
    assert report.exit_code == 0


def test_sequential_design_cache_round_trip(tmp_path, monkeypatch) -> None:
    from agentassay._gate import sequential_design
    from agentassay._gate._designs import LOOKS
    from agentassay._stats import SequentialDesign

    monkeypatch.setenv("AGENTASSAY_CACHE_DIR", str(tmp_path))
    fresh = sequential_design(20, 20, 0.04, 0.1)  # not among the designs shipped in the package
    assert (tmp_path / "sequential-constants.json").is_file()
    cached = sequential_design(20, 20, 0.04, 0.1)
    direct = SequentialDesign(20, 20, 0.04, 0.1, looks=LOOKS)
    assert (cached.c_fail, cached.c_pass) == (fresh.c_fail, fresh.c_pass) == (direct.c_fail, direct.c_pass)
    for kb in (10, 18, 20):
        for kc in range(0, 21, 4):
            assert cached.decide(kb, kc, 20) == direct.decide(kb, kc, 20)
    (tmp_path / "sequential-constants.json").write_text("not json")
    assert sequential_design(20, 20, 0.04, 0.1).c_fail == direct.c_fail  # a corrupt cache only costs time


def test_prices_give_usd_and_fixed_n_gives_savings() -> None:
    from agentassay._runner._cost import price_usd
    from agentassay._traces import Cost

    assert price_usd(Cost(1_000_000, 500_000), "m", {"m": {"input": 0.4, "output": 1.6}}) == pytest.approx(1.2)
    assert price_usd(Cost(10, 10), "other", {"m": {"input": 1.0, "output": 1.0}}) is None
    assert price_usd(Cost(1_000_000, 0), "other", {"*": {"input": 2.0, "output": 0.0}}) == 2.0

    from agentassay._traces import Trace, TraceMetadata

    def priced(text: str) -> Trace:
        return Trace(output="ok", cost=Cost(1000, 500), metadata=TraceMetadata(model="m"))

    suite = make_suite(2, trials=40, prices={"m": {"input": 1.0, "output": 2.0}})
    report = go(suite, priced)
    s = report.results.scenarios[0]
    assert all(t.usd == pytest.approx((1000 * 1.0 + 500 * 2.0) / 1e6) for t in s.trials)
    assert s.fixed_n is not None and s.fixed_n > s.verdict.trials_used
    saved = report.results.savings()
    assert saved is not None and saved["trials_saved"] == saved["fixed_n_trials"] - saved["trials_run"] > 0
