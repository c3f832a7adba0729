"""config.proxy: spec, the gate's combination, and run / check / compare on the offline example."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agentassay._features.proxy._gate import ProxyEvidence, combine
from agentassay._features.proxy._savings import proxy_trials
from agentassay._gate import ScenarioVerdict, decide
from agentassay._results import Results, load_results
from agentassay._spec import ModelConfig, Settings, SpecError, parse_suite
from agentassay._stats import Verdict, combine_proxy, regression_verdict
from agentassay._traces import TraceStore

ROOT = Path(__file__).resolve().parents[3]

SUITE = """\
name: customer-service
agent: examples.customer_service.v1:triage_agent
model: offline
config:
  trials: 40
  method: fixed
  concurrency: 20
  seed: 7
  prices:
    "*": {input: 0.40, output: 1.60}
    offline-mini: {input: 0.02, output: 0.08}
  proxy:
    model: {provider: offline, name: offline-mini}
    paired: 10
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    properties:
      - must_reach: Seat Booking Agent
      - must_call: update_seat
    evaluator:
      - contains: "14C"
  - name: baggage
    input: "How much baggage can I bring?"
    properties:
      - must_call: faq_lookup_tool
    evaluator:
      - contains: "bag"
"""


# -- spec ------------------------------------------------------------------------------------------
def test_proxy_is_parsed_into_settings() -> None:
    s = parse_suite(SUITE).settings
    assert s.part("proxy").model == ModelConfig(provider="offline", name="offline-mini")
    assert (s.part("proxy").paired, s.part("proxy").min_target) == (10, 10)


@pytest.mark.parametrize(
    ("edit", "key", "words"),
    [
        (("method: fixed", "method: sprt"), "config.method", "needs `method: fixed`"),
        (("{provider: offline, name: offline-mini}", "{provider: openai}"), "config.proxy.model.name", "required"),
        (("paired: 10", "paired: 2"), "config.proxy.paired", "integer >= 3"),
        (("paired: 10", "pairs: 10"), "config.proxy.pairs", "Did you mean 'paired'"),
        (("    model: {provider: offline, name: offline-mini}\n", ""), "config.proxy.model", "required"),
    ],
)
def test_bad_proxy_names_the_key(edit: tuple[str, str], key: str, words: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_suite(SUITE.replace(*edit))
    assert e.value.key == key
    assert words in e.value.message


def test_a_proxy_for_a_plain_callable_is_refused_before_any_trial() -> None:
    from agentassay._integrations.adapters import CallableAdapter
    from agentassay._runner import run_suite

    calls: list[str] = []
    suite = parse_suite(SUITE.replace("examples.customer_service.v1:triage_agent", "x.y:z"))
    with pytest.raises(SpecError) as e:
        run_suite(suite, adapter=CallableAdapter(lambda s: calls.append(s) or "14C bag"), progress=False)
    assert e.value.key == "config.proxy" and "callable" in e.value.message
    assert calls == []


# -- the gate's combination -------------------------------------------------------------------------
def _verdict(bp: int, bn: int, cp: int, cn: int, alpha: float = 0.05) -> ScenarioVerdict:
    r = regression_verdict(bp, bn, cp, cn, alpha=alpha, beta=0.1, delta=0.1)
    return ScenarioVerdict(r.verdict, "regression", r.explain(), r.to_dict(), cn, r.pvalue)


@pytest.mark.parametrize(
    ("target", "proxy", "expected"),
    [
        ((90, 100, 7, 10), (80, 90, 60, 90), Verdict.FAIL),  # both drop: together significant
        ((90, 100, 9, 10), (80, 90, 79, 90), Verdict.INCONCLUSIVE),  # nothing moved, 10 target trials
        ((90, 100, 7, 10), (80, 90, 82, 90), Verdict.INCONCLUSIVE),  # the proxy is blind to it
    ],
)
def test_combine_uses_weighted_stouffer_and_keeps_pass_to_the_target(
    target: tuple[int, int, int, int], proxy: tuple[int, int, int, int], expected: Verdict
) -> None:
    v = _verdict(*target)
    out = combine({"s": v}, Settings(method="fixed"), ProxyEvidence(0.8, {"s": proxy}))["s"]
    p_proxy = regression_verdict(*proxy, alpha=0.05, beta=0.1, delta=0.1).pvalue
    want = combine_proxy(v.pvalue, p_proxy, rho=0.8, n_target=10, n_proxy=proxy[3]).pvalue
    assert math.isclose(out.pvalue, float(want))
    assert out.verdict is expected
    assert out.evidence["proxy"]["p_target"] == v.pvalue and out.evidence["proxy"]["p_proxy"] == p_proxy


def test_a_target_pass_is_never_vetoed_and_holm_sees_the_combined_p() -> None:
    passing = _verdict(50, 100, 100, 100)
    assert passing.verdict is Verdict.PASS
    out = combine({"s": passing}, Settings(method="fixed"), ProxyEvidence(1.0, {"s": (90, 90, 0, 90)}))
    assert out["s"].verdict is Verdict.PASS
    settings = Settings(method="fixed")
    verdicts = {"a": _verdict(90, 100, 7, 10), "b": _verdict(90, 100, 9, 10)}
    evidence = ProxyEvidence(0.8, {"a": (80, 90, 60, 90), "b": (80, 90, 79, 90)})
    final, decision = decide(verdicts, settings, evidence=[evidence])
    assert final["a"].verdict is Verdict.FAIL and any("Holm" in n for n in final["a"].notes)
    assert decision.verdict is Verdict.FAIL


def test_evidence_from_results_sections() -> None:
    base = {"rho": 0.7, "scenarios": {"a": {"passes": 8, "trials": 9}, "gone": {"passes": 1, "trials": 1}}}
    cand = {"scenarios": {"a": {"passes": 5, "trials": 9}, "new": {"passes": 1, "trials": 1}}}
    assert ProxyEvidence.from_sections(base, cand) == ProxyEvidence(0.7, {"a": (8, 9, 5, 9)})
    assert ProxyEvidence.from_sections({"scenarios": base["scenarios"]}, cand) is None
    assert ProxyEvidence.from_sections(base, None) is None


def test_committed_benchmark_shows_the_gate_rule_keeps_alpha() -> None:
    data = json.loads((ROOT / "benchmarks" / "results" / "multifidelity.json").read_text())
    reps = data["gate_reps"]
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    assert len(data["gate"]) == 3
    for g in data["gate"]:
        assert g["unchanged"]["fail"] <= bound
        assert g["allocation"]["proxy_pays"] and g["allocation"]["cost_ratio"] < 0.5
        assert g["follows"]["fail"] > g["blind"]["fail"]


# -- end to end on the offline example ---------------------------------------------------------------
@pytest.fixture
def suite_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("agents")
    monkeypatch.chdir(ROOT)
    path = tmp_path / "agentassay.yml"
    path.write_text(SUITE)
    return path


def test_run_records_rho_and_the_proxy_arm_then_check_uses_the_allocation(
    suite_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentassay._integrations.cli import main

    base, v2, again = tmp_path / "base.json", tmp_path / "v2.json", tmp_path / "again.json"
    store = tmp_path / "t.db"
    assert main(["run", str(suite_file), "-o", str(base), "-q", "--store", str(store)]) == 0
    recorded = load_results(base)
    proxy = recorded.sections.get("proxy")
    with TraceStore(store) as db:  # the proxy's traces are filed apart from the target's
        versions = set(db.versions())
        target = "examples.customer_service.v1:triage_agent"
        assert versions == {target, f"{target}+proxy:offline-mini"}
        assert len(db.query(f"{target}+proxy:offline-mini")) == 80 and len(db.query(target)) == 80
    assert proxy is not None and proxy["label"] == "offline-mini"
    # Same behaviour, same seeds: the offline simulator is a perfect proxy of itself.
    assert proxy["rho"] == pytest.approx(1.0) and proxy["paired_rows"] == 20
    assert 0 < proxy["cost_proxy"] < proxy["cost_target"]
    alloc = proxy["allocation"]
    assert (alloc["n_target"], alloc["n_proxy"]) == (10, 30)
    assert {n: s["trials"] for n, s in proxy["scenarios"].items()} == {"seat_change": 30, "baggage": 30}
    assert proxy_trials(recorded) == 80  # 2 x 10 paired + 2 x 30 own

    code = main(["check", str(suite_file), "--baseline", str(base), "-o", str(v2),
                 "--agent", "examples.customer_service.v2:triage_agent"])
    assert code == 1
    out = capsys.readouterr().out
    assert "proxy offline-mini: 60 trials" in out and "10 target + 30 proxy trials per scenario" in out
    cand = load_results(v2)
    seat = cand.scenario("seat_change")
    assert seat is not None and len(seat.trials) == 10
    assert seat.verdict.verdict is Verdict.FAIL
    assert seat.verdict.evidence["proxy"]["p_combined"] <= 0.05
    assert cand.savings()["proxy_usd"] == cand.sections.get("proxy")["usd"] > 0

    # compare re-derives the same verdicts from the two files (proxy counts included).
    assert main(["compare", str(base), str(v2), "-o", str(again), "-q"]) == 1
    redone = load_results(again)
    for s in cand.scenarios:
        r = redone.scenario(s.name)
        assert r is not None and r.verdict.verdict is s.verdict.verdict and r.verdict.pvalue == s.verdict.pvalue

    # The settings (with the proxy model) survive the file.
    assert Results.from_dict(json.loads(v2.read_text())).settings.part("proxy").model == ModelConfig("offline", "offline-mini")


def test_a_baseline_without_proxy_trials_runs_the_target_alone(
    suite_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentassay._integrations.cli import main

    plain = tmp_path / "plain.yml"
    plain.write_text(SUITE.split("  proxy:")[0] + "scenarios:" + SUITE.split("scenarios:")[1])
    base, cand = tmp_path / "base.json", tmp_path / "cand.json"
    assert main(["run", str(plain), "-o", str(base), "-q"]) == 0
    assert load_results(base).sections.get("proxy") is None
    main(["check", str(suite_file), "--baseline", str(base), "-o", str(cand), "-q"])
    capsys.readouterr()
    results = load_results(cand)
    assert results.sections.get("proxy") is None
    assert any("no proxy trials" in n for n in results.notes)
    assert all(len(s.trials) >= 40 for s in results.scenarios)
