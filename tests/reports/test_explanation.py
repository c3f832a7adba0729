"""Explanations that name the cause (issue 25, point 5): the pass-rate evidence first, then the behaviour
shifts in an order a near-constant feature cannot dominate (tool calls and routing before lengths and
tokens), the same words in the terminal, JUnit, the PR comment and the HTML report; never cut in the terminal.

The case is the one the issue reported: refund_request's pass rate fell 96.7 % -> about 50 %, calls to
issue_refund 0.967 -> 0.516 per run, while the answer length moved 12.0 -> 11.5 words with near-zero
variance (and so the largest *standardised* shift). Both files go through the real gate (``compare``).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from agentassay._features.fingerprints import FeatureShift, fingerprint_of, rank_shifts
from agentassay._features.fingerprints._settings import FingerprintSettings
from agentassay._gate import BaselineCounts, ScenarioVerdict, SuiteDecision, explain_fail
from agentassay._integrations.cli import main
from agentassay._reports import render_html, render_junit, render_pr_comment, render_table
from agentassay._reports._summary import explanation_of
from agentassay._results import Results, ScenarioResult, TrialOutcome, compare_results
from agentassay._spec import Settings
from agentassay._stats import Decision, Verdict
from agentassay._traces import Action, Cost, Step, Trace

NAME = "refund_request"
SETTINGS = Settings(trials=40).with_parts(FingerprintSettings(trials=31))


def _trial(i: int, refund: bool, words: int, tokens: int) -> TrialOutcome:
    """A trial whose trace called issue_refund (and passed) or answered without it (and failed)."""
    steps = (Step(Action.CALL_TOOL, agent="support", tool="issue_refund", output="ok"),) if refund else ()
    text = " ".join(["done"] * (words - 1) + ["x"])
    trace = Trace(steps=(*steps, Step(Action.RESPOND, agent="support")), output=text, cost=Cost(200, tokens, 0.5))
    return TrialOutcome(
        i, refund, 1000 + i, failures=() if refund else ("did not call tool 'issue_refund'",),
        input_tokens=200, output_tokens=tokens, latency_s=0.5, usd=1e-4, data={"fingerprint": fingerprint_of(trace)},
    )


def _results(kind: str, trials: tuple[TrialOutcome, ...], base: BaselineCounts | None) -> Results:
    v = ScenarioVerdict(Verdict.PASS, "sprt", "PASS: placeholder, re-derived by compare.", {}, len(trials))
    s = ScenarioResult(NAME, "I want my money back", trials, v, base, data={"fingerprint_trials": len(trials)})
    decision = SuiteDecision(Verdict.PASS, Decision.DEPLOY, {"pass": 1, "fail": 0, "inconclusive": 0}, "holm")
    return Results(kind, {"name": "support", "path": "agentassay.yml"}, {"entry": "m:agent", "version": kind}, SETTINGS,
                   (s,), decision, f"run-{kind}", "t0", "t1", versions={"agentassay": "0.1.0"})


def the_case() -> Results:
    """Baseline 29/30 calling issue_refund, 12 words every time; the candidate calls it in 16 of 31 runs and
    answers in 11 or 12 words; the pass rate falls with the refunds."""
    base = tuple(_trial(i, i != 7, 12, 39) for i in range(30))
    # the first 21 candidate trials hold 10 passes (the pass-rate test decides on them), all 31 hold 16
    pattern = [True, False] * 10 + [False] + [True] * 6 + [False] * 4
    cand = tuple(_trial(i, refund, 12 if i % 2 else 11, 27) for i, refund in enumerate(pattern))
    baseline = _results("run", base, None)
    candidate = _results("check", cand, baseline.baseline_counts()[NAME])
    return compare_results(baseline, candidate)


@pytest.fixture(scope="module")
def case() -> Results:
    return the_case()


def _means(results: Results) -> dict[str, tuple[float, float]]:
    fp = results.scenarios[0].verdict.data["fingerprint"]
    return {f["name"]: (f["baseline"], f["candidate"]) for f in fp["features"]}


def test_the_case_is_the_one_reported(case: Results) -> None:
    s = case.scenarios[0]
    assert s.verdict.verdict is Verdict.FAIL and s.verdict.rate_verdict is Verdict.FAIL
    means = _means(case)
    assert means["calls:issue_refund"] == pytest.approx((29 / 30, 16 / 31))
    assert means["output_words"] == pytest.approx((12.0, 11.5), abs=0.02)
    fp = s.verdict.data["fingerprint"]
    assert fp["verdict"] == "fail"
    # the test's own statistic ranks the near-constant length first: what the old explanation followed
    named = [f["name"] for f in fp["features"] if f["adjusted_p"] <= fp["alpha"]]
    assert {"calls:issue_refund", "output_words"} <= set(named)


def _check_order(text: str) -> None:
    """Pass-rate evidence first, issue_refund before any length or token feature."""
    text = " ".join(text.split())
    assert re.match(r"FAIL after \d+ of at most \d+ trials: pass rate 96\.7% -> [45]\d\.\d% \(baseline 29/30 -> candidate "
                    r"\d+/\d+\)", text), text
    refund = text.index("calls to issue_refund per run 0.97 → 0.52")
    for later in ("answer length", "output tokens", "input tokens"):
        if later in text:
            assert text.index(later) > refund, text
    assert text.index("pass rate") < text.index("Behaviour shifted") < refund


def test_the_explanation_names_the_pass_rate_then_issue_refund(case: Results) -> None:
    s = case.scenarios[0]
    _check_order(s.verdict.explanation)
    shift = s.verdict.data["fingerprint"]["shift"]
    assert shift[0] == "calls to issue_refund per run 0.97 → 0.52"
    # the same move seen as its share and as tools reached is named once, leaving room for the next causes:
    # the run's structure (one step fewer without the tool call) before any length or token count
    assert not any("share of tool calls" in w or "distinct tools" in w for w in shift)
    assert shift[1] == "steps per run 2.0 → 1.5", shift


def test_the_same_words_in_every_report(case: Results) -> None:
    words = explanation_of(case.scenarios[0])
    _check_order(words)
    table = render_table(case, width=70)
    _check_order(table.split(f"  {NAME}: ", 1)[1].split("\n    more trials")[0].split("\n    behaviour")[0])
    junit = ET.fromstring(render_junit(case).split("\n", 1)[1])
    failure = junit.find("testcase/failure")
    assert failure is not None
    _check_order(failure.attrib["message"])
    assert failure.attrib["message"] == " ".join(words.split())
    comment = html.unescape(render_pr_comment(case).replace("\\", ""))  # Markdown escapes undone
    _check_order(comment[comment.index("FAIL after"):])
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(case).html))
    _check_order(page[page.index("FAIL after"):])


def test_the_terminal_wraps_instead_of_cutting(case: Results) -> None:
    words = " ".join(explanation_of(case.scenarios[0]).split())
    assert len(words) > 160  # the old terminal cut it there
    table = render_table(case, width=60)
    lines = table.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {NAME}: "))
    block = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("    ") or line.startswith(("    more trials:", "    behaviour:", "    most common")):
            break
        block.append(line)
    assert all(len(line) <= 60 for line in block)
    assert " ".join(" ".join(block).split()) == f"{NAME}: {words}"  # every word, none cut
    assert "…" not in " ".join(block)


def test_counts_are_labelled_so_the_table_and_the_explanation_agree(case: Results) -> None:
    s = case.scenarios[0]
    words = explanation_of(s)
    assert s.counted_trials == 31 and s.passes == 16
    assert "counting all 31 trials run, 16/31 passed" in words
    table = render_table(case, width=200)
    assert "29/30 -> 16/31" in table and "16/31 passed" in table


def test_rank_shifts_puts_tool_use_first_and_ignores_the_spread() -> None:
    shifts = [
        FeatureShift("output_words", 12.0, 11.5, 0.001, standardized=40.0),
        FeatureShift("output_tokens", 39.2, 26.9, 0.001, standardized=9.0),
        FeatureShift("steps", 2.0, 1.5, 0.001, standardized=5.0),
        FeatureShift("share:faq", 0.1, 0.3, 0.001, standardized=2.0),
        FeatureShift("calls:issue_refund", 0.967, 0.516, 0.001, standardized=4.0),
    ]
    assert [s.name for s in rank_shifts(shifts)] == [
        "calls:issue_refund", "share:faq", "steps", "output_words", "output_tokens",
    ]
    assert shifts[0].effect == pytest.approx(0.5 / 12)  # relative change: bounded, blind to the spread
    assert shifts[3].effect == pytest.approx(0.2)  # a share: the difference in proportions
    assert FeatureShift("calls:new", 0.0, 0.4, 0.001).effect == 1.0  # a tool that started being called


def test_explain_fail_keeps_the_pass_rate_first_whatever_failed() -> None:
    rate_fail = ScenarioVerdict(Verdict.FAIL, "regression", "FAIL: pass rate 90% -> 50%.", {}, 20)
    assert explain_fail(rate_fail, "Contracts: rule broken (p = 0.01)") == (
        "FAIL: pass rate 90% -> 50%. Contracts: rule broken (p = 0.01)."
    )
    rate_pass = ScenarioVerdict(Verdict.PASS, "regression", "PASS: pass rate 90% -> 90%; the drop is small.", {}, 20)
    once = replace(rate_pass, verdict=Verdict.FAIL, rate_verdict=Verdict.PASS,
                   explanation=explain_fail(rate_pass, "Behaviour shifted (p = 0.001): x"))
    assert once.explanation == "FAIL. Pass rate: PASS: pass rate 90% -> 90%. Behaviour shifted (p = 0.001): x."
    assert explain_fail(once, "Contracts: y (p = 0.02).") == f"{once.explanation} Contracts: y (p = 0.02)."


@pytest.mark.parametrize(
    ("choice", "tag", "counts"),
    [("skipped", "skipped", ("1", "0")), ("pass", None, ("0", "0")), ("failure", "failure", ("0", "1"))],
)
def test_junit_inconclusive_is_configurable(choice: str, tag: str | None, counts: tuple[str, str]) -> None:
    trials = tuple(TrialOutcome(i, i % 4 != 0, 100 + i) for i in range(20))
    v = ScenarioVerdict(Verdict.INCONCLUSIVE, "sequential-regression", "INCONCLUSIVE: more trials needed.", {}, 20)
    s = ScenarioResult("unsure", "hi", trials, v, BaselineCounts(38, 40))
    results = Results("check", {"name": "s"}, {}, Settings(), (s,),
                      SuiteDecision(Verdict.INCONCLUSIVE, Decision.MANUAL, {"inconclusive": 1}, "holm"), "r", "t0", "t1")
    root = ET.fromstring(render_junit(results, inconclusive=choice).split("\n", 1)[1])
    assert (root.get("skipped"), root.get("failures")) == counts
    case_ = root.find("testcase")
    assert case_ is not None
    children = {c.tag for c in case_} - {"system-out", "flakyFailure", "flakyError"}
    assert children == (set() if tag is None else {tag})
    if tag is not None:
        el = case_.find(tag)
        assert el is not None and el.get("message", "").startswith("INCONCLUSIVE: more trials needed.")
    assert "verdict=inconclusive" in (case_.findtext("system-out") or "")
    with pytest.raises(ValueError, match="inconclusive must be one of skipped, pass, failure"):
        render_junit(results, inconclusive="maybe")


def test_report_exits_with_the_files_decision_and_takes_junit_inconclusive(tmp_path: Path, case: Results) -> None:
    case.save(tmp_path / "block.json")
    assert main(["report", str(tmp_path / "block.json")]) == 1  # BLOCK, as `compare` exits
    assert main(["report", str(tmp_path / "block.json"), "--junit", str(tmp_path / "j.xml"),
                 "--junit-inconclusive", "failure"]) == 1
    assert (tmp_path / "j.xml").is_file()
    assert main(["report", str(tmp_path / "block.json"), "--junit-inconclusive", "maybe"]) == 3
