"""Issue 21, item 4: an INCONCLUSIVE regression scenario says how many candidate trials would decide it.

The estimate (agentassay/_stats/_more.py) is checked against the real ``regression_verdict``: by
simulation of fresh candidate samples at the planned N (and at 0.7 N), by brute force over every
outcome at small N, and for the capped case; then end to end: the results file (run, check,
compare, merge), the terminal table, the PR comment, the HTML report and JUnit.
"""

from __future__ import annotations

import json
import math
import time
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from agentassay._features.fingerprints._settings import FingerprintSettings
from agentassay._features.shards import merge_results
from agentassay._gate import BaselineCounts, RegressionFixed, SuiteDecision, replay
from agentassay._integrations.cli import main
from agentassay._reports import render_html, render_junit, render_pr_comment, render_table
from agentassay._results import (
    Results,
    ScenarioResult,
    TrialOutcome,
    compare_results,
    load_results,
    with_more_trials,
)
from agentassay._spec import Settings
from agentassay._stats import Decision, MoreTrials, Verdict, regression_verdict, trials_to_decide
from agentassay._stats._more import _regions, decide_probability

SIMULATIONS = 4000
SE = math.sqrt(0.8 * 0.2 / SIMULATIONS)

# (x_b, n_b, x_c, n_c, FAIL level, PASS level): each INCONCLUSIVE at its observed counts.
CASES = {
    "pass-driven": (240, 300, 78, 100, 0.01, 0.05),
    "pass-and-fail": (270, 300, 170, 200, 0.01, 0.05),
    "fail-driven": (45, 50, 36, 50, 0.01, 0.05),
    "near-perfect": (30, 30, 29, 30, 0.01, 0.05),
}


class Verdicts:
    """The real regression_verdict of (x_b, n_b, y, n), once per y."""

    def __init__(self, kb: int, nb: int, alpha: float, pass_alpha: float) -> None:
        self.kb, self.nb, self.alpha, self.pass_alpha = kb, nb, alpha, pass_alpha
        self.seen: dict[tuple[int, int], Verdict] = {}

    def __call__(self, y: int, n: int) -> Verdict:
        if (y, n) not in self.seen:
            self.seen[(y, n)] = regression_verdict(
                self.kb, self.nb, y, n, alpha=self.alpha, pass_alpha=self.pass_alpha, delta=0.1
            ).verdict
        return self.seen[(y, n)]


def simulate(verdict: Verdicts, n: int, p: float, seed: int) -> tuple[float, np.ndarray]:
    """Decided fraction of SIMULATIONS fresh candidate samples of n trials at rate p (and the samples)."""
    ys = np.random.default_rng(seed).binomial(n, p, size=SIMULATIONS)
    decided = {int(y): verdict(int(y), n) is not Verdict.INCONCLUSIVE for y in np.unique(ys)}
    return float(np.mean([decided[int(y)] for y in ys])), ys


# -- (a) against simulation through the real verdict ---------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_planned_n_decides_as_often_as_promised(name: str) -> None:
    kb, nb, kc, nc, alpha, pass_alpha = CASES[name]
    assert regression_verdict(kb, nb, kc, nc, alpha=alpha, pass_alpha=pass_alpha).verdict is Verdict.INCONCLUSIVE
    more = trials_to_decide(kb, nb, kc, nc, alpha=alpha, pass_alpha=pass_alpha, delta=0.1)
    assert more is not None and not more.capped
    n, p = more.total, kc / nc
    assert more.additional == max(0, n - nc) and more.spent == nc
    assert more.probability >= 0.8
    verdict = Verdicts(kb, nb, alpha, pass_alpha)
    fraction, ys = simulate(verdict, n, p, seed=sum(CASES[name][:4]))
    assert fraction >= 0.8 - 3 * SE, (name, n, fraction)
    # the regions the estimate summed are the verdict's own, at every outcome the simulation drew
    t_pass, t_fail = _regions(kb, nb, alpha, pass_alpha, 0.1, "fisher", 0.1).thresholds(n, p)
    for y in np.unique(ys):
        want = Verdict.PASS if y >= t_pass else Verdict.FAIL if y <= t_fail else Verdict.INCONCLUSIVE
        assert verdict(int(y), n) is want, (name, n, int(y))
    # and the simulated fraction agrees with the exact probability
    assert abs(fraction - more.probability) <= 4 * math.sqrt(more.probability * (1 - more.probability) / SIMULATIONS)
    # at a clearly smaller N the promise does not hold (where that is so exactly: P saw-tooths in N)
    smaller = int(0.7 * n)
    exact = sum(decide_probability(kb, nb, p, smaller, alpha=alpha, pass_alpha=pass_alpha))
    if exact < 0.8 - 4 * SE:
        small_fraction, _ = simulate(verdict, smaller, p, seed=sum(CASES[name][:4]) + 1)
        assert small_fraction < 0.8, (name, smaller, small_fraction)
    else:  # only the saw-tooth case may land here
        assert name == "near-perfect", (name, smaller, exact)


