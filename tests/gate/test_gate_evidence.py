"""The gate's evidence: shares of alpha fixed in a plan, a plugin's ScenarioTest, and Holm at the level the
pass-rate tests actually hold."""

from __future__ import annotations

import pytest

from agentassay._gate import GatePlan, ScenarioTest, ScenarioVerdict, decide
from agentassay._spec import Settings
from agentassay._stats import Verdict


def verdict(v: Verdict, p: float | None = None, alpha: float = 0.05, test: str = "regression") -> ScenarioVerdict:
    return ScenarioVerdict(v, test, f"{v.value.upper()}: rate", {"alpha": alpha}, 30, pvalue=p)


def test_shares_are_checked_and_summed() -> None:
    plan = GatePlan(Settings(), ("a", "b"))
    plan.share("a", "fingerprints", 0.5)
    plan.share("a", "length", 0.1)
    assert plan.taken("a") == pytest.approx(0.6) and plan.taken("b") == 0.0
    plan.share("a", "length", 0.2)  # re-declaring a kind replaces its share
    assert plan.taken("a") == pytest.approx(0.7)
    with pytest.raises(ValueError, match="leaving nothing for the pass-rate test"):
        plan.share("a", "judge", 0.3)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        plan.share("b", "x", 0.0)
    plan.require("a", "fingerprints", 30)
    plan.require("a", "length", 40)
    assert (plan.min_trials("a"), plan.min_trials("b"), plan.sample("a", "fingerprints")) == (40, 0, 30)


def test_a_scenario_test_is_holm_adjusted_and_only_ever_fails() -> None:
    settings = Settings(alpha=0.05)
    verdicts = {"a": verdict(Verdict.PASS), "b": verdict(Verdict.PASS), "c": verdict(Verdict.INCONCLUSIVE)}
    test = ScenarioTest("length", 0.1, {"a": 0.001, "b": 0.004, "c": 0.9}, describe={"a": "answers grew longer"})
    final, decision = decide(verdicts, settings, evidence=[test])
    # Holm over three at alpha x 0.1 = 0.005: 0.001 x 3 = 0.003 rejects, 0.004 x 2 = 0.008 does not.
    assert final["a"].verdict is Verdict.FAIL and final["a"].rate_verdict is Verdict.PASS
    # the pass-rate evidence first (it held), then the test that failed it
    assert final["a"].explanation.startswith("FAIL. Pass rate: PASS")
    assert final["a"].explanation.endswith(". Length: answers grew longer (p = 0.003).")
    assert final["a"].evidence["length"] == {
        "verdict": "fail", "pvalue": 0.001, "adjusted_p": pytest.approx(0.003), "alpha": pytest.approx(0.005),
        "correction": "holm",
    }
    assert final["b"].verdict is Verdict.PASS and final["b"].evidence["length"]["verdict"] == "pass"
    assert final["c"].verdict is Verdict.INCONCLUSIVE  # no test can turn anything into a PASS
    assert decision.decision.value == "block"


def test_unknown_evidence_stage_is_refused() -> None:
    bad = ScenarioTest("x", 0.1, {}, stage="sometimes")
    with pytest.raises(ValueError, match="stage"):
        decide({"a": verdict(Verdict.PASS)}, Settings(), evidence=[bad])


def test_holm_runs_at_the_level_the_pass_rate_tests_hold() -> None:
    """With fingerprints holding half of alpha, the fixed-n regression FAILs are Holm-adjusted at alpha / 2.

    Raw p-values 0.013 and 0.014 give Holm-adjusted 0.026 for both: below alpha = 0.05 (where the gate used
    to compare them, letting the two kinds of test spend 1.5 alpha together) but above alpha / 2 = 0.025.
    """
    settings = Settings(alpha=0.05, method="fixed")
    half = 0.05 * 0.5  # what a scenario's pass-rate test holds when fingerprints take their share
    verdicts = {"a": verdict(Verdict.FAIL, 0.013, alpha=half), "b": verdict(Verdict.FAIL, 0.014, alpha=half)}
    final, _ = decide(verdicts, settings)
    # Holm: 0.013 x 2 = 0.026 and max(0.026, 0.014) = 0.026, both above 0.025: neither FAIL survives.
    assert {n: v.verdict for n, v in final.items()} == {"a": Verdict.INCONCLUSIVE, "b": Verdict.INCONCLUSIVE}
    # The same p-values with all of alpha for the pass rate: both FAILs stand.
    full = {n: verdict(Verdict.FAIL, v.pvalue, alpha=0.05) for n, v in verdicts.items()}
    assert all(v.verdict is Verdict.FAIL for v in decide(full, settings)[0].values())


def test_holm_shares_alpha_with_scenarios_tested_against_the_threshold() -> None:
    """One of three scenarios is new (no baseline: a threshold test at alpha / 3), so the two regression
    p-values share 2/3 of alpha under Holm."""
    settings = Settings(alpha=0.06, method="fixed")
    verdicts = {
        "a": verdict(Verdict.FAIL, 0.019, alpha=0.06),
        "b": verdict(Verdict.PASS, 0.9, alpha=0.06),
        "new": verdict(Verdict.PASS, None, test="threshold"),
    }
    final, _ = decide(verdicts, settings)
    # Holm over two: 0.019 x 2 = 0.038 <= 0.06 x 2/3 = 0.04, the FAIL stands.
    assert final["a"].verdict is Verdict.FAIL
    verdicts["a"] = verdict(Verdict.FAIL, 0.021, alpha=0.06)  # 0.042 > 0.04
    assert decide(verdicts, settings)[0]["a"].verdict is Verdict.INCONCLUSIVE