def test_the_search_lands_where_the_probability_crosses() -> None:
    """Below 200 trials N is exact to one trial: P(N) >= 0.8 > P(N - 1)."""
    kb, nb, _, nc, alpha, pass_alpha = CASES["pass-driven"]
    for x_c in (76, 78, 80):
        more = trials_to_decide(kb, nb, x_c, nc, alpha=alpha, pass_alpha=pass_alpha)
        assert more is not None
        n, p = more.total, x_c / nc
        if n < 200:
            assert sum(decide_probability(kb, nb, p, n, alpha=alpha, pass_alpha=pass_alpha)) >= 0.8
            assert sum(decide_probability(kb, nb, p, n - 1, alpha=alpha, pass_alpha=pass_alpha)) < 0.8
        else:  # within 0.5 %
            below = n - max(1, n // 200)
            assert sum(decide_probability(kb, nb, p, below, alpha=alpha, pass_alpha=pass_alpha)) < 0.8


# -- (b) the exact probability is the sum over every outcome -------------------------------------
@pytest.mark.parametrize(
    ("kb", "nb", "p", "alpha", "pass_alpha"),
    [(40, 50, 0.7, 0.01, 0.05), (28, 30, 0.9, 0.05, 0.05), (18, 20, 0.55, 0.0125, 0.05), (50, 60, 1.0, 0.01, 0.05)],
)
@pytest.mark.parametrize("n", [1, 7, 20, 45])
def test_exact_probability_equals_brute_force(kb: int, nb: int, p: float, alpha: float, pass_alpha: float, n: int) -> None:
    verdict = Verdicts(kb, nb, alpha, pass_alpha)
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    passed = sum(pmf[y] for y in range(n + 1) if verdict(y, n) is Verdict.PASS)
    failed = sum(pmf[y] for y in range(n + 1) if verdict(y, n) is Verdict.FAIL)
    got = decide_probability(kb, nb, p, n, alpha=alpha, pass_alpha=pass_alpha)
    assert got == pytest.approx((passed, failed), abs=1e-12)


def test_exact_probability_with_the_z_and_boschloo_tests() -> None:
    for test in ("z", "boschloo"):
        n, p = 15, 0.6
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        codes = [
            regression_verdict(16, 20, y, n, alpha=0.05, test=test).verdict for y in range(n + 1)
        ]
        want = (
            sum(pmf[y] for y, v in enumerate(codes) if v is Verdict.PASS),
            sum(pmf[y] for y, v in enumerate(codes) if v is Verdict.FAIL),
        )
        assert decide_probability(16, 20, p, n, alpha=0.05, test=test) == pytest.approx(want, abs=1e-12)


# -- (c) capped, no estimate, limits ----------------------------------------------------------------
def test_a_drop_at_what_the_baseline_can_resolve_is_capped() -> None:
    # 45/50 -> 40/50: a drop of 0.10, the margin itself; no candidate sample settles it.
    more = trials_to_decide(45, 50, 40, 50, alpha=0.05, pass_alpha=0.05, delta=0.1)
    assert more is not None and more.capped
    assert (more.total, more.additional, more.limit) == (5000, 4950, 5000)
    assert more.probability < 0.8
    assert more.probability == pytest.approx(sum(decide_probability(45, 50, 0.8, 5000, alpha=0.05)), abs=1e-12)
    text = more.explain(usd_per_trial=0.01)
    assert text.startswith("even 5,000 trials would decide this with only 55 % probability")
    assert "more candidate trials alone will not settle it" in text
    small = trials_to_decide(240, 300, 150, 200, alpha=0.01, pass_alpha=0.05, limit=500)
    assert small is not None and small.capped and small.total == 500 and small.probability < 0.8


def test_no_candidate_trial_gives_no_estimate_and_bad_arguments_are_refused() -> None:
    assert trials_to_decide(40, 50, 0, 0, alpha=0.05) is None
    with pytest.raises(ValueError, match="cand_passes"):
        trials_to_decide(40, 50, 5, 4, alpha=0.05)
    with pytest.raises(ValueError, match="power"):
        trials_to_decide(40, 50, 30, 40, alpha=0.05, power=1.0)
    with pytest.raises(TypeError):  # the paper's rule has no monotone PASS region: not offered
        trials_to_decide(40, 50, 30, 40, alpha=0.05, rule="paper")  # type: ignore[call-arg]


def test_when_the_run_was_already_big_enough_the_sentence_says_so() -> None:
    more = MoreTrials(total=150, additional=0, probability=0.81, capped=False, pass_probability=0.81,
                      fail_probability=0.0, spent=200)
    assert more.explain() == (
        "a check of about 150 trials would decide this with 80 % probability at the observed rates, and this "
        "one ran 200: running it again will likely decide it"
    )
    assert MoreTrials.from_dict(json.loads(json.dumps(more.to_dict()))) == more
    stopped = replace(more, additional=100, spent=50)  # a run a budget stopped after 50 of its 200 trials
    assert stopped.explain(usd_per_trial=0.002, setting="config.max_trials", cap=200) == (
        "about 100 more trials (~$0.20) would decide this with 80 % probability at the observed rates; "
        "config.max_trials (200) already allows that many: this run stopped early"
    )
    assert stopped.explain(cap=100, sequential=True).endswith(
        "; raise config.trials to 150 (a sequential check needs a little more at its cap)"
    )


@pytest.mark.parametrize(
    "case",
    [(240, 300, 150, 200, 0.01), (90, 100, 80, 100, 0.01), (80, 100, 75, 100, 0.05), (45, 50, 40, 50, 0.05),
     (150, 200, 130, 200, 0.01), (270, 300, 170, 200, 0.01)],
)
def test_one_estimate_takes_well_under_a_second_or_two(case: tuple[int, int, int, int, float]) -> None:
    """~0.05-0.7 s on a developer machine; the bound leaves room for a loaded CI runner."""
    *counts, alpha = case
    start = time.perf_counter()
    trials_to_decide(*counts, alpha=alpha, pass_alpha=0.05)
    assert time.perf_counter() - start < 3.0


# -- (d) in the results file and every report -------------------------------------------------------
def priced(i: int, passed: bool) -> TrialOutcome:
    return TrialOutcome(i, passed, 1000 + i, failures=() if passed else ("wrong answer",), input_tokens=100,
                        output_tokens=20, latency_s=0.01, usd=0.003)


def check_results() -> Results:
    """A fixed-n check of two scenarios against 38/45: one INCONCLUSIVE (26/30), one PASS (29/30)."""
    settings = Settings(trials=30, method="fixed").with_parts(FingerprintSettings(enabled=False))
    scenarios = []
    for name, passes in (("unsure", 26), ("fine", 29)):
        trials = tuple(priced(i, i < passes) for i in range(30))
        monitor = RegressionFixed(30, base_passes=38, base_trials=45, alpha=0.05, delta=0.1, pass_alpha=0.05)
        verdict = replay(monitor, [t.passed for t in trials])
        scenarios.append(ScenarioResult(name, "<b>hello</b> $x$", trials, verdict, BaselineCounts(38, 45)))
    verdicts = [s.verdict.verdict for s in scenarios]
    counts = {v.value: verdicts.count(v) for v in Verdict}
    decision = SuiteDecision(Verdict.INCONCLUSIVE, Decision.MANUAL, counts, "holm")
    return Results("check", {"name": "synthetic", "path": "agentassay.yml"}, {"entry": "m:agent", "version": "v2"},
                   settings, with_more_trials(scenarios, settings), decision, "run-1", "t0", "t1")


def test_the_estimate_is_stored_for_inconclusive_regressions_only(tmp_path: Path) -> None:
    results = check_results()
    unsure, fine = results.scenarios
    assert unsure.verdict.verdict is Verdict.INCONCLUSIVE and fine.verdict.verdict is Verdict.PASS
    assert fine.more_trials is None
    more = unsure.more_trials
    assert more is not None
    want = trials_to_decide(38, 45, 26, 30, alpha=0.05 / 2, pass_alpha=0.05, delta=0.1)  # Holm's first step
    assert want is not None
    assert (more["total"], more["additional"], more["capped"]) == (want.total, want.additional, False)
    assert more["usd_per_trial"] == pytest.approx(0.003)
    assert more["usd"] == pytest.approx(0.003 * want.additional)
    assert (more["design"], more["alpha"], more["pass_alpha"], more["base"], more["cand"]) == (
        "fixed", 0.025, 0.05, [38, 45], [26, 30]
    )
    path = results.save(tmp_path / "check.json")
    raw = json.loads(path.read_text())
    assert "more_trials" not in raw["scenarios"][1]  # written only where there is one
    back = load_results(path)
    assert back.scenarios[0].more_trials == more
    assert back.to_dict() == results.to_dict()


def test_check_compare_and_merge_write_it(tmp_path: Path) -> None:
    """End to end with the fixture agent: `run --full`, `check` (sprt), `compare` and `merge` of shards."""
    suite = tmp_path / "suite.yml"
    suite.write_text(
        "name: more-trials\nagent: tests._support.fixture_agents:coin\nconfig:\n  trials: 30\n  concurrency: 1\n  seed: 3\n"
        "scenarios:\n  - name: greet\n    input: hello\n    evaluator:\n      - contains: ok\n"
        "  - name: refund\n    input: I want a refund\n    evaluator:\n      - contains: ok\n"
    )
    base, cand, cmp = tmp_path / "base.json", tmp_path / "cand.json", tmp_path / "cmp.json"
    main(["run", str(suite), "--full", "--no-store", "-q", "-o", str(base)])  # exit 2: threshold verdicts vary
    main(["check", str(suite), "--baseline", str(base), "--no-store", "-q", "-o", str(cand)])
    checked = load_results(cand)
    inconclusive = [s for s in checked.scenarios if s.verdict.verdict is Verdict.INCONCLUSIVE]
    assert inconclusive, "the fixture should leave a scenario inconclusive"
    for s in checked.scenarios:
        assert (s.more_trials is not None) == (s.verdict.verdict is Verdict.INCONCLUSIVE)
    assert all(s.more_trials["design"] == "sequential" for s in inconclusive)  # type: ignore[index]
    assert "(a sequential check needs a little more at its cap)" in " ".join(render_table(checked).split())  # wrapped at the terminal width
    main(["compare", str(base), str(cand), "-q", "-o", str(cmp)])
    assert [s.more_trials for s in load_results(cmp).scenarios] == [s.more_trials for s in checked.scenarios]
    shards = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}.json"
        main(["check", str(suite), "--baseline", str(base), "--no-store", "-q", "--shard", f"{i}/2", "-o", str(out)])
        shards.append(load_results(out))
    merged = merge_results(shards, baseline=load_results(base))
    assert [s.more_trials for s in merged.scenarios] == [s.more_trials for s in checked.scenarios]


def test_compare_recomputes_a_stale_estimate_and_drops_one_that_no_longer_applies() -> None:
    results = check_results()
    base = Results("run", results.suite, results.agent, results.settings,
                   tuple(ScenarioResult(s.name, s.input, tuple(priced(i, i < 38) for i in range(45)), s.verdict)
                         for s in results.scenarios),
                   results.decision, "run-0", "t0", "t1")
    stale = {"total": 1, "additional": 0, "probability": 0.9, "capped": False, "design": "fixed", "alpha": 0.5}
    tampered = replace(results, scenarios=tuple(replace(s, more_trials=stale) for s in results.scenarios))
    out = compare_results(base, tampered)
    assert out.scenarios[0].more_trials == results.scenarios[0].more_trials
    assert out.scenarios[1].more_trials is None


def test_reports_show_it() -> None:
    results = check_results()
    more = results.scenarios[0].more_trials
    assert more is not None
    additional, total = more["additional"], more["total"]
    usd = f"~${0.003 * additional:,.2f}"
    sentence = (
        f"about {additional:,} more trials ({usd}) would decide this with 80 % probability at the observed "
        f"rates; raise config.trials to {total:,}"
    )
    table = render_table(results, width=300)  # wide enough for one line; narrower, it is wrapped, never cut
    assert f"    more trials: {sentence}" in table.splitlines()
    comment = render_pr_comment(results)
    assert f"- More trials: {sentence.replace('~$', chr(92) + '~' + chr(92) + '$')}" in comment.splitlines()
    html = render_html(results).html
    assert f"<dt>More trials</dt><dd>{sentence}</dd>" in html
    assert "<b>hello</b>" not in html and "&lt;b&gt;hello&lt;/b&gt;" in html  # still escaped as before
    root = ET.fromstring(render_junit(results))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["scenario.unsure.more_trials_total"] == str(total)
    assert props["scenario.unsure.more_trials_additional"] == str(additional)
    assert props["scenario.unsure.more_trials_usd"] == f"{0.003 * additional:.6f}"
    assert "scenario.fine.more_trials_total" not in props
    (case,) = [c for c in root.iter("testcase") if c.get("name") == "unsure"]
    (skipped,) = case.findall("skipped")
    assert skipped.get("message", "").endswith(f" Estimate: {sentence}.")
    assert f"more trials: {sentence}" in (skipped.text or "")
    assert f"more_trials={sentence}" in (case.findtext("system-out") or "")
